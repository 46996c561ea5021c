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
/*
 * The log writer's socketpair (log_writer_open): session processes send
 * on writer_tx, the writer (the listener, or the parent of an inetd
 * session) reads writer_rx. to_writer: this process logs through it.
 */
static int writer_tx TW_PER_PROCESS = -1;
static int writer_rx = -1;
static int to_writer TW_PER_PROCESS;

/* The local syslog socket (syslog(3)'s _PATH_LOG). */
#define SYSLOG_SOCKET "/dev/log"
/* syslog's "Mmm dd hh:mm:ss" (RFC 3164 section 4.1.2), local time. */
#define SYSLOG_STAMP_FORMAT "%b %e %H:%M:%S"
/* xferlog(5)'s current-time field, local time: "Thu Mar  4 08:12:30 2021". */
#define XFERLOG_STAMP_FORMAT "%a %b %e %H:%M:%S %Y"
/* Room for a path of PATH_MAX and the other fields of an xferlog line. */
#define XFERLOG_LINE_MAX 8192

/*
 * One record to the writer: kind, level, role, then the text (no NUL).
 * Bounded by the longest line either kind has.
 */
#define WRITER_HEAD 3
#define WRITER_LINE 'L'
#define WRITER_XFER 'X'
#define WRITER_MAX (WRITER_HEAD + XFERLOG_LINE_MAX)
/* Records one log_writer_serve() call writes at most: the listener's
 * accept loop comes first, a flooding session waits. */
#define WRITER_BATCH 64
/* The roles a record may name; anything else is dropped. */
static const char *const writer_roles[] = { "monitor", "worker" };

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
 * Our own socket to syslog, not syslog(3)'s: libc keeps its socket in a
 * hidden descriptor, which the session processes close with every
 * descriptor they do not know of (tw_close_fds_except); the number was
 * then reused for an IPC socket and log lines went into it. This one is
 * log_fd(), kept open across those closes like the log file. It is not
 * connected: each line is sent to the path (by the log writer, which is
 * not chrooted), so a syslog daemon that starts after us, or restarts,
 * gets the next line, as vsftpd's syslog(3) does. A test build may name
 * another socket, so that a test can listen on a private path.
 */
static struct sockaddr_un syslog_addr;
/* Set when no syslog daemon listened at the last open (log_syslog_absent). */
static char syslog_absent[CONFIG_MAX_MSG];

