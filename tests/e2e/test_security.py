"""Hostile input and confinement: bounce, data-connection theft, bad lines,
half-closed sockets, chroot escapes, write protection."""

import ftplib
import os
import socket
import time

import pytest

from twhelpers import (assert_theft_refused, HOST, OTHER, alive, code, open_data, pwd_of, rc, recv_all, retr,
                       retr_by_port_from, tree_snapshot, wait_until)


def _still_serving(server):
    """A fresh session gets the greeting and can log in."""
    f = server.ftp("alice")
    assert rc(f, "NOOP")[0] == 200
    f.quit()
    assert server.proc.poll() is None, "listener died"


# ------------------------------------------------------------- FTP bounce

def _listen(addr):
    ls = socket.socket()
    ls.bind((addr, 0))
    ls.listen(1)
    ls.settimeout(0.5)
    return ls


def _nothing_connects(ls, seconds=1.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            c, _ = ls.accept()
            c.close()
            return False
        except socket.timeout:
            pass
    return True


def test_port_to_other_address_refused(server):
    server.put("x.txt", b"data for someone else")
    f = server.ftp("alice")
    ls = _listen(OTHER)
    p = ls.getsockname()[1]
    try:
        cd, resp = rc(f, "PORT 127,0,0,2,%d,%d" % (p >> 8, p & 255))
        assert cd in (500, 501, 504), resp
        # Even a follow-up transfer must not reach the other address.
        f.sock.sendall(b"RETR x.txt\r\n")
        cd = code(f.getmultiline())
        assert cd // 100 in (4, 5), cd
        assert _nothing_connects(ls)
    finally:
        ls.close()
    assert rc(f, "NOOP")[0] == 200
    f.close()


def test_eprt_to_other_address_refused(server):
    f = server.ftp("alice")
    ls = _listen(OTHER)
    p = ls.getsockname()[1]
    try:
        cd, resp = rc(f, "EPRT |1|%s|%d|" % (OTHER, p))
        assert cd in (500, 501, 504, 522), resp
        rc(f, "LIST")
        assert _nothing_connects(ls)
    finally:
        ls.close()
    f.close()


@pytest.mark.parametrize("line", ["PORT 127,0,0,1,0,80", "PORT 127,0,0,1,3,255",
                                  "EPRT |1|127.0.0.1|22|", "EPRT |1|127.0.0.1|1023|",
                                  "PORT 127,0,0,1,0,0"])
def test_port_below_1024_refused(server, line):
    f = server.ftp("alice")
    cd, resp = rc(f, line)
    assert cd in (500, 501, 504), resp
    assert rc(f, "NOOP")[0] == 200
    f.close()


def test_port_promiscuous_allows_other_address(make_server):
    """Positive control for the bounce tests: with port_promiscuous it works."""
    s = make_server({"port_promiscuous": True})
    s.put("x.txt", b"hello")
    f = s.ftp("alice")
    assert retr_by_port_from(f, OTHER, "x.txt") == b"hello"
    f.close()


# ------------------------------------------------------------- data-connection theft

def _pasv_from(f, addr):
    """PASV, then connect to the announced port from source address addr."""
    resp = f.sendcmd("PASV")
    _, port = ftplib.parse227(resp)
    d = socket.socket()
    d.bind((addr, 0))
    d.settimeout(15)
    d.connect((HOST, port))
    return d


def test_pasv_connection_from_other_address_refused(make_server):
    s = make_server({"accept_timeout": 3})
    s.put("secret.bin", b"SECRET-PAYLOAD" * 1000)
    f = s.ftp("alice")
    f.sendcmd("TYPE I")
    thief = _pasv_from(f, OTHER)
    f.sock.sendall(b"RETR secret.bin\r\n")
    codes = [code(f.getmultiline())]
    if codes[0] in (125, 150):
        codes.append(code(f.getmultiline()))
    assert codes[-1] in (425, 426), codes
    # The thief got nothing: the server closed or never used the socket.
    got = b""
    try:
        thief.settimeout(3)
        got = recv_all(thief)
    except (socket.timeout, ConnectionResetError):
        pass
    thief.close()
    assert b"SECRET" not in got and got == b""
    # The session is fine and an honest data connection still works.
    assert rc(f, "NOOP")[0] == 200
    data, _, _ = retr(f, "RETR secret.bin")
    assert data == b"SECRET-PAYLOAD" * 1000
    f.close()


def test_epsv_connection_from_other_address_refused(make_server):
    s = make_server({"accept_timeout": 3})
    s.put("secret.bin", b"SECRET" * 100)
    f = s.ftp("alice")
    resp = f.sendcmd("EPSV")
    _, port = ftplib.parse229(resp, f.sock.getpeername())
    assert_theft_refused(f, port)
    f.close()


def test_pasv_promiscuous_allows_other_address(make_server):
    """Positive control: the same connection works with pasv_promiscuous."""
    s = make_server({"pasv_promiscuous": True})
    s.put("x.bin", b"payload")
    f = s.ftp("alice")
    d = _pasv_from(f, OTHER)
    f.sock.sendall(b"RETR x.bin\r\n")
    assert code(f.getmultiline()) in (125, 150)
    assert recv_all(d) == b"payload"
    d.close()
    assert code(f.getmultiline()) == 226
    f.close()


# ------------------------------------------------------------- bad lines

def _reply_or_close(c, timeout=10):
    """Next reply code, or None if the server closed the connection."""
    c.sock.settimeout(timeout)
    try:
        return c.reply()[0]
    except (EOFError, ConnectionResetError):
        return None


@pytest.mark.parametrize("logged_in", [False, True], ids=["prelogin", "postlogin"])
def test_overlong_line(server, logged_in):
    with server.ctrl() as c:
        if logged_in:
            c.login("alice", "alice-pw")
        c.send(b"NOOP " + b"A" * 10000 + b"\r\n")
        cd = _reply_or_close(c)
        assert cd is None or cd // 100 == 5, cd
        if cd is not None:
            # Either the connection stays usable, or it is closed soon.
            try:
                c.send(b"NOOP\r\n")
                nxt = _reply_or_close(c)
                assert nxt in (None, 200, 500), nxt
            except (BrokenPipeError, ConnectionResetError):
                pass
    _still_serving(server)


def test_overlong_path(server):
    """Long arguments inside the line bound: a clear error, the session goes on."""
    f = server.ftp("alice")
    cd, resp = rc(f, "MKD " + "d" * 300)              # longer than NAME_MAX
    assert cd // 100 == 5, resp
    cd, resp = rc(f, "CWD " + "/".join(["x"] * 1500))  # 3000 bytes, no such dir
    assert cd // 100 == 5, resp
    cd, resp = rc(f, "SIZE " + "y" * 3500)
    assert cd // 100 == 5, resp
    assert rc(f, "NOOP")[0] == 200
    assert os.listdir(server.home()) == []
    f.close()


def test_overlong_line_without_newline(server):
    with server.ctrl() as c:
        try:
            c.send(b"X" * 200000)
        except (BrokenPipeError, ConnectionResetError):
            pass        # the server may close while we are still sending
        cd = _reply_or_close(c)
        assert cd is None or cd // 100 == 5, cd
    _still_serving(server)


@pytest.mark.parametrize("seed", range(3))
def test_binary_garbage(server, seed):
    import random
    rnd = random.Random(seed)
    blob = bytes(rnd.randrange(256) for _ in range(8192))
    blob += b"\xff\xf4\xff\xf2\x00\x00\r\n\xff\xff\xfb\x01\r\n"
    with server.ctrl() as c:
        try:
            c.send(blob)
            c.send(b"\r\nNOOP\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        # Read whatever comes: replies until NOOP's 200, or a close. Never a hang.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            cd = _reply_or_close(c, max(0.1, deadline - time.monotonic()))
            if cd is None or cd == 200:
                break
            assert 400 <= cd < 600, cd
        else:
            pytest.fail("no reply and no close within 15s")
    _still_serving(server)


@pytest.mark.parametrize("logged_in", [False, True], ids=["prelogin", "postlogin"])
def test_nul_in_command(server, logged_in):
    """As twinftpd(8) says: a NUL (not after CR) is binary data, answered
    with 500 and a clean close, where vsftpd answers 500 and reads on."""
    with server.ctrl() as c:
        if logged_in:
            c.login("alice", "alice-pw")
        c.send(b"NO\x00OP\r\n")
        assert _reply_or_close(c) == 500
        assert c.closed_within(10), "session not closed after a NUL"
    _still_serving(server)


def test_telnet_iac_stripped(server):
    with server.ctrl() as c:
        # A Telnet IAC NOP in front of a command is stripped (RFC 854).
        assert c.cmd(b"\xff\xf1NOOP")[0] == 200
        # IAC IAC stands for one 0xff byte: not a command we know.
        assert c.cmd(b"NO\xff\xffOP")[0] in (500, 502, 530)
        assert c.cmd(b"NOOP")[0] == 200


@pytest.mark.parametrize("line", ["XYZZY", "FOO bar", "STOR2 x"])
def test_unknown_commands(server, line):
    with server.ctrl() as c:
        assert c.cmd(line)[0] in (500, 502, 530)
        c.login("alice", "alice-pw")
        assert c.cmd(line)[0] in (500, 502)
        assert c.cmd("NOOP")[0] == 200


# src/worker.h MAX_UNKNOWN_COMMANDS: unknown verbs in a row before the close.
MAX_UNKNOWN_IN_A_ROW = 16


@pytest.mark.parametrize("logged_in", [False, True], ids=["prelogin", "postlogin"])
def test_occasional_unknown_commands_are_tolerated(server, logged_in):
    """Issue 12: only unknown verbs in a row count, so a long-lived client
    that now and then tries a verb the server lacks is not cut off."""
    with server.ctrl() as c:
        if logged_in:
            c.login("alice", "alice-pw")
        for i in range(40):
            assert c.cmd("XYZZY%d" % i)[0] == 500, i
            assert c.cmd("NOOP")[0] == 200, i
        # Just under the limit in a row is still answered.
        for i in range(MAX_UNKNOWN_IN_A_ROW):
            assert c.cmd("XYZZY")[0] == 500, i
        assert c.cmd("NOOP")[0] == 200


@pytest.mark.parametrize("logged_in", [False, True], ids=["prelogin", "postlogin"])
def test_unknown_commands_in_a_row_close(server, logged_in):
    with server.ctrl() as c:
        if logged_in:
            c.login("alice", "alice-pw")
        for i in range(MAX_UNKNOWN_IN_A_ROW):
            assert c.cmd("XYZZY")[0] == 500, i
        assert c.cmd("XYZZY")[0] == 421
        assert c.closed_within(10), "session not closed after a run of unknown verbs"
    _still_serving(server)


@pytest.mark.parametrize("req", [b"GET / HTTP/1.0\r\n\r\n", b"POST /x HTTP/1.1\r\nHost: a\r\n\r\n",
                                 b"CONNECT example.org:443 HTTP/1.1\r\n\r\n",
                                 b"HEAD / HTTP/1.0\r\n\r\n"])
def test_http_verbs_close(server, req):
    with server.ctrl() as c:
        c.send(req)
        assert c.closed_within(10), "HTTP request did not close the connection"
    server.wait_sessions(0)
    _still_serving(server)


def test_commands_before_login_get_530(server):
    with server.ctrl() as c:
        for line in ("CWD /", "LIST", "RETR /etc/passwd", "STOR x", "DELE x", "MKD x"):
            assert c.cmd(line)[0] == 530, line
    assert os.listdir(server.home()) == []


# DESIGN.md: before login only these work; AUTH, PBSZ and PROT too (TLS set-up).
# DESIGN.md: before login only these (and AUTH, which HELP does not list:
# it means nothing after login) work; PBSZ and PROT answer 503 without TLS.
BEFORE_LOGIN = {"USER", "PASS", "PBSZ", "PROT", "FEAT", "OPTS", "HELP", "SYST", "NOOP", "QUIT"}


def _help_verbs(c):
    cd, lines = c.cmd("HELP")
    assert cd == 214, lines
    return [w.decode() for line in lines[1:-1] for w in line.split()]


def test_verb_split_follows_help(server):
    """Every verb HELP names gets 530 before login unless DESIGN.md allows it,
    and is known after login; HELP is the same in both states."""
    with server.ctrl() as c:
        verbs = _help_verbs(c)
        assert verbs == sorted(verbs) and len(verbs) == len(set(verbs)), verbs
        assert BEFORE_LOGIN <= set(verbs), verbs
        for verb in sorted(set(verbs) - BEFORE_LOGIN):
            # The argument is one no command could act on: only the state counts.
            assert c.cmd(verb + " nosuch/x")[0] == 530, verb
        for line in ("SYST", "NOOP", "FEAT", "HELP", "OPTS UTF8 ON"):
            assert c.cmd(line)[0] in (200, 211, 214, 215), line
        c.login("alice", "alice-pw")
        assert _help_verbs(c) == verbs
        for verb in sorted(set(verbs) - {"QUIT", "PASS", "USER"}):
            # SITE answers an unknown subcommand with 500 of its own.
            cd, lines = c.cmd(verb + (" HELP" if verb == "SITE" else " nosuch/x"))
            assert cd != 500 and cd != 530, (verb, lines)
            # No passive socket or PORT address carries over to the next verb.
            assert c.cmd("ABOR")[0] in (225, 226), verb
        assert c.cmd("NOOP")[0] == 200
    assert os.listdir(server.home()) == []


# ------------------------------------------------------------- half-closed

@pytest.mark.parametrize("logged_in", [False, True], ids=["prelogin", "postlogin"])
def test_half_closed_socket(server, logged_in):
    c = server.ctrl()
    try:
        if logged_in:
            c.login("alice", "alice-pw")
        procs = _session_procs(server, c)
        c.sock.shutdown(socket.SHUT_WR)
        # The session ends on its own: no process of it remains.
        _wait_gone(procs)
        assert c.closed_within(5)
    finally:
        c.close()
    _still_serving(server)


def _session_procs(server, c):
    mon = server.session_of(c.sock.getsockname()[1])
    procs = server.session_pids(mon)
    assert len(procs) >= 2, procs
    return procs


def _wait_gone(procs, timeout=15):
    wait_until(lambda: not [p for p, t in procs if alive(p, t)], timeout,
               what="session processes %s to exit" % [p for p, _ in procs])


def test_half_closed_mid_command(server):
    c = server.ctrl()
    try:
        c.login("alice", "alice-pw")
        procs = _session_procs(server, c)
        c.send(b"NOO")
        c.sock.shutdown(socket.SHUT_WR)
        _wait_gone(procs)
    finally:
        c.close()
    _still_serving(server)


def test_reset_mid_transfer(server):
    """The client vanishes (RST) in the middle of a download: session ends."""
    with open(server.path("huge.bin"), "wb") as fh:
        fh.truncate(256 << 20)
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "RETR huge.bin")
    conn.recv(1000)
    mon = server.session_of(f.sock.getsockname()[1])
    procs = server.session_pids(mon)
    linger0 = b"\x01\x00\x00\x00\x00\x00\x00\x00"    # l_onoff=1, l_linger=0: RST
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger0)
    conn.close()
    f.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger0)
    f.close()       # closes ftplib's file object too, so the socket really goes
    _wait_gone(procs)
    _still_serving(server)


