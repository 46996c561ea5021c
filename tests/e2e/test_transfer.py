"""The data path: big binary round trip, ASCII conversion, resume, ABOR, timeouts."""

import ctypes
import fcntl
import ftplib
import hashlib
import os
import select
import signal
import struct
import socket
import subprocess
import threading
import time

import pytest

import twhelpers

from twhelpers import (HOST, PASSWORDS, USERS, abor_codes, abor_replies, code, data_cmd_sent,
                       ftp_on_socket, lock_waiters, open_data, parse_mlsx, rc,
                       recv_all, retr, sha256, sha256_file, stor, tree_snapshot, wait_until,
                       write_random)

MB = 1 << 20


@pytest.mark.timeout(200)
def test_100mb_binary_round_trip(server, tmp_path):
    src = str(tmp_path / "big.bin")
    digest = write_random(src, 100 * MB)
    f = server.ftp("alice")
    try:
        with open(src, "rb") as fh:
            resp = f.storbinary("STOR big.bin", fh, blocksize=MB)
        assert code(resp) == 226, resp
        assert os.path.getsize(server.path("big.bin")) == 100 * MB
        assert sha256_file(server.path("big.bin")) == digest
        assert f.sendcmd("SIZE big.bin") == "213 %d" % (100 * MB)
        h = hashlib.sha256()
        n = [0]

        def take(b):
            h.update(b)
            n[0] += len(b)
        resp = f.retrbinary("RETR big.bin", take, blocksize=MB)
        assert code(resp) == 226, resp
        assert n[0] == 100 * MB
        assert h.hexdigest() == digest
    finally:
        f.close()
        os.unlink(src)
    # One log line per transfer (the monitor relays the worker's line
    # after the 226, through the listener).
    wait_until(lambda: server.log_text().count("big.bin") >= 2, 10,
               what="two big.bin lines in:\n" + server.log_text())


def test_round_trip_without_sendfile(make_server):
    s = make_server({"use_sendfile": False})
    data = os.urandom(8 * MB + 12345)
    f = s.ftp("alice")
    f.sendcmd("TYPE I")
    stor(f, "STOR x.bin", data)
    assert sha256(s.read("x.bin")) == sha256(data)
    got, _, _ = retr(f, "RETR x.bin")
    assert sha256(got) == sha256(data)
    f.close()


# ------------------------------------------------------------- ASCII

@pytest.fixture
def ascii_server(make_server):
    return make_server({"ascii_upload_enable": True, "ascii_download_enable": True})


def test_ascii_upload_converts(ascii_server):
    s = ascii_server
    f = s.ftp("alice")
    f.sendcmd("TYPE A")
    stor(f, "STOR up.txt", b"a\r\nb\r\n")
    assert s.read("up.txt") == b"a\nb\n"
    f.close()


def test_ascii_download_converts(ascii_server):
    s = ascii_server
    s.put("down.txt", b"a\nb\n")
    f = s.ftp("alice")
    f.sendcmd("TYPE A")
    data, _, final = retr(f, "RETR down.txt")
    assert data == b"a\r\nb\r\n" and code(final) == 226
    # SIZE reports the size on disk, whatever the type.
    assert f.sendcmd("SIZE down.txt") == "213 4"
    # Binary mode leaves the bytes alone.
    f.sendcmd("TYPE I")
    data, _, _ = retr(f, "RETR down.txt")
    assert data == b"a\nb\n"
    f.close()


def test_ascii_large_both_ways(ascii_server):
    """Many lines, so CRLF pairs straddle every internal buffer boundary."""
    s = ascii_server
    lines = [b"line %07d %s" % (i, b"x" * (i % 97)) for i in range(40000)]
    unix = b"\n".join(lines) + b"\n"
    dos = b"\r\n".join(lines) + b"\r\n"
    f = s.ftp("alice")
    f.sendcmd("TYPE A")
    stor(f, "STOR big.txt", dos)
    assert sha256(s.read("big.txt")) == sha256(unix)
    data, _, _ = retr(f, "RETR big.txt")
    assert sha256(data) == sha256(dos)
    f.close()


def test_ascii_conversion_off_by_default(server):
    f = server.ftp("alice")
    f.sendcmd("TYPE A")
    stor(f, "STOR raw.txt", b"a\r\nb\r\n")
    assert server.read("raw.txt") == b"a\r\nb\r\n"
    server.put("lf.txt", b"a\nb\n")
    data, _, _ = retr(f, "RETR lf.txt")
    assert data == b"a\nb\n"
    f.close()


def test_ascii_rest_refused(ascii_server):
    s = ascii_server
    s.put("t.txt", b"0123456789\n" * 10)
    f = s.ftp("alice")
    f.sendcmd("TYPE A")
    cd, resp = rc(f, "REST 5")
    if cd == 350:
        # Accepted at REST time: the transfer itself must then be refused.
        rc(f, "PASV")
        cd, resp = rc(f, "RETR t.txt")
        assert cd // 100 in (4, 5), resp
    else:
        assert cd // 100 in (4, 5), resp
    assert rc(f, "NOOP")[0] == 200
    f.close()


# ------------------------------------------------------------- resume

def test_resume_download(server):
    data = os.urandom(3 * MB + 777)
    server.put("r.bin", data)
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    # A client that got the first part earlier asks for the rest.
    for off in (0, 1, 1234567, len(data) - 1, len(data)):
        got, _, final = retr(f, "RETR r.bin", rest=off)
        assert code(final) == 226
        assert sha256(data[:off] + got) == sha256(data), off
    # The same through ftplib's own rest argument.
    parts = []
    f.retrbinary("RETR r.bin", parts.append, rest=2 * MB)
    assert b"".join(parts) == data[2 * MB:]
    f.close()


def test_resume_upload(server):
    data = os.urandom(3 * MB + 555)
    cut = 1234567
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    stor(f, "STOR u.bin", data[:cut])
    assert server.read("u.bin") == data[:cut]
    pre, final = stor(f, "STOR u.bin", data[cut:], rest=cut)
    assert code(final) == 226
    assert sha256(server.read("u.bin")) == sha256(data)
    # REST 0 + STOR overwrites from the start (and truncates).
    stor(f, "STOR u.bin", b"tiny", rest=0)
    assert server.read("u.bin")[:4] == b"tiny"
    f.close()


def test_resume_upload_into_middle(server):
    """REST+STOR in the middle keeps the head, replaces from the offset on."""
    head = b"H" * 1000
    server.put("m.bin", head + b"old-tail")
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    stor(f, "STOR m.bin", b"new", rest=1000)
    got = server.read("m.bin")
    assert got[:1003] == head + b"new"
    f.close()


