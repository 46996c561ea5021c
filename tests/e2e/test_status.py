"""twinftpd -S (issue 14): the live state the listener writes on its
status socket: sessions by state, user and source, the ready pool,
penalties in force, uptime, the configuration file and its generation.
"""

import os
import re
import signal
import socket

from twhelpers import OTHER, Ctrl, wait_until


def status(s, conf=None):
    return s.status_run(conf)


def session_line(out, state, user):
    return re.search(r"^\s+\d+\s+%s\s+\S+\s+127\.0\.0\.1\s+%s$" % (state, re.escape(user)),
                     out, re.M)


def test_status_names_sessions_pool_and_penalties(make_server):
    s = make_server({"prefork_sessions": 3, "source_penalty_fails": 2, "max_login_fails": 3})
    # A penalty: two failed logins from another address.
    with Ctrl(s.port, src=OTHER) as c:
        assert c.reply()[0] == 220
        for _ in range(2):
            assert c.cmd("USER alice")[0] == 331
            assert c.cmd("PASS wrong")[0] == 530
        c.cmd("QUIT")
    s.wait_log(r"penalty: \S*127\.0\.0\.2 refused", 15)
    anon = s.ftp("anonymous")
    pre = s.ctrl()
    wait_until(lambda: "logged-in" in status(s).stdout.decode(), 15,
               what="the anonymous login in the snapshot")

    r = status(s)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    assert re.search(r"^twinftpd \S+, listener pid %d\nup \S+, since \S+Z$" % s.pid, out, re.M), out
    assert "config: %s, generation 0" % s.conf_path in out
    assert "sessions: 2 (pre-login 1, logged in 1)" in out, out
    assert session_line(out, "logged-in", "anonymous (anonymous)"), out
    assert session_line(out, "pre-login", "-"), out
    assert re.search(r"^by user \(logged in\):\n\s+anonymous \(anonymous\)\s+1$", out, re.M), out
    assert re.search(r"^\s+127\.0\.0\.1\s+2$", out, re.M), out
    assert re.search(r"^\s+127\.0\.0\.2\s+refused \d+ s more \(failed logins\)$", out, re.M), out
    assert re.search(r"^ready pool: \d+ ready \(target 3\)", out, re.M), out

    # A local user, and a reload bumps the generation.
    alice = s.ftp("alice")
    os.kill(s.pid, signal.SIGHUP)
    s.wait_log("reload done", 15)
    out = wait_until(lambda: (lambda o: "alice" in o and o)(status(s).stdout.decode()), 15,
                     what="alice in the snapshot")
    assert "generation 1" in out
    assert session_line(out, "logged-in", "alice"), out
    anon.quit()
    alice.quit()
    pre.close()
    wait_until(lambda: "sessions: 0 " in status(s).stdout.decode(), 15,
               what="the sessions gone from the snapshot")


def test_status_socket_is_roots_and_never_read(make_server):
    s = make_server()
    path = s.opts["status_socket"]
    st = os.stat(path)
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o600)
    # The listener never reads: what a client writes changes nothing (the
    # snapshot comes, then the close, whatever was sent), and it serves on.
    talker = socket.socket(socket.AF_UNIX)
    talker.connect(path)
    try:
        talker.sendall(b"garbage\r\n" * 100)
    except (BrokenPipeError, ConnectionResetError):
        pass
    talker.settimeout(10)
    got = b""
    while True:
        try:
            b = talker.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        got += b
    talker.close()
    assert b"sessions: 0 " in got, got
    f = s.ftp("alice")
    f.quit()
    wait_until(lambda: "sessions: 0 " in status(s).stdout.decode(), 15,
               what="alice's session to end")


def test_status_without_daemon_fails_clearly(make_server, tmp_path):
    s = make_server(start=False)
    s.opts["status_socket"] = str(tmp_path / "none.sock")
    s.write_config()
    r = status(s)
    assert r.returncode != 0
    err = r.stderr.decode()
    assert "no listener answers on %s" % (tmp_path / "none.sock") in err, err
    assert "is twinftpd running" in err, err
    s.opts["status_socket"] = ""
    s.write_config()
    r = status(s)
    assert r.returncode != 0
    assert "status_socket is empty" in r.stderr.decode()
