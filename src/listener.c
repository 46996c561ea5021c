/*
 * The listener: the only long-lived root process not tied to a client.
 * It binds, accepts, enforces max_clients and max_per_ip before any fork,
 * hands the connection to a new session, reaps, and never reads a byte
 * from the network.
 */
#include "src/listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/config.h"
#include "privsep/ipc.h"
#include "src/common/log.h"
#include "privsep/monitor.h"
#include "src/session.h"
#include "sandbox/sandbox.h"
#include "tw_build.h"
#include "src/common/util.h"

/*
 * Live sessions, keyed by the monitor's pid, and a count per client
 * address. Open addressing with linear probing and backward-shift delete,
 * so every event costs O(1) whatever the number of sessions.
 */
struct addr_key {
	unsigned char b[16];	/* IPv4 as v4-mapped IPv6 */
};

struct pid_slot {
	pid_t pid;		/* 0 = empty */
	struct addr_key addr;
};

struct addr_slot {
	unsigned count;		/* 0 = empty */
	struct addr_key addr;
};

struct session_table {
	struct pid_slot *pids;
	struct addr_slot *addrs;
	size_t cap;		/* power of two, same for both */
	size_t nsessions;
	size_t naddrs;
};

static struct session_table sessions;

/*
 * Per-source penalties: a small direct-mapped cache keyed by address.
 * Bounded memory whatever the number of sources; a collision only
 * forgets an older source (it can never penalise the wrong one).
 */
#define PENALTY_SLOTS 4096

struct penalty_slot {
	struct addr_key addr;
	unsigned bad;		/* bad sessions in the current window */
	time_t window_start;
	time_t banned_until;
};

static struct penalty_slot penalties[PENALTY_SLOTS];

/*
 * The pool of ready session pairs: each slot is a pre-forked monitor
 * (whose pre-login worker is already sandboxed) and the channel to send
 * it a client on. The listener holds a channel only while the pair is
 * idle; after the hand-off it keeps nothing but the pid.
 */
struct pool_slot {
	pid_t pid;
	int chan;
};

static struct {
	struct pool_slot *slots;
	size_t n, cap;
	unsigned long on_demand;	/* connections forked because the pool was empty */
	time_t burst_logged;
	time_t death_second;		/* idle pairs that died in this second... */
	unsigned deaths;		/* ...counted here */
	time_t paused_until;		/* refilling stops while pairs keep dying */
	/*
	 * The adaptive size: ready pairs wanted now, from prefork_sessions
	 * up to prefork_max_sessions. Each connection that finds the pool
	 * empty adds one (the pool learns the size of the bursts it sees);
	 * each minute without one halves what is above prefork_sessions.
	 */
	unsigned target;
	time_t resized;			/* last growth or shrink */
	struct timespec last_accept;	/* refills wait for a quiet moment */
} pool;

static size_t
hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return (size_t)(h ^ (h >> 29));
}

static size_t
pid_home(pid_t pid, size_t cap)
{
	return hash_bytes((const unsigned char *)&pid, sizeof(pid)) & (cap - 1);
}

static size_t
addr_home(const struct addr_key *a, size_t cap)
{
	return hash_bytes(a->b, sizeof(a->b)) & (cap - 1);
}

static struct addr_slot *
addr_find(const struct addr_key *a, int create)
{
	size_t i = addr_home(a, sessions.cap);

	for (;;) {
		struct addr_slot *s = &sessions.addrs[i];

		if (s->count == 0) {
			if (!create)
				return NULL;
			s->addr = *a;
			sessions.naddrs++;
			return s;
		}
		if (memcmp(s->addr.b, a->b, sizeof(a->b)) == 0)
			return s;
		i = (i + 1) & (sessions.cap - 1);
	}
}

static void
addr_delete(struct addr_slot *s)
{
	size_t i = (size_t)(s - sessions.addrs), j = i, mask = sessions.cap - 1;

	sessions.naddrs--;
	for (;;) {
		size_t home;

		sessions.addrs[i].count = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (sessions.addrs[j].count == 0)
				return;
			home = addr_home(&sessions.addrs[j].addr, sessions.cap);
			/* Move j back to i unless its home lies cyclically in (i, j]. */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		sessions.addrs[i] = sessions.addrs[j];
		i = j;
	}
}

