#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "tw_build.h"
#include "src/common/config.h"
#include "src/common/util.h"

/* Written by every session process: TW_PER_PROCESS (util.h). */
static int logfd TW_PER_PROCESS = -1;
/* xferlog_file, with xferlog_std_format or dual_log_enable; else -1. */
static int xferfd TW_PER_PROCESS = -1;
static int use_syslog TW_PER_PROCESS;
static log_sink_fn sink TW_PER_PROCESS;
static const char *role_name TW_PER_PROCESS = "twinftpd";
/* The process whose fatal errors are echoed on stderr (0: none). */
static pid_t stderr_pid TW_PER_PROCESS;

/* The local syslog socket (syslog(3)'s _PATH_LOG). */
#define SYSLOG_SOCKET "/dev/log"
/* syslog's "Mmm dd hh:mm:ss" (RFC 3164 section 4.1.2), local time. */
#define SYSLOG_STAMP_FORMAT "%b %e %H:%M:%S"
/* xferlog(5)'s current-time field, local time: "Thu Mar  4 08:12:30 2021". */
#define XFERLOG_STAMP_FORMAT "%a %b %e %H:%M:%S %Y"
/* Room for a path of PATH_MAX and the other fields of an xferlog line. */
#define XFERLOG_LINE_MAX 8192

/* UTC, ISO 8601; the placeholder stands in if the clock is out of range. */
#define LOG_STAMP_FORMAT "%Y-%m-%dT%H:%M:%SZ"
#define LOG_STAMP_UNKNOWN "(no time)"

/*
 * Logging is best effort everywhere in this file: a process that cannot
 * write its log line (a full disk, a dead syslog) has nowhere to report
 * that, and must not stop serving or die over it. So the returns of
 * write(), dprintf() and close() below are deliberately not acted on.
 */

static void
log_die_hook(int is_bug, const char *msg)
{
	tw_log(TW_LOG_ERR, "%s%s", is_bug ? "BUG: " : "", msg);
	if (sink == NULL && (logfd >= 0 || use_syslog) &&
	    (isatty(2) || stderr_pid == getpid()))
		(void)dprintf(2, "twinftpd: %s%s\n", is_bug ? "BUG: " : "", msg);
}

void
log_errors_to_stderr(void)
{
	stderr_pid = getpid();
}

/*
 * Our own connected socket to syslog, not syslog(3)'s: libc keeps its
 * socket in a hidden descriptor, which the session processes close with
 * every descriptor they do not know of (tw_close_fds_except); the number
 * was then reused for an IPC socket and log lines went into it, and a
 * chrooted process cannot reconnect to /dev/log. This one is log_fd(),
 * kept open across those closes like the log file, and connected once,
 * before any chroot. A test build may name another socket, so that a
 * test can listen on a private path.
 */
