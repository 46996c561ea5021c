"""Helpers for the twinftpd end-to-end tests.

A Server is one running daemon with its own hermetic world: fake users
through nss_wrapper, passwords through pam_matrix (a service of the
test's own in /etc/pam.d, or through pam_wrapper), homes,
an anonymous root, an empty secure_chroot_dir, a log file and a config
file, all under one temporary directory. The daemon runs as root in the
foreground; stop() sends SIGTERM and checks that no session process of
it survives.

Every wait here is bounded: a hanging daemon fails a test, it never
hangs the suite.
"""

import collections
import ftplib
import hashlib
import os
import random
import re
import secrets
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
TWINFTPD = os.environ.get("TWINFTPD") or os.path.join(REPO, "build", "twinftpd")

LIBDIR = "/usr/lib/x86_64-linux-gnu"
PAM_MATRIX = os.path.join(LIBDIR, "pam_wrapper", "pam_matrix.so")
# A real PAM module for virtual users (tests/e2e/test_vusers.py).
PAM_PWDFILE = os.path.join(LIBDIR, "security", "pam_pwdfile.so")
# The per-test PAM service file (pam_matrix lines) goes to /etc/pam.d under
# its unique name for the test's life, and the real libpam reads it. The
# other way, TW_E2E_PAM=wrapper, lets pam_wrapper copy it into a directory
# /tmp/pam.X of each process that calls pam_start. Not the default: that
# directory's name comes from the pid (48 + pid % 70, the next letter or
# digit), so PAM children with near pids pick the same one, two of them
# can create it at once and share it, and a third that finds the pid file
# of one that has ended removes it as stale under the other's pam_start:
# a login refused at random when logins run at once (lftp's --parallel=4
# met it). Nor can ASan run libpam under pam_wrapper (it dlopens it with
# RTLD_DEEPBIND, which the sanitizer runtime refuses).
PAM_IN_ETC = os.environ.get("TW_E2E_PAM", "etc") != "wrapper"
# The services this run put in /etc/pam.d: removed at its end (conftest.py),
# and only those, since another run may be using its own meanwhile.
PAM_SERVICES_IN_ETC = set()
PRELOAD = "libnss_wrapper.so" if PAM_IN_ETC else "libpam_wrapper.so libnss_wrapper.so"

HOST = "127.0.0.1"
OTHER = "127.0.0.2"      # a second loopback address: "another host"
TIMEOUT = 15             # default socket timeout, seconds

# Fake users. uid == gid for each; alice is also in twshared.
USERS = {
    "twnopriv": 60100,
    "twftp": 60101,
    "alice": 60102,
    "bob": 60103,
}
SHARED_GID = 60110
PASSWORDS = {"alice": "alice-pw", "bob": "bob-pw"}


# ---------------------------------------------------------------- /proc

def proc_stat(pid):
    """(ppid, state, starttime) of pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[1]), rest[0], int(rest[19])


def proc_status(pid):
    """Dict of /proc/PID/status lines, or None when gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            lines = f.read().splitlines()
    except (FileNotFoundError, ProcessLookupError):
        return None
    out = {}
    for line in lines:
        k, _, v = line.partition(":")
        out[k] = v.strip()
    return out


def proc_ids(pid, key):
    """The four ids of the Uid: or Gid: line, as ints."""
    st = proc_status(pid)
    if st is None:
        return None
    return [int(x) for x in st[key].split()]


def proc_groups(pid):
    st = proc_status(pid)
    return [int(x) for x in st.get("Groups", "").split()]


def proc_link(pid, what):
    try:
        return os.readlink("/proc/%d/%s" % (pid, what))
    except OSError:
        return None


def proc_fds(pid):
    """pid's descriptors: {fd: what /proc says it is}; {} when pid is gone."""
    out = {}
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return out
    for fd in fds:
        link = proc_link(pid, "fd/" + fd)
        if link is not None:
            out[int(fd)] = link
    return out


def all_pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def monitor_settled(mon, timeout=10):
    """Waits until the session monitor mon has finished its login: it
    sends the spare its go (so the client may have its 230) before it
    drops root, its capabilities and then installs its post-login filter,
    the last step: one filter more than the listener, its parent."""
    def filters(pid):
        st = proc_status(pid)
        return int(st["Seccomp_filters"]) if st else -1
    parent = proc_stat(mon)[0]
    wait_until(lambda: filters(mon) > filters(parent) >= 0, timeout,
               what="monitor %d's post-login filter" % mon)


def session_holder(monitor):
    """session_support: the PAM child holding monitor's session, its one
    child running as root."""
    held = [p for p in children(monitor) if proc_ids(p, "Uid") == [0] * 4]
    assert len(held) == 1, (monitor, held)
    return held[0]


def children(pid, zombies=False):
    """Live children of pid; with zombies, also those it has not reaped."""
    out = []
    for p in all_pids():
        st = proc_stat(p)
        if st and st[0] == pid and (zombies or st[1] != "Z"):
            out.append(p)
    return sorted(out)


def workers(monitor):
    """The monitor's protocol workers: its live children that are not root.
    Until the login a session also has a spare (see spare_of)."""
    return [k for k in children(monitor) if (proc_ids(k, "Uid") or [0])[0] != 0]


def spare_of(monitor):
    """The monitor's spare post-login worker: the one child still root
    (before the login), or None."""
    roots = [k for k in children(monitor) if (proc_ids(k, "Uid") or [1])[0] == 0]
    assert len(roots) <= 1, "monitor %d has %d root children" % (monitor, len(roots))
    return roots[0] if roots else None


