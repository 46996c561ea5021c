/*
 * Unit tests for src/proto/ftpparse.c: every accept and reject path of the
 * PORT/EPRT/EPSV parsers, host comparison, and the path helpers.
 */
#include "src/proto/ftpparse.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int
port_ok(const char *arg, const char *want_ip, unsigned want_port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	char ip[INET_ADDRSTRLEN];

	memset(&ss, 0xa5, sizeof(ss));
	if (ftp_parse_port(arg, &ss) != 0)
		return 0;
	if (ss.ss_family != AF_INET)
		return 0;
	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	return strcmp(ip, want_ip) == 0 && sa_port(&ss) == want_port;
}

static int
port_bad(const char *arg)
{
	struct sockaddr_storage ss;

	return ftp_parse_port(arg, &ss) == -1;
}

static void
test_port(void)
{
	CHECK(port_ok("127,0,0,1,4,1", "127.0.0.1", 1025));
	CHECK(port_ok("192,168,1,2,0,21", "192.168.1.2", 21));
	CHECK(port_ok("255,255,255,255,255,255", "255.255.255.255", 65535));
	CHECK(port_ok("0,0,0,0,0,1", "0.0.0.0", 1));
	CHECK(port_ok("010,001,000,099,000,080", "10.1.0.99", 80));

	CHECK(port_bad(NULL));
	CHECK(port_bad(""));
	CHECK(port_bad("256,0,0,1,4,1"));
	CHECK(port_bad("1,2,3,4,256,1"));
	CHECK(port_bad("1,2,3,4,1,256"));
	CHECK(port_bad("1,2,3,4,0,0"));		/* port 0 */
	CHECK(port_bad("1,2,3,4,5"));		/* too few */
	CHECK(port_bad("1,2,3,4,5,6,7"));	/* too many */
	CHECK(port_bad("1,2,3,4,5,"));		/* empty last */
	CHECK(port_bad(",2,3,4,5,6"));		/* empty first */
	CHECK(port_bad("1,,3,4,5,6"));
	CHECK(port_bad("1,2,3,4,5,6,"));	/* trailing comma */
	CHECK(port_bad("+1,2,3,4,5,6"));
	CHECK(port_bad("-1,2,3,4,5,6"));
	CHECK(port_bad("1,2,3,4,5,+6"));
	CHECK(port_bad(" 1,2,3,4,5,6"));
	CHECK(port_bad("1,2,3,4,5,6 "));
	CHECK(port_bad("1, 2,3,4,5,6"));
	CHECK(port_bad("1,2,3,4,5,6\r"));
	CHECK(port_bad("0001,2,3,4,5,6"));	/* 4 digits */
	CHECK(port_bad("1,2,3,4,5,0006"));
	CHECK(port_bad("1.2.3.4,5,6"));
	CHECK(port_bad("a,2,3,4,5,6"));
	CHECK(port_bad("1,2,3,4,5,6x"));
	CHECK(port_bad("99999999999999999999,2,3,4,5,6"));
}

static int
eprt_v4(const char *arg, const char *want_ip, unsigned want_port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	char ip[INET_ADDRSTRLEN];

	memset(&ss, 0xa5, sizeof(ss));
	if (ftp_parse_eprt(arg, &ss) != 0 || ss.ss_family != AF_INET)
		return 0;
	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	return strcmp(ip, want_ip) == 0 && sa_port(&ss) == want_port;
}

static int
eprt_v6(const char *arg, const char *want_ip, unsigned want_port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char ip[INET6_ADDRSTRLEN];

	memset(&ss, 0xa5, sizeof(ss));
	if (ftp_parse_eprt(arg, &ss) != 0 || ss.ss_family != AF_INET6)
		return 0;
	inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
	return strcmp(ip, want_ip) == 0 && sa_port(&ss) == want_port &&
	    sin6->sin6_scope_id == 0 && sin6->sin6_flowinfo == 0;
}

static int
eprt_bad(const char *arg)
{
	struct sockaddr_storage ss;

	return ftp_parse_eprt(arg, &ss) == -1;
}

