/*
 * The session monitor. Root, one per client; it answers its worker's
 * typed requests and never reads the client's bytes.
 *
 * The whole privileged API is the permit table below: which request is
 * legal in which state, and how many times. Anything else ends the
 * session. Handlers take the monitor's state as an argument and return
 * their verdict (OpenSSH's mm_answer_* style), so a test can drive them
 * against a scripted worker (tests/unit/test_monitor.c). Starting the
 * session's processes is src/session.c's.
 */
#include "privsep/monitor.h"
#include "tw_build.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "privsep/auth.h"
#include "privsep/datasock.h"
#include "privsep/ipc.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/reply.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"

/* The highest TCP port: a port field above it is malformed. */
#define MONITOR_MAX_PORT 65535
/* Ports below it belong to system services (no bounce to them). */
#define MONITOR_FIRST_UNPRIVILEGED_PORT 1024
/* PORT_CONNECT's address: 4 words of 4 bytes, an IPv4 one in the first. */
#define PORT_CONNECT_ADDR_BYTES 16
#define PORT_CONNECT_IPV4 4
#define PORT_CONNECT_IPV6 6

typedef int (*monitor_handler)(struct monitor *mon, struct ipc_msg *m);

static int monitor_handle_login(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_log(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_violation(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_port20(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_pasv_listen(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_port_connect(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_tls_on(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_xferlog(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_proxy_client(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_chown_upload(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_user_check(struct monitor *mon, struct ipc_msg *m);
static int monitor_handle_user_ahead(struct monitor *mon, struct ipc_msg *m);

/* How many times a request may be granted in one session. */
enum permit_count {
	PERMIT_ANY,		/* no bound */
	PERMIT_ONCE,
	/* max_login_fails: every LOGIN but a successful one (which ends
	 * the pre-login state) is a failure. */
	PERMIT_MAX_LOGIN_FAILS,
};

static const struct permit {
	enum ipc_type type;
	unsigned states;	/* enum monitor_state bits */
	enum permit_count count;
	monitor_handler handler;
} permits[] = {
	{ IPC_LOGIN, MONITOR_PRELOGIN, PERMIT_MAX_LOGIN_FAILS, monitor_handle_login },
	/* The client a trusted balancer's PROXY header names: once, first. */
	{ IPC_PROXY_CLIENT, MONITOR_PRELOGIN, PERMIT_ONCE, monitor_handle_proxy_client },
	{ IPC_LOG, MONITOR_PRELOGIN | MONITOR_POSTLOGIN, PERMIT_ANY, monitor_handle_log },
	/* AUTH TLS or implicit FTPS: once, and only with ssl_enable. */
	{ IPC_TLS_ON, MONITOR_PRELOGIN, PERMIT_ONCE, monitor_handle_tls_on },
	/* userlist_enable at USER; each refusal is a failed login. */
	{ IPC_USER_CHECK, MONITOR_PRELOGIN, PERMIT_ANY, monitor_handle_user_check },
	/* A local user's USER: the PAM child forks now. Each is a fork:
	 * as many as LOGINs may come. */
	{ IPC_USER_AHEAD, MONITOR_PRELOGIN, PERMIT_MAX_LOGIN_FAILS, monitor_handle_user_ahead },
	/* From a dying worker; the session ends with the worker's death. */
	{ IPC_SANDBOX_VIOLATION, MONITOR_PRELOGIN | MONITOR_POSTLOGIN, PERMIT_ONCE,
	  monitor_handle_violation },
	/* A socket bound to ftp_data_port, only to the control peer. */
	{ IPC_PORT20_CONNECT, MONITOR_POSTLOGIN, PERMIT_ANY, monitor_handle_port20 },
	/* isolate_network: the worker has no network; data sockets come
	 * from here, pinned to the control connection's addresses. */
	{ IPC_PASV_LISTEN, MONITOR_POSTLOGIN, PERMIT_ANY, monitor_handle_pasv_listen },
	{ IPC_PORT_CONNECT, MONITOR_POSTLOGIN, PERMIT_ANY, monitor_handle_port_connect },
	/* A finished transfer: the monitor adds who and from where. */
	{ IPC_XFERLOG, MONITOR_POSTLOGIN, PERMIT_ANY, monitor_handle_xferlog },
	/* chown_uploads: the descriptor of a file an anonymous upload has
	 * just created (new, empty, the session's own), never a path. */
	{ IPC_CHOWN_UPLOAD, MONITOR_POSTLOGIN, PERMIT_ANY, monitor_handle_chown_upload },
};

void
monitor_init(struct monitor *mon, const struct tw_config *cfg)
{
	memset(mon, 0, sizeof(*mon));
	mon->cfg = cfg;
	mon->state = MONITOR_PRELOGIN;
	mon->client_fd = -1;
	mon->ipc_fd = -1;
	mon->worker = -1;
	mon->spare = -1;
	mon->spare_fd = -1;
	mon->relay = -1;
	mon->relay_fd = -1;
	mon->last_seccomp_nr = -1;
	tw_strlcpy(mon->peer_ip, "?", sizeof(mon->peer_ip));
}

int
monitor_kill_child(pid_t *pid)
{
	int status = 0;

	if (*pid > 0) {
		(void)kill(*pid, SIGKILL);
		while (waitpid(*pid, &status, 0) < 0) {
			if (errno != EINTR) {
				status = 0;
				break;
			}
		}
	}
	*pid = -1;
	return status;
}

/*
 * The relay passes on the worker's last replies (221) and says
 * close_notify once the worker's end closes; it dies with this process
 * (PR_SET_PDEATHSIG), so it gets this long to do that first.
 */
#define RELAY_DRAIN_MS 10000
#define RELAY_DRAIN_STEP_MS 5

/* A relay that died of a signal: named in the log, with its SIGSYS report. */
static void
monitor_relay_died(struct monitor *mon, int status)
{
	struct ipc_msg m;
	uint32_t nr = IPC_SYSCALL_UNKNOWN, role;
	struct pollfd p = { mon->relay_fd, POLLIN, 0 };

	if (!WIFSIGNALED(status) || WTERMSIG(status) == SIGKILL)
		return;
	if (WTERMSIG(status) == SIGSYS && mon->relay_fd >= 0 && poll(&p, 1, 0) == 1 &&
	    ipc_recv(mon->relay_fd, &m) == 0 && m.type == IPC_SANDBOX_VIOLATION &&
	    ipc_get_u32(&m, &nr) == 0 && ipc_get_u32(&m, &role) == 0 && ipc_get_end(&m) == 0)
		tw_log(TW_LOG_ERR, "TLS relay of %s killed by seccomp (syscall %s)", mon->peer_ip,
		       sandbox_syscall_name(nr <= INT_MAX ? (int)nr : -1));
	else
		tw_log(TW_LOG_ERR, "TLS relay of %s died of signal %d", mon->peer_ip,
		       WTERMSIG(status));
}

static void
monitor_drain_relay(struct monitor *mon)
{
	const struct timespec step = { 0, RELAY_DRAIN_STEP_MS * 1000000L };
	int i, status = 0;

	for (i = 0; mon->relay > 0 && i < RELAY_DRAIN_MS / RELAY_DRAIN_STEP_MS; i++) {
		pid_t r = waitpid(mon->relay, &status, WNOHANG);

		if (r == mon->relay) {
			mon->relay = -1;
			monitor_relay_died(mon, status);
		} else if (r < 0 && errno != EINTR) {
			mon->relay = -1;
		} else {
			(void)nanosleep(&step, NULL);
		}
	}
	(void)monitor_kill_child(&mon->relay);
	if (mon->relay_fd >= 0)
		close(mon->relay_fd);
	mon->relay_fd = -1;
}

int
monitor_end(struct monitor *mon, int code)
{
	(void)monitor_kill_child(&mon->worker);
	(void)monitor_kill_child(&mon->spare);
	monitor_drain_relay(mon);
	auth_ahead_end();
	auth_session_end();
	return code;
}

static int
monitor_abort(struct monitor *mon, const char *why)
{
	tw_log(TW_LOG_WARN, "ending session from %s: %s", mon->peer_ip, why);
	return MONITOR_EXIT_CRASH;
}

static int monitor_worker_gone(struct monitor *mon);

static int
monitor_reply_u32(struct monitor *mon, enum ipc_type type, uint32_t v, int fd)
{
	struct ipc_msg m;
	int rc;

	ipc_init(&m, type);
	ipc_put_u32(&m, v);
	m.fd = fd;
	rc = ipc_send(mon->ipc_fd, &m);
	/*
	 * A worker that asked ahead (a PASV socket, dataconn.c) may end
	 * before the answer: how it ended says whether that was a crash.
	 */
	if (rc == IPC_E_EOF)
		return monitor_worker_gone(mon);
	if (rc != 0)
		return monitor_abort(mon, "worker gone");
	return MONITOR_CONTINUE;
}

/* --- Request handlers --- */

/*
 * The login succeeded: the spare becomes the worker, and the monitor,
 * which from here on only relays logs (and, with connect_from_port_20,
 * makes port-20 sockets), gives up root and every file, the logs too.
 */
static int
monitor_logged_in(struct monitor *mon)
{
	tw_log(TW_LOG_INFO, "OK LOGIN: Client \"%s\", user \"%s\"%s", mon->peer_ip,
	       mon->user->name, mon->user->guest ? " (guest)"
				: mon->user->anonymous ? " (anonymous)" : "");
	/* Kept for the transfer lines; *user is given up below. */
	(void)tw_strlcpy(mon->login_name, mon->user->name, sizeof(mon->login_name));
	mon->login_anonymous = mon->user->anonymous;
	mon->login_guest = mon->user->guest;
	mon->login_uid = mon->user->uid;
	/* The per-user options are the session's, here as in its worker. */
	if (mon->user->own_config)
		mon->cfg = mon->user_cfg;
	mon->state = MONITOR_POSTLOGIN;
	if (mon->hand_over(mon) != 0)
		return monitor_abort(mon, "spare post-login worker gone");
	/* Once per worker: a report the pre-login worker sent (true or
	 * forged) must not silence the post-login worker's own. */
	mon->granted[IPC_SANDBOX_VIOLATION] = 0;
	/* As the user it must hold no shared log (invariant 6): its lines
	 * go to the log writer, which vouches for its pid (log.h). */
	log_to_writer();
	creds_monitor_postlogin(mon->user->uid, mon->user->gid, mon->cfg->secure_chroot_dir,
				mon->cfg->connect_from_port_20,
				mon->cfg->chown_uploads && mon->login_anonymous);
	tw_scratch_free(mon->user, sizeof(*mon->user));
	mon->user = NULL;
	sandbox_set_violation_report(NULL);
	sandbox_apply(ROLE_MONITOR_POSTLOGIN, mon->cfg);
	/* What the login left on the stack is dead: give it back. */
	tw_stack_trim();
	return MONITOR_CONTINUE;
}

static int
monitor_handle_tls_on(struct monitor *mon, struct ipc_msg *m)
{
	if (ipc_get_end(m) != 0)
		return monitor_abort(mon, "malformed TLS_ON request");
	if (!mon->cfg->ssl_enable)
		return monitor_abort(mon, "TLS_ON request without ssl_enable");
	mon->ctrl_tls = 1;
	return MONITOR_CONTINUE;
}

/*
 * What every step of a login (USER_CHECK, USER_AHEAD, LOGIN; name is the
 * request's) passes before it runs: MONITOR_CONTINUE, or the session's
 * end.
 * - Not after the failures that closed the session: the worker was told
 *   to end it (CLOSE), so only a hostile one asks on.
 * - A trusted balancer's connection whose worker named no client
 *   (PROXY_CLIENT): a health check, or a hostile worker. The balancer
 *   itself is the client then, admitted as one (tcp_wrappers) before the
 *   step, so that a worker that stays silent skips nothing (a 421).
 */
static int
monitor_login_step(struct monitor *mon, const char *name)
{
	const char *refusal;

	if (mon->login_fails >= mon->cfg->max_login_fails) {
		char why[128];

		(void)snprintf(why, sizeof(why), "%s request after max_login_fails", name);
		return monitor_abort(mon, why);
	}
	if (mon->unnamed_admit == NULL || mon->granted[IPC_PROXY_CLIENT] != 0 ||
	    tw_rt.proxy_trusted.n == 0 || !sa_cidr_list_match(&tw_rt.proxy_trusted, &mon->peer))
		return MONITOR_CONTINUE;
	refusal = mon->unnamed_admit(mon);
	if (refusal == NULL)
		return MONITOR_CONTINUE;
	tw_log(TW_LOG_INFO, "refused login of Client \"%s\" (a balancer's connection that "
	       "named no client): %s", mon->peer_ip, refusal);
	if (!mon->ctrl_tls && !config_implicit_tls(mon->cfg, sa_port(&mon->local)))
		reply_final(mon->client_fd, 421, refusal);
	return MONITOR_EXIT_OK;
}

static int
monitor_handle_login(struct monitor *mon, struct ipc_msg *m)
{
	char user[IPC_MAX_USER + 1], pass[IPC_MAX_PASS + 1];
	size_t ulen, plen;
	uint32_t flags;
	int rc, own;

	if (ipc_get_str(m, user, sizeof(user), IPC_MAX_USER, &ulen) != 0 ||
	    ipc_get_str(m, pass, sizeof(pass), IPC_MAX_PASS, &plen) != 0 ||
	    ipc_get_u32(m, &flags) != 0 || ipc_get_end(m) != 0 ||
	    (flags & ~IPC_LOGIN_FLAGS) != 0 ||
	    ((flags & IPC_LOGIN_TLS) != 0) != (mon->ctrl_tls != 0) ||
	    (flags == IPC_LOGIN_PROT_P)) {
		explicit_bzero(m->payload, sizeof(m->payload));
		return monitor_abort(mon, "malformed LOGIN request");
	}
	/* The password is in pass alone from here (a PAM child that holds
	 * a session keeps a copy of this memory). */
	explicit_bzero(m->payload, sizeof(m->payload));
	/* USER_CHECK's refusals too may have closed the session. */
	rc = monitor_login_step(mon, "LOGIN");
	if (rc != MONITOR_CONTINUE) {
		explicit_bzero(pass, sizeof(pass));
		return rc;
	}
	if (mon->user == NULL)
		mon->user = tw_scratch_alloc(sizeof(*mon->user));
	if (mon->cfg->user_config_dir[0] != '\0' && mon->user_cfg == NULL)
		mon->user_cfg = tw_scratch_alloc(sizeof(*mon->user_cfg));
	/*
	 * The per-user file comes first: its options (local_root,
	 * guest_username, ...) decide what the login becomes. It sets no
	 * option of the authentication itself (config_is_per_session).
	 */
	own = mon->user_cfg != NULL ? auth_user_config(mon->cfg, user, mon->user_cfg) : 0;
	if (own < 0) {
		memset(mon->user, 0, sizeof(*mon->user));
		rc = AUTH_UNAVAILABLE;
	} else {
		rc = auth_login(own ? mon->user_cfg : mon->cfg, user, pass, mon->peer_ip,
				mon->user);
		mon->user->own_config = own;
	}
	explicit_bzero(pass, sizeof(pass));
	/* Used or not, no child forked at USER outlives a LOGIN. */
	auth_ahead_end();
	/* A guest logged in by name and password: the local users' TLS
	 * rules, as the worker applied at USER (vsftpd's too). */
	if (rc == AUTH_OK &&
	    config_tls_login_refusal(mon->cfg, mon->ctrl_tls,
				     mon->user->anonymous && !mon->user->guest) != NULL) {
		/* The worker refuses these at USER: only a hostile one asks. */
		tw_log(TW_LOG_WARN, "login of user \"%s\" from %s refused: TLS rules "
		       "(force_*_logins_ssl, allow_anon_ssl)", user, mon->peer_ip);
		rc = AUTH_DENIED;
	}
	/* session_support: a session opened for a login refused here ends. */
	if (rc != AUTH_OK)
		auth_session_end();
	if (rc == AUTH_OK) {
		mon->login_flags = flags;
		if (mon->cfg->delay_successful_login)
			sleep(mon->cfg->delay_successful_login);
		return monitor_logged_in(mon);
	}
	if (rc == AUTH_DENIED) {
		/* Only a refused guess counts against the client's address. */
		mon->login_fails++;
		/* vsftpd's words: fail2ban's vsftpd filter matches them. */
		tw_log(TW_LOG_INFO, "FAIL LOGIN: Client \"%s\", user \"%s\"", mon->peer_ip,
		       user);
	} else {
		tw_log(TW_LOG_WARN, "login of user \"%s\" from %s could not be checked "
		       "(the server's trouble: see the lines above); not counted as a failure",
		       user, mon->peer_ip);
	}
	/* The delay is the monitor's: a compromised worker cannot skip it. */
	if (mon->cfg->delay_failed_login)
		sleep(mon->cfg->delay_failed_login);
	/* The permit table allows max_login_fails LOGIN requests of any
	 * outcome: the last one closes, counted or not. So does the failure
	 * that reaches max_login_fails with the names userlist_file refused
	 * at USER: any request after it would be a hostile worker's. */
	return monitor_reply_u32(mon, IPC_LOGIN_RESULT,
				 mon->granted[IPC_LOGIN] >= mon->cfg->max_login_fails ||
				 mon->login_fails >= mon->cfg->max_login_fails
				 ? IPC_LOGIN_CLOSE : IPC_LOGIN_FAIL, -1);
}

/*
 * A USER request's name into user (IPC_MAX_USER + 1 bytes): MONITOR_CONTINUE,
 * or the verdict that ends the session (malformed; its option, enabled,
 * off; or a step of a login monitor_login_step refuses).
 */
static int
monitor_user_request(struct monitor *mon, struct ipc_msg *m, char *user, int enabled,
		     const char *option)
{
	const char *name = ipc_schemas[m->type].name;
	char why[128];
	size_t ulen;

	if (ipc_get_str(m, user, IPC_MAX_USER + 1, IPC_MAX_USER, &ulen) != 0 ||
	    ipc_get_end(m) != 0 || ulen == 0)
		(void)snprintf(why, sizeof(why), "malformed %s request", name);
	else if (!enabled)
		(void)snprintf(why, sizeof(why), "%s request without %s", name, option);
	else
		return monitor_login_step(mon, name);
	return monitor_abort(mon, why);
}

/*
 * userlist_enable refuses at USER, before the password crosses the wire
 * (vsftpd's "530 Permission denied."); LOGIN checks the list again. A
 * refusal counts as a failed login, as in vsftpd, so max_login_fails
 * refusals close the session; a list that cannot be read refuses every
 * login and closes (vsftpd: "500 OOPS: cannot read user list file").
 */
static int
monitor_handle_user_check(struct monitor *mon, struct ipc_msg *m)
{
	char user[IPC_MAX_USER + 1];
	int allowed, verdict = monitor_user_request(mon, m, user, mon->cfg->userlist_enable,
						     "userlist_enable");

	if (verdict != MONITOR_CONTINUE)
		return verdict;
	allowed = auth_userlist_allows(mon->cfg, user);
	if (allowed > 0)
		return monitor_reply_u32(mon, IPC_LOGIN_RESULT, IPC_LOGIN_OK, -1);
	if (allowed < 0)
		return monitor_reply_u32(mon, IPC_LOGIN_RESULT, IPC_LOGIN_BROKEN, -1);
	/* A child forked at an earlier USER waits for no password now. */
	auth_ahead_end();
	mon->login_fails++;
	if (mon->cfg->userlist_log)
		tw_log(TW_LOG_INFO, "FAIL LOGIN: Client \"%s\", user \"%s\" (userlist_file)",
		       mon->peer_ip, user);
	if (mon->cfg->delay_failed_login)
		sleep(mon->cfg->delay_failed_login);
	return monitor_reply_u32(mon, IPC_LOGIN_RESULT,
				 mon->login_fails >= mon->cfg->max_login_fails
				 ? IPC_LOGIN_CLOSE : IPC_LOGIN_FAIL, -1);
}

/*
 * A local user's USER, before PASS: the PAM child forks now and looks the
 * user up while the password is on its way (auth_ahead_start()). No
 * answer: the worker replied 331 already. Not for a name LOGIN would
 * refuse before PAM (userlist_enable, the TLS rules for local users),
 * which only a hostile worker asks for.
 */
static int
monitor_handle_user_ahead(struct monitor *mon, struct ipc_msg *m)
{
	char user[IPC_MAX_USER + 1];
	int verdict = monitor_user_request(mon, m, user, mon->cfg->local_enable, "local_enable");

	if (verdict != MONITOR_CONTINUE)
		return verdict;
	if ((mon->cfg->userlist_enable && auth_userlist_allows(mon->cfg, user) <= 0) ||
	    config_tls_login_refusal(mon->cfg, mon->ctrl_tls, 0) != NULL)
		auth_ahead_end();
	else
		auth_ahead_start(mon->cfg, user, mon->peer_ip);
	return MONITOR_CONTINUE;
}

static int
monitor_handle_log(struct monitor *mon, struct ipc_msg *m)
{
	char text[IPC_MAX_LOGMSG + 1];
	uint32_t level;
	size_t len;

	if (ipc_get_u32(m, &level) != 0 ||
	    ipc_get_str(m, text, sizeof(text), IPC_MAX_LOGMSG, &len) != 0 ||
	    ipc_get_end(m) != 0)
		return monitor_abort(mon, "malformed LOG request");
	log_from_worker((int)level, text, mon->worker);
	return MONITOR_CONTINUE;
}

/* Named when the worker is reaped (monitor_worker_gone()). */
static int
monitor_handle_violation(struct monitor *mon, struct ipc_msg *m)
{
	uint32_t nr, role;

	if (ipc_get_u32(m, &nr) != 0 || ipc_get_u32(m, &role) != 0 || ipc_get_end(m) != 0)
		return monitor_abort(mon, "malformed SANDBOX_VIOLATION report");
	mon->last_seccomp_nr = nr <= INT_MAX ? (int)nr : -1;
	tw_log(TW_LOG_ERR, "worker of %s: forbidden syscall %s (%d) under the %s policy",
	       mon->peer_ip, sandbox_syscall_name(mon->last_seccomp_nr), mon->last_seccomp_nr,
	       sandbox_role_name((enum sandbox_role)role));
	return MONITOR_CONTINUE;
}

static int
monitor_reply_fd(struct monitor *mon, int fd)
{
	uint32_t err = fd < 0 ? (uint32_t)(errno ? errno : EIO) : 0;
	int verdict = monitor_reply_u32(mon, IPC_FD_RESULT, err, fd);

	if (fd >= 0)
		close(fd);
	return verdict;
}

/* A port-20 socket connected to dst: the descriptor, or -1 and errno. */
static int
port20_connect(struct sockaddr_storage *src, struct sockaddr_storage *dst)
{
	socklen_t len = sa_len(src);
	int fd, one = 1, err;

	fd = socket(src->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
	    bind(fd, (struct sockaddr *)src, len) == 0 &&
	    connect(fd, (struct sockaddr *)dst, len) == 0)
		return fd;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

static int
monitor_handle_port20(struct monitor *mon, struct ipc_msg *m)
{
	struct sockaddr_storage src = mon->local, dst = mon->peer;
	uint32_t port;

	if (ipc_get_u32(m, &port) != 0 || ipc_get_end(m) != 0 || port == 0 ||
	    port > MONITOR_MAX_PORT)
		return monitor_abort(mon, "malformed PORT20 request");
	if (!mon->cfg->connect_from_port_20)
		return monitor_abort(mon, "PORT20 request without connect_from_port_20");
	if (!mon->cfg->port_promiscuous && port < MONITOR_FIRST_UNPRIVILEGED_PORT)
		return monitor_reply_u32(mon, IPC_FD_RESULT, EPERM, -1);
	/* The destination is pinned to the control peer: no bounce. */
	sa_set_port(&src, mon->cfg->ftp_data_port);
	sa_set_port(&dst, port);
	errno = 0;
	return monitor_reply_fd(mon, port20_connect(&src, &dst));
}

static int
monitor_handle_pasv_listen(struct monitor *mon, struct ipc_msg *m)
{
	unsigned port;

	if (ipc_get_end(m) != 0)
		return monitor_abort(mon, "malformed PASV_LISTEN request");
	if (tw_rt.netns_fd < 0)
		return monitor_abort(mon, "PASV_LISTEN request without isolate_network");
#if TW_TEST_HOOKS
	/* e2e: a monitor slow to answer, so that a worker that asked ahead
	 * can end first (dataconn.c). */
	{
		const char *hook = getenv("TW_TEST_PASV_ANSWER_MS");
		long ms = hook != NULL ? strtol(hook, NULL, 10) : 0;
		struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

		if (ms > 0 && ms < 10000)
			(void)nanosleep(&t, NULL);
	}
#endif
	return monitor_reply_fd(mon, datasock_pasv_listen(mon->cfg, &mon->local, &port));
}

/* PORT_CONNECT's (and PROXY_CLIENT's) fields into dst; 0, or -1 when malformed. */
static int
addr_record_decode(struct ipc_msg *m, struct sockaddr_storage *dst)
{
	unsigned char raw[PORT_CONNECT_ADDR_BYTES];
	uint32_t family, word, port;
	size_t i;

	memset(dst, 0, sizeof(*dst));
	if (ipc_get_u32(m, &family) != 0 ||
	    (family != PORT_CONNECT_IPV4 && family != PORT_CONNECT_IPV6))
		return -1;
	for (i = 0; i < sizeof(raw); i += 4) {
		if (ipc_get_u32(m, &word) != 0)
			return -1;
		raw[i] = (unsigned char)(word >> 24);
		raw[i + 1] = (unsigned char)(word >> 16);
		raw[i + 2] = (unsigned char)(word >> 8);
		raw[i + 3] = (unsigned char)word;
	}
	if (ipc_get_u32(m, &port) != 0 || ipc_get_end(m) != 0 || port == 0 ||
	    port > MONITOR_MAX_PORT)
		return -1;
	if (family == PORT_CONNECT_IPV4) {
		struct sockaddr_in *in = (struct sockaddr_in *)dst;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, raw, sizeof(in->sin_addr));
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)dst;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, raw, sizeof(in6->sin6_addr));
	}
	sa_set_port(dst, port);
	return 0;
}

static int
monitor_handle_port_connect(struct monitor *mon, struct ipc_msg *m)
{
	struct sockaddr_storage dst;

	if (addr_record_decode(m, &dst) != 0)
		return monitor_abort(mon, "malformed PORT_CONNECT request");
	if (tw_rt.netns_fd < 0)
		return monitor_abort(mon, "PORT_CONNECT request without isolate_network");
	/* The worker checked it too; a compromised worker gets no bounce. */
	if (!mon->cfg->port_promiscuous &&
	    (sa_port(&dst) < MONITOR_FIRST_UNPRIVILEGED_PORT || !sa_same_host(&dst, &mon->peer))) {
		tw_log(TW_LOG_WARN, "refused a PORT_CONNECT to a foreign address from the worker of %s",
		       mon->peer_ip);
		return monitor_reply_u32(mon, IPC_FD_RESULT, EPERM, -1);
	}
	errno = 0;
	return monitor_reply_fd(mon, datasock_connect(&dst, &mon->local, mon->cfg->connect_timeout));
}

void
monitor_set_peer(struct monitor *mon, const struct sockaddr_storage *peer)
{
	const void *a;

	mon->peer = *peer;
	sa_unmap_v4(&mon->peer);
	a = mon->peer.ss_family == AF_INET
		? (const void *)&((struct sockaddr_in *)&mon->peer)->sin_addr
		: (const void *)&((struct sockaddr_in6 *)&mon->peer)->sin6_addr;
	if (inet_ntop(mon->peer.ss_family, a, mon->peer_ip, sizeof(mon->peer_ip)) == NULL)
		tw_strlcpy(mon->peer_ip, "?", sizeof(mon->peer_ip));
}

/*
 * A trusted balancer's header named the client (the worker parsed it;
 * here only a fixed record is checked). From now on that client is the
 * session's peer: its logs, the data connections' checks, the bounce
 * check. The listener moves the session's count to it and may refuse it
 * (max_per_ip, penalties): then the 421 is written here, as the
 * listener would have, and the session ends without counting against
 * anyone.
 */
static int
monitor_handle_proxy_client(struct monitor *mon, struct ipc_msg *m)
{
	struct sockaddr_storage client;
	char balancer[INET6_ADDRSTRLEN];
	const char *refusal;
	struct ipc_msg ok;

	if (addr_record_decode(m, &client) != 0)
		return monitor_abort(mon, "malformed PROXY_CLIENT request");
	if (tw_rt.proxy_trusted.n == 0 || !sa_cidr_list_match(&tw_rt.proxy_trusted, &mon->peer))
		return monitor_abort(mon, "PROXY_CLIENT request on a connection from an "
				     "untrusted source");
	/* Before the session starts: no TLS yet, no step of a login. */
	if (mon->ctrl_tls || mon->granted[IPC_LOGIN] != 0 || mon->granted[IPC_USER_CHECK] != 0 ||
	    mon->granted[IPC_USER_AHEAD] != 0)
		return monitor_abort(mon, "PROXY_CLIENT request after the session started");
	(void)tw_strlcpy(balancer, mon->peer_ip, sizeof(balancer));
	monitor_set_peer(mon, &client);
	tw_log(TW_LOG_INFO, "PROXY: Client \"%s\" via \"%s\"", mon->peer_ip, balancer);
	refusal = mon->proxy_admit != NULL ? mon->proxy_admit(mon) : NULL;
	if (refusal != NULL) {
		tw_log(TW_LOG_INFO, "refused proxied Client \"%s\": %s", mon->peer_ip, refusal);
		if (!config_implicit_tls(mon->cfg, sa_port(&mon->local)))
			reply_final(mon->client_fd, 421, refusal);
		return MONITOR_EXIT_OK;
	}
	ipc_init(&ok, IPC_PROXY_OK);
	if (ipc_send(mon->ipc_fd, &ok) != 0)
		return monitor_abort(mon, "worker gone");
	return MONITOR_CONTINUE;
}

/*
 * Copies a path the worker named into out as one xferlog(5) field: a
 * control byte or a blank becomes '_' (its fields are separated by
 * blanks). The log line quotes the path as it is: tw_log writes its
 * control bytes as '?'.
 */
static void
xferlog_field_path(char *out, size_t outsz, const char *path)
{
	size_t i;

	for (i = 0; path[i] != '\0' && i + 1 < outsz; i++) {
		unsigned char c = (unsigned char)path[i];

		out[i] = c <= 0x20 || c == 0x7f ? '_' : (char)c;
	}
	out[i] = '\0';
}

/*
 * One transfer's lines: vsftpd's own in the log, where xferlog_std_format
 * does not replace it (or dual_log_enable keeps both), and the xferlog(5)
 * line. The worker says what moved; who and from where are the
 * monitor's facts, so a worker cannot log a transfer as someone else's.
 */
static int
monitor_handle_xferlog(struct monitor *mon, struct ipc_msg *m)
{
	char path[IPC_MAX_XFERPATH + 1], shown[IPC_MAX_XFERPATH + 1];
	char fields[IPC_MAX_XFERPATH + 512];
	uint32_t flags, hi, lo, ms;
	unsigned long long bytes;
	const struct tw_config *c = mon->cfg;
	int up, ok;

	if (ipc_get_u32(m, &flags) != 0 || ipc_get_u32(m, &hi) != 0 ||
	    ipc_get_u32(m, &lo) != 0 || ipc_get_u32(m, &ms) != 0 ||
	    ipc_get_str(m, path, sizeof(path), IPC_MAX_XFERPATH, NULL) != 0 ||
	    ipc_get_end(m) != 0 || (flags & ~(uint32_t)IPC_XFER_ALL) != 0)
		return monitor_abort(mon, "malformed XFERLOG request");
	if (!c->xferlog_enable)
		return MONITOR_CONTINUE;
	bytes = (unsigned long long)hi << 32 | lo;
	up = (flags & IPC_XFER_UPLOAD) != 0;
	ok = (flags & IPC_XFER_OK) != 0;
	if (!c->xferlog_std_format || c->dual_log_enable) {
		tw_log(TW_LOG_INFO, "%s %s: Client \"%s\", user \"%s\", \"%s\", %llu bytes, "
		       "%.2fKbyte/sec", ok ? "OK" : "FAIL", up ? "UPLOAD" : "DOWNLOAD",
		       mon->peer_ip, mon->login_name, path, bytes,
		       (double)bytes / 1024.0 / ((ms ? ms : 1) / 1000.0));
	}
	if (c->xferlog_std_format || c->dual_log_enable) {
		/* xferlog(5): the seconds it took (at least 1, as vsftpd),
		 * host, bytes, name, type, action, direction, access mode,
		 * user, service, authentication, user id, completion. */
		xferlog_field_path(shown, sizeof(shown), path);
		(void)snprintf(fields, sizeof(fields),
		    "%u %s %llu %s %c _ %c %c %s ftp 0 * %c",
		    ms < 1000 ? 1 : (ms + 500) / 1000, mon->peer_ip, bytes,
		    shown[0] != '\0' ? shown : "_", (flags & IPC_XFER_ASCII) ? 'a' : 'b',
		    up ? 'i' : 'o', mon->login_guest ? 'g' : mon->login_anonymous ? 'a' : 'r',
		    mon->login_name,
		    ok ? 'c' : 'i');
		log_xferlog(fields);
	}
	return MONITOR_CONTINUE;
}

/*
 * chown_uploads: an anonymous upload's new file goes to chown_username
 * with chown_upload_mode (vsftpd's vsf_privop_do_file_chown). Only by
 * the descriptor the worker holds, never by a path it names, and only
 * for what a fresh upload looks like: a regular file of the session's
 * own uid, with one name, empty, open for writing. The mode is set
 * first, while the file is still the session's (no CAP_FOWNER needed);
 * chown then needs the CAP_CHOWN kept for this, and clears any set-id
 * bit (chown_upload_mode has none anyway).
 */
static int
monitor_handle_chown_upload(struct monitor *mon, struct ipc_msg *m)
{
	const struct tw_config *c = mon->cfg;
	struct stat st;
	uint32_t err = 0;
	int fd = m->fd, fl;

	m->fd = -1;
	if (fd < 0 || ipc_get_end(m) != 0) {
		if (fd >= 0)
			close(fd);
		return monitor_abort(mon, "malformed CHOWN_UPLOAD request");
	}
	if (!c->chown_uploads || !mon->login_anonymous) {
		close(fd);
		return monitor_abort(mon, c->chown_uploads
				     ? "CHOWN_UPLOAD request of a session without anonymous privileges"
				     : "CHOWN_UPLOAD request without chown_uploads");
	}
	fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) != 0 || fl < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != mon->login_uid || st.st_nlink != 1 || st.st_size != 0 ||
	    ((fl & O_ACCMODE) != O_WRONLY && (fl & O_ACCMODE) != O_RDWR)) {
		tw_log(TW_LOG_WARN, "refused a CHOWN_UPLOAD of a descriptor that is not a new "
		       "upload from the worker of %s", mon->peer_ip);
		err = EPERM;
	} else if (fchmod(fd, (mode_t)c->chown_upload_mode) != 0 ||
		   fchown(fd, tw_rt.chown_uid, (gid_t)-1) != 0) {
		err = (uint32_t)errno;
		tw_log(TW_LOG_ERR, "chown_uploads: cannot give an upload of %s to %s: %s",
		       mon->peer_ip, c->chown_username, strerror(errno));
	}
	close(fd);
	ipc_init(m, IPC_CHOWN_RESULT);
	ipc_put_u32(m, err);
	if (ipc_send(mon->ipc_fd, m) != 0)
		return monitor_abort(mon, "worker gone");
	return MONITOR_CONTINUE;
}

/* --- How the session ended, for the listener --- */

/*
 * A monitor's exit code, one byte: 0 a session that ended well with no
 * failed login; MONITOR_EXIT_FAILS_BASE + n one that ended well after n
 * failed logins (n >= 1); MONITOR_EXIT_BAD_BASE + n one that ended
 * badly after n. die() exits 1 or 2, outside both ranges.
 */
#define MONITOR_EXIT_FAILS_BASE 16
#define MONITOR_EXIT_BAD_BASE 128
/* max_login_fails' upper bound in config_table.h: the LOGIN permit
 * grants no more, so a session never has more failures than this. */
#define MONITOR_EXIT_FAILS_MAX 100

_Static_assert(MONITOR_EXIT_FAILS_BASE + MONITOR_EXIT_FAILS_MAX < MONITOR_EXIT_BAD_BASE,
	       "the two ranges of exit codes overlap");
_Static_assert(MONITOR_EXIT_BAD_BASE + MONITOR_EXIT_FAILS_MAX <= UCHAR_MAX,
	       "an exit code is one byte");

int
monitor_exit_code(const struct monitor *mon, int verdict)
{
	unsigned n = mon->login_fails;

	if (n > MONITOR_EXIT_FAILS_MAX)
		n = MONITOR_EXIT_FAILS_MAX;
	if (verdict == MONITOR_EXIT_LOGIN_FAILED || verdict == MONITOR_EXIT_CRASH)
		return MONITOR_EXIT_BAD_BASE + (int)n;
	return n == 0 ? MONITOR_EXIT_OK : MONITOR_EXIT_FAILS_BASE + (int)n;
}

struct monitor_outcome
monitor_outcome_of(int wait_status)
{
	struct monitor_outcome o = { 0, 0 };
	int code;

	if (WIFSIGNALED(wait_status)) {
		/* SIGTERM is the listener's own shutdown; any other signal, a crash. */
		o.bad = WTERMSIG(wait_status) != SIGTERM;
		return o;
	}
	if (!WIFEXITED(wait_status))
		return o;
	code = WEXITSTATUS(wait_status);
	if (code >= MONITOR_EXIT_BAD_BASE &&
	    code <= MONITOR_EXIT_BAD_BASE + MONITOR_EXIT_FAILS_MAX) {
		o.bad = 1;
		o.failed_logins = (unsigned)(code - MONITOR_EXIT_BAD_BASE);
	} else if (code > MONITOR_EXIT_FAILS_BASE &&
		   code <= MONITOR_EXIT_FAILS_BASE + MONITOR_EXIT_FAILS_MAX) {
		o.failed_logins = (unsigned)(code - MONITOR_EXIT_FAILS_BASE);
	}
	return o;
}

/* --- Dispatch and the loop --- */

/* Whether p may be granted once more in this session. */
static int
permit_count_left(const struct monitor *mon, const struct permit *p)
{
	unsigned granted = mon->granted[p->type];

	switch (p->count) {
	case PERMIT_ANY:
		return 1;
	case PERMIT_ONCE:
		return granted < 1;
	case PERMIT_MAX_LOGIN_FAILS:
		return granted < mon->cfg->max_login_fails;
	}
	return 0;
}

static const char *
monitor_state_name(enum monitor_state state)
{
	return state == MONITOR_PRELOGIN ? "pre-login" : "post-login";
}

/* Whether type is a worker's request (a monitor's answer is not). */
static int
monitor_is_request(unsigned type)
{
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(permits); i++)
		if (permits[i].type == type)
			return 1;
	return 0;
}

/* The session ends over m: a descriptor that came with it is closed. */
static int
monitor_refuse(struct ipc_msg *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	return MONITOR_EXIT_CRASH;
}

int
monitor_dispatch(struct monitor *mon, struct ipc_msg *m)
{
	const char *name = m->type < IPC_TYPE_COUNT ? ipc_schemas[m->type].name : "?";
	size_t i;

	/*
	 * Only a request whose schema names a descriptor carries one (the
	 * receiver checks that too); its handler owns it. Every refusal
	 * below closes it.
	 */
	if (m->fd >= 0 && (m->type >= IPC_TYPE_COUNT || ipc_schemas[m->type].fd != IPC_FD_ALWAYS ||
			   !monitor_is_request(m->type))) {
		close(m->fd);
		m->fd = -1;
		tw_log(TW_LOG_WARN, "request %s with a descriptor from worker of %s", name,
		       mon->peer_ip);
		return MONITOR_EXIT_CRASH;
	}
	for (i = 0; i < TW_ARRAY_LEN(permits); i++) {
		const struct permit *p = &permits[i];

		if (p->type != m->type)
			continue;
		if (!(p->states & mon->state))
			break;
		if (!permit_count_left(mon, p)) {
			tw_log(TW_LOG_WARN, "request %s beyond its allowed count from worker of %s",
			       name, mon->peer_ip);
			return monitor_refuse(m);
		}
		mon->granted[p->type]++;
		return p->handler(mon, m);
	}
	tw_log(TW_LOG_WARN, "unpermitted request %s in state %s from worker of %s", name,
	       monitor_state_name(mon->state), mon->peer_ip);
	return monitor_refuse(m);
}

/*
 * The worker closed its end. It is killed before it is waited for: a
 * worker that closed the socket and lives on must not hold its monitor
 * in waitpid(), and one that was already dying keeps its own status.
 */
static int
monitor_worker_gone(struct monitor *mon)
{
	int status = monitor_kill_child(&mon->worker);

	(void)monitor_kill_child(&mon->spare);
	auth_ahead_end();
	auth_session_end();
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGSYS)
			tw_log(TW_LOG_ERR, "worker of %s killed by seccomp (syscall %s)",
			       mon->peer_ip, sandbox_syscall_name(mon->last_seccomp_nr));
		else
			tw_log(TW_LOG_ERR, "worker of %s died of signal %d", mon->peer_ip, sig);
		/* Never leave the client hanging; over TLS only the TLS
		 * endpoint may write, and the close says it. */
		if (!mon->ctrl_tls)
			reply_final(mon->client_fd, 421,
				    "Service not available, closing control connection.");
		return MONITOR_EXIT_CRASH;
	}
	return mon->login_fails >= mon->cfg->max_login_fails ? MONITOR_EXIT_LOGIN_FAILED
							     : MONITOR_EXIT_OK;
}

int
monitor_serve(struct monitor *mon)
{
	for (;;) {
		struct ipc_msg m;
		int rc = ipc_recv(mon->ipc_fd, &m), verdict;

		if (rc == IPC_E_EOF)
			return monitor_worker_gone(mon);
		if (rc != 0) {
			tw_log(TW_LOG_WARN, "bad IPC message from worker of %s: %s",
			       mon->peer_ip, ipc_strerror(rc));
			return monitor_end(mon, MONITOR_EXIT_CRASH);
		}
		verdict = monitor_dispatch(mon, &m);
		if (verdict != MONITOR_CONTINUE)
			return monitor_end(mon, verdict);
	}
}