# A binary upload in the clear goes socket -> pipe -> file with splice(2)
# (transfer.c recv_file): sizes around the 64 KB of a default pipe and the
# 256 KB the server asks for, and one past 10 MB.
@pytest.mark.parametrize("size", [0, 1, 65535, 65537, 256 * 1024 + 1, 10 * MB + 1])
def test_spliced_stor_sizes(server, size):
    data = os.urandom(size)
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    _, final = stor(f, "STOR s.bin", data)
    assert code(final) == 226, final
    assert sha256(server.read("s.bin")) == sha256(data)
    got, _, _ = retr(f, "RETR s.bin")
    assert sha256(got) == sha256(data)
    f.close()


def test_appe_after_spliced_stor(server):
    """APPE stays buffered (splice(2) refuses O_APPEND files): it adds to
    what a spliced STOR wrote, and to a file that did not exist."""
    a, b = os.urandom(3 * MB + 7), os.urandom(65537)
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    stor(f, "STOR a.bin", a)
    _, final = stor(f, "APPE a.bin", b)
    assert code(final) == 226, final
    assert sha256(server.read("a.bin")) == sha256(a + b)
    _, final = stor(f, "APPE new.bin", b)
    assert code(final) == 226, final
    assert server.read("new.bin") == b
    f.close()


def _start_upload(server, name, data):
    """A session whose STOR of name has begun and written data to the
    file, the data connection still open: (ftp, data connection)."""
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "STOR " + name)
    conn.sendall(data)
    wait_until(lambda: os.path.exists(server.path(name)) and
               os.path.getsize(server.path(name)) == len(data),
               what="the upload to reach the file")
    return f, conn


def test_cut_upload_426(server):
    """A client that resets the data connection mid-upload gets 426; what
    arrived before the reset is in the file, and the session goes on."""
    f, conn = _start_upload(server, "cut.bin", b"y" * MB)
    try:
        # SO_LINGER 0: close(2) sends a RST, not a FIN.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        conn.close()
    with pytest.raises(ftplib.error_temp, match="^426"):
        f.voidresp()
    assert server.read("cut.bin") == b"y" * MB
    assert rc(f, "NOOP")[0] == 200
    f.close()


# ------------------------------------------------------------- ABOR

class SlowReader(threading.Thread):
    """Drains a data socket slowly so that a big transfer is still running."""

    def __init__(self, conn):
        super().__init__(daemon=True)
        self.conn = conn
        self.total = 0
        self.eof = threading.Event()

    def run(self):
        try:
            while True:
                b = self.conn.recv(32768)
                if not b:
                    break
                self.total += len(b)
                time.sleep(0.01)
        except OSError:
            pass
        self.eof.set()


def _start_big_retr(server, name, size):
    """A sparse file of size bytes and a session whose RETR of it has
    begun: (ftp, data connection)."""
    with open(server.path(name), "wb") as fh:
        fh.truncate(size)
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "RETR " + name)
    return f, conn


@pytest.mark.parametrize("style", ["plain", "telnet-sync"])
def test_abor_mid_retr(server, style):
    size = 512 * MB
    big = server.path("huge.bin")
    with open(big, "wb") as fh:
        fh.truncate(size)
    server.put("small.txt", b"still here\n")
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    conn, pre = open_data(f, "RETR huge.bin")
    reader = SlowReader(conn)
    reader.start()
    try:
        deadline = time.monotonic() + 10
        while reader.total < MB and time.monotonic() < deadline:
            time.sleep(0.01)
        assert reader.total >= MB, "transfer did not start"
        if style == "plain":
            f.sock.sendall(b"ABOR\r\n")
        else:
            # RFC 959 4.1.3 / BSD ftp: Telnet IP, then Synch (urgent IAC + DM).
            f.sock.sendall(b"\xff\xf4\xff", socket.MSG_OOB)
            f.sock.sendall(b"\xf2ABOR\r\n")
        codes = []
        while not codes or codes[-1] not in (225, 226):
            resp = f.getmultiline()
            codes.append(code(resp))
            assert len(codes) <= 3, codes
        assert codes in ([426, 226], [426, 225], [225], [226]), codes
        assert reader.eof.wait(10), "data connection not closed after ABOR"
        assert reader.total < size, "transfer completed; nothing was aborted"
    finally:
        conn.close()
    # The session keeps working.
    assert rc(f, "NOOP")[0] == 200
    data, _, final = retr(f, "RETR small.txt")
    assert data == b"still here\n" and code(final) == 226
    data, _, _ = retr(f, "RETR huge.bin", rest=size - 10)
    assert data == b"\0" * 10
    f.close()


def _abor_pair(f, how):
    """Sends ABOR the way a client does and returns the reply codes up to
    the one that answers ABOR (225 or 226). Bounded by the control
    socket's timeout: an ABOR that is not seen fails here."""
    if how == "ftplib":
        # ftplib's FTP.abort(): the whole "ABOR\r\n" with MSG_OOB, so the
        # urgent mark sits on its LF.
        codes = [code(f.abort())]
    else:
        if how == "synch-on-dm":
            # Telnet IP, then the Synch with its Data Mark as the urgent
            # byte: the mark sits inside the ABOR line.
            f.sock.sendall(b"\xff\xf4\xff")
            f.sock.sendall(b"\xf2", socket.MSG_OOB)
            f.sock.sendall(b"ABOR\r\n")
        codes = []
    return abor_replies(f, codes)


@pytest.mark.parametrize("how", ["ftplib", "synch-on-dm"])
def test_urgent_abor_mid_retr(server, how):
    """ABOR sent as urgent data (issue 12) ends a running download at once;
    the session then goes on."""
    size = 512 * MB
    f, conn = _start_big_retr(server, "huge.bin", size)
    reader = SlowReader(conn)
    reader.start()
    try:
        wait_until(lambda: reader.total >= MB, what="the transfer to start")
        codes = _abor_pair(f, how)
        assert codes == [426, 226], codes
        assert reader.eof.wait(10), "data connection not closed after ABOR"
        assert reader.total < size, "transfer completed; nothing was aborted"
    finally:
        conn.close()
    assert rc(f, "NOOP")[0] == 200
    f.close()


@pytest.mark.parametrize("how", ["ftplib", "synch-on-dm"])
def test_urgent_abor_mid_stor(server, how):
    """The same for an upload the client keeps open: 426, 226, and the
    session goes on."""
    f, conn = _start_upload(server, "up.bin", b"x" * MB)
    try:
        codes = _abor_pair(f, how)
        assert codes == [426, 226], codes
        conn.settimeout(10)
        try:
            closed = conn.recv(1) == b""
        except ConnectionResetError:
            closed = True
        assert closed, "data connection not closed after ABOR"
    finally:
        conn.close()
    assert rc(f, "NOOP")[0] == 200
    f.close()


def test_abor_after_client_closed_data(server):
    """The client drops the data connection, then sends ABOR: clean replies."""
    big = server.path("huge.bin")
    with open(big, "wb") as fh:
        fh.truncate(256 * MB)
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "RETR huge.bin")
    conn.recv(65536)
    conn.close()
    f.sock.sendall(b"ABOR\r\n")
    codes = []
    while not codes or codes[-1] not in (225, 226):
        codes.append(code(f.getmultiline()))
        assert len(codes) <= 3, codes
    assert set(codes) <= {426, 451, 225, 226}, codes
    assert rc(f, "NOOP")[0] == 200
    f.close()


