#include "sess.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "src/common/util.h"
#include "tls.h"

#define NOPOS UINT32_MAX
/* 1 MiB per read or write: the generator must never be the bottleneck. */
#define BIG_BUF (1u << 20)
/* Reads or writes per session per turn before others get theirs. */
#define TURN_IOS 8
#define SWEEP_SECS 0.25
#define MAX_EVENTS 512
/*
 * Records per session per turn with TLS: SSL_read returns one record
 * (16 KB) at a time, so a turn reads up to BIG_BUF, as without TLS.
 */
#define TURN_RECORDS 64

/* epoll tag: session index, which socket, and that socket's generation. */
#define TAG(idx, is_data, gen) \
	((uint64_t)(idx) | ((uint64_t)(is_data) << 32) | ((uint64_t)(gen) << 33))

static void data_read(struct fb_loop *L, struct sess *s);
static void stor_write(struct fb_loop *L, struct sess *s);
static void ctrl_read(struct fb_loop *L, struct sess *s);

double
fb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t
sess_idx(struct fb_loop *L, struct sess *s)
{
	return (uint32_t)(s - L->s);
}

/* ---- timer heap (throttled reads) and ready list ---- */

static int
heap_less(struct fb_loop *L, uint32_t a, uint32_t b)
{
	return L->s[L->heap[a]].next_tick < L->s[L->heap[b]].next_tick;
}

static void
heap_swap(struct fb_loop *L, uint32_t a, uint32_t b)
{
	uint32_t t = L->heap[a];

	L->heap[a] = L->heap[b];
	L->heap[b] = t;
	L->s[L->heap[a]].heap_pos = a;
	L->s[L->heap[b]].heap_pos = b;
}

static void
heap_up(struct fb_loop *L, uint32_t i)
{
	while (i > 0 && heap_less(L, i, (i - 1) / 2)) {
		heap_swap(L, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct fb_loop *L, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < L->heap_len && heap_less(L, l, m))
			m = l;
		if (r < L->heap_len && heap_less(L, r, m))
			m = r;
		if (m == i)
			return;
		heap_swap(L, i, m);
		i = m;
	}
}

static void
heap_push(struct fb_loop *L, struct sess *s)
{
	if (s->heap_pos != NOPOS)
		bug("%s: session already queued", __func__);
	L->heap[L->heap_len] = sess_idx(L, s);
	s->heap_pos = L->heap_len++;
	heap_up(L, s->heap_pos);
}

static void
heap_remove(struct fb_loop *L, struct sess *s)
{
	uint32_t i = s->heap_pos;

	if (i == NOPOS)
		return;
	s->heap_pos = NOPOS;
	if (i == --L->heap_len)
		return;
	L->heap[i] = L->heap[L->heap_len];
	L->s[L->heap[i]].heap_pos = i;
	heap_down(L, i);
	heap_up(L, i);
}

static void
ready_add(struct fb_loop *L, struct sess *s)
{
	if (s->ready_pos != NOPOS)
		return;
	L->ready[L->ready_len] = sess_idx(L, s);
	s->ready_pos = L->ready_len++;
}

static void
ready_remove(struct fb_loop *L, struct sess *s)
{
	uint32_t i = s->ready_pos;

	if (i == NOPOS)
		return;
	s->ready_pos = NOPOS;
	if (i == --L->ready_len)
		return;
	L->ready[i] = L->ready[L->ready_len];
	L->s[L->ready[i]].ready_pos = i;
}

/* ---- setup ---- */

void
loop_init(struct fb_loop *L, const struct fb_target *t, uint32_t n)
{
	uint32_t i;

	memset(L, 0, sizeof(*L));
	L->tgt = t;
	L->n = n;
	L->ep = epoll_create1(EPOLL_CLOEXEC);
	if (L->ep < 0)
		die("epoll_create1: %s", strerror(errno));
	L->s = calloc(n, sizeof(*L->s));
	L->heap = calloc(n, sizeof(*L->heap));
	L->ready = calloc(n, sizeof(*L->ready));
	L->bufsz = BIG_BUF;
	L->buf = malloc(L->bufsz);
	if (L->s == NULL || L->heap == NULL || L->ready == NULL || L->buf == NULL)
		die("out of memory for %u sessions", n);
	/* STOR sends this; some servers compress or dedupe zero pages. */
	memset(L->buf, 'x', L->bufsz);
	for (i = 0; i < n; i++) {
		L->s[i].cfd = L->s[i].dfd = -1;
		L->s[i].heap_pos = L->s[i].ready_pos = NOPOS;
		L->s[i].expect = -1;
	}
	L->next_sweep = fb_now() + SWEEP_SECS;
	if (t->tls != FB_TLS_NONE)
		L->tls = fbtls_ctx_new();
}

