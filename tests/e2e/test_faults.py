"""Faults, as tests (issue 12, item 11): a SIGKILL of each session process
and of the listener, a full disk during an upload, a listener out of
descriptors, a flood of connections reset at once. Every other session
keeps working, no process outlives its session, and what a client was told
matches what is on disk."""

import ftplib
import os
import resource
import signal
import socket
import subprocess
import time

import pytest

import twhelpers
from twhelpers import (HOST, PASSWORDS, TIMEOUT, USERS, alive, code, descendants,
                       open_data, proc_ids, rc, recv_all, spare_of,
                       wait_until, workers)

LINGER_RST = b"\x01\x00\x00\x00\x00\x00\x00\x00"    # l_onoff=1, l_linger=0


def _session_of(s, c):
    """The monitor of a connection (Ctrl or ftplib.FTP)."""
    return s.session_of(c.sock.getsockname()[1])


def _procs(s, mon):
    return s.session_pids(mon)


def _wait_gone(procs, timeout=15):
    wait_until(lambda: not [p for p, t in procs if alive(p, t)], timeout,
               what="session processes %s to exit" % [p for p, _ in procs])


def _closed(c, timeout=15):
    """The control connection c (Ctrl) ends: a 421 and the close, or the
    close alone. Returns the codes it got before the end."""
    got = []
    c.sock.settimeout(timeout)
    try:
        while True:
            code_, _ = c.reply()
            got.append(code_)
    except (EOFError, ConnectionResetError, BrokenPipeError):
        return got


def _bystander_works(s, f):
    """The session that was there all along still serves a transfer."""
    data = os.urandom(50000)
    twhelpers.stor(f, "STOR bystander.bin", data)
    got, _, final = twhelpers.retr(f, "RETR bystander.bin")
    assert code(final) == 226 and got == data


def _logged_in_ctrl(s, user="alice"):
    c = s.ctrl()
    c.login(user, PASSWORDS[user])
    return c


def _postlogin_worker(s, mon, uid):
    return wait_until(lambda: (lambda k: k[0] if len(k) == 1 and
                               proc_ids(k[0], "Uid")[0] == uid else None)(workers(mon)),
                      10, what="the post-login worker of %d" % mon)


def _alice(s):
    """A logged-in session of alice: (ftplib.FTP, monitor, its processes, worker)."""
    f = s.ftp("alice")
    mon = _session_of(s, f)
    procs = _procs(s, mon)
    return f, mon, procs, _postlogin_worker(s, mon, USERS["alice"])


# ------------------------------------------------------------ SIGKILL

@pytest.fixture
def two(make_server):
    s = make_server({"prefork_sessions": 2, "prefork_max_sessions": 2})
    bystander = s.ftp("bob")
    yield s, bystander
    bystander.close()


def test_kill_prelogin_worker(two):
    s, by = two
    c = s.ctrl()
    mon = _session_of(s, c)
    procs = _procs(s, mon)
    w = wait_until(lambda: (lambda k: k[0] if k else None)(
        [k for k in workers(mon) if proc_ids(k, "Uid")[0] == USERS["twnopriv"]]),
        10, what="the pre-login worker")
    os.kill(w, signal.SIGKILL)
    # The monitor writes the last reply of a plain channel itself.
    assert _closed(c) == [421]
    c.close()
    _wait_gone(procs)
    _bystander_works(s, by)


def test_kill_spare(two):
    """The spare (root, waiting for a login) dies: it never touched the
    client, so the monitor forks another at the login and the session
    goes on; the dead one is reaped, not left behind."""
    s, by = two
    f = s.connect()
    mon = _session_of(s, f)
    spare = wait_until(lambda: spare_of(mon), 10, what="the spare")
    st = twhelpers.proc_stat(spare)
    os.kill(spare, signal.SIGKILL)
    f.login("alice", PASSWORDS["alice"])
    _bystander_works(s, f)
    procs = _procs(s, mon)
    assert spare not in [p for p, _ in procs]
    f.quit()
    _wait_gone(procs + [(spare, st[2])])
    _bystander_works(s, by)


