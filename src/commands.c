/*
 * FTP commands (RFC 959, 2389, 2428, 3659) in both states of a session.
 * Every verb is one row of the table at the end of this file, which says
 * what it does before and after login; the dispatcher, HELP and FEAT are
 * driven by that table. Data transfers and listings live in src/transfer.c
 * and src/listcmd.c, the data connection in src/dataconn.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tw_build.h"
#include "privsep/auth.h"
#include "privsep/ipc.h"
#include "src/common/config.h"
#include "src/data.h"
#include "src/proto/ftpparse.h"
#include "src/proto/listing.h"
#include "src/common/util.h"
#include "src/worker.h"

/* Room for the MLST fact list of FEAT and OPTS MLST (every fact named). */
#define MLST_FACTS_TEXT_MAX 256
/* An MDTM time stamp, "YYYYMMDDHHMMSS", with room to spare. */
#define MDTM_STAMP_MAX 32
/* One MLST entry: its facts and a name of up to PATH_MAX. */
#define MLST_LINE_MAX (PATH_MAX + 512)
/* The most of a message_file shown (vsftpd reads 4000 bytes). */
#define DIR_MESSAGE_MAX 4000
/* A foreign verb is logged cut to this many bytes: it is hostile input. */
#define LOGGED_VERB_MAX 16

enum write_op {
	W_UPLOAD,	/* STOR, STOU */
	W_MKDIR,	/* MKD */
	W_OTHER,	/* DELE, RMD, RNFR/RNTO, APPE, SITE CHMOD */
};

/* write_enable, and for anonymous sessions the anon_* switches. */
static int
may_write(struct session *s, enum write_op op)
{
	const struct tw_config *c = s->cfg;

	if (!c->write_enable)
		return 0;
	if (!s->anonymous)
		return 1;
	switch (op) {
	case W_UPLOAD:
		return c->anon_upload_enable;
	case W_MKDIR:
		return c->anon_mkdir_write_enable;
	default:
		return c->anon_other_write_enable;
	}
}

static int
check_write(struct session *s, enum write_op op)
{
	if (may_write(s, op))
		return 1;
	ctrl_reply(&s->ctrl, 550, "Permission denied.");
	return 0;
}

/*
 * Every command that names a path passes here (the listings through
 * data_path_denied), so this is where deny_file applies.
 */
static int
check_path(struct session *s, const char *arg)
{
	if (ftp_path_ok(arg) != 0) {
		ctrl_reply(&s->ctrl, 501, "Bad or missing path.");
		return 0;
	}
	if (data_path_denied(s, arg)) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return 0;
	}
	return 1;
}

/*
 * For a name the command creates: a path that holds CR or LF is refused
 * (ftp_name_creatable says why), with 553 as RFC 959 gives for a file
 * name not allowed.
 */
static int
check_new_name(struct session *s, const char *arg)
{
	if (ftp_name_creatable(arg) == 0)
		return 1;
	ctrl_reply(&s->ctrl, 553, "File name not allowed (CR or LF).");
	return 0;
}

/* --- Before login only: the login itself and TLS set-up --- */

static int login_tls_ok(struct session *s, int anonymous);

/* Returns the monitor's verdict on user/pass (enum ipc_login_result). */
static uint32_t
request_login(struct session *s, const char *pass)
{
	struct ipc_msg m;
	uint32_t result;

	/* The monitor ends any child forked at USER at a LOGIN. */
	s->ahead_waiting = 0;
	ipc_init(&m, IPC_LOGIN);
	ipc_put_str(&m, s->user, strlen(s->user));
	ipc_put_str(&m, pass, strlen(pass));
	ipc_put_u32(&m, (s->ctrl.ssl != NULL ? IPC_LOGIN_TLS : 0) |
		    (s->prot_private ? IPC_LOGIN_PROT_P : 0));
	if (ipc_send(s->ipc_fd, &m) != 0)
		die("monitor gone");
	explicit_bzero(m.payload, sizeof(m.payload));
	if (ipc_recv(s->ipc_fd, &m) != 0 || m.type != IPC_LOGIN_RESULT ||
	    ipc_get_u32(&m, &result) != 0 || ipc_get_end(&m) != 0)
		die("bad reply from monitor");
	/* Over TLS a login's answer carries the user's worker's end of the
	 * cleartext channel: this process becomes the relay. */
	if (result == IPC_LOGIN_OK && s->ctrl.ssl != NULL) {
		if (m.fd < 0)
			die("login over TLS without the relay's channel");
		relay_run(s, m.fd);
	}
	if (m.fd >= 0)
		close(m.fd);
	return result;
}

static void
login_pass(struct session *s, char *arg)
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

/*
 * userlist_enable: the monitor reads the list (this process cannot) and
 * says whether the name may go on to PASS, so a refused user never sends
 * a password. Returns 1 to go on; else it replied (or ended the session).
 */
static int
login_userlist_ok(struct session *s, const char *user)
{
	struct ipc_msg m;
	uint32_t result;

	if (!s->cfg->userlist_enable)
		return 1;
	ipc_init(&m, IPC_USER_CHECK);
	ipc_put_str(&m, user, strlen(user));
	if (ipc_send(s->ipc_fd, &m) != 0)
		die("monitor gone");
	if (ipc_recv(s->ipc_fd, &m) != 0 || m.type != IPC_LOGIN_RESULT || m.fd >= 0 ||
	    ipc_get_u32(&m, &result) != 0 || ipc_get_end(&m) != 0)
		die("bad reply from monitor");
	switch (result) {
	case IPC_LOGIN_OK:
		return 1;
	case IPC_LOGIN_FAIL:
		ctrl_reply(&s->ctrl, 530, "Permission denied.");
		return 0;
	case IPC_LOGIN_CLOSE:
		worker_exit_reply(s, 530, "Permission denied.");
		break;
	default:
		worker_exit_reply(s, 421, "Service not available: the user list cannot be read.");
		break;
	}
	return 0;
}

/*
 * A local user's USER: the monitor may fork the PAM child now, which
 * looks the user up and starts PAM while the password is on its way
 * (auth_ahead_start()). No answer to wait for. An anonymous USER after a
 * local one is sent too, so that the monitor ends the child still waiting
 * for that password (auth_ahead_start() forks none for an anonymous
 * name) instead of leaving it until its own wait runs out. As many of
 * both together as the monitor grants: one per LOGIN the session may
 * make (past that, a waiting child ends by its own wait).
 */
