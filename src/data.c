/*
 * Data connections (PASV/EPSV, PORT/EPRT) and transfers: RETR with
 * sendfile(2), STOR/APPE/STOU with large writes, listings. While data
 * moves, the control connection is watched for ABOR only; any other
 * command waits in the socket until the transfer ends.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/proto/ascii.h"
#include "src/common/config.h"
#include "src/proto/ftpparse.h"
#include "privsep/datasock.h"
#include "privsep/ipc.h"
#include "src/proto/listing.h"
#include "src/common/runtime.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"
#include "src/worker.h"

#define XFER_BUF (256 * 1024)		/* STOR and ASCII chunk size */
#define LIST_MAX_ENTRIES (1u << 20)	/* bound on one directory listing */

enum xfer_status { XFER_OK = 0, XFER_ABORTED, XFER_NET_ERR, XFER_FILE_ERR };

struct xfer {
	struct session *s;
	int fd;			/* data socket */
	int watch_ctrl;		/* still looking for ABOR */
	time_t ctrl_retry;	/* partial line seen: look again after this */
	unsigned long long bytes;
};

/* --- Passive and active set-up --- */

void
data_close_pasv(struct session *s)
{
	if (s->pasv_fd >= 0) {
		close(s->pasv_fd);
		s->pasv_fd = -1;
	}
}

/* Asks the monitor for a socket (isolate_network, port 20). */
static int
socket_via_monitor(struct session *s, enum ipc_type type)
{
	struct ipc_msg m;
	uint32_t err;

	ipc_init(&m, type);
	if (type == IPC_PORT_CONNECT) {
		const struct sockaddr_storage *a = &s->port_addr;
		unsigned char raw[16] = { 0 };
		int i;

		if (a->ss_family == AF_INET)
			memcpy(raw, &((const struct sockaddr_in *)a)->sin_addr, 4);
		else
			memcpy(raw, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
		ipc_put_u32(&m, a->ss_family == AF_INET ? 4 : 6);
		for (i = 0; i < 16; i += 4)
			ipc_put_u32(&m, (uint32_t)raw[i] << 24 | (uint32_t)raw[i + 1] << 16 |
				    (uint32_t)raw[i + 2] << 8 | raw[i + 3]);
	}
	if (type != IPC_PASV_LISTEN)
		ipc_put_u32(&m, sa_port(&s->port_addr));
	if (ipc_send(s->ipc_fd, &m) != 0 || ipc_recv(s->ipc_fd, &m) != 0 ||
	    m.type != IPC_FD_RESULT || ipc_get_u32(&m, &err) != 0 || ipc_get_end(&m) != 0 ||
	    ipc_check_fd_result(&m, err) != 0)
		die("bad reply from monitor");
	if (err != 0) {
		errno = (int)err;
		return -1;
	}
	return m.fd;
}

static int
connect_port(struct session *s)
{
	s->port_set = 0;
	if (s->cfg->connect_from_port_20)
		return socket_via_monitor(s, IPC_PORT20_CONNECT);
	if (tw_rt.netns_fd >= 0)
		return socket_via_monitor(s, IPC_PORT_CONNECT);
	return datasock_connect(&s->port_addr, &s->local, s->cfg->connect_timeout);
}

static int
pasv_listen(struct session *s, unsigned *port_out)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	int fd;

	if (tw_rt.netns_fd < 0)
		return datasock_pasv_listen(s->cfg, &s->local, port_out);
	fd = socket_via_monitor(s, IPC_PASV_LISTEN);
	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	*port_out = sa_port(&addr);
	return fd;
}