static void
pid_insert(pid_t pid, const struct addr_key *a)
{
	size_t i = pid_home(pid, sessions.cap);

	while (sessions.pids[i].pid != 0)
		i = (i + 1) & (sessions.cap - 1);
	sessions.pids[i].pid = pid;
	sessions.pids[i].addr = *a;
	sessions.nsessions++;
}

static struct pid_slot *
pid_find(pid_t pid)
{
	size_t i = pid_home(pid, sessions.cap);

	for (;;) {
		struct pid_slot *s = &sessions.pids[i];

		if (s->pid == 0)
			return NULL;
		if (s->pid == pid)
			return s;
		i = (i + 1) & (sessions.cap - 1);
	}
}

static void
pid_delete(struct pid_slot *s)
{
	size_t i = (size_t)(s - sessions.pids), j = i, mask = sessions.cap - 1;

	sessions.nsessions--;
	for (;;) {
		size_t home;

		sessions.pids[i].pid = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (sessions.pids[j].pid == 0)
				return;
			home = pid_home(sessions.pids[j].pid, sessions.cap);
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		sessions.pids[i] = sessions.pids[j];
		i = j;
	}
}

static void table_grow(void);

static void
table_init(size_t cap)
{
	sessions.cap = cap;
	sessions.pids = calloc(cap, sizeof(*sessions.pids));
	sessions.addrs = calloc(cap, sizeof(*sessions.addrs));
	if (sessions.pids == NULL || sessions.addrs == NULL)
		die("out of memory for the session table");
}

static void
table_grow(void)
{
	struct session_table old = sessions;
	size_t i;

	table_init(old.cap * 2);
	sessions.nsessions = 0;
	sessions.naddrs = 0;
	for (i = 0; i < old.cap; i++) {
		if (old.pids[i].pid != 0)
			pid_insert(old.pids[i].pid, &old.pids[i].addr);
		if (old.addrs[i].count != 0)
			addr_find(&old.addrs[i].addr, 1)->count = old.addrs[i].count;
	}
	free(old.pids);
	free(old.addrs);
}