static void
test_eprt(void)
{
	CHECK(eprt_v4("|1|132.235.1.2|6275|", "132.235.1.2", 6275));
	CHECK(eprt_v4("|1|10.0.0.1|1|", "10.0.0.1", 1));
	CHECK(eprt_v4("|1|10.0.0.1|65535|", "10.0.0.1", 65535));
	CHECK(eprt_v4("!1!10.0.0.1!21!", "10.0.0.1", 21));
	CHECK(eprt_v4("~1~10.0.0.1~21~", "10.0.0.1", 21));
	CHECK(eprt_v4("|1|10.0.0.1|00021|", "10.0.0.1", 21));
	CHECK(eprt_v6("|2|1080::8:800:200C:417A|5282|", "1080::8:800:200c:417a", 5282));
	CHECK(eprt_v6("|2|::1|1024|", "::1", 1024));
	CHECK(eprt_v6("|2|::ffff:10.1.2.3|1024|", "::ffff:10.1.2.3", 1024));
	CHECK(eprt_v6("|2|2001:db8:0:0:0:0:0:1|80|", "2001:db8::1", 80));
	CHECK(eprt_v6("!2!fe80::1!80!", "fe80::1", 80));

	CHECK(eprt_bad(NULL));
	CHECK(eprt_bad(""));
	CHECK(eprt_bad("|"));
	CHECK(eprt_bad("||||"));
	CHECK(eprt_bad("|1|10.0.0.1|0|"));		/* port 0 */
	CHECK(eprt_bad("|1|10.0.0.1|65536|"));
	CHECK(eprt_bad("|1|10.0.0.1|999999|"));
	CHECK(eprt_bad("|1|10.0.0.1|+21|"));
	CHECK(eprt_bad("|1|10.0.0.1|-21|"));
	CHECK(eprt_bad("|1|10.0.0.1| 21|"));
	CHECK(eprt_bad("|1|10.0.0.1|21 |"));
	CHECK(eprt_bad("|1|10.0.0.1||"));
	CHECK(eprt_bad("|1|10.0.0.1|21"));		/* 3 delimiters */
	CHECK(eprt_bad("|1|10.0.0.1|21||"));		/* 5 delimiters */
	CHECK(eprt_bad("|1|10.0.0.1|21| "));
	CHECK(eprt_bad(" |1|10.0.0.1|21|"));
	CHECK(eprt_bad("|3|10.0.0.1|21|"));		/* unknown proto */
	CHECK(eprt_bad("|01|10.0.0.1|21|"));
	CHECK(eprt_bad("||10.0.0.1|21|"));
	CHECK(eprt_bad("|1||21|"));
	CHECK(eprt_bad("|1|::1|21|"));		/* v6 under proto 1 */
	CHECK(eprt_bad("|2|10.0.0.1|21|"));		/* v4 under proto 2 */
	CHECK(eprt_bad("|1|10.0.0|21|"));
	CHECK(eprt_bad("|1|10.0.0.256|21|"));
	CHECK(eprt_bad("|1|10.0.0.1 |21|"));
	CHECK(eprt_bad("|2|fe80::1%eth0|21|"));	/* scope ids */
	CHECK(eprt_bad("|2|fe80::1%1|21|"));
	CHECK(eprt_bad("|2|[::1]|21|"));
	CHECK(eprt_bad("|2|1:2:3:4:5:6:7:8:9|21|"));
	CHECK(eprt_bad("|2|::ffff:255.255.255.255:1:2:3:4:5:6|21|"));	/* too long */
	CHECK(eprt_bad("1|1|10.0.0.1|21|1"));	/* digit delimiter */
	CHECK(eprt_bad(" 1 10.0.0.1 21 "));		/* space (32) */
	CHECK(eprt_bad("\x7f" "1\x7f" "10.0.0.1\x7f" "21\x7f"));
	CHECK(eprt_bad("\x01" "1\x01" "10.0.0.1\x01" "21\x01"));
	CHECK(eprt_bad("\xa6" "1\xa6" "10.0.0.1\xa6" "21\xa6"));
	CHECK(eprt_bad(".1.10.0.0.1.21."));		/* delimiter in address */
}