void
loop_free(struct fb_loop *L)
{
	uint32_t i;

	for (i = 0; i < L->n; i++)
		sess_close(L, &L->s[i]);
	close(L->ep);
	free(L->s);
	free(L->heap);
	free(L->ready);
	free(L->buf);
	if (L->tls != NULL)
		fbtls_ctx_free(L->tls);
	memset(L, 0, sizeof(*L));
	L->ep = -1;
}

/* ---- closing and ending operations ---- */

static void
touch(struct fb_loop *L, struct sess *s)
{
	s->deadline = fb_now() + L->tgt->step_timeout;
}

static void
data_close(struct fb_loop *L, struct sess *s)
{
	heap_remove(L, s);
	ready_remove(L, s);
	fbtls_free(&s->dssl);
	s->tls_wpend = 0;
	if (s->dfd >= 0) {
		/* Closing also takes the fd out of the epoll set. */
		close(s->dfd);
		s->dfd = -1;
		s->dgen++;
	}
	s->want_read = 0;
}

void
sess_close(struct fb_loop *L, struct sess *s)
{
	data_close(L, s);
	fbtls_free(&s->cssl);
	fbtls_session_free(&s->resume);
	if (s->cfd >= 0) {
		close(s->cfd);
		s->cfd = -1;
		s->cgen++;
	}
	s->state = SS_FREE;
	s->typed = 0;
}

static void
finish(struct fb_loop *L, struct sess *s, int result)
{
	s->done_at = fb_now();
	if (result < 0) {
		sess_close(L, s);
	} else {
		data_close(L, s);
		s->state = SS_IDLE;
	}
	L->on_done(L, s, result);
}

/* After QUIT any answer, or a close, ends the session as asked. */
static void
quit_done(struct fb_loop *L, struct sess *s)
{
	/* Best effort: the server may have closed already after its 221. */
	if (s->cssl != NULL)
		fbtls_shutdown(s->cssl);
	s->done_at = fb_now();
	sess_close(L, s);
	L->on_done(L, s, 1);
}

static void
fail(struct fb_loop *L, struct sess *s, const char *why)
{
	s->err = why;
	finish(L, s, -1);
}

/* ---- control connection ---- */

static int
sock_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

static int
open_socket(const struct sockaddr_storage *sa, socklen_t alen, int rcvbuf)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	/* Before connect, so the window scale is chosen to match. */
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (connect(fd, (const struct sockaddr *)sa, alen) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Sends one command line. Control commands are short and sent only after
 * the previous reply came, so a socket buffer too full for one line means
 * the connection is gone. Returns 0, or -1 after failing the session.
 */
static int __attribute__((format(printf, 3, 4)))
ctrl_send(struct fb_loop *L, struct sess *s, const char *fmt, ...)
{
	char line[FB_PATH_MAX + 64];
	va_list ap;
	ssize_t n;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line) - 2, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(line) - 2)
		bug("%s: command too long", __func__);
	line[len++] = '\r';
	line[len++] = '\n';
	if (s->cssl != NULL)
		n = fbtls_write(s->cssl, line, (size_t)len);
	else
		n = send(s->cfd, line, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n != len) {
		fail(L, s, "control send failed");
		return -1;
	}
	touch(L, s);
	return 0;
}

static void
send_pasv(struct fb_loop *L, struct sess *s)
{
	if (ctrl_send(L, s, "%s", L->tgt->epsv ? "EPSV" : "PASV") == 0)
		s->state = SS_PASV;
}

