#ifndef TW_LISTENER_H
#define TW_LISTENER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

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

/*
 * Why the listener refuses a client (421), in the order a client hears
 * about them; LISTENER_ADMIT: it does not.
 */
enum listener_verdict {
	LISTENER_ADMIT = 0,
	LISTENER_MAX_CLIENTS,
	LISTENER_FAILED_LOGINS,	/* source_penalty_fails */
	LISTENER_BAD_SESSIONS,	/* source_penalty_sessions */
	LISTENER_MAX_PER_IP,
	LISTENER_UNAVAILABLE,	/* no session process, or no answer */
	LISTENER_VERDICTS
};

/* The 421's text of a refusal; NULL for LISTENER_ADMIT or an unknown one. */
const char *listener_refusal(uint32_t verdict);

/*
 * Proxied clients (proxy_protocol_trusted). The listener counts a
 * balancer's connection under the balancer's address at accept, without
 * max_per_ip or penalties; once the session's monitor has checked the
 * client its worker read from the PROXY header, it sends this record on
 * listener_proxy_chan with a descriptor for the answer, and the listener
 * moves the count to the client, or refuses it, and answers with one
 * uint32_t enum listener_verdict. The channel is the listener's only
 * one from its sessions: every session process inherits it, a monitor
 * closes it once used or once its client turned out not proxied, and no
 * worker ever holds it (fork_session_child closes it).
 */
struct listener_proxy_rec {
	int32_t pid;			/* the monitor's: the listener's child */
	struct sockaddr_storage client;
};

/* A session process's end of the channel; -1: none (closed, inetd mode). */
extern int listener_proxy_chan;

#endif
