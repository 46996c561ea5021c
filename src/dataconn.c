/*
 * Setting up the data connection: PASV/EPSV and PORT/EPRT (RFC 959,
 * RFC 2428), and opening it when a transfer starts: accepting the passive
 * connection (only from the control connection's client), or connecting
 * to the address PORT named (only the client's own, no FTP bounce). The
 * worker makes its own data sockets unless the monitor must: under
 * isolate_network the worker has no network, and port 20 is a privileged
 * port.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "privsep/datasock.h"
#include "privsep/ipc.h"
#include "src/common/config.h"
#include "src/common/monotime.h"
#include "src/common/runtime.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"
#include "src/data.h"
#include "src/proto/ftpparse.h"
#include "src/worker.h"

/* RFC 2428 section 2: the network protocol numbers of EPRT and EPSV. */
#define EPSV_NET_IPV4 1
#define EPSV_NET_IPV6 2

/* IPC_PORT_CONNECT names the family as 4 or 6 (privsep/ipc.h). */
#define IPC_FAMILY_IPV4 4
#define IPC_FAMILY_IPV6 6

void
data_close_pasv(struct session *s)
{
	if (s->pasv_fd >= 0) {
		close(s->pasv_fd);
		s->pasv_fd = -1;
	}
}

/*
 * The worker polls its data socket while watching the control connection
 * for ABOR; a blocking socket would hang it in send or recv, deaf to ABOR
 * and to data_connection_timeout. So a socket that cannot be made
 * non-blocking is not used.
 */
static int
set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	if ((flags & O_NONBLOCK) != 0)
		return 0;
	return fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ? -1 : 0;
}

/*
 * The monitor's answer to a socket request: the socket, non-blocking
 * (made so here when the monitor's came blocking), or -1 with errno.
 */
static int
socket_result(struct session *s, struct ipc_msg *m)
{
	uint32_t err;

	if (ipc_recv(s->ipc_fd, m) != 0 || m->type != IPC_FD_RESULT ||
	    ipc_get_u32(m, &err) != 0 || ipc_get_end(m) != 0 ||
	    ipc_check_fd_result(m, err) != 0)
		die("bad reply from monitor");
	if (err != 0) {
		errno = (int)err;
		return -1;
	}
	if (set_nonblocking(m->fd) != 0) {
		close(m->fd);
		return -1;
	}
	return m->fd;
}

/*
 * PASV one step ahead (isolate_network). Each PASV's socket comes from
 * the monitor: a request and its answer, two process switches while the
 * client waits for the 227, and under load two waits for a CPU. A client
 * whose transfers come back to back (a mirror, a download manager,
 * dkftpbench's robots) waits so at every file. So a PASV that comes
 * within PASV_AHEAD_MS of the one before asks the monitor for the next
 * socket right after its own reply, and the next PASV takes that one at
 * once. Unused PASV_AHEAD_MS after it was asked for, it is closed: by
 * the wait for the next command, which wakes for it, so that an idle
 * session holds no port of the pasv range, or at the next command after
 * a transfer that outlasted it. Anything that connected to it before its
 * PASV (its port was told to nobody) is turned away when it is taken, as
 * a socket made then would have nothing queued. A worker may end before
 * the answer comes: its monitor takes that for the session's end
 * (monitor_reply_u32).
 */
#define PASV_AHEAD_MS 1000
/* A socket made ahead that keeps getting connections is not used. */
#define PASV_AHEAD_DRAIN 8
/*
 * A session holds two ports of the pasv range while it works ahead: only
 * in a range this wide (or with none, pasv_min_port and pasv_max_port 0),
 * where that cannot leave another session without one.
 */
#define PASV_AHEAD_MIN_PORTS 1000

void
data_settle(struct session *s)
{
	struct ipc_msg m;

	if (!s->pasv_ahead_asked)
		return;
	s->pasv_ahead_asked = 0;
	s->pasv_ahead = socket_result(s, &m);
}

