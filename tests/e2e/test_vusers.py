"""Virtual users (guest_enable, guest_username, virtual_use_local_privs),
per-user options (user_config_dir) and chown_uploads, with vsftpd's
meanings, against the real daemon (privilege separation and seccomp on).

The virtual users here are names only pam_matrix knows: nss_wrapper's
passwd has no such user, as with pam_userdb or pam_pwdfile. One test runs
a real PAM module (pam_pwdfile) from a service file in /etc/pam.d."""

import ftplib
import os
import pwd
import re
import secrets
import shutil
import subprocess
import time

import pytest

import twhelpers
from twcerts import tls_opts
from twhelpers import (PASSWORDS, USERS, Ctrl, ReuseFTP_TLS, client_context, children,
                       login_refused, monitor_settled, proc_ids, proc_link, retr, stor,
                       wait_until)

GUEST = "bob"           # the account every virtual user runs as
VIRTUAL = {"virt1": "virt1-pw", "virt2": "virt2-pw"}


def add_virtual_users(srv, users):
    """Users pam_matrix accepts that the user database does not have."""
    with open(srv.passdb_path, "a") as f:
        for u, p in users.items():
            f.write("%s:%s:%s\n" % (u, p, srv.service))


def login(srv, user, password):
    f = srv.connect()
    f.login(user, password)
    return f


def session_procs(srv, f):
    """(monitor, worker) of the session of ftplib client f, once the
    worker runs as a user (not root)."""
    mon = srv.session_of(f.sock.getsockname()[1])

    def worker():
        ks = [k for k in children(mon) if (proc_ids(k, "Uid") or [0])[0] != 0]
        return ks[0] if len(ks) == 1 else None
    return mon, wait_until(worker, 10, what="the post-login worker")


def cap_eff(pid):
    return int(twhelpers.proc_status(pid)["CapEff"], 16)


CAP_CHOWN = 1 << 0


def guest_world(srv, names):
    """local_root=BASE/vroot/$USER with a directory per name, the guest's."""
    base = os.path.join(srv.base, "vroot")
    os.mkdir(base, 0o755)
    for n in names:
        d = os.path.join(base, n)
        os.mkdir(d, 0o755)
        os.chown(d, USERS[GUEST], USERS[GUEST])
        with open(os.path.join(d, "hello.txt"), "wb") as fh:
            fh.write(("hello " + n + "\n").encode())
        os.chown(os.path.join(d, "hello.txt"), USERS[GUEST], USERS[GUEST])
    srv.opts.update({"guest_enable": True, "guest_username": GUEST,
                     "local_root": base + "/$USER", "user_sub_token": "$USER"})
    return base


def test_guest_anonymous_privileges(make_server):
    """guest_enable without virtual_use_local_privs: a virtual user that
    exists only in PAM runs as guest_username, chrooted to its own
    local_root, with anonymous privileges (anon_upload_enable decides
    uploads, no SITE CHMOD, anon_umask); the log names the login name. A
    real local user is mapped to the guest account too."""
    srv = make_server(start=False)
    add_virtual_users(srv, VIRTUAL)
    base = guest_world(srv, ["virt1", "alice"])
    srv.opts.update({"anon_upload_enable": False, "anon_umask": "027",
                     "chroot_local_user": False})
    srv.start()
    f = login(srv, "virt1", VIRTUAL["virt1"])
    mon, w = session_procs(srv, f)
    assert proc_ids(w, "Uid") == [USERS[GUEST]] * 4
    assert proc_ids(w, "Gid") == [USERS[GUEST]] * 4
    # Always chrooted (vsftpd), whatever chroot_local_user says.
    assert proc_link(w, "root") == os.path.join(base, "virt1")
    assert twhelpers.pwd_of(f.sendcmd("PWD")) == "/"
    data, _, _ = retr(f, "RETR hello.txt")
    assert data == b"hello virt1\n"
    # Anonymous privileges: write_enable alone is not enough.
    with pytest.raises(ftplib.error_perm) as e:
        stor(f, "STOR up.txt", b"x")
    assert str(e.value).startswith("550"), e.value
    with pytest.raises(ftplib.error_perm):
        f.sendcmd("SITE CHMOD 600 hello.txt")
    f.quit()
    srv.wait_log(r'OK LOGIN: Client "127\.0\.0\.1", user "virt1" \(guest\)')

    # A user of the user database: mapped to the guest account all the same.
    f = login(srv, "alice", PASSWORDS["alice"])
    _, w = session_procs(srv, f)
    assert proc_ids(w, "Uid") == [USERS[GUEST]] * 4
    assert proc_link(w, "root") == os.path.join(base, "alice")
    f.quit()

    # A virtual user without a directory: 530, the log names it.
    login_refused(srv, "virt2", VIRTUAL["virt2"])
    srv.wait_log(r"login of virt2 refused: its directory %s/virt2: No such file"
                 % re.escape(base))


