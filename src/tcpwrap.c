#include "src/tcpwrap.h"

#include "tw_build.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Debian's libwrap is built with IPv6: struct host_info holds a sockaddr. */
#define INET6 1
#include <tcpd.h>

#include "src/common/hostsrule.h"
#include "src/common/log.h"
#include "src/common/util.h"

/* Longest rule (continuation lines joined) and most lines read per table. */
#define TCPWRAP_RULE_MAX 4096
#define TCPWRAP_LINES_MAX 100000

/* What libwrap reads when nothing has redirected it (its build's paths). */
#define TCPWRAP_ALLOW_DEFAULT "/etc/hosts.allow"
#define TCPWRAP_DENY_DEFAULT "/etc/hosts.deny"
/* libwrap's soname: the library of Debian's libwrap0. */
#define TCPWRAP_LIBRARY "libwrap.so.0"

/*
 * libwrap, opened by tcpwrap_load. It is not linked: it and what it
 * pulls in (libnsl, libtirpc and Kerberos' five libraries) were ten of a
 * session process's twenty libraries and a third of its mappings, which
 * every fork of the pool copies and every exit tears down, with or
 * without tcp_wrappers. The declarations of <tcpd.h> give the types;
 * nothing here refers to libwrap's symbols by name.
 */
static struct {
	void *handle;
	__typeof__(request_init) *request_init;
	__typeof__(hosts_access) *hosts_access;
	__typeof__(sock_hostname) *sock_hostname;
	__typeof__(sock_hostaddr) *sock_hostaddr;
	char **allow_table, **deny_table;
	int *dry_run;
} wrap;

int
tcpwrap_load(char *err, size_t errlen)
{
	static const char *const names[] = {
		"request_init", "hosts_access", "sock_hostname", "sock_hostaddr",
		"hosts_allow_table", "hosts_deny_table", "dry_run",
	};
	void *sym[TW_ARRAY_LEN(names)];
	const char *lib = TCPWRAP_LIBRARY;
	void *h;
	size_t i;

	if (wrap.handle != NULL)
		return 0;
#if TW_TEST_HOOKS
	if (getenv("TW_TEST_LIBWRAP") != NULL)
		lib = getenv("TW_TEST_LIBWRAP");
#endif
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *why = dlerror();

		(void)snprintf(err, errlen, "tcp_wrappers=YES needs libwrap (%s, Debian's "
			       "package libwrap0): %s", lib, why != NULL ? why : "cannot load it");
		return -1;
	}
	for (i = 0; i < TW_ARRAY_LEN(names); i++) {
		sym[i] = dlsym(h, names[i]);
		if (sym[i] == NULL) {
			(void)snprintf(err, errlen, "tcp_wrappers=YES: %s has no %s: not libwrap",
				       lib, names[i]);
			(void)dlclose(h);
			return -1;
		}
	}
	/* dlsym answers object pointers; POSIX has a function's address
	 * representable as one, and memcpy moves it without a cast. */
	memcpy(&wrap.request_init, &sym[0], sizeof(wrap.request_init));
	memcpy(&wrap.hosts_access, &sym[1], sizeof(wrap.hosts_access));
	memcpy(&wrap.sock_hostname, &sym[2], sizeof(wrap.sock_hostname));
	memcpy(&wrap.sock_hostaddr, &sym[3], sizeof(wrap.sock_hostaddr));
	wrap.allow_table = sym[4];
	wrap.deny_table = sym[5];
	wrap.dry_run = sym[6];
	/* Kept open for good: every session forked from here calls it. */
	wrap.handle = h;
	return 0;
}

/*
 * The tables: libwrap's own paths, or in a test build the files the
 * tests name, so that they need not edit /etc.
 */
static void
tcpwrap_tables(const char **allow, const char **deny)
{
	*allow = wrap.handle != NULL ? *wrap.allow_table : TCPWRAP_ALLOW_DEFAULT;
	*deny = wrap.handle != NULL ? *wrap.deny_table : TCPWRAP_DENY_DEFAULT;
#if TW_TEST_HOOKS
	if (getenv("TW_TEST_HOSTS_ALLOW") != NULL)
		*allow = getenv("TW_TEST_HOSTS_ALLOW");
	if (getenv("TW_TEST_HOSTS_DENY") != NULL)
		*deny = getenv("TW_TEST_HOSTS_DENY");
#endif
}