static void
test_epsv(void)
{
	enum ftp_epsv_kind k = (enum ftp_epsv_kind)-1;
	int proto = -1;

	CHECK(ftp_parse_epsv("", &k, &proto) == 0 && k == FTP_EPSV_ANY);
	CHECK(ftp_parse_epsv(NULL, &k, &proto) == 0 && k == FTP_EPSV_ANY);
	CHECK(ftp_parse_epsv("ALL", &k, &proto) == 0 && k == FTP_EPSV_ALL);
	CHECK(ftp_parse_epsv("all", &k, &proto) == 0 && k == FTP_EPSV_ALL);
	CHECK(ftp_parse_epsv("aLl", &k, &proto) == 0 && k == FTP_EPSV_ALL);
	CHECK(ftp_parse_epsv("1", &k, &proto) == 0 && k == FTP_EPSV_PROTO &&
	    proto == 1);
	CHECK(ftp_parse_epsv("2", &k, &proto) == 0 && k == FTP_EPSV_PROTO &&
	    proto == 2);
	CHECK(ftp_parse_epsv("3", &k, &proto) == -1);
	CHECK(ftp_parse_epsv("0", &k, &proto) == -1);
	CHECK(ftp_parse_epsv("12", &k, &proto) == -1);
	CHECK(ftp_parse_epsv(" 1", &k, &proto) == -1);
	CHECK(ftp_parse_epsv("ALL ", &k, &proto) == -1);
	CHECK(ftp_parse_epsv("AL", &k, &proto) == -1);
	CHECK(ftp_parse_epsv("ALLx", &k, &proto) == -1);
	CHECK(ftp_parse_epsv(" ", &k, &proto) == -1);
}

static void
test_pasv(void)
{
	struct in_addr a;
	char buf[64];

	inet_pton(AF_INET, "192.168.10.20", &a);
	CHECK_INT(ftp_format_pasv(buf, sizeof(buf), &a, 1025), 17);
	CHECK_STR(buf, "192,168,10,20,4,1");
	CHECK(ftp_format_pasv(buf, sizeof(buf), &a, 65535) > 0);
	CHECK_STR(buf, "192,168,10,20,255,255");
	CHECK(ftp_format_pasv(buf, sizeof(buf), &a, 0) > 0);
	CHECK_STR(buf, "192,168,10,20,0,0");
	CHECK_INT(ftp_format_pasv(buf, sizeof(buf), &a, 65536), -1);
	CHECK_INT(ftp_format_pasv(buf, 17, &a, 1025), -1);	/* no room for NUL */
	CHECK_INT(ftp_format_pasv(buf, 18, &a, 1025), 17);
}

static void
set4(struct sockaddr_storage *ss, const char *ip, unsigned port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

static void
set6(struct sockaddr_storage *ss, const char *ip, unsigned port, unsigned scope)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	sin6->sin6_scope_id = scope;
	inet_pton(AF_INET6, ip, &sin6->sin6_addr);
}

