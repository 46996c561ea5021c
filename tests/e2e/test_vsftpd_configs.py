"""Seven vsftpd.conf files as operators have them (tests/vsftpd/README says
where each comes from): each passes `twinftpd -t`, starts, and serves a
client session the way the file intends. The test changes only what
points into its own world, and says so in one place (_world): file and
directory paths, the ports, the PAM service and the users of the test's
user database. Every other line is the file's."""

import ftplib
import io
import os
import re

import pytest

import twhelpers
from twhelpers import HOST, PASSWORDS, code, retr, stor, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "vsftpd"))

OPTION_RE = re.compile(r"^([A-Za-z0-9_]+)=(.*)$")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def _world(srv, **more):
    """The options that point into the test's world, and nothing else."""
    w = {
        "listen_port": srv.port,
        "pasv_min_port": srv.pasv_ports[0],
        "pasv_max_port": srv.pasv_ports[-1],
        "secure_chroot_dir": srv.empty,
        "pam_service_name": srv.service,
        "nopriv_user": "twnopriv",      # nss_wrapper's users, not the system's
        "log_file": srv.log_path,
    }
    w.update(more)
    return w


def rewrite(text, world):
    """text with the value of every option in world replaced where the file
    sets it, and appended (after a comment) where it relies on a default."""
    out, seen = [], set()
    for line in text.splitlines():
        m = OPTION_RE.match(line)
        if m and m.group(1) in world:
            seen.add(m.group(1))
            line = "%s=%s" % (m.group(1), twhelpers._yesno(world[m.group(1)]))
        out.append(line)
    out.append("# the test's world (paths, ports, users), where the file has defaults")
    out += ["%s=%s" % (k, twhelpers._yesno(v)) for k, v in world.items() if k not in seen]
    return "\n".join(out) + "\n"


def changed_lines(original, rewritten):
    """Option names whose lines differ: the rewrite touches only the world."""
    def opts(t):
        return {m.group(1): m.group(2) for m in map(OPTION_RE.match, t.splitlines()) if m}
    a, b = opts(original), opts(rewritten)
    return {k for k in b if a.get(k) != b[k]}


def check_and_start(srv, name, world, ready=None):
    """-t on the rewritten file (exit 0), then a real start with it."""
    original = fixture(name)
    text = rewrite(original, world)
    assert changed_lines(original, text) <= set(world), changed_lines(original, text)
    with open(srv.conf_path, "w") as f:
        f.write(text)
    r, out, err = twhelpers.check_config(srv.conf_path, env=srv.env())
    assert r.returncode == 0, err
    assert "problem" not in err, err
    srv.write_config = lambda: None      # the file just checked is the one started
    srv.start(ready)
    return out, err


def user_refused_at_user(srv, user):
    """USER alone is answered 530: no password is asked for."""
    c = srv.ctrl()
    rc_, lines = c.cmd("USER " + user)
    assert rc_ == 530 and lines[-1] == b"530 Permission denied.", lines
    rc_, lines = c.cmd("PASS whatever")
    assert rc_ == 503, lines            # the refused name is forgotten
    c.close()


# ------------------------------------------------------------ RHEL

def test_rhel_local_users_chroot(make_server):
    """RHEL's file plus the tutorial's chroot and passive range: one
    dual-stack socket (listen=NO, listen_ipv6=YES), user_list in deny mode
    at vsftpd's RHEL path (here a file of the test's), local users jailed,
    uploads with umask 022, xferlog(5) lines."""
    srv = make_server(start=False)
    ulist = os.path.join(srv.etc, "user_list")
    with open(ulist, "w") as f:
        f.write("# vsftpd userlist\nroot\nbin\nbob\n")
    xferlog = os.path.join(srv.base, "xferlog")
    srv.put("report.txt", b"quarterly\n")
    check_and_start(srv, "rhel-local-chroot.conf",
                    _world(srv, userlist_file=ulist, xferlog_file=xferlog),
                    ready=lambda: twhelpers.port_listening6(srv.port))
    user_refused_at_user(srv, "bob")
    f = srv.ftp("alice")
    assert twhelpers.pwd_of(f.sendcmd("PWD")) == "/"
    listing, _, _ = retr(f, "LIST")
    assert b"report.txt" in listing
    assert retr(f, "RETR report.txt")[0] == b"quarterly\n"
    stor(f, "STOR up.bin", b"u" * 1000)
    f.quit()
    st = os.stat(srv.path("up.bin"))
    assert st.st_uid == twhelpers.USERS["alice"] and st.st_mode & 0o777 == 0o644
    lines = wait_until(lambda: (lambda t: t if len(t) == 2 else None)(
        open(xferlog).read().splitlines() if os.path.exists(xferlog) else []),
        10, what="two xferlog lines")
    assert " alice ftp 0 * c" in lines[1] and "/up.bin" in lines[1], lines


