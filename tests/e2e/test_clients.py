"""Real clients: lftp mirror both ways, curl download/upload/listing, and
the other command-line clients Debian ships: busybox ftpget/ftpput,
ncftpget/ncftpput, wget (one file and recursive), wput, tnftp."""

import os
import random
import shutil

import pytest

from twhelpers import HOST, PASSWORDS, USERS, run, sha256, sha256_file


def _make_tree(root, n_files=1000, seed=1234):
    rnd = random.Random(seed)
    files = {}
    dirs = ["d%02d" % i for i in range(10)] + ["d%02d/sub" % i for i in range(0, 10, 3)] + [
        "with space", "with space/deep er"]
    for d in dirs:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for i in range(n_files):
        d = dirs[i % len(dirs)]
        name = "f%04d.dat" % i if i % 50 else "file %04d.dat" % i
        rel = os.path.join(d, name)
        data = rnd.randbytes(rnd.randrange(0, 3000))
        with open(os.path.join(root, rel), "wb") as fh:
            fh.write(data)
        files[rel] = sha256(data)
    return files


def _tree_files(root):
    out = {}
    for dirpath, _, filenames in os.walk(root):
        for n in filenames:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = sha256_file(p)
    return out


def _lftp(server, script, cwd, timeout=240):
    home = os.path.join(cwd, ".lftphome")
    os.makedirs(home, exist_ok=True)
    pre = ("set ftp:ssl-allow no; set net:max-retries 2; set net:timeout 20; "
           "set net:reconnect-interval-base 1; set cmd:fail-exit yes; "
           "set ftp:passive-mode on; set xfer:clobber on; "
           "open -u alice,%s -p %d %s; " % (PASSWORDS["alice"], server.port, HOST))
    env = dict(os.environ, HOME=home, LFTP_HOME=home)
    r = run(["lftp", "-c", pre + script], timeout=timeout, cwd=cwd, env=env)
    return r


