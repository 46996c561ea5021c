/*
 * Unit tests for src/proto/proxyhdr.c (every branch of both versions'
 * parsers and of the sniffer) and for the trusted-networks list of
 * src/common/sockaddr.c that decides who may send a header.
 */
#include "src/proto/proxyhdr.h"
#include "src/common/sockaddr.h"
#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#define V2SIG "\r\n\r\n\0\r\nQUIT\n"

static struct proxyhdr h;
static size_t used;
static const char *why;

static enum proxyhdr_status
parse(const void *buf, size_t len)
{
	used = 0;
	why = NULL;
	return proxyhdr_parse(buf, len, &h, &used, &why);
}

#define PARSE(lit) parse((lit), sizeof(lit) - 1)

/* Every prefix of a whole header is MORE: the caller waits, never misreads. */
static void
check_prefixes_more(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		CHECK_INT(parse(buf, i), PROXYHDR_MORE);
}

static void
test_v1(void)
{
	static const char tcp4[] = "PROXY TCP4 192.0.2.7 198.51.100.1 56324 21\r\nUSER x\r\n";
	static const char tcp6[] = "PROXY TCP6 2001:db8::7 2001:db8::1 65535 0\r\n";
	unsigned char a[16];

	CHECK_INT(PARSE(tcp4), PROXYHDR_OK);
	CHECK_INT(used, strlen("PROXY TCP4 192.0.2.7 198.51.100.1 56324 21\r\n"));
	CHECK_INT(h.version, 1);
	CHECK_INT(h.kind, PROXYHDR_PROXY);
	CHECK_INT(h.family, AF_INET);
	CHECK(inet_pton(AF_INET, "192.0.2.7", a) == 1 && memcmp(h.src, a, 4) == 0);
	CHECK(inet_pton(AF_INET, "198.51.100.1", a) == 1 && memcmp(h.dst, a, 4) == 0);
	CHECK_INT(h.src_port, 56324);
	CHECK_INT(h.dst_port, 21);
	check_prefixes_more(tcp4, used);

	CHECK_INT(PARSE(tcp6), PROXYHDR_OK);
	CHECK_INT(h.family, AF_INET6);
	CHECK(inet_pton(AF_INET6, "2001:db8::7", a) == 1 && memcmp(h.src, a, 16) == 0);
	CHECK_INT(h.src_port, 65535);
	CHECK_INT(h.dst_port, 0);

	/* UNKNOWN, alone or with anything before the CRLF: no client. */
	CHECK_INT(PARSE("PROXY UNKNOWN\r\n"), PROXYHDR_OK);
	CHECK_INT(h.kind, PROXYHDR_LOCAL);
	CHECK_INT(used, 15);
	CHECK_INT(PARSE("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), PROXYHDR_OK);
	CHECK_INT(h.kind, PROXYHDR_LOCAL);
	CHECK_INT(PARSE("PROXY UNKNOWNX\r\n"), PROXYHDR_BAD);
}

static void
test_v1_bad(void)
{
	char longer[PROXYHDR_V1_MAX + 8];

	CHECK_INT(PARSE("PROXX TCP4"), PROXYHDR_BAD);
	CHECK_INT(PARSE("GET / HTTP/1.0\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY \n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY \r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n"), PROXYHDR_BAD);
	CHECK(why != NULL && why[0] != '\0');
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1 \r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n"), PROXYHDR_BAD);
	/* An address of the other family, or none. */
	CHECK_INT(PARSE("PROXY TCP4 ::1 5.6.7.8 1 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP6 1.2.3.4 ::1 1 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7 1 2\r\n"), PROXYHDR_BAD);
	/* Ports: decimal, 0..65535, no sign, no leading zero. */
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1 123456\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1 2x\r\n"), PROXYHDR_BAD);
	/* Control and non-ASCII bytes. */
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\r\n"), PROXYHDR_BAD);
	CHECK_INT(PARSE("PROXY TCP4 1.2.3.4 5.6.7.\xe9 1 2\r\n"), PROXYHDR_BAD);
	/* 107 bytes without a LF: too long; 106: may still end. */
	memset(longer, 'A', sizeof(longer));
	memcpy(longer, "PROXY ", 6);
	CHECK_INT(parse(longer, PROXYHDR_V1_MAX - 1), PROXYHDR_MORE);
	CHECK_INT(parse(longer, PROXYHDR_V1_MAX), PROXYHDR_TOO_LONG);
	CHECK_INT(parse(longer, sizeof(longer)), PROXYHDR_TOO_LONG);
	/* A LF past byte 107 is not looked for. */
	longer[PROXYHDR_V1_MAX] = '\n';
	CHECK_INT(parse(longer, sizeof(longer)), PROXYHDR_TOO_LONG);
}

/* A version 2 header: ver_cmd, fam, then body bytes. */
static size_t
v2(unsigned char *out, unsigned ver_cmd, unsigned fam, const void *body, size_t blen)
{
	memcpy(out, V2SIG, 12);
	out[12] = (unsigned char)ver_cmd;
	out[13] = (unsigned char)fam;
	out[14] = (unsigned char)(blen >> 8);
	out[15] = (unsigned char)blen;
	memcpy(out + 16, body, blen);
	return 16 + blen;
}

static void
test_v2(void)
{
	static const unsigned char b4[12] = { 10, 0, 0, 7, 10, 0, 0, 1, 0xdc, 0x04, 0, 21 };
	unsigned char b6[36 + 7], buf[PROXYHDR_MAX + 32];
	size_t n;

	n = v2(buf, 0x21, 0x11, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_OK);
	CHECK_INT(used, 28);
	CHECK_INT(h.version, 2);
	CHECK_INT(h.kind, PROXYHDR_PROXY);
	CHECK_INT(h.family, AF_INET);
	CHECK(memcmp(h.src, b4, 4) == 0 && memcmp(h.dst, b4 + 4, 4) == 0);
	CHECK_INT(h.src_port, 56324);
	CHECK_INT(h.dst_port, 21);
	check_prefixes_more((const char *)buf, n);
	/* The client's own bytes after it are left alone. */
	memcpy(buf + n, "USER x\r\n", 8);
	CHECK_INT(parse(buf, n + 8), PROXYHDR_OK);
	CHECK_INT(used, 28);

	/* IPv6, with a TLV after the addresses (skipped). */
	memset(b6, 0, sizeof(b6));
	b6[15] = 7;
	b6[31] = 1;
	b6[32] = 0x12;
	b6[33] = 0x34;
	b6[35] = 21;
	memcpy(b6 + 36, "\x04\x00\x04" "abcd", 7);
	n = v2(buf, 0x21, 0x21, b6, sizeof(b6));
	CHECK_INT(parse(buf, n), PROXYHDR_OK);
	CHECK_INT(used, 16 + 43);
	CHECK_INT(h.family, AF_INET6);
	CHECK_INT(h.src[15], 7);
	CHECK_INT(h.dst[15], 1);
	CHECK_INT(h.src_port, 0x1234);

	/* LOCAL (a health check), whatever its family and body. */
	n = v2(buf, 0x20, 0x00, "", 0);
	CHECK_INT(parse(buf, n), PROXYHDR_OK);
	CHECK_INT(h.kind, PROXYHDR_LOCAL);
	CHECK_INT(used, 16);
	n = v2(buf, 0x20, 0x11, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_OK);
	CHECK_INT(h.kind, PROXYHDR_LOCAL);
	CHECK_INT(used, 28);
}

static void
test_v2_bad(void)
{
	static const unsigned char b4[12] = { 10, 0, 0, 7, 10, 0, 0, 1, 0, 1, 0, 2 };
	unsigned char buf[PROXYHDR_MAX + 32], big[PROXYHDR_V2_MAX_BODY + 1];
	size_t n;

	CHECK_INT(PARSE("\r\n\r\nX"), PROXYHDR_BAD);
	CHECK_INT(PARSE("\r\nUSER"), PROXYHDR_BAD);
	/* Version 1 in the version nibble; commands 2..15. */
	n = v2(buf, 0x11, 0x11, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	n = v2(buf, 0x22, 0x11, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	/* Address blocks shorter than their family's. */
	n = v2(buf, 0x21, 0x11, b4, sizeof(b4) - 1);
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	n = v2(buf, 0x21, 0x21, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	/* UDP, UNIX, UNSPEC with PROXY: no TCP client. */
	n = v2(buf, 0x21, 0x12, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	n = v2(buf, 0x21, 0x31, b4, sizeof(b4));
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	n = v2(buf, 0x21, 0x00, "", 0);
	CHECK_INT(parse(buf, n), PROXYHDR_BAD);
	/* A body beyond the bound is refused from the fixed part alone. */
	memset(big, 0, sizeof(big));
	n = v2(buf, 0x21, 0x11, big, sizeof(big));
	CHECK_INT(parse(buf, 16), PROXYHDR_TOO_LONG);
	CHECK_INT(parse(buf, n), PROXYHDR_TOO_LONG);
	n = v2(buf, 0x21, 0x11, big, PROXYHDR_V2_MAX_BODY);
	CHECK_INT(parse(buf, n), PROXYHDR_OK);
	CHECK_INT(used, PROXYHDR_MAX);

	/* Neither version's first byte; nothing yet. */
	CHECK_INT(PARSE("USER alice\r\n"), PROXYHDR_BAD);
	CHECK_INT(parse("", 0), PROXYHDR_MORE);
}

static void
test_sniff(void)
{
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"PROXY TCP4", 10), PROXYHDR_SNIFF_YES);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"PROXY ", 6), PROXYHDR_SNIFF_YES);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)V2SIG, 12), PROXYHDR_SNIFF_YES);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)V2SIG "\x21", 13), PROXYHDR_SNIFF_YES);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"PROX", 4), PROXYHDR_SNIFF_MORE);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"\r\n", 2), PROXYHDR_SNIFF_MORE);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"", 0), PROXYHDR_SNIFF_MORE);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"PASS x", 6), PROXYHDR_SNIFF_NO);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"PROXYZ", 6), PROXYHDR_SNIFF_NO);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"\r\nUSER", 6), PROXYHDR_SNIFF_NO);
	CHECK_INT(proxyhdr_sniff((const unsigned char *)"USER a\r\n", 8), PROXYHDR_SNIFF_NO);
}