def test_centos7_file_with_tcp_wrappers(make_server, tmp_path):
    """CentOS 7's file: anonymous and local logins on one dual-stack
    socket, and tcp_wrappers=YES: hosts.allow and hosts.deny (files of the
    test's, through a test build's hook) let 127.0.0.1 in or keep it out."""
    allow, deny = tmp_path / "hosts.allow", tmp_path / "hosts.deny"
    allow.write_text("twinftpd: %s\n" % HOST)
    deny.write_text("ALL: ALL\n")
    srv = make_server(start=False, extra_env={"TW_TEST_HOSTS_ALLOW": str(allow),
                                              "TW_TEST_HOSTS_DENY": str(deny)})
    ulist = os.path.join(srv.etc, "user_list")
    with open(ulist, "w") as f:
        f.write("root\nbob\n")
    check_and_start(srv, "centos7-vsftpd.conf",
                    _world(srv, userlist_file=ulist, ftp_username="twftp",
                           anon_root=srv.anon_root,
                           xferlog_file=os.path.join(srv.base, "xferlog")),
                    ready=lambda: twhelpers.port_listening6(srv.port))
    a = srv.ftp("anonymous")
    assert retr(a, "RETR pub/readme.txt")[0] == b"anonymous readme\n"
    a.quit()
    user_refused_at_user(srv, "bob")
    f = srv.ftp("alice")
    stor(f, "STOR up.txt", b"up")
    f.quit()
    allow.write_text("")
    assert twhelpers.sent_before_close(srv) == b"421 Service not available.\r\n"


def test_rhel_file_relies_on_vsftpd_list_name(make_server, tmp_path):
    """RHEL's file turns userlist_enable on and names no file: vsftpd reads
    /etc/vsftpd/user_list. With no list of twinftpd's own, twinftpd reads
    that one (the list the file meant: root refused at USER, others asked
    for a password), and -t and the start's log say so and which line
    would choose. When twinftpd's own list exists, it is the one read,
    and the warning names vsftpd's."""
    made_dir = not os.path.exists("/etc/vsftpd")
    rhel_list = "/etc/vsftpd/user_list"
    made_file = not os.path.exists(rhel_list)
    try:
        if made_dir:
            os.mkdir("/etc/vsftpd", 0o755)
        if made_file:
            with open(rhel_list, "w") as f:
                f.write("root\nbob\n")
        conf = tmp_path / "vsftpd.conf"
        conf.write_text(fixture("rhel-local-chroot.conf"))
        r, _, err = twhelpers.check_config(str(conf))
        assert "userlist_file: file" not in err, err
        # (An installed twinftpd may ship its own list; then that one is read.)
        ours_missing = not os.path.exists("/etc/twinftpd.user_list")
        if ours_missing:
            warning = ("userlist_file: twinftpd's /etc/twinftpd.user_list does not "
                       "exist; vsftpd's %s is read instead (set userlist_file to "
                       "silence this)" % rhel_list)
        else:
            warning = ("userlist_file is twinftpd's /etc/twinftpd.user_list, not "
                       "vsftpd's %s (which exists too): to use that list instead, "
                       "set userlist_file=%s" % (rhel_list, rhel_list))
        assert "warning: " + warning in err, err
        srv = make_server({"userlist_enable": True})
        srv.wait_log(re.escape(warning))
        if made_file and ours_missing:
            user_refused_at_user(srv, "bob")     # listed in vsftpd's file
            f = srv.ftp("alice")                 # not listed
            assert twhelpers.pwd_of(f.sendcmd("PWD")) is not None
            f.quit()
    finally:
        if made_file:
            os.unlink(rhel_list)
        if made_dir:
            os.rmdir("/etc/vsftpd")


# ------------------------------------------------------------ Ubuntu

