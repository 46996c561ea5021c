"""`meson install` (issue 14): everything a distribution ships, where
Debian expects it, the units' paths filled from the configured prefix,
and an operator's /etc/twinftpd.conf never overwritten. Installs into a
private DESTDIR from the build under test (no rebuild).
"""

import json
import os
import subprocess

from twhelpers import REPO

BUILD = os.environ.get("TW_BUILD_DIR") or os.path.join(REPO, "build")


def meson_install(destdir):
    r = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--destdir",
                        str(destdir)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    assert r.returncode == 0, r.stdout.decode()[-3000:]
    return r.stdout.decode()


def build_option(name):
    r = subprocess.run(["meson", "introspect", "--buildoptions", BUILD],
                       stdout=subprocess.PIPE, timeout=60, check=True)
    for o in json.loads(r.stdout):
        if o["name"] == name:
            return o["value"]
    raise AssertionError("no build option %s" % name)


def installed(destdir):
    out = set()
    for dirpath, dirnames, filenames in os.walk(destdir):
        for n in filenames:
            out.add("/" + os.path.relpath(os.path.join(dirpath, n), destdir))
        for n in dirnames:
            p = os.path.join(dirpath, n)
            if not os.listdir(p):
                out.add("/" + os.path.relpath(p, destdir) + "/")
    return out


def test_meson_install_puts_everything_in_place(tmp_path):
    prefix = build_option("prefix")
    sbindir = os.path.join(prefix, build_option("sbindir"))
    datadir = os.path.join(prefix, build_option("datadir"))
    mandir = os.path.join(prefix, build_option("mandir"))
    unitdir = build_option("systemdunitdir") or os.path.join(prefix, "lib/systemd/system")
    dest = tmp_path / "dest"
    meson_install(dest)
    libdir = os.path.join(prefix, build_option("libdir"))
    want = {
        sbindir + "/twinftpd",
        libdir + "/twinftpd/twinftpd-tls.so",
        mandir + "/man8/twinftpd.8",
        mandir + "/man5/twinftpd.conf.5",
        "/etc/twinftpd.conf",
        "/etc/pam.d/twinftpd",
        "/etc/logrotate.d/twinftpd",
        unitdir + "/twinftpd.service",
        unitdir + "/twinftpd.socket",
        unitdir + "/twinftpd-inetd.socket",
        unitdir + "/twinftpd-inetd@.service",
        datadir + "/doc/twinftpd/examples/twinftpd.inetd",
        datadir + "/doc/twinftpd/examples/twinftpd.xinetd",
        datadir + "/doc/twinftpd/examples/twinftpd.conf",
        "/usr/share/empty/",
    }
    for f2b in ("filter.d", "jail.d"):
        if os.path.exists(os.path.join(REPO, "etc", "fail2ban", f2b, "twinftpd.conf")):
            want.add("/etc/fail2ban/%s/twinftpd.conf" % f2b)
    got = installed(dest)
    assert want <= got, sorted(want - got)
    assert not got - want, sorted(got - want)
    d = str(dest)
    assert os.stat(d + sbindir + "/twinftpd").st_mode & 0o111
    st = os.stat(d + "/usr/share/empty")
    assert st.st_mode & 0o7777 == 0o555 and st.st_uid == 0
    with open(os.path.join(REPO, "etc", "twinftpd.conf"), "rb") as f:
        example = f.read()
    with open(d + "/etc/twinftpd.conf", "rb") as f:
        assert f.read() == example
    # The units run the binary of this prefix, with the daemon's default config.
    units = {}
    for u in ("twinftpd.service", "twinftpd-inetd@.service"):
        with open(d + unitdir + "/" + u) as f:
            units[u] = f.read()
        assert "@" + "SBINDIR@" not in units[u] and "@" + "CONFIG@" not in units[u]
    exe = sbindir + "/twinftpd"
    assert "\nExecStart=%s -o background=NO /etc/twinftpd.conf\n" % exe in \
        units["twinftpd.service"]
    assert "\nExecStartPre=%s -t /etc/twinftpd.conf\n" % exe in units["twinftpd.service"]
    assert "\nExecStart=%s -o listen=NO -o listen_ipv6=NO /etc/twinftpd.conf\n" % exe in \
        units["twinftpd-inetd@.service"]
    for ex in ("twinftpd.inetd", "twinftpd.xinetd"):
        with open(d + datadir + "/doc/twinftpd/examples/" + ex) as f:
            assert exe in f.read(), ex


def test_meson_install_keeps_an_existing_config(tmp_path):
    dest = tmp_path / "dest"
    (dest / "etc").mkdir(parents=True)
    mine = b"# the operator's own\nlisten_port=2121\n"
    (dest / "etc" / "twinftpd.conf").write_bytes(mine)
    meson_install(dest)
    assert (dest / "etc" / "twinftpd.conf").read_bytes() == mine
    # The example is still there to compare with.
    assert any(f.endswith("/doc/twinftpd/examples/twinftpd.conf") for f in installed(dest))
