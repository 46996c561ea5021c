#!/usr/bin/env python3
"""vsftpd.conf files as they are found in the wild, each through
`twinftpd -t` and a real start: usage (as root)

    tests/vsftpd/corpus.py DIR [BINARY]

For every file in DIR (not *.tmpl, not per-user files), only what points
into this machine is rewritten: ports (127.0.0.1, from 24000), the passive
range, secure_chroot_dir, log files, a test certificate for FTPS, list
files (empty), missing directories (/srv/ftp) and accounts that do not
exist here (nobody, ftp); a pasv_address host name is dropped. Then -t, a
start, the greeting, and where the file allows anonymous logins (vsftpd's
default YES) an anonymous login and PWD. Prints one line per file and
"bad: N of M". Not part of the test suite: the files are other people's
and are not kept in this tree (the stop-27 note says where the 155 came
from). Everything it starts is stopped; its scratch directory is removed.
"""
import atexit, os, re, socket, subprocess, sys, time, glob, shutil, pwd, tempfile

B = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "twinftpd")
W = tempfile.mkdtemp(prefix="tw-corpus-")
atexit.register(shutil.rmtree, W, True)
CERT = W + "/cert.pem"
if not os.path.exists(CERT):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", CERT, "-out", CERT, "-days", "30", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    os.chmod(CERT, 0o600)
EMPTY = W + "/empty"
os.makedirs(EMPTY, exist_ok=True)
os.chmod(W, 0o755)
os.chmod(EMPTY, 0o755)

OPT = re.compile(r"^([A-Za-z0-9_]+)=(.*)$")
port = 24000


def free_port(p):
    while True:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
            s.close()
            return p
        except OSError:
            p += 1


def rewrite(path, tag):
    global port
    d = os.path.join(W, tag)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o755)
    opts = {}
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    out = []
    for l in lines:
        m = OPT.match(l.rstrip("\r"))
        if m:
            opts[m.group(1)] = m.group(2)
    p = free_port(port)
    port = p + 10
    world = {"listen": "YES", "listen_ipv6": "NO", "listen_port": str(p),
             "listen_address": "127.0.0.1", "background": "NO",
             "pasv_min_port": str(p + 1), "pasv_max_port": str(p + 5),
             "secure_chroot_dir": EMPTY, "log_file": d + "/log", "vsftpd_log_file": d + "/log",
             "xferlog_file": d + "/xferlog", "implicit_ssl_port": "0"}
    if opts.get("ssl_enable", "NO").upper() == "YES" or "rsa_cert_file" in opts:
        world["rsa_cert_file"] = CERT
        world["rsa_private_key_file"] = CERT
    for k in ("local_root", "anon_root"):
        v = opts.get(k, "")
        if v and not os.path.isdir(v.split("$")[0]):
            world[k] = "/srv/ftp"
    if opts.get("user_config_dir"):
        os.makedirs(d + "/ucd", exist_ok=True)
        world["user_config_dir"] = d + "/ucd"
    for k in ("chroot_list_file", "userlist_file", "banned_email_file", "email_password_file"):
        f = d + "/" + k
        open(f, "w").close()
        world[k] = f
    if opts.get("banner_file"):
        open(d + "/banner", "w").write("hello\n")
        world["banner_file"] = d + "/banner"
    for k in ("nopriv_user", "ftp_username", "guest_username", "chown_username"):
        v = opts.get(k)
        if v:
            try:
                pwd.getpwnam(v)
            except KeyError:
                world[k] = {"nopriv_user": "nobody", "ftp_username": "ftp",
                            "guest_username": "ftp", "chown_username": "ftp"}[k]
    pa = opts.get("pasv_address", "")
    if pa and not re.match(r"^\d+\.\d+\.\d+\.\d+$", pa):
        world["pasv_address"] = ""
        world["pasv_addr_resolve"] = "NO"
    seen = set()
    for l in lines:
        m = OPT.match(l.rstrip("\r"))
        if m and m.group(1) in world:
            seen.add(m.group(1))
            l = "%s=%s" % (m.group(1), world[m.group(1)])
        out.append(l)
    out += ["%s=%s" % (k, v) for k, v in world.items() if k not in seen]
    conf = d + "/vsftpd.conf"
    open(conf, "w").write("\n".join(out) + "\n")
    return conf, d, p, opts


def greet(p, anon):
    s = socket.create_connection(("127.0.0.1", p), timeout=10)
    f = s.makefile("rb")

    def reply():
        line = f.readline()
        first = line
        while len(line) >= 4 and line[3:4] == b"-":
            line = f.readline()
        return first.strip(), line.strip()

    g = reply()
    res = [g[0][:60]]
    if anon and g[1][:3] == b"220":
        s.sendall(b"USER anonymous\r\n")
        res.append(reply()[1][:60])
        s.sendall(b"PASS e2e@example.org\r\n")
        res.append(reply()[1][:60])
        s.sendall(b"PWD\r\n")
        res.append(reply()[1][:60])
    s.sendall(b"QUIT\r\n")
    s.close()
    return res


def main():
    files = sorted(f for f in glob.glob(os.path.join(sys.argv[1], "*"))
                   if not f.endswith((".tmpl", "INDEX.txt")) and "user_conf" not in f
                   and "vsftpd_user" not in f)
    bad = 0
    for i, path in enumerate(files):
        tag = "c%03d" % i
        conf, d, p, opts = rewrite(path, tag)
        name = os.path.basename(path)
        t = subprocess.run([B, "-t", conf], capture_output=True, text=True, timeout=60)
        if t.returncode != 0:
            errs = [l for l in t.stderr.splitlines() if "note:" not in l and "problem" not in l
                    and "no PAM service file" not in l]
            if errs:
                print("T-FAIL %s: %s" % (name, " | ".join(errs)[:300]))
        proc = subprocess.Popen([B, conf], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            ok = False
            for _ in range(100):
                if proc.poll() is not None:
                    break
                if ("127.0.0.1:%d " % p) in subprocess.run(["ss", "-ltn"], capture_output=True,
                                                            text=True).stdout:
                    ok = True
                    break
                time.sleep(0.05)
            if not ok:
                err = proc.stderr.read().decode()[:300] if proc.poll() is not None else "no port"
                print("START-FAIL %s: %s" % (name, err.replace("\n", " | ")))
                bad += 1
                continue
            anon = opts.get("anonymous_enable", "YES").upper() in ("YES", "TRUE", "1") and \
                opts.get("ssl_enable", "NO").upper() != "YES"
            try:
                r = greet(p, anon)
            except Exception as e:
                r = ["EXC %r" % e]
            okr = r[0].startswith(b"220") if isinstance(r[0], bytes) else False
            if anon and okr:
                okr = len(r) > 2 and r[2][:3] == b"230"
            print("%s %s: %s" % ("OK  " if okr else "BAD ", name, r))
            if not okr:
                bad += 1
                log = open(d + "/log", errors="replace").read().splitlines()[-4:] \
                    if os.path.exists(d + "/log") else []
                for l in log:
                    print("      log:", l[:200])
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    print("bad:", bad, "of", len(files))


if len(sys.argv) < 2 or os.geteuid() != 0:
    sys.exit("usage (as root): corpus.py DIR [BINARY]")
main()
