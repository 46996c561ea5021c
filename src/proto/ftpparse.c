/*
 * Parsers for FTP command arguments that carry addresses and paths.
 *
 * Everything here reads client input, so every parser is strict: it says
 * exactly what it accepts and rejects anything else, instead of guessing
 * what a sloppy client meant. PORT and EPRT addresses feed the anti-bounce
 * check (DESIGN.md invariant 5), where "close enough" is not good enough.
 */
#include "src/proto/ftpparse.h"
#include "src/common/util.h"

#include <arpa/inet.h>
#include <limits.h>
#include <string.h>

/* Longest address text EPRT may carry: a full IPv6 with embedded IPv4. */
#define EPRT_ADDR_MAX INET6_ADDRSTRLEN

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Reads one PORT field: 1..3 decimal digits, value <= 255, then the
 * expected terminator. Returns the position after the terminator or NULL.
 */
static const char *
port_field(const char *s, char term, unsigned *val)
{
	unsigned v = 0;
	int ndig = 0;

	while (is_digit(*s)) {
		if (++ndig > 3)
			return NULL;
		v = v * 10 + (unsigned)(*s - '0');
		s++;
	}
	if (ndig == 0 || v > 255 || *s != term)
		return NULL;
	*val = v;
	return s + 1;
}

int
ftp_parse_port(const char *arg, struct sockaddr_storage *out)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)out;
	unsigned f[6];
	const char *p = arg;
	size_t i;
	uint32_t ip;
	unsigned port;

	if (arg == NULL)
		return -1;
	for (i = 0; i < TW_ARRAY_LEN(f); i++) {
		p = port_field(p, i + 1 < TW_ARRAY_LEN(f) ? ',' : '\0', &f[i]);
		if (p == NULL)
			return -1;
	}
	port = f[4] << 8 | f[5];
	/*
	 * Port 0 cannot be connected to; EPRT rejects it by its RFC, and
	 * treating both commands alike keeps the caller's checks simple.
	 */
	if (port == 0)
		return -1;
	ip = (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 |
	    (uint32_t)f[2] << 8 | (uint32_t)f[3];
	memset(out, 0, sizeof(*out));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	sin->sin_port = htons((uint16_t)port);
	return 0;
}

/*
 * Copies the EPRT field that starts at s and ends at the next delimiter
 * into buf. Returns the position after the delimiter or NULL.
 */
static const char *
eprt_field(const char *s, char delim, char *buf, size_t cap)
{
	const char *end = strchr(s, delim);
	size_t len;

	if (end == NULL)
		return NULL;
	len = (size_t)(end - s);
	if (len == 0 || len >= cap)
		return NULL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return end + 1;
}

int
ftp_parse_eprt(const char *arg, struct sockaddr_storage *out)
{
	char proto[2], addr[EPRT_ADDR_MAX], portstr[6];
	unsigned long long port;
	struct sockaddr_in *sin = (struct sockaddr_in *)out;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;
	struct in_addr a4;
	struct in6_addr a6;
	const char *p;
	char d;

	if (arg == NULL)
		return -1;
	d = arg[0];
	if (d < 33 || d > 126 || is_digit(d))
		return -1;
	p = arg + 1;
	if ((p = eprt_field(p, d, proto, sizeof(proto))) == NULL ||
	    (p = eprt_field(p, d, addr, sizeof(addr))) == NULL ||
	    (p = eprt_field(p, d, portstr, sizeof(portstr))) == NULL ||
	    *p != '\0')
		return -1;
	/* tw_parse_uint refuses signs, spaces and anything but digits. */
	if (tw_parse_uint(portstr, 1, 65535, &port) == -1)
		return -1;

	if (strcmp(proto, "1") == 0) {
		if (inet_pton(AF_INET, addr, &a4) != 1)
			return -1;
		memset(out, 0, sizeof(*out));
		sin->sin_family = AF_INET;
		sin->sin_addr = a4;
		sin->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (strcmp(proto, "2") == 0) {
		/* inet_pton has no notion of "%scope": such forms fail here. */
		if (inet_pton(AF_INET6, addr, &a6) != 1)
			return -1;
		memset(out, 0, sizeof(*out));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = a6;
		sin6->sin6_port = htons((uint16_t)port);
		sin6->sin6_scope_id = 0;
		return 0;
	}
	return -1;
}

int
ftp_parse_epsv(const char *arg, enum ftp_epsv_kind *kind, int *proto)
{
	if (arg == NULL || arg[0] == '\0') {
		*kind = FTP_EPSV_ANY;
		return 0;
	}
	if (tw_strcaseeq(arg, "ALL")) {
		*kind = FTP_EPSV_ALL;
		return 0;
	}
	if ((arg[0] == '1' || arg[0] == '2') && arg[1] == '\0') {
		*kind = FTP_EPSV_PROTO;
		*proto = arg[0] - '0';
		return 0;
	}
	return -1;
}

int
ftp_format_pasv(char *buf, size_t cap, const struct in_addr *addr, unsigned port)
{
	const unsigned char *b = (const unsigned char *)&addr->s_addr;

	if (port > 65535)
		return -1;
	return tw_snprintf(buf, cap, "%u,%u,%u,%u,%u,%u", b[0], b[1], b[2], b[3],
	    port >> 8, port & 0xff);
}

int
ftp_quote_257(const char *path, char *out, size_t cap)
{
	size_t o = 0;

	for (; *path != '\0'; path++) {
		size_t need = *path == '"' ? 2 : 1;

		if (cap - o <= need)	/* keep one byte for the NUL */
			return -1;
		out[o++] = *path;
		if (need == 2)
			out[o++] = '"';
	}
	if (cap == 0)
		return -1;
	out[o] = '\0';
	if (o > INT_MAX)
		return -1;
	return (int)o;
}

int
ftp_path_join(const char *dir, const char *name, char *out, size_t cap)
{
	size_t dlen = strlen(dir), nlen;

	while (dlen > 0 && dir[dlen - 1] == '/')
		dlen--;
	while (*name == '/')
		name++;
	nlen = strlen(name);
	/* dir + '/' + name + NUL; checked term by term so nothing wraps. */
	if (dlen >= cap || nlen >= cap - dlen - 1 || dlen + 1 + nlen > INT_MAX)
		return -1;
	memcpy(out, dir, dlen);
	out[dlen] = '/';
	memcpy(out + dlen + 1, name, nlen);
	out[dlen + 1 + nlen] = '\0';
	return (int)(dlen + 1 + nlen);
}

int
ftp_tilde_user(const char *arg, const char *passwd, size_t len, char *out, size_t cap)
{
	const char *name, *rest, *line = passwd, *end = passwd + len;
	size_t nlen;

	if (arg[0] != '~' || arg[1] == '\0' || arg[1] == '/')
		return -1;
	name = arg + 1;
	rest = strchr(name, '/');
	nlen = rest != NULL ? (size_t)(rest - name) : strlen(name);
	/* A name with a colon would match a line's first fields. */
	if (memchr(name, ':', nlen) != NULL)
		return -1;
	/* Bounded: each turn moves past one line of the file. */
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *f = line, *home;
		size_t hlen;
		int field;

		if (eol == NULL)
			eol = end;
		if ((size_t)(eol - line) > nlen && memcmp(line, name, nlen) == 0 &&
		    line[nlen] == ':') {
			/* The sixth field: past five colons. */
			for (field = 0; field < 5 && f != NULL; field++) {
				f = memchr(f, ':', (size_t)(eol - f));
				if (f != NULL)
					f++;
			}
			if (f == NULL)
				return -1;
			home = f;
			f = memchr(home, ':', (size_t)(eol - home));
			hlen = (size_t)((f != NULL ? f : eol) - home);
			if (hlen == 0 || home[0] != '/' || memchr(home, '\0', hlen) != NULL)
				return -1;
			/* "/" and rest: the rest's own slash. */
			if (hlen == 1 && rest != NULL)
				hlen = 0;
			if (rest == NULL)
				rest = "";
			if (hlen >= cap || strlen(rest) >= cap - hlen || hlen + strlen(rest) > INT_MAX)
				return -1;
			memcpy(out, home, hlen);
			memcpy(out + hlen, rest, strlen(rest) + 1);
			return (int)(hlen + strlen(rest));
		}
		if (eol == end)
			break;
		line = eol + 1;
	}
	return -1;
}

