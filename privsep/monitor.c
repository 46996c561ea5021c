/*
 * The session monitor. Root, one per client; it starts the protocol
 * worker, answers its typed requests, and never reads the client's bytes.
 *
 * The whole privileged API is the permit table below: which request is
 * legal in which state. Anything else ends the session.
 */
#include "privsep/monitor.h"
#include "src/session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privsep/auth.h"
#include "src/common/config.h"
#include "privsep/datasock.h"
#include "privsep/ipc.h"
#include "src/common/log.h"
#include "sandbox/sandbox.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"
#include "src/worker.h"

enum mon_state {
	ST_PRELOGIN = 1 << 0,
	ST_POSTLOGIN = 1 << 1,
};

struct monitor {
	const struct tw_config *cfg;
	enum mon_state state;
	int client_fd;
	int ipc_fd;
	pid_t worker;
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
	struct sockaddr_storage peer, local;
	char peer_ip[INET6_ADDRSTRLEN];
	unsigned login_fails;
	/* A login's facts: scratch pages (tw_scratch_alloc) until handed over. */
	struct auth_user *user;
	int last_seccomp_nr;	/* from a worker's violation report, or -1 */
};

/* Written after every fork: TW_PER_PROCESS (util.h). */
static struct monitor mon TW_PER_PROCESS;

typedef void (*mon_handler)(struct ipc_msg *m);

static void monitor_handle_login(struct ipc_msg *m);
static void monitor_handle_log(struct ipc_msg *m);
static void monitor_handle_port20(struct ipc_msg *m);
static void monitor_handle_pasv_listen(struct ipc_msg *m);
static void monitor_handle_port_connect(struct ipc_msg *m);

static const struct permit {
	enum ipc_type type;
	unsigned states;
	mon_handler handler;
} permits[] = {
	/* Bounded by max_login_fails inside the handler. */
	{ IPC_LOGIN, ST_PRELOGIN, monitor_handle_login },
	{ IPC_LOG, ST_PRELOGIN | ST_POSTLOGIN, monitor_handle_log },
	/* A socket bound to ftp_data_port, only to the control peer. */
	{ IPC_PORT20_CONNECT, ST_POSTLOGIN, monitor_handle_port20 },
	/* isolate_network: the worker has no network; data sockets come
	 * from here, pinned to the control connection's addresses. */
	{ IPC_PASV_LISTEN, ST_POSTLOGIN, monitor_handle_pasv_listen },
	{ IPC_PORT_CONNECT, ST_POSTLOGIN, monitor_handle_port_connect },
};

static void
monitor_kill_child(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*pid = -1;
}

static void __attribute__((noreturn))
monitor_end(int code)
{
	monitor_kill_child(&mon.worker);
	monitor_kill_child(&mon.spare);
	_exit(code);
}

static void __attribute__((noreturn))
monitor_abort(const char *why)
{
	tw_log(TW_LOG_WARN, "ending session from %s: %s", mon.peer_ip, why);
	monitor_end(MONITOR_EXIT_CRASH);
}

static void
monitor_reply_u32(enum ipc_type type, uint32_t v, int fd)
{
	struct ipc_msg m;

	ipc_init(&m, type);
	ipc_put_u32(&m, v);
	m.fd = fd;
	if (ipc_send(mon.ipc_fd, &m) != 0)
		monitor_abort("worker gone");
}

/* Sets the nice value of pid (0: this process); a failure is logged. */
static void
session_nice(pid_t pid, int value)
{
	if (setpriority(PRIO_PROCESS, (id_t)pid, value) != 0)
		tw_log(TW_LOG_WARN, "login_nice: cannot set the priority of %d to %d: %s",
		       (int)(pid ? pid : getpid()), value, strerror(errno));
}

/* --- Starting workers --- */

/*
 * Forks a session child that keeps only keep_fd (-1: none) and its end of
 * a new IPC socketpair, in the empty network namespace. In the parent:
 * returns the pid and the monitor's end in *ipc_out. In the child:
 * returns 0 and its end in *ipc_out.
 */
