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

/* Port of an AF_INET or AF_INET6 address, host order (0 for others). */
unsigned sa_port(const struct sockaddr_storage *sa);

/* Sets the port of an AF_INET or AF_INET6 address (host order). */
void sa_set_port(struct sockaddr_storage *sa, unsigned port);

/* The length bind(2) and connect(2) want for this family. */
socklen_t sa_len(const struct sockaddr_storage *sa);

#endif