static int
open_syslog_socket(char *err, size_t errlen)
{
	struct sockaddr_un sun;
	const char *path = SYSLOG_SOCKET;
	int fd;

#if TW_TEST_HOOKS
	if (getenv("TW_TEST_SYSLOG_SOCKET") != NULL)
		path = getenv("TW_TEST_SYSLOG_SOCKET");
#endif
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (tw_strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) != 0) {
		(void)snprintf(err, errlen, "syslog socket path too long: %s", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		(void)snprintf(err, errlen, "syslog_enable: socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		(void)snprintf(err, errlen, "syslog_enable=YES, but no syslog daemon listens "
			       "on %s: %s", path, strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* What cfg asks for: the log (file or syslog socket) and the xferlog. */
static int
open_logs(const struct tw_config *cfg, int *log_out, int *xfer_out, char *err, size_t errlen)
{
	int fd = -1, xfd = -1;

	if (cfg->syslog_enable) {
		fd = open_syslog_socket(err, errlen);
		if (fd < 0)
			return -1;
	} else if (cfg->log_file[0] != '\0') {
		fd = open(cfg->log_file,
			  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			(void)snprintf(err, errlen, "cannot open log_file %s: %s",
				       cfg->log_file, strerror(errno));
			return -1;
		}
	}
	if (cfg->xferlog_enable && (cfg->xferlog_std_format || cfg->dual_log_enable)) {
		xfd = open(cfg->xferlog_file,
			   O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (xfd < 0) {
			(void)snprintf(err, errlen, "cannot open xferlog_file %s: %s",
				       cfg->xferlog_file, strerror(errno));
			if (fd >= 0)
				(void)close(fd);
			return -1;
		}
	}
	*log_out = fd;
	*xfer_out = xfd;
	return 0;
}

void
log_open(const struct tw_config *cfg)
{
	char err[CONFIG_MAX_MSG];

	if (open_logs(cfg, &logfd, &xferfd, err, sizeof(err)) != 0)
		die("%s", err);
	use_syslog = cfg->syslog_enable;
	/* Loaded now: a chrooted monitor cannot read /etc/localtime. */
	tzset();
	util_set_die_hook(log_die_hook);
}

int
log_reopen(const struct tw_config *cfg, char *err, size_t errlen)
{
	int fd, xfd;

	/* The new ones first: on failure the old ones stay in use. */
	if (open_logs(cfg, &fd, &xfd, err, errlen) != 0)
		return -1;
	if (logfd >= 0)
		(void)close(logfd);
	if (xferfd >= 0)
		(void)close(xferfd);
	logfd = fd;
	xferfd = xfd;
	use_syslog = cfg->syslog_enable;
	return 0;
}

void
log_to_sink(log_sink_fn fn)
{
	sink = fn;
	/* O_APPEND writes went out whole; nothing is buffered here. */
	if (logfd >= 0) {
		(void)close(logfd);
		logfd = -1;
	}
	if (xferfd >= 0) {
		(void)close(xferfd);
		xferfd = -1;
	}
	use_syslog = 0;
	util_set_die_hook(log_die_hook);
}

int
log_fd(void)
{
	return logfd;
}

int
log_xferlog_fd(void)
{
	return xferfd;
}

void
log_xferlog(const char *fields)
{
	char line[XFERLOG_LINE_MAX], stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	if (xferfd < 0)
		return;
	if (localtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), XFERLOG_STAMP_FORMAT, &tm) == 0)
		return;
	n = snprintf(line, sizeof(line), "%s %s\n", stamp, fields);
	/* A cut line would not parse; the caller bounds its fields. */
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	(void)!write(xferfd, line, (size_t)n);
}

void
log_set_role(const char *role)
{
	role_name = role;
}

static void
log_write_line(int level, const char *text, int pid, const char *role)
{
	char line[TW_LOG_MAX_TEXT + 128];
	char stamp[32], head[64];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	if (logfd < 0) {
		if (isatty(2))
			(void)dprintf(2, "[pid %d] [%s] %s\n", pid, role, text);
		return;
	}
	/*
	 * Wall-clock time on purpose: a reader matches it with other logs.
	 * syslog's line is one datagram as syslog(3) sends it with LOG_PID:
	 * its stamp in local time, no newline.
	 */
	if (use_syslog) {
		if (localtime_r(&now, &tm) == NULL ||
		    strftime(stamp, sizeof(stamp), SYSLOG_STAMP_FORMAT, &tm) == 0)
			stamp[0] = '\0';
		(void)snprintf(head, sizeof(head), "<%d>%s twinftpd[%d]:", LOG_FTP | level,
			       stamp, (int)getpid());
	} else if (gmtime_r(&now, &tm) == NULL ||
		   strftime(head, sizeof(head), LOG_STAMP_FORMAT, &tm) == 0) {
		(void)tw_strlcpy(head, LOG_STAMP_UNKNOWN, sizeof(head));
	}
	/*
	 * vsftpd's "[pid N] [who]" after the stamp: fail2ban's stock vsftpd
	 * filter, and what else reads vsftpd's log, match these lines.
	 */
	n = snprintf(line, sizeof(line), "%s [pid %d] [%s] %s%s", head, pid, role, text,
		     use_syslog ? "" : "\n");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		if (!use_syslog)
			line[n - 1] = '\n';
	}
	/*
	 * One write per line: O_APPEND keeps lines of many processes whole,
	 * and a datagram is one syslog message. Best effort (see the top):
	 * a short or failed write, or a syslog that went away, loses it.
	 */
	(void)!write(logfd, line, (size_t)n);
}

void
tw_log(int level, const char *fmt, ...)
{
	char text[TW_LOG_MAX_TEXT];
	va_list ap;

	/* A longer line is cut at TW_LOG_MAX_TEXT: the bound is the point. */
	va_start(ap, fmt);
	(void)vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);

	if (sink != NULL) {
		sink(level, text);
		return;
	}
	log_write_line(level, text, (int)getpid(), role_name);
}

void
log_from_worker(int level, const char *text, int worker_pid)
{
	char clean[TW_LOG_MAX_TEXT + 1];
	size_t i;

	for (i = 0; text[i] != '\0' && i < TW_LOG_MAX_TEXT; i++) {
		unsigned char c = (unsigned char)text[i];

		clean[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	clean[i] = '\0';
	if (level < TW_LOG_ERR || level > TW_LOG_DEBUG)
		level = TW_LOG_INFO;
	log_write_line(level, clean, worker_pid, "worker");
}
