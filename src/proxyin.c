/*
 * The worker's side of the PROXY protocol (proxy_protocol_trusted): it
 * reads a balancer's header off the control connection before the
 * greeting, and off a passive data connection before the transfer, and
 * refuses a header from a source that may not send one. The bytes are
 * parsed by src/proto/proxyhdr.c, here, in the unprivileged sandboxed
 * worker; the monitor only gets a fixed record (family, address, port)
 * and checks it (privsep/monitor.c), then tells the listener
 * (src/session.c), which moves the session's count to the client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "privsep/ipc.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/runtime.h"
#include "src/common/sockaddr.h"
#include "src/data.h"
#include "src/proto/proxyhdr.h"
#include "src/worker.h"

/*
 * A balancer sends its header with the connection's first segment: 5
 * seconds is ample, and bounds a source that trickles it (or sends
 * nothing) well below idle_session_timeout.
 */
#define PROXYIN_TIMEOUT_MS 5000
/* Waiting for the rest of a signature that came in part (untrusted sources). */
#define PROXYIN_SNIFF_NAP_MS 20

enum proxyin_result {
	PROXYIN_OK,		/* *h is a header */
	PROXYIN_CLOSED,		/* closed before its first byte */
	PROXYIN_FAIL,		/* *why says what went wrong */
};

/* Waits up to the deadline for fd to be readable; 1, or 0 on timeout. */
static int
wait_readable(int fd, long long deadline_ms)
{
	for (;;) {
		long long left = deadline_ms - tw_mono_ms();
		struct pollfd p = { fd, POLLIN, 0 };
		int rc;

		if (left <= 0)
			return 0;
		rc = poll(&p, 1, (int)left);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return 1;	/* the recv after this reports the error */
	}
}

/*
 * How many of the n bytes peeked at buf + have may be taken without
 * touching the client's own bytes after the header: for version 1 up to
 * its LF (everything before the first LF is header), for version 2 up to
 * the length its fixed part gives, for anything else one byte, enough
 * for the parser to refuse it.
 */
static size_t
header_part(const unsigned char *buf, size_t have, size_t n)
{
	const unsigned char *lf;
	size_t end;

	if (buf[0] == 'P') {
		lf = memchr(buf + have, '\n', n);
		return lf != NULL ? (size_t)(lf - (buf + have)) + 1 : n;
	}
	if (buf[0] != '\r')
		return have == 0 ? 1 : 0;
	end = have < PROXYHDR_V2_FIXED ? PROXYHDR_V2_FIXED
	      : PROXYHDR_V2_FIXED + (size_t)(buf[14] << 8 | buf[15]);
	return end - have < n ? end - have : n;
}

/*
 * Reads one header off fd, never a byte past it, within
 * PROXYIN_TIMEOUT_MS. The bytes taken are all header bytes, so a
 * refused one leaves nothing the session could misread.
 */
static enum proxyin_result
proxyin_read(int fd, struct proxyhdr *h, const char **why)
{
	unsigned char buf[PROXYHDR_MAX];
	long long deadline = tw_mono_ms() + PROXYIN_TIMEOUT_MS;
	size_t have = 0, used;

	for (;;) {
		ssize_t n;
		size_t take;
		enum proxyhdr_status st;

		if (!wait_readable(fd, deadline)) {
			*why = "no whole header within 5 seconds";
			return PROXYIN_FAIL;
		}
		n = recv(fd, buf + have, sizeof(buf) - have, MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			*why = n == 0 ? "closed inside the header" : strerror(errno);
			return have == 0 && n == 0 ? PROXYIN_CLOSED : PROXYIN_FAIL;
		}
		/* The peek put the bytes in place: header_part looks at buf[0]. */
		take = header_part(buf, have, (size_t)n);
		if (take > 0 && recv(fd, buf + have, take, MSG_DONTWAIT) != (ssize_t)take) {
			*why = "the connection failed inside the header";
			return PROXYIN_FAIL;
		}
		have += take;
		st = proxyhdr_parse(buf, have, h, &used, why);
		if (st == PROXYHDR_OK)
			return PROXYIN_OK;
		if (st != PROXYHDR_MORE)
			return PROXYIN_FAIL;
		if (have == sizeof(buf)) {
			*why = "header longer than this server accepts";
			return PROXYIN_FAIL;
		}
	}
}

/* The header's source as a socket address, v4-mapped ones as IPv4. */
static void
proxyhdr_source(const struct proxyhdr *h, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	out->ss_family = (sa_family_t)h->family;
	if (h->family == AF_INET)
		memcpy(&((struct sockaddr_in *)out)->sin_addr, h->src, 4);
	else
		memcpy(&((struct sockaddr_in6 *)out)->sin6_addr, h->src, 16);
	sa_set_port(out, h->src_port);
	sa_unmap_v4(out);
}

