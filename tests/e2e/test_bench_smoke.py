"""A short smoke of both ftpbench modes against the real daemon (issue 5):
every suite figure completes, and robots stay alive; and the same over
FTPS (issue 11), with every data connection resuming the control
session. Seconds, not minutes; counts are checked, timings are not."""

import ftplib
import io
import os
import re
import signal
import subprocess

import pytest

import twhelpers
from twhelpers import PASSWORDS, Ctrl, write_random

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
    # logins collide inside pam_wrapper under TW_E2E_PAM=wrapper (a limit
    # of that harness).
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
    # One login at a time (pam_wrapper), each 0.1-0.4 s under ASan on a
    # busy machine: 8 s leaves room for all eight.
    rc, out = _run(["robots", "-h" + twhelpers.HOST, "-P%d" % srv.port, "-n8", "-c1", "-t8",
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


def _tls_world(srv):
    """A self-signed P-256 certificate and key in one PEM, as bench/compare
    makes, and the options that turn FTPS on and require it."""
    pem = os.path.join(srv.etc, "server.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", pem + ".key",
                    "-out", pem + ".crt", "-days", "2", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    with open(pem, "wb") as f:
        for part in (".crt", ".key"):
            with open(pem + part, "rb") as g:
                f.write(g.read())
            os.unlink(pem + part)
    os.chmod(pem, 0o600)
    srv.opts.update(ssl_enable=True, rsa_cert_file=pem, require_ssl_reuse=True,
                    force_local_logins_ssl=True, force_local_data_ssl=True)


def _skip_unless_auth_tls(srv):
    """Skips only while the server answers AUTH TLS with 502 (FTPS not
    built yet); any other answer but 234 fails."""
    with Ctrl(srv.port) as c:
        assert c.reply()[0] == 220
        code, lines = c.cmd("AUTH TLS")
    if code == 502:
        pytest.skip("twinftpd answers AUTH TLS with 502: the server side of"
                    " FTPS (issue 11) is not built yet")
    assert code == 234, lines


def _tls_counts(out):
    """(data connections, resumed, ended without close_notify) over the run."""
    m = re.search(r"^TLS\t(TLSv1\.[23])\t\S+\t(\d+)\t(\d+)\t(\d+)$", out, re.M)
    if m:
        return int(m.group(2)), int(m.group(3)), int(m.group(4))
    m = re.search(r"^tls: (\d+) data connections, (\d+) resumed the control"
                  r" session, (\d+) ended without close_notify$", out, re.M)
    assert m, out
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def test_suite_and_robots_over_ftps(make_server):
    srv = make_server(dict(ANY_PASV_PORT, chroot_local_user=True), prepare=_tls_world)
    _skip_unless_auth_tls(srv)
    n = 4
    rc, out = _run(["suite", "-E", "-h", twhelpers.HOST, "-P", str(srv.port), "-u",
                    "alice", "-p", PASSWORDS["alice"], "-n", str(n), "-s", "1M", "-b",
                    "stor,retr,login,multi-retr,multi-stor,quit", "-k", str(srv.pid),
                    "-t", "30"])
    assert rc == 0, out
    results = [l.split("\t") for l in out.splitlines() if l.startswith("RESULT\t")]
    assert len(results) == 6 and all(r[-1] == "ok" for r in results), out
    conns, resumed, unclean = _tls_counts(out)
    # require_ssl_reuse=YES: a data connection that did not resume would
    # have failed its transfer; the client saw every one resume.
    assert conns > n and resumed == conns and unclean == 0, out

    write_random(os.path.join(srv.home("alice"), "robot.dat"), 10 * 1024)
    os.chown(os.path.join(srv.home("alice"), "robot.dat"), twhelpers.USERS["alice"],
             twhelpers.USERS["alice"])
    rc, out = _run(["robots", "-E", "-h" + twhelpers.HOST, "-P%d" % srv.port, "-n6",
                    "-c1", "-t3", "-b20000", "-B1000", "-ualice",
                    "-p" + PASSWORDS["alice"], "-frobot.dat", "-m1500", "-j2"])
    assert rc == 0, out
    assert re.search(r"^users alive: 6$", out, re.M), out
    conns, resumed, unclean = _tls_counts(out)
    assert conns >= 6 and resumed == conns and unclean == 0, out


def test_suite_over_implicit_ftps(make_server):
    """-I: TLS from the first byte (implicit_ssl=YES), then PBSZ, PROT, USER."""
    def implicit(srv):
        _tls_world(srv)
        srv.opts["implicit_ssl"] = True
    srv = make_server(dict(ANY_PASV_PORT, chroot_local_user=True), prepare=implicit)
    rc, out = _run(["suite", "-I", "-h", twhelpers.HOST, "-P", str(srv.port), "-u",
                    "alice", "-p", PASSWORDS["alice"], "-n", "2", "-s", "1M", "-b",
                    "retr,login,quit", "-t", "30"])
    assert rc == 0, out
    conns, resumed, unclean = _tls_counts(out)
    assert conns > 2 and resumed == conns and unclean == 0, out
    # The same server refuses a client that speaks clear FTP first.
    rc, out = _run(["suite", "-h", twhelpers.HOST, "-P", str(srv.port), "-u", "alice",
                    "-p", PASSWORDS["alice"], "-n", "1", "-b", "login", "-t", "10"])
    assert rc != 0 and "FAIL" in out, out


RAWLIMIT = os.path.join(os.path.dirname(twhelpers.TWINFTPD), "bench", "rawlimit")


def test_rawlimit_every_variant(tmp_path):
    """bench/rawlimit, the limit bench/compare puts beside the one-stream
    figures: every variant moves its bytes (it exits 2 on a short
    transfer) and prints a rate; the 1 s upload mode too."""
    assert os.access(RAWLIMIT, os.X_OK), "rawlimit not built: %s" % RAWLIMIT
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(1 << 20))
    out = ""
    for args in (["retr", str(src), "-r", "1"], ["stor", str(tmp_path), "1M", "-r", "1"],
                 ["stor", str(tmp_path), "0.2s", "-r", "1"]):
        r = subprocess.run([RAWLIMIT] + args, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        out += r.stdout
    got = re.findall(r"^RAW (\S+) (\S+) ([0-9.]+) MB/s$", out, re.M)
    assert sorted((k, v) for k, v, _ in got) == sorted(
        [("retr", x) for x in ("sendfile", "sendfile+nodelay", "sendfile+cork",
                               "sendfile+cork+lowat", "sendfile+cork+lowat+nonblock")] +
        [(k, x) for k in ("stor", "stor-0.2s") for x in ("recv+write", "splice",
                                                          "splice+zc-sender")]), out
    assert all(float(rate) > 0 for _, _, rate in got), out
    assert sorted(os.listdir(tmp_path)) == ["src.bin"], "rawlimit left files behind"


def test_rawlimit_n_at_once(tmp_path):
    """rawlimit mretr and mstor, the limit under the suite's N-at-once
    figures: N server processes each move the whole file (a short one
    exits 2, and the client checks every connection's byte count), every
    variant prints seconds, and every file written is removed."""
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(1 << 20))
    out = ""
    for args in (["mretr", str(src), "7", "-r", "2"],
                 ["mstor", str(tmp_path), "1M", "7", "-w", "0"]):
        r = subprocess.run([RAWLIMIT] + args, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        out += r.stdout
    got = re.findall(r"^RAW (\S+) (\S+) ([0-9.]+) secs$", out, re.M)
    assert sorted((k, v) for k, v, _ in got) == sorted(
        [("mretr-7", "sendfile"), ("mretr-7", "sendfile+cork+lowat+nonblock")] +
        [("mstor-7-" + f, v) for f in ("one", "distinct") for v in ("recv+write", "splice")] +
        [("mstor-7-distinct-cold", "splice")]), out
    assert all(float(t) > 0 for _, _, t in got), out
    assert sorted(os.listdir(tmp_path)) == ["src.bin"], "rawlimit left files behind"
    # An N outside 1..2000, or a wait for mretr, is refused before any
    # process is forked.
    for args in (["mretr", str(src), "0"], ["mretr", str(src), "2001"],
                 ["mretr", str(src), "7", "-w", "1"], ["mstor", str(tmp_path), "1M", "7", "-w"]):
        r = subprocess.run([RAWLIMIT] + args, capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and "usage" in r.stderr, r.stdout + r.stderr
    # A server process that fails (no such directory) fails the run, whose
    # other processes do not outlive it.
    r = subprocess.run([RAWLIMIT, "mstor", str(tmp_path / "none"), "1M", "3"],
                       capture_output=True, text=True, timeout=150)
    assert r.returncode == 2 and "failed before the run" in r.stderr, r.stdout + r.stderr


RAWSESS = os.path.join(os.path.dirname(twhelpers.TWINFTPD), "bench", "rawsess")


def _rawsess_pids():
    """Processes running the rawsess binary (its sessions included)."""
    exe = os.path.realpath(RAWSESS)
    return [p for p in twhelpers.all_pids() if twhelpers.proc_link(p, "exe") == exe]


def test_rawsess_every_server():
    """bench/rawsess, the process-per-session floor bench/compare puts
    beside the login and QUIT figures: every server answers every login
    and every QUIT (it exits 2 otherwise; privsep-3-processes's 230 comes
    from a process other than its 331's), prints both figures, and no
    session's process outlives the run."""
    assert os.access(RAWSESS, os.X_OK), "rawsess not built: %s" % RAWSESS
    r = subprocess.run([RAWSESS, "20", "-r", "2"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    got = re.findall(r"^RAW (login|quit) (\S+) ([0-9.]+) s$", r.stdout, re.M)
    assert sorted((f, v) for f, v, _ in got) == sorted(
        (f, v) for f in ("login", "quit") for v in (
            "one-process", "process-per-session", "process-per-session+idle-exit",
            "process-per-session+late-exit", "privsep-3-processes")), r.stdout
    assert all(float(t) > 0 for _, _, t in got), r.stdout
    # The last sessions exit at SCHED_IDLE: on a busy machine that waits.
    twhelpers.wait_until(lambda: not _rawsess_pids(), timeout=10.0,
                         what="rawsess's processes to end (none left behind)")
    bad = subprocess.run([RAWSESS, "0"], capture_output=True, text=True, timeout=10)
    assert bad.returncode == 2 and "usage" in bad.stderr


@pytest.mark.parametrize("server", ["process-per-session", "privsep-3-processes",
                                    "privsep-3-processes+worker-pasv"])
def test_rawsess_serves_the_robots(tmp_path, server):
    """`rawsess serve`, the floor bench/robotsn --floor and bench/ab's
    floor: put beside the servers: it answers SIZE, RETR, STOR and DELE
    of its directory's files (the privsep-3 worker's PASV sockets from its
    monitor, or its own), refuses a name outside it, keeps robots alive
    with whole fetches, and no session's process outlives the server."""
    data = os.urandom(10 * 1024)
    (tmp_path / "robot.dat").write_bytes(data)
    (tmp_path / "sub").mkdir()
    port = twhelpers.free_ports(1)[0]
    # Not pipes: every session inherits them, and a wait for their end
    # would wait for the sessions'.
    err = open(tmp_path / "rawsess.err", "wb")
    p = subprocess.Popen([RAWSESS, "serve", server, str(port), str(tmp_path)],
                         stdout=subprocess.DEVNULL, stderr=err)
    try:
        twhelpers.wait_until(lambda: twhelpers.port_listening(port), 10,
                             what="rawsess serve to listen")
        f = ftplib.FTP()
        f.connect(twhelpers.HOST, port, timeout=10)
        f.login("anonymous", "a@b")
        f.voidcmd("TYPE I")
        assert f.size("robot.dat") == len(data)
        for _ in range(3):      # a PASV socket each time
            got = []
            f.retrbinary("RETR robot.dat", got.append)
            assert b"".join(got) == data
        for name in ("sub/../robot.dat", "../robot.dat", ".", "sub", "none"):
            with pytest.raises(ftplib.error_perm, match="^550"):
                f.retrbinary("RETR " + name, lambda b: None)
        # STOR (spliced) of a file of several pipes, "/" as the root, then DELE.
        up = os.urandom(600 * 1024 + 7)
        f.storbinary("STOR /up.dat", io.BytesIO(up))
        assert (tmp_path / "up.dat").read_bytes() == up
        with pytest.raises(ftplib.error_perm, match="^553"):
            f.storbinary("STOR sub/up.dat", io.BytesIO(b"x"))
        assert f.delete("up.dat").startswith("250")
        assert not (tmp_path / "up.dat").exists()
        with pytest.raises(ftplib.error_perm, match="^550"):
            f.delete("../robot.dat")
        f.quit()
        rc, out = _run(["robots", "-h" + twhelpers.HOST, "-P%d" % port, "-n6", "-c2", "-t3",
                        "-b20000", "-B1000", "-uanonymous", "-pa@b", "-frobot.dat",
                        "-m1500"])
        assert rc == 0, out
        m = re.search(r"^users alive: (\d+)", out, re.M)
        assert m and int(m.group(1)) == 6, out
        fetched = re.search(r"^total bytes: (\d+) in (\d+) fetches", out, re.M)
        assert fetched, out
        total, fetches = int(fetched.group(1)), int(fetched.group(2))
        assert fetches > 0 and fetches * len(data) <= total < (fetches + 6) * len(data), out
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        err.close()
    # The sessions end with their clients, the spares with the listener.
    twhelpers.wait_until(lambda: not _rawsess_pids(), timeout=10.0,
                         what="rawsess's processes to end (none left behind)")


PAMAUTH = os.path.join(os.path.dirname(twhelpers.TWINFTPD), "bench", "pamauth")


def test_pam_floor_and_pamauth(real_user):
    """The PAM floor of bench/ab --pam: `rawsess serve
    privsep-3-processes+pam` logs a real pam_unix user in through a PAM
    child its monitor forks at USER, and refuses a wrong password (the
    connection ends without a 230); bench/pamauth, the floor under PASS ->
    230, takes the right password and refuses a wrong one."""
    u = real_user
    r = subprocess.run([PAMAUTH, u["service"], u["name"], u["password"], "3"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and re.match(r"pam_ms [0-9.]+ [0-9.]+ [0-9.]+$", r.stdout), r
    r = subprocess.run([PAMAUTH, u["service"], u["name"], "wrong", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "refused" in r.stderr, r
    bad = subprocess.run([RAWSESS, "serve", "privsep-3-processes+pam", "2121", u["base"]],
                         capture_output=True, text=True, timeout=10)
    assert bad.returncode == 2 and "usage" in bad.stderr
    port = twhelpers.free_ports(1)[0]
    p = subprocess.Popen([RAWSESS, "serve", "privsep-3-processes+pam", str(port), u["base"],
                          u["service"]], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        twhelpers.wait_until(lambda: twhelpers.port_listening(port), 10,
                             what="rawsess serve to listen")
        for _ in range(2):
            f = ftplib.FTP()
            f.connect(twhelpers.HOST, port, timeout=10)
            assert f.login(u["name"], u["password"]).startswith("230")
            f.quit()
        for word in ("wrong", ""):      # "PASS " with nothing after it too
            f = ftplib.FTP()
            f.connect(twhelpers.HOST, port, timeout=10)
            with pytest.raises((EOFError, ConnectionError, ftplib.error_reply)):
                f.login(u["name"], word)
            f.close()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
    twhelpers.wait_until(lambda: not _rawsess_pids(), timeout=10.0,
                         what="rawsess's processes to end (none left behind)")