static void
login_user_ahead(struct session *s, const char *user, int anonymous)
{
	struct ipc_msg m;

	if (!s->cfg->local_enable || (anonymous && !s->ahead_waiting) ||
	    s->users_ahead >= s->cfg->max_login_fails)
		return;
	s->users_ahead++;
	s->ahead_waiting = !anonymous;
	ipc_init(&m, IPC_USER_AHEAD);
	ipc_put_str(&m, user, strlen(user));
	if (ipc_send(s->ipc_fd, &m) != 0)
		die("monitor gone");
}

static void
login_user(struct session *s, char *arg)
{
	int anonymous;

	if (arg[0] == '\0' || strlen(arg) > IPC_MAX_USER) {
		ctrl_reply(&s->ctrl, 501, "Bad user name.");
		return;
	}
	/* A refused USER forgets the name an earlier USER gave. */
	s->user[0] = '\0';
	anonymous = s->cfg->anonymous_enable && auth_is_anonymous_name(arg);
	if (!login_tls_ok(s, anonymous))
		return;
	if (!login_userlist_ok(s, arg))
		return;
	tw_strlcpy(s->user, arg, sizeof(s->user));
	if (anonymous && s->cfg->no_anon_password) {
		char empty[1] = "";

		login_pass(s, empty);
		return;
	}
	ctrl_reply(&s->ctrl, 331, "Please specify the password.");
	/* After the reply: the client's way to PASS is what it overlaps. */
	login_user_ahead(s, arg, anonymous);
}

/*
 * AUTH TLS (RFC 4217 4): 234, then the handshake on the bytes that follow
 * the line's LF. The reader took nothing past that LF, so plaintext a
 * client sent after AUTH (an injected USER in the same segment) is read
 * as the first TLS record, fails the handshake and ends the session: it
 * is never run as if it came over TLS. "SSL" and "TLS-P" are the older
 * drafts' names, which also protected the data connections.
 */
static void
login_auth(struct session *s, char *arg)
{
	int prot_p = tw_strcaseeq(arg, "SSL") || tw_strcaseeq(arg, "TLS-P");

	if (!s->cfg->ssl_enable) {
		ctrl_reply(&s->ctrl, 502, "AUTH is not enabled on this server.");
		return;
	}
	if (s->ctrl.ssl != NULL) {
		ctrl_reply(&s->ctrl, 503, "Already using TLS.");
		return;
	}
	if (!prot_p && !tw_strcaseeq(arg, "TLS") && !tw_strcaseeq(arg, "TLS-C")) {
		ctrl_reply(&s->ctrl, 504, "Unknown AUTH type.");
		return;
	}
	ctrl_reply(&s->ctrl, 234, "Proceed with negotiation.");
	worker_start_tls(s);
	s->prot_private = prot_p;
}

/*
 * The forced-TLS rules at USER, with vsftpd's replies; the monitor checks
 * them again at the login (a worker is not trusted with them).
 */
static int
login_tls_ok(struct session *s, int anonymous)
{
	const char *why = config_tls_login_refusal(s->cfg, s->ctrl.ssl != NULL, anonymous);

	if (why == NULL)
		return 1;
	ctrl_reply(&s->ctrl, 530, "%s", why);
	return 0;
}

/* PBSZ (RFC 4217 8): a stream protocol has no buffer size but 0. */
static void
cmd_pbsz(struct session *s, char *arg)
{
	(void)arg;
	if (!s->tls)
		ctrl_reply(&s->ctrl, 503, "PBSZ needs a TLS session (AUTH TLS).");
	else
		ctrl_reply(&s->ctrl, 200, "PBSZ=0");
}

/* PROT (RFC 4217 9): Clear or Private; Safe and Confidential are not offered. */
static void
cmd_prot(struct session *s, char *arg)
{
	if (!s->tls) {
		ctrl_reply(&s->ctrl, 503, "PROT needs a TLS session (AUTH TLS).");
	} else if (tw_strcaseeq(arg, "C")) {
		s->prot_private = 0;
		ctrl_reply(&s->ctrl, 200, "PROT now Clear.");
	} else if (tw_strcaseeq(arg, "P")) {
		s->prot_private = 1;
		ctrl_reply(&s->ctrl, 200, "PROT now Private.");
	} else if (tw_strcaseeq(arg, "S") || tw_strcaseeq(arg, "E")) {
		ctrl_reply(&s->ctrl, 536, "PROT not supported.");
	} else {
		ctrl_reply(&s->ctrl, 504, "PROT not recognised.");
	}
}

/*
 * CCC (RFC 4217 6) would put the control connection back in the clear,
 * where a man in the middle could change commands: refused, as vsftpd.
 */
static void
cmd_ccc(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 534, "CCC refused: the control connection stays protected.");
}

/*
 * SITE before login is only the test hook (test builds); everywhere else
 * it needs a login like any file command.
 */
static void
login_site(struct session *s, char *arg)
{
	size_t n = strlen(TESTHOOK_SITE_WORD);

	if (strncasecmp(arg, TESTHOOK_SITE_WORD, n) == 0 && arg[n] == ' ' &&
	    testhook_run(s, arg + n + 1))
		return;
	ctrl_reply(&s->ctrl, 530, "Please login with USER and PASS.");
}

/* --- Commands that work in both states --- */

static void
cmd_quit(struct session *s, char *arg)
{
	(void)arg;
	worker_exit_reply(s, 221, "Goodbye.");
}

static void
cmd_noop(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 200, "NOOP ok.");
}

static void
cmd_syst(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 215, "UNIX Type: L8");
}

/* OPTS "NAME" or "NAME args": the args ("" when none), NULL for another option. */
static const char *
option_args(const char *arg, const char *name)
{
	size_t n = strlen(name);

	if (strncasecmp(arg, name, n) != 0 || (arg[n] != ' ' && arg[n] != '\0'))
		return NULL;
	return arg[n] == ' ' ? arg + n + 1 : arg + n;
}

