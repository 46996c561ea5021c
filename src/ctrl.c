/*
 * The control channel: one reader that never buffers past a command's LF,
 * one writer for every reply.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/common/reply.h"
#include "src/common/monotime.h"
#include "src/common/util.h"
#include "src/proto/ctrlline.h"
#include "src/tls.h"
#include "src/worker.h"

/* A line of ctrl_reply_text's text longer than this is cut. */
#define CTRL_TEXT_LINE_MAX 1024

/* How long a reply write waits for room before it tries again. */
#define CTRL_WRITE_WAIT_MS 1000
/* How much of a command line one peek looks at for its LF. */
#define CTRL_PEEK_CHUNK 1024
#define MS_PER_S 1000

/* struct ctrl's pending bytes: one control connection per process. */
static char ctrl_pending_buf[CTRL_MAX_LINE];
/* What TLS decrypted past the line taken (pre-login worker only). */
static char ctrl_tls_in_buf[CTRL_MAX_LINE + 1];
/* A handshake a client does not finish ends the session this soon. */
#define CTRL_TLS_HANDSHAKE_S 60

void
ctrl_init(struct ctrl *c, int fd)
{
	int one = 1;

	c->fd = fd;
	c->pending = ctrl_pending_buf;
	c->pending_len = 0;
	/*
	 * Clients send ABOR as urgent data (Python's ftplib sends the whole
	 * "ABOR\r\n" with MSG_OOB); inline it so the LF is not lost. Without
	 * it ABOR during a transfer is never seen: the session cannot run as
	 * promised, so it does not run at all. Inline, every read stops at
	 * the urgent mark: ctrl_peek_abor takes the bytes before it.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)) != 0)
		die("setsockopt SO_OOBINLINE: %s", strerror(errno));
	/*
	 * Replies are small and often come in pairs (150 ... 226): with
	 * Nagle the second waits for the client's delayed ACK, 40 ms per
	 * transfer. Best effort: a failure costs only that latency, and a
	 * control socket that is not TCP (EOPNOTSUPP: a socketpair from a
	 * relay or a test) has no Nagle to turn off.
	 */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* log_ftp_protocol: called with each reply line written (no CRLF). */
static void (*reply_log_hook)(const char *line, size_t len);

void
ctrl_log_replies(void (*fn)(const char *line, size_t len))
{
	reply_log_hook = fn;
}

static void
log_reply_lines(const char *buf, size_t len)
{
	while (len > 0) {
		const char *lf = memchr(buf, '\n', len);
		size_t n = lf != NULL ? (size_t)(lf - buf) + 1 : len, text = n;

		while (text > 0 && (buf[text - 1] == '\n' || buf[text - 1] == '\r'))
			text--;
		reply_log_hook(buf, text);
		buf += n;
		len -= n;
	}
}

void
ctrl_write(struct ctrl *c, const char *buf, size_t len)
{
	if (reply_log_hook != NULL)
		log_reply_lines(buf, len);
	/* No deadline (as the plain path): the idle timeout ends a session
	 * whose client stops reading. */
	if (c->ssl != NULL) {
		if (tls_write_all(c->ssl, buf, len, 0) != 0)
			die("control connection lost (TLS)");
		return;
	}
	while (len > 0) {
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { c->fd, POLLOUT, 0 };

				(void)poll(&p, 1, CTRL_WRITE_WAIT_MS);
				continue;
			}
			die("control connection lost: %s", strerror(errno));
		}
		buf += n;
		len -= (size_t)n;
	}
}

void
ctrl_replyf(struct ctrl *c, int code, char sep, const char *fmt, ...)
{
	char line[REPLY_MAX_LINE];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = reply_vformat(line, sizeof(line), code, sep, fmt, ap);
	va_end(ap);
	ctrl_write(c, line, n);
}

/* timeout_ms < 0: wait forever. */
static int
wait_readable(int fd, long long timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int ms = timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;
	int rc;

	do {
		rc = poll(&p, 1, ms);
	} while (rc < 0 && errno == EINTR);
	return rc;
}

