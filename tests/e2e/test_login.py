"""Login: good and bad passwords, unknown users, anonymous, limits, logging."""

import ftplib
import io
import os
import re
import socket
import time

import pytest

from twhelpers import HOST, USERS, code, pwd_of, rc


def test_login_good_password(server):
    with server.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        cd, lines = c.cmd("PASS alice-pw")
        assert cd == 230, lines
        cd, lines = c.cmd("PWD")
        assert cd == 257 and lines[0].startswith(b'257 "/"'), lines
    server.wait_log(r"alice.*%s|%s.*alice" % (HOST, HOST))


def test_login_bad_password(server):
    with server.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        cd, lines = c.cmd("PASS wrong")
        assert cd == 530, lines
        # Still logged out: a command that needs a login is refused.
        assert c.cmd("PWD")[0] == 530
        # A second try with the right password works (max_login_fails=3).
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS alice-pw")[0] == 230
    log = server.wait_log(r"(?i)(fail|denied|incorrect|bad|invalid|refused).*alice|alice.*(fail|denied|incorrect|bad|invalid|refused)")
    assert log


def test_login_unknown_user(server):
    with server.ctrl() as c:
        cd, lines = c.cmd("USER nosuchuser")
        # Unknown users must not be told apart from known ones at USER time.
        assert cd == 331, lines
        cd, lines = c.cmd("PASS whatever")
        assert cd == 530, lines
        assert c.cmd("NOOP")[0] == 200


def test_login_bob_other_user(server):
    f = server.ftp("bob")
    try:
        assert pwd_of(f.sendcmd("PWD")) == "/"
        f.storbinary("STOR b.txt", io.BytesIO(b"bob"))
    finally:
        f.quit()
    st = os.stat(server.path("b.txt", "bob"))
    assert st.st_uid == USERS["bob"] and st.st_gid == USERS["bob"]


@pytest.mark.parametrize("name", ["anonymous", "ftp"])
def test_login_anonymous(server, name):
    with server.ctrl() as c:
        cd, lines = c.cmd("USER " + name)
        assert cd == 331, lines
        cd, lines = c.cmd("PASS e2e@example.org")
        assert cd == 230, lines
        cd, lines = c.cmd("PWD")
        assert lines[0].startswith(b'257 "/"'), lines
    f = server.ftp("anonymous")
    try:
        got = []
        f.retrbinary("RETR pub/readme.txt", got.append)
        assert b"".join(got) == b"anonymous readme\n"
        # Uploads are off for anonymous users by default (anon_upload_enable=NO).
        cd, resp = rc(f, "MKD newdir")
        assert cd == 550, resp
    finally:
        f.close()


def test_anonymous_disabled(make_server):
    s = make_server({"anonymous_enable": False})
    with s.ctrl() as c:
        cd, _ = c.cmd("USER anonymous")
        if cd == 331:
            cd, _ = c.cmd("PASS x@y")
        assert cd == 530


def test_local_disabled(make_server):
    s = make_server({"local_enable": False})
    with s.ctrl() as c:
        cd, _ = c.cmd("USER alice")
        if cd == 331:
            cd, _ = c.cmd("PASS alice-pw")
        assert cd == 530


def test_max_login_fails_closes(make_server):
    s = make_server({"max_login_fails": 2})
    c = s.ctrl()
    try:
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS bad1")[0] == 530
        assert c.cmd("USER alice")[0] == 331
        c.send("PASS bad2\r\n")
        try:
            cd, lines = c.reply()
            assert cd in (530, 421), lines
        except EOFError:
            pass
        assert c.closed_within(10), "session not closed after max_login_fails"
    finally:
        c.close()
    s.wait_sessions(0)


def test_delay_failed_login(make_server):
    s = make_server({"delay_failed_login": 1})
    with s.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        t0 = time.monotonic()
        assert c.cmd("PASS bad")[0] == 530
        assert time.monotonic() - t0 >= 0.9