def test_ubuntu_userlist_allow_and_user_root(make_server):
    """The Ubuntu tutorial: userlist_deny=NO (only the listed users),
    local_root=/home/$USER/ftp with user_sub_token, the jail read-only and
    files/ the user's."""
    srv = make_server(start=False)
    ulist = os.path.join(srv.etc, "vsftpd.userlist")
    with open(ulist, "w") as f:
        f.write("alice\n")
    ftproot = os.path.join(srv.homes["alice"], "ftp")
    os.mkdir(ftproot, 0o555)             # chown nobody:nogroup; chmod a-w
    os.mkdir(os.path.join(ftproot, "files"), 0o755)
    os.chown(os.path.join(ftproot, "files"), twhelpers.USERS["alice"],
             twhelpers.USERS["alice"])
    with open(os.path.join(ftproot, "files", "test.txt"), "wb") as fh:
        fh.write(b"vsftpd test file\n")
    check_and_start(srv, "ubuntu-userlist.conf",
                    _world(srv, userlist_file=ulist,
                           local_root=os.path.join(srv.base, "home", "$USER", "ftp")),
                    ready=lambda: twhelpers.port_listening6(srv.port))
    user_refused_at_user(srv, "bob")      # not in the list
    f = srv.ftp("alice")
    assert twhelpers.pwd_of(f.sendcmd("PWD")) == "/"
    assert "files" in f.nlst()
    f.cwd("files")
    assert retr(f, "RETR test.txt")[0] == b"vsftpd test file\n"
    stor(f, "STOR new.txt", b"uploaded\n")
    with pytest.raises(ftplib.error_perm):
        stor(f, "STOR /top.txt", b"no\n")    # the jail itself is not writable
    f.quit()
    assert open(os.path.join(ftproot, "files", "new.txt"), "rb").read() == b"uploaded\n"


# ------------------------------------------------------------ FTPS behind NAT

def test_ftps_behind_nat(make_server, tmp_path):
    """Forced explicit FTPS for local users, the public address in 227
    (pasv_address, pasv_addr_resolve=NO), require_ssl_reuse=NO so that a
    client that does not resume works, ssl_tlsv1=YES accepted (TLS 1.2 and
    1.3 only are offered)."""
    from twcerts import make_cert
    cert, key, _ = make_cert(str(tmp_path), "vsftpd")
    pem = os.path.join(str(tmp_path), "vsftpd.pem")
    with open(pem, "wb") as out:
        for p in (cert, key):
            out.write(open(p, "rb").read())
    os.chmod(pem, 0o600)
    srv = make_server(start=False)
    srv.put("secure.txt", b"over TLS\n")
    _, err = check_and_start(srv, "ftps-nat.conf",
                             _world(srv, rsa_cert_file=pem, rsa_private_key_file=pem))
    assert "ssl_tlsv1" in err, err        # said to be ignored
    # In the clear, a local user is refused before the password.
    c = srv.ctrl()
    rc_, lines = c.cmd("USER alice")
    assert rc_ == 530, lines
    c.close()
    # The stock FTP_TLS client: no session resumption on data connections.
    f = ftplib.FTP_TLS(context=twhelpers.client_context(), timeout=twhelpers.TIMEOUT)
    f.connect(HOST, srv.port)
    f.auth()
    f.login("alice", PASSWORDS["alice"])
    resp = f.sendcmd("PASV")
    assert ftplib.parse227(resp)[0] == "203.0.113.10", resp
    # Without PROT P data connections are refused (force_local_data_ssl).
    with pytest.raises(ftplib.error_perm):
        f.retrbinary("RETR secure.txt", lambda b: None)
    f.prot_p()
    out = io.BytesIO()
    # ftplib connects to the control connection's host, as a client behind
    # the NAT's hairpin would, whatever 227 names.
    f.retrbinary("RETR secure.txt", out.write)
    assert out.getvalue() == b"over TLS\n"
    f.storbinary("STOR tls-up.bin", io.BytesIO(b"t" * 4096))
    assert "tls-up.bin" in f.nlst()
    f.quit()
    assert srv.read("tls-up.bin") == b"t" * 4096


# ------------------------------------------------------------ virtual users (Docker)

