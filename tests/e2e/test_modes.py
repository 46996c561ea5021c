"""How the daemon is run: IPv6 listeners (alone and beside IPv4) and inetd
mode (one session on standard input, as inetd, xinetd or a systemd socket
unit with Accept=yes start it)."""

import ftplib
import io
import os
import socket

import pytest

import twhelpers
from twhelpers import PASSWORDS, code, sha256


def _listening6(port):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        return s.connect_ex(("::1", port)) == 0
    finally:
        s.close()


def _ftp6(port, user="alice"):
    f = ftplib.FTP(timeout=twhelpers.TIMEOUT)
    f.af = socket.AF_INET6
    f.connect("::1", port)
    f.login(user, PASSWORDS[user])
    return f


def _ipv6_available():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def test_ipv6_only_listener(make_server):
    assert _ipv6_available(), "this machine has no ::1 (loopback IPv6)"
    srv = make_server({"listen": False, "listen_ipv6": True, "listen_address": "",
                       "listen_address6": "::1"}, start=False)
    srv.start(lambda: _listening6(srv.port))
    data = os.urandom(300 * 1024)
    f = _ftp6(srv.port)
    # Over IPv6 the data connection is set up with EPSV/EPRT (RFC 2428).
    f.storbinary("STOR six.bin", io.BytesIO(data))
    out = io.BytesIO()
    f.retrbinary("RETR six.bin", out.write)
    assert sha256(out.getvalue()) == sha256(data)
    # PASV cannot name an IPv6 address: a clear refusal, not a wrong one.
    assert code(f.sendcmd("NOOP")) == 200
    with pytest.raises(ftplib.error_temp) as e:
        f.sendcmd("PASV")
    assert str(e.value).startswith("425")
    f.quit()
    # Nothing listens on IPv4.
    assert not twhelpers.port_listening(srv.port)


def test_ipv4_and_ipv6_at_once(make_server):
    assert _ipv6_available(), "this machine has no ::1 (loopback IPv6)"
    srv = make_server({"listen": True, "listen_ipv6": True, "listen_address6": "::1"},
                      start=False)
    srv.start(lambda: _listening6(srv.port) and twhelpers.port_listening(srv.port))
    f6 = _ftp6(srv.port)
    f4 = srv.ftp("alice")
    for f in (f4, f6):
        f.storbinary("STOR both-%d.txt" % f.af, io.BytesIO(b"x" * 1000))
        assert f.size("both-%d.txt" % f.af) == 1000
        f.quit()


def test_inetd_mode_serves_one_session_on_stdin(make_server):
    """listen=NO: the control connection is standard input (inetd/systemd)."""
    srv = make_server({"listen": False, "listen_ipv6": False}, start=False)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind((twhelpers.HOST, 0))
    lsock.listen(1)
    port = lsock.getsockname()[1]
    client = socket.create_connection((twhelpers.HOST, port), timeout=twhelpers.TIMEOUT)
    conn, _ = lsock.accept()
    lsock.close()
    try:
        srv.start(lambda: True, stdin=conn)
        conn.close()
        f = twhelpers.ftp_on_socket(client)
        assert f.welcome.startswith("220")
        # The started process stays root as the session's log writer
        # (it holds the log, nothing of the client's); its one child is
        # the session's monitor.
        mon = twhelpers.wait_until(lambda: (lambda k: k[0] if len(k) == 1 else None)(
            twhelpers.children(srv.pid)), 10, what="the inetd session's monitor")
        held = {os.readlink("/proc/%d/fd/%s" % (srv.pid, fd))
                for fd in os.listdir("/proc/%d/fd" % srv.pid)}
        assert srv.log_path in held, held
        # Before the login the spare post-login worker holds nothing of the
        # client's: its standard descriptors are /dev/null, not the socket.
        spare = twhelpers.wait_until(lambda: twhelpers.spare_of(mon), 10,
                                     what="the spare post-login worker")
        for fd in (0, 1, 2):
            assert os.readlink("/proc/%d/fd/%d" % (spare, fd)) == "/dev/null", fd
        f.login("alice", PASSWORDS["alice"])
        f.storbinary("STOR inetd.txt", io.BytesIO(b"from inetd\n"))
        with open(os.path.join(srv.home("alice"), "inetd.txt"), "rb") as fh:
            assert fh.read() == b"from inetd\n"
        # The same privilege separation as standalone: a monitor that
        # dropped root and a worker running as alice, neither holding
        # the log; the writer writes the monitor's lines with its pid.
        kids = twhelpers.children(mon)
        assert kids, "no worker under the inetd-mode monitor"
        assert twhelpers.proc_ids(kids[0], "Uid")[0] == twhelpers.USERS["alice"]
        for p in [mon] + kids:
            assert twhelpers.proc_ids(p, "Uid")[0] == twhelpers.USERS["alice"]
            links = {os.readlink("/proc/%d/fd/%s" % (p, fd))
                     for fd in os.listdir("/proc/%d/fd" % p)}
            assert srv.log_path not in links, (p, links)
        srv.wait_log(r'\[pid %d\] \[monitor\] OK UPLOAD: Client "127\.0\.0\.1", '
                     r'user "alice", "/inetd\.txt", 11 bytes' % mon, timeout=10)
        assert code(f.quit()) == 221
        # One session: the process ends with it, cleanly.
        assert srv.proc.wait(timeout=10) == 0
        assert not twhelpers.descendants(srv.pid)
        srv._out.close()
        srv._err.close()
        srv.proc = None     # nothing left for the fixture to stop
    finally:
        client.close()
