/*
 * Protocol worker main loops, before and after login. Both read command
 * lines and hand them to the verb table (commands.c), which knows what
 * each verb may do in the session's state.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <limits.h>
#include <stdint.h>

#include "src/common/config.h"
#include "privsep/ipc.h"
#include "src/proto/listing.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/runtime.h"
#include "src/common/sockaddr.h"
#include "src/common/util.h"
#include "src/data.h"
#include "src/proto/ftpparse.h"
#include "src/worker.h"

static void __attribute__((format(printf, 1, 0)))
worker_vlog(const char *fmt, va_list ap)
{
	char text[IPC_MAX_LOGMSG];

	vsnprintf(text, sizeof(text), fmt, ap);
	tw_log(TW_LOG_INFO, "%s", text);
}

void
worker_log(struct session *s, const char *fmt, ...)
{
	va_list ap;

	(void)s;
	va_start(ap, fmt);
	worker_vlog(fmt, ap);
	va_end(ap);
}

void
worker_xferlog(struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->cfg->xferlog_enable)
		return;
	va_start(ap, fmt);
	worker_vlog(fmt, ap);
	va_end(ap);
}

void
worker_xfer_done(struct session *s, const struct xfer *x, int upload, int ok,
		 const char *path)
{
	char cwd[PATH_MAX], full[PATH_MAX];
	long long ms = tw_mono_ms() - x->start_ms;
	struct ipc_msg m;

	if (!s->cfg->xferlog_enable)
		return;
	/* The log names the file as the session sees it: from its root. */
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL &&
	    ftp_path_join(cwd, path, full, sizeof(full)) >= 0)
		path = full;
	ipc_init(&m, IPC_XFERLOG);
	ipc_put_u32(&m, (upload ? IPC_XFER_UPLOAD : 0) | (ok ? IPC_XFER_OK : 0) |
		    (s->ascii ? IPC_XFER_ASCII : 0));
	ipc_put_u32(&m, (uint32_t)(x->bytes >> 32));
	ipc_put_u32(&m, (uint32_t)x->bytes);
	ipc_put_u32(&m, ms < 0 ? 0 : ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
	ipc_put_str(&m, path, strnlen(path, IPC_MAX_XFERPATH));
	/* Best effort, as every log line: a monitor gone ends us anyway. */
	(void)ipc_send(s->ipc_fd, &m);
}

int
worker_chown_upload(struct session *s, int file)
{
	struct ipc_msg m;
	uint32_t err;

	/* The answer to a socket asked for ahead comes first. */
	data_settle(s);
	ipc_init(&m, IPC_CHOWN_UPLOAD);
	m.fd = file;
	if (ipc_send(s->ipc_fd, &m) != 0 || ipc_recv(s->ipc_fd, &m) != 0 ||
	    m.type != IPC_CHOWN_RESULT || ipc_get_u32(&m, &err) != 0 || ipc_get_end(&m) != 0)
		die("bad reply from monitor");
	if (err != 0) {
		worker_log(s, "chown_uploads: the monitor could not give the upload away: %s",
			   strerror((int)err));
		return -1;
	}
	return 0;
}

static void
session_init(struct session *s, const struct tw_config *cfg, int ctrl_fd, int ipc_fd)
{
	/*
	 * s is static and still all zero in this fresh process (see
	 * TW_PER_PROCESS): no memset needed.
	 */
	s->cfg = cfg;
	s->ipc_fd = ipc_fd;
	s->pasv_fd = -1;
	s->pasv_ahead = -1;
	s->mlst_facts = MLST_ALL;
	ctrl_init(&s->ctrl, ctrl_fd);
}

/* The pre-login worker asks its socket who the client is. */
static void
session_learn_addresses(struct session *s)
{
	socklen_t len = sizeof(s->peer);

	if (getpeername(s->ctrl.fd, (struct sockaddr *)&s->peer, &len) != 0)
		die("getpeername: %s", strerror(errno));
	len = sizeof(s->local);
	if (getsockname(s->ctrl.fd, (struct sockaddr *)&s->local, &len) != 0)
		die("getsockname: %s", strerror(errno));
	sa_unmap_v4(&s->peer);
	sa_unmap_v4(&s->local);
}

void
worker_exit_reply(struct session *s, int code, const char *text)
{
	ctrl_reply(&s->ctrl, code, "%s", text);
	ctrl_end(&s->ctrl);
	tw_sched_idle();
	_exit(0);
}

void
worker_start_tls(struct session *s)
{
	struct ipc_msg m;

	/* Before the first TLS byte: the monitor must not write a plaintext 421. */
	ipc_init(&m, IPC_TLS_ON);
	if (ipc_send(s->ipc_fd, &m) != 0)
		die("monitor gone");
	if (ctrl_start_tls(&s->ctrl, s->cfg) != 0)
		_exit(0);
	s->tls = 1;
}

/* Reads a line; handles every non-line outcome by closing the session. */
static void
read_command(struct session *s, char *line, size_t cap)
{
	/* A socket asked for ahead is held here, not in the IPC queue. */
	data_ahead_tend(s);
	switch (ctrl_read_line(&s->ctrl, line, cap, s->cfg->idle_session_timeout)) {
	case CTRL_LINE:
		return;
	case CTRL_TIMEOUT:
		worker_exit_reply(s, 421, "Timeout.");
	case CTRL_TOO_LONG:
		worker_exit_reply(s, 500, "Command line too long.");
	case CTRL_BAD:
		worker_exit_reply(s, 500, "Bad command line.");
	default:
		_exit(0);
	}
}