/* Whether the socket made ahead has outlived its second. */
static int
pasv_ahead_stale(const struct session *s)
{
	return tw_mono_ms() - s->pasv_ahead_ms >= PASV_AHEAD_MS;
}

/* The wait for the next command woke: the socket made ahead goes. */
static void
pasv_ahead_drop(void *arg)
{
	struct session *s = arg;

	data_settle(s);
	if (s->pasv_ahead >= 0) {
		close(s->pasv_ahead);
		s->pasv_ahead = -1;
	}
	s->ctrl.wake_ms = 0;
}

void
data_ahead_tend(struct session *s)
{
	struct pollfd p = { s->ipc_fd, POLLIN, 0 };

	if (s->pasv_ahead_asked && poll(&p, 1, 0) == 1)
		data_settle(s);
	/* Held past its second (through a transfer, or queued commands). */
	if (s->pasv_ahead >= 0 && pasv_ahead_stale(s))
		pasv_ahead_drop(s);
}

/* The socket made ahead, when there is one still fresh; or -1. */
static int
pasv_ahead_take(struct session *s)
{
	int fd, i;

	data_settle(s);
	fd = s->pasv_ahead;
	s->pasv_ahead = -1;
	s->ctrl.wake_ms = 0;
	if (fd < 0)
		return -1;
	if (pasv_ahead_stale(s)) {
		close(fd);
		return -1;
	}
	for (i = 0; i < PASV_AHEAD_DRAIN; i++) {
		int early = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (early >= 0) {
			close(early);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return fd;
		if (errno != ECONNABORTED && errno != EINTR)
			break;
	}
	/* Still something queued, or it could not be looked at: a new one. */
	close(fd);
	return -1;
}

/* After a PASV's reply: the next one's socket, when transfers come back to back. */
static void
pasv_ahead_ask(struct session *s)
{
	struct ipc_msg m;
	long long now = tw_mono_ms(), last = s->pasv_last_ms;
	unsigned lo, hi;

	s->pasv_last_ms = now;
	config_pasv_range(s->cfg, &lo, &hi);
	if (tw_rt.netns_fd < 0 || last == 0 || now - last >= PASV_AHEAD_MS ||
	    s->pasv_ahead >= 0 || s->pasv_ahead_asked ||
	    (lo != 0 && hi - lo + 1 < PASV_AHEAD_MIN_PORTS))
		return;
	ipc_init(&m, IPC_PASV_LISTEN);
	if (ipc_send(s->ipc_fd, &m) != 0)
		return;
	s->pasv_ahead_asked = 1;
	s->pasv_ahead_ms = now;
	s->ctrl.wake = pasv_ahead_drop;
	s->ctrl.wake_arg = s;
	s->ctrl.wake_ms = now + PASV_AHEAD_MS;
}

/*
 * Sends a socket request to the monitor; returns the socket it hands
 * back, or -1 with the monitor's errno.
 */
static int
socket_via_monitor(struct session *s, struct ipc_msg *m)
{
	/* The answer to a socket asked for ahead comes first. */
	data_settle(s);
	if (ipc_send(s->ipc_fd, m) != 0)
		die("bad reply from monitor");
	return socket_result(s, m);
}

void
data_put_addr(struct ipc_msg *m, const struct sockaddr_storage *a)
{
	unsigned char raw[sizeof(struct in6_addr)] = { 0 };
	size_t i;

	if (a->ss_family == AF_INET)
		memcpy(raw, &((const struct sockaddr_in *)a)->sin_addr, sizeof(struct in_addr));
	else
		memcpy(raw, &((const struct sockaddr_in6 *)a)->sin6_addr, sizeof(struct in6_addr));
	ipc_put_u32(m, a->ss_family == AF_INET ? IPC_FAMILY_IPV4 : IPC_FAMILY_IPV6);
	for (i = 0; i < sizeof(raw); i += 4)
		ipc_put_u32(m, (uint32_t)raw[i] << 24 | (uint32_t)raw[i + 1] << 16 |
			    (uint32_t)raw[i + 2] << 8 | raw[i + 3]);
}

static int
connect_port(struct session *s)
{
	struct ipc_msg m;

	s->port_set = 0;
	if (s->cfg->connect_from_port_20) {
		ipc_init(&m, IPC_PORT20_CONNECT);
		ipc_put_u32(&m, sa_port(&s->port_addr));
		return socket_via_monitor(s, &m);
	}
	if (tw_rt.netns_fd >= 0) {
		ipc_init(&m, IPC_PORT_CONNECT);
		data_put_addr(&m, &s->port_addr);
		ipc_put_u32(&m, sa_port(&s->port_addr));
		return socket_via_monitor(s, &m);
	}
	return datasock_connect(&s->port_addr, &s->local, s->cfg->connect_timeout);
}

static int
pasv_listen(struct session *s, unsigned *port_out)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	struct ipc_msg m;
	int fd;

	if (tw_rt.netns_fd < 0)
		return datasock_pasv_listen(s->cfg, &s->local, port_out);
	fd = pasv_ahead_take(s);
	if (fd < 0) {
		ipc_init(&m, IPC_PASV_LISTEN);
		fd = socket_via_monitor(s, &m);
	}
	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
		close(fd);
		return -1;
	}
	*port_out = sa_port(&addr);
	return fd;
}

