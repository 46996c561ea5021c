/*
 * The transfer engine and the commands that move file contents: RETR
 * with sendfile(2) (plain reads where it must: TYPE A conversion, a file
 * system without sendfile), STOR/STOU in binary with splice(2) through a
 * pipe, and with large writes where it must (TYPE A, TLS, a rate limit,
 * APPE, a file system without splice). While data moves, the control
 * connection is watched for ABOR only; any other
 * command waits in the socket until the transfer ends. A data connection
 * idle for data_connection_timeout ends the session (as vsftpd does).
 * local_max_rate / anon_max_rate pace RETR and the uploads: rate-sized
 * chunks with a pause between them in which ABOR is still heard.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/monotime.h"
#include "src/common/util.h"
#include "src/data.h"
#include "src/proto/ascii.h"
#include "src/proto/namefilter.h"
#include "src/tcpwin.h"
#include "src/tls.h"
#include "src/worker.h"

#define XFER_BUF (256 * 1024)		/* STOR and ASCII chunk size */

/*
 * The pipe of a spliced upload (recv_file). The pipes of all a user's
 * processes count against fs.pipe-user-pages-soft (64 MB by default);
 * beyond it a new pipe gets 8 KB and F_SETPIPE_SZ fails: at 256 KB about
 * 250 concurrent uploads of one user get the full size, and the others
 * take the buffered path (traced: 54 of 300 concurrent STORs of one user
 * got EPERM, and moved 8 KB per splice until this fallback).
 */
#define UPLOAD_PIPE_SIZE (256 * 1024)

/*
 * One sendfile(2) call moves at most 0x7ffff000 bytes on Linux; asking
 * for 1 GiB at a time keeps the count well inside size_t and ssize_t.
 */
#define SENDFILE_MAX_CHUNK ((size_t)1 << 30)

/*
 * After a partial control line the socket stays readable, so polling it
 * would spin: leave it alone this long, and meanwhile wake up every
 * CTRL_WATCH_SLICE_MS to see whether the time has come.
 */
#define CTRL_PARTIAL_RETRY_MS 1000
#define CTRL_WATCH_SLICE_MS 200

/* STOU tries "name", then "name.1" up to this many names. */
#define STOU_MAX_TRIES 1000

#define MS_PER_S 1000LL

/*
 * The send queue of a data connection. TCP_NOTSENT_LOWAT is the mark:
 * the sender is woken when less than half of it is unsent, and the
 * kernel takes no more while the mark is reached.
 *
 * A connection starts lean: a 16 KB mark (RETR corks when more than
 * the mark is left). When a
 * wait for room takes LEAN_SLOW_MS (a reader that keeps up makes room in
 * microseconds on a LAN), the reader is slow: an 8 KB mark, no cork,
 * TCP_NODELAY, and one send at a time (xfer_slow_room) of what its
 * window takes plus SLOW_CHUNK (slow_send_size). Such a client finds
 * about 9 KB parked for it beside its own receive window, where a 128 KB
 * mark left 156 KB (bench/RESULTS.md, robots at 3,600 B/s); the window
 * it has in hand lasts it far longer than the sender takes to wake up.
 * The cork has to go then: a partial segment it holds back at half the
 * mark or more keeps the socket from being writable (a loopback segment
 * is 64 KB), which is also why a lean wait ends after LEAN_SLOW_MS
 * whatever happens.
 *
 * Once the transfer has moved LEAN_BYTES at LEAN_RATE or faster since
 * its queue last changed, the client keeps up: the mark is 128 KB, which
 * keeps a fast stream's queue full (loopback at several GB/s drains it in
 * tens of microseconds, and the sendfile loop refills it per wake-up)
 * and is more than two loopback segments, so that the cork can stay.
 * LEAN_BYTES is more than a stalled reader takes in at once: its receive
 * window (128 KB by default, which a reader that does not keep up never
 * grows) plus the lean queue and one send past it. A full connection
 * whose wait for room takes FULL_SLOW_MS (a client that read fast and
 * stopped, or whose receive buffer took more than LEAN_BYTES at once)
 * is slow from then on, until it keeps up again.
 *
 * TLS sends are records SSL_write must finish as they began, so a slow
 * TLS reader gets the small mark but not the one-window sends: up to one
 * buffer more stays queued for it.
 */
#define DATA_LEAN_LOWAT (16 * 1024)
#define DATA_NOTSENT_LOWAT (128 * 1024)
#define LEAN_SLOW_MS 20
#define FULL_SLOW_MS 200
#define SLOW_LOWAT (8 * 1024)
#define SLOW_CHUNK ((size_t)8 * 1024)
#define SLOW_ROOM_MAX (4LL * 1024 * 1024)
#define LEAN_BYTES (256ULL * 1024)
#define LEAN_RATE (1024ULL * 1024)	/* bytes per second */

/*
 * A paced transfer pauses at least this often per second of data (its
 * chunks are a quarter of a second's worth), so that its rate stays even
 * and an ABOR is heard between chunks without waiting for a large one.
 */
#define PACE_CHUNKS_PER_S 4
#define PACE_CREDIT_MS 1000

/*
 * Waits until the data socket is ready for events or, with until_ms >= 0
 * (a paced transfer's pause), until that time, without looking at the
 * data socket. Meanwhile an ABOR on the control connection ends the
 * transfer, and the client closing it ends the session. A pause is not
 * idleness: the data timeout counts only waits for the socket.
 */