static const char *
ip_of(const struct sockaddr_storage *sa, char *buf, size_t len)
{
	const void *a = sa->ss_family == AF_INET6
		? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
		: (const void *)&((const struct sockaddr_in *)sa)->sin_addr;

	if (inet_ntop(sa->ss_family, a, buf, (socklen_t)len) == NULL)
		return "?";
	return buf;
}

int
proxy_trusted(const struct sockaddr_storage *peer)
{
	return tw_rt.proxy_trusted.n > 0 && sa_cidr_list_match(&tw_rt.proxy_trusted, peer);
}

void
proxy_prelogin(struct session *s)
{
	char ip[INET6_ADDRSTRLEN];
	struct sockaddr_storage client;
	struct proxyhdr h;
	struct ipc_msg m;
	const char *why = "";

	switch (proxyin_read(s->ctrl.fd, &h, &why)) {
	case PROXYIN_OK:
		break;
	case PROXYIN_CLOSED:
		/* A balancer's TCP health check: connect, close. */
		_exit(0);
	case PROXYIN_FAIL:
		worker_log(s, "PROXY header refused: trusted source \"%s\": %s",
			   ip_of(&s->peer, ip, sizeof(ip)), why);
		_exit(0);
	}
	/* LOCAL: the balancer's health check, quietly, and no failure. */
	if (h.kind == PROXYHDR_LOCAL)
		_exit(0);
	proxyhdr_source(&h, &client);
	if (sa_port(&client) == 0) {
		worker_log(s, "PROXY header refused: trusted source \"%s\": client port 0",
			   ip_of(&s->peer, ip, sizeof(ip)));
		_exit(0);
	}
	ipc_init(&m, IPC_PROXY_CLIENT);
	data_put_addr(&m, &client);
	ipc_put_u32(&m, sa_port(&client));
	/* No answer: the monitor refused the client (421) and ends us. */
	if (ipc_send(s->ipc_fd, &m) != 0 || ipc_recv(s->ipc_fd, &m) != 0 ||
	    m.type != IPC_PROXY_OK || ipc_get_end(&m) != 0)
		_exit(0);
	s->peer = client;
}

void
proxy_refuse_header(struct session *s, unsigned timeout_s)
{
	long long deadline = tw_mono_ms() + (timeout_s ? timeout_s * 1000LL : PROXYIN_TIMEOUT_MS);
	unsigned char buf[PROXYHDR_V2_FIXED];
	char ip[INET6_ADDRSTRLEN];
	int partial = 0;

	for (;;) {
		ssize_t n;
		enum proxyhdr_sniffed is;

		if (!wait_readable(s->ctrl.fd, deadline))
			return;		/* the command reader times out the same */
		n = recv(s->ctrl.fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return;		/* the command reader sees the end */
		is = proxyhdr_sniff(buf, (size_t)n);
		if (is == PROXYHDR_SNIFF_NO)
			return;
		if (is == PROXYHDR_SNIFF_YES) {
			worker_log(s, "PROXY header refused: Client \"%s\" is not in "
				   "proxy_protocol_trusted", ip_of(&s->peer, ip, sizeof(ip)));
			_exit(0);
		}
		/*
		 * Part of a signature ("P", "PRO", CR LF): the rest of a
		 * header is in flight, a person typing is slower. The bytes
		 * stay in the socket, so poll would not wait for more: naps,
		 * for PROXYIN_TIMEOUT_MS at most, then the command reader
		 * takes over.
		 */
		if (!partial) {
			partial = 1;
			if (deadline > tw_mono_ms() + PROXYIN_TIMEOUT_MS)
				deadline = tw_mono_ms() + PROXYIN_TIMEOUT_MS;
		}
		if (tw_mono_ms() >= deadline)
			return;
		(void)poll(NULL, 0, PROXYIN_SNIFF_NAP_MS);
	}
}

int
proxy_data_client(struct session *s, int fd, struct sockaddr_storage *peer)
{
	char ip[INET6_ADDRSTRLEN];
	struct proxyhdr h;
	const char *why = "";

	if (!proxy_trusted(peer))
		return 0;
	switch (proxyin_read(fd, &h, &why)) {
	case PROXYIN_OK:
		break;
	case PROXYIN_CLOSED:
		why = "closed before its header";
		/* fall through */
	case PROXYIN_FAIL:
		worker_log(s, "PROXY header of a data connection refused: trusted source "
			   "\"%s\": %s", ip_of(peer, ip, sizeof(ip)), why);
		return -1;
	}
	if (h.kind != PROXYHDR_PROXY) {
		worker_log(s, "PROXY header of a data connection refused: trusted source "
			   "\"%s\": LOCAL, no client", ip_of(peer, ip, sizeof(ip)));
		return -1;
	}
	proxyhdr_source(&h, peer);
	return 0;
}