/* TYPE I once per session, as a client that remembers it would. */
static void
start_transfer(struct fb_loop *L, struct sess *s)
{
	s->op_start = fb_now();
	s->nreads = 0;
	s->cmd_at = s->xfer_start = s->eof_at = s->first_at = 0;
	s->bytes = 0;
	s->prelim = s->data_up = s->data_eof = s->final_ok = 0;
	s->xfer_started = s->want_read = 0;
	if (s->typed) {
		send_pasv(L, s);
	} else if (ctrl_send(L, s, "TYPE I") == 0) {
		s->state = SS_TYPE;
	}
}

static void
data_open(struct fb_loop *L, struct sess *s, uint16_t port)
{
	struct sockaddr_storage sa = L->tgt->addr;
	struct epoll_event ev;

	if (sa.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&sa)->sin_port = htons(port);
	s->dfd = open_socket(&sa, L->tgt->alen, L->tgt->data_rcvbuf);
	if (s->dfd < 0) {
		fail(L, s, errno == EMFILE || errno == ENFILE ?
		     "out of fds for data connection" : "data connect failed");
		return;
	}
	/* Edge-triggered: connect completion, data and space each wake once. */
	ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	ev.data.u64 = TAG(sess_idx(L, s), 1, s->dgen);
	if (epoll_ctl(L->ep, EPOLL_CTL_ADD, s->dfd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	if (ctrl_send(L, s, "%s %s", s->op == OP_RETR ? "RETR" : "STOR", s->path) < 0)
		return;
	s->cmd_at = fb_now();
	s->state = SS_XFER;
}

static void
maybe_finish_xfer(struct fb_loop *L, struct sess *s)
{
	if (s->final_ok && s->data_eof)
		finish(L, s, 1);
}

/* Data can flow once the server said 150 and the socket is connected. */
static void
maybe_start_xfer(struct fb_loop *L, struct sess *s)
{
	uint32_t gen = s->dgen;

	if (s->xfer_started || !s->prelim || !s->data_up)
		return;
	s->xfer_started = 1;
	if (L->on_xfer != NULL)
		L->on_xfer(L, s);
	if (s->dfd < 0 || s->dgen != gen)
		return;
	s->xfer_start = fb_now();
	if (s->op == OP_STOR)
		stor_write(L, s);
}

/* "transfer refused (451)": which reply refused it says why. One static
 * string per code, as err is kept by pointer. */
static const char *
xfer_refusal(int code)
{
	static char why[600][32];

	if (code < 300 || code >= 600)
		return "transfer refused";
	if (why[code][0] == '\0')
		(void)snprintf(why[code], sizeof(why[code]), "transfer refused (%d)", code);
	return why[code];
}

static void
on_xfer_reply(struct fb_loop *L, struct sess *s, int code)
{
	if (code < 200) {
		s->prelim = 1;
		maybe_start_xfer(L, s);
	} else if (code < 300) {
		if (s->op == OP_STOR && !s->data_eof) {
			fail(L, s, "final reply before the upload ended");
			return;
		}
		s->final_ok = 1;
		maybe_finish_xfer(L, s);
	} else {
		s->err = xfer_refusal(code);
		finish(L, s, 0);
	}
}

static void
send_user(struct fb_loop *L, struct sess *s)
{
	if (ctrl_send(L, s, "USER %s", L->tgt->user) == 0)
		s->state = SS_USER;
}

/* PBSZ 0 and PROT P before USER: every data connection is then TLS. */
static void
send_pbsz(struct fb_loop *L, struct sess *s)
{
	if (ctrl_send(L, s, "PBSZ 0") == 0)
		s->state = SS_PBSZ;
}

static void
ctrl_tls_step(struct fb_loop *L, struct sess *s)
{
	struct fb_tls_stats *st = &L->tls_stats;
	uint32_t gen = s->cgen;
	int r = fbtls_handshake(s->cssl);

	if (r < 0) {
		fail(L, s, "TLS handshake failed");
		return;
	}
	if (r == 0)
		return;
	touch(L, s);
	if (st->version[0] == '\0') {
		tw_strlcpy(st->version, fbtls_version(s->cssl), sizeof(st->version));
		tw_strlcpy(st->cipher, fbtls_cipher(s->cssl), sizeof(st->cipher));
	}
	if (L->tgt->tls == FB_TLS_IMPLICIT)
		s->state = SS_GREET;
	else
		send_pbsz(L, s);
	/*
	 * What followed the handshake's last flight (a ticket, the implicit
	 * greeting) may already sit in the socket or in OpenSSL's buffer;
	 * no new edge would announce it.
	 */
	if (s->cfd >= 0 && s->cgen == gen)
		ctrl_read(L, s);
}

static void
ctrl_tls_start(struct fb_loop *L, struct sess *s)
{
	s->cssl = fbtls_new(L->tls, s->cfd, s, NULL);
	s->state = SS_TLS_HS;
	touch(L, s);
	ctrl_tls_step(L, s);
}

static void
on_greeting(struct fb_loop *L, struct sess *s)
{
	switch (L->tgt->tls) {
	case FB_TLS_EXPLICIT:
		if (ctrl_send(L, s, "AUTH TLS") == 0)
			s->state = SS_AUTH;
		break;
	case FB_TLS_IMPLICIT:
		send_pbsz(L, s);
		break;
	default:
		send_user(L, s);
		break;
	}
}

static void
on_reply(struct fb_loop *L, struct sess *s, int code)
{
	uint16_t port;

	s->code = code;
	touch(L, s);
	switch (s->state) {
	case SS_GREET:
		if (code == 220)
			on_greeting(L, s);
		else if (code >= 200)
			fail(L, s, "refused at greeting");
		break;
	case SS_AUTH:
		if (code == 234 && s->rr.len > 0) {
			/* Plaintext after 234 would be read as if it came over TLS. */
			fail(L, s, "bytes after 234 before the TLS handshake");
		} else if (code == 234) {
			ctrl_tls_start(L, s);
		} else if (code >= 200) {
			fail(L, s, "AUTH TLS refused");
		}
		break;
	case SS_PBSZ:
		if (code >= 200 && code < 300) {
			if (ctrl_send(L, s, "PROT P") == 0)
				s->state = SS_PROT;
		} else if (code >= 300) {
			fail(L, s, "PBSZ 0 refused");
		}
		break;
	case SS_PROT:
		if (code >= 200 && code < 300)
			send_user(L, s);
		else if (code >= 300)
			fail(L, s, "PROT P refused");
		break;
	case SS_USER:
		if (code == 230) {
			finish(L, s, 1);
		} else if (code == 331) {
			if (ctrl_send(L, s, "PASS %s", L->tgt->pass) == 0)
				s->state = SS_PASS;
		} else {
			fail(L, s, "USER refused");
		}
		break;
	case SS_PASS:
		if (code == 230 || code == 202)
			finish(L, s, 1);
		else
			fail(L, s, "login refused");
		break;
	case SS_TYPE:
		if (code >= 200 && code < 300) {
			s->typed = 1;
			send_pasv(L, s);
		} else {
			s->err = "TYPE I refused";
			finish(L, s, 0);
		}
		break;
	case SS_PASV:
		if ((code == 227 && ftp_parse_pasv(s->rr.last, &port) == 0) ||
		    (code == 229 && ftp_parse_epsv(s->rr.last, &port) == 0)) {
			data_open(L, s, port);
		} else if (code == 227 || code == 229) {
			fail(L, s, "unparsable passive reply");
		} else {
			s->err = "passive mode refused";
			finish(L, s, 0);
		}
		break;
	case SS_XFER:
		on_xfer_reply(L, s, code);
		break;
	case SS_CMD:
		if (code < 200)
			break;
		if (code >= 400)
			s->err = "command refused";
		finish(L, s, code < 400 ? 1 : 0);
		break;
	case SS_QUIT:
		quit_done(L, s);
		break;
	default:
		/* Unsolicited: 421 and friends mean the server dropped us. */
		if (code >= 400)
			fail(L, s, "server closed the session");
		break;
	}
}

static void
ctrl_eof(struct fb_loop *L, struct sess *s)
{
	if (s->state == SS_QUIT) {
		quit_done(L, s);
	} else {
		fail(L, s, "control connection closed");
	}
}

/* Edge-triggered: reads until EAGAIN. Replies are handled as they come. */
static void
ctrl_read(struct fb_loop *L, struct sess *s)
{
	uint32_t gen = s->cgen;
	SSL *ssl = s->cssl;
	int code, r, clean;

	for (;;) {
		size_t avail;
		char *p = ftp_reply_space(&s->rr, &avail);
		ssize_t n = ssl != NULL ? fbtls_read(ssl, p, avail, &clean) :
			    recv(s->cfd, p, avail, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			fail(L, s, "control connection reset");
			return;
		}
		if (n == 0) {
			ctrl_eof(L, s);
			return;
		}
		ftp_reply_added(&s->rr, (size_t)n);
		while ((r = ftp_reply_next(&s->rr, &code)) == 1) {
			on_reply(L, s, code);
			/* After 234 the socket belongs to the TLS handshake. */
			if (s->cfd < 0 || s->cgen != gen || s->cssl != ssl)
				return;
		}
		if (r < 0) {
			fail(L, s, "malformed reply");
			return;
		}
	}
}

static void
ctrl_event(struct fb_loop *L, struct sess *s, uint32_t ev)
{
	if (s->state == SS_CONNECT) {
		if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (sock_error(s->cfd) != 0) {
			fail(L, s, "connect failed");
			return;
		}
		if (L->tgt->tls == FB_TLS_IMPLICIT) {
			ctrl_tls_start(L, s);
			return;
		}
		s->state = SS_GREET;
		touch(L, s);
	}
	if (s->state == SS_TLS_HS) {
		ctrl_tls_step(L, s);
		return;
	}
	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		ctrl_read(L, s);
}

/* ---- data connection ---- */

static void
data_got_eof(struct fb_loop *L, struct sess *s)
{
	s->eof_at = fb_now();
	data_close(L, s);
	s->data_eof = 1;
	if (s->expect >= 0 && s->bytes != (uint64_t)s->expect) {
		fail(L, s, "file size differs from SIZE");
		return;
	}
	maybe_finish_xfer(L, s);
}

/*
 * MSG_TRUNC: TCP discards the bytes in the kernel, no copy to user space.
 * TLS records must be decrypted (and authenticated) into the buffer.
 */
static ssize_t
data_recv(struct fb_loop *L, struct sess *s, size_t len)
{
	ssize_t n;
	int clean;

	if (s->dssl == NULL)
		return recv(s->dfd, L->buf, len, MSG_TRUNC | MSG_DONTWAIT);
	n = fbtls_read(s->dssl, L->buf, len, &clean);
	if (n == 0 && clean)
		fbtls_shutdown(s->dssl);	/* close_notify answered */
	else if (n == 0)
		L->tls_stats.unclean_eof++;
	return n;
}

/* n bytes of a download came in: counted, the first one stamped. */
static void
data_in(struct fb_loop *L, struct sess *s, ssize_t n)
{
	if (s->first_at == 0)
		s->first_at = fb_now();
	s->bytes += (uint64_t)n;
	L->bytes += (uint64_t)n;
}

/*
 * One packet per tick at rate bytes/s (dkftpbench's -b/-m). A late tick
 * may catch up one interval, never more, so a stall is not hidden by a
 * burst afterwards. L->classic: no catching up at all, and the pause
 * after the last packet too (fb_loop).
 */
static void
throttle_read(struct fb_loop *L, struct sess *s)
{
	double now = fb_now(), interval = (double)s->packet / s->rate;
	ssize_t n = data_recv(L, s, s->packet);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			s->want_read = 1;
			return;
		}
		fail(L, s, "data connection reset");
		return;
	}
	if (n == 0) {
		data_got_eof(L, s);
		return;
	}
	s->want_read = 0;
	if (L->trace && s->nreads < sizeof(s->reads) / sizeof(s->reads[0])) {
		s->reads[s->nreads].due = s->next_tick;
		s->reads[s->nreads].at = now;
		s->reads[s->nreads].bytes = (uint32_t)n;
	}
	s->nreads++;
	data_in(L, s, n);
	if (L->classic) {
		s->next_tick = now + (double)n / s->rate;
	} else {
		s->next_tick += interval;
		if (s->next_tick < now - interval)
			s->next_tick = now;
	}
	s->deadline = s->next_tick + L->tgt->step_timeout;
	if (!L->classic && s->expect >= 0 && s->bytes >= (uint64_t)s->expect) {
		/* All in: wait for EOF at full speed, it costs no bandwidth. */
		s->throttled = 0;
		data_read(L, s);
		return;
	}
	heap_push(L, s);
}