def test_kill_prelogin_monitor(two):
    """The root monitor dies (here before the login; during PAM it is the
    same process): its workers follow it (PR_SET_PDEATHSIG), the client
    sees the close, the listener counts the session as crashed and goes on."""
    s, by = two
    c = s.ctrl()
    mon = _session_of(s, c)
    procs = _procs(s, mon)
    c.send(b"USER alice\r\n")
    assert c.reply()[0] == 331
    os.kill(mon, signal.SIGKILL)
    assert 230 not in _closed(c)
    c.close()
    _wait_gone(procs)
    _bystander_works(s, by)


def test_kill_postlogin_worker_mid_retr(two):
    s, by = two
    data = os.urandom(64 << 20)
    s.put("big.bin", data)
    f, _, procs, w = _alice(s)
    conn, _ = open_data(f, "RETR big.bin")
    conn.recv(65536)
    os.kill(w, signal.SIGKILL)
    got = recv_all(conn, tolerate_reset=True)
    conn.close()
    # The data stopped short, and the client was not told it was complete.
    assert len(got) + 65536 < len(data)
    with pytest.raises((ftplib.error_temp, EOFError, ConnectionResetError)):
        f.voidresp()
    f.close()
    _wait_gone(procs)
    assert s.read("big.bin") == data     # a download changes nothing on disk
    _bystander_works(s, by)


def test_kill_postlogin_worker_mid_stor(two):
    s, by = two
    f, _, procs, w = _alice(s)
    conn, _ = open_data(f, "STOR up.bin")
    conn.sendall(os.urandom(1 << 20))
    wait_until(lambda: os.path.exists(s.path("up.bin")) and
               os.path.getsize(s.path("up.bin")) > 0 or None, 10, what="the upload to start")
    os.kill(w, signal.SIGKILL)
    try:
        conn.sendall(os.urandom(1 << 20))
    except OSError:
        pass
    conn.close()
    # No 226: an upload the server did not finish is never reported done.
    with pytest.raises((ftplib.error_temp, EOFError, ConnectionResetError)):
        f.voidresp()
    f.close()
    _wait_gone(procs)
    assert os.path.getsize(s.path("up.bin")) <= 2 << 20
    _bystander_works(s, by)


def test_kill_postlogin_monitor(two):
    s, by = two
    f, mon, procs, _ = _alice(s)
    os.kill(mon, signal.SIGKILL)
    # The worker dies with its monitor (PR_SET_PDEATHSIG): the client's
    # connection closes; no process of the session is left.
    _wait_gone(procs)
    with pytest.raises((EOFError, ConnectionResetError, BrokenPipeError, ftplib.error_temp)):
        f.sendcmd("NOOP")
    f.close()
    _bystander_works(s, by)


def test_kill_listener(make_server):
    """The listener dies: a logged-in session keeps serving its client to
    the end, ready pairs and sessions not logged in go with it, no process
    outlives its client, and a restart serves again."""
    s = make_server({"prefork_sessions": 2, "prefork_max_sessions": 2})
    f = s.ftp("alice")
    c = s.ctrl()
    procs = descendants(s.pid)
    assert len(procs) >= 4, procs
    os.kill(s.pid, signal.SIGKILL)
    s.proc.wait(timeout=10)
    s._out.close()
    s._err.close()
    s.proc = None           # nothing left for the fixture to stop
    _bystander_works(s, f)
    f.quit()
    c.close()
    _wait_gone(procs)
    s.start()
    g = s.ftp("alice")
    assert rc(g, "NOOP")[0] == 200
    g.quit()


# ------------------------------------------------------------ SIGSTOP

def _no_seccomp_death(s):
    assert "killed by seccomp" not in s.log_text(), s.log_text()


def test_paused_prelogin_session_and_listener_go_on(two):
    s, by = two
    c = s.ctrl()
    mon = _session_of(s, c)
    procs = _procs(s, mon)
    assert len(procs) == 3, procs       # monitor, pre-login worker, spare
    twhelpers.pause_processes([s.pid] + [p for p, _ in procs])
    c.login("alice", PASSWORDS["alice"])
    assert c.cmd("NOOP")[0] == 200
    assert alive(*procs[0])             # the same monitor: no new session
    c.close()
    _wait_gone(procs)
    _no_seccomp_death(s)
    _bystander_works(s, by)


