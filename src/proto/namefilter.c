/*
 * The deny_file / hide_file matcher (namefilter.h). Names come from the
 * client (deny_file) or from the disk (hide_file), so the matcher is
 * bounded by construction: no recursion, no allocation, and a '*' only
 * ever resumes from its last position, which makes a pattern of length
 * p against a name of length n cost at most p * n steps.
 */
#include "src/proto/namefilter.h"

#include <string.h>

/* Glob match of pat[0..plen) against s[0..slen) with '*' and '?'. */
static int
glob_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	size_t p = 0, i = 0, star_p = 0, star_i = 0;
	int have_star = 0;

	while (i < slen) {
		if (p < plen && pat[p] == '*') {
			have_star = 1;
			star_p = ++p;
			star_i = i;
		} else if (p < plen && (pat[p] == '?' || pat[p] == s[i])) {
			p++;
			i++;
		} else if (have_star) {
			p = star_p;
			i = ++star_i;
		} else {
			return 0;
		}
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

int
namefilter_match_name(const char *filter, const char *name, size_t len)
{
	size_t flen, start, end;

	if (filter == NULL)
		return 0;
	flen = strlen(filter);
	if (flen >= 2 && filter[0] == '{' && filter[flen - 1] == '}') {
		filter++;
		flen -= 2;
	}
	for (start = 0; start < flen; start = end + 1) {
		const char *comma = memchr(filter + start, ',', flen - start);

		end = comma != NULL ? (size_t)(comma - filter) : flen;
		if (end > start && glob_match(filter + start, end - start, name, len))
			return 1;
	}
	return 0;
}

int
namefilter_match_path(const char *filter, const char *path)
{
	const char *p = path;

	if (filter == NULL || filter[0] == '\0' || path == NULL)
		return 0;
	while (*p != '\0') {
		size_t len = strcspn(p, "/");
		int step = (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.');

		if (len > 0 && !step && namefilter_match_name(filter, p, len))
			return 1;
		p += len;
		if (*p == '/')
			p++;
	}
	return 0;
}