static void
data_read(struct fb_loop *L, struct sess *s)
{
	int i, turn = s->dssl != NULL ? TURN_RECORDS : TURN_IOS;

	if (s->throttled) {
		if (s->want_read) {
			s->next_tick = fb_now();
			throttle_read(L, s);
		}
		return;
	}
	for (i = 0; i < turn; i++) {
		ssize_t n = data_recv(L, s, L->bufsz);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			fail(L, s, "data connection reset");
			return;
		}
		if (n == 0) {
			data_got_eof(L, s);
			return;
		}
		data_in(L, s, n);
		touch(L, s);
	}
	/* Edge-triggered: no new event will come for what is left. */
	ready_add(L, s);
}

/*
 * The upload is complete. With TLS, close_notify then FIN; the socket
 * stays open until the final reply, because a close() with the server's
 * unread post-handshake tickets in our buffer would send a RST that can
 * cut the upload's tail.
 */
static void
stor_end(struct fb_loop *L, struct sess *s)
{
	if (s->dssl != NULL) {
		int r = fbtls_shutdown(s->dssl);

		if (r == 0)
			return;		/* EPOLLOUT brings us back here */
		if (r < 0) {
			fail(L, s, "data TLS shutdown failed");
			return;
		}
		shutdown(s->dfd, SHUT_WR);
		heap_remove(L, s);
		ready_remove(L, s);
	} else {
		/* Our FIN ends the upload; the server answers 226. */
		data_close(L, s);
	}
	s->data_eof = 1;
	touch(L, s);
	maybe_finish_xfer(L, s);
}