/*
 * Moves what an ABOR watch took off the socket (a line's start, no LF) to
 * buf, where the line being read begins. Returns its length.
 */
static size_t
take_pending(struct ctrl *c, char *buf, size_t cap)
{
	size_t len = c->pending_len;

	if (len > cap - 1)
		bug("%s: %zu pending bytes for a buffer of %zu", __func__, len, cap);
	memcpy(buf, c->pending, len);
	c->pending_len = 0;
	return len;
}

/*
 * ctrl_read_line over TLS. Records are not lines, so what is decrypted
 * past a line's LF waits in c->tls_in for the next call (or, at the
 * login, for the relay to pass on); it never leaves this process as if
 * it were anything but what the client sent inside TLS.
 */
static int
tls_read_line(struct ctrl *c, char *buf, size_t cap, long long deadline)
{
	for (;;) {
		char *lf = memchr(c->tls_in, '\n', c->tls_in_len);
		size_t take;
		int n;

		if (lf != NULL) {
			take = (size_t)(lf - c->tls_in) + 1;
			if (take > cap - 1)
				return CTRL_TOO_LONG;
			memcpy(buf, c->tls_in, take);
			c->tls_in_len -= take;
			memmove(c->tls_in, c->tls_in + take, c->tls_in_len);
			if (ctrlline_parse(buf, take - 1) < 0)
				return CTRL_BAD;
			return CTRL_LINE;
		}
		if (c->tls_in_len >= CTRL_MAX_LINE || c->tls_in_len >= cap - 1)
			return CTRL_TOO_LONG;
		n = tls_read(c->ssl, c->tls_in + c->tls_in_len,
			     (int)(CTRL_MAX_LINE - c->tls_in_len));
		if (n > 0) {
			c->tls_in_len += (size_t)n;
			continue;
		}
		if (deadline && tw_mono_ms() >= deadline)
			return CTRL_TIMEOUT;
		if (tls_wait(c->ssl, n, deadline) != 0)
			return deadline && tw_mono_ms() >= deadline ? CTRL_TIMEOUT : CTRL_EOF;
	}
}

int
ctrl_start_tls(struct ctrl *c, const struct tw_config *cfg)
{
	int fl = fcntl(c->fd, F_GETFL);

	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return -1;
	c->ssl = tls_ctrl_new(c->fd);
	c->tls_in = ctrl_tls_in_buf;
	c->tls_in_len = 0;
	if (tls_accept(c->ssl, CTRL_TLS_HANDSHAKE_S) != 0) {
		tls_log_error(cfg, "control handshake failed");
		tls_free(c->ssl);
		c->ssl = NULL;
		return -1;
	}
	/* The handshake's temporaries are freed: give their pages back
	 * (an idle TLS session's memory). */
	(void)malloc_trim(0);
	return 0;
}

void
ctrl_end(struct ctrl *c)
{
	if (c->ssl != NULL)
		tls_close(c->ssl);
	c->ssl = NULL;
}