# ------------------------------------------------------------- timeouts

def test_idle_session_timeout(make_server):
    s = make_server({"idle_session_timeout": 2})
    with s.ctrl() as c:
        c.login("alice", "alice-pw")
        t0 = time.monotonic()
        assert c.closed_within(12), "idle session not closed"
        assert time.monotonic() - t0 >= 1.5
        # A 421 before the close, if anything.
        assert c.buf == b"" or c.buf.startswith(b"421"), c.buf
    s.wait_sessions(0)


def test_accept_timeout(make_server):
    s = make_server({"accept_timeout": 2})
    s.put("x.txt", b"x")
    f = s.ftp("alice")
    assert rc(f, "PASV")[0] == 227
    f.sock.sendall(b"RETR x.txt\r\n")
    cd = code(f.getmultiline())
    if cd in (125, 150):
        cd = code(f.getmultiline())
    assert cd in (421, 425, 426), cd
    f.close()


def _waits_for_data_connection(pid, accept_timeout):
    """The worker pid is in poll(2) with accept_timeout's deadline or less:
    waiting for a data connection, not for a command (whose deadline is
    idle_session_timeout's, 120 s in these tests). /proc/PID/syscall:
    number (7, poll, on x86_64), fds, nfds, timeout in ms."""
    try:
        with open("/proc/%d/syscall" % pid) as fh:
            f = fh.read().split()
    except OSError:
        return False
    return len(f) > 3 and f[0] == "7" and 0 < int(f[3], 16) <= accept_timeout * 1000


@pytest.mark.parametrize("size", [10 * 1024, 40 * 1024])
def test_client_connects_after_its_retr(make_server, size):
    """A client may send RETR before it connects: the worker finds no
    connection yet and waits for it. Both sizes: one sendfile without
    the cork, and one with it."""
    s = make_server({"accept_timeout": 10})
    data = os.urandom(size)
    s.put("late.bin", data)
    f = s.ftp("alice")
    worker, = twhelpers.workers(s.session_of(f.sock.getsockname()[1]))
    f.sendcmd("TYPE I")
    resp = f.sendcmd("PASV")
    _, port = ftplib.parse227(resp)
    f.sock.sendall(b"RETR late.bin\r\n")
    if os.uname().machine == "x86_64":
        wait_until(lambda: _waits_for_data_connection(worker, 10), 10,
                   what="the worker to wait for the data connection")
    else:
        time.sleep(0.5)     # poll(2)'s number is x86_64's below
    conn = socket.create_connection((HOST, port), 10,
                                    source_address=(f.sock.getsockname()[0], 0))
    got = b""
    try:
        assert code(f.getmultiline()) in (125, 150)
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        conn.close()
    assert code(f.getmultiline()) == 226
    assert got == data
    f.quit()


def test_stalled_transfer_timeout(make_server):
    s = make_server({"data_connection_timeout": 2})
    with open(s.path("huge.bin"), "wb") as fh:
        fh.truncate(256 * MB)
    f = s.ftp("alice")
    f.sendcmd("TYPE I")
    conn, _ = open_data(f, "RETR huge.bin")
    try:
        conn.recv(1000)       # then stall: never read again
        f.sock.settimeout(20)
        try:
            cd = code(f.getmultiline())
            assert cd in (421, 426), cd
        except EOFError:
            pass
    finally:
        conn.close()
        f.close()


def _server_send_queue(conn):
    """Bytes the server's end of the data connection conn holds for it to
    send or to see acknowledged (`ss` skmem w), or None if not found."""
    me, peer = conn.getsockname()[1], conn.getpeername()[1]
    out = subprocess.run(["ss", "-tmnH", "state", "established",
                          "( sport = :%d and dport = :%d )" % (peer, me)],
                         capture_output=True, text=True, timeout=10).stdout
    i = out.find("skmem:(")
    if i < 0:
        return None
    for item in out[i + 7:out.index(")", i)].split(","):
        if item.startswith("w") and item[1:].isdigit():
            return int(item[1:])
    return None


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["I", "A"])
def test_client_that_stops_reading_is_sent_little_then_all(make_server, mode):
    """A client that stops reading has its receive window filled and
    little more queued for it on the server (it used to be the 128 KB
    low-water mark and a 64 KB buffer past it: 10,000 such robots put the
    machine in TCP memory pressure). When it reads again, slowly and then
    fast, the file arrives whole: the slow mode's uncorking and the
    return to the full queue lose nothing and never stall. TYPE A takes
    the buffered path (xfer_write_all)."""
    s = make_server({"ascii_download_enable": True})
    rnd = os.urandom(4 * MB)
    body = bytes(0x41 + b % 26 for b in rnd)    # letters: ASCII mode leaves them as they are
    s.put("queue.bin", body)
    f = s.ftp("alice")
    f.sendcmd("TYPE " + mode)
    conn, pre = open_data(f, "RETR queue.bin")
    assert code(pre) == 150
    got = bytearray()
    try:
        conn.settimeout(30)
        # Not reading: the server finds the reader slow within 20 ms.
        queued = wait_until(lambda: _server_send_queue(conn), timeout=5)
        time.sleep(1.0)
        queued = _server_send_queue(conn)
        assert queued is not None and queued <= 96 * 1024, queued
        # Slowly for a while, then as fast as it comes.
        for _ in range(40):
            got += conn.recv(8192)
            time.sleep(0.005)
        while True:
            b = conn.recv(1 << 20)
            if not b:
                break
            got += b
    finally:
        conn.close()
    assert code(f.voidresp()) == 226
    assert len(got) == len(body) and sha256(bytes(got)) == sha256(body)
    f.close()


def test_port_to_closed_port(server):
    server.put("x.txt", b"x")
    f = server.ftp("alice")
    # Bound, never listening: a connection to it is refused, and the port
    # stays ours, so no connect can take it as its own source port (a
    # socket connecting to itself would be "accepted").
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    try:
        assert f.sendport(HOST, port).startswith("200")
        f.sock.sendall(b"RETR x.txt\r\n")
        cd = code(f.getmultiline())
        if cd in (125, 150):
            cd = code(f.getmultiline())
        assert cd == 425, cd
        assert rc(f, "NOOP")[0] == 200
    finally:
        s.close()
    f.close()


def test_pasv_ports_reusable(make_server):
    """Many downloads through a small passive range in quick succession.

    The server closes a download's data connection first, so that
    connection sits in TIME_WAIT on the passive port for a minute; the
    passive listener must still be able to bind the port (SO_REUSEADDR, as
    vsftpd does), or a small pasv_min_port..pasv_max_port range runs dry.
    """
    def small_range(srv):
        lo = srv.pasv_ports[0]
        srv.opts.update({"pasv_min_port": lo, "pasv_max_port": lo + 3})
    s = make_server(prepare=small_range)
    s.put("x.txt", b"x" * 1000)
    f = s.ftp("alice")
    for i in range(12):
        data, _, final = retr(f, "RETR x.txt")
        assert data == b"x" * 1000 and code(final) == 226, i
    for i in range(12):
        data, _, _ = retr(f, "RETR x.txt", "epsv")
        assert data == b"x" * 1000, i
    f.close()