static enum xfer_status
xfer_poll(struct xfer *x, short events, long long until_ms)
{
	unsigned timeout_s = x->s->cfg->data_connection_timeout;
	long long deadline = tw_mono_ms() + timeout_s * MS_PER_S;
	int pausing = until_ms >= 0;

	for (;;) {
		/* poll(2) skips a negative descriptor: a pause watches ctrl alone. */
		struct pollfd p[2] = { { pausing ? -1 : x->fd, events, 0 },
				       { x->s->ctrl.fd, POLLIN, 0 } };
		long long now = tw_mono_ms();
		int watch = x->watch_ctrl && now >= x->ctrl_retry_ms;
		int ms = -1, rc;

		if (pausing) {
			if (now >= until_ms)
				return XFER_OK;
			ms = until_ms - now > INT_MAX ? INT_MAX : (int)(until_ms - now);
		} else if (timeout_s != 0) {
			if (now >= deadline) {
				ctrl_reply(&x->s->ctrl, 421, "Data timeout. Reconnect. Sorry.");
				_exit(0);
			}
			ms = deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
		}
		if (!pausing && x->wake_ms > 0) {
			if (now >= x->wake_ms) {
				x->wake_ms = 0;	/* the deadline passed: xfer_wait */
				return XFER_OK;
			}
			if (ms < 0 || x->wake_ms - now < ms)
				ms = (int)(x->wake_ms - now);
		}
		if (x->watch_ctrl && !watch && (ms < 0 || ms > CTRL_WATCH_SLICE_MS))
			ms = CTRL_WATCH_SLICE_MS;
		rc = poll(p, watch ? 2 : 1, ms);
		if (rc < 0 && errno != EINTR)
			return XFER_NET_ERR;
		if (rc <= 0)
			continue;
		if (watch && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			switch (ctrl_peek_abor(&x->s->ctrl)) {
			case CTRL_PEEK_ABOR:
				return XFER_ABORTED;
			case CTRL_PEEK_EOF:
				_exit(0);
			case CTRL_PEEK_OTHER:
				x->watch_ctrl = 0;
				break;
			case CTRL_PEEK_AGAIN:
				continue;
			case CTRL_PEEK_PARTIAL:
			default:
				x->ctrl_retry_ms = now + CTRL_PARTIAL_RETRY_MS;
				break;
			}
		}
		if (p[0].revents != 0)
			return XFER_OK;
	}
}

/* A TCP option of the data connection; a failure is logged where asked. */
static void
xfer_tcp_opt(struct xfer *x, int opt, int val, const char *log_as)
{
	if (setsockopt(x->fd, IPPROTO_TCP, opt, &val, sizeof(val)) != 0 && log_as != NULL)
		worker_log(x->s, "data connection: %s: %s", log_as, strerror(errno));
}

/* The queue's state changes: the rate xfer_unlean looks at starts again. */
static void
xfer_mark(struct xfer *x, int lean)
{
	x->lean = lean;
	x->mark_ms = tw_mono_ms();
	x->mark_bytes = x->bytes;
}

/*
 * A lean data connection whose client has kept up since the last change:
 * the full queue, Nagle again (TLS keeps TCP_NODELAY, xfer_open), and the
 * cork where the sender wants one.
 */
static void
xfer_unlean(struct xfer *x)
{
	unsigned long long moved = x->bytes - x->mark_bytes;
	long long ms;

	if (x->lean == XFER_FULL || moved < LEAN_BYTES)
		return;
	ms = tw_mono_ms() - x->mark_ms;
	if (moved < LEAN_RATE * (unsigned long long)(ms > 0 ? ms : 0) / MS_PER_S)
		return;
	xfer_tcp_opt(x, TCP_NOTSENT_LOWAT, DATA_NOTSENT_LOWAT, "TCP_NOTSENT_LOWAT");
	if (x->lean == XFER_LEAN_SLOW && x->ssl == NULL)
		xfer_tcp_opt(x, TCP_NODELAY, 0, NULL);
	if (x->lean == XFER_LEAN_SLOW && x->cork)
		xfer_tcp_opt(x, TCP_CORK, 1, NULL);
	xfer_mark(x, XFER_FULL);
}

/* A data connection whose client reads slowly. */
static void
xfer_slow(struct xfer *x)
{
	xfer_mark(x, XFER_LEAN_SLOW);
	xfer_tcp_opt(x, TCP_NOTSENT_LOWAT, SLOW_LOWAT, NULL);
	/* Uncorking sends what the cork held back. */
	if (x->cork)
		xfer_tcp_opt(x, TCP_CORK, 0, NULL);
	xfer_tcp_opt(x, TCP_NODELAY, 1, NULL);
}

/*
 * A send that must wait: the mark decides when it may go on. A lean
 * connection waits at most LEAN_SLOW_MS, a full one FULL_SLOW_MS, before
 * it is found slow; only the time running out says so, not a wake-up
 * that came late.
 */
static enum xfer_status
xfer_wait(struct xfer *x, short events)
{
	enum xfer_status w;

	if (events & POLLOUT)
		xfer_unlean(x);
	if (!(events & POLLOUT) || x->lean == XFER_LEAN_SLOW)
		return xfer_poll(x, events, -1);
	x->wake_ms = tw_mono_ms() + (x->lean == XFER_LEAN ? LEAN_SLOW_MS : FULL_SLOW_MS);
	w = xfer_poll(x, events, -1);
	/* xfer_poll zeroes wake_ms when the time ran out, not otherwise. */
	if (w == XFER_OK && x->wake_ms == 0)
		xfer_slow(x);
	x->wake_ms = 0;
	return w;
}

/*
 * Between two sends to a slow reader: room for the next one. The
 * kernel checks the mark only when a send needs a new buffer; while
 * the window is shut, send after send would grow the last one (up to
 * 64 KB on loopback) past it. Waiting for the socket to be writable
 * (less than half the mark unsent) keeps the queue at a send and a half.
 */
static enum xfer_status
xfer_slow_room(struct xfer *x)
{
	x->slow_sent = 0;
	return x->lean == XFER_LEAN_SLOW ? xfer_wait(x, POLLOUT) : XFER_OK;
}

/*
 * A slow reader's next send: what its window takes now, and SLOW_CHUNK
 * more to wait unsent for the window's next opening (the socket is
 * writable again once half of that has gone). Sending SLOW_CHUNK alone
 * would make the reader's kernel take 8 KB for the segment size and open
 * its window, waking the sender, every 8 KB it reads: at 10,000 robots
 * that was thousands of wake-ups a second, and logins took twice as long.
 */
static size_t
slow_send_size(const struct xfer *x)
{
	long long room = tw_tcp_window_room(x->fd);

	if (room < 0)
		return SLOW_CHUNK;
	return (size_t)(room < SLOW_ROOM_MAX ? room : SLOW_ROOM_MAX) + SLOW_CHUNK;
}

unsigned
data_xfer_rate(const struct session *s)
{
	return s->anonymous ? s->cfg->anon_max_rate : s->cfg->local_max_rate;
}

/* trans_chunk_size's bounds, vsftpd's: below the first counts as it, and
 * at or above the second as the second. */
#define TRANS_CHUNK_MIN 4096
#define TRANS_CHUNK_MAX 65536

