"""PROXY protocol (proxy_protocol_trusted) without a balancer: raw sockets
from 127.0.0.1 (the trusted "balancer") send crafted version 1 and 2
headers; 127.0.0.2 is an untrusted direct client. The header's client is
the address of every limit, penalty, log line and data-connection check;
every rule of a bad, missing, slow or untrusted header is a clean close
and a log line naming the source; LOCAL (a health check) is quiet."""

import ftplib
import re
import socket
import struct

import pytest

from twhelpers import HOST, OTHER, TIMEOUT, Ctrl, recv_all, wait_until

BALANCER = HOST           # in proxy_protocol_trusted
UNTRUSTED = OTHER
V2SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def v1(client, cport=40001, dst="192.0.2.1", dport=21):
    fam = "TCP6" if ":" in client else "TCP4"
    if fam == "TCP6" and ":" not in dst:
        dst = "2001:db8::1"
    return ("PROXY %s %s %s %d %d\r\n" % (fam, client, dst, cport, dport)).encode()


def v2(client, cport=40001, dst="192.0.2.1", dport=21):
    if ":" in client:
        body = (socket.inet_pton(socket.AF_INET6, client)
                + socket.inet_pton(socket.AF_INET6, "2001:db8::1") + struct.pack("!HH", cport, dport))
        fam = 0x21
    else:
        body = (socket.inet_aton(client) + socket.inet_aton(dst) + struct.pack("!HH", cport, dport))
        fam = 0x11
    return V2SIG + bytes([0x21, fam]) + struct.pack("!H", len(body)) + body


V2_LOCAL = V2SIG + bytes([0x20, 0x00, 0x00, 0x00])


def proxied(server, header, src=BALANCER):
    """A control connection from the balancer that sent header; greeted."""
    c = Ctrl(server.port, src=src)
    c.send(header)
    code_, lines = c.reply()
    assert code_ == 220, lines
    return c


def refused_close(server, src, data, logpat):
    """data on a fresh connection from src: closed, and the log says why."""
    c = Ctrl(server.port, src=src)
    try:
        if src == UNTRUSTED:
            assert c.reply()[0] == 220
        c.send(data)
        assert c.closed_within(30), "connection not closed"
    finally:
        c.close()
    server.wait_log(logpat, timeout=10)


@pytest.fixture
def proxy_server(make_server):
    return make_server({"proxy_protocol_trusted": "127.0.0.1/32, ::1/128",
                        "max_per_ip": 2})


def test_v1_and_v2_name_the_client(proxy_server):
    s = proxy_server
    with proxied(s, v1("198.51.100.7")) as c:
        c.login("alice", "alice-pw")
        assert c.cmd("QUIT")[0] == 221
    s.wait_log(r'PROXY: Client "198\.51\.100\.7" via "127\.0\.0\.1"')
    s.wait_log(r'OK LOGIN: Client "198\.51\.100\.7", user "alice"')
    # Version 2 with the client's first command in the same segment: the
    # worker takes the header alone, the command stays for the session.
    c = Ctrl(s.port, src=BALANCER)
    c.send(v2("198.51.100.8") + b"USER alice\r\n")
    assert c.reply()[0] == 220
    assert c.reply()[0] == 331
    assert c.cmd("PASS alice-pw")[0] == 230
    c.close()
    s.wait_log(r'OK LOGIN: Client "198\.51\.100\.8", user "alice"')
    # IPv6 clients, both versions.
    for h in (v1("2001:db8::7"), v2("2001:db8::8")):
        with proxied(s, h) as c:
            c.login("alice", "alice-pw")
    s.wait_log(r'OK LOGIN: Client "2001:db8::7"')
    s.wait_log(r'OK LOGIN: Client "2001:db8::8"')
    # Not the balancer: it never appears as a client.
    assert not re.search(r'(LOGIN|DOWNLOAD|UPLOAD): Client "127\.0\.0\.1"', s.log_text())


def test_max_per_ip_per_real_client(proxy_server):
    s = proxy_server
    # More sessions from the balancer than max_per_ip (2): its address is
    # many clients, and it is not capped.
    a1 = proxied(s, v2("198.51.100.7", 1001))
    a2 = proxied(s, v2("198.51.100.7", 1002))
    b1 = proxied(s, v2("198.51.100.8", 1003))
    b2 = proxied(s, v1("198.51.100.8", 1004))
    for c in (a1, a2, b1, b2):
        assert c.cmd("NOOP")[0] == 200
    # A third of one client: 421 after the header, from its monitor.
    c = Ctrl(s.port, src=BALANCER)
    c.send(v2("198.51.100.7", 1005))
    code_, lines = c.reply()
    assert code_ == 421 and b"too many connections" in lines[0], lines
    assert c.closed_within(10)
    c.close()
    s.wait_log(r'refused proxied Client "198\.51\.100\.7": There are too many connections')
    # One of its sessions ends: its count follows the client, not the balancer.
    a1.cmd("QUIT")
    a1.close()

    def third_ok():
        c = Ctrl(s.port, src=BALANCER)
        c.send(v2("198.51.100.7", 1006))
        code_, _ = c.reply()
        c.close()
        return code_ == 220
    wait_until(third_ok, 20, what="a new session of 198.51.100.7 once one ended")
    for c in (a2, b1, b2):
        c.close()


