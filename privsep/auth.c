#include "privsep/auth.h"

#include "tw_build.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <grp.h>
#include <netdb.h>
#include <linux/capability.h>
#include <paths.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <security/pam_appl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmpx.h>

#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/runtime.h"
#include "sandbox/sandbox.h"
#include "src/common/util.h"

#define AUTH_LIST_MAX_BYTES (1024 * 1024)

int
auth_is_anonymous_name(const char *user)
{
	return tw_strcaseeq(user, "anonymous") || tw_strcaseeq(user, "ftp");
}

int
auth_name_in_file(const char *file, const char *name)
{
	char line[IPC_MAX_USER + 64];
	size_t total = 0;
	FILE *f;
	int found = 0;

	int cut = 0;	/* the line read continues a longer one */

	f = fopen(file, "re");
	if (f == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		size_t n = strlen(line);
		int part = cut;

		total += n;
		/* Past the bound the list is not read whole: as unreadable. */
		if (total > AUTH_LIST_MAX_BYTES) {
			fclose(f);
			errno = EFBIG;
			return -1;
		}
		/* A line longer than any name: none of its pieces is a line. */
		cut = n > 0 && line[n - 1] != '\n' && !feof(f);
		if (part || cut)
			continue;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
				 line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		if (line[0] == '#' || n == 0)
			continue;
		found = strcmp(line, name) == 0;
	}
	fclose(f);
	return found;
}

int
auth_userlist_allows(const struct tw_config *cfg, const char *user)
{
	int listed = auth_name_in_file(cfg->userlist_file, user);

	if (listed < 0) {
		tw_log(TW_LOG_ERR, "cannot read userlist_file %s: %s; every login is refused "
		       "until it can be", cfg->userlist_file, strerror(errno));
		return -1;
	}
	if (listed == cfg->userlist_deny) {
		tw_log(TW_LOG_INFO, "user %s refused by userlist_file", user);
		return 0;
	}
	return 1;
}

struct pam_conv_data {
	const char *user;
	const char *pass;
};

static int
pam_conversation(int n, const struct pam_message **msg, struct pam_response **resp,
		 void *appdata)
{
	const struct pam_conv_data *d = appdata;
	struct pam_response *r;
	int i;

	if (n <= 0 || n > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	r = calloc((size_t)n, sizeof(*r));
	if (r == NULL)
		return PAM_BUF_ERR;
	for (i = 0; i < n; i++) {
		const char *answer = NULL;

		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
			answer = d->pass;
			break;
		case PAM_PROMPT_ECHO_ON:
			answer = d->user;
			break;
		case PAM_ERROR_MSG:
		case PAM_TEXT_INFO:
			continue;
		default:
			goto fail;
		}
		r[i].resp = strdup(answer);
		if (r[i].resp == NULL)
			goto fail;
	}
	*resp = r;
	return PAM_SUCCESS;
fail:
	for (i = 0; i < n; i++) {
		if (r[i].resp != NULL) {
			explicit_bzero(r[i].resp, strlen(r[i].resp));
			free(r[i].resp);
		}
	}
	free(r);
	return PAM_CONV_ERR;
}

void
auth_preload(const struct tw_config *cfg)
{
	static pam_handle_t *keep;
	static struct pam_conv_data none = { "", "" };
	static struct pam_conv conv = { pam_conversation, &none };

	/*
	 * pam_start() loads every module of the service. Nothing is asked
	 * and nobody is authenticated with this handle; it only keeps the
	 * modules mapped (shared, read-only) in every forked child.
	 */
	if (cfg->local_enable && keep == NULL &&
	    pam_start(cfg->pam_service_name, "twinftpd-preload", &conv, &keep) != PAM_SUCCESS)
		keep = NULL;
}

/*
 * Which PAM answers are the client's doing (a wrong password, an unknown
 * or locked account) rather than PAM's own trouble (a module or a
 * directory service that does not answer).
 */
static int
pam_denied(int rc)
{
	switch (rc) {
	case PAM_AUTH_ERR:
	case PAM_USER_UNKNOWN:
	case PAM_MAXTRIES:
	case PAM_CRED_INSUFFICIENT:
	case PAM_PERM_DENIED:
	case PAM_ACCT_EXPIRED:
	case PAM_NEW_AUTHTOK_REQD:
	case PAM_AUTHTOK_EXPIRED:
		return 1;
	default:
		return 0;
	}
}

/*
 * The reverse name comes from whoever runs the client's reverse zone: it
 * counts only when it resolves back to the client's address (as OpenSSH's
 * UseDNS and libwrap check), so that a zone cannot name its host
 * "localhost" or a name that a pam_access rule allows.
 */
static int
name_confirmed(const char *name, const struct sockaddr_storage *peer)
{
	struct addrinfo hints, *res = NULL, *a;
	int same = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = peer->ss_family;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return 0;
	for (a = res; a != NULL && !same; a = a->ai_next) {
		if (a->ai_family == AF_INET && peer->ss_family == AF_INET)
			same = memcmp(&((struct sockaddr_in *)a->ai_addr)->sin_addr,
				      &((const struct sockaddr_in *)peer)->sin_addr,
				      sizeof(struct in_addr)) == 0;
		else if (a->ai_family == AF_INET6 && peer->ss_family == AF_INET6)
			same = memcmp(&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr,
				      &((const struct sockaddr_in6 *)peer)->sin6_addr,
				      sizeof(struct in6_addr)) == 0;
	}
	freeaddrinfo(res);
	return same;
}

