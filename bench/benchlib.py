"""What bench/ab and bench/compare both measure, in one place."""
import os
import re
import time


def parse_bytes(text):
    """"10M", "1M", "65536": bytes (K, M, G are powers of 1024, as ftpbench's -s)."""
    m = re.match(r"^(\d+)([KkMmGg]?)$", text.strip())
    if not m:
        raise ValueError("bad size %r" % text)
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[
        m.group(2).lower()]


def write_random(path, size):
    """A file of size random bytes (a size as parse_bytes reads it), 1 MiB at a time."""
    left = parse_bytes(size)
    with open(path, "wb") as f:
        while left > 0:
            f.write(os.urandom(min(left, 1 << 20)))
            left -= 1 << 20


def tcp_mem_kb():
    """The machine's TCP socket memory, KB (/proc/net/sockstat "mem" is in
    pages and counts every namespace: on loopback both the server's and the
    load generator's ends)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                v = line.split()
                return int(v[v.index("mem") + 1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    return -1


def sysctl_ipv4(name, value=None):
    """Reads (or writes) net.ipv4.NAME of the caller's network namespace."""
    path = "/proc/sys/net/ipv4/" + name
    if value is not None:
        with open(path, "w") as f:
            f.write(value)
    with open(path) as f:
        return f.read().strip()


def allow_ccs(ccs, sysctl=sysctl_ipv4):
    """A namespace other than the first may set only a congestion control
    that tcp_allowed_congestion_control lists (the kernel refuses the
    rest with EPERM): adds ccs there (through sysctl, which must reach
    the first namespace); returns the list to put back with
    sysctl("tcp_allowed_congestion_control", it). It changes no
    socket's default."""
    before = sysctl("tcp_allowed_congestion_control")
    want = before.split() + [c for c in ccs if c not in before.split()]
    sysctl("tcp_allowed_congestion_control", " ".join(want))
    return before


def proc_stats():
    """(pid, name, the fields after the name) of every process, from
    /proc/PID/stat; a process gone meanwhile is skipped."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        yield int(d), st[st.index("(") + 1:st.rfind(")")], st[st.rfind(")") + 2:].split()


def kthreads_cpu_ms(prefix):
    """CPU time so far, ms, of the kernel threads whose name starts with
    prefix ("kdamond": DAMON's, which on the machines of RESULTS.md
    checks and reclaims pages for the host; its walks of the processes
    that map a page cost more the more processes there are)."""
    tick = os.sysconf("SC_CLK_TCK")
    return sum((int(f[11]) + int(f[12])) * 1000 // tick
               for _, name, f in proc_stats() if name.startswith(prefix))


class CpuGroup:
    """A cgroup of its own for a server, to count the CPU time all its
    processes take (those that ended too): cgroup v1's cpuacct or v2's
    cpu.stat. procs is the file a process joins by writing its pid
    (children follow); usage_cmd() a shell command that prints the CPU
    time so far in ns ("-" where neither is mounted). remove() waits for
    the processes to be gone."""

    def __init__(self, name):
        self.path = None
        for root, v2 in (("/sys/fs/cgroup/cpuacct", False), ("/sys/fs/cgroup", True)):
            if v2 != os.path.exists(os.path.join(root, "cgroup.controllers")):
                continue
            if not v2 and not os.path.exists(os.path.join(root, "cpuacct.usage")):
                continue
            path = os.path.join(root, "%s.%d" % (name, os.getpid()))
            try:
                os.mkdir(path)
            except OSError:
                continue
            self.path, self.v2 = path, v2
            break
        self.procs = os.path.join(self.path, "cgroup.procs") if self.path else "/dev/null"

    def usage_cmd(self):
        """The shell command (it runs beside the server, in its namespace)."""
        if self.path is None:
            return "echo -"
        if not self.v2:
            return "cat %s" % os.path.join(self.path, "cpuacct.usage")
        return "awk '/^usage_usec /{print $2 * 1000}' %s" % os.path.join(self.path, "cpu.stat")

    def remove(self, wait_s=30.0):
        if self.path is None:
            return
        end = time.monotonic() + wait_s
        while True:
            try:
                os.rmdir(self.path)
                return
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.2)


# settle(): quiet means at most this many runnable tasks (the caller's own
# read included) in every sample for SETTLE_QUIET_S; waited for at most
# SETTLE_MAX_S.
SETTLE_RUNNING = 2
SETTLE_QUIET_S = 1.0
SETTLE_MAX_S = 60.0


def procs_running():
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def settle():
    """Before each run: the dirty pages of the runs before written out
    (sync: a STOR figure must not share the disk with the last server's
    3 GB of distinct files) and the machine quiet (a server's teardown,
    hundreds of processes and their seccomp filters, must not land on the
    next run's first figure). Returns what it waited for, for the run's
    line in the report."""
    t0 = time.monotonic()
    os.sync()
    synced = time.monotonic() - t0
    quiet_since = None
    while True:
        now = time.monotonic()
        if procs_running() <= SETTLE_RUNNING:
            if quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= SETTLE_QUIET_S:
                return "settled in %.1f s (sync %.1f s)" % (now - t0, synced)
        else:
            quiet_since = None
        if now - t0 >= SETTLE_MAX_S:
            return "not quiet after %.0f s (sync %.1f s)" % (SETTLE_MAX_S, synced)
        time.sleep(0.1)