def descendants(pid):
    """Live descendants of pid: list of (pid, starttime)."""
    table = {}
    for p in all_pids():
        st = proc_stat(p)
        if st and st[1] != "Z":
            table[p] = st
    out = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for p, st in table.items():
            if st[0] == parent:
                out.append((p, st[2]))
                frontier.append(p)
    return out


def alive(pid, starttime):
    st = proc_stat(pid)
    return st is not None and st[2] == starttime and st[1] != "Z"


def sent_before_close(srv):
    """Connects to srv; returns all it sent before it closed (a refusal at
    the greeting)."""
    with socket.create_connection((HOST, srv.port), TIMEOUT) as c:
        return recv_all(c)


def data_cmd_sent(f, cmd):
    """PASV, the data connection, then cmd sent on f: no reply read yet
    (a transfer that is to wait, for a lock say)."""
    resp = f.sendcmd("PASV")
    conn = socket.create_connection((HOST, ftplib.parse227(resp)[1]), TIMEOUT)
    f.sock.sendall((cmd + "\r\n").encode())
    return conn


def lock_waiters(path):
    """How many lock requests wait for path's inode (/proc/locks' "->"
    lines: blocked F_OFD_SETLKW and F_SETLKW calls)."""
    ino = ":%d " % os.stat(path).st_ino
    with open("/proc/locks") as f:
        return sum(1 for line in f if "->" in line and ino in line)


def abor_codes(f):
    """Sends ABOR on f's control connection (plain, without the Telnet
    urgent signal) during a transfer; returns the codes of the replies up
    to the ABOR's own (225 or 226), at most three."""
    f.sock.sendall(b"ABOR\r\n")
    return abor_replies(f)


def abor_replies(f, codes=None):
    """Reads f's replies until the ABOR's own (225 or 226), at most three
    with codes, the ones already read; returns all their codes."""
    codes = list(codes or [])
    while not codes or codes[-1] not in (225, 226):
        codes.append(code(f.getmultiline()))
        assert len(codes) <= 3, codes
    return codes


def wait_until(pred, timeout=10.0, step=0.05, what="condition"):
    """Poll pred() until it is true; return its value or raise."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(step)


RELOAD_DONE = re.compile(r"reload (done|refused)")


def reload_and_wait(s, text=None):
    """SIGHUP the listener; wait for its "reload done/refused" line (in the
    log it writes to after the reload, `text` reads that). Returns the line."""
    text = text or s.log_text
    before = len(RELOAD_DONE.findall(text()))
    os.kill(s.pid, signal.SIGHUP)
    wait_until(lambda: len(RELOAD_DONE.findall(text())) > before, 15,
               what="a reload line in the log:\n" + text())
    return [l for l in text().splitlines() if RELOAD_DONE.search(l)][-1]


def pause_processes(pids):
    """SIGSTOP each of pids, wait until it is stopped, SIGCONT it: what a
    debugger's attach, kill -STOP or the cgroup freezer does. A process
    that slept in a poll with a timeout goes on through restart_syscall,
    which its seccomp filter must allow."""
    for p in pids:
        stop_process(p)
        os.kill(p, signal.SIGCONT)


def stop_process(pid):
    """SIGSTOP pid and wait until it is stopped (or gone)."""
    os.kill(pid, signal.SIGSTOP)
    wait_until(lambda: (proc_stat(pid) or (0, "T"))[1] in "Tt" or None, 10,
               what="process %d to stop" % pid)


# ---------------------------------------------------------------- ports

def _bindable(port, host=HOST):
    s = socket.socket()
    try:
        s.bind((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def _listening_ports():
    ports = set()
    for fn in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(fn) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    ports.add(int(parts[1].rsplit(":", 1)[1], 16))
        except FileNotFoundError:
            pass
    return ports


# Ports free_ports handed out lately. A server made with start=False does
# not listen yet, so without this the next call could hand out its ports
# again (two cluster nodes once got overlapping passive ranges).
_HANDED_OUT = collections.deque(maxlen=2048)


def free_ports(n):
    """n consecutive free ports below the kernel's ephemeral range, none
    of them handed out by a recent call."""
    used = _listening_ports() | set(_HANDED_OUT)
    for _ in range(500):
        base = random.randrange(10000, 32000 - n)
        rng = range(base, base + n)
        if any(p in used for p in rng):
            continue
        if all(_bindable(p) for p in rng):
            _HANDED_OUT.extend(rng)
            return list(rng)
    raise AssertionError("no free port range found")


# glibc's struct utmp on x86_64 (utmp(5)): type, pid, line, id, user, host,
# exit, session, tv (2 x int32), addr_v6, reserved.
UTMP = struct.Struct("<hxxi32s4s32s256shhiii4i20s")
USER_PROCESS, DEAD_PROCESS = 7, 8


def utmp_records(path):
    """Every record of a utmp or wtmp file: (type, pid, line, user, host)."""
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) % UTMP.size == 0, len(data)
    out = []
    for i in range(0, len(data), UTMP.size):
        r = UTMP.unpack_from(data, i)
        text = [x.rstrip(b"\0").decode() for x in (r[2], r[4], r[5])]
        out.append((r[0], r[1], text[0], text[1], text[2]))
    return out


def port_listening(port, host=HOST):
    """True when some socket listens on host:port (read from /proc, no connect)."""
    want = "%08X:%04X" % (int.from_bytes(socket.inet_aton(host), "little"), port)
    anyaddr = "00000000:%04X" % port
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            parts = line.split()
            if parts[3] == "0A" and parts[1] in (want, anyaddr):
                return True
    return False


def port_listening6(port):
    """True when a socket listens on [::]:port (read from /proc, no connect)."""
    with open("/proc/net/tcp6") as f:
        next(f)
        for line in f:
            parts = line.split()
            if parts[3] == "0A" and parts[1] == "%s:%04X" % ("0" * 32, port):
                return True
    return False


# ---------------------------------------------------------------- data

def sha256(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def write_random(path, size, chunk=1 << 20):
    """Write size random bytes to path; return their sha256."""
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left:
            b = os.urandom(min(chunk, left))
            h.update(b)
            f.write(b)
            left -= len(b)
    return h.hexdigest()


def tree_snapshot(root):
    """{relpath: (type, mode, size, mtime_ns, sha)} of a tree, symlinks not followed."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                snap[rel] = ("l", os.readlink(p))
            elif os.path.isdir(p):
                snap[rel] = ("d", st.st_mode, st.st_mtime_ns, st.st_uid)
            else:
                snap[rel] = ("f", st.st_mode, st.st_size, st.st_mtime_ns, st.st_uid,
                             sha256_file(p))
    return snap