def test_pasv_with_a_port_of_the_range_bound_elsewhere(make_server):
    """A socket holds one port of a two-port range bound but not listening
    (as another session's does between its bind and its listen): PASV
    keeps working, through either port. The race itself (two sessions
    bind one port with SO_REUSEADDR, the second listen() fails, and the
    server must take the next port on a new socket) cannot be timed from
    outside; 300 concurrent uploads in bench/compare met it once."""
    def two_ports(srv):
        lo = srv.pasv_ports[0]
        srv.opts.update({"pasv_min_port": lo, "pasv_max_port": lo + 1})
    s = make_server(prepare=two_ports)
    lo = s.opts["pasv_min_port"]
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        blocker.bind((HOST, lo))
        s.put("y.txt", b"y" * 100)
        f = s.ftp("alice")
        for i in range(16):
            reply = f.sendcmd("PASV")
            assert reply.startswith("227"), (i, reply)
            nums = reply[reply.index("(") + 1:reply.index(")")].split(",")
            assert int(nums[4]) * 256 + int(nums[5]) in (lo, lo + 1), (i, reply)
        for i in range(4):
            data, _, final = retr(f, "RETR y.txt")
            assert data == b"y" * 100 and code(final) == 226, i
        f.close()
    finally:
        blocker.close()


def _listening_ports_of(pid):
    """The local ports of the listening TCP sockets pid holds (read from this
    namespace's /proc/net: an isolated worker's sockets come from its
    monitor, in the listener's namespace)."""
    inodes = {v[len("socket:["):-1] for v in twhelpers.proc_fds(pid).values()
              if v.startswith("socket:[")}
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as t:
            for line in t.readlines()[1:]:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:
                    ports.append(int(f[1].rsplit(":", 1)[1], 16))
    return ports


def _pasv_port(reply):
    nums = reply[reply.index("(") + 1:reply.index(")")].split(",")
    return int(nums[4]) * 256 + int(nums[5])


def test_pasv_socket_made_ahead_for_back_to_back_transfers(make_server):
    """Under isolate_network every PASV socket comes from the monitor. When
    transfers come back to back, the worker asks for the next one right
    after a PASV's reply, and the next PASV answers with it at once. A
    connection made to it before its PASV (nobody knew its port) is turned
    away, not taken for the client's; and a session that goes idle gives
    the port back within about a second."""
    s = make_server({"pasv_min_port": 0, "pasv_max_port": 0})
    data = os.urandom(20000)
    s.put("ahead.bin", data)
    f = s.ftp("alice")
    mon = s.session_of(f.sock.getsockname()[1])

    def alice_worker():
        kids = twhelpers.workers(mon)
        if len(kids) == 1 and (twhelpers.proc_ids(kids[0], "Uid") or [None])[0] == USERS["alice"]:
            return kids[0]
        return None
    worker = wait_until(alice_worker, 10, what="alice's worker")

    def fetch(reply):
        """RETR over the data port a PASV reply named."""
        conn = socket.create_connection((HOST, _pasv_port(reply)), timeout=10)
        try:
            f.sock.sendall(b"RETR ahead.bin\r\n")
            assert code(f.getmultiline()) in (125, 150)
            assert recv_all(conn) == data
        finally:
            conn.close()
        assert code(f.getmultiline()) == 226

    def made_ahead():
        """Two transfers back to back (the second PASV asks for the next
        socket), then the worker's socket made ahead; None when it was not
        seen (a machine stalled past the second: one more round)."""
        for _ in range(2):
            fetch(f.sendcmd("PASV"))
        try:
            return wait_until(lambda: _listening_ports_of(worker), 0.5,
                              what="a socket made ahead")
        except AssertionError:
            return None

    # A stranger connects to the socket made ahead first: the PASV that
    # takes it turns the stranger away, and the client's own connection
    # gets the file.
    for i in range(10):
        ahead = made_ahead()
        if ahead is None:
            continue
        assert len(ahead) == 1, ahead
        try:
            early = socket.create_connection((HOST, ahead[0]), timeout=5)
        except ConnectionRefusedError:
            continue            # closed meanwhile, a second after it was asked for
        try:
            reply = f.sendcmd("PASV")
            if _pasv_port(reply) != ahead[0]:
                fetch(reply)    # too late for it: a new socket
                continue
            early.settimeout(5)
            try:
                assert early.recv(1) == b""
            except ConnectionResetError:
                pass
            fetch(reply)
            break
        finally:
            early.close()
    else:
        pytest.fail("no PASV answered with a socket made ahead in 10 rounds")
    # Idle: a socket made ahead goes within about a second.
    for i in range(10):
        if made_ahead() is not None:
            break
    else:
        pytest.fail("no socket made ahead in 10 rounds")
    wait_until(lambda: _listening_ports_of(worker) == [], 10,
               what="the worker's socket made ahead to be closed")
    got, _, final = retr(f, "RETR ahead.bin")
    assert got == data and code(final) == 226
    f.close()


def _sessions_asking_ahead(s, n, end):
    """n sessions of alice that each make two PASVs within a second (the
    second asks ahead for the next socket) and then end(f); each one's
    monitor is waited for. Then the address must still be greeted: a
    session counted bad (source_penalty_sessions=2) would have it refused."""
    for i in range(n):
        f = s.ftp("alice")
        mon = s.session_of(f.sock.getsockname()[1])
        assert f.sendcmd("PASV").startswith("227"), i
        assert f.sendcmd("PASV").startswith("227"), i
        end(f)
        wait_until(lambda: (twhelpers.proc_stat(mon) or (0, "Z"))[1] == "Z", 10,
                   what="monitor %d's end" % mon)
    c = socket.create_connection((HOST, s.port), timeout=10)
    try:
        assert c.makefile("rb").readline().startswith(b"220")
    finally:
        c.close()


def test_worker_ending_before_its_answer_ahead_is_no_crash(make_server):
    """A worker that asked ahead for a PASV socket (its second PASV within
    a second) may end, at QUIT, before its monitor answers. To the monitor
    that is the session's normal end, not a worker gone wrong: with
    source_penalty_sessions=2, three sessions counted bad would have the
    address refused (421) at its next connection. The test build's monitor
    takes 400 ms over each PASV socket here, so the worker is gone first."""
    s = make_server({"pasv_min_port": 0, "pasv_max_port": 0,
                     "source_penalty_sessions": 2},
                    extra_env={"TW_TEST_PASV_ANSWER_MS": "400"})
    def quit(f):
        f.sock.sendall(b"QUIT\r\n")
        assert code(f.getmultiline()) == 221
        f.close()
    _sessions_asking_ahead(s, 3, quit)
    assert "worker gone" not in s.log_text()