static void
cmd_opts(struct session *s, char *arg)
{
	char facts[MLST_FACTS_TEXT_MAX];
	const char *mlst = option_args(arg, "MLST");

	if (tw_strcaseeq(arg, "UTF8 ON") || tw_strcaseeq(arg, "UTF8")) {
		ctrl_reply(&s->ctrl, 200, "Always in UTF8 mode.");
	} else if (tw_strcaseeq(arg, "UTF8 OFF")) {
		ctrl_reply(&s->ctrl, 200, "UTF8 off: names still pass through byte for byte.");
	} else if (mlst != NULL) {
		s->mlst_facts = list_parse_mlst_opts(mlst, facts, sizeof(facts));
		ctrl_reply(&s->ctrl, 200, "MLST OPTS %s", facts);
	} else {
		ctrl_reply(&s->ctrl, 501, "Option not understood.");
	}
}

/* FEAT and HELP are defined after the verb table they list. */
static void cmd_feat(struct session *s, char *arg);
static void cmd_help(struct session *s, char *arg);

/* --- After login --- */

static void
cmd_user(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 530, "Can't change to another user.");
}

static void
cmd_pass(struct session *s, char *arg)
{
	explicit_bzero(arg, strlen(arg));
	ctrl_reply(&s->ctrl, 230, "Already logged in.");
}

static void
cmd_acct(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 502, "ACCT not implemented.");
}

static void
reply_257(struct session *s, const char *path, const char *text)
{
	char quoted[PATH_MAX * 2 + 1];

	if (ftp_quote_257(path, quoted, sizeof(quoted)) < 0) {
		ctrl_reply(&s->ctrl, 550, "Path too long.");
		return;
	}
	ctrl_reply(&s->ctrl, 257, "\"%s\" %s", quoted, text);
}

static void
cmd_pwd(struct session *s, char *arg)
{
	char cwd[PATH_MAX];

	(void)arg;
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		ctrl_reply(&s->ctrl, 550, "Cannot get the current directory.");
		return;
	}
	reply_257(s, cwd, "is the current directory");
}

/* Whether the current directory's message was shown already; marks it. */
static int
dir_message_seen(struct session *s, const struct stat *dir)
{
	unsigned i;

	for (i = 0; i < s->ndirs_seen && i < SESSION_DIRS_SEEN; i++)
		if (s->dirs_seen[i].dev == dir->st_dev && s->dirs_seen[i].ino == dir->st_ino)
			return 1;
	/* Full: the oldest is forgotten, and shown again on a later visit. */
	s->dirs_seen[s->ndirs_seen % SESSION_DIRS_SEEN].dev = dir->st_dev;
	s->dirs_seen[s->ndirs_seen % SESSION_DIRS_SEEN].ino = dir->st_ino;
	s->ndirs_seen++;
	return 0;
}

/*
 * dirmessage_enable: message_file of the directory just entered, as
 * "250-" lines before the 250 (or "230-" before the login's 230), once
 * per directory and session (vsftpd). The file is the user's or an
 * uploader's text: control bytes become '?', so it cannot end the reply
 * early or forge another.
 */
void
cmd_dir_message(struct session *s, int code)
{
	char buf[DIR_MESSAGE_MAX + 1];
	struct stat dir, st;
	ssize_t n;
	int fd;

	if (!s->cfg->dirmessage_enable || s->cfg->message_file[0] == '\0' ||
	    stat(".", &dir) != 0 || dir_message_seen(s, &dir))
		return;
	fd = open(s->cfg->message_file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, DIR_MESSAGE_MAX) : -1;
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	ctrl_reply_text(&s->ctrl, code, buf);
}

static void
cmd_cwd(struct session *s, char *arg)
{
	if (!check_path(s, arg))
		return;
	if (chdir(arg) != 0) {
		ctrl_reply(&s->ctrl, 550, "Failed to change directory.");
		return;
	}
	cmd_dir_message(s, 250);
	ctrl_reply(&s->ctrl, 250, "Directory successfully changed.");
}

static void
cmd_cdup(struct session *s, char *arg)
{
	char up[] = "..";

	(void)arg;
	cmd_cwd(s, up);
}

static void
cmd_mkd(struct session *s, char *arg)
{
	char cwd[PATH_MAX], full[PATH_MAX];

	if (!check_path(s, arg) || !check_write(s, W_MKDIR) || !check_new_name(s, arg))
		return;
	if (mkdir(arg, 0777) != 0) {
		ctrl_reply(&s->ctrl, 550, "Create directory operation failed.");
		return;
	}
	worker_xferlog(s, "MKDIR %s", arg);
	if (arg[0] == '/' || getcwd(cwd, sizeof(cwd)) == NULL ||
	    ftp_path_join(cwd, arg, full, sizeof(full)) < 0)
		reply_257(s, arg, "created");
	else
		reply_257(s, full, "created");
}

static void
cmd_rmd(struct session *s, char *arg)
{
	if (!check_path(s, arg) || !check_write(s, W_OTHER))
		return;
	if (rmdir(arg) != 0) {
		ctrl_reply(&s->ctrl, 550, "Remove directory operation failed.");
		return;
	}
	worker_xferlog(s, "RMDIR %s", arg);
	ctrl_reply(&s->ctrl, 250, "Remove directory operation successful.");
}

static void
cmd_dele(struct session *s, char *arg)
{
	struct stat st;

	if (!check_path(s, arg) || !check_write(s, W_OTHER))
		return;
	if (lstat(arg, &st) != 0 || S_ISDIR(st.st_mode) || unlink(arg) != 0) {
		ctrl_reply(&s->ctrl, 550, "Delete operation failed.");
		return;
	}
	worker_xferlog(s, "DELETE %s", arg);
	ctrl_reply(&s->ctrl, 250, "Delete operation successful.");
}

/*
 * RNFR's path: outside struct session, which lives in the one page of
 * .data every worker writes anyway (TW_PER_PROCESS); this buffer costs a
 * page only in sessions that rename.
 */
static char rnfr_path[PATH_MAX];

static void
cmd_rnfr(struct session *s, char *arg)
{
	struct stat st;

	s->have_rnfr = 0;
	if (!check_path(s, arg) || !check_write(s, W_OTHER))
		return;
	if (lstat(arg, &st) != 0 || tw_strlcpy(rnfr_path, arg, sizeof(rnfr_path)) != 0) {
		ctrl_reply(&s->ctrl, 550, "RNFR command failed.");
		return;
	}
	s->have_rnfr = 1;
	ctrl_reply(&s->ctrl, 350, "Ready for RNTO.");
}