static pid_t
fork_session_child(int keep_fd, int *ipc_out)
{
	int sv[2];
	pid_t pid;

	if (ipc_socketpair(sv) != 0)
		die("socketpair: %s", strerror(errno));
	pid = ns_fork(tw_rt.isolate);
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		close(sv[1]);
		*ipc_out = sv[0];
		return pid;
	}
	close(sv[0]);
	ns_join_net(tw_rt.netns_fd);
	/*
	 * Nothing else the monitor holds (the log file, the listener's
	 * channel, the other child's socket) may reach a process that
	 * parses client input.
	 */
	{
		int keep[2] = { sv[1], keep_fd };

		tw_close_fds_except(keep, keep_fd >= 0 ? 2 : 1);
	}
	ipc_log_to(sv[1]);
	log_set_role("worker");
	*ipc_out = sv[1];
	return 0;
}

/* After the uid change, which clears it: die with the monitor. */
static void
session_child_tie(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* In a new PID namespace the parent is outside it: getppid() is 0. */
	if (getppid() != (tw_rt.isolate ? 0 : parent))
		_exit(0);
}

static pid_t
start_prelogin_worker(int *ipc_out)
{
	pid_t pid, parent = getpid();
	int fd;
	struct creds_target t = {
		.uid = tw_rt.nopriv_uid, .gid = tw_rt.nopriv_gid,
		.groups = NULL, .ngroups = 0,
		.chroot_dir = mon.cfg->secure_chroot_dir, .start_dir = "/",
		.umask = 077,
	};

	pid = fork_session_child(mon.client_fd, ipc_out);
	if (pid > 0)
		return pid;
	fd = *ipc_out;
	creds_become(&t);
	session_child_tie(parent);
	sandbox_set_report_fd(fd);
	sandbox_apply(ROLE_WORKER_PRELOGIN, mon.cfg);
	worker_prelogin_run(mon.cfg, mon.client_fd, fd);
}

/*
 * The spare, in its own process: waits as root (under the monitor's
 * filter, holding nothing but its IPC socket) for the monitor's
 * hand-over, then becomes the user and serves the session. The record
 * comes from the root monitor, and is checked all the same.
 */
static void __attribute__((noreturn))
spare_run(int fd, pid_t parent)
{
	struct auth_user *u = tw_scratch_alloc(sizeof(*u));
	struct worker_login wl;
	int client_fd;

	if (ipc_recv_record(fd, u, sizeof(*u), 1, &client_fd) != 0)
		_exit(0);	/* the session ended before a login */
	if (auth_user_check(u) != 0)
		bug("the monitor handed over an unsound login record");
	{
		struct creds_target t = {
			.uid = u->uid, .gid = u->gid,
			.groups = u->groups, .ngroups = u->ngroups,
			.chroot_dir = u->chroot_dir[0] ? u->chroot_dir : NULL,
			.start_dir = u->start_dir,
			.umask = u->umask,
		};

		creds_become(&t);
	}
	session_child_tie(parent);
	/*
	 * The monitor says go once the pre-login worker is dead: until then
	 * this process must not touch the connection (it set itself up
	 * meanwhile, in parallel with that worker's exit).
	 */
	{
		unsigned char go;
		int none;

		if (ipc_recv_record(fd, &go, sizeof(go), 0, &none) != 0)
			_exit(0);
	}
	memset(&wl, 0, sizeof(wl));
	tw_strlcpy(wl.user, u->name, sizeof(wl.user));
	wl.anonymous = u->anonymous;
	wl.chrooted = u->chroot_dir[0] != '\0';
	tw_scratch_free(u, sizeof(*u));
	sandbox_set_report_fd(fd);
	sandbox_apply(ROLE_WORKER_POSTLOGIN, mon.cfg);
	worker_postlogin_run(mon.cfg, client_fd, fd, &wl);
}

static void start_spare(void);

/* The spare died (it never touched the client): a new one. */
static void
respawn_spare(void)
{
	monitor_kill_child(&mon.spare);
	close(mon.spare_fd);
	start_spare();
}

