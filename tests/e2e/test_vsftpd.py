"""Coming from vsftpd: Debian's own vsftpd.conf starts unchanged and serves
IPv4 and IPv6 clients on one dual-stack socket; -t names every problem of a
file in one run; the log lines that tools written for vsftpd read (syslog,
fail2ban); vsftpd options implemented here (dirmessage_enable,
user_sub_token) and a missing login directory."""

import ftplib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

import twcerts
import twhelpers
from twhelpers import PASSWORDS, TWINFTPD, code, reload_and_wait, retr, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "vsftpd"))
DEBIAN_CONF = os.path.join(FIXTURES, "debian12-vsftpd.conf")
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

# Options of the test's own world (users, paths, ports) that are written
# after a vsftpd file; everything else is the file's.
WORLD = ("listen_port", "background", "anon_root", "ftp_username", "nopriv_user",
         "secure_chroot_dir", "pam_service_name", "pasv_min_port", "pasv_max_port",
         "delay_failed_login", "max_login_fails", "idle_session_timeout",
         "data_connection_timeout", "accept_timeout", "connect_timeout", "log_file",
         "local_umask")


_check = twhelpers.check_config


_listening_tcp6 = twhelpers.port_listening6


def _start_with_file(srv, text, ready):
    """Starts srv with text as its config, then the world's own lines."""
    def write():
        with open(srv.conf_path, "w") as f:
            f.write(text)
            f.write("\n# the test's own world: users, paths, ports\n")
            for k in WORLD:
                f.write("%s=%s\n" % (k, twhelpers._yesno(srv.opts[k])))
    srv.write_config = write
    srv.start(ready)


def _ftp(host, port, user="alice", af=socket.AF_INET):
    f = ftplib.FTP(timeout=twhelpers.TIMEOUT)
    f.af = af
    f.connect(host, port)
    f.login(user, PASSWORDS[user])
    return f


# ------------------------------------------------------------ Debian's file

def test_debian_conf_is_the_package_file():
    """The fixture is Debian 12's /etc/vsftpd.conf, where vsftpd is installed
    (etc/install-deps.sh installs it)."""
    assert os.path.exists("/etc/vsftpd.conf"), "vsftpd not installed (etc/install-deps.sh)"
    with open("/etc/vsftpd.conf", "rb") as a, open(DEBIAN_CONF, "rb") as b:
        assert a.read() == b.read()


def test_debian_conf_checks_unchanged():
    r, out, err = _check(DEBIAN_CONF)
    assert r.returncode == 0, err
    assert re.search(r"(?m)^listen=NO$", out) and re.search(r"(?m)^listen_ipv6=YES$", out)
    assert re.search(r"(?m)^dirmessage_enable=YES$", out), out
    assert "problem" not in err, err


def test_debian_conf_serves_ipv4_and_ipv6(make_server):
    """listen=NO + listen_ipv6=YES: one dual-stack socket. An IPv4 client
    (an IPv4-mapped peer) gets 227 with its IPv4 address, PORT (from port
    20: connect_from_port_20=YES) and EPRT work, and a data connection
    from another address is still refused."""
    srv = make_server(start=False)
    srv.put("pub.txt", b"from debian's config\n")
    with open(DEBIAN_CONF) as f:
        text = f.read()
    _start_with_file(srv, text, lambda: _listening_tcp6(srv.port))
    # One socket, in the IPv6 table only.
    assert not twhelpers.port_listening(srv.port)

    f4 = _ftp("127.0.0.1", srv.port)
    resp = f4.sendcmd("PASV")
    assert resp.startswith("227"), resp
    assert ftplib.parse227(resp)[0] == "127.0.0.1", resp
    for mode in ("pasv", "epsv", "port", "eprt"):
        data, _, final = retr(f4, "RETR pub.txt", mode)
        assert data == b"from debian's config\n", mode
        assert final.startswith("226"), final
    resp = f4.sendcmd("PASV")
    port = ftplib.parse227(resp)[1]
    twhelpers.assert_theft_refused(f4, port, b"RETR pub.txt\r\n")
    f4.quit()

    f6 = _ftp("::1", srv.port, af=socket.AF_INET6)
    out = io.BytesIO()
    f6.retrbinary("RETR pub.txt", out.write)
    assert out.getvalue() == b"from debian's config\n"
    with pytest.raises(ftplib.error_temp):
        f6.sendcmd("PASV")
    f6.quit()
    # The log names IPv4 clients as IPv4 (firewalls and fail2ban use it).
    srv.wait_log(r'OK LOGIN: Client "127\.0\.0\.1", user "alice"')
    srv.wait_log(r'OK LOGIN: Client "::1", user "alice"')