static void
cmd_rnto(struct session *s, char *arg)
{
	int had = s->have_rnfr;

	s->have_rnfr = 0;
	if (!had) {
		ctrl_reply(&s->ctrl, 503, "RNFR required first.");
		return;
	}
	if (!check_path(s, arg) || !check_write(s, W_OTHER) || !check_new_name(s, arg))
		return;
	if (rename(rnfr_path, arg) != 0) {
		ctrl_reply(&s->ctrl, 550, "Rename failed.");
		return;
	}
	worker_xferlog(s, "RENAME %s -> %s", rnfr_path, arg);
	ctrl_reply(&s->ctrl, 250, "Rename successful.");
}

/* The largest mode SITE CHMOD sets (with setuid, setgid, sticky) and SITE UMASK takes. */
#define CHMOD_MODE_MAX 07777
#define UMASK_MAX 0777

/*
 * An octal mode: one or more digits 0-7 and nothing else (no sign, no
 * space, which strtoul would take), at most max. Returns 0 or -1.
 */
static int
parse_mode(const char *text, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	const char *p;

	if (text[0] == '\0')
		return -1;
	for (p = text; *p != '\0'; p++) {
		if (*p < '0' || *p > '7')
			return -1;
		v = v * 8 + (unsigned long)(*p - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

static void
site_umask(struct session *s, const char *arg)
{
	mode_t old = umask(0);
	unsigned long v;

	umask(old);
	if (arg[0] == '\0') {
		ctrl_reply(&s->ctrl, 200, "Your current UMASK is 0%03o", (unsigned)old);
		return;
	}
	if (parse_mode(arg, UMASK_MAX, &v) != 0) {
		ctrl_reply(&s->ctrl, 501, "Bad UMASK value.");
		return;
	}
	umask((mode_t)v);
	ctrl_reply(&s->ctrl, 200, "UMASK set to 0%03lo", v);
}

/* "<octal> <path>": the path is everything after the first space. */
static void
site_chmod(struct session *s, char *arg)
{
	char *path = strchr(arg, ' ');
	unsigned long v;

	if (s->anonymous || !s->cfg->chmod_enable || !may_write(s, W_OTHER)) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return;
	}
	if (path == NULL) {
		ctrl_reply(&s->ctrl, 501, "SITE CHMOD needs 2 arguments.");
		return;
	}
	*path++ = '\0';
	if (parse_mode(arg, CHMOD_MODE_MAX, &v) != 0) {
		ctrl_reply(&s->ctrl, 501, "Bad mode.");
		return;
	}
	path = cmd_tilde_path(s, path);
	if (!check_path(s, path))
		return;
	if (chmod(path, (mode_t)v) != 0) {
		ctrl_reply(&s->ctrl, 550, "SITE CHMOD command failed.");
		return;
	}
	worker_xferlog(s, "CHMOD %s 0%lo", path, v);
	ctrl_reply(&s->ctrl, 200, "SITE CHMOD command ok.");
}

/* SITE CHMOD <octal> <path>, SITE UMASK [<octal>], SITE HELP. */
static void
cmd_site(struct session *s, char *arg)
{
	char *sub = arg, *rest = strchr(arg, ' ');

	if (rest != NULL)
		*rest++ = '\0';
	else
		rest = sub + strlen(sub);
	if (tw_strcaseeq(sub, TESTHOOK_SITE_WORD) && testhook_run(s, rest))
		return;
	if (tw_strcaseeq(sub, "HELP"))
		ctrl_reply(&s->ctrl, 214, "CHMOD UMASK HELP");
	else if (tw_strcaseeq(sub, "UMASK"))
		site_umask(s, rest);
	else if (tw_strcaseeq(sub, "CHMOD"))
		site_chmod(s, rest);
	else
		ctrl_reply(&s->ctrl, 500, "Unknown SITE command.");
}

static void
cmd_type(struct session *s, char *arg)
{
	if (tw_strcaseeq(arg, "I") || tw_strcaseeq(arg, "L 8") || tw_strcaseeq(arg, "L8")) {
		s->ascii = 0;
		ctrl_reply(&s->ctrl, 200, "Switching to Binary mode.");
	} else if (tw_strcaseeq(arg, "A") || tw_strcaseeq(arg, "A N")) {
		s->ascii = 1;
		ctrl_reply(&s->ctrl, 200, "Switching to ASCII mode.");
	} else {
		ctrl_reply(&s->ctrl, 504, "Unrecognised TYPE command.");
	}
}

/*
 * MODE and STRU: of RFC 959's transfer modes and file structures we run
 * only stream mode and file structure, the defaults every client uses.
 */
static void
accept_only(struct session *s, const char *arg, const char *only, const char *what,
	    const char *verb)
{
	if (tw_strcaseeq(arg, only))
		ctrl_reply(&s->ctrl, 200, "%s set to %s.", what, only);
	else
		ctrl_reply(&s->ctrl, 504, "Bad %s command.", verb);
}

static void
cmd_mode(struct session *s, char *arg)
{
	accept_only(s, arg, "S", "Mode", "MODE");
}

static void
cmd_stru(struct session *s, char *arg)
{
	accept_only(s, arg, "F", "Structure", "STRU");
}

static void
cmd_allo(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 202, "ALLO command ignored.");
}

static void
cmd_rest(struct session *s, char *arg)
{
	unsigned long long v;

	if (tw_parse_uint(arg, 0, (unsigned long long)LLONG_MAX, &v) != 0) {
		ctrl_reply(&s->ctrl, 501, "Bad REST value.");
		return;
	}
	if (s->ascii && v != 0) {
		ctrl_reply(&s->ctrl, 504, "REST is not supported in ASCII mode.");
		return;
	}
	s->rest = v;
	ctrl_reply(&s->ctrl, 350, "Restart position accepted (%llu).", v);
}

static void
cmd_size(struct session *s, char *arg)
{
	struct stat st;

	if (!check_path(s, arg))
		return;
	if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode)) {
		ctrl_reply(&s->ctrl, 550, "Could not get file size.");
		return;
	}
	ctrl_reply(&s->ctrl, 213, "%lld", (long long)st.st_size);
}

