#ifndef TW_LISTENER_H
#define TW_LISTENER_H

#include <stddef.h>

struct tw_config;

/* IPv4 and IPv6 (listen, listen_ipv6), each on listen_port and on
 * implicit_ssl_port. */
#define LISTEN_SOCKS_MAX 4

struct listen_socks {
	int fd[LISTEN_SOCKS_MAX];
	/* Sessions start with TLS there (implicit FTPS): no plaintext 421. */
	int implicit_tls[LISTEN_SOCKS_MAX];
	size_t n;
	int inherited;		/* from the service manager (LISTEN_FDS) or an upgrade */
	int status_fd;		/* status_socket, -1: none */
};

/*
 * Takes the listening sockets a service manager or the listener before an
 * upgrade passed (LISTEN_FDS), or else binds the configured ones; dies if
 * one cannot be bound. Opens status_socket (or keeps the one an upgrade
 * passed). Called before the daemon detaches, so that the operator sees why.
 */
void listener_bind(const struct tw_config *cfg, struct listen_socks *ls);

/*
 * Accepts on ls, enforces limits, hands each connection to a session.
 * SIGHUP replaces *cfg with the configuration read again (src/reload.h);
 * SIGUSR2 upgrades (src/upgrade.h): once the new listener is ready this
 * one stops accepting and exits 0 when its last session has ended.
 */
void listener_run(struct tw_config *cfg, const struct listen_socks *ls)
	__attribute__((noreturn));

/*
 * In a freshly forked session process (on accept, or a pair of the
 * pool): drops everything of the listener's but the log and keep_fd,
 * and restores the signals the listener blocked.
 */
void listener_child_setup(int keep_fd);

#endif