static int
epsv_net_of(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET ? EPSV_NET_IPV4 : EPSV_NET_IPV6;
}

/* Whether the EPSV argument allows a passive socket; replies when not. */
static int
epsv_arg_ok(struct session *s, const char *arg)
{
	enum ftp_epsv_kind kind = FTP_EPSV_ANY;
	int proto = 0;

	if (ftp_parse_epsv(arg, &kind, &proto) != 0) {
		ctrl_reply(&s->ctrl, 501, "Bad EPSV argument.");
		return 0;
	}
	if (kind == FTP_EPSV_ALL) {
		s->epsv_all = 1;
		ctrl_reply(&s->ctrl, 200, "EPSV ALL ok.");
		return 0;
	}
	if (kind == FTP_EPSV_PROTO && proto != epsv_net_of(&s->local)) {
		ctrl_reply(&s->ctrl, 522, "Network protocol not supported, use (%d)",
			   epsv_net_of(&s->local));
		return 0;
	}
	return 1;
}

/* Whether PASV may answer; replies when not. */
static int
pasv_allowed(struct session *s)
{
	if (s->epsv_all) {
		ctrl_reply(&s->ctrl, 500, "PASV not allowed after EPSV ALL.");
		return 0;
	}
	if (s->local.ss_family != AF_INET) {
		ctrl_reply(&s->ctrl, 425, "PASV cannot name an IPv6 address: use EPSV.");
		return 0;
	}
	return 1;
}

static void
reply_pasv(struct session *s, unsigned port)
{
	struct in_addr a = ((struct sockaddr_in *)&s->local)->sin_addr;
	char text[sizeof("255,255,255,255,255,255")];

	/* pasv_address, as the listener read or resolved it (derived.c). */
	if (tw_rt.have_pasv_addr)
		a = tw_rt.pasv_addr;
	if (ftp_format_pasv(text, sizeof(text), &a, port) < 0)
		bug("%s: port %u", __func__, port);
	ctrl_reply(&s->ctrl, 227, "Entering Passive Mode (%s).", text);
}

void
data_cmd_pasv(struct session *s, int extended, const char *arg)
{
	unsigned port;

	if (!s->cfg->pasv_enable) {
		ctrl_reply(&s->ctrl, 500, "PASV is disabled on this server.");
		return;
	}
	if (extended ? !epsv_arg_ok(s, arg) : !pasv_allowed(s))
		return;
	data_close_pasv(s);
	s->port_set = 0;
	s->pasv_fd = pasv_listen(s, &port);
	if (s->pasv_fd < 0) {
		ctrl_reply(&s->ctrl, 425, "Cannot open a passive data port.");
		return;
	}
	if (extended)
		ctrl_reply(&s->ctrl, 229, "Entering Extended Passive Mode (|||%u|)", port);
	else
		reply_pasv(s, port);
	pasv_ahead_ask(s);
}

