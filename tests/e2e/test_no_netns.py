"""The data path with isolate_network=NO, where the worker itself opens the
data sockets (with isolate_network=YES, the default, the monitor opens them
for it). The same address rules must hold on both paths."""

import ftplib
import os

import pytest

from twhelpers import assert_theft_refused, OTHER, code, rc, retr, retr_by_port_from, sha256, stor


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
    assert retr_by_port_from(f, OTHER, "x.txt") == b"hello"
    f.close()
