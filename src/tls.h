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

#include "tw_build.h"

struct tw_config;

/*
 * Where it lives: src/tls.c, src/tls_heap.c and src/tls_host.c are a
 * module of their own, twinftpd-tls.so, the only code linked with libssl
 * and libcrypto. The listener loads it (src/tlsmod.c) when a
 * configuration sets ssl_enable=YES, at start, at the reload that sets
 * it or for -t, and it stays loaded (a reload that turns FTPS off drops
 * the contexts only). Until then no process maps OpenSSL: its ten
 * mappings and hundred relocated pages were a tenth of what every fork
 * of the pool copies and every exit tears down, and code no plain
 * session needs in its address space. The daemon calls the functions
 * below by these names whichever side it is: tlsmod.c answers them,
 * through the module's table (struct tls_module). Only this header's
 * types (SSL * and the SSL_ERROR_ codes) are OpenSSL's outside the
 * module.
 */

/*
 * Listener, at start and at each reload: initialises OpenSSL and builds
 * the control context from rsa_cert_file / rsa_private_key_file /
 * ca_certs_file (none with ssl_enable=NO). -t uses it too. 0, or -1 with
 * a message in err (unreadable, not matching, expired) and the context
 * in force unchanged.
 */
int tls_init(const struct tw_config *cfg, char *err, size_t errlen);
/*
 * tls_heap.c: OpenSSL's allocator. Installed when the module is loaded,
 * before any other OpenSSL call; 0, or -1 when OpenSSL had allocated
 * already (something else in the process loaded it first) and keeps
 * glibc's. A session process that will use TLS owns its heap from then
 * on (tls_heap_own).
 */
int tls_heap_install(void);
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

/* OpenSSL's SSL_read, SSL_write, SSL_get_error, SSL_free (NULL: nothing),
 * SSL_shutdown, SSL_accept, SSL_session_reused and SSL_get_fd, for the
 * code outside the module. */
int tls_read(SSL *ssl, void *buf, int len);
int tls_write(SSL *ssl, const void *buf, int len);
int tls_get_error(SSL *ssl, int rc);
void tls_free(SSL *ssl);
int tls_shutdown(SSL *ssl);
int tls_accept_step(SSL *ssl);
int tls_session_reused(SSL *ssl);
int tls_fd(SSL *ssl);

/*
 * What the module calls in the daemon, given to it first (bind): its
 * die(), bug() and tw_log() (src/tls_host.c) pass their formatted text
 * here. The daemon exports no symbol: a name it exported would take the
 * place of a library's own of that name.
 */
struct tls_host {
	void (*log)(int level, const char *text);
	void (*fatal)(int is_bug, const char *msg);	/* does not return */
};

/*
 * The module's table, its one exported symbol (TLS_MODULE_SYMBOL). abi
 * is TLS_MODULE_ABI as the module was built: the daemon takes only a
 * module built from the same version and the same interface (the hash
 * of this header and of the configuration's, meson.build) with the same
 * structure sizes.
 */
struct tls_module {
	const char *abi;
	size_t size, cfg_size;
	void (*bind)(const struct tls_host *host);
	int (*heap_install)(void);
	int (*init)(const struct tw_config *, char *, size_t);
	void (*session_keys_new)(void);
	SSL *(*ctrl_new)(int);
	void (*load_key)(const struct tw_config *);
	void (*data_ctx_init)(const struct tw_config *);
	SSL *(*data_new)(int);
	int (*wait)(SSL *, int, long long);
	int (*accept)(SSL *, unsigned);
	int (*write_all)(SSL *, const void *, size_t, long long);
	void (*close)(SSL *);
	void (*log_error)(const struct tw_config *, const char *);
	int (*read)(SSL *, void *, int);
	int (*write)(SSL *, const void *, int);
	int (*get_error)(SSL *, int);
	void (*free)(SSL *);
	int (*shutdown)(SSL *);
	int (*accept_step)(SSL *);
	int (*session_reused)(SSL *);
	int (*fd)(SSL *);
};
#define TLS_MODULE_SYMBOL "twinftpd_tls_module"
#define TLS_MODULE_ABI TW_VERSION "+" TW_TLS_ABI_HASH
/* The module's file name, beside the daemon's binary or in TW_TLS_MODULE_DIR. */
#define TLS_MODULE_FILE "twinftpd-tls.so"

/* src/tls_host.c, in the module: the host's callbacks. */
void tls_host_bind(const struct tls_host *host);

#endif
