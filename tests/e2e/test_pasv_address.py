"""pasv_address as the 227 reply announces it: a literal, or a host name
resolved by the listener (pasv_addr_resolve), as behind NAT."""

import re
import subprocess

from twhelpers import TWINFTPD, rc


def pasv_numbers(f):
    cd, resp = rc(f, "PASV")
    assert cd == 227, resp
    m = re.search(r"(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)", resp)
    assert m, resp
    return [int(x) for x in m.groups()]


def test_pasv_address_literal_and_resolved(make_server):
    s = make_server({"pasv_address": "127.0.0.9"})
    f = s.ftp("alice")
    assert pasv_numbers(f)[:4] == [127, 0, 0, 9]
    f.close()
    # A host name (here from /etc/hosts), resolved by the listener.
    s = make_server({"pasv_address": "localhost", "pasv_addr_resolve": True})
    f = s.ftp("alice")
    assert pasv_numbers(f)[:4] == [127, 0, 0, 1]
    f.close()


def test_pasv_name_that_does_not_resolve(make_server):
    s = make_server({"pasv_address": "no-such-host.invalid", "pasv_addr_resolve": True},
                    start=False)
    s.write_config()
    r = subprocess.run([TWINFTPD, "-t", s.conf_path], capture_output=True, timeout=60,
                       env=s.env())
    assert r.returncode == 1 and b"no-such-host.invalid" in r.stderr, r.stderr
    r = subprocess.run([TWINFTPD, s.conf_path], capture_output=True, timeout=60, env=s.env())
    assert r.returncode != 0 and b"no-such-host.invalid" in r.stderr, r.stderr
    # Without pasv_addr_resolve a name is an error of the file itself.
    s = make_server({"pasv_address": "localhost"}, start=False)
    s.write_config()
    r = subprocess.run([TWINFTPD, "-t", s.conf_path], capture_output=True, timeout=60,
                       env=s.env())
    assert r.returncode == 1 and b"pasv_address" in r.stderr, r.stderr