static void
start_spare(void)
{
	pid_t parent = getpid();
	int fd;

	mon.spare = fork_session_child(-1, &mon.spare_fd);
	if (mon.spare > 0)
		return;
	fd = mon.spare_fd;
	mon.spare_fd = -1;
	/*
	 * Standard input, output and error are the client's connection in
	 * inetd mode: until the hand-over this process holds nothing of the
	 * client's.
	 */
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			die("spare worker: /dev/null: %s", strerror(errno));
		if (null > 2)
			close(null);
	}
	spare_run(fd, parent);
}

/* --- Request handlers --- */

static void
monitor_handle_login(struct ipc_msg *m)
{
	char user[IPC_MAX_USER + 1], pass[IPC_MAX_PASS + 1];
	size_t ulen, plen;
	int ok;

	if (ipc_get_str(m, user, sizeof(user), IPC_MAX_USER, &ulen) != 0 ||
	    ipc_get_str(m, pass, sizeof(pass), IPC_MAX_PASS, &plen) != 0 ||
	    ipc_get_end(m) != 0)
		monitor_abort("malformed LOGIN request");
	if (mon.login_fails >= mon.cfg->max_login_fails)
		monitor_abort("LOGIN request after the last allowed failure");
	if (mon.user == NULL)
		mon.user = tw_scratch_alloc(sizeof(*mon.user));
	ok = auth_login(mon.cfg, user, pass, mon.peer_ip, mon.user) == 0;
	explicit_bzero(pass, sizeof(pass));
	explicit_bzero(m->payload, sizeof(m->payload));
	if (ok) {
		tw_log(TW_LOG_INFO, "OK LOGIN: client %s, user \"%s\"%s", mon.peer_ip,
		       mon.user->name, mon.user->anonymous ? " (anonymous)" : "");
		/*
		 * The pre-login worker has nothing left to do. The spare
		 * becomes the user while it dies, and may touch the control
		 * connection only once it is dead.
		 */
		kill(mon.worker, SIGKILL);
		/* Logged in: back to the listener's priority, the spare
		 * before it starts (it is still root, like us). */
		if (tw_rt.login_nice) {
			session_nice(mon.spare, tw_rt.base_nice);
			session_nice(0, tw_rt.base_nice);
		}
		mon.state = ST_POSTLOGIN;
		if (ipc_send_record(mon.spare_fd, mon.user, sizeof(*mon.user), mon.client_fd) != 0) {
			respawn_spare();
			if (ipc_send_record(mon.spare_fd, mon.user, sizeof(*mon.user),
					    mon.client_fd) != 0)
				monitor_abort("spare post-login worker gone");
		}
		monitor_kill_child(&mon.worker);
		close(mon.ipc_fd);
		{
			static const unsigned char go = 1;

			if (ipc_send_record(mon.spare_fd, &go, sizeof(go), -1) != 0)
				monitor_abort("spare post-login worker gone");
		}
		mon.worker = mon.spare;
		mon.ipc_fd = mon.spare_fd;
		mon.spare = -1;
		mon.spare_fd = -1;
		/*
		 * From here on the monitor only relays logs (and, with
		 * connect_from_port_20, makes port-20 sockets): it gives up
		 * root and every file.
		 */
		creds_monitor_postlogin(mon.user->uid, mon.user->gid, mon.cfg->secure_chroot_dir,
					mon.cfg->connect_from_port_20);
		tw_scratch_free(mon.user, sizeof(*mon.user));
		mon.user = NULL;
		sandbox_set_report_fd(-1);
		sandbox_apply(ROLE_MONITOR_POSTLOGIN, mon.cfg);
		/* What the login left on the stack is dead: give it back. */
		tw_stack_trim();
		return;
	}
	mon.login_fails++;
	tw_log(TW_LOG_INFO, "FAIL LOGIN: client %s, user \"%s\"", mon.peer_ip, user);
	/* The delay is the monitor's: a compromised worker cannot skip it. */
	if (mon.cfg->delay_failed_login)
		sleep(mon.cfg->delay_failed_login);
	monitor_reply_u32(IPC_LOGIN_RESULT,
			  mon.login_fails >= mon.cfg->max_login_fails ? IPC_LOGIN_CLOSE
								      : IPC_LOGIN_FAIL, -1);
}