def test_docker_virtual_users(make_server):
    """The Docker images' virtual users: names and passwords only in the PAM
    service's database (here pam_matrix's), every one mapped to
    guest_username with local users' rights (virtual_use_local_privs),
    each in /home/vsftpd/<name>, ids hidden, xferlog(5) lines."""
    srv = make_server(start=False)
    vhome = os.path.join(srv.base, "vsftpd")
    os.mkdir(vhome, 0o755)
    v = os.path.join(vhome, "vuser")
    os.mkdir(v, 0o755)
    os.chown(v, twhelpers.USERS["twftp"], twhelpers.USERS["twftp"])
    with open(os.path.join(v, "hello.txt"), "wb") as fh:
        fh.write(b"virtual\n")
    with open(srv.passdb_path, "a") as fh:
        fh.write("vuser:vuser-pw:%s\n" % srv.service)
    xferlog = os.path.join(srv.base, "xferlog")
    check_and_start(srv, "docker-virtual-users.conf",
                    _world(srv, local_root=os.path.join(vhome, "$USER"),
                           xferlog_file=xferlog, guest_username="twftp"))
    f = ftplib.FTP(timeout=twhelpers.TIMEOUT)
    f.connect(HOST, srv.port)
    f.login("vuser", "vuser-pw")
    listing, _, _ = retr(f, "LIST")
    assert re.search(rb" ftp +ftp .* hello\.txt", listing), listing
    assert retr(f, "RETR hello.txt")[0] == b"virtual\n"
    stor(f, "STOR up.txt", b"v\n")
    f.quit()
    assert os.stat(os.path.join(v, "up.txt")).st_uid == twhelpers.USERS["twftp"]
    wait_until(lambda: os.path.exists(xferlog) and " vuser ftp " in open(xferlog).read(),
               10, what="an xferlog line naming the virtual user")


# ------------------------------------------------------------ vsftpd's anonymous site

def test_internet_site_anonymous(make_server):
    """EXAMPLE/INTERNET_SITE_NOINETD: anonymous downloads only, ids hidden,
    world-readable files only, 4 sessions per address, a rate limit;
    one_process_model=YES and async_abor_enable accepted with a note."""
    srv = make_server(start=False)
    pub = os.path.join(srv.anon_root, "pub")
    data = os.urandom(20000)
    with open(os.path.join(pub, "release.tar"), "wb") as fh:
        fh.write(data)
    closed = os.path.join(pub, "private.txt")
    with open(closed, "wb") as fh:
        fh.write(b"not for the world\n")
    os.chmod(closed, 0o640)
    os.chown(closed, twhelpers.USERS["twftp"], twhelpers.USERS["twftp"])
    # ftp_username: vsftpd's default "ftp" is the test world's twftp.
    _, err = check_and_start(srv, "internet-site.conf", _world(srv, ftp_username="twftp"))
    assert re.search(r"note: .*one_process_model", err), err
    f = srv.ftp("anonymous")
    listing, _, _ = retr(f, "LIST pub")
    assert re.search(rb"ftp +ftp +20000 .* release\.tar", listing), listing
    assert retr(f, "RETR pub/release.tar")[0] == data
    with pytest.raises(ftplib.error_perm):
        retr(f, "RETR pub/private.txt")
    with pytest.raises(ftplib.error_perm):
        stor(f, "STOR pub/up.txt", b"x")
    # max_per_ip=4: this one and three more; the fifth gets 421.
    more = [srv.ftp("anonymous") for _ in range(3)]
    c = twhelpers.Ctrl(srv.port)
    rc_, lines = c.reply()
    assert rc_ == 421, lines
    c.close()
    for g in more + [f]:
        g.quit()
    # From another address: those four may still be counted until reaped.
    g = srv.connect(src=twhelpers.OTHER)
    with pytest.raises(ftplib.error_perm):
        g.login("alice", PASSWORDS["alice"])    # local_enable=NO
    g.close()


# ------------------------------------------------------------ UTF-8

def test_utf8_file_names(make_server):
    """utf8_filesystem=YES: UTF-8 names go up, are listed and come back as
    the same bytes; FEAT names UTF8 and OPTS UTF8 ON is accepted."""
    srv = make_server(start=False)
    check_and_start(srv, "utf8.conf", _world(srv))
    f = srv.ftp("alice")
    assert " UTF8" in f.sendcmd("FEAT")
    assert code(f.sendcmd("OPTS UTF8 ON")) == 200
    name = "Größe-日本語-файл.txt"
    stor(f, "STOR " + name, "ünïcödé\n".encode("utf-8"))
    assert name in f.nlst()
    listing, _, _ = retr(f, "LIST")
    assert name.encode("utf-8") in listing
    assert retr(f, "RETR " + name)[0] == "ünïcödé\n".encode("utf-8")
    f.mkd("Ordner-ü")
    f.cwd("Ordner-ü")
    assert twhelpers.pwd_of(f.sendcmd("PWD")) == "/Ordner-ü"
    f.quit()
    assert os.path.exists(os.path.join(srv.homes["alice"], name).encode("utf-8"))


