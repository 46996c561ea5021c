"""SIGHUP reload (issue 14): the listener reads its configuration again.

A configuration with an error is refused whole and the old one keeps
serving; new sessions get the new settings while sessions in progress
keep theirs (a transfer across the reload ends 226 with the same bytes);
ready pairs forked under the old settings are never handed a client;
no connection is refused meanwhile; the log is reopened (logrotate
without copytruncate); settings only a restart can change are named.
"""

import ftplib
import io
import os
import re
import shutil
import signal
import ssl
import subprocess

import pytest

from twhelpers import (PASSWORDS, REPO, BannerBurst, Ctrl, ReuseFTP_TLS, TransfersInFlight,
                       children, client_context, reload_and_wait, wait_until)

def banner(s):
    with Ctrl(s.port) as c:
        code_, lines = c.reply()
        assert code_ == 220, lines
        return lines[0].decode()


def test_banner_and_write_enable_new_sessions_only(make_server):
    s = make_server({"ftpd_banner": "old banner", "prefork_sessions": 4})
    s.put("f.txt", b"x")
    # Ready pairs exist (forked with the old banner) before the reload.
    wait_until(lambda: len(children(s.pid)) >= 4, 15, what="ready pairs")
    old = s.ftp("alice")
    assert "old banner" in old.getwelcome()
    old_mon = s.session_of(old.sock.getsockname()[1])
    old_pairs = set(children(s.pid)) - {old_mon}
    assert old_pairs
    s.opts["ftpd_banner"] = "new banner"
    s.opts["write_enable"] = False
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    # Every new session, the first one included, says the new banner:
    # the old ready pairs were retired, not handed out.
    for _ in range(6):
        assert "new banner" in banner(s)
    new = s.ftp("alice")
    assert "new banner" in new.getwelcome()
    with pytest.raises(ftplib.error_perm):
        new.storbinary("STOR by-new.txt", io.BytesIO(b"new"))
    # The session from before the reload keeps write_enable=YES.
    old.storbinary("STOR by-old.txt", io.BytesIO(b"old"))
    assert s.read("by-old.txt") == b"old"
    assert not os.path.exists(s.path("by-new.txt"))
    old.quit()
    new.quit()
    # The retired pairs are gone, and the pool is full again with new ones.
    wait_until(lambda: not (set(children(s.pid)) & old_pairs), 15,
               what="the old ready pairs to end")
    wait_until(lambda: len(children(s.pid)) == 4, 15, what="a pool of 4 new pairs")


def test_write_enable_turned_on_by_reload_under_seccomp(make_server):
    """The post-login worker's policy depends on write_enable: a reload
    that turns it on must give new sessions the policy that allows
    writing (both are compiled at start), not kill them at the first
    open for writing."""
    s = make_server({"write_enable": False, "seccomp_sandbox": True})
    f = s.ftp("alice")
    with pytest.raises(ftplib.error_perm):
        f.storbinary("STOR before.txt", io.BytesIO(b"no"))
    s.opts["write_enable"] = True
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    g = s.ftp("alice")
    g.storbinary("STOR after.txt", io.BytesIO(b"yes"))
    g.mkd("newdir")
    g.quit()
    assert s.read("after.txt") == b"yes"
    # The old session still may not write, and did not die trying.
    with pytest.raises(ftplib.error_perm):
        f.storbinary("STOR before.txt", io.BytesIO(b"no"))
    f.quit()
    assert "killed by seccomp" not in s.log_text()


def test_retr_and_stor_across_reload_keep_their_bytes(make_server):
    s = make_server({"ftpd_banner": "before"})
    moving = TransfersInFlight(s)
    # Both transfers are in flight (the RETR blocked on our unread
    # socket, the STOR waiting for the rest): reload now.
    s.opts["ftpd_banner"] = "after"
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    assert "after" in banner(s)

    moving.finish()


def test_burst_across_reloads_all_served(make_server):
    s = make_server({"max_per_ip": 0, "prefork_sessions": 8, "ftpd_banner": "b0"})
    burst = BannerBurst(s.port)
    try:
        for i in range(3):
            burst.wait_for(i)
            s.opts["ftpd_banner"] = "b%d" % (i + 1)
            s.write_config()
            assert "reload done" in reload_and_wait(s)
        burst.wait_for(3)
    finally:
        burst.stop()
    results = burst.results
    # Sessions before, between and after the reloads.
    assert set(results) == {0, 1, 2, 3}, set(results)
    assert "refused connection" not in s.log_text()


