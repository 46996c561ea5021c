/*
 * TYPE A line-ending conversion (RFC 959 3.1.1.1: the network form of a
 * line end is CRLF). Both directions are streaming: a chunk boundary may
 * fall between the CR and the LF of a pair, and the result must be the
 * same as converting the whole stream at once. Runs of plain bytes are
 * found with memchr and copied with memcpy, so text costs about what a
 * copy costs.
 */
#include "src/proto/ascii.h"

#include <string.h>

size_t
ascii_to_net(const char *in, size_t n, char *out, int *prev_cr)
{
	const char *p = in, *end = in + n, *lf;
	char *o = out;
	int cr_before;

	if (n == 0)
		return 0;
	while ((lf = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		memcpy(o, p, (size_t)(lf - p));
		o += lf - p;
		/* The byte before this LF may be the last one of the last chunk. */
		cr_before = lf > in ? lf[-1] == '\r' : *prev_cr;
		if (!cr_before)
			*o++ = '\r';
		*o++ = '\n';
		p = lf + 1;
	}
	memcpy(o, p, (size_t)(end - p));
	o += end - p;
	*prev_cr = in[n - 1] == '\r';
	return (size_t)(o - out);
}

size_t
ascii_from_net(const char *in, size_t n, char *out, int *pending_cr)
{
	const char *p = in, *end = in + n, *cr;
	char *o = out;

	if (n == 0)
		return 0;
	if (*pending_cr) {
		*pending_cr = 0;
		/* CR from the last chunk: dropped if this chunk starts its LF. */
		if (*p != '\n')
			*o++ = '\r';
	}
	while ((cr = memchr(p, '\r', (size_t)(end - p))) != NULL) {
		memcpy(o, p, (size_t)(cr - p));
		o += cr - p;
		if (cr + 1 == end) {
			/* Cannot decide yet: the LF may be in the next chunk. */
			*pending_cr = 1;
			return (size_t)(o - out);
		}
		if (cr[1] == '\n') {
			*o++ = '\n';
			p = cr + 2;
		} else {
			/* A lone CR is data (RFC 959 leaves it alone too). */
			*o++ = '\r';
			p = cr + 1;
		}
	}
	memcpy(o, p, (size_t)(end - p));
	o += end - p;
	return (size_t)(o - out);
}

size_t
ascii_from_net_end(char *out, int *pending_cr)
{
	if (!*pending_cr)
		return 0;
	*pending_cr = 0;
	out[0] = '\r';
	return 1;
}
