"""The process model, read from /proc: listener -> monitor (root) -> worker (user)."""

import os
import signal
import socket

import pytest

from twhelpers import (SHARED_GID, USERS, alive, children, open_data, proc_groups, proc_ids,
                       proc_link, proc_stat, proc_status, spare_of, stop_process, wait_until,
                       workers)


def _session(server, c, want_uid, timeout=10):
    """Wait until the session of control connection c has one worker running
    as want_uid; return (monitor, worker)."""
    port = c.sock.getsockname()[1]

    def probe():
        mon = server.session_of(port)
        kids = workers(mon)
        if len(kids) != 1:
            return None
        if proc_ids(kids[0], "Uid") != [want_uid] * 4:
            return None
        return mon, kids[0]
    return wait_until(probe, timeout, what="session with one worker of uid %d (tree: %s)"
                      % (want_uid, _tree(server)))


def _tree(server):
    out = []
    for m in server.sessions():
        out.append((m, proc_ids(m, "Uid"), [(k, proc_ids(k, "Uid")) for k in children(m)]))
    return out


def _all_session_procs(monitor):
    out, frontier = [], [monitor]
    while frontier:
        p = frontier.pop()
        out.append(p)
        frontier += children(p)
    return out


def _assert_root(pid):
    assert proc_ids(pid, "Uid") == [0, 0, 0, 0], proc_status(pid)


def _assert_monitor_after_login(mon, uid, server):
    """After login the monitor is root (the issue's model) or has dropped
    root for good: the session's uid, no capabilities, no_new_privs, and
    chrooted to secure_chroot_dir (DESIGN's cut-down monitor)."""
    st = proc_status(mon)
    if proc_ids(mon, "Uid") == [0, 0, 0, 0]:
        return
    assert proc_ids(mon, "Uid") == [uid] * 4, st
    # CAP_NET_BIND_SERVICE (bit 10) at most, and only for connect_from_port_20.
    assert int(st["CapEff"], 16) & ~(1 << 10) == 0, st
    assert int(st["CapPrm"], 16) & ~(1 << 10) == 0, st
    assert st.get("NoNewPrivs") == "1", st
    assert proc_link(mon, "root") == server.empty, proc_link(mon, "root")


def _assert_unprivileged(pid, uid, gid):
    st = proc_status(pid)
    assert proc_ids(pid, "Uid") == [uid] * 4, st
    assert proc_ids(pid, "Gid") == [gid] * 4, st
    assert int(st["CapEff"], 16) == 0 and int(st["CapPrm"], 16) == 0, st
    assert 0 not in proc_groups(pid), st


def test_prelogin_worker_is_nopriv_in_secure_chroot(server):
    with server.ctrl() as c:
        mon, worker = _session(server, c, USERS["twnopriv"])
        _assert_root(mon)
        _assert_unprivileged(worker, USERS["twnopriv"], USERS["twnopriv"])
        assert proc_link(worker, "root") == server.empty
        assert proc_groups(worker) in ([], [USERS["twnopriv"]])
        # The listener and the monitor never run as anything but root.
        _assert_root(server.pid)
        # Still the same after USER (no login yet).
        assert c.cmd("USER alice")[0] == 331
        assert _session(server, c, USERS["twnopriv"]) == (mon, worker)


def _socket_fds(pid):
    out = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:"):
                out.append(int(fd))
        except OSError:
            pass
    return out


def test_spare_becomes_the_postlogin_worker(server):
    """Before the login the session's post-login worker already exists as
    a spare: root like the monitor (with its cut capabilities, no_new_privs
    and seccomp), holding nothing but its IPC socket, never the client's
    connection. The login hands it over: the same process becomes the
    user, and no process is forked for it."""
    with server.ctrl() as c:
        mon, prelogin = _session(server, c, USERS["twnopriv"])
        spare = spare_of(mon)
        assert spare is not None, _tree(server)
        _assert_root(spare)
        st = proc_status(spare)
        assert st.get("NoNewPrivs") == "1", st
        assert st.get("Seccomp") == "2", st
        assert int(st["CapBnd"], 16) == int(proc_status(mon)["CapBnd"], 16), st
        # Its one socket is the IPC channel, not the control connection
        # the monitor and the pre-login worker hold (a pair forked just
        # now may still be closing what the fork gave it).
        wait_until(lambda: len(_socket_fds(spare)) == 1, 10,
                   what="the spare's one socket: %s" % os.listdir("/proc/%d/fd" % spare))
        def inodes(pid):
            return {os.readlink("/proc/%d/fd/%d" % (pid, fd)) for fd in _socket_fds(pid)}
        assert not inodes(spare) & inodes(prelogin), (inodes(spare), inodes(prelogin))
        c.login("alice", "alice-pw")
        m2, worker = _session(server, c, USERS["alice"])
        assert m2 == mon and worker == spare
        assert spare_of(mon) is None
        assert c.cmd("PWD")[0] == 257


