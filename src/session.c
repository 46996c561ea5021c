/*
 * Starting a session's processes: the monitor (this process), its
 * pre-login worker, and the spare that becomes the post-login worker at
 * the login; rebuilding a pre-forked pair that lost a process. What the
 * monitor answers, and when, is privsep/monitor.c's.
 */
#include "src/session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "privsep/auth.h"
#include "privsep/ipc.h"
#include "privsep/monitor.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/reply.h"
#include "src/common/runtime.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"
#include "src/listener.h"
#include "src/tcpwrap.h"
#include "src/tls.h"
#include "src/worker.h"

/* The pre-login worker's umask: it writes no file, and must not. */
#define PRELOGIN_WORKER_UMASK 077

/* The session of this process: written after every fork, TW_PER_PROCESS (util.h). */
static struct monitor mon TW_PER_PROCESS;

/*
 * The monitor's go to the spare, once the connection is its own: with
 * the facts of the connection, which a TLS session's worker cannot ask
 * its socket (its end is the relay's socketpair).
 */
struct session_go {
	uint32_t login_flags;		/* IPC_LOGIN_TLS, IPC_LOGIN_PROT_P */
	struct sockaddr_storage peer, local;
};

/* The channel to the listener is used once, by a proxied session's monitor. */
static void
session_drop_listener_chan(void)
{
	if (listener_proxy_chan >= 0)
		close(listener_proxy_chan);
	listener_proxy_chan = -1;
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
	/* Without it a worker could outlive its monitor (invariant 3). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		die("PR_SET_PDEATHSIG: %s", strerror(errno));
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
		.umask = PRELOGIN_WORKER_UMASK,
	};

	pid = fork_session_child(mon.client_fd, ipc_out);
	if (pid > 0)
		return pid;
	fd = *ipc_out;
	/* As root, before the chroot: the handshake's key (tls.h). */
	tls_load_key(mon.cfg);
	creds_become(&t);
	session_child_tie(parent);
	ipc_report_violations_to(fd);
	sandbox_apply(ROLE_WORKER_PRELOGIN, mon.cfg);
	worker_prelogin_run(mon.cfg, mon.client_fd, fd);
}

/*
 * session_support: the limits the PAM session set (pam_limits), taken
 * while this process is still root; none can be above what the PAM
 * child had (it holds no CAP_SYS_RESOURCE either, and pam_limits fails
 * the session when it cannot set one). Not those the sandbox sets for
 * every worker after the uid change (creds_become: processes, open
 * files, core size): a lower open-files hard limit would make that
 * fail. A file size limit makes an upload's write fail (EFBIG, a 451),
 * not kill the session: SIGXFSZ is ignored (main.c).
 */
static void
spare_rlimits(const struct auth_user *u)
{
	unsigned r;

	for (r = 0; r < AUTH_RLIMITS; r++)
		if ((u->rlim_set & (1U << r)) != 0 && r != RLIMIT_NPROC && r != RLIMIT_NOFILE &&
		    r != RLIMIT_CORE)
			(void)setrlimit((int)r, &u->rlim[r]);
}

/*
 * The spare, in its own process: waits as root (under the monitor's
 * filter, holding nothing but its IPC socket) for the monitor's
 * hand-over, then becomes the user and serves the session. The record
 * comes from the root monitor, and is checked all the same.
 */
static void __attribute__((noreturn))
spare_run(const struct tw_config *cfg, int fd, pid_t parent)
{
	struct auth_user *u = tw_scratch_alloc(sizeof(*u));
	struct worker_login wl;
	struct session_go go;
	const unsigned char alive = 1;
	int client_fd, none;

	/* Resumption needs the ticket keys only: no key (tls.h). */
	tls_data_ctx_init(cfg);
	if (ipc_recv_record(fd, u, sizeof(*u), 1, &client_fd) != 0)
		_exit(0);	/* the session ended before a login */
	/* Alive: see hand_to_spare. */
	if (ipc_send_record(fd, &alive, sizeof(alive), -1) != 0)
		_exit(0);
	if (auth_user_check(u) != 0)
		bug("the monitor handed over an unsound login record");
	if (u->own_config) {
		/* The login's per-user options (user_config_dir): this
		 * session's for good, so never freed. */
		struct tw_config *own = tw_scratch_alloc(sizeof(*own));

		if (ipc_recv_record(fd, own, sizeof(*own), 0, &none) != 0)
			_exit(0);
		if (config_record_check(own) != 0)
			bug("the monitor handed over unsound per-user options");
		cfg = own;
	}
	spare_rlimits(u);
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
	memset(&wl, 0, sizeof(wl));
	tw_strlcpy(wl.user, u->name, sizeof(wl.user));
	wl.anonymous = u->anonymous;
	wl.chrooted = u->chroot_dir[0] != '\0';
	tw_scratch_free(u, sizeof(*u));
	ipc_report_violations_to(fd);
	/* An anonymous session's own policy: no chmod, and writes only as
	 * far as the anon_* switches go. */
	sandbox_apply(wl.anonymous ? ROLE_WORKER_POSTLOGIN_ANON : ROLE_WORKER_POSTLOGIN, cfg);
	/*
	 * The monitor says go once the pre-login worker is dead: until then
	 * this process must not touch the connection. It set itself up
	 * meanwhile, filter and all, in parallel with that worker's exit.
	 */
	if (ipc_recv_record(fd, &go, sizeof(go), 0, &none) != 0)
		_exit(0);
	wl.tls = (go.login_flags & IPC_LOGIN_TLS) != 0;
	wl.prot_private = (go.login_flags & IPC_LOGIN_PROT_P) != 0;
	wl.peer = go.peer;
	wl.local = go.local;
	worker_postlogin_run(cfg, client_fd, fd, &wl);
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
	spare_run(mon.cfg, fd, parent);
}

