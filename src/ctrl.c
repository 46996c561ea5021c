/*
 * The control channel: one reader that never buffers past a command's LF,
 * one writer for every reply.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/common/reply.h"
#include "src/common/util.h"
#include "src/worker.h"

#define TELNET_IAC 0xff

void
ctrl_init(struct ctrl *c, int fd)
{
	int one = 1;

	c->fd = fd;
	c->in_transfer = 0;
	/*
	 * Clients send ABOR as urgent data (Python's ftplib sends the whole
	 * "ABOR\r\n" with MSG_OOB); inline it so the LF is not lost.
	 */
	setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one));
	/*
	 * Replies are small and often come in pairs (150 ... 226): with
	 * Nagle the second waits for the client's delayed ACK, 40 ms per
	 * transfer.
	 */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void
ctrl_write(struct ctrl *c, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { c->fd, POLLOUT, 0 };

				(void)poll(&p, 1, 1000);
				continue;
			}
			die("control connection lost: %s", strerror(errno));
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void __attribute__((format(printf, 4, 0)))
ctrl_vreply(struct ctrl *c, int code, char sep, const char *fmt, va_list ap)
{
	char line[REPLY_MAX_LINE];

	ctrl_write(c, line, reply_vformat(line, sizeof(line), code, sep, fmt, ap));
}

void
ctrl_reply(struct ctrl *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctrl_vreply(c, code, ' ', fmt, ap);
	va_end(ap);
}

void
ctrl_reply_cont(struct ctrl *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctrl_vreply(c, code, '-', fmt, ap);
	va_end(ap);
}

void
ctrl_reply_raw(struct ctrl *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctrl_vreply(c, 0, ' ', fmt, ap);
	va_end(ap);
}

static int
wait_readable(int fd, unsigned timeout_s)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int ms = timeout_s == 0 ? -1 : (int)(timeout_s * 1000);
	int rc;

	do {
		rc = poll(&p, 1, ms);
	} while (rc < 0 && errno == EINTR);
	return rc;
}

/*
 * Removes telnet IAC sequences (RFC 854) that clients put before ABOR
 * (IAC IP, IAC DM) and unescapes IAC IAC; maps CR NUL to CR (RFC 2640).
 * Returns the new length, or -1 if a NUL remains.
 */
static ssize_t
clean_line(char *buf, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == TELNET_IAC && i + 1 < n) {
			unsigned char nx = (unsigned char)buf[i + 1];

			i++;
			if (nx == TELNET_IAC)
				buf[o++] = (char)TELNET_IAC;
			else if ((nx == 251 || nx == 252 || nx == 253 || nx == 254) && i + 1 < n)
				i++;	/* WILL/WONT/DO/DONT carry an option byte */
			continue;
		}
		if (ch == '\0') {
			if (o > 0 && buf[o - 1] == '\r')
				continue;
			return -1;
		}
		buf[o++] = (char)ch;
	}
	return (ssize_t)o;
}

int
ctrl_read_line(struct ctrl *c, char *buf, size_t cap, unsigned timeout_s)
{
	size_t len = 0;
	time_t deadline = timeout_s ? time(NULL) + timeout_s : 0;

	for (;;) {
		char peek[1024];
		ssize_t n;
		char *lf;
		size_t take;
		unsigned left = 0;

		if (deadline) {
			time_t now = time(NULL);

			if (now >= deadline)
				return CTRL_TIMEOUT;
			left = (unsigned)(deadline - now);
		}
		if (wait_readable(c->fd, left) == 0)
			return CTRL_TIMEOUT;
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
	/* Strip LF and an optional CR before it. */
	len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	{
		ssize_t cl = clean_line(buf, len);

		if (cl < 0)
			return CTRL_BAD;
		buf[cl] = '\0';
	}
	return CTRL_LINE;
}

/* Whether buf is nothing but whole Telnet commands (IAC x, x != IAC). */
static int
telnet_only(const char *buf, size_t n)
{
	size_t i;

	if (n == 0 || n % 2 != 0)
		return 0;
	for (i = 0; i < n; i += 2)
		if ((unsigned char)buf[i] != TELNET_IAC || (unsigned char)buf[i + 1] < 0xf0 ||
		    (unsigned char)buf[i + 1] == TELNET_IAC)
			return 0;
	return 1;
}

int
ctrl_peek_abor(struct ctrl *c)
{
	char peek[CTRL_MAX_LINE];
	ssize_t n = recv(c->fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT);
	char *lf;
	size_t len;
	ssize_t cl;

	if (n == 0)
		return CTRL_PEEK_EOF;
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? CTRL_PEEK_PARTIAL : CTRL_PEEK_EOF;
	lf = memchr(peek, '\n', (size_t)n);
	if (lf == NULL) {
		if ((size_t)n == sizeof(peek))
			return CTRL_PEEK_OTHER;
		/*
		 * With SO_OOBINLINE a read stops at the urgent mark, so the
		 * Telnet IP before a Synch (IAC IP, IAC DM ABOR) shows up
		 * alone: take such pure Telnet commands, they carry no data.
		 */
		if (telnet_only(peek, (size_t)n)) {
			if (recv(c->fd, peek, (size_t)n, 0) != n)
				return CTRL_PEEK_EOF;
			return CTRL_PEEK_AGAIN;
		}
		return CTRL_PEEK_PARTIAL;
	}
	len = (size_t)(lf - peek);
	if (len > 0 && peek[len - 1] == '\r')
		len--;
	cl = clean_line(peek, len);
	if (cl < 0)
		return CTRL_PEEK_OTHER;
	peek[cl] = '\0';
	if (!tw_strcaseeq(peek, "ABOR"))
		return CTRL_PEEK_OTHER;
	/* Take exactly the ABOR line, nothing after it. */
	len = (size_t)(lf - peek) + 1;
	{
		char sink[CTRL_MAX_LINE];

		if (recv(c->fd, sink, len, 0) != (ssize_t)len)
			return CTRL_PEEK_EOF;
	}
	return CTRL_PEEK_ABOR;
}
