/*
 * FTPS with OpenSSL: the control and data contexts, the session's ticket
 * keys, and deadline-bounded I/O on non-blocking sockets. Who holds the
 * private key, and why, is told in tls.h.
 */
/* The RSA and EC_KEY decoders of decode_key() (see there). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "src/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/util.h"

/* RFC 4217 names no ALPN id; "ftp" is IANA's (ALPACA, RFC 7301 registry). */
static const unsigned char alpn_ftp[] = { 3, 'f', 't', 'p' };
/* Sessions resume only into a context with the same id (and ticket keys). */
static const unsigned char sid_ctx[] = "twinftpd";
/* A PEM key file is a few KB; refuse anything that is not one. */
#define KEY_FILE_MAX (64 * 1024)
/* OpenSSL's ticket key block: name (16), HMAC key (32), AES key (32). */
#define TICKET_KEYS_LEN 80
/*
 * TLS 1.3 suites, the server's order: AES-128-GCM first, the fastest
 * where AES-NI is (bulk transfers are this server's work), all AEAD.
 */
#define TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/* close_notify is a courtesy: never wait long for the socket to take it. */
#define TLS_CLOSE_WAIT_MS 1000
#define MS_PER_S 1000

static const struct tw_config *tls_cfg;
static SSL_CTX *ctrl_ctx;	/* with the certificate and its key */
static SSL_CTX *data_ctx;	/* the user's worker's */
static unsigned char ticket_keys[TICKET_KEYS_LEN] TW_PER_PROCESS;

static int __attribute__((format(printf, 3, 4)))
tls_error(char *err, size_t errlen, const char *fmt, ...)
{
	char msg[256], ossl[256] = "";
	unsigned long e = ERR_peek_last_error();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (e != 0)
		ERR_error_string_n(e, ossl, sizeof(ossl));
	snprintf(err, errlen, "%s%s%s", msg, ossl[0] ? ": " : "", ossl);
	ERR_clear_error();
	return -1;
}

/*
 * Strict ALPN (the ALPACA attacks): a client that names protocols but not
 * ftp is talking to the wrong server, so the handshake fails with
 * no_application_protocol. A client that names none is served.
 */