def _ipc_unread(pid):
    """pid's socket to its monitor (its one SOCK_SEQPACKET) holds bytes it
    has not read (ss's Recv-Q)."""
    out = subprocess.run(["ss", "-xpnH"], capture_output=True, text=True).stdout
    return any(line.split()[0] == "u_seq" and "pid=%d," % pid in line and
               int(line.split()[2]) > 0 for line in out.splitlines() if line.strip())


def test_client_gone_with_an_answer_ahead_unread_is_no_crash(make_server):
    """The client hangs up (no QUIT) while its worker waits for the next
    command, the answer to the socket it asked for ahead unread in its IPC
    queue. The worker ends on the hang-up; its monitor's next read gets
    ECONNRESET (a peer that closed with data unread), which is the
    session's normal end, not a bad session: with
    source_penalty_sessions=2, the address would otherwise be refused.
    A worker that finds the answer already there before its wait reads it
    at once; the test build's monitor takes 100 ms over each PASV socket,
    so it comes during the wait and stays unread until the socket's
    second is over (dataconn.c). The hang-up comes once ss shows it
    there, with the worker stopped until it has."""
    s = make_server({"pasv_min_port": 0, "pasv_max_port": 0,
                     "source_penalty_sessions": 2},
                    extra_env={"TW_TEST_PASV_ANSWER_MS": "100"})
    def hang_up(f):
        worker, = twhelpers.workers(s.session_of(f.sock.getsockname()[1]))
        # Unread from the monitor's 100 ms to the socket's second. A worker
        # slow to reach its wait finds it first and reads it, and one that
        # reaches its second reads it then: two PASVs more ask again.
        for _ in range(5):
            end = time.monotonic() + 0.8
            while time.monotonic() < end and not _ipc_unread(worker):
                time.sleep(0.02)
            if _ipc_unread(worker):
                # Stopped, it cannot read it before the hang-up is there.
                twhelpers.stop_process(worker)
                if _ipc_unread(worker):
                    break
                os.kill(worker, signal.SIGCONT)
            assert f.sendcmd("PASV").startswith("227")
            assert f.sendcmd("PASV").startswith("227")
        else:
            pytest.fail("no answer ahead stayed unread in worker %d's queue" % worker)
        try:
            f.sock.close()
            f.file.close()
        finally:
            os.kill(worker, signal.SIGCONT)
    _sessions_asking_ahead(s, 4, hang_up)
    assert "bad IPC message" not in s.log_text()


def test_pasv_range_bounds_swapped(make_server):
    """pasv_min_port above pasv_max_port (as docker images' configs have
    it): vsftpd uses the ports between them, and so does twinftpd, with a
    warning in the log instead of a refusal to start."""
    def swapped(srv):
        lo = srv.pasv_ports[0]
        srv.opts.update({"pasv_min_port": lo + 2, "pasv_max_port": lo})
    s = make_server(prepare=swapped)
    lo = s.opts["pasv_max_port"]
    s.wait_log(r"pasv_min_port=%d and pasv_max_port=%d: PASV uses ports %d to %d"
               % (lo + 2, lo, lo, lo + 2))
    s.put("y.txt", b"y" * 100)
    f = s.ftp("alice")
    for i in range(6):
        reply = f.sendcmd("PASV")
        nums = reply[reply.index("(") + 1:reply.index(")")].split(",")
        assert lo <= int(nums[4]) * 256 + int(nums[5]) <= lo + 2, (i, reply)
    data, _, final = retr(f, "RETR y.txt")
    assert data == b"y" * 100 and code(final) == 226
    f.close()


# ------------------------------------------------------------- listings

@pytest.fixture
def listing_home(server):
    server.put("plain.txt", b"12345\n")
    server.put(".hidden", b"h")
    server.mkdir("dir")
    os.symlink("plain.txt", server.path("link"))
    return server


def test_stat_path_is_a_listing_on_the_control_connection(listing_home):
    """STAT <path> (RFC 959): a LIST-format listing inside a 213 reply;
    dot-files only with -a; a missing path is 450, not LIST's 550."""
    f = listing_home.ftp("alice")
    cd, resp = rc(f, "STAT .")
    lines = resp.split("\n")
    assert cd == 213 and lines[0] == "213-Status follows:", resp
    assert lines[-1] == "213 End of status", resp
    body = "\n".join(lines[1:-1])
    assert "plain.txt" in body and "dir" in body and ".hidden" not in body, resp
    assert "link -> plain.txt" in body, resp
    cd, resp = rc(f, "STAT -a .")
    assert cd == 213 and ".hidden" in resp, resp
    cd, resp = rc(f, "STAT plain.txt")
    assert cd == 213 and len(resp.split("\n")) == 3 and " 6 " in resp, resp
    assert rc(f, "STAT nothing-here")[0] == 450
    assert rc(f, "NOOP")[0] == 200
    f.close()


def test_list_nlst_mlsd_entries(listing_home):
    """What each listing shows of dot-files, symlinks and the directory
    itself: LIST and NLST hide dot-files without -a, MLSD shows them and
    starts with the type=cdir entry; LIST shows a link's target, MLSD
    describes what it leads to."""
    f = listing_home.ftp("alice")
    data, _, final = retr(f, "LIST")
    assert code(final) == 226 and final == "226 Directory send OK.", final
    lines = [l for l in data.decode().split("\r\n") if l]
    names = [l.split(" -> ")[0].rsplit(" ", 1)[-1] for l in lines]
    assert names == ["dir", "link", "plain.txt"], lines
    assert any(l.endswith(" link -> plain.txt") and l[0] == "l" for l in lines), lines
    assert not any(".hidden" in l for l in lines), lines
    data, _, _ = retr(f, "LIST -a")
    assert ".hidden" in data.decode()
    data, _, _ = retr(f, "NLST")
    assert data.decode().split("\r\n") == ["dir", "link", "plain.txt", ""], data
    data, _, _ = retr(f, "NLST -a")
    assert data.decode().split("\r\n") == [".hidden", "dir", "link", "plain.txt", ""], data
    data, _, _ = retr(f, "NLST plain.txt")
    assert data == b"plain.txt\r\n", data
    data, _, _ = retr(f, "MLSD")
    lines = [l for l in data.decode().split("\r\n") if l]
    assert "type=cdir" in lines[0] and lines[0].endswith(" ."), lines
    entries = dict(reversed(parse_mlsx(l)) for l in lines[1:])
    assert set(entries) == {".hidden", "dir", "link", "plain.txt"}, entries
    assert entries["link"]["type"] == "file" and entries["link"]["size"] == "6", entries
    assert entries["dir"]["type"] == "dir"
    data, _, _ = retr(f, "MLSD dir")
    assert [l for l in data.decode().split("\r\n") if l][1:] == [], data
    f.close()


def test_listing_refused_when_dirlist_disabled(make_server):
    s = make_server({"dirlist_enable": False})
    f = s.ftp("alice")
    for line in ("LIST", "NLST", "MLSD", "STAT ."):
        assert rc(f, line)[0] == 550, line
    f.close()


