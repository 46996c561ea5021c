"""Every command of the core command set, with its reply code and effect."""

import calendar
import os
import re
import stat
import time

import pytest

from twhelpers import USERS, code, parse_mlsx, pwd_of, rc, retr, stor

MTIME = 1234567890                  # 2009-02-13 23:31:30 UTC
MTIME_STR = "20090213233130"
DATA = bytes(range(256)) * 48 + b"tail"     # 12292 bytes


@pytest.fixture
def sess(server):
    server.put("hello.txt", b"hello world\n", mtime=MTIME)
    server.put("data.bin", DATA, mtime=MTIME)
    server.mkdir("sub")
    server.put("sub/inner.txt", b"inner\n")
    f = server.ftp("alice")
    yield server, f
    try:
        f.close()
    except OSError:
        pass


# ------------------------------------------------------------- session basics

def test_noop(sess):
    _, f = sess
    assert rc(f, "NOOP")[0] == 200


def test_syst(sess):
    _, f = sess
    cd, resp = rc(f, "SYST")
    assert cd == 215 and "UNIX" in resp and "L8" in resp, resp


def test_syst_before_login(server):
    with server.ctrl() as c:
        assert c.cmd("SYST")[0] == 215


def test_feat(sess):
    _, f = sess
    cd, resp = rc(f, "FEAT")
    assert cd == 211, resp
    lines = resp.splitlines()
    assert lines[0].startswith("211-") and lines[-1].startswith("211 "), resp
    feats = [l[1:] for l in lines[1:-1]]
    assert all(l.startswith(" ") for l in lines[1:-1]), "feature lines start with a space: %r" % resp
    names = {x.split(" ")[0].upper() for x in feats}
    for want in ("EPSV", "EPRT", "MDTM", "MFMT", "SIZE", "UTF8", "MLST", "PASV"):
        assert want in names, (want, resp)
    assert any(x.upper().startswith("REST STREAM") for x in feats), resp
    mlst = [x for x in feats if x.upper().startswith("MLST ")][0].lower()
    for fact in ("type", "size", "modify", "perm", "unique", "unix.mode"):
        assert fact in mlst, (fact, mlst)


def test_feat_before_login(server):
    with server.ctrl() as c:
        cd, lines = c.cmd("FEAT")
        assert cd == 211 and len(lines) > 2


def test_opts_utf8(sess):
    _, f = sess
    assert rc(f, "OPTS UTF8 ON")[0] == 200
    cd, _ = rc(f, "OPTS NOSUCHOPTION")
    assert cd in (500, 501, 502, 504)


def test_opts_mlst_selects_facts(sess):
    _, f = sess
    cd, resp = rc(f, "OPTS MLST type;size;")
    assert cd == 200, resp
    cd, resp = rc(f, "MLST hello.txt")
    assert cd == 250, resp
    facts, name = parse_mlsx(resp.splitlines()[1][1:])
    assert set(facts) == {"type", "size"}, resp
    assert facts["size"] == "12"
    cd, resp = rc(f, "OPTS MLST type;size;modify;perm;unique;UNIX.mode;")
    assert cd == 200, resp
    facts, _ = parse_mlsx(rc(f, "MLST hello.txt")[1].splitlines()[1][1:])
    assert {"type", "size", "modify", "perm", "unique", "unix.mode"} <= set(facts)


def test_help(sess):
    _, f = sess
    cd, resp = rc(f, "HELP")
    assert cd == 214, resp
    assert "RETR" in resp.upper() and "STOR" in resp.upper()


def test_help_before_login(server):
    with server.ctrl() as c:
        assert c.cmd("HELP")[0] == 214


def test_stat_no_argument(sess):
    _, f = sess
    cd, resp = rc(f, "STAT")
    assert cd == 211, resp
    assert resp.startswith("211-") and resp.splitlines()[-1].startswith("211 "), resp
    # vsftpd's status lines, as its users' scripts read them.
    for line in ("Connected to 127.0.0.1", "Logged in as alice", "TYPE: ",
                 "No session bandwidth limit", "Session timeout in seconds is ",
                 "Control connection is plain text", "Data connections will be plain text"):
        assert "\n     " + line in resp, resp


def test_stat_path(sess):
    _, f = sess
    cd, resp = rc(f, "STAT hello.txt")
    assert cd in (211, 212, 213), resp
    assert "hello.txt" in resp and " 12 " in resp, resp
    cd, resp = rc(f, "STAT .")
    assert cd in (211, 212, 213), resp
    assert "data.bin" in resp and "sub" in resp, resp