static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
	    const unsigned char *in, unsigned inlen, void *arg)
{
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, alpn_ftp, sizeof(alpn_ftp), in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/*
 * ssl_strict_sni: a name the certificate does not carry is refused. The
 * name is acknowledged otherwise (a TLS 1.3 session resumes only under
 * the name it was made with, acknowledged). The data context has no
 * certificate: what it resumes had its name checked in the control
 * handshake.
 */
static int
sni_check(SSL *ssl, int *alert, void *arg)
{
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	X509 *cert = SSL_get_certificate(ssl);

	(void)arg;
	if (name == NULL || !tls_cfg->ssl_strict_sni || cert == NULL)
		return SSL_TLSEXT_ERR_OK;
	if (X509_check_host(cert, name, strlen(name), 0, NULL) == 1)
		return SSL_TLSEXT_ERR_OK;
	*alert = SSL_AD_UNRECOGNIZED_NAME;
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* ssl_request_cert without validate_cert: any certificate will do. */
static int
verify_any(int ok, X509_STORE_CTX *store)
{
	(void)ok;
	(void)store;
	return 1;
}

/* The PEM parameters of type (EVP_PKEY_DH or _EC) in path, or NULL. */
static EVP_PKEY *
read_params(const char *option, const char *path, int type, char *err, size_t errlen)
{
	BIO *bio = BIO_new_file(path, "r");
	EVP_PKEY *p = bio != NULL ? PEM_read_bio_Parameters(bio, NULL) : NULL;

	BIO_free(bio);
	if (p != NULL && EVP_PKEY_get_base_id(p) == type)
		return p;
	EVP_PKEY_free(p);
	tls_error(err, errlen, "%s %s: no %s parameters", option, path,
		  type == EVP_PKEY_DH ? "Diffie-Hellman" : "EC");
	return NULL;
}

/* dh_param_file and ecdh_param_file (Red Hat's vsftpd options). 0 or -1. */
static int
set_kex_params(SSL_CTX *ctx, const struct tw_config *cfg, char *err, size_t errlen)
{
	EVP_PKEY *p;
	char group[80];
	int ok;

	if (cfg->dh_param_file[0] != '\0') {
		p = read_params("dh_param_file", cfg->dh_param_file, EVP_PKEY_DH, err, errlen);
		if (p == NULL)
			return -1;
		if (!SSL_CTX_set0_tmp_dh_pkey(ctx, p)) {
			EVP_PKEY_free(p);
			return tls_error(err, errlen, "dh_param_file %s", cfg->dh_param_file);
		}
	}
	if (cfg->ecdh_param_file[0] != '\0') {
		p = read_params("ecdh_param_file", cfg->ecdh_param_file, EVP_PKEY_EC, err, errlen);
		if (p == NULL)
			return -1;
		ok = EVP_PKEY_get_utf8_string_param(p, OSSL_PKEY_PARAM_GROUP_NAME, group,
						    sizeof(group), NULL) &&
		     SSL_CTX_set1_groups_list(ctx, group);
		EVP_PKEY_free(p);
		if (!ok)
			return tls_error(err, errlen, "ecdh_param_file %s: not a named curve "
					 "TLS can use", cfg->ecdh_param_file);
	}
	return 0;
}

/* What both contexts share: protocols, ciphers, ALPN, session rules. */
static SSL_CTX *
ctx_new(const struct tw_config *cfg, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (ctx == NULL) {
		tls_error(err, errlen, "cannot make a TLS context");
		return NULL;
	}
	/* TLS 1.2 and 1.3 only, whatever ssl_tlsv1 & co say (config.c warns). */
	if (!SSL_CTX_set_min_proto_version(ctx, cfg->ssl_tlsv1_2 ? TLS1_2_VERSION
					   : TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, cfg->ssl_tlsv1_3 ? TLS1_3_VERSION
					   : TLS1_2_VERSION) ||
	    !SSL_CTX_set_cipher_list(ctx, cfg->ssl_ciphers) ||
	    !SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) ||
	    !SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1)) {
		tls_error(err, errlen, "ssl_ciphers \"%s\"", cfg->ssl_ciphers);
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (set_kex_params(ctx, cfg, err, errlen) != 0) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
			    SSL_OP_CIPHER_SERVER_PREFERENCE);
	/*
	 * Idle sessions keep no read or write buffers (memory per session);
	 * writes may be partial and retried from a moved buffer.
	 */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/*
	 * No server-side cache: each process has its own, so nothing could
	 * resume from it. Resumption is by stateless ticket (RFC 5077, and
	 * TLS 1.3's), sealed with this session's keys: a ticket of another
	 * session, or of another server, never resumes.
	 */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 1);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	SSL_CTX_set_tlsext_servername_callback(ctx, sni_check);
	return ctx;
}

/* An EVP_PKEY that owns rsa or ec (one of them; NULL: a decoding failed). */
static EVP_PKEY *
pkey_of(RSA *rsa, EC_KEY *ec)
{
	EVP_PKEY *key = rsa != NULL || ec != NULL ? EVP_PKEY_new() : NULL;

	if (key != NULL && (rsa != NULL ? EVP_PKEY_assign_RSA(key, rsa)
				       : EVP_PKEY_assign_EC_KEY(key, ec)))
		return key;
	EVP_PKEY_free(key);
	RSA_free(rsa);
	EC_KEY_free(ec);
	return NULL;
}

