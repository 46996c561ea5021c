#include "src/pool.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "privsep/ipc.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/listener.h"
#include "src/session.h"
#include "tw_build.h"

/*
 * Quiet means no connection for this long; refilling waits for it while
 * the pool still has a quarter of its target ready, and then adds (or
 * ends) POOL_BATCH sessions every POOL_PACE_MS: a pool that grew to
 * hundreds is refilled over seconds, beside the sessions it serves, not
 * in one burst of forks that starves their transfers. Below a quarter it
 * forks POOL_URGENT_BATCH per call, without waiting.
 */
#define POOL_QUIET_MS 50
#define POOL_PACE_MS 50
#define POOL_BATCH 4
#define POOL_URGENT_BATCH 8
#if TW_TEST_HOOKS
#define POOL_SHRINK_SECS 2	/* so that the end-to-end tests see it shrink */
#else
#define POOL_SHRINK_SECS 60
#endif
/* Wake up just after a shrink is due, not just before it. */
#define POOL_SHRINK_SLACK_MS 10

/*
 * Pairs dying idle: at least this many in one second (or as many as the
 * pool wants ready, its target) pause the refill for POOL_PAUSE_SECS,
 * and while paused the listener looks again every POOL_PAUSED_POLL_MS.
 * Not the slots' capacity (64 at least): a broken pool of 4 refilled
 * more slowly than 64 a second (the ASan build) was never paused.
 */
#define POOL_DEATHS_MIN 8u
#define POOL_PAUSE_SECS 5
#define POOL_PAUSED_POLL_MS 1000

#define POOL_INITIAL_SLOTS 64

/*
 * Each slot is a pre-forked monitor and the channel to send it a client
 * on. The listener holds a channel only while the pair is idle; after
 * the hand-off it keeps nothing but the pid (in the session table).
 */
struct pool_slot {
	pid_t pid;
	int chan;
};

/* Every time_t below is in seconds of CLOCK_MONOTONIC. */
static struct {
	struct pool_slot *slots;
	size_t n, cap;
	/*
	 * Pairs forked before the last reload: never handed a client (they
	 * hold the old settings), ended POOL_BATCH at a time beside the
	 * refill, like a trim.
	 */
	struct pool_slot *retiring;
	size_t nretiring, capretiring;
	unsigned long on_demand;	/* connections forked because the pool was empty */
	time_t burst_logged;
	time_t death_second;		/* idle pairs that died in this second... */
	unsigned deaths;		/* ...counted here */
	time_t paused_until;		/* refilling stops while pairs keep dying */
	/*
	 * The adaptive size: ready pairs wanted now, from prefork_sessions
	 * up to prefork_max_sessions. Each connection that finds the pool
	 * empty adds one (the pool learns the size of the bursts it sees);
	 * each POOL_SHRINK_SECS without one halves what is above
	 * prefork_sessions.
	 */
	unsigned target;
	time_t resized;			/* last growth or shrink */
	long long last_accept_ms;	/* refills wait for a quiet moment */
	int drained;			/* handed over to a new listener, or stopping: no refill */
} pool;

static unsigned
pool_max(const struct tw_config *cfg)
{
	return cfg->prefork_max_sessions > cfg->prefork_sessions ? cfg->prefork_max_sessions
								  : cfg->prefork_sessions;
}

void
pool_init(const struct tw_config *cfg)
{
	pool.target = cfg->prefork_sessions;
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
	time_t now = tw_mono_sec();
	unsigned limit = pool.target > POOL_DEATHS_MIN ? pool.target : POOL_DEATHS_MIN;

	/* Ended on purpose: the listener is stopping. */
	if (pool.drained)
		return;
	if (now != pool.death_second) {
		pool.death_second = now;
		pool.deaths = 0;
	}
	if (++pool.deaths == limit) {
		pool.paused_until = now + POOL_PAUSE_SECS;
		tw_log(TW_LOG_ERR, "pool: %u ready session pairs died within a second; "
		       "refilling paused for %d s (see the lines above for why)", pool.deaths,
		       POOL_PAUSE_SECS);
	}
}

void
pool_forget(pid_t pid)
{
	size_t i;

	/* The pool is small (prefork_max_sessions), unlike the session table. */
	for (i = 0; i < pool.n; i++) {
		if (pool.slots[i].pid == pid) {
			close(pool.slots[i].chan);
			pool.slots[i] = pool.slots[--pool.n];
			pool_count_death();
			return;
		}
	}
	for (i = 0; i < pool.nretiring; i++) {
		if (pool.retiring[i].pid == pid) {
			close(pool.retiring[i].chan);
			pool.retiring[i] = pool.retiring[--pool.nretiring];
			return;
		}
	}
}

int
pool_has(pid_t pid)
{
	size_t i;

	for (i = 0; i < pool.n; i++)
		if (pool.slots[i].pid == pid)
			return 1;
	for (i = 0; i < pool.nretiring; i++)
		if (pool.retiring[i].pid == pid)
			return 1;
	return 0;
}

size_t
pool_count(void)
{
	return pool.n + pool.nretiring;
}

pid_t
pool_pid(size_t i)
{
	return i < pool.n ? pool.slots[i].pid : pool.retiring[i - pool.n].pid;
}