def test_penalties_per_real_client(make_server):
    s = make_server({"proxy_protocol_trusted": "127.0.0.1", "source_penalty_fails": 2,
                     "max_login_fails": 2})
    with proxied(s, v1("198.51.100.7")) as c:
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS wrong")[0] == 530
        assert c.cmd("USER alice")[0] == 331
        assert c.cmd("PASS wrong")[0] == 530
        assert c.closed_within(10)
    s.wait_log(r'FAIL LOGIN: Client "198\.51\.100\.7"')

    def refused():
        c = Ctrl(s.port, src=BALANCER)
        c.send(v1("198.51.100.7"))
        code_, lines = c.reply()
        c.close()
        return code_ == 421 and b"failed logins" in lines[0]
    # Counted when the session is reaped: poll for it.
    wait_until(refused, 20, what="198.51.100.7 refused for its failed logins")
    # Another client behind the same balancer is not punished.
    with proxied(s, v1("198.51.100.8")) as c:
        c.login("alice", "alice-pw")
    # Nor the balancer's own address, as a direct client would be.
    assert not re.search(r'FAIL LOGIN: Client "127\.0\.0\.1"', s.log_text())


def test_untrusted_source_sending_a_header(proxy_server):
    s = proxy_server
    refused_close(s, UNTRUSTED, v1("198.51.100.7"),
                  r'PROXY header refused: Client "127\.0\.0\.2" is not in proxy_protocol_trusted')
    before = s.log_text().count("is not in proxy_protocol_trusted")
    refused_close(s, UNTRUSTED, v2("198.51.100.7"), r"is not in proxy_protocol_trusted")
    wait_until(lambda: s.log_text().count("is not in proxy_protocol_trusted") > before, 10)
    # Both refused sessions are gone before the next two connections from
    # the same address: max_per_ip is 2.
    s.wait_sessions(0, timeout=30)
    # The start of a signature alone (an empty line is v2's start) is
    # looked at for 5 s at most, then read as the command it is.
    with Ctrl(s.port, src=UNTRUSTED) as c:
        assert c.reply()[0] == 220
        c.send(b"\r\n")
        assert c.reply()[0] == 500
        assert c.cmd("NOOP")[0] == 200
    # A direct client without a header is served as always.
    with Ctrl(s.port, src=UNTRUSTED) as c:
        assert c.reply()[0] == 220
        c.login("alice", "alice-pw")
    s.wait_log(r'OK LOGIN: Client "127\.0\.0\.2"')


@pytest.mark.parametrize("data,why", [
    (b"USER alice\r\n", r"not a PROXY header"),
    (b"PROXY TCP4 1.2.3.4 5.6.7.8 x 21\r\n", r"version 1 port"),
    (b"PROXY TCP4 1.2.3.4 5.6.7.8 1 21\n", r"without CRLF"),
    (b"PROXY " + b"A" * 200, r"longer than 107 bytes"),
    (V2SIG + bytes([0x21, 0x11]) + struct.pack("!H", 4000) + b"\0" * 64,
     r"longer than this server accepts"),
    (V2SIG + bytes([0x21, 0x31]) + struct.pack("!H", 216) + b"\0" * 216,
     r"neither TCP over IPv4"),
    (v1("198.51.100.7", cport=0), r"client port 0"),
])
def test_trusted_source_bad_or_missing_header(proxy_server, data, why):
    s = proxy_server
    c = Ctrl(s.port, src=BALANCER)
    c.send(data)
    # No greeting, no reply: the close is the answer.
    assert c.closed_within(30)
    assert c.buf == b"", c.buf
    c.close()
    s.wait_log(r'PROXY header refused: trusted source "127\.0\.0\.1": .*' + why, timeout=10)


def test_slow_header_is_bounded(proxy_server):
    s = proxy_server
    c = Ctrl(s.port, src=BALANCER)
    c.send(b"PROXY TCP4 198.51")
    # The bound is 5 s; the poll's 30 s only keeps a broken server from hanging us.
    assert c.closed_within(30)
    c.close()
    s.wait_log(r'trusted source "127\.0\.0\.1": no whole header within 5 seconds', timeout=10)
    # Silence from a trusted source ends the same way.
    c = Ctrl(s.port, src=BALANCER)
    assert c.closed_within(30)
    c.close()
    wait_until(lambda: s.log_text().count("no whole header within 5 seconds") >= 2, 10)


