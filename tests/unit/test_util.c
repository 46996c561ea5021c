/*
 * Unit tests for src/common/util.c: bounded copies and formatting, checked
 * number parsing, case-insensitive verb comparison.
 */
#include "src/common/util.h"
#include "check.h"

#include <limits.h>
#include <stdint.h>

static void
test_strlcpy(void)
{
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	CHECK_INT(tw_strlcpy(buf, "abc", sizeof(buf)), 0);
	CHECK_STR(buf, "abc");

	/* Exactly fills the buffer including the NUL. */
	CHECK_INT(tw_strlcpy(buf, "1234567", sizeof(buf)), 0);
	CHECK_STR(buf, "1234567");

	/* One byte too long: truncated, still terminated, reported. */
	CHECK_INT(tw_strlcpy(buf, "12345678", sizeof(buf)), -1);
	CHECK_STR(buf, "1234567");
	CHECK_INT(buf[7], '\0');

	CHECK_INT(tw_strlcpy(buf, "a much longer string", sizeof(buf)), -1);
	CHECK_STR(buf, "a much ");

	CHECK_INT(tw_strlcpy(buf, "", sizeof(buf)), 0);
	CHECK_STR(buf, "");

	/* Size 1 holds only the terminator. */
	CHECK_INT(tw_strlcpy(buf, "", 1), 0);
	CHECK_STR(buf, "");
	buf[0] = 'z';
	CHECK_INT(tw_strlcpy(buf, "a", 1), -1);
	CHECK_INT(buf[0], '\0');

	/* Size 0: nothing may be written at all. */
	buf[0] = 'z';
	CHECK_INT(tw_strlcpy(buf, "abc", 0), -1);
	CHECK_INT(buf[0], 'z');
}

static void
test_snprintf(void)
{
	char buf[8];

	CHECK_INT(tw_snprintf(buf, sizeof(buf), "%d-%s", 42, "ab"), 5);
	CHECK_STR(buf, "42-ab");

	CHECK_INT(tw_snprintf(buf, sizeof(buf), "%s", "1234567"), 7);
	CHECK_STR(buf, "1234567");

	/* Truncation is an error, and the buffer stays terminated. */
	CHECK_INT(tw_snprintf(buf, sizeof(buf), "%s", "12345678"), -1);
	CHECK_INT(strlen(buf), 7);
	CHECK_INT(tw_snprintf(buf, sizeof(buf), "%u", 4294967295u), -1);

	CHECK_INT(tw_snprintf(buf, sizeof(buf), "%s", ""), 0);
	CHECK_STR(buf, "");

	/* A zero-sized buffer cannot hold even the NUL. */
	CHECK_INT(tw_snprintf(buf, 0, "%s", ""), -1);
}

static void
test_parse_uint(void)
{
	unsigned long long v;

	v = 7;
	CHECK_INT(tw_parse_uint("0", 0, 10, &v), 0);
	CHECK_INT(v, 0);
	CHECK_INT(tw_parse_uint("21", 0, 65535, &v), 0);
	CHECK_INT(v, 21);
	CHECK_INT(tw_parse_uint("0021", 0, 65535, &v), 0);
	CHECK_INT(v, 21);

	/* Bounds are inclusive. */
	CHECK_INT(tw_parse_uint("1024", 1024, 65535, &v), 0);
	CHECK_INT(v, 1024);
	CHECK_INT(tw_parse_uint("65535", 1024, 65535, &v), 0);
	CHECK_INT(v, 65535);
	v = 7;
	CHECK_INT(tw_parse_uint("1023", 1024, 65535, &v), -1);
	CHECK_INT(tw_parse_uint("65536", 1024, 65535, &v), -1);
	CHECK_INT(v, 7);	/* untouched on failure */

	/* The full 64-bit range, and overflow right at 2^64. */
	CHECK(tw_parse_uint("18446744073709551615", 0, ULLONG_MAX, &v) == 0);
	CHECK(v == ULLONG_MAX);
	v = 7;
	CHECK_INT(tw_parse_uint("18446744073709551616", 0, ULLONG_MAX, &v), -1);
	CHECK_INT(tw_parse_uint("18446744073709551620", 0, ULLONG_MAX, &v), -1);
	CHECK_INT(tw_parse_uint("99999999999999999999", 0, ULLONG_MAX, &v), -1);
	CHECK_INT(tw_parse_uint("184467440737095516150", 0, ULLONG_MAX, &v), -1);
	CHECK_INT(v, 7);
	CHECK(tw_parse_uint("18446744073709551610", 0, ULLONG_MAX, &v) == 0);
	CHECK(v == ULLONG_MAX - 5);

	/* Empty, signs, spaces, junk anywhere. */
	v = 7;
	CHECK_INT(tw_parse_uint("", 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint(NULL, 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint("-1", 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint("+1", 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint(" 1", 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint("1 ", 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint("1\n", 0, 10, &v), -1);
	CHECK_INT(tw_parse_uint("1a", 0, 100, &v), -1);
	CHECK_INT(tw_parse_uint("0x10", 0, 100, &v), -1);
	CHECK_INT(tw_parse_uint("1.5", 0, 100, &v), -1);
	CHECK_INT(tw_parse_uint("abc", 0, 100, &v), -1);
	CHECK_INT(v, 7);
}

static void
test_strcaseeq(void)
{
	CHECK(tw_strcaseeq("USER", "USER"));
	CHECK(tw_strcaseeq("user", "USER"));
	CHECK(tw_strcaseeq("uSeR", "UsEr"));
	CHECK(tw_strcaseeq("", ""));
	CHECK(!tw_strcaseeq("USER", "USE"));
	CHECK(!tw_strcaseeq("USE", "USER"));
	CHECK(!tw_strcaseeq("USER", ""));
	CHECK(!tw_strcaseeq("PASS", "PASV"));
	/* ASCII only: '@' and '`' are not case variants of letters. */
	CHECK(!tw_strcaseeq("@", "`"));
	CHECK(!tw_strcaseeq("[", "{"));
	CHECK(!tw_strcaseeq("\xc4", "\xe4"));
}

int
main(void)
{
	test_strlcpy();
	test_snprintf();
	test_parse_uint();
	test_strcaseeq();
	return check_summary();
}