def test_unknown_command(sess):
    _, f = sess
    cd, _ = rc(f, "XYZZY foo")
    assert cd in (500, 502)


# ------------------------------------------------------------- directories

@pytest.mark.parametrize("verb", ["PWD", "XPWD"])
def test_pwd(sess, verb):
    _, f = sess
    cd, resp = rc(f, verb)
    assert cd == 257 and pwd_of(resp) == "/", resp


@pytest.mark.parametrize("verb", ["CWD", "XCWD"])
def test_cwd(sess, verb):
    _, f = sess
    cd, resp = rc(f, verb + " sub")
    assert cd == 250, resp
    assert pwd_of(f.sendcmd("PWD")) == "/sub"
    cd, resp = rc(f, verb + " /")
    assert cd == 250
    assert rc(f, verb + " nosuchdir")[0] == 550
    assert rc(f, verb + " hello.txt")[0] == 550
    assert pwd_of(f.sendcmd("PWD")) == "/"


@pytest.mark.parametrize("verb", ["CDUP", "XCUP"])
def test_cdup(sess, verb):
    _, f = sess
    f.sendcmd("CWD sub")
    cd, resp = rc(f, verb)
    assert cd in (200, 250), resp
    assert pwd_of(f.sendcmd("PWD")) == "/"


@pytest.mark.parametrize("verb", ["MKD", "XMKD"])
def test_mkd(sess, verb):
    s, f = sess
    cd, resp = rc(f, verb + " newdir")
    assert cd == 257, resp
    assert pwd_of(resp) == "/newdir", resp
    st = os.stat(s.path("newdir"))
    assert stat.S_ISDIR(st.st_mode)
    assert st.st_uid == USERS["alice"]
    assert stat.S_IMODE(st.st_mode) == 0o755        # local_umask=022
    assert rc(f, verb + " newdir")[0] == 550        # exists
    cd, resp = rc(f, verb + " sub/deeper")
    assert cd == 257 and pwd_of(resp) == "/sub/deeper", resp
    assert os.path.isdir(s.path("sub/deeper"))


def test_mkd_quoting(sess):
    s, f = sess
    cd, resp = rc(f, 'MKD we"ird')
    assert cd == 257, resp
    # RFC 959: an embedded " is doubled inside the quoted path.
    assert resp.startswith('257 "/we""ird"'), resp
    assert os.path.isdir(s.path('we"ird'))
    f.sendcmd('CWD we"ird')
    cd, resp = rc(f, "PWD")
    assert resp.startswith('257 "/we""ird"'), resp
    assert pwd_of(resp) == '/we"ird'


@pytest.mark.parametrize("verb", ["RMD", "XRMD"])
def test_rmd(sess, verb):
    s, f = sess
    s.mkdir("gone")
    cd, resp = rc(f, verb + " gone")
    assert cd == 250, resp
    assert not os.path.exists(s.path("gone"))
    assert rc(f, verb + " gone")[0] == 550
    assert rc(f, verb + " sub")[0] == 550            # not empty
    assert os.path.exists(s.path("sub/inner.txt"))
    assert rc(f, verb + " hello.txt")[0] == 550      # not a directory
    assert os.path.exists(s.path("hello.txt"))


def test_dele(sess):
    s, f = sess
    cd, resp = rc(f, "DELE hello.txt")
    assert cd == 250, resp
    assert not os.path.exists(s.path("hello.txt"))
    assert rc(f, "DELE hello.txt")[0] == 550
    assert rc(f, "DELE sub")[0] == 550
    assert os.path.isdir(s.path("sub"))


def test_rename(sess):
    s, f = sess
    cd, resp = rc(f, "RNFR hello.txt")
    assert cd == 350, resp
    cd, resp = rc(f, "RNTO sub/renamed.txt")
    assert cd == 250, resp
    assert not os.path.exists(s.path("hello.txt"))
    assert s.read("sub/renamed.txt") == b"hello world\n"
    # RNTO without RNFR, RNFR of a missing file.
    assert rc(f, "RNTO x")[0] == 503
    assert rc(f, "RNFR nosuch")[0] == 550
    # RNFR must be followed immediately by RNTO.
    assert rc(f, "RNFR data.bin")[0] == 350
    assert rc(f, "NOOP")[0] == 200
    assert rc(f, "RNTO y")[0] == 503
    assert os.path.exists(s.path("data.bin")) and not os.path.exists(s.path("y"))
    # Directories rename too.
    assert rc(f, "RNFR sub")[0] == 350
    assert rc(f, "RNTO sub2")[0] == 250
    assert os.path.isdir(s.path("sub2"))