def test_listen_ipv6_beside_ipv4_stays_ipv6_only(make_server):
    """listen=YES and listen_ipv6=YES: two sockets on one port, as before."""
    srv = make_server({"listen": True, "listen_ipv6": True, "listen_address": ""},
                      start=False)
    _start_with_file(srv, "listen=YES\nlisten_ipv6=YES\nlocal_enable=YES\n",
                     lambda: _listening_tcp6(srv.port) and
                     twhelpers.port_listening(srv.port))
    for host, af in (("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)):
        f = _ftp(host, srv.port, af=af)
        assert code(f.sendcmd("NOOP")) == 200
        f.quit()


# ------------------------------------------------------------ -t

def test_check_reports_every_problem(tmp_path):
    missing = str(tmp_path / "missing")
    conf = tmp_path / "many.conf"
    conf.write_text("\n".join([
        "listen=YES",
        "no_such_option=1",                 # 2
        "listen_port=port",                 # 3
        "http_enable=YES",                  # 4
        "async_abor_enable=YES",            # 5: a note, no problem
        "one_process_model=NO",             # 6: a note
        "anonymous_enable=YES",
        "local_enable=YES",
        "ftp_username=no-such-ftp-user",
        "nopriv_user=no-such-nopriv-user",
        "anon_root=" + missing,
        "local_root=" + missing + "/x",
        "pam_service_name=twe2e-no-such-service",
        "pasv_min_port=3000",
        "pasv_max_port=2000",
        "",
    ]))
    r, out, err = _check(str(conf))
    assert r.returncode == 1, err
    p = str(conf)
    for want in ("%s:2: unknown option 'no_such_option'" % p,
                 "%s:3: option 'listen_port'" % p,
                 "%s:4: option 'http_enable'" % p,
                 "nopriv_user: user 'no-such-nopriv-user' does not exist",
                 "note: ftp_username: user 'no-such-ftp-user' does not exist: anonymous "
                 "logins will be refused",
                 "anon_root: directory %s" % missing,
                 "local_root: directory %s/x" % missing,
                 "no PAM service file /etc/pam.d/twe2e-no-such-service"):
        assert want in err, (want, err)
    assert re.search(r"note: %s:5: .*async_abor_enable" % re.escape(p), err), err
    assert re.search(r"note: %s:6: .*one_process_model" % re.escape(p), err), err
    # swapped pasv ports: a warning; no ftp_username account: a note
    assert "7 problems found" in err, err
    assert out == "", out


def test_login_defaults_are_vsftpd_s(make_server):
    """A vsftpd.conf for an anonymous-only site often names neither
    anonymous_enable (vsftpd: YES) nor local_enable (vsftpd: NO): the
    anonymous login works, and a local user with a right password is
    refused, as under vsftpd."""
    s = make_server(start=False)
    del s.opts["anonymous_enable"]
    del s.opts["local_enable"]
    s.start()
    # Said at start, since twinftpd's own defaults were the other way round.
    s.wait_log(r"anonymous_enable is not set: anonymous logins are allowed")
    s.wait_log(r"local_enable is not set: local users cannot log in")
    with s.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS " + twhelpers.PASSWORDS["alice"])[0] == 530
    f = s.ftp("anonymous")
    assert twhelpers.pwd_of(f.sendcmd("PWD")) == "/"
    f.quit()


def test_anonymous_without_its_user(make_server):
    """anonymous_enable=YES and no ftp_username account: vsftpd starts and
    refuses each anonymous login; so does twinftpd, saying why at start."""
    s = make_server({"ftp_username": "no-such-ftp-user"})
    s.wait_log(r"ftp_username no-such-ftp-user does not exist: anonymous logins are "
               r"refused")
    with s.ctrl() as c:
        assert c.cmd("USER anonymous")[0] == 331
        assert c.cmd("PASS e2e@example.org")[0] == 530
    f = s.ftp("alice")                  # local users are not affected
    f.quit()


def test_pam_service_name_as_a_path(make_server):
    """pam_service_name=/etc/pam.d/NAME: Linux-PAM's pam_start() takes the
    last part, so vsftpd logs in through the service NAME; so does
    twinftpd, with a warning instead of a refusal to start."""
    s = make_server(start=False)
    s.opts["pam_service_name"] = "/etc/pam.d/" + s.service
    s.start()
    s.wait_log(r"pam_service_name /etc/pam\.d/%s is a path: PAM uses the service %s "
               % (re.escape(s.service), re.escape(s.service)))
    f = s.ftp("alice")
    f.quit()


def test_check_accepts_inert_vsftpd_settings(tmp_path):
    conf = tmp_path / "inert.conf"
    conf.write_text("listen=YES\nlocal_enable=NO\nnopriv_user=nobody\n"
                    "secure_chroot_dir=%s\nlog_file=%s/log\n"
                    "ptrace_sandbox=NO\none_process_model=NO\nasync_abor_enable=YES\n"
                    "utf8_filesystem=YES\nsetproctitle_enable=YES\nhttp_enable=NO\n"
                    "run_as_launching_user=YES\nlog_die=YES\nbetter_stou=NO\n"
                    "bind_retries=9\nanon_max_rate=0\nssl_enable=NO\n" % (tmp_path, tmp_path))
    os.chmod(str(tmp_path), 0o755)
    r, out, err = _check(str(conf))
    assert r.returncode == 0, err
    assert err.count("note:") >= 10, err


def test_bind_failure_reaches_stderr(make_server):
    srv = make_server(start=False)
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    blocker.bind((twhelpers.HOST, srv.port))
    blocker.listen(1)
    try:
        srv.write_config()
        r = subprocess.run([sys.executable, "-c", twhelpers._FD_PAD_LAUNCHER, TWINFTPD,
                            srv.conf_path], env=srv.env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    finally:
        blocker.close()
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0
    assert re.search(r"bind to 127\.0\.0\.1 port %d: Address already in use" % srv.port,
                     err), err
    assert "bind to" in srv.log_text()


# ------------------------------------------------------------ logs

def _syslog_receiver(tmp_path):
    """A syslog socket on a private path (test builds let
    TW_TEST_SYSLOG_SOCKET name it): (path, socket, the lines read so far,
    drain() that reads what is queued and returns all lines read)."""
    path = str(tmp_path / "log.sock")
    rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    rx.bind(path)
    os.chmod(path, 0o666)
    rx.settimeout(0.2)
    got = []

    def drain():
        while True:
            try:
                got.append(rx.recv(65536).decode("utf-8", "replace"))
            except socket.timeout:
                return "\n".join(got)
    return path, rx, got, drain


def test_syslog_that_stops_reading_costs_lines_not_logins(make_server, tmp_path):
    """A syslog daemon that stops reading (its socket's queue full) loses
    log lines, not the service: the listener, which writes the lines of
    every logged-in session, never waits on the socket, so logins go on;
    once the daemon reads again, the next line says how many were lost."""
    with open("/proc/sys/net/unix/max_dgram_qlen") as q:
        qlen = int(q.read())
    if qlen > 64:
        pytest.skip("net.unix.max_dgram_qlen=%d: too many lines to fill in a test" % qlen)
    path, rx, got, drain = _syslog_receiver(tmp_path)
    try:
        srv = make_server({"syslog_enable": True, "prefork_sessions": 4},
                          extra_env={"TW_TEST_SYSLOG_SOCKET": path})
        srv.put("s.txt", b"syslog\n")
        # Nobody reads: the sessions' OK LOGIN lines (their monitors') and
        # OK DOWNLOAD lines (the listener's, for logged-in sessions)
        # overfill the queue. A process that waited for room would stop
        # there, and a login or a transfer would time out here.
        for _ in range(qlen + 5):
            f = srv.ftp("alice")
            assert retr(f, "RETR s.txt")[0] == b"syslog\n"
            f.quit()
        first = drain()
        assert first.count("OK DOWNLOAD") < qlen + 5, first
        # Room again: the listener's next line says how many it lost.
        f = srv.ftp("alice")
        assert retr(f, "RETR s.txt")[0] == b"syslog\n"
        f.quit()
        wait_until(lambda: re.search(r"\] \d+ log lines lost: the syslog socket's queue was full",
                                     drain()), 10, what="the lost lines counted: %r" % got)
    finally:
        rx.close()


def test_syslog_gets_every_line(make_server, tmp_path):
    """syslog_enable=YES: login, transfer and failed-login lines of pre-forked
    sessions all reach the syslog socket (a listener on a private path;
    test builds let TW_TEST_SYSLOG_SOCKET name it)."""
    path, rx, got, drain = _syslog_receiver(tmp_path)
    try:
        srv = make_server({"syslog_enable": True, "prefork_sessions": 4},
                          extra_env={"TW_TEST_SYSLOG_SOCKET": path})
        srv.put("s.txt", b"syslog\n")
        for _ in range(3):      # sessions from the pool, one after another
            f = srv.ftp("alice")
            data, _, _ = retr(f, "RETR s.txt")
            assert data == b"syslog\n"
            f.quit()
            # Read as a daemon does: the socket's queue holds only
            # net.unix.max_dgram_qlen lines (10 here), and a line that
            # finds it full is lost.
            drain()
        f = srv.connect()
        with pytest.raises(ftplib.error_perm):
            f.login("alice", "wrong")
        f.close()

        def all_in():
            text = drain()
            return (len(re.findall(r'OK LOGIN: Client "127\.0\.0\.1", user "alice"', text)) == 3
                    and len(re.findall(r"s\.txt", text)) >= 3
                    and 'FAIL LOGIN: Client "127.0.0.1"' in text)
        wait_until(all_in, 10, what="every line in syslog: %r" % got)
        text = "\n".join(got)
        assert re.search(r"^<\d+>\w{3} [ \d]\d \d\d:\d\d:\d\d twinftpd\[\d+\]: \[pid \d+\] ",
                         text, re.M), text
        assert "Bad file descriptor" not in text
    finally:
        rx.close()


def test_fail2ban_filters_match_failed_logins(server):
    """fail2ban's stock vsftpd filter and etc/fail2ban's twinftpd filter
    both find the failed logins in twinftpd's log, and not the good ones."""
    fail2ban_regex = shutil.which("fail2ban-regex")
    assert fail2ban_regex, "fail2ban not installed (etc/install-deps.sh)"
    for _ in range(2):
        f = server.connect()
        with pytest.raises(ftplib.error_perm):
            f.login("bob", "wrong")
        f.close()
    server.ftp("alice").quit()
    server.wait_log(r"OK LOGIN")
    wait_until(lambda: server.log_text().count("FAIL LOGIN") == 2, 5, what="two FAIL LOGIN")
    ours = os.path.join(REPO, "etc", "fail2ban", "filter.d", "twinftpd.conf")
    for flt in ("/etc/fail2ban/filter.d/vsftpd.conf", ours):
        r = twhelpers.run([fail2ban_regex, server.log_path, flt])
        out = r.stdout.decode("utf-8", "replace")
        assert r.returncode == 0, out
        m = re.search(r"Lines: \d+ lines?, \d+ ignored, (\d+) matched", out)
        assert m and int(m.group(1)) == 2, (flt, out)
        assert "127.0.0.1" in out, out


# ------------------------------------------------------------ options

def test_dirmessage_shown_once_per_directory(make_server):
    srv = make_server({"dirmessage_enable": True})
    srv.mkdir("docs")
    srv.put("docs/.message", b"Welcome to docs\r\n\x1b[31mred\n")
    c = srv.ctrl()
    c.login("alice", PASSWORDS["alice"])
    rc_, lines = c.cmd("CWD docs")
    assert rc_ == 250
    assert lines[0] == b"250-Welcome to docs", lines
    assert lines[1] == b"250-?[31mred", lines
    assert lines[-1].startswith(b"250 "), lines
    c.cmd("CWD /")
    rc_, lines = c.cmd("CWD docs")
    assert rc_ == 250 and len(lines) == 1, lines
    c.close()


def test_dirmessage_at_login(make_server):
    """vsftpd shows the start directory's message with the login's 230;
    it counts as seen there."""
    srv = make_server({"dirmessage_enable": True})
    srv.put(".message", b"Welcome, alice.\nQuota: 1 GB\n")
    srv.mkdir("sub")
    c = srv.ctrl()
    assert c.cmd("USER alice")[0] == 331
    rc_, lines = c.cmd("PASS " + PASSWORDS["alice"])
    assert rc_ == 230, lines
    assert lines == [b"230-Welcome, alice.", b"230-Quota: 1 GB", b"230 Login successful."], lines
    assert c.cmd("CWD sub")[1] == [b"250 Directory successfully changed."]
    assert c.cmd("CWD /")[1] == [b"250 Directory successfully changed."]
    c.close()


def test_user_sub_token_and_missing_local_root(make_server):
    """local_root=/.../$USER with user_sub_token=$USER: each user's own
    directory; a user whose directory is missing is refused with 530 and
    the log names the directory (not OK LOGIN and a dropped connection)."""
    srv = make_server(start=False)
    base = os.path.join(srv.base, "ftproots")
    os.mkdir(base, 0o755)
    os.mkdir(os.path.join(base, "alice"), 0o755)
    os.chown(os.path.join(base, "alice"), twhelpers.USERS["alice"], twhelpers.USERS["alice"])
    with open(os.path.join(base, "alice", "mine.txt"), "wb") as fh:
        fh.write(b"alice's root\n")
    srv.opts.update({"local_root": base + "/$USER", "user_sub_token": "$USER"})
    srv.start()
    f = srv.ftp("alice")
    data, _, _ = retr(f, "RETR mine.txt")
    assert data == b"alice's root\n"
    f.quit()
    twhelpers.login_refused(srv, "bob")
    srv.wait_log(r"login of bob refused: its directory %s/bob: No such file"
                 % re.escape(base))
    assert 'OK LOGIN: Client "127.0.0.1", user "bob"' not in srv.log_text()


def test_missing_anon_root_refused_with_reason(make_server):
    """An anon_root gone after the start: the anonymous login gets 530 and
    the log names the directory (not OK LOGIN and a dropped connection)."""
    srv = make_server()
    gone = srv.anon_root + "-gone"
    os.rename(srv.anon_root, gone)
    try:
        twhelpers.login_refused(srv, "anonymous", "guest@example.org")
        srv.wait_log(r"login of anonymous refused: its directory %s: No such file"
                     % re.escape(srv.anon_root))
        assert "OK LOGIN" not in srv.log_text()
    finally:
        os.rename(gone, srv.anon_root)


XFERLOG_RE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                        r" [ \d]\d \d\d:\d\d:\d\d \d{4} (\d+) (\S+) (\d+) (\S+) ([ab]) ([CUT_]+)"
                        r" ([oid]) ([agr]) (\S+) (\S+) ([01]) (\S+) ([ci])$")


@pytest.mark.parametrize("dual", [False, True])
def test_xferlog_std_format(make_server, dual):
    """xferlog_std_format=YES: every transfer is one xferlog(5) line that
    parses with the format's expression; dual_log_enable keeps vsftpd's own
    line in log_file too. Both name the user and client the monitor knows."""
    srv = make_server(start=False)
    xferlog = os.path.join(srv.base, "xferlog")
    srv.opts.update({"xferlog_std_format": True, "xferlog_file": xferlog,
                     "dual_log_enable": dual})
    srv.start()
    srv.mkdir("in dir")
    srv.put("in dir/a file.bin", b"x" * 5000)
    f = srv.ftp("alice")
    f.cwd("in dir")
    data, _, _ = retr(f, "RETR a file.bin")
    assert len(data) == 5000
    twhelpers.stor(f, "STOR up.txt", b"y" * 123)
    f.sendcmd("TYPE A")
    twhelpers.stor(f, "STOR asc.txt", b"text\n")
    f.quit()
    lines = wait_until(lambda: (lambda t: t if len(t) == 3 else None)(
        open(xferlog).read().splitlines() if os.path.exists(xferlog) else []),
        10, what="three xferlog lines")
    parsed = [XFERLOG_RE.match(l) for l in lines]
    assert all(parsed), lines
    (t, host, size, name, typ, act, dirn, mode, user, svc, auth, uid, done) = \
        parsed[0].groups()[2:]
    assert (host, size, name, typ, dirn, mode, user, svc, done) == \
        ("127.0.0.1", "5000", "/in_dir/a_file.bin", "b", "o", "r", "alice", "ftp", "c")
    assert parsed[1].group(6) == "/in_dir/up.txt" and parsed[1].group(9) == "i"
    assert parsed[1].group(5) == "123"
    assert parsed[2].group(7) == "a"
    text = srv.log_text()
    vs = re.findall(r'OK (?:DOWNLOAD|UPLOAD): Client "127\.0\.0\.1", user "alice", '
                    r'"/in dir/[^"]+", \d+ bytes, [\d.]+Kbyte/sec', text)
    assert len(vs) == (3 if dual else 0), text
    # The transfer line and the login line come from one process: the
    # monitor's pid ties them together.
    if dual:
        login_pid = re.search(r'\[pid (\d+)\] \[monitor\] OK LOGIN', text).group(1)
        assert "[pid %s] [monitor] OK DOWNLOAD" % login_pid in text, text


def test_default_transfer_line_names_user_and_client(server):
    server.put("d.txt", b"z" * 100)
    f = server.ftp("alice")
    retr(f, "RETR d.txt")
    f.quit()
    server.wait_log(r'\[pid \d+\] \[monitor\] OK DOWNLOAD: Client "127\.0\.0\.1", '
                    r'user "alice", "/d\.txt", 100 bytes, [\d.]+Kbyte/sec')


def test_inetd_dual_stack_socket_pasv(make_server):
    """Under xinetd, systemd-socket-activate or twinftpd.socket the
    connection on stdin comes from a dual-stack socket, the IPv4 client as
    ::ffff:127.0.0.1: PASV answers 227 with its IPv4 address, the data
    connection works, and the log names it as IPv4 without the pool line
    of a standalone start."""
    srv = make_server({"listen": False, "listen_ipv6": False}, start=False)
    srv.put("i.txt", b"inetd dual stack\n")
    lsock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    lsock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    lsock.bind(("::", 0))
    lsock.listen(1)
    port = lsock.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port), timeout=twhelpers.TIMEOUT)
    conn, peer = lsock.accept()
    lsock.close()
    assert peer[0].startswith("::ffff:"), peer
    try:
        srv.write_config()
        srv._out = open(srv.stdout_path, "wb")
        srv._err = open(srv.stderr_path, "wb")
        srv.proc = subprocess.Popen(
            [sys.executable, "-c", twhelpers._FD_PAD_LAUNCHER, TWINFTPD, srv.conf_path],
            env=srv.env(), stdin=conn, stdout=srv._out, stderr=srv._err, close_fds=True)
        conn.close()
        f = twhelpers.ftp_on_socket(client)
        f.login("alice", PASSWORDS["alice"])
        resp = f.sendcmd("PASV")
        assert resp.startswith("227"), resp
        assert ftplib.parse227(resp)[0] == "127.0.0.1", resp
        data_port = ftplib.parse227(resp)[1]
        d = socket.create_connection(("127.0.0.1", data_port), twhelpers.TIMEOUT)
        f.sendcmd("RETR i.txt")
        got = twhelpers.recv_all(d)
        d.close()
        assert got == b"inetd dual stack\n"
        assert f.voidresp().startswith("226")
        assert code(f.quit()) == 221
        assert srv.proc.wait(timeout=10) == 0
        srv._out.close()
        srv._err.close()
        srv.proc = None
        log = srv.log_text()
        assert 'OK LOGIN: Client "127.0.0.1", user "alice"' in log, log
        assert "pool of" not in log, log
    finally:
        client.close()