def test_partial_command_during_a_transfer_waits_for_its_end(server):
    """A half-sent command line during a transfer is neither taken for
    ABOR nor lost: the transfer ends normally, then the command, once
    complete, is answered."""
    size = 64 * MB
    f, conn = _start_big_retr(server, "big.bin", size)
    try:
        got = conn.recv(1 << 16)
        f.sock.sendall(b"NO")
        time.sleep(1.5)
        f.sock.sendall(b"OP\r\n")
        total = len(got)
        while True:
            b = conn.recv(1 << 20)
            if not b:
                break
            total += len(b)
    finally:
        conn.close()
    assert total == size
    assert code(f.getmultiline()) == 226
    assert code(f.getmultiline()) == 200
    f.close()


# ------------------------------------------- refused uploads change nothing

HUGE_REST = 9223372036854775800     # the audit's value, near LLONG_MAX


def _refused_stor(f, line, rest=None, data_conn=True):
    """Sends [PASV,] [REST,] line; returns its reply. A 150 (old code) is
    let through to its end, with a few bytes sent, so that the assertions
    see what it did."""
    conn = None
    if data_conn:
        resp = f.sendcmd("PASV")
        _, port = ftplib.parse227(resp)
        conn = socket.create_connection((HOST, port), 15)
    try:
        if rest is not None:
            assert f.sendcmd("REST %d" % rest).startswith("350")
        f.putcmd(line)
        resp = f.getmultiline()
        if resp.startswith("150") and conn is not None:
            conn.sendall(b"DATA")
            conn.close()
            conn = None
            f.getmultiline()
    finally:
        if conn is not None:
            conn.close()
    return resp


def test_rest_huge_stor_new_name_creates_nothing(server):
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    resp = _refused_stor(f, "STOR new.bin", rest=HUGE_REST)
    assert not os.path.exists(server.path("new.bin")), resp
    assert code(resp) == 554, resp
    # STOU with a restart point has no file to resume either.
    resp = _refused_stor(f, "STOU", rest=HUGE_REST)
    assert os.listdir(server.home()) == [], resp
    assert code(resp) == 554, resp
    f.close()


@pytest.mark.parametrize("rest", [HUGE_REST, 1001], ids=["huge", "just-past-end"])
def test_rest_past_end_stor_existing_unchanged(server, rest):
    """A restart point past the end of the file is refused (554): nothing
    written, no hole of zeros, the file as it was."""
    content = b"K" * 1000
    server.put("keep.bin", content)
    before = tree_snapshot(server.home())
    f = server.ftp("alice")
    f.sendcmd("TYPE I")
    resp = _refused_stor(f, "STOR keep.bin", rest=rest)
    assert server.read("keep.bin") == content, resp
    assert tree_snapshot(server.home()) == before, resp
    assert code(resp) == 554, resp
    # At the very end it is a resume, as before.
    stor(f, "STOR keep.bin", b"+tail", rest=len(content))
    assert server.read("keep.bin") == content + b"+tail"
    f.close()


@pytest.mark.parametrize("line", ["STOR", "APPE", "STOU"])
def test_upload_without_data_connection_changes_nothing(server, line):
    """425 (no PASV or PORT) comes before anything on disk changes: no new
    file, no truncated file."""
    server.put("keep.bin", b"keep me")
    before = tree_snapshot(server.home())
    f = server.ftp("alice")
    for target in ("new.bin", "keep.bin"):
        resp = _refused_stor(f, line if line == "STOU" else line + " " + target,
                             data_conn=False)
        assert code(resp) == 425, resp
        assert tree_snapshot(server.home()) == before, target
    f.close()


def test_upload_refusals_before_data_connection(server):
    """What can be refused before the data connection is: a missing
    directory, and a dangling symlink (creating through it would put the
    upload where the link points), both 553 without a data connection."""
    os.symlink("made-by-link.bin", server.path("dangling"))
    before = tree_snapshot(server.home())
    f = server.ftp("alice")
    for line in ("STOR nosuchdir/x", "STOU nosuchdir/x", "STOR dangling", "APPE dangling"):
        resp = _refused_stor(f, line, data_conn=False)
        assert code(resp) == 553, (line, resp)
    assert tree_snapshot(server.home()) == before
    f.close()


# ------------------------- refused uploads close nothing opened for writing

IN_CLOSE_WRITE = 0x00000008
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
_INOTIFY_EVENT = struct.Struct("iIII")     # wd, mask, cookie, len; then name


class _CloseWriteWatch:
    """inotify IN_CLOSE_WRITE on one directory (an upload processor's view:
    a close after writing means "upload finished"). Events are queued in
    order, so a close of our own on a marker file, once read back, proves
    that every earlier close has been seen."""

    def __init__(self, directory):
        libc = ctypes.CDLL(None, use_errno=True)
        self.dir = directory
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, os.fsencode(directory), IN_CLOSE_WRITE) < 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, "inotify_add_watch")

    def names_until_marker(self, marker="zz-marker", timeout=10.0):
        """Closes a write fd on marker in the directory; returns the names
        of every IN_CLOSE_WRITE before it (bounded wait for the marker)."""
        with open(os.path.join(self.dir, marker), "wb"):
            pass
        names = []
        buf = b""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no IN_CLOSE_WRITE for the marker; saw %r" % names
            if not select.select([self.fd], [], [], left)[0]:
                continue
            try:
                buf += os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            while len(buf) >= _INOTIFY_EVENT.size:
                _, mask, _, nlen = _INOTIFY_EVENT.unpack_from(buf)
                end = _INOTIFY_EVENT.size + nlen
                if len(buf) < end:
                    break
                name = buf[_INOTIFY_EVENT.size:end].rstrip(b"\0").decode()
                buf = buf[end:]
                if mask & IN_CLOSE_WRITE:
                    if name == marker:
                        return names
                    names.append(name)

    def close(self):
        os.close(self.fd)


def test_refused_upload_fires_no_close_write_local(server):
    """A refused STOR/APPE (425: no data connection; 554: REST past the
    end) must not open the existing target for writing: closing such an
    fd fires IN_CLOSE_WRITE / FAN_CLOSE_WRITE even with nothing written."""
    content = b"K" * 1000
    server.put("keep.bin", content)
    watch = _CloseWriteWatch(server.home())
    try:
        f = server.ftp("alice")
        f.sendcmd("TYPE I")
        for line, rest, data_conn, want in (("STOR keep.bin", None, False, 425),
                                            ("APPE keep.bin", None, False, 425),
                                            ("STOR keep.bin", HUGE_REST, True, 554),
                                            ("STOR keep.bin", 1001, False, 554)):
            resp = _refused_stor(f, line, rest=rest, data_conn=data_conn)
            assert code(resp) == want, (line, rest, resp)
            # The worker has finished with the refused command once this
            # reply comes (a close after the 425 reply included).
            f.voidcmd("NOOP")
            assert watch.names_until_marker() == [], (line, rest, resp)
        assert server.read("keep.bin") == content
        f.close()
    finally:
        watch.close()