# ------------------------------------------------------------- SITE

def test_site_chmod(sess):
    s, f = sess
    cd, resp = rc(f, "SITE CHMOD 600 hello.txt")
    assert cd == 200, resp
    assert stat.S_IMODE(os.stat(s.path("hello.txt")).st_mode) == 0o600
    cd, resp = rc(f, "SITE CHMOD 0751 sub")
    assert cd == 200, resp
    assert stat.S_IMODE(os.stat(s.path("sub")).st_mode) == 0o751
    assert rc(f, "SITE CHMOD 644 nosuch")[0] == 550
    assert rc(f, "SITE CHMOD xyz hello.txt")[0] in (500, 501)


@pytest.mark.parametrize("line", [
    "SITE CHMOD +7 hello.txt", "SITE CHMOD -0 hello.txt", "SITE CHMOD  600 hello.txt",
    "SITE CHMOD 600  hello.txt", "SITE CHMOD +0600 hello.txt",
])
def test_site_chmod_bad_mode_gets_a_reply(sess, line):
    # Each of these once got no reply at all, leaving client and server
    # out of step (issue 10, item 8a).
    s, f = sess
    f.sock.settimeout(5)
    try:
        cd, resp = rc(f, line)
    except TimeoutError:
        pytest.fail("no reply to %r" % line)
    assert cd in (501, 550), (line, resp)
    assert stat.S_IMODE(os.stat(s.path("hello.txt")).st_mode) == 0o644
    assert rc(f, "NOOP")[0] == 200


def test_site_umask(sess):
    s, f = sess
    cd, resp = rc(f, "SITE UMASK")
    assert cd == 200 and "022" in resp, resp
    cd, resp = rc(f, "SITE UMASK 077")
    assert cd == 200, resp
    assert "077" in rc(f, "SITE UMASK")[1]
    stor(f, "STOR private.txt", b"x")
    assert stat.S_IMODE(os.stat(s.path("private.txt")).st_mode) == 0o600
    f.sendcmd("MKD privdir")
    assert stat.S_IMODE(os.stat(s.path("privdir")).st_mode) == 0o700


def test_site_help(sess):
    _, f = sess
    cd, resp = rc(f, "SITE HELP")
    assert cd == 214, resp
    assert "CHMOD" in resp.upper()


def test_site_unknown(sess):
    _, f = sess
    assert rc(f, "SITE EXEC /bin/sh")[0] in (500, 501, 502, 504)


# ------------------------------------------------------------- parameters

def test_type(sess):
    _, f = sess
    assert rc(f, "TYPE A")[0] == 200
    assert rc(f, "TYPE A N")[0] == 200
    assert rc(f, "TYPE I")[0] == 200
    assert rc(f, "TYPE L 8")[0] == 200
    assert rc(f, "TYPE E")[0] in (500, 501, 504)
    assert rc(f, "TYPE Q")[0] in (500, 501, 504)


def test_mode(sess):
    _, f = sess
    assert rc(f, "MODE S")[0] == 200
    assert rc(f, "MODE B")[0] == 504
    assert rc(f, "MODE Z")[0] in (501, 504)


def test_stru(sess):
    _, f = sess
    assert rc(f, "STRU F")[0] == 200
    assert rc(f, "STRU R")[0] == 504
    assert rc(f, "STRU P")[0] == 504


def test_allo(sess):
    _, f = sess
    assert rc(f, "ALLO 1000")[0] in (200, 202)


# ------------------------------------------------------------- data setup

def test_pasv(sess):
    s, f = sess
    cd, resp = rc(f, "PASV")
    assert cd == 227, resp
    m = re.search(r"(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)", resp)
    assert m, resp
    nums = [int(x) for x in m.groups()]
    assert nums[:4] == [127, 0, 0, 1]
    assert nums[4] * 256 + nums[5] in s.pasv_ports, (resp, s.pasv_ports)
    data, _, final = retr(f, "RETR hello.txt", "pasv")
    assert data == b"hello world\n" and code(final) == 226


def test_epsv(sess):
    s, f = sess
    cd, resp = rc(f, "EPSV")
    assert cd == 229, resp
    m = re.search(r"\(\|\|\|(\d+)\|\)", resp)
    assert m, resp
    assert int(m.group(1)) in s.pasv_ports
    assert rc(f, "EPSV 1")[0] == 229
    assert rc(f, "EPSV 2")[0] == 522        # no IPv6 on this control connection
    data, _, final = retr(f, "RETR hello.txt", "epsv")
    assert data == b"hello world\n" and code(final) == 226


