"""The Debian package (issue 14): etc/build-deb.sh builds it (lintian
clean of errors), `dpkg -i` installs it, the installed /usr/sbin/twinftpd
with the installed /etc/twinftpd.conf and PAM service serves a session at
once, and `dpkg --purge` leaves nothing behind.

This machine is shared: the test holds a lock for its whole run, saves
whatever the package would replace or purge that was there before it
(a PAM file or a log from etc/demo.sh, /usr/share/empty, /srv/ftp, the
ftp account) and puts it back afterwards, and purges the package even
when a check fails. systemd is not PID 1 here, so the daemon is started
directly, as twinftpd.service would start it, on a free port.
"""

import fcntl
import ftplib
import glob
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

from twhelpers import descendants, free_ports, port_listening, wait_until  # noqa: E402

PKG = "twinftpd"
SBIN = "/usr/sbin/twinftpd"
CONF = "/etc/twinftpd.conf"
LOG = "/var/log/twinftpd.log"
FTP_HOME = "/srv/ftp"
UNITS = ["twinftpd.service", "twinftpd.socket", "twinftpd-inetd.socket",
         "twinftpd-inetd@.service"]
UNIT_DIR = "/lib/systemd/system"
ENABLED = "/etc/systemd/system/multi-user.target.wants/twinftpd.service"
LOCK = "/run/lock/twinftpd-deb-test.lock"


def run(argv, timeout=120, ok=True, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout, **kw)
    if ok:
        assert r.returncode == 0, "%s: %s" % (" ".join(argv), r.stdout.decode()[-4000:])
    return r


def installed():
    r = run(["dpkg-query", "-W", "-f=${Status}", PKG], ok=False)
    return r.returncode == 0 and r.stdout.decode().endswith(" installed")


def known_to_dpkg():
    """Any state but not-installed (config-files, half-installed...)."""
    r = run(["dpkg-query", "-W", "-f=${Status}", PKG], ok=False)
    return r.returncode == 0 and not r.stdout.decode().endswith(" not-installed")


def daemon_pids():
    """Processes running the installed binary (also after it was removed)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                exe = os.readlink("/proc/%s/exe" % d)
            except OSError:
                continue
            if exe == SBIN or exe == SBIN + " (deleted)":
                out.append(int(d))
    return out


@pytest.fixture
def machine_lock():
    """One run of this test at a time on the machine (dpkg state is global)."""
    with open(LOCK, "w") as f:
        wait_until(lambda: _try_lock(f), 1200, 1.0, "the package test lock")
        yield


def _try_lock(f):
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


class Saved:
    """What was at the package's paths before it came, put back after it went."""

    def __init__(self, paths):
        self.dir = tempfile.mkdtemp(prefix="twdeb-saved-")
        self.files = {}
        self.dirs = {}
        for p in sorted(set(paths)):
            try:
                st = os.lstat(p)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode):
                continue        # /lib on merged /usr: dpkg follows it, never removes it
            if stat.S_ISDIR(st.st_mode):
                self.dirs[p] = st
            else:
                copy = os.path.join(self.dir, "%d" % len(self.files))
                shutil.copy2(p, copy, follow_symlinks=False)
                self.files[p] = (copy, st)

    def existed(self, p):
        return p in self.files or p in self.dirs

    def restore(self):
        """Put back what purge removed, and the owner and mode dpkg changed."""
        for p, st in sorted(self.dirs.items()):
            if not os.path.lexists(p):
                os.makedirs(p)
            now = os.lstat(p)
            if (now.st_uid, now.st_gid) != (st.st_uid, st.st_gid):
                os.chown(p, st.st_uid, st.st_gid)
            if stat.S_IMODE(now.st_mode) != stat.S_IMODE(st.st_mode):
                os.chmod(p, stat.S_IMODE(st.st_mode))
        for p, (copy, st) in sorted(self.files.items()):
            if not os.path.lexists(p):
                shutil.copy2(copy, p, follow_symlinks=False)
                os.lchown(p, st.st_uid, st.st_gid)
        shutil.rmtree(self.dir)


def deb_paths(deb):
    """Every path in the package, absolute, and which ones are directories."""
    r = run(["dpkg-deb", "-c", deb])
    paths, dirs = [], set()
    for line in r.stdout.decode().splitlines():
        name = line.split(None, 5)[5].split(" -> ")[0]
        p = "/" + name.lstrip("./").rstrip("/")
        if p == "/":
            continue
        paths.append(p)
        if line.startswith("d"):
            dirs.add(p)
    return paths, dirs


