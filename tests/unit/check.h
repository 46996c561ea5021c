/*
 * Minimal unit-test helpers shared by the programs in tests/unit. Each
 * test program runs all its checks, prints failures with file:line,
 * prints a summary line "N passed, N failed" and exits non-zero if
 * anything failed.
 */
#ifndef TW_CHECK_H
#define TW_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond) do { \
	if (cond) { check_passed++; } else { check_failed++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(got, want) do { \
	const char *g_ = (got), *w_ = (want); \
	if (g_ != NULL && strcmp(g_, w_) == 0) { check_passed++; } else { check_failed++; \
		fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, \
			g_ ? g_ : "(null)", w_); } \
} while (0)

#define CHECK_INT(got, want) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (g_ == w_) { check_passed++; } else { check_failed++; \
		fprintf(stderr, "%s:%d: %s = %lld, want %lld\n", __FILE__, __LINE__, #got, g_, w_); } \
} while (0)

static inline int
check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 ? 0 : 1;
}

#endif
