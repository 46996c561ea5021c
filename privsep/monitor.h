/*
 * The session monitor: one root process per client. It never reads the
 * client's bytes; it answers typed IPC requests of its protocol worker,
 * each checked against the session's state (the permit table in
 * monitor.c). Starting and rebuilding the session's processes is role
 * code (src/session.c); this is the monitor's state and its API, so that
 * a test can drive it against a scripted worker.
 */
#ifndef TW_MONITOR_H
#define TW_MONITOR_H

#include <arpa/inet.h>
#include <sys/socket.h>
#include <stdint.h>
#include <sys/types.h>

#include "privsep/ipc.h"
#include "src/common/runtime.h"

struct tw_config;
struct auth_user;
struct monitor;

/*
 * A session's verdict: how it ended. MONITOR_CONTINUE is the verdict of
 * a request after which the session goes on. The process's exit code
 * is made of the verdict and the session's failed logins
 * (monitor_exit_code()).
 */
enum monitor_exit {
	MONITOR_CONTINUE = -1,
	MONITOR_EXIT_OK = 0,
	MONITOR_EXIT_LOGIN_FAILED = 3,	/* closed after max_login_fails */
	MONITOR_EXIT_CRASH = 4,		/* worker crashed or broke the IPC rules */
};

/*
 * What the listener learns of a session when it reaps its monitor: the
 * failed logins it saw, whether the client closed, quit, timed out or
 * logged in afterwards (so that guessing max_login_fails - 1 passwords
 * a session and quitting is counted too), and whether it ended badly.
 */
struct monitor_outcome {
	unsigned failed_logins;
	int bad;	/* closed after max_login_fails, crashed, or killed */
};

/*
 * The exit code of a monitor whose session ended with verdict: one
 * byte that carries the verdict and mon's failed logins (at most
 * max_login_fails, which the LOGIN permit enforces).
 */
int monitor_exit_code(const struct monitor *mon, int verdict);

/* The outcome of a session from its monitor's wait status. */
struct monitor_outcome monitor_outcome_of(int wait_status);

/* The session's state: which requests the permit table allows. */
enum monitor_state {
	MONITOR_PRELOGIN = 1 << 0,
	MONITOR_POSTLOGIN = 1 << 1,
};

struct monitor {
	const struct tw_config *cfg;
	enum monitor_state state;
	int client_fd;			/* the control connection; never read */
	int ipc_fd;			/* to the worker */
	pid_t worker;			/* -1: none */
	/*
	 * The post-login worker-to-be: forked with the pre-login worker,
	 * while the monitor has touched almost nothing of its own, it waits
	 * as root for the login's facts and the control connection. A login
	 * then costs no fork, and the worker shares little with the monitor
	 * that either of them will write (each such page is private memory
	 * of both). -1 once it has become the worker.
	 */
	pid_t spare;
	int spare_fd;
	struct sockaddr_storage peer, local;	/* of the control connection */
	char peer_ip[INET6_ADDRSTRLEN];
	unsigned login_fails;
	/*
	 * The control connection is TLS (IPC_TLS_ON): no plaintext 421 from
	 * here, which would land inside the client's TLS stream.
	 */
	int ctrl_tls;
	uint32_t login_flags;		/* the successful LOGIN's IPC_LOGIN_* */
	/*
	 * Over TLS the pre-login worker stays after the login as the
	 * session's TLS relay (src/relay.c): ended with the session.
	 */
	pid_t relay;
	int relay_fd;			/* its IPC channel: read once it is gone */
	/* Requests granted so far, by type: the permit table's counts. */
	unsigned granted[IPC_TYPE_COUNT];
	/* Who logged in, for the transfer lines of the log. */
	char login_name[IPC_MAX_USER + 1];
	int login_anonymous;		/* anonymous privileges (chown_uploads) */
	int login_guest;		/* guest_enable's virtual user */
	uid_t login_uid;		/* the uid the session runs as */
	/*
	 * A login's options with its per-user file (user_config_dir) applied
	 * (scratch pages, reused by each attempt); after a login that had
	 * one, the session's cfg for good.
	 */
	struct tw_config *user_cfg;
	/* A login's facts: scratch pages (tw_scratch_alloc) until handed over. */
	struct auth_user *user;
	int last_seccomp_nr;		/* from a worker's violation report, or -1 */
	/*
	 * The role code's part of a login (src/session.c): the pre-login
	 * worker dies, the spare gets *user and the control connection and
	 * becomes the worker (worker, ipc_fd). 0, or -1 when no spare could
	 * take over: the session ends.
	 */
	int (*hand_over)(struct monitor *mon);
	/*
	 * The role code's admission of a proxied client (mon->peer, from a
	 * PROXY header): NULL when admitted, else the 421's text. NULL
	 * hook: no listener to ask (inetd mode), admitted.
	 */
	const char *(*proxy_admit)(struct monitor *mon);
	/*
	 * The role code's admission of a trusted balancer's connection that
	 * named no client and asks to log in (its own address, mon->peer):
	 * NULL when admitted, else the 421's text. Checked here, at LOGIN,
	 * so that a worker that never sends PROXY_CLIENT skips nothing.
	 * NULL hook: admitted.
	 */
	const char *(*unnamed_admit)(struct monitor *mon);
};

/* The session's peer and its printed form (logs); v4-mapped ones as IPv4. */
void monitor_set_peer(struct monitor *mon, const struct sockaddr_storage *peer);

/* A fresh monitor of cfg's session, pre-login, with no process or client. */
void monitor_init(struct monitor *mon, const struct tw_config *cfg);

/*
 * Answers one request of the worker if the permit table allows it in the
 * session's state and it has not used up its count. Returns
 * MONITOR_CONTINUE, or the code the session ends with (a malformed or
 * unpermitted request, a worker gone): the caller ends it (monitor_end()).
 * Closes any descriptor that came with m.
 */
int monitor_dispatch(struct monitor *mon, struct ipc_msg *m);

/*
 * Answers the worker until the session ends; returns its verdict (the
 * process exits with monitor_exit_code() of it). Both
 * children are dead and reaped by then: the monitor never waits for a
 * worker it has not made sure is dead.
 */
int monitor_serve(struct monitor *mon);

/* Kills and reaps both children; returns code. */
int monitor_end(struct monitor *mon, int code);

/*
 * Kills *pid (if > 0) and reaps it; *pid becomes -1. Returns its wait
 * status (0 when there was none): a process that had already exited keeps
 * its own status, since a dying process ignores further signals.
 */
int monitor_kill_child(pid_t *pid);

#endif