/*
 * How much a paced transfer moves between pauses (at most cap): a
 * quarter of a second's worth, or trans_chunk_size when that is less.
 */
static size_t
pace_chunk(const struct xfer *x, size_t cap)
{
	size_t chunk, limit = x->s->cfg->trans_chunk_size;

	if (x->rate == 0)
		return cap;
	chunk = x->rate / PACE_CHUNKS_PER_S;
	if (chunk == 0)
		chunk = 1;
	if (limit > 0) {
		limit = limit < TRANS_CHUNK_MIN ? TRANS_CHUNK_MIN
		      : limit > TRANS_CHUNK_MAX ? TRANS_CHUNK_MAX : limit;
		if (limit < chunk)
			chunk = limit;
	}
	return chunk < cap ? chunk : cap;
}

/*
 * After a chunk: pauses until the transfer's average since pace_ms is
 * back at the rate. Averaging (rather than pausing a fixed time per
 * chunk) keeps the time the network itself took from slowing the
 * transfer below the limit. A transfer that fell behind by more than
 * PACE_CREDIT_MS (a client that stalled) starts a new average, so that
 * it cannot make up for the stall with a burst above the rate.
 */
static enum xfer_status
xfer_pace(struct xfer *x)
{
	unsigned long long moved, due_ms;
	long long now;

	if (x->rate == 0)
		return XFER_OK;
	if (x->pace_ms == 0)
		x->pace_ms = x->start_ms;
	moved = x->bytes - x->pace_bytes;
	/* moved * 1000 / rate without overflowing for any file size. */
	due_ms = moved / x->rate * (unsigned long long)MS_PER_S +
		 moved % x->rate * (unsigned long long)MS_PER_S / x->rate;
	now = tw_mono_ms();
	if (due_ms > (unsigned long long)(LLONG_MAX - x->pace_ms))
		due_ms = (unsigned long long)(LLONG_MAX - x->pace_ms);
	if (now - (x->pace_ms + (long long)due_ms) > PACE_CREDIT_MS) {
		x->pace_ms = now;
		x->pace_bytes = x->bytes;
		return XFER_OK;
	}
	return xfer_poll(x, 0, x->pace_ms + (long long)due_ms);
}

/* The last TLS call returned rc: wait as it asks, or give up. */
static enum xfer_status
xfer_tls_wait(struct xfer *x, int rc)
{
	switch (tls_get_error(x->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return xfer_wait(x, POLLIN);
	case SSL_ERROR_WANT_WRITE:
		return xfer_wait(x, POLLOUT);
	default:
		return XFER_NET_ERR;
	}
}

/*
 * The data handshake, on the first use of the connection. With
 * require_ssl_reuse the data context has no certificate (tls.h), so a
 * client that does not resume this session cannot finish it; the
 * reuse check after it says so again for the case of a key-holding
 * context (require_ssl_reuse=NO never gets here with a fresh session).
 */
static enum xfer_status
xfer_tls_ready(struct xfer *x)
{
	int rc;

	if (x->ssl == NULL || x->tls_ready)
		return XFER_OK;
	while ((rc = tls_accept_step(x->ssl)) != 1) {
		enum xfer_status w;

		if (tls_get_error(x->ssl, rc) != SSL_ERROR_WANT_READ &&
		    tls_get_error(x->ssl, rc) != SSL_ERROR_WANT_WRITE) {
			tls_log_error(x->s->cfg, "data handshake failed");
			worker_log(x->s, "TLS data connection refused%s",
				   x->s->cfg->require_ssl_reuse
				   ? ": it did not resume the control connection's session" : "");
			return XFER_TLS_ERR;
		}
		w = xfer_tls_wait(x, rc);
		if (w != XFER_OK)
			return w;
	}
	if (x->s->cfg->require_ssl_reuse && !tls_session_reused(x->ssl)) {
		worker_log(x->s, "TLS data connection refused: not resumed");
		return XFER_TLS_ERR;
	}
	x->tls_ready = 1;
	return XFER_OK;
}

static enum xfer_status
xfer_tls_write_all(struct xfer *x, const char *buf, size_t len)
{
	enum xfer_status w = xfer_tls_ready(x);

	while (w == XFER_OK && len > 0) {
		int n = tls_write(x->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			x->bytes += (unsigned long long)n;
			continue;
		}
		w = xfer_tls_wait(x, n);
	}
	return w;
}

/*
 * An upload's end: the client's close_notify. A bare close could be an
 * attacker cutting the upload short (strict_ssl_read_eof). One record is
 * at most 16 KB: what has arrived is taken in one call, so that the file
 * gets large writes.
 */
static enum xfer_status
xfer_tls_read(struct xfer *x, char *buf, size_t cap, size_t *got)
{
	enum xfer_status w = xfer_tls_ready(x);
	size_t have = 0;

	*got = 0;
	while (w == XFER_OK && !x->tls_end) {
		size_t room = cap - have;
		int n = tls_read(x->ssl, buf + have, room > INT_MAX ? INT_MAX : (int)room);
		int err;

		if (n > 0) {
			have += (size_t)n;
			x->bytes += (unsigned long long)n;
			if (have == cap)
				break;
			continue;
		}
		err = tls_get_error(x->ssl, n);
		if (err == SSL_ERROR_ZERO_RETURN) {
			x->tls_end = 1;
		} else if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
			x->tls_end = 1;
			x->tls_cut = 1;
		} else if (have > 0) {
			break;
		} else {
			w = xfer_tls_wait(x, n);
		}
	}
	*got = have;
	if (w == XFER_OK && have == 0 && x->tls_cut && x->s->cfg->strict_ssl_read_eof) {
		worker_log(x->s, "TLS upload ended without close_notify (strict_ssl_read_eof)");
		return XFER_NET_ERR;
	}
	return w;
}

