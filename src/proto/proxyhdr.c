#include "src/proto/proxyhdr.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

static const char v1_sig[] = "PROXY ";
#define V1_SIG_LEN (sizeof(v1_sig) - 1)

/* Version 2's signature: CRLF CRLF NUL CRLF "QUIT" LF (proxy-protocol.txt 2.2). */
static const unsigned char v2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
};

/* Version 2's 13th byte: the version (high nibble) and the command. */
#define V2_VERSION 0x2
#define V2_CMD_LOCAL 0x0
#define V2_CMD_PROXY 0x1
/* The 14th byte: address family (high nibble) and transport. */
#define V2_TCP_OVER_IPV4 0x11
#define V2_TCP_OVER_IPV6 0x21

#define PORT_MAX 65535
#define PORT_DIGITS_MAX 5

/* 1 when the len bytes of buf are a start of sig (len <= siglen), else 0. */
static int
starts_sig(const unsigned char *buf, size_t len, const void *sig, size_t siglen)
{
	return memcmp(buf, sig, len < siglen ? len : siglen) == 0;
}

enum proxyhdr_sniffed
proxyhdr_sniff(const unsigned char *buf, size_t len)
{
	int v1 = starts_sig(buf, len, v1_sig, V1_SIG_LEN);
	int v2 = starts_sig(buf, len, v2_sig, sizeof(v2_sig));

	if ((v1 && len >= V1_SIG_LEN) || (v2 && len >= sizeof(v2_sig)))
		return PROXYHDR_SNIFF_YES;
	return v1 || v2 ? PROXYHDR_SNIFF_MORE : PROXYHDR_SNIFF_NO;
}

static enum proxyhdr_status
bad(const char **why, const char *text)
{
	*why = text;
	return PROXYHDR_BAD;
}

/* A decimal port: 1 to 5 digits, no leading zero but "0" itself, <= 65535. */
static int
v1_port(const char *s, uint16_t *out)
{
	unsigned long v = 0;
	size_t n = 0;

	if (s[0] == '0' && s[1] != '\0')
		return -1;
	for (; s[n] != '\0'; n++) {
		if (s[n] < '0' || s[n] > '9' || n == PORT_DIGITS_MAX)
			return -1;
		v = v * 10 + (unsigned long)(s[n] - '0');
	}
	if (n == 0 || v > PORT_MAX)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* Splits line at single spaces into exactly n fields; -1 otherwise. */
static int
v1_fields(char *line, char **f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *sp = strchr(line, ' ');

		if (line[0] == '\0' || line[0] == ' ')
			return -1;
		f[i] = line;
		if (i + 1 == n)
			return sp == NULL ? 0 : -1;
		if (sp == NULL)
			return -1;
		*sp = '\0';
		line = sp + 1;
	}
	return -1;
}

/*
 * "PROXY TCP4 src dst sport dport\r\n" (or TCP6), or "PROXY UNKNOWN"
 * with anything up to the CRLF, which the receiver ignores.
 */