# ---------------------------------------------------------------- FTP

def code(resp):
    return int(resp[:3])


def rc(ftp, line):
    """Send one command over ftplib; return (code, full reply text) without raising."""
    ftp.putcmd(line)
    resp = ftp.getmultiline()
    return code(resp), resp


def open_data(ftp, cmd, mode="pasv", rest=None):
    """Open a data connection in the given mode and start cmd.

    Returns (data socket, preliminary reply). mode: pasv, epsv, port, eprt.
    """
    listener = None
    conn = None
    # The data connection comes from the control connection's own address
    # (a session opened from OTHER must not look like a third party).
    me = ftp.sock.getsockname()[0]
    if mode == "pasv":
        resp = ftp.sendcmd("PASV")
        assert resp.startswith("227"), resp
        _, port = ftplib.parse227(resp)
        conn = socket.create_connection((HOST, port), TIMEOUT, source_address=(me, 0))
    elif mode == "epsv":
        resp = ftp.sendcmd("EPSV")
        assert resp.startswith("229"), resp
        _, port = ftplib.parse229(resp, ftp.sock.getpeername())
        conn = socket.create_connection((HOST, port), TIMEOUT, source_address=(me, 0))
    elif mode in ("port", "eprt"):
        listener = socket.create_server((me, 0))
        listener.settimeout(TIMEOUT)
        p = listener.getsockname()[1]
        if mode == "port":
            resp = ftp.sendport(me, p)
        else:
            resp = ftp.sendeprt(me, p)
        assert resp.startswith("200"), resp
    else:
        raise ValueError(mode)
    try:
        if rest is not None:
            resp = ftp.sendcmd("REST %d" % rest)
            assert resp.startswith("350"), resp
        resp = ftp.sendcmd(cmd)
        if resp[0] == "2":
            resp = ftp.getresp()
        if resp[0] != "1":
            raise ftplib.error_reply(resp)
        if listener is not None:
            conn, _ = listener.accept()
        conn.settimeout(TIMEOUT)
        return conn, resp
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    finally:
        if listener is not None:
            listener.close()


def recv_all(conn, tolerate_reset=False):
    """Everything until EOF. tolerate_reset: a reset or a timeout also ends
    it (a server that refuses by closing), with what came before."""
    chunks = []
    while True:
        try:
            b = conn.recv(1 << 16)
        except (ConnectionResetError, socket.timeout):
            if not tolerate_reset:
                raise
            break
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)


def retr_by_port_from(f, addr, name):
    """PORT to a listener on addr (another address than the client's), then
    RETR name over it: the bytes received, after the 150 and the 226."""
    ls = socket.create_server((addr, 0))
    ls.settimeout(10)
    p = ls.getsockname()[1]
    try:
        assert rc(f, "PORT %s,%d,%d" % (addr.replace(".", ","), p >> 8, p & 255))[0] == 200
        f.sock.sendall(b"RETR " + name.encode() + b"\r\n")
        assert code(f.getmultiline()) in (125, 150)
        c, _ = ls.accept()
        c.settimeout(10)
        got = recv_all(c)
        c.close()
        assert code(f.getmultiline()) == 226
    finally:
        ls.close()
    return got


def greeting_code(c):
    """A fresh connection's first reply code (220, 421), or None when the
    server closed it without one."""
    try:
        return c.reply()[0]
    except (EOFError, ConnectionResetError):
        return None


def ftp_on_socket(sock):
    """An ftplib.FTP over an already connected control socket (inetd and
    socket-activation tests), the greeting read."""
    f = ftplib.FTP(timeout=TIMEOUT)
    f.sock = sock
    f.af = sock.family
    f.file = sock.makefile("r", encoding="utf-8")
    f.welcome = f.getresp()
    return f


# ---------------------------------------------------------------- FTPS clients

