/*
 * The listener: the only long-lived root process not tied to a client.
 * It binds, accepts, enforces max_clients, max_per_ip and per-source
 * penalties before any fork, hands the connection to a ready pair of the
 * pool (src/pool.c) or a new session, reaps, ends them all on SIGTERM,
 * and never reads a byte from the network. Its sessions are in
 * src/session_table.c, its penalties in src/penalty.c.
 */
#include "src/listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "privsep/ipc.h"
#include "privsep/monitor.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/reply.h"
#include "src/common/runtime.h"
#include "src/common/sdnotify.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"
#include "src/penalty.h"
#include "src/pool.h"
#include "src/reload.h"
#include "src/session.h"
#include "src/session_table.h"
#include "src/status.h"
#include "src/upgrade.h"

/* sd_listen_fds(3): the first descriptor a service manager passes. */
#define SD_LISTEN_FDS_START 3

/* Bounded: one poll wake-up serves at most this many connections. */
#define ACCEPT_BATCH 256

int listener_proxy_chan = -1;
/* The listener's end of it: records from monitors of proxied clients. */
static int proxy_chan_in = -1;

static int
open_listen_socket(int family, const char *addr, unsigned port, int v6only)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		if (addr[0] != '\0' && inet_pton(AF_INET, addr, &in->sin_addr) != 1)
			die("listen_address %s is not an IPv4 address", addr);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		in6->sin6_addr = in6addr_any;
		if (addr[0] != '\0' && inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
			die("listen_address6 %s is not an IPv6 address", addr);
		len = sizeof(*in6);
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	/* A restart binds at once, whatever connections of the last run linger. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		die("SO_REUSEADDR: %s", strerror(errno));
	/*
	 * Set either way, whatever the system's bindv6only default: IPv6
	 * only beside an IPv4 socket (listen=YES), so both can bind the
	 * port; dual-stack alone (listen=NO, as Debian's vsftpd.conf has
	 * it), so IPv4 clients reach it as ::ffff:a.b.c.d.
	 */
	if (family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) != 0)
		die("IPV6_V6ONLY: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0)
		die("bind to %s port %u: %s", addr[0] != '\0' ? addr :
		    family == AF_INET ? "0.0.0.0" : "[::]", port, strerror(errno));
	if (listen(fd, SOMAXCONN) != 0)
		die("listen: %s", strerror(errno));
	return fd;
}

/*
 * A refused client gets its 421 through the one reply writer, then the
 * close. The connection is fresh, so its empty socket buffer takes the
 * line without the listener ever blocking on it.
 */
static void
refuse(int fd, int tls, const char *text)
{
	/*
	 * An implicit FTPS client expects a TLS handshake, which the
	 * listener (it parses no client byte) does not make: for it the
	 * close alone is the refusal, never plaintext inside its TLS.
	 */
	if (!tls)
		reply_final(fd, 421, text);
	close(fd);
}

void
listener_child_setup(int keep_fd)
{
	int keep[] = { log_fd(), log_xferlog_fd(), log_writer_fd(), keep_fd, tw_rt.netns_fd,
		       tw_rt.login_note_fd, listener_proxy_chan };
	static const int defaults[] = { SIGCHLD, SIGTERM, SIGINT };
	sigset_t none;
	size_t i;

	/* The listener alone writes other sessions' lines. */
	log_writer_close_rx();
	tw_close_fds_except(keep, TW_ARRAY_LEN(keep));
	for (i = 0; i < TW_ARRAY_LEN(defaults); i++)
		if (signal(defaults[i], SIG_DFL) == SIG_ERR)
			die("signal %d: %s", defaults[i], strerror(errno));
	/*
	 * SIGHUP reloads the listener and SIGUSR2 upgrades it; a session
	 * keeps its settings and its binary, so an operator's
	 * `killall -HUP twinftpd` must not end it either.
	 */
	if (signal(SIGHUP, SIG_IGN) == SIG_ERR || signal(SIGUSR2, SIG_IGN) == SIG_ERR)
		die("signal SIGHUP/SIGUSR2: %s", strerror(errno));
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
		die("sigprocmask: %s", strerror(errno));
	/* A session must not outlive the listener's SIGTERM or death. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
		die("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	/* The listener died before the line above: nobody would end us. */
	if (getppid() == 1)
		_exit(0);
	log_set_role("monitor");
}

