/*
 * The session monitor: one root process per client. It never reads the
 * client's bytes; it answers typed IPC requests of its protocol worker,
 * each checked against the session's state (the permit table).
 */
#ifndef TW_MONITOR_H
#define TW_MONITOR_H

#include <sys/types.h>

#include "src/common/runtime.h"

struct tw_config;


/*
 * How a session monitor exits: the listener reads it when it reaps the
 * monitor, and penalises a source whose sessions keep ending badly.
 */
enum monitor_exit {
	MONITOR_EXIT_OK = 0,
	MONITOR_EXIT_LOGIN_FAILED = 3,	/* closed after max_login_fails */
	MONITOR_EXIT_CRASH = 4,		/* worker crashed or broke the IPC rules */
};

/*
 * Runs a session on an accepted control connection: becomes its monitor,
 * starts the pre-login worker, and after login the post-login worker.
 * Called in a freshly forked root process (or in inetd mode on fd 0).
 * Never returns.
 */
void session_run(const struct tw_config *cfg, int client_fd) __attribute__((noreturn));

/*
 * A pre-forked session for the listener's pool: starts the pre-login
 * worker at once (it chroots, drops privileges and installs its sandbox
 * while no client waits), then blocks on chan until the listener sends an
 * IPC_CLIENT_FD with the accepted connection. Never returns.
 */
void session_run_pooled(const struct tw_config *cfg, int chan) __attribute__((noreturn));

#endif
