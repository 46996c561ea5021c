/*
 * ftpbench's TLS: one client SSL_CTX per process, and calls on
 * non-blocking sockets that answer the way recv()/send() do, so the
 * engine's EAGAIN paths serve TLS unchanged.
 */
#ifndef FB_TLS_H
#define FB_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "sess.h"

/* TLS 1.2 and 1.3, ALPN "ftp", no certificate check (curl -k). Dies on error. */
SSL_CTX *fbtls_ctx_new(void);
void fbtls_ctx_free(SSL_CTX *ctx);

/*
 * A client SSL on fd. owner: the session whose control connection this
 * is (tickets the server sends on it are kept in owner->resume), or NULL
 * for a data connection, which offers `resume` instead. Dies when out of
 * memory.
 */
SSL *fbtls_new(SSL_CTX *ctx, int fd, struct sess *owner, SSL_SESSION *resume);

/* One handshake step: 1 done, 0 waiting for the socket, -1 failed. */
int fbtls_handshake(SSL *ssl);

/*
 * As recv()/send(): bytes moved, or -1 with errno EAGAIN (wait for the
 * socket) or ECONNRESET (the connection or TLS failed). fbtls_read
 * returns 0 at the peer's end; *clean says whether it sent close_notify
 * (a TCP FIN alone may be a truncation).
 */
ssize_t fbtls_read(SSL *ssl, void *buf, size_t len, int *clean);
ssize_t fbtls_write(SSL *ssl, const void *buf, size_t len);

/* Sends close_notify: 1 sent, 0 waiting for the socket, -1 failed. */
int fbtls_shutdown(SSL *ssl);

/* SSL_free, and the pointer set to NULL. */
void fbtls_free(SSL **ssl);

void fbtls_session_free(SSL_SESSION **sess);

int fbtls_resumed(SSL *ssl);
const char *fbtls_version(SSL *ssl);
const char *fbtls_cipher(SSL *ssl);

#endif
