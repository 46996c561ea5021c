"""Invariant 6 for the logs (issue 12, item 10): no process running as a
login user holds the shared log file, the xferlog or the syslog socket.
A monitor that has become the user sends its lines to the log writer (the
listener, or in inetd mode the session's first process), which takes the
sender's pid from the kernel: the lines still arrive, each with the pid of
the session that sent it, and nothing a session sends makes a line of
another's."""

import os
import re
import socket

import twhelpers
from twhelpers import (USERS, descendants, proc_fds, proc_ids, retr, stor, wait_until)


def _fd_targets(pid):
    return set(proc_fds(pid).values())


def _user_procs(top):
    """Every process under top that runs as a non-root uid: {pid: uid}."""
    out = {}
    for pid, _ in descendants(top):
        try:
            uids = proc_ids(pid, "Uid")
        except (OSError, TypeError):
            continue
        if uids and any(u != 0 for u in uids):
            out[pid] = uids[0]
    return out


def _assert_no_log_fds(top, paths, want_uids):
    """The processes running as a user (at least one per uid in want_uids)
    hold none of paths open."""
    def probe():
        procs = _user_procs(top)
        return procs if set(want_uids) <= set(procs.values()) else None
    procs = wait_until(probe, 10, what="user processes of uids %s" % (want_uids,))
    for pid, uid in procs.items():
        held = _fd_targets(pid) & set(paths)
        assert not held, "pid %d (uid %d) holds %s" % (pid, uid, held)
    return procs


def _xferlog_opts(srv):
    xferlog = os.path.join(srv.base, "xferlog")
    srv.opts.update({"xferlog_std_format": True, "xferlog_file": xferlog,
                     "dual_log_enable": True})
    return xferlog


def test_logged_in_sessions_hold_no_log(make_server):
    srv = make_server(start=False)
    xferlog = _xferlog_opts(srv)
    srv.start()
    srv.put("d.bin", b"d" * 3000)
    srv.put("d.bin", b"e" * 2000, user="bob")
    fa = srv.ftp("alice")
    fb = srv.ftp("bob")
    assert len(retr(fa, "RETR d.bin")[0]) == 3000
    assert len(retr(fb, "RETR d.bin")[0]) == 2000
    stor(fa, "STOR up.bin", b"u" * 100)
    # Both sessions stay logged in while their processes are looked at:
    # the post-login monitor and worker of each run as the user.
    procs = _assert_no_log_fds(srv.pid, [srv.log_path, xferlog],
                               [USERS["alice"], USERS["bob"]])
    mon_a = srv.session_of(fa.sock.getsockname()[1])
    mon_b = srv.session_of(fb.sock.getsockname()[1])
    assert procs.get(mon_a) == USERS["alice"] and procs.get(mon_b) == USERS["bob"], procs
    # The lines arrive, with the pid of the session that sent them.
    srv.wait_log(r'\[pid %d\] \[monitor\] OK DOWNLOAD: Client "127\.0\.0\.1", '
                 r'user "alice", "/d\.bin", 3000 bytes' % mon_a, timeout=10)
    srv.wait_log(r'\[pid %d\] \[monitor\] OK DOWNLOAD: Client "127\.0\.0\.1", '
                 r'user "bob", "/d\.bin", 2000 bytes' % mon_b, timeout=10)
    srv.wait_log(r'\[pid %d\] \[monitor\] OK UPLOAD: Client "127\.0\.0\.1", '
                 r'user "alice", "/up\.bin", 100 bytes' % mon_a, timeout=10)
    text = srv.log_text()
    assert re.search(r'\[pid %d\] \[monitor\] OK LOGIN: Client "127\.0\.0\.1", user "alice"'
                     % mon_a, text), text
    lines = wait_until(lambda: (lambda t: t if len(t) == 3 else None)(
        open(xferlog).read().splitlines() if os.path.exists(xferlog) else []),
        10, what="three xferlog lines")
    assert sorted(l.split()[-5] for l in lines) == ["alice", "alice", "bob"], lines
    fa.quit()
    fb.quit()


def _unconnected_dgram_of(pid):
    """The unconnected unix datagram sockets pid holds (ss -xanp): the
    log writer's syslog socket, which sends each line to the path."""
    out = twhelpers.run(["ss", "-xanp"]).stdout.decode()
    socks = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "u_dgr" and f[1] == "UNCONN" and \
                "pid=%d," % pid in line:
            socks.add("socket:[%s]" % f[5])
    return socks


def test_syslog_socket_not_held_after_login(make_server, tmp_path):
    """syslog_enable: the daemon's syslog socket is the shared log then.
    The logged-in session's processes hold none of it, and its lines
    still reach syslog with the session's pid."""
    os.chmod(str(tmp_path), 0o755)
    path = str(tmp_path / "log.sock")
    rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    rx.bind(path)
    rx.settimeout(twhelpers.TIMEOUT)
    try:
        srv = make_server({"syslog_enable": True},
                          extra_env={"TW_TEST_SYSLOG_SOCKET": path})
        srv.put("s.txt", b"s" * 10)
        f = srv.ftp("alice")
        mon = srv.session_of(f.sock.getsockname()[1])
        retr(f, "RETR s.txt")
        got = []
        while not any("OK DOWNLOAD" in g for g in got):
            got.append(rx.recv(8192).decode())
        want = r'twinftpd\[%d\]: \[pid %d\] \[monitor\] OK DOWNLOAD' % (mon, mon)
        assert any(re.search(want, g) for g in got), got
        syslog_socks = _unconnected_dgram_of(srv.pid)
        # The listener's own socket is there: the check sees what it must.
        assert syslog_socks and syslog_socks <= _fd_targets(srv.pid), \
            (syslog_socks, _fd_targets(srv.pid))
        procs = _assert_no_log_fds(srv.pid, syslog_socks, [USERS["alice"]])
        assert procs.get(mon) == USERS["alice"], procs
        f.quit()
    finally:
        rx.close()


def test_syslog_daemon_that_starts_later(make_server, tmp_path):
    """No syslog daemon on the socket at start (a container, a boot that
    starts it later): the start goes on and says so, as vsftpd's
    syslog(3) would; once a daemon listens, the next lines reach it, and
    again after it restarts."""
    os.chmod(str(tmp_path), 0o755)
    path = str(tmp_path / "log.sock")
    srv = make_server({"syslog_enable": True}, extra_env={"TW_TEST_SYSLOG_SOCKET": path},
                      start=False)
    srv.start(ready=lambda: twhelpers.port_listening(srv.port))
    # Said where the operator starting it looks (standalone: stderr).
    wait_until(lambda: "syslog_enable=YES, but no syslog daemon listens on %s yet" % path
               in open(srv.stderr_path, errors="replace").read(), 10,
               what="the warning on stderr")
    for attempt in range(2):            # the daemon, then the daemon restarted
        rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        rx.bind(path)
        rx.settimeout(twhelpers.TIMEOUT)
        try:
            f = srv.ftp("alice")
            mon = srv.session_of(f.sock.getsockname()[1])
            f.quit()
            got = []
            while not any("OK LOGIN" in g for g in got):
                got.append(rx.recv(8192).decode())
            assert any(re.search(r'twinftpd\[%d\]: \[pid %d\] \[monitor\] OK LOGIN' %
                                 (mon, mon), g) for g in got), (attempt, got)
        finally:
            rx.close()
            os.unlink(path)