static const char *const refusals[LISTENER_VERDICTS] = {
	[LISTENER_MAX_CLIENTS] = "There are too many connected users, please try later.",
	[LISTENER_FAILED_LOGINS] = "Too many failed logins from your address, try later.",
	[LISTENER_BAD_SESSIONS] = "Too many failed sessions from your address, try later.",
	[LISTENER_MAX_PER_IP] = "There are too many connections from your internet address.",
	[LISTENER_UNAVAILABLE] = "Service not available, try later.",
};

const char *
listener_refusal(uint32_t verdict)
{
	return verdict < LISTENER_VERDICTS ? refusals[verdict] : NULL;
}

/*
 * The limits of one client address, after max_clients: its penalties,
 * then max_per_ip (one more session of it would be too many).
 */
static enum listener_verdict
admit_address(const struct tw_config *cfg, const struct addr_key *key)
{
	switch (penalty_active(cfg, key)) {
	case PENALTY_NONE:
		break;
	case PENALTY_FAILED_LOGINS:
		return LISTENER_FAILED_LOGINS;
	case PENALTY_BAD_SESSIONS:
		return LISTENER_BAD_SESSIONS;
	}
	if (cfg->max_per_ip != 0 && sessions_from(key) >= cfg->max_per_ip) {
		tw_log(TW_LOG_INFO, "refused connection: max_per_ip (%u) reached",
		       cfg->max_per_ip);
		return LISTENER_MAX_PER_IP;
	}
	return LISTENER_ADMIT;
}

/*
 * The limits, in the order a client hears about them. 0 when the
 * connection may have a session, else -1 (it was refused and closed).
 * A trusted balancer's connections are many clients: their address
 * limits wait for the client's address (proxied_clients()).
 */
static int
admit(const struct tw_config *cfg, int cfd, int tls, const struct addr_key *key,
      int balancer)
{
	enum listener_verdict v = LISTENER_ADMIT;

	if (cfg->max_clients != 0 && sessions_count() >= cfg->max_clients) {
		v = LISTENER_MAX_CLIENTS;
		tw_log(TW_LOG_INFO, "refused connection: max_clients (%u) reached",
		       cfg->max_clients);
	} else if (!balancer) {
		v = admit_address(cfg, key);
	}
	if (v == LISTENER_ADMIT)
		return 0;
	refuse(cfd, tls, refusals[v]);
	return -1;
}

static void
spawn_session(const struct tw_config *cfg, int cfd, int tls,
	      const struct sockaddr_storage *peer)
{
	int balancer = tw_rt.proxy_trusted.n > 0 &&
		       sa_cidr_list_match(&tw_rt.proxy_trusted, peer);
	struct addr_key key;
	pid_t pid;

	addr_key_of(peer, &key);
	if (admit(cfg, cfd, tls, &key, balancer) != 0)
		return;
	if (pool_hand_off(cfd, &pid) == 0) {
		close(cfd);
		sessions_add(pid, &key);
		return;
	}
	pool_missed(cfg);
	pid = ns_fork(0);
	if (pid < 0) {
		refuse(cfd, tls, "Service not available, try later.");
		tw_log(TW_LOG_ERR, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		listener_child_setup(cfd);
		session_run(cfg, cfd);
	}
	close(cfd);
	sessions_add(pid, &key);
}

static void
accept_all(const struct tw_config *cfg, int lfd, int tls)
{
	int budget = ACCEPT_BATCH;

	while (budget-- > 0) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int cfd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				tw_log(TW_LOG_WARN, "accept: %s", strerror(errno));
			return;
		}
		pool_note_accept();
		spawn_session(cfg, cfd, tls, &peer);
	}
}

