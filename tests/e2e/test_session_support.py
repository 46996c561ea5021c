"""session_support=YES (vsftpd's option): each local login opens a PAM
session and is written to utmp and wtmp, and the process that ran PAM
stays, as root, until the session ends, then closes the PAM session and
writes the logout. The PAM service here stacks the real pam_limits (its
maxlogins counts the utmp records whose process lives) on pam_matrix, so
a second concurrent login of the same user is refused only if the first
one's record is there, and admitted again only once its logout is
written. The records go to files of the test's own (TW_TEST_UTMP and
TW_TEST_WTMP, read by test builds only), never the machine's."""

import ftplib
import io
import os
import secrets
import signal
import subprocess

import pytest

from twhelpers import (DEAD_PROCESS, PASSWORDS, TWINFTPD, USER_PROCESS, UTMP, children,
                       proc_stat, session_holder, utmp_records as records, wait_until)


class Sessions:
    def __init__(self, make_server, session_lines, limits="alice - maxlogins 1\n"):
        self.srv = make_server({"session_support": True, "max_per_ip": 0}, start=False)
        self.utmp, self.wtmp = self.srv.scratch_utmp()
        limits_conf = os.path.join(self.srv.base, "limits.conf")
        with open(limits_conf, "w") as f:
            f.write(limits)
        with open(os.path.join(self.srv.pam_dir, self.srv.service), "a") as f:
            f.write(session_lines.format(limits=limits_conf))
        self.srv.start()

    def logged_in(self, user):
        """The USER_PROCESS record in utmp for user: (pid, line, host)."""
        live = [(r[1], r[2], r[4]) for r in records(self.utmp)
                if r[0] == USER_PROCESS and r[3] == user]
        assert len(live) <= 1, live
        return live[0] if live else None

    def logged_out(self, line):
        return [r for r in records(self.wtmp) if r[0] == DEAD_PROCESS and r[2] == line]


# utmp_early: the login's own record is written before the session opens
# (as vsftpd does), so pam_limits must not count it twice.
PAM_SESSION = "session required pam_limits.so conf={limits} utmp_early\n"


@pytest.mark.timeout(120)
def test_session_records_limits_and_holder(make_server):
    s = Sessions(make_server, PAM_SESSION)
    f1 = s.srv.ftp("alice")
    pid, line, host = s.logged_in("alice")
    # The record is the session's: its monitor's pid, alive, the listener's child.
    assert line == "ftpd:%d" % pid and host == "127.0.0.1", (pid, line, host)
    assert proc_stat(pid)[0] == s.srv.pid
    s.srv.wait_log(r"\[pid %d\] \[monitor\] OK LOGIN: Client \"127\.0\.0\.1\", user \"alice\""
                   % pid)
    assert [(r[0], r[2], r[3]) for r in records(s.wtmp)] == [(USER_PROCESS, line, "alice")]
    holder = session_holder(pid)
    # pam_limits saw that record: a second alice is refused, bob is not.
    with pytest.raises(ftplib.error_perm) as e:
        s.srv.ftp("alice")
    assert str(e.value).startswith("530"), e.value
    s.srv.wait_log(r"session_support: PAM service \S+ opened no session for user alice")
    fb = s.srv.ftp("bob")
    assert s.logged_in("bob") is not None
    # The refused login's record was written and undone: still one alice.
    assert s.logged_in("alice")[0] == pid
    fb.quit()
    f1.quit()
    # QUIT: the holder closes the session, writes the logout, and is reaped.
    wait_until(lambda: s.logged_out(line), what="the logout record of " + line)
    wait_until(lambda: s.logged_in("alice") is None, what="alice's utmp record to end")
    wait_until(lambda: proc_stat(holder) is None or proc_stat(holder)[1] == "Z",
               what="the holder's exit")
    # With the logout written, alice may log in again.
    f3 = s.srv.ftp("alice")
    assert f3.pwd() == "/"
    f3.quit()


@pytest.mark.timeout(120)
def test_session_refused_by_pam_refuses_login(make_server):
    s = Sessions(make_server, "session required pam_deny.so\n")
    f = ftplib.FTP(timeout=30)
    f.connect("127.0.0.1", s.srv.port)
    with pytest.raises(ftplib.error_perm) as e:
        f.login("alice", PASSWORDS["alice"])
    assert str(e.value).startswith("530"), e.value
    s.srv.wait_log(r"opened no session for user alice")
    # Written, then undone, as vsftpd does; nothing left logged in.
    assert s.logged_in("alice") is None
    types = [r[0] for r in records(s.wtmp)]
    assert types == [USER_PROCESS, DEAD_PROCESS], types
    f.close()