static void
addr_key_of(const struct sockaddr_storage *ss, struct addr_key *k)
{
	memset(k, 0, sizeof(*k));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		k->b[10] = 0xff;
		k->b[11] = 0xff;
		memcpy(&k->b[12], &in->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(k->b, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	}
}

static void
session_added(pid_t pid, const struct addr_key *a)
{
	/* Keep both tables at most half full. */
	if ((sessions.nsessions + 1) * 2 > sessions.cap ||
	    (sessions.naddrs + 1) * 2 > sessions.cap)
		table_grow();
	pid_insert(pid, a);
	addr_find(a, 1)->count++;
}

/*
 * Ready pairs that die idle are replaced, but if they keep dying (a
 * broken secure_chroot_dir, a policy the kernel refuses) refilling would
 * become a fork storm: more deaths in one second than the pool holds
 * pause it for a few seconds, and say so.
 */
static void
pool_count_death(void)
{
	time_t now = time(NULL);

	if (now != pool.death_second) {
		pool.death_second = now;
		pool.deaths = 0;
	}
	if (++pool.deaths == (pool.cap > 8 ? (unsigned)pool.cap : 8u)) {
		pool.paused_until = now + 5;
		tw_log(TW_LOG_ERR, "pool: %u ready session pairs died within a second; "
		       "refilling paused for 5 s (see the lines above for why)", pool.deaths);
	}
}

static void
pool_forget(pid_t pid)
{
	size_t i;

	/* The pool is small (prefork_sessions), unlike the session table. */
	for (i = 0; i < pool.n; i++) {
		if (pool.slots[i].pid == pid) {
			close(pool.slots[i].chan);
			pool.slots[i] = pool.slots[--pool.n];
			pool_count_death();
			return;
		}
	}
}

static struct penalty_slot *
penalty_slot(const struct addr_key *a, int create)
{
	struct penalty_slot *p = &penalties[hash_bytes(a->b, sizeof(a->b)) % PENALTY_SLOTS];

	if (memcmp(p->addr.b, a->b, sizeof(a->b)) == 0)
		return p;
	if (!create)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->addr = *a;
	return p;
}

static void
penalty_record(const struct tw_config *cfg, const struct addr_key *a)
{
	struct penalty_slot *p;
	time_t now = time(NULL);

	if (cfg->source_penalty_sessions == 0)
		return;
	p = penalty_slot(a, 1);
	if (now - p->window_start >= (time_t)cfg->source_penalty_time) {
		p->window_start = now;
		p->bad = 0;
	}
	if (++p->bad >= cfg->source_penalty_sessions && p->banned_until <= now) {
		char ip[INET6_ADDRSTRLEN];

		p->banned_until = now + cfg->source_penalty_time;
		inet_ntop(AF_INET6, a->b, ip, sizeof(ip));
		tw_log(TW_LOG_WARN, "penalty: %s refused for %u s after %u bad sessions",
		       ip, cfg->source_penalty_time, p->bad);
	}
}

static int
penalty_active(const struct addr_key *a)
{
	struct penalty_slot *p = penalty_slot(a, 0);

	return p != NULL && p->banned_until > time(NULL);
}

static void
session_reaped(pid_t pid, int status, const struct tw_config *cfg)
{
	struct pid_slot *s = pid_find(pid);
	struct addr_slot *as;

	if (s == NULL) {
		pool_forget(pid);
		return;
	}
	if ((WIFEXITED(status) && (WEXITSTATUS(status) == MONITOR_EXIT_LOGIN_FAILED ||
				   WEXITSTATUS(status) == MONITOR_EXIT_CRASH)) ||
	    (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM))
		penalty_record(cfg, &s->addr);
	as = addr_find(&s->addr, 0);
	if (as != NULL && --as->count == 0)
		addr_delete(as);
	pid_delete(s);
}

/* --- Sockets --- */

static int
open_listen_socket(int family, const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		if (addr[0] != '\0' && inet_pton(AF_INET, addr, &in->sin_addr) != 1)
			die("listen_address %s is not an IPv4 address", addr);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		in6->sin6_addr = in6addr_any;
		if (addr[0] != '\0' && inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
			die("listen_address6 %s is not an IPv6 address", addr);
		len = sizeof(*in6);
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0)
		die("bind to port %u: %s", port, strerror(errno));
	if (listen(fd, SOMAXCONN) != 0)
		die("listen: %s", strerror(errno));
	return fd;
}

/*
 * Refusals are written straight into the socket buffer of a fresh
 * connection: it is empty, so a non-blocking write of a short line cannot
 * stall the listener.
 */
static void
refuse(int fd, const char *reply)
{
	(void)!send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

/*
 * In a freshly forked session process: drop everything of the listener's
 * but the log and the one descriptor the session needs.
 */
static void
session_child_setup(int keep_fd)
{
	int keep[3] = { log_fd(), keep_fd, tw_rt.netns_fd };
	sigset_t none;

	tw_close_fds_except(keep, 3);
	sigemptyset(&none);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* A session must not outlive the listener's SIGTERM or death. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		_exit(0);
	log_set_role("monitor");
}

static void
pool_spawn(const struct tw_config *cfg)
{
	int sv[2];
	pid_t pid;

	if (ipc_socketpair(sv) != 0) {
		tw_log(TW_LOG_ERR, "socketpair for the pool: %s", strerror(errno));
		return;
	}
	pid = ns_fork(0);
	if (pid < 0) {
		tw_log(TW_LOG_ERR, "fork for the pool: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return;
	}
	if (pid == 0) {
		session_child_setup(sv[1]);
		session_run_pooled(cfg, sv[1]);
	}
	close(sv[1]);
	if (pool.n == pool.cap) {
		size_t ncap = pool.cap ? pool.cap * 2 : 64;
		struct pool_slot *ns = realloc(pool.slots, ncap * sizeof(*ns));

		if (ns == NULL) {
			kill(pid, SIGTERM);
			close(sv[0]);
			return;
		}
		pool.slots = ns;
		pool.cap = ncap;
	}
	pool.slots[pool.n].pid = pid;
	pool.slots[pool.n].chan = sv[0];
	pool.n++;
}

/*
 * Quiet means no connection for this long; refilling waits for it while
 * the pool still has a quarter of its target ready, and then adds (or
 * ends) POOL_BATCH sessions every POOL_PACE_MS: a pool that grew to
 * hundreds is refilled over seconds, beside the sessions it serves, not
 * in one burst of forks that starves their transfers.
 */
#define POOL_QUIET_MS 50
#define POOL_PACE_MS 50
#define POOL_BATCH 4
#if TW_TEST_HOOKS
#define POOL_SHRINK_SECS 2	/* so that the end-to-end tests see it shrink */
#else
#define POOL_SHRINK_SECS 60
#endif

static unsigned
pool_max(const struct tw_config *cfg)
{
	return cfg->prefork_max_sessions > cfg->prefork_sessions ? cfg->prefork_max_sessions
								  : cfg->prefork_sessions;
}

/* A connection found the pool empty: want one more ready pair. */
static void
pool_grow(const struct tw_config *cfg)
{
	if (pool.target < pool_max(cfg))
		pool.target++;
	pool.resized = time(NULL);
}

/* A quiet minute: halve what the target holds above the minimum (pool_trim
 * then ends the idle pairs beyond it). */
static void
pool_shrink(const struct tw_config *cfg)
{
	pool.target = cfg->prefork_sessions + (pool.target - cfg->prefork_sessions) / 2;
	pool.resized = time(NULL);
}

/* A closed channel ends an idle pair: its monitor reads EOF. A few per
 * call, so that hundreds of exits do not land on the CPU at once. */
static void
pool_trim(void)
{
	unsigned budget = POOL_BATCH;

	while (pool.n > pool.target && budget-- > 0)
		close(pool.slots[--pool.n].chan);
}

static long
ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/*
 * Tops the pool up to its target, a bounded number of forks per call so
 * the listener gets back to accepting, and not while connections keep
 * arriving (unless the pool runs low): the forks would take the CPU from
 * the logins they are meant to speed up. Returns the poll timeout until
 * the next call: 0 when more are needed now, the rest of the quiet time,
 * a second while refilling is paused, the time until the pool may shrink,
 * or -1 with nothing to do.
 */
static int
pool_refill(const struct tw_config *cfg)
{
	unsigned budget = 8;
	time_t now = time(NULL);
	long quiet;

	if (pool.target > cfg->prefork_sessions && now - pool.resized >= POOL_SHRINK_SECS)
		pool_shrink(cfg);
	if (pool.n > pool.target) {
		pool_trim();
		return POOL_PACE_MS;
	}
	if (pool.n < pool.target) {
		int urgent = pool.n < pool.target / 4;

		if (pool.paused_until > now)
			return 1000;
		quiet = ms_since(&pool.last_accept);
		if (!urgent && quiet < POOL_QUIET_MS)
			return (int)(POOL_QUIET_MS - quiet);
		if (!urgent)
			budget = POOL_BATCH;
		while (pool.n < pool.target && budget-- > 0)
			pool_spawn(cfg);
		if (pool.n < pool.target)
			return urgent ? 0 : POOL_PACE_MS;
	}
	/* Full: wake up when the surplus may be shrunk, or never. */
	if (pool.target > cfg->prefork_sessions)
		return (int)(POOL_SHRINK_SECS - (now - pool.resized)) * 1000 + 10;
	return -1;
}

/* Gives cfd to a ready pair. 0 on success, -1 when none took it. */
static int
pool_hand_off(int cfd, const struct addr_key *key)
{
	while (pool.n > 0) {
		struct pool_slot slot = pool.slots[--pool.n];
		struct ipc_msg m;
		int rc;

		ipc_init(&m, IPC_CLIENT_FD);
		m.fd = cfd;
		rc = ipc_send(slot.chan, &m);
		close(slot.chan);
		if (rc == 0) {
			session_added(slot.pid, key);
			return 0;
		}
		/* A pair that died while idle; SIGCHLD reaps it. */
		kill(slot.pid, SIGKILL);
	}
	return -1;
}

static void
spawn_session(const struct tw_config *cfg, int cfd, const struct sockaddr_storage *peer)
{
	struct addr_key key;
	struct addr_slot *as;
	pid_t pid;

	addr_key_of(peer, &key);
	if (cfg->max_clients != 0 && sessions.nsessions >= cfg->max_clients) {
		refuse(cfd, "421 There are too many connected users, please try later.\r\n");
		tw_log(TW_LOG_INFO, "refused connection: max_clients (%u) reached",
		       cfg->max_clients);
		return;
	}
	if (penalty_active(&key)) {
		refuse(cfd, "421 Too many failed sessions from your address, try later.\r\n");
		return;
	}
	as = addr_find(&key, 0);
	if (cfg->max_per_ip != 0 && as != NULL && as->count >= cfg->max_per_ip) {
		refuse(cfd, "421 There are too many connections from your internet address.\r\n");
		tw_log(TW_LOG_INFO, "refused connection: max_per_ip (%u) reached",
		       cfg->max_per_ip);
		return;
	}
	if (pool_hand_off(cfd, &key) == 0) {
		close(cfd);
		return;
	}
	if (cfg->prefork_sessions > 0) {
		time_t now = time(NULL);

		pool_grow(cfg);
		pool.on_demand++;
		if (now != pool.burst_logged) {
			pool.burst_logged = now;
			tw_log(TW_LOG_INFO, "burst: pool of ready sessions empty, "
			       "forking on demand (%lu so far); pool grows to %u",
			       pool.on_demand, pool.target);
		}
	}
	pid = ns_fork(0);
	if (pid < 0) {
		refuse(cfd, "421 Service not available, try later.\r\n");
		tw_log(TW_LOG_ERR, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		session_child_setup(cfd);
		session_run(cfg, cfd);
	}
	close(cfd);
	session_added(pid, &key);
}

static void
accept_all(const struct tw_config *cfg, int lfd)
{
	/* Bounded: one poll wake-up serves at most this many connections. */
	int budget = 256;

	while (budget-- > 0) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int cfd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				tw_log(TW_LOG_WARN, "accept: %s", strerror(errno));
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &pool.last_accept);
		spawn_session(cfg, cfd, &peer);
	}
}

static void
reap_children(const struct tw_config *cfg)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		/* Monitors end with their worker; a signal means they crashed. */
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM &&
		    WTERMSIG(status) != SIGKILL)
			tw_log(TW_LOG_ERR, "session monitor %d died of signal %d%s", (int)pid,
			       WTERMSIG(status),
			       WTERMSIG(status) == SIGSYS ? " (seccomp)" : "");
		session_reaped(pid, status, cfg);
	}
}