static enum proxyhdr_status
parse_v1(const unsigned char *buf, size_t len, struct proxyhdr *h, size_t *consumed,
	 const char **why)
{
	char line[PROXYHDR_V1_MAX + 1], *f[5];
	const unsigned char *lf;
	size_t n, i;

	if (!starts_sig(buf, len, v1_sig, V1_SIG_LEN))
		return bad(why, "not a PROXY header");
	lf = memchr(buf, '\n', len < PROXYHDR_V1_MAX ? len : PROXYHDR_V1_MAX);
	if (lf == NULL) {
		if (len >= PROXYHDR_V1_MAX) {
			*why = "version 1 header longer than 107 bytes";
			return PROXYHDR_TOO_LONG;
		}
		return PROXYHDR_MORE;
	}
	n = (size_t)(lf - buf);
	if (n < V1_SIG_LEN + 1 || buf[n - 1] != '\r')
		return bad(why, "version 1 header without CRLF");
	/* The text between the signature and the CR. */
	n -= V1_SIG_LEN + 1;
	for (i = 0; i < n; i++) {
		unsigned char c = buf[V1_SIG_LEN + i];

		if (c < 0x20 || c > 0x7e)
			return bad(why, "control or non-ASCII byte in a version 1 header");
		line[i] = (char)c;
	}
	line[n] = '\0';
	memset(h, 0, sizeof(*h));
	h->version = 1;
	*consumed = (size_t)(lf - buf) + 1;
	if (strncmp(line, "UNKNOWN", 7) == 0 && (line[7] == '\0' || line[7] == ' ')) {
		h->kind = PROXYHDR_LOCAL;
		return PROXYHDR_OK;
	}
	if (v1_fields(line, f, 5) != 0)
		return bad(why, "version 1 header without its five fields");
	if (strcmp(f[0], "TCP4") == 0)
		h->family = AF_INET;
	else if (strcmp(f[0], "TCP6") == 0)
		h->family = AF_INET6;
	else
		return bad(why, "version 1 protocol neither TCP4, TCP6 nor UNKNOWN");
	if (inet_pton(h->family, f[1], h->src) != 1 || inet_pton(h->family, f[2], h->dst) != 1)
		return bad(why, "version 1 address not of its protocol's family");
	if (v1_port(f[3], &h->src_port) != 0 || v1_port(f[4], &h->dst_port) != 0)
		return bad(why, "version 1 port not a number from 0 to 65535");
	h->kind = PROXYHDR_PROXY;
	return PROXYHDR_OK;
}

static uint16_t
be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static enum proxyhdr_status
parse_v2(const unsigned char *buf, size_t len, struct proxyhdr *h, size_t *consumed,
	 const char **why)
{
	size_t body, alen;
	unsigned cmd;

	if (!starts_sig(buf, len, v2_sig, sizeof(v2_sig)))
		return bad(why, "not a PROXY header");
	if (len < PROXYHDR_V2_FIXED)
		return PROXYHDR_MORE;
	if (buf[12] >> 4 != V2_VERSION)
		return bad(why, "version 2 signature with another version");
	cmd = buf[12] & 0x0f;
	if (cmd != V2_CMD_LOCAL && cmd != V2_CMD_PROXY)
		return bad(why, "version 2 command neither LOCAL nor PROXY");
	body = be16(buf + 14);
	if (body > PROXYHDR_V2_MAX_BODY) {
		*why = "version 2 header longer than this server accepts";
		return PROXYHDR_TOO_LONG;
	}
	if (len < PROXYHDR_V2_FIXED + body)
		return PROXYHDR_MORE;
	memset(h, 0, sizeof(*h));
	h->version = 2;
	*consumed = PROXYHDR_V2_FIXED + body;
	/* LOCAL: the balancer's own connection; the rest is to be skipped. */
	if (cmd == V2_CMD_LOCAL) {
		h->kind = PROXYHDR_LOCAL;
		return PROXYHDR_OK;
	}
	buf += PROXYHDR_V2_FIXED;
	/* The TLVs after the address block are skipped: nothing here uses them. */
	if (buf[-3] == V2_TCP_OVER_IPV4)
		alen = 4;
	else if (buf[-3] == V2_TCP_OVER_IPV6)
		alen = 16;
	else	/* UDP, UNIX sockets or UNSPEC: no TCP client to name. */
		return bad(why, "version 2 PROXY of neither TCP over IPv4 nor over IPv6");
	/* Both addresses, then both ports. */
	if (body < 2 * alen + 4)
		return bad(why, "version 2 address block too short for its family");
	h->family = alen == 4 ? AF_INET : AF_INET6;
	memcpy(h->src, buf, alen);
	memcpy(h->dst, buf + alen, alen);
	h->src_port = be16(buf + 2 * alen);
	h->dst_port = be16(buf + 2 * alen + 2);
	h->kind = PROXYHDR_PROXY;
	return PROXYHDR_OK;
}

enum proxyhdr_status
proxyhdr_parse(const unsigned char *buf, size_t len, struct proxyhdr *h, size_t *consumed,
	       const char **why)
{
	*why = "";
	if (len == 0)
		return PROXYHDR_MORE;
	if (buf[0] == (unsigned char)v1_sig[0])
		return parse_v1(buf, len, h, consumed, why);
	if (buf[0] == v2_sig[0])
		return parse_v2(buf, len, h, consumed, why);
	return bad(why, "not a PROXY header");
}
