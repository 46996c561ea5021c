/*
 * Starting a session's processes: the monitor, its pre-login worker and
 * the spare that becomes the post-login worker; rebuilding a pair that
 * lost a process. The monitor's API itself is privsep/monitor.h.
 */
#ifndef TW_SESSION_H
#define TW_SESSION_H

struct tw_config;

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
