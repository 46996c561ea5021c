#!/usr/bin/python3
"""
ftpbench against servers whose behaviour is known, so that its own
measurement can be trusted: it counts users and bytes right, a stalled or
lying server kills robots instead of hanging the run, and a dead server
ends a run quickly. No timing asserts beyond "the run stopped by itself".

Usage: test_ftpbench.py PATH/TO/ftpbench
The fake server is this file's FakeFTP; pyftpdlib (Debian's
python3-pyftpdlib) is used too, in clear when it is installed and, with
python3-openssl, as an FTPS-only server for -E (required: TLS is
checked against a server that is not ours).
"""
import contextlib
import os
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

SIZE = 10240
FAILED = []


class FakeHandler(socketserver.StreamRequestHandler):
    """A tiny FTP server. Modes: normal, stall (RETR sends 1000 bytes and
    then nothing), liar (SIZE says SIZE, RETR sends 240 bytes less)."""

    def w(self, text):
        self.wfile.write(text.encode())
        self.wfile.flush()

    def handle(self):
        srv = self.server
        # Multi-line replies with other codes inside: the parser must wait
        # for "220 " (RFC 959 4.2).
        self.w("220-welcome\r\n230 not the end\r\n220-still\r\n220 ready\r\n")
        pasv = None
        for raw in self.rfile:
            cmd, _, arg = raw.decode(errors="replace").strip().partition(" ")
            cmd = cmd.upper()
            if cmd == "USER":
                self.w("331-password\r\n331 please\r\n")
            elif cmd == "PASS":
                self.w("230 in\r\n")
            elif cmd == "TYPE":
                self.w("200 binary\r\n")
            elif cmd == "SIZE":
                self.w("213 %d\r\n" % SIZE)
            elif cmd in ("PASV", "EPSV"):
                pasv = socket.socket()
                pasv.bind(("127.0.0.1", 0))
                pasv.listen(1)
                port = pasv.getsockname()[1]
                if cmd == "PASV":
                    self.w("227 Entering Passive Mode (127,0,0,1,%d,%d).\r\n"
                           % (port >> 8, port & 255))
                else:
                    self.w("229 Entering Extended Passive Mode (|||%d|)\r\n" % port)
            elif cmd == "RETR" and pasv is not None:
                self.w("150 here it comes\r\n")
                pasv.settimeout(10)
                conn, _ = pasv.accept()
                pasv.close()
                pasv = None
                if srv.mode == "stall":
                    conn.sendall(b"s" * 1000)
                    conn.settimeout(60)
                    try:
                        conn.recv(1)  # until the client gives up
                    except OSError:
                        pass
                    conn.close()
                    return
                n = SIZE - 240 if srv.mode == "liar" else SIZE
                conn.sendall(b"d" * n)
                conn.close()
                with srv.lock:
                    srv.fetches += 1
                self.w("226 done\r\n")
            elif cmd == "STOR" and pasv is not None:
                self.w("150 send it\r\n")
                pasv.settimeout(10)
                conn, _ = pasv.accept()
                pasv.close()
                pasv = None
                got = 0
                while True:
                    b = conn.recv(1 << 20)
                    if not b:
                        break
                    got += len(b)
                conn.close()
                with srv.lock:
                    srv.stored.append(got)
                self.w("226 stored\r\n")
            elif cmd == "DELE":
                self.w("250 gone\r\n")
            elif cmd == "QUIT":
                self.w("221 bye\r\n")
                return
            else:
                self.w("502 no\r\n")


class FakeFTP(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mode):
        super().__init__(("127.0.0.1", 0), FakeHandler)
        self.mode = mode
        self.lock = threading.Lock()
        self.fetches = 0
        self.stored = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server_address[1]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED.append(what)


