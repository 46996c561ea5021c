/*
 * ftpbench's TLS client (RFC 4217 FTPS). The engine in sess.c keeps its
 * non-blocking, edge-triggered loop: every call here maps OpenSSL's
 * SSL_ERROR_WANT_READ/WANT_WRITE to EAGAIN, so a session waits for its
 * socket exactly as it does without TLS.
 *
 * Data connections resume the control connection's session. With TLS
 * 1.3 the server sends its tickets after the handshake, inside the
 * control stream, so the session to resume is the one the new-session
 * callback hands us while control replies are read; a newer ticket
 * replaces the older one.
 */
#include "tls.h"

#include <errno.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "src/common/util.h"

/* ALPN (RFC 7301) wire format: FTP's registered name. */
static const unsigned char alpn_ftp[] = { 3, 'f', 't', 'p' };

/*
 * TLS 1.3 suites in the order browsers offer them: AES-128-GCM first, so
 * the bulk cipher is the one `openssl speed -evp aes-128-gcm` measures as
 * the limit (OpenSSL's own order puts AES-256-GCM first). The server may
 * still pick by its own preference; the suite prints what was agreed.
 */
#define TLS13_SUITES \
	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
#define TLS12_CIPHERS "ECDHE+AESGCM:ECDHE+CHACHA20:RSA+AESGCM"

static int
keep_ticket(SSL *ssl, SSL_SESSION *sess)
{
	struct sess *owner = SSL_get_app_data(ssl);

	/* Tickets on data connections are not kept: reuse means the control's. */
	if (owner == NULL || owner->cssl != ssl)
		return 0;
	if (owner->resume != NULL)
		SSL_SESSION_free(owner->resume);
	owner->resume = sess;
	return 1;	/* the reference is ours now */
}

SSL_CTX *
fbtls_ctx_new(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (ctx == NULL)
		die("SSL_CTX_new failed");
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    !SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) ||
	    !SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_ftp, sizeof(alpn_ftp)) != 0)
		die("cannot configure the TLS client context");
	/* Self-signed server certificates, as curl -k. */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	/*
	 * Partial writes: a 1 MiB STOR buffer goes out record by record, and
	 * a write that would block is retried with what is left. Released
	 * buffers: thousands of idle robots hold no 16 KB read buffers.
	 */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	/* Sessions are ours to keep (keep_ticket), not a cache's. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
				       SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, keep_ticket);
	return ctx;
}

void
fbtls_ctx_free(SSL_CTX *ctx)
{
	SSL_CTX_free(ctx);
}

SSL *
fbtls_new(SSL_CTX *ctx, int fd, struct sess *owner, SSL_SESSION *resume)
{
	SSL *ssl = SSL_new(ctx);

	if (ssl == NULL || !SSL_set_fd(ssl, fd))
		die("SSL_new failed: out of memory?");
	SSL_set_connect_state(ssl);
	SSL_set_app_data(ssl, owner);
	/*
	 * A copy: when the server sends a ticket on the data connection,
	 * OpenSSL takes the session it resumed out of the client cache and
	 * marks it not resumable, and the next data connection would make a
	 * full handshake (refused where reuse is required).
	 */
	if (resume != NULL) {
		SSL_SESSION *copy = SSL_SESSION_dup(resume);

		if (copy == NULL || !SSL_set_session(ssl, copy))
			die("SSL_set_session failed");
		SSL_SESSION_free(copy);	/* the SSL holds its own reference */
	}
	return ssl;
}

/* errno for a failed call: EAGAIN when the socket must be waited for. */
static int
io_errno(SSL *ssl, int ret, int *eof, int *clean)
{
	int e = SSL_get_error(ssl, ret);
	unsigned long err;

	switch (e) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		*eof = 1;
		*clean = 1;
		return 0;
	case SSL_ERROR_SYSCALL:
		/* OpenSSL 1.1: a FIN without close_notify (callers zero errno). */
		if (ret == 0 && ERR_peek_error() == 0 && errno == 0) {
			*eof = 1;
			return 0;
		}
		break;
	case SSL_ERROR_SSL:
		err = ERR_peek_error();
		if (ERR_GET_LIB(err) == ERR_LIB_SSL &&
		    ERR_GET_REASON(err) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			*eof = 1;
			ERR_clear_error();
			return 0;
		}
		break;
	default:
		break;
	}
	ERR_clear_error();
	return ECONNRESET;
}

int
fbtls_handshake(SSL *ssl)
{
	int r, eof = 0, clean = 0;

	ERR_clear_error();
	errno = 0;
	r = SSL_do_handshake(ssl);
	if (r == 1)
		return 1;
	return io_errno(ssl, r, &eof, &clean) == EAGAIN ? 0 : -1;
}

ssize_t
fbtls_read(SSL *ssl, void *buf, size_t len, int *clean)
{
	size_t got = 0;
	int r, eof = 0, e;

	*clean = 0;
	ERR_clear_error();
	errno = 0;
	r = SSL_read_ex(ssl, buf, len, &got);
	if (r == 1)
		return (ssize_t)got;
	e = io_errno(ssl, 0, &eof, clean);
	if (eof)
		return 0;
	errno = e;
	return -1;
}

ssize_t
fbtls_write(SSL *ssl, const void *buf, size_t len)
{
	size_t put = 0;
	int r, eof = 0, clean = 0;

	ERR_clear_error();
	errno = 0;
	r = SSL_write_ex(ssl, buf, len, &put);
	if (r == 1)
		return (ssize_t)put;
	errno = io_errno(ssl, 0, &eof, &clean);
	if (errno == 0)
		errno = ECONNRESET;	/* a write has no clean end */
	return -1;
}

int
fbtls_shutdown(SSL *ssl)
{
	int r, eof = 0, clean = 0;

	ERR_clear_error();
	errno = 0;
	r = SSL_shutdown(ssl);
	/* 0: our close_notify is out, the peer's has not come; that is all. */
	if (r >= 0)
		return 1;
	return io_errno(ssl, r, &eof, &clean) == EAGAIN ? 0 : -1;
}

void
fbtls_free(SSL **ssl)
{
	if (*ssl != NULL) {
		SSL_free(*ssl);
		*ssl = NULL;
	}
}

void
fbtls_session_free(SSL_SESSION **sess)
{
	if (*sess != NULL) {
		SSL_SESSION_free(*sess);
		*sess = NULL;
	}
}

int
fbtls_resumed(SSL *ssl)
{
	return SSL_session_reused(ssl);
}

const char *
fbtls_version(SSL *ssl)
{
	return SSL_get_version(ssl);
}

const char *
fbtls_cipher(SSL *ssl)
{
	return SSL_get_cipher_name(ssl);
}
