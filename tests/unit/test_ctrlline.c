/*
 * Unit tests for src/proto/ctrlline.c: every path of the control-line
 * cleaning (CR before LF, Telnet commands with and without an option
 * byte, IAC IAC, a lone IAC, CR NUL, a refused NUL) and of the ABOR
 * test the transfer's watch of the control connection uses.
 */
#include "src/proto/ctrlline.h"
#include "check.h"

#include <string.h>

#define IAC "\xff"
#define IP "\xf4"
#define DM "\xf2"
#define SE "\xf0"
#define WILL "\xfb"
#define WONT "\xfc"
#define DO "\xfd"
#define DONT "\xfe"

/* Parses the first len bytes of in (a copy) and returns the result. */
static const char *
parse(const char *in, size_t len, ssize_t *n)
{
	static char buf[256];

	memcpy(buf, in, len);
	buf[len] = 'X';		/* must become the terminating NUL */
	*n = ctrlline_parse(buf, len);
	return buf;
}

#define PARSE_OK(in, want) do { \
	ssize_t n_; \
	const char *got_ = parse((in), sizeof(in) - 1, &n_); \
	CHECK_INT(n_, sizeof(want) - 1); \
	CHECK(n_ >= 0 && memcmp(got_, (want), sizeof(want)) == 0); \
} while (0)

#define PARSE_BAD(in) do { \
	ssize_t n_; \
	(void)parse((in), sizeof(in) - 1, &n_); \
	CHECK_INT(n_, -1); \
} while (0)

static void
test_plain(void)
{
	PARSE_OK("NOOP", "NOOP");
	PARSE_OK("", "");
	PARSE_OK("RETR a b", "RETR a b");
	/* The CR of CRLF goes; only one, and only at the end. */
	PARSE_OK("NOOP\r", "NOOP");
	PARSE_OK("\r", "");
	PARSE_OK("a\r\r", "a\r");
	PARSE_OK("a\rb", "a\rb");
	/* Bytes above 127 (UTF-8 names) pass through. */
	PARSE_OK("CWD \xc3\xa9t\xc3\xa9", "CWD \xc3\xa9t\xc3\xa9");
}

static void
test_telnet(void)
{
	/* What clients send before ABOR (RFC 959 4.1.3). */
	PARSE_OK(IAC IP IAC DM "ABOR", "ABOR");
	PARSE_OK(IAC IP IAC DM "ABOR\r", "ABOR");
	/* IAC IAC is a data byte 0xff. */
	PARSE_OK("STOR a" IAC IAC "b", "STOR a\xff" "b");
	PARSE_OK(IAC IAC IAC IAC, "\xff\xff");
	/* Option negotiation carries one option byte; all three go. */
	PARSE_OK("NO" IAC WILL "\x01" "OP", "NOOP");
	PARSE_OK("NO" IAC WONT "\x01" "OP", "NOOP");
	PARSE_OK("NO" IAC DO "\x03" "OP", "NOOP");
	PARSE_OK("NO" IAC DONT "\x03" "OP", "NOOP");
	/* The option byte may be IAC itself: it is not unescaped. */
	PARSE_OK("A" IAC DO IAC "B", "AB");
	/* Negotiation cut off by the end of the line: the two bytes go. */
	PARSE_OK("NOOP" IAC DO, "NOOP");
	/* Any other byte after IAC is a command of two bytes. */
	PARSE_OK("NO" IAC SE "OP", "NOOP");
	PARSE_OK("NO" IAC "AOP", "NOOP");
	/* A lone IAC at the very end is kept as data. */
	PARSE_OK("NOOP" IAC, "NOOP\xff");
	/* The CR of CRLF goes first: the IAC before it is then alone. */
	PARSE_OK("NOOP" IAC "\r", "NOOP\xff");
}

static void
test_nul(void)
{
	/* RFC 2640: CR NUL stands for a CR in a path name. */
	PARSE_OK("STOR a\r\0b", "STOR a\rb");
	PARSE_OK("STOR a\r\0\0b", "STOR a\rb");
	PARSE_OK("x\r\0", "x\r");
	/* Any other NUL refuses the line. */
	PARSE_BAD("\0");
	PARSE_BAD("NO\0OP");
	PARSE_BAD("\0\r");
	PARSE_BAD("a" IAC IAC "\0");
	/* A CR dropped with a Telnet command does not license a NUL. */
	PARSE_BAD("a" IAC "\r\0");
}

/* Whether the bytes (a copy) are ABOR once cleaned. */
static int
is_abor(const char *in, size_t len)
{
	static char buf[256];

	memcpy(buf, in, len);
	buf[len] = 'X';
	return ctrlline_is_abor(buf, len);
}

#define IS_ABOR(in) is_abor((in), sizeof(in) - 1)

static void
test_is_abor(void)
{
	CHECK(IS_ABOR("ABOR"));
	CHECK(IS_ABOR("ABOR\r"));
	CHECK(IS_ABOR("abor\r"));
	/* The Telnet IP and Synch clients put before it (RFC 959 4.1.3),
	 * also when the watch took the bytes before an urgent mark apart. */
	CHECK(IS_ABOR(IAC IP IAC DM "ABOR\r"));
	CHECK(IS_ABOR(IAC IP IAC DM "ABOR"));
	CHECK(IS_ABOR(IAC DM "AB" IAC IP "OR"));
	CHECK(!IS_ABOR(""));
	CHECK(!IS_ABOR("\r"));
	CHECK(!IS_ABOR("ABO"));
	CHECK(!IS_ABOR("ABORT"));
	CHECK(!IS_ABOR("ABOR x"));
	CHECK(!IS_ABOR(" ABOR"));
	CHECK(!IS_ABOR("NOOP"));
	/* A refused line (a NUL) is no ABOR either. */
	CHECK(!IS_ABOR("ABOR\0"));
	/* IAC IAC is a data byte, not a Telnet command. */
	CHECK(!IS_ABOR(IAC IAC "ABOR"));
}

int
main(void)
{
	test_plain();
	test_telnet();
	test_nul();
	test_is_abor();
	return check_summary();
}
