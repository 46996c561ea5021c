/*
 * The TLS module (src/tls.h, "Where it lives"): found, checked and loaded
 * by the listener when a configuration sets ssl_enable=YES; every tls_*
 * call of the daemon goes through its table. Loaded once and kept: the
 * sessions forked since hold its objects, and a reload that turns TLS
 * off only drops the contexts (tls_init).
 */
#include "src/tls.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/util.h"

static const struct tls_module *mod;

static void
host_log(int level, const char *text)
{
	tw_log(level, "%s", text);
}

static void
host_fatal(int is_bug, const char *msg)
{
	if (is_bug)
		bug("%s", msg);
	die("%s", msg);
}

static const struct tls_host host = { host_log, host_fatal };

/*
 * Whether st (the module or its directory) is no more open to others
 * than the running binary: owned by root or by the binary's owner,
 * writable by no one else; writable by its group only if the binary is
 * too, with the same group (a build tree made under umask 002). Whoever
 * could replace it could replace the binary.
 */
static int
as_safe_as_binary(const struct stat *st, const struct stat *exe)
{
	if (st->st_uid != 0 && st->st_uid != exe->st_uid)
		return 0;
	if (st->st_mode & S_IWOTH)
		return 0;
	return !(st->st_mode & S_IWGRP) || ((exe->st_mode & S_IWGRP) && st->st_gid == exe->st_gid);
}

/*
 * Opens the module in dir for loading: a regular file in a directory
 * both as_safe_as_binary, the file not a symbolic link. The caller
 * loads it through /proc/self/fd, so what was checked is what is loaded.
 * Returns the descriptor or -1 with why.
 */
