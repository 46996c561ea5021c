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

#endif