int
auth_rhost(const char *peer_ip, int reverse, char *out, size_t outsz)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = 0;

	memset(&ss, 0, sizeof(ss));
	if (reverse && inet_pton(AF_INET, peer_ip, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		len = sizeof(*v4);
	} else if (reverse && inet_pton(AF_INET6, peer_ip, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		len = sizeof(*v6);
	}
	/* NI_NAMEREQD: no name, no answer (not the address spelled out). */
	if (len > 0 && getnameinfo((struct sockaddr *)&ss, len, out, (socklen_t)outsz,
				   NULL, 0, NI_NAMEREQD) == 0 &&
	    name_confirmed(out, &ss))
		return 1;
	return tw_strlcpy(out, peer_ip, outsz) == 0 ? 0 : -1;
}

/*
 * In the PAM child: PAM's part of a login, begun before the password
 * (pam_begin: the client's host name, pam_start, the items) and ended
 * with it (pam_check). The conversation's data lives here, as long as
 * the handle does.
 */
struct pam_login {
	struct pam_conv_data d;
	struct pam_conv conv;
	pam_handle_t *ph;	/* NULL: not started (AUTH_UNAVAILABLE) */
	int rc;			/* PAM's answer so far */
};

static void
pam_begin(const struct tw_config *cfg, const char *user, const char *peer_ip,
	  struct pam_login *pl)
{
	char rhost[NI_MAXHOST];

	pl->d.user = user;
	pl->d.pass = "";
	pl->conv.conv = pam_conversation;
	pl->conv.appdata_ptr = &pl->d;
	pl->ph = NULL;
	pl->rc = PAM_SYSTEM_ERR;
	/* reverse_lookup_enable: the client's name, else its address. */
	switch (auth_rhost(peer_ip, cfg->reverse_lookup_enable, rhost, sizeof(rhost))) {
	case -1:
		return;
	case 1:
		tw_log(TW_LOG_INFO, "reverse_lookup_enable: PAM is given the host name %s "
		       "for %s", rhost, peer_ip);
		break;
	default:
		break;
	}
	if (pam_start(cfg->pam_service_name, user, &pl->conv, &pl->ph) != PAM_SUCCESS) {
		pl->ph = NULL;
		return;
	}
	/* Modules that limit by source (pam_access, pam_faillock) need the
	 * client's address: without it no login is checked. */
	pl->rc = pam_set_item(pl->ph, PAM_RHOST, rhost);
	if (pl->rc == PAM_SUCCESS)
		pl->rc = pam_set_item(pl->ph, PAM_TTY, "ftp");
}

/*
 * In the PAM child: AUTH_OK = authenticated and account valid. With keep
 * (session_support), a success leaves the handle open in *keep, for the
 * session; any other outcome ends it.
 */
static int
pam_check(const struct tw_config *cfg, const char *user, const char *pass,
	  struct pam_login *pl, pam_handle_t **keep)
{
	int rc = pl->rc;

	if (pl->ph == NULL)
		return AUTH_UNAVAILABLE;
	pl->d.pass = pass;
	if (rc == PAM_SUCCESS)
		rc = pam_authenticate(pl->ph, PAM_DISALLOW_NULL_AUTHTOK);
	if (rc == PAM_SUCCESS)
		rc = pam_acct_mgmt(pl->ph, 0);
	if (rc == PAM_SUCCESS && keep != NULL) {
		*keep = pl->ph;
		return AUTH_OK;
	}
	pam_end(pl->ph, rc);
	pl->ph = NULL;
	if (rc == PAM_SUCCESS)
		return AUTH_OK;
	if (pam_denied(rc))
		return AUTH_DENIED;
	tw_log(TW_LOG_ERR, "PAM service %s could not check user %s: %s",
	       cfg->pam_service_name, user, pam_strerror(NULL, rc));
	return AUTH_UNAVAILABLE;
}

static int
fill_groups(const struct passwd *pw, struct auth_user *u)
{
	int n = AUTH_MAX_GROUPS;

	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &n) < 0) {
		tw_log(TW_LOG_ERR, "user %s is in more than %d groups", pw->pw_name,
		       AUTH_MAX_GROUPS);
		return -1;
	}
	u->ngroups = n;
	return 0;
}

/*
 * user_sub_token: every token in local_root replaced by the user's name
 * (local_root=/home/$USER/ftp). The name comes from the user database,
 * but a name that is empty, ".", ".." or holds a '/' would make the path
 * name another directory: refused.
 */
