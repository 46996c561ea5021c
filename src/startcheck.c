/*
 * The facts outside the config that a start or a login depends on,
 * checked for `twinftpd -t`. Each check reports and carries on, so that
 * one run names every problem. These run as the operator who called -t
 * (usually root): a check that cannot look (EACCES) says so.
 */
#include "src/startcheck.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/util.h"
#include "src/tcpwrap.h"

/* Where libpam looks for a service's file: the admin's, then the vendor's. */
static const char *const pam_dirs[] = { "/etc/pam.d", "/usr/lib/pam.d" };

struct checker {
	cfg_report_fn report;
	void *ctx;
	unsigned errors;
};

static void __attribute__((format(printf, 3, 4)))
say(struct checker *ck, enum cfg_severity sev, const char *fmt, ...)
{
	char msg[CONFIG_MAX_MSG];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ck->report(ck->ctx, sev, msg);
	if (sev == CFG_ERROR)
		ck->errors++;
}

/* The user, or NULL after saying why it cannot serve as option's user. */
static const struct passwd *
check_user(struct checker *ck, const char *option, const char *name)
{
	const struct passwd *pw = getpwnam(name);

	if (pw == NULL) {
		say(ck, CFG_ERROR, "%s: user '%s' does not exist", option, name);
		return NULL;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		say(ck, CFG_ERROR, "%s: user '%s' must not be root or in group root",
		    option, name);
		return NULL;
	}
	return pw;
}

/* path must exist and be of type (S_IFDIR or S_IFREG), named what. */
static void
check_kind(struct checker *ck, const char *option, const char *path, mode_t type,
	   const char *what)
{
	struct stat st;

	if (stat(path, &st) != 0)
		say(ck, CFG_ERROR, "%s: %s %s: %s", option, what, path, strerror(errno));
	else if ((st.st_mode & S_IFMT) != type)
		say(ck, CFG_ERROR, "%s: %s is not a %s", option, path, what);
}

static void
check_dir(struct checker *ck, const char *option, const char *path)
{
	check_kind(ck, option, path, S_IFDIR, "directory");
}

/* As main.c's start wants it: root-owned, writable by nobody else. */
static void
check_secure_chroot(struct checker *ck, const char *dir)
{
	char parent[PATH_MAX];
	struct stat st;
	char *slash;

	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			say(ck, CFG_ERROR, "secure_chroot_dir: %s is not a directory", dir);
		else if (st.st_uid != 0 || (st.st_mode & 022) != 0)
			say(ck, CFG_ERROR, "secure_chroot_dir: %s must be owned by root and "
			    "not writable by group or others", dir);
		return;
	}
	/* A start creates the last component (mode 0555), not its parents. */
	if (tw_strlcpy(parent, dir, sizeof(parent)) != 0 ||
	    (slash = strrchr(parent, '/')) == NULL)
		return;
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (stat(parent, &st) == 0 && S_ISDIR(st.st_mode))
		say(ck, CFG_NOTE, "secure_chroot_dir: %s does not exist; a start creates it",
		    dir);
	else
		say(ck, CFG_ERROR, "secure_chroot_dir: %s does not exist, and neither does "
		    "%s, so a start cannot create it", dir, parent);
}

/* The most of a PAM service file that is looked at for its session lines. */
#define PAM_FILE_LINES_MAX 1000

/*
 * session_support: Linux-PAM refuses to open a session (PAM_PERM_DENIED)
 * for a service whose file has no session line, so every local login
 * would be refused. A line of type session (or -session, "session
 * include ...") counts, and so does an @include, which may bring some.
 */
static void
check_pam_sessions(struct checker *ck, const char *path)
{
	FILE *f = fopen(path, "re");
	char line[512];
	unsigned n = 0;

	if (f == NULL)
		return;
	while (n++ < PAM_FILE_LINES_MAX && fgets(line, sizeof(line), f) != NULL) {
		const char *t = line + strspn(line, " \t");

		if (*t == '-')
			t++;
		if (strncmp(t, "session", 7) == 0 || strncmp(t, "@include", 8) == 0) {
			fclose(f);
			return;
		}
	}
	fclose(f);
	say(ck, CFG_NOTE, "session_support=YES: PAM service file %s has no session line: "
	    "PAM refuses to open a session for it, so every local login would be refused",
	    path);
}

/*
 * libpam does not fail on a service without a file: it uses "other",
 * which on Debian denies everyone, and elsewhere may allow anyone.
 */
