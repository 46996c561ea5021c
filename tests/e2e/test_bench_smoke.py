"""A short smoke of both ftpbench modes against the real daemon (issue 5):
every suite figure completes, and robots stay alive. Seconds, not
minutes; counts are checked, timings are not."""

import os
import re
import subprocess

import twhelpers
from twhelpers import PASSWORDS, write_random

FTPBENCH = os.path.join(os.path.dirname(twhelpers.TWINFTPD), "bench", "ftpbench")


def _run(args, timeout=120):
    assert os.access(FTPBENCH, os.X_OK), "ftpbench not built: %s" % FTPBENCH
    try:
        r = subprocess.run([FTPBENCH] + args, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return -1, "TIMEOUT after %ss\n%s%s" % (timeout, e.stdout or "", e.stderr or "")
    return r.returncode, r.stdout + r.stderr


# The throughput figures fetch a file hundreds of times a second; each
# data connection leaves its server port in TIME_WAIT, so a 16-port pasv
# range would be recycled within the second and connections could meet
# their own TIME_WAIT ghosts. Let the kernel pick passive ports instead.
ANY_PASV_PORT = {"pasv_min_port": 0, "pasv_max_port": 0}


def test_suite_mode_all_figures(make_server):
    srv = make_server(dict(ANY_PASV_PORT, chroot_local_user=True))
    n = 5
    # The all-at-once login figure runs anonymously: simultaneous PAM
    # logins collide inside pam_wrapper (a limit of the test harness).
    rc, out = _run(["suite", "-h", twhelpers.HOST, "-P", str(srv.port), "-u", "alice",
                    "-p", PASSWORDS["alice"], "-n", str(n), "-s", "1M", "-b",
                    "stor,retr,login,stor-idle,retr-idle,multi-retr,multi-stor,"
                    "multi-stor-distinct,quit", "-k", str(srv.pid), "-t", "30"])
    assert rc == 0, out
    rc, out2 = _run(["suite", "-h", twhelpers.HOST, "-P", str(srv.port), "-u", "anonymous",
                     "-p", "smoke@example.org", "-n", str(n), "-b", "login-all", "-t", "30"])
    assert rc == 0, out2
    out += out2
    results = [l.split("\t") for l in out.splitlines() if l.startswith("RESULT\t")]
    names = {r[1] for r in results}
    for figure in ("STOR (client -> server)", "RETR (server -> client)",
                   "%d concurrent clients (connect, login)" % n,
                   "%d concurrent clients (connect, login, all at once)" % n,
                   "%d concurrent clients (RETR 1.0M file)" % n,
                   "%d concurrent clients (STOR 1.0M file)" % n,
                   "%d concurrent clients (QUIT)" % n):
        assert figure in names, (figure, sorted(names))
    assert all(r[-1] == "ok" for r in results), out
    # ftpbench deletes its files at the end: nothing is left in the home.
    assert not [f for f in os.listdir(srv.home("alice")) if f.startswith("ftpbench")]


def test_robots_mode_users_stay_alive(make_server):
    srv = make_server(dict(ANY_PASV_PORT, chroot_local_user=True))
    write_random(os.path.join(srv.home("alice"), "robot.dat"), 10 * 1024)
    os.chown(os.path.join(srv.home("alice"), "robot.dat"), twhelpers.USERS["alice"],
             twhelpers.USERS["alice"])
    rc, out = _run(["robots", "-h" + twhelpers.HOST, "-P%d" % srv.port, "-n8", "-c1", "-t3",
                    "-b20000", "-B1000", "-ualice", "-p" + PASSWORDS["alice"],
                    "-frobot.dat", "-m1500", "-j2"])
    assert rc == 0, out
    m = re.search(r"^users alive: (\d+)", out, re.M)
    assert m and int(m.group(1)) == 8, out
    fetched = re.search(r"^total bytes: (\d+) in (\d+) fetches", out, re.M)
    assert fetched and int(fetched.group(2)) > 0
    # Every finished fetch delivered the whole file (a robot checks the
    # size of each one); at most one fetch per robot was cut by the end.
    total, fetches = int(fetched.group(1)), int(fetched.group(2))
    assert fetches * 10 * 1024 <= total < (fetches + 8) * 10 * 1024, out
    assert "size 0" in out, out