static void
stor_write(struct fb_loop *L, struct sess *s)
{
	int i;

	for (i = 0; i < TURN_IOS; i++) {
		size_t len = L->bufsz;
		ssize_t n;

		if (s->limit > 0 && s->limit - s->bytes < len)
			len = (size_t)(s->limit - s->bytes);
		/* A TLS record half sent must be finished before close_notify. */
		if (!s->tls_wpend && ((s->limit > 0 && len == 0) ||
		    (s->stor_secs > 0 && fb_now() - s->xfer_start >= s->stor_secs))) {
			stor_end(L, s);
			return;
		}
		if (s->dssl != NULL)
			n = fbtls_write(s->dssl, L->buf, len);
		else
			n = send(s->dfd, L->buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		s->tls_wpend = n < 0 && s->dssl != NULL && errno == EAGAIN;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			fail(L, s, "data connection reset");
			return;
		}
		s->bytes += (uint64_t)n;
		L->bytes += (uint64_t)n;
		touch(L, s);
	}
	ready_add(L, s);
}

/*
 * The data connection's handshake, resuming the control session. The
 * server starts its side only after RETR/STOR, which went out with the
 * connect. 1 done, 0 waiting, -1 failed (and the session with it).
 */
static int
data_tls_step(struct fb_loop *L, struct sess *s)
{
	int r = fbtls_handshake(s->dssl);

	if (r < 0) {
		fail(L, s, "data TLS handshake failed");
		return -1;
	}
	if (r == 0)
		return 0;
	L->tls_stats.data_conns++;
	L->tls_stats.data_resumed += fbtls_resumed(s->dssl) != 0;
	touch(L, s);
	return 1;
}