def test_broken_config_refused_old_one_serves(make_server):
    s = make_server({"ftpd_banner": "kept"})
    good = dict(s.opts)
    # A syntax error: refused whole (the banner line before it is not applied).
    s.opts["ftpd_banner"] = "half-applied"
    s.write_config()
    with open(s.conf_path, "a") as f:
        f.write("no_such_option=YES\n")
    line = reload_and_wait(s)
    assert "reload refused" in line and "no_such_option" in line, line
    assert "kept" in banner(s)
    f = s.ftp("alice")
    f.quit()
    # Parsed fine, but its derived state cannot be built: refused too.
    s.opts = dict(good, ftpd_banner="half-applied", nopriv_user="no-such-user-x")
    s.write_config()
    line = reload_and_wait(s)
    assert "reload refused" in line and "no-such-user-x" in line, line
    assert "kept" in banner(s)
    # Fixed again: applied.
    s.opts = dict(good, ftpd_banner="fixed")
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    assert "fixed" in banner(s)


def test_restart_only_settings_named_and_kept(make_server):
    s = make_server({"ftpd_banner": "one"})
    other = s.pasv_ports[-1]
    s.opts.update(listen_port=other, isolate=True, ftpd_banner="two")
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    log = s.log_text()
    assert re.search(r"reload: listen_port cannot change without a restart", log), log
    assert re.search(r"reload: isolate cannot change without a restart", log), log
    # Still on the old port, and the rest of the file applied.
    assert "two" in banner(s)


