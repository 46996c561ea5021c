/*
 * The listener's live sessions: each session monitor it handed a client
 * to, by pid, and how many sessions each client address holds (for
 * max_clients and max_per_ip). Ready pairs of the pool are not in it
 * until they get a client.
 */
#ifndef TW_SESSION_TABLE_H
#define TW_SESSION_TABLE_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* A client address as the listener keys it: IPv4 as v4-mapped IPv6. */
struct addr_key {
	unsigned char b[16];
};

/* The longest user name the table keeps (longer ones end in '+'). */
#define SESSION_USER_MAX 48

/* What the listener knows of a session (for twinftpd -S). */
struct session_info {
	struct addr_key addr;
	long long since_ms;		/* CLOCK_MONOTONIC ms of the hand-off */
	int logged_in;			/* its monitor said so (session_note_login) */
	int anonymous;
	char user[SESSION_USER_MAX + 1];
};

void addr_key_of(const struct sockaddr_storage *ss, struct addr_key *k);

/* Sets up the empty table; dies when out of memory. */
void sessions_init(void);

/* Records a new session of client address a; dies when out of memory. */
void sessions_add(pid_t pid, const struct addr_key *a);

/*
 * Forgets the session whose monitor was pid and gives its client's
 * address. -1 when pid was no session (a ready pair of the pool).
 */
int sessions_remove(pid_t pid, struct addr_key *addr);

/*
 * The session pid's client turned out to be a (a proxied client, named
 * by its balancer's header): its count moves there. -1 when pid is no
 * session.
 */
int sessions_move(pid_t pid, const struct addr_key *a);

/* Whether pid is a live session, not yet reaped (so its pid is ours). */
int sessions_has(pid_t pid);

size_t sessions_count(void);

/* Sessions of client address a. */
unsigned sessions_from(const struct addr_key *a);

/*
 * Walks the sessions' pids: start with *pos = 0; 0 at the end. The
 * table must not change during a walk.
 */
pid_t sessions_next(size_t *pos);

/* The same walk, with what the table knows of each (*info, unless NULL). */
pid_t sessions_next_info(size_t *pos, struct session_info *info);

/*
 * Session pid logged in as user (its monitor said so). Nothing when pid
 * is no session (it ended meanwhile).
 */
void sessions_set_login(pid_t pid, const char *user, int anonymous);

/* Walks the client addresses with their session counts, as sessions_next. */
const struct addr_key *sessions_next_addr(size_t *pos, unsigned *count);

#endif