/* The spare died (it never touched the client): a new one. */
static void
respawn_spare(void)
{
	(void)monitor_kill_child(&mon.spare);
	close(mon.spare_fd);
	start_spare();
}

/*
 * The login's hand-over (struct monitor's hand_over): the pre-login
 * worker has nothing left to do. The spare becomes the user while it
 * dies, and may touch the control connection only once it is dead.
 */
/* The user record and the connection (or the relay's channel) to the spare. */
static int
spare_takes(struct monitor *m, int conn_fd)
{
	unsigned char ack;
	int none;

	if (ipc_send_record(m->spare_fd, m->user, sizeof(*m->user), conn_fd) != 0)
		return -1;
	return ipc_recv_record(m->spare_fd, &ack, sizeof(ack), 0, &none);
}

/*
 * The spare answers the record before it does anything else: a spare
 * killed a moment ago (SIGKILL pending, not yet gone, so the send still
 * succeeds) never answers, and a new one takes the login instead of the
 * session ending with it.
 */
static int
hand_to_spare(struct monitor *m, int conn_fd)
{
	if (spare_takes(m, conn_fd) != 0) {
		respawn_spare();
		if (spare_takes(m, conn_fd) != 0)
			return -1;
	}
	/* The login's per-user options, which the spare did not inherit. */
	if (m->user->own_config &&
	    ipc_send_record(m->spare_fd, m->cfg, sizeof(*m->cfg), -1) != 0)
		return -1;
	return 0;
}

/*
 * Over TLS the connection stays with the pre-login worker, which holds
 * its TLS session: it becomes the relay, and the spare gets the other
 * end of a cleartext channel. The relay's end rides on its LOGIN's OK.
 */
static int
hand_over_tls(struct monitor *m)
{
	struct ipc_msg msg;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		tw_log(TW_LOG_ERR, "socketpair: %s", strerror(errno));
		return -1;
	}
	rc = hand_to_spare(m, sv[1]);
	if (rc == 0) {
		ipc_init(&msg, IPC_LOGIN_RESULT);
		ipc_put_u32(&msg, IPC_LOGIN_OK);
		msg.fd = sv[0];
		rc = ipc_send(m->ipc_fd, &msg);
	}
	close(sv[0]);
	close(sv[1]);
	if (rc != 0)
		return -1;
	if (tw_rt.login_nice)
		session_nice(m->worker, tw_rt.base_nice);
	/* The relay asks for nothing more: its channel is read only for
	 * a SIGSYS report once it is gone (monitor_end). */
	m->relay = m->worker;
	m->relay_fd = m->ipc_fd;
	m->worker = -1;
	return 0;
}

/* Who logged in, to the listener (struct session_login_note); best effort. */
static void
session_note_login(const struct monitor *m)
{
	struct session_login_note note;

	if (tw_rt.login_note_fd < 0)
		return;
	memset(&note, 0, sizeof(note));
	(void)tw_strlcpy(note.user, m->login_name, sizeof(note.user));
	note.anonymous = m->login_anonymous != 0;
	/*
	 * Waits (a bounded while: SO_SNDTIMEO, set by the listener) while a
	 * burst of logins fills the socket; a listener that does not read
	 * then, or is gone, costs only the name in -S.
	 */
	(void)!send(tw_rt.login_note_fd, &note, sizeof(note), MSG_NOSIGNAL);
	/*
	 * Nothing of the listener's stays in a process that becomes the
	 * user. tw_rt is left as it is: a write would make its page private
	 * memory of every logged-in monitor, and a login happens once.
	 */
	close(tw_rt.login_note_fd);
}

