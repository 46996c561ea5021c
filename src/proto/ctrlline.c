/*
 * Control-line cleaning: Telnet commands (RFC 854) and CR NUL (RFC 2640)
 * out of the bytes of one FTP command line.
 */
#include "src/proto/ctrlline.h"

#include <string.h>

#include "src/common/util.h"

static int
telnet_takes_option(unsigned char cmd)
{
	return cmd == TELNET_WILL || cmd == TELNET_WONT || cmd == TELNET_DO ||
	    cmd == TELNET_DONT;
}

/*
 * Removes Telnet commands and unescapes IAC IAC; maps CR NUL to CR.
 * Returns the new length, or -1 if a NUL remains.
 */
static ssize_t
strip_telnet(char *buf, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == TELNET_IAC && i + 1 < n) {
			unsigned char cmd = (unsigned char)buf[++i];

			if (cmd == TELNET_IAC)
				buf[o++] = (char)TELNET_IAC;
			else if (telnet_takes_option(cmd) && i + 1 < n)
				i++;
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

ssize_t
ctrlline_parse(char *buf, size_t len)
{
	ssize_t n;

	if (len > 0 && buf[len - 1] == '\r')
		len--;
	n = strip_telnet(buf, len);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

int
ctrlline_is_abor(char *buf, size_t len)
{
	return ctrlline_parse(buf, len) >= 0 && tw_strcaseeq(buf, "ABOR");
}

enum ctrlline_abor_peek
ctrlline_abor_peek(char *line, size_t have, size_t n, size_t room,
		   int (*at_mark)(void *arg, size_t n), void *arg, size_t *take)
{
	char *lf = memchr(line + have, '\n', n);
	size_t len;

	if (lf == NULL) {
		/*
		 * ftplib sends all of "ABOR\r\n" urgent, so its mark is on
		 * the LF; other clients mark the Telnet Synch (IAC DM) before
		 * ABOR. Either way the line goes on past the mark.
		 */
		if (n > 0 && n < room && at_mark(arg, n)) {
			*take = n;
			return CTRLLINE_TAKE_MARK;
		}
		/* A line too long to be ABOR, or one still arriving. */
		return n >= room ? CTRLLINE_OTHER : CTRLLINE_PARTIAL;
	}
	len = (size_t)(lf - (line + have)) + 1;
	if (!ctrlline_is_abor(line, have + len - 1))
		return CTRLLINE_OTHER;
	*take = len;
	return CTRLLINE_ABOR;
}
