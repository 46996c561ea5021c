/*
 * FTPS (RFC 4217) with OpenSSL: the contexts, who holds the key, and the
 * blocking-with-deadline I/O the control channel, the relay and the data
 * channel share.
 *
 * Where the certificate's private key lives: only in the processes that
 * make handshakes with it. The listener checks it at start in a child
 * that exits (parsing leaves unwiped copies in freed memory, and every
 * session process inherits the listener's memory), and keeps only the
 * certificate. Each pre-login worker reads the key itself, as root,
 * before it gives up root and enters its empty chroot, so no process
 * that parses network input can open the file; it keeps the key as the
 * session's TLS relay. The monitor and the user's worker never read it:
 * the user's worker resumes the control session on data connections
 * with the session's ticket keys (random per session, made by the
 * monitor before it forks its workers). Only with require_ssl_reuse=NO
 * does the user's worker (still root, before the login) read the key,
 * to make full handshakes, as vsftpd's does.
 */
#ifndef TW_TLS_H
#define TW_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

struct tw_config;

/*
 * Listener, at start and at each reload: initialises OpenSSL and builds
 * the control context from rsa_cert_file / rsa_private_key_file /
 * ca_certs_file (none with ssl_enable=NO). -t uses it too. 0, or -1 with
 * a message in err (unreadable, not matching, expired) and the context
 * in force unchanged.
 */
int tls_init(const struct tw_config *cfg, char *err, size_t errlen);
/*
 * tls_heap.c: OpenSSL's allocator. Install first thing in main() (before
 * any OpenSSL call); a session process that will use TLS owns its heap
 * from then on (tls_heap_own).
 */
void tls_heap_install(void);
void tls_heap_own(void);


/* Monitor, before it forks its workers: this session's ticket keys. */
void tls_session_keys_new(void);
/* Pre-login worker: a server SSL on fd (the control connection). */
SSL *tls_ctrl_new(int fd);
/* Pre-login worker, as root before its chroot: reads the key. Dies on failure. */
void tls_load_key(const struct tw_config *cfg);
/*
 * The spare, when forked: the data context (and the control context
 * goes). With require_ssl_reuse it has no certificate and resumes
 * sessions only; without, it reads the key (tls_load_key).
 */
void tls_data_ctx_init(const struct tw_config *cfg);
/* A server SSL for a data connection on fd (NULL: out of memory). */
SSL *tls_data_new(int fd);

/*
 * Waits until ssl's last call (which returned rc) can go on: 0 to call
 * again, -1 when it failed for good or deadline_ms (CLOCK_MONOTONIC, 0:
 * none) passed.
 */
int tls_wait(SSL *ssl, int rc, long long deadline_ms);
/* Handshake as a server within timeout_s seconds (0: none). 0 or -1. */
int tls_accept(SSL *ssl, unsigned timeout_s);
/* Writes all of buf within the deadline. 0 or -1. */
int tls_write_all(SSL *ssl, const void *buf, size_t len, long long deadline_ms);
/* Sends our close_notify (best effort, bounded) and frees ssl. */
void tls_close(SSL *ssl);
/* Logs why the last TLS call failed (debug_ssl), with what. */
void tls_log_error(const struct tw_config *cfg, const char *what);

#endif