def run(args, limit):
    """Runs ftpbench; returns (rc, stdout, seconds). A hang is a failure."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([FTPBENCH] + args, capture_output=True, text=True,
                           timeout=limit)
    except subprocess.TimeoutExpired:
        check(False, "ftpbench %s stopped within %d s" % (" ".join(args), limit))
        return -1, "", limit
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    return p.returncode, p.stdout, time.monotonic() - t0


def robots_result(out):
    """users alive, dead, bytes and fetches from the RESULT line."""
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "RESULT" and f[5] == "robots":
            return {"alive": int(f[2]), "users": int(f[7]), "dead": int(f[8]),
                    "pending": int(f[9]), "bytes": int(f[10]),
                    "fetches": int(f[11]), "status": f[12]}
    return None


def suite_results(out):
    res = {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "RESULT":
            res[f[5]] = {"name": f[1], "value": f[2], "clients": int(f[7]),
                         "procs": f[10], "status": f[-1]}
    return res


def test_robots_alive(port, n, secs, extra, label):
    rc, out, _ = run(["robots", "-h127.0.0.1", "-P%d" % port, "-n%d" % n,
                      "-c%d" % n, "-t%d" % secs, "-b100000", "-B1000", "-ubench",
                      "-ppw", "-fx10k.dat", "-m1500", "-T5"] + extra, secs + 30)
    r = robots_result(out)
    check(rc == 0 and r is not None, label + ": robots run ends with a RESULT")
    if r is None:
        return None
    check(re.search(r"^users alive: %d$" % n, out, re.M) is not None,
          label + ": 'users alive: %d' printed" % n)
    check(r["alive"] == n and r["dead"] == 0 and r["pending"] == 0,
          label + ": all %d robots alive, none dead (%r)" % (n, r))
    check(r["fetches"] > 0, label + ": robots fetched the file")
    # Every completed fetch is exactly SIZE bytes; at most one fetch per
    # robot is cut off by the end of the run.
    check(r["fetches"] * SIZE <= r["bytes"] <= (r["fetches"] + n) * SIZE,
          label + ": byte count matches fetches (%d bytes, %d fetches)"
          % (r["bytes"], r["fetches"]))
    # The throttle holds: at 100,000 B/s no robot gets much more (loose).
    check(r["bytes"] <= n * 100000 * (secs + 1) * 1.5 + n * SIZE,
          label + ": throttle respected")
    r["out"] = out
    return r


def test_fake():
    srv = FakeFTP("normal")
    r = test_robots_alive(srv.port, 4, 2, ["-j2"], "fake server, 2 workers")
    if r is not None:
        check(srv.fetches >= r["fetches"],
              "fake server served at least the fetches ftpbench counted")
    r = test_robots_alive(srv.port, 3, 2, ["-e"], "fake server, EPSV")
    # -C paces as the classic dkftpbench: a read of n bytes is followed by
    # n / rate of pause, the last one too. One read can take the whole
    # 10 KB file (-m), so at SIZE bytes/s every fetch lasts at least 1 s
    # from its first byte: in 3 s, at most 3 fetches per robot. Without
    # that last pause a fetch read in one go ends at once.
    rc, out, _ = run(["robots", "-h127.0.0.1", "-P%d" % srv.port, "-n2", "-c2",
                      "-t3", "-b%d" % SIZE, "-B1000", "-ubench", "-ppw",
                      "-fx10k.dat", "-m%d" % SIZE, "-T5", "-C"], 40)
    r = robots_result(out)
    check(r is not None and r["alive"] == 2 and r["dead"] == 0 and
          1 <= r["fetches"] <= 6,
          "-C: robots alive, each fetch paced to the end (%r)" % (r,))

    rc, out, _ = run(["suite", "-h", "127.0.0.1", "-P", str(srv.port), "-u", "bench",
                      "-p", "pw", "-n", "3", "-s", "64K", "-t", "5", "-b",
                      "stor,login,multi-stor-distinct,quit,login-all"], 60)
    res = suite_results(out)
    check(rc == 0 and all(v["status"] == "ok" for v in res.values()) and
          len(res) == 5, "suite against the fake server: all figures ok")
    check(res.get("login", {}).get("name") ==
          "3 concurrent clients (connect, login)", "classic figure name")
    check(res.get("multi-stor-distinct", {}).get("name") ==
          "3 concurrent clients (STOR 64.0K file, distinct files)",
          "size in the figure name as bytes2human prints it")
    # Each distinct STOR must deliver exactly -s bytes.
    check(srv.stored.count(65536) == 3,
          "concurrent STOR sent exactly 64K per client (%r)" % srv.stored[-4:])
    srv.shutdown()
    srv.server_close()


def test_slow_deaths_report_reads():
    """-C -v: a robot below -B dies at the end of its fetch, and its death
    line lists each paced read of that fetch (10 KB in 1500-byte reads:
    seven, the last 1240 bytes); the per-second lines carry the timing."""
    srv = FakeFTP("normal")
    args = ["robots", "-h127.0.0.1", "-P%d" % srv.port, "-n2", "-c2", "-t3",
            "-b20000", "-B40000", "-ubench", "-ppw", "-fx10k.dat", "-m1500",
            "-T5", "-C", "-v"]
    try:
        p = subprocess.run([FTPBENCH] + args, capture_output=True, text=True, timeout=40)
    except subprocess.TimeoutExpired:
        check(False, "-C -v robots stopped within 40 s")
        return
    r = robots_result(p.stdout)
    check(r is not None and r["alive"] == 0 and r["dead"] == 2,
          "-C below -B: both robots dead (%r)" % (r,))
    reads = re.findall(r"^  its paced reads, ms after the op began: due at \(late\) bytes:"
                       r"((?: [-\d.]+ [-\d.]+ \([-\d.]+\) \d+;)+)$", p.stderr, re.M)
    check(len(reads) == 2, "a read log after each death (%d of 2)" % len(reads))
    if len(reads) != 2:
        sys.stderr.write(p.stderr)
    for log in reads:
        sizes = [int(x) for x in re.findall(r"\) (\d+);", log)]
        check(sizes == [1500] * 6 + [1240], "the fetch's reads, in order (%r)" % sizes)
    check(re.search(r"^t=1 .* lag=[\d.]+ms lag_avg=[\d.]+ms rqwait=[\d.]+ms "
                    r"nivcsw=\d+ batch=\d+$", p.stdout, re.M) is not None,
          "per-second line with the generator's timing")
    srv.shutdown()
    srv.server_close()


def test_stall():
    srv = FakeFTP("stall")
    rc, out, secs = run(["robots", "-h127.0.0.1", "-P%d" % srv.port, "-n3", "-c3",
                         "-t7", "-b100000", "-B5000", "-ubench", "-ppw",
                         "-fx10k.dat", "-T2"], 40)
    r = robots_result(out)
    check(r is not None and r["alive"] == 0 and r["dead"] == 3,
          "stalling server: every robot dead (%r)" % (r,))
    check(re.search(r"^users alive: 0$", out, re.M) is not None,
          "stalling server: 'users alive: 0'")

    rc, out, secs = run(["suite", "-h", "127.0.0.1", "-P", str(srv.port), "-u",
                         "bench", "-p", "pw", "-n", "2", "-s", "10K", "-t", "2",
                         "-b", "retr"], 40)
    res = suite_results(out)
    check(rc != 0 and res.get("retr", {}).get("status", "").startswith("FAIL"),
          "stalling server: suite RETR reported as FAIL, not hung")
    srv.shutdown()
    srv.server_close()


def test_liar():
    srv = FakeFTP("liar")
    rc, out, _ = run(["robots", "-h127.0.0.1", "-P%d" % srv.port, "-n3", "-c3",
                      "-t3", "-b100000", "-B1000", "-ubench", "-ppw",
                      "-fx10k.dat", "-T5"], 40)
    r = robots_result(out)
    check(r is not None and r["dead"] == 3 and r["fetches"] == 0,
          "short file against SIZE: robots dead, no fetch counted (%r)" % (r,))
    check(re.search(r"size 3", out) is not None, "death reason is the size")
    srv.shutdown()
    srv.server_close()


def test_dead_server():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    rc, out, _ = run(["robots", "-h127.0.0.1", "-P%d" % port, "-n3", "-c1", "-t2",
                      "-ubench", "-ppw", "-fx10k.dat", "-T2"], 30)
    r = robots_result(out)
    check(r is not None and r["alive"] == 0 and r["dead"] == 3,
          "no server: robots dead at login (%r)" % (r,))
    # -C: as the classic dkftpbench, no robot starts after the first death.
    rc, out, _ = run(["robots", "-h127.0.0.1", "-P%d" % port, "-n3", "-c1", "-t2",
                      "-j1", "-ubench", "-ppw", "-fx10k.dat", "-T2", "-C"], 30)
    r = robots_result(out)
    check(r is not None and r["alive"] == 0 and r["dead"] == 1 and r["pending"] == 2,
          "-C, no server: the first death stops the ramp (%r)" % (r,))
    rc, out, _ = run(["suite", "-h", "127.0.0.1", "-P", str(port), "-u", "b", "-p",
                      "p", "-n", "2", "-t", "2", "-b", "login"], 30)
    check(rc != 0 and "FAIL" in out, "no server: suite fails fast")


PYFTPD = r"""
import sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer
a = DummyAuthorizer()
a.add_user("bench", "pw", sys.argv[1], perm="elradfmwMT")
h = FTPHandler
if len(sys.argv) > 2:
    # FTPS: TLS required on the control and on every data connection.
    from pyftpdlib.handlers import TLS_FTPHandler
    h = TLS_FTPHandler
    h.certfile = sys.argv[2]
    h.tls_control_required = True
    h.tls_data_required = True
