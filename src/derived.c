#include "src/derived.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "privsep/auth.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/runtime.h"
#include "src/common/util.h"
#include "src/tcpwrap.h"
#include "src/tls.h"

/* The nicest a process can be (setpriority(2) takes -20..19). */
#define NICEST (PRIO_MAX - 1)

/*
 * The pre-login worker is chrooted here: it must exist, belong to root and
 * be writable by nobody else, or a compromised worker could plant files.
 */
static int
prepare_secure_chroot(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (dir[0] != '/') {
		(void)snprintf(err, errlen, "secure_chroot_dir must be an absolute path: %s", dir);
		return -1;
	}
	if (stat(dir, &st) != 0) {
		if (errno != ENOENT || mkdir(dir, 0555) != 0 || stat(dir, &st) != 0) {
			(void)snprintf(err, errlen, "cannot create secure_chroot_dir %s: %s", dir,
				       strerror(errno));
			return -1;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		(void)snprintf(err, errlen, "secure_chroot_dir %s is not a directory", dir);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022) != 0) {
		(void)snprintf(err, errlen, "secure_chroot_dir %s must be owned by root and "
			       "not writable by others", dir);
		return -1;
	}
	return 0;
}

static int
resolve_users(const struct tw_config *cfg, struct tw_runtime *rt, char *err, size_t errlen)
{
	struct passwd *pw = getpwnam(cfg->nopriv_user);

	if (pw == NULL) {
		(void)snprintf(err, errlen, "nopriv_user %s does not exist", cfg->nopriv_user);
		return -1;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		(void)snprintf(err, errlen, "nopriv_user %s must not be root or in group root",
			       cfg->nopriv_user);
		return -1;
	}
	rt->nopriv_uid = pw->pw_uid;
	rt->nopriv_gid = pw->pw_gid;
	rt->have_ftp_user = 0;
	/* vsftpd starts without the user too, and refuses each anonymous login. */
	pw = cfg->anonymous_enable ? getpwnam(cfg->ftp_username) : NULL;
	if (cfg->anonymous_enable && pw == NULL)
		tw_log(TW_LOG_WARN, "ftp_username %s does not exist: anonymous logins are "
		       "refused (anonymous_enable=YES; set anonymous_enable=NO, or create the "
		       "user)", cfg->ftp_username);
	if (pw != NULL) {
		rt->have_ftp_user = 1;
		rt->ftp_uid = pw->pw_uid;
		rt->ftp_gid = pw->pw_gid;
		if (tw_strlcpy(rt->ftp_home, pw->pw_dir, sizeof(rt->ftp_home)) != 0) {
			(void)snprintf(err, errlen, "home directory of %s is too long",
				       cfg->ftp_username);
			return -1;
		}
	}
	if (cfg->chown_uploads) {
		pw = getpwnam(cfg->chown_username);
		if (pw == NULL) {
			(void)snprintf(err, errlen, "chown_username %s does not exist "
				       "(chown_uploads=YES)", cfg->chown_username);
			return -1;
		}
		rt->chown_uid = pw->pw_uid;
	}
	return prepare_secure_chroot(cfg->secure_chroot_dir, err, errlen);
}

/*
 * login_nice: sessions run that much nicer than the listener until their
 * login, and the monitor needs CAP_SYS_NICE to give them the listener's
 * priority back then. Without it (a container), the option is off.
 */
static void
derive_login_nice(const struct tw_config *cfg, struct tw_runtime *rt)
{
	int base;

	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	if (base == -1 && errno != 0)
		base = 0;
	rt->base_nice = base;
	rt->login_nice = 0;
	if (cfg->login_nice == 0)
		return;
	if (!creds_have(CAP_SYS_NICE)) {
		tw_log(TW_LOG_WARN, "login_nice off: without CAP_SYS_NICE a session "
		       "could not get its priority back at login");
		return;
	}
	rt->login_nice = base + (int)cfg->login_nice > NICEST ? NICEST - base
							    : (int)cfg->login_nice;
	if (rt->login_nice < 0)
		rt->login_nice = 0;
}

/*
 * banner_file, read here (at start and at each reload): the pre-login
 * worker that greets can open no file. A missing file stops the start,
 * or refuses the reload, rather than greet without it.
 */
