#include "src/upgrade.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/util.h"

/* The helper holds at most this many descriptors (listener.h's four and the status socket). */
#define UPGRADE_FDS_MAX 8

/* A new binary that closed its readiness pipe has this long to be seen exiting. */
#define EXIT_GRACE_MS 2000

/* What the helper tells the listener: one datagram, exactly this size. */
struct upgrade_msg {
	int32_t kind;		/* enum upgrade_event */
	int32_t pid;
	char why[192];
};

static struct {
	char exe[PATH_MAX];
	char **argv;
	char notify_socket[PATH_MAX];	/* NOTIFY_SOCKET as the service manager set it */
	int have_notify;
	int ready_fd;			/* successor: where to say "ready" (-1: not one) */
	int chan;			/* listener: its end of the helper's channel */
} up = { .ready_fd = -1, .chan = -1 };

/*
 * argv[0] as the operator typed it, made absolute (a relative path is
 * relative to the directory the daemon was started in, which it never
 * leaves); found through PATH, the file the kernel ran. Not resolved
 * through symbolic links: a package that repoints a link upgrades too.
 */
static void
resolve_exe(const char *arg0)
{
	char cwd[PATH_MAX];
	ssize_t n;

	if (strchr(arg0, '/') != NULL) {
		if (arg0[0] == '/') {
			(void)tw_strlcpy(up.exe, arg0, sizeof(up.exe));
			return;
		}
		if (getcwd(cwd, sizeof(cwd)) != NULL &&
		    (size_t)snprintf(up.exe, sizeof(up.exe), "%s/%s", cwd, arg0) < sizeof(up.exe))
			return;
	}
	n = readlink("/proc/self/exe", up.exe, sizeof(up.exe) - 1);
	up.exe[n > 0 ? n : 0] = '\0';
}