def test_postlogin_worker_is_user_in_chroot(server):
    with server.ctrl() as c:
        mon0, prelogin = _session(server, c, USERS["twnopriv"])
        c.login("alice", "alice-pw")
        mon, worker = _session(server, c, USERS["alice"])
        assert mon == mon0
        assert worker != prelogin
        wait_until(lambda: proc_ids(prelogin, "Uid") is None or
                   proc_status(prelogin)["State"].startswith("Z"),
                   5, what="pre-login worker to exit")
        _assert_monitor_after_login(mon, USERS["alice"], server)
        _assert_unprivileged(worker, USERS["alice"], USERS["alice"])
        # Supplementary groups from the group file.
        assert SHARED_GID in proc_groups(worker), proc_status(worker)
        assert proc_link(worker, "root") == server.home("alice")
        # Only the monitor may be root among the session's processes.
        procs = _all_session_procs(mon)
        roots = [p for p in procs if 0 in (proc_ids(p, "Uid") or [1])]
        assert roots in ([], [mon]), [(p, proc_ids(p, "Uid")) for p in procs]
        # The worker still serves: it is the process holding the session.
        assert c.cmd("NOOP")[0] == 200


def test_pam_child_is_reaped_before_the_login_is_answered(server):
    """A local login's PAM child answers with one record and exits; the
    monitor reaps it before it acts on the answer, so no root process
    that ran PAM is left, running or dead, beside the refused session or
    the user's worker."""
    with server.ctrl() as c:
        mon, prelogin = _session(server, c, USERS["twnopriv"])
        spare = spare_of(mon)
        before = children(mon, zombies=True)
        assert before == sorted([prelogin, spare]), before
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS wrong-pw")[0] == 530
        assert children(mon, zombies=True) == before, children(mon, zombies=True)
        assert children(mon) == before, children(mon)  # none of them a zombie
        c.login("alice", "alice-pw")
        # The 230 comes from the spare once the monitor has reaped the
        # PAM child and then the pre-login worker.
        assert children(mon, zombies=True) == [spare], children(mon, zombies=True)
        m2, worker = _session(server, c, USERS["alice"])
        assert (m2, worker) == (mon, spare)
        assert c.cmd("NOOP")[0] == 200


def _pam_child_ahead(mon, base):
    """The root child a local user's USER forked beside base (the pre-login
    worker, the spare, and any child that is to be gone), once there is
    exactly one."""
    def probe():
        extra = [p for p in children(mon) if p not in base]
        return extra if len(extra) == 1 else None
    pid = wait_until(probe, 10, what="the PAM child forked at USER (children %s)"
                     % children(mon, zombies=True))[0]
    _assert_root(pid)
    return pid


def test_pam_child_forked_at_user_holds_nothing_of_the_session(server):
    """A local user's USER forks the session's PAM child before PASS (it
    looks the user up and starts PAM while the password is on its way):
    a root child of the monitor whose one socket is its own channel, not
    the client's connection. Another name's USER replaces it, the same
    USER again keeps it, and PASS is answered through it: while it is
    stopped, no 230 comes. After the 230 the spare is the monitor's only
    child. More USERs than max_login_fails (3) do not end the session."""
    with server.ctrl() as c:
        mon, prelogin = _session(server, c, USERS["twnopriv"])
        spare = spare_of(mon)
        base = [prelogin, spare]
        assert c.cmd("USER alice")[0] == 331
        first = _pam_child_ahead(mon, base)
        wait_until(lambda: len(_socket_fds(first)) == 1, 10,
                   what="the PAM child's one socket: %s" % os.listdir("/proc/%d/fd" % first))
        held = {p for pids in server.connections().values() for p in pids}
        assert first not in held and mon in held, held
        assert c.cmd("USER bob")[0] == 331
        second = _pam_child_ahead(mon, base + [first])
        # Killed and reaped: not even a zombie.
        wait_until(lambda: first not in children(mon, zombies=True) or None, 10,
                   what="the first PAM child reaped (%s)" % children(mon, zombies=True))
        for _ in range(4):
            assert c.cmd("USER bob")[0] == 331
        assert c.cmd("NOOP")[0] == 200
        assert sorted(children(mon, zombies=True)) == sorted(base + [second])
        stop_process(second)
        try:
            c.send(b"PASS bob-pw\r\n")
            c.sock.settimeout(1.0)
            with pytest.raises(socket.timeout):
                c.readline()
        finally:
            os.kill(second, signal.SIGCONT)
        c.sock.settimeout(10)
        assert c.reply()[0] == 230
        m2, worker = _session(server, c, USERS["bob"])
        assert (m2, worker) == (mon, spare)
        assert children(mon, zombies=True) == [spare], children(mon, zombies=True)
        assert c.cmd("NOOP")[0] == 200