void
pool_reload(const struct tw_config *cfg)
{
	size_t need = pool.nretiring + pool.n;

	if (need > pool.capretiring) {
		struct pool_slot *nr = realloc(pool.retiring, need * sizeof(*nr));

		if (nr == NULL) {
			/* No room to retire them in steps: end them now. */
			while (pool.n > 0)
				close(pool.slots[--pool.n].chan);
		} else {
			pool.retiring = nr;
			pool.capretiring = need;
		}
	}
	while (pool.n > 0)
		pool.retiring[pool.nretiring++] = pool.slots[--pool.n];
	if (pool.target < cfg->prefork_sessions)
		pool.target = cfg->prefork_sessions;
	if (pool.target > pool_max(cfg))
		pool.target = pool_max(cfg);
}

/* Room for one more slot. 0, or -1 when out of memory. */
static int
pool_make_room(void)
{
	size_t ncap;
	struct pool_slot *ns;

	if (pool.n < pool.cap)
		return 0;
	ncap = pool.cap ? pool.cap * 2 : POOL_INITIAL_SLOTS;
	ns = realloc(pool.slots, ncap * sizeof(*ns));
	if (ns == NULL)
		return -1;
	pool.slots = ns;
	pool.cap = ncap;
	return 0;
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
		listener_child_setup(sv[1]);
		session_run_pooled(cfg, sv[1]);
	}
	close(sv[1]);
	if (pool_make_room() != 0) {
		kill(pid, SIGTERM);
		close(sv[0]);
		return;
	}
	pool.slots[pool.n].pid = pid;
	pool.slots[pool.n].chan = sv[0];
	pool.n++;
}

void
pool_drain(void)
{
	pool.drained = 1;
	pool.target = 0;
	while (pool.n > 0)
		close(pool.slots[--pool.n].chan);
	while (pool.nretiring > 0)
		close(pool.retiring[--pool.nretiring].chan);
}

void
pool_stop(void)
{
	pool.drained = 1;
}

size_t
pool_ready(void)
{
	return pool.n;
}

unsigned
pool_target(void)
{
	return pool.target;
}

size_t
pool_retiring(void)
{
	return pool.nretiring;
}

void
pool_note_accept(void)
{
	pool.last_accept_ms = tw_mono_ms();
}

void
pool_missed(const struct tw_config *cfg)
{
	time_t now = tw_mono_sec();

	/*
	 * Without a pool, forking on accept is the normal way, not a burst;
	 * nor is it while a reload's new pairs are being forked.
	 */
	if (cfg->prefork_sessions == 0 || pool.nretiring > 0)
		return;
	if (pool.target < pool_max(cfg))
		pool.target++;
	pool.resized = now;
	pool.on_demand++;
	if (now != pool.burst_logged) {
		pool.burst_logged = now;
		tw_log(TW_LOG_INFO, "burst: pool of ready sessions empty, "
		       "forking on demand (%lu so far); pool grows to %u",
		       pool.on_demand, pool.target);
	}
}

/* A quiet spell: halve what the target holds above the minimum (pool_trim
 * then ends the idle pairs beyond it). */
static void
pool_shrink(const struct tw_config *cfg, time_t now)
{
	pool.target = cfg->prefork_sessions + (pool.target - cfg->prefork_sessions) / 2;
	pool.resized = now;
}

/* A closed channel ends an idle pair: its monitor reads EOF. A few per
 * call, so that hundreds of exits do not land on the CPU at once; pairs
 * retired by a reload go first. */
static void
pool_trim(void)
{
	unsigned ended;

	for (ended = 0; ended < POOL_BATCH && pool.nretiring > 0; ended++)
		close(pool.retiring[--pool.nretiring].chan);
	for (; ended < POOL_BATCH && pool.n > pool.target; ended++)
		close(pool.slots[--pool.n].chan);
}

/*
 * Tops the pool up to its target, a bounded number of forks per call so
 * the listener gets back to accepting, and not while connections keep
 * arriving (unless the pool runs low): the forks would take the CPU from
 * the logins they are meant to speed up. Returns the poll timeout until
 * the next call: 0 when more are needed now, the rest of the quiet time,
 * POOL_PAUSED_POLL_MS while refilling is paused, the time until the pool
 * may shrink, or -1 with nothing to do.
 */
int
pool_refill(const struct tw_config *cfg)
{
	unsigned budget = POOL_URGENT_BATCH;
	time_t now = tw_mono_sec();
	long long quiet;

	if (pool.drained)
		return -1;
	if (pool.target > cfg->prefork_sessions && now - pool.resized >= POOL_SHRINK_SECS)
		pool_shrink(cfg, now);
	if (pool.n > pool.target || pool.nretiring > 0) {
		pool_trim();
		/* New pairs first: retiring ones cannot take a client. */
		if (pool.n >= pool.target / 4)
			return POOL_PACE_MS;
	}
	if (pool.n < pool.target) {
		int urgent = pool.n < pool.target / 4;

		if (pool.paused_until > now)
			return POOL_PAUSED_POLL_MS;
		quiet = tw_mono_ms() - pool.last_accept_ms;
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
		return (int)(POOL_SHRINK_SECS - (now - pool.resized)) * 1000 +
		       POOL_SHRINK_SLACK_MS;
	return -1;
}

int
pool_hand_off(int cfd, pid_t *pid)
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
			*pid = slot.pid;
			return 0;
		}
		/* A pair that died while idle; SIGCHLD reaps it. */
		kill(slot.pid, SIGKILL);
	}
	return -1;
}
