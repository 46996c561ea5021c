"""Real PAM (pam_unix) and real NSS with a user made by useradd, no wrappers."""

import os
import subprocess

import pytest

from twhelpers import (DEAD_PROCESS, USER_PROCESS, children, proc_ids, proc_link, proc_stat,
                       retr, session_holder, stor, utmp_records as records, wait_until)


@pytest.fixture
def unix_server(make_server, real_user):
    return make_server({
        "pam_service_name": real_user["service"],
        "nopriv_user": "nobody",
        "anonymous_enable": False,
    }, wrappers=False), real_user


def test_pam_unix_login_and_transfer(unix_server):
    s, u = unix_server
    with s.ctrl() as c:
        assert c.cmd("USER " + u["name"])[0] == 331
        cd, lines = c.cmd("PASS " + u["password"])
        assert cd == 230, lines
        cd, lines = c.cmd("PWD")
        assert lines[0].startswith(b'257 "/"'), lines

        def worker():
            for m in s.sessions():
                for k in children(m):
                    if proc_ids(k, "Uid") == [u["uid"]] * 4:
                        return k
        w = wait_until(worker, 10, what="worker running as the real user")
        assert proc_ids(w, "Gid") == [u["gid"]] * 4
        assert proc_link(w, "root") == u["home"]
    f = s.ftp(u["name"], u["password"])
    stor(f, "STOR real.txt", b"real pam\n")
    data, _, _ = retr(f, "RETR real.txt")
    assert data == b"real pam\n"
    st = os.stat(os.path.join(u["home"], "real.txt"))
    assert st.st_uid == u["uid"] and st.st_gid == u["gid"]
    f.close()
    s.wait_log(u["name"])


def test_pam_unix_bad_password(unix_server):
    s, u = unix_server
    with s.ctrl() as c:
        assert c.cmd("USER " + u["name"])[0] == 331
        assert c.cmd("PASS wrong-" + u["password"])[0] == 530
        assert c.cmd("USER " + u["name"])[0] == 331
        assert c.cmd("PASS " + u["password"])[0] == 230


def test_pam_faillock_writes_and_enforces_its_tally(make_server, real_user):
    """A PAM stack that writes files as the login is checked (RHEL's
    system-auth has pam_faillock): the tally is written and read by the
    pre-login monitor's PAM child, which has no CAP_DAC_OVERRIDE (root owns
    what PAM writes, so owner bits apply)."""
    u = real_user
    tally = os.path.join(u["base"], "faillock")
    os.mkdir(tally, 0o755)
    opts = "dir=%s deny=3 unlock_time=600" % tally
    with open("/etc/pam.d/" + u["service"], "w") as f:
        f.write("auth required pam_faillock.so preauth %s\n"
                "auth [success=1 default=bad] pam_unix.so\n"
                "auth [default=die] pam_faillock.so authfail %s\n"
                "auth sufficient pam_faillock.so authsucc %s\n"
                "account required pam_faillock.so %s\n"
                "account required pam_unix.so\n" % (opts, opts, opts, opts))
    s = make_server({"pam_service_name": u["service"], "nopriv_user": "nobody",
                     "anonymous_enable": False, "max_login_fails": 10,
                     "source_penalty_fails": 0}, wrappers=False)

    def failures():
        r = subprocess.run(["faillock", "--dir", tally, "--user", u["name"]],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        assert r.returncode == 0, r.stderr
        return [ln for ln in r.stdout.decode().splitlines() if ln.strip()[:1].isdigit()]

    # A good login passes the whole stack and leaves no failure.
    f = s.ftp(u["name"], u["password"])
    f.quit()
    assert failures() == []
    with s.ctrl() as c:
        for n in range(1, 4):
            assert c.cmd("USER " + u["name"])[0] == 331
            assert c.cmd("PASS wrong-" + u["password"])[0] == 530
            assert len(failures()) == n
        # Three in the tally: pam_faillock now refuses the right password.
        assert c.cmd("USER " + u["name"])[0] == 331
        assert c.cmd("PASS " + u["password"])[0] == 530
    # The faillock command (full root) gave the tally to the user, as
    # pam_faillock does with CAP_CHOWN; the later failures were still
    # written: the file is 0660 with group root.
    st = os.stat(os.path.join(tally, u["name"]))
    assert st.st_uid == u["uid"] and st.st_mode & 0o777 == 0o660, st


def test_pam_unix_root_and_system_users_refused(unix_server):
    """root has no password here; system accounts without one cannot log in."""
    s, u = unix_server
    for user in ("root", "nobody", "daemon"):
        with s.ctrl() as c:
            cd, _ = c.cmd("USER " + user)
            if cd == 331:
                cd, _ = c.cmd("PASS x")
            assert cd == 530, user


def test_session_support_with_the_shipped_pam_service(make_server, real_user):
    """session_support=YES with etc/twinftpd.pam as installed (Debian's
    common-session: pam_unix's session, pam_systemd where it is): the
    session stack runs in the PAM child under the monitor's policy, the
    login and logout reach utmp and wtmp (the test's files), and the child
    holding the session is gone after QUIT."""
    u = real_user
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "etc",
                           "twinftpd.pam")
    with open(shipped) as src, open("/etc/pam.d/" + u["service"], "w") as f:
        f.write(src.read())
    s = make_server({"pam_service_name": u["service"], "nopriv_user": "nobody",
                     "anonymous_enable": False, "session_support": True},
                    wrappers=False, start=False)
    utmp, wtmp = s.scratch_utmp()
    s.start()
    f = s.ftp(u["name"], u["password"])
    stor(f, "STOR s.txt", b"session\n")
    live = [r for r in records(utmp) if r[0] == USER_PROCESS]
    assert [(r[3], r[4]) for r in live] == [(u["name"], "127.0.0.1")], live
    line, monitor = live[0][2], live[0][1]
    held = session_holder(monitor)
    f.quit()
    wait_until(lambda: [r for r in records(wtmp) if r[0] == DEAD_PROCESS and r[2] == line],
               what="the logout record")
    assert [r[0] for r in records(utmp)] == [DEAD_PROCESS]
    wait_until(lambda: proc_stat(held) is None or proc_stat(held)[1] == "Z",
               what="the holding PAM child's exit")
    assert "killed by seccomp" not in s.log_text()
