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