enum xfer_status
xfer_write_all(struct xfer *x, const char *buf, size_t len)
{
	if (x->ssl != NULL)
		return xfer_tls_write_all(x, buf, len);
	while (len > 0) {
		size_t slow, want;
		ssize_t n;
		enum xfer_status w;

		/* A slow reader's sends go one at a time: room first. */
		if (x->slow_sent && (w = xfer_slow_room(x)) != XFER_OK)
			return w;
		slow = x->lean == XFER_LEAN_SLOW ? slow_send_size(x) : len;
		want = len > slow ? slow : len;
		n = send(x->fd, buf, want, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			x->bytes += (unsigned long long)n;
			xfer_unlean(x);
			x->slow_sent = x->lean == XFER_LEAN_SLOW;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return XFER_NET_ERR;
		w = xfer_wait(x, POLLOUT);
		if (w != XFER_OK)
			return w;
	}
	return XFER_OK;
}

static enum xfer_status
write_file_all(int file, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(file, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return XFER_FILE_ERR;
		buf += n;
		len -= (size_t)n;
	}
	return XFER_OK;
}

/*
 * One direction of a copy between the file and the data socket: where
 * chunks come from (*got 0 at the end), where they go, and the TYPE A
 * conversion on the way (src/proto/ascii.h).
 */
struct xfer_dir {
	enum xfer_status (*read)(struct xfer *x, int file, char *buf, size_t cap,
				 off_t *off, size_t *got);
	enum xfer_status (*write)(struct xfer *x, int file, const char *buf, size_t len);
	size_t (*to_ascii)(const char *in, size_t n, char *out, int *carry_cr);
	size_t (*to_ascii_end)(char *out, int *carry_cr);	/* NULL: nothing held */
	size_t ascii_out_cap;		/* what to_ascii may write for XFER_BUF in */
};

static enum xfer_status
read_file(struct xfer *x, int file, char *buf, size_t cap, off_t *off, size_t *got)
{
	ssize_t n;

	do {
		n = pread(file, buf, cap, *off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return XFER_FILE_ERR;
	*off += n;
	*got = (size_t)n;
	return XFER_OK;
}

static enum xfer_status
write_socket(struct xfer *x, int file, const char *buf, size_t len)
{
	return xfer_write_all(x, buf, len);
}

static enum xfer_status
read_socket(struct xfer *x, int file, char *buf, size_t cap, off_t *off, size_t *got)
{
	if (x->ssl != NULL)
		return xfer_tls_read(x, buf, cap, got);
	for (;;) {
		ssize_t n = recv(x->fd, buf, cap, 0);
		enum xfer_status w;

		if (n >= 0) {
			x->bytes += (unsigned long long)n;
			*got = (size_t)n;
			return XFER_OK;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return XFER_NET_ERR;
		w = xfer_wait(x, POLLIN);
		if (w != XFER_OK)
			return w;
	}
}

static enum xfer_status
write_file(struct xfer *x, int file, const char *buf, size_t len)
{
	return write_file_all(file, buf, len);
}

static const struct xfer_dir download = {
	read_file, write_socket, ascii_to_net, NULL, 2 * XFER_BUF,
};
static const struct xfer_dir upload = {
	read_socket, write_file, ascii_from_net, ascii_from_net_end, XFER_BUF + 1,
};

/* Copies until the source ends, converting line ends when ascii. */
static enum xfer_status
xfer_copy(struct xfer *x, const struct xfer_dir *d, int file, off_t off, int ascii)
{
	char *in = malloc(XFER_BUF), *out = ascii ? malloc(d->ascii_out_cap) : NULL;
	enum xfer_status rc = XFER_FILE_ERR;
	int carry_cr = 0;
	size_t n, chunk = pace_chunk(x, XFER_BUF);

	if (in == NULL || (ascii && out == NULL))
		goto done;
	while ((rc = d->read(x, file, in, chunk, &off, &n)) == XFER_OK && n > 0) {
		if (ascii)
			rc = d->write(x, file, out, d->to_ascii(in, n, out, &carry_cr));
		else
			rc = d->write(x, file, in, n);
		if (rc == XFER_OK)
			rc = xfer_pace(x);
		if (rc != XFER_OK)
			break;
	}
	if (rc == XFER_OK && ascii && d->to_ascii_end != NULL)
		rc = d->write(x, file, out, d->to_ascii_end(out, &carry_cr));
done:
	free(in);
	free(out);
	return rc;
}

/*
 * What a splice that failed on the file side left in the pipe: written
 * with write(2), so that the upload can go on in the buffered path.
 */
static enum xfer_status
drain_pipe(int pipe_rd, int file, size_t left)
{
	char buf[16384];

	while (left > 0) {
		ssize_t n = read(pipe_rd, buf, left < sizeof(buf) ? left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || write_file_all(file, buf, (size_t)n) != XFER_OK)
			return XFER_FILE_ERR;
		left -= (size_t)n;
	}
	return XFER_OK;
}

/*
 * Moves n bytes from the pipe into the file at its position. *spliced
 * says whether the file ever took a splice: a file system that cannot
 * (EINVAL on the first one) gets the bytes with write(2) and *fallback.
 */
static enum xfer_status
pipe_to_file(int pipe_rd, int file, size_t n, int *spliced, int *fallback)
{
	while (n > 0) {
		ssize_t m = splice(pipe_rd, NULL, file, NULL, n, SPLICE_F_MOVE);

		if (m > 0) {
			n -= (size_t)m;
			*spliced = 1;
			continue;
		}
		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0 && errno == EINVAL && !*spliced) {
			*fallback = 1;
			return drain_pipe(pipe_rd, file, n);
		}
		return XFER_FILE_ERR;
	}
	return XFER_OK;
}

/*
 * An upload's pipe of UPLOAD_PIPE_SIZE, or -1: none, or the size was
 * refused (the user's pipes are over the limit and this one is 8 KB).
 */
static int
upload_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	if (fcntl(p[1], F_SETPIPE_SZ, UPLOAD_PIPE_SIZE) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	return 0;
}

/*
 * A binary upload in the clear, unpaced: socket -> pipe -> file with
 * splice(2), so that the bytes are not copied out to this process and
 * back (bench/rawlimit's splice receiver moved 1.1-2x what its
 * recv+write one did). A file system that does not take splice, or no
 * pipe of UPLOAD_PIPE_SIZE, falls back to xfer_copy. Not for O_APPEND
 * files: splice(2) refuses them (EINVAL), so APPE stays buffered.
 */
static enum xfer_status
recv_file(struct xfer *x, int file)
{
	int p[2], spliced = 0, fallback = 0;
	enum xfer_status rc = XFER_OK;

	if (upload_pipe(p) != 0)
		return xfer_copy(x, &upload, file, 0, 0);
	while (rc == XFER_OK && !fallback) {
		ssize_t n = splice(x->fd, NULL, p[1], NULL, UPLOAD_PIPE_SIZE,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n > 0) {
			x->bytes += (unsigned long long)n;
			rc = pipe_to_file(p[0], file, (size_t)n, &spliced, &fallback);
		} else if (n == 0) {
			break;
		} else if (errno == EAGAIN) {
			rc = xfer_wait(x, POLLIN);
		} else if (errno != EINTR) {
			rc = XFER_NET_ERR;
		}
	}
	close(p[0]);
	close(p[1]);
	if (rc == XFER_OK && fallback)
		rc = xfer_copy(x, &upload, file, 0, 0);
	return rc;
}

/*
 * TCP_CORK around an unpaced sendfile of more than DATA_LEAN_LOWAT (a
 * smaller one is pushed by close(2)): the kernel then sends only full
 * segments, and the pieces each call adds to the queue are not pushed
 * one by one, each with a partial last segment. With it and
 * TCP_NOTSENT_LOWAT (xfer_open) one loopback stream under BBR moved
 * 1.4-1.8x as much as with TCP_NODELAY and a full send buffer
 * (bench/RESULTS.md, A/B). A paced transfer is not corked: its chunk's
 * tail would wait for the next chunk or the cork's 200 ms timer. Only
 * speed depends on it.
 */
static void
xfer_cork(struct xfer *x, int on)
{
	x->cork = on;
	if (x->lean != XFER_LEAN_SLOW || !on)
		xfer_tcp_opt(x, TCP_CORK, on, NULL);
}

/* send_file's sendfile(2) calls. */
static enum xfer_status
sendfile_loop(struct xfer *x, int file, off_t off, off_t size)
{
	while (off < size) {
		size_t max = pace_chunk(x, x->lean == XFER_LEAN_SLOW ? slow_send_size(x)
						: SENDFILE_MAX_CHUNK);
		size_t want = (size_t)(size - off) > max ? max : (size_t)(size - off);
		off_t before = off;
		ssize_t n = sendfile(x->fd, file, &off, want);

		if (n > 0) {
			enum xfer_status w;

			x->bytes += (unsigned long long)n;
			xfer_unlean(x);
			w = xfer_pace(x);
			if (w == XFER_OK && off < size)
				w = xfer_slow_room(x);
			if (w != XFER_OK)
				return w;
			continue;
		}
		if (n == 0)
			break;	/* the file shrank under us */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			enum xfer_status w = xfer_wait(x, POLLOUT);

			if (w != XFER_OK)
				return w;
			continue;
		}
		if ((errno == EINVAL || errno == ENOSYS) && x->bytes == 0)
			return xfer_copy(x, &download, file, before, 0);	/* fs without sendfile */
		return errno == EPIPE || errno == ECONNRESET ? XFER_NET_ERR : XFER_FILE_ERR;
	}
	return XFER_OK;
}

static enum xfer_status
send_file(struct xfer *x, int file, off_t off, off_t size, int ascii)
{
	enum xfer_status rc;

	/* No kernel TLS here: TLS data is encrypted in this process. */
	if (ascii || !x->s->cfg->use_sendfile || x->ssl != NULL)
		return xfer_copy(x, &download, file, off, ascii);
	/* Paced, or what is left mostly goes in one call (a lean queue
	 * takes it all) and close(2) pushes it: no cork. */
	if (x->rate != 0 || size - off <= DATA_LEAN_LOWAT)
		return sendfile_loop(x, file, off, size);
	xfer_cork(x, 1);
	rc = sendfile_loop(x, file, off, size);
	/* Uncorking sends the last partial segment; close(2) would too. */
	xfer_cork(x, 0);
	return rc;
}

void
xfer_reply(struct session *s, enum xfer_status rc, const char *ok_text)
{
	switch (rc) {
	case XFER_OK:
		ctrl_reply(&s->ctrl, 226, "%s", ok_text);
		break;
	case XFER_ABORTED:
		/* RFC 959: 426 ends the transfer command, 226 answers ABOR. */
		ctrl_reply(&s->ctrl, 426, "Transfer aborted.");
		ctrl_reply(&s->ctrl, 226, "ABOR successful.");
		break;
	case XFER_NET_ERR:
		ctrl_reply(&s->ctrl, 426, "Failure on the data connection.");
		break;
	case XFER_TLS_ERR:
		if (s->cfg->require_ssl_reuse)
			ctrl_reply(&s->ctrl, 522, "TLS data connection refused: it must resume "
				   "the control connection's TLS session (require_ssl_reuse).");
		else
			ctrl_reply(&s->ctrl, 425, "TLS handshake on the data connection failed.");
		break;
	case XFER_FILE_ERR:
	default:
		ctrl_reply(&s->ctrl, 451, "Failure accessing the local file.");
		break;
	}
}

int
xfer_open(struct xfer *x, struct session *s)
{
	memset(x, 0, sizeof(*x));
	if (data_tls_refused(s))
		return -1;
	x->fd = data_open(s);
	if (x->fd < 0)
		return -1;
	x->s = s;
	if (s->prot_private) {
		x->ssl = tls_data_new(x->fd);
		if (x->ssl == NULL) {
			xfer_close(x);
			ctrl_reply(&s->ctrl, 425, "Cannot set up TLS on the data connection.");
			return -1;
		}
	}
	x->watch_ctrl = 1;
	x->start_ms = tw_mono_ms();
	xfer_mark(x, XFER_LEAN);
	/*
	 * A client that reads slowly would otherwise let the kernel queue
	 * as much as the send buffer grows to (megabytes) in every such
	 * connection; ten thousand of them exhaust tcp_mem and the kernel
	 * starts dropping for everybody. Only what is unsent is capped: what
	 * is in flight is the congestion window's business. The queue starts
	 * lean (DATA_LEAN_LOWAT), and xfer_unlean gives a client that keeps
	 * up the full queue.
	 */
	xfer_tcp_opt(x, TCP_NOTSENT_LOWAT, DATA_LEAN_LOWAT, "TCP_NOTSENT_LOWAT");
	/*
	 * TLS records (the handshake, the session tickets after it, the
	 * close_notify) go out at once, not after a delayed ACK. A clear
	 * connection needs no TCP_NODELAY: a listing's last lines, and a
	 * RETR of DATA_LEAN_LOWAT or less, are pushed by close(2), and a
	 * larger RETR corks (send_file); with TCP_NODELAY set the cork would
	 * not hold partial segments back.
	 */
	if (x->ssl != NULL)
		xfer_tcp_opt(x, TCP_NODELAY, 1, "TCP_NODELAY");
	return 0;
}

void
xfer_close(struct xfer *x)
{
	tls_free(x->ssl);
	x->ssl = NULL;
	/* Nothing to learn from close(2) on a socket whose data is sent. */
	(void)close(x->fd);
	x->fd = -1;
}

/*
 * strict_ssl_write_shutdown: after a download, the client's close_notify
 * proves it read everything (within data_connection_timeout).
 */
static enum xfer_status
xfer_tls_await_close(struct xfer *x)
{
	char sink[256];

	for (;;) {
		int n = tls_read(x->ssl, sink, sizeof(sink));
		enum xfer_status w;

		if (n > 0)
			continue;
		if (tls_get_error(x->ssl, n) == SSL_ERROR_ZERO_RETURN)
			return XFER_OK;
		w = xfer_tls_wait(x, n);
		if (w != XFER_OK)
			return w;
	}
}

enum xfer_status
xfer_end(struct xfer *x, enum xfer_status rc)
{
	if (x->ssl != NULL && rc == XFER_OK) {
		/* Nothing was moved (an empty file or listing): the client
		 * still makes its handshake and waits for our close_notify. */
		rc = xfer_tls_ready(x);
		if (rc == XFER_OK) {
			int r;

			while ((r = tls_shutdown(x->ssl)) < 0) {
				rc = xfer_tls_wait(x, r);
				if (rc != XFER_OK)
					break;
			}
			if (rc == XFER_OK && r == 0 && x->s->cfg->strict_ssl_write_shutdown)
				rc = xfer_tls_await_close(x);
		}
	}
	xfer_close(x);
	return rc;
}

/*
 * force_local_data_ssl / force_anon_data_ssl: a clear data connection is
 * refused before it is opened, with vsftpd's 522.
 */
int
data_tls_refused(struct session *s)
{
	const struct tw_config *c = s->cfg;
	int forced = s->anonymous ? c->allow_anon_ssl && c->force_anon_data_ssl
				  : c->force_local_data_ssl;

	if (!c->ssl_enable || s->prot_private || !forced)
		return 0;
	ctrl_reply(&s->ctrl, 522, "Data connections must be encrypted.");
	return 1;
}

/* xfer_open for a transfer of file: closes it when there is no connection. */
static int
xfer_open_file(struct xfer *x, struct session *s, int file)
{
	if (xfer_open(x, s) == 0)
		return 0;
	close(file);
	return -1;
}

/*
 * Takes the REST offset (it applies to one transfer). In TYPE A a byte
 * offset into the file is not one into the converted stream: refused.
 */
static int
take_rest(struct session *s, unsigned long long *rest)
{
	*rest = s->rest;
	s->rest = 0;
	if (s->ascii && *rest != 0) {
		ctrl_reply(&s->ctrl, 550, "REST is not supported in ASCII mode.");
		return -1;
	}
	return 0;
}

/*
 * While a lock another session holds is waited for, how often the wait
 * looks at the client and the clock; the longest wait.
 */
#define LOCK_CHECK_MS 250
#define LOCK_WAIT_MAX_S 3600

/* SIGALRM only interrupts the blocked F_OFD_SETLKW (EINTR). */
static void
lock_wait_tick(int sig)
{
	(void)sig;
}

/* Arms (ms > 0) or stops (0) the tick that interrupts a lock wait. */
static void
lock_wait_timer(unsigned ms)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	it.it_interval = it.it_value;
	(void)setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * lock_upload_files (vsftpd's): a read lock on the whole file for a
 * download, a write lock for an upload (taken before it truncates), so
 * that a download never reads an upload half written. A lock another
 * session holds is waited for, as vsftpd waits, in F_OFD_SETLKW: the
 * kernel wakes the waiter when the lock is released, so uploads of one
 * file follow each other without a gap. A tick (SIGALRM every
 * LOCK_CHECK_MS, a handler without SA_RESTART, unblocked for the wait)
 * interrupts the wait to bound it: while the client stays connected, and for at most
 * data_connection_timeout seconds (idle_session_timeout when that is 0;
 * an hour at most). Open file description locks: they conflict with
 * vsftpd's and other programs' fcntl locks, and go with this descriptor
 * only. 0 when locked, or when the file system cannot lock (as vsftpd,
 * the transfer goes on); -1 when the wait ended first.
 */
static int
file_lock(struct session *s, int file, short type, const char *path)
{
	static const struct sigaction tick = { .sa_handler = lock_wait_tick };
	struct sigaction old;
	sigset_t alrm, mask;
	struct flock fl;
	unsigned limit = s->cfg->data_connection_timeout != 0 ? s->cfg->data_connection_timeout
							      : s->cfg->idle_session_timeout;
	long long deadline;
	int rc = 0;

	if (!s->cfg->lock_upload_files)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	if (fcntl(file, F_OFD_SETLK, &fl) == 0 || (errno != EAGAIN && errno != EACCES))
		return 0;
	if (limit == 0 || limit > LOCK_WAIT_MAX_S)
		limit = LOCK_WAIT_MAX_S;
	deadline = tw_mono_ms() + (long long)limit * 1000;
	/*
	 * The tick must get through: SIGALRM unblocked (an inetd or a
	 * supervisor may have blocked it before it started the session). A
	 * wait that cannot be bounded is not taken: the transfer gets 450,
	 * never goes on unlocked.
	 */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (sigaction(SIGALRM, &tick, &old) != 0) {
		worker_log(s, "lock_upload_files: cannot wait for the lock of %s: %s", path,
			   strerror(errno));
		return -1;
	}
	(void)sigprocmask(SIG_UNBLOCK, &alrm, &mask);
	lock_wait_timer(LOCK_CHECK_MS);
	while (fcntl(file, F_OFD_SETLKW, &fl) != 0) {
		struct pollfd p = { s->ctrl.fd, POLLRDHUP, 0 };

		if (errno != EINTR)
			break;
		if (tw_mono_ms() >= deadline) {
			worker_log(s, "lock_upload_files: %s stayed locked by another session "
				   "for %u s", path, limit);
			rc = -1;
			break;
		}
		/* The client hung up: nobody waits for this transfer. */
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			rc = -1;
			break;
		}
	}
	/* A tick due before the timer stops is taken by the handler. */
	lock_wait_timer(0);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);
	(void)sigaction(SIGALRM, &old, NULL);
	return rc;
}

/* The answer to a transfer whose file another session kept locked. */
#define LOCK_BUSY_REPLY "File busy: another session is transferring it."

/* Returns file when it is open on a regular file (*st filled), else closes it: -1. */
static int
regular_file(int file, struct stat *st)
{
	if (file >= 0 && fstat(file, st) == 0 && S_ISREG(st->st_mode))
		return file;
	if (file >= 0)
		close(file);
	return -1;
}

void
data_cmd_retr(struct session *s, const char *path)
{
	unsigned long long rest;
	struct xfer x;
	struct stat st;
	enum xfer_status rc;
	int file;

	if (take_rest(s, &rest) != 0)
		return;
	file = regular_file(open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), &st);
	/* An anonymous session reads only what anybody may read (vsftpd). */
	if (file >= 0 && s->anonymous && s->cfg->anon_world_readable_only &&
	    (st.st_mode & S_IROTH) == 0) {
		close(file);
		file = -1;
	}
	if (file < 0) {
		ctrl_reply(&s->ctrl, 550, "Failed to open file.");
		return;
	}
	if (file_lock(s, file, F_RDLCK, path) != 0) {
		close(file);
		ctrl_reply(&s->ctrl, 450, LOCK_BUSY_REPLY);
		return;
	}
	/*
	 * After a wait for an upload, the file is the one it wrote, unless
	 * the upload failed and was deleted (delete_failed_uploads).
	 */
	if (s->cfg->lock_upload_files && (fstat(file, &st) != 0 || st.st_nlink == 0)) {
		close(file);
		ctrl_reply(&s->ctrl, 550, "Failed to open file.");
		return;
	}
	if (xfer_open_file(&x, s, file) != 0)
		return;
	x.rate = data_xfer_rate(s);
	ctrl_reply(&s->ctrl, 150, "Opening %s mode data connection for %s (%lld bytes).",
		   s->ascii ? "ASCII" : "BINARY", path, (long long)st.st_size);
	rc = send_file(&x, file, (off_t)rest, st.st_size,
		       s->ascii && s->cfg->ascii_download_enable);
	rc = xfer_end(&x, rc);
	close(file);
	xfer_reply(s, rc, "Transfer complete.");
	/* After the reply: the client need not wait for the monitor's log. */
	worker_xfer_done(s, &x, 0, rc == XFER_OK, path);
}