/* A proxied client's admission: the session's count moves to it. */
static enum listener_verdict
proxied_admit(const struct tw_config *cfg, const struct listener_proxy_rec *r)
{
	struct addr_key key;
	enum listener_verdict v;

	if (!sessions_has((pid_t)r->pid) ||
	    (r->client.ss_family != AF_INET && r->client.ss_family != AF_INET6)) {
		tw_log(TW_LOG_WARN, "proxied client record of no session (pid %d) refused",
		       (int)r->pid);
		return LISTENER_UNAVAILABLE;
	}
	addr_key_of(&r->client, &key);
	v = admit_address(cfg, &key);
	if (v == LISTENER_ADMIT)
		sessions_move((pid_t)r->pid, &key);
	return v;
}

/*
 * Records of proxied clients from their monitors (root, which parsed
 * nothing: the record is the one the monitor checked), each answered on
 * the descriptor that came with it: a fresh socketpair, whose empty
 * buffer takes the answer without the listener ever blocking.
 */
static void
proxied_clients(const struct tw_config *cfg)
{
	int budget = ACCEPT_BATCH;

	while (budget-- > 0) {
		struct listener_proxy_rec r;
		uint32_t verdict;
		int answer;

		if (ipc_recv_record(proxy_chan_in, &r, sizeof(r), 1, &answer) != 0)
			return;
		verdict = proxied_admit(cfg, &r);
		(void)ipc_send_record(answer, &verdict, sizeof(verdict), -1);
		close(answer);
	}
}

/* The channel of proxied clients, made before the listener's filter. */
static void
proxy_channel_open(void)
{
	int sv[2];

	if (ipc_socketpair(sv) != 0 || fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0)
		die("socketpair for proxied clients: %s", strerror(errno));
	proxy_chan_in = sv[0];
	listener_proxy_chan = sv[1];
}

/*
 * A session's failed logins, however it ended, and a bad end count
 * against its client's address: its monitor's exit status says both.
 */
static void
session_reaped(pid_t pid, int status, const struct tw_config *cfg)
{
	struct monitor_outcome o;
	struct addr_key addr;

	if (sessions_remove(pid, &addr) != 0) {
		pool_forget(pid);
		return;
	}
	o = monitor_outcome_of(status);
	penalty_record(cfg, &addr, o.failed_logins, o.bad);
}

static void
reap_children(const struct tw_config *cfg)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		/* Monitors end with their worker; a signal means they crashed. */
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM &&
		    WTERMSIG(status) != SIGKILL)
			tw_log(TW_LOG_ERR, "session monitor %d died of signal %d%s", (int)pid,
			       WTERMSIG(status),
			       WTERMSIG(status) == SIGSYS ? " (seccomp)" : "");
		session_reaped(pid, status, cfg);
	}
}

/*
 * SIGTERM or SIGINT: stop accepting, tell every session and ready pair to
 * end, SHUTDOWN_INFLIGHT at a time (the next once one of those has been
 * reaped), and exit when all are gone or after SHUTDOWN_SECS, when the
 * rest are told at once. Each session process frees its seccomp filters
 * as it exits, one kernel work item per filter, and 10,000 sessions told
 * at once made ~30,000 of them on this kernel's work queue at once,
 * which once deadlocked it (README).
 */
#define SHUTDOWN_INFLIGHT 64
#define SHUTDOWN_SECS 5
#define SHUTDOWN_NAP_MS 10

/* Not yet reaped, so the pid is still our child's and cannot be reused. */
static int
still_ours(pid_t pid)
{
	return sessions_has(pid) || pool_has(pid);
}

static size_t
children_left(void)
{
	return sessions_count() + pool_count();
}