static void
data_event(struct fb_loop *L, struct sess *s, uint32_t ev)
{
	uint32_t gen = s->dgen;

	if (!s->data_up) {
		if (s->dssl == NULL) {
			if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
				return;
			if (sock_error(s->dfd) != 0) {
				fail(L, s, "data connect failed");
				return;
			}
			if (L->tls != NULL)
				s->dssl = fbtls_new(L->tls, s->dfd, NULL, s->resume);
		}
		if (s->dssl != NULL && data_tls_step(L, s) <= 0)
			return;
		s->data_up = 1;
		touch(L, s);
		if (s->op == OP_RETR && s->throttled) {
			s->next_tick = fb_now();
			s->want_read = 1;
		}
		/* For STOR this also sends the first bytes. */
		maybe_start_xfer(L, s);
		if (s->dfd < 0 || s->dgen != gen || s->op == OP_STOR)
			return;
		/* Records that came with the handshake raise no new edge. */
		if (s->dssl != NULL)
			ev |= EPOLLIN;
	}
	if (s->op == OP_RETR) {
		if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			data_read(L, s);
	} else if (s->xfer_started && s->data_eof == 0) {
		if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR))
			stor_write(L, s);
	}
}

/* ---- operations ---- */

static void
begin_op(struct sess *s, enum sess_op op)
{
	s->op = (uint8_t)op;
	s->err = NULL;
	s->code = 0;
	s->bytes = 0;
	s->op_start = fb_now();
	s->nreads = 0;
}

