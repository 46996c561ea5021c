#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "util.h"

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

	f = fopen(file, "re");
	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		size_t n = strlen(line);

		total += n;
		if (total > AUTH_LIST_MAX_BYTES)
			break;
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

/* In the PAM child: 0 = authenticated and account valid. */
static int
pam_check(const struct tw_config *cfg, const char *user, const char *pass,
	  const char *peer_ip)
{
	struct pam_conv_data d = { user, pass };
	struct pam_conv conv = { pam_conversation, &d };
	pam_handle_t *ph = NULL;
	int rc;

	rc = pam_start(cfg->pam_service_name, user, &conv, &ph);
	if (rc != PAM_SUCCESS)
		return 1;
	pam_set_item(ph, PAM_RHOST, peer_ip);
	pam_set_item(ph, PAM_TTY, "ftp");
	rc = pam_authenticate(ph, PAM_DISALLOW_NULL_AUTHTOK);
	if (rc == PAM_SUCCESS)
		rc = pam_acct_mgmt(ph, 0);
	pam_end(ph, rc);
	return rc == PAM_SUCCESS ? 0 : 1;
}

/*
 * PAM modules are large and keep state; running them in a child keeps the
 * long-lived monitor small and lets a misbehaving module die alone.
 */
static int
pam_check_in_child(const struct tw_config *cfg, const char *user, const char *pass,
		   const char *peer_ip)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		tw_log(TW_LOG_ERR, "fork for PAM: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		_exit(pam_check(cfg, user, pass, peer_ip));
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
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

static int
fill_user(const struct tw_config *cfg, const struct passwd *pw, int anonymous,
	  struct auth_user *u)
{
	const char *root;
	int chrooted;

	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->anonymous = anonymous;
	if (u->uid == 0 || u->gid == 0) {
		/* A root session would defeat every wall we build. */
		tw_log(TW_LOG_WARN, "refusing login of %s: uid or gid 0", u->name);
		return -1;
	}
	if (anonymous) {
		root = cfg->anon_root[0] != '\0' ? cfg->anon_root : pw->pw_dir;
		chrooted = 1;
		u->umask = (mode_t)cfg->anon_umask;
		u->ngroups = 0;
	} else {
		root = cfg->local_root[0] != '\0' ? cfg->local_root : pw->pw_dir;
		chrooted = cfg->chroot_local_user;
		if (cfg->chroot_list_enable && auth_name_in_file(cfg->chroot_list_file, u->name))
			chrooted = !chrooted;
		u->umask = (mode_t)cfg->local_umask;
		if (fill_groups(pw, u) != 0)
			return -1;
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

int
auth_login(const struct tw_config *cfg, const char *user, const char *pass,
	   const char *peer_ip, struct auth_user *u)
{
	struct passwd *pw;
	int anonymous = cfg->anonymous_enable && auth_is_anonymous_name(user);

	memset(u, 0, sizeof(*u));
	if (tw_strlcpy(u->name, user, sizeof(u->name)) != 0 || user[0] == '\0')
		return -1;
	if (cfg->userlist_enable) {
		int listed = auth_name_in_file(cfg->userlist_file, user);

		if (listed == cfg->userlist_deny) {
			tw_log(TW_LOG_INFO, "user %s refused by userlist_file", user);
			return -1;
		}
	}
	if (anonymous) {
		pw = getpwnam(cfg->ftp_username);
		if (pw == NULL) {
			tw_log(TW_LOG_ERR, "ftp_username %s does not exist", cfg->ftp_username);
			return -1;
		}
		return fill_user(cfg, pw, 1, u);
	}
	if (!cfg->local_enable)
		return -1;
	pw = getpwnam(user);
	if (pw == NULL) {
		/* Still run PAM so an unknown user costs as much as a known one. */
		(void)pam_check_in_child(cfg, user, pass, peer_ip);
		return -1;
	}
	if (pam_check_in_child(cfg, user, pass, peer_ip) != 0)
		return -1;
	/* PAM may have changed the user database entry's buffer: look again. */
	pw = getpwnam(user);
	if (pw == NULL)
		return -1;
	return fill_user(cfg, pw, 0, u);
}
