/*
 * Per-source penalties: a client address whose sessions keep ending badly
 * (too many failed logins, a worker that crashed or broke the IPC rules)
 * is refused for a while, before any session process is given to it.
 */
#ifndef TW_PENALTY_H
#define TW_PENALTY_H

struct tw_config;
struct addr_key;

/*
 * A session of address a ended badly: counts it in the address's
 * window of source_penalty_time seconds, and bans the address for that
 * long once source_penalty_sessions are reached (logged).
 */
void penalty_record(const struct tw_config *cfg, const struct addr_key *a);

/* Whether address a is banned now. */
int penalty_active(const struct addr_key *a);

#endif
