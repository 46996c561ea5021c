/*
 * The generator's FTP client engine: many sessions in one process, each a
 * small state machine over a non-blocking control socket and, during a
 * transfer, a non-blocking data socket, all driven by one epoll loop.
 * Both modes (suite and robots) start operations on sessions and are
 * called back when each one ends.
 *
 * Every step has a deadline (the target's step_timeout): a session that
 * waits longer for a reply, a connect or a data byte fails with "timeout",
 * so a dead or stalled server can never hang a run.
 *
 * FTPS (-E explicit, -I implicit; tls.c): the control connection is
 * upgraded with AUTH TLS (or starts in TLS), then PBSZ 0 and PROT P before
 * USER, so every data connection is TLS too and resumes the control
 * connection's session (RFC 4217 section 10.2; servers refuse fresh
 * handshakes when they require reuse). All control I/O goes through
 * ctrl_send()/ctrl_read() and all data I/O through data_read()/
 * stor_write(); with TLS they call SSL_read/SSL_write on the same
 * non-blocking sockets, SSL_ERROR_WANT_* mapped to the EAGAIN paths.
 */
#ifndef FB_SESS_H
#define FB_SESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "ftpreply.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_session_st SSL_SESSION;

#define FB_PATH_MAX 128

struct fb_target {
	struct sockaddr_storage addr;	/* the server's control address */
	socklen_t alen;
	const char *user, *pass;
	double step_timeout;		/* seconds any one step may take */
	int epsv;			/* EPSV instead of PASV */
	int data_rcvbuf;		/* SO_RCVBUF for data sockets, 0: kernel's */
	int tls;			/* enum fb_tls */
};

enum fb_tls { FB_TLS_NONE, FB_TLS_EXPLICIT, FB_TLS_IMPLICIT };

enum sess_state {
	SS_FREE,	/* no connection */
	SS_CONNECT,	/* control connect in progress */
	SS_GREET,	/* waiting for 220 */
	SS_AUTH,	/* AUTH TLS sent */
	SS_TLS_HS,	/* control TLS handshake in progress */
	SS_PBSZ,
	SS_PROT,
	SS_USER,
	SS_PASS,
	SS_IDLE,	/* logged in, nothing in flight */
	SS_TYPE,	/* TYPE I before a transfer */
	SS_PASV,
	SS_XFER,	/* RETR/STOR sent: data and final reply outstanding */
	SS_CMD,		/* one command, waiting for its reply */
	SS_QUIT,
};

enum sess_op { OP_NONE, OP_LOGIN, OP_RETR, OP_STOR, OP_CMD, OP_QUIT };

struct sess {
	int cfd, dfd;
	uint32_t cgen, dgen;		/* tell stale epoll events from new fds */
	uint32_t heap_pos, ready_pos;	/* UINT32_MAX when not queued */
	uint8_t state, op;
	uint8_t typed;			/* TYPE I already in force */
	uint8_t prelim, data_up, data_eof, final_ok, xfer_started;
	uint8_t throttled, want_read;
	uint8_t tls_wpend;		/* an SSL_write waits to be retried */
	int code;			/* last reply code */
	const char *err;		/* why the session failed */
	double deadline;		/* the current step times out then */
	double op_start;		/* the operation began */
	double cmd_at;			/* RETR/STOR was sent */
	double xfer_start;		/* data could flow (150 seen, connected) */
	double eof_at;			/* RETR: the data connection ended */
	double first_at;		/* RETR: the first data byte came */
	double done_at;
	double next_tick;		/* throttled read due */
	/* With trace: this fetch's paced reads, each when due and when done. */
	struct { double due, at; uint32_t bytes; } reads[16];
	uint32_t nreads;
	double stor_secs;		/* STOR: send for this long (0: use limit) */
	uint64_t bytes;			/* data bytes moved by this operation */
	uint64_t limit;			/* STOR: bytes to send */
	int64_t expect;			/* RETR: size the file should have, or -1 */
	uint32_t rate, packet;		/* RETR throttle, bytes/s and per read */
	SSL *cssl, *dssl;		/* control and data TLS, or NULL */
	SSL_SESSION *resume;		/* the control session, for data connections */
	void *user;			/* the driver's */
	char path[FB_PATH_MAX];
	struct ftp_reply rr;
};

struct fb_loop;

/*
 * result: 1 the operation succeeded; 0 the server answered no (the
 * session is still logged in and idle); -1 the session failed and was
 * closed (s->err says why).
 */
typedef void (*fb_done_fn)(struct fb_loop *L, struct sess *s, int result);
typedef void (*fb_xfer_fn)(struct fb_loop *L, struct sess *s);

struct fb_loop {
	int ep;
	const struct fb_target *tgt;
	struct sess *s;
	uint32_t n;
	uint32_t *heap, heap_len;	/* throttled reads, by next_tick */
	uint32_t *ready, ready_len;	/* sessions with data left to move */
	double next_sweep;
	fb_done_fn on_done;
	fb_xfer_fn on_xfer;		/* optional: a transfer began */
	void *ctx;
	uint64_t bytes;			/* all data bytes moved */
	double tick_lag_max;		/* latest paced read, s after its tick */
	uint32_t tick_batch_max;	/* most paced reads due in one turn */
	double tick_lag_sum;		/* the paced reads' lateness, s, ... */
	uint64_t tick_reads;		/* ... over this many */
	int trace;			/* robots -v: sessions log their reads */
	/*
	 * Throttled reads paced as the classic dkftpbench paces them: the
	 * pause after a read of n bytes is n / rate from that read (no
	 * catching up after a late tick), and it is taken after the last
	 * packet too, before the EOF is read.
	 */
	int classic;
	char *buf;			/* one large buffer for all transfers */
	size_t bufsz;
	SSL_CTX *tls;			/* with tgt->tls: every connection's context */
	struct fb_tls_stats {
		uint64_t data_conns;	/* data handshakes completed */
		uint64_t data_resumed;	/* ... of which resumed the control session */
		uint64_t unclean_eof;	/* RETR ended without close_notify */
		char version[16], cipher[64];	/* of the first control handshake */
	} tls_stats;
};

double fb_now(void);

/* n sessions, all SS_FREE. Dies when out of memory or fds. */
void loop_init(struct fb_loop *L, const struct fb_target *t, uint32_t n);
void loop_free(struct fb_loop *L);
/* With L->trace: the session's paced reads in its last fetch. */
void sess_reads_dump(const struct sess *s, FILE *out);

/*
 * Runs until stop(L) is true (returns 0) or until the monotonic time
 * `until` (returns -1). stop may be NULL.
 */
int loop_run(struct fb_loop *L, double until, int (*stop)(struct fb_loop *));

/* Operations. Each ends with exactly one on_done call. */
void sess_login(struct fb_loop *L, struct sess *s);
void sess_retr(struct fb_loop *L, struct sess *s, const char *path,
	       int64_t expect, uint32_t rate, uint32_t packet);
void sess_stor(struct fb_loop *L, struct sess *s, const char *path,
	       uint64_t limit, double secs);
void sess_cmd(struct fb_loop *L, struct sess *s, const char *line);
void sess_quit(struct fb_loop *L, struct sess *s);

/* Drops the connection without a word; no on_done call. */
void sess_close(struct fb_loop *L, struct sess *s);

#endif
