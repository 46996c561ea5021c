/*
 * The TLS relay: a logged-in FTPS session's control connection. A TLS
 * session cannot move to another process (no kernel TLS), so the
 * pre-login worker that made the handshake stays, as nopriv_user in its
 * empty chroot, under the pre-login filter and the relay's own on top,
 * and passes cleartext between the client's TLS stream and the user's
 * worker's socketpair (vsftpd's "SSL slave"). It parses nothing: bytes go
 * through as they come. The user's worker, which reads files as the user,
 * never touches the connection the key protects.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "privsep/ipc.h"
#include "sandbox/sandbox.h"
#include "src/common/util.h"
#include "src/tls.h"
#include "src/worker.h"

/* One TLS record's plaintext each way; .bss, touched only as it fills. */
#define RELAY_BUF 16384

static char relay_up[RELAY_BUF];	/* client -> user's worker */
static char relay_down[RELAY_BUF];	/* user's worker -> client */

struct relay {
	SSL *ssl;
	int plain;
	size_t up_len, down_len;
	int tls_eof;		/* the client closed (or broke) its side */
	int plain_eof;		/* the user's worker closed its side */
	int plain_shut;		/* told the worker the client is gone */
	short tls_events, plain_events;	/* what the next poll waits for */
};

static void
drop_front(char *buf, size_t *len, size_t n)
{
	*len -= n;
	memmove(buf, buf + n, *len);
}

static void
want(struct relay *r, int rc)
{
	switch (tls_get_error(r->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		r->tls_events |= POLLIN;
		break;
	case SSL_ERROR_WANT_WRITE:
		r->tls_events |= POLLOUT;
		break;
	default:
		r->tls_eof = 1;
		break;
	}
}

/* Client to worker; returns whether bytes moved. */
static int
relay_up_step(struct relay *r)
{
	int moved = 0;

	while (!r->tls_eof && r->up_len < sizeof(relay_up)) {
		int n = tls_read(r->ssl, relay_up + r->up_len, (int)(sizeof(relay_up) - r->up_len));

		if (n <= 0) {
			want(r, n);
			break;
		}
		r->up_len += (size_t)n;
		moved = 1;
	}
	if (r->up_len > 0) {
		ssize_t n = send(r->plain, relay_up, r->up_len, MSG_NOSIGNAL);

		if (n > 0) {
			drop_front(relay_up, &r->up_len, (size_t)n);
			moved = 1;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			r->plain_events |= POLLOUT;
		} else {
			r->plain_eof = 1;	/* the worker is gone */
			r->up_len = 0;
		}
	}
	/* The client is gone: the worker sees the end of its commands. */
	if (r->tls_eof && r->up_len == 0 && !r->plain_shut) {
		(void)shutdown(r->plain, SHUT_WR);
		r->plain_shut = 1;
	}
	return moved;
}

/* Worker to client; returns whether bytes moved. */
static int
relay_down_step(struct relay *r)
{
	int moved = 0;

	if (!r->plain_eof && r->down_len < sizeof(relay_down)) {
		ssize_t n = recv(r->plain, relay_down + r->down_len,
				 sizeof(relay_down) - r->down_len, 0);

		if (n > 0) {
			r->down_len += (size_t)n;
			moved = 1;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			r->plain_events |= POLLIN;
		} else {
			r->plain_eof = 1;
		}
	}
	if (r->down_len > 0 && !r->tls_eof) {
		int n = tls_write(r->ssl, relay_down, (int)r->down_len);

		if (n > 0) {
			drop_front(relay_down, &r->down_len, (size_t)n);
			moved = 1;
		} else {
			want(r, n);
		}
	}
	if (r->tls_eof)
		r->down_len = 0;	/* nobody left to read it */
	return moved;
}

void
relay_run(struct session *s, int plain_fd)
{
	struct relay r;
	int fl;

	memset(&r, 0, sizeof(r));
	r.ssl = s->ctrl.ssl;
	r.plain = plain_fd;
	/* What the client sent after PASS, already decrypted, goes first. */
	memcpy(relay_up, s->ctrl.tls_in, s->ctrl.tls_in_len);
	r.up_len = s->ctrl.tls_in_len;
	/* The IPC channel stays for the SIGSYS report (and a last log line);
	 * the monitor reads it when the relay is gone. */
	fl = fcntl(plain_fd, F_GETFL);
	if (fl < 0 || fcntl(plain_fd, F_SETFL, fl | O_NONBLOCK) != 0)
		_exit(0);
	sandbox_apply(ROLE_TLS_RELAY, s->cfg);
	/* The handshake and the login ran deeper than this loop will. */
	tw_stack_trim();
	for (;;) {
		int moved;

		r.tls_events = r.plain_events = 0;
		moved = relay_up_step(&r) | relay_down_step(&r);
		/* The worker ended (QUIT, timeout, error): its last replies
		 * are out, so say close_notify and go. */
		if ((r.plain_eof && r.down_len == 0) || (r.tls_eof && r.plain_eof))
			break;
		if (!moved) {
			/* A side that ended is left out: its hang-up would
			 * wake every poll. */
			struct pollfd p[2] = {
				{ r.tls_eof ? -1 : tls_fd(r.ssl), r.tls_events, 0 },
				{ r.plain_eof ? -1 : r.plain, r.plain_events, 0 },
			};

			if (poll(p, 2, -1) < 0 && errno != EINTR)
				break;
		}
	}
	if (!r.tls_eof)
		tls_close(r.ssl);
	_exit(0);
}