static int
sub_user_token(const char *tmpl, const char *token, const char *name, char *out, size_t outsz)
{
	size_t tlen = strlen(token), nlen = strlen(name), n = 0;

	if (nlen == 0 || strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -1;
	while (*tmpl != '\0') {
		if (strncmp(tmpl, token, tlen) == 0) {
			if (n + nlen >= outsz)
				return -1;
			memcpy(out + n, name, nlen);
			n += nlen;
			tmpl += tlen;
		} else {
			if (n + 1 >= outsz)
				return -1;
			out[n++] = *tmpl++;
		}
	}
	out[n] = '\0';
	return 0;
}

/* Who a login runs as: the ftp account, the user's own, or guest_username. */
enum login_kind { LOGIN_LOCAL, LOGIN_ANONYMOUS, LOGIN_GUEST };

/*
 * tmpl (local_root when is_root, else a home directory) with
 * user_sub_token replaced by the login name: in local_root always, in a
 * home where it occurs. 0, or -1 (logged) when no usable name comes out.
 */
static int
expand_dir(const char *tmpl, int is_root, const char *token, const char *login, char *out,
	   size_t outsz)
{
	if (token[0] != '\0' && (is_root || strstr(tmpl, token) != NULL)) {
		if (sub_user_token(tmpl, token, login, out, outsz) != 0) {
			tw_log(TW_LOG_ERR, "%s for user %s: no usable directory name after "
			       "user_sub_token", is_root ? "local_root" : "home directory", login);
			return -1;
		}
		return 0;
	}
	return tw_strlcpy(out, tmpl, outsz) == 0 ? 0 : -1;
}

/*
 * The directory a non-anonymous login starts in (and is chrooted to when
 * chrooted): local_root, or the account's home, with user_sub_token
 * replaced by the login name in either (vsftpd replaces it in both), so
 * that one guest account serves /srv/ftp/$USER for every virtual user.
 */
static int
local_dir(const struct tw_config *cfg, const struct passwd *pw, const char *login,
	  char *out, size_t outsz)
{
	return expand_dir(cfg->local_root[0] != '\0' ? cfg->local_root : pw->pw_dir,
			  cfg->local_root[0] != '\0', cfg->user_sub_token, login, out, outsz);
}

/*
 * passwd_chroot_enable: a home directory such as /srv/jail/./home/bob
 * puts a chrooted login's jail at /srv/jail and its start at /home/bob
 * inside it, and takes precedence over local_root (vsftpd; user_sub_token
 * is replaced in the home first). 1 with jail and start filled when the
 * home holds "/./", 0 when it does not, -1 (logged) when it cannot be used.
 */
static int
passwd_jail(const struct tw_config *cfg, const struct passwd *pw, const char *login,
	    char *jail, size_t jailsz, char *start, size_t startsz)
{
	const char *mark;
	char home[PATH_MAX];
	size_t n;

	if (expand_dir(pw->pw_dir, 0, cfg->user_sub_token, login, home, sizeof(home)) != 0)
		return -1;
	mark = strstr(home, "/./");
	if (mark == NULL)
		return 0;
	n = (size_t)(mark - home);
	if (n == 0 || home[0] != '/') {
		tw_log(TW_LOG_ERR, "login of %s refused: passwd_chroot_enable: home directory "
		       "%s names no jail before its /./", login, home);
		return -1;
	}
	if (n >= jailsz)
		return -1;
	memcpy(jail, home, n);
	jail[n] = '\0';
	return tw_snprintf(start, startsz, "/%s", mark + 3) < 0 ? -1 : 1;
}

/* 0 when dir is a directory; else -1, and the log names it and the login. */
static int
login_dir_check(const char *name, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0) {
		tw_log(TW_LOG_ERR, "login of %s refused: its directory %s: %s", name, dir,
		       strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		tw_log(TW_LOG_ERR, "login of %s refused: %s is not a directory", name, dir);
		return -1;
	}
	return 0;
}

/*
 * u->name is the login name; pw the account the session runs as (for a
 * guest, guest_username's, not the login name's).
 */
static int
fill_user(const struct tw_config *cfg, const struct passwd *pw, enum login_kind kind,
	  struct auth_user *u)
{
	char dir[PATH_MAX], jail_start[PATH_MAX];
	const char *root;
	int chrooted, jailed = 0;

	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->guest = kind == LOGIN_GUEST;
	/* vsftpd: a guest without virtual_use_local_privs is anonymous in
	 * all but its name, and always chrooted. */
	u->anonymous = kind == LOGIN_ANONYMOUS ||
		       (kind == LOGIN_GUEST && !cfg->virtual_use_local_privs);
	if (kind == LOGIN_ANONYMOUS && cfg->anon_root[0] == '\0' && pw->pw_dir[0] == '\0') {
		tw_log(TW_LOG_ERR, "ftp_username %s has no home directory and anon_root is empty",
		       cfg->ftp_username);
		return -1;
	}
	if (u->uid == 0 || u->gid == 0) {
		/* A root session would defeat every wall we build. */
		tw_log(TW_LOG_WARN, "refusing login of %s: uid or gid 0%s", u->name,
		       kind == LOGIN_GUEST ? " (guest_username)" : "");
		return -1;
	}
	if (kind == LOGIN_ANONYMOUS) {
		root = cfg->anon_root[0] != '\0' ? cfg->anon_root : pw->pw_dir;
		chrooted = 1;
		u->ngroups = 0;
	} else {
		if (local_dir(cfg, pw, u->name, dir, sizeof(dir)) != 0)
			return -1;
		root = dir;
		chrooted = cfg->chroot_local_user;
		if (cfg->chroot_list_enable) {
			int listed = auth_name_in_file(cfg->chroot_list_file, u->name);

			/* Unread, the list could leave a user unjailed: refused. */
			if (listed < 0) {
				tw_log(TW_LOG_ERR, "login of %s refused: chroot_list_file %s: %s",
				       u->name, cfg->chroot_list_file, strerror(errno));
				return -1;
			}
			if (listed)
				chrooted = !chrooted;
		}
		if (u->anonymous) {
			chrooted = 1;
			u->ngroups = 0;
		} else if (fill_groups(pw, u) != 0) {
			return -1;
		}
		if (cfg->passwd_chroot_enable) {
			jailed = passwd_jail(cfg, pw, u->name, dir, sizeof(dir), jail_start,
					     sizeof(jail_start));
			if (jailed < 0)
				return -1;
		}
	}
	u->umask = (mode_t)(u->anonymous ? cfg->anon_umask : cfg->local_umask);
	/*
	 * Checked here, not found missing by the worker after OK LOGIN: the
	 * client gets 530 and the log names the directory.
	 */
	if (login_dir_check(u->name, root) != 0)
		return -1;
	if (jailed) {
		char full[PATH_MAX];

		if (tw_snprintf(full, sizeof(full), "%s%s", root, jail_start) < 0 ||
		    login_dir_check(u->name, full) != 0)
			return -1;
		/* Chrooted: the jail, and the start inside it; else the home. */
		if (tw_strlcpy(u->chroot_dir, chrooted ? root : "", sizeof(u->chroot_dir)) != 0 ||
		    tw_strlcpy(u->start_dir, chrooted ? jail_start : full,
			       sizeof(u->start_dir)) != 0)
			return -1;
		return 0;
	}
	if (chrooted) {
		if (tw_strlcpy(u->chroot_dir, root, sizeof(u->chroot_dir)) != 0)
			return -1;
		tw_strlcpy(u->start_dir, "/", sizeof(u->start_dir));
	} else {
		u->chroot_dir[0] = '\0';
		if (tw_strlcpy(u->start_dir, root, sizeof(u->start_dir)) != 0)
			return -1;
	}
	return 0;
}

/* Room for one getpwnam_r() entry: a name, a home, a shell, a GECOS. */
#define AUTH_PW_BUF 16384

/* In the short-lived child: a local login, begun before the password. */
struct local_login {
	char buf[AUTH_PW_BUF];
	struct passwd pwbuf, *pw;
	int lookup;
	struct pam_login pam;
};

static void
local_login_begin(const struct tw_config *cfg, const char *user, const char *peer_ip,
		  struct local_login *ll)
{
	/* Into a buffer of our own: PAM's lookups cannot overwrite it. */
	ll->pw = NULL;
	ll->lookup = getpwnam_r(user, &ll->pwbuf, ll->buf, sizeof(ll->buf), &ll->pw);
	pam_begin(cfg, user, peer_ip, &ll->pam);
}

/*
 * The rest of it, with the password. AUTH_OK = *u filled. Past PAM the
 * password was right: a user the database cannot give or the server
 * refuses to run is the server's matter, not a guess.
 */
static int
local_login_finish(const struct tw_config *cfg, const char *user, const char *pass,
		   struct local_login *ll, struct auth_user *u, pam_handle_t **keep)
{
	struct passwd *pw = ll->pw;
	int rc = pam_check(cfg, user, pass, &ll->pam, keep);

	/* PAM runs for unknown users too, so they cost the same time. */
	if (rc != AUTH_OK)
		return rc;
	if (cfg->guest_enable) {
		/* A virtual user: PAM knows the name, the user database need not. */
		pw = getpwnam(cfg->guest_username);
		if (pw == NULL) {
			tw_log(TW_LOG_ERR, "guest_username %s does not exist", cfg->guest_username);
			return AUTH_UNAVAILABLE;
		}
		return fill_user(cfg, pw, LOGIN_GUEST, u) == 0 ? AUTH_OK : AUTH_UNAVAILABLE;
	}
	if (ll->lookup != 0) {
		tw_log(TW_LOG_ERR, "user database, user %s: %s", user, strerror(ll->lookup));
		return AUTH_UNAVAILABLE;
	}
	if (pw == NULL)
		return AUTH_DENIED;
	return fill_user(cfg, pw, LOGIN_LOCAL, u) == 0 ? AUTH_OK : AUTH_UNAVAILABLE;
}

/*
 * The PAM child's one answer. Its SIGSYS report (below) is shorter, and a
 * child that died before answering wrote nothing else.
 */
struct auth_answer {
	struct auth_user u;	/* with AUTH_OK only */
	int32_t result;		/* enum auth_result */
};
/* What goes over the pipe: the two parts back to back, without the
 * struct's tail padding. */
#define AUTH_ANSWER_LEN (sizeof(struct auth_user) + sizeof(int32_t))
_Static_assert(offsetof(struct auth_answer, result) == sizeof(struct auth_user),
	       "the monitor reads the answer's two parts back to back");
_Static_assert(RLIM_NLIMITS <= AUTH_RLIMITS, "a login record carries every resource limit");

/*
 * A PAM or NSS module that makes a call outside the monitor's policy kills
 * the child (SIGSYS). Its report handler writes this record on the
 * result pipe first (it writes nothing else before a result), so the
 * monitor names the call in its log: the operator learns which module
 * needs what, not only that the login "could not be checked".
 */
struct auth_sigsys_report {
	char magic[4];
	int32_t nr, role;
};

static const char auth_sigsys_magic[4] = { 'S', 'Y', 'S', '!' };
static int auth_report_fd TW_PER_PROCESS = -1;
/* The PAM child itself: a process a module forks inherits the handler,
 * and must not write a report ahead of the child's result. */
static pid_t auth_report_pid TW_PER_PROCESS;

/* Runs in the SIGSYS handler: getpid() and one write(), async-signal-safe. */
static void
auth_report_violation(long nr, enum sandbox_role role)
{
	struct auth_sigsys_report r;

	if (getpid() != auth_report_pid)
		return;

	memcpy(r.magic, auth_sigsys_magic, sizeof(r.magic));
	r.nr = nr >= 0 && nr <= INT32_MAX ? (int32_t)nr : -1;
	r.role = (int32_t)role;
	(void)!write(auth_report_fd, &r, sizeof(r));
}

/* The log line for a PAM child that died of a signal. */
static void
auth_child_died(const char *user, int status, const void *buf, ssize_t n)
{
	struct auth_sigsys_report r;

	if (WTERMSIG(status) == SIGSYS && n == (ssize_t)sizeof(r)) {
		memcpy(&r, buf, sizeof(r));
		if (memcmp(r.magic, auth_sigsys_magic, sizeof(r.magic)) == 0) {
			tw_log(TW_LOG_ERR, "PAM child for user \"%s\" killed by seccomp: "
			       "forbidden syscall %s (%d) under the %s policy (a PAM or NSS "
			       "module needs it: please report it)", user,
			       sandbox_syscall_name(r.nr), (int)r.nr,
			       sandbox_role_name((enum sandbox_role)r.role));
			return;
		}
	}
	tw_log(TW_LOG_ERR, "PAM child for user \"%s\" died of signal %d (%s)", user,
	       WTERMSIG(status), strsignal(WTERMSIG(status)));
}

/* len bytes, or what came before the end of the pipe. */
static size_t
read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/*
 * session_support (vsftpd's option): the PAM child of a successful local
 * login opens a PAM session and writes the login to utmp and wtmp, then
 * stays, as root, for the session's life: PAM closes a session with the
 * handle that opened it. It reads nothing but one socket pair with the
 * monitor and holds no other descriptor than the log's. The monitor ends
 * it with a byte (auth_session_end()), or by dying: either way it closes
 * the session, writes the logout and exits. Without the option, nothing
 * of this runs and the child ends with its answer, as before.
 */

/* How long a session's end waits for PAM and the records to be done. */
#define SESSION_END_WAIT_MS 10000

/* In the monitor: the holding child and its end of the pair, or -1. */
static pid_t session_holder TW_PER_PROCESS = -1;
static int session_fd TW_PER_PROCESS = -1;

/* The utmp or wtmp file: path, or in a test build the test's own file
 * that the variable env names (e2e: not the machine's). */
static const char *
record_file(const char *path, const char *env)
{
#if TW_TEST_HOOKS
	if (getenv(env) != NULL)
		return getenv(env);
#else
	(void)env;
#endif
	return path;
}

/* A utmp field: the text's bytes, NUL-padded, not always terminated. */
static void
utmp_field(char *field, size_t size, const char *text)
{
	memset(field, 0, size);
	if (text != NULL)
		memcpy(field, text, strnlen(text, size));
}

/*
 * The session's login (USER_PROCESS) or logout (DEAD_PROCESS) record, in
 * utmp and wtmp, as vsftpd writes them: the line is "ftpd:" and the
 * monitor's pid (vsftpd's is "vsftpd:PID"), which is also the record's
 * pid, alive for the session (pam_limits' maxlogins counts the records
 * whose process lives). A file that cannot be written loses its record,
 * as in vsftpd.
 */
static void
session_record(pid_t monitor, const char *user, const char *host)
{
	struct utmpx ut;
	struct timeval tv;
	char line[sizeof(ut.ut_line) + 1];

	memset(&ut, 0, sizeof(ut));
	ut.ut_type = user != NULL ? USER_PROCESS : DEAD_PROCESS;
	ut.ut_pid = monitor;
	(void)snprintf(line, sizeof(line), "ftpd:%d", (int)monitor);
	utmp_field(ut.ut_line, sizeof(ut.ut_line), line);
	utmp_field(ut.ut_user, sizeof(ut.ut_user), user);
	utmp_field(ut.ut_host, sizeof(ut.ut_host), host);
	(void)gettimeofday(&tv, NULL);
	ut.ut_tv.tv_sec = (int32_t)tv.tv_sec;
	ut.ut_tv.tv_usec = (int32_t)tv.tv_usec;
	if (utmpxname(record_file(_PATH_UTMP, "TW_TEST_UTMP")) == 0) {
		setutxent();
		(void)pututxline(&ut);
		endutxent();
	}
	updwtmpx(record_file(_PATH_WTMP, "TW_TEST_WTMP"), &ut);
}

/* This process's resource limits (one it cannot read: unlimited). */
static void
rlimits_read(struct rlimit *out)
{
	unsigned r;

	for (r = 0; r < AUTH_RLIMITS; r++)
		if (getrlimit((int)r, &out[r]) != 0)
			out[r].rlim_cur = out[r].rlim_max = RLIM_INFINITY;
}

/*
 * Into u, the limits that differ now from before: pam_limits sets them
 * on the process that opens the session, and the worker takes them from
 * the login record.
 */
static void
rlimits_changed(const struct rlimit *before, struct auth_user *u)
{
	struct rlimit now[AUTH_RLIMITS];
	unsigned r;

	rlimits_read(now);
	for (r = 0; r < AUTH_RLIMITS; r++)
		if (now[r].rlim_cur != before[r].rlim_cur ||
		    now[r].rlim_max != before[r].rlim_max) {
			u->rlim_set |= 1U << r;
			u->rlim[r] = now[r];
		}
}

/*
 * In the PAM child, after a successful check: credentials, the login
 * record (first, as vsftpd: pam_limits counts it) and the PAM session.
 * AUTH_OK, or the refusal, with the handle ended and the record undone.
 */
static int
session_open(const struct tw_config *cfg, pam_handle_t *ph, const char *user, pid_t monitor)
{
	const void *host = NULL;
	int rc = pam_setcred(ph, PAM_ESTABLISH_CRED);

	if (rc == PAM_SUCCESS) {
		(void)pam_get_item(ph, PAM_RHOST, &host);
		session_record(monitor, user, host);
		rc = pam_open_session(ph, 0);
		if (rc != PAM_SUCCESS) {
			session_record(monitor, NULL, NULL);
			(void)pam_setcred(ph, PAM_DELETE_CRED);
		}
	}
	if (rc == PAM_SUCCESS)
		return AUTH_OK;
	tw_log(TW_LOG_WARN, "session_support: PAM service %s opened no session for user "
	       "%s: %s; login refused%s", cfg->pam_service_name, user, pam_strerror(ph, rc),
	       rc == PAM_PERM_DENIED ? " (also PAM's answer for a service without session "
	       "lines: see twinftpd -t)" : "");
	pam_end(ph, rc);
	return pam_denied(rc) ? AUTH_DENIED : AUTH_UNAVAILABLE;
}

static void
session_close(const struct tw_config *cfg, pam_handle_t *ph, const char *user, pid_t monitor)
{
	int rc = pam_close_session(ph, 0);

	if (rc != PAM_SUCCESS)
		tw_log(TW_LOG_WARN, "session_support: PAM service %s could not close the "
		       "session of user %s: %s", cfg->pam_service_name, user,
		       pam_strerror(ph, rc));
	(void)pam_setcred(ph, PAM_DELETE_CRED);
	pam_end(ph, rc);
	session_record(monitor, NULL, NULL);
}

/*
 * A PAM child about to write a login record: from now on termination
 * signals are ignored, so that nothing but the monitor's byte or end
 * stops it before it has written the logout. A service manager stopping
 * every process of the service ends the monitors, whose end closes the
 * sessions. Set before the record, not once the answer is written: a
 * SIGTERM sent after the login succeeded could reach the child before it
 * got there (it runs at nice 10), and kill it with its session open and
 * no logout written.
 */
static void
session_signals_ignore(void)
{
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
}

/*
 * A PAM child that may hold a session, first: it lets go of every
 * descriptor of the monitor's (the control connection, the workers'
 * channels) but fd and the log's, before PAM runs, so that what the
 * session modules open (pam_systemd's FIFO to logind, syslog's socket)
 * stays theirs for the session's life.
 */
static void
session_child_fds(int fd)
{
	const int keep[] = { fd, log_fd() };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		(void)dup2(null, STDIN_FILENO);
		(void)dup2(null, STDOUT_FILENO);
		(void)dup2(null, STDERR_FILENO);
	}
	tw_close_fds_except(keep, sizeof(keep) / sizeof(keep[0]));
}