/* The DER of a PKCS#8 PrivateKeyInfo holding an RSA or named-curve EC key. */
static EVP_PKEY *
decode_pkcs8(const unsigned char *der, long len)
{
	PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &der, len);
	const ASN1_OBJECT *obj;
	const X509_ALGOR *alg;
	const unsigned char *pk;
	const void *pval;
	EVP_PKEY *key = NULL;
	int pklen, ptype;

	if (p8 == NULL || !PKCS8_pkey_get0(&obj, &pk, &pklen, &alg, p8))
		goto done;
	if (OBJ_obj2nid(obj) == NID_rsaEncryption) {
		key = pkey_of(d2i_RSAPrivateKey(NULL, &pk, pklen), NULL);
	} else if (OBJ_obj2nid(obj) == NID_X9_62_id_ecPublicKey) {
		EC_KEY *ec;

		/* The curve is in the algorithm's parameters, not the key. */
		X509_ALGOR_get0(NULL, &ptype, &pval, alg);
		ec = ptype == V_ASN1_OBJECT ? EC_KEY_new_by_curve_name(OBJ_obj2nid(pval)) : NULL;
		if (ec != NULL && d2i_ECPrivateKey(&ec, &pk, pklen) == NULL) {
			EC_KEY_free(ec);
			ec = NULL;
		}
		key = pkey_of(NULL, ec);
	}
done:
	PKCS8_PRIV_KEY_INFO_free(p8);
	return key;
}

/*
 * The first private key in a PEM file (a certificate may come first).
 * RSA and EC keys, the kinds a server certificate has, are decoded with
 * the ASN.1 templates directly: OpenSSL 3's generic decoder machinery
 * costs every pre-login worker some 280 KB of private memory (it takes
 * references on hundreds of shared method objects, copying their pages),
 * an idle TLS session's largest part. Other kinds go the generic way.
 */
static EVP_PKEY *
decode_key(BIO *bio)
{
	char *name = NULL, *header = NULL;
	unsigned char *data = NULL;
	long len = 0;
	EVP_PKEY *key = NULL;
	int tried = 0;

	while (key == NULL && !tried && PEM_read_bio(bio, &name, &header, &data, &len)) {
		const unsigned char *p = data;

		if (strcmp(name, PEM_STRING_PKCS8INF) == 0) {
			key = decode_pkcs8(p, len);
			tried = 1;
		} else if (strcmp(name, PEM_STRING_ECPRIVATEKEY) == 0) {
			key = pkey_of(NULL, d2i_ECPrivateKey(NULL, &p, len));
			tried = 1;
		} else if (strcmp(name, PEM_STRING_RSA) == 0) {
			key = pkey_of(d2i_RSAPrivateKey(NULL, &p, len), NULL);
			tried = 1;
		}
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_clear_free(data, (size_t)len);
		name = header = NULL;
		data = NULL;
	}
	if (key == NULL) {
		ERR_clear_error();
		(void)BIO_reset(bio);
		key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	}
	return key;
}

/*
 * Reads a PEM private key through a buffer of ours, so that the file's
 * bytes are wiped from memory every session process is forked from.
 */
static EVP_PKEY *
read_key(const char *path, char *err, size_t errlen)
{
	static char buf[KEY_FILE_MAX];
	EVP_PKEY *key = NULL;
	struct stat st;
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	BIO *bio;

	if (fd < 0) {
		tls_error(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < KEY_FILE_MAX)
		n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0) {
		tls_error(err, errlen, "cannot read a key from %s", path);
		return NULL;
	}
	bio = BIO_new_mem_buf(buf, (int)n);
	if (bio != NULL)
		key = decode_key(bio);
	BIO_free(bio);
	OPENSSL_cleanse(buf, (size_t)n);
	if (key == NULL)
		tls_error(err, errlen, "no private key in %s", path);
	return key;
}