def test_refused_anonymous_overwrite_fires_no_close_write(make_server):
    """Anonymous users may not overwrite (anon_other_write_enable=NO):
    the 553 must come without opening the file for writing, or any
    anonymous client could fire IN_CLOSE_WRITE at will on every file of
    an incoming directory, which upload processors take as "finished"."""
    def incoming(s):
        d = os.path.join(s.anon_root, "incoming")
        os.mkdir(d)
        os.chown(d, USERS["twftp"], USERS["twftp"])
        os.chmod(d, 0o755)

    s = make_server({"anon_upload_enable": True}, prepare=incoming)
    d = os.path.join(s.anon_root, "incoming")
    p = os.path.join(d, "done.bin")
    with open(p, "wb") as fh:
        fh.write(b"finished upload\n")
    os.chown(p, USERS["twftp"], USERS["twftp"])     # writable by the anonymous user
    before = tree_snapshot(d)
    watch = _CloseWriteWatch(d)
    try:
        f = s.ftp("anonymous")
        f.sendcmd("TYPE I")
        for line, rest, data_conn in (("STOR incoming/done.bin", None, True),
                                      ("STOR incoming/done.bin", None, False),
                                      ("STOR incoming/done.bin", 3, True)):
            resp = _refused_stor(f, line, rest=rest, data_conn=data_conn)
            assert code(resp) == 553, (line, rest, resp)
            f.voidcmd("NOOP")
            assert watch.names_until_marker() == [], (line, rest, resp)
        os.unlink(os.path.join(d, "zz-marker"))
        assert tree_snapshot(d) == before
        # A new name is still an upload, and its close is the one event.
        stor(f, "STOR incoming/new.bin", b"new")
        f.voidcmd("NOOP")
        assert watch.names_until_marker() == ["new.bin"]
        f.close()
    finally:
        watch.close()


def _waiting_for_data_connection(server, f, timeout=10.0):
    """Bounded wait until a process of f's session sits in poll() on one
    fd with no timeout: with accept_timeout=0 that is the worker waiting
    for the passive data connection, past the upload's check (the idle
    control read has idle_session_timeout)."""
    mon = server.session_of(f.sock.getsockname()[1])
    forever = {"7": ("0xffffffff", "0xffffffffffffffff"),   # x86_64 poll(fds, 1, -1)
               "73": ("0x0",)}                              # aarch64 ppoll(fds, 1, NULL, ...)

    def probe():
        for pid, _ in server.session_pids(mon):
            try:
                with open("/proc/%d/syscall" % pid) as fh:
                    fields = fh.read().split()
            except OSError:
                continue
            if (len(fields) > 3 and fields[2] == "0x1" and
                    fields[3] in forever.get(fields[0], ())):
                return True
        return None
    wait_until(probe, timeout, what="the worker waiting for the data connection")


@pytest.mark.parametrize("late", ["dangling-symlink", "file"])
def test_stor_target_appearing_after_the_check(make_server, late):
    """A name missing at the check is created with O_EXCL after the data
    connection opens: a dangling symlink put there in between is not
    created through (553, its target not made), and a file put there is
    an existing target, replaced by the STOR as before."""
    s = make_server({"accept_timeout": 0})
    f = s.ftp("alice")
    f.sendcmd("TYPE I")
    _, port = ftplib.parse227(f.sendcmd("PASV"))
    f.putcmd("STOR late.bin")
    _waiting_for_data_connection(s, f)
    if late == "file":
        s.put("late.bin", b"appeared meanwhile, longer than the upload")
    else:
        os.symlink("made-through-link.bin", s.path("late.bin"))
    conn = socket.create_connection((HOST, port), 15)
    try:
        resp = f.getmultiline()
        if resp.startswith("150"):
            conn.sendall(b"upload")
            conn.close()
            conn = None
            final = f.getmultiline()
    finally:
        if conn is not None:
            conn.close()
    if late == "file":
        assert code(resp) == 150 and code(final) == 226, (resp, final)
        assert s.read("late.bin") == b"upload"
    else:
        assert not os.path.lexists(s.path("made-through-link.bin")), resp
        assert code(resp) == 553, resp
        assert os.readlink(s.path("late.bin")) == "made-through-link.bin"
    f.close()


def _reset_upload(f, line, first=b"x" * 65536):
    """Starts the upload line, sends first, then resets the data connection
    (SO_LINGER 0): returns the code of the upload's final reply."""
    conn, resp = open_data(f, line)
    assert resp.startswith("150"), resp
    conn.sendall(first)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
    return code(f.getmultiline())


def _aborted_upload(f, line, path):
    """Starts the upload line, sends until the server has written some of
    it to path, then ABOR: the replies must be 426 and 226."""
    conn, resp = open_data(f, line)
    assert resp.startswith("150"), resp
    try:
        def written():
            conn.sendall(b"y" * 65536)
            return os.path.exists(path) and os.path.getsize(path) > 0
        wait_until(written, timeout=30, what="the upload to reach the file")
        codes = abor_codes(f)
        assert codes == [426, 226], codes
    finally:
        conn.close()


def test_delete_failed_uploads(make_server):
    """delete_failed_uploads=YES: a file an upload created is gone when the
    upload is reset or aborted; an upload that ends normally stays, and so
    does a file that existed before its failed overwrite. Anonymous
    sessions delete only with anon_other_write_enable (their sandbox has
    no unlink otherwise): without it the partial file stays and the
    session goes on. Without the option a failed upload stays."""
    def incoming(s):
        d = os.path.join(s.anon_root, "incoming")
        os.mkdir(d)
        os.chown(d, USERS["twftp"], USERS["twftp"])
        os.chmod(d, 0o755)

    s = make_server({"delete_failed_uploads": True, "anon_upload_enable": True},
                    prepare=incoming)
    f = s.ftp("alice")
    f.sendcmd("TYPE I")
    assert _reset_upload(f, "STOR reset.bin") in (426, 451)
    assert not os.path.exists(s.path("reset.bin"))
    _aborted_upload(f, "STOR aborted.bin", s.path("aborted.bin"))
    assert not os.path.exists(s.path("aborted.bin"))
    assert _reset_upload(f, "STOU") in (426, 451)
    assert os.listdir(s.home("alice")) == []
    s.put("old.bin", b"there before\n")
    assert _reset_upload(f, "STOR old.bin") in (426, 451)
    assert os.path.exists(s.path("old.bin"))
    stor(f, "STOR whole.bin", b"a whole upload\n")
    assert s.read("whole.bin") == b"a whole upload\n"
    f.quit()

    # Anonymous without and with anon_other_write_enable, then no option.
    incoming_file = os.path.join(s.anon_root, "incoming", "anon.bin")
    for opts, user, path, kept in (
            ({}, "anonymous", incoming_file, True),
            ({"anon_other_write_enable": True}, "anonymous", incoming_file, False),
            ({"delete_failed_uploads": False}, "alice", s.path("kept.bin"), True)):
        s.stop()
        s.opts.update(opts)
        s.start()
        f = s.ftp(user)
        f.sendcmd("TYPE I")
        name = os.path.relpath(path, s.anon_root if user == "anonymous" else s.home())
        assert _reset_upload(f, "STOR " + name) in (426, 451)
        assert os.path.exists(path) == kept, (opts, path)
        assert rc(f, "NOOP")[0] == 200
        f.quit()
        if kept:
            os.unlink(path)


