"""Two twinftpd nodes behind the real HAProxy (etc/haproxy/twinftpd.cfg,
mode tcp, roundrobin, send-proxy-v2, health checks), serving one shared
directory. Clients come from 127.0.0.2 and up; the balancer listens on
127.0.0.10 and reaches the nodes (on 127.0.0.1, each with its own port
and passive range) from 127.0.0.1, their one trusted source. Proves:
sessions spread over both nodes; logs and max_per_ip see the real
clients; transfers through the balancer are byte-identical; health checks
leave no trace; a node killed with SIGKILL sends new sessions to the
other while the other's sessions go on."""

import ftplib
import os
import re
import signal
import subprocess

import pytest

from twhelpers import (HOST, TIMEOUT, USERS, Ctrl, _bindable, free_ports, port_listening,
                       sha256, wait_until)

VIP = "127.0.0.10"
HAPROXY = "/usr/sbin/haproxy"
CFG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "etc", "haproxy",
                   "twinftpd.cfg")
CLIENTS = ["127.0.0.%d" % i for i in range(2, 10)]
MAX_PER_IP = 2
# Quiet noise a health check or a balancer must never cause in a node's log.
NOISE = ("PROXY header refused", "ending session", "refused connection: max_clients",
         "died of signal", "killed by seccomp")


