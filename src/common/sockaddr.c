#include "src/common/sockaddr.h"

#include <netinet/in.h>
#include <stdint.h>
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