def test_guest_anonymous_upload_umask(make_server):
    """anon_upload_enable lets a guest upload; the file is the guest
    account's, with anon_umask (not local_umask)."""
    srv = make_server(start=False)
    add_virtual_users(srv, VIRTUAL)
    base = guest_world(srv, ["virt1"])
    srv.opts.update({"anon_upload_enable": True, "anon_umask": "027", "local_umask": "000",
                     "file_open_mode": "0666"})
    srv.start()
    f = login(srv, "virt1", VIRTUAL["virt1"])
    stor(f, "STOR up.txt", b"guest data")
    f.quit()
    st = os.stat(os.path.join(base, "virt1", "up.txt"))
    assert (st.st_uid, st.st_gid) == (USERS[GUEST], USERS[GUEST])
    assert st.st_mode & 0o777 == 0o640
    # The transfer line names the login name, not the guest account.
    srv.wait_log(r'OK UPLOAD: Client "127\.0\.0\.1", user "virt1", "/up\.txt", 10 bytes')


def test_guest_over_tls(make_server, certs):
    """FTPS: a guest logs in by name and password, so the local users'
    TLS rules apply (force_local_logins_ssl), not the anonymous ones
    (allow_anon_ssl=NO would refuse an anonymous login over TLS), even
    with anonymous privileges; its data connections are TLS too."""
    srv = make_server(start=False)
    add_virtual_users(srv, VIRTUAL)
    guest_world(srv, ["virt1"])
    srv.opts.update(tls_opts(certs, allow_anon_ssl=False, force_local_logins_ssl=True))
    srv.start()
    f = ReuseFTP_TLS(context=client_context(), timeout=twhelpers.TIMEOUT)
    f.connect(twhelpers.HOST, srv.port)
    f.auth()
    f.login("virt1", VIRTUAL["virt1"])
    f.prot_p()
    assert f.nlst() == ["hello.txt"]
    f.quit()
    # Without TLS the local rule refuses it at USER.
    login_refused(srv, "virt1", VIRTUAL["virt1"])