def test_banner_file_greets(make_server):
    srv = make_server(start=False)
    banner = os.path.join(srv.etc, "banner")
    with open(banner, "wb") as fh:
        fh.write(b"Authorised use only.\r\nSecond \x07line\n")
    srv.opts["banner_file"] = banner
    srv.start()
    c = srv.ctrl(greet=False)
    rc_, lines = c.reply()
    assert rc_ == 220
    assert lines == [b"220-Authorised use only.", b"220-Second ?line", b"220 "], lines
    c.close()


def test_cmds_allowed_and_denied(make_server):
    srv = make_server({"cmds_allowed": "PWD,CWD,DELE,QUIT,SITE", "cmds_denied": "DELE"})
    srv.put("keep.txt", b"k")
    c = srv.ctrl()
    c.login("alice", PASSWORDS["alice"])     # USER/PASS: before login, not listed
    assert c.cmd("PWD")[0] == 257
    assert c.cmd("MKD x")[0] == 550
    assert c.cmd("DELE keep.txt")[0] == 550
    assert os.path.exists(srv.path("keep.txt"))
    assert c.cmd("QUIT")[0] == 221
    c.close()


def test_chmod_enable_no(make_server):
    srv = make_server({"chmod_enable": False})
    p = srv.put("m.txt", b"m", mode=0o644)
    c = srv.ctrl()
    c.login("alice", PASSWORDS["alice"])
    assert c.cmd("SITE CHMOD 600 m.txt")[0] == 550
    assert os.stat(p).st_mode & 0o777 == 0o644
    c.close()


