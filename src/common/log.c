#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/util.h"

/* Written by every session process: TW_PER_PROCESS (util.h). */
static int logfd TW_PER_PROCESS = -1;
static int use_syslog TW_PER_PROCESS;
static log_sink_fn sink TW_PER_PROCESS;
static const char *role_name TW_PER_PROCESS = "twinftpd";

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
	if (sink == NULL && logfd >= 0 && isatty(2))
		(void)dprintf(2, "twinftpd: %s%s\n", is_bug ? "BUG: " : "", msg);
}

void
log_open(const struct tw_config *cfg)
{
	if (cfg->syslog_enable) {
		openlog("twinftpd", LOG_PID | LOG_NDELAY, LOG_FTP);
		use_syslog = 1;
	} else if (cfg->log_file[0] != '\0') {
		logfd = open(cfg->log_file,
			     O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (logfd < 0)
			die("cannot open log_file %s: %s", cfg->log_file, strerror(errno));
	}
	util_set_die_hook(log_die_hook);
}

int
log_reopen(const struct tw_config *cfg, char *err, size_t errlen)
{
	int fd;

	if (cfg->syslog_enable) {
		if (!use_syslog)
			openlog("twinftpd", LOG_PID | LOG_NDELAY, LOG_FTP);
		use_syslog = 1;
		if (logfd >= 0)
			(void)close(logfd);
		logfd = -1;
		return 0;
	}
	if (use_syslog)
		closelog();
	use_syslog = 0;
	if (cfg->log_file[0] == '\0') {
		if (logfd >= 0)
			(void)close(logfd);
		logfd = -1;
		return 0;
	}
	fd = open(cfg->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		(void)snprintf(err, errlen, "cannot open log_file %s: %s", cfg->log_file,
			       strerror(errno));
		return -1;
	}
	if (logfd >= 0)
		(void)close(logfd);
	logfd = fd;
	return 0;
}

void
log_to_sink(log_sink_fn fn)
{
	sink = fn;
	if (logfd >= 0) {
		/* O_APPEND writes went out whole; nothing is buffered here. */
		(void)close(logfd);
		logfd = -1;
	}
	use_syslog = 0;
	util_set_die_hook(log_die_hook);
}

int
log_fd(void)
{
	return logfd;
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
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	if (use_syslog) {
		syslog(level, "[%s %d] %s", role, pid, text);
		return;
	}
	if (logfd < 0) {
		if (isatty(2))
			(void)dprintf(2, "[%s %d] %s\n", role, pid, text);
		return;
	}
	/* Wall-clock time on purpose: a reader matches it with other logs. */
	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), LOG_STAMP_FORMAT, &tm) == 0)
		(void)tw_strlcpy(stamp, LOG_STAMP_UNKNOWN, sizeof(stamp));
	n = snprintf(line, sizeof(line), "%s [%s %d] %s\n", stamp, role, pid, text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/*
	 * One write per line: O_APPEND keeps lines of many processes whole.
	 * Best effort (see the top): a short or failed write loses this line.
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