/*
 * tm as local time, without mktime(): in a chroot glibc's mktime reads
 * /etc/localtime again, does not find it, and the whole session goes to
 * UTC. localtime_r uses the zone loaded before the chroot. Two passes
 * find the offset on either side of a change (DST).
 */
static time_t
local_to_time(struct tm *tm)
{
	time_t utc = timegm(tm), t;
	struct tm lt;

	if (utc == (time_t)-1 || localtime_r(&utc, &lt) == NULL)
		return (time_t)-1;
	t = utc - lt.tm_gmtoff;
	if (localtime_r(&t, &lt) == NULL)
		return (time_t)-1;
	return utc - lt.tm_gmtoff;
}

/* Sets a regular file's times (utimensat's ts); 0, or -1 with a 550 sent. */
static int
file_set_times(struct session *s, const char *path, const struct timespec ts[2])
{
	struct stat st;

	if (ts[1].tv_sec == (time_t)-1 || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    utimensat(AT_FDCWD, path, ts, 0) != 0) {
		ctrl_reply(&s->ctrl, 550, "Could not set file modification time.");
		return -1;
	}
	return 0;
}

/* mdtm_write: path's access and modification times to tm (UTC, or local). */
static void
mdtm_set(struct session *s, const char *path, struct tm *tm)
{
	time_t t = s->cfg->use_localtime ? local_to_time(tm) : timegm(tm);
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	if (file_set_times(s, path, ts) == 0)
		ctrl_reply(&s->ctrl, 213, "File modification time set.");
}

static void
cmd_mdtm(struct session *s, char *arg)
{
	struct stat st;
	struct tm tm;
	char stamp[MDTM_STAMP_MAX];
	const char *path = arg;

	/*
	 * mdtm_write (vsftpd): "MDTM YYYYMMDDHHMMSS path", when the whole
	 * argument names no file. Without the right to write it is a plain
	 * MDTM of the whole argument, which names no file: 550, as in vsftpd.
	 */
	if (s->cfg->mdtm_write && stat(arg, &st) != 0) {
		const char *p = ftp_mdtm_write_args(arg, &tm);

		if (p != NULL)
			path = cmd_tilde_path(s, arg + (p - arg));
	}
	if (!check_path(s, path))
		return;
	if (path != arg) {
		/* vsftpd: no right to write, and the whole argument names no file. */
		if (may_write(s, W_OTHER))
			mdtm_set(s, path, &tm);
		else
			ctrl_reply(&s->ctrl, 550, "Could not get file modification time.");
		return;
	}
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    list_format_mdtm(stamp, sizeof(stamp), st.st_mtime, s->cfg->use_localtime) < 0) {
		ctrl_reply(&s->ctrl, 550, "Could not get file modification time.");
		return;
	}
	ctrl_reply(&s->ctrl, 213, "%s", stamp);
}

/*
 * MFMT (draft-somers-ftp-mfxx; proftpd, pure-ftpd; FileZilla, WinSCP):
 * "MFMT YYYYMMDDHHMMSS[.fraction] path" sets path's modification time,
 * always in UTC, and leaves its access time; the answer names the time
 * set. The same right as mdtm_write's form of MDTM.
 */
static void
cmd_mfmt(struct session *s, char *arg)
{
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
	struct tm tm;
	const char *p = ftp_mdtm_write_args(arg, &tm);
	char *path;
	size_t i;
	int digits;

	if (p == NULL || strspn(arg, "0123456789") != 14) {
		ctrl_reply(&s->ctrl, 501, "Syntax: MFMT YYYYMMDDHHMMSS path.");
		return;
	}
	/* A fraction of a second: its first nine digits are nanoseconds. */
	for (i = 0, digits = arg[14] == '.'; i < 9; i++) {
		digits = digits && arg[15 + i] >= '0' && arg[15 + i] <= '9';
		ts[1].tv_nsec = ts[1].tv_nsec * 10 + (digits ? arg[15 + i] - '0' : 0);
	}
	path = cmd_tilde_path(s, arg + (p - arg));
	if (!check_path(s, path))
		return;
	if (!s->cfg->mdtm_write || !may_write(s, W_OTHER)) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return;
	}
	ts[1].tv_sec = timegm(&tm);
	if (file_set_times(s, path, ts) == 0)
		ctrl_reply(&s->ctrl, 213, "Modify=%.14s; %s", arg, path);
}

static void
cmd_mlst(struct session *s, char *arg)
{
	char line[MLST_LINE_MAX];
	const char *path = arg[0] != '\0' ? arg : ".";
	struct stat st;

	if (!s->cfg->dirlist_enable) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return;
	}
	if (!check_path(s, path))
		return;
	if (stat(path, &st) != 0 ||
	    list_format_mlst(line, sizeof(line), path, &st, MLST_KIND_ENTRY,
			     s->mlst_facts, may_write(s, W_OTHER)) < 0) {
		ctrl_reply(&s->ctrl, 550, "Could not list that path.");
		return;
	}
	ctrl_reply_cont(&s->ctrl, 250, "Listing %s", path);
	ctrl_reply_raw(&s->ctrl, " %s", line);
	ctrl_reply(&s->ctrl, 250, "End");
}

static void
cmd_stat(struct session *s, char *arg)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (arg[0] != '\0') {
		data_cmd_stat_list(s, arg);
		return;
	}
	if (s->peer.ss_family == AF_INET || s->peer.ss_family == AF_INET6) {
		const void *a = s->peer.ss_family == AF_INET
			? (const void *)&((const struct sockaddr_in *)&s->peer)->sin_addr
			: (const void *)&((const struct sockaddr_in6 *)&s->peer)->sin6_addr;

		if (inet_ntop(s->peer.ss_family, a, host, sizeof(host)) == NULL)
			tw_strlcpy(host, "?", sizeof(host));
	}
	ctrl_reply_cont(&s->ctrl, 211, "FTP server status:");
	ctrl_reply_raw(&s->ctrl, "     Connected to %s", host);
	ctrl_reply_raw(&s->ctrl, "     Logged in as %s", s->user);
	ctrl_reply_raw(&s->ctrl, "     TYPE: %s", s->ascii ? "ASCII" : "BINARY");
	/* vsftpd's lines, which scripts and people know. */
	if (data_xfer_rate(s) == 0)
		ctrl_reply_raw(&s->ctrl, "     No session bandwidth limit");
	else
		ctrl_reply_raw(&s->ctrl, "     Session bandwidth limit in byte/s is %u",
			       data_xfer_rate(s));
	ctrl_reply_raw(&s->ctrl, "     Session timeout in seconds is %u",
		       s->cfg->idle_session_timeout);
	ctrl_reply_raw(&s->ctrl, "     Control connection is %s",
		       s->tls ? "encrypted" : "plain text");
	ctrl_reply_raw(&s->ctrl, "     Data connections will be %s",
		       s->prot_private ? "encrypted" : "plain text");
	ctrl_reply_raw(&s->ctrl, "     twinftpd %s - secure, fast, simple", TW_VERSION);
	ctrl_reply(&s->ctrl, 211, "End of status");
}