/*
 * SIGTERM or SIGINT: stop accepting, tell every session and ready pair to
 * end, SHUTDOWN_INFLIGHT at a time (the next once one of those has been
 * reaped), and exit when all are gone or after SHUTDOWN_SECS, when the
 * rest are told at once. Each session process frees its seccomp filters
 * as it exits, one kernel work item per filter, and 10,000 sessions told
 * at once made ~30,000 of them on this kernel's work queue at once,
 * which once deadlocked it (README).
 */
#define SHUTDOWN_INFLIGHT 64
#define SHUTDOWN_SECS 5

/* Not yet reaped, so the pid is still our child's and cannot be reused. */
static int
still_ours(pid_t pid)
{
	size_t i;

	if (pid_find(pid) != NULL)
		return 1;
	for (i = 0; i < pool.n; i++)
		if (pool.slots[i].pid == pid)
			return 1;
	return 0;
}

/* SIGTERM to every session and ready pair not yet reaped. */
static void
tell_all(void)
{
	size_t i;

	for (i = 0; i < sessions.cap; i++)
		if (sessions.pids[i].pid != 0)
			kill(sessions.pids[i].pid, SIGTERM);
	for (i = 0; i < pool.n; i++)
		kill(pool.slots[i].pid, SIGTERM);
}

