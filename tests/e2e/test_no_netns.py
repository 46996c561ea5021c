"""The data path with isolate_network=NO, where the worker itself opens the
data sockets (with isolate_network=YES, the default, the monitor opens them
for it). The same address rules must hold on both paths."""

import ftplib
import os
import socket

import pytest

from twhelpers import assert_theft_refused, OTHER, code, rc, recv_all, retr, sha256, stor


@pytest.fixture
def plain(make_server):
    return make_server({"isolate_network": False})


@pytest.mark.parametrize("mode", ["pasv", "epsv", "port", "eprt"])
def test_round_trip(plain, mode):
    data = os.urandom(2 * 1024 * 1024 + 3)
    f = plain.ftp("alice")
    f.sendcmd("TYPE I")
    stor(f, "STOR x.bin", data, mode)
    assert sha256(plain.read("x.bin")) == sha256(data)
    got, _, final = retr(f, "RETR x.bin", mode)
    assert sha256(got) == sha256(data) and code(final) == 226
    f.close()


def test_port_to_other_address_refused(plain):
    f = plain.ftp("alice")
    assert rc(f, "PORT 127,0,0,2,200,1")[0] in (500, 501, 504)
    assert rc(f, "EPRT |1|127.0.0.2|51201|")[0] in (500, 501, 504, 522)
    assert rc(f, "PORT 127,0,0,1,0,80")[0] in (500, 501, 504)
    f.close()


def test_pasv_from_other_address_refused(make_server):
    s = make_server({"isolate_network": False, "accept_timeout": 3})
    s.put("secret.bin", b"SECRET" * 100)
    f = s.ftp("alice")
    _, port = ftplib.parse227(f.sendcmd("PASV"))
    assert_theft_refused(f, port)
    f.close()


def test_port_promiscuous(make_server):
    s = make_server({"isolate_network": False, "port_promiscuous": True})
    s.put("x.txt", b"hello")
    f = s.ftp("alice")
    ls = socket.create_server((OTHER, 0))
    ls.settimeout(10)
    p = ls.getsockname()[1]
    try:
        assert rc(f, "PORT 127,0,0,2,%d,%d" % (p >> 8, p & 255))[0] == 200
        f.sock.sendall(b"RETR x.txt\r\n")
        assert code(f.getmultiline()) in (125, 150)
        c, _ = ls.accept()
        c.settimeout(10)
        assert recv_all(c) == b"hello"
        c.close()
        assert code(f.getmultiline()) == 226
    finally:
        ls.close()
    f.close()