def test_delay_successful_login(make_server):
    # vsftpd's delay_successful_login: the 230 waits.
    s = make_server({"delay_successful_login": 2})
    with s.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        t0 = time.monotonic()
        assert c.cmd("PASS alice-pw")[0] == 230
        assert time.monotonic() - t0 >= 1.9
        assert c.cmd("PWD")[0] == 257


def _loopback_name():
    """127.0.0.1's name where it has one that resolves back to it, else None."""
    try:
        name = socket.gethostbyaddr(HOST)[0]
        return name if HOST in socket.gethostbyname_ex(name)[2] else None
    except OSError:
        return None


def test_reverse_lookup_enable(make_server):
    # Red Hat's option: PAM is given the client's forward-confirmed name
    # (auth_rhost, unit tested), which the log line names; the lookup runs
    # in the sandboxed PAM child, which it must not kill, for a good
    # password and a bad one.
    s = make_server({"reverse_lookup_enable": True, "delay_failed_login": 0})
    with s.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS bad")[0] == 530
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS alice-pw")[0] == 230
    name = _loopback_name()
    line = r"reverse_lookup_enable: PAM is given the host name %s for 127\.0\.0\.1"
    if name is not None:
        s.wait_log(line % re.escape(name))
    else:
        assert not re.search(line % r"\S+", s.log_text()), s.log_text()
    assert "killed by seccomp" not in s.log_text(), s.log_text()
    # Off (the default): the address, and no such line.
    s = make_server({"delay_failed_login": 0})
    f = s.ftp("alice")
    f.quit()
    s.wait_log(r"OK LOGIN: Client \"127\.0\.0\.1\", user \"alice\"")
    assert "reverse_lookup_enable" not in s.log_text(), s.log_text()


def test_pass_without_user(server):
    with server.ctrl() as c:
        cd, lines = c.cmd("PASS alice-pw")
        assert cd in (503, 530), lines
        assert c.cmd("PWD")[0] == 530


def test_acct_502(server):
    with server.ctrl() as c:
        # Before login only the login commands work (DESIGN.md): 530 or 502.
        assert c.cmd("ACCT foo")[0] in (502, 530)
        c.login("alice", "alice-pw")
        assert c.cmd("ACCT foo")[0] == 502


@pytest.mark.parametrize("userlist_log", [False, True])
def test_userlist_deny(make_server, userlist_log):
    def prep(s):
        p = s.etc + "/user_list"
        with open(p, "w") as f:
            f.write("bob\n")
        s.opts.update({"userlist_enable": True, "userlist_deny": True, "userlist_file": p,
                       "userlist_log": userlist_log})
    s = make_server(prepare=prep)
    with s.ctrl() as c:
        # Refused at USER, before the password (vsftpd's words).
        cd, lines = c.cmd("USER bob")
        assert cd == 530 and lines == [b"530 Permission denied."], lines
        assert c.cmd("PASS bob-pw")[0] == 503
    s.wait_log(r"user bob refused by userlist_file")
    f = s.ftp("alice")
    f.quit()
    # Red Hat's userlist_log: the refusal is a FAIL LOGIN line too (fail2ban),
    # logged by the monitor just after the line waited for above.
    fail = r'FAIL LOGIN: Client "127\.0\.0\.1", user "bob" \(userlist_file\)'
    if userlist_log:
        s.wait_log(fail)
    else:
        assert not re.search(fail, s.log_text()), s.log_text()


def test_quit(server):
    with server.ctrl() as c:
        c.login("alice", "alice-pw")
        cd, lines = c.cmd("QUIT")
        assert cd == 221, lines
        assert c.closed_within(10)
    server.wait_sessions(0)


def test_quit_before_login(server):
    with server.ctrl() as c:
        assert c.cmd("QUIT")[0] == 221
        assert c.closed_within(10)


def test_ftplib_login_roundtrip(server):
    f = ftplib.FTP()
    f.connect(HOST, server.port, timeout=10)
    assert code(f.getwelcome()) == 220
    assert code(f.login("alice", "alice-pw")) == 230
    assert code(f.quit()) == 221
