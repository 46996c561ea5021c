/*
 * Starting a session's processes: the monitor, its pre-login worker and
 * the spare that becomes the post-login worker; rebuilding a pair that
 * lost a process. The monitor's API itself is privsep/monitor.h.
 */
#ifndef TW_SESSION_H
#define TW_SESSION_H

#include <stdint.h>

#include "src/session_table.h"

struct tw_config;

/*
 * The one thing a session tells the listener while it runs: who logged
 * in, sent once by the monitor at the login, while it is still root and
 * before it has read anything but the worker's bounded IPC, on a datagram
 * socket (tw_rt.login_note_fd) that it closes right after. The listener
 * learns the sender's pid from the kernel (SCM_CREDENTIALS), so a
 * monitor can only ever speak for its own session; it is what
 * `twinftpd -S` shows. One byte longer than the table keeps, so a
 * truncated name shows as such.
 */
struct session_login_note {
	char user[SESSION_USER_MAX + 2];
	uint8_t anonymous;
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