class Daemon:
    """The installed daemon in the foreground, as twinftpd.service runs it."""

    def __init__(self, port, extra, logdir):
        self.out = open(os.path.join(logdir, "daemon-%d.out" % port), "wb")
        argv = [SBIN, "-o", "listen_port=%d" % port] + extra + [CONF]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.port = port
        wait_until(lambda: port_listening(self.port, "0.0.0.0") or self.proc.poll() is not None,
                   60, 0.1, "the installed twinftpd to listen on %d" % port)
        assert self.proc.poll() is None, self.output()

    def output(self):
        with open(self.out.name, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            family = descendants(self.proc.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)
                raise AssertionError("the installed twinftpd ignored SIGTERM")
            wait_until(lambda: not any(os.path.exists("/proc/%d" % p) and
                                       _not_zombie(p) for p, _ in family),
                       60, 0.1, "the daemon's session processes to exit")
        self.out.close()
        return self.proc.returncode


def _not_zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def fetch(port, user, password, name):
    f = ftplib.FTP()
    f.connect("127.0.0.1", port, timeout=30)
    try:
        f.login(user, password)
        chunks = []
        f.retrbinary("RETR " + name, chunks.append)
        return b"".join(chunks)
    finally:
        f.quit()


@pytest.fixture
def local_user():
    """A real account (the installed PAM service checks it with pam_unix)."""
    name = "twdeb" + secrets.token_hex(3)
    password = "Pw-" + secrets.token_hex(8)
    base = tempfile.mkdtemp(prefix="twdeb-home-")
    os.chmod(base, 0o755)
    home = os.path.join(base, name)
    created = False
    try:
        run(["useradd", "-M", "-d", home, "-s", "/bin/sh", "-U", name], 30)
        created = True
        r = subprocess.run(["chpasswd", "-c", "SHA512"], input=("%s:%s\n" % (name, password))
                           .encode(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=30)
        assert r.returncode == 0, r.stdout
        pw = pwd.getpwnam(name)
        os.mkdir(home, 0o755)
        os.chown(home, pw.pw_uid, pw.pw_gid)
        yield name, password, home
    finally:
        if created:
            run(["userdel", "-f", name], 30, ok=False)
        shutil.rmtree(base, ignore_errors=True)


def test_deb_builds_installs_serves_and_purges(machine_lock, local_user, tmp_path):
    assert not known_to_dpkg(), \
        "%s is already known to dpkg here: not this test's to install or purge" % PKG
    assert not daemon_pids(), "a %s is already running" % SBIN

    out = tmp_path / "deb"
    r = run([os.path.join(REPO, "etc", "build-deb.sh"), str(out)], 1500)
    deb = r.stdout.decode().rstrip().splitlines()[-1]
    assert deb.startswith(str(out)) and deb.endswith(".deb") and os.path.isfile(deb), deb
    # The version is meson.build's.
    meson_build = open(os.path.join(REPO, "meson.build")).read()
    version = run(["dpkg-deb", "-f", deb, "Version"]).stdout.decode().strip()
    assert "version : '%s'" % version in meson_build, version

    paths, dirs = deb_paths(deb)
    for p in (SBIN, CONF, "/etc/pam.d/twinftpd", "/etc/logrotate.d/twinftpd",
              "/usr/share/empty", "/usr/share/man/man8/twinftpd.8.gz"):
        assert p in paths, p
    for u in UNITS:
        assert os.path.join(UNIT_DIR, u) in paths, u
    # The FTPS module, in the library directory the binary looks in.
    assert [p for p in paths if p.startswith("/usr/lib/") and
            p.endswith("/twinftpd/twinftpd-tls.so")], sorted(paths)
    logs = [LOG] + glob.glob(LOG + ".*")
    saved = Saved(paths + logs + [FTP_HOME, "/var/lib/twinftpd"])
    ftp_user_before = _getpw("ftp")
    user, password, home = local_user
    anon_file = None
    try:
        # --force-confnew: a PAM file etc/demo.sh put there (saved above) is
        # replaced by the package's, which is the one under test.
        run(["dpkg", "-i", "--force-confnew", deb], 600)
        assert installed()
        assert not daemon_pids(), "installing started the daemon"

        # What postinst makes: the ftp account (kept if it was there) with
        # its home, where anonymous sessions are chrooted.
        ftp = _getpw("ftp")
        assert ftp is not None and ftp.pw_dir == FTP_HOME
        if ftp_user_before is not None:
            assert ftp == ftp_user_before
        assert os.path.isdir(FTP_HOME)
        st = os.stat("/usr/share/empty")
        assert st.st_uid == 0 and not st.st_mode & 0o022
        with open(CONF, "rb") as f, open(os.path.join(REPO, "etc", "twinftpd.conf"), "rb") as g:
            assert f.read() == g.read()
        conffiles = set(open("/var/lib/dpkg/info/%s.conffiles" % PKG).read().split())
        assert {CONF, "/etc/pam.d/twinftpd", "/etc/logrotate.d/twinftpd"} <= conffiles
        # dh_installsystemd enabled the service (and only it) without systemd.
        assert os.path.islink(ENABLED)
        assert not glob.glob("/etc/systemd/system/*.wants/twinftpd*.socket")

        # The config as installed checks clean, PAM service included.
        r = run([SBIN, "-t", CONF], 30, ok=False)
        assert r.returncode == 0, r.stdout.decode()
        problems = [l for l in r.stdout.decode().splitlines()
                    if "error" in l.lower() or "problem" in l.lower()]
        assert not problems, r.stdout.decode()
        # FTPS on: the installed binary loads its module (and checks the
        # certificate with it).
        from twcerts import make_cert
        cert, key, _ = make_cert(str(tmp_path), "deb")
        r = run([SBIN, "-t", "-o", "ssl_enable=YES", "-o", "rsa_cert_file=" + cert,
                 "-o", "rsa_private_key_file=" + key, CONF], 30, ok=False)
        assert r.returncode == 0, r.stdout.decode()
        analyze = shutil.which("systemd-analyze")
        assert analyze, "systemd-analyze missing (etc/install-deps.sh installs systemd)"
        r = run([analyze, "verify"] + [os.path.join(UNIT_DIR, u) for u in UNITS], 120, ok=False)
        assert r.returncode == 0 and r.stdout == b"", r.stdout.decode()

        # A session at once: the installed config, only the port changed.
        data = os.urandom(100000)
        with open(os.path.join(home, "hello.bin"), "wb") as f:
            f.write(data)
        port = free_ports(1)[0]
        d = Daemon(port, [], str(tmp_path))
        try:
            assert fetch(port, user, password, "hello.bin") == data
        finally:
            rc = d.stop()
        assert rc == 0, d.output()
        with open(LOG, errors="replace") as f:
            text = f.read()
        assert 'OK LOGIN: Client "127.0.0.1"' in text and user in text, text[-2000:]

        # Anonymous, read-only from /srv/ftp, as the ftp account postinst made.
        anon_file = os.path.join(FTP_HOME, "twdeb-%s.txt" % secrets.token_hex(4))
        with open(anon_file, "wb") as f:
            f.write(b"hello from the package test\n")
        port = free_ports(1)[0]
        d = Daemon(port, ["-o", "anonymous_enable=YES"], str(tmp_path))
        try:
            assert fetch(port, "anonymous", "test@", os.path.basename(anon_file)) == \
                b"hello from the package test\n"
        finally:
            rc = d.stop()
        assert rc == 0, d.output()
        os.unlink(anon_file)
        anon_file = None
        assert not daemon_pids()

        listed = run(["dpkg", "-L", PKG]).stdout.decode().split()
        run(["dpkg", "--purge", PKG], 600)
        assert not known_to_dpkg()
        for p in listed:
            if p == "/." or (p in dirs and (saved.existed(p) or _shared_dir(p))):
                continue
            assert not os.path.lexists(p), "left after purge: " + p
        for p in [CONF, LOG, "/var/lib/twinftpd", ENABLED]:
            assert not os.path.lexists(p), "left after purge: " + p
        assert not glob.glob(LOG + ".*")
        assert not glob.glob("/var/lib/systemd/deb-systemd-helper-enabled/**/twinftpd*",
                             recursive=True)
        assert not daemon_pids()
        if not saved.existed(FTP_HOME):
            assert not os.path.exists(FTP_HOME), "postinst's empty %s left" % FTP_HOME
        # The ftp account stays (a system user is never deleted on purge).
        assert _getpw("ftp") is not None
    finally:
        for pid in daemon_pids():
            os.kill(pid, signal.SIGKILL)
        if anon_file:
            os.unlink(anon_file)
        if known_to_dpkg():
            run(["dpkg", "--purge", PKG], 600, ok=False)
        if ftp_user_before is None and _getpw("ftp") is not None:
            run(["userdel", "ftp"], 30, ok=False)
            run(["groupdel", "ftp"], 30, ok=False)
        saved.restore()


def _getpw(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _shared_dir(p):
    """A directory another package also ships, which dpkg rightly keeps."""
    r = run(["dpkg-query", "-S", p], ok=False)
    return r.returncode == 0
