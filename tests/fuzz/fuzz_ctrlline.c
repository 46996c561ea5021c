/*
 * Fuzz target for the control-line cleaning (src/proto/ctrlline.c). Beyond
 * "never crashes", it abort()s when a property the control reader relies
 * on breaks:
 *   - the result is -1 or a length no longer than the input, the string
 *     is NUL-terminated there and holds no other NUL (the dispatcher
 *     works on C strings);
 *   - a line without IAC and NUL comes back unchanged but for one CR at
 *     its end;
 *   - any bytes without NUL, sent with every 0xff doubled (RFC 854's
 *     escape), come back exactly, unless they end in CR;
 *   - ctrlline_is_abor holds exactly for lines that clean to "ABOR" in
 *     any case;
 *   - the ABOR watch (ctrlline_abor_peek) takes bytes only when it must:
 *     exactly an ABOR line with its LF, or everything before an urgent
 *     mark when no LF came; it asks about the mark only when no LF came,
 *     and says OTHER/PARTIAL as the line's state says.
 * The buffer handed in is exactly len + 1 bytes, as the API asks, so ASan
 * catches a write past it.
 */
#include "src/proto/ctrlline.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int ok)
{
	if (!ok)
		abort();
}

static char *
copy_of(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);

	check(p != NULL);
	memcpy(p, data, size);
	return p;
}

static void
fuzz_parse(const uint8_t *data, size_t size)
{
	char *buf = copy_of(data, size);
	ssize_t n = ctrlline_parse(buf, size);
	int plain = memchr(data, TELNET_IAC, size) == NULL && memchr(data, '\0', size) == NULL;

	check(n >= -1 && n <= (ssize_t)size);
	if (n >= 0) {
		check(buf[n] == '\0');
		check(strlen(buf) == (size_t)n);
	}
	if (plain) {
		size_t want = size > 0 && data[size - 1] == '\r' ? size - 1 : size;

		check(n == (ssize_t)want && memcmp(buf, data, want) == 0);
	}
	free(buf);
}

/* RFC 854: a data byte 0xff is sent as IAC IAC; NULs are left out. */
static void
fuzz_escaped(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *wire = malloc(2 * size + 1);
	size_t i, tlen = 0, wlen = 0;
	ssize_t n;

	check(text != NULL && wire != NULL);
	for (i = 0; i < size; i++) {
		if (data[i] == '\0')
			continue;
		text[tlen++] = (char)data[i];
		wire[wlen++] = (char)data[i];
		if (data[i] == TELNET_IAC)
			wire[wlen++] = (char)TELNET_IAC;
	}
	n = ctrlline_parse(wire, wlen);
	if (tlen == 0 || text[tlen - 1] != '\r')
		check(n == (ssize_t)tlen && memcmp(wire, text, tlen) == 0);
	else
		check(n == (ssize_t)tlen - 1 && memcmp(wire, text, tlen - 1) == 0);
	free(text);
	free(wire);
}

/* ABOR is exactly the lines that clean to "ABOR" in any case. */
static void
fuzz_is_abor(const uint8_t *data, size_t size)
{
	char *a = copy_of(data, size), *p = copy_of(data, size);
	ssize_t n = ctrlline_parse(p, size);
	int want = n == 4 && (p[0] | 0x20) == 'a' && (p[1] | 0x20) == 'b' &&
	    (p[2] | 0x20) == 'o' && (p[3] | 0x20) == 'r';

	check(ctrlline_is_abor(a, size) == want);
	free(a);
	free(p);
}

struct mark_answer {
	int at_mark;
	int asked;
};

static int
fake_at_mark(void *arg, size_t n)
{
	struct mark_answer *a = arg;

	(void)n;
	a->asked = 1;
	return a->at_mark;
}

/*
 * Three control bytes (the mark's answer, where the taken part ends, how
 * much more room the peek had), then the bytes. The taken part never
 * holds a LF (ctrl.c takes one only before a mark, with no LF in it).
 */
static void
fuzz_abor_peek(const uint8_t *data, size_t size)
{
	struct mark_answer mark = { 0, 0 };
	size_t have = 0, n, room, take = (size_t)-1, i, split, lflen;
	char *line, *ref;
	const char *lf;
	enum ctrlline_abor_peek v;

	if (size < 3)
		return;
	mark.at_mark = data[0] & 1;
	split = size > 3 ? data[1] % (size - 3 + 1) : 0;
	room = (size_t)(data[2] % 4);
	data += 3;
	size -= 3;
	line = malloc(size + 1);
	ref = malloc(size + 1);
	check(line != NULL && ref != NULL);
	for (i = 0; i < split; i++)
		if (data[i] != '\n')
			line[have++] = (char)data[i];
	n = size - split;
	memcpy(line + have, data + split, n);
	memcpy(ref, line, have + n);
	room += n;
	lf = memchr(ref + have, '\n', n);
	v = ctrlline_abor_peek(line, have, n, room, fake_at_mark, &mark, &take);
	check(lf == NULL || !mark.asked);
	switch (v) {
	case CTRLLINE_ABOR:
		check(lf != NULL);
		lflen = (size_t)(lf - (ref + have)) + 1;
		check(take == lflen && take <= n);
		check(ctrlline_is_abor(ref, have + lflen - 1));
		break;
	case CTRLLINE_TAKE_MARK:
		check(lf == NULL && mark.asked && mark.at_mark && take == n && n > 0 && n < room);
		break;
	case CTRLLINE_OTHER:
		check(take == (size_t)-1);
		if (lf != NULL)
			check(!ctrlline_is_abor(ref, have + (size_t)(lf - (ref + have))));
		else
			check(n >= room);
		break;
	case CTRLLINE_PARTIAL:
		check(take == (size_t)-1 && lf == NULL && n < room && !(mark.asked && mark.at_mark));
		break;
	default:
		check(0);
	}
	free(line);
	free(ref);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parse(data, size);
	fuzz_escaped(data, size);
	fuzz_is_abor(data, size);
	fuzz_abor_peek(data, size);
	return 0;
}
