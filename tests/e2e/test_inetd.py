"""The inetd examples (issue 14), each run end to end: the example file as
`meson setup` configures it, on a private config, address and port, with
the real super-server in the foreground (`inetd -d`, `xinetd -dontfork`)
starting the real daemon per connection, over IPv4 and IPv6.

The test changes only what a private run needs: the address and port,
the config path, and a launcher in front of the daemon (nss_wrapper's
descriptor, twhelpers._FD_PAD_LAUNCHER). openbsd-inetd is installed by
etc/install-deps.sh; xinetd conflicts with it and is unpacked privately
there (XINETD below).
"""

import ftplib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys

import pytest

import twhelpers
from twhelpers import PASSWORDS, REPO, TWINFTPD, code, wait_until

BUILD = os.environ.get("TW_BUILD_DIR") or os.path.join(REPO, "build")
XINETD = os.environ.get("TW_XINETD") or "/opt/twinftpd-test/xinetd/usr/sbin/xinetd"
FAMILIES = [("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)]


def configured(name):
    path = os.path.join(BUILD, name)
    assert os.path.exists(path), "%s not configured (meson setup %s)" % (path, BUILD)
    with open(path) as f:
        return f.read()


def listening(port, family):
    fn = "/proc/net/tcp" if family == socket.AF_INET else "/proc/net/tcp6"
    with open(fn) as f:
        next(f)
        for line in f:
            parts = line.split()
            if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


# The super-servers start the daemon with their own idea of its
# environment, so the launcher sets the test world's (nss_wrapper, and
# pam_wrapper under TW_E2E_PAM=wrapper) itself. Its stderr goes to a
# file: in inetd mode it is the client's socket, and pam_wrapper (not
# libpam) prints notes there.
_SETUP = """
import json, os, sys
with open(sys.argv[1]) as f:
    os.environ.update(json.load(f))
err = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.dup2(err, 2)
os.close(err)
del sys.argv[1:3]
"""


def launcher(s):
    """The server program and its leading arguments, as a list."""
    path = os.path.join(s.base, "launcher.py")
    env_path = os.path.join(s.base, "launcher-env.json")
    with open(path, "w") as f:
        f.write(_SETUP + twhelpers._FD_PAD_LAUNCHER)
    with open(env_path, "w") as f:
        json.dump(s.env(), f)
    return [path, env_path, s.stderr_path]


def session(s, host, family, superserver):
    """One login, upload and download through the super-server."""
    f = ftplib_connect(host, s.port)
    assert f.getwelcome().startswith("220"), f.getwelcome()
    f.login("alice", PASSWORDS["alice"])
    # Session processes ignore SIGHUP (logrotate's `pkill -HUP -o twinftpd`
    # may find the oldest of them when no listener runs).
    for pid, _ in twhelpers.descendants(superserver):
        os.kill(pid, signal.SIGHUP)
    name = "via-%d.txt" % family
    f.storbinary("STOR " + name, io.BytesIO(b"through the super-server\n"))
    got = io.BytesIO()
    f.retrbinary("RETR " + name, got.write)
    assert got.getvalue() == b"through the super-server\n"
    assert code(f.quit()) == 221


def ftplib_connect(host, port):
    f = ftplib.FTP(timeout=twhelpers.TIMEOUT)
    f.connect(host, port)
    return f


def run_superserver(s, argv):
    out = open(os.path.join(s.base, "superserver.out"), "wb")
    proc = subprocess.Popen(argv, env=s.env(), stdin=subprocess.DEVNULL, stdout=out,
                            stderr=subprocess.STDOUT, close_fds=True)
    try:
        wait_until(lambda: proc.poll() is not None or all(listening(s.port, fam)
                                                          for _, fam in FAMILIES),
                   10, what="the super-server listening on %d" % s.port)
        assert proc.poll() is None, open(out.name, "rb").read().decode()[-3000:]
        for host, fam in FAMILIES:
            session(s, host, fam, proc.pid)
        # Every session process is gone once its client quit.
        wait_until(lambda: not twhelpers.descendants(proc.pid), 10,
                   what="the sessions of the super-server to end")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        out.close()
    for name in ("via-%d.txt" % fam for _, fam in FAMILIES):
        assert os.path.exists(s.path(name)), name


def inetd_world(make_server):
    # The config of the standalone server; the -o of the example turns
    # its listener off.
    s = make_server({"listen_ipv6": False}, start=False)
    s.write_config()
    return s


def test_openbsd_inetd_example(make_server):
    inetd = shutil.which("inetd")
    assert inetd, "inetd missing (etc/install-deps.sh installs openbsd-inetd)"
    s = inetd_world(make_server)
    text = configured("twinftpd.inetd")
    lines = {}
    for line in text.splitlines():
        m = re.match(r"#?ftp\t(.*)$", line)
        if m:
            fields = m.group(1).split("\t")
            lines[fields[1]] = fields
    assert set(lines) == {"tcp", "tcp4", "tcp6"}, lines
    conf = []
    for (host, _), proto in zip(FAMILIES, ("tcp4", "tcp6")):
        socktype, proto_, wait, user, server, args = lines[proto]
        assert (socktype, wait, user) == ("stream", "nowait", "root")
        assert os.path.basename(server) == "twinftpd"
        argv = args.split()
        assert argv[0] == "twinftpd" and argv[-1] == "/etc/twinftpd.conf", argv
        assert argv[1:-1] == ["-o", "listen=NO", "-o", "listen_ipv6=NO"], argv
        # The active line is the same but for the protocol.
        assert lines["tcp"][2:] == lines[proto][2:]
        argv = ["python3"] + launcher(s) + [TWINFTPD] + argv[1:-1] + [s.conf_path]
        addr = host if ":" not in host else "[%s]" % host
        conf.append("\t".join(["%s:%d" % (addr, s.port), socktype, proto_, wait, user,
                               sys.executable] + argv))
    path = os.path.join(s.base, "inetd.conf")
    with open(path, "w") as f:
        f.write("\n".join(conf) + "\n")
    run_superserver(s, [inetd, "-d", path])


def test_xinetd_example(make_server):
    if not os.access(XINETD, os.X_OK):
        pytest.fail("xinetd missing at %s (etc/install-deps.sh unpacks it)" % XINETD)
    s = inetd_world(make_server)
    text = configured("twinftpd.xinetd")
    blocks = re.findall(r"^service ftp\n\{\n(.*?)^\}", text, re.M | re.S)
    assert len(blocks) == 2, text
    out = ["defaults\n{\n\tlog_type = FILE %s\n}\n" % os.path.join(s.base, "xinetd.log")]
    for (host, _), block, flag in zip(FAMILIES, blocks, ("IPv4", "IPv6")):
        attrs = dict(re.findall(r"^\t(\w+)\s*=\s*(.*)$", block, re.M))
        assert attrs["flags"] == flag, attrs
        assert os.path.basename(attrs["server"]) == "twinftpd"
        assert attrs["server_args"] == "-o listen=NO -o listen_ipv6=NO /etc/twinftpd.conf"
        attrs["server_args"] = " ".join(launcher(s) + [
            TWINFTPD, "-o", "listen=NO", "-o", "listen_ipv6=NO", s.conf_path])
        attrs["server"] = sys.executable
        # Private: not the ftp port of /etc/services, loopback only.
        attrs.update(type="UNLISTED", port=str(s.port), bind=host)
        out.append("service twe2e-%s\n{\n%s}\n" % (flag, "".join(
            "\t%s = %s\n" % kv for kv in attrs.items())))
    path = os.path.join(s.base, "xinetd.conf")
    with open(path, "w") as f:
        f.write("\n".join(out))
    run_superserver(s, [XINETD, "-dontfork", "-f", path,
                        "-pidfile", os.path.join(s.base, "xinetd.pid")])
