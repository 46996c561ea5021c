/*
 * FTP commands of a logged-in session (RFC 959, 2389, 2428, 3659). Every
 * verb is one row of the table at the end of this file; data transfers
 * and listings live in data.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/data.h"
#include "src/proto/ftpparse.h"
#include "src/proto/listing.h"
#include "src/common/util.h"
#include "src/worker.h"

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

static int
check_path(struct session *s, const char *arg)
{
	if (ftp_path_ok(arg) == 0)
		return 1;
	ctrl_reply(&s->ctrl, 501, "Bad or missing path.");
	return 0;
}

/* --- Commands that work in both states --- */

void
cmd_feat(struct session *s, const char *arg)
{
	char facts[256];

	(void)arg;
	list_format_mlst_feat(facts, sizeof(facts), s->mlst_facts);
	ctrl_reply_cont(&s->ctrl, 211, "Features:");
	ctrl_reply_raw(&s->ctrl, " EPRT");
	ctrl_reply_raw(&s->ctrl, " EPSV");
	ctrl_reply_raw(&s->ctrl, " MDTM");
	ctrl_reply_raw(&s->ctrl, " MLST %s", facts);
	ctrl_reply_raw(&s->ctrl, " PASV");
	ctrl_reply_raw(&s->ctrl, " REST STREAM");
	ctrl_reply_raw(&s->ctrl, " SIZE");
	ctrl_reply_raw(&s->ctrl, " TVFS");
	ctrl_reply_raw(&s->ctrl, " UTF8");
	ctrl_reply(&s->ctrl, 211, "End");
}

void
cmd_opts(struct session *s, const char *arg)
{
	char facts[256];

	if (tw_strcaseeq(arg, "UTF8 ON") || tw_strcaseeq(arg, "UTF8")) {
		s->utf8 = 1;
		ctrl_reply(&s->ctrl, 200, "Always in UTF8 mode.");
	} else if (tw_strcaseeq(arg, "UTF8 OFF")) {
		s->utf8 = 0;
		ctrl_reply(&s->ctrl, 200, "UTF8 off: names still pass through byte for byte.");
	} else if (strncasecmp(arg, "MLST", 4) == 0 && (arg[4] == ' ' || arg[4] == '\0')) {
		s->mlst_facts = list_parse_mlst_opts(arg[4] ? arg + 5 : "", facts, sizeof(facts));
		ctrl_reply(&s->ctrl, 200, "MLST OPTS %s", facts);
	} else {
		ctrl_reply(&s->ctrl, 501, "Option not understood.");
	}
}

void
cmd_help(struct session *s, const char *arg)
{
	(void)arg;
	ctrl_reply_cont(&s->ctrl, 214, "The following commands are recognized.");
	ctrl_reply_raw(&s->ctrl, " ABOR ACCT ALLO APPE CDUP CWD  DELE EPRT EPSV FEAT HELP LIST MDTM MKD");
	ctrl_reply_raw(&s->ctrl, " MLSD MLST MODE NLST NOOP OPTS PASS PASV PORT PWD  QUIT REST RETR RMD");
	ctrl_reply_raw(&s->ctrl, " RNFR RNTO SITE SIZE STAT STOR STOU STRU SYST TYPE USER XCUP XCWD XMKD");
	ctrl_reply_raw(&s->ctrl, " XPWD XRMD");
	ctrl_reply(&s->ctrl, 214, "Help OK.");
}