def test_epsv_all(sess):
    _, f = sess
    cd, resp = rc(f, "EPSV ALL")
    assert cd == 200, resp
    # RFC 2428: afterwards every other data connection command is refused.
    assert rc(f, "PASV")[0] // 100 in (4, 5)
    assert rc(f, "PORT 127,0,0,1,200,1")[0] // 100 in (4, 5)
    assert rc(f, "EPRT |1|127.0.0.1|51201|")[0] // 100 in (4, 5)
    data, _, final = retr(f, "RETR hello.txt", "epsv")
    assert data == b"hello world\n" and code(final) == 226


def test_port(sess):
    _, f = sess
    data, pre, final = retr(f, "RETR hello.txt", "port")
    assert data == b"hello world\n" and code(pre) in (125, 150) and code(final) == 226
    assert rc(f, "PORT 1,2,3")[0] == 501
    assert rc(f, "PORT 127,0,0,1,300,1")[0] == 501


def test_eprt(sess):
    _, f = sess
    data, _, final = retr(f, "RETR hello.txt", "eprt")
    assert data == b"hello world\n" and code(final) == 226
    assert rc(f, "EPRT |1|garbage|5000|")[0] == 501
    assert rc(f, "EPRT nonsense")[0] in (501, 522)
    assert rc(f, "EPRT |2|::1|5000|")[0] in (500, 501, 522)
    assert rc(f, "EPRT |9|127.0.0.1|5000|")[0] in (501, 522)


def test_transfer_without_data_setup(sess):
    _, f = sess
    # No PASV/PORT before RETR: 425 (RFC 959), or the classic active default.
    cd, _ = rc(f, "RETR hello.txt")
    assert cd in (425, 503), cd
    assert rc(f, "NOOP")[0] == 200


# ------------------------------------------------------------- listings

LS_LINE = re.compile(r"^([-dl])([-rwxsStT]{9})\s+\d+\s+(\S+)\s+(\S+)\s+(\d+)\s+"
                     r"(\w{3})\s+(\d{1,2})\s+(\d{4}|\d{2}:\d{2})\s(.+)$")


def _ls(data):
    out = {}
    for line in data.decode("utf-8").split("\r\n"):
        if not line or line.startswith("total"):
            continue
        m = LS_LINE.match(line)
        assert m, "not an ls -l line: %r" % line
        out[m.group(9)] = m
    return out


@pytest.mark.parametrize("mode", ["pasv", "epsv", "port", "eprt"])
def test_list(sess, mode):
    _, f = sess
    data, pre, final = retr(f, "LIST", mode)
    assert code(pre) in (125, 150) and code(final) == 226
    assert data.endswith(b"\r\n")
    ls = _ls(data)
    assert set(ls) >= {"hello.txt", "data.bin", "sub"}, ls.keys()
    h = ls["hello.txt"]
    assert h.group(1) == "-" and h.group(2) == "rw-r--r--" and h.group(5) == "12"
    assert (h.group(6), h.group(7), h.group(8)) == ("Feb", "13", "2009")
    assert ls["sub"].group(1) == "d"
    assert ls["data.bin"].group(5) == str(len(DATA))


def test_list_flags_and_paths(sess):
    _, f = sess
    for cmd in ("LIST -a", "LIST -l", "LIST -la", "LIST -al"):
        data, _, _ = retr(f, cmd)
        assert "hello.txt" in _ls(data), cmd
    data, _, _ = retr(f, "LIST sub")
    assert set(_ls(data)) == {"inner.txt"}
    data, _, _ = retr(f, "LIST -la sub")
    assert "inner.txt" in _ls(data)
    data, _, _ = retr(f, "LIST hello.txt")
    assert len(_ls(data)) == 1


def test_list_hide_ids(make_server):
    s = make_server({"hide_ids": True})
    s.put("x.txt", b"x")
    f = s.ftp("alice")
    data, _, _ = retr(f, "LIST")
    m = _ls(data)["x.txt"]
    assert m.group(3) == "ftp" and m.group(4) == "ftp", data
    f.close()


def test_nlst(sess):
    _, f = sess
    data, pre, final = retr(f, "NLST")
    assert code(final) == 226
    names = data.decode().split("\r\n")
    assert names[-1] == ""
    assert set(names[:-1]) == {"hello.txt", "data.bin", "sub"}, names
    data, _, _ = retr(f, "NLST sub")
    assert [os.path.basename(n) for n in data.decode().split("\r\n") if n] == ["inner.txt"]