# ------------------------------------------------------------- chroot

@pytest.fixture
def jailed(server):
    s = server
    s.put("inside.txt", b"inside\n")
    s.mkdir("sub")
    os.symlink("/etc/passwd", s.path("passwd-link"))
    os.symlink("/etc", s.path("etc-link"))
    os.symlink(s.secret_path, s.path("secret-link"))
    os.symlink("../../secret.txt", s.path("rel-secret-link"))
    os.symlink("../../../../../../..", s.path("up-link"))
    for n in ("passwd-link", "etc-link", "secret-link", "rel-secret-link", "up-link"):
        os.lchown(s.path(n), 60102, 60102)
    f = s.ftp("alice")
    yield s, f
    f.close()


def _cannot_retr(f, path):
    rc(f, "PASV")
    cd, resp = rc(f, "RETR " + path)
    if cd in (125, 150):
        # Should not happen; read what we got to show it in the failure.
        pytest.fail("RETR %s started a transfer: %s" % (path, resp))
    assert cd == 550, (path, resp)


def test_chroot_cwd_dotdot(jailed):
    s, f = jailed
    for target in ("..", "../..", "/..", "../../../../..", "sub/../../..", "/../../etc"):
        rc(f, "CWD " + target)
        assert pwd_of(f.sendcmd("PWD")) in ("/", "/sub"), target
        f.sendcmd("CWD /")
    assert rc(f, "CDUP")[0] in (200, 250, 550)
    assert pwd_of(f.sendcmd("PWD")) == "/"
    data, _, _ = retr(f, "NLST")
    assert b"inside.txt" in data and b"passwd" not in data.split(b"\r\n")