static void __attribute__((noreturn))
shutdown_sessions(const struct tw_config *cfg, const int *lfds, size_t nl)
{
	size_t nsess = sessions.nsessions, npool = pool.n;
	size_t total = nsess + npool, n = 0, told = 0, i;
	pid_t *pids = malloc((total ? total : 1) * sizeof(*pids));
	struct timespec now;
	time_t deadline;

	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = now.tv_sec + SHUTDOWN_SECS;

	for (i = 0; i < nl; i++)
		close(lfds[i]);
	if (pids == NULL) {
		tell_all();
		tw_log(TW_LOG_WARN, "listener stopped: no memory to end %zu sessions in batches; "
		       "all told at once", nsess);
		exit(0);
	}
	/* A snapshot: reaping moves entries in the table. */
	for (i = 0; i < pool.n; i++)
		pids[n++] = pool.slots[i].pid;
	for (i = 0; i < sessions.cap; i++)
		if (sessions.pids[i].pid != 0)
			pids[n++] = sessions.pids[i].pid;
	tw_log(TW_LOG_INFO, "listener stopping: %zu sessions and %zu ready pairs to end, "
	       "%d at a time", nsess, npool, SHUTDOWN_INFLIGHT);
	/* Bounded: SHUTDOWN_SECS of 10 ms naps. */
	while (sessions.nsessions + pool.n > 0 &&
	       clock_gettime(CLOCK_MONOTONIC, &now) == 0 && now.tv_sec < deadline) {
		size_t gone = total - (sessions.nsessions + pool.n);

		/* Some end by themselves meanwhile: gone may pass told. */
		while (told < n && told < gone + SHUTDOWN_INFLIGHT) {
			if (still_ours(pids[told]))
				kill(pids[told], SIGTERM);
			told++;
		}
		(void)poll(NULL, 0, 10);
		reap_children(cfg);
	}
	if (sessions.nsessions + pool.n == 0) {
		tw_log(TW_LOG_INFO, "listener stopped: all %zu sessions and %zu ready pairs ended",
		       nsess, npool);
		exit(0);
	}
	/*
	 * Out of time: tell the rest at once. Logged-in monitors changed
	 * their uid, which cleared their parent-death signal, so the
	 * listener's exit alone would not end them.
	 */
	tell_all();
	tw_log(TW_LOG_WARN, "listener stopped after %d s: %zu sessions and %zu ready pairs "
	       "still ending", SHUTDOWN_SECS, sessions.nsessions, pool.n);
	exit(0);
}