static void
test_same_host(void)
{
	struct sockaddr_storage a, b;

	set4(&a, "10.1.2.3", 21);
	set4(&b, "10.1.2.3", 40000);
	CHECK(sa_same_host(&a, &b));
	set4(&b, "10.1.2.4", 21);
	CHECK(!sa_same_host(&a, &b));
	set6(&b, "::ffff:10.1.2.3", 21, 0);
	CHECK(sa_same_host(&a, &b));
	CHECK(sa_same_host(&b, &a));
	set6(&b, "::ffff:10.1.2.4", 21, 0);
	CHECK(!sa_same_host(&a, &b));
	set6(&b, "::10.1.2.3", 21, 0);		/* v4-compatible is not mapped */
	CHECK(!sa_same_host(&a, &b));
	set6(&a, "2001:db8::1", 21, 0);
	set6(&b, "2001:db8::1", 1234, 0);
	CHECK(sa_same_host(&a, &b));
	set6(&b, "2001:db8::2", 21, 0);
	CHECK(!sa_same_host(&a, &b));
	set6(&a, "fe80::1", 21, 2);
	set6(&b, "fe80::1", 21, 0);
	CHECK(sa_same_host(&a, &b));
	set6(&a, "::ffff:1.2.3.4", 21, 0);
	set6(&b, "::ffff:1.2.3.4", 22, 0);
	CHECK(sa_same_host(&a, &b));
	set4(&a, "0.0.0.0", 0);
	set6(&b, "::", 0, 0);
	CHECK(!sa_same_host(&a, &b));
	memset(&a, 0, sizeof(a));
	a.ss_family = AF_UNIX;
	CHECK(!sa_same_host(&a, &a));
	CHECK_INT(sa_port(&a), 0);
	set4(&a, "1.2.3.4", 65535);
	CHECK_INT(sa_port(&a), 65535);
	set6(&a, "::1", 2121, 0);
	CHECK_INT(sa_port(&a), 2121);

	/* A dual-stack socket's IPv4 peer becomes plain IPv4, port kept. */
	set4(&a, "10.1.2.3", 21);
	set6(&b, "::ffff:10.1.2.3", 4321, 0);
	sa_unmap_v4(&b);
	CHECK_INT(b.ss_family, AF_INET);
	CHECK_INT(sa_port(&b), 4321);
	CHECK(sa_same_host(&a, &b));
	set6(&b, "::1", 21, 0);
	sa_unmap_v4(&b);
	CHECK_INT(b.ss_family, AF_INET6);
	set6(&b, "::10.1.2.3", 21, 0);
	sa_unmap_v4(&b);
	CHECK_INT(b.ss_family, AF_INET6);
}