/* --- Post-login commands --- */

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
cmd_quit(struct session *s, char *arg)
{
	(void)arg;
	ctrl_reply(&s->ctrl, 221, "Goodbye.");
	_exit(0);
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

static void
cmd_feat_row(struct session *s, char *arg)
{
	cmd_feat(s, arg);
}

static void
cmd_opts_row(struct session *s, char *arg)
{
	cmd_opts(s, arg);
}

static void
cmd_help_row(struct session *s, char *arg)
{
	cmd_help(s, arg);
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

static void
cmd_cwd(struct session *s, char *arg)
{
	if (!check_path(s, arg))
		return;
	if (chdir(arg) != 0) {
		ctrl_reply(&s->ctrl, 550, "Failed to change directory.");
		return;
	}
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

	if (!check_path(s, arg) || !check_write(s, W_MKDIR))
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
	if (!check_path(s, arg) || !check_write(s, W_OTHER))
		return;
	if (rename(rnfr_path, arg) != 0) {
		ctrl_reply(&s->ctrl, 550, "Rename failed.");
		return;
	}
	worker_xferlog(s, "RENAME %s -> %s", rnfr_path, arg);
	ctrl_reply(&s->ctrl, 250, "Rename successful.");
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
	if (tw_strcaseeq(sub, "TWTEST") && testhook_run(s, rest)) {
		return;
	} else if (tw_strcaseeq(sub, "HELP")) {
		ctrl_reply(&s->ctrl, 214, "CHMOD UMASK HELP");
	} else if (tw_strcaseeq(sub, "UMASK")) {
		mode_t old = umask(0);
		char *end;
		unsigned long v;

		umask(old);
		if (*rest == '\0') {
			ctrl_reply(&s->ctrl, 200, "Your current UMASK is 0%03o", (unsigned)old);
			return;
		}
		errno = 0;
		v = strtoul(rest, &end, 8);
		if (errno != 0 || *end != '\0' || v > 0777 || rest[0] < '0' || rest[0] > '7') {
			ctrl_reply(&s->ctrl, 501, "Bad UMASK value.");
			return;
		}
		umask((mode_t)v);
		ctrl_reply(&s->ctrl, 200, "UMASK set to 0%03lo", v);
	} else if (tw_strcaseeq(sub, "CHMOD")) {
		char *path = strchr(rest, ' ');
		unsigned long v;
		char *end;

		if (s->anonymous || !check_write(s, W_OTHER)) {
			if (s->anonymous)
				ctrl_reply(&s->ctrl, 550, "Permission denied.");
			return;
		}
		if (path == NULL) {
			ctrl_reply(&s->ctrl, 501, "SITE CHMOD needs 2 arguments.");
			return;
		}
		*path++ = '\0';
		errno = 0;
		v = strtoul(rest, &end, 8);
		if (errno != 0 || *end != '\0' || v > 07777 || rest[0] < '0' || rest[0] > '7' ||
		    !check_path(s, path))
		{
			if (errno != 0 || *end != '\0' || v > 07777)
				ctrl_reply(&s->ctrl, 501, "Bad mode.");
			return;
		}
		if (chmod(path, (mode_t)v) != 0) {
			ctrl_reply(&s->ctrl, 550, "SITE CHMOD command failed.");
			return;
		}
		worker_xferlog(s, "CHMOD %s 0%lo", path, v);
		ctrl_reply(&s->ctrl, 200, "SITE CHMOD command ok.");
	} else {
		ctrl_reply(&s->ctrl, 500, "Unknown SITE command.");
	}
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

static void
cmd_mode(struct session *s, char *arg)
{
	if (tw_strcaseeq(arg, "S"))
		ctrl_reply(&s->ctrl, 200, "Mode set to S.");
	else
		ctrl_reply(&s->ctrl, 504, "Bad MODE command.");
}

static void
cmd_stru(struct session *s, char *arg)
{
	if (tw_strcaseeq(arg, "F"))
		ctrl_reply(&s->ctrl, 200, "Structure set to F.");
	else
		ctrl_reply(&s->ctrl, 504, "Bad STRU command.");
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

static void
cmd_mdtm(struct session *s, char *arg)
{
	struct stat st;
	char stamp[32];

	if (!check_path(s, arg))
		return;
	if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode) ||
	    list_format_mdtm(stamp, sizeof(stamp), st.st_mtime, s->cfg->use_localtime) < 0) {
		ctrl_reply(&s->ctrl, 550, "Could not get file modification time.");
		return;
	}
	ctrl_reply(&s->ctrl, 213, "%s", stamp);
}

static void
cmd_mlst(struct session *s, char *arg)
{
	char line[PATH_MAX + 512];
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
	char host[64] = "?";

	if (arg[0] != '\0') {
		data_cmd_stat_list(s, arg);
		return;
	}
	if (s->peer.ss_family == AF_INET || s->peer.ss_family == AF_INET6) {
		const void *a = s->peer.ss_family == AF_INET
			? (const void *)&((const struct sockaddr_in *)&s->peer)->sin_addr
			: (const void *)&((const struct sockaddr_in6 *)&s->peer)->sin6_addr;

		inet_ntop(s->peer.ss_family, a, host, sizeof(host));
	}
	ctrl_reply_cont(&s->ctrl, 211, "FTP server status:");
	ctrl_reply_raw(&s->ctrl, "     Connected to %s", host);
	ctrl_reply_raw(&s->ctrl, "     Logged in as %s", s->user);
	ctrl_reply_raw(&s->ctrl, "     TYPE: %s", s->ascii ? "ASCII" : "BINARY");
	ctrl_reply_raw(&s->ctrl, "     Session timeout in seconds is %u",
		       s->cfg->idle_session_timeout);
	ctrl_reply_raw(&s->ctrl, "     Data connections will be %s",
		       s->pasv_fd >= 0 ? "passive" : s->port_set ? "active" : "not set up");
	ctrl_reply_raw(&s->ctrl, "     twinftpd %s", "- secure, fast, simple");
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
	if (check_path(s, arg) && check_write(s, W_UPLOAD))
		data_cmd_store(s, arg, 0, 0);
}

static void
cmd_appe(struct session *s, char *arg)
{
	if (check_path(s, arg) && check_write(s, W_OTHER))
		data_cmd_store(s, arg, 1, 0);
}

static void
cmd_stou(struct session *s, char *arg)
{
	char base[] = "file";

	if (!check_write(s, W_UPLOAD))
		return;
	if (arg[0] != '\0' && !check_path(s, arg))
		return;
	data_cmd_store(s, arg[0] != '\0' ? arg : base, 0, 1);
}

enum { ARG_NONE_OK = 0, ARG_REQUIRED = 1 };

static const struct command {
	const char *verb;
	void (*fn)(struct session *, char *);
	int arg;
} commands[] = {
	{ "USER", cmd_user, ARG_NONE_OK },
	{ "PASS", cmd_pass, ARG_NONE_OK },
	{ "ACCT", cmd_acct, ARG_NONE_OK },
	{ "QUIT", cmd_quit, ARG_NONE_OK },
	{ "NOOP", cmd_noop, ARG_NONE_OK },
	{ "SYST", cmd_syst, ARG_NONE_OK },
	{ "FEAT", cmd_feat_row, ARG_NONE_OK },
	{ "OPTS", cmd_opts_row, ARG_REQUIRED },
	{ "HELP", cmd_help_row, ARG_NONE_OK },
	{ "STAT", cmd_stat, ARG_NONE_OK },
	{ "PWD", cmd_pwd, ARG_NONE_OK },
	{ "XPWD", cmd_pwd, ARG_NONE_OK },
	{ "CWD", cmd_cwd, ARG_REQUIRED },
	{ "XCWD", cmd_cwd, ARG_REQUIRED },
	{ "CDUP", cmd_cdup, ARG_NONE_OK },
	{ "XCUP", cmd_cdup, ARG_NONE_OK },
	{ "MKD", cmd_mkd, ARG_REQUIRED },
	{ "XMKD", cmd_mkd, ARG_REQUIRED },
	{ "RMD", cmd_rmd, ARG_REQUIRED },
	{ "XRMD", cmd_rmd, ARG_REQUIRED },
	{ "DELE", cmd_dele, ARG_REQUIRED },
	{ "RNFR", cmd_rnfr, ARG_REQUIRED },
	{ "RNTO", cmd_rnto, ARG_REQUIRED },
	{ "SITE", cmd_site, ARG_REQUIRED },
	{ "TYPE", cmd_type, ARG_REQUIRED },
	{ "MODE", cmd_mode, ARG_REQUIRED },
	{ "STRU", cmd_stru, ARG_REQUIRED },
	{ "ALLO", cmd_allo, ARG_NONE_OK },
	{ "REST", cmd_rest, ARG_REQUIRED },
	{ "SIZE", cmd_size, ARG_REQUIRED },
	{ "MDTM", cmd_mdtm, ARG_REQUIRED },
	{ "MLST", cmd_mlst, ARG_NONE_OK },
	{ "MLSD", cmd_mlsd, ARG_NONE_OK },
	{ "LIST", cmd_list, ARG_NONE_OK },
	{ "NLST", cmd_nlst, ARG_NONE_OK },
	{ "PASV", cmd_pasv, ARG_NONE_OK },
	{ "EPSV", cmd_epsv, ARG_NONE_OK },
	{ "PORT", cmd_port, ARG_REQUIRED },
	{ "EPRT", cmd_eprt, ARG_REQUIRED },
	{ "RETR", cmd_retr, ARG_REQUIRED },
	{ "STOR", cmd_stor, ARG_REQUIRED },
	{ "APPE", cmd_appe, ARG_REQUIRED },
	{ "STOU", cmd_stou, ARG_NONE_OK },
	{ "ABOR", cmd_abor, ARG_NONE_OK },
};

void
cmd_dispatch(struct session *s, char *line)
{
	char *arg = strchr(line, ' ');
	size_t i;

	if (arg != NULL)
		*arg++ = '\0';
	else
		arg = line + strlen(line);
	for (i = 0; i < TW_ARRAY_LEN(commands); i++) {
		const struct command *c = &commands[i];

		if (!tw_strcaseeq(line, c->verb))
			continue;
		if (c->arg == ARG_REQUIRED && arg[0] == '\0') {
			ctrl_reply(&s->ctrl, 501, "%s needs an argument.", c->verb);
			return;
		}
		/* RNTO must follow RNFR directly (RFC 959 4.1.3). */
		if (c->fn != cmd_rnto && c->fn != cmd_rnfr)
			s->have_rnfr = 0;
		c->fn(s, arg);
		return;
	}
	if (++s->unknown_cmds > MAX_UNKNOWN_COMMANDS) {
		ctrl_reply(&s->ctrl, 421, "Too many unknown commands.");
		_exit(0);
	}
	ctrl_reply(&s->ctrl, 500, "Unknown command.");
}