def client_context(max_version=None, alpn=None):
    """A client TLS context for the tests' self-signed certificates."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if max_version is not None:
        ctx.maximum_version = max_version
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


class ReuseFTP_TLS(ftplib.FTP_TLS):
    """FTP_TLS whose data connections resume the control connection's session
    (what curl, lftp and FileZilla do; the stock class does not, and
    require_ssl_reuse refuses it)."""

    def ntransfercmd(self, cmd, rest=None):
        conn, size = ftplib.FTP.ntransfercmd(self, cmd, rest)
        if self._prot_p:
            conn = self.context.wrap_socket(conn, server_hostname=self.host,
                                            session=self.sock.session)
        return conn, size


def retr(ftp, cmd, mode="pasv", rest=None):
    """Run a download command (RETR x, LIST, NLST, MLSD); return (data, 1xx, 2xx)."""
    conn, pre = open_data(ftp, cmd, mode, rest)
    try:
        data = recv_all(conn)
    finally:
        conn.close()
    final = ftp.voidresp()
    return data, pre, final


def stor(ftp, cmd, data, mode="pasv", rest=None):
    """Run an upload command (STOR x, APPE x, STOU); return (1xx, 2xx)."""
    conn, pre = open_data(ftp, cmd, mode, rest)
    try:
        conn.sendall(data)
    finally:
        conn.close()
    final = ftp.voidresp()
    return pre, final


def assert_theft_refused(f, port, cmd=b"RETR secret.bin\r\n"):
    """Connects to the data port from OTHER (a second loopback address),
    then asks for the file on the control connection: the transfer must
    fail with 425/426 and the foreign connection must receive nothing."""
    thief = socket.socket()
    thief.bind((OTHER, 0))
    thief.settimeout(5)
    thief.connect((HOST, port))
    f.sock.sendall(cmd)
    codes = [code(f.getmultiline())]
    if codes[0] in (125, 150):
        codes.append(code(f.getmultiline()))
    assert codes[-1] in (425, 426), codes
    got = b""
    try:
        thief.settimeout(3)
        got = recv_all(thief)
    except (socket.timeout, ConnectionResetError):
        pass
    thief.close()
    assert got == b"", got[:64]


def pwd_of(resp):
    """The path of a 257 reply, with RFC 959 "" unquoting."""
    m = re.match(r'257 "((?:[^"]|"")*)"', resp)
    assert m, "not a 257 reply with a quoted path: %r" % resp
    return m.group(1).replace('""', '"')


def parse_mlsx(line):
    """'fact=v;fact=v; name' -> (facts dict with lower-case keys, name)."""
    facts_s, _, name = line.partition(" ")
    facts = {}
    for f in facts_s.split(";"):
        if f:
            k, _, v = f.partition("=")
            facts[k.lower()] = v
    return facts, name


class Ctrl:
    """A raw control connection: bytes in, (code, lines) out."""

    def __init__(self, port, host=HOST, src=None, timeout=TIMEOUT):
        self.sock = socket.create_connection(
            (host, port), timeout, source_address=(src, 0) if src else None)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def readline(self):
        """One line without CRLF, or None at EOF (or reset)."""
        while b"\n" not in self.buf:
            try:
                b = self.sock.recv(65536)
            except ConnectionResetError:
                b = b""
            if not b:
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line
                return None
            self.buf += b
        line, _, self.buf = self.buf.partition(b"\n")
        return line.rstrip(b"\r")

    def reply(self):
        """(code, [lines]) of the next reply; raises EOFError at EOF."""
        first = self.readline()
        if first is None:
            raise EOFError("connection closed")
        lines = [first]
        if len(first) >= 4 and first[3:4] == b"-":
            end = first[:3] + b" "
            while True:
                line = self.readline()
                if line is None:
                    raise EOFError("connection closed inside a multi-line reply")
                lines.append(line)
                if line.startswith(end):
                    break
        return int(first[:3]), lines

    def cmd(self, line):
        if isinstance(line, str):
            line = line.encode()
        self.send(line + b"\r\n")
        return self.reply()

    def login(self, user, password):
        c, l = self.cmd("USER " + user)
        if c == 331:
            c, l = self.cmd("PASS " + password)
        assert c == 230, l
        return c, l

    def closed_within(self, timeout):
        """Read and discard until EOF; True if EOF came within timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                b = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not b:
                return True
            self.buf += b
        return False