/*
 * The PAM child once its answer is written: keeps the session open until
 * the monitor's byte or its end (EOF), then closes it and exits. The
 * password goes first: PAM keeps it (PAM_AUTHTOK), and so did the fork's
 * copy of the monitor's buffer. Termination signals are already ignored
 * (session_signals_ignore()).
 */
static void __attribute__((noreturn))
session_hold(const struct tw_config *cfg, pam_handle_t *ph, const char *user, char *pass,
	     pid_t monitor, int fd)
{
	char c;

	(void)pam_set_item(ph, PAM_AUTHTOK, NULL);
	explicit_bzero(pass, strlen(pass));
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	session_close(cfg, ph, user, monitor);
	close(fd);
	_exit(0);
}

void
auth_session_end(void)
{
	struct pollfd pfd;
	int status;

	if (session_holder < 0)
		return;
	(void)send(session_fd, "", 1, MSG_NOSIGNAL);
	/* Its end of the pair closes once it has closed the session. */
	pfd.fd = session_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	while (poll(&pfd, 1, SESSION_END_WAIT_MS) < 0 && errno == EINTR)
		;
	if (pfd.revents != 0) {
		status = 0;
		while (waitpid(session_holder, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status))
			tw_log(TW_LOG_WARN, "session_support: the PAM child holding the session "
			       "died of signal %d (%s)%s", WTERMSIG(status),
			       strsignal(WTERMSIG(status)), WTERMSIG(status) == SIGSYS
			       ? ": a session module made a call the monitor's seccomp policy "
				 "forbids" : "");
	} else {
		tw_log(TW_LOG_WARN, "session_support: PAM took more than %d s to close a "
		       "session; left to finish on its own", SESSION_END_WAIT_MS / 1000);
	}
	close(session_fd);
	session_fd = -1;
	session_holder = -1;
}

