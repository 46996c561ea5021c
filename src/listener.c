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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "privsep/monitor.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/reply.h"
#include "src/common/runtime.h"
#include "src/common/sdnotify.h"
#include "src/common/util.h"
#include "src/penalty.h"
#include "src/pool.h"
#include "src/reload.h"
#include "src/session.h"
#include "src/session_table.h"

/* sd_listen_fds(3): the first descriptor a service manager passes. */
#define SD_LISTEN_FDS_START 3

/* Bounded: one poll wake-up serves at most this many connections. */
#define ACCEPT_BATCH 256

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
	int keep[] = { log_fd(), log_xferlog_fd(), log_writer_fd(), keep_fd, tw_rt.netns_fd };
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
	 * SIGHUP reloads the listener; a session keeps its settings, so an
	 * operator's `killall -HUP twinftpd` must not end it either.
	 */
	if (signal(SIGHUP, SIG_IGN) == SIG_ERR)
		die("signal SIGHUP: %s", strerror(errno));
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

/*
 * The limits, in the order a client hears about them. 0 when the
 * connection may have a session, else -1 (it was refused and closed).
 */
static int
admit(const struct tw_config *cfg, int cfd, int tls, const struct addr_key *key)
{
	if (cfg->max_clients != 0 && sessions_count() >= cfg->max_clients) {
		refuse(cfd, tls, "There are too many connected users, please try later.");
		tw_log(TW_LOG_INFO, "refused connection: max_clients (%u) reached",
		       cfg->max_clients);
		return -1;
	}
	switch (penalty_active(cfg, key)) {
	case PENALTY_NONE:
		break;
	case PENALTY_FAILED_LOGINS:
		refuse(cfd, tls, "Too many failed logins from your address, try later.");
		return -1;
	case PENALTY_BAD_SESSIONS:
		refuse(cfd, tls, "Too many failed sessions from your address, try later.");
		return -1;
	}
	if (cfg->max_per_ip != 0 && sessions_from(key) >= cfg->max_per_ip) {
		refuse(cfd, tls, "There are too many connections from your internet address.");
		tw_log(TW_LOG_INFO, "refused connection: max_per_ip (%u) reached",
		       cfg->max_per_ip);
		return -1;
	}
	return 0;
}

static void
spawn_session(const struct tw_config *cfg, int cfd, int tls,
	      const struct sockaddr_storage *peer)
{
	struct addr_key key;
	pid_t pid;

	addr_key_of(peer, &key);
	if (admit(cfg, cfd, tls, &key) != 0)
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
 * Sockets a service manager bound for us (systemd's socket activation,
 * sd_listen_fds(3)): LISTEN_FDS descriptors from 3 on, meant for us
 * when LISTEN_PID is our pid. Each must be a listening stream socket;
 * each serves as listen_port would (implicit FTPS with implicit_ssl).
 * The variables are removed so that no session sees them. 1 when they
 * are in ls, 0 when there are none.
 */
static int
inherited_sockets(const struct tw_config *cfg, struct listen_socks *ls)
{
	const char *pid_s = getenv("LISTEN_PID"), *n_s = getenv("LISTEN_FDS");
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
	if (n > LISTEN_SOCKS_MAX)
		die("LISTEN_FDS=%lu: at most %d listening sockets", n, LISTEN_SOCKS_MAX);
	for (fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + (int)n; fd++) {
		int type = 0, acc = 0, fl;
		socklen_t len = sizeof(type);

		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
		    type != SOCK_STREAM ||
		    (len = sizeof(acc), getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len)) != 0 ||
		    !acc)
			die("LISTEN_FDS: descriptor %d is not a listening stream socket "
			    "(with listen=YES the socket unit needs Accept=no)", fd);
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
			die("LISTEN_FDS: descriptor %d: %s", fd, strerror(errno));
		ls->implicit_tls[ls->n] = cfg->implicit_ssl;
		ls->fd[ls->n++] = fd;
	}
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

	if (inherited_sockets(cfg, ls) != 0)
		return;
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
}

/* SIGCHLD, SIGTERM, SIGINT and SIGHUP come through a descriptor the loop polls. */
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
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		die("sigprocmask: %s", strerror(errno));
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		die("signalfd: %s", strerror(errno));
	return sigfd;
}

/*
 * Drains every pending signal, then reaps once (a batch of SIGCHLDs is
 * one wake-up) and reloads once (however many SIGHUPs came meanwhile).
 */
static void
handle_signals(struct tw_config *cfg, int sigfd, const struct listen_socks *ls)
{
	struct signalfd_siginfo si;
	int got_child = 0, got_hup = 0;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			got_child = 1;
		else if (si.ssi_signo == SIGHUP)
			got_hup = 1;
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			shutdown_sessions(cfg, ls->fd, ls->n);
	}
	if (got_child)
		reap_children(cfg);
	if (got_hup)
		listener_reload(cfg);
}

void
listener_run(struct tw_config *cfg, const struct listen_socks *ls)
{
	struct pollfd pfd[LISTEN_SOCKS_MAX + 2];
	size_t nl = ls->n, i;
	int sigfd;

	log_set_role("listener");
	sigfd = signals_to_fd();
	sessions_init();
	pool_init(cfg);
	sandbox_apply(ROLE_LISTENER, cfg);
	if (ls->inherited)
		tw_log(TW_LOG_INFO, "twinftpd listening on %zu socket%s from the service "
		       "manager (LISTEN_FDS; listen_address, listen_port and "
		       "implicit_ssl_port unused)%s", ls->n, ls->n == 1 ? "" : "s",
		       !cfg->ssl_enable ? "" : cfg->implicit_ssl ? ", implicit FTPS"
							  : ", FTPS (AUTH TLS)");
	else
		tw_log(TW_LOG_INFO, "twinftpd listening on port %u (%s%s%s)%s", cfg->listen_port,
		       cfg->listen ? "IPv4" : "", cfg->listen && cfg->listen_ipv6 ? ", " : "",
		       cfg->listen_ipv6 ? "IPv6" : "",
		       !cfg->ssl_enable ? "" : cfg->implicit_ssl ? ", implicit FTPS"
							  : ", FTPS (AUTH TLS)");
	if (!ls->inherited && cfg->implicit_ssl_port != 0)
		tw_log(TW_LOG_INFO, "implicit FTPS on port %u", cfg->implicit_ssl_port);
	sdnotify_ready();

	for (i = 0; i < nl; i++) {
		pfd[i].fd = ls->fd[i];
		pfd[i].events = POLLIN;
	}
	pfd[nl].fd = sigfd;
	pfd[nl].events = POLLIN;
	/* The lines of logged-in sessions (log.h: the log writer). */
	pfd[nl + 1].fd = log_writer_rx_fd();
	pfd[nl + 1].events = POLLIN;
	for (;;) {
		/* Refill between events; poll without waiting while short. */
		int wait_ms = pool_refill(cfg);

		if (poll(pfd, nl + 2, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[nl + 1].revents & POLLIN)
			log_writer_serve();
		if (pfd[nl].revents & POLLIN)
			handle_signals(cfg, sigfd, ls);
		for (i = 0; i < nl; i++)
			if (pfd[i].revents & POLLIN)
				accept_all(cfg, ls->fd[i], ls->implicit_tls[i]);
	}
}