/* Every open of an upload target; O_NONBLOCK so that a FIFO cannot hang it. */
#define UPLOAD_OPEN_FLAGS (O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/*
 * An upload, settled in two steps so that a refused one changes nothing
 * on disk: upload_check (before the data connection) only looks at the
 * target (lstat, stat, access) and refuses what it can; only once the
 * data connection is open does upload_open open it for writing, create
 * or truncate. Not even an open for writing comes before: closing one
 * fires inotify IN_CLOSE_WRITE (fanotify FAN_CLOSE_WRITE) with nothing
 * written, which upload processors take as "upload finished", and would
 * open a FIFO that has a reader.
 */
struct upload {
	const char *path;
	int append, unique;
	unsigned long long rest;
	int no_overwrite;	/* anonymous without anon_other_write_enable */
	int exists;		/* the target was a regular file at the check */
	int created;		/* upload_create made a new file (chown_uploads) */
	int busy;		/* another session kept it locked (lock_upload_files) */
	const char *deny_file;	/* STOU passes over the names it denies */
	char name[PATH_MAX];	/* the name written (STOU picks one) */
};

/*
 * Whether a missing target can be created, asked before the data
 * connection so that the usual refusals (no such directory, no write
 * permission: access(2) with the user's own ids) come at once; the
 * create after it still decides. A dangling symlink is refused: creating
 * through it would put the upload wherever the link's owner pointed it
 * (and out of a chroot the link leads nowhere anyway).
 */