# ------------------------------------------------------------ the wild

def test_anon_sample_lets_no_local_user_in(make_server):
    """vsftpd's sample file for an anonymous server, local_enable left
    commented out: anonymous downloads work, and a local user with the
    right password is refused, as under vsftpd (whose default is NO)."""
    srv = make_server(start=False)
    with open(os.path.join(srv.anon_root, "pub", "README"), "wb") as fh:
        fh.write(b"mirror\n")
    _, err = check_and_start(srv, "anon-sample.conf", _world(srv, ftp_username="twftp"))
    assert "local_enable is not set: local users cannot log in" in err, err
    c = twhelpers.Ctrl(srv.port)
    assert c.reply()[0] == 220
    assert c.cmd("USER alice")[0] == 331
    assert c.cmd("PASS " + PASSWORDS["alice"])[0] == 530
    c.close()
    f = srv.ftp("anonymous")
    assert f.getwelcome().startswith("220 Welcome to the mirror.")
    assert retr(f, "RETR pub/README")[0] == b"mirror\n"
    with pytest.raises(ftplib.error_perm):
        stor(f, "STOR pub/up.txt", b"x")
    f.quit()


def test_docker_quirks_start_as_under_vsftpd(make_server, tmp_path):
    """A Docker image's file with what vsftpd reads without complaint: a
    comment after a number, pam_service_name as a path, passive bounds the
    wrong way round, a host name in pasv_address without
    pasv_addr_resolve, syslog with no syslog daemon, seccomp_sandbox=NO.
    -t passes with notes and warnings; the server starts, keeps its
    filters, and serves."""
    sock = str(tmp_path / "no-syslogd.sock")           # nobody listens there
    srv = make_server(start=False, extra_env={"TW_TEST_SYSLOG_SOCKET": sock})
    lo, hi = srv.pasv_ports[0], srv.pasv_ports[-1]
    srv.put("hello.txt", b"hello\n")
    world = _world(srv, pam_service_name="/etc/pam.d/" + srv.service,
                   pasv_min_port=hi, pasv_max_port=lo, ftp_username="twftp",
                   anon_root=srv.anon_root)
    _, err = check_and_start(srv, "docker-quirks.conf", world,
                             ready=lambda: twhelpers.port_listening(srv.port))
    for said in ("option 'max_clients': the comment after '20' is ignored",
                 "pam_service_name /etc/pam.d/%s is a path: PAM uses the service %s"
                 % (srv.service, srv.service),
                 "PASV uses ports %d to %d" % (lo, hi),
                 "pasv_address localhost is a host name",
                 "seccomp_sandbox=NO turned off vsftpd's own filter",
                 "anonymous_enable is not set"):
        assert said in err, (said, err)
    # The start says so on stderr (no syslog to say it to).
    wait_until(lambda: "no syslog daemon listens on %s yet" % sock
               in open(srv.stderr_path, errors="replace").read(), 10,
               what="the syslog warning on stderr")
    f = srv.ftp("alice")
    resp = f.sendcmd("PASV")
    nums = [int(x) for x in re.search(r"\(([\d,]+)\)", resp).group(1).split(",")]
    assert nums[:4] == [127, 0, 0, 1] and lo <= nums[4] * 256 + nums[5] <= hi, resp
    assert retr(f, "RETR hello.txt")[0] == b"hello\n"
    stor(f, "STOR up.txt", b"up")
    f.quit()
    # seccomp_sandbox=NO: the listener and every session process filtered.
    with srv.ctrl() as c:
        c.login("alice", PASSWORDS["alice"])
        procs = [srv.pid] + [p for p, _ in twhelpers.descendants(srv.pid)]
        modes = {p: (twhelpers.proc_status(p) or {}).get("Seccomp") for p in procs}
        assert len(procs) > 2 and all(m in ("2", None) for m in modes.values()), modes

