"""Graceful upgrade (issue 14): SIGUSR2 starts the binary at the path the
listener was started from, with the same arguments, and hands it the
listening sockets; once the new listener is ready the old one stops
accepting, ends its ready pairs and exits 0 when its last session has
ended. A new binary that fails leaves the old listener serving.

Each test starts the daemon from a copy of the binary in its own
directory, so that it can replace that file as a package upgrade would.
"""

import ftplib
import os
import re
import shutil
import signal

from twhelpers import (PASSWORDS, TWINFTPD, BannerBurst, Ctrl, NotifySocket,
                       TransfersInFlight, all_pids, free_ports, proc_stat, socket_activated,
                       wait_until)

READY = re.compile(r"upgrade: new listener pid (\d+) is ready")


def binary_copy(tmpdir):
    """A copy of the daemon in a directory of its own; returns its path."""
    path = os.path.join(tmpdir, "twinftpd")
    install(path, TWINFTPD)
    return path


def install(path, source):
    """Replaces path by a copy of source the way a package manager does
    (a new file renamed over the old one: a new inode)."""
    tmp = path + ".new"
    shutil.copyfile(source, tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def install_script(path, text):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def gone(pid):
    st = proc_stat(pid)
    return st is None or st[1] == "Z"


def upgrade(s, pid):
    """SIGUSR2 to listener pid; waits for the hand-over; the new pid."""
    before = len(READY.findall(s.log_text()))
    os.kill(pid, signal.SIGUSR2)
    wait_until(lambda: len(READY.findall(s.log_text())) > before, 90,
               what="the new listener to be ready (the log is below)")
    return int(READY.findall(s.log_text())[-1])


def listener_of(s, client_port, candidates):
    """Which of the candidate listeners serves the client at client_port."""
    def probe():
        for p in s.connections(all_pids()).get(client_port, ()):
            while p > 1:
                if p in candidates:
                    return p
                st = proc_stat(p)
                if st is None:
                    break
                p = st[0]
        return None
    return wait_until(probe, 10, what="the listener of client port %d" % client_port)


def stop_successor(s, pid):
    """SIGTERM to the listener the upgrade started (not our child), then the
    fixture's checks for the old one, which must have exited 0."""
    os.kill(pid, signal.SIGTERM)
    wait_until(lambda: gone(pid), 30, what="the new listener %d to exit" % pid)
    errs = s.stop(exited=True)
    assert not errs, errs


def banner(s):
    with Ctrl(s.port) as c:
        code_, lines = c.reply()
        assert code_ == 220, lines
        return lines[0].decode()


def test_transfers_in_flight_across_upgrade(make_server, tmp_path):
    exe = binary_copy(str(tmp_path))
    s = make_server({"ftpd_banner": "old binary", "prefork_sessions": 4}, binary=exe)
    old = s.pid
    moving = TransfersInFlight(s)

    # A package upgrade replaces the file; the new listener must run it,
    # not the old image, and read the configuration again.
    install(exe, TWINFTPD)
    s.opts["ftpd_banner"] = "new binary"
    s.write_config()
    new = upgrade(s, old)
    assert new != old
    assert os.stat("/proc/%d/exe" % new).st_ino == os.stat(exe).st_ino
    with open("/proc/%d/cmdline" % new, "rb") as f:
        assert f.read().split(b"\0")[:2] == [exe.encode(), s.conf_path.encode()]
    # New connections reach the new listener only.
    for _ in range(4):
        assert "new binary" in banner(s)
    f = s.ftp("alice")
    assert listener_of(s, f.sock.getsockname()[1], {old, new}) == new
    f.quit()

    # The old listener stopped accepting but waits for its sessions.
    assert not gone(old)
    moving.finish()
    # Its last sessions ended: it exits 0; the new one serves on.
    assert s.proc.wait(timeout=30) == 0
    s.wait_log(r"the last session of this listener ended; pid %d serves on" % new, 10)
    f = s.ftp("anonymous")
    assert [n.rsplit("/", 1)[-1] for n in f.nlst("pub")] == ["readme.txt"]
    f.quit()
    stop_successor(s, new)


def test_burst_across_upgrade_all_served(make_server, tmp_path):
    exe = binary_copy(str(tmp_path))
    s = make_server({"max_per_ip": 0, "prefork_sessions": 8, "ftpd_banner": "b0"},
                    binary=exe)
    old = s.pid
    burst = BannerBurst(s.port)
    try:
        burst.wait_for(0)
        s.opts["ftpd_banner"] = "b1"
        s.write_config()
        new = upgrade(s, old)
        # Sessions of the new listener, and none refused meanwhile.
        burst.wait_for(1, count=6, timeout=60)
    finally:
        burst.stop()
    assert set(burst.results) == {0, 1}, set(burst.results)
    assert "refused connection" not in s.log_text()
    assert s.proc.wait(timeout=30) == 0
    stop_successor(s, new)


def test_failed_new_binary_keeps_old_listener(make_server, tmp_path):
    exe = binary_copy(str(tmp_path))
    s = make_server({"prefork_sessions": 2}, binary=exe)
    old = s.pid
    f = s.ftp("alice")

    # A binary that exits at once.
    install_script(exe, "#!/bin/sh\nexit 1\n")
    os.kill(old, signal.SIGUSR2)
    s.wait_log(r"upgrade failed, this listener keeps serving: new listener pid \d+ "
               r"exited with status 1 before it was ready", 30)
    assert f.pwd() == "/"
    g = s.ftp("bob")
    assert listener_of(s, g.sock.getsockname()[1], {old}) == old
    g.quit()

    # One that hangs: a second SIGUSR2 meanwhile is ignored, and its end
    # (before it said it was ready) is a failure too.
    install_script(exe, "#!/bin/sh\nexec sleep 300\n")
    started = re.compile(r"upgrade: \S+ started as pid (\d+); waiting")
    before = len(started.findall(s.log_text()))
    os.kill(old, signal.SIGUSR2)
    wait_until(lambda: len(started.findall(s.log_text())) > before, 30,
               what="the second attempt to start")
    hung = int(started.findall(s.log_text())[-1])
    os.kill(old, signal.SIGUSR2)
    s.wait_log(r"SIGUSR2 ignored: an upgrade is in progress \(new listener pid %d" % hung, 30)
    os.kill(hung, signal.SIGKILL)
    s.wait_log(r"new listener pid %d killed by signal 9 before it was ready" % hung, 30)
    assert f.pwd() == "/"
    assert s.proc.poll() is None

    # The old listener's helper still works: a good binary now takes over.
    install(exe, TWINFTPD)
    new = upgrade(s, old)
    assert f.pwd() == "/"
    f.quit()
    assert s.proc.wait(timeout=30) == 0
    g = s.ftp("bob")
    assert listener_of(s, g.sock.getsockname()[1], {old, new}) == new
    g.quit()
    stop_successor(s, new)


def test_upgrade_under_service_manager(make_server, tmp_path):
    """As systemd runs it: the sockets come from the service manager
    (LISTEN_FDS, IPv4 and IPv6) and readiness goes to NOTIFY_SOCKET. The
    new listener takes both sockets over and reports READY=1 with its own
    MAINPID; the old one sends nothing more (no STOPPING=1 as it exits)."""
    exe = binary_copy(str(tmp_path))
    s = make_server({"listen_port": free_ports(1)[0]}, start=False, binary=exe)
    ns = NotifySocket(os.path.join(s.base, "notify.sock"))
    try:
        s.env_extra["NOTIFY_SOCKET"] = ns.path
        socket_activated(s)
        s.start()
        f = s.ftp("alice")
        m = ns.next()
        assert m.get("READY") == "1" and m.get("MAINPID") == str(s.pid), m
        new = upgrade(s, s.pid)
        m = ns.next()
        assert m.get("READY") == "1" and m.get("MAINPID") == str(new), m
        s.wait_log(r"listening on 2 sockets handed over by the listener before the upgrade")
        f.quit()
        assert s.proc.wait(timeout=30) == 0
        g = s.ftp("bob")
        assert listener_of(s, g.sock.getsockname()[1], {new}) == new
        g.quit()
        g6 = ftplib.FTP(timeout=15)
        g6.connect("::1", s.port)
        g6.login("alice", PASSWORDS["alice"])
        assert g6.pwd() == "/"
        g6.quit()
        stop_successor(s, new)
        m = ns.next()
        assert m.get("STOPPING") == "1", m
    finally:
        ns.close()
