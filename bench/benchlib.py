"""What bench/ab and bench/compare both measure, in one place."""
import os


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