/*
 * log_ftp_protocol: every command and reply line, vsftpd's way ("FTP
 * command: Client ..."); a password never (PASS is logged as "PASS
 * <password>"). The monitor replaces control characters in what it logs.
 */
static char protocol_peer[INET6_ADDRSTRLEN] TW_PER_PROCESS;

static void
log_protocol_reply(const char *line, size_t len)
{
	tw_log(TW_LOG_INFO, "FTP response: Client \"%s\", \"%.*s\"", protocol_peer,
	       (int)len, line);
}

static void
log_protocol_start(struct session *s)
{
	const void *a = s->peer.ss_family == AF_INET6
		? (const void *)&((struct sockaddr_in6 *)&s->peer)->sin6_addr
		: (const void *)&((struct sockaddr_in *)&s->peer)->sin_addr;

	if (!s->cfg->log_ftp_protocol)
		return;
	if (inet_ntop(s->peer.ss_family, a, protocol_peer, sizeof(protocol_peer)) == NULL)
		tw_strlcpy(protocol_peer, "?", sizeof(protocol_peer));
	ctrl_log_replies(log_protocol_reply);
}

static void
log_protocol_command(struct session *s, const char *line)
{
	if (!s->cfg->log_ftp_protocol)
		return;
	if (strncasecmp(line, "PASS", 4) == 0 && (line[4] == ' ' || line[4] == '\0'))
		line = "PASS <password>";
	tw_log(TW_LOG_INFO, "FTP command: Client \"%s\", \"%s\"", protocol_peer, line);
}

/* Serves command lines until the session ends. */
static void __attribute__((noreturn))
serve_commands(struct session *s)
{
	char line[CTRL_MAX_LINE + 1];

	for (;;) {
		read_command(s, line, sizeof(line));
		log_protocol_command(s, line);
		cmd_dispatch(s, line);
	}
}

void
worker_prelogin_run(const struct tw_config *cfg, int ctrl_fd, int ipc_fd)
{
	static struct session sess TW_PER_PROCESS;
	struct session *s = &sess;
	int implicit, proxied;

	if (ctrl_fd < 0) {
		/* Pre-forked: the monitor sends the connection when one comes. */
		struct ipc_msg m;

		if (ipc_recv(ipc_fd, &m) != 0 || m.type != IPC_CLIENT_FD || m.fd < 0 ||
		    ipc_get_end(&m) != 0)
			_exit(0);
		ctrl_fd = m.fd;
		/* Before the first byte to the client: until this arrives the
		 * monitor may give the client to fresh workers. */
		ipc_init(&m, IPC_CLIENT_ACK);
		if (ipc_send(ipc_fd, &m) != 0)
			_exit(0);
	}
	session_init(s, cfg, ctrl_fd, ipc_fd);
	session_learn_addresses(s);
	implicit = config_implicit_tls(cfg, sa_port(&s->local));
	/* Behind a trusted balancer: its header, before any byte of ours. */
	proxied = proxy_trusted(&s->peer);
	if (proxied)
		proxy_prelogin(s);
	log_protocol_start(s);
	/* A client sends its TLS hello first: looking costs no wait. */
	if (implicit && !proxied && tw_rt.proxy_trusted.n > 0)
		proxy_refuse_header(s, cfg->idle_session_timeout);
	if (implicit)
		worker_start_tls(s);
	if (tw_rt.banner[0] != '\0') {
		/* vsftpd's shape: the file as 220- lines, then a bare 220. */
		ctrl_reply_text(&s->ctrl, 220, tw_rt.banner);
		ctrl_reply(&s->ctrl, 220, "%s", "");
	} else if (cfg->ftpd_banner[0] != '\0') {
		ctrl_reply(&s->ctrl, 220, "%s", cfg->ftpd_banner);
	} else {
		ctrl_reply(&s->ctrl, 220, "twinftpd ready.");
	}
	/* An FTP client speaks after the greeting: its first bytes. */
	if (!implicit && !proxied && tw_rt.proxy_trusted.n > 0)
		proxy_refuse_header(s, cfg->idle_session_timeout);
	serve_commands(s);
}

void
worker_postlogin_run(const struct tw_config *cfg, int ctrl_fd, int ipc_fd,
		     const struct worker_login *login)
{
	static struct session sess TW_PER_PROCESS;
	struct session *s = &sess;

	session_init(s, cfg, ctrl_fd, ipc_fd);
	s->peer = login->peer;
	s->local = login->local;
	s->tls = login->tls;
	s->prot_private = login->prot_private;
	s->logged_in = 1;
	log_protocol_start(s);
	s->anonymous = login->anonymous;
	tw_strlcpy(s->user, login->user, sizeof(s->user));
	/* vsftpd's "~": the directory the login starts in (commands.c). */
	s->home = getcwd(NULL, 0);
	/*
	 * A root directory the user can write to lets them plant files that
	 * libc and PAM look up by absolute path (vsftpd's rule too).
	 */
	if (login->chrooted && !cfg->allow_writeable_chroot && access("/", W_OK) == 0) {
		worker_log(s, "refusing login of %s: writable chroot", s->user);
		worker_exit_reply(s, 500, "OOPS: refusing to run with a writable root inside chroot().");
	}
	cmd_dir_message(s, 230);
	ctrl_reply(&s->ctrl, 230, "Login successful.");
	/* Credentials and sandbox set-up ran deeper than the loop will. */
	tw_stack_trim();
	serve_commands(s);
}