h.authorizer = a
s = FTPServer(("127.0.0.1", 0), h)
s.max_cons = 0
s.max_cons_per_ip = 0
print(s.address[1], flush=True)
s.serve_forever(timeout=0.5)
"""


@contextlib.contextmanager
def pyftpdlib_server(fill, pem=None):
    """pyftpdlib serving a fresh home with x10k.dat (SIZE bytes of fill),
    FTPS-only with pem; yields (port, pid, home) and removes it all."""
    home = tempfile.mkdtemp(prefix="ftpbench-test-")
    with open(os.path.join(home, "x10k.dat"), "wb") as f:
        f.write(fill * SIZE)
    srv = subprocess.Popen(["/usr/bin/python3", "-c", PYFTPD, home] +
                           ([pem] if pem else []), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        yield int(srv.stdout.readline()), srv.pid, home
    finally:
        srv.kill()
        srv.wait()
        shutil.rmtree(home, ignore_errors=True)


def tls_line(out):
    """(version, cipher, data connections, resumed, unclean EOFs) or None."""
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "TLS":
            return f[1], f[2], int(f[3]), int(f[4]), int(f[5])
    return None


def test_pyftpdlib_tls():
    """-E against pyftpdlib's TLS_FTPHandler (pyOpenSSL), which refuses
    any clear-text login or data: every figure ok, every data connection
    resumed the control session and ended with close_notify."""
    py = "/usr/bin/python3"
    if subprocess.run([py, "-c", "import pyftpdlib.handlers as h; h.TLS_FTPHandler"],
                      capture_output=True).returncode != 0:
        check(False, "pyftpdlib with TLS (python3-pyftpdlib, python3-openssl)"
              " installed: etc/install-deps.sh installs both")
        return
    pemdir = tempfile.mkdtemp(prefix="ftpbench-pem-")
    try:
        pem = os.path.join(pemdir, "server.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", pem, "-out",
                        pem + ".crt", "-days", "2", "-subj", "/CN=127.0.0.1"],
                       check=True, capture_output=True)
        with open(pem, "a") as f, open(pem + ".crt") as c:
            f.write(c.read())
        with pyftpdlib_server(b"t", pem) as (port, _, home):
            r = test_robots_alive(port, 4, 2, ["-E", "-j2"], "pyftpdlib FTPS")
            m = re.search(r"^tls: (\d+) data connections, (\d+) resumed the control"
                          r" session, (\d+) ended without", r["out"] if r else "", re.M)
            check(m is not None and int(m.group(1)) > 0 and m.group(1) == m.group(2)
                  and m.group(3) == "0", "robots over FTPS: every data connection"
                  " resumed the control session (%s)" % (m.group(0) if m else None))
            rc, out, _ = run(["suite", "-h", "127.0.0.1", "-P", str(port), "-u",
                              "bench", "-p", "pw", "-n", "4", "-s", "1M", "-t", "10",
                              "-E", "-b", "stor,retr,login,multi-retr,multi-stor,quit,"
                              "login-all"], 90)
            res = suite_results(out)
            check(rc == 0 and len(res) == 7 and
                  all(v["status"] == "ok" for v in res.values()),
                  "FTPS suite against pyftpdlib: all figures ok")
            t = tls_line(out)
            check(t is not None and t[0] in ("TLSv1.2", "TLSv1.3") and t[2] > 4,
                  "FTPS suite: TLS 1.2 or 1.3 on control and data (%r)" % (t,))
            check(t is not None and t[3] == t[2] and t[4] == 0,
                  "every data connection resumed the control session and ended"
                  " with close_notify (%r)" % (t,))
            rc, out, _ = run(["suite", "-h", "127.0.0.1", "-P", str(port), "-u",
                              "bench", "-p", "pw", "-n", "2", "-t", "5", "-b", "login"], 30)
            check(rc != 0 and "FAIL" in out,
                  "without -E the TLS-only server refuses the login")
            check(os.listdir(home) == ["x10k.dat"], "FTPS suite cleaned up its files")
    finally:
        shutil.rmtree(pemdir, ignore_errors=True)


def test_pyftpdlib():
    py = "/usr/bin/python3"
    if subprocess.run([py, "-c", "import pyftpdlib"],
                      capture_output=True).returncode != 0:
        print("skip pyftpdlib: not installed")
        return
    with pyftpdlib_server(b"p") as (port, pid, home):
        test_robots_alive(port, 5, 2, [], "pyftpdlib")
        rc, out, _ = run(["suite", "-h", "127.0.0.1", "-P", str(port), "-u",
                          "bench", "-p", "pw", "-n", "5", "-s", "1M", "-t", "10",
                          "-k", str(pid), "-b",
                          "retr,login,retr-idle,multi-retr,quit"], 90)
        res = suite_results(out)
        check(rc == 0 and len(res) == 5 and
              all(v["status"] == "ok" for v in res.values()),
              "suite against pyftpdlib: RETR byte counts right, all ok")
        check(res.get("multi-retr", {}).get("clients") == 5,
              "all 5 clients took part in the concurrent RETR")
        check(res.get("login", {}).get("procs") == "1",
              "-k found the server's one process")
        check(os.listdir(home) == ["x10k.dat"], "suite cleaned up its files")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: test_ftpbench.py PATH/TO/ftpbench")
    FTPBENCH = os.path.abspath(sys.argv[1])
    test_fake()
    test_slow_deaths_report_reads()
    test_stall()
    test_liar()
    test_dead_server()
    test_pyftpdlib()
    test_pyftpdlib_tls()
    if FAILED:
        print("%d check(s) failed" % len(FAILED))
        sys.exit(1)
    print("all checks passed")