def test_paused_logged_in_session_goes_on(two):
    s, by = two
    f, mon, procs, w = _alice(s)
    twhelpers.pause_processes([p for p, _ in procs])
    _bystander_works(s, f)
    assert all(alive(p, t) for p, t in procs), procs
    f.quit()
    _wait_gone(procs)
    _no_seccomp_death(s)


# ------------------------------------------------------------ full disk

@pytest.fixture
def small_disk(make_server):
    s = make_server(start=False)
    d = s.path("small")
    os.mkdir(d)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", d],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 0, "cannot mount a tmpfs: %s" % r.stderr.decode()
    try:
        os.chown(d, USERS["alice"], USERS["alice"])
        s.start()
        yield s
    finally:
        subprocess.run(["umount", "-l", d])


@pytest.mark.parametrize("cmd", ["STOR", "APPE"])
def test_full_disk_is_never_226(small_disk, cmd):
    s = small_disk
    if cmd == "APPE":
        s.put("small/a.bin", b"a" * 1000)
        os.chown(s.path("small/a.bin"), USERS["alice"], USERS["alice"])
    f = s.ftp("alice")
    f.cwd("small")
    conn, _ = open_data(f, "%s a.bin" % cmd)
    try:
        conn.sendall(os.urandom(3 << 20))
    except OSError:
        pass            # the server stopped reading: the disk is full
    conn.close()
    with pytest.raises(ftplib.error_temp) as e:
        f.voidresp()
    assert str(e.value)[:3] in ("451", "452"), str(e.value)
    # The session goes on, and a file that fits is stored whole.
    os.unlink(s.path("small/a.bin"))
    data = os.urandom(100000)
    twhelpers.stor(f, "STOR fits.bin", data)
    assert s.read("small/fits.bin") == data
    f.quit()


# ------------------------------------------------------------ descriptors

def test_listener_out_of_descriptors_recovers(make_server):
    """A listener at its descriptor limit (accept: EMFILE) keeps running
    and serves again once the flood is gone."""
    s = make_server({"prefork_sessions": 0, "max_per_ip": 0, "max_clients": 0})
    f = s.ftp("alice")
    f.quit()
    s.wait_sessions(0)
    fds = len(os.listdir("/proc/%d/fd" % s.pid))
    old = resource.prlimit(s.pid, resource.RLIMIT_NOFILE)
    resource.prlimit(s.pid, resource.RLIMIT_NOFILE, (fds + 8, old[1]))
    flood = []
    try:
        for _ in range(40):
            c = socket.create_connection((HOST, s.port), TIMEOUT)
            flood.append(c)
        # Some got sessions, the rest wait in the backlog or were refused:
        # the listener is alive either way.
        time.sleep(0.5)
        assert s.proc.poll() is None, "listener died at EMFILE"
    finally:
        for c in flood:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RST)
            c.close()
        resource.prlimit(s.pid, resource.RLIMIT_NOFILE, old)
    s.wait_sessions(0, timeout=30)

    def serves():
        try:
            g = s.ftp("alice")
        except (OSError, EOFError, ftplib.Error):
            return None
        g.quit()
        return True
    wait_until(serves, 30, what="a login after the flood")


def _reset_flood(port, n):
    for _ in range(n):
        c = socket.socket()
        c.settimeout(TIMEOUT)
        c.connect((HOST, port))
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RST)
        c.close()


@pytest.mark.timeout(900)
def test_connect_and_reset_flood_leaks_nothing(make_server):
    pool = 4
    s = make_server({"prefork_sessions": pool, "prefork_max_sessions": pool,
                     "max_per_ip": 0, "max_clients": 0, "xferlog_enable": False})

    # Warm-up: one-time allocations behind us.
    _reset_flood(s.port, 200)
    s.wait_settled(pool, 60)
    fds0, rss0 = s.fd_table(), s.rss_kb()
    _reset_flood(s.port, 10000)
    assert s.proc.poll() is None
    # 10,000 sessions (issue 12's figure) forked and ended: minutes under
    # ASan on a loaded machine. Then exact for descriptors, and a little
    # slack for the heap.
    s.check_no_leaks(pool, fds0, rss0, 512)
    f = s.ftp("alice")
    assert rc(f, "NOOP")[0] == 200
    f.quit()
