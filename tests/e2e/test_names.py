"""File names with spaces, quotes and UTF-8 pass through byte for byte."""

import ftplib
import os
import re
import socket

import pytest

from twhelpers import (HOST, PASSWORDS, TIMEOUT, parse_mlsx, pwd_of, rc, retr, stor,
                       tree_snapshot)

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


# ------------------------------------------------- CR and LF inside names
#
# POSIX lets a file name hold CR and LF; the FTP control connection and
# the listings are CRLF-ended lines. A name put on disk by other means
# (a local shell, another protocol) must never end a line early: not
# inside STAT's 213 reply (a fake reply line), not in LIST/NLST/MLSD (a
# bogus entry for a mirror client). twinftpd shows each CR and LF of a
# name as '?', and refuses to create such names itself.

HOSTILE = {
    "evil\n226 Injected": "evil?226 Injected",
    "evil2\r\n213 Injected": "evil2??213 Injected",
    "cr\ronly": "cr?only",
    "lf-at-end\n": "lf-at-end?",
    "normal.txt": "normal.txt",
}
LINK = "link"
LINK_TARGET = "nowhere\r\n213 Injected-link"


@pytest.fixture
def hostile(server):
    """A directory 'h' in alice's home holding HOSTILE names and a symlink
    whose target holds CRLF, made directly on disk as root."""
    d = server.mkdir("h")
    for name in HOSTILE:
        server.put(os.path.join("h", name), b"x")
    os.symlink(LINK_TARGET, os.path.join(d, LINK))
    return server


LIST_LINE = re.compile(rb"^[-dlcbps][-rwxsStT]{9} +\d+ +\S+ +\S+ +\d+ +\w{3} +\d+ +[\d:]+ (.*)$")


def list_name(line):
    """The name (and ' -> target') of one LIST line."""
    m = LIST_LINE.match(line)
    assert m, line
    return m.group(1)


def assert_one_entry_per_line(data, n):
    """data is n CRLF-ended lines and no CR or LF anywhere else."""
    assert data.endswith(b"\r\n"), data
    assert data.count(b"\r\n") == n, data
    body = data.replace(b"\r\n", b"")
    assert b"\r" not in body and b"\n" not in body, data
    return data.split(b"\r\n")[:-1]


def test_stat_dir_no_injected_reply(hostile):
    """STAT <dir> sends a LIST listing inside the 213 reply, on the control
    connection: every entry stays on its own line, no line of it can end
    the reply, and the next command gets its own reply."""
    with hostile.ctrl() as c:
        c.login("alice", PASSWORDS["alice"])
        cd, lines = c.cmd("STAT h")
        assert cd == 213, lines
        assert lines[0] == b"213-Status follows:", lines
        assert lines[-1] == b"213 End of status", lines
        entries = lines[1:-1]
        assert len(entries) == len(HOSTILE) + 1, lines
        for line in entries:
            assert b"\r" not in line, lines
            assert not line[:1].isdigit(), lines
        shown = sorted(list_name(l) for l in entries)
        want = sorted([v.encode() for v in HOSTILE.values()] +
                      [b"link -> nowhere??213 Injected-link"])
        assert shown == want, lines
        # Nothing was left over to be taken as the answer to the next command.
        assert c.cmd("NOOP")[0] == 200
        assert c.buf == b""


def test_stat_file_with_cr_in_name(hostile):
    """STAT of one file names it (the client's own path) in the reply."""
    with hostile.ctrl() as c:
        c.login("alice", PASSWORDS["alice"])
        cd, lines = c.cmd(b"STAT h/cr\r\x00only")
        assert cd == 213, lines
        assert len(lines) == 3 and lines[1].endswith(b" h/cr?only"), lines
        assert c.cmd("NOOP")[0] == 200


@pytest.mark.parametrize("mode", ["pasv", "port"])
def test_listings_one_entry_per_line(hostile, mode):
    f = hostile.ftp("alice")
    n = len(HOSTILE) + 1
    data, _, _ = retr(f, "LIST h", mode)
    lines = assert_one_entry_per_line(data, n)
    assert sorted(list_name(l) for l in lines) == sorted(
        [v.encode() for v in HOSTILE.values()] + [b"link -> nowhere??213 Injected-link"])
    data, _, _ = retr(f, "NLST h", mode)
    lines = assert_one_entry_per_line(data, n)
    assert sorted(lines) == sorted([v.encode() for v in HOSTILE.values()] + [LINK.encode()])
    data, _, _ = retr(f, "MLSD h", mode)
    lines = assert_one_entry_per_line(data, n + 1)      # and the type=cdir line
    names = sorted(parse_mlsx(l.decode())[1] for l in lines)
    assert names == sorted(list(HOSTILE.values()) + [LINK, "."])
    # What a mirror client sees through ftplib: exactly the entries.
    assert len(f.nlst("h")) == n
    assert len([e for e in f.mlsd("h") if e[1]["type"] not in ("cdir", "pdir")]) == n
    f.close()


def _pasv_data(c):
    """Opens a passive data connection on a raw control connection."""
    cd, lines = c.cmd("PASV")
    assert cd == 227, lines
    _, port = ftplib.parse227(lines[0].decode())
    return socket.create_connection((HOST, port), TIMEOUT)


# How a client can put a CR into a name: raw, as RFC 2640's CR NUL, or
# last before the line's CRLF. An LF cannot be sent at all: it ends the
# command line, and a NUL (vsftpd's stand-in for LF) is refused by the
# line reader.
CR_NAMES = [b"a\rb", b"a\r\x00b", b"trailing\r"]


@pytest.mark.parametrize("verb", [b"MKD", b"STOR", b"APPE", b"STOU", b"RNTO"])
@pytest.mark.parametrize("name", CR_NAMES, ids=["raw-cr", "cr-nul", "trailing-cr"])
def test_create_name_with_cr_refused(server, verb, name):
    server.put("src.txt", b"source")
    before = tree_snapshot(server.home())
    with server.ctrl() as c:
        c.login("alice", PASSWORDS["alice"])
        data = None
        if verb == b"RNTO":
            assert c.cmd("RNFR src.txt")[0] == 350
        elif verb != b"MKD":
            data = _pasv_data(c)
        try:
            cd, lines = c.cmd(verb + b" " + name)
            if cd == 150:           # the old code took it: let it finish
                data.close()
                data = None
                c.reply()
        finally:
            if data is not None:
                data.close()
        assert cd == 553, lines
        assert c.cmd("NOOP")[0] == 200
    assert tree_snapshot(server.home()) == before
