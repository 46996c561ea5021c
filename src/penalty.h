/*
 * Per-source penalties: a client address that keeps failing logins, or
 * whose sessions keep ending badly (closed after max_login_fails, a
 * worker that crashed or broke the IPC rules), is refused for a while,
 * before any session process is given to it.
 */
#ifndef TW_PENALTY_H
#define TW_PENALTY_H

#include <stddef.h>

struct tw_config;
struct addr_key;

/* Why an address is refused now. */
enum penalty_reason {
	PENALTY_NONE = 0,
	PENALTY_FAILED_LOGINS,	/* source_penalty_fails spent */
	PENALTY_BAD_SESSIONS,	/* source_penalty_sessions reached */
};

/*
 * A session of address a ended, after failed_logins failed logins, and
 * badly or not: counts both against the address (see source_penalty_fails
 * and source_penalty_sessions in config_table.h); a ban is logged.
 */
void penalty_record(const struct tw_config *cfg, const struct addr_key *a,
		    unsigned failed_logins, int bad);

/* Whether, and why, address a is refused now. */
enum penalty_reason penalty_active(const struct tw_config *cfg, const struct addr_key *a);

/*
 * Walks the penalties in force (twinftpd -S): start with *pos = 0; each
 * call gives the next refused address, why and the seconds it has left,
 * and returns 0, or -1 at the end.
 */
int penalty_next_active(const struct tw_config *cfg, size_t *pos, struct addr_key *a,
			enum penalty_reason *why, long long *secs_left);

#endif
