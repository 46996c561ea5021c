"""`twinftpd -t`: good configs print the effective settings, bad ones name
the file, the line and the option; -o overrides; unsupported vsftpd options
are named."""

import os
import re
import subprocess

import pytest

from twhelpers import TWINFTPD, port_listening, free_ports


def _check(tmp_path, text, *extra):
    p = tmp_path / "t.conf"
    p.write_text(text.replace("@TMP@", str(tmp_path)))
    os.chmod(str(tmp_path), 0o755)
    r = subprocess.run([TWINFTPD, "-t", *extra, str(p)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=20, stdin=subprocess.DEVNULL)
    return r, str(p), (r.stdout + r.stderr).decode("utf-8", "replace")


def _setting(out, name, value):
    return re.search(r"(?mi)^\s*%s\s*[=:\s]\s*%s\s*$" % (re.escape(name), re.escape(value)), out)


# -t also checks the world the file names (users, directories, the PAM
# service): this one names only what exists on any Debian system.
GOOD = """# a comment
listen=YES

listen_port=2121
anonymous_enable=YES
ftp_username=nobody
local_enable=NO
secure_chroot_dir=@TMP@
log_file=@TMP@/twinftpd.log
anon_root=@TMP@
local_umask=027
max_per_ip=7
ftpd_banner=Hello there, world
"""


def test_good_config(tmp_path):
    r, path, out = _check(tmp_path, GOOD)
    assert r.returncode == 0, out
    assert _setting(out, "listen_port", "2121"), out
    assert _setting(out, "anonymous_enable", "YES"), out
    assert _setting(out, "anon_root", str(tmp_path)), out
    assert _setting(out, "local_umask", "027") or _setting(out, "local_umask", "0027"), out
    assert _setting(out, "max_per_ip", "7"), out
    assert _setting(out, "ftpd_banner", "Hello there, world"), out
    # Defaults are part of the effective settings.
    assert _setting(out, "max_clients", "2000"), out
    assert _setting(out, "pasv_enable", "YES"), out


def test_override_option(tmp_path):
    r, path, out = _check(tmp_path, GOOD, "-o", "listen_port=2222", "-o", "hide_ids=YES")
    assert r.returncode == 0, out
    assert _setting(out, "listen_port", "2222"), out
    assert _setting(out, "hide_ids", "YES"), out


def test_bad_override(tmp_path):
    r, path, out = _check(tmp_path, GOOD, "-o", "listen_port=nope")
    assert r.returncode != 0
    assert "listen_port" in out


@pytest.mark.parametrize("line", [
    "listen_port=notanumber",
    "listen_port=70000",
    "anonymous_enable=MAYBE",
    "local_umask=0999",
    "max_clients=-1",
    "this line has no equals sign",
    "frobnicate_widgets=YES",
])
def test_bad_line_names_file_line_option(tmp_path, line):
    text = "listen=YES\nanonymous_enable=NO\n# c\n" + line + "\nwrite_enable=NO\n"
    r, path, out = _check(tmp_path, text)
    assert r.returncode != 0, out
    assert "%s:4" % path in out, out
    opt = line.split("=")[0]
    if "=" in line:
        assert opt in out, out


def test_unsupported_vsftpd_option(tmp_path):
    text = "listen=YES\nhttp_enable=YES\n"
    r, path, out = _check(tmp_path, text)
    assert r.returncode != 0, out
    assert "%s:2" % path in out and "http_enable" in out, out
    # The message says why: a vsftpd option this server does not support.
    assert re.search(r"(?i)support|vsftpd|not (yet )?implemented", out), out


def test_missing_config_file(tmp_path):
    p = str(tmp_path / "nope.conf")
    r = subprocess.run([TWINFTPD, "-t", p], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=20)
    out = (r.stdout + r.stderr).decode()
    assert r.returncode != 0 and p in out, out


def test_daemon_refuses_bad_config(tmp_path):
    port = free_ports(1)[0]
    p = tmp_path / "bad.conf"
    p.write_text("listen_port=%d\nbackground=NO\nnot_an_option=1\n" % port)
    r = subprocess.run([TWINFTPD, str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=20, stdin=subprocess.DEVNULL)
    out = (r.stdout + r.stderr).decode()
    assert r.returncode != 0
    assert "not_an_option" in out and "%s:3" % p in out, out
    assert not port_listening(port)


def test_example_config_checks(tmp_path):
    """The shipped example config passes -t."""
    here = os.path.dirname(os.path.abspath(__file__))
    etc = os.path.normpath(os.path.join(here, "..", "..", "etc"))
    confs = [os.path.join(etc, n) for n in sorted(os.listdir(etc)) if n.endswith(".conf")]
    assert confs, "no example config in etc/"
    for conf in confs:
        r = subprocess.run([TWINFTPD, "-t", conf], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=20)
        err = r.stderr.decode()
        # The one thing a machine without the package lacks is its PAM
        # service file (etc/twinftpd.pam), which -t rightly reports. The
        # report itself says the file was absent when -t looked (the
        # package test may install or purge it meanwhile on a shared host).
        no_pam = "no PAM service file /etc/pam.d/twinftpd"
        problems = [l for l in err.splitlines() if "note:" not in l and "warning:" not in l
                    and "problem" not in l and no_pam not in l]
        assert not problems, (conf, err)
        assert r.returncode == 0 or no_pam in err, (conf, err)