def test_check_names_the_accounts(tmp_path):
    """-t: guest_username and chown_username must exist, user_config_dir
    must be a directory; all three named in one run."""
    conf = tmp_path / "v.conf"
    conf.write_text("listen=YES\nnopriv_user=nobody\nsecure_chroot_dir=%s\nlog_file=%s/log\n"
                    "local_enable=YES\nguest_enable=YES\nguest_username=twv-no-such-user\n"
                    "chown_uploads=YES\nchown_username=twv-no-such-owner\n"
                    "user_config_dir=%s/missing\n" % (tmp_path, tmp_path, tmp_path))
    os.chmod(str(tmp_path), 0o755)
    r = subprocess.run([twhelpers.TWINFTPD, "-t", str(conf)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=20)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1, err
    assert "guest_username: user 'twv-no-such-user' does not exist" in err, err
    assert "chown_username: user 'twv-no-such-owner' does not exist" in err, err
    assert "user_config_dir: directory %s/missing" % tmp_path in err, err


def test_guest_local_privileges(make_server):
    """virtual_use_local_privs=YES: a guest writes with write_enable alone,
    uses local_umask and SITE CHMOD, and is chrooted only as
    chroot_local_user says."""
    srv = make_server(start=False)
    add_virtual_users(srv, VIRTUAL)
    base = guest_world(srv, ["virt1"])
    srv.opts.update({"virtual_use_local_privs": True, "anon_upload_enable": False,
                     "chroot_local_user": False, "local_umask": "002"})
    srv.start()
    f = login(srv, "virt1", VIRTUAL["virt1"])
    _, w = session_procs(srv, f)
    assert proc_ids(w, "Uid") == [USERS[GUEST]] * 4
    assert proc_link(w, "root") == "/"
    home = os.path.join(base, "virt1")
    assert twhelpers.pwd_of(f.sendcmd("PWD")) == home
    stor(f, "STOR local.txt", b"local privs")
    f.sendcmd("SITE CHMOD 600 local.txt")
    f.delete("hello.txt")
    f.quit()
    st = os.stat(os.path.join(home, "local.txt"))
    assert st.st_uid == USERS[GUEST] and st.st_mode & 0o777 == 0o600
    assert not os.path.exists(os.path.join(home, "hello.txt"))


def write_user_conf(srv, name, text, mode=0o644):
    d = os.path.join(srv.base, "userconf")
    if not os.path.isdir(d):
        os.mkdir(d, 0o755)
    p = os.path.join(d, name)
    with open(p, "w") as fh:
        fh.write(text)
    os.chmod(p, mode)
    return p


def test_user_config_dir(make_server):
    """user_config_dir: one user's file changes that user's session only
    (write_enable, local_root, local_max_rate); options that do not act
    per session are ignored with a log line; a broken or unsafe file
    refuses that login with 530 and a log line."""
    srv = make_server(start=False)
    bobroot = os.path.join(srv.base, "bobroot")
    os.mkdir(bobroot, 0o755)
    os.chown(bobroot, USERS["bob"], USERS["bob"])
    with open(os.path.join(bobroot, "only-bob.txt"), "wb") as fh:
        fh.write(b"bob's own root\n")
    write_user_conf(srv, "alice", "write_enable=NO\nlisten_port=1\n")
    write_user_conf(srv, "bob", "# bob\nlocal_root=%s\nlocal_max_rate=123456\n" % bobroot)
    srv.opts["user_config_dir"] = os.path.join(srv.base, "userconf")
    srv.start()

    f = srv.ftp("alice")
    with pytest.raises(ftplib.error_perm) as e:
        stor(f, "STOR no.txt", b"x")
    assert str(e.value).startswith("550"), e.value
    f.quit()
    assert not os.path.exists(srv.path("no.txt"))
    srv.wait_log(r"user_config_dir: %s:2: option 'listen_port' ignored"
                 % re.escape(os.path.join(srv.base, "userconf", "alice")))

    f = srv.ftp("bob")
    names = f.nlst()
    assert names == ["only-bob.txt"], names
    # bob's options are not alice's: write_enable stays the server's.
    stor(f, "STOR yes.txt", b"bob writes")
    f.quit()
    assert os.path.exists(os.path.join(bobroot, "yes.txt"))

    # Broken: an unknown option refuses the login, and says so.
    write_user_conf(srv, "bob", "local_root=%s\nwrite_enabel=NO\n" % bobroot)
    login_refused(srv, "bob")
    srv.wait_log(r"unknown option 'write_enabel'")
    srv.wait_log(r"login of bob refused: per-user config .*/bob has 1 error")
    # Writable by others: never read.
    write_user_conf(srv, "bob", "local_root=/\n", mode=0o666)
    login_refused(srv, "bob")
    srv.wait_log(r"userconf/bob: writable by others")
    # The listener survives all of it.
    assert srv.proc.poll() is None


def test_user_config_dir_read_again_at_pass(make_server):
    """The PAM child forks at USER with the user's own options, but the
    login takes the file as it is at PASS: a local_root changed in between
    is the session's, as it was when the child forked at PASS."""
    srv = make_server(start=False)
    roots = {}
    for name in ("before", "after"):
        roots[name] = os.path.join(srv.base, "root-" + name)
        os.mkdir(roots[name], 0o755)
        with open(os.path.join(roots[name], name + ".txt"), "wb") as fh:
            fh.write(name.encode())
    write_user_conf(srv, "alice", "local_root=%s\n" % roots["before"])
    srv.opts["user_config_dir"] = os.path.join(srv.base, "userconf")
    srv.start()
    with srv.ctrl() as c:
        assert c.cmd("USER alice")[0] == 331
        # The child of this USER is forked with the file as it is now.
        mon = srv.session_of(c.sock.getsockname()[1])
        wait_until(lambda: len(children(mon)) == 3 or None, 10,
                   what="the PAM child forked at USER (%s)" % children(mon))
        write_user_conf(srv, "alice", "local_root=%s\n" % roots["after"])
        assert c.cmd("PASS %s" % PASSWORDS["alice"])[0] == 230
        code, lines = c.cmd("STAT .")
        listing = b"\n".join(lines)
        assert code == 213 and b"after.txt" in listing and b"before.txt" not in listing, lines


@pytest.mark.timeout(120)
def test_user_config_dir_rate(make_server):
    """A per-user local_max_rate paces that user's download only. As in
    test_rate.py: 1 MiB at 200000 B/s takes 5.2 s, the assert allows 3 s
    (a lower bound: the limit holds); the unlimited user's bound is many
    times what the limit would have cost."""
    srv = make_server(start=False)
    write_user_conf(srv, "alice", "local_max_rate=200000\n")
    srv.opts["user_config_dir"] = os.path.join(srv.base, "userconf")
    srv.start()
    data = os.urandom(1 << 20)
    took = {}
    for u in ("alice", "bob"):
        srv.put("big.bin", data, user=u)
        f = srv.ftp(u)
        t0 = time.monotonic()
        got, _, _ = retr(f, "RETR big.bin")
        took[u] = time.monotonic() - t0
        assert got == data
        f.quit()
    assert took["alice"] >= 3.0, took
    assert took["bob"] < 60, took


def test_user_config_dir_anonymous(make_server):
    """An anonymous login's per-user file is ftp_username's (vsftpd)."""
    srv = make_server(start=False)
    incoming = os.path.join(srv.anon_root, "incoming")
    os.mkdir(incoming, 0o755)
    os.chown(incoming, USERS["twftp"], USERS["twftp"])
    write_user_conf(srv, "twftp", "anon_upload_enable=YES\n")
    srv.opts.update({"user_config_dir": os.path.join(srv.base, "userconf"),
                     "anon_upload_enable": False})
    srv.start()
    f = srv.ftp("anonymous")
    stor(f, "STOR incoming/a.txt", b"anon")
    f.quit()
    assert os.stat(os.path.join(incoming, "a.txt")).st_uid == USERS["twftp"]


def test_user_config_name_checked(make_server):
    """The login name comes from the client: one that starts with '.' or
    holds a '/' never becomes a path (a file planted outside the
    directory is not read): the login is refused, and logged."""
    srv = make_server(start=False)
    evil = {"../evil": "evil-pw", ".hidden": "hidden-pw"}
    add_virtual_users(srv, evil)
    write_user_conf(srv, "alice", "write_enable=YES\n")
    # What "../evil" would name: BASE/evil, outside BASE/userconf.
    with open(os.path.join(srv.base, "evil"), "w") as fh:
        fh.write("local_root=/\n")
    os.chmod(os.path.join(srv.base, "evil"), 0o644)
    srv.opts.update({"user_config_dir": os.path.join(srv.base, "userconf"),
                     "guest_enable": True, "guest_username": GUEST,
                     "virtual_use_local_privs": True})
    srv.start()
    for name, pw_ in evil.items():
        login_refused(srv, name, pw_)
    srv.wait_log(r"login refused: a user name that starts with '\.' or holds '/'")
    assert "OK LOGIN" not in srv.log_text()
    # A good name still logs in.
    srv.ftp("alice").quit()


def anon_upload_server(make_server, chown):
    srv = make_server(start=False)
    incoming = os.path.join(srv.anon_root, "incoming")
    os.mkdir(incoming, 0o755)
    os.chown(incoming, USERS["twftp"], USERS["twftp"])
    srv.opts.update({"anon_upload_enable": True, "anon_umask": "022"})
    if chown:
        srv.opts.update({"chown_uploads": True, "chown_username": "alice",
                         "chown_upload_mode": "0640"})
    srv.start()
    return srv, incoming


def _stored(srv, user, remote, data, local, caps_ok, also=None):
    """user's session: its monitor's effective capabilities pass caps_ok,
    it stores data as remote (then runs also(f), if given); the os.stat of
    local, the file on disk."""
    f = srv.ftp(user)
    mon, _ = session_procs(srv, f)
    monitor_settled(mon)
    assert caps_ok(cap_eff(mon)), hex(cap_eff(mon))
    stor(f, "STOR " + remote, data)
    if also is not None:
        also(f)
    f.quit()
    return os.stat(local)


def test_chown_uploads(make_server):
    """chown_uploads: an anonymous upload ends owned by chown_username
    (group left as it was) with chown_upload_mode, with every byte the
    client sent (the worker writes on through its descriptor); STOU too.
    Only an anonymous session's monitor keeps CAP_CHOWN."""
    srv, incoming = anon_upload_server(make_server, True)
    payload = os.urandom(300000)
    st = _stored(srv, "anonymous", "incoming/up.bin", payload,
                 os.path.join(incoming, "up.bin"), lambda caps: caps & CAP_CHOWN,
                 also=lambda f: stor(f, "STOU incoming/u", b"unique"))
    assert (st.st_uid, st.st_gid) == (USERS["alice"], USERS["twftp"])
    assert st.st_mode & 0o7777 == 0o640
    with open(os.path.join(incoming, "up.bin"), "rb") as fh:
        assert fh.read() == payload
    st = os.stat(os.path.join(incoming, "u"))
    assert st.st_uid == USERS["alice"] and st.st_mode & 0o7777 == 0o640

    # The uploader lost the file: it can neither overwrite nor append.
    f = srv.ftp("anonymous")
    with pytest.raises(ftplib.error_perm):
        stor(f, "STOR incoming/up.bin", b"again")
    f.quit()

    # A local user's uploads stay the user's, and its monitor has no CAP_CHOWN.
    st = _stored(srv, "alice", "mine.txt", b"mine", srv.path("mine.txt"),
                 lambda caps: caps == 0)
    assert st.st_uid == USERS["alice"] and st.st_mode & 0o777 == 0o644


def test_no_chown_uploads(make_server):
    """Without chown_uploads an anonymous upload stays ftp_username's and
    the monitor keeps no capability."""
    srv, incoming = anon_upload_server(make_server, False)
    # Not even before the login: CAP_CHOWN serves chown_uploads only.
    c = Ctrl(srv.port)
    assert c.reply()[0] == 220
    pre = srv.session_of(c.sock.getsockname()[1])
    assert not cap_eff(pre) & CAP_CHOWN, hex(cap_eff(pre))
    c.close()
    st = _stored(srv, "anonymous", "incoming/up.bin", b"data",
                 os.path.join(incoming, "up.bin"), lambda caps: caps == 0)
    assert st.st_uid == USERS["twftp"] and st.st_mode & 0o777 == 0o644


# ---------------------------------------------------------------- real PAM

@pytest.fixture
def pwdfile_service():
    """A real PAM service in /etc/pam.d: pam_pwdfile over a private
    password file, with a virtual user no user database knows."""
    name = "twv" + secrets.token_hex(3)
    password = "Pw-" + secrets.token_hex(6)
    service = "twe2e-pwdfile-" + secrets.token_hex(3)
    pam_file = "/etc/pam.d/" + service
    base = "/tmp/twe2e-pwdfile-" + secrets.token_hex(3)
    os.mkdir(base, 0o755)
    try:
        try:
            pwd.getpwnam(name)
            raise AssertionError("%s exists in the user database" % name)
        except KeyError:
            pass
        h = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password.encode(),
                           stdout=subprocess.PIPE, check=True, timeout=30).stdout.strip()
        pwfile = os.path.join(base, "ftpd.passwd")
        with open(pwfile, "wb") as fh:
            fh.write(name.encode() + b":" + h + b"\n")
        os.chmod(pwfile, 0o600)
        with open(pam_file, "w") as fh:
            fh.write("auth required pam_pwdfile.so pwdfile=%s\n" % pwfile)
            fh.write("account required pam_permit.so\n")
        yield {"name": name, "password": password, "service": service, "base": base}
    finally:
        if os.path.exists(pam_file):
            os.unlink(pam_file)
        shutil.rmtree(base, ignore_errors=True)


