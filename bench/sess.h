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
 * TLS seam: all control I/O goes through ctrl_send()/ctrl_read() and all
 * data I/O through data_read()/stor_write() in sess.c. An FTPS build adds
 * AUTH TLS, PBSZ 0 and PROT P states after SS_GREET and wraps those four
 * functions (SSL_read/SSL_write on the same non-blocking sockets, with
 * SSL_ERROR_WANT_* mapped to the same EAGAIN paths); nothing else changes.
 */
#ifndef FB_SESS_H
#define FB_SESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ftpreply.h"

#define FB_PATH_MAX 128

struct fb_target {
	struct sockaddr_storage addr;	/* the server's control address */
	socklen_t alen;
	const char *user, *pass;
	double step_timeout;		/* seconds any one step may take */
	int epsv;			/* EPSV instead of PASV */
	int data_rcvbuf;		/* SO_RCVBUF for data sockets, 0: kernel's */
};

enum sess_state {
	SS_FREE,	/* no connection */
	SS_CONNECT,	/* control connect in progress */
	SS_GREET,	/* waiting for 220 */
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
	int code;			/* last reply code */
	const char *err;		/* why the session failed */
	double deadline;		/* the current step times out then */
	double op_start;		/* the operation began */
	double cmd_at;			/* RETR/STOR was sent */
	double xfer_start;		/* data could flow (150 seen, connected) */
	double eof_at;			/* RETR: the data connection ended */
	double done_at;
	double next_tick;		/* throttled read due */
	double stor_secs;		/* STOR: send for this long (0: use limit) */
	uint64_t bytes;			/* data bytes moved by this operation */
	uint64_t limit;			/* STOR: bytes to send */
	int64_t expect;			/* RETR: size the file should have, or -1 */
	uint32_t rate, packet;		/* RETR throttle, bytes/s and per read */
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
	char *buf;			/* one large buffer for all transfers */
	size_t bufsz;
};

double fb_now(void);

/* n sessions, all SS_FREE. Dies when out of memory or fds. */
void loop_init(struct fb_loop *L, const struct fb_target *t, uint32_t n);
void loop_free(struct fb_loop *L);

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