def test_chroot_absolute_paths(jailed):
    s, f = jailed
    _cannot_retr(f, "/etc/passwd")
    _cannot_retr(f, "../../../../etc/passwd")
    _cannot_retr(f, s.secret_path)
    _cannot_retr(f, "../secret.txt")
    _cannot_retr(f, "../../secret.txt")
    assert rc(f, "SIZE /etc/passwd")[0] == 550
    assert rc(f, "SIZE " + s.secret_path)[0] == 550
    assert rc(f, "CWD /etc")[0] == 550
    assert rc(f, "CWD " + s.base)[0] == 550
    # "/" is the home: absolute paths resolve inside it.
    data, _, _ = retr(f, "RETR /inside.txt")
    assert data == b"inside\n"


def test_chroot_symlinks_out(jailed):
    s, f = jailed
    for link in ("passwd-link", "secret-link", "rel-secret-link", "etc-link/passwd",
                 "up-link/etc/passwd", "up-link" + s.secret_path):
        _cannot_retr(f, link)
    rc(f, "CWD up-link")
    # Following the relative link at most reaches the chroot's own root.
    data, _, _ = retr(f, "NLST")
    assert b"inside.txt" in data or data == b""
    assert b"secret.txt" not in data
    f.sendcmd("CWD /")
    assert rc(f, "CWD etc-link")[0] == 550
    # Writing through a dangling link must not create a file outside.
    cd, _ = rc(f, "PASV")
    f.sock.sendall(b"STOR secret-link\r\n")
    cd = code(f.getmultiline())
    if cd in (125, 150):
        pytest.fail("STOR through a symlink out of the chroot started")
    with open(s.secret_path, "rb") as fh:
        assert fh.read() == s.secret