def test_anon_world_readable_only(make_server):
    srv = make_server()
    for name, mode in (("open.txt", 0o644), ("closed.txt", 0o640)):
        p = os.path.join(srv.anon_root, "pub", name)
        with open(p, "wb") as fh:
            fh.write(b"anon\n")
        os.chmod(p, mode)
        # ftp_username's own file: readable by it, but not by everybody.
        os.chown(p, twhelpers.USERS["twftp"], twhelpers.USERS["twftp"])
    f = srv.ftp("anonymous")
    assert retr(f, "RETR pub/open.txt")[0] == b"anon\n"
    with pytest.raises(ftplib.error_perm) as e:
        retr(f, "RETR pub/closed.txt")
    assert str(e.value).startswith("550")
    f.quit()


# ------------------------------------------------------------ user lists

@pytest.mark.parametrize("deny", [True, False])
def test_unreadable_userlist_refuses_everyone(make_server, deny):
    """A userlist_file that cannot be read refuses every login at USER and
    closes (vsftpd: "500 OOPS: cannot read user list file"), in deny mode
    too: an empty list there would let root in. -t names it; the log says
    why. Once the file is there, logins work again without a restart."""
    srv = make_server(start=False)
    ulist = os.path.join(srv.etc, "user_list")
    srv.opts.update({"userlist_enable": True, "userlist_deny": deny, "userlist_file": ulist})
    srv.write_config()
    r, _, err = _check(srv.conf_path)
    assert r.returncode == 1 and "userlist_file: file %s: No such file" % ulist in err, err
    srv.start()
    for user in ("alice", "anonymous"):
        c = srv.ctrl()
        rc_, lines = c.cmd("USER " + user)
        assert rc_ == 421, lines
        assert c.closed_within(10)
        c.close()
    srv.wait_log(r"cannot read userlist_file %s: No such file or directory; every login "
                 r"is refused" % re.escape(ulist))
    assert "OK LOGIN" not in srv.log_text()
    with open(ulist, "w") as fh:
        fh.write("bob\n" if deny else "alice\n")
    f = srv.ftp("alice")
    assert code(f.sendcmd("NOOP")) == 200
    f.quit()


