/*
 * The generator's FTP reply reader and the /proc parsers behind -k: a
 * wrong reply boundary or a misread ppid would make every figure wrong.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ftpreply.h"
#include "procmem.h"

/* Feeds text in pieces of `step` bytes; collects codes and last texts. */
static int
feed(struct ftp_reply *r, const char *text, size_t step, int *codes,
     char lasts[][FTP_REPLY_LASTSZ], int max)
{
	size_t off = 0, len = strlen(text);
	int n = 0, code, got;

	while (off < len) {
		size_t avail, k;
		char *p = ftp_reply_space(r, &avail);

		k = len - off < step ? len - off : step;
		if (k > avail)
			k = avail;
		memcpy(p, text + off, k);
		ftp_reply_added(r, k);
		off += k;
		while ((got = ftp_reply_next(r, &code)) == 1) {
			if (n < max) {
				codes[n] = code;
				memcpy(lasts[n], r->last, FTP_REPLY_LASTSZ);
			}
			n++;
		}
		if (got < 0)
			return -1;
	}
	return n;
}

static void
test_replies(void)
{
	const char *text =
	    "220-Welcome\r\n"
	    "230 not the end: another code inside a 220 reply\r\n"
	    "220-still going\r\n"
	    " 220 indented, not the end\r\n"
	    "220 ready\r\n"
	    "331 Password please\r\n"
	    "230\r\n"
	    "227 Entering Passive Mode (127,0,0,1,156,64).\n"
	    "150-a\r\n150 b\r\n226 done\r\n";
	size_t steps[] = { 1, 2, 3, 7, 64, 4096 };
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct ftp_reply r;
		int codes[8];
		char lasts[8][FTP_REPLY_LASTSZ];

		ftp_reply_init(&r);
		CHECK_INT(feed(&r, text, steps[i], codes, lasts, 8), 6);
		CHECK_INT(codes[0], 220);
		CHECK_STR(lasts[0], "ready");
		CHECK_INT(codes[1], 331);
		CHECK_INT(codes[2], 230);
		CHECK_STR(lasts[2], "");
		CHECK_INT(codes[3], 227);
		CHECK_STR(lasts[3], "Entering Passive Mode (127,0,0,1,156,64).");
		CHECK_INT(codes[4], 150);
		CHECK_INT(codes[5], 226);
		CHECK_INT(r.len, 0);
	}
}

static void
test_bad_replies(void)
{
	struct ftp_reply r;
	int codes[4];
	char lasts[4][FTP_REPLY_LASTSZ];
	char big[2000];

	ftp_reply_init(&r);
	CHECK_INT(feed(&r, "SSH-2.0-OpenSSH\r\n", 100, codes, lasts, 4), -1);
	ftp_reply_init(&r);
	CHECK_INT(feed(&r, "2200 x\r\n", 100, codes, lasts, 4), -1);
	ftp_reply_init(&r);
	CHECK_INT(feed(&r, "620 x\r\n", 100, codes, lasts, 4), -1);

	/* An overlong middle line is skipped; an overlong final one is not. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "220-", 4);
	memcpy(big + 1500, "\r\n220 ok\r\n", 11);
	ftp_reply_init(&r);
	CHECK_INT(feed(&r, big, 100, codes, lasts, 4), 1);
	CHECK_INT(codes[0], 220);
	CHECK_STR(lasts[0], "ok");
	memcpy(big, "220 ", 4);
	ftp_reply_init(&r);
	CHECK_INT(feed(&r, big, 100, codes, lasts, 4), -1);
}

static void
test_pasv(void)
{
	uint16_t port = 0;

	CHECK_INT(ftp_parse_pasv("Entering Passive Mode (127,0,0,1,156,64).", &port), 0);
	CHECK_INT(port, 156 * 256 + 64);
	CHECK_INT(ftp_parse_pasv("=127,0,0,1,4,1", &port), 0);
	CHECK_INT(port, 1025);
	/* Numbers before the six (here "227"-like words) are not the six. */
	CHECK_INT(ftp_parse_pasv("Mode 12 ok 10,0,0,2,0,21", &port), 0);
	CHECK_INT(port, 21);
	CHECK_INT(ftp_parse_pasv("Entering Passive Mode (127,0,0,1,256,1)", &port), -1);
	CHECK_INT(ftp_parse_pasv("Entering Passive Mode (127,0,0,1,0,0)", &port), -1);
	CHECK_INT(ftp_parse_pasv("Entering Passive Mode (127,0,0,1)", &port), -1);
	CHECK_INT(ftp_parse_pasv("", &port), -1);

	CHECK_INT(ftp_parse_epsv("Entering Extended Passive Mode (|||40001|)", &port), 0);
	CHECK_INT(port, 40001);
	CHECK_INT(ftp_parse_epsv("ok (!!!21!)", &port), 0);
	CHECK_INT(port, 21);
	CHECK_INT(ftp_parse_epsv("ok (|||70000|)", &port), -1);
	CHECK_INT(ftp_parse_epsv("ok (||40001|)", &port), -1);
	CHECK_INT(ftp_parse_epsv("ok (|||40001)", &port), -1);
	CHECK_INT(ftp_parse_epsv("ok", &port), -1);
}

static void
test_size(void)
{
	uint64_t v = 0;

	CHECK_INT(ftp_parse_size("10240", &v), 0);
	CHECK_INT(v, 10240);
	CHECK_INT(ftp_parse_size("0", &v), 0);
	CHECK_INT(v, 0);
	CHECK_INT(ftp_parse_size("18446744073709551615", &v), -1);
	CHECK_INT(ftp_parse_size("12x", &v), -1);
	CHECK_INT(ftp_parse_size("", &v), -1);
	CHECK_INT(ftp_parse_size("-1", &v), -1);
}

static void
test_proc(void)
{
	struct procmem m;

	CHECK_INT(procmem_parse_ppid("123 (vsftpd) S 45 123 123 0 -1"), 45);
	CHECK_INT(procmem_parse_ppid("7 (a) b) c) R 1 7 7 0"), 1);
	CHECK_INT(procmem_parse_ppid("7 (x)"), -1);
	CHECK_INT(procmem_parse_ppid("garbage"), -1);

	memset(&m, 0, sizeof(m));
	procmem_parse_rollup(
	    "55d0c0de0000-7ffd00000000 ---p 00000000 00:00 0  [rollup]\n"
	    "Rss:                1000 kB\n"
	    "Pss:                 400 kB\n"
	    "Pss_Anon:            100 kB\n"
	    "Shared_Clean:        600 kB\n"
	    "Private_Clean:        30 kB\n"
	    "Private_Dirty:        70 kB\n", &m);
	CHECK_INT(m.rss_kb, 1000);
	CHECK_INT(m.pss_kb, 400);
	CHECK_INT(m.priv_kb, 100);
}

int
main(void)
{
	test_replies();
	test_bad_replies();
	test_pasv();
	test_size();
	test_proc();
	return check_summary();
}