/* The certificate is in force now: a clear error, not failed handshakes. */
static int
check_validity(SSL_CTX *ctx, const char *path, char *err, size_t errlen)
{
	X509 *cert = SSL_CTX_get0_certificate(ctx);

	if (cert == NULL)
		return tls_error(err, errlen, "no certificate in %s", path);
	if (X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0)
		return tls_error(err, errlen, "the certificate in %s has expired", path);
	if (X509_cmp_current_time(X509_get0_notBefore(cert)) >= 0)
		return tls_error(err, errlen, "the certificate in %s is not valid yet", path);
	return 0;
}

static int
setup_client_certs(SSL_CTX *ctx, const struct tw_config *cfg, char *err, size_t errlen)
{
	int mode = SSL_VERIFY_PEER;

	if (cfg->ca_certs_file[0] != '\0') {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->ca_certs_file);

		if (names == NULL || !SSL_CTX_load_verify_locations(ctx, cfg->ca_certs_file, NULL))
			return tls_error(err, errlen, "ca_certs_file %s", cfg->ca_certs_file);
		SSL_CTX_set_client_CA_list(ctx, names);
	}
	if (!cfg->ssl_request_cert && !cfg->require_cert)
		return 0;
	if (cfg->require_cert)
		mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	SSL_CTX_set_verify(ctx, mode, cfg->validate_cert ? NULL : verify_any);
	return 0;
}

static const char *
key_path_of(const struct tw_config *cfg)
{
	return cfg->rsa_private_key_file[0] ? cfg->rsa_private_key_file : cfg->rsa_cert_file;
}

/* The private key into ctx, which holds its certificate. 0 or -1. */
static int
add_key(SSL_CTX *ctx, const struct tw_config *cfg, char *err, size_t errlen)
{
	const char *key_path = key_path_of(cfg);
	EVP_PKEY *key = read_key(key_path, err, errlen);
	int ok;

	if (key == NULL)
		return -1;
	ok = SSL_CTX_use_PrivateKey(ctx, key) && SSL_CTX_check_private_key(ctx);
	EVP_PKEY_free(key);
	if (!ok)
		return tls_error(err, errlen, "the key in %s does not match the certificate in %s",
				 key_path, cfg->rsa_cert_file);
	return 0;
}

/*
 * The key checked as a start needs it (readable, a key, matching the
 * certificate), in a child that exits: parsing leaves copies of the key
 * in freed memory that OpenSSL does not wipe, and everything the
 * listener's memory holds, every session process inherits.
 */
static int
check_key_apart(SSL_CTX *ctx, const struct tw_config *cfg, char *err, size_t errlen)
{
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return tls_error(err, errlen, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return tls_error(err, errlen, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(pfd[0]);
		if (add_key(ctx, cfg, err, errlen) != 0) {
			(void)!write(pfd[1], err, strlen(err));
			_exit(1);
		}
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], err, errlen - 1);
	close(pfd[0]);
	err[n > 0 ? n : 0] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (n <= 0)
		snprintf(err, errlen, "cannot check the key in %s", key_path_of(cfg));
	return -1;
}