def _userlist_server(make_server, names, max_login_fails):
    """A server whose userlist_file (deny list) holds names."""
    srv = make_server(start=False)
    ulist = os.path.join(srv.etc, "user_list")
    with open(ulist, "w") as fh:
        fh.write(names)
    srv.opts.update({"userlist_enable": True, "userlist_file": ulist,
                     "max_login_fails": max_login_fails})
    srv.start()
    return srv


def test_userlist_refusals_count_as_failed_logins(make_server):
    """Each name the list refuses is a failed login (as in vsftpd):
    max_login_fails of them close the session."""
    srv = _userlist_server(make_server, "root\nbob\nftp\nanonymous\n", 2)
    c = srv.ctrl()
    assert c.cmd("USER anonymous")[0] == 530     # the list holds anonymous names too
    rc_, lines = c.cmd("USER root")
    assert rc_ == 530, lines
    assert c.closed_within(10)
    c.close()


def test_userlist_refusals_and_a_wrong_password_close_as_a_client_would(make_server):
    """Refusals by the list and a wrong password count together: the
    failure that reaches max_login_fails is answered 530 and closes the
    session (as vsftpd), whichever kind it is. The session ends as a
    client's, not as a worker that broke the rules."""
    srv = _userlist_server(make_server, "root\nbob\n", 3)
    c = srv.ctrl()
    assert c.cmd("USER root")[0] == 530
    assert c.cmd("USER bob")[0] == 530
    assert c.cmd("USER alice")[0] == 331
    rc_, lines = c.cmd("PASS wrong-pw")
    assert rc_ == 530, lines
    assert c.closed_within(10)
    c.close()
    # Three failures, none of them a rule broken by the worker.
    srv.wait_log(r'FAIL LOGIN: Client "127\.0\.0\.1", user "alice"')
    assert "max_login_fails" not in srv.log_text(), srv.log_text()
    f = srv.ftp("alice")
    assert code(f.sendcmd("NOOP")) == 200
    f.quit()