def test_mlsd(sess):
    s, f = sess
    os.chmod(s.path("hello.txt"), 0o640)
    data, pre, final = retr(f, "MLSD")
    assert code(final) == 226
    entries = {}
    for line in data.decode().split("\r\n"):
        if line:
            facts, name = parse_mlsx(line)
            entries[name] = facts
    files = {n for n, fa in entries.items() if fa["type"] in ("file", "dir")}
    assert files == {"hello.txt", "data.bin", "sub"}, entries
    h = entries["hello.txt"]
    assert h["type"] == "file" and h["size"] == "12" and h["modify"][:14] == MTIME_STR
    assert h["unix.mode"] in ("0640", "640"), h
    assert "r" in h["perm"] and "w" in h["perm"], h
    assert h["unique"] and h["unique"] != entries["data.bin"]["unique"]
    assert entries["sub"]["type"] == "dir"
    assert "e" in entries["sub"]["perm"] and "l" in entries["sub"]["perm"]
    # MLSD of a file is an error (RFC 3659 7.2).
    cd, _ = rc(f, "MLSD hello.txt")
    assert cd // 100 in (4, 5)


def test_mlst(sess):
    _, f = sess
    cd, resp = rc(f, "MLST hello.txt")
    assert cd == 250, resp
    lines = resp.splitlines()
    assert lines[0].startswith("250-") and lines[-1].startswith("250"), resp
    assert lines[1].startswith(" "), resp
    facts, name = parse_mlsx(lines[1][1:])
    assert name.endswith("hello.txt")
    assert facts["type"] == "file" and facts["size"] == "12"
    assert facts["modify"][:14] == MTIME_STR
    assert facts["unix.mode"] in ("0644", "644")
    cd, resp = rc(f, "MLST")
    assert cd == 250 and parse_mlsx(resp.splitlines()[1][1:])[0]["type"] in ("cdir", "dir")
    assert rc(f, "MLST nosuch")[0] == 550


def test_dirlist_disabled(make_server):
    s = make_server({"dirlist_enable": False})
    f = s.ftp("alice")
    try:
        rc(f, "PASV")
        cd, resp = rc(f, "LIST")
        assert cd == 550, resp
    finally:
        f.close()


# ------------------------------------------------------------- transfers

def test_retr(sess):
    _, f = sess
    f.sendcmd("TYPE I")
    data, pre, final = retr(f, "RETR data.bin")
    assert data == DATA
    assert code(pre) in (125, 150) and code(final) == 226
    cd, _ = rc(f, "PASV")
    cd, resp = rc(f, "RETR nosuch")
    assert cd == 550, resp
    cd, resp = rc(f, "PASV")
    cd, resp = rc(f, "RETR sub")
    assert cd == 550, resp


def test_download_disabled(make_server):
    s = make_server({"download_enable": False})
    s.put("x.txt", b"x")
    f = s.ftp("alice")
    rc(f, "PASV")
    cd, resp = rc(f, "RETR x.txt")
    assert cd == 550, resp
    f.close()


def test_stor(sess):
    s, f = sess
    f.sendcmd("TYPE I")
    pre, final = stor(f, "STOR up.bin", DATA)
    assert code(pre) in (125, 150) and code(final) == 226
    assert s.read("up.bin") == DATA
    st = os.stat(s.path("up.bin"))
    assert st.st_uid == USERS["alice"] and st.st_gid == USERS["alice"]
    assert stat.S_IMODE(st.st_mode) == 0o644
    # Overwrite truncates.
    stor(f, "STOR up.bin", b"short")
    assert s.read("up.bin") == b"short"
    s.wait_log(r"up\.bin")


@pytest.mark.parametrize("mode", ["pasv", "epsv", "port", "eprt"])
def test_stor_modes(sess, mode):
    s, f = sess
    f.sendcmd("TYPE I")
    stor(f, "STOR m-%s.bin" % mode, DATA, mode)
    assert s.read("m-%s.bin" % mode) == DATA


def test_stou(sess):
    s, f = sess
    before = set(os.listdir(s.home()))
    pre, final = stor(f, "STOU", b"unique one")
    assert code(pre) in (125, 150) and code(final) in (226, 250)
    pre2, _ = stor(f, "STOU", b"unique two")
    new = set(os.listdir(s.home())) - before
    assert len(new) == 2, new
    contents = sorted(s.read(n) for n in new)
    assert contents == [b"unique one", b"unique two"]
    for p in (pre, pre2):
        m = re.search(r"FILE: (\S+)", p)
        if m:
            assert m.group(1) in new, (p, new)
    # STOU never overwrites.
    assert s.read("hello.txt") == b"hello world\n"