static void
check_pam_service(struct checker *ck, const char *service, int sessions)
{
	const char *wrapped = getenv("PAM_WRAPPER_SERVICE_DIR");
	char path[PATH_MAX];
	size_t i;

	/*
	 * Under pam_wrapper (cwrap's PAM for tests, PAM_WRAPPER=1 and the
	 * library preloaded) libpam reads its services from that directory
	 * only: look where PAM will.
	 */
	if (wrapped != NULL && getenv("PAM_WRAPPER") != NULL &&
	    strcmp(getenv("PAM_WRAPPER"), "1") == 0) {
		if (snprintf(path, sizeof(path), "%s/%s", wrapped, service) >= (int)sizeof(path) ||
		    access(path, F_OK) != 0) {
			say(ck, CFG_ERROR, "pam_service_name: no PAM service file %s", path);
			return;
		}
	} else {
		for (i = 0; i < TW_ARRAY_LEN(pam_dirs); i++)
			if (snprintf(path, sizeof(path), "%s/%s", pam_dirs[i], service) <
			    (int)sizeof(path) && access(path, F_OK) == 0)
				break;
		if (i == TW_ARRAY_LEN(pam_dirs)) {
			say(ck, CFG_ERROR, "pam_service_name: no PAM service file %s/%s (PAM "
			    "would use the service \"other\" instead)", pam_dirs[0], service);
			return;
		}
	}
	if (sessions)
		check_pam_sessions(ck, path);
}

/* A log file's directory must exist: the start opens (creates) the file. */
static void
check_log_dir(struct checker *ck, const char *option, const char *file)
{
	char dir[PATH_MAX];
	char *slash;

	if (tw_strlcpy(dir, file, sizeof(dir)) != 0 || (slash = strrchr(dir, '/')) == NULL)
		return;
	*(slash == dir ? slash + 1 : slash) = '\0';
	check_dir(ck, option, dir);
}

/* pasv_addr_resolve: the name must have an IPv4 address now. */
static void
check_pasv_name(struct checker *ck, const char *name)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(name, NULL, &hints, &res);
	/* A start only warns (derived.c): so does -t. */
	if (rc != 0 || res == NULL)
		say(ck, CFG_NOTE, "pasv_address %s (pasv_addr_resolve): %s; a start announces "
		    "the address each client connected to until a reload resolves it", name,
		    rc != 0 ? gai_strerror(rc) : "no IPv4 address");
	if (res != NULL)
		freeaddrinfo(res);
}

void
startcheck_vsftpd_files(struct tw_config *cfg, void (*warn)(const char *msg))
{
	/* vsftpd's upstream names, then those Red Hat's package compiles in. */
	struct {
		const char *option;
		int enabled;
		char *file;
		const char *ours, *vsftpd[2];
	} lists[] = {
		{ "userlist_file", cfg->userlist_enable, cfg->userlist_file,
		  "/etc/twinftpd.user_list", { "/etc/vsftpd.user_list", "/etc/vsftpd/user_list" } },
		{ "chroot_list_file", cfg->chroot_list_enable, cfg->chroot_list_file,
		  "/etc/twinftpd.chroot_list",
		  { "/etc/vsftpd.chroot_list", "/etc/vsftpd/chroot_list" } },
		{ "banned_email_file", cfg->anonymous_enable && cfg->deny_email_enable,
		  cfg->banned_email_file, "/etc/twinftpd.banned_emails",
		  { "/etc/vsftpd.banned_emails", "/etc/vsftpd/banned_emails" } },
		{ "email_password_file", cfg->anonymous_enable && cfg->secure_email_list_enable,
		  cfg->email_password_file, "/etc/twinftpd.email_passwords",
		  { "/etc/vsftpd.email_passwords", "/etc/vsftpd/email_passwords" } },
	};
	char msg[CONFIG_MAX_MSG];
	const char *slash = strrchr(cfg->pam_service_name, '/');
	size_t i, j;

	/*
	 * pam_service_name=/etc/pam.d/vsftpd: Linux-PAM's pam_start() takes
	 * the last part of a name with '/' in it, so vsftpd used the service
	 * "vsftpd". So does twinftpd, saying so.
	 */
	if (slash != NULL && slash[1] != '\0') {
		(void)snprintf(msg, sizeof(msg), "pam_service_name %s is a path: PAM uses the "
			       "service %s (the last part, as PAM does for vsftpd)",
			       cfg->pam_service_name, slash + 1);
		memmove(cfg->pam_service_name, slash + 1, strlen(slash + 1) + 1);
		warn(msg);
	}
	for (i = 0; i < TW_ARRAY_LEN(lists); i++) {
		int ours;

		if (!lists[i].enabled || strcmp(lists[i].file, lists[i].ours) != 0)
			continue;
		ours = access(lists[i].ours, F_OK) == 0;
		for (j = 0; j < TW_ARRAY_LEN(lists[i].vsftpd); j++) {
			if (access(lists[i].vsftpd[j], F_OK) != 0)
				continue;
			/*
			 * The config relied on vsftpd's name for the list: with
			 * no list of twinftpd's own, vsftpd's is the one it
			 * meant (not an empty list, not every login refused).
			 */
			if (!ours) {
				(void)snprintf(msg, sizeof(msg), "%s: twinftpd's %s does not "
					       "exist; vsftpd's %s is read instead (set %s to "
					       "silence this)", lists[i].option, lists[i].ours,
					       lists[i].vsftpd[j], lists[i].option);
				(void)tw_strlcpy(lists[i].file, lists[i].vsftpd[j], CONFIG_MAX_STR);
			} else {
				(void)snprintf(msg, sizeof(msg), "%s is twinftpd's %s, not vsftpd's "
					       "%s (which exists too): to use that list instead, "
					       "set %s=%s", lists[i].option, lists[i].ours,
					       lists[i].vsftpd[j], lists[i].option,
					       lists[i].vsftpd[j]);
			}
			warn(msg);
			break;
		}
	}
	if (cfg->tcp_wrappers)
		tcpwrap_warn_vsftpd_rules(warn);
}

