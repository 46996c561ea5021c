/*
 * The socket half of the IPC: one message per SOCK_SEQPACKET datagram,
 * descriptors passed with SCM_RIGHTS. Framing and validation live in
 * ipc_codec.c; this file only moves bytes and descriptors, and makes sure
 * that a descriptor arriving with a rejected message is closed rather
 * than leaked into the receiving process.
 */
#include "privsep/ipc.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/*
 * Room for more descriptors than any message may carry: the kernel
 * installs as many as fit in the control buffer (even an "int-sized"
 * buffer is padded to hold two), so we receive every one of them in order
 * to close the extras, and MSG_CTRUNC reports the rest, which the kernel
 * dropped without installing.
 */
#define IPC_MAX_RECV_FDS 8

int
ipc_socketpair(int sv[2])
{
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 ?
	    0 : -1;
}

/* One datagram of len bytes, with fd (if >= 0) as SCM_RIGHTS; flags
 * are added to sendmsg's (MSG_DONTWAIT for ipc_send_nowait). */
static int
send_datagram(int sock, const void *data, size_t len, int fd, int flags)
{
	union {
		struct cmsghdr hdr;
		unsigned char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)data, len };
	struct msghdr msg;
	ssize_t r;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.space;
		msg.msg_controllen = sizeof(ctl.space);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	/* MSG_NOSIGNAL: a dead peer is IPC_E_EOF, not a SIGPIPE. */
	do {
		r = sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EPIPE ? IPC_E_EOF : IPC_E_IO;
	/* SEQPACKET sends are atomic; a short count means a broken kernel. */
	if ((size_t)r != len) {
		errno = EMSGSIZE;
		return IPC_E_IO;
	}
	return IPC_OK;
}

static int
ipc_send_flags(int sock, const struct ipc_msg *m, int flags)
{
	unsigned char buf[IPC_MAX_MSG];
	enum ipc_fd_rule rule;
	int n;

	n = ipc_encode(m, buf, sizeof(buf));
	if (n < 0)
		return n;
	/* encode accepted the type, so the schema lookup is in bounds. */
	rule = ipc_schemas[m->type].fd;
	/* Either case is a bug of the sender; the peer would reject it. */
	if ((m->fd >= 0 && rule == IPC_FD_NEVER) ||
	    (m->fd < 0 && rule == IPC_FD_ALWAYS))
		return IPC_E_FD;

	return send_datagram(sock, buf, (size_t)n, m->fd, flags);
}

int
ipc_send(int sock, const struct ipc_msg *m)
{
	return ipc_send_flags(sock, m, 0);
}

int
ipc_send_nowait(int sock, const struct ipc_msg *m)
{
	return ipc_send_flags(sock, m, MSG_DONTWAIT);
}

/*
 * Collects every descriptor the kernel installed for this datagram.
 * Returns how many were stored in fds (at most max); *bad is set for any
 * control message other than SCM_RIGHTS.
 */
static int
recv_collect_fds(struct msghdr *msg, int *fds, int max, int *bad)
{
	struct cmsghdr *c;
	int nfds = 0;

	*bad = 0;
	for (c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
		size_t i, cnt;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0)) {
			*bad = 1;
			continue;
		}
		cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < cnt; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfds < max)
				fds[nfds++] = fd;
			else
				*bad = 1;	/* cannot happen: buffer sized for max */
		}
	}
	return nfds;
}

/*
 * What a receive of zero bytes means. On SOCK_SEQPACKET recvmsg() returns
 * 0 both at the end (the peer closed, or this side shut reading down) and
 * for a datagram of zero bytes, which a hostile peer can send at will and
 * live on: taken for the end, it had its monitor wait for the death of a
 * process that was not dying. The kernel marks the socket hung up
 * (POLLRDHUP) only in the first case.
 */