/* SIGTERM to every session and ready pair not yet reaped. */
static void
tell_all(void)
{
	size_t pos = 0, i;
	pid_t pid;

	while ((pid = sessions_next(&pos)) != 0)
		kill(pid, SIGTERM);
	for (i = 0; i < pool_count(); i++)
		kill(pool_pid(i), SIGTERM);
}

/* The pids of every ready pair and session: reaping moves entries in the tables. */
static pid_t *
snapshot_children(size_t *n)
{
	pid_t *pids = malloc((children_left() ? children_left() : 1) * sizeof(*pids));
	size_t pos = 0, i;
	pid_t pid;

	*n = 0;
	if (pids == NULL)
		return NULL;
	for (i = 0; i < pool_count(); i++)
		pids[(*n)++] = pool_pid(i);
	while ((pid = sessions_next(&pos)) != 0)
		pids[(*n)++] = pid;
	return pids;
}

static void __attribute__((noreturn))
shutdown_sessions(const struct tw_config *cfg, const int *lfds, size_t nl)
{
	size_t nsess = sessions_count(), npool = pool_count();
	size_t total = nsess + npool, n, told = 0, i;
	long long deadline = tw_mono_ms() + SHUTDOWN_SECS * 1000LL;
	pid_t *pids;

	sdnotify("STOPPING=1");
	for (i = 0; i < nl; i++)
		close(lfds[i]);
	pool_stop();
	pids = snapshot_children(&n);
	if (pids == NULL) {
		tell_all();
		tw_log(TW_LOG_WARN, "listener stopped: no memory to end %zu sessions in batches; "
		       "all told at once", nsess);
		exit(0);
	}
	tw_log(TW_LOG_INFO, "listener stopping: %zu sessions and %zu ready pairs to end, "
	       "%d at a time", nsess, npool, SHUTDOWN_INFLIGHT);
	/* Bounded: SHUTDOWN_SECS of SHUTDOWN_NAP_MS naps. */
	while (children_left() > 0 && tw_mono_ms() < deadline) {
		size_t gone = total - children_left();

		/* Some end by themselves meanwhile: gone may pass told. */
		while (told < n && told < gone + SHUTDOWN_INFLIGHT) {
			if (still_ours(pids[told]))
				kill(pids[told], SIGTERM);
			told++;
		}
		(void)poll(NULL, 0, SHUTDOWN_NAP_MS);
		reap_children(cfg);
	}
	if (children_left() == 0) {
		tw_log(TW_LOG_INFO, "listener stopped: all %zu sessions and %zu ready pairs ended",
		       nsess, npool);
		exit(0);
	}
	/*
	 * Out of time: tell the rest at once. Logged-in monitors changed
	 * their uid, which cleared their parent-death signal, so the
	 * listener's exit alone would not end them.
	 */
	tell_all();
	tw_log(TW_LOG_WARN, "listener stopped after %d s: %zu sessions and %zu ready pairs "
	       "still ending", SHUTDOWN_SECS, sessions_count(), pool_count());
	exit(0);
}

/*
 * The name LISTEN_FDNAMES gives descriptor i (colon-separated), in out;
 * "" when it names none.
 */
static void
fd_name(const char *names, size_t i, char *out, size_t len)
{
	const char *p = names, *end;

	out[0] = '\0';
	for (; i > 0; i--) {
		p = strchr(p, ':');
		if (p == NULL)
			return;
		p++;
	}
	end = strchr(p, ':');
	if (end == NULL)
		end = p + strlen(p);
	if ((size_t)(end - p) < len) {
		memcpy(out, p, (size_t)(end - p));
		out[end - p] = '\0';
	}
}

/*
 * Sockets a service manager bound for us (systemd's socket activation,
 * sd_listen_fds(3)), or the listener before an upgrade handed over:
 * LISTEN_FDS descriptors from 3 on, meant for us when LISTEN_PID is our
 * pid. Each must be a listening stream socket; each serves as
 * listen_port would (implicit FTPS with implicit_ssl), except those an
 * upgrade names (LISTEN_FDNAMES, src/upgrade.h): implicit FTPS or not as
 * they were, and the status socket. The variables are removed so that
 * no session sees them. 1 when they are in ls, 0 when there are none.
 */
