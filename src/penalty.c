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
 * A small direct-mapped cache keyed by address: bounded memory whatever
 * the number of sources; a collision only forgets an older source (it
 * can never penalise the wrong one).
 */
#define PENALTY_SLOTS 4096

struct penalty_slot {
	struct addr_key addr;
	unsigned bad;		/* bad sessions in the current window */
	time_t window_start;	/* CLOCK_MONOTONIC seconds */
	time_t banned_until;	/* CLOCK_MONOTONIC seconds */
};

static struct penalty_slot penalties[PENALTY_SLOTS];

static struct penalty_slot *
penalty_slot(const struct addr_key *a, int create)
{
	struct penalty_slot *p = &penalties[hashtab_hash(a->b, sizeof(a->b)) % PENALTY_SLOTS];

	if (memcmp(p->addr.b, a->b, sizeof(a->b)) == 0)
		return p;
	if (!create)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->addr = *a;
	return p;
}

void
penalty_record(const struct tw_config *cfg, const struct addr_key *a)
{
	struct penalty_slot *p;
	time_t now = tw_mono_sec();

	if (cfg->source_penalty_sessions == 0)
		return;
	p = penalty_slot(a, 1);
	/* bad == 0: a new slot, whose window starts now (the clock may be young). */
	if (p->bad == 0 || now - p->window_start >= (time_t)cfg->source_penalty_time) {
		p->window_start = now;
		p->bad = 0;
	}
	if (++p->bad >= cfg->source_penalty_sessions && p->banned_until <= now) {
		char ip[INET6_ADDRSTRLEN];

		p->banned_until = now + cfg->source_penalty_time;
		if (inet_ntop(AF_INET6, a->b, ip, sizeof(ip)) == NULL)
			(void)tw_strlcpy(ip, "?", sizeof(ip));
		tw_log(TW_LOG_WARN, "penalty: %s refused for %u s after %u bad sessions",
		       ip, cfg->source_penalty_time, p->bad);
	}
}

int
penalty_active(const struct addr_key *a)
{
	const struct penalty_slot *p = penalty_slot(a, 0);

	return p != NULL && p->banned_until > tw_mono_sec();
}
