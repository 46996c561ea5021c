#include "src/tcpwrap.h"

#include "tw_build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Debian's libwrap is built with IPv6: struct host_info holds a sockaddr. */
#define INET6 1
#include <tcpd.h>

#include "src/common/hostsrule.h"
#include "src/common/util.h"

/* Longest rule (continuation lines joined) and most lines read per table. */
#define TCPWRAP_RULE_MAX 4096
#define TCPWRAP_LINES_MAX 100000

/*
 * The tables: libwrap's own paths, or in a test build the files the
 * tests name, so that they need not edit /etc.
 */
static void
tcpwrap_tables(const char **allow, const char **deny)
{
	*allow = hosts_allow_table;
	*deny = hosts_deny_table;
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

	tcpwrap_tables(&allow, &deny);
	hosts_allow_table = (char *)allow;
	hosts_deny_table = (char *)deny;
	request_init(&req, RQ_DAEMON, daemon, RQ_FILE, -1, RQ_CLIENT_SIN, (struct sockaddr *)&c,
		     RQ_SERVER_SIN, (struct sockaddr *)&l, 0);
	sock_methods(&req);
	/* No option runs a program (twist clears dry_run: set it for every
	 * call); umask ignores it and is put back, setenv only sets a
	 * variable of this process that nothing here reads. */
	dry_run = 1;
	mask = umask(077);
	ok = hosts_access(&req);
	(void)umask(mask);
	/*
	 * A matching twist rule clears dry_run: it would have replaced the
	 * service with its command, so the client gets no FTP here either.
	 */
	if (dry_run == 0)
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