void
sess_login(struct fb_loop *L, struct sess *s)
{
	struct epoll_event ev;
	int one = 1;

	sess_close(L, s);
	begin_op(s, OP_LOGIN);
	ftp_reply_init(&s->rr);
	s->cfd = open_socket(&L->tgt->addr, L->tgt->alen, 0);
	if (s->cfd < 0) {
		fail(L, s, errno == EMFILE || errno == ENFILE ?
		     "out of fds for control connection" : "connect failed");
		return;
	}
	/* Commands are single writes; Nagle plus delayed ACK would add 40 ms. */
	setsockopt(s->cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	ev.data.u64 = TAG(sess_idx(L, s), 0, s->cgen);
	if (epoll_ctl(L->ep, EPOLL_CTL_ADD, s->cfd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	s->state = SS_CONNECT;
	touch(L, s);
}

static int
set_path(struct sess *s, const char *path)
{
	return tw_strlcpy(s->path, path, sizeof(s->path));
}

void
sess_retr(struct fb_loop *L, struct sess *s, const char *path,
	  int64_t expect, uint32_t rate, uint32_t packet)
{
	if (s->state != SS_IDLE)
		bug("%s: session not idle", __func__);
	if (set_path(s, path) < 0)
		bug("%s: path too long", __func__);
	begin_op(s, OP_RETR);
	s->expect = expect;
	s->rate = rate;
	s->packet = packet;
	s->throttled = rate > 0 && packet > 0;
	start_transfer(L, s);
}

void
sess_stor(struct fb_loop *L, struct sess *s, const char *path,
	  uint64_t limit, double secs)
{
	if (s->state != SS_IDLE)
		bug("%s: session not idle", __func__);
	if (set_path(s, path) < 0)
		bug("%s: path too long", __func__);
	begin_op(s, OP_STOR);
	s->expect = -1;
	s->limit = limit;
	s->stor_secs = secs;
	s->throttled = 0;
	start_transfer(L, s);
}

void
sess_cmd(struct fb_loop *L, struct sess *s, const char *line)
{
	if (s->state != SS_IDLE)
		bug("%s: session not idle", __func__);
	begin_op(s, OP_CMD);
	if (ctrl_send(L, s, "%s", line) == 0)
		s->state = SS_CMD;
}

void
sess_quit(struct fb_loop *L, struct sess *s)
{
	if (s->state != SS_IDLE)
		bug("%s: session not idle", __func__);
	begin_op(s, OP_QUIT);
	if (ctrl_send(L, s, "QUIT") == 0)
		s->state = SS_QUIT;
}

/* ---- the loop ---- */

static void
dispatch(struct fb_loop *L, uint64_t tag, uint32_t ev)
{
	uint32_t idx = (uint32_t)tag, gen = (uint32_t)(tag >> 33);
	struct sess *s;

	if (idx >= L->n)
		bug("%s: bad epoll tag", __func__);
	s = &L->s[idx];
	if ((tag >> 32) & 1) {
		if (s->dfd >= 0 && (s->dgen & 0x7fffffff) == gen)
			data_event(L, s, ev);
	} else {
		if (s->cfd >= 0 && (s->cgen & 0x7fffffff) == gen)
			ctrl_event(L, s, ev);
	}
}

static void
run_ready(struct fb_loop *L)
{
	uint32_t k, n = L->ready_len;

	/* Each session queued before this turn gets one more turn. */
	for (k = 0; k < n && L->ready_len > 0; k++) {
		struct sess *s = &L->s[L->ready[0]];

		ready_remove(L, s);
		if (s->dfd < 0)
			continue;
		if (s->op == OP_RETR)
			data_read(L, s);
		else if (s->op == OP_STOR && s->xfer_started && !s->data_eof)
			stor_write(L, s);
	}
}

void
sess_reads_dump(const struct sess *s, FILE *out)
{
	uint32_t i;

	fprintf(out, "  its paced reads, ms after the op began: due at (late) bytes:");
	for (i = 0; i < s->nreads && i < sizeof(s->reads) / sizeof(s->reads[0]); i++)
		fprintf(out, " %.1f %.1f (%.1f) %u;", (s->reads[i].due - s->op_start) * 1000,
			(s->reads[i].at - s->op_start) * 1000,
			(s->reads[i].at - s->reads[i].due) * 1000, s->reads[i].bytes);
	fprintf(out, "\n");
}

static void
run_timers(struct fb_loop *L, double now)
{
	uint32_t batch = 0;

	while (L->heap_len > 0 && L->s[L->heap[0]].next_tick <= now) {
		struct sess *s = &L->s[L->heap[0]];
		double late = now - s->next_tick;

		if (late > L->tick_lag_max)
			L->tick_lag_max = late;
		L->tick_lag_sum += late;
		L->tick_reads++;
		heap_remove(L, s);
		throttle_read(L, s);
		batch++;
	}
	if (batch > L->tick_batch_max)
		L->tick_batch_max = batch;
}

static void
sweep(struct fb_loop *L, double now)
{
	/* Which step timed out says whether the listener, login or data lags. */
	static const char *const why[] = {
		[SS_CONNECT] = "timeout: connect", [SS_GREET] = "timeout: greeting",
		[SS_AUTH] = "timeout: AUTH TLS", [SS_TLS_HS] = "timeout: TLS handshake",
		[SS_PBSZ] = "timeout: PBSZ", [SS_PROT] = "timeout: PROT",
		[SS_USER] = "timeout: USER", [SS_PASS] = "timeout: PASS",
		[SS_TYPE] = "timeout: TYPE", [SS_PASV] = "timeout: PASV",
		[SS_XFER] = "timeout: transfer", [SS_CMD] = "timeout: command",
		[SS_QUIT] = "timeout: QUIT",
	};
	uint32_t i;

	for (i = 0; i < L->n; i++) {
		struct sess *s = &L->s[i];

		if (s->state != SS_FREE && s->state != SS_IDLE && now > s->deadline)
			fail(L, s, why[s->state]);
	}
	L->next_sweep = now + SWEEP_SECS;
}

int
loop_run(struct fb_loop *L, double until, int (*stop)(struct fb_loop *))
{
	struct epoll_event ev[MAX_EVENTS];

	for (;;) {
		double now = fb_now(), wake = until;
		struct timespec ts;
		int i, n;

		if (stop != NULL && stop(L))
			return 0;
		if (now >= until)
			return -1;
		if (L->heap_len > 0 && L->s[L->heap[0]].next_tick < wake)
			wake = L->s[L->heap[0]].next_tick;
		if (L->next_sweep < wake)
			wake = L->next_sweep;
		if (L->ready_len > 0 || wake < now)
			wake = now;
		ts.tv_sec = (time_t)(wake - now);
		ts.tv_nsec = (long)((wake - now - (double)ts.tv_sec) * 1e9);
		n = epoll_pwait2(L->ep, ev, MAX_EVENTS, &ts, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_pwait2: %s", strerror(errno));
		}
		for (i = 0; i < n; i++)
			dispatch(L, ev[i].data.u64, ev[i].events);
		run_ready(L);
		now = fb_now();
		run_timers(L, now);
		if (now >= L->next_sweep)
			sweep(L, now);
	}
}
