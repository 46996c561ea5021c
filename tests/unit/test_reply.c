/*
 * Unit tests for src/common/reply.c: the one formatter of reply lines
 * (codes, continuation lines, cutting, CR/LF scrubbing) and reply_final
 * over a real socketpair.
 */
#include "src/common/reply.h"
#include "check.h"

#include <stdarg.h>
#include <sys/socket.h>
#include <unistd.h>

static size_t __attribute__((format(printf, 5, 6)))
fmt(char *buf, size_t cap, int code, char sep, const char *f, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, f);
	n = reply_vformat(buf, cap, code, sep, f, ap);
	va_end(ap);
	buf[n] = '\0';
	return n;
}

static void
test_format(void)
{
	char buf[REPLY_MAX_LINE + 1];
	char big[REPLY_MAX_LINE * 2];
	size_t n;

	CHECK_INT(fmt(buf, sizeof(buf) - 1, 220, ' ', "%s %d", "ready", 7), 13);
	CHECK_STR(buf, "220 ready 7\r\n");
	fmt(buf, sizeof(buf) - 1, 211, '-', "Features:");
	CHECK_STR(buf, "211-Features:\r\n");
	fmt(buf, sizeof(buf) - 1, 0, ' ', " MDTM");
	CHECK_STR(buf, " MDTM\r\n");
	/* A name with CR or LF cannot forge a second reply line. */
	fmt(buf, sizeof(buf) - 1, 257, ' ', "\"%s\"", "evil\r\n226 Injected");
	CHECK_STR(buf, "257 \"evil??226 Injected\"\r\n");
	/* Too long: cut, still one line ending in CRLF. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = fmt(buf, sizeof(buf) - 1, 550, ' ', "%s", big);
	CHECK_INT(n, REPLY_MAX_LINE - 1);
	CHECK(memcmp(buf, "550 aaa", 7) == 0);
	CHECK(buf[n - 2] == '\r' && buf[n - 1] == '\n');
	/* A tiny buffer gets nothing rather than an overflow. */
	CHECK_INT(fmt(buf, 4, 220, ' ', "x"), 0);
	/* A small buffer: the text is cut to what fits with CRLF. */
	n = fmt(buf, 9, 421, ' ', "%s", "closing");
	CHECK_INT(n, 8);
	CHECK_STR(buf, "421 cl\r\n");
}

static void
test_final(void)
{
	int sv[2];
	char got[128];
	ssize_t n;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	reply_final(sv[0], 421, "Service not available.");
	n = read(sv[1], got, sizeof(got) - 1);
	CHECK_INT(n, 28);
	got[n > 0 ? n : 0] = '\0';
	CHECK_STR(got, "421 Service not available.\r\n");
	/* A peer that is gone costs nothing (no SIGPIPE, no block). */
	close(sv[1]);
	reply_final(sv[0], 421, "gone");
	close(sv[0]);
}

int
main(void)
{
	test_format();
	test_final();
	return check_summary();
}
