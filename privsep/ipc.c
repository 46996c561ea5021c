/*
 * The socket half of the IPC: one message per SOCK_SEQPACKET datagram,
 * descriptors passed with SCM_RIGHTS. Framing and validation live in
 * ipc_codec.c; this file only moves bytes and descriptors, and makes sure
 * that a descriptor arriving with a rejected message is closed rather
 * than leaked into the receiving process.
 */
#include "ipc.h"

#include <errno.h>
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

int
ipc_send(int sock, const struct ipc_msg *m)
{
	unsigned char buf[IPC_MAX_MSG];
	union {
		struct cmsghdr hdr;
		unsigned char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr msg;
	enum ipc_fd_rule rule;
	ssize_t r;
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

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = (size_t)n;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (m->fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.space;
		msg.msg_controllen = sizeof(ctl.space);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &m->fd, sizeof(int));
	}

	/* MSG_NOSIGNAL: a dead peer is IPC_E_EOF, not a SIGPIPE. */
	do {
		r = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EPIPE ? IPC_E_EOF : IPC_E_IO;
	/* SEQPACKET sends are atomic; a short count means a broken kernel. */
	if (r != n) {
		errno = EMSGSIZE;
		return IPC_E_IO;
	}
	return IPC_OK;
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

static void
close_fds(const int *fds, int nfds)
{
	int i;

	for (i = 0; i < nfds; i++)
		(void)close(fds[i]);
}

int
ipc_recv(int sock, struct ipc_msg *m)
{
	/* One byte more than the largest message, so an oversized datagram
	 * shows up as too long even if MSG_TRUNC were not reported. */
	unsigned char buf[IPC_MAX_MSG + 1];
	union {
		struct cmsghdr hdr;
		unsigned char space[CMSG_SPACE(IPC_MAX_RECV_FDS * sizeof(int))];
	} ctl;
	int fds[IPC_MAX_RECV_FDS];
	struct iovec iov;
	struct msghdr msg;
	ssize_t r;
	int nfds, bad, err;

	m->fd = -1;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = sizeof(buf);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.space;
	msg.msg_controllen = sizeof(ctl.space);

	do {
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return IPC_E_IO;

	nfds = recv_collect_fds(&msg, fds, IPC_MAX_RECV_FDS, &bad);
	if (r == 0)
		err = IPC_E_EOF;
	else if (msg.msg_flags & MSG_TRUNC)
		err = IPC_E_LONG;
	else if ((msg.msg_flags & MSG_CTRUNC) || bad || nfds > 1)
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
