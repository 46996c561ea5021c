"""local_max_rate / anon_max_rate: paced RETR and STOR, ABOR while paced.

The lower bounds are about the limit holding (1 MiB at 200000 B/s is
5.2 s; the asserts allow 3 s), not about speed. The one upper bound
(an unlimited transfer) leaves a margin of several times what the
limit would cost had it wrongly applied.
"""

import os
import socket
import time

import pytest

from twhelpers import abor_codes, code, open_data, rc, retr, sha256, stor, wait_until

MB = 1 << 20
RATE = 200000
MIN_S = 3.0


def _timed(fn, *args, **kw):
    t0 = time.monotonic()
    out = fn(*args, **kw)
    return out, time.monotonic() - t0


def _timed_retr(f, name, data):
    """RETR name in binary, checked against data: the seconds it took."""
    f.sendcmd("TYPE I")
    (got, _, final), took = _timed(retr, f, "RETR " + name)
    assert code(final) == 226, final
    assert sha256(got) == sha256(data)
    return took


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sendfile,chunk", [(True, 0), (False, 0), (True, 1000),
                                            (False, 8192)])
def test_local_rate_paces_retr_and_stor(make_server, sendfile, chunk):
    # data_connection_timeout below the transfer's length: a pause is
    # not idleness, so the paced transfer is not cut as stalled.
    # trans_chunk_size cuts the pieces between pauses (1000 counts as
    # vsftpd's floor, 4096): the rate and the bytes stay what they are.
    s = make_server({"local_max_rate": RATE, "data_connection_timeout": 2,
                     "use_sendfile": sendfile, "trans_chunk_size": chunk})
    data = os.urandom(MB)
    s.put("down.bin", data)
    f = s.ftp("alice")
    assert "Session bandwidth limit in byte/s is %d" % RATE in f.sendcmd("STAT")
    took = _timed_retr(f, "down.bin", data)
    assert took >= MIN_S, "RETR of 1 MiB took %.2f s at %d B/s" % (took, RATE)

    up = os.urandom(MB)
    (_, final), took = _timed(stor, f, "STOR up.bin", up)
    assert code(final) == 226, final
    assert sha256(s.read("up.bin")) == sha256(up)
    assert took >= MIN_S, "STOR of 1 MiB took %.2f s at %d B/s" % (took, RATE)
    f.close()


@pytest.mark.timeout(120)
def test_abor_during_paced_retr(make_server):
    # At 200000 B/s an 8 MiB file would take 42 s: ABOR must cut it.
    s = make_server({"local_max_rate": RATE})
    with open(s.path("big.bin"), "wb") as fh:
        fh.truncate(8 * MB)
    s.put("small.txt", b"still here\n")
    f = s.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "RETR big.bin")
    got = [0]
    try:
        def some():
            got[0] += len(conn.recv(65536))
            return got[0] >= 100000
        wait_until(some, timeout=30, what="the paced transfer to start")
        codes = abor_codes(f)
        assert codes == [426, 226], codes
        # The data connection ends: what was still queued, then EOF.
        while True:
            try:
                b = conn.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not b:
                break
            got[0] += len(b)
        assert got[0] < 8 * MB, "transfer completed; nothing was aborted"
    finally:
        conn.close()
    assert rc(f, "NOOP")[0] == 200
    data, _, final = retr(f, "RETR small.txt")
    assert data == b"still here\n" and code(final) == 226
    f.close()


@pytest.mark.timeout(180)
def test_anon_rate_applies_to_anonymous_only(make_server):
    s = make_server({"anon_max_rate": RATE})
    data = os.urandom(MB)
    anon_file = os.path.join(s.anon_root, "pub", "paced.bin")
    with open(anon_file, "wb") as fh:
        fh.write(data)
    os.chmod(anon_file, 0o644)
    a = s.ftp("anonymous")
    took = _timed_retr(a, "pub/paced.bin", data)
    assert took >= MIN_S, "anonymous RETR took %.2f s at %d B/s" % (took, RATE)
    a.close()

    # A local user is not limited: 64 MiB would take 335 s at RATE.
    big = os.urandom(64 * MB)
    s.put("big.bin", big)
    f = s.ftp("alice")
    took = _timed_retr(f, "big.bin", big)
    assert took < 60, "local RETR took %.2f s: anon_max_rate applied to it" % took
    f.close()