static void
cmd_abor(struct session *s, char *arg)
{
	(void)arg;
	data_close_pasv(s);
	s->port_set = 0;
	ctrl_reply(&s->ctrl, 225, "No transfer to ABOR.");
}

static void cmd_pasv(struct session *s, char *arg) { data_cmd_pasv(s, 0, arg); }
static void cmd_epsv(struct session *s, char *arg) { data_cmd_pasv(s, 1, arg); }
static void cmd_port(struct session *s, char *arg) { data_cmd_port(s, 0, arg); }
static void cmd_eprt(struct session *s, char *arg) { data_cmd_port(s, 1, arg); }
static void cmd_list(struct session *s, char *arg) { data_cmd_list(s, arg, LISTMODE_LIST); }
static void cmd_nlst(struct session *s, char *arg) { data_cmd_list(s, arg, LISTMODE_NLST); }
static void cmd_mlsd(struct session *s, char *arg) { data_cmd_list(s, arg, LISTMODE_MLSD); }

static void
cmd_retr(struct session *s, char *arg)
{
	if (!check_path(s, arg))
		return;
	if (!s->cfg->download_enable) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return;
	}
	data_cmd_retr(s, arg);
}

static void
cmd_stor(struct session *s, char *arg)
{
	if (check_path(s, arg) && check_write(s, W_UPLOAD) && check_new_name(s, arg))
		data_cmd_store(s, arg, 0, 0);
}

static void
cmd_appe(struct session *s, char *arg)
{
	if (check_path(s, arg) && check_write(s, W_OTHER) && check_new_name(s, arg))
		data_cmd_store(s, arg, 1, 0);
}

static void
cmd_stou(struct session *s, char *arg)
{
	char base[] = "file";

	if (!check_write(s, W_UPLOAD))
		return;
	if (arg[0] != '\0' && (!check_path(s, arg) || !check_new_name(s, arg)))
		return;
	data_cmd_store(s, arg[0] != '\0' ? arg : base, 0, 1);
}

/*
 * Verbs of other protocols: a browser or mail client tricked into talking
 * to us before login (cross-protocol attacks) gets the connection closed,
 * not replies it might interpret.
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

typedef void verb_handler(struct session *, char *);

enum verb_arg { ARG_OPTIONAL, ARG_REQUIRED };

/*
 * The verb table, in alphabetical order (HELP and FEAT list in table
 * order). Columns:
 *   before  what the verb does before login. NULL: it needs a login (530).
 *           DESIGN.md: only the login, TLS set-up and harmless informational
 *           verbs work before login.
 *   after   what it does after login. NULL: unknown after login (500,
 *           counted like any unknown verb): TLS set-up, which must come
 *           before login, and verbs we do not implement (SMNT, REIN, LPRT,
 *           LPSV), which before login still only get 530.
 *   arg     ARG_REQUIRED: after login an empty argument gets 501 and the
 *           handler never sees it. Before login the verbs that work take
 *           an empty argument themselves, and the rest get 530 whatever
 *           it is.
 *   feat    the verb's FEAT line (RFC 2389), or NULL.
 * HELP lists the verbs that work after login.
 */