static int
upload_creatable(const char *path, int unique)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!unique && lstat(path, &st) == 0)
		return 0;
	if (slash == NULL)
		return access(".", W_OK | X_OK) == 0;
	if (slash == path)
		return access("/", W_OK | X_OK) == 0;
	if ((size_t)(slash - path) >= sizeof(dir))
		return 0;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return access(dir, W_OK | X_OK) == 0;
}

/*
 * Before the data connection, without opening the target: refuses a
 * target that may not be overwritten (anything that exists, for an
 * anonymous user, seen by lstat alone; otherwise what is not a regular
 * file or not writable by the user), a missing one that cannot be
 * created (553), and a restart point past the target's end (554, the
 * reply RFC 3659 gives an unusable REST: writing there would leave a
 * hole of zeros, and a huge one made lseek fail after the file was
 * created). Returns 0, or -1 after a reply.
 */
static int
upload_check(struct session *s, struct upload *u)
{
	struct stat st;
	off_t size = 0;

	u->exists = 0;
	if (!u->unique) {
		if (lstat(u->path, &st) == 0) {
			if (u->no_overwrite || stat(u->path, &st) != 0 ||
			    !S_ISREG(st.st_mode) || access(u->path, W_OK) != 0) {
				ctrl_reply(&s->ctrl, 553, "Could not create file.");
				return -1;
			}
			u->exists = 1;
			size = st.st_size;
		} else if (errno != ENOENT) {
			ctrl_reply(&s->ctrl, 553, "Could not create file.");
			return -1;
		}
	}
	if (!u->exists && !upload_creatable(u->path, u->unique)) {
		ctrl_reply(&s->ctrl, 553, "Could not create file.");
		return -1;
	}
	if (u->rest > (unsigned long long)size) {
		ctrl_reply(&s->ctrl, 554, "Restart position beyond the end of the file.");
		return -1;
	}
	return 0;
}