static int
module_open(const char *dir, const struct stat *exe, char *why, size_t len)
{
	struct stat st;
	int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	if (d < 0) {
		(void)snprintf(why, len, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (fstat(d, &st) != 0 || !as_safe_as_binary(&st, exe)) {
		(void)snprintf(why, len, "%s: a directory others than the binary's owner (or root) "
			       "may write", dir);
		close(d);
		return -1;
	}
	fd = openat(d, TLS_MODULE_FILE, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	close(d);
	if (fd < 0) {
		(void)snprintf(why, len, "%s/%s: %s", dir, TLS_MODULE_FILE, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !as_safe_as_binary(&st, exe)) {
		(void)snprintf(why, len, "%s/%s: not a regular file owned by root (or by the "
			       "binary's owner) and writable by its owner alone", dir, TLS_MODULE_FILE);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The directory to load the module from: the running binary's, when a
 * module is there (a build tree, or a binary installed beside it), else
 * TW_TLS_MODULE_DIR. A module beside the binary that fails the checks is
 * an error, not passed over. exe: the running binary (through
 * /proc/self/exe, whatever its name is now).
 */
static int
module_dir(char *dir, size_t len, struct stat *exe)
{
	ssize_t n = readlink("/proc/self/exe", dir, len);
	char *slash, probe[PATH_MAX];

	if (stat("/proc/self/exe", exe) != 0) {
		/* Unknown: as strict as a binary owned by root, mode 0755. */
		memset(exe, 0, sizeof(*exe));
		exe->st_mode = S_IFREG | 0755;
	}
	if (n > 0 && (size_t)n < len) {
		dir[n] = '\0';
		slash = strrchr(dir, '/');
		if (slash != NULL) {
			*slash = '\0';
			if (tw_snprintf(probe, sizeof(probe), "%s/%s", dir, TLS_MODULE_FILE) >= 0 &&
			    access(probe, F_OK) == 0)
				return 0;
		}
	}
	return tw_strlcpy(dir, TW_TLS_MODULE_DIR, len);
}

static int
module_load(char *err, size_t errlen)
{
	char dir[PATH_MAX], fdpath[64], why[PATH_MAX + 160] = "";
	const struct tls_module *m;
	struct stat exe;
	void *h;
	int fd;

	if (module_dir(dir, sizeof(dir), &exe) != 0) {
		(void)snprintf(why, sizeof(why), "its directory's name is too long");
		goto fail;
	}
	fd = module_open(dir, &exe, why, sizeof(why));
	if (fd < 0)
		goto fail;
	(void)snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	h = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	close(fd);
	if (h == NULL) {
		const char *e = dlerror();

		(void)snprintf(why, sizeof(why), "%s/%s: %s", dir, TLS_MODULE_FILE,
			       e != NULL ? e : "cannot load it");
		goto fail;
	}
	m = dlsym(h, TLS_MODULE_SYMBOL);
	if (m == NULL || m->size != sizeof(*m) || m->cfg_size != sizeof(struct tw_config) ||
	    strcmp(m->abi, TLS_MODULE_ABI) != 0) {
		(void)snprintf(why, sizeof(why), "%s/%s: not the module of this build of "
			       "twinftpd (%s)", dir, TLS_MODULE_FILE, TLS_MODULE_ABI);
		(void)dlclose(h);
		goto fail;
	}
	m->bind(&host);
	/*
	 * Its allocator, before OpenSSL allocates. Refused only when
	 * something else in the process loaded OpenSSL and allocated with
	 * it first: glibc's malloc serves it then, which costs each TLS
	 * session memory, not correctness.
	 */
	if (m->heap_install() != 0)
		tw_log(TW_LOG_WARN, "TLS: OpenSSL was in use before its module was loaded: "
		       "sessions use glibc's allocator for it (more memory per TLS session)");
	mod = m;
	return 0;
fail:
	(void)snprintf(err, errlen, "ssl_enable=YES needs the TLS module %s (beside the "
		       "binary, or in %s): %s", TLS_MODULE_FILE, TW_TLS_MODULE_DIR, why);
	return -1;
}

/* The module, for the calls only a TLS session makes. */
static const struct tls_module *
need(const char *fn)
{
	if (mod == NULL)
		bug("%s: the TLS module is not loaded", fn);
	return mod;
}

int
tls_init(const struct tw_config *cfg, char *err, size_t errlen)
{
	if (mod == NULL) {
		if (!cfg->ssl_enable)
			return 0;
		if (module_load(err, errlen) != 0)
			return -1;
	}
	return mod->init(cfg, err, errlen);
}

void
tls_session_keys_new(void)
{
	if (mod != NULL)
		mod->session_keys_new();
}

SSL *
tls_ctrl_new(int fd)
{
	return need(__func__)->ctrl_new(fd);
}

void
tls_load_key(const struct tw_config *cfg)
{
	if (mod != NULL)
		mod->load_key(cfg);
}

void
tls_data_ctx_init(const struct tw_config *cfg)
{
	if (mod != NULL)
		mod->data_ctx_init(cfg);
}

SSL *
tls_data_new(int fd)
{
	return need(__func__)->data_new(fd);
}

int
tls_wait(SSL *ssl, int rc, long long deadline_ms)
{
	return need(__func__)->wait(ssl, rc, deadline_ms);
}

int
tls_accept(SSL *ssl, unsigned timeout_s)
{
	return need(__func__)->accept(ssl, timeout_s);
}

int
tls_write_all(SSL *ssl, const void *buf, size_t len, long long deadline_ms)
{
	return need(__func__)->write_all(ssl, buf, len, deadline_ms);
}

void
tls_close(SSL *ssl)
{
	if (ssl != NULL)
		need(__func__)->close(ssl);
}

void
tls_log_error(const struct tw_config *cfg, const char *what)
{
	if (mod != NULL)
		mod->log_error(cfg, what);
}

int
tls_read(SSL *ssl, void *buf, int len)
{
	return need(__func__)->read(ssl, buf, len);
}

int
tls_write(SSL *ssl, const void *buf, int len)
{
	return need(__func__)->write(ssl, buf, len);
}

int
tls_get_error(SSL *ssl, int rc)
{
	return need(__func__)->get_error(ssl, rc);
}

void
tls_free(SSL *ssl)
{
	if (ssl != NULL)
		need(__func__)->free(ssl);
}

int
tls_shutdown(SSL *ssl)
{
	return need(__func__)->shutdown(ssl);
}

int
tls_accept_step(SSL *ssl)
{
	return need(__func__)->accept_step(ssl);
}

int
tls_session_reused(SSL *ssl)
{
	return need(__func__)->session_reused(ssl);
}

int
tls_fd(SSL *ssl)
{
	return need(__func__)->fd(ssl);
}