def test_unreadable_chroot_list_refuses_login(make_server):
    """chroot_list_file that cannot be read: the login is refused and the log
    says which file, rather than deciding the user's jail without it."""
    srv = make_server(start=False)
    clist = os.path.join(srv.etc, "chroot_list")
    srv.opts.update({"chroot_local_user": False, "chroot_list_enable": True,
                     "chroot_list_file": clist})
    srv.start()
    twhelpers.login_refused(srv, "alice")
    srv.wait_log(r"login of alice refused: chroot_list_file %s: No such file"
                 % re.escape(clist))


# ------------------------------------------------------------ ls -R

def _tree(srv):
    for d in ("a", "a/b", "a/b/c", ".hid", "secret", "z"):
        srv.mkdir(d)
    for f in ("top.txt", "a/one.txt", "a/b/two.txt", "a/b/c/three.txt", ".hid/h.txt",
              "secret/s.txt", "z/last.txt"):
        srv.put(f, b"x")
    os.symlink("a", srv.path("link-to-a"))      # a loop's way in: not followed


def test_ls_recurse(make_server):
    """ls_recurse_enable=YES: LIST -R and NLST -R list each subdirectory under
    a "path:" line after a blank one, as vsftpd; links are not followed, dot
    directories only with -a, deny_file's directories not entered."""
    srv = make_server({"ls_recurse_enable": True, "deny_file": "{secret}"})
    _tree(srv)
    f = srv.ftp("alice")
    data, _, final = retr(f, "NLST -R")
    assert final.startswith("226"), final
    assert data.decode().split("\r\n") == [
        ".:", "a", "link-to-a", "secret", "top.txt", "z", "",
        "./a:", "b", "one.txt", "",
        "./a/b:", "c", "two.txt", "",
        "./a/b/c:", "three.txt", "",
        "./z:", "last.txt", ""], data
    data, _, _ = retr(f, "LIST -aR a")
    lines = data.decode().split("\r\n")
    assert lines[0] == "a:" and "a/b:" in lines and "a/b/c:" in lines, lines
    uid = twhelpers.USERS["alice"]
    assert re.match(r"^drwxr-xr-x +3 %d +%d +\d+ .* b$" % (uid, uid), lines[1]), lines
    assert re.match(r"^-rw-r--r-- +1 %d +%d +1 .* one\.txt$" % (uid, uid), lines[2]), lines
    data, _, _ = retr(f, "LIST -aR")
    assert "./.hid:" in data.decode() and "./link-to-a:" not in data.decode(), data
    # STAT -R over the control connection.
    c = srv.ctrl()
    c.login("alice", PASSWORDS["alice"])
    rc_, lines = c.cmd("STAT -R a/b")
    assert rc_ == 213 and lines[-1] == b"213 End of status", lines
    assert any(l.strip() == b"a/b/c:" for l in lines), lines
    c.close()
    f.quit()


def _listed_names(f, cmd):
    data, _, final = retr(f, cmd)
    assert final.startswith("226"), final
    lines = [l for l in data.decode().split("\r\n") if l]
    if cmd.startswith("LIST"):
        return sorted(l.split()[-1] for l in lines)
    return sorted(lines)