def test_log_reopened_after_rename(make_server):
    s = make_server()
    f = s.ftp("alice")
    f.quit()
    rotated = s.log_path + ".1"
    os.rename(s.log_path, rotated)

    def rotated_text():
        with open(rotated, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    # The listener's "reload done" line goes to the new file.
    reload_and_wait(s)
    assert os.path.exists(s.log_path)
    assert "reopening the log" in rotated_text()
    assert "reload done" in s.log_text()
    assert "reload done" not in rotated_text()
    # A new session logs to the new file (xferlog_enable: its login line).
    f = s.ftp("bob")
    f.quit()
    s.wait_log(r"bob")
    assert os.stat(s.log_path).st_mode & 0o777 == 0o600
    # A stray SIGHUP to a session does not end it.
    c = s.ctrl()
    mon = s.session_of(c.sock.getsockname()[1])
    for pid in [mon] + children(mon):
        os.kill(pid, signal.SIGHUP)
    assert c.cmd("NOOP")[0] == 200
    c.close()


def test_logrotate_file_rotates_without_copytruncate(make_server):
    """etc/twinftpd.logrotate run by logrotate on the test's log. Only its
    postrotate command is replaced: the shipped one signals the oldest
    twinftpd of the machine (or asks systemd), not this test's."""
    logrotate = shutil.which("logrotate")
    assert logrotate, "logrotate missing (etc/install-deps.sh installs it)"
    s = make_server()
    f = s.ftp("alice")
    f.quit()
    with open(os.path.join(REPO, "etc", "twinftpd.logrotate")) as fh:
        shipped = fh.read()
    assert "copytruncate" not in re.sub(r"#.*", "", shipped)
    conf = shipped.replace("/var/log/twinftpd.log", s.log_path)
    conf = re.sub(r"(postrotate\n).*?(\n\s*endscript)",
                  r"\1\t\tkill -HUP %d\2" % s.pid, conf, flags=re.S)
    path = os.path.join(s.base, "logrotate.conf")
    with open(path, "w") as fh:
        fh.write(conf)
    rotated = s.log_path + ".1"
    r = subprocess.run([logrotate, "-f", "-s", os.path.join(s.base, "logrotate.state"), path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    assert r.returncode == 0, r.stdout.decode()
    # delaycompress: the first rotation leaves the old log plain.
    assert os.path.exists(rotated)
    wait_until(lambda: "reload done" in s.log_text(), 15, what="reload in the new log")
    with open(rotated, encoding="utf-8", errors="replace") as fh:
        old = fh.read()
    assert 'user "alice"' in old and "reopening the log" in old
    f = s.ftp("bob")
    f.quit()
    s.wait_log(r'user "bob"')


def _make_cert(base, name):
    """A self-signed certificate and its key (PEM), in one file and apart."""
    cert, key = os.path.join(base, name + ".crt"), os.path.join(base, name + ".key")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                        "-subj", "/CN=" + name, "-keyout", key, "-out", cert],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    assert r.returncode == 0, r.stdout.decode()
    with open(cert) as f:
        return cert, key, ssl.PEM_cert_to_DER_cert(f.read())


def _tls_client(s):
    f = ReuseFTP_TLS(context=client_context(), timeout=15)
    f.connect("127.0.0.1", s.port)
    f.auth()
    return f


def _maps_tls_module(pid):
    with open("/proc/%d/maps" % pid) as fh:
        return "twinftpd-tls" in fh.read()


def test_reload_turns_ftps_on(make_server):
    """A server started without FTPS gets it from a reload: the listener,
    already under its seccomp filter, loads the TLS module then (src/tls.h),
    and new sessions answer AUTH TLS and move data over TLS. A session
    from before the reload keeps going in plain FTP."""
    s = make_server(start=False)
    cert, key, der = _make_cert(s.base, "late")
    s.start()
    plain = s.ftp("alice")
    with Ctrl(s.port) as c:
        assert c.reply()[0] == 220
        assert c.cmd("AUTH TLS")[0] != 234
    assert not _maps_tls_module(s.pid)
    s.opts.update(ssl_enable=True, rsa_cert_file=cert, rsa_private_key_file=key)
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    assert _maps_tls_module(s.pid)
    f = _tls_client(s)
    assert f.sock.getpeercert(binary_form=True) == der
    f.login("alice", PASSWORDS["alice"])
    f.prot_p()
    f.storbinary("STOR tls-on.bin", io.BytesIO(b"y" * 300000))
    buf = io.BytesIO()
    f.retrbinary("RETR tls-on.bin", buf.write)
    assert buf.getvalue() == b"y" * 300000
    f.quit()
    assert "tls-on.bin" in plain.nlst()
    plain.quit()


def test_reload_serves_a_renewed_certificate(make_server):
    """FTPS: a reload loads the certificate again (and checks its key as
    at start); a configuration naming a certificate that cannot be
    loaded is refused and the one in force keeps serving. (Each pre-login
    worker reads the key file itself when forked, src/tls.h: a renewal
    writes the new pair and reloads at once, or writes it under new names
    and points the configuration at them, as here.)"""
    s = make_server(start=False)
    old_cert, old_key, old_der = _make_cert(s.base, "old")
    new_cert, new_key, new_der = _make_cert(s.base, "new")
    _, other_key, _ = _make_cert(s.base, "other")
    s.opts.update(ssl_enable=True, rsa_cert_file=old_cert, rsa_private_key_file=old_key)
    s.start()
    before = _tls_client(s)
    assert before.sock.getpeercert(binary_form=True) == old_der
    before.login("alice", PASSWORDS["alice"])
    before.prot_p()
    # The new certificate with a key that does not match it: refused whole.
    s.opts.update(rsa_cert_file=new_cert, rsa_private_key_file=other_key)
    s.write_config()
    line = reload_and_wait(s)
    assert "reload refused" in line and "other.key" in line, line
    f = _tls_client(s)
    assert f.sock.getpeercert(binary_form=True) == old_der
    f.quit()
    # With its own key: applied.
    s.opts.update(rsa_private_key_file=new_key)
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    f = _tls_client(s)
    assert f.sock.getpeercert(binary_form=True) == new_der
    f.login("bob", PASSWORDS["bob"])
    f.prot_p()
    assert f.nlst() == []
    f.quit()
    # The session from before the reload keeps its TLS session, data
    # connections included (they resume it).
    assert before.nlst() == []
    before.quit()
    # FTPS turned off by a reload: AUTH TLS is refused to new sessions;
    # one that was in TLS before goes on in it (the module stays loaded:
    # src/tls.h), data connections included.
    during = _tls_client(s)
    during.login("bob", PASSWORDS["bob"])
    during.prot_p()
    s.opts["ssl_enable"] = False
    s.write_config()
    assert "reload done" in reload_and_wait(s)
    with Ctrl(s.port) as c:
        assert c.reply()[0] == 220
        assert c.cmd("AUTH TLS")[0] != 234
        assert c.cmd("USER alice")[0] == 331
    during.storbinary("STOR after-off.bin", io.BytesIO(b"x" * 100000))
    assert during.nlst() == ["after-off.bin"]
    during.quit()
