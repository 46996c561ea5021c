"""Fixtures for the twinftpd end-to-end tests.

Run as root: `pytest-3 tests/e2e` (TWINFTPD defaults to build/twinftpd
at the top of the repository). Each test gets its own daemon(s) with a
private world under /tmp; see twhelpers.Server.
"""

import os
import pwd
import secrets
import signal
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import twhelpers  # noqa: E402
from twcerts import make_cert  # noqa: E402

# Per-test bound: a hang fails the test instead of hanging the run.
TEST_TIMEOUT = int(os.environ.get("TW_E2E_TEST_TIMEOUT", "240"))


def _terminated(signum, frame):
    # meson's timeout ends pytest with SIGTERM: as an interrupt, so that
    # pytest_sessionfinish still removes this run's PAM services.
    raise KeyboardInterrupt("SIGTERM")


def pytest_sessionstart(session):
    signal.signal(signal.SIGTERM, _terminated)
    problems = []
    if os.geteuid() != 0:
        problems.append("the e2e tests must run as root (they start twinftpd with privilege separation)")
    if not os.access(twhelpers.TWINFTPD, os.X_OK):
        problems.append("daemon binary not found or not executable: %s (set TWINFTPD)"
                        % twhelpers.TWINFTPD)
    for lib in ("libpam_wrapper.so", "libnss_wrapper.so"):
        if not os.path.exists(os.path.join(twhelpers.LIBDIR, lib)):
            problems.append("%s missing (apt-get install libpam-wrapper libnss-wrapper)" % lib)
    if not os.path.exists(twhelpers.PAM_MATRIX):
        problems.append("pam_matrix.so missing (apt-get install libpam-wrapper)")
    if not os.path.exists(twhelpers.PAM_PWDFILE):
        problems.append("pam_pwdfile.so missing (apt-get install libpam-pwdfile)")
    if problems:
        # Not a skip: a missing prerequisite is a failure of the run.
        raise pytest.UsageError("e2e prerequisites: " + "; ".join(problems))


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture(autouse=True)
def _watchdog(request):
    marker = request.node.get_closest_marker("timeout")
    limit = marker.args[0] if marker else TEST_TIMEOUT

    def expired(signum, frame):
        raise TimeoutError("test exceeded its %ds bound" % limit)

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(limit)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): per-test time bound")


@pytest.fixture
def make_server(request):
    """Factory: make_server(opts={...}, wrappers=True) -> started Server."""
    servers = []

    def make(opts=None, start=True, **kw):
        s = twhelpers.Server(opts, **kw)
        servers.append(s)
        if start:
            s.start()
        return s

    yield make
    errors = []
    for s in servers:
        errs = s.stop()
        failed = getattr(request.node, "rep_call", None)
        if errs or (failed is not None and failed.failed):
            print("\n=== twinftpd %s (port %d) ===\n%s" % (s.base, s.port, s.diagnostics()))
        errors += errs
        if os.environ.get("TW_E2E_KEEP") != "1":
            s.cleanup()
    if errors:
        pytest.fail("daemon shutdown: " + "; ".join(errors), pytrace=False)


@pytest.fixture
def server(make_server):
    """The default daemon: local users chrooted, anonymous read-only, writes on."""
    return make_server()


def pytest_sessionfinish(session, exitstatus):
    # The e2e runs put per-test PAM services in /etc/pam.d (twhelpers); a test
    # that failed half-way must not leave one behind. Only this run's:
    # another run on the machine may be using its own.
    for name in sorted(twhelpers.PAM_SERVICES_IN_ETC):
        try:
            os.unlink(os.path.join("/etc/pam.d", name))
        except OSError:
            pass


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """Certificates for a module's TLS tests (twcerts.make_cert): good,
    other, expired, and combined (the good one's certificate and key in
    one file)."""
    d = str(tmp_path_factory.mktemp("certs"))
    good = make_cert(d, "good")
    other = make_cert(d, "other")
    expired = make_cert(d, "expired", expired=True)
    combined = os.path.join(d, "combined.pem")
    with open(combined, "wb") as f:
        for p in (good[0], good[1]):
            with open(p, "rb") as g:
                f.write(g.read())
    os.chmod(combined, 0o600)
    return {"dir": d, "good": good, "other": other, "expired": expired,
            "combined": combined}


@pytest.fixture
def real_user(tmp_path_factory):
    """A user made by useradd (SHA-512 password) and a PAM service of
    pam_unix alone for it, removed at the end: real PAM and NSS, no
    wrappers (test_pam_unix, and bench/pamauth's smoke)."""
    name = "twe2e" + secrets.token_hex(3)
    password = "Pw-" + secrets.token_hex(6)
    service = "twe2e-unix-" + secrets.token_hex(3)
    pam_file = "/etc/pam.d/" + service
    home = None
    created = False
    try:
        base = "/tmp/twe2e-unix-" + secrets.token_hex(3)
        os.mkdir(base, 0o755)
        home = os.path.join(base, name)
        r = subprocess.run(["useradd", "-M", "-d", home, "-s", "/bin/sh", "-U", name],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        assert r.returncode == 0, r.stderr
        created = True
        r = subprocess.run(["chpasswd", "-c", "SHA512", "-s", "1000"],
                           input=("%s:%s\n" % (name, password)).encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        if r.returncode != 0:   # older chpasswd without -s
            r = subprocess.run(["chpasswd", "-c", "SHA512"],
                               input=("%s:%s\n" % (name, password)).encode(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        assert r.returncode == 0, r.stderr
        pw = pwd.getpwnam(name)
        os.mkdir(home, 0o755)
        os.chown(home, pw.pw_uid, pw.pw_gid)
        with open(pam_file, "w") as f:
            f.write("auth required pam_unix.so\naccount required pam_unix.so\n")
        yield {"name": name, "password": password, "service": service, "home": home,
               "uid": pw.pw_uid, "gid": pw.pw_gid, "base": base}
    finally:
        if os.path.exists(pam_file):
            os.unlink(pam_file)
        if created:
            subprocess.run(["userdel", "-f", name], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
        if home:
            subprocess.run(["rm", "-rf", "--one-file-system", os.path.dirname(home)],
                           timeout=30)