def test_guest_with_pam_pwdfile(make_server, pwdfile_service):
    """A real PAM module: pam_pwdfile accepts a virtual user that does not
    exist in /etc/passwd; it runs as guest_username (nobody) in
    local_root=/tmp/.../$USER."""
    v = pwdfile_service
    nobody = pwd.getpwnam("nobody")
    vroot = os.path.join(v["base"], "vroot")
    os.mkdir(vroot, 0o755)
    home = os.path.join(vroot, v["name"])
    os.mkdir(home, 0o755)
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    with open(os.path.join(home, "welcome.txt"), "wb") as fh:
        fh.write(b"virtual welcome\n")
    srv = make_server({
        "pam_service_name": v["service"],
        "nopriv_user": "nobody",
        "anonymous_enable": False,
        "guest_enable": True,
        "guest_username": "nobody",
        "virtual_use_local_privs": True,
        "chroot_local_user": True,
        "local_root": vroot + "/$USER",
        "user_sub_token": "$USER",
    }, wrappers=False)
    f = login(srv, v["name"], v["password"])
    _, w = session_procs(srv, f)
    assert proc_ids(w, "Uid") == [nobody.pw_uid] * 4
    assert proc_link(w, "root") == home
    data, _, _ = retr(f, "RETR welcome.txt")
    assert data == b"virtual welcome\n"
    stor(f, "STOR sent.txt", b"from a virtual user")
    f.quit()
    assert os.stat(os.path.join(home, "sent.txt")).st_uid == nobody.pw_uid
    srv.wait_log(r'OK LOGIN: Client "127\.0\.0\.1", user "%s" \(guest\)' % v["name"])
    f = srv.connect()
    with pytest.raises(ftplib.error_perm) as e:
        f.login(v["name"], "wrong")
    assert str(e.value).startswith("530")
    f.close()
    srv.wait_log(r'FAIL LOGIN: Client "127\.0\.0\.1", user "%s"' % v["name"])


