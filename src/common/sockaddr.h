/*
 * Socket addresses of the control and data connections: the comparisons
 * and port fields every role needs (the worker's PASV/PORT checks, the
 * monitor's data sockets, the listener's per-address limits).
 */
#ifndef TW_SOCKADDR_H
#define TW_SOCKADDR_H

#include <sys/socket.h>

/*
 * Whether two socket addresses have the same IP address (ignoring port).
 * An IPv4-mapped IPv6 address equals its IPv4 form.
 */
int sa_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b);

/*
 * Rewrites an IPv4-mapped IPv6 address (::ffff:a.b.c.d, how a dual-stack
 * socket names an IPv4 peer) as the AF_INET address it stands for, port
 * kept; any other address is left alone. A session's control addresses
 * go through this once, so that PASV can answer 227 with the IPv4
 * address, data sockets are made in the family the client really speaks,
 * and logs show the address an IPv4 firewall or fail2ban can use.
 */
void sa_unmap_v4(struct sockaddr_storage *sa);

/* Port of an AF_INET or AF_INET6 address, host order (0 for others). */
unsigned sa_port(const struct sockaddr_storage *sa);

/* Sets the port of an AF_INET or AF_INET6 address (host order). */
void sa_set_port(struct sockaddr_storage *sa, unsigned port);

/* The length bind(2) and connect(2) want for this family. */
socklen_t sa_len(const struct sockaddr_storage *sa);

/*
 * A list of networks, "address[/bits]" separated by commas (an address
 * alone is one host): proxy_protocol_trusted. IPv4 entries match IPv4
 * peers, also when a dual-stack socket names them ::ffff:a.b.c.d.
 */
#define SA_CIDR_MAX 32
struct sa_cidr {
	unsigned char addr[16];		/* network order; IPv4 in the first 4 */
	unsigned len;			/* 4 or 16 */
	unsigned bits;			/* prefix length, <= len * 8 */
};
struct sa_cidr_list {
	size_t n;
	struct sa_cidr e[SA_CIDR_MAX];
};

/* Parses text (empty: an empty list); 0, or -1 when an entry is bad or
 * there are more than SA_CIDR_MAX. */
int sa_cidr_list_parse(const char *text, struct sa_cidr_list *out);

/* Whether sa's address is in one of l's networks. */
int sa_cidr_list_match(const struct sa_cidr_list *l, const struct sockaddr_storage *sa);

#endif