static int
inherited_sockets(const struct tw_config *cfg, struct listen_socks *ls)
{
	const char *pid_s = getenv("LISTEN_PID"), *n_s = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	unsigned long n;
	char *end;
	int fd;

	ls->n = 0;
	ls->inherited = 0;
	if (pid_s == NULL || n_s == NULL)
		return 0;
	if (strtol(pid_s, &end, 10) != (long)getpid() || *end != '\0')
		return 0;
	n = strtoul(n_s, &end, 10);
	if (*end != '\0' || n == 0)
		return 0;
	if (n > LISTEN_SOCKS_MAX + 1)
		die("LISTEN_FDS=%lu: at most %d listening sockets", n, LISTEN_SOCKS_MAX);
	for (fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + (int)n; fd++) {
		int type = 0, acc = 0, fl;
		socklen_t len = sizeof(type);
		char name[32];

		fd_name(names != NULL ? names : "", (size_t)(fd - SD_LISTEN_FDS_START), name,
			sizeof(name));
		if (strcmp(name, UPGRADE_NAME_STATUS) == 0 && ls->status_fd < 0) {
			ls->status_fd = fd;
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
		    type != SOCK_STREAM ||
		    (len = sizeof(acc), getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len)) != 0 ||
		    !acc)
			die("LISTEN_FDS: descriptor %d is not a listening stream socket "
			    "(with listen=YES the socket unit needs Accept=no)", fd);
		if (ls->n == LISTEN_SOCKS_MAX)
			die("LISTEN_FDS=%lu: at most %d listening sockets", n, LISTEN_SOCKS_MAX);
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
			die("LISTEN_FDS: descriptor %d: %s", fd, strerror(errno));
		ls->implicit_tls[ls->n] = strcmp(name, UPGRADE_NAME_FTPS) == 0 ? 1 :
					  strcmp(name, UPGRADE_NAME_FTP) == 0 ? 0 : cfg->implicit_ssl;
		ls->fd[ls->n++] = fd;
	}
	if (ls->n == 0)
		die("LISTEN_FDS: no listening socket for FTP among the %lu passed", n);
	ls->inherited = 1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 1;
}

void
listener_bind(const struct tw_config *cfg, struct listen_socks *ls)
{
	unsigned ports[2] = { cfg->listen_port, cfg->implicit_ssl_port };
	size_t i;

	ls->status_fd = -1;
	if (inherited_sockets(cfg, ls) == 0) {
		/* The status socket first: once the FTP port listens (what a
		 * script or a test waits for), `twinftpd -S` can connect too. */
		ls->status_fd = status_socket_open(cfg->status_socket, -1);
		for (i = 0; i < 2 && ports[i] != 0; i++) {
			int tls = cfg->implicit_ssl || i == 1;

			if (cfg->listen) {
				ls->implicit_tls[ls->n] = tls;
				ls->fd[ls->n++] = open_listen_socket(AF_INET, cfg->listen_address,
								     ports[i], 0);
			}
			if (cfg->listen_ipv6) {
				ls->implicit_tls[ls->n] = tls;
				ls->fd[ls->n++] = open_listen_socket(AF_INET6, cfg->listen_address6,
								     ports[i], cfg->listen);
			}
		}
	} else {
		ls->status_fd = status_socket_open(cfg->status_socket, ls->status_fd);
	}
}

/* SIGCHLD, SIGTERM, SIGINT, SIGHUP and SIGUSR2 come through a descriptor the loop polls. */
static int
signals_to_fd(void)
{
	sigset_t mask;
	int sigfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		die("sigprocmask: %s", strerror(errno));
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		die("signalfd: %s", strerror(errno));
	return sigfd;
}

