/*
 * Fuzz target for the PROXY protocol header (src/proto/proxyhdr.c).
 * Beyond "never crashes", it abort()s when a property the pre-login
 * worker's read relies on breaks:
 *   - a whole header is never longer than the bytes given nor than
 *     PROXYHDR_MAX, and PROXY names IPv4 or IPv6;
 *   - the answer depends only on the header's own bytes: parsing exactly
 *     the consumed bytes gives the same header, and any shorter prefix of
 *     a good header is PROXYHDR_MORE (so a header arriving in pieces is
 *     read the same as one arriving whole);
 *   - a failure names its reason;
 *   - the sniffer says yes for every header the parser accepts, and
 *     what it says is no header always fails to parse.
 */
#include "src/proto/proxyhdr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int ok)
{
	if (!ok)
		abort();
}

static void
fuzz_one(const uint8_t *data, size_t size)
{
	struct proxyhdr h, h2;
	size_t used = 0, used2 = 0, i;
	const char *why = NULL;
	enum proxyhdr_status st = proxyhdr_parse(data, size, &h, &used, &why);

	enum proxyhdr_sniffed sn = proxyhdr_sniff(data, size);

	check(why != NULL);
	check(sn == PROXYHDR_SNIFF_NO || sn == PROXYHDR_SNIFF_YES || sn == PROXYHDR_SNIFF_MORE);
	/* What the sniffer lets through as no header never parses as one. */
	if (sn == PROXYHDR_SNIFF_NO)
		check(st == PROXYHDR_BAD);
	if (st == PROXYHDR_BAD || st == PROXYHDR_TOO_LONG) {
		check(why[0] != '\0');
		return;
	}
	if (st == PROXYHDR_MORE) {
		check(size < PROXYHDR_MAX);
		return;
	}
	check(st == PROXYHDR_OK);
	check(used > 0 && used <= size && used <= PROXYHDR_MAX);
	check(h.version == 1 || h.version == 2);
	check(h.kind == PROXYHDR_LOCAL ||
	      (h.kind == PROXYHDR_PROXY && (h.family == AF_INET || h.family == AF_INET6)));
	check(proxyhdr_sniff(data, size) == PROXYHDR_SNIFF_YES);
	/* Exactly the header, in an exactly sized block: the same answer. */
	{
		unsigned char *copy = malloc(used);

		check(copy != NULL);
		memcpy(copy, data, used);
		check(proxyhdr_parse(copy, used, &h2, &used2, &why) == PROXYHDR_OK);
		check(used2 == used && h2.kind == h.kind && h2.family == h.family &&
		      h2.src_port == h.src_port && h2.dst_port == h.dst_port &&
		      memcmp(h2.src, h.src, sizeof(h.src)) == 0 &&
		      memcmp(h2.dst, h.dst, sizeof(h.dst)) == 0);
		for (i = 0; i < used; i++)
			check(proxyhdr_parse(copy, i, &h2, &used2, &why) == PROXYHDR_MORE);
		free(copy);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size);
	return 0;
}