/* A throwaway self-signed certificate for key k (warm_up). */
static X509 *
throwaway_cert(EVP_PKEY *k)
{
	X509 *x = X509_new();

	if (x == NULL || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), 1) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), 0) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 60) ||
	    !X509_set_pubkey(x, k) || !X509_sign(x, k, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Drives a client and a server SSL over memory BIOs to the end of the handshake. */
static int
handshake_in_memory(SSL *c, SSL *srv)
{
	int i, cd = 0, sd = 0;
	char byte = 0;

	for (i = 0; i < 64 && !(cd && sd); i++) {
		if (!cd)
			cd = SSL_do_handshake(c) == 1;
		if (!sd)
			sd = SSL_do_handshake(srv) == 1;
	}
	/* One record each way: the record layer's ciphers too. */
	return cd && sd && SSL_write(c, "x", 1) == 1 && SSL_read(srv, &byte, 1) == 1 &&
	       SSL_write(srv, "x", 1) == 1 && SSL_read(c, &byte, 1) == 1;
}

/*
 * OpenSSL 3 fetches algorithms, decoders and curve data on first use
 * and keeps them, taking references on shared objects as it goes: done
 * first in a session process, that costs each one hundreds of KB of
 * private memory (an idle TLS session's largest part). So the listener
 * does it once, with a throwaway key: decodes one, and makes a TLS 1.2
 * and a TLS 1.3 handshake with it in memory. The real key is never here.
 */
static void
warm_up(const struct tw_config *cfg)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), *back = NULL;
	BIO *bio = BIO_new(BIO_s_mem());
	X509 *x = k != NULL ? throwaway_cert(k) : NULL;
	char err[256];
	int v;

	if (k != NULL && bio != NULL && PEM_write_bio_PrivateKey(bio, k, NULL, NULL, 0, NULL, NULL))
		back = decode_key(bio);
	for (v = 0; x != NULL && v < 2; v++) {
		SSL_CTX *sctx = ctx_new(cfg, err, sizeof(err));
		SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
		SSL *c = NULL, *srv = NULL;
		BIO *a = NULL, *b = NULL;

		if (sctx != NULL && cctx != NULL && SSL_CTX_use_certificate(sctx, x) &&
		    SSL_CTX_use_PrivateKey(sctx, k) &&
		    SSL_CTX_set_max_proto_version(cctx, v == 0 ? TLS1_2_VERSION : TLS1_3_VERSION) &&
		    (c = SSL_new(cctx)) != NULL && (srv = SSL_new(sctx)) != NULL &&
		    BIO_new_bio_pair(&a, 0, &b, 0)) {
			SSL_set_bio(c, a, a);
			SSL_set_bio(srv, b, b);
			SSL_set_connect_state(c);
			SSL_set_accept_state(srv);
			(void)handshake_in_memory(c, srv);
		}
		SSL_free(c);
		SSL_free(srv);
		SSL_CTX_free(cctx);
		SSL_CTX_free(sctx);
	}
	X509_free(x);
	EVP_PKEY_free(back);
	EVP_PKEY_free(k);
	BIO_free(bio);
	ERR_clear_error();
}

int
tls_init(const struct tw_config *cfg, char *err, size_t errlen)
{
	static int warmed;
	SSL_CTX *ctx, *dctx = NULL;

	tls_cfg = cfg;
	if (!cfg->ssl_enable) {
		/* Turned off by a reload: pre-login workers read no key. */
		SSL_CTX_free(ctrl_ctx);
		SSL_CTX_free(data_ctx);
		ctrl_ctx = data_ctx = NULL;
		return 0;
	}
	/* Everything OpenSSL would load lazily, loaded here, outside the jails. */
	if (!OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL))
		return tls_error(err, errlen, "cannot initialise OpenSSL");
	/* Once: what it loads stays loaded across reloads. */
	if (!warmed)
		warm_up(cfg);
	warmed = 1;
	ctx = ctx_new(cfg, err, errlen);
	if (ctx == NULL)
		return -1;
	/* OpenSSL says "system lib" for a missing file: say what it is. */
	if (access(cfg->rsa_cert_file, R_OK) != 0) {
		(void)snprintf(err, errlen, "rsa_cert_file %s: %s", cfg->rsa_cert_file,
			       strerror(errno));
		goto fail;
	}
	if (!SSL_CTX_use_certificate_chain_file(ctx, cfg->rsa_cert_file)) {
		tls_error(err, errlen, "rsa_cert_file %s", cfg->rsa_cert_file);
		goto fail;
	}
	if (check_validity(ctx, cfg->rsa_cert_file, err, errlen) != 0 ||
	    setup_client_certs(ctx, cfg, err, errlen) != 0 ||
	    check_key_apart(ctx, cfg, err, errlen) != 0)
		goto fail;
	/*
	 * The data context too, once, here: a context costs OpenSSL 3 some
	 * 300 KB of allocations, which every session would otherwise make
	 * privately; built before the fork it is shared, and a session only
	 * sets its ticket keys in it.
	 */
	if (cfg->require_ssl_reuse) {
		dctx = ctx_new(cfg, err, errlen);
		if (dctx == NULL)
			goto fail;
	}
	/* Replaced only once all of it is good: a refused reload keeps the old. */
	SSL_CTX_free(ctrl_ctx);
	ctrl_ctx = ctx;
	SSL_CTX_free(data_ctx);
	data_ctx = dctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return -1;
}