def test_pam_child_forked_at_user_ends_with_the_session(server):
    """Whoever leaves between USER and PASS (QUIT, or a hang-up) takes the
    waiting PAM child along; so does an anonymous USER after a local one,
    before its PASS (the worker tells the monitor of that USER too)."""
    for leave in ("QUIT", "hangup"):
        with server.ctrl() as c:
            mon, prelogin = _session(server, c, USERS["twnopriv"])
            base = sorted([prelogin, spare_of(mon)])
            assert c.cmd("USER alice")[0] == 331
            child = _pam_child_ahead(mon, base)
            start = proc_stat(child)[2]
            if leave == "QUIT":
                assert c.cmd("QUIT")[0] == 221
            else:
                c.close()
            wait_until(lambda: not alive(child, start) or None, 10,
                       what="the PAM child %d gone after %s" % (child, leave))
            wait_until(lambda: proc_stat(mon) is None or None, 10,
                       what="the monitor %d gone after %s" % (mon, leave))
    with server.ctrl() as c:
        mon, prelogin = _session(server, c, USERS["twnopriv"])
        spare = spare_of(mon)
        assert c.cmd("USER alice")[0] == 331
        child = _pam_child_ahead(mon, sorted([prelogin, spare]))
        start = proc_stat(child)[2]
        assert c.cmd("USER anonymous")[0] == 331
        # Well within the child's own wait for a password (10 s).
        wait_until(lambda: not alive(child, start) or None, 8,
                   what="the PAM child %d gone at the anonymous USER" % child)
        wait_until(lambda: child not in children(mon, zombies=True) or None, 8,
                   what="the PAM child %d reaped (%s)" % (child, children(mon, zombies=True)))
        assert c.cmd("PASS a@b")[0] == 230
        assert children(mon, zombies=True) == [spare], children(mon, zombies=True)


def test_postlogin_worker_during_transfer(server):
    """Data connections are served by the user's worker, not by root."""
    with open(server.path("huge.bin"), "wb") as fh:
        fh.truncate(64 << 20)
    os.chown(server.path("huge.bin"), USERS["alice"], USERS["alice"])
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "RETR huge.bin")
    conn.recv(1000)
    mon = server.session_of(f.sock.getsockname()[1])
    procs = _all_session_procs(mon)
    roots = [p for p in procs if 0 in (proc_ids(p, "Uid") or [1])]
    assert roots in ([], [mon]), [(p, proc_ids(p, "Uid")) for p in procs]
    assert len(procs) >= 2
    conn.close()
    f.close()


def test_anonymous_worker(server):
    with server.ctrl() as c:
        c.login("anonymous", "x@example.org")
        mon, worker = _session(server, c, USERS["twftp"])
        _assert_monitor_after_login(mon, USERS["twftp"], server)
        _assert_unprivileged(worker, USERS["twftp"], USERS["twftp"])
        assert proc_link(worker, "root") == server.anon_root


def test_unchrooted_local_user(make_server):
    s = make_server({"chroot_local_user": False})
    with s.ctrl() as c:
        c.login("alice", "alice-pw")
        mon, worker = _session(s, c, USERS["alice"])
        _assert_unprivileged(worker, USERS["alice"], USERS["alice"])
        assert proc_link(worker, "root") == "/"
        assert proc_link(worker, "cwd") == s.home("alice")
        cd, lines = c.cmd("PWD")
        assert lines[0].startswith(b'257 "' + s.home("alice").encode() + b'"'), lines


def test_local_root(make_server):
    def prep(s):
        d = os.path.join(s.base, "lroot")
        os.mkdir(d, 0o755)
        with open(os.path.join(d, "marker.txt"), "w") as fh:
            fh.write("lroot")
        s.opts["local_root"] = d
        s.lroot = d
    s = make_server(prepare=prep)
    with s.ctrl() as c:
        c.login("alice", "alice-pw")
        mon, worker = _session(s, c, USERS["alice"])
        assert proc_link(worker, "root") == s.lroot
    f = s.ftp("alice")
    assert f.nlst() == ["marker.txt"]
    f.close()


def test_sessions_are_separate_processes(server):
    """Two users at once: two monitors, each with its own worker of its own uid."""
    a = server.ctrl()
    b = server.ctrl()
    try:
        a.login("alice", "alice-pw")
        b.login("bob", "bob-pw")

        def probe():
            mons = [server.session_of(x.sock.getsockname()[1]) for x in (a, b)]
            if len(set(mons)) != 2:
                return None
            uids = sorted(tuple(proc_ids(k, "Uid") or []) for m in mons for k in children(m))
            want = sorted([tuple([USERS["alice"]] * 4), tuple([USERS["bob"]] * 4)])
            return uids == want
        wait_until(probe, 10, what="two sessions (tree: %s)" % _tree(server))
        for x, user in ((a, "alice"), (b, "bob")):
            m = server.session_of(x.sock.getsockname()[1])
            _assert_monitor_after_login(m, USERS[user], server)
    finally:
        a.close()
        b.close()