class NotifySocket:
    """What systemd listens on for sd_notify(3) messages (NOTIFY_SOCKET)."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(15)

    def next(self):
        """One message as a dict of its NAME=value lines."""
        data = self.sock.recv(4096).decode()
        return dict(line.split("=", 1) for line in data.splitlines() if "=" in line)

    def close(self):
        self.sock.close()


class TransfersInFlight:
    """A large RETR and a STOR by alice, both started and left half-way
    (the RETR blocked on our unread socket, the STOR waiting for the
    rest), for a test to do something to the daemon meanwhile; finish()
    completes both and asserts 226 and identical bytes."""

    def __init__(self, s, retr_size=48 << 20, stor_size=24 << 20):
        self.s = s
        self.want = write_random(s.path("big.bin"), retr_size)
        os.chown(s.path("big.bin"), USERS["alice"], USERS["alice"])
        self.up = os.urandom(stor_size)
        self.down = s.ftp("alice")
        self.down.voidcmd("TYPE I")
        self.dconn, pre = open_data(self.down, "RETR big.bin")
        assert pre.startswith("150"), pre
        self.first = self.dconn.recv(1 << 20)
        assert self.first
        self.upc = s.ftp("alice")
        self.upc.voidcmd("TYPE I")
        self.uconn, pre = open_data(self.upc, "STOR up.bin")
        assert pre.startswith("150"), pre
        self.half = len(self.up) // 2
        self.uconn.sendall(self.up[:self.half])

    def finish(self):
        self.uconn.sendall(self.up[self.half:])
        self.uconn.close()
        assert self.upc.voidresp().startswith("226")
        rest = recv_all(self.dconn)
        self.dconn.close()
        assert self.down.voidresp().startswith("226")
        assert sha256(self.first + rest) == self.want
        assert sha256(self.s.read("up.bin")) == sha256(self.up)
        self.down.quit()
        self.upc.quit()


class BannerBurst:
    """Client threads that keep connecting (anonymous login, NOOP, QUIT)
    to a daemon whose ftpd_banner ends in bN, until stop() and at least
    at_least sessions each: results holds every session's N. A thread's
    sessions come one after another, so its Ns must never go down (a
    session never gets settings older than the one before it)."""

    def __init__(self, port, threads=6, at_least=8):
        self.port, self.at_least = port, at_least
        self.results, self.errors = [], []
        self.lock = threading.Lock()
        self.started = threading.Barrier(threads + 1, timeout=30)
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._client, daemon=True)
                        for _ in range(threads)]
        for t in self.threads:
            t.start()
        self.started.wait()

    def _client(self):
        n, mine = 0, []
        self.started.wait()
        while n < self.at_least or not self.done.is_set():
            n += 1
            try:
                with Ctrl(self.port) as c:
                    code_, lines = c.reply()
                    assert code_ == 220, lines
                    # Anonymous: many PAM logins at once exceed what
                    # pam_wrapper can do under TW_E2E_PAM=wrapper (see
                    # PAM_IN_ETC).
                    c.login("anonymous", "burst@example.org")
                    assert c.cmd("NOOP")[0] == 200
                    assert c.cmd("QUIT")[0] == 221
                mine.append(int(lines[0].decode().rsplit("b", 1)[1]))
                with self.lock:
                    self.results.append(mine[-1])
            except Exception as e:  # noqa: BLE001 - every failure is reported
                with self.lock:
                    self.errors.append(repr(e))
        if mine != sorted(mine):
            with self.lock:
                self.errors.append("banners out of order: %r" % mine)

    def wait_for(self, n, count=1, timeout=30):
        wait_until(lambda: self.results.count(n) >= count, timeout,
                   what="%d session(s) greeted with b%d" % (count, n))

    def stop(self):
        """Ends the burst; asserts every session was served."""
        self.done.set()
        for t in self.threads:
            t.join(120)
        assert all(not t.is_alive() for t in self.threads), "clients hung"
        assert not self.errors, self.errors[:5]
        assert len(self.results) >= len(self.threads) * self.at_least


# ---------------------------------------------------------------- daemon

def _yesno(v):
    if v is True:
        return "YES"
    if v is False:
        return "NO"
    return str(v)


# nss_wrapper keeps the passwd file it parsed open and, on every lookup,
# fstat()s that descriptor and re-parses when st_mtime changed. The daemon's
# session processes close the descriptors they inherit, so in a monitor the
# listener's low descriptor number soon names the IPC socket instead: the
# lookup then "re-parses" a socket and finds no user. Starting the daemon
# with descriptors 3..N already taken (by /dev/null) puts nss_wrapper's file
# above N; in a session process that number is then simply closed (EBADF),
# which nss_wrapper handles by reopening the file. Test harness only: real
# NSS modules do not cache a descriptor this way.
_FD_PAD_LAUNCHER = """
import os, signal, sys
# Python ignores SIGXFSZ, and an exec keeps that: the daemon gets it at
# its default, as from a shell or a service manager.
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
null = os.open("/dev/null", os.O_RDONLY)
# Sockets a service manager passed (LISTEN_FDS, from 3 on) are kept.
first = 3 + int(os.environ.get("LISTEN_FDS") or 0)
for fd in range(first, 256):
    if fd != null:
        os.dup2(null, fd, inheritable=True)