static void
test_quote_257(void)
{
	char buf[16];

	CHECK_INT(ftp_quote_257("/home/u", buf, sizeof(buf)), 7);
	CHECK_STR(buf, "/home/u");
	CHECK_INT(ftp_quote_257("/a\"b", buf, sizeof(buf)), 5);
	CHECK_STR(buf, "/a\"\"b");
	CHECK_INT(ftp_quote_257("\"\"", buf, sizeof(buf)), 4);
	CHECK_STR(buf, "\"\"\"\"");
	CHECK_INT(ftp_quote_257("", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "");
	CHECK_INT(ftp_quote_257("", buf, 0), -1);
	/* Exactly fitting and one byte short, with and without a quote last. */
	CHECK_INT(ftp_quote_257("123456789012345", buf, 16), 15);
	CHECK_INT(ftp_quote_257("1234567890123456", buf, 16), -1);
	CHECK_INT(ftp_quote_257("1234567890123\"", buf, 16), 15);
	CHECK_STR(buf, "1234567890123\"\"");
	CHECK_INT(ftp_quote_257("12345678901234\"", buf, 16), -1);
	CHECK_INT(ftp_quote_257("\"\"\"\"\"\"\"\"", buf, 16), -1);
	CHECK_INT(ftp_quote_257("a", buf, 1), -1);
	CHECK_INT(ftp_quote_257("a", buf, 2), 1);
}

static void
test_path_join(void)
{
	char buf[8];

	CHECK_INT(ftp_path_join("/a", "b", buf, sizeof(buf)), 4);
	CHECK_STR(buf, "/a/b");
	CHECK_INT(ftp_path_join("/a/", "b", buf, sizeof(buf)), 4);
	CHECK_STR(buf, "/a/b");
	CHECK_INT(ftp_path_join("/a//", "/b", buf, sizeof(buf)), 4);
	CHECK_STR(buf, "/a/b");
	CHECK_INT(ftp_path_join("/", "b", buf, sizeof(buf)), 2);
	CHECK_STR(buf, "/b");
	CHECK_INT(ftp_path_join("", "b", buf, sizeof(buf)), 2);
	CHECK_STR(buf, "/b");
	CHECK_INT(ftp_path_join("/a", "", buf, sizeof(buf)), 3);
	CHECK_STR(buf, "/a/");
	CHECK_INT(ftp_path_join("/abc", "def", buf, sizeof(buf)), -1); /* 8+NUL */
	CHECK_INT(ftp_path_join("/abc", "de", buf, sizeof(buf)), 7);
	CHECK_STR(buf, "/abc/de");
	CHECK_INT(ftp_path_join("/abcdefgh", "x", buf, sizeof(buf)), -1);
	CHECK_INT(ftp_path_join("/a", "bcdefghijk", buf, sizeof(buf)), -1);
	CHECK_INT(ftp_path_join("", "", buf, 1), -1);
	CHECK_INT(ftp_path_join("", "", buf, 2), 1);
	CHECK_INT(ftp_path_join("a", "b", buf, 0), -1);
}

static void
test_path_ok(void)
{
	char *big = malloc(PATH_MAX + 1);

	CHECK_INT(ftp_path_ok("/etc"), 0);
	CHECK_INT(ftp_path_ok("a"), 0);
	CHECK_INT(ftp_path_ok(""), -1);
	CHECK_INT(ftp_path_ok(NULL), -1);
	if (big == NULL)
		return;
	memset(big, 'a', PATH_MAX - 1);
	big[PATH_MAX - 1] = '\0';
	CHECK_INT(ftp_path_ok(big), 0);
	big[PATH_MAX - 1] = 'a';
	big[PATH_MAX] = '\0';
	CHECK_INT(ftp_path_ok(big), -1);
	free(big);
}

static void
test_name_creatable(void)
{
	CHECK_INT(ftp_name_creatable("plain.txt"), 0);
	CHECK_INT(ftp_name_creatable("dir/with space\ttab\xff"), 0);
	CHECK_INT(ftp_name_creatable("evil\n226 Injected"), -1);
	CHECK_INT(ftp_name_creatable("cr\rinside"), -1);
	CHECK_INT(ftp_name_creatable("trailing\r"), -1);
	CHECK_INT(ftp_name_creatable("\nlead"), -1);
	CHECK_INT(ftp_name_creatable("a/b\r/c"), -1);
}

static void
test_list_args(void)
{
	static const struct {
		const char *arg, *path;
		unsigned flags;
	} cases[] = {
		{ "", "", 0 },
		{ "dir", "dir", 0 },
		{ "-la", "", FTP_LIST_ALL },
		{ "-l", "", 0 },
		{ "-l -a dir", "dir", FTP_LIST_ALL },
		{ "-A  sub dir", "sub dir", FTP_LIST_ALL },
		{ "  -l\tdir ", "dir ", 0 },
		{ "-lR /x/-y", "/x/-y", FTP_LIST_RECURSIVE },
		{ "-R -a", "", FTP_LIST_ALL | FTP_LIST_RECURSIVE },
		{ "-r", "", 0 },		/* reverse order: ignored */
		{ "-foo", "", 0 },		/* vsftpd does so */
		{ "./-foo", "./-foo", 0 },
		{ "-", "", 0 },
		{ "dir -aR", "dir -aR", 0 },	/* options only before the path */
	};
	unsigned flags = 99;
	size_t i;

	CHECK_STR(ftp_list_args(NULL, &flags), "");
	CHECK_INT(flags, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		flags = 99;
		CHECK_STR(ftp_list_args(cases[i].arg, &flags), cases[i].path);
		CHECK_INT(flags, cases[i].flags);
	}
}

static void
test_mdtm_write_args(void)
{
	struct tm tm;

	CHECK_STR(ftp_mdtm_write_args("20200102030405 a.txt", &tm), "a.txt");
	CHECK_INT(tm.tm_year, 120);
	CHECK_INT(tm.tm_mon, 0);
	CHECK_INT(tm.tm_mday, 2);
	CHECK_INT(tm.tm_hour, 3);
	CHECK_INT(tm.tm_min, 4);
	CHECK_INT(tm.tm_sec, 5);
	CHECK_INT(tm.tm_isdst, -1);
	/* The date alone is midnight; a fraction is taken and ignored. */
	CHECK_STR(ftp_mdtm_write_args("19991231 y2k file", &tm), "y2k file");
	CHECK_INT(tm.tm_hour, 0);
	CHECK_INT(tm.tm_mday, 31);
	CHECK_STR(ftp_mdtm_write_args("20240229235960.123 dir/leap", &tm), "dir/leap");
	CHECK_INT(tm.tm_sec, 60);
	/* Not the form: a plain MDTM of a name. */
	CHECK(ftp_mdtm_write_args("a.txt", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("2020 a.txt", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("202001020304 a.txt", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102030405", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102030405 ", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("x0200102030405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("202001020304051 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102030405.x a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102030405. a", &tm) == NULL);
	/* The form, but no such time. */
	CHECK(ftp_mdtm_write_args("2020010203040x a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20201302030405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200100030405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20230229030405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("21000229030405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200431030405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102240405 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102036005 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("20200102030461 a", &tm) == NULL);
	CHECK(ftp_mdtm_write_args("19691231235959 a", &tm) == NULL);
	CHECK_STR(ftp_mdtm_write_args("20000229000000 a", &tm), "a");
}

/* tilde_user_enable's lookup in a passwd file's text. */
static void
test_tilde_user(void)
{
	static const char pw[] =
		"root:x:0:0:root:/root:/bin/bash\n"
		"bo:x:1001:1001::/srv/bo:/bin/sh\n"
		"bob:x:1000:1000:Bob,,,:/home/bob:/bin/bash\n"
		"slash:x:1002:1002::/:/bin/sh\n"
		"rel:x:1003:1003::home/rel:/bin/sh\n"
		"empty:x:1004:1004:::/bin/sh\n"
		"short:x:1005\n"
		"last:x:1006:1006::/home/last";
	static const struct {
		const char *arg;
		size_t len;		/* of pw read; 0: all */
		const char *want;	/* NULL: -1 */
	} cases[] = {
		{ "~bob", 0, "/home/bob" },
		{ "~bob/pub/x.txt", 0, "/home/bob/pub/x.txt" },
		/* "bo" is not "bob", nor "bob" "bo". */
		{ "~bo/", 0, "/srv/bo/" },
		{ "~b", 0, NULL },
		{ "~bobby", 0, NULL },
		{ "~slash", 0, "/" },
		{ "~slash/etc", 0, "/etc" },
		/* The last line needs no newline; the home is the sixth field. */
		{ "~last", 0, "/home/last" },
		/* Not a user's: a relative or empty home, a short line, "~", "~/". */
		{ "~rel", 0, NULL },
		{ "~empty", 0, NULL },
		{ "~short", 0, NULL },
		{ "~", 0, NULL },
		{ "~/x", 0, NULL },
		{ "bob", 0, NULL },
		/* A colon in the name would line up with a line's first fields. */
		{ "~bob:x", 0, NULL },
		{ "~root:x:0:0:root", 0, NULL },
		/* Only len bytes are read: a file cut before a line hides it,
		 * one cut inside a line gives what it holds (the worker cuts
		 * a file it could not read whole after its last newline). */
		{ "~bob", 40, NULL },
		{ "~bob", 94, "/home/b" },
	};
	char out[64], tiny[10];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len != 0 ? cases[i].len : strlen(pw);
		int r = ftp_tilde_user(cases[i].arg, pw, len, out, sizeof(out));

		if (cases[i].want == NULL) {
			CHECK_INT(r, -1);
		} else {
			CHECK_INT(r, (int)strlen(cases[i].want));
			CHECK_STR(out, cases[i].want);
		}
	}
	CHECK_INT(ftp_tilde_user("~bob", "", 0, out, sizeof(out)), -1);
	/* Too long for out: nothing. */
	CHECK_INT(ftp_tilde_user("~bob", pw, strlen(pw), tiny, 9), -1);
	CHECK_INT(ftp_tilde_user("~bob", pw, strlen(pw), tiny, sizeof(tiny)), 9);
	CHECK_STR(tiny, "/home/bob");
	CHECK_INT(ftp_tilde_user("~bob/x", pw, strlen(pw), tiny, sizeof(tiny)), -1);
}

int
main(void)
{
	test_port();
	test_eprt();
	test_epsv();
	test_pasv();
	test_same_host();
	test_quote_257();
	test_path_join();
	test_tilde_user();
	test_path_ok();
	test_name_creatable();
	test_list_args();
	test_mdtm_write_args();
	return check_summary();
}
