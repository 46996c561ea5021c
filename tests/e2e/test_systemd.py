"""systemd (issue 14): the readiness protocol, socket activation of the
standalone listener, and the units as `meson install` writes them.

- NOTIFY_SOCKET: a datagram socket of the test's own stands in for
  systemd and receives READY=1 (with MAINPID), RELOADING=1 then READY=1
  around a SIGHUP, and STOPPING=1 at SIGTERM.
- LISTEN_FDS: systemd-socket-activate binds the port and starts the
  daemon at the first connection with the socket as descriptor 3
  (before, listen=YES died "Address already in use").
- The units: configured by meson for a private prefix (whose ExecStart
  they must name), checked by `systemd-analyze verify` with nothing
  printed. Skipped only when systemd-analyze is not installed.
"""

import ftplib
import os
import shutil
import signal
import subprocess

import pytest

from twhelpers import (PASSWORDS, REPO, TWINFTPD, Ctrl, NotifySocket, free_ports,
                       socket_activated)

UNITS = ["twinftpd.service", "twinftpd-inetd@.service"]
STATIC_UNITS = ["twinftpd.socket", "twinftpd-inetd.socket"]


def test_notify_ready_reloading_stopping(make_server):
    s = make_server(start=False)
    ns = NotifySocket(os.path.join(s.base, "notify.sock"))
    try:
        s.env_extra["NOTIFY_SOCKET"] = ns.path
        s.start()
        m = ns.next()
        assert m.get("READY") == "1" and m.get("MAINPID") == str(s.pid), m
        # READY comes once the listener accepts.
        with Ctrl(s.port) as c:
            assert c.reply()[0] == 220
        os.kill(s.pid, signal.SIGHUP)
        m = ns.next()
        assert m.get("RELOADING") == "1" and int(m["MONOTONIC_USEC"]) > 0, m
        m = ns.next()
        assert m.get("READY") == "1", m
        assert "reloaded" in m.get("STATUS", ""), m
        # A refused reload still ends with READY=1 (and says so).
        with open(s.conf_path, "a") as f:
            f.write("no_such_option=1\n")
        os.kill(s.pid, signal.SIGHUP)
        assert ns.next().get("RELOADING") == "1"
        m = ns.next()
        assert m.get("READY") == "1" and "refused" in m.get("STATUS", ""), m
        assert s.stop() == []
        assert ns.next().get("STOPPING") == "1"
    finally:
        ns.close()


def test_socket_activation_listen_fds(make_server):
    # The config names another port: the passed socket replaces it.
    unused = free_ports(1)[0]
    s = make_server({"listen_port": unused}, start=False)
    socket_activated(s)
    s.start()
    # systemd-socket-activate starts the daemon at the first connection,
    # which waits in the socket's backlog meanwhile.
    f = s.ftp("alice")
    assert f.pwd() == "/"
    f.quit()
    s.wait_log(r"listening on 2 sockets from the service manager")
    f6 = ftplib.FTP(timeout=15)
    f6.connect("::1", s.port)
    f6.login("alice", PASSWORDS["alice"])
    assert f6.pwd() == "/"
    f6.quit()
    assert "Address already in use" not in s.diagnostics()
    assert not any(c == unused for c in _listening_ports())
    # A reload keeps the inherited socket.
    os.kill(s.pid, signal.SIGHUP)
    s.wait_log(r"reload done")
    f = s.ftp("bob", PASSWORDS["bob"])
    f.quit()


def _listening_ports():
    out = []
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            parts = line.split()
            if parts[3] == "0A":
                out.append(int(parts[1].rsplit(":", 1)[1], 16))
    return out


@pytest.fixture
def configured_prefix(tmp_path):
    """meson setup (configure only) of this tree with a private prefix;
    the binary and the man pages placed where the units and their
    Documentation= lines expect them."""
    prefix = tmp_path / "prefix"
    build = tmp_path / "build"
    r = subprocess.run(["meson", "setup", str(build), "--prefix=%s" % prefix],
                       cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    assert r.returncode == 0, r.stdout.decode()[-3000:]
    (prefix / "sbin").mkdir(parents=True)
    shutil.copy(TWINFTPD, prefix / "sbin" / "twinftpd")
    for sec, page in (("8", "twinftpd.8"), ("5", "twinftpd.conf.5")):
        d = prefix / "share" / "man" / ("man" + sec)
        d.mkdir(parents=True)
        shutil.copy(os.path.join(REPO, "man", page), d / page)
    return prefix, build


def test_units_pass_systemd_analyze_verify(configured_prefix, tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not installed")
    prefix, build = configured_prefix
    units = tmp_path / "units"
    units.mkdir()
    for u in UNITS:
        shutil.copy(build / u, units / u)
    for u in STATIC_UNITS:
        shutil.copy(os.path.join(REPO, "etc", u), units / u)
    text = (units / "twinftpd.service").read_text()
    sbin = "%s/sbin/twinftpd" % prefix
    assert "ExecStart=%s -o background=NO /etc/twinftpd.conf\n" % sbin in text
    assert "ExecStartPre=%s -t /etc/twinftpd.conf\n" % sbin in text
    assert "ExecReload=kill -HUP $MAINPID\n" in text
    assert "Type=notify\n" in text
    # The upgraded listener (SIGUSR2) reports READY=1 and its MAINPID itself.
    assert "NotifyAccess=all\n" in text
    assert "ExecStart=%s -o listen=NO" % sbin in (units / "twinftpd-inetd@.service").read_text()
    env = dict(os.environ, MANPATH=str(prefix / "share" / "man"))
    r = subprocess.run([analyze, "verify"] + sorted(str(p) for p in units.iterdir()),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       timeout=120)
    # verify exits 0 on warnings (an unknown key, a bad value): it must say nothing.
    assert r.returncode == 0 and r.stdout == b"", r.stdout.decode()