static void
daemonize(void)
{
	pid_t pid = fork();
	int null;

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	setsid();
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
}

void
listener_run(const struct tw_config *cfg)
{
	struct pollfd pfd[3];
	int lfds[2];
	size_t nl = 0, i;
	sigset_t mask;
	int sigfd;

	if (cfg->listen)
		lfds[nl++] = open_listen_socket(AF_INET, cfg->listen_address, cfg->listen_port);
	if (cfg->listen_ipv6)
		lfds[nl++] = open_listen_socket(AF_INET6, cfg->listen_address6, cfg->listen_port);
	if (cfg->background)
		daemonize();
	log_set_role("listener");

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		die("sigprocmask: %s", strerror(errno));
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		die("signalfd: %s", strerror(errno));

	table_init(1024);
	pool.target = cfg->prefork_sessions;
	sandbox_apply(ROLE_LISTENER, cfg);
	tw_log(TW_LOG_INFO, "twinftpd listening on port %u (%s%s%s)", cfg->listen_port,
	       cfg->listen ? "IPv4" : "", cfg->listen && cfg->listen_ipv6 ? ", " : "",
	       cfg->listen_ipv6 ? "IPv6" : "");

	for (i = 0; i < nl; i++) {
		pfd[i].fd = lfds[i];
		pfd[i].events = POLLIN;
	}
	pfd[nl].fd = sigfd;
	pfd[nl].events = POLLIN;
	for (;;) {
		/* Refill between events; poll without waiting while short. */
		int wait_ms = pool_refill(cfg);

		if (poll(pfd, nl + 1, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[nl].revents & POLLIN) {
			struct signalfd_siginfo si;
			int got_child = 0;

			/* Batch: drain every pending signal, then reap once. */
			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					got_child = 1;
				else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
					shutdown_sessions(cfg, lfds, nl);
			}
			if (got_child)
				reap_children(cfg);
		}
		for (i = 0; i < nl; i++)
			if (pfd[i].revents & POLLIN)
				accept_all(cfg, lfds[i]);
	}
}