static void
monitor_handle_log(struct ipc_msg *m)
{
	char text[IPC_MAX_LOGMSG + 1];
	uint32_t level;
	size_t len;
	int nr;

	if (ipc_get_u32(m, &level) != 0 ||
	    ipc_get_str(m, text, sizeof(text), IPC_MAX_LOGMSG, &len) != 0 ||
	    ipc_get_end(m) != 0)
		monitor_abort("malformed LOG request");
	if (sscanf(text, "seccomp-violation nr=%d", &nr) == 1) {
		mon.last_seccomp_nr = nr;
		tw_log(TW_LOG_ERR, "worker of %s: forbidden syscall %s (%d): %s", mon.peer_ip,
		       sandbox_syscall_name(nr), nr, text);
		return;
	}
	log_from_worker((int)level, text, mon.worker);
}

static void
monitor_reply_fd(int fd)
{
	uint32_t err = fd < 0 ? (uint32_t)(errno ? errno : EIO) : 0;

	monitor_reply_u32(IPC_FD_RESULT, err, fd);
	if (fd >= 0)
		close(fd);
}

static void
monitor_handle_port20(struct ipc_msg *m)
{
	struct sockaddr_storage src = mon.local, dst = mon.peer;
	uint32_t port;
	int fd, one = 1;
	socklen_t len = src.ss_family == AF_INET ? sizeof(struct sockaddr_in)
						 : sizeof(struct sockaddr_in6);

	if (ipc_get_u32(m, &port) != 0 || ipc_get_end(m) != 0 || port == 0 || port > 65535)
		monitor_abort("malformed PORT20 request");
	if (!mon.cfg->connect_from_port_20)
		monitor_abort("PORT20 request without connect_from_port_20");
	if (!mon.cfg->port_promiscuous && port < 1024) {
		monitor_reply_u32(IPC_FD_RESULT, EPERM, -1);
		return;
	}
	/* The destination is pinned to the control peer: no bounce. */
	sa_set_port(&src, mon.cfg->ftp_data_port);
	sa_set_port(&dst, port);
	errno = 0;
	fd = socket(src.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&src, len) != 0 ||
		    connect(fd, (struct sockaddr *)&dst, len) != 0) {
			int err = errno;

			close(fd);
			errno = err;
			fd = -1;
		}
	}
	monitor_reply_fd(fd);
}

static void
monitor_handle_pasv_listen(struct ipc_msg *m)
{
	unsigned port;

	if (ipc_get_end(m) != 0)
		monitor_abort("malformed PASV_LISTEN request");
	if (tw_rt.netns_fd < 0)
		monitor_abort("PASV_LISTEN request without isolate_network");
	monitor_reply_fd(datasock_pasv_listen(mon.cfg, &mon.local, &port));
}

static void
monitor_handle_port_connect(struct ipc_msg *m)
{
	struct sockaddr_storage dst;
	unsigned char raw[16];
	uint32_t family, word, port;
	int i;

	memset(&dst, 0, sizeof(dst));
	if (ipc_get_u32(m, &family) != 0 || (family != 4 && family != 6))
		monitor_abort("malformed PORT_CONNECT request");
	for (i = 0; i < 16; i += 4) {
		if (ipc_get_u32(m, &word) != 0)
			monitor_abort("malformed PORT_CONNECT request");
		raw[i] = (unsigned char)(word >> 24);
		raw[i + 1] = (unsigned char)(word >> 16);
		raw[i + 2] = (unsigned char)(word >> 8);
		raw[i + 3] = (unsigned char)word;
	}
	if (ipc_get_u32(m, &port) != 0 || ipc_get_end(m) != 0 || port == 0 || port > 65535)
		monitor_abort("malformed PORT_CONNECT request");
	if (tw_rt.netns_fd < 0)
		monitor_abort("PORT_CONNECT request without isolate_network");
	if (family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&dst;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, raw, 4);
		in->sin_port = htons((uint16_t)port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&dst;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, raw, 16);
		in6->sin6_port = htons((uint16_t)port);
	}
	/* The worker checked it too; a compromised worker gets no bounce. */
	if (!mon.cfg->port_promiscuous && (port < 1024 || !sa_same_host(&dst, &mon.peer))) {
		tw_log(TW_LOG_WARN, "refused a PORT_CONNECT to a foreign address from the worker of %s",
		       mon.peer_ip);
		monitor_reply_u32(IPC_FD_RESULT, EPERM, -1);
		return;
	}
	errno = 0;
	monitor_reply_fd(datasock_connect(&dst, &mon.local, mon.cfg->connect_timeout));
}