def _set_home(srv, user, home):
    """Rewrites user's home directory in the test's passwd file."""
    with open(srv.passwd_path) as fh:
        lines = fh.read().splitlines()
    for i, line in enumerate(lines):
        f = line.split(":")
        if f[0] == user:
            f[5] = home
            lines[i] = ":".join(f)
    with open(srv.passwd_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def test_passwd_chroot_enable(make_server):
    """passwd_chroot_enable=YES: a home of /srv/jail/./home/bob chroots the
    session to /srv/jail and starts it in /home/bob (ahead of local_root);
    a home without /./ is chrooted as before; not chrooted, the login starts
    in the whole home; a start that does not exist, or a home that starts
    with /./, refuses the login with 530 and a log line."""
    srv = make_server({"chroot_local_user": True, "passwd_chroot_enable": True},
                      start=False)
    jail = os.path.join(srv.base, "jail")
    bobhome = os.path.join(jail, "home", "bob")
    os.makedirs(bobhome)
    os.chmod(os.path.join(jail, "home"), 0o755)
    os.chmod(jail, 0o755)
    os.chown(bobhome, USERS["bob"], USERS["bob"])
    with open(os.path.join(jail, "in-jail.txt"), "wb") as fh:
        fh.write(b"top of the jail\n")
    _set_home(srv, "bob", jail + "/./home/bob")
    srv.put("alice.txt", b"alice's home\n")
    srv.start()

    f = srv.ftp("bob")
    assert f.pwd() == "/home/bob"
    stor(f, "STOR mine.txt", b"bob's file\n")
    assert os.path.exists(os.path.join(bobhome, "mine.txt"))
    f.cwd("/")
    assert sorted(f.nlst()) == ["home", "in-jail.txt"]
    f.cwd("..")
    assert f.pwd() == "/" and sorted(f.nlst()) == ["home", "in-jail.txt"]
    f.quit()
    f = srv.ftp("alice")
    assert f.pwd() == "/" and f.nlst() == ["alice.txt"]
    f.quit()

    # A start directory that is not there, and a jail at "/".
    _set_home(srv, "bob", jail + "/./home/nobody")
    login_refused(srv, "bob")
    srv.wait_log(r"login of bob refused: its directory %s: No such file"
                 % re.escape(jail + "/home/nobody"))
    _set_home(srv, "bob", "/./" + bobhome.lstrip("/"))
    login_refused(srv, "bob")
    srv.wait_log(r"passwd_chroot_enable: home directory /\./.* names no jail")
    srv.stop()

    # Not chrooted: the whole home, as the user database spells it.
    _set_home(srv, "bob", jail + "/./home/bob")
    srv.opts["chroot_local_user"] = False
    srv.start()
    f = srv.ftp("bob")
    assert f.pwd() == bobhome
    assert f.nlst() == ["mine.txt"]
    f.quit()