void
data_cmd_pasv(struct session *s, int extended, const char *arg)
{
	enum ftp_epsv_kind kind = FTP_EPSV_ANY;
	int proto = 0;
	unsigned port;

	if (!s->cfg->pasv_enable) {
		ctrl_reply(&s->ctrl, 500, "PASV is disabled on this server.");
		return;
	}
	if (extended) {
		if (ftp_parse_epsv(arg, &kind, &proto) != 0) {
			ctrl_reply(&s->ctrl, 501, "Bad EPSV argument.");
			return;
		}
		if (kind == FTP_EPSV_ALL) {
			s->epsv_all = 1;
			ctrl_reply(&s->ctrl, 200, "EPSV ALL ok.");
			return;
		}
		if (kind == FTP_EPSV_PROTO &&
		    proto != (s->local.ss_family == AF_INET ? 1 : 2)) {
			ctrl_reply(&s->ctrl, 522, "Network protocol not supported, use (%d)",
				   s->local.ss_family == AF_INET ? 1 : 2);
			return;
		}
	} else {
		if (s->epsv_all) {
			ctrl_reply(&s->ctrl, 500, "PASV not allowed after EPSV ALL.");
			return;
		}
		if (s->local.ss_family != AF_INET) {
			ctrl_reply(&s->ctrl, 425, "PASV cannot name an IPv6 address: use EPSV.");
			return;
		}
	}
	data_close_pasv(s);
	s->port_set = 0;
	s->pasv_fd = pasv_listen(s, &port);
	if (s->pasv_fd < 0) {
		ctrl_reply(&s->ctrl, 425, "Cannot open a passive data port.");
		return;
	}
	if (extended) {
		ctrl_reply(&s->ctrl, 229, "Entering Extended Passive Mode (|||%u|)", port);
	} else {
		struct in_addr a = ((struct sockaddr_in *)&s->local)->sin_addr;
		char text[64];

		if (s->cfg->pasv_address[0] != '\0')
			inet_pton(AF_INET, s->cfg->pasv_address, &a);
		ftp_format_pasv(text, sizeof(text), &a, port);
		ctrl_reply(&s->ctrl, 227, "Entering Passive Mode (%s).", text);
	}
}

void
data_cmd_port(struct session *s, int extended, const char *arg)
{
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
		if (extended && (arg[0] != '\0') && strlen(arg) > 2 &&
		    arg[1] != '1' && arg[1] != '2')
			ctrl_reply(&s->ctrl, 522, "Network protocol not supported, use (1,2)");
		else
			ctrl_reply(&s->ctrl, 501, "Illegal %s command.", extended ? "EPRT" : "PORT");
		return;
	}
	/* No FTP bounce: only the client itself, and not its system ports. */
	if (!s->cfg->port_promiscuous &&
	    (!sa_same_host(&addr, &s->peer) || sa_port(&addr) < 1024)) {
		worker_log(s, "refused %s to a foreign address or port", extended ? "EPRT" : "PORT");
		ctrl_reply(&s->ctrl, 500, "Illegal %s command.", extended ? "EPRT" : "PORT");
		return;
	}
	data_close_pasv(s);
	s->port_addr = addr;
	s->port_set = 1;
	ctrl_reply(&s->ctrl, 200, "%s command successful. Consider using PASV.",
		   extended ? "EPRT" : "PORT");
}

/* --- Opening the data connection --- */

static int
accept_pasv(struct session *s)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd;

	if (datasock_wait(s->pasv_fd, POLLIN, s->cfg->accept_timeout) <= 0) {
		data_close_pasv(s);
		ctrl_reply(&s->ctrl, 425, "Failed to establish connection.");
		return -1;
	}
	fd = accept4(s->pasv_fd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
	data_close_pasv(s);
	if (fd < 0) {
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

/* Returns a connected, non-blocking data socket, or -1 after a reply. */
static int
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
	/* Sockets from the monitor arrive blocking. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* --- Moving bytes --- */

/*
 * Waits until the data socket is ready. Meanwhile an ABOR on the control
 * connection ends the transfer; a data connection idle for longer than
 * data_connection_timeout ends the session (as vsftpd does).
 */
static int
xfer_wait(struct xfer *x, short events)
{
	const struct tw_config *c = x->s->cfg;
	time_t deadline = c->data_connection_timeout
		? time(NULL) + c->data_connection_timeout : 0;

	for (;;) {
		struct pollfd p[2] = { { x->fd, events, 0 }, { x->s->ctrl.fd, POLLIN, 0 } };
		time_t now = time(NULL);
		int watch = x->watch_ctrl && now >= x->ctrl_retry;
		int ms = -1, rc;

		if (deadline) {
			if (now >= deadline) {
				ctrl_reply(&x->s->ctrl, 421, "Data timeout. Reconnect. Sorry.");
				_exit(0);
			}
			ms = (int)(deadline - now) * 1000;
		}
		if (x->watch_ctrl && !watch && (ms < 0 || ms > 200))
			ms = 200;
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
			default:
				x->ctrl_retry = now + 1;
				break;
			}
		}
		if (p[0].revents != 0)
			return XFER_OK;
	}
}

/* Writes all of buf to the data socket. */
static int
xfer_write_all(struct xfer *x, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(x->fd, buf, len, MSG_NOSIGNAL);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			x->bytes += (unsigned long long)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return XFER_NET_ERR;
		if (n < 0 && errno == EINTR)
			continue;
		{
			int w = xfer_wait(x, POLLOUT);

			if (w != XFER_OK)
				return w;
		}
	}
	return XFER_OK;
}