unsigned
startcheck_report(const struct tw_config *cfg, cfg_report_fn report, void *ctx)
{
	struct checker ck = { report, ctx, 0 };
	const struct passwd *pw;

	(void)check_user(&ck, "nopriv_user", cfg->nopriv_user);
	if (cfg->secure_chroot_dir[0] == '/')
		check_secure_chroot(&ck, cfg->secure_chroot_dir);
	/* Without the account a start warns and refuses anonymous logins
	 * (derived.c), as vsftpd does: a note here, not a problem. */
	if (cfg->anonymous_enable) {
		pw = NULL;
		if (getpwnam(cfg->ftp_username) == NULL)
			say(&ck, CFG_NOTE, "ftp_username: user '%s' does not exist: anonymous "
			    "logins will be refused (anonymous_enable=YES, vsftpd's default)",
			    cfg->ftp_username);
		else
			pw = check_user(&ck, "ftp_username", cfg->ftp_username);
		if (cfg->anon_root[0] != '\0')
			check_dir(&ck, "anon_root", cfg->anon_root);
		else if (pw != NULL)
			check_dir(&ck, "anon_root (empty: the home of ftp_username)", pw->pw_dir);
	}
	if (cfg->local_enable) {
		if (cfg->pam_service_name[0] != '\0' && strchr(cfg->pam_service_name, '/') == NULL)
			check_pam_service(&ck, cfg->pam_service_name, cfg->session_support);
		/* With the token in it, it names a directory per user. */
		if (cfg->local_root[0] == '/' && (cfg->user_sub_token[0] == '\0' ||
		    strstr(cfg->local_root, cfg->user_sub_token) == NULL))
			check_dir(&ck, "local_root", cfg->local_root);
	}
	if (cfg->local_enable && cfg->guest_enable)
		(void)check_user(&ck, "guest_username", cfg->guest_username);
	if (cfg->tcp_wrappers) {
		char why[512];

		if (tcpwrap_load(why, sizeof(why)) != 0)
			say(&ck, CFG_ERROR, "%s", why);
	}
	/* root is allowed here (vsftpd's default): it only owns files. */
	if (cfg->chown_uploads && getpwnam(cfg->chown_username) == NULL)
		say(&ck, CFG_ERROR, "chown_username: user '%s' does not exist",
		    cfg->chown_username);
	if (cfg->user_config_dir[0] == '/')
		check_kind(&ck, "user_config_dir", cfg->user_config_dir, S_IFDIR, "directory");
	if (cfg->banner_file[0] == '/')
		check_kind(&ck, "banner_file", cfg->banner_file, S_IFREG, "file");
	if (cfg->userlist_enable && cfg->userlist_file[0] == '/')
		check_kind(&ck, "userlist_file", cfg->userlist_file, S_IFREG, "file");
	if (cfg->chroot_list_enable && cfg->chroot_list_file[0] == '/')
		check_kind(&ck, "chroot_list_file", cfg->chroot_list_file, S_IFREG, "file");
	if (cfg->anonymous_enable && cfg->deny_email_enable)
		check_kind(&ck, "banned_email_file", cfg->banned_email_file, S_IFREG, "file");
	if (cfg->anonymous_enable && cfg->secure_email_list_enable)
		check_kind(&ck, "email_password_file", cfg->email_password_file, S_IFREG, "file");
	if (!cfg->syslog_enable && cfg->log_file[0] == '/')
		check_log_dir(&ck, "log_file", cfg->log_file);
	if (cfg->xferlog_enable && (cfg->xferlog_std_format || cfg->dual_log_enable) &&
	    cfg->xferlog_file[0] == '/')
		check_log_dir(&ck, "xferlog_file", cfg->xferlog_file);
	if (config_pasv_is_name(cfg))
		check_pasv_name(&ck, cfg->pasv_address);
	return ck.errors;
}