/*
 * The listener's own state beside its tables: its sockets (closed when
 * it hands over to a new listener) and the upgrade's progress.
 */
static struct {
	struct listen_socks socks;
	int note_fd;			/* login notes from monitors (SO_PASSCRED) */
	enum { UPG_IDLE, UPG_STARTING, UPG_HANDED_OVER } upgrade;
	pid_t successor;
} L = { .note_fd = -1 };

/* Bounded: one wake-up reads at most this many login notes. */
#define NOTE_BATCH 256

/*
 * Who logged in, from each monitor (struct session_login_note): the
 * sender's pid is the kernel's (SCM_CREDENTIALS), never the message's.
 * Read before reaping, so that a note of a session that just ended is
 * dropped, not given to a new session with a reused pid.
 */
static void
read_login_notes(void)
{
	int budget = NOTE_BATCH;

	while (L.note_fd >= 0 && budget-- > 0) {
		struct session_login_note note;
		int pid;
		long r = tw_recv_vouched(L.note_fd, &note, sizeof(note), &pid);

		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return;
		if (r != (long)sizeof(note))
			continue;
		/* Shown on an operator's terminal: no control characters. */
		log_clean(note.user, sizeof(note.user), note.user, sizeof(note.user) - 1);
		sessions_set_login((pid_t)pid, note.user, note.anonymous != 0);
	}
}

/*
 * At start, before any fork: the socket monitors send their login note on.
 * A datagram socket queues only net.unix.max_dgram_qlen (10) messages, so
 * a burst of logins waits for the listener to read (it does between any
 * two events) rather than lose names; NOTE_SEND_TIMEOUT_MS bounds that
 * wait should the listener be stuck.
 */
#define NOTE_SEND_TIMEOUT_MS 1000

static void
login_notes_open(void)
{
	struct timeval tv = { NOTE_SEND_TIMEOUT_MS / 1000, (NOTE_SEND_TIMEOUT_MS % 1000) * 1000 };
	int sv[2], one = 1;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0 || shutdown(sv[1], SHUT_RD) != 0)
		die("socketpair for login notes: %s", strerror(errno));
	L.note_fd = sv[0];
	tw_rt.login_note_fd = sv[1];
}

/*
 * The new listener is ready: stop accepting (it accepts on the same
 * sockets), end the ready pairs, and wait for the sessions to end.
 */
static void
hand_over(pid_t successor)
{
	char note[128];
	size_t i;

	tw_log(TW_LOG_INFO, "upgrade: new listener pid %d is ready; this listener stops "
	       "accepting and exits once its %zu sessions have ended", (int)successor,
	       sessions_count());
	for (i = 0; i < L.socks.n; i++)
		close(L.socks.fd[i]);
	L.socks.n = 0;
	status_stop(0);
	pool_drain();
	upgrade_helper_stop();
	/* The service manager now follows the new listener (MAINPID). */
	sdnotify_close();
	L.upgrade = UPG_HANDED_OVER;
	L.successor = successor;
	(void)snprintf(note, sizeof(note), "handed over to pid %d", (int)successor);
	status_set_upgrade_note(note);
}

static void
upgrade_on_signal(void)
{
	if (L.upgrade == UPG_STARTING) {
		tw_log(TW_LOG_WARN, "SIGUSR2 ignored: an upgrade is in progress (new listener "
		       "pid %d not ready yet)", (int)L.successor);
		return;
	}
	if (L.upgrade == UPG_HANDED_OVER) {
		tw_log(TW_LOG_WARN, "SIGUSR2 ignored: this listener handed over to pid %d and "
		       "waits for its %zu sessions to end", (int)L.successor, sessions_count());
		return;
	}
	if (upgrade_request() != 0)
		return;
	L.upgrade = UPG_STARTING;
	L.successor = 0;
	status_set_upgrade_note("in progress: new listener starting");
}

