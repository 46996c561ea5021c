#include "src/common/sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Reduces an address to the bytes that name the host: 4 for IPv4 and for
 * IPv4-mapped IPv6 (a dual-stack socket reports IPv4 peers that way), 16
 * for other IPv6. Returns the length, or 0 for other families.
 */
static size_t
host_bytes(const struct sockaddr_storage *sa, const unsigned char **bytes)
{
	const struct sockaddr_in *sin;
	const struct sockaddr_in6 *sin6;

	switch (sa->ss_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)sa;
		*bytes = (const unsigned char *)&sin->sin_addr;
		return 4;
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			*bytes = sin6->sin6_addr.s6_addr + 12;
			return 4;
		}
		*bytes = sin6->sin6_addr.s6_addr;
		return 16;
	default:
		return 0;
	}
}

/*
 * The IPv6 scope id is ignored: EPRT cannot carry one, so a client on a
 * link-local control connection must still be able to name itself.
 */
int
sa_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	const unsigned char *ab = NULL, *bb = NULL;
	size_t alen, blen;

	alen = host_bytes(a, &ab);
	blen = host_bytes(b, &bb);
	if (alen == 0 || alen != blen)
		return 0;
	return memcmp(ab, bb, alen) == 0;
}

void
sa_unmap_v4(struct sockaddr_storage *sa)
{
	struct sockaddr_in6 in6;
	struct sockaddr_in *in = (struct sockaddr_in *)sa;

	if (sa->ss_family != AF_INET6)
		return;
	memcpy(&in6, sa, sizeof(in6));
	if (!IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr))
		return;
	memset(sa, 0, sizeof(*sa));
	in->sin_family = AF_INET;
	in->sin_port = in6.sin6_port;
	memcpy(&in->sin_addr, in6.sin6_addr.s6_addr + 12, sizeof(in->sin_addr));
}

unsigned
sa_port(const struct sockaddr_storage *sa)
{
	switch (sa->ss_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	default:
		return 0;
	}
}

void
sa_set_port(struct sockaddr_storage *sa, unsigned port)
{
	if (sa->ss_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	else if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

socklen_t
sa_len(const struct sockaddr_storage *sa)
{
	return sa->ss_family == AF_INET ? sizeof(struct sockaddr_in)
					: sizeof(struct sockaddr_in6);
}

/* 1 when the first bits bits of a and b are equal. */
static int
prefix_equal(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));

	if (memcmp(a, b, whole) != 0)
		return 0;
	return rest == 0 || ((a[whole] ^ b[whole]) & mask) == 0;
}

/* One "address[/bits]" of len bytes into *e; 0 or -1. */
static int
cidr_parse_one(const char *s, size_t len, struct sa_cidr *e)
{
	char text[INET6_ADDRSTRLEN + 4];
	const char *slash;
	unsigned long bits;
	char *end;

	if (len == 0 || len >= sizeof(text))
		return -1;
	memcpy(text, s, len);
	text[len] = '\0';
	slash = strchr(text, '/');
	if (slash != NULL)
		text[slash - text] = '\0';
	if (inet_pton(AF_INET, text, e->addr) == 1)
		e->len = 4;
	else if (inet_pton(AF_INET6, text, e->addr) == 1)
		e->len = 16;
	else
		return -1;
	e->bits = e->len * 8;
	if (slash == NULL)
		return 0;
	if (slash[1] < '0' || slash[1] > '9')
		return -1;
	bits = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || bits > e->len * 8)
		return -1;
	e->bits = (unsigned)bits;
	/* An IPv4-mapped IPv6 entry stands for its IPv4 network, as peers do. */
	if (e->len == 16 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)e->addr) &&
	    e->bits >= 96) {
		memmove(e->addr, e->addr + 12, 4);
		e->len = 4;
		e->bits -= 96;
	}
	return 0;
}

int
sa_cidr_list_parse(const char *text, struct sa_cidr_list *out)
{
	const char *p = text;

	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return 0;
		len = strcspn(p, ", \t");
		if (out->n == SA_CIDR_MAX || cidr_parse_one(p, len, &out->e[out->n]) != 0)
			return -1;
		out->n++;
		p += len;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
}

int
sa_cidr_list_match(const struct sa_cidr_list *l, const struct sockaddr_storage *sa)
{
	const unsigned char *b;
	size_t len = host_bytes(sa, &b), i;

	for (i = 0; len != 0 && i < l->n; i++)
		if (l->e[i].len == len && prefix_equal(b, l->e[i].addr, l->e[i].bits))
			return 1;
	return 0;
}