int
ftp_path_ok(const char *path)
{
	size_t len;

	if (path == NULL)
		return -1;
	len = strnlen(path, PATH_MAX);
	if (len == 0 || len >= PATH_MAX)
		return -1;
	return 0;
}

int
ftp_name_creatable(const char *path)
{
	return strpbrk(path, "\r\n") == NULL ? 0 : -1;
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Clients send ls(1) options with LIST although RFC 959 has none; vsftpd
 * and most servers accept them. Only a/A and R change what we list; the
 * rest are ignored. As in vsftpd, a path that starts with '-' cannot be
 * listed this way (clients can use "./-name").
 */
const char *
ftp_list_args(const char *arg, unsigned *flags)
{
	*flags = 0;
	if (arg == NULL)
		return "";
	for (;;) {
		while (is_blank(*arg))
			arg++;
		if (*arg != '-')
			return arg;
		for (; *arg != '\0' && !is_blank(*arg); arg++) {
			if (*arg == 'a' || *arg == 'A')
				*flags |= FTP_LIST_ALL;
			else if (*arg == 'R')
				*flags |= FTP_LIST_RECURSIVE;
		}
	}
}

/* n decimal digits at s into *out; 0, or -1 when one is not a digit. */
static int
fixed_digits(const char *s, unsigned n, int *out)
{
	int v = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

const char *
ftp_mdtm_write_args(const char *arg, struct tm *tm)
{
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *blank = strchr(arg, ' ');
	size_t at;
	int y, mo, d, h = 0, mi = 0, sec = 0;

	if (blank == NULL || arg[0] < '0' || arg[0] > '9' || blank[1] == '\0')
		return NULL;
	at = (size_t)(blank - arg);
	if (at != 8 && at != 14 && !(at > 15 && arg[14] == '.'))
		return NULL;
	if (fixed_digits(arg, 4, &y) != 0 || fixed_digits(arg + 4, 2, &mo) != 0 ||
	    fixed_digits(arg + 6, 2, &d) != 0)
		return NULL;
	if (at >= 14 && (fixed_digits(arg + 8, 2, &h) != 0 ||
			 fixed_digits(arg + 10, 2, &mi) != 0 ||
			 fixed_digits(arg + 12, 2, &sec) != 0))
		return NULL;
	if (at > 15 && strspn(arg + 15, "0123456789") != at - 15)
		return NULL;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) ||
	    h > 23 || mi > 59 || sec > 60)
		return NULL;
	memset(tm, 0, sizeof(*tm));
	tm->tm_year = y - 1900;
	tm->tm_mon = mo - 1;
	tm->tm_mday = d;
	tm->tm_hour = h;
	tm->tm_min = mi;
	tm->tm_sec = sec;
	tm->tm_isdst = -1;
	return blank + 1;
}
