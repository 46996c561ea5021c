"""File names with spaces, quotes and UTF-8 pass through byte for byte."""

import os

import pytest

from twhelpers import parse_mlsx, pwd_of, rc, retr, stor

NAMES = [
    "with space.txt",
    "two  spaces.txt",
    'double"quote.txt',
    "single'quote.txt",
    "caf\u00e9 \u00fcml\u00e4ut.txt",
    "\u65e5\u672c\u8a9e\u30d5\u30a1\u30a4\u30eb.txt",
    "emoji \U0001f600.bin",
    "semi;colon=equals.txt",
    "-dash-first.txt",
]


@pytest.fixture
def utf8_session(server):
    f = server.ftp("alice")
    f.encoding = "utf-8"
    rc(f, "OPTS UTF8 ON")
    yield server, f
    f.close()


@pytest.mark.parametrize("name", NAMES)
def test_name_round_trip(utf8_session, name):
    s, f = utf8_session
    payload = name.encode("utf-8") * 3
    stor(f, "STOR " + name, payload)
    raw = name.encode("utf-8")
    # On disk: exactly these bytes, nothing escaped or normalised.
    assert raw in os.listdir(s.home().encode()), os.listdir(s.home().encode())
    assert s.read(name) == payload
    data, _, _ = retr(f, "RETR " + name)
    assert data == payload
    # NLST gives the bytes back unchanged.
    data, _, _ = retr(f, "NLST")
    assert raw in data.split(b"\r\n")
    # LIST ends the line with the name.
    data, _, _ = retr(f, "LIST")
    assert any(l.endswith(b" " + raw) for l in data.split(b"\r\n")), data
    # MLSD: the name after the first space, verbatim.
    data, _, _ = retr(f, "MLSD")
    names = [parse_mlsx(l.decode("utf-8"))[1] for l in data.split(b"\r\n") if l]
    assert name in names
    assert f.sendcmd("SIZE " + name) == "213 %d" % len(payload)
    # Rename to and from such names.
    assert rc(f, "RNFR " + name)[0] == 350
    assert rc(f, "RNTO x" + name)[0] == 250
    assert os.path.exists(os.path.join(s.home().encode(), b"x" + raw))
    assert rc(f, "DELE x" + name)[0] == 250
    assert os.listdir(s.home()) == []


@pytest.mark.parametrize("name", NAMES)
def test_dir_names_and_257(utf8_session, name):
    s, f = utf8_session
    cd, resp = rc(f, "MKD " + name)
    assert cd == 257, resp
    assert pwd_of(resp) == "/" + name, resp
    assert os.path.isdir(os.path.join(s.home().encode(), name.encode("utf-8")))
    assert rc(f, "CWD " + name)[0] == 250
    assert pwd_of(f.sendcmd("PWD")) == "/" + name
    stor(f, "STOR inside", b"in")
    assert s.read(os.path.join(name, "inside")) == b"in"


@pytest.mark.parametrize("raw", [b"latin1-\xe9\xe8\xfe\x80.bin", b"iac-\xff-byte.bin"],
                         ids=["latin1", "0xff"])
def test_non_utf8_bytes_pass_through(server, raw):
    """Names that are not valid UTF-8 are still stored byte for byte."""
    f = server.ftp("alice", encoding="latin-1")     # one char per byte on the wire
    name = raw.decode("latin-1")
    # On the control connection a 0xff byte is sent as IAC IAC (RFC 854, 2640).
    wire = name.replace("\xff", "\xff\xff")
    stor(f, "STOR " + wire, b"bytes")
    assert raw in os.listdir(server.home().encode()), os.listdir(server.home().encode())
    data, _, _ = retr(f, "RETR " + wire)
    assert data == b"bytes"
    # The data connection carries names as they are, no Telnet escaping.
    data, _, _ = retr(f, "NLST")
    assert raw in data.split(b"\r\n"), data
    f.close()


def test_quote_in_pwd_nested(utf8_session):
    s, f = utf8_session
    cd, resp = rc(f, 'MKD "a"')
    assert cd == 257 and resp.startswith('257 "/""a"""'), resp
    f.sendcmd('CWD "a"')
    cd, resp = rc(f, 'MKD b"c')
    assert resp.startswith('257 "/""a""/b""c"'), resp
    f.sendcmd('CWD b"c')
    assert pwd_of(f.sendcmd("PWD")) == '/"a"/b"c'
    assert os.path.isdir(os.path.join(s.home(), '"a"', 'b"c'))