static int
session_hand_over(struct monitor *m)
{
	struct session_go go;

	session_note_login(m);

	memset(&go, 0, sizeof(go));
	/* A proxied session used it; none may keep it past the login. */
	session_drop_listener_chan();
	go.login_flags = m->login_flags;
	go.peer = m->peer;
	go.local = m->local;
	if (!(m->login_flags & IPC_LOGIN_TLS))
		(void)kill(m->worker, SIGKILL);
	/* Logged in: back to the listener's priority, the spare before it
	 * starts (it is still root, like us). */
	if (tw_rt.login_nice) {
		session_nice(m->spare, tw_rt.base_nice);
		session_nice(0, tw_rt.base_nice);
	}
	if (m->login_flags & IPC_LOGIN_TLS) {
		if (hand_over_tls(m) != 0)
			return -1;
	} else {
		if (hand_to_spare(m, m->client_fd) != 0)
			return -1;
		(void)monitor_kill_child(&m->worker);
		close(m->ipc_fd);
	}
	if (ipc_send_record(m->spare_fd, &go, sizeof(go), -1) != 0)
		return -1;
	m->worker = m->spare;
	m->ipc_fd = m->spare_fd;
	m->spare = -1;
	m->spare_fd = -1;
	return 0;
}

/*
 * The listener's admission of the client a balancer's header named
 * (struct monitor's proxy_admit): one record to it, one answer back on
 * a channel of our own. NULL, or the 421's text.
 */
#define PROXY_ADMIT_TIMEOUT_MS 10000

/* What tcp_wrappers=YES answers a refused client (vsftpd's words). */
#define TCPWRAP_REFUSAL "Service not available."

/* tcp_wrappers' verdict on the session's peer: NULL, or the 421's text. */
static const char *
session_tcpwrap_admit(struct monitor *m)
{
	return m->cfg->tcp_wrappers && !tcpwrap_allows(&m->peer, &m->local) ? TCPWRAP_REFUSAL
									     : NULL;
}

static const char *
session_proxy_admit(struct monitor *m)
{
	struct listener_proxy_rec r;
	struct pollfd p;
	uint32_t verdict = LISTENER_UNAVAILABLE;
	const char *refusal = session_tcpwrap_admit(m);
	int sv[2], none, rc;

	if (refusal != NULL)
		return refusal;
	if (listener_proxy_chan < 0)
		return NULL;	/* inetd mode: no listener, no limits to keep */
	if (ipc_socketpair(sv) != 0) {
		session_drop_listener_chan();
		return listener_refusal(LISTENER_UNAVAILABLE);
	}
	memset(&r, 0, sizeof(r));
	r.pid = (int32_t)getpid();
	r.client = m->peer;
	rc = ipc_send_record(listener_proxy_chan, &r, sizeof(r), sv[1]);
	session_drop_listener_chan();
	close(sv[1]);
	p.fd = sv[0];
	p.events = POLLIN;
	/* Bounded: a listener that does not answer is a refusal. */
	if (rc == 0 && poll(&p, 1, PROXY_ADMIT_TIMEOUT_MS) == 1 &&
	    ipc_recv_record(sv[0], &verdict, sizeof(verdict), 0, &none) != 0)
		verdict = LISTENER_UNAVAILABLE;
	close(sv[0]);
	if (verdict != LISTENER_ADMIT && listener_refusal(verdict) == NULL)
		verdict = LISTENER_UNAVAILABLE;
	return listener_refusal(verdict);
}

static void session_end(int code) __attribute__((noreturn));

/* Learns who the client is; the monitor never reads what it sends. */
static void
session_attach_client(int client_fd)
{
	struct sockaddr_storage peer;
	socklen_t len;

	mon.client_fd = client_fd;
	len = sizeof(peer);
	if (getpeername(client_fd, (struct sockaddr *)&peer, &len) != 0)
		die("getpeername: %s", strerror(errno));
	len = sizeof(mon.local);
	if (getsockname(client_fd, (struct sockaddr *)&mon.local, &len) != 0)
		die("getsockname: %s", strerror(errno));
	sa_unmap_v4(&mon.local);
	monitor_set_peer(&mon, &peer);
	/* A balancer's: its header names the client (session_proxy_admit). */
	if (sa_cidr_list_match(&tw_rt.proxy_trusted, &mon.peer))
		return;
	/* Not a balancer's: this session has nothing to tell the listener. */
	session_drop_listener_chan();
	/* tcp_wrappers: before a worker says a word to the client. */
	if (session_tcpwrap_admit(&mon) != NULL) {
		tw_log(TW_LOG_INFO, "tcp_wrappers: refused Client \"%s\"", mon.peer_ip);
		if (!config_implicit_tls(mon.cfg, sa_port(&mon.local)))
			reply_final(mon.client_fd, 421, TCPWRAP_REFUSAL);
		session_end(MONITOR_EXIT_OK);
	}
}