static void
upgrade_on_event(void)
{
	char note[128];
	pid_t pid = 0;

	switch (upgrade_read_event(&pid)) {
	case UPGRADE_NOTHING:
		break;
	case UPGRADE_STARTED:
		L.successor = pid;
		(void)snprintf(note, sizeof(note), "in progress: new listener pid %d starting",
			       (int)pid);
		status_set_upgrade_note(note);
		break;
	case UPGRADE_READY:
		hand_over(pid);
		break;
	case UPGRADE_FAILED:
	case UPGRADE_HELPER_GONE:
		if (L.upgrade == UPG_STARTING) {
			L.upgrade = UPG_IDLE;
			status_set_upgrade_note("");
		}
		break;
	}
}

/*
 * Drains every pending signal, then reaps once (a batch of SIGCHLDs is
 * one wake-up) and reloads once (however many SIGHUPs came meanwhile).
 */
static void
handle_signals(struct tw_config *cfg, int sigfd)
{
	struct signalfd_siginfo si;
	int got_child = 0, got_hup = 0, got_usr2 = 0;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			got_child = 1;
		else if (si.ssi_signo == SIGHUP)
			got_hup = 1;
		else if (si.ssi_signo == SIGUSR2)
			got_usr2 = 1;
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			/* Stopping means stopping: not a new listener serving on. */
			if (L.upgrade == UPG_STARTING && L.successor > 0) {
				tw_log(TW_LOG_INFO, "upgrade abandoned: ending the new "
				       "listener pid %d", (int)L.successor);
				kill(L.successor, SIGTERM);
			}
			status_stop(L.upgrade != UPG_HANDED_OVER);
			shutdown_sessions(cfg, L.socks.fd, L.socks.n);
		}
	}
	if (got_child) {
		read_login_notes();
		reap_children(cfg);
	}
	if (got_hup && L.upgrade == UPG_HANDED_OVER)
		tw_log(TW_LOG_WARN, "SIGHUP ignored: this listener handed over to pid %d",
		       (int)L.successor);
	else if (got_hup)
		listener_reload(cfg);
	if (got_usr2)
		upgrade_on_signal();
}

/* What the helper is given to hand over: the sockets, named (src/upgrade.h). */
static void
upgrade_helper_for(const struct listen_socks *ls)
{
	int fds[LISTEN_SOCKS_MAX + 1];
	const char *names[LISTEN_SOCKS_MAX + 1];
	size_t i, n = 0;

	for (i = 0; i < ls->n; i++) {
		fds[n] = ls->fd[i];
		names[n++] = ls->implicit_tls[i] ? UPGRADE_NAME_FTPS : UPGRADE_NAME_FTP;
	}
	if (ls->status_fd >= 0) {
		fds[n] = ls->status_fd;
		names[n++] = UPGRADE_NAME_STATUS;
	}
	upgrade_helper_give(fds, names, n);
}

static void
log_listening(const struct tw_config *cfg, const struct listen_socks *ls)
{
	const char *tls = !cfg->ssl_enable ? "" : cfg->implicit_ssl ? ", implicit FTPS"
								  : ", FTPS (AUTH TLS)";

	if (ls->inherited && upgrade_is_successor())
		tw_log(TW_LOG_INFO, "twinftpd listening on %zu socket%s handed over by the "
		       "listener before the upgrade (SIGUSR2)%s", ls->n, ls->n == 1 ? "" : "s", tls);
	else if (ls->inherited)
		tw_log(TW_LOG_INFO, "twinftpd listening on %zu socket%s from the service "
		       "manager (LISTEN_FDS; listen_address, listen_port and "
		       "implicit_ssl_port unused)%s", ls->n, ls->n == 1 ? "" : "s", tls);
	else
		tw_log(TW_LOG_INFO, "twinftpd listening on port %u (%s%s%s)%s", cfg->listen_port,
		       cfg->listen ? "IPv4" : "", cfg->listen && cfg->listen_ipv6 ? ", " : "",
		       cfg->listen_ipv6 ? "IPv6" : "", tls);
	if (!ls->inherited && cfg->implicit_ssl_port != 0)
		tw_log(TW_LOG_INFO, "implicit FTPS on port %u", cfg->implicit_ssl_port);
}