static struct sockaddr_storage
addr(const char *text)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	return ss;
}

static int
match(const struct sa_cidr_list *l, const char *text)
{
	struct sockaddr_storage ss = addr(text);

	return sa_cidr_list_match(l, &ss);
}

static void
test_cidr(void)
{
	struct sa_cidr_list l;
	char many[SA_CIDR_MAX * 12 + 16];
	size_t i;

	CHECK_INT(sa_cidr_list_parse("", &l), 0);
	CHECK_INT(l.n, 0);
	CHECK_INT(match(&l, "127.0.0.1"), 0);
	CHECK_INT(sa_cidr_list_parse("127.0.0.1/32, 10.0.0.0/8,::1/128 ,2001:db8::/33,192.0.2.9",
				     &l), 0);
	CHECK_INT(l.n, 5);
	CHECK_INT(match(&l, "127.0.0.1"), 1);
	CHECK_INT(match(&l, "::ffff:127.0.0.1"), 1);
	CHECK_INT(match(&l, "127.0.0.2"), 0);
	CHECK_INT(match(&l, "10.255.1.2"), 1);
	CHECK_INT(match(&l, "11.0.0.1"), 0);
	CHECK_INT(match(&l, "::1"), 1);
	CHECK_INT(match(&l, "::2"), 0);
	CHECK_INT(match(&l, "2001:db8:7fff::1"), 1);
	CHECK_INT(match(&l, "2001:db8:8000::1"), 0);
	CHECK_INT(match(&l, "192.0.2.9"), 1);
	CHECK_INT(match(&l, "192.0.2.8"), 0);
	/* Odd prefix lengths cut inside a byte; /0 is everything of a family. */
	CHECK_INT(sa_cidr_list_parse("192.168.4.0/23,0.0.0.0/0", &l), 0);
	CHECK_INT(match(&l, "8.8.8.8"), 1);
	CHECK_INT(match(&l, "::8"), 0);
	CHECK_INT(sa_cidr_list_parse("192.168.4.0/23", &l), 0);
	CHECK_INT(match(&l, "192.168.5.200"), 1);
	CHECK_INT(match(&l, "192.168.6.1"), 0);
	/* A v4-mapped entry is its IPv4 network. */
	CHECK_INT(sa_cidr_list_parse("::ffff:10.1.0.0/112", &l), 0);
	CHECK_INT(match(&l, "10.1.2.3"), 1);
	CHECK_INT(match(&l, "10.2.0.1"), 0);
	/* A family other than IPv4 and IPv6 matches nothing. */
	{
		struct sockaddr_storage un;

		memset(&un, 0, sizeof(un));
		un.ss_family = AF_UNIX;
		CHECK_INT(sa_cidr_list_match(&l, &un), 0);
	}

	CHECK_INT(sa_cidr_list_parse("127.0.0.1/33", &l), -1);
	CHECK_INT(sa_cidr_list_parse("::1/129", &l), -1);
	CHECK_INT(sa_cidr_list_parse("127.0.0.1/", &l), -1);
	CHECK_INT(sa_cidr_list_parse("127.0.0.1/-1", &l), -1);
	CHECK_INT(sa_cidr_list_parse("127.0.0.1/8x", &l), -1);
	CHECK_INT(sa_cidr_list_parse("localhost", &l), -1);
	CHECK_INT(sa_cidr_list_parse("127.0.0.1,,10.0.0.1", &l), -1);
	CHECK_INT(sa_cidr_list_parse("127.0.0.1 10.0.0.1", &l), -1);
	CHECK_INT(sa_cidr_list_parse("1111:2222:3333:4444:5555:6666:7777:8888/128x", &l), -1);
	many[0] = '\0';
	for (i = 0; i <= SA_CIDR_MAX; i++)
		(void)snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s10.0.0.%zu",
			       i ? "," : "", i);
	CHECK_INT(sa_cidr_list_parse(many, &l), -1);
	*strrchr(many, ',') = '\0';
	CHECK_INT(sa_cidr_list_parse(many, &l), 0);
	CHECK_INT(l.n, SA_CIDR_MAX);
}

int
main(void)
{
	test_v1();
	test_v1_bad();
	test_v2();
	test_v2_bad();
	test_sniff();
	test_cidr();
	return check_summary();
}