def test_appe(sess):
    s, f = sess
    pre, final = stor(f, "APPE hello.txt", b"more\n")
    assert code(final) == 226
    assert s.read("hello.txt") == b"hello world\nmore\n"
    stor(f, "APPE fresh.txt", b"new\n")
    assert s.read("fresh.txt") == b"new\n"


def test_rest(sess):
    _, f = sess
    f.sendcmd("TYPE I")
    cd, resp = rc(f, "REST 100")
    assert cd == 350, resp
    cd, resp = rc(f, "REST abc")
    assert cd == 501, resp
    cd, resp = rc(f, "REST -5")
    assert cd == 501, resp
    data, _, _ = retr(f, "RETR data.bin", rest=4000)
    assert data == DATA[4000:]
    # REST applies to one transfer only.
    data, _, _ = retr(f, "RETR data.bin")
    assert data == DATA


def test_size(sess):
    _, f = sess
    f.sendcmd("TYPE I")
    cd, resp = rc(f, "SIZE data.bin")
    assert cd == 213 and resp.split()[1] == str(len(DATA)), resp
    assert rc(f, "SIZE nosuch")[0] == 550
    assert rc(f, "SIZE sub")[0] == 550


def test_mdtm(sess):
    _, f = sess
    cd, resp = rc(f, "MDTM hello.txt")
    assert cd == 213 and resp.split()[1][:14] == MTIME_STR, resp
    assert rc(f, "MDTM nosuch")[0] == 550
    now = int(time.time())
    stor(f, "STOR now.txt", b"x")
    stamp = rc(f, "MDTM now.txt")[1].split()[1][:14]
    t = calendar.timegm(time.strptime(stamp, "%Y%m%d%H%M%S"))
    assert abs(t - now) < 120, (stamp, now)


def test_mdtm_write(sess):
    """mdtm_write (vsftpd's default YES): MDTM with a time sets it (UTC),
    the date alone is midnight, a fraction is ignored; a file whose whole
    name looks like a time is read, not set; bad times and non-files get
    550; a name with a blank works."""
    srv, f = sess
    stor(f, "STOR two words.txt", b"x")
    assert rc(f, "MDTM 20200102030405 hello.txt") == (213, "213 File modification time set.")
    assert os.stat(srv.path("hello.txt")).st_mtime == calendar.timegm((2020, 1, 2, 3, 4, 5))
    assert rc(f, "MDTM hello.txt")[1] == "213 20200102030405"
    assert rc(f, "MDTM 19991231 two words.txt")[0] == 213
    assert rc(f, "MDTM two words.txt")[1] == "213 19991231000000"
    assert rc(f, "MDTM 20210304050607.890 data.bin")[0] == 213
    assert rc(f, "MDTM data.bin")[1] == "213 20210304050607"
    srv.put("20200102030405 odd", b"a file named like a time", mtime=MTIME)
    assert rc(f, "MDTM 20200102030405 odd")[1].split()[1][:14] == MTIME_STR
    assert rc(f, "MDTM 20201302030405 hello.txt")[0] == 550
    assert rc(f, "MDTM 20200102030405 sub")[0] == 550
    assert rc(f, "MDTM 20200102030405 nosuch")[0] == 550
    f.cwd("sub")
    assert rc(f, "MDTM 20200102030406 ~/hello.txt")[0] == 213
    f.cwd("/")
    assert rc(f, "MDTM hello.txt")[1] == "213 20200102030406"
    assert rc(f, "MDTM 20200102030405 hello.txt")[0] == 213
    assert rc(f, "MDTM hello.txt")[1] == "213 20200102030405"