def test_lock_upload_files(make_server):
    """lock_upload_files (vsftpd's default YES): a download of a file that
    an upload holds waits for the upload's end and gets the new file whole;
    the wait is bounded (450 after data_connection_timeout); with NO the
    download reads the half-written file at once."""
    part1, part2 = os.urandom(300000), os.urandom(200000)
    for opts in ({}, {"lock_upload_files": False}, {"data_connection_timeout": 2}):
        s = make_server(opts)
        s.put("shared.bin", b"old" * 1000)
        up, down = s.ftp("alice"), s.ftp("alice")
        up.sendcmd("TYPE I")
        down.sendcmd("TYPE I")
        conn, resp = open_data(up, "STOR shared.bin")
        assert resp.startswith("150"), resp
        conn.sendall(part1)
        wait_until(lambda: os.path.getsize(s.path("shared.bin")) == len(part1),
                   what="the first part on disk")
        dconn = data_cmd_sent(down, "RETR shared.bin")
        if opts.get("data_connection_timeout"):
            # The uploader keeps its own data connection busy meanwhile.
            for _ in range(150):
                conn.sendall(b"z" * 100)
                if select.select([down.sock], [], [], 0.2)[0]:
                    break
            with pytest.raises(ftplib.error_temp) as e:
                down.getresp()
            assert str(e.value).startswith("450 File busy"), e.value
            s.wait_log(r"lock_upload_files: shared\.bin stayed locked by another session")
            dconn.close()
        elif opts.get("lock_upload_files") is False:
            assert down.getresp().startswith("150")
            assert recv_all(dconn) == part1
            assert down.getresp().startswith("226")
        conn.sendall(part2)
        conn.close()
        assert up.getresp().startswith("226")
        if not opts:
            assert down.getresp().startswith("150")
            assert recv_all(dconn) == part1 + part2
            assert down.getresp().startswith("226")
        assert s.read("shared.bin")[:len(part1)] == part1
        up.quit()
        down.quit()
        s.stop()


def _waiters_for_a_while(path):
    """lock_waiters(path) 12 times over 0.6 s. A waiter leaves the queue
    for an instant at each tick of its wait (250 ms), so one sample may
    miss it; a window of two ticks does not."""
    seen = []
    for _ in range(12):
        seen.append(lock_waiters(path))
        time.sleep(0.05)
    return seen


def test_uploads_of_one_file_wait_in_turn(make_server):
    """lock_upload_files: uploads of a file another upload holds wait in the
    kernel's queue for its lock (F_OFD_SETLKW, no polling) and the next one
    starts when the holder ends, its file whole; a waiter whose client
    hangs up leaves the queue at the wait's next look at the client."""
    s = make_server({})
    s.put("one.bin", b"old" * 1000)
    path = s.path("one.bin")
    first, second, third = s.ftp("alice"), s.ftp("alice"), s.ftp("alice")
    for f in (first, second, third):
        f.sendcmd("TYPE I")
    conn, resp = open_data(first, "STOR one.bin")
    assert resp.startswith("150"), resp
    conn.sendall(os.urandom(100000))
    c2 = data_cmd_sent(second, "STOR one.bin")
    c3 = data_cmd_sent(third, "STOR one.bin")
    wait_until(lambda: lock_waiters(path) == 2, what="two uploads waiting for the lock")
    c3.close()
    third.close()
    wait_until(lambda: _waiters_for_a_while(path) == [1] * 12,
               what="the hung-up upload leaving the queue")
    conn.close()
    assert first.voidresp().startswith("226")
    assert second.getresp().startswith("150")
    data = os.urandom(400000)
    c2.sendall(data)
    c2.close()
    assert second.voidresp().startswith("226")
    assert s.read("one.bin") == data
    first.quit()
    second.quit()


def test_lock_wait_bounded_with_sigalrm_blocked(make_server):
    """A session started with SIGALRM blocked (an inetd or a supervisor
    may start it so; listen=NO keeps the mask it was given) still ends its
    wait for a lock at data_connection_timeout, with 450: the wait
    unblocks the tick it is bounded by."""
    srv = make_server({"listen": False, "listen_ipv6": False, "data_connection_timeout": 2},
                      start=False)
    srv.put("held.bin", b"h" * 1000)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind((HOST, 0))
    lsock.listen(1)
    client = socket.create_connection(lsock.getsockname(), timeout=30)
    conn, _ = lsock.accept()
    lsock.close()
    with open(srv.path("held.bin"), "r+b") as held:
        # Another program's lock: fcntl record locks conflict with OFD ones.
        fcntl.lockf(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        srv.start(lambda: True, stdin=conn, preexec_fn=lambda: signal.pthread_sigmask(
            signal.SIG_BLOCK, {signal.SIGALRM}))
        conn.close()
        f = ftp_on_socket(client)
        f.login("alice", PASSWORDS["alice"])
        f.sendcmd("TYPE I")
        dconn = data_cmd_sent(f, "RETR held.bin")
        with pytest.raises(ftplib.error_temp) as e:
            f.getresp()
        assert str(e.value).startswith("450 File busy"), e.value
        dconn.close()
    assert code(f.quit()) == 221
    client.close()
    # One session: the process ends with it.
    assert srv.proc.wait(timeout=10) == 0
    srv._out.close()
    srv._err.close()
    srv.proc = None     # nothing left for the fixture to stop


def test_download_waiting_for_a_failed_upload(make_server):
    """lock_upload_files with delete_failed_uploads: a download that waits
    for an upload which then fails gets 550, not the deleted half."""
    s = make_server({"delete_failed_uploads": True})
    up, down = s.ftp("alice"), s.ftp("alice")
    up.sendcmd("TYPE I")
    down.sendcmd("TYPE I")
    conn, resp = open_data(up, "STOR fresh.bin")
    assert resp.startswith("150"), resp
    conn.sendall(b"h" * 100000)
    wait_until(lambda: os.path.exists(s.path("fresh.bin")) and
               os.path.getsize(s.path("fresh.bin")) == 100000, what="the half on disk")
    dconn = data_cmd_sent(down, "RETR fresh.bin")
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
    assert code(up.getmultiline()) in (426, 451)
    with pytest.raises(ftplib.error_perm) as e:
        down.getresp()
    assert str(e.value).startswith("550"), e.value
    dconn.close()
    assert not os.path.exists(s.path("fresh.bin"))
    up.quit()
    down.quit()