/* This process becomes the session's monitor, confined as before login. */
static void
session_monitor_init(const struct tw_config *cfg)
{
	monitor_init(&mon, cfg);
	/* Before the workers are forked: both must seal and open the same tickets. */
	tls_session_keys_new();
	mon.hand_over = session_hand_over;
	mon.proxy_admit = session_proxy_admit;
	mon.unnamed_admit = session_tcpwrap_admit;
	/* Until the login this session, and the workers it forks, run
	 * login_nice nicer than the listener (session_hand_over). */
	if (tw_rt.login_nice)
		session_nice(0, tw_rt.base_nice + tw_rt.login_nice);
	creds_monitor_prelogin(tw_rt.netns_fd >= 0 || tw_rt.isolate, tw_rt.login_nice != 0,
			       cfg->chown_uploads);
	sandbox_apply(ROLE_MONITOR_PRELOGIN, cfg);
}

static void __attribute__((noreturn))
session_end(int code)
{
	_exit(monitor_exit_code(&mon, monitor_end(&mon, code)));
}

void
session_run(const struct tw_config *cfg, int client_fd)
{
	session_monitor_init(cfg);
	session_attach_client(client_fd);
	mon.worker = start_prelogin_worker(&mon.ipc_fd);
	start_spare();
	_exit(monitor_exit_code(&mon, monitor_serve(&mon)));
}

/*
 * A client was handed to this pair, but a worker died before touching it:
 * start both workers afresh for it, as a session forked on accept would.
 */
static void __attribute__((noreturn))
pair_rebuild(void)
{
	(void)monitor_kill_child(&mon.worker);
	close(mon.ipc_fd);
	tw_log(TW_LOG_INFO, "ready pair lost a worker; rebuilt for the client %s", mon.peer_ip);
	respawn_spare();
	mon.worker = start_prelogin_worker(&mon.ipc_fd);
	_exit(monitor_exit_code(&mon, monitor_serve(&mon)));
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
		session_end(MONITOR_EXIT_OK);	/* nothing was handed over */
	if (m.type != IPC_CLIENT_FD || m.fd < 0 || ipc_get_end(&m) != 0) {
		if (m.fd >= 0)
			close(m.fd);
		session_end(MONITOR_EXIT_OK);
	}
	close(chan);
	session_attach_client(m.fd);
	pair_rebuild();
}

/* Waits for the listener's hand-off on chan while both workers live. */
static void
pair_wait_ready(int chan)
{
	enum { POLL_CHAN, POLL_WORKER, POLL_SPARE, POLL_COUNT };

	for (;;) {
		struct pollfd p[POLL_COUNT] = {
			[POLL_CHAN] = { chan, POLLIN, 0 },
			[POLL_WORKER] = { mon.ipc_fd, POLLIN, 0 },
			[POLL_SPARE] = { mon.spare_fd, POLLIN, 0 },
		};

		if (poll(p, POLL_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			session_end(MONITOR_EXIT_OK);
		}
		if (p[POLL_WORKER].revents != 0 || p[POLL_SPARE].revents != 0) {
			int worker = p[POLL_WORKER].revents != 0;

			tw_log(TW_LOG_WARN, "idle %s worker %d died; pair retired",
			       worker ? "pre-login" : "spare post-login",
			       (int)(worker ? mon.worker : mon.spare));
			pair_retire(chan);
		}
		if (p[POLL_CHAN].revents != 0)
			return;
	}
}

void
session_run_pooled(const struct tw_config *cfg, int chan)
{
	struct ipc_msg m;
	int rc;

	session_monitor_init(cfg);
	mon.worker = start_prelogin_worker(&mon.ipc_fd);
	start_spare();
	/*
	 * Ready: wait for the listener to hand us a client. If a worker
	 * dies meanwhile this pair is useless: end it (pair_retire), and
	 * the listener (which reaps us) puts a fresh pair in the pool.
	 */
	pair_wait_ready(chan);
	rc = ipc_recv(chan, &m);
	if (rc != 0 || m.type != IPC_CLIENT_FD || m.fd < 0 || ipc_get_end(&m) != 0) {
		if (rc == 0 && m.fd >= 0)
			close(m.fd);
		session_end(MONITOR_EXIT_OK);	/* the listener closed the pool or is gone */
	}
	close(chan);
	session_attach_client(m.fd);
	ipc_init(&m, IPC_CLIENT_FD);
	m.fd = mon.client_fd;
	/*
	 * No acknowledgement (the worker died, or its filter killed it and
	 * this is the report): it never wrote a byte to the client.
	 */
	if (ipc_send(mon.ipc_fd, &m) != 0 || ipc_recv(mon.ipc_fd, &m) != 0 ||
	    m.type != IPC_CLIENT_ACK || ipc_get_end(&m) != 0)
		pair_rebuild();
	_exit(monitor_exit_code(&mon, monitor_serve(&mon)));
}