/*
 * The user database (NSS modules) and PAM are large and keep state:
 * they run in a child that reports the result as one fixed-size record
 * over a pipe, so the long-lived monitor never loads them. The child is
 * reaped before the answer counts: no root process that ran PAM lives
 * on beside the user's worker, and the monitor gives up root only then.
 *
 * The child may be forked at USER already (auth_ahead_start()): it looks
 * the user up and starts PAM while the client sends its password, then
 * waits for the password on its channel, as a length and the bytes. The
 * client's round trip between USER and PASS hides that part of the
 * login; what follows the password is the same either way.
 */

/*
 * How long a child forked at USER waits for the password before it ends
 * by itself: a client that never sends PASS holds no root process for
 * the rest of its session. A password typed later takes a child forked
 * at PASS, as it would have without this.
 */
#define AHEAD_WAIT_MS 10000

static int user_config_read(const struct tw_config *cfg, const char *user,
			    struct tw_config *out, int quiet);

/* In the monitor: a child forked at USER, waiting for the password. */
static struct {
	pid_t pid;		/* -1: none */
	int fd;			/* the monitor's end of the channel */
	const struct tw_config *base;	/* the monitor's config */
	int own;		/* forked with the user's own config: own_cfg */
	char user[IPC_MAX_USER + 1];
	char peer_ip[INET6_ADDRSTRLEN];
} ahead TW_PER_PROCESS = { -1, -1, NULL, 0, "", "" };
/* The user's own config (user_config_dir) the child was forked with: LOGIN
 * reads the file again, and a child forked with other options is not used. */