void
upgrade_set_command(int argc, char **argv)
{
	const char *v = getenv("TWINFTPD_UPGRADE_FD");
	const char *ns = getenv("NOTIFY_SOCKET");

	(void)argc;
	up.argv = argv;
	resolve_exe(argv[0] != NULL ? argv[0] : "");
	if (ns != NULL && tw_strlcpy(up.notify_socket, ns, sizeof(up.notify_socket)) == 0)
		up.have_notify = 1;
	if (v != NULL) {
		char *end;
		long fd = strtol(v, &end, 10);

		/* Close-on-exec: only this process writes it, not a session or the next binary. */
		if (*end == '\0' && fd > 2 && fd < INT_MAX && fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
			up.ready_fd = (int)fd;
		unsetenv("TWINFTPD_UPGRADE_FD");
	}
}

int
upgrade_is_successor(void)
{
	return up.ready_fd >= 0;
}

void
upgrade_signal_ready(void)
{
	char line[32];
	int len;

	if (up.ready_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%d\n", (int)getpid());
	/* The old listener may have given up (its bound passed): nothing to do then. */
	(void)!write(up.ready_fd, line, (size_t)len);
	close(up.ready_fd);
	up.ready_fd = -1;
}

/* ---------------------------------------------------------------- helper */

static void
helper_say(int chan, enum upgrade_event kind, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
helper_say(int chan, enum upgrade_event kind, pid_t pid, const char *fmt, ...)
{
	struct upgrade_msg m;
	va_list ap;

	memset(&m, 0, sizeof(m));
	m.kind = (int32_t)kind;
	m.pid = (int32_t)pid;
	va_start(ap, fmt);
	(void)vsnprintf(m.why, sizeof(m.why), fmt, ap);
	va_end(ap);
	(void)!send(chan, &m, sizeof(m), MSG_NOSIGNAL);
}

/* The helper's child: the sockets to 3.., the protocol's variables, exec. */
static void __attribute__((noreturn))
exec_successor(int wfd, const int *fds, size_t n, const char *fdnames)
{
	char num[32];
	int tmp[UPGRADE_FDS_MAX], w, sig;
	sigset_t none;
	size_t i;

	/* Above 3..3+n first, so that moving one never overwrites another. */
	w = fcntl(wfd, F_DUPFD, 3 + (int)n);
	for (i = 0; i < n; i++)
		tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + (int)n);
	for (i = 0; i < n; i++) {
		/* dup2 makes the copy inheritable: only these cross the exec. */
		if (w < 0 || tmp[i] < 0 || dup2(tmp[i], 3 + (int)i) != 3 + (int)i)
			_exit(126);
	}
	(void)snprintf(num, sizeof(num), "%zu", n);
	(void)setenv("LISTEN_FDS", num, 1);
	(void)snprintf(num, sizeof(num), "%d", (int)getpid());
	(void)setenv("LISTEN_PID", num, 1);
	(void)setenv("LISTEN_FDNAMES", fdnames, 1);
	(void)snprintf(num, sizeof(num), "%d", w);
	(void)setenv("TWINFTPD_UPGRADE_FD", num, 1);
	if (up.have_notify)
		(void)setenv("NOTIFY_SOCKET", up.notify_socket, 1);
	/* As a service manager would start it: no signal blocked or ignored. */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execv(up.exe, up.argv);
	/* The helper reads this as the reason. */
	(void)snprintf(num, sizeof(num), "E%d\n", errno);
	(void)!write(w, num, strlen(num));
	_exit(127);
}

static void
describe_exit(char *out, size_t len, int status)
{
	if (WIFEXITED(status))
		(void)snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		(void)snprintf(out, len, "killed by signal %d", WTERMSIG(status));
	else
		(void)snprintf(out, len, "ended (status %#x)", (unsigned)status);
}

/* The child did not say it was ready: ended, or ended now. Why, in out. */
static void
reap_failed(pid_t pid, int timed_out, char *out, size_t len)
{
	long long until = tw_mono_ms() + (timed_out ? 0 : EXIT_GRACE_MS);
	char how[64];
	int status;
	pid_t r;

	/* The pipe closes as a dying process's files do, before it is a zombie. */
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && tw_mono_ms() < until)
		(void)poll(NULL, 0, 10);
	if (r != pid) {
		kill(pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid)
			status = 0;
		if (timed_out)
			(void)snprintf(out, len, "was not ready within %d s; killed",
				       UPGRADE_READY_SECS);
		else
			(void)snprintf(out, len, "closed its readiness pipe without a word; "
				       "killed");
		return;
	}
	describe_exit(how, sizeof(how), status);
	(void)snprintf(out, len, "%s before it was ready", how);
}

static void
helper_upgrade(int chan, const int *fds, size_t n, const char *fdnames)
{
	long long deadline = tw_mono_ms() + UPGRADE_READY_SECS * 1000LL;
	char buf[32], why[160];
	size_t got = 0;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0) {
		helper_say(chan, UPGRADE_FAILED, 0, "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		helper_say(chan, UPGRADE_FAILED, 0, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0)
		exec_successor(p[1], fds, n, fdnames);
	close(p[1]);
	helper_say(chan, UPGRADE_STARTED, pid, "%s", up.exe);
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		long long left = deadline - tw_mono_ms();
		ssize_t r;

		if (left <= 0) {
			reap_failed(pid, 1, why, sizeof(why));
			helper_say(chan, UPGRADE_FAILED, pid, "%s", why);
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		r = read(p[0], buf + got, sizeof(buf) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0) {
			got += (size_t)r;
			buf[got] = '\0';
			if (strchr(buf, '\n') == NULL && got < sizeof(buf) - 1)
				continue;
			if (buf[0] == 'E') {
				(void)waitpid(pid, NULL, 0);
				helper_say(chan, UPGRADE_FAILED, pid, "cannot execute %s: %s", up.exe,
					   strerror(atoi(buf + 1)));
			} else {
				helper_say(chan, UPGRADE_READY, (pid_t)atoi(buf), "ready");
			}
			break;
		}
		reap_failed(pid, 0, why, sizeof(why));
		helper_say(chan, UPGRADE_FAILED, pid, "%s", why);
		break;
	}
	close(p[0]);
}

/*
 * The listener's first message: the descriptors to hand over (SCM_RIGHTS)
 * and their LISTEN_FDNAMES, one name each. Returns how many, or exits
 * when the listener is gone or the message is not that.
 */
static size_t
helper_take_sockets(int chan, int *fds, char *fdnames, size_t namelen)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(UPGRADE_FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { fdnames, namelen - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	size_t n, i, colons = 0;
	ssize_t r;

	do
		r = recvmsg(chan, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	c = CMSG_FIRSTHDR(&mh);
	if (r <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || c == NULL ||
	    c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		_exit(r == 0 ? 0 : 1);
	n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	memcpy(fds, CMSG_DATA(c), n * sizeof(int));
	fdnames[r] = '\0';
	for (i = 0; i < (size_t)r; i++)
		colons += fdnames[i] == ':';
	if (n == 0 || n > UPGRADE_FDS_MAX || colons + 1 != n)
		_exit(1);
	return n;
}

static void __attribute__((noreturn))
helper_main(int chan)
{
	static const int ignored[] = { SIGHUP, SIGINT, SIGUSR2, SIGPIPE };
	char fdnames[UPGRADE_FDS_MAX * 24];
	int fds[UPGRADE_FDS_MAX];
	size_t i, n;

	log_set_role("upgrade-helper");
	/* A `killall -HUP twinftpd` or `-USR2` is meant for the listener. */
	for (i = 0; i < TW_ARRAY_LEN(ignored); i++)
		(void)signal(ignored[i], SIG_IGN);
	n = helper_take_sockets(chan, fds, fdnames, sizeof(fdnames));
	for (;;) {
		char req;
		ssize_t r = recv(chan, &req, 1, 0);

		/* The listener is gone (or handed over): so is the helper, and
		 * with it its copies of the listening sockets. */
		if (r == 0)
			_exit(0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		helper_upgrade(chan, fds, n, fdnames);
	}
}

int
upgrade_helper_start(void)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		tw_log(TW_LOG_ERR, "upgrade helper: socketpair: %s; SIGUSR2 will be refused",
		       strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		tw_log(TW_LOG_ERR, "upgrade helper: fork: %s; SIGUSR2 will be refused",
		       strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	/*
	 * Forked twice: the helper is no child of the listener, whose children
	 * are its sessions (the listener reaps the middle one at once). It
	 * ends when the listener does: the channel's only other end is the
	 * listener's (every session process closes what it inherits).
	 */
	if (pid == 0) {
		close(sv[0]);
		/* The new listener's own helper must not hold the old one's pipe open. */
		if (up.ready_fd >= 0)
			close(up.ready_fd);
		pid = fork();
		if (pid != 0)
			_exit(pid < 0 ? 1 : 0);
		helper_main(sv[1]);
	}
	close(sv[1]);
	{
		int status;

		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			tw_log(TW_LOG_ERR, "upgrade helper: fork: %s; SIGUSR2 will be refused",
			       strerror(errno));
			close(sv[0]);
			return -1;
		}
	}
	up.chan = sv[0];
	return 0;
}

void
upgrade_helper_give(const int *fds, const char *const *names, size_t n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(UPGRADE_FDS_MAX * sizeof(int))];
	} ctl;
	char fdnames[UPGRADE_FDS_MAX * 24] = "";
	struct iovec iov = { fdnames, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf };
	struct cmsghdr *c;
	size_t i;

	if (up.chan < 0)
		return;
	if (n == 0 || n > UPGRADE_FDS_MAX)
		bug("%s: %zu descriptors", __func__, n);
	for (i = 0; i < n; i++)
		if (tw_strlcpy(fdnames + strlen(fdnames), i > 0 ? ":" : "",
			       sizeof(fdnames) - strlen(fdnames)) != 0 ||
		    tw_strlcpy(fdnames + strlen(fdnames), names[i],
			       sizeof(fdnames) - strlen(fdnames)) != 0)
			bug("%s: names too long", __func__);
	iov.iov_len = strlen(fdnames);
	memset(&ctl, 0, sizeof(ctl));
	mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	if (sendmsg(up.chan, &mh, MSG_NOSIGNAL) != (ssize_t)iov.iov_len) {
		tw_log(TW_LOG_ERR, "upgrade helper: handing it the sockets: %s; SIGUSR2 will "
		       "be refused", strerror(errno));
		close(up.chan);
		up.chan = -1;
		return;
	}
	if (fcntl(up.chan, F_SETFL, O_NONBLOCK) != 0)
		die("upgrade helper: fcntl: %s", strerror(errno));
}

int
upgrade_helper_fd(void)
{
	return up.chan;
}

int
upgrade_request(void)
{
	char req = 'U';

	if (up.chan < 0 || send(up.chan, &req, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
		tw_log(TW_LOG_ERR, "SIGUSR2: no upgrade helper (see the lines above); "
		       "not upgrading, this listener keeps serving");
		return -1;
	}
	return 0;
}

enum upgrade_event
upgrade_read_event(pid_t *pid)
{
	struct upgrade_msg m;
	ssize_t r = recv(up.chan, &m, sizeof(m), MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return UPGRADE_NOTHING;
	if (r != (ssize_t)sizeof(m) ||
	    (m.kind != UPGRADE_STARTED && m.kind != UPGRADE_READY && m.kind != UPGRADE_FAILED)) {
		tw_log(TW_LOG_ERR, "upgrade helper gone (%s); SIGUSR2 will be refused",
		       r == 0 ? "it ended" : "a bad message");
		close(up.chan);
		up.chan = -1;
		return UPGRADE_HELPER_GONE;
	}
	m.why[sizeof(m.why) - 1] = '\0';
	*pid = (pid_t)m.pid;
	switch (m.kind) {
	case UPGRADE_STARTED:
		tw_log(TW_LOG_INFO, "upgrade: %s started as pid %d; waiting for it to be "
		       "ready (at most %d s)", m.why, (int)m.pid, UPGRADE_READY_SECS);
		return UPGRADE_STARTED;
	case UPGRADE_READY:
		return UPGRADE_READY;
	default:
		tw_log(TW_LOG_ERR, "upgrade failed, this listener keeps serving: new listener "
		       "pid %d %s", (int)m.pid, m.why);
		return UPGRADE_FAILED;
	}
}

void
upgrade_helper_stop(void)
{
	if (up.chan >= 0)
		close(up.chan);
	up.chan = -1;
}