/*
 * EPRT "|n|addr|port|" whose n is neither 1 nor 2 (RFC 2428 section 2):
 * 522 tells the client which families we speak.
 */
static int
eprt_unknown_net(const char *arg)
{
	return strlen(arg) > 2 && arg[1] != '0' + EPSV_NET_IPV4 && arg[1] != '0' + EPSV_NET_IPV6;
}

void
data_cmd_port(struct session *s, int extended, const char *arg)
{
	const char *verb = extended ? "EPRT" : "PORT";
	struct sockaddr_storage addr;
	int rc;

	if (!s->cfg->port_enable) {
		ctrl_reply(&s->ctrl, 500, "PORT is disabled on this server.");
		return;
	}
	if (s->epsv_all) {
		ctrl_reply(&s->ctrl, 500, "PORT not allowed after EPSV ALL.");
		return;
	}
	rc = extended ? ftp_parse_eprt(arg, &addr) : ftp_parse_port(arg, &addr);
	if (rc != 0) {
		if (extended && eprt_unknown_net(arg))
			ctrl_reply(&s->ctrl, 522, "Network protocol not supported, use (%d,%d)",
				   EPSV_NET_IPV4, EPSV_NET_IPV6);
		else
			ctrl_reply(&s->ctrl, 501, "Illegal %s command.", verb);
		return;
	}
	/* No FTP bounce: only the client itself, and not its system ports. */
	if (!s->cfg->port_promiscuous &&
	    (!sa_same_host(&addr, &s->peer) || sa_port(&addr) < IPPORT_RESERVED)) {
		worker_log(s, "refused %s to a foreign address or port", verb);
		ctrl_reply(&s->ctrl, 500, "Illegal %s command.", verb);
		return;
	}
	data_close_pasv(s);
	s->port_addr = addr;
	s->port_set = 1;
	ctrl_reply(&s->ctrl, 200, "%s command successful. Consider using PASV.", verb);
}

static int
accept_pasv(struct session *s)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd;

	/* A client connects before its RETR or LIST, mostly: no wait then. */
	fd = accept4(s->pasv_fd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (datasock_wait(s->pasv_fd, POLLIN, s->cfg->accept_timeout) <= 0) {
			data_close_pasv(s);
			ctrl_reply(&s->ctrl, 425, "Failed to establish connection.");
			return -1;
		}
		len = sizeof(peer);
		fd = accept4(s->pasv_fd, (struct sockaddr *)&peer, &len,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
	}
	data_close_pasv(s);
	if (fd < 0) {
		ctrl_reply(&s->ctrl, 425, "Failed to establish connection.");
		return -1;
	}
	sa_unmap_v4(&peer);
	/* Behind a balancer its header names the client; read either way,
	 * or the header would be taken for the file's first bytes. */
	if (proxy_data_client(s, fd, &peer) != 0) {
		close(fd);
		ctrl_reply(&s->ctrl, 425, "Failed to establish connection.");
		return -1;
	}
	/* Only the control connection's client may connect (no data theft). */
	if (!s->cfg->pasv_promiscuous && !sa_same_host(&peer, &s->peer)) {
		close(fd);
		worker_log(s, "refused a passive data connection from a foreign address");
		ctrl_reply(&s->ctrl, 425, "Security: Bad IP connecting.");
		return -1;
	}
	return fd;
}

int
data_open(struct session *s)
{
	int fd;

	if (s->pasv_fd >= 0)
		return accept_pasv(s);
	if (!s->port_set) {
		ctrl_reply(&s->ctrl, 425, "Use PORT or PASV first.");
		return -1;
	}
	fd = connect_port(s);
	if (fd < 0) {
		ctrl_reply(&s->ctrl, 425, "Failed to establish connection.");
		return -1;
	}
	return fd;
}