class Cluster:
    def __init__(self, make_server):
        self.shared = None
        self.nodes = []
        for i in range(2):
            n = make_server({
                "proxy_protocol_trusted": "127.0.0.1/32",
                "pasv_address": VIP,
                "max_per_ip": MAX_PER_IP,
            }, start=False)
            # Its own process group: the test kills a whole node at once.
            n.launch_prefix = ["setsid"]
            self.nodes.append(n)
        # node_of tells the nodes apart by passive range.
        a, b = (set(n.pasv_ports + [n.port]) for n in self.nodes)
        assert not a & b, "nodes share ports %s" % sorted(a & b)
        # One directory served by both nodes: the shared storage.
        self.shared = os.path.join(self.nodes[0].base, "shared")
        os.mkdir(self.shared, 0o755)
        os.chown(self.shared, USERS["alice"], USERS["alice"])
        for n in self.nodes:
            n.opts["local_root"] = self.shared
            for p in n.pasv_ports + [n.port]:
                assert _bindable(p, VIP), "port %d taken on %s" % (p, VIP)
            n.start()
        self.port = next(p for p in free_ports(40) if _bindable(p, VIP))
        env = dict(os.environ)
        env.update({
            "TW_VIP": VIP, "TW_FTP_PORT": str(self.port), "TW_CHECK_INTER": "500ms",
        })
        for i, n in enumerate(self.nodes, 1):
            env["TW_NODE%d" % i] = HOST
            env["TW_NODE%d_PORT" % i] = str(n.port)
            env["TW_NODE%d_PASV" % i] = "%d-%d" % (n.pasv_ports[0], n.pasv_ports[-1])
        self.log = open(os.path.join(self.nodes[0].base, "haproxy.log"), "wb")
        self.haproxy = subprocess.Popen([HAPROXY, "-f", CFG, "-db"], env=env,
                                        stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        wait_until(lambda: port_listening(self.port, VIP) or self.haproxy.poll() is not None,
                   20, what="haproxy listening")
        assert self.haproxy.poll() is None, self.haproxy_log()

    def haproxy_log(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def close(self):
        if self.haproxy.poll() is None:
            self.haproxy.terminate()
            try:
                self.haproxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.haproxy.kill()
                self.haproxy.wait(timeout=10)
        self.log.close()

    def ftp(self, src, user="alice"):
        f = ftplib.FTP(timeout=TIMEOUT)
        f.connect(VIP, self.port, source_address=(src, 0))
        f.login(user, "alice-pw")
        return f

    def node_of(self, f):
        """The node serving session f: its PASV port is in that node's range."""
        host, port = ftplib.parse227(f.sendcmd("PASV"))
        assert host == VIP, host
        for i, n in enumerate(self.nodes):
            if n.pasv_ports[0] <= port <= n.pasv_ports[-1]:
                return i
        raise AssertionError("PASV port %d in no node's range" % port)


@pytest.fixture
def cluster(make_server):
    c = Cluster(make_server)
    yield c
    c.close()


def logins_from(node):
    return re.findall(r'OK LOGIN: Client "([^"]+)"', node.log_text())


@pytest.mark.timeout(180)
def test_spread_real_clients_transfers_limits(cluster):
    data = os.urandom(3 * 1024 * 1024 + 7)
    with open(os.path.join(cluster.shared, "big.bin"), "wb") as f:
        f.write(data)
    sessions = [cluster.ftp(CLIENTS[i % 2]) for i in range(4)]
    on = [cluster.node_of(f) for f in sessions]
    # Round robin: both nodes have sessions, each from the real clients.
    assert sorted(on) == [0, 0, 1, 1], on
    for n in cluster.nodes:
        wait_until(lambda n=n: logins_from(n), 10, what="an OK LOGIN line on each node")
        got = logins_from(n)
        assert got and set(got) <= {CLIENTS[0], CLIENTS[1]}, got
        assert 'Client "127.0.0.1"' not in n.log_text()
    # RETR and STOR through the balancer (passive, via the node's range), on both nodes.
    for i, f in enumerate(sessions[:2]):
        got = bytearray()
        f.retrbinary("RETR big.bin", got.extend)
        assert sha256(bytes(got)) == sha256(data)
        up = os.urandom(512 * 1024 + i)
        import io
        f.storbinary("STOR up%d.bin" % i, io.BytesIO(up))
        with open(os.path.join(cluster.shared, "up%d.bin" % i), "rb") as fh:
            assert sha256(fh.read()) == sha256(up)
    for n in cluster.nodes:
        n.wait_log(r'OK DOWNLOAD: Client "127\.0\.0\.[23]", user "alice", ".*big\.bin", %d bytes'
                   % len(data))
    for f in sessions:
        f.quit()

    # max_per_ip per real client and per node: one client gets
    # MAX_PER_IP sessions on each node (round robin), and the next is refused.
    client = CLIENTS[2]
    held, refused = [], None
    for _ in range(2 * MAX_PER_IP + 1):
        c = Ctrl(cluster.port, host=VIP, src=client)
        code_, lines = c.reply()
        if code_ == 421:
            refused = lines
            c.close()
            break
        assert code_ == 220, lines
        held.append(c)
    assert len(held) == 2 * MAX_PER_IP and refused is not None, (len(held), refused)
    assert b"too many connections" in refused[0]
    # Another client behind the same balancer is not affected.
    other = cluster.ftp(CLIENTS[3])
    other.quit()
    for c in held:
        c.close()
    wait_until(lambda: any(re.search(r'refused proxied Client "127\.0\.0\.4"', n.log_text())
                           for n in cluster.nodes), 10, what="the refusal in a node's log")
    # The health checks (every 500 ms all along) left nothing in the logs.
    for n in cluster.nodes:
        for noise in NOISE:
            assert noise not in n.log_text(), n.log_text()


@pytest.mark.timeout(180)
def test_node_killed(cluster):
    data = os.urandom(1024 * 1024)
    with open(os.path.join(cluster.shared, "f.bin"), "wb") as f:
        f.write(data)
    sessions = [cluster.ftp(CLIENTS[i]) for i in range(2)]
    on = [cluster.node_of(f) for f in sessions]
    assert sorted(on) == [0, 1], on
    survivor = sessions[on.index(1)]
    victim = cluster.nodes[0]
    # SIGKILL to node 1's whole process group: listener, monitors, workers.
    pid = victim.pid
    os.killpg(pid, signal.SIGKILL)
    victim.proc.wait(timeout=10)
    wait_until(lambda: not victim._by_cmdline(), 10, what="node 1's processes gone")
    # The fixture has nothing left to stop there.
    victim._out.close()
    victim._err.close()
    victim.proc = None

    # The other node's session goes on.
    got = bytearray()
    survivor.retrbinary("RETR f.bin", got.extend)
    assert sha256(bytes(got)) == sha256(data)
    # New sessions all land on node 2 (a refused connect is redispatched
    # before the checks even mark node 1 down).
    fresh = []
    for src in CLIENTS[2:6]:
        f = cluster.ftp(src)
        assert cluster.node_of(f) == 1
        got = bytearray()
        f.retrbinary("RETR f.bin", got.extend)
        assert sha256(bytes(got)) == sha256(data)
        fresh.append(f)
    survivor.quit()
    for f in fresh:
        f.quit()
    logins = logins_from(cluster.nodes[1])
    assert set(CLIENTS[2:6]) <= set(logins), logins
    for noise in NOISE:
        assert noise not in cluster.nodes[1].log_text()