static const struct verb {
	const char *name;
	verb_handler *before;
	verb_handler *after;
	enum verb_arg arg;
	const char *feat;
} verbs[] = {
	/* name    before login     after login  argument      FEAT line */
	{ "ABOR", NULL,            cmd_abor,    ARG_OPTIONAL, NULL },
	{ "ACCT", NULL,            cmd_acct,    ARG_OPTIONAL, NULL },
	{ "ALLO", NULL,            cmd_allo,    ARG_OPTIONAL, NULL },
	{ "APPE", NULL,            cmd_appe,    ARG_REQUIRED, NULL },
	{ "AUTH", login_auth,      NULL,        ARG_OPTIONAL, "AUTH TLS" },
	{ "CCC",  NULL,            cmd_ccc,     ARG_OPTIONAL, NULL },
	{ "CDUP", NULL,            cmd_cdup,    ARG_OPTIONAL, NULL },
	{ "CWD",  NULL,            cmd_cwd,     ARG_REQUIRED, NULL },
	{ "DELE", NULL,            cmd_dele,    ARG_REQUIRED, NULL },
	{ "EPRT", NULL,            cmd_eprt,    ARG_REQUIRED, "EPRT" },
	{ "EPSV", NULL,            cmd_epsv,    ARG_OPTIONAL, "EPSV" },
	{ "FEAT", cmd_feat,        cmd_feat,    ARG_OPTIONAL, NULL },
	{ "HELP", cmd_help,        cmd_help,    ARG_OPTIONAL, NULL },
	{ "LIST", NULL,            cmd_list,    ARG_OPTIONAL, NULL },
	{ "LPRT", NULL,            NULL,        ARG_OPTIONAL, NULL },
	{ "LPSV", NULL,            NULL,        ARG_OPTIONAL, NULL },
	{ "MDTM", NULL,            cmd_mdtm,    ARG_REQUIRED, "MDTM" },
	{ "MFMT", NULL,            cmd_mfmt,    ARG_REQUIRED, "MFMT" },
	{ "MKD",  NULL,            cmd_mkd,     ARG_REQUIRED, NULL },
	{ "MLSD", NULL,            cmd_mlsd,    ARG_OPTIONAL, NULL },
	{ "MLST", NULL,            cmd_mlst,    ARG_OPTIONAL, "MLST" },
	{ "MODE", NULL,            cmd_mode,    ARG_REQUIRED, NULL },
	{ "NLST", NULL,            cmd_nlst,    ARG_OPTIONAL, NULL },
	{ "NOOP", cmd_noop,        cmd_noop,    ARG_OPTIONAL, NULL },
	{ "OPTS", cmd_opts,        cmd_opts,    ARG_REQUIRED, NULL },
	{ "PASS", login_pass,      cmd_pass,    ARG_OPTIONAL, NULL },
	{ "PASV", NULL,            cmd_pasv,    ARG_OPTIONAL, "PASV" },
	{ "PBSZ", cmd_pbsz,        cmd_pbsz,    ARG_OPTIONAL, "PBSZ" },
	{ "PORT", NULL,            cmd_port,    ARG_REQUIRED, NULL },
	{ "PROT", cmd_prot,        cmd_prot,    ARG_REQUIRED, "PROT" },
	{ "PWD",  NULL,            cmd_pwd,     ARG_OPTIONAL, NULL },
	{ "QUIT", cmd_quit,        cmd_quit,    ARG_OPTIONAL, NULL },
	{ "REIN", NULL,            NULL,        ARG_OPTIONAL, NULL },
	{ "REST", NULL,            cmd_rest,    ARG_REQUIRED, "REST STREAM" },
	{ "RETR", NULL,            cmd_retr,    ARG_REQUIRED, NULL },
	{ "RMD",  NULL,            cmd_rmd,     ARG_REQUIRED, NULL },
	{ "RNFR", NULL,            cmd_rnfr,    ARG_REQUIRED, NULL },
	{ "RNTO", NULL,            cmd_rnto,    ARG_REQUIRED, NULL },
	{ "SITE", login_site,      cmd_site,    ARG_REQUIRED, NULL },
	{ "SIZE", NULL,            cmd_size,    ARG_REQUIRED, "SIZE" },
	{ "SMNT", NULL,            NULL,        ARG_OPTIONAL, NULL },
	{ "STAT", NULL,            cmd_stat,    ARG_OPTIONAL, NULL },
	{ "STOR", NULL,            cmd_stor,    ARG_REQUIRED, NULL },
	{ "STOU", NULL,            cmd_stou,    ARG_OPTIONAL, NULL },
	{ "STRU", NULL,            cmd_stru,    ARG_REQUIRED, NULL },
	{ "SYST", cmd_syst,        cmd_syst,    ARG_OPTIONAL, NULL },
	{ "TYPE", NULL,            cmd_type,    ARG_REQUIRED, NULL },
	{ "USER", login_user,      cmd_user,    ARG_OPTIONAL, NULL },
	{ "XCUP", NULL,            cmd_cdup,    ARG_OPTIONAL, NULL },
	{ "XCWD", NULL,            cmd_cwd,     ARG_REQUIRED, NULL },
	{ "XMKD", NULL,            cmd_mkd,     ARG_REQUIRED, NULL },
	{ "XPWD", NULL,            cmd_pwd,     ARG_OPTIONAL, NULL },
	{ "XRMD", NULL,            cmd_rmd,     ARG_REQUIRED, NULL },
};

/*
 * Features that are no one verb's: TVFS (RFC 3659: paths are Unix-like)
 * and UTF8 (RFC 2640: names pass through as UTF-8 bytes). They sort after
 * every verb's line.
 */
static const char *const other_features[] = { "TVFS", "UTF8" };

/* The TLS verbs' features only where TLS is offered (AUTH: explicitly). */
static int
feature_offered(const struct session *s, const struct verb *v)
{
	if (v->before == login_auth)
		return s->cfg->ssl_enable && !s->tls;
	if (v->after == cmd_pbsz || v->after == cmd_prot)
		return s->cfg->ssl_enable;
	/* Before the login it is not known whose rights count: the server's. */
	if (v->after == cmd_mfmt)
		return s->cfg->mdtm_write && s->cfg->write_enable;
	return 1;
}

static void
cmd_feat(struct session *s, char *arg)
{
	char facts[MLST_FACTS_TEXT_MAX];
	size_t i;

	(void)arg;
	list_format_mlst_feat(facts, sizeof(facts), s->mlst_facts);
	ctrl_reply_cont(&s->ctrl, 211, "Features:");
	for (i = 0; i < TW_ARRAY_LEN(verbs); i++) {
		const char *feat = verbs[i].feat;

		if (!feature_offered(s, &verbs[i]))
			continue;
		/* RFC 3659 7.8: the MLST line names the facts, selected marked. */
		if (feat != NULL && tw_strcaseeq(feat, "MLST"))
			ctrl_reply_raw(&s->ctrl, " %s %s", feat, facts);
		else if (feat != NULL)
			ctrl_reply_raw(&s->ctrl, " %s", feat);
	}
	for (i = 0; i < TW_ARRAY_LEN(other_features); i++)
		ctrl_reply_raw(&s->ctrl, " %s", other_features[i]);
	ctrl_reply(&s->ctrl, 211, "End");
}

/* HELP's verb lines: so many verbs, each padded to this width. */
#define HELP_VERBS_PER_LINE 14
#define HELP_VERB_WIDTH 4

static void
help_line_flush(struct session *s, char *line, size_t *len)
{
	/* The last verb's padding is not sent. */
	while (*len > 0 && line[*len - 1] == ' ')
		(*len)--;
	ctrl_reply_raw(&s->ctrl, "%.*s", (int)*len, line);
	*len = 0;
}

static void
cmd_help(struct session *s, char *arg)
{
	char line[HELP_VERBS_PER_LINE * (HELP_VERB_WIDTH + 1) + 1];
	size_t i, len = 0, listed = 0;
	int w;

	(void)arg;
	ctrl_reply_cont(&s->ctrl, 214, "The following commands are recognized.");
	for (i = 0; i < TW_ARRAY_LEN(verbs); i++) {
		if (verbs[i].after == NULL)
			continue;
		w = strlen(verbs[i].name) > HELP_VERB_WIDTH ? -1 :
		    tw_snprintf(line + len, sizeof(line) - len, " %-*s", HELP_VERB_WIDTH,
				verbs[i].name);
		if (w < 0)
			bug("%s: verb %s is wider than HELP's column", __func__, verbs[i].name);
		len += (size_t)w;
		if (++listed % HELP_VERBS_PER_LINE == 0)
			help_line_flush(s, line, &len);
	}
	if (len > 0)
		help_line_flush(s, line, &len);
	ctrl_reply(&s->ctrl, 214, "Help OK.");
}

