"""Least privilege, measured (issue 12, item 9): the daemon runs a
representative set of sessions under a syscall recorder (strace -f), and
every syscall a policy group allows must have been made by some process
under a role whose policy holds that group, or carry a written reason in
sandbox/seccomp_policy.h (a comment "unused: why" on its line).

Filters stack: a process is under its own policy and every policy its
ancestors installed before forking it, so a call it makes counts for all
of them (the listener's list holds what its descendants need). A test
build marks where each role's policy begins with a harmless refused prctl
(sandbox_mark_role in sandbox/seccomp.c); the recorder sees it.

Three daemons cover the roles and their variants: the default (local and
anonymous sessions, isolate_network: data sockets from the monitor; then
FTPS turned on by a reload, the TLS module loaded by the listener under
its filter), one without isolate_network, with connect_from_port_20 and
FTPS (the TLS relay, the worker's own data sockets), and one where
anonymous users may write."""

import ftplib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import twhelpers
from twhelpers import (HOST, PASSWORDS, TIMEOUT, ReuseFTP_TLS, children, client_context,
                       data_cmd_sent, lock_waiters, open_data, recv_all, retr, stor, wait_until)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLICY_H = os.path.join(ROOT, "sandbox", "seccomp_policy.h")
MARK = re.compile(r"^prctl\(PR_SET_NO_NEW_PRIVS, 1, 0x7457([0-9a-f]{4}), 0, 0\)")
CALL = re.compile(r"^(?:<\.\.\. )?([a-z_][a-z0-9_]*)(?:\(| resumed>)")
CLONE = re.compile(r"^(?:clone|clone3|fork|vfork)\(.*\)\s+= (\d+)$")


def _sanitizer_build():
    build = os.environ.get("TW_BUILD_DIR") or os.path.join(ROOT, "build-test")
    with open(os.path.join(build, "tw_build.h")) as f:
        return re.search(r"#define TW_SANITIZER_BUILD 1", f.read()) is not None


# The calls of glibc's malloc. In a sanitizer build ASan's allocator takes
# its place and maps its memory its own way, so whether the daemon's
# code needs them is measured only in a plain build.
ALLOCATOR_CALLS = {"brk", "mmap", "mmap2", "munmap", "mremap", "madvise"}


def _policies_tool():
    build = os.environ.get("TW_BUILD_DIR") or os.path.join(ROOT, "build-test")
    tool = os.path.join(build, "tests", "seccomp_policies")
    assert os.access(tool, os.X_OK), \
        "%s missing: a test build (-Dtest_hooks=true) makes it" % tool
    return tool


class TracedServer(twhelpers.Server):
    """A daemon started under strace -f -ff: one trace file per process."""

    def start(self):
        strace = shutil.which("strace")
        assert strace, "strace missing (etc/install-deps.sh installs it)"
        self.trace_dir = os.path.join(self.base, "trace")
        os.mkdir(self.trace_dir)
        self.launch_prefix = [strace, "-f", "-ff", "-qq", "-o",
                              os.path.join(self.trace_dir, "t")]
        self.daemon_pid = None
        super().start()
        # strace's child execs the launcher, which execs the daemon.
        self.daemon_pid = wait_until(
            lambda: (lambda k: k[0] if len(k) == 1 else None)(children(self.proc.pid)),
            10, what="the traced daemon")
        return self

    @property
    def pid(self):
        return self.daemon_pid or self.proc.pid

    def stop(self, exited=False):
        rc = None
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.daemon_pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
            rc = self.proc.returncode
        errs = super().stop(exited=True)
        # strace ends with its tracee's status: the listener's SIGTERM exit.
        return [e for e in errs if not e.startswith("listener exited with")] + \
            ([] if rc in (0, None, 128 + signal.SIGTERM, -signal.SIGTERM)
             else ["traced listener exited with %s" % rc])


