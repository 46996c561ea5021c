/*
 * Control-line cleaning: Telnet commands (RFC 854) and CR NUL (RFC 2640)
 * out of the bytes of one FTP command line.
 */
#include "src/proto/ctrlline.h"

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