/* Room in the poll set: the sockets, signals, notes, proxied clients, log
 * records, the helper, the status socket and its clients. */
#define POLL_MAX (LISTEN_SOCKS_MAX + 5 + 1 + STATUS_CLIENTS_MAX)

void
listener_run(struct tw_config *cfg, const struct listen_socks *ls)
{
	struct pollfd pfd[POLL_MAX];
	int sigfd;

	log_set_role("listener");
	L.socks = *ls;
	/* First: a SIGHUP or SIGTERM from now on is queued, not fatal. */
	sigfd = signals_to_fd();
	/* Before the filter (which forbids execve) and before any session. */
	upgrade_helper_for(ls);
	login_notes_open();
	sessions_init();
	proxy_channel_open();
	pool_init(cfg);
	status_start(ls->status_fd);
	sandbox_apply(ROLE_LISTENER, cfg);
	log_listening(cfg, ls);
	if (upgrade_is_successor()) {
		/* Some ready pairs before the old listener stops taking clients. */
		(void)pool_refill(cfg);
		tw_log(TW_LOG_INFO, "upgrade: ready; the listener before this one stops accepting");
	}
	sdnotify_ready();
	upgrade_signal_ready();

	for (;;) {
		/* Refill between events; poll without waiting while short. */
		int wait_ms = status_poll_timeout(pool_refill(cfg));
		size_t n = 0, i, sig_i, note_i, proxy_i, lw_i, st_i, nst;
		int up_i = -1;

		for (i = 0; i < L.socks.n; i++) {
			pfd[n].fd = L.socks.fd[i];
			pfd[n++].events = POLLIN;
		}
		sig_i = n;
		pfd[n].fd = sigfd;
		pfd[n++].events = POLLIN;
		note_i = n;
		pfd[n].fd = L.note_fd;
		pfd[n++].events = POLLIN;
		proxy_i = n;
		pfd[n].fd = proxy_chan_in;
		pfd[n++].events = POLLIN;
		/* The lines of logged-in sessions (log.h: the log writer). */
		lw_i = n;
		pfd[n].fd = log_writer_rx_fd();
		pfd[n++].events = POLLIN;
		if (upgrade_helper_fd() >= 0) {
			up_i = (int)n;
			pfd[n].fd = upgrade_helper_fd();
			pfd[n++].events = POLLIN;
		}
		st_i = n;
		nst = status_pollfds(&pfd[n], POLL_MAX - n);
		n += nst;
		if (poll(pfd, n, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[lw_i].revents & POLLIN)
			log_writer_serve();
		if (pfd[note_i].revents & POLLIN)
			read_login_notes();
		if (pfd[sig_i].revents & POLLIN)
			handle_signals(cfg, sigfd);
		/* Before new connections: a client waits for each answer. */
		if (pfd[proxy_i].revents & POLLIN)
			proxied_clients(cfg);
		if (up_i >= 0 && pfd[up_i].revents != 0)
			upgrade_on_event();
		/* hand_over() may have closed them: only the ones polled, if still open. */
		for (i = 0; i < sig_i && i < L.socks.n; i++)
			if (pfd[i].revents & POLLIN)
				accept_all(cfg, L.socks.fd[i], L.socks.implicit_tls[i]);
		if (L.upgrade != UPG_HANDED_OVER)
			status_events(&pfd[st_i], nst, cfg);
		if (L.upgrade == UPG_HANDED_OVER && sessions_count() == 0) {
			tw_log(TW_LOG_INFO, "upgrade: the last session of this listener ended; "
			       "pid %d serves on, this one exits", (int)L.successor);
			exit(0);
		}
	}
}
