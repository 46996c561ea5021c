/*
 * Fuzz target for the deny_file / hide_file matcher
 * (src/proto/namefilter.c). The input is "filter NUL name" (no NUL: the
 * whole input is the name, against a fixed filter). Beyond "never
 * crashes", it abort()s when:
 *   - namefilter_match_name differs from a plain dynamic-programming
 *     glob over the same comma-separated patterns (the reference);
 *   - namefilter_match_path differs from matching each component other
 *     than "." and ".." on its own.
 * Filter and name sit in exactly-sized heap blocks, so ASan catches a
 * read past either.
 */
#include "src/proto/namefilter.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bound on what the reference's table covers; longer inputs skip it. */
#define REF_MAX 128

static void
check(int ok)
{
	if (!ok)
		abort();
}

/* dp[i][j]: pat[0..i) matches s[0..j). */
static int
ref_glob(const char *pat, size_t plen, const char *s, size_t slen)
{
	static unsigned char dp[REF_MAX + 1][REF_MAX + 1];
	size_t i, j;

	memset(dp, 0, sizeof(dp));
	dp[0][0] = 1;
	for (i = 1; i <= plen; i++) {
		dp[i][0] = dp[i - 1][0] && pat[i - 1] == '*';
		for (j = 1; j <= slen; j++) {
			if (pat[i - 1] == '*')
				dp[i][j] = dp[i - 1][j] || dp[i][j - 1];
			else
				dp[i][j] = dp[i - 1][j - 1] &&
				    (pat[i - 1] == '?' || pat[i - 1] == s[j - 1]);
		}
	}
	return dp[plen][slen];
}

static int
ref_name(const char *filter, const char *s, size_t slen)
{
	size_t flen = strlen(filter), start, end;

	if (flen >= 2 && filter[0] == '{' && filter[flen - 1] == '}') {
		filter++;
		flen -= 2;
	}
	for (start = 0; start < flen; start = end + 1) {
		for (end = start; end < flen && filter[end] != ','; end++)
			;
		if (end > start && ref_glob(filter + start, end - start, s, slen))
			return 1;
	}
	return 0;
}

static int
ref_path(const char *filter, const char *path)
{
	size_t i = 0, n = strlen(path);

	if (filter[0] == '\0')
		return 0;
	while (i < n) {
		size_t j = i;

		while (j < n && path[j] != '/')
			j++;
		if (j > i && !(j - i == 1 && path[i] == '.') &&
		    !(j - i == 2 && path[i] == '.' && path[i + 1] == '.') &&
		    namefilter_match_name(filter, path + i, j - i))
			return 1;
		i = j + 1;
	}
	return 0;
}

static char *
copy_str(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);

	check(p != NULL);
	memcpy(p, data, size);
	p[size] = '\0';
	return p;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t flen = nul != NULL ? (size_t)(nul - data) : 0;
	const uint8_t *rest = nul != NULL ? nul + 1 : data;
	size_t rlen = size - (size_t)(rest - data);
	char *filter = nul != NULL ? copy_str(data, flen) : copy_str((const uint8_t *)"{*.mp3,?x*,.p}", 14);
	char *name = malloc(rlen > 0 ? rlen : 1), *path;
	int got;

	check(name != NULL);
	memcpy(name, rest, rlen);
	got = namefilter_match_name(filter, name, rlen);
	if (strlen(filter) <= REF_MAX && rlen <= REF_MAX)
		check(got == ref_name(filter, name, rlen));
	free(name);
	/* A path stops at its first NUL, as a C string from the client does. */
	path = copy_str(rest, strnlen((const char *)rest, rlen));
	check(namefilter_match_path(filter, path) == ref_path(filter, path));
	free(path);
	free(filter);
	return 0;
}
