#include "src/common/reply.h"

#include <stdio.h>
#include <sys/socket.h>

size_t
reply_vformat(char *buf, size_t cap, int code, char sep, const char *fmt, va_list ap)
{
	size_t n = 0, i;
	int m;

	if (cap < 8)
		return 0;
	if (code > 0) {
		m = snprintf(buf, cap, "%03d%c", code % 1000, sep);
		n = m > 0 ? (size_t)m : 0;
	}
	m = vsnprintf(buf + n, cap - n - 2, fmt, ap);
	if (m > 0)
		n += (size_t)m >= cap - n - 2 ? cap - n - 3 : (size_t)m;
	for (i = 0; i < n; i++)
		if (buf[i] == '\r' || buf[i] == '\n')
			buf[i] = '?';
	buf[n++] = '\r';
	buf[n++] = '\n';
	return n;
}

static size_t __attribute__((format(printf, 4, 5)))
reply_format(char *buf, size_t cap, int code, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = reply_vformat(buf, cap, code, ' ', fmt, ap);
	va_end(ap);
	return n;
}

void
reply_final(int fd, int code, const char *text)
{
	char line[REPLY_MAX_LINE];
	size_t n = reply_format(line, sizeof(line), code, "%s", text);

	/*
	 * The socket buffer of a connection no worker has written to (or
	 * whose worker is dead) has room for a short line: a non-blocking
	 * send cannot stall the caller, and a full buffer loses only this
	 * courtesy line.
	 */
	(void)!send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}
