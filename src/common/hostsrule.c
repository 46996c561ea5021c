#include "src/common/hostsrule.h"

#include <string.h>
#include <strings.h>

/* Whether the token tok (len bytes) is name, or name@host. */
static int
token_names(const char *tok, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len >= n && strncasecmp(tok, name, n) == 0 && (len == n || tok[n] == '@');
}

unsigned
hostsrule_names(const char *rule, const char *a, const char *b)
{
	const char *p = rule, *end;
	unsigned found = 0;

	p += strspn(p, " \t");
	if (*p == '#' || (end = strchr(p, ':')) == NULL)
		return 0;
	while (p < end) {
		size_t len;

		p += strspn(p, " \t,\r\n");
		if (p >= end)
			break;
		len = strcspn(p, " \t,\r\n:");
		if (p + len > end)
			len = (size_t)(end - p);
		if (token_names(p, len, a))
			found |= HOSTSRULE_NAMES_A;
		if (token_names(p, len, b))
			found |= HOSTSRULE_NAMES_B;
		p += len;
	}
	return found;
}