static int
open_syslog_socket(char *err, size_t errlen)
{
	const char *path = SYSLOG_SOCKET;
	int fd, probe;

#if TW_TEST_HOOKS
	if (getenv("TW_TEST_SYSLOG_SOCKET") != NULL)
		path = getenv("TW_TEST_SYSLOG_SOCKET");
#endif
	memset(&syslog_addr, 0, sizeof(syslog_addr));
	syslog_addr.sun_family = AF_UNIX;
	if (tw_strlcpy(syslog_addr.sun_path, path, sizeof(syslog_addr.sun_path)) != 0) {
		(void)snprintf(err, errlen, "syslog socket path too long: %s", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || probe < 0) {
		(void)snprintf(err, errlen, "syslog_enable: socket: %s", strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		if (probe >= 0)
			(void)close(probe);
		return -1;
	}
	/* Only to tell the operator: the lines go out whether or not. */
	syslog_absent[0] = '\0';
	if (connect(probe, (struct sockaddr *)&syslog_addr, sizeof(syslog_addr)) != 0)
		(void)snprintf(syslog_absent, sizeof(syslog_absent), "syslog_enable=YES, but no "
			       "syslog daemon listens on %s yet (%s): log lines are lost until "
			       "one does", path, strerror(errno));
	(void)close(probe);
	return fd;
}

const char *
log_syslog_absent(void)
{
	return use_syslog && syslog_absent[0] != '\0' ? syslog_absent : NULL;
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
	log_writer_open();
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

/* Closes what this process writes the logs through (log_to_sink, log_to_writer). */
static void
log_close_fds(void)
{
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
}

void
log_to_sink(log_sink_fn fn)
{
	sink = fn;
	log_close_fds();
	if (writer_tx >= 0) {
		(void)close(writer_tx);
		writer_tx = -1;
	}
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

int
log_writer_fd(void)
{
	return writer_tx;
}

int
log_writer_rx_fd(void)
{
	return writer_rx;
}

void
log_writer_open(void)
{
	int sv[2], one = 1;

	if (writer_rx >= 0)
		return;
	/*
	 * Datagrams: each record arrives whole or not at all, and one
	 * socket serves every session. SO_PASSCRED makes the kernel attach
	 * each sender's pid (as the reader's PID namespace sees it), which
	 * a process without CAP_SYS_ADMIN cannot forge: the writer puts
	 * that pid in the line, so no session can write as another.
	 */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("log writer socketpair: %s", strerror(errno));
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0)
		die("log writer socket: %s", strerror(errno));
	/* Only the reader's end takes records: the senders' end is never read. */
	(void)shutdown(sv[1], SHUT_RD);
	writer_rx = sv[0];
	writer_tx = sv[1];
}

void
log_writer_close_rx(void)
{
	if (writer_rx >= 0)
		(void)close(writer_rx);
	writer_rx = -1;
}

/* Sends one record; a writer that is gone or full loses it (best effort). */
static void
writer_send(char kind, int level, int role, const char *text)
{
	char rec[WRITER_MAX];
	size_t len = strlen(text);

	if (len > XFERLOG_LINE_MAX)
		len = XFERLOG_LINE_MAX;

	rec[0] = kind;
	rec[1] = (char)level;
	rec[2] = (char)role;
	memcpy(rec + WRITER_HEAD, text, len);
	(void)!send(writer_tx, rec, WRITER_HEAD + len, MSG_NOSIGNAL);
}

void
log_to_writer(void)
{
	if (writer_tx < 0)
		bug("%s: no log writer socket", __func__);
	to_writer = 1;
	log_close_fds();
	log_writer_close_rx();
}

void
log_clean(char *out, size_t outsz, const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len && text[i] != '\0' && i + 1 < outsz; i++) {
		unsigned char c = (unsigned char)text[i];

		out[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[i] = '\0';
}

static void
xferlog_write(const char *fields)
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
log_xferlog(const char *fields)
{
	if (to_writer)
		writer_send(WRITER_XFER, TW_LOG_INFO, 0, fields);
	else
		xferlog_write(fields);
}

void
log_set_role(const char *role)
{
	role_name = role;
}

/* Lines the syslog socket had no room for, since the last that went. */
static unsigned long syslog_lost TW_PER_PROCESS;

/*
 * One datagram to the syslog socket, never waiting: a daemon that stops
 * reading (its queue full: net.unix.max_dgram_qlen lines) must not stop
 * the listener, which writes the lines of every logged-in session, from
 * accepting clients. A line that finds no room is lost and counted, and
 * the next line that goes is preceded by one that says how many were
 * lost. 0 when it went.
 */
static int
syslog_datagram(const char *line, size_t len)
{
	if (sendto(logfd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT,
		   (struct sockaddr *)&syslog_addr, sizeof(syslog_addr)) >= 0)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		syslog_lost++;
	return -1;
}

static void
syslog_write(const char *head, int pid, const char *role, const char *line, size_t len)
{
	if (syslog_lost > 0) {
		char note[160];
		int k = snprintf(note, sizeof(note), "%s [pid %d] [%s] %lu log lines lost: the "
				 "syslog socket's queue was full", head, pid, role, syslog_lost);

		/* Still full: the note's loss counts this line, which is lost too. */
		if (k > 0 && (size_t)k < sizeof(note) && syslog_datagram(note, (size_t)k) != 0)
			return;
		syslog_lost = 0;
	}
	(void)syslog_datagram(line, len);
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
	 * its stamp in local time, no newline. The pid is the line's (the
	 * writer writes other processes' lines).
	 */
	if (use_syslog) {
		if (localtime_r(&now, &tm) == NULL ||
		    strftime(stamp, sizeof(stamp), SYSLOG_STAMP_FORMAT, &tm) == 0)
			stamp[0] = '\0';
		(void)snprintf(head, sizeof(head), "<%d>%s twinftpd[%d]:", LOG_FTP | level,
			       stamp, pid);
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
	 * a short or failed write, a syslog that is not there or that does
	 * not keep up (syslog_write), loses it.
	 */
	if (use_syslog)
		syslog_write(head, pid, role, line, (size_t)n);
	else
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
	/*
	 * What a line quotes (a login name, a path, a module's message) may
	 * hold a line break: a hostile worker's LOGIN could then write a
	 * whole FAIL LOGIN line of its choosing (fail2ban bans by those).
	 */
	log_clean(text, sizeof(text), text, sizeof(text) - 1);

	if (sink != NULL) {
		sink(level, text);
		return;
	}
	if (to_writer) {
		writer_send(WRITER_LINE, level, 0, text);
		return;
	}
	log_write_line(level, text, (int)getpid(), role_name);
}

static int
log_level_valid(int level)
{
	return level >= TW_LOG_ERR && level <= TW_LOG_DEBUG;
}

void
log_from_worker(int level, const char *text, int worker_pid)
{
	char clean[TW_LOG_MAX_TEXT + 1];

	log_clean(clean, sizeof(clean), text, TW_LOG_MAX_TEXT);
	if (!log_level_valid(level))
		level = TW_LOG_INFO;
	if (to_writer)
		writer_send(WRITER_LINE, level, 1, clean);
	else
		log_write_line(level, clean, worker_pid, "worker");
}

/*
 * One record from a session: trusted for nothing but being a line. The
 * pid is the kernel's, the role one of writer_roles, every control byte
 * a '?', so a record makes exactly one line (or xferlog line) of its
 * sender's own.
 */
static void
writer_write(const char *rec, size_t len, pid_t pid)
{
	char text[XFERLOG_LINE_MAX];
	int level = (unsigned char)rec[1], role = (unsigned char)rec[2];

	if (len < WRITER_HEAD || role >= (int)TW_ARRAY_LEN(writer_roles))
		return;
	if (rec[0] == WRITER_LINE) {
		log_clean(text, TW_LOG_MAX_TEXT + 1, rec + WRITER_HEAD, len - WRITER_HEAD);
		log_write_line(log_level_valid(level) ? level : TW_LOG_INFO, text, (int)pid,
			       writer_roles[role]);
	} else if (rec[0] == WRITER_XFER) {
		log_clean(text, sizeof(text), rec + WRITER_HEAD, len - WRITER_HEAD);
		xferlog_write(text);
	}
}

int
log_writer_serve(void)
{
	int n;

	for (n = 0; n < WRITER_BATCH; n++) {
		char rec[WRITER_MAX];
		int pid;
		long len = tw_recv_vouched(writer_rx, rec, sizeof(rec), &pid);

		if (len == -1)
			return n;
		/* Dropped too: a record longer than any we send was cut. */
		if (len != TW_RECV_DROPPED)
			writer_write(rec, (size_t)len, (pid_t)pid);
	}
	/* The batch is spent; poll says so again if more waits. */
	return n;
}
