/*
 * Protocol worker main loops. Pre-login: only the commands DESIGN.md
 * allows before login; PASS goes to the monitor as an IPC_LOGIN request.
 * Post-login: the full command set (commands.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "privsep/auth.h"
#include "src/common/config.h"
#include "privsep/ipc.h"
#include "src/proto/listing.h"
#include "src/common/log.h"
#include "src/common/util.h"
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

static void
session_init(struct session *s, const struct tw_config *cfg, int ctrl_fd, int ipc_fd)
{
	socklen_t len;

	/*
	 * s is static and still all zero in this fresh process (see
	 * TW_PER_PROCESS): no memset needed.
	 */
	s->cfg = cfg;
	s->ipc_fd = ipc_fd;
	s->pasv_fd = -1;
	s->mlst_facts = MLST_ALL;
	ctrl_init(&s->ctrl, ctrl_fd);
	len = sizeof(s->peer);
	if (getpeername(ctrl_fd, (struct sockaddr *)&s->peer, &len) != 0)
		die("getpeername: %s", strerror(errno));
	len = sizeof(s->local);
	if (getsockname(ctrl_fd, (struct sockaddr *)&s->local, &len) != 0)
		die("getsockname: %s", strerror(errno));
}

/*
 * Verbs of other protocols: a browser or mail client tricked into talking
 * to us (cross-protocol attacks) gets the connection closed, not replies
 * it might interpret.
 */
static int
is_foreign_verb(const char *verb)
{
	static const char *const foreign[] = {
		"GET", "POST", "HEAD", "PUT", "CONNECT", "OPTIONS", "TRACE", "PATCH",
		"DELETE", "HELO", "EHLO", "MAIL", "RCPT", "DATA", "STARTTLS",
	};
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(foreign); i++)
		if (tw_strcaseeq(verb, foreign[i]))
			return 1;
	return 0;
}

/* FTP verbs that exist but need a login. */
static int
is_login_verb(const char *verb)
{
	static const char *const verbs[] = {
		"ACCT", "CWD", "XCWD", "CDUP", "XCUP", "SMNT", "REIN", "PORT", "PASV",
		"EPRT", "EPSV", "TYPE", "STRU", "MODE", "RETR", "STOR", "STOU", "APPE",
		"ALLO", "REST", "RNFR", "RNTO", "ABOR", "DELE", "RMD", "XRMD", "MKD",
		"XMKD", "PWD", "XPWD", "LIST", "NLST", "SITE", "STAT", "SIZE", "MDTM",
		"MLSD", "MLST", "LPRT", "LPSV",
	};
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(verbs); i++)
		if (tw_strcaseeq(verb, verbs[i]))
			return 1;
	return 0;
}

/* Splits "VERB arg" in place; returns the argument ("" when none). */
static char *
split_verb(char *line)
{
	char *sp = strchr(line, ' ');

	if (sp == NULL)
		return line + strlen(line);
	*sp = '\0';
	return sp + 1;
}

static void __attribute__((noreturn))
worker_exit_reply(struct session *s, int code, const char *text)
{
	ctrl_reply(&s->ctrl, code, "%s", text);
	_exit(0);
}