/* --- The loop --- */

static void
monitor_dispatch(struct ipc_msg *m)
{
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(permits); i++) {
		if (permits[i].type != m->type)
			continue;
		if (!(permits[i].states & mon.state))
			break;
		permits[i].handler(m);
		return;
	}
	if (m->fd >= 0)
		close(m->fd);
	tw_log(TW_LOG_WARN, "unpermitted request %s in state %s from worker of %s",
	       m->type < IPC_TYPE_COUNT ? ipc_schemas[m->type].name : "?",
	       mon.state == ST_PRELOGIN ? "pre-login" : "post-login", mon.peer_ip);
	monitor_end(MONITOR_EXIT_CRASH);
}

static void __attribute__((noreturn))
monitor_worker_gone(void)
{
	int status = 0;

	while (waitpid(mon.worker, &status, 0) < 0) {
		if (errno != EINTR) {
			status = 0;
			break;
		}
	}
	mon.worker = -1;
	monitor_kill_child(&mon.spare);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGSYS)
			tw_log(TW_LOG_ERR, "worker of %s killed by seccomp (syscall %s)",
			       mon.peer_ip, mon.last_seccomp_nr >= 0
			       ? sandbox_syscall_name(mon.last_seccomp_nr) : "unknown");
		else
			tw_log(TW_LOG_ERR, "worker of %s died of signal %d", mon.peer_ip, sig);
		/* Never leave the client hanging: a fixed line, no parsing. */
		{
			static const char msg[] =
				"421 Service not available, closing control connection.\r\n";

			(void)!send(mon.client_fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		_exit(MONITOR_EXIT_CRASH);
	}
	_exit(mon.login_fails >= mon.cfg->max_login_fails ? MONITOR_EXIT_LOGIN_FAILED
							   : MONITOR_EXIT_OK);
}

/* Learns who the client is; the monitor never reads what it sends. */
static void
monitor_attach_client(int client_fd)
{
	socklen_t len;
	const void *a;

	mon.client_fd = client_fd;
	len = sizeof(mon.peer);
	if (getpeername(client_fd, (struct sockaddr *)&mon.peer, &len) != 0)
		die("getpeername: %s", strerror(errno));
	len = sizeof(mon.local);
	if (getsockname(client_fd, (struct sockaddr *)&mon.local, &len) != 0)
		die("getsockname: %s", strerror(errno));
	a = mon.peer.ss_family == AF_INET
		? (const void *)&((struct sockaddr_in *)&mon.peer)->sin_addr
		: (const void *)&((struct sockaddr_in6 *)&mon.peer)->sin6_addr;
	inet_ntop(mon.peer.ss_family, a, mon.peer_ip, sizeof(mon.peer_ip));
}

static void
monitor_init(const struct tw_config *cfg)
{
	/* mon is static and still all zero in this fresh process (it lives
	 * in the TW_PER_PROCESS page): no memset needed. */
	mon.cfg = cfg;
	mon.client_fd = -1;
	mon.worker = -1;
	mon.spare = -1;
	mon.spare_fd = -1;
	mon.state = ST_PRELOGIN;
	mon.last_seccomp_nr = -1;
	tw_strlcpy(mon.peer_ip, "?", sizeof(mon.peer_ip));
	/* Until the login this session, and the workers it forks, run
	 * login_nice nicer than the listener (monitor_handle_login). */
	if (tw_rt.login_nice)
		session_nice(0, tw_rt.base_nice + tw_rt.login_nice);
	creds_monitor_prelogin(tw_rt.netns_fd >= 0 || tw_rt.isolate, tw_rt.login_nice != 0);
	sandbox_apply(ROLE_MONITOR_PRELOGIN, cfg);
}

