/*
 * The pool of ready session pairs: monitors forked ahead of time (their
 * pre-login worker already chrooted and sandboxed) that wait for a client
 * on a channel from the listener, so that a connection costs an fd
 * hand-off instead of three forks and a sandbox set-up. Its size adapts
 * between prefork_sessions and prefork_max_sessions to the bursts it sees.
 */
#ifndef TW_POOL_H
#define TW_POOL_H

#include <stddef.h>
#include <sys/types.h>

struct tw_config;

void pool_init(const struct tw_config *cfg);

/*
 * Grows, shrinks or tops up the pool a bounded step at a time. Returns
 * the poll timeout in ms until it wants to be called again (0: at once,
 * -1: not before the next event).
 */
int pool_refill(const struct tw_config *cfg);

/*
 * Gives the accepted connection cfd to a ready pair (the listener still
 * closes its own cfd). 0 and the pair's monitor in *pid, or -1 when no
 * pair took it.
 */
int pool_hand_off(int cfd, pid_t *pid);

/*
 * The settings changed (SIGHUP): the ready pairs, forked with the old
 * ones, are retired (never handed a client, ended a few at a time) and
 * the pool refills with pairs forked under cfg, its size kept within
 * cfg's bounds. Connections meanwhile are forked on demand if no new
 * pair is ready yet, never refused.
 */
void pool_reload(const struct tw_config *cfg);

/*
 * An upgrade handed over (SIGUSR2): every ready pair is ended now (its
 * channel closed) and the pool never refills again.
 */
void pool_drain(void);
/* The listener is stopping: no refill, and pairs that end are not
 * counted as dying (pool_count_death()). The slots stay, to be reaped. */
void pool_stop(void);

/* For twinftpd -S: pairs ready for a client, the size wanted now, and
 * pairs being retired after a reload. */
size_t pool_ready(void);
unsigned pool_target(void);
size_t pool_retiring(void);

/* A connection found the pool empty: it should hold one more pair. */
void pool_missed(const struct tw_config *cfg);

/* A connection arrived: refills wait for a quiet moment. */
void pool_note_accept(void);

/* The ready pair with monitor pid died (reaped): drop it. */
void pool_forget(pid_t pid);

/* Whether pid is a ready pair not yet reaped (so its pid is ours). */
int pool_has(pid_t pid);

/* Ready pairs, those being retired included (they are children too). */
size_t pool_count(void);

/* The monitor of the i-th ready or retiring pair, i < pool_count(). */
pid_t pool_pid(size_t i);

#endif