/* Reads a line; handles every non-line outcome by closing the session. */
static void
read_command(struct session *s, char *line, size_t cap)
{
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

/* Returns the monitor's verdict on user/pass (enum ipc_login_result). */
static uint32_t
request_login(struct session *s, const char *pass)
{
	struct ipc_msg m;
	uint32_t result;

	ipc_init(&m, IPC_LOGIN);
	ipc_put_str(&m, s->user, strlen(s->user));
	ipc_put_str(&m, pass, strlen(pass));
	if (ipc_send(s->ipc_fd, &m) != 0)
		die("monitor gone");
	explicit_bzero(m.payload, sizeof(m.payload));
	if (ipc_recv(s->ipc_fd, &m) != 0 || m.type != IPC_LOGIN_RESULT ||
	    ipc_get_u32(&m, &result) != 0 || ipc_get_end(&m) != 0)
		die("bad reply from monitor");
	return result;
}

static void prelogin_pass(struct session *s, char *arg);

static void
prelogin_user(struct session *s, const char *arg)
{
	if (arg[0] == '\0' || strlen(arg) > IPC_MAX_USER) {
		ctrl_reply(&s->ctrl, 501, "Bad user name.");
		return;
	}
	tw_strlcpy(s->user, arg, sizeof(s->user));
	if (s->cfg->anonymous_enable && s->cfg->no_anon_password &&
	    auth_is_anonymous_name(arg)) {
		char empty[1] = "";

		prelogin_pass(s, empty);
		return;
	}
	ctrl_reply(&s->ctrl, 331, "Please specify the password.");
}

static void
prelogin_pass(struct session *s, char *arg)
{
	uint32_t r;

	if (s->user[0] == '\0') {
		ctrl_reply(&s->ctrl, 503, "Login with USER first.");
		return;
	}
	if (strlen(arg) > IPC_MAX_PASS) {
		explicit_bzero(arg, strlen(arg));
		ctrl_reply(&s->ctrl, 530, "Login incorrect.");
		return;
	}
	r = request_login(s, arg);
	explicit_bzero(arg, strlen(arg));
	/*
	 * On success the monitor ends this process and starts the user's
	 * worker, which sends 230; we only wait here to be killed.
	 */
	if (r == IPC_LOGIN_OK) {
		pause();
		_exit(0);
	}
	s->user[0] = '\0';
	if (r == IPC_LOGIN_CLOSE)
		worker_exit_reply(s, 530, "Login incorrect.");
	ctrl_reply(&s->ctrl, 530, "Login incorrect.");
}

void
worker_prelogin_run(const struct tw_config *cfg, int ctrl_fd, int ipc_fd)
{
	static struct session sess TW_PER_PROCESS;
	struct session *s = &sess;
	char line[CTRL_MAX_LINE + 1];

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
	if (cfg->ftpd_banner[0] != '\0')
		ctrl_reply(&s->ctrl, 220, "%s", cfg->ftpd_banner);
	else
		ctrl_reply(&s->ctrl, 220, "twinftpd ready.");
	for (;;) {
		char *arg;

		read_command(s, line, sizeof(line));
		arg = split_verb(line);
		if (tw_strcaseeq(line, "USER")) {
			prelogin_user(s, arg);
		} else if (tw_strcaseeq(line, "PASS")) {
			prelogin_pass(s, arg);
		} else if (tw_strcaseeq(line, "QUIT")) {
			worker_exit_reply(s, 221, "Goodbye.");
		} else if (tw_strcaseeq(line, "NOOP")) {
			ctrl_reply(&s->ctrl, 200, "NOOP ok.");
		} else if (tw_strcaseeq(line, "SYST")) {
			ctrl_reply(&s->ctrl, 215, "UNIX Type: L8");
		} else if (tw_strcaseeq(line, "FEAT")) {
			cmd_feat(s, arg);
		} else if (tw_strcaseeq(line, "OPTS")) {
			cmd_opts(s, arg);
		} else if (tw_strcaseeq(line, "HELP")) {
			cmd_help(s, arg);
		} else if (tw_strcaseeq(line, "AUTH")) {
			ctrl_reply(&s->ctrl, 502, "AUTH is not enabled on this server.");
		} else if (tw_strcaseeq(line, "PBSZ") || tw_strcaseeq(line, "PROT")) {
			ctrl_reply(&s->ctrl, 503, "PBSZ and PROT need a TLS session (AUTH TLS).");
		} else if (tw_strcaseeq(line, "SITE") && strncasecmp(arg, "TWTEST ", 7) == 0 &&
			   testhook_run(s, arg + 7)) {
			continue;
		} else if (is_foreign_verb(line)) {
			worker_log(s, "closing session: %.16s is not an FTP command", line);
			_exit(0);
		} else if (is_login_verb(line)) {
			ctrl_reply(&s->ctrl, 530, "Please login with USER and PASS.");
		} else {
			if (++s->unknown_cmds > MAX_UNKNOWN_COMMANDS)
				worker_exit_reply(s, 421, "Too many unknown commands.");
			ctrl_reply(&s->ctrl, 500, "Unknown command.");
		}
	}
}

void
worker_postlogin_run(const struct tw_config *cfg, int ctrl_fd, int ipc_fd,
		     const struct worker_login *login)
{
	static struct session sess TW_PER_PROCESS;
	struct session *s = &sess;
	char line[CTRL_MAX_LINE + 1];

	session_init(s, cfg, ctrl_fd, ipc_fd);
	s->logged_in = 1;
	s->anonymous = login->anonymous;
	s->chrooted = login->chrooted;
	tw_strlcpy(s->user, login->user, sizeof(s->user));
	/*
	 * A root directory the user can write to lets them plant files that
	 * libc and PAM look up by absolute path (vsftpd's rule too).
	 */
	if (s->chrooted && !cfg->allow_writeable_chroot && access("/", W_OK) == 0) {
		worker_log(s, "refusing login of %s: writable chroot", s->user);
		worker_exit_reply(s, 500, "OOPS: refusing to run with a writable root inside chroot().");
	}
	ctrl_reply(&s->ctrl, 230, "Login successful.");
	/* Credentials and sandbox set-up ran deeper than the loop will. */
	tw_stack_trim();
	for (;;) {
		read_command(s, line, sizeof(line));
		cmd_dispatch(s, line);
	}
}