static struct tw_config ahead_own_cfg TW_PER_PROCESS;

/* In the child: the password, from the monitor (ahead_password_send()). */
static int
ahead_password_read(int fd, char *out, size_t outsz)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	uint32_t len;
	int r;

	while ((r = poll(&pfd, 1, AHEAD_WAIT_MS)) < 0 && errno == EINTR)
		;
	if (r != 1 || read_full(fd, &len, sizeof(len)) != sizeof(len) || len >= outsz ||
	    read_full(fd, out, len) != len)
		return -1;
	out[len] = '\0';
	return 0;
}

static int
ahead_password_send(int fd, const char *pass)
{
	char msg[sizeof(uint32_t) + IPC_MAX_PASS];
	uint32_t len = (uint32_t)strlen(pass);
	int ok;

	if (len > IPC_MAX_PASS)
		return -1;
	memcpy(msg, &len, sizeof(len));
	memcpy(msg + sizeof(len), pass, len);
	/* A fresh channel's buffer takes it whole: never a short write. */
	ok = send(fd, msg, sizeof(len) + len, MSG_NOSIGNAL) == (ssize_t)(sizeof(len) + len);
	explicit_bzero(msg, sizeof(msg));
	return ok ? 0 : -1;
}

/*
 * The PAM child: fd is its end of the channel, where the answer goes.
 * pass NULL: forked at USER, it reads the password there first. hold:
 * session_support.
 */
static void __attribute__((noreturn))
auth_child(const struct tw_config *cfg, const char *user, const char *pass,
	   const char *peer_ip, int fd, int hold)
{
	/* The child's own memory: the monitor never touches it. */
	static struct auth_answer a;
	static struct local_login ll;
	static char given[IPC_MAX_PASS + 1];
	pam_handle_t *ph = NULL;
	pid_t monitor = getppid();
	int sent;

	/* One that waits for a password must not hold the client's
	 * connection open past the session's end either. */
	if (hold || pass == NULL)
		session_child_fds(fd);
	auth_report_fd = fd;
	auth_report_pid = getpid();
	sandbox_set_violation_report(auth_report_violation);
#if TW_TEST_HOOKS
	/* e2e: a module's call outside the policy (acct: harmless, EPERM). */
	if (strcmp(user, "tw-hook-pam-sigsys") == 0)
		(void)syscall(SYS_acct, NULL);
#endif
	/*
	 * The password hash is the heaviest CPU work a server does.
	 * SCHED_IDLE (weight 3, against 1024 for nice 0; nice 10 is 110)
	 * runs it only on CPU time that sessions already logged in leave
	 * over: a hundred hashes at once would otherwise outweigh any
	 * transfer. Alone, it still gets a whole core.
	 */
	{
		struct sched_param sp = { .sched_priority = 0 };

		/* login_nice's capability is the monitor's, not PAM's. */
		creds_drop_cap(CAP_SYS_NICE);
		/*
		 * Not a child that may hold a session: without the
		 * capability it could never leave SCHED_IDLE, and on a busy
		 * machine its logout, which the session's end waits for,
		 * would wait for idle CPU time. It hashes at the monitor's
		 * pre-login nice instead.
		 */
		if (!hold && sched_setscheduler(0, SCHED_IDLE, &sp) != 0)
			(void)!nice(10);
	}
	memset(&a.u, 0, sizeof(a.u));
	/* It fits: auth_login() and auth_ahead_start() checked (IPC_MAX_USER). */
	tw_strlcpy(a.u.name, user, sizeof(a.u.name));
	local_login_begin(cfg, user, peer_ip, &ll);
	if (pass == NULL) {
		/* The monitor's end closed: the session ended before PASS. */
		if (ahead_password_read(fd, given, sizeof(given)) != 0)
			_exit(0);
		pass = given;
	}
	a.result = local_login_finish(cfg, user, pass, &ll, &a.u, hold ? &ph : NULL);
	if (ph != NULL && a.result != AUTH_OK) {
		pam_end(ph, PAM_SUCCESS);
	} else if (ph != NULL) {
		struct rlimit before[AUTH_RLIMITS];

		/* pam_limits' fsize cannot kill this process at the logout's
		 * wtmp record: SIGXFSZ is ignored (main.c). */
		rlimits_read(before);
		session_signals_ignore();
		a.result = session_open(cfg, ph, user, monitor);
		rlimits_changed(before, &a.u);
	}
	if (a.result != AUTH_OK) {
		ph = NULL;	/* ended */
		explicit_bzero(&a.u, sizeof(a.u));
	}
	sent = write(fd, &a, AUTH_ANSWER_LEN) == (ssize_t)AUTH_ANSWER_LEN;
	if (ph != NULL && sent)
		session_hold(cfg, ph, user, (char *)pass, monitor, fd);
	if (ph != NULL)
		session_close(cfg, ph, user, monitor);
	explicit_bzero(given, sizeof(given));
	_exit(sent ? 0 : 1);
}