def test_force_dot_files(make_server):
    """force_dot_files=YES: LIST, NLST and STAT show names that start with a
    dot without -a (never . and ..), hide_file still hides; without it only
    -a shows them; a per-user file can set it for one user."""
    srv = make_server({"force_dot_files": True, "hide_file": "{.private}"})
    for u in ("alice", "bob"):
        for name in ("plain.txt", ".profile", ".private", ".dir/x"):
            srv.put(name, b"x", user=u)
    want = [".dir", ".profile", "plain.txt"]
    f = srv.ftp("alice")
    assert _listed_names(f, "NLST") == want
    assert _listed_names(f, "LIST") == want
    assert _listed_names(f, "LIST -a") == want
    c = srv.ctrl()
    c.login("alice", PASSWORDS["alice"])
    rc_, lines = c.cmd("STAT .")
    assert rc_ == 213 and any(l.endswith(b" .profile") for l in lines), lines
    c.close()
    f.quit()
    srv.stop()

    srv.opts["force_dot_files"] = False
    conf = os.path.join(srv.base, "userconf")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "bob"), "w") as fh:
        fh.write("force_dot_files=YES\n")
    srv.opts["user_config_dir"] = conf
    srv.start()
    f = srv.ftp("alice")
    assert _listed_names(f, "NLST") == ["plain.txt"]
    assert _listed_names(f, "LIST") == ["plain.txt"]
    assert _listed_names(f, "NLST -a") == want
    f.quit()
    f = srv.ftp("bob")
    assert _listed_names(f, "NLST") == want
    f.quit()


def test_tcp_wrappers(make_server, tmp_path):
    """tcp_wrappers=YES: hosts.allow and hosts.deny (here files the test
    names, through a test build's hook) decide for each connection, read
    anew each time: a refused client gets 421 before any greeting; allow
    and deny options work; spawn runs nothing; a rule that names vsftpd
    alone is not applied and -t names its line; with tcp_wrappers=NO the
    tables decide nothing."""
    allow, deny = tmp_path / "hosts.allow", tmp_path / "hosts.deny"
    marker = tmp_path / "spawned"
    allow.write_text("")
    deny.write_text("twinftpd: %s\n" % twhelpers.HOST)
    srv = make_server({"tcp_wrappers": True},
                      extra_env={"TW_TEST_HOSTS_ALLOW": str(allow),
                                 "TW_TEST_HOSTS_DENY": str(deny)})
    assert twhelpers.sent_before_close(srv) == b"421 Service not available.\r\n"
    srv.wait_log(r'tcp_wrappers: refused Client "%s"' % re.escape(twhelpers.HOST))

    allow.write_text("twinftpd: %s : spawn /bin/touch %s\n" % (twhelpers.HOST, marker))
    deny.write_text("ALL: ALL\n")
    f = srv.ftp("alice")
    assert f.pwd() == "/"
    f.quit()
    assert not marker.exists()

    allow.write_text("twinftpd: ALL EXCEPT %s : allow\ntwinftpd: ALL : deny\n"
                     % twhelpers.HOST)
    deny.write_text("")
    assert twhelpers.sent_before_close(srv) == b"421 Service not available.\r\n"

    allow.write_text("# vsftpd's\nvsftpd: %s\n" % twhelpers.HOST)
    deny.write_text("ALL: ALL\n")
    assert twhelpers.sent_before_close(srv) == b"421 Service not available.\r\n"
    r, _, err = twhelpers.check_config(srv.conf_path, env=srv.env())
    assert r.returncode == 0, err
    assert "tcp_wrappers: %s:2 names the daemon vsftpd" % allow in err, err
    srv.stop()

    srv.opts["tcp_wrappers"] = False
    srv.start()
    f = srv.ftp("alice")
    f.quit()
    # libwrap is not linked: a server without tcp_wrappers never maps it,
    # and a reload that turns it on opens it for the sessions after it.
    assert not _maps_libwrap(srv.pid)
    srv.opts["tcp_wrappers"] = True
    srv.write_config()
    assert "reload done" in twhelpers.reload_and_wait(srv)
    assert _maps_libwrap(srv.pid)
    assert twhelpers.sent_before_close(srv) == b"421 Service not available.\r\n"
    # libwrap's answer, not a refusal for want of it: a rule lets in.
    allow.write_text("twinftpd: %s\n" % twhelpers.HOST)
    f = srv.ftp("alice")
    assert f.pwd() == "/"
    f.quit()
    assert "libwrap is not loaded" not in srv.log_text()


def _maps_libwrap(pid):
    with open("/proc/%d/maps" % pid) as fh:
        return "/libwrap.so" in fh.read()


def test_tcp_wrappers_without_libwrap(make_server, tmp_path, certs):
    """tcp_wrappers=YES where libwrap cannot be opened (a test build's hook
    names a file that is not there): the start fails and says why, and -t
    reports it as an error. Without tcp_wrappers the same server starts and
    serves; a reload that turns it on is refused, and the sessions after it
    go on under the old configuration, FTPS included: the same reload
    turning ssl_enable off does not take the TLS context with it."""
    missing = str(tmp_path / "libwrap-missing.so.0")
    why = "tcp_wrappers=YES needs libwrap (%s" % missing
    srv = make_server(twcerts.tls_opts(certs, tcp_wrappers=True, force_local_logins_ssl=False,
                                      force_local_data_ssl=False), start=False,
                      extra_env={"TW_TEST_LIBWRAP": missing})
    with pytest.raises(AssertionError, match="exited with 1 before listening"):
        srv.start()
    assert srv.stop(exited=True) == ["listener exited with 1"]
    with open(srv.stderr_path) as fh:
        assert why in fh.read()
    r, _, err = twhelpers.check_config(srv.conf_path, env=srv.env())
    assert r.returncode != 0 and why in err, err

    srv.opts["tcp_wrappers"] = False
    srv.start()
    f = srv.ftp("alice")
    f.quit()
    srv.opts.update({"tcp_wrappers": True, "ssl_enable": False})
    srv.write_config()
    line = twhelpers.reload_and_wait(srv)
    assert "reload refused" in line and why in line, line
    assert not _maps_libwrap(srv.pid)
    f = srv.ftp("alice")
    assert f.pwd() == "/"
    f.quit()
    f = twhelpers.ReuseFTP_TLS(context=twhelpers.client_context(), timeout=twhelpers.TIMEOUT)
    f.connect(twhelpers.HOST, srv.port)
    assert f.auth().startswith("234")
    f.login("alice", PASSWORDS["alice"])
    assert f.pwd() == "/"
    f.quit()