def test_mfmt(sess):
    """MFMT (proftpd's, pure-ftpd's; FileZilla and WinSCP keep an
    upload's time with it): the time is UTC whatever use_localtime says,
    a fraction sets nanoseconds, the access time stays, the answer names
    the time; malformed times get 501, non-files 550."""
    srv, f = sess
    stor(f, "STOR two words.txt", b"x")
    os.utime(srv.path("hello.txt"), (MTIME, MTIME))
    assert rc(f, "MFMT 20200102030405 hello.txt") == (
        213, "213 Modify=20200102030405; hello.txt")
    st = os.stat(srv.path("hello.txt"))
    assert st.st_mtime_ns == calendar.timegm((2020, 1, 2, 3, 4, 5)) * 10**9
    assert int(st.st_atime) == MTIME, "MFMT changed the access time"
    assert rc(f, "MDTM hello.txt")[1] == "213 20200102030405"
    assert rc(f, "MFMT 20210304050607.25 two words.txt") == (
        213, "213 Modify=20210304050607; two words.txt")
    assert os.stat(srv.path("two words.txt")).st_mtime_ns == \
        calendar.timegm((2021, 3, 4, 5, 6, 7)) * 10**9 + 250000000
    assert rc(f, "MFMT 20210304050607.1234567891234 data.bin")[0] == 213
    assert os.stat(srv.path("data.bin")).st_mtime_ns % 10**9 == 123456789
    f.cwd("sub")
    assert rc(f, "MFMT 20200102030406 ~/hello.txt")[0] == 213
    f.cwd("/")
    assert rc(f, "MDTM hello.txt")[1] == "213 20200102030406"
    for bad in ("20200102 hello.txt", "2020010203040 hello.txt", "20201302030405 hello.txt",
                "20200102030405", "20200102030405. hello.txt", "x20200102030405 hello.txt",
                "202001020304051 hello.txt"):
        assert rc(f, "MFMT " + bad)[0] == 501, bad
    assert rc(f, "MFMT 20200102030405 sub")[0] == 550
    assert rc(f, "MFMT 20200102030405 nosuch")[0] == 550
    assert rc(f, "MDTM hello.txt")[1] == "213 20200102030406"


def test_mdtm_write_needs_write(make_server):
    """Without write_enable (or mdtm_write) such an MDTM gets 550, as in
    vsftpd (the whole argument names no file), and so does MFMT, which
    FEAT does not list then; the file is not touched."""
    for opts in ({"write_enable": False}, {"mdtm_write": False}):
        srv = make_server(opts)
        srv.put("f.txt", b"x", mtime=MTIME)
        f = srv.ftp("alice")
        cd, resp = rc(f, "MDTM 20200102030405 f.txt")
        assert cd == 550, resp
        assert rc(f, "MFMT 20200102030405 f.txt")[0] == 550
        assert "MFMT" not in f.sendcmd("FEAT")
        assert os.stat(srv.path("f.txt")).st_mtime == MTIME
        assert rc(f, "MDTM f.txt")[1].split()[1][:14] == MTIME_STR
        f.quit()


def test_mdtm_write_local_time(make_server):
    """use_localtime: the time MDTM sets is local time, across a DST
    change, and later answers are in the same zone. (The server avoids
    mktime, which with TZ unset reads /etc/localtime again inside the
    chroot and turns the session to UTC; this test sets TZ, so it checks
    the conversion, not that hazard.)"""
    srv = make_server({"use_localtime": True}, extra_env={"TZ": ":Europe/Berlin"})
    srv.put("f.txt", b"x", mtime=MTIME)
    f = srv.ftp("alice")
    # 2009-02-14 00:31:30 in Berlin (UTC+1) is MTIME.
    assert rc(f, "MDTM f.txt")[1] == "213 20090214003130"
    assert rc(f, "MDTM 20200701120000 f.txt")[0] == 213
    # Summer: UTC+2.
    assert os.stat(srv.path("f.txt")).st_mtime == calendar.timegm((2020, 7, 1, 10, 0, 0))
    assert rc(f, "MDTM f.txt")[1] == "213 20200701120000"
    f.quit()


def test_tilde_is_the_login_directory(sess, make_server):
    """As vsftpd: a path "~" or "~/rest" names where the login started
    ("/" in a chroot, the home outside one); "~user" is a plain name."""
    srv, f = sess
    f.cwd("sub")
    f.cwd("~")
    assert f.pwd() == "/"
    f.cwd("sub")
    assert retr(f, "RETR ~/hello.txt")[0] == b"hello world\n"
    stor(f, "STOR ~/tilde.txt", b"t")
    assert srv.read("tilde.txt") == b"t"
    assert rc(f, "SIZE ~/tilde.txt") == (213, "213 1")
    assert b"tilde.txt" in retr(f, "NLST ~")[0]
    assert rc(f, "CWD ~alice")[0] == 550
    f.cwd("~/sub")
    assert f.pwd() == "/sub"
    free = make_server({"chroot_local_user": False})
    g = free.ftp("alice")
    g.cwd("/")
    g.cwd("~")
    assert g.pwd() == free.home("alice")
    g.quit()