/* The child, forked; *fd the monitor's end of its channel. -1: no child. */
static pid_t
auth_child_fork(const struct tw_config *cfg, const char *user, const char *pass,
		const char *peer_ip, int *fd)
{
	int p[2], hold = cfg->session_support;
	pid_t pid;

	/*
	 * A pair where the monitor writes too (the password of a child
	 * forked at USER; session_support's end, which also ends the
	 * holding child); else a pipe.
	 */
	if (hold || pass == NULL ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0
				 : pipe2(p, O_CLOEXEC) != 0) {
		tw_log(TW_LOG_ERR, "pipe for PAM: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		tw_log(TW_LOG_ERR, "fork for PAM: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		auth_child(cfg, user, pass, peer_ip, p[1], hold);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

/*
 * Whether the child forked at USER has ended, reaping it if so: -1 still
 * waiting; 0 exited (its wait ran out), or none; 1 died of a signal, which
 * is logged with the SIGSYS report it may have left on its channel.
 */
static int
ahead_ended(void)
{
	char report[sizeof(struct auth_sigsys_report)];
	int status = 0;
	ssize_t n;
	pid_t r;

	if (ahead.pid <= 0)
		return 0;
	while ((r = waitpid(ahead.pid, &status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return -1;
	ahead.pid = -1;
	if (r < 0 || !WIFSIGNALED(status))
		return 0;
	n = recv(ahead.fd, report, sizeof(report), MSG_DONTWAIT);
	auth_child_died(ahead.user, status, report, n);
	return 1;
}

void
auth_ahead_end(void)
{
	if (ahead_ended() < 0) {
		/* It has no password yet: nothing of a login to finish. */
		(void)kill(ahead.pid, SIGKILL);
		while (waitpid(ahead.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (ahead.fd >= 0)
		close(ahead.fd);
	ahead.pid = -1;
	ahead.fd = -1;
	ahead.user[0] = '\0';
}

/* Whether the waiting child was forked for this login: name, address, options. */
static int
ahead_matches(const struct tw_config *cfg, const char *user, const char *peer_ip)
{
	if (ahead.pid <= 0 || strcmp(ahead.user, user) != 0 ||
	    strcmp(ahead.peer_ip, peer_ip) != 0)
		return 0;
	/* A file that changed in between, or appeared or went: not this one. */
	if (ahead.own)
		return cfg != ahead.base && memcmp(cfg, &ahead_own_cfg, sizeof(*cfg)) == 0;
	return cfg == ahead.base;
}

void
auth_ahead_start(const struct tw_config *cfg, const char *user, const char *peer_ip)
{
	const struct tw_config *use = cfg;
	int own = 0;

	/* What auth_login() would not give to a PAM child. */
	if (!cfg->local_enable || user[0] == '\0' || strlen(user) >= sizeof(ahead.user) ||
	    strlen(peer_ip) >= sizeof(ahead.peer_ip) ||
	    (cfg->anonymous_enable && auth_is_anonymous_name(user))) {
		auth_ahead_end();
		return;
	}
	if (cfg->user_config_dir[0] != '\0') {
		/* The waiting child's options are read over. */
		auth_ahead_end();
		/* Quiet: LOGIN reads it again and reports what is wrong. */
		own = user_config_read(cfg, user, &ahead_own_cfg, 1);
		if (own < 0)
			return;
		if (own)
			use = &ahead_own_cfg;
	} else if (ahead_matches(cfg, user, peer_ip) && ahead_ended() < 0) {
		/* The same USER again: the child already waiting is the one. */
		return;
	}
	auth_ahead_end();
	tw_strlcpy(ahead.user, user, sizeof(ahead.user));
	tw_strlcpy(ahead.peer_ip, peer_ip, sizeof(ahead.peer_ip));
	ahead.base = cfg;
	ahead.own = own;
	ahead.pid = auth_child_fork(use, user, NULL, peer_ip, &ahead.fd);
	if (ahead.pid < 0)
		ahead.user[0] = '\0';
}

/*
 * The child forked at USER for this login, given the password: its
 * channel (*pid its pid); -1 when there is none for this login (a child
 * is forked now); -2 when it died before the password (logged: the login
 * could not be checked). None is left waiting either way.
 */
static int
ahead_take(const struct tw_config *cfg, const char *user, const char *pass,
	   const char *peer_ip, pid_t *pid)
{
	int fd = -1, ended;

	if (!ahead_matches(cfg, user, peer_ip)) {
		auth_ahead_end();
		return -1;
	}
	ended = ahead_ended();
	if (ended < 0 && ahead_password_send(ahead.fd, pass) == 0) {
		*pid = ahead.pid;
		fd = ahead.fd;
		ahead.pid = -1;
		ahead.fd = -1;
	}
	auth_ahead_end();
	return ended > 0 ? -2 : fd;
}

static int
local_login_in_child(const struct tw_config *cfg, const char *user, const char *pass,
		     const char *peer_ip, struct auth_user *u)
{
	int fd, status, hold = cfg->session_support;
	int32_t result = AUTH_UNAVAILABLE;
	size_t n;
	pid_t pid = -1;

	/* A login refused after its session opened ended it (monitor.c). */
	auth_session_end();
	fd = ahead_take(cfg, user, pass, peer_ip, &pid);
	if (fd == -2)
		return AUTH_UNAVAILABLE;
	if (fd < 0) {
		pid = auth_child_fork(cfg, user, pass, peer_ip, &fd);
		if (pid < 0)
			return AUTH_UNAVAILABLE;
	}
	/* Straight into *u (the monitor's scratch), then the result. */
	n = read_full(fd, u, sizeof(*u));
	if (n == sizeof(*u))
		n += read_full(fd, &result, sizeof(result));
	if (hold && n == AUTH_ANSWER_LEN && result == AUTH_OK) {
		/* It holds the session now: ended by auth_session_end(). */
		session_holder = pid;
		session_fd = fd;
		if (auth_user_check(u) == 0)
			return AUTH_OK;
		/* An answer that does not count: its session ends now. */
		auth_session_end();
		explicit_bzero(u, sizeof(*u));
		return AUTH_UNAVAILABLE;
	}
	close(fd);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = 0;
			break;
		}
	}
	if (n == AUTH_ANSWER_LEN) {
		if (result == AUTH_OK && auth_user_check(u) == 0)
			return AUTH_OK;
		explicit_bzero(u, sizeof(*u));
		/* A child that answered nonsense checked nothing. */
		return result == AUTH_DENIED ? AUTH_DENIED : AUTH_UNAVAILABLE;
	}
	/* No answer: it died, and says how only to waitpid(). */
	if (WIFSIGNALED(status)) {
		auth_child_died(user, status, u, (ssize_t)n);
		/* It may have died with its login record written. */
		if (hold)
			session_record(getpid(), NULL, NULL);
	}
	explicit_bzero(u, sizeof(*u));
	return AUTH_UNAVAILABLE;
}

/*
 * One of deny_email_enable's and secure_email_list_enable's lists (vsftpd):
 * an anonymous login's password against file, line by line, never logged.
 * A listed password is admitted when admits, else refused. 1 admitted, 0
 * refused (a failed login), -1 a list that cannot be read: refused as the
 * server's trouble, as an unreadable user list refuses.
 */
static int
anon_password_list(const char *option, const char *file, int admits, const char *pass)
{
	int listed = auth_name_in_file(file, pass);

	if (listed < 0) {
		tw_log(TW_LOG_ERR, "cannot read %s %s: %s; every anonymous login is refused "
		       "until it can be", option, file, strerror(errno));
		return -1;
	}
	if (listed != admits) {
		tw_log(TW_LOG_INFO, "anonymous login refused: its password is %s %s",
		       listed ? "listed in" : "not listed in", option);
		return 0;
	}
	return 1;
}

static int
anon_password_allowed(const struct tw_config *cfg, const char *pass)
{
	int r = 1;

	if (cfg->deny_email_enable)
		r = anon_password_list("banned_email_file", cfg->banned_email_file, 0, pass);
	if (r > 0 && cfg->secure_email_list_enable)
		r = anon_password_list("email_password_file", cfg->email_password_file, 1, pass);
	return r;
}

int
auth_login(const struct tw_config *cfg, const char *user, const char *pass,
	   const char *peer_ip, struct auth_user *u)
{
	int anonymous = cfg->anonymous_enable && auth_is_anonymous_name(user);

	memset(u, 0, sizeof(*u));
	if (tw_strlcpy(u->name, user, sizeof(u->name)) != 0 || user[0] == '\0')
		return AUTH_DENIED;
	/* The worker asked at USER already; it is not trusted with it. */
	if (cfg->userlist_enable) {
		int allowed = auth_userlist_allows(cfg, user);

		if (allowed <= 0)
			return allowed < 0 ? AUTH_UNAVAILABLE : AUTH_DENIED;
	}
	if (anonymous) {
		struct passwd ftp;
		int admitted = anon_password_allowed(cfg, pass);

		if (admitted <= 0)
			return admitted < 0 ? AUTH_UNAVAILABLE : AUTH_DENIED;

		/* Looked up once by the listener (derived.c): no NSS here. A
		 * missing user was a warning at start. */
		if (!tw_rt.have_ftp_user) {
			tw_log(TW_LOG_ERR, "anonymous login refused: ftp_username %s does not "
			       "exist", cfg->ftp_username);
			return AUTH_UNAVAILABLE;
		}
		memset(&ftp, 0, sizeof(ftp));
		ftp.pw_name = (char *)cfg->ftp_username;
		ftp.pw_uid = tw_rt.ftp_uid;
		ftp.pw_gid = tw_rt.ftp_gid;
		ftp.pw_dir = tw_rt.ftp_home;
		return fill_user(cfg, &ftp, LOGIN_ANONYMOUS, u) == 0 ? AUTH_OK : AUTH_UNAVAILABLE;
	}
	if (!cfg->local_enable)
		return AUTH_DENIED;
	return local_login_in_child(cfg, user, pass, peer_ip, u);
}

/* The longest login name user_config_dir looks up (NAME_MAX). */
#define USER_CONFIG_NAME_MAX 255

/*
 * Whether a login name can name a file right inside user_config_dir: it
 * came from the client, so "../x", "x/y", ".", ".." or a hidden file
 * must never become a path.
 */
static int
user_config_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > USER_CONFIG_NAME_MAX || name[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '/' || c < 0x20 || c == 0x7f)
			return 0;
	}
	return 1;
}

static void
user_config_report(void *ctx, enum cfg_severity sev, const char *msg)
{
	if (ctx != NULL)
		return;	/* quiet */
	tw_log(sev == CFG_ERROR ? TW_LOG_ERR : TW_LOG_WARN, "user_config_dir: %s", msg);
}

/* auth_user_config(); quiet: nothing logged (USER's early read). */
static int
user_config_read(const struct tw_config *cfg, const char *user, struct tw_config *out,
		 int quiet)
{
	static int quiet_ctx;
	void *ctx = quiet ? &quiet_ctx : NULL;
	char path[PATH_MAX];
	const char *name = cfg->anonymous_enable && auth_is_anonymous_name(user)
			   ? cfg->ftp_username : user;
	struct stat st;
	unsigned errors;

	*out = *cfg;
	if (cfg->user_config_dir[0] == '\0')
		return 0;
	if (!user_config_name_ok(name)) {
		if (!quiet)
			tw_log(TW_LOG_WARN, "login refused: a user name that starts with '.' or "
			       "holds '/' or a control character names no file of "
			       "user_config_dir");
		return -1;
	}
	if (tw_snprintf(path, sizeof(path), "%s/%s", cfg->user_config_dir, name) < 0) {
		if (!quiet)
			tw_log(TW_LOG_ERR, "login of %s refused: its user_config_dir path is "
			       "too long", name);
		return -1;
	}
	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		if (!quiet)
			tw_log(TW_LOG_ERR, "login of %s refused: per-user config %s: %s", name,
			       path, strerror(errno));
		return -1;
	}
	errors = config_load_user_file_all(out, path, user_config_report, ctx);
	if (errors == 0)
		errors = config_check_all(out, user_config_report, ctx);
	if (errors != 0) {
		if (!quiet)
			tw_log(TW_LOG_ERR, "login of %s refused: per-user config %s has %u "
			       "error%s (see above)", name, path, errors, errors == 1 ? "" : "s");
		*out = *cfg;
		return -1;
	}
	return 1;
}

int
auth_user_config(const struct tw_config *cfg, const char *user, struct tw_config *out)
{
	return user_config_read(cfg, user, out, 0);
}
