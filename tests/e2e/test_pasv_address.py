"""pasv_address as the 227 reply announces it: a literal, or a host name
resolved by the listener (pasv_addr_resolve, or a name written without
it), as behind NAT."""

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
    """No DNS yet at boot, or a name that is gone: the start goes on, with a
    warning (-t too), and PASV announces the address the client used."""
    s = make_server({"pasv_address": "no-such-host.invalid", "pasv_addr_resolve": True},
                    start=False)
    s.write_config()
    r = subprocess.run([TWINFTPD, "-t", s.conf_path], capture_output=True, timeout=60,
                       env=s.env())
    assert r.returncode == 0, r.stderr
    assert b"note: pasv_address no-such-host.invalid (pasv_addr_resolve): " in r.stderr, \
        r.stderr
    s.start()
    s.wait_log(r"pasv_address no-such-host\.invalid \(pasv_addr_resolve\): .*PASV "
               r"announces the address each client connected to")
    f = s.ftp("alice")
    assert pasv_numbers(f)[:4] == [127, 0, 0, 1]
    f.close()
    # Without pasv_addr_resolve, what is no host name is an error of the
    # file itself (a template's placeholder, say).
    s = make_server({"pasv_address": "<your-host-ip>"}, start=False)
    s.write_config()
    r = subprocess.run([TWINFTPD, "-t", s.conf_path], capture_output=True, timeout=60,
                       env=s.env())
    assert r.returncode == 1 and b"'<your-host-ip>' is not a numeric IPv4 address" \
        in r.stderr, r.stderr


def test_pasv_host_name_without_resolve(make_server):
    """A host name in pasv_address without pasv_addr_resolve: vsftpd starts
    and then ends each session at PASV; twinftpd resolves it, as the
    operator meant, and says so at start."""
    s = make_server({"pasv_address": "localhost"})
    s.wait_log(r"pasv_address localhost is a host name: it is resolved at start")
    f = s.ftp("alice")
    assert pasv_numbers(f)[:4] == [127, 0, 0, 1]
    f.close()