def _passwd_dir_home():
    """(name, home) of a user in /etc/passwd whose home is a directory
    anyone may enter, along a path anyone may walk and without a
    symbolic link (Debian's daemon: /usr/sbin)."""
    def walkable(h):
        parts = h.strip("/").split("/")
        return all(os.stat("/" + "/".join(parts[:i])).st_mode & 0o001
                   for i in range(len(parts) + 1))
    with open("/etc/passwd") as fh:
        for line in fh:
            parts = line.rstrip("\n").split(":")
            if len(parts) < 7 or not parts[5].startswith("/") or parts[5] == "/":
                continue
            h = parts[5]
            if os.path.isdir(h) and os.path.realpath(h) == h and walkable(h):
                return parts[0], h
    pytest.skip("no user in /etc/passwd with a home anyone may enter")


def test_tilde_user_enable(make_server):
    """tilde_user_enable=YES: "~user" and "~user/rest" name the home that
    the passwd file the session sees gives the user, as vsftpd resolves
    them, after LIST's options and in SITE CHMOD too; a name it does not
    list stays a name. Outside a chroot that is /etc/passwd; in a chroot,
    the chroot's own etc/passwd: none there, or one that is not a regular
    file (a FIFO), resolves nothing. Without the option "~user" is a name."""
    name, home = _passwd_dir_home()
    free = make_server({"chroot_local_user": False, "tilde_user_enable": True})
    free.put("~no-such-user-here/in.txt", b"i")
    g = free.ftp("alice")
    g.cwd("~" + name)
    assert g.pwd() == home
    g.cwd("~")
    assert g.pwd() == free.home("alice")
    # Not in the file: the name of the directory it is.
    g.cwd("~no-such-user-here")
    assert g.pwd() == free.home("alice") + "/~no-such-user-here"
    g.quit()

    jail = make_server({"chroot_local_user": True, "tilde_user_enable": True,
                        "chmod_enable": True})
    jail.put("~%s/literal.txt" % name, b"l")
    jail.put("pub/ghost.txt", b"boo")
    f = jail.ftp("alice")
    # No etc/passwd in the chroot: nobody resolves, "~name" is a name.
    f.cwd("~" + name)
    assert f.pwd() == "/~" + name
    f.cwd("/")
    os.mkdir(jail.path("etc"))
    os.mkfifo(jail.path("etc/passwd"))
    assert b"literal.txt" in retr(f, "NLST ~" + name)[0]
    os.unlink(jail.path("etc/passwd"))
    jail.put("etc/passwd", b"ghost:x:1:1::/pub:/bin/sh\n")
    f.cwd("~ghost")
    assert f.pwd() == "/pub"
    f.cwd("/")
    assert retr(f, "RETR ~ghost/ghost.txt")[0] == b"boo"
    assert rc(f, "SIZE ~ghost/ghost.txt") == (213, "213 3")
    assert b"ghost.txt" in retr(f, "LIST -la ~ghost")[0]
    assert rc(f, "SITE CHMOD 600 ~ghost/ghost.txt")[0] == 200
    assert os.stat(jail.path("pub/ghost.txt")).st_mode & 0o777 == 0o600
    f.quit()

    off = make_server({"chroot_local_user": True})
    off.put("etc/passwd", b"ghost:x:1:1::/pub:/bin/sh\n")
    off.put("pub/ghost.txt", b"boo")
    h = off.ftp("alice")
    assert rc(h, "CWD ~ghost")[0] == 550
    h.quit()


def test_abor_idle(sess):
    _, f = sess
    cd, resp = rc(f, "ABOR")
    assert cd in (225, 226), resp
    assert rc(f, "NOOP")[0] == 200


# ------------------------------------------------------------- before login

@pytest.mark.parametrize("line", [
    "PWD", "CWD /", "CDUP", "LIST", "NLST", "MLSD", "MLST x", "RETR x", "STOR x",
    "STOU", "APPE x", "DELE x", "MKD x", "RMD x", "RNFR x", "RNTO x", "SIZE x", "MDTM x",
    "PASV", "EPSV", "PORT 127,0,0,1,200,1", "EPRT |1|127.0.0.1|51201|", "REST 0",
    "SITE CHMOD 777 x", "TYPE I", "STAT", "ALLO 10", "MODE S", "STRU F",
])
def test_needs_login(server, line):
    with server.ctrl() as c:
        cd, lines = c.cmd(line)
        assert cd == 530, (line, lines)
        assert c.cmd("NOOP")[0] == 200
    assert os.listdir(server.home()) == []