static int
send_plain(struct xfer *x, int file, off_t off, int ascii)
{
	char *in = malloc(XFER_BUF), *out = ascii ? malloc(2 * XFER_BUF) : NULL;
	int prev_cr = 0, rc = XFER_OK;

	if (in == NULL || (ascii && out == NULL)) {
		free(in);
		free(out);
		return XFER_FILE_ERR;
	}
	for (;;) {
		ssize_t n = pread(file, in, XFER_BUF, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = XFER_FILE_ERR;
			break;
		}
		if (n == 0)
			break;
		off += n;
		if (ascii) {
			size_t m = ascii_to_net(in, (size_t)n, out, &prev_cr);

			rc = xfer_write_all(x, out, m);
		} else {
			rc = xfer_write_all(x, in, (size_t)n);
		}
		if (rc != XFER_OK)
			break;
	}
	free(in);
	free(out);
	return rc;
}

static int
send_file(struct xfer *x, int file, off_t off, off_t size, int ascii)
{
	if (ascii || !x->s->cfg->use_sendfile)
		return send_plain(x, file, off, ascii);
	while (off < size) {
		size_t want = (size_t)(size - off) > (1u << 30) ? (1u << 30) : (size_t)(size - off);
		off_t before = off;
		ssize_t n = sendfile(x->fd, file, &off, want);

		if (n > 0) {
			x->bytes += (unsigned long long)n;
			continue;
		}
		if (n == 0)
			break;	/* the file shrank under us */
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			int w = xfer_wait(x, POLLOUT);

			if (w != XFER_OK)
				return w;
			continue;
		}
		if ((errno == EINVAL || errno == ENOSYS) && x->bytes == 0)
			return send_plain(x, file, before, 0);	/* fs without sendfile */
		return errno == EPIPE || errno == ECONNRESET ? XFER_NET_ERR : XFER_FILE_ERR;
	}
	return XFER_OK;
}

static int
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

static int
recv_file(struct xfer *x, int file, int ascii)
{
	char *in = malloc(XFER_BUF), *out = ascii ? malloc(XFER_BUF + 1) : NULL;
	int pending_cr = 0, rc = XFER_OK;

	if (in == NULL || (ascii && out == NULL)) {
		free(in);
		free(out);
		return XFER_FILE_ERR;
	}
	for (;;) {
		ssize_t n = recv(x->fd, in, XFER_BUF, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			rc = xfer_wait(x, POLLIN);
			if (rc != XFER_OK)
				break;
			continue;
		}
		if (n < 0) {
			rc = XFER_NET_ERR;
			break;
		}
		if (n == 0) {
			if (ascii) {
				size_t m = ascii_from_net_end(out, &pending_cr);

				rc = write_file_all(file, out, m);
			}
			break;
		}
		x->bytes += (unsigned long long)n;
		if (ascii) {
			size_t m = ascii_from_net(in, (size_t)n, out, &pending_cr);

			rc = write_file_all(file, out, m);
		} else {
			rc = write_file_all(file, in, (size_t)n);
		}
		if (rc != XFER_OK)
			break;
	}
	free(in);
	free(out);
	return rc;
}

/* The final reply of a transfer command. */
static void
xfer_finish(struct session *s, int rc, const char *ok_text)
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
	default:
		ctrl_reply(&s->ctrl, 451, "Failure accessing the local file.");
		break;
	}
}