@pytest.fixture
def traced(request):
    servers = []

    def make(opts):
        s = TracedServer(opts)
        servers.append(s)
        s.start()
        return s
    yield make
    errors = []
    for s in servers:
        errors += s.stop()
        s.cleanup()
    assert not errors, errors


# ------------------------------------------------------------ reading

def _allowed(config, isolated):
    """{role: {syscall: group}} and {mark number: role}."""
    out = subprocess.run([_policies_tool(), config] + (["isolated"] if isolated else []),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                         check=True).stdout.decode()
    allowed, roles = {}, {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "#role":
            roles[int(f[1])] = f[2]
            allowed.setdefault(f[2], {})
        else:
            allowed.setdefault(f[0], {})[f[2]] = f[1]
    return allowed, roles


def _reasons():
    """{(group, syscall): reason} for every "unused:" entry of the policy file."""
    text = open(POLICY_H).read()
    out = {}
    for g in re.finditer(r"static const struct sc_rule (\w+)\[\] = \{(.*?)\n\};", text, re.S):
        for line in g.group(2).splitlines():
            m = re.search(r"SCMP_SYS\((\w+)\).*/\*\s*unused:\s*(.*?)\s*(\*/|$)", line)
            if m:
                out[(g.group(1), m.group(1))] = m.group(2)
    return out


def _used(trace_dir, top, roles):
    """{role: set of syscalls made under its filter}, from the trace files."""
    files = {int(n.rsplit(".", 1)[1]): os.path.join(trace_dir, n)
             for n in os.listdir(trace_dir) if re.match(r"t\.\d+$", n)}
    used = {}
    inherited = {top: frozenset()}
    todo = [top]
    while todo:
        pid = todo.pop()
        stack = set(inherited[pid])
        pending = None
        if pid not in files:
            continue
        with open(files[pid], errors="replace") as f:
            for line in f:
                m = MARK.match(line)
                if m:
                    pending = roles[int(m.group(1), 16)]
                    continue
                m = CALL.match(line)
                if not m:
                    continue
                name = m.group(1)
                if pending is not None and name not in ("prctl", "seccomp"):
                    # Already under that policy (inherited): in force at once.
                    stack.add(pending)
                    pending = None
                for r in stack:
                    used.setdefault(r, set()).add(name)
                if pending is not None and name == "seccomp":
                    # Loaded: in force from the next call on.
                    stack.add(pending)
                    pending = None
                c = CLONE.match(line.rstrip())
                if c and int(c.group(1)) > 0:
                    child = int(c.group(1))
                    inherited[child] = frozenset(stack)
                    todo.append(child)
    return used


def _check(srv, isolated, used_all):
    allowed, roles = _allowed(srv.conf_path, isolated)
    used = _used(srv.trace_dir, srv.daemon_pid, roles)
    for role, calls in used.items():
        used_all.setdefault(role, set()).update(calls)
    return allowed


# ------------------------------------------------------------ sessions

def _local_session(srv, user="alice", active_modes=("port", "eprt")):
    srv.put("big.bin", os.urandom(3 << 20), user=user)
    srv.put("t.txt", b"line one\nline two\n", user=user)
    link = os.path.join(srv.home(user), "link.txt")
    if not os.path.lexists(link):
        os.symlink("t.txt", link)
    f = srv.ftp(user)
    for cmd in ("SYST", "FEAT", "HELP", "NOOP", "PWD", "STAT", "OPTS UTF8 ON",
                "SITE UMASK 022"):
        f.sendcmd(cmd)
    f.mkd("d")
    f.cwd("d")
    f.cwd("..")
    f.sendcmd("CDUP")
    f.rmd("d")
    assert f.size("t.txt") == 18
    f.sendcmd("MDTM t.txt")
    f.sendcmd("MDTM 20200102030405 t.txt")      # mdtm_write
    f.sendcmd("MFMT 20200102030405 t.txt")
    f.sendcmd("MLST t.txt")
    f.sendcmd("STAT .")
    for mode in ("pasv", "epsv") + tuple(active_modes):
        conn, _ = open_data(f, "LIST", mode=mode)
        recv_all(conn)
        conn.close()
        f.voidresp()
    for cmd in ("NLST", "MLSD", "LIST -la"):
        conn, _ = open_data(f, cmd)
        recv_all(conn)
        conn.close()
        f.voidresp()
    assert len(retr(f, "RETR big.bin")[0]) == 3 << 20
    assert len(retr(f, "RETR big.bin", rest=1000)[0]) == (3 << 20) - 1000
    f.sendcmd("TYPE A")
    retr(f, "RETR t.txt")
    stor(f, "STOR a.txt", b"ascii\r\nupload\r\n")
    f.sendcmd("TYPE I")
    stor(f, "STOR up.bin", os.urandom(1 << 20))
    stor(f, "APPE up.bin", b"more")
    stor(f, "STOR up.bin", b"x" * 10, rest=5)
    stor(f, "STOR up.bin", b"over")     # over a file: truncated
    stor(f, "STOU up.bin", b"unique")
    _lock_wait(srv, f, user)
    f.sendcmd("SITE CHMOD 600 up.bin")
    f.rename("up.bin", "moved.bin")
    f.delete("moved.bin")
    # ABOR as ftplib sends it (urgent data) in the middle of a download.
    conn, _ = open_data(f, "RETR big.bin")
    conn.recv(4096)
    try:
        f.abort()
    except ftplib.all_errors:
        pass
    conn.close()
    f.sendcmd("NOOP")
    f.quit()


def _lock_wait(srv, f, user):
    """An upload that waits for another's lock_upload_files lock, long
    enough for the wait's tick (SIGALRM every 250 ms) to come: four of
    them, so that one is handled however late the worker gets a CPU."""
    g = srv.ftp(user)
    g.sendcmd("TYPE I")
    conn, resp = open_data(f, "STOR locked.bin")
    assert resp.startswith("150"), resp
    waiting = data_cmd_sent(g, "STOR locked.bin")
    path = os.path.join(srv.home(user), "locked.bin")
    wait_until(lambda: lock_waiters(path) == 1, what="the second upload waiting")
    time.sleep(1.1)
    conn.close()
    f.voidresp()
    assert g.getresp().startswith("150")
    waiting.sendall(b"second")
    waiting.close()
    g.voidresp()
    g.quit()


def _incoming(srv):
    """An upload directory the anonymous user owns."""
    d = os.path.join(srv.anon_root, "incoming")
    os.mkdir(d)
    os.chown(d, twhelpers.USERS["twftp"], twhelpers.USERS["twftp"])


def _anonymous_session(srv, write=False):
    f = srv.ftp("anonymous")
    conn, _ = open_data(f, "LIST")
    recv_all(conn)
    conn.close()
    f.voidresp()
    retr(f, "RETR pub/readme.txt")
    if write:
        conn, _ = open_data(f, "NLST", mode="port")
        recv_all(conn)
        conn.close()
        f.voidresp()
        f.cwd("incoming")
        stor(f, "STOR anon.txt", b"anonymous upload")
        stor(f, "STOU anon.txt", b"again")
        stor(f, "APPE anon.txt", b" appended")
        stor(f, "STOR anon.txt", b"over")
        f.sendcmd("MDTM 20200102030405 anon.txt")
        f.sendcmd("MFMT 20200102030405 anon.txt")
        f.mkd("anondir")
        f.rmd("anondir")
        f.rename("anon.txt", "anon2.txt")
        f.delete("anon2.txt")
    f.quit()


def _failed_logins(srv):
    f = srv.connect()
    with pytest.raises(ftplib.error_perm):
        f.login("alice", "wrong")
    f.quit()
    c = srv.ctrl()
    assert c.cmd("USER alice")[0] == 331
    assert c.cmd("PASS wrong")[0] == 530
    c.close()


def _tls_session(srv):
    f = ReuseFTP_TLS(context=client_context(), timeout=TIMEOUT)
    f.connect(HOST, srv.port)
    f.auth()
    f.login("alice", PASSWORDS["alice"])
    f.prot_p()
    f.retrlines("LIST", lambda l: None)
    f.storbinary("STOR tls.bin", io.BytesIO(os.urandom(200000)))
    buf = io.BytesIO()
    f.retrbinary("RETR tls.bin", buf.write)
    assert len(buf.getvalue()) == 200000
    f.quit()


def _reload(srv, **opts):
    """SIGHUP; with opts, to a configuration changed by them first."""
    if opts:
        srv.opts.update(opts)
        srv.write_config()
    before = srv.log_text().count("reload done")
    os.kill(srv.daemon_pid, signal.SIGHUP)
    wait_until(lambda: srv.log_text().count("reload done") > before or None, 30,
               what="the reload's log line")


def test_every_allowed_syscall_is_used_or_explained(tmp_path):
    from twcerts import make_cert
    cert, key, _ = make_cert(str(tmp_path), "usage")
    os.chmod(str(tmp_path), 0o755)
    used, allowed = {}, {}
    # The first daemon starts without FTPS and gets it from its reload:
    # the listener loads the TLS module then, under its own filter.
    tls_on = {"ssl_enable": True, "rsa_cert_file": cert, "rsa_private_key_file": key,
              "force_local_logins_ssl": False, "force_local_data_ssl": False}
    runs = [
        ({"prefork_sessions": 2}, True,
         lambda s: (_local_session(s), _anonymous_session(s), _failed_logins(s),
                    _reload(s, **tls_on), _local_session(s, "bob", active_modes=()),
                    _tls_session(s))),
        (dict(tls_on, prefork_sessions=2, isolate_network=False, connect_from_port_20=True,
              delay_failed_login=1),
         False, lambda s: (_local_session(s), _tls_session(s), _failed_logins(s))),
        ({"prefork_sessions": 2, "anon_upload_enable": True, "anon_mkdir_write_enable": True,
          "anon_other_write_enable": True, "anon_umask": "022", "isolate_network": False},
         False, lambda s: (_anonymous_session(s, write=True),
                           _local_session(s, active_modes=("port",)))),
    ]
    errors = []
    for opts, isolated, sessions in runs:
        srv = TracedServer(opts, prepare=_incoming)
        try:
            srv.start()
            sessions(srv)
        finally:
            errors += srv.stop()
        for role, calls in _check(srv, isolated, used).items():
            allowed.setdefault(role, {}).update(calls)
        srv.cleanup()
    assert not errors, errors
    if os.environ.get("TW_SECCOMP_USAGE_DUMP"):
        with open(os.environ["TW_SECCOMP_USAGE_DUMP"], "w") as fh:
            json.dump({"used": {r: sorted(c) for r, c in used.items()},
                       "allowed": allowed}, fh, indent=1, sort_keys=True)
    reasons = _reasons()
    # An entry of a group is in use when any role whose policy holds it
    # made the call: the group is the unit the policy file is written in.
    in_use = {(group, name) for role, calls in allowed.items()
              for name, group in calls.items() if name in used.get(role, set())}
    if _sanitizer_build():
        in_use |= {(group, name) for calls in allowed.values()
                   for name, group in calls.items() if name in ALLOCATOR_CALLS}
    unexplained = sorted({"%s (%s, in %s)" % (name, group, ", ".join(sorted(
        r for r, c in allowed.items() if c.get(name) == group)))
        for calls in allowed.values() for name, group in calls.items()
        if group != "g_sanitizer" and (group, name) not in in_use
        and (group, name) not in reasons})
    assert not unexplained, \
        "allowed, never used in the run, and no \"unused:\" reason in %s:\n  %s" % (
            POLICY_H, "\n  ".join(unexplained))