/* The key into the control context, in a process that owns its heap. */
static void
load_key_here(const struct tw_config *cfg)
{
	char err[512];

	if (add_key(ctrl_ctx, cfg, err, sizeof(err)) != 0)
		die("TLS: %s", err);
	/* Decoding took far more than the key keeps (memory per session). */
	(void)malloc_trim(0);
}

void
tls_load_key(const struct tw_config *cfg)
{
	if (ctrl_ctx == NULL)
		return;
	tls_heap_own();
	load_key_here(cfg);
}

void
tls_session_keys_new(void)
{
	if (ctrl_ctx == NULL)
		return;
	if (getrandom(ticket_keys, sizeof(ticket_keys), 0) != (ssize_t)sizeof(ticket_keys))
		die("getrandom: %s", strerror(errno));
}

static void
set_ticket_keys(SSL_CTX *ctx)
{
	if (SSL_CTX_set_tlsext_ticket_keys(ctx, ticket_keys, sizeof(ticket_keys)) != 1)
		die("cannot set the session's TLS ticket keys");
}

SSL *
tls_ctrl_new(int fd)
{
	SSL *ssl;

	if (ctrl_ctx == NULL)
		bug("%s: TLS is not enabled", __func__);
	set_ticket_keys(ctrl_ctx);
	ssl = SSL_new(ctrl_ctx);
	if (ssl == NULL || !SSL_set_fd(ssl, fd))
		die("cannot make a TLS session");
	return ssl;
}

void
tls_data_ctx_init(const struct tw_config *cfg)
{
	if (ctrl_ctx == NULL)
		return;
	tls_heap_own();
	if (!cfg->require_ssl_reuse) {
		/* Full handshakes need the key: vsftpd's model, by choice. */
		load_key_here(cfg);
		data_ctx = ctrl_ctx;
	}
	/*
	 * With require_ssl_reuse, data_ctx (made by tls_init) has no
	 * certificate: a client that does not resume has nothing to agree
	 * on and the handshake fails, which is the refusal it asks for.
	 * The control context (no key in it here) is dropped, not freed:
	 * freeing would write to, and so copy, every page of it that this
	 * process shares with the listener.
	 */
	ctrl_ctx = NULL;
	set_ticket_keys(data_ctx);
	/*
	 * No TLS 1.3 ticket after a data handshake: the control session's
	 * ticket is what the next data connection resumes, and an upload's
	 * client never reads one, so it would close with unread data, and
	 * its kernel's reset could overtake (and discard) its close_notify:
	 * a complete upload refused as cut short (strict_ssl_read_eof).
	 */
	SSL_CTX_set_num_tickets(data_ctx, 0);
}

SSL *
tls_data_new(int fd)
{
	SSL *ssl;

	if (data_ctx == NULL)
		bug("%s: no data context", __func__);
	ssl = SSL_new(data_ctx);
	if (ssl != NULL && !SSL_set_fd(ssl, fd)) {
		SSL_free(ssl);
		ssl = NULL;
	}
	return ssl;
}