static void
xfer_start(struct xfer *x, struct session *s, int fd)
{
	int one = 1;

	memset(x, 0, sizeof(*x));
	x->s = s;
	x->fd = fd;
	x->watch_ctrl = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void
data_cmd_retr(struct session *s, const char *path)
{
	unsigned long long rest = s->rest;
	struct xfer x;
	struct stat st;
	int file, fd, rc;

	s->rest = 0;
	if (s->ascii && rest != 0) {
		ctrl_reply(&s->ctrl, 550, "REST is not supported in ASCII mode.");
		return;
	}
	file = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (file < 0 || fstat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (file >= 0)
			close(file);
		ctrl_reply(&s->ctrl, 550, "Failed to open file.");
		return;
	}
	fd = data_open(s);
	if (fd < 0) {
		close(file);
		return;
	}
	ctrl_reply(&s->ctrl, 150, "Opening %s mode data connection for %s (%lld bytes).",
		   s->ascii ? "ASCII" : "BINARY", path, (long long)st.st_size);
	xfer_start(&x, s, fd);
	rc = send_file(&x, file, (off_t)rest, st.st_size,
		       s->ascii && s->cfg->ascii_download_enable);
	close(fd);
	close(file);
	xfer_finish(s, rc, "Transfer complete.");
	/* After the reply: the client need not wait for the monitor's log. */
	worker_xferlog(s, "DOWNLOAD %s %s, %llu bytes%s", rc == XFER_OK ? "OK" : "FAIL",
		       path, x.bytes, rest ? " (resumed)" : "");
}

/* Opens the upload target; for STOU picks a name that does not exist. */
static int
open_upload(struct session *s, const char *path, int append, int unique,
	    unsigned long long rest, char *name, size_t namecap)
{
	int flags = O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	mode_t mode = (mode_t)s->cfg->file_open_mode;
	unsigned i;

	if (unique) {
		for (i = 0; i < 1000; i++) {
			int fd;

			if ((i == 0 ? tw_snprintf(name, namecap, "%s", path)
				    : tw_snprintf(name, namecap, "%s.%u", path, i)) < 0)
				return -1;
			fd = open(name, flags | O_EXCL, mode);
			if (fd >= 0 || errno != EEXIST)
				return fd;
		}
		return -1;
	}
	tw_strlcpy(name, path, namecap);
	if (append)
		flags |= O_APPEND;
	else if (rest == 0)
		flags |= O_TRUNC;
	/*
	 * Anonymous users may not overwrite (or truncate) what exists unless
	 * anon_other_write_enable says so.
	 */
	if (s->anonymous && !s->cfg->anon_other_write_enable)
		flags |= O_EXCL;
	return open(path, flags, mode);
}

void
data_cmd_store(struct session *s, const char *path, int append, int unique)
{
	unsigned long long rest = s->rest;
	char name[PATH_MAX];
	struct xfer x;
	struct stat st;
	int file, fd, rc;

	s->rest = 0;
	if (s->ascii && rest != 0) {
		ctrl_reply(&s->ctrl, 550, "REST is not supported in ASCII mode.");
		return;
	}
	if (append)
		rest = 0;
	file = open_upload(s, path, append, unique, rest, name, sizeof(name));
	if (file < 0 || fstat(file, &st) != 0 || !S_ISREG(st.st_mode) ||
	    fcntl(file, F_SETFL, append ? O_APPEND : 0) != 0 ||
	    (rest != 0 && lseek(file, (off_t)rest, SEEK_SET) < 0)) {
		if (file >= 0)
			close(file);
		ctrl_reply(&s->ctrl, 553, "Could not create file.");
		return;
	}
	fd = data_open(s);
	if (fd < 0) {
		close(file);
		return;
	}
	if (unique)
		ctrl_reply(&s->ctrl, 150, "FILE: %s", name);
	else
		ctrl_reply(&s->ctrl, 150, "Ok to send data.");
	xfer_start(&x, s, fd);
	rc = recv_file(&x, file, s->ascii && s->cfg->ascii_upload_enable);
	close(fd);
	if (close(file) != 0 && rc == XFER_OK)
		rc = XFER_FILE_ERR;
	if (unique && rc == XFER_OK)
		ctrl_reply(&s->ctrl, 226, "Transfer complete (unique file name: %s).", name);
	else
		xfer_finish(s, rc, "Transfer complete.");
	worker_xferlog(s, "UPLOAD %s %s, %llu bytes%s", rc == XFER_OK ? "OK" : "FAIL", name,
		       x.bytes, rest ? " (resumed)" : append ? " (append)" : "");
}

/* --- Listings --- */

struct out_sink {
	struct xfer *x;		/* NULL: lines go to the control connection */
	struct session *s;
	char *buf;
	size_t len, cap;
	int rc;
};

static void
sink_flush(struct out_sink *o)
{
	if (o->len == 0 || o->rc != XFER_OK)
		return;
	if (o->x != NULL)
		o->rc = xfer_write_all(o->x, o->buf, o->len);
	else
		ctrl_write(&o->s->ctrl, o->buf, o->len);
	o->len = 0;
}

static void
sink_line(struct out_sink *o, const char *line, size_t n)
{
	if (o->len + n + 2 > o->cap)
		sink_flush(o);
	if (n + 2 > o->cap)
		return;
	memcpy(o->buf + o->len, line, n);
	o->len += n;
	o->buf[o->len++] = '\r';
	o->buf[o->len++] = '\n';
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
emit_entry(struct out_sink *o, int mode, const char *dir, const char *name,
	   const struct list_opts *lo)
{
	char path[PATH_MAX], line[PATH_MAX * 2 + 256], target[PATH_MAX];
	const char *full = name;
	struct stat st;
	int n = -1;

	if (dir != NULL) {
		if (ftp_path_join(dir, name, path, sizeof(path)) < 0)
			return;
		full = path;
	}
	if (mode == LISTMODE_NLST) {
		sink_line(o, name, strlen(name));
		return;
	}
	if (lstat(full, &st) != 0)
		return;
	if (mode == LISTMODE_MLSD) {
		struct stat tst;

		/* MLSD describes what a name leads to: follow symlinks. */
		if (S_ISLNK(st.st_mode) && stat(full, &tst) == 0)
			st = tst;
		n = list_format_mlst(line, sizeof(line), name, &st, MLST_KIND_ENTRY,
				     o->s->mlst_facts,
				     o->s->cfg->write_enable && !o->s->anonymous);
	} else {
		ssize_t tl = -1;

		if (S_ISLNK(st.st_mode)) {
			tl = readlink(full, target, sizeof(target) - 1);
			if (tl >= 0)
				target[tl] = '\0';
		}
		n = list_format_long(line, sizeof(line), name, &st, tl >= 0 ? target : NULL, lo);
	}
	if (n > 0)
		sink_line(o, line, (size_t)n);
}

/* Lists dir (sorted, like ls) into the sink. */
static void
emit_dir(struct out_sink *o, int mode, const char *dir, int show_hidden,
	 const struct list_opts *lo)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;

	if (d == NULL)
		return;
	if (mode == LISTMODE_MLSD) {
		struct stat st;
		char line[512];
		int len;

		if (stat(dir, &st) == 0 &&
		    (len = list_format_mlst(line, sizeof(line), ".", &st, MLST_KIND_CDIR,
					    o->s->mlst_facts,
					    o->s->cfg->write_enable && !o->s->anonymous)) > 0)
			sink_line(o, line, (size_t)len);
	}
	while ((de = readdir(d)) != NULL && n < LIST_MAX_ENTRIES) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_name[0] == '.' && !show_hidden && mode != LISTMODE_MLSD)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			char **nn = realloc(names, ncap * sizeof(*names));

			if (nn == NULL)
				break;
			names = nn;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (names[n] == NULL)
			break;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		if (o->rc == XFER_OK)
			emit_entry(o, mode, strcmp(dir, ".") == 0 ? NULL : dir, names[i], lo);
		free(names[i]);
	}
	free(names);
}