def test_health_checks_are_quiet(make_server):
    # One bad session would be a penalty at source_penalty_sessions=1.
    s = make_server({"proxy_protocol_trusted": "127.0.0.1", "source_penalty_sessions": 1,
                     "source_penalty_fails": 1})
    for _ in range(5):
        c = Ctrl(s.port, src=BALANCER)
        c.send(V2_LOCAL)
        assert c.closed_within(30)
        assert c.buf == b""
        c.close()
        # A plain TCP check: connect, close.
        c = Ctrl(s.port, src=BALANCER)
        c.close()
        c = Ctrl(s.port, src=BALANCER)
        c.send(b"PROXY UNKNOWN\r\n")
        assert c.closed_within(30)
        c.close()
    # Then a client still gets in, through the same balancer.
    with proxied(s, v2("198.51.100.7")) as c:
        c.login("alice", "alice-pw")
    s.wait_log(r'OK LOGIN: Client "198\.51\.100\.7"')
    text = s.log_text()
    for noise in ("PROXY header refused", "ending session", "refused connection", "died"):
        assert noise not in text, text


def test_data_connections_checked_against_the_real_client(proxy_server):
    s = proxy_server
    s.put("f.bin", b"x" * 100000)
    client = "127.0.0.3"
    with proxied(s, v2(client)) as c:
        c.login("alice", "alice-pw")
        assert c.cmd("TYPE I")[0] == 200

        def pasv():
            code_, lines = c.cmd("PASV")
            assert code_ == 227, lines
            return ftplib.parse227(lines[0].decode())[1]

        # Through the balancer: its header names the control's client.
        port = pasv()
        d = socket.create_connection((HOST, port), TIMEOUT, source_address=(BALANCER, 0))
        d.sendall(v2(client, 50000))
        assert c.cmd("RETR f.bin")[0] == 150
        assert recv_all(d) == b"x" * 100000
        d.close()
        assert c.reply()[0] == 226
        # Naming another client: a third party taking the transfer.
        port = pasv()
        d = socket.create_connection((HOST, port), TIMEOUT, source_address=(BALANCER, 0))
        d.sendall(v2("127.0.0.9", 50001))
        assert c.cmd("RETR f.bin")[0] == 425
        d.close()
        # The balancer without a header.
        port = pasv()
        d = socket.create_connection((HOST, port), TIMEOUT, source_address=(BALANCER, 0))
        d.sendall(b"hello")
        assert c.cmd("RETR f.bin")[0] == 425
        d.close()
        s.wait_log(r'PROXY header of a data connection refused: trusted source "127\.0\.0\.1"')
        # Direct from the client's own address (no balancer on the data path).
        port = pasv()
        d = socket.create_connection((HOST, port), TIMEOUT, source_address=(client, 0))
        assert c.cmd("RETR f.bin")[0] == 150
        assert recv_all(d) == b"x" * 100000
        d.close()
        assert c.reply()[0] == 226
        # PORT: the real client's address is the only one allowed (no bounce).
        ls = socket.create_server((client, 0))
        p = ls.getsockname()[1]
        assert c.cmd("PORT 127,0,0,1,%d,%d" % (p >> 8, p & 255))[0] == 500
        assert c.cmd("PORT 127,0,0,3,%d,%d" % (p >> 8, p & 255))[0] == 200
        assert c.cmd("RETR f.bin")[0] == 150
        conn, _ = ls.accept()
        assert recv_all(conn) == b"x" * 100000
        conn.close()
        ls.close()
        assert c.reply()[0] == 226
    s.wait_log(r'OK DOWNLOAD: Client "127\.0\.0\.3"')


def test_option_is_checked(make_server):
    s = make_server({"proxy_protocol_trusted": "127.0.0.1/33"}, start=False)
    s.write_config()
    import subprocess
    from twhelpers import TWINFTPD
    r = subprocess.run([TWINFTPD, "-t", s.conf_path], capture_output=True, text=True, timeout=60,
                       env=s.env())
    assert r.returncode != 0
    assert "proxy_protocol_trusted" in r.stdout + r.stderr


def test_tcp_wrappers_checks_the_real_client(make_server, tmp_path):
    """tcp_wrappers=YES behind a balancer: the client the header names is
    checked, not the balancer (which the deny table names too)."""
    allow, deny = tmp_path / "hosts.allow", tmp_path / "hosts.deny"
    allow.write_text("")
    deny.write_text("twinftpd: 198.51.100.9, %s\n" % BALANCER)
    s = make_server({"proxy_protocol_trusted": "127.0.0.1/32", "tcp_wrappers": True},
                    extra_env={"TW_TEST_HOSTS_ALLOW": str(allow),
                               "TW_TEST_HOSTS_DENY": str(deny)})
    c = Ctrl(s.port, src=BALANCER)
    c.send(v1("198.51.100.9"))
    code_, lines = c.reply()
    assert code_ == 421 and lines[0] == b"421 Service not available.", lines
    assert c.closed_within(10)
    c.close()
    s.wait_log(r'refused proxied Client "198\.51\.100\.9": Service not available\.')
    with proxied(s, v2("198.51.100.10")) as c:
        c.login("alice", "alice-pw")
        assert c.cmd("QUIT")[0] == 221