static int
recv_zero_meaning(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLRDHUP };
	int r;

	do {
		r = poll(&p, 1, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return IPC_E_IO;
	return (p.revents & (POLLRDHUP | POLLHUP)) ? IPC_E_EOF : IPC_E_EMPTY;
}

static void
close_fds(const int *fds, int nfds)
{
	int i;

	for (i = 0; i < nfds; i++)
		(void)close(fds[i]);
}

/*
 * Receives one datagram into iov[0..n) (cap bytes in all). Returns its
 * length (0: the peer closed), IPC_E_IO, or IPC_E_LONG when it did not
 * fit: the buffers are one byte larger than any accepted datagram, so an
 * oversized one shows up as too long even if MSG_TRUNC were not reported. *nfds
 * gets every descriptor that came with it (the caller closes them when it
 * rejects the datagram); *fd_bad is set when they were truncated or came
 * in anything but SCM_RIGHTS.
 */
static ssize_t
recv_datagram(int sock, struct iovec *iov, size_t n, size_t cap, int *fds, int *nfds,
	      int *fd_bad)
{
	union {
		struct cmsghdr hdr;
		unsigned char space[CMSG_SPACE(IPC_MAX_RECV_FDS * sizeof(int))];
	} ctl;
	struct msghdr msg;
	ssize_t r;

	*nfds = 0;
	*fd_bad = 0;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = n;
	msg.msg_control = ctl.space;
	msg.msg_controllen = sizeof(ctl.space);
	do {
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (r < 0 && errno == EINTR);
	/*
	 * ECONNRESET: the peer closed with datagrams of ours still unread
	 * (a worker that ended with the answer to a request it made ahead
	 * in its queue, dataconn.c). It is the end all the same.
	 */
	if (r < 0)
		return errno == ECONNRESET ? IPC_E_EOF : IPC_E_IO;
	*nfds = recv_collect_fds(&msg, fds, IPC_MAX_RECV_FDS, fd_bad);
	if (msg.msg_flags & MSG_CTRUNC)
		*fd_bad = 1;
	if ((msg.msg_flags & MSG_TRUNC) || (size_t)r >= cap)
		return IPC_E_LONG;
	return r;
}

int
ipc_recv(int sock, struct ipc_msg *m)
{
	unsigned char buf[IPC_MAX_MSG + 1];
	struct iovec iov = { buf, sizeof(buf) };
	int fds[IPC_MAX_RECV_FDS];
	ssize_t r;
	int nfds, bad, err;

	m->fd = -1;
	r = recv_datagram(sock, &iov, 1, sizeof(buf), fds, &nfds, &bad);
	if (r < 0)
		err = (int)r;
	else if (r == 0)
		err = recv_zero_meaning(sock);
	else if (bad || nfds > 1)
		err = IPC_E_FD;
	else
		err = ipc_decode(buf, (size_t)r, nfds == 1, m);
	if (err != IPC_OK) {
		close_fds(fds, nfds);
		m->fd = -1;
		return err;
	}
	m->fd = nfds == 1 ? fds[0] : -1;
	return IPC_OK;
}

int
ipc_send_record(int sock, const void *rec, size_t len, int fd)
{
	return send_datagram(sock, rec, len, fd, 0);
}

int
ipc_recv_record(int sock, void *rec, size_t len, int want_fd, int *fd_out)
{
	/* One byte past the record: a longer datagram shows up as too long. */
	unsigned char extra;
	struct iovec iov[2] = { { rec, len }, { &extra, 1 } };
	int fds[IPC_MAX_RECV_FDS];
	ssize_t r;
	int nfds, bad, err;

	*fd_out = -1;
	r = recv_datagram(sock, iov, 2, len + 1, fds, &nfds, &bad);
	if (r < 0)
		err = (int)r;
	else if (r == 0)
		err = recv_zero_meaning(sock);
	else if ((size_t)r < len)
		err = IPC_E_SHORT;
	else if (bad || nfds != (want_fd ? 1 : 0))
		err = IPC_E_FD;
	else
		err = IPC_OK;
	if (err != IPC_OK) {
		close_fds(fds, nfds);
		return err;
	}
	*fd_out = want_fd ? fds[0] : -1;
	return IPC_OK;
}