int
ctrl_read_line(struct ctrl *c, char *buf, size_t cap, unsigned timeout_s)
{
	size_t len = take_pending(c, buf, cap);
	long long deadline = timeout_s ? tw_mono_ms() + (long long)timeout_s * MS_PER_S : 0;

	if (c->ssl != NULL)
		return tls_read_line(c, buf, cap, deadline);

	for (;;) {
		char peek[CTRL_PEEK_CHUNK];
		ssize_t n;
		char *lf;
		size_t take;
		long long left = -1;
		int waking = 0;

		if (deadline) {
			left = deadline - tw_mono_ms();
			if (left <= 0)
				return CTRL_TIMEOUT;
		}
		if (c->wake_ms != 0) {
			long long w = c->wake_ms - tw_mono_ms();

			if (w < 0)
				w = 0;
			if (left < 0 || w < left) {
				left = w;
				waking = 1;
			}
		}
		if (wait_readable(c->fd, left) == 0) {
			if (!waking)
				return CTRL_TIMEOUT;
			/* Once; the line is still awaited until the deadline. */
			c->wake_ms = 0;
			c->wake(c->wake_arg);
			continue;
		}
		/* With SO_OOBINLINE this stops at an urgent mark; the next
		 * round reads on from it. */
		n = recv(c->fd, peek, sizeof(peek), MSG_PEEK);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return CTRL_EOF;
		lf = memchr(peek, '\n', (size_t)n);
		take = lf != NULL ? (size_t)(lf - peek) + 1 : (size_t)n;
		if (len + take > cap - 1 || len + take > CTRL_MAX_LINE)
			return CTRL_TOO_LONG;
		n = recv(c->fd, buf + len, take, 0);
		if (n != (ssize_t)take)
			return CTRL_EOF;
		len += take;
		if (lf != NULL)
			break;
	}
	/* The LF is at buf[len - 1]: the command ends before it. */
	if (ctrlline_parse(buf, len - 1) < 0)
		return CTRL_BAD;
	return CTRL_LINE;
}

/*
 * Whether the receive queue holds more than the n bytes a peek returned.
 * Then the peek stopped at the urgent mark: with SO_OOBINLINE a read
 * stops there, and a peek, which does not move, stops there every time.
 * (Bytes that arrived since the peek look the same; taking them is
 * harmless: they go to c->pending, the start of the next line read.)
 */
static int
stopped_at_mark(void *arg, size_t n)
{
	const struct ctrl *c = arg;
	int queued;

	if (ioctl(c->fd, FIONREAD, &queued) != 0)
		return 0;
	return queued > 0 && (size_t)queued > n;
}

int
ctrl_peek_abor(struct ctrl *c)
{
	char line[CTRL_MAX_LINE + 1];
	size_t have = c->pending_len, room = CTRL_MAX_LINE - have, take = 0;
	ssize_t n = recv(c->fd, line + have, room, MSG_PEEK | MSG_DONTWAIT);

	if (n == 0)
		return CTRL_PEEK_EOF;
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? CTRL_PEEK_PARTIAL : CTRL_PEEK_EOF;
	memcpy(line, c->pending, have);
	switch (ctrlline_abor_peek(line, have, (size_t)n, room, stopped_at_mark, c, &take)) {
	case CTRLLINE_ABOR:
		/* Exactly the ABOR line (with its LF), nothing after it. */
		if (recv(c->fd, line, take, 0) != (ssize_t)take)
			return CTRL_PEEK_EOF;
		c->pending_len = 0;
		return CTRL_PEEK_ABOR;
	case CTRLLINE_TAKE_MARK:
		/* The next peek starts at the mark and sees the rest of the
		 * line; the next line read starts with these bytes. */
		if (recv(c->fd, c->pending + c->pending_len, take, 0) != (ssize_t)take)
			return CTRL_PEEK_EOF;
		c->pending_len += take;
		return CTRL_PEEK_AGAIN;
	case CTRLLINE_OTHER:
		return CTRL_PEEK_OTHER;
	case CTRLLINE_PARTIAL:
		break;
	}
	return CTRL_PEEK_PARTIAL;
}

void
ctrl_reply_text(struct ctrl *c, int code, const char *text)
{
	char line[CTRL_TEXT_LINE_MAX];

	while (*text != '\0') {
		size_t len = strcspn(text, "\n"), i, n = 0;

		for (i = 0; i < len && n + 1 < sizeof(line); i++) {
			unsigned char ch = (unsigned char)text[i];

			/* The CR of a CRLF file is not part of the line. */
			if (ch == '\r' && i + 1 == len)
				break;
			line[n++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
		}
		line[n] = '\0';
		ctrl_reply_cont(c, code, "%s", line);
		text += len;
		if (*text == '\n')
			text++;
	}
}