@pytest.mark.timeout(300)
def test_lftp_mirror_1000_files_both_ways(server, tmp_path):
    src = str(tmp_path / "src")
    os.mkdir(src)
    files = _make_tree(src)
    assert len(files) == 1000
    r = _lftp(server, "mirror -R --parallel=4 --no-perms src tree", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    remote = os.path.join(server.home(), "tree")
    got = _tree_files(remote)
    assert got == files
    for dirpath, dirnames, filenames in os.walk(remote):
        for n in dirnames + filenames:
            assert os.lstat(os.path.join(dirpath, n)).st_uid == USERS["alice"]
    # ... and back down into a fresh directory.
    r = _lftp(server, "mirror --parallel=4 tree back", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert _tree_files(str(tmp_path / "back")) == files
    shutil.rmtree(src)


def test_lftp_basic_commands(server, tmp_path):
    server.put("hello.txt", b"hello\n")
    with open(tmp_path / "up.txt", "wb") as fh:
        fh.write(b"from lftp\n")
    r = _lftp(server, "ls; put up.txt; mkdir newd; mv up.txt newd/moved.txt; "
                      "get hello.txt -o got.txt; rm hello.txt; cls -1 newd", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert b"hello.txt" in r.stdout and b"moved.txt" in r.stdout
    assert server.read("newd/moved.txt") == b"from lftp\n"
    assert (tmp_path / "got.txt").read_bytes() == b"hello\n"
    assert not os.path.exists(server.path("hello.txt"))


def test_lftp_pget_segments_and_resumes(server, tmp_path):
    """lftp's segmented download (pget -n 4: four sessions, each a REST and
    a RETR it drops once its part has come, mid-transfer) and its resumed
    transfers both ways (get -c and put -c: REST, and SIZE then APPE)."""
    data = random.Random(77).randbytes(6 << 20)
    server.put("big.bin", data)
    r = _lftp(server, "pget -n 4 big.bin -o got.bin", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert sha256_file(str(tmp_path / "got.bin")) == sha256(data)
    # A partial local copy is completed from where it ends ...
    with open(tmp_path / "part.bin", "wb") as fh:
        fh.write(data[:1234567])
    r = _lftp(server, "get -c big.bin -o part.bin", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert sha256_file(str(tmp_path / "part.bin")) == sha256(data)
    # ... and so is a partial remote one.
    server.put("up.bin", data[:3000001])
    with open(tmp_path / "up.bin", "wb") as fh:
        fh.write(data)
    r = _lftp(server, "put -c up.bin", str(tmp_path))
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert sha256(server.read("up.bin")) == sha256(data)


def _curl(*args, timeout=60):
    return run(["curl", "-sS", "--max-time", "50", "--connect-timeout", "10"] + list(args),
               timeout=timeout)


@pytest.mark.parametrize("flags", [[], ["--disable-epsv"], ["-P", HOST],
                                   ["-P", HOST, "--disable-eprt"]],
                         ids=["epsv", "pasv", "eprt", "port"])
def test_curl_download(server, tmp_path, flags):
    data = os.urandom(5 * 1024 * 1024 + 17)
    server.put("dl.bin", data)
    out = str(tmp_path / "dl.bin")
    r = _curl(*flags, "-o", out, server.url("dl.bin"))
    assert r.returncode == 0, r.stderr
    assert sha256_file(out) == sha256(data)


@pytest.mark.parametrize("flags", [[], ["-P", HOST]], ids=["passive", "active"])
def test_curl_upload(server, tmp_path, flags):
    src = tmp_path / "ul.bin"
    data = os.urandom(3 * 1024 * 1024 + 5)
    src.write_bytes(data)
    r = _curl(*flags, "--ftp-create-dirs", "-T", str(src), server.url("updir/ul.bin"))
    assert r.returncode == 0, r.stderr
    assert sha256(server.read("updir/ul.bin")) == sha256(data)
    assert os.stat(server.path("updir/ul.bin")).st_uid == USERS["alice"]


def test_curl_listing(server):
    server.put("a.txt", b"a")
    server.put("b c.txt", b"bc")
    server.mkdir("dir")
    r = _curl(server.url(""))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert any(l.startswith("-") and l.endswith(" a.txt") for l in lines), lines
    assert any(l.startswith("-") and l.endswith(" b c.txt") for l in lines), lines
    assert any(l.startswith("d") and l.endswith(" dir") for l in lines), lines
    r = _curl("-l", server.url(""))
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.decode().splitlines()) == ["a.txt", "b c.txt", "dir"]


def test_curl_anonymous(server, tmp_path):
    r = _curl(server.url("pub/readme.txt", user="anonymous"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"anonymous readme\n"
    src = tmp_path / "x"
    src.write_bytes(b"nope")
    r = _curl("-T", str(src), server.url("pub/x", user="anonymous"))
    assert r.returncode != 0
    assert not os.path.exists(os.path.join(server.anon_root, "pub", "x"))


def test_curl_bad_password(server):
    r = _curl("ftp://alice:wrong@%s:%d/" % (HOST, server.port))
    assert r.returncode == 67, (r.returncode, r.stderr)     # CURLE_LOGIN_DENIED


def test_curl_resume(server, tmp_path):
    data = os.urandom(2 * 1024 * 1024)
    server.put("r.bin", data)
    out = tmp_path / "r.bin"
    out.write_bytes(data[:700000])
    r = _curl("-C", "-", "-o", str(out), server.url("r.bin"))
    assert r.returncode == 0, r.stderr
    assert sha256(out.read_bytes()) == sha256(data)
    # Upload resume: -C - asks SIZE and appends the rest.
    server.put("u.bin", data[:900000])
    src = tmp_path / "u.bin"
    src.write_bytes(data)
    r = _curl("-C", "-", "-T", str(src), server.url("u.bin"))
    assert r.returncode == 0, r.stderr
    assert sha256(server.read("u.bin")) == sha256(data)


# -- the other command-line clients of Debian -------------------------------

def _pair(tmp_path, size=2 * 1024 * 1024 + 3):
    data = os.urandom(size)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    return data, src


def test_busybox_ftpget_ftpput(server, tmp_path):
    data, src = _pair(tmp_path)
    server.put("bb.bin", data)
    auth = ["-u", "alice", "-p", PASSWORDS["alice"], "-P", str(server.port), HOST]
    r = run(["busybox", "ftpget"] + auth + [str(tmp_path / "got.bin"), "bb.bin"])
    assert r.returncode == 0, r.stderr
    assert sha256_file(str(tmp_path / "got.bin")) == sha256(data)
    server.mkdir("bbup")
    r = run(["busybox", "ftpput"] + auth + ["bbup/put.bin", str(src)])
    assert r.returncode == 0, r.stderr
    assert sha256(server.read("bbup/put.bin")) == sha256(data)


def test_ncftpget_ncftpput(server, tmp_path):
    data, src = _pair(tmp_path)
    server.put("nc.bin", data)
    auth = ["-u", "alice", "-p", PASSWORDS["alice"], "-P", str(server.port), "-t", "30"]
    out = tmp_path / "out"
    out.mkdir()
    r = run(["ncftpget", "-V"] + auth + [HOST, str(out), "/nc.bin"], cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert sha256_file(str(out / "nc.bin")) == sha256(data)
    server.mkdir("ncup")
    r = run(["ncftpput", "-V"] + auth + [HOST, "/ncup", str(src)], cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert sha256(server.read("ncup/src.bin")) == sha256(data)


def test_wget_file_and_recursive(server, tmp_path):
    data, _ = _pair(tmp_path)
    server.put("w/one.bin", data)
    server.put("w/sub/two.txt", b"two\n")
    url = "ftp://alice:%s@%s:%d/w/" % (PASSWORDS["alice"], HOST, server.port)
    r = run(["wget", "-q", "-O", str(tmp_path / "one.bin"), url + "one.bin"])
    assert r.returncode == 0, r.stderr
    assert sha256_file(str(tmp_path / "one.bin")) == sha256(data)
    r = run(["wget", "-q", "-r", "-nH", "-P", str(tmp_path / "mirror"), url],
            cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert sha256_file(str(tmp_path / "mirror" / "w" / "one.bin")) == sha256(data)
    assert (tmp_path / "mirror" / "w" / "sub" / "two.txt").read_bytes() == b"two\n"


def test_wput(server, tmp_path):
    data, src = _pair(tmp_path)
    r = run(["wput", "-q", "--basename=%s/" % tmp_path, str(src),
             "ftp://alice:%s@%s:%d/wp/" % (PASSWORDS["alice"], HOST, server.port)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert sha256(server.read("wp/src.bin")) == sha256(data)


@pytest.mark.parametrize("passive", ["on", "off"])
def test_tnftp_session(server, tmp_path, passive):
    """NetBSD's ftp (tnftp), scripted as a person types: listing, get,
    put, mkdir, size, modtime, rename, delete, rmdir."""
    data, src = _pair(tmp_path)
    server.put("tn.bin", data)
    script = "\n".join([
        "user alice %s" % PASSWORDS["alice"], "passive %s" % passive, "binary", "ls",
        "get tn.bin got.bin", "mkdir tdir", "cd tdir", "put src.bin up.bin", "size up.bin",
        "modtime up.bin", "rename up.bin moved.bin", "ls", "delete moved.bin", "cd ..",
        "rmdir tdir", "bye", ""])
    r = run(["tnftp", "-n", "-v", HOST, str(server.port)], input=script.encode(),
            cwd=str(tmp_path))
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, out + r.stderr.decode(errors="replace")
    assert sha256_file(str(tmp_path / "got.bin")) == sha256(data)
    assert "tn.bin" in out and "moved.bin" in out, out
    assert "up.bin\t%d" % len(data) in out, out
    for code in ("257 ", "350 ", "250 Rename", "250 Delete", "250 Remove", "221 "):
        assert code in out, (code, out)
    assert not os.path.exists(server.path("tdir"))
