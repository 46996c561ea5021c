#include "ftpreply.h"

#include <string.h>

void
ftp_reply_init(struct ftp_reply *r)
{
	r->len = 0;
	r->ml_code = 0;
	r->skipping = 0;
	r->last[0] = '\0';
}

char *
ftp_reply_space(struct ftp_reply *r, size_t *avail)
{
	*avail = sizeof(r->buf) - r->len;
	return r->buf + r->len;
}

void
ftp_reply_added(struct ftp_reply *r, size_t n)
{
	r->len += n;
}

static void
consume(struct ftp_reply *r, size_t n)
{
	memmove(r->buf, r->buf + n, r->len - n);
	r->len -= n;
}

/* Three digits, the first 1-5 (RFC 959 4.2). Returns the code or -1. */
static int
line_code(const char *p, size_t len)
{
	if (len < 3)
		return -1;
	if (p[0] < '1' || p[0] > '5' || p[1] < '0' || p[1] > '9' ||
	    p[2] < '0' || p[2] > '9')
		return -1;
	return (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
}

static void
save_last(struct ftp_reply *r, const char *p, size_t len)
{
	size_t n;

	/* Skip "ddd " (or a bare "ddd"). */
	p += len > 3 ? 4 : 3;
	len -= len > 3 ? 4 : 3;
	n = len < sizeof(r->last) - 1 ? len : sizeof(r->last) - 1;
	memcpy(r->last, p, n);
	r->last[n] = '\0';
}

/*
 * A line "ddd-" opens a multi-line reply that only a line starting with
 * the same code and a space closes; lines in between may hold anything
 * (RFC 959 4.2), including other codes.
 */
int
ftp_reply_next(struct ftp_reply *r, int *code)
{
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		size_t len;
		int c;

		if (nl == NULL) {
			if (r->len < sizeof(r->buf))
				return 0;
			/* Overlong: tolerated only where it cannot end a reply. */
			if (!r->skipping) {
				c = line_code(r->buf, r->len);
				if (r->ml_code == 0 && c > 0 && r->buf[3] == '-')
					r->ml_code = c;
				else if (r->ml_code == 0 ||
					 (c == r->ml_code && r->buf[3] == ' '))
					return -1;
			}
			r->skipping = 1;
			r->len = 0;
			return 0;
		}
		len = (size_t)(nl - r->buf);
		if (r->skipping) {
			r->skipping = 0;
			consume(r, len + 1);
			continue;
		}
		if (len > 0 && r->buf[len - 1] == '\r')
			len--;
		c = line_code(r->buf, len);
		if (r->ml_code != 0) {
			if (c == r->ml_code && (len == 3 || r->buf[3] == ' ')) {
				save_last(r, r->buf, len);
				r->ml_code = 0;
				consume(r, (size_t)(nl - r->buf) + 1);
				*code = c;
				return 1;
			}
			consume(r, (size_t)(nl - r->buf) + 1);
			continue;
		}
		if (c < 0)
			return -1;
		if (len > 3 && r->buf[3] == '-') {
			r->ml_code = c;
			consume(r, (size_t)(nl - r->buf) + 1);
			continue;
		}
		if (len > 3 && r->buf[3] != ' ')
			return -1;
		save_last(r, r->buf, len);
		consume(r, (size_t)(nl - r->buf) + 1);
		*code = c;
		return 1;
	}
}

/* Parses a decimal number of at most max; advances *pp. */
static int
parse_num(const char **pp, unsigned long max, unsigned long *out)
{
	const char *p = *pp;
	unsigned long v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > max)
			return -1;
	}
	*pp = p;
	*out = v;
	return 0;
}

/*
 * Servers differ in the words around the six numbers and some omit the
 * parentheses, so this looks for the first run of six comma-separated
 * numbers. The address part is ignored: like ftplib, the generator
 * connects to the control connection's peer.
 */
int
ftp_parse_pasv(const char *text, uint16_t *port)
{
	const char *p = strchr(text, '(');

	p = p != NULL ? p + 1 : text;
	for (; *p != '\0'; p++) {
		const char *q = p;
		unsigned long v[6];
		int i;

		if (*p < '0' || *p > '9')
			continue;
		for (i = 0; i < 6; i++) {
			if (parse_num(&q, 255, &v[i]) < 0)
				break;
			if (i < 5 && *q++ != ',')
				break;
		}
		if (i == 6) {
			if (v[4] * 256 + v[5] == 0)
				return -1;
			*port = (uint16_t)(v[4] * 256 + v[5]);
			return 0;
		}
		/* Skip the rest of this number before trying again. */
		while (p[1] >= '0' && p[1] <= '9')
			p++;
	}
	return -1;
}

/* RFC 2428: "(<d><d><d><port><d>)", d any printable delimiter. */
int
ftp_parse_epsv(const char *text, uint16_t *port)
{
	const char *p = strchr(text, '(');
	unsigned long v;
	char d;

	if (p == NULL)
		return -1;
	d = p[1];
	if (d < 33 || d > 126 || p[2] != d || p[3] != d)
		return -1;
	p += 4;
	if (parse_num(&p, 65535, &v) < 0 || v == 0)
		return -1;
	if (p[0] != d || p[1] != ')')
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int
ftp_parse_size(const char *text, uint64_t *size)
{
	uint64_t v = 0;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	while (*p == ' ')
		p++;
	if (*p != '\0')
		return -1;
	*size = v;
	return 0;
}