static void
unknown_verb(struct session *s, const char *verb)
{
	if (!s->logged_in && is_foreign_verb(verb)) {
		worker_log(s, "closing session: %.*s is not an FTP command", LOGGED_VERB_MAX, verb);
		_exit(0);
	}
	if (++s->unknown_cmds > MAX_UNKNOWN_COMMANDS)
		worker_exit_reply(s, 421, "Too many unknown commands.");
	ctrl_reply(&s->ctrl, 500, "Unknown command.");
}

/* Whether verb is a word of list, a comma-separated list of verbs. */
static int
verb_in_list(const char *list, const char *verb)
{
	size_t n = strlen(verb);

	while (*list != '\0') {
		size_t len = strcspn(list, ",");

		if (len == n && strncasecmp(list, verb, n) == 0)
			return 1;
		list += len;
		if (*list == ',')
			list++;
	}
	return 0;
}

/* cmds_allowed and cmds_denied, after login, as vsftpd reads them. */
static int
verb_permitted(const struct session *s, const char *verb)
{
	const struct tw_config *c = s->cfg;

	if (c->cmds_allowed[0] != '\0' && !verb_in_list(c->cmds_allowed, verb))
		return 0;
	return !verb_in_list(c->cmds_denied, verb);
}

static const struct verb *
find_verb(const char *name)
{
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(verbs); i++)
		if (tw_strcaseeq(name, verbs[i].name))
			return &verbs[i];
	return NULL;
}

/* The verbs whose whole argument is a path, for "~" (vsftpd's tilde). */
static int
takes_path(verb_handler *fn)
{
	static verb_handler *const path_verbs[] = {
		cmd_cwd, cmd_retr, cmd_stor, cmd_appe, cmd_stou, cmd_dele, cmd_mkd, cmd_rmd,
		cmd_rnfr, cmd_rnto, cmd_size, cmd_mdtm, cmd_mlst, cmd_mlsd, cmd_list, cmd_nlst,
		cmd_stat,
	};
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(path_verbs); i++)
		if (fn == path_verbs[i])
			return 1;
	return 0;
}

/* The most of a passwd file tilde_user_enable reads (vsftpd reads it all). */
#define PASSWD_MAX (4u << 20)

/*
 * tilde_user_enable: "~user[/rest]" from the passwd file this session
 * sees (its chroot's /etc/passwd, as vsftpd reads it; a regular file,
 * its first PASSWD_MAX bytes' whole lines, never NSS: the sandbox has no
 * directory service). 0 and the path in out, or -1: not a user there.
 */
static int
tilde_user(const char *arg, char *out, size_t cap)
{
	struct stat st, fst;
	char *text = NULL;
	size_t len = 0, want;
	int fd, r = -1;

	/* Never opened unless a regular file: a device's open acts. */
	if (stat("/etc/passwd", &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return -1;
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_dev != st.st_dev ||
	    fst.st_ino != st.st_ino)
		goto out;
	want = (uint64_t)fst.st_size < PASSWD_MAX ? (size_t)fst.st_size : PASSWD_MAX;
	text = malloc(want);
	if (text == NULL)
		goto out;
	/* Bounded: at most want bytes, and a read of 0 ends it. */
	while (len < want) {
		ssize_t n = read(fd, text + len, want - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	/* Cut short: the last line may be a part of one. */
	if (len == PASSWD_MAX || (uint64_t)fst.st_size > len) {
		char *nl = memrchr(text, '\n', len);

		len = nl != NULL ? (size_t)(nl - text) + 1 : 0;
	}
	r = ftp_tilde_user(arg, text, len, out, cap) < 0 ? -1 : 0;
out:
	free(text);
	close(fd);
	return r;
}

/*
 * vsftpd's tilde: a path argument "~" or "~/rest" names the directory
 * the login started in (PWD's answer after the login: "/" in a chroot).
 * With tilde_user_enable "~user" and "~user/rest" name that user's home
 * (tilde_user()); else, or when it names no user, "~user" stays a name.
 * Returns arg, or the expanded path in a buffer of ours.
 */
char *
cmd_tilde_path(struct session *s, char *arg)
{
	static char buf[PATH_MAX];
	const char *home = s->home;

	if (arg[0] == '~' && arg[1] != '\0' && arg[1] != '/')
		return s->cfg->tilde_user_enable && tilde_user(arg, buf, sizeof(buf)) == 0
		       ? buf : arg;
	if (home == NULL || arg[0] != '~')
		return arg;
	if (strcmp(home, "/") == 0 && arg[1] == '/')
		home = "";
	if (tw_snprintf(buf, sizeof(buf), "%s%s", home, arg + 1) < 0)
		return arg;
	return buf;
}

void
cmd_dispatch(struct session *s, char *line)
{
	char *arg = strchr(line, ' ');
	const struct verb *v;
	verb_handler *fn;

	if (arg != NULL)
		*arg++ = '\0';
	else
		arg = line + strlen(line);
	if (s->logged_in && !verb_permitted(s, line)) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return;
	}
	v = find_verb(line);
	fn = v == NULL ? NULL : s->logged_in ? v->after : v->before;
	if (fn == NULL && (v == NULL || s->logged_in)) {
		unknown_verb(s, line);
		return;
	}
	/*
	 * A known verb ends a run of unknown ones: the limit is on a client
	 * that speaks no FTP, not on one that now and then tries a verb we
	 * lack over a long session.
	 */
	s->unknown_cmds = 0;
	if (fn == NULL) {
		ctrl_reply(&s->ctrl, 530, "Please login with USER and PASS.");
		return;
	}
	if (s->logged_in && v->arg == ARG_REQUIRED && arg[0] == '\0') {
		ctrl_reply(&s->ctrl, 501, "%s needs an argument.", v->name);
		return;
	}
	/* RNTO must follow RNFR directly (RFC 959 4.1.3). */
	if (fn != cmd_rnto && fn != cmd_rnfr)
		s->have_rnfr = 0;
	if (s->logged_in && arg[0] == '~' && takes_path(fn))
		arg = cmd_tilde_path(s, arg);
	fn(s, arg);
}