def test_anonymous_confined(server):
    f = server.ftp("anonymous")
    assert pwd_of(f.sendcmd("PWD")) == "/"
    rc(f, "CWD ../../..")
    assert pwd_of(f.sendcmd("PWD")) == "/"
    _cannot_retr(f, "/etc/passwd")
    _cannot_retr(f, "../secret.txt")
    data, _, _ = retr(f, "NLST")
    assert data.split(b"\r\n")[:-1] == [b"pub"]
    f.close()


# ------------------------------------------------------------- write_enable=NO

def test_write_enable_no(make_server):
    s = make_server({"write_enable": False})
    s.put("keep.txt", b"keep\n")
    s.mkdir("keepdir")
    s.mkdir("emptydir")
    before = tree_snapshot(s.home())
    f = s.ftp("alice")
    for line in ("MKD newdir", "XMKD newdir", "RMD emptydir", "XRMD emptydir", "DELE keep.txt",
                 "RNFR keep.txt", "SITE CHMOD 777 keep.txt"):
        cd, resp = rc(f, line)
        assert cd == 550, (line, resp)
    assert rc(f, "RNTO moved.txt")[0] in (503, 550)
    for line in ("STOR new.txt", "STOR keep.txt", "APPE keep.txt", "STOU"):
        rc(f, "PASV")
        cd, resp = rc(f, line)
        assert cd == 550, (line, resp)
    # Reading still works.
    data, _, _ = retr(f, "RETR keep.txt")
    assert data == b"keep\n"
    f.close()
    assert tree_snapshot(s.home()) == before


def test_anonymous_cannot_write(server):
    before = tree_snapshot(server.anon_root)
    f = server.ftp("anonymous")
    for line in ("MKD x", "DELE pub/readme.txt", "RMD pub", "RNFR pub/readme.txt",
                 "SITE CHMOD 777 pub/readme.txt"):
        assert rc(f, line)[0] == 550, line
    for line in ("STOR pub/x", "APPE pub/readme.txt", "STOU"):
        rc(f, "PASV")
        assert rc(f, line)[0] == 550, line
    f.close()
    assert tree_snapshot(server.anon_root) == before