int
tls_wait(SSL *ssl, int rc, long long deadline_ms)
{
	struct pollfd p = { SSL_get_fd(ssl), 0, 0 };
	int ms = -1;

	switch (SSL_get_error(ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		p.events = POLLIN;
		break;
	case SSL_ERROR_WANT_WRITE:
		p.events = POLLOUT;
		break;
	default:
		return -1;
	}
	if (deadline_ms) {
		long long left = deadline_ms - tw_mono_ms();

		if (left <= 0)
			return -1;
		ms = left > INT_MAX ? INT_MAX : (int)left;
	}
	if (poll(&p, 1, ms) < 0 && errno != EINTR)
		return -1;
	return 0;
}

int
tls_accept(SSL *ssl, unsigned timeout_s)
{
	long long deadline = timeout_s ? tw_mono_ms() + (long long)timeout_s * MS_PER_S : 0;
	int rc;

	while ((rc = SSL_accept(ssl)) != 1) {
		if (tls_wait(ssl, rc, deadline) != 0)
			return -1;
	}
	return 0;
}

int
tls_write_all(SSL *ssl, const void *buf, size_t len, long long deadline_ms)
{
	const char *p = buf;

	while (len > 0) {
		int want = len > INT_MAX ? INT_MAX : (int)len;
		int n = SSL_write(ssl, p, want);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (tls_wait(ssl, n, deadline_ms) != 0)
			return -1;
	}
	return 0;
}

void
tls_close(SSL *ssl)
{
	long long deadline = tw_mono_ms() + TLS_CLOSE_WAIT_MS;
	int rc;

	if (ssl == NULL)
		return;
	/* Our close_notify only: whether the peer answers is its business
	 * (strict_ssl_write_shutdown waits for it elsewhere). */
	if (SSL_is_init_finished(ssl)) {
		while ((rc = SSL_shutdown(ssl)) < 0) {
			if (tls_wait(ssl, rc, deadline) != 0)
				break;
		}
	}
	SSL_free(ssl);
}

void
tls_log_error(const struct tw_config *cfg, const char *what)
{
	char ossl[256] = "";
	unsigned long e = ERR_peek_last_error();

	if (cfg->debug_ssl) {
		if (e != 0)
			ERR_error_string_n(e, ossl, sizeof(ossl));
		tw_log(TW_LOG_INFO, "TLS: %s%s%s", what, ossl[0] ? ": " : "", ossl);
	}
	ERR_clear_error();
}

int
tls_read(SSL *ssl, void *buf, int len)
{
	return SSL_read(ssl, buf, len);
}

int
tls_write(SSL *ssl, const void *buf, int len)
{
	return SSL_write(ssl, buf, len);
}

int
tls_get_error(SSL *ssl, int rc)
{
	return SSL_get_error(ssl, rc);
}

void
tls_free(SSL *ssl)
{
	SSL_free(ssl);
}

int
tls_shutdown(SSL *ssl)
{
	return SSL_shutdown(ssl);
}

int
tls_accept_step(SSL *ssl)
{
	return SSL_accept(ssl);
}

int
tls_session_reused(SSL *ssl)
{
	return SSL_session_reused(ssl);
}

int
tls_fd(SSL *ssl)
{
	return SSL_get_fd(ssl);
}

/* The module's one exported symbol (the rest is hidden: meson.build). */
__attribute__((visibility("default"))) extern const struct tls_module twinftpd_tls_module;
const struct tls_module twinftpd_tls_module = {
	.abi = TLS_MODULE_ABI,
	.size = sizeof(struct tls_module),
	.cfg_size = sizeof(struct tw_config),
	.bind = tls_host_bind,
	.heap_install = tls_heap_install,
	.init = tls_init,
	.session_keys_new = tls_session_keys_new,
	.ctrl_new = tls_ctrl_new,
	.load_key = tls_load_key,
	.data_ctx_init = tls_data_ctx_init,
	.data_new = tls_data_new,
	.wait = tls_wait,
	.accept = tls_accept,
	.write_all = tls_write_all,
	.close = tls_close,
	.log_error = tls_log_error,
	.read = tls_read,
	.write = tls_write,
	.get_error = tls_get_error,
	.free = tls_free,
	.shutdown = tls_shutdown,
	.accept_step = tls_accept_step,
	.session_reused = tls_session_reused,
	.fd = tls_fd,
};