int
tcpwrap_allows(const struct sockaddr_storage *client, const struct sockaddr_storage *local)
{
	static char daemon[] = TCPWRAP_DAEMON;
	/* libwrap keeps pointers to them until hosts_access returns. */
	struct sockaddr_storage c = *client, l = *local;
	struct request_info req;
	const char *allow, *deny;
	mode_t mask;
	int ok;

	/* Loaded before any session with tcp_wrappers=YES (derived_build);
	 * should it not be, nobody is let in unchecked. */
	if (wrap.handle == NULL) {
		tw_log(TW_LOG_ERR, "tcp_wrappers=YES but libwrap is not loaded: client refused");
		return 0;
	}
	tcpwrap_tables(&allow, &deny);
	*wrap.allow_table = (char *)allow;
	*wrap.deny_table = (char *)deny;
	wrap.request_init(&req, RQ_DAEMON, daemon, RQ_FILE, -1, RQ_CLIENT_SIN, (struct sockaddr *)&c,
			  RQ_SERVER_SIN, (struct sockaddr *)&l, 0);
	/* <tcpd.h>'s sock_methods(), with the loaded functions. */
	req.hostname = wrap.sock_hostname;
	req.hostaddr = wrap.sock_hostaddr;
	/* No option runs a program (twist clears dry_run: set it for every
	 * call); umask ignores it and is put back, setenv only sets a
	 * variable of this process that nothing here reads. */
	*wrap.dry_run = 1;
	mask = umask(077);
	ok = wrap.hosts_access(&req);
	(void)umask(mask);
	/*
	 * A matching twist rule clears dry_run: it would have replaced the
	 * service with its command, so the client gets no FTP here either.
	 */
	if (*wrap.dry_run == 0)
		ok = 0;
	return ok != 0;
}

/* Reads one rule (lines ending in a backslash joined) into buf; 0 at the end. */
static int
read_rule(FILE *f, char *buf, size_t bufsz, unsigned *lineno, unsigned *first)
{
	char line[TCPWRAP_RULE_MAX];
	size_t n = 0;

	buf[0] = '\0';
	*first = *lineno + 1;
	while (*lineno < TCPWRAP_LINES_MAX && fgets(line, sizeof(line), f) != NULL) {
		size_t len = strcspn(line, "\r\n");
		int more = len > 0 && line[len - 1] == '\\';

		(*lineno)++;
		line[more ? len - 1 : len] = '\0';
		if (n < bufsz - 1) {
			(void)tw_strlcpy(buf + n, line, bufsz - n);
			n += strlen(buf + n);
		}
		if (!more)
			return 1;
	}
	return n > 0;
}

void
tcpwrap_warn_vsftpd_rules(void (*warn)(const char *msg))
{
	const char *tables[2];
	char rule[TCPWRAP_RULE_MAX], msg[TCPWRAP_RULE_MAX + 256];
	size_t i;

	tcpwrap_tables(&tables[0], &tables[1]);
	for (i = 0; i < 2; i++) {
		unsigned lineno = 0, first;
		FILE *f = fopen(tables[i], "re");

		if (f == NULL)
			continue;	/* no table: nothing is refused by it */
		while (read_rule(f, rule, sizeof(rule), &lineno, &first)) {
			if (hostsrule_names(rule, "vsftpd", TCPWRAP_DAEMON) != HOSTSRULE_NAMES_A)
				continue;
			(void)snprintf(msg, sizeof(msg), "tcp_wrappers: %s:%u names the daemon "
				       "vsftpd, whose rules twinftpd does not apply (its rules name "
				       "%s: list both, as \"vsftpd, %s: ...\")", tables[i], first,
				       TCPWRAP_DAEMON, TCPWRAP_DAEMON);
			warn(msg);
		}
		(void)fclose(f);
	}
}