static void __attribute__((noreturn))
monitor_loop(void)
{
	for (;;) {
		struct ipc_msg m;
		int rc = ipc_recv(mon.ipc_fd, &m);

		if (rc == IPC_E_EOF)
			monitor_worker_gone();
		if (rc != 0) {
			tw_log(TW_LOG_WARN, "bad IPC message from worker of %s: %s",
			       mon.peer_ip, ipc_strerror(rc));
			monitor_end(MONITOR_EXIT_CRASH);
		}
		monitor_dispatch(&m);
	}
}

void
session_run(const struct tw_config *cfg, int client_fd)
{
	monitor_init(cfg);
	monitor_attach_client(client_fd);
	mon.worker = start_prelogin_worker(&mon.ipc_fd);
	start_spare();
	monitor_loop();
}

/*
 * A client was handed to this pair, but a worker died before touching it:
 * start both workers afresh for it, as a session forked on accept would.
 */
static void __attribute__((noreturn))
pair_rebuild(void)
{
	monitor_kill_child(&mon.worker);
	close(mon.ipc_fd);
	tw_log(TW_LOG_INFO, "ready pair lost a worker; rebuilt for the client %s", mon.peer_ip);
	respawn_spare();
	mon.worker = start_prelogin_worker(&mon.ipc_fd);
	monitor_loop();
}

/*
 * A ready pair whose worker or spare died is of no use any more. It
 * refuses further hand-offs first (the listener's next send fails, and
 * it takes another pair); a client the listener handed over before that
 * still gets a whole session: the monitor starts both workers afresh
 * for it, as a session forked on accept would.
 */
static void __attribute__((noreturn))
pair_retire(int chan)
{
	struct ipc_msg m;

	/* Past the shutdown a read does not wait: it finds what was sent
	 * before, or the end. */
	if (shutdown(chan, SHUT_RD) != 0 || ipc_recv(chan, &m) != 0)
		monitor_end(MONITOR_EXIT_OK);	/* nothing was handed over */
	if (m.type != IPC_CLIENT_FD || m.fd < 0 || ipc_get_end(&m) != 0) {
		if (m.fd >= 0)
			close(m.fd);
		monitor_end(MONITOR_EXIT_OK);
	}
	close(chan);
	monitor_attach_client(m.fd);
	pair_rebuild();
}

void
session_run_pooled(const struct tw_config *cfg, int chan)
{
	struct ipc_msg m;
	int rc;

	monitor_init(cfg);
	mon.worker = start_prelogin_worker(&mon.ipc_fd);
	start_spare();
	/*
	 * Ready: wait for the listener to hand us a client. If a worker
	 * dies meanwhile this pair is useless: end it (pair_retire), and
	 * the listener (which reaps us) puts a fresh pair in the pool.
	 */
	for (;;) {
		struct pollfd p[3] = { { chan, POLLIN, 0 }, { mon.ipc_fd, POLLIN, 0 },
				       { mon.spare_fd, POLLIN, 0 } };

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			monitor_end(MONITOR_EXIT_OK);
		}
		if (p[1].revents != 0 || p[2].revents != 0) {
			tw_log(TW_LOG_WARN, "idle %s worker %d died; pair retired",
			       p[1].revents != 0 ? "pre-login" : "spare post-login",
			       (int)(p[1].revents != 0 ? mon.worker : mon.spare));
			pair_retire(chan);
		}
		if (p[0].revents != 0)
			break;
	}
	rc = ipc_recv(chan, &m);
	if (rc != 0 || m.type != IPC_CLIENT_FD || m.fd < 0 || ipc_get_end(&m) != 0) {
		if (rc == 0 && m.fd >= 0)
			close(m.fd);
		monitor_end(0);	/* the listener closed the pool or is gone */
	}
	close(chan);
	monitor_attach_client(m.fd);
	ipc_init(&m, IPC_CLIENT_FD);
	m.fd = mon.client_fd;
	/*
	 * No acknowledgement (the worker died, or its filter killed it and
	 * this is the report): it never wrote a byte to the client.
	 */
	if (ipc_send(mon.ipc_fd, &m) != 0 || ipc_recv(mon.ipc_fd, &m) != 0 ||
	    m.type != IPC_CLIENT_ACK || ipc_get_end(&m) != 0)
		pair_rebuild();
	monitor_loop();
}