@pytest.mark.timeout(120)
def test_session_closed_when_monitor_killed(make_server):
    s = Sessions(make_server, PAM_SESSION)
    f = s.srv.ftp("alice")
    pid, line, _ = s.logged_in("alice")
    holder = session_holder(pid)
    # The holder ignores SIGTERM (a service stop ends the monitors) ...
    os.kill(holder, signal.SIGTERM)
    assert f.pwd() == "/"
    assert proc_stat(holder)[1] != "Z"
    assert s.logged_in("alice") is not None and not s.logged_out(line)
    # ... and a monitor gone for any reason is its cue to close.
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: s.logged_out(line), what="the logout record of " + line)
    wait_until(lambda: s.logged_in("alice") is None, what="alice's utmp record to end")
    wait_until(lambda: proc_stat(holder) is None or proc_stat(holder)[1] == "Z",
               what="the holder's exit")
    f.close()


@pytest.mark.timeout(120)
def test_session_limits_reach_the_worker(make_server):
    """pam_limits sets its limits on the process that opens the session
    (the PAM child); the worker takes them from the login record, as
    vsftpd's post-login process inherits them. A file size limit of 2 KB:
    a larger upload fails with 451 and the session goes on; bob, who has
    no limit, uploads the same."""
    s = Sessions(make_server, PAM_SESSION, limits="alice - fsize 2\n")
    # A wtmp already past the limit: the holding PAM child has the limit
    # too, and its logout's append fails (EFBIG: that record is lost, as
    # in vsftpd), which must not kill it (SIGXFSZ).
    with open(s.wtmp, "wb") as w:
        w.write(b"\0" * (UTMP.size * 8))
    f = s.srv.ftp("alice")
    pid = s.logged_in("alice")[0]
    worker = [p for p in children(pid) if p != session_holder(pid)]
    assert len(worker) == 1, worker
    with open("/proc/%d/limits" % worker[0]) as lim:
        line = [ln for ln in lim if ln.startswith("Max file size")][0]
    assert line.split()[3:5] == ["2048", "2048"], line
    f.storbinary("STOR small.bin", io.BytesIO(b"s" * 1000))
    # The server stops reading at the failed write and closes the data
    # connection: the client may see it reset before it has sent all.
    conn = f.transfercmd("STOR big.bin")
    try:
        conn.sendall(b"b" * 100000)
    except (ConnectionResetError, BrokenPipeError):
        pass
    conn.close()
    with pytest.raises(ftplib.error_temp) as e:
        f.voidresp()
    assert str(e.value).startswith("451"), e.value
    # The write failed at the limit, not for another reason.
    assert os.path.getsize(os.path.join(s.srv.home("alice"), "big.bin")) == 2048
    assert f.pwd() == "/"
    f.quit()
    wait_until(lambda: s.logged_in("alice") is None, what="alice's utmp record to end")
    s.srv.wait_sessions(0)
    s.srv.wait_listener_sessions(0)
    assert "died of signal" not in s.srv.log_text(), s.srv.log_text()
    fb = s.srv.ftp("bob")
    fb.storbinary("STOR big.bin", io.BytesIO(b"b" * 100000))
    assert fb.size("big.bin") == 100000
    fb.quit()


def test_default_keeps_no_records(make_server):
    srv = make_server({}, start=False)
    files = srv.scratch_utmp()
    srv.start()
    f = srv.ftp("alice")
    f.quit()
    srv.wait_log(r"OK LOGIN: Client \"127\.0\.0\.1\", user \"alice\"")
    assert [records(p) for p in files] == [[], []]


def test_check_notes_a_service_without_session_lines(tmp_path):
    """Linux-PAM opens no session for a service without session lines:
    with session_support every local login would be refused, and -t says
    why before the first one is."""
    service = "twe2e-nosess-" + secrets.token_hex(3)
    pam_file = "/etc/pam.d/" + service
    conf = tmp_path / "t.conf"
    os.chmod(str(tmp_path), 0o755)
    conf.write_text("listen=YES\nlocal_enable=YES\nsession_support=YES\nnopriv_user=nobody\n"
                    "pam_service_name=%s\nsecure_chroot_dir=%s\nlog_file=%s/log\n"
                    % (service, tmp_path, tmp_path))

    def check():
        r = subprocess.run([TWINFTPD, "-t", str(conf)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=20, stdin=subprocess.DEVNULL)
        return (r.stdout + r.stderr).decode()
    try:
        with open(pam_file, "w") as f:
            f.write("# no session here, though this comment says session\n"
                    "auth required pam_permit.so\naccount required pam_permit.so\n")
        out = check()
        assert "session_support=YES: PAM service file %s has no session line" % pam_file \
            in out, out
        with open(pam_file, "a") as f:
            f.write("session required pam_permit.so\n")
        assert "no session line" not in check()
    finally:
        os.unlink(pam_file)