/* mode -1 = STAT <path>: the listing goes over the control connection. */
void
data_cmd_list(struct session *s, const char *arg, int mode)
{
	struct list_opts lo = { s->cfg->hide_ids, s->cfg->use_localtime, time(NULL) };
	struct out_sink o;
	struct xfer x;
	struct stat st;
	const char *path;
	int show_hidden = 0, fd = -1, is_dir;

	if (!s->cfg->dirlist_enable) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return;
	}
	path = mode == LISTMODE_MLSD ? arg : ftp_list_args(arg, &show_hidden);
	if (path[0] == '\0')
		path = ".";
	if (ftp_path_ok(path) != 0 || stat(path, &st) != 0) {
		if (mode == -1)
			ctrl_reply(&s->ctrl, 450, "No such file or directory.");
		else
			ctrl_reply(&s->ctrl, 550, "No such file or directory.");
		return;
	}
	is_dir = S_ISDIR(st.st_mode);
	if (mode == LISTMODE_MLSD && !is_dir) {
		ctrl_reply(&s->ctrl, 501, "MLSD needs a directory.");
		return;
	}
	memset(&o, 0, sizeof(o));
	o.s = s;
	o.cap = 64 * 1024;
	o.buf = malloc(o.cap);
	if (o.buf == NULL) {
		ctrl_reply(&s->ctrl, 451, "Out of memory.");
		return;
	}
	if (mode == -1) {
		ctrl_reply_cont(&s->ctrl, 213, "Status follows:");
		mode = LISTMODE_LIST;
		fd = -2;
	} else {
		fd = data_open(s);
		if (fd < 0) {
			free(o.buf);
			return;
		}
		ctrl_reply(&s->ctrl, 150, "Here comes the directory listing.");
		xfer_start(&x, s, fd);
		o.x = &x;
	}
	if (is_dir)
		emit_dir(&o, mode, path, show_hidden, &lo);
	else
		emit_entry(&o, mode, NULL, path, &lo);
	sink_flush(&o);
	free(o.buf);
	if (fd == -2) {
		ctrl_reply(&s->ctrl, 213, "End of status");
		return;
	}
	close(fd);
	xfer_finish(s, o.rc, "Directory send OK.");
}
