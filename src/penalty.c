#include "src/penalty.h"

#include <arpa/inet.h>
#include <string.h>
#include <time.h>

#include "src/common/config.h"
#include "src/common/hashtab.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/session_table.h"

/*
 * A small cache keyed by address, two candidate slots each: bounded
 * memory whatever the number of sources. A new source takes the
 * candidate whose state ends first (an idle one if any), so that other
 * addresses that share a slot rarely wipe a guesser's count; a collision
 * only ever forgets a source, it can never penalise the wrong one.
 */
#define PENALTY_SLOTS 4096
#define MS_PER_SEC 1000LL
/*
 * Failed logins are forgiven at most this many windows ahead: bounds the
 * arithmetic, and a ban, even for a source with an unlimited max_per_ip
 * that had thousands of sessions guessing at once.
 */
#define PENALTY_MAX_WINDOWS 60

struct penalty_slot {
	struct addr_key addr;
	unsigned bad;		/* bad sessions in the current window */
	time_t window_start;	/* CLOCK_MONOTONIC seconds */
	time_t banned_until;	/* CLOCK_MONOTONIC seconds */
	/*
	 * Failed logins, as a leaky bucket kept as one time (GCRA): each
	 * failure moves it one interval (source_penalty_time /
	 * source_penalty_fails) later, from now at the latest; the bucket
	 * is empty once the clock passes it. CLOCK_MONOTONIC ms.
	 */
	long long fails_forgiven;
};

static struct penalty_slot penalties[PENALTY_SLOTS];

/* CLOCK_MONOTONIC ms after which p holds nothing that still counts. */
static long long
slot_ends(const struct tw_config *cfg, const struct penalty_slot *p)
{
	long long end = p->fails_forgiven;
	long long window_end = (p->window_start + (long long)cfg->source_penalty_time) * MS_PER_SEC;

	if (p->bad != 0 && window_end > end)
		end = window_end;
	if (p->banned_until * MS_PER_SEC > end)
		end = p->banned_until * MS_PER_SEC;
	return end;
}

static struct penalty_slot *
penalty_slot(const struct tw_config *cfg, const struct addr_key *a, int create)
{
	size_t h = hashtab_hash(a->b, sizeof(a->b));
	struct penalty_slot *p = &penalties[h % PENALTY_SLOTS];
	struct penalty_slot *q = &penalties[(h / PENALTY_SLOTS) % PENALTY_SLOTS];

	if (memcmp(p->addr.b, a->b, sizeof(a->b)) == 0)
		return p;
	if (memcmp(q->addr.b, a->b, sizeof(a->b)) == 0)
		return q;
	if (!create)
		return NULL;
	if (slot_ends(cfg, q) < slot_ends(cfg, p))
		p = q;
	memset(p, 0, sizeof(*p));
	p->addr = *a;
	return p;
}

/* The ms one failed login stays in the bucket: never 0. */
static long long
fail_interval_ms(const struct tw_config *cfg)
{
	long long ms = cfg->source_penalty_time * MS_PER_SEC / cfg->source_penalty_fails;

	return ms > 0 ? ms : 1;
}

/*
 * How long (ms) the address stays refused: the bucket holds fewer than
 * source_penalty_fails failures again (room for one more) after that.
 */
static long long
fails_refused_ms(const struct tw_config *cfg, const struct penalty_slot *p, long long now)
{
	long long room = (long long)(cfg->source_penalty_fails - 1) * fail_interval_ms(cfg);

	return p->fails_forgiven - now - room;
}

static void
penalty_log(const struct addr_key *a, const char *what, long long secs, unsigned n)
{
	char ip[INET6_ADDRSTRLEN];

	if (inet_ntop(AF_INET6, a->b, ip, sizeof(ip)) == NULL)
		(void)tw_strlcpy(ip, "?", sizeof(ip));
	tw_log(TW_LOG_WARN, "penalty: %s refused for %lld s after %u %s", ip, secs, n, what);
}

static void
record_failed_logins(const struct tw_config *cfg, struct penalty_slot *p, unsigned n)
{
	long long now = tw_mono_ms(), step = fail_interval_ms(cfg);
	long long cap = now + (long long)cfg->source_penalty_time * MS_PER_SEC * PENALTY_MAX_WINDOWS;
	int was_refused = fails_refused_ms(cfg, p, now) > 0;

	if (p->fails_forgiven < now)
		p->fails_forgiven = now;
	p->fails_forgiven += (long long)n * step;
	if (p->fails_forgiven > cap)
		p->fails_forgiven = cap;
	if (!was_refused && fails_refused_ms(cfg, p, now) > 0)
		penalty_log(&p->addr, "failed logins",
			    (fails_refused_ms(cfg, p, now) + MS_PER_SEC - 1) / MS_PER_SEC, n);
}

static void
record_bad_session(const struct tw_config *cfg, struct penalty_slot *p)
{
	time_t now = tw_mono_sec();

	/* bad == 0: a new slot, whose window starts now (the clock may be young). */
	if (p->bad == 0 || now - p->window_start >= (time_t)cfg->source_penalty_time) {
		p->window_start = now;
		p->bad = 0;
	}
	if (++p->bad >= cfg->source_penalty_sessions && p->banned_until <= now) {
		p->banned_until = now + cfg->source_penalty_time;
		penalty_log(&p->addr, "bad sessions", cfg->source_penalty_time, p->bad);
	}
}

void
penalty_record(const struct tw_config *cfg, const struct addr_key *a,
	       unsigned failed_logins, int bad)
{
	int count_fails = cfg->source_penalty_fails != 0 && failed_logins != 0;
	int count_bad = cfg->source_penalty_sessions != 0 && bad;
	struct penalty_slot *p;

	if (!count_fails && !count_bad)
		return;
	p = penalty_slot(cfg, a, 1);
	if (count_fails)
		record_failed_logins(cfg, p, failed_logins);
	if (count_bad)
		record_bad_session(cfg, p);
}

enum penalty_reason
penalty_active(const struct tw_config *cfg, const struct addr_key *a)
{
	const struct penalty_slot *p = penalty_slot(cfg, a, 0);

	if (p == NULL)
		return PENALTY_NONE;
	if (cfg->source_penalty_fails != 0 && fails_refused_ms(cfg, p, tw_mono_ms()) > 0)
		return PENALTY_FAILED_LOGINS;
	if (p->banned_until > tw_mono_sec())
		return PENALTY_BAD_SESSIONS;
	return PENALTY_NONE;
}

int
penalty_next_active(const struct tw_config *cfg, size_t *pos, struct addr_key *a,
		    enum penalty_reason *why, long long *secs_left)
{
	long long now = tw_mono_ms();

	for (; *pos < PENALTY_SLOTS; (*pos)++) {
		const struct penalty_slot *p = &penalties[*pos];
		long long ms = 0;

		*why = penalty_active(cfg, &p->addr);
		if (*why == PENALTY_NONE || penalty_slot(cfg, &p->addr, 0) != p)
			continue;
		if (*why == PENALTY_FAILED_LOGINS)
			ms = fails_refused_ms(cfg, p, now);
		else
			ms = p->banned_until * MS_PER_SEC - now;
		*a = p->addr;
		*secs_left = (ms + MS_PER_SEC - 1) / MS_PER_SEC;
		(*pos)++;
		return 0;
	}
	return -1;
}