/*
 * An upload's write lock on file (lock_upload_files), before a byte is
 * written or the file truncated. Returns file, or -1 with u->busy set
 * when another session kept it locked (file closed); -1 stays -1.
 */
static int
upload_lock(struct session *s, struct upload *u, int file)
{
	if (file < 0 || file_lock(s, file, F_WRLCK, u->name) == 0)
		return file;
	u->busy = 1;
	close(file);
	return -1;
}

/*
 * Opens the existing target for writing (following a symlink to a
 * regular file, as an upload always has) and, for a STOR from the start,
 * truncates it. Returns the file or -1.
 */
static int
upload_open_existing(struct session *s, struct upload *u)
{
	struct stat st;
	int file;

	if (tw_strlcpy(u->name, u->path, sizeof(u->name)) != 0)
		return -1;
	file = upload_lock(s, u, regular_file(open(u->path, UPLOAD_OPEN_FLAGS |
						     (u->append ? O_APPEND : 0)), &st));
	/* Locked first: a download that holds its lock reads the old file whole. */
	if (file >= 0 && (fstat(file, &st) != 0 || u->rest > (unsigned long long)st.st_size ||
			  (!u->append && u->rest == 0 && ftruncate(file, 0) != 0))) {
		close(file);
		return -1;
	}
	return file;
}