os.dup2(255, null, inheritable=True)
os.execv(sys.argv[1], sys.argv[1:])
"""


class Server:
    """One daemon and its private world under a fresh temporary directory."""

    def __init__(self, opts=None, wrappers=True, extra_env=None, prepare=None, binary=None):
        self.base = tempfile.mkdtemp(prefix="twe2e-", dir="/tmp")
        # The daemon started (an upgrade test points it at a copy it replaces).
        self.binary = binary or TWINFTPD
        os.chmod(self.base, 0o755)
        self.tag = secrets.token_hex(4)
        self.service = "twe2e-" + self.tag
        self.wrappers = wrappers
        self.proc = None
        self.errors = []
        ports = free_ports(17)
        self.port = ports[0]
        self.pasv_ports = ports[1:]
        self.etc = self._mkdir("etc", 0o755)
        self.empty = self._mkdir("empty", 0o555)
        self.anon_root = self._mkdir("anon", 0o755)
        self.log_path = os.path.join(self.base, "twinftpd.log")
        self.conf_path = os.path.join(self.etc, "twinftpd.conf")
        self.stdout_path = os.path.join(self.base, "daemon.out")
        self.stderr_path = os.path.join(self.base, "daemon.err")
        self._mkdir("home", 0o755)
        self.homes = {}
        for user in ("alice", "bob"):
            h = self._mkdir(os.path.join("home", user), 0o755)
            os.chown(h, USERS[user], USERS[user])
            self.homes[user] = h
        pub = os.path.join(self.anon_root, "pub")
        os.mkdir(pub, 0o755)
        with open(os.path.join(pub, "readme.txt"), "wb") as f:
            f.write(b"anonymous readme\n")
        # A file outside every chroot: nothing may ever serve it.
        self.secret_path = os.path.join(self.base, "secret.txt")
        self.secret = b"TOP-SECRET-" + self.tag.encode() + b"\n"
        with open(self.secret_path, "wb") as f:
            f.write(self.secret)
        os.chmod(self.secret_path, 0o644)
        if wrappers:
            self._write_users()
        self.opts = self._default_opts()
        self.opts.update(opts or {})
        if prepare:
            prepare(self)
        self.env_extra = extra_env or {}
        # Run before the daemon's command line (systemd-socket-activate ...);
        # it must exec the daemon in the same process.
        self.launch_prefix = []

    # -- world
    def _mkdir(self, rel, mode):
        p = os.path.join(self.base, rel)
        os.mkdir(p)
        os.chmod(p, mode)
        return p

    def home(self, user="alice"):
        return self.homes[user]

    def _write_users(self):
        pw = ["root:x:0:0:root:/root:/bin/sh"]
        pw.append("twnopriv:x:%d:%d:nopriv:%s:/usr/sbin/nologin"
                  % (USERS["twnopriv"], USERS["twnopriv"], self.empty))
        pw.append("twftp:x:%d:%d:ftp:%s:/usr/sbin/nologin"
                  % (USERS["twftp"], USERS["twftp"], self.anon_root))
        for u in ("alice", "bob"):
            pw.append("%s:x:%d:%d:%s:%s:/bin/sh" % (u, USERS[u], USERS[u], u, self.homes[u]))
        gr = ["root:x:0:"]
        for u in ("twnopriv", "twftp", "alice", "bob"):
            gr.append("%s:x:%d:" % (u, USERS[u]))
        gr.append("twshared:x:%d:alice" % SHARED_GID)
        self.passwd_path = os.path.join(self.etc, "passwd")
        self.group_path = os.path.join(self.etc, "group")
        self.passdb_path = os.path.join(self.etc, "passdb")
        with open(self.passwd_path, "w") as f:
            f.write("\n".join(pw) + "\n")
        with open(self.group_path, "w") as f:
            f.write("\n".join(gr) + "\n")
        with open(self.passdb_path, "w") as f:
            for u, p in PASSWORDS.items():
                f.write("%s:%s:%s\n" % (u, p, self.service))
        os.chmod(self.passdb_path, 0o600)
        self.pam_dir = "/etc/pam.d" if PAM_IN_ETC else os.path.join(self.etc, "pam.d")
        if not PAM_IN_ETC:
            os.mkdir(self.pam_dir)
        if PAM_IN_ETC:
            PAM_SERVICES_IN_ETC.add(self.service)
        with open(os.path.join(self.pam_dir, self.service), "w") as f:
            f.write("auth required %s passdb=%s\n" % (PAM_MATRIX, self.passdb_path))
            f.write("account required %s passdb=%s\n" % (PAM_MATRIX, self.passdb_path))

    def _default_opts(self):
        return {
            "listen": True,
            "listen_address": HOST,
            "listen_port": self.port,
            "background": False,
            "anonymous_enable": True,
            "anon_root": self.anon_root,
            "ftp_username": "twftp",
            "local_enable": True,
            "write_enable": True,
            "local_umask": "022",
            "anon_umask": "022",
            "chroot_local_user": True,
            "allow_writeable_chroot": True,
            "nopriv_user": "twnopriv",
            "secure_chroot_dir": self.empty,
            "pam_service_name": self.service,
            "pasv_min_port": self.pasv_ports[0],
            "pasv_max_port": self.pasv_ports[-1],
            "delay_failed_login": 0,
            "max_login_fails": 3,
            "idle_session_timeout": 120,
            "data_connection_timeout": 60,
            "accept_timeout": 20,
            "connect_timeout": 20,
            "xferlog_enable": True,
            "log_file": self.log_path,
            "status_socket": os.path.join(self.base, "status.sock"),
        }

    def write_config(self):
        with open(self.conf_path, "w") as f:
            f.write("# twinftpd e2e test config\n")
            for k, v in self.opts.items():
                f.write("%s=%s\n" % (k, _yesno(v)))

    def env(self):
        env = {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C",
            "TW_E2E_TAG": self.tag,
        }
        if self.wrappers:
            env.update({
                "LD_PRELOAD": PRELOAD,
                "NSS_WRAPPER_PASSWD": self.passwd_path,
                "NSS_WRAPPER_GROUP": self.group_path,
            })
            if not PAM_IN_ETC:
                env.update({"PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": self.pam_dir})
            else:
                # nss_wrapper, unlike pam_wrapper, can skip RTLD_DEEPBIND.
                env["NSS_WRAPPER_DISABLE_DEEPBIND"] = "1"
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if k in os.environ:
                env[k] = os.environ[k]
        env.update(self.env_extra)
        return env

    # -- life cycle
    def start(self, ready=None, stdin=subprocess.DEVNULL, preexec_fn=None):
        """Writes the config (write_config, which a test may replace) and
        starts the daemon; returns once ready() (default: listen_port on
        127.0.0.1 or any IPv4 address is listening). stdin: the daemon's
        (a connected socket for listen=NO); preexec_fn runs in the child
        before the launcher."""
        assert os.access(self.binary, os.X_OK), "daemon binary not found: %s" % self.binary
        self.write_config()
        self.started = time.time()
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        argv = [self.binary, self.conf_path]
        if self.wrappers:
            argv = [sys.executable, "-c", _FD_PAD_LAUNCHER] + argv
        argv = self.launch_prefix + argv
        self.proc = subprocess.Popen(argv, env=self.env(), stdin=stdin, stdout=self._out,
                                     stderr=self._err, close_fds=True, preexec_fn=preexec_fn)
        deadline = time.monotonic() + 10
        while not (ready() if ready else port_listening(self.port)):
            if self.proc.poll() is not None:
                raise AssertionError("twinftpd exited with %s before listening:\n%s"
                                     % (self.proc.returncode, self.diagnostics()))
            if time.monotonic() > deadline:
                raise AssertionError("twinftpd did not listen on %d within 10s:\n%s"
                                     % (self.port, self.diagnostics()))
            time.sleep(0.02)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def connections(self, pids=None):
        """{client port: set of pids holding that control connection} for
        every client connected to this daemon, read from /proc; among the
        listener's descendants, or among pids (after an upgrade the new
        listener is nobody's descendant here)."""
        inodes = {}
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                parts = line.split()
                lport = int(parts[1].rsplit(":", 1)[1], 16)
                rport = int(parts[2].rsplit(":", 1)[1], 16)
                if lport == self.port and parts[3] != "0A" and parts[9] != "0":
                    inodes["socket:[%s]" % parts[9]] = rport
        out = {}
        if pids is None:
            pids = [pid for pid, _ in descendants(self.pid)]
        for pid in pids:
            for link in proc_fds(pid).values():
                if link in inodes:
                    out.setdefault(inodes[link], set()).add(pid)
        return out

    def monitor_of(self, pid):
        """The listener's child above pid (the session monitor), or None."""
        while pid:
            st = proc_stat(pid)
            if st is None:
                return None
            if st[0] == self.pid:
                return pid
            pid = st[0]
        return None

    def sessions(self):
        """Monitors of the sessions that have a client connected."""
        mons = set()
        for pids in self.connections().values():
            for p in pids:
                m = self.monitor_of(p)
                if m:
                    mons.add(m)
        return sorted(mons)

    def session_of(self, client_port, timeout=10):
        """The monitor serving the client whose local port is client_port."""
        def probe():
            pids = self.connections().get(client_port)
            if not pids:
                return None
            mons = {self.monitor_of(p) for p in pids} - {None}
            return mons.pop() if len(mons) == 1 else None
        return wait_until(probe, timeout, what="session of client port %d" % client_port)

    def session_pids(self, monitor):
        """The monitor and all its live descendants: [(pid, starttime)]."""
        st = proc_stat(monitor)
        if st is None or st[1] == "Z":
            return []
        return [(monitor, st[2])] + descendants(monitor)

    def wait_sessions(self, n, timeout=10):
        return wait_until(lambda: len(self.sessions()) == n or None, timeout,
                          what="%d session(s) of the listener (have %s)"
                          % (n, self.sessions()))

    def scratch_utmp(self):
        """Before start: empty utmp and wtmp files under base, which a test
        build writes instead of the machine's (TW_TEST_UTMP, TW_TEST_WTMP,
        read with utmp_records). Returns (utmp, wtmp)."""
        files = (os.path.join(self.base, "utmp"), os.path.join(self.base, "wtmp"))
        for p in files:
            open(p, "wb").close()
        self.env_extra.update({"TW_TEST_UTMP": files[0], "TW_TEST_WTMP": files[1]})
        return files

    def wait_listener_sessions(self, n, timeout=10):
        """Until the listener itself counts n sessions (its status
        snapshot): it frees a max_clients or max_per_ip place only when
        it has reaped the session's monitor, a little after the session's
        processes let go of the connection (wait_sessions)."""
        return wait_until(lambda: re.search(r"^sessions: %d " % n, self.status(check=False),
                                            re.M) or None,
                          timeout, step=0.1, what="the listener to count %d session(s)" % n)

    def status_run(self, conf=None):
        """twinftpd -S with conf (this server's by default): the CompletedProcess."""
        return subprocess.run([TWINFTPD, "-S", conf or self.conf_path], timeout=30,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def status(self, check=True):
        """The listener's own snapshot (twinftpd -S) as text; with
        check=False "" when it cannot be had."""
        r = self.status_run()
        if not check and r.returncode != 0:
            return ""
        assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
        return r.stdout.decode("utf-8", "replace")

    def wait_settled(self, pool, timeout):
        """Until the listener itself counts `pool` ready pairs and no session
        (its status snapshot: a client's reset is not the session's end yet)
        and nothing but those pairs (3 processes each) runs below it."""
        def settled():
            out = self.status(check=False)
            return (re.search(r"^sessions: 0 ", out, re.M) and
                    re.search(r"^ready pool: %d ready " % pool, out, re.M) and
                    len(descendants(self.pid)) == 3 * pool) or None
        return wait_until(settled, timeout, step=0.2,
                          what="%d idle pairs and no session below the listener" % pool)

    def fd_table(self):
        """The listener's descriptors: {fd: target}."""
        return proc_fds(self.pid)

    def rss_kb(self):
        return int(proc_status(self.pid)["VmRSS"].split()[0])

    def check_no_leaks(self, pool, before, rss0, rss_slack_kb, timeout=600):
        """After a load: the listener settles back to `pool` idle pairs with
        exactly the descriptors of `before` (an fd_table() taken settled)
        and at most rss_slack_kb more resident memory."""
        self.wait_settled(pool, timeout)
        now = self.fd_table()
        assert len(now) == len(before), \
            "listener descriptors: %d before the load, %d now; gone %s, new %s" % (
                len(before), len(now),
                {fd: t for fd, t in before.items() if now.get(fd) != t},
                {fd: t for fd, t in now.items() if before.get(fd) != t})
        rss1 = self.rss_kb()
        assert rss1 - rss0 <= rss_slack_kb, \
            "listener VmRSS grew from %d KB to %d KB" % (rss0, rss1)
        return rss1

    def diagnostics(self):
        out = []
        for label, p in (("stderr", self.stderr_path), ("stdout", self.stdout_path),
                         ("log", self.log_path)):
            try:
                with open(p, "rb") as f:
                    data = f.read()[-6000:]
            except OSError:
                continue
            out.append("--- daemon %s ---\n%s" % (label, data.decode("utf-8", "replace")))
        return "\n".join(out)

    def stop(self, exited=False):
        """SIGTERM; check listener and every session process end. Returns errors.
        exited: the test stopped the listener itself (its exit is checked)."""
        errs = []
        if self.proc is None:
            return errs
        if exited and self.proc.poll() is not None:
            snap = []
            if self.proc.returncode != 0:
                errs.append("listener exited with %s" % self.proc.returncode)
        elif self.proc.poll() is not None:
            errs.append("listener died during the test (exit %s)" % self.proc.returncode)
            snap = []
        else:
            snap = descendants(self.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                errs.append("listener ignored SIGTERM for 10s")
                self.proc.kill()
                self.proc.wait(timeout=10)
            if self.proc.returncode not in (0, -signal.SIGTERM, 128 + signal.SIGTERM):
                errs.append("listener exited with %s after SIGTERM" % self.proc.returncode)
        # Session processes: the ones we saw, plus any that still carry our config path.
        deadline = time.monotonic() + 5
        while True:
            left = {p: t for p, t in snap if alive(p, t)}
            for p in self._by_cmdline():
                st = proc_stat(p)
                if st:
                    left.setdefault(p, st[2])
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if left:
            errs.append("session processes left after SIGTERM: %s" % sorted(left))
            for p, t in left.items():
                if alive(p, t):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        self._out.close()
        self._err.close()
        with open(self.stderr_path, "rb") as f:
            err = f.read()
        for marker in (b"AddressSanitizer", b"runtime error:", b"LeakSanitizer"):
            if marker in err:
                errs.append("sanitizer report in daemon stderr")
                break
        self.proc = None
        return errs

    def _by_cmdline(self):
        found = []
        needle = self.conf_path.encode()
        for p in all_pids():
            if p == os.getpid():
                continue
            try:
                with open("/proc/%d/cmdline" % p, "rb") as f:
                    if needle in f.read():
                        st = proc_stat(p)
                        if st and st[1] != "Z":
                            found.append(p)
            except OSError:
                pass
        return found

    def cleanup(self):
        shutil.rmtree(self.base, ignore_errors=True)
        if PAM_IN_ETC and self.wrappers:
            try:
                os.unlink(os.path.join("/etc/pam.d", self.service))
            except FileNotFoundError:
                pass
        # pam_wrapper copies the service into /tmp/pam.X; a daemon stopped by a
        # signal leaves it behind. Remove only the ones holding our service.
        for d in ([] if PAM_IN_ETC else os.listdir("/tmp")):
            if d.startswith("pam.") and len(d) == 5:
                if os.path.exists(os.path.join("/tmp", d, self.service)):
                    shutil.rmtree(os.path.join("/tmp", d), ignore_errors=True)

    # -- clients
    def ftp(self, user="alice", password=None, src=None, encoding="utf-8"):
        """A logged-in ftplib.FTP (user "anonymous" for anonymous)."""
        f = ftplib.FTP(timeout=TIMEOUT, encoding=encoding)
        f.connect(HOST, self.port, source_address=(src, 0) if src else None)
        if user in ("anonymous", "ftp"):
            f.login(user, password or "e2e@example.org")
        else:
            f.login(user, password if password is not None else PASSWORDS[user])
        return f

    def connect(self, src=None):
        """An ftplib.FTP that has read the greeting but not logged in."""
        f = ftplib.FTP(timeout=TIMEOUT)
        f.connect(HOST, self.port, source_address=(src, 0) if src else None)
        return f

    def ctrl(self, src=None, greet=True):
        c = Ctrl(self.port, src=src)
        if greet:
            code_, lines = c.reply()
            assert code_ == 220, lines
        return c

    def url(self, path="", user="alice"):
        if user == "anonymous":
            return "ftp://%s:%d/%s" % (HOST, self.port, path)
        return "ftp://%s:%s@%s:%d/%s" % (user, PASSWORDS[user], HOST, self.port, path)

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def wait_log(self, pattern, timeout=5):
        rx = re.compile(pattern, re.M)
        return wait_until(lambda: rx.search(self.log_text()), timeout,
                          what="log line matching %r; log is:\n%s" % (pattern, self.log_text()))

    # -- files in a home, as the server sees them
    def put(self, rel, data, user="alice", mode=0o644, mtime=None):
        p = os.path.join(self.homes[user] if user else self.anon_root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.chmod(p, mode)
        if user:
            os.chown(p, USERS[user], USERS[user])
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        return p

    def mkdir(self, rel, user="alice", mode=0o755):
        p = os.path.join(self.homes[user], rel)
        os.mkdir(p, mode)
        os.chmod(p, mode)
        os.chown(p, USERS[user], USERS[user])
        return p

    def path(self, rel, user="alice"):
        return os.path.join(self.homes[user], rel)

    def read(self, rel, user="alice"):
        with open(self.path(rel, user), "rb") as f:
            return f.read()


def socket_activated(s):
    """s (not started) runs under systemd-socket-activate with its
    environment, on an IPv4 and an IPv6 socket of its port, as
    twinftpd.socket passes them."""
    tool = shutil.which("systemd-socket-activate")
    assert tool, "systemd-socket-activate missing (apt-get install systemd)"
    s.launch_prefix = [tool, "-l", "%s:%d" % (HOST, s.port), "-l", "[::1]:%d" % s.port]
    for k, v in s.env().items():
        s.launch_prefix += ["-E", "%s=%s" % (k, v)]


def check_config(path, *extra, env=None):
    """twinftpd -t [extra...] path: (CompletedProcess, stdout, stderr)."""
    r = subprocess.run([TWINFTPD, "-t", *extra, path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30, stdin=subprocess.DEVNULL, env=env)
    return r, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def login_refused(srv, user, password=None):
    """A login of user ends in 530; returns the reply."""
    f = srv.connect()
    try:
        f.login(user, password if password is not None else PASSWORDS[user])
    except ftplib.error_perm as e:
        assert str(e).startswith("530"), e
        return str(e)
    finally:
        f.close()
    raise AssertionError("login of %s was not refused" % user)


def run(argv, timeout=120, **kw):
    """subprocess.run with a bound; the tool must exist."""
    exe = shutil.which(argv[0])
    assert exe, "required tool missing: %s" % argv[0]
    return subprocess.run(argv, timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, **kw)