def test_anonymous_email_lists(make_server):
    """deny_email_enable: an anonymous password listed in banned_email_file
    gets 530, others log in; secure_email_list_enable: only a password of
    email_password_file logs in. The password never reaches the log. A
    list that cannot be read refuses every anonymous login, and -t says
    which file is missing."""
    srv = make_server(start=False)
    banned, secure = os.path.join(srv.etc, "banned"), os.path.join(srv.etc, "secure")
    with open(banned, "w") as fh:
        fh.write("# harvesters\nspam@example.com  \n")
    with open(secure, "w") as fh:
        fh.write("letmein\nspam@example.com\n")
    srv.opts.update({"deny_email_enable": True, "banned_email_file": banned})
    srv.start()

    def anon(password):
        f = srv.connect()
        try:
            f.login("anonymous", password)
            return f.quit()[:3]
        except ftplib.Error as e:
            f.close()
            return str(e)[:3]

    assert anon("spam@example.com") == "530"
    assert anon("me@example.org") == "221"
    srv.wait_log(r"anonymous login refused: its password is listed in banned_email_file")
    srv.stop()
    srv.opts.update({"secure_email_list_enable": True, "email_password_file": secure})
    srv.start()
    assert anon("letmein") == "221"
    assert anon("me@example.org") == "530"
    assert anon("spam@example.com") == "530"
    srv.ftp("alice").quit()             # local logins are not anonymous ones
    srv.wait_log(r"its password is not listed in email_password_file")
    assert "letmein" not in srv.log_text() and "spam@" not in srv.log_text()
    os.unlink(secure)
    assert anon("letmein") in ("421", "530")
    srv.wait_log(r"cannot read email_password_file %s" % re.escape(secure))
    r, _, err = _check(srv.conf_path)
    assert "email_password_file: file %s" % secure in err, err


def test_ls_recurse_off_ignores_R(make_server):
    srv = make_server()
    _tree(srv)
    f = srv.ftp("alice")
    plain, _, _ = retr(f, "NLST")
    rec, _, _ = retr(f, "NLST -R")
    assert plain == rec and b"one.txt" not in rec, rec
    f.quit()


def test_ls_recurse_bounded(make_server):
    """A recursive listing stops at 32 levels and at 50000 entries, answers
    451 (the listing so far came through) and logs it."""
    srv = make_server({"ls_recurse_enable": True})
    deep = srv.home("alice")
    for i in range(40):
        deep = os.path.join(deep, "d%d" % i)
        os.mkdir(deep)
    f = srv.ftp("alice")

    def cut_listing(cmd):
        conn, _ = twhelpers.open_data(f, cmd)
        data = twhelpers.recv_all(conn)
        conn.close()
        with pytest.raises(ftplib.error_temp) as e:
            f.voidresp()
        assert str(e.value).startswith("451 Recursive listing stopped"), e.value
        return data.decode().split("\r\n")

    heads = [n for n in cut_listing("NLST -R d0") if n.endswith(":")]
    # d0 and 32 levels below it, nothing deeper.
    assert len(heads) == 33 and heads[-1] == "/".join("d%d" % i for i in range(33)) + ":"
    srv.wait_log(r"recursive listing of d0 stopped at its bound")
    many = srv.mkdir("many")
    for i in range(50010):
        open(os.path.join(many, "f%05d" % i), "wb").close()
    names = cut_listing("NLST -R many")
    assert names[0] == "many:" and len([n for n in names if n.startswith("f")]) == 50000
    f.quit()


# ------------------------------------------------------------ text_userdb_names

def test_text_userdb_names(make_server):
    """text_userdb_names=YES: owners and groups by name in a chrooted
    session (the listener's table, inherited: the session cannot read the
    user database), numbers for ids the database lacks; a user added later
    is named after a reload. The default (NO) shows numbers, as vsftpd."""
    srv = make_server({"text_userdb_names": True, "prefork_sessions": 2})
    srv.put("mine.txt", b"m")
    os.chown(srv.put("orphan.txt", b"o"), 4242, 4242)
    os.chown(srv.put("later.txt", b"l"), 60200, 60200)

    def listing():
        f = srv.ftp("alice")
        data, _, _ = retr(f, "LIST")
        f.quit()
        return data

    data = listing()
    assert re.search(rb"\n-rw-r--r-- +1 alice +alice +1 .* mine\.txt\r", b"\n" + data), data
    assert re.search(rb" 4242 +4242 +1 .* orphan\.txt", data), data
    assert re.search(rb" 60200 +60200 +1 .* later\.txt", data), data
    with open(srv.passwd_path, "a") as fh:
        fh.write("carol:x:60200:60200:carol:/nonexistent:/bin/sh\n")
    with open(srv.group_path, "a") as fh:
        fh.write("carols:x:60200:\n")
    # nss_wrapper re-reads a file whose mtime changed, in whole seconds.
    later = time.time() + 5
    for p in (srv.passwd_path, srv.group_path):
        os.utime(p, (later, later))
    assert "reload done" in reload_and_wait(srv)
    data = listing()
    assert re.search(rb" carol +carols +1 .* later\.txt", data), data
    assert re.search(rb" alice +alice +1 .* mine\.txt", data), data