/*
 * Creates the target; for STOU a name that does not exist yet. O_EXCL
 * always: a name missing at the check that exists now (a file, or a
 * symlink, dangling or not, put there since) is not created through;
 * unless overwriting is refused it is then an existing target, checked
 * as one (a regular file) before it is truncated.
 */
static int
upload_create(struct session *s, struct upload *u, mode_t mode)
{
	int flags = UPLOAD_OPEN_FLAGS | O_CREAT | O_EXCL;
	unsigned i;

	if (!u->unique) {
		int fd;

		if (tw_strlcpy(u->name, u->path, sizeof(u->name)) != 0)
			return -1;
		fd = open(u->path, flags | (u->append ? O_APPEND : 0), mode);
		u->created = fd >= 0;
		if (fd >= 0 || errno != EEXIST || u->no_overwrite)
			return upload_lock(s, u, fd);
		return upload_open_existing(s, u);
	}
	for (i = 0; i < STOU_MAX_TRIES; i++) {
		int fd;

		if ((i == 0 ? tw_snprintf(u->name, sizeof(u->name), "%s", u->path)
			    : tw_snprintf(u->name, sizeof(u->name), "%s.%u", u->path, i)) < 0)
			return -1;
		/* The client named only the base: "name.N" may be denied. */
		if (namefilter_match_path(u->deny_file, u->name))
			continue;
		fd = open(u->name, flags, mode);
		u->created = fd >= 0;
		if (fd >= 0 || errno != EEXIST)
			return upload_lock(s, u, fd);
	}
	return -1;
}

/*
 * After the data connection opened: opens (and for a STOR from the start
 * truncates) the existing target, or creates it; then makes it blocking
 * again and seeks to the restart point. Returns the file or -1.
 */
static int
upload_open(struct session *s, struct upload *u)
{
	struct stat st;
	int file;

	if (u->exists)
		file = upload_open_existing(s, u);
	else
		file = regular_file(upload_create(s, u, (mode_t)s->cfg->file_open_mode), &st);
	/*
	 * chown_uploads: the new file goes to chown_username before a byte
	 * is written (vsftpd does the same); this process keeps writing
	 * through its descriptor. A file that cannot be given away is not
	 * left behind as the uploader's.
	 */
	if (file >= 0 && u->created && s->anonymous && s->cfg->chown_uploads &&
	    worker_chown_upload(s, file) != 0) {
		close(file);
		/* The anonymous policy has unlink only with anon_other_write_enable
		 * (sandbox/seccomp_policy.h); else the empty file stays. */
		if (s->cfg->anon_other_write_enable)
			(void)unlink(u->name);
		return -1;
	}
	if (file < 0 ||
	    fcntl(file, F_SETFL, u->append ? O_APPEND : 0) != 0 ||
	    (u->rest != 0 && lseek(file, (off_t)u->rest, SEEK_SET) < 0)) {
		if (file >= 0)
			close(file);
		return -1;
	}
	return file;
}

void
data_cmd_store(struct session *s, const char *path, int append, int unique)
{
	struct upload u;
	struct xfer x;
	int file;
	enum xfer_status rc;

	memset(&u, 0, sizeof(u));
	u.path = path;
	u.append = append;
	u.unique = unique;
	u.no_overwrite = s->anonymous && !s->cfg->anon_other_write_enable;
	u.deny_file = s->cfg->deny_file;
	if (take_rest(s, &u.rest) != 0)
		return;
	if (append)
		u.rest = 0;
	if (upload_check(s, &u) != 0)
		return;
	if (xfer_open(&x, s) != 0)
		return;
	x.rate = data_xfer_rate(s);
	file = upload_open(s, &u);
	if (file < 0) {
		if (u.busy)
			ctrl_reply(&s->ctrl, 450, LOCK_BUSY_REPLY);
		else
			ctrl_reply(&s->ctrl, 553, "Could not create file.");
		xfer_close(&x);
		return;
	}
	if (unique)
		ctrl_reply(&s->ctrl, 150, "FILE: %s", u.name);
	else
		ctrl_reply(&s->ctrl, 150, "Ok to send data.");
	if ((s->ascii && s->cfg->ascii_upload_enable) || x.ssl != NULL || x.rate != 0 || append)
		rc = xfer_copy(&x, &upload, file, 0, s->ascii && s->cfg->ascii_upload_enable);
	else
		rc = recv_file(&x, file);
	rc = xfer_end(&x, rc);
	/*
	 * delete_failed_uploads: a file this upload created goes when the
	 * upload failed (aborted, cut off, timed out, a write error), before
	 * the reply, and before the close that drops its lock: a download
	 * waiting for it finds it gone, not half written. An anonymous
	 * session's sandbox has unlink only with anon_other_write_enable
	 * (sandbox/seccomp_policy.h): without it the partial file stays, as
	 * twinftpd.conf(5) says.
	 */
	if (rc != XFER_OK && u.created && s->cfg->delete_failed_uploads &&
	    (!s->anonymous || s->cfg->anon_other_write_enable) && unlink(u.name) != 0)
		worker_log(s, "delete_failed_uploads: %s: %s", u.name, strerror(errno));
	if (close(file) != 0 && rc == XFER_OK)
		rc = XFER_FILE_ERR;
	if (unique && rc == XFER_OK)
		ctrl_reply(&s->ctrl, 226, "Transfer complete (unique file name: %s).", u.name);
	else
		xfer_reply(s, rc, "Transfer complete.");
	worker_xfer_done(s, &x, 1, rc == XFER_OK, u.name);
}
