/*
 * Unit tests for src/common/hostsrule.c: which daemon names a
 * hosts_access(5) rule's daemon list names (tcp_wrappers=YES warns about
 * rules written for vsftpd).
 */
#include "src/common/hostsrule.h"

#include "check.h"

#define A HOSTSRULE_NAMES_A
#define B HOSTSRULE_NAMES_B

static unsigned
names(const char *rule)
{
	return hostsrule_names(rule, "vsftpd", "twinftpd");
}

static void
test_lists(void)
{
	CHECK_INT(names("vsftpd: 10.0.0.0/8"), A);
	CHECK_INT(names("twinftpd: ALL"), B);
	CHECK_INT(names("vsftpd, twinftpd : 192.168.1."), A | B);
	CHECK_INT(names("  in.ftpd vsftpd\ttwinftpd: ALL : spawn /bin/true"), A | B);
	CHECK_INT(names("VSFTPD: .example.com"), A);
	CHECK_INT(names("vsftpd@192.168.1.1: ALL"), A);
	CHECK_INT(names("ALL EXCEPT vsftpd: ALL"), A);
	CHECK_INT(names("ALL: ALL"), 0);
	CHECK_INT(names("sshd: ALL"), 0);
}

static void
test_not_the_name(void)
{
	/* A longer name, a name in the client list or the options. */
	CHECK_INT(names("vsftpd2: ALL"), 0);
	CHECK_INT(names("xvsftpd: ALL"), 0);
	CHECK_INT(names("sshd: vsftpd"), 0);
	CHECK_INT(names("sshd: ALL : twist /bin/echo vsftpd"), 0);
}

static void
test_no_rule(void)
{
	CHECK_INT(names(""), 0);
	CHECK_INT(names("   "), 0);
	CHECK_INT(names("# vsftpd: ALL"), 0);
	CHECK_INT(names("   # twinftpd: ALL"), 0);
	CHECK_INT(names("vsftpd without a colon"), 0);
	CHECK_INT(names(":"), 0);
	CHECK_INT(names(", ,:ALL"), 0);
}

int
main(void)
{
	test_lists();
	test_not_the_name();
	test_no_rule();
	return check_summary();
}