static int
read_banner(const char *path, struct tw_runtime *rt, char *err, size_t errlen)
{
	ssize_t n;
	int fd;

	rt->banner[0] = '\0';
	if (path[0] == '\0')
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		(void)snprintf(err, errlen, "banner_file %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, rt->banner, TW_BANNER_MAX);
	close(fd);
	if (n < 0) {
		(void)snprintf(err, errlen, "banner_file %s: %s", path, strerror(errno));
		return -1;
	}
	/* A NUL inside ends the text there. */
	rt->banner[n] = '\0';
	return 0;
}

/*
 * pasv_address as the worker announces it: a literal (config.c checked
 * it), or with pasv_addr_resolve a host name resolved here, by the
 * listener (a worker cannot resolve: it has no network and no files).
 */
static void
resolve_pasv_address(const struct tw_config *cfg, struct tw_runtime *rt, int reloading)
{
	struct addrinfo hints, *res = NULL;
	/* What the start or the last reload resolved (rt is tw_rt's copy). */
	int had = reloading && rt->have_pasv_addr;
	int rc;

	rt->have_pasv_addr = 0;
	if (cfg->pasv_address[0] == '\0')
		return;
	if (!config_pasv_is_name(cfg)) {
		rt->have_pasv_addr = inet_pton(AF_INET, cfg->pasv_address, &rt->pasv_addr) == 1;
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(cfg->pasv_address, NULL, &hints, &res);
	if (rc != 0 || res == NULL) {
		/*
		 * Not a reason to refuse the start (DNS may not be up yet at
		 * boot; vsftpd resolves at each PASV): clients get the address
		 * they connected to, which most use anyway behind NAT. At a
		 * reload, a passing DNS failure keeps the address in use.
		 */
		rt->have_pasv_addr = had;
		tw_log(TW_LOG_WARN, "pasv_address %s (pasv_addr_resolve): %s; PASV announces "
		       "%s until a reload resolves it", cfg->pasv_address,
		       rc != 0 ? gai_strerror(rc) : "no IPv4 address",
		       had ? "the address resolved before" : "the address each client "
		       "connected to");
		if (res != NULL)
			freeaddrinfo(res);
		return;
	}
	rt->pasv_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	rt->have_pasv_addr = 1;
	freeaddrinfo(res);
}

/*
 * text_userdb_names: a session process cannot ask the user database (it
 * is chrooted and sandboxed, and NSS modules may talk to the network),
 * so the listener reads every name it can enumerate, at start and at each
 * reload, and each session inherits the table by fork. At most this many
 * users and as many groups; ids beyond stay numbers.
 */
#define IDNAMES_MAX 4096

static int
cmp_idname(const void *a, const void *b)
{
	unsigned x = ((const struct tw_idname *)a)->id, y = ((const struct tw_idname *)b)->id;

	return x < y ? -1 : x > y;
}

/* Sorted by id, the first name of each id kept (as getpwuid finds it). */
static size_t
idnames_sort(struct tw_idname *t, size_t n)
{
	size_t i, out = 0;

	qsort(t, n, sizeof(*t), cmp_idname);
	for (i = 0; i < n; i++)
		if (out == 0 || t[out - 1].id != t[i].id)
			t[out++] = t[i];
	return out;
}

/*
 * One mapping of its own for both tables: pages no session writes, so
 * they stay shared with the listener.
 */
static void
build_id_names(const struct tw_config *cfg, struct tw_runtime *rt)
{
	static struct tw_idname *map;
	const size_t bytes = 2 * IDNAMES_MAX * sizeof(struct tw_idname);
	struct tw_idname *users, *groups;
	struct passwd *pw;
	struct group *gr;
	size_t nu = 0, ng = 0;

	rt->user_names = rt->group_names = NULL;
	rt->n_user_names = rt->n_group_names = 0;
	if (map != NULL) {
		/* Sessions forked earlier keep their own copy of the mapping. */
		(void)munmap(map, bytes);
		map = NULL;
	}
	if (!cfg->text_userdb_names)
		return;
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		map = NULL;
		tw_log(TW_LOG_WARN, "text_userdb_names: no memory for the names: %s",
		       strerror(errno));
		return;
	}
	users = map;
	groups = map + IDNAMES_MAX;
	setpwent();
	while (nu < IDNAMES_MAX && (pw = getpwent()) != NULL) {
		users[nu].id = (unsigned)pw->pw_uid;
		if (tw_strlcpy(users[nu].name, pw->pw_name, sizeof(users[nu].name)) == 0)
			nu++;
	}
	endpwent();
	setgrent();
	while (ng < IDNAMES_MAX && (gr = getgrent()) != NULL) {
		groups[ng].id = (unsigned)gr->gr_gid;
		if (tw_strlcpy(groups[ng].name, gr->gr_name, sizeof(groups[ng].name)) == 0)
			ng++;
	}
	endgrent();
	rt->user_names = users;
	rt->n_user_names = idnames_sort(users, nu);
	rt->group_names = groups;
	rt->n_group_names = idnames_sort(groups, ng);
	(void)mprotect(map, bytes, PROT_READ);
}

int
derived_build(const struct tw_config *cfg, int reloading, char *err, size_t errlen)
{
	/* Large (ftp_home), and the listener is single-threaded. */
	static struct tw_runtime rt;

	/* The namespaces (netns_fd, isolate) are made once, at start. */
	rt = tw_rt;
	if (resolve_users(cfg, &rt, err, errlen) != 0 ||
	    read_banner(cfg->banner_file, &rt, err, errlen) != 0)
		return -1;
	resolve_pasv_address(cfg, &rt, reloading);
	derive_login_nice(cfg, &rt);
	if (sa_cidr_list_parse(cfg->proxy_protocol_trusted, &rt.proxy_trusted) != 0) {
		(void)snprintf(err, errlen, "proxy_protocol_trusted: not a list of networks");
		return -1;
	}
	/*
	 * Before any session is forked with it, and before tls_init, which
	 * must stay last: a failed load changes nothing, a loaded libwrap
	 * stays loaded whatever follows.
	 */
	if (cfg->tcp_wrappers && tcpwrap_load(err, errlen) != 0)
		return -1;
	/*
	 * The FTPS certificate (and the check of its key), read again so
	 * that a renewed certificate is served without a restart; tls_init()
	 * replaces the context only when all of it is good, so it is the
	 * last step that may fail. At start main.c has loaded it already
	 * (-t checks it).
	 */
	if (reloading && tls_init(cfg, err, errlen) != 0)
		return -1;
	/* After every step that may fail: a refused reload keeps the old names. */
	build_id_names(cfg, &rt);
	tw_rt = rt;
	/* Only keeps modules mapped: a service that fails here fails at login. */
	auth_preload(cfg);
	return 0;
}
