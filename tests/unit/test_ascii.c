/*
 * Unit tests for src/proto/ascii.c: known conversions, and for every string
 * every split into two and three chunks must give the one-shot result
 * (a CRLF cut between chunks must not be doubled or dropped).
 */
#include "src/proto/ascii.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

struct conv {
	char out[256];
	size_t len;
};

/* Converts in[0..n) cut at the given points (sorted, <= n). */
static void
to_net_chunks(const char *in, size_t n, const size_t *cuts, size_t ncuts,
	      struct conv *c)
{
	int prev_cr = 0;
	size_t start = 0, i;

	c->len = 0;
	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : n;

		c->len += ascii_to_net(in + start, end - start, c->out + c->len,
		    &prev_cr);
		start = end;
	}
}

static void
from_net_chunks(const char *in, size_t n, const size_t *cuts, size_t ncuts,
		struct conv *c)
{
	int pending = 0;
	size_t start = 0, i;

	c->len = 0;
	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : n;

		c->len += ascii_from_net(in + start, end - start, c->out + c->len,
		    &pending);
		start = end;
	}
	c->len += ascii_from_net_end(c->out + c->len, &pending);
}

static int
conv_is(const struct conv *c, const char *want, size_t wlen)
{
	return c->len == wlen && memcmp(c->out, want, wlen) == 0;
}

#define TO_NET(in, want) do { \
	struct conv c_; \
	to_net_chunks(in, sizeof(in) - 1, NULL, 0, &c_); \
	CHECK(conv_is(&c_, want, sizeof(want) - 1)); \
} while (0)

#define FROM_NET(in, want) do { \
	struct conv c_; \
	from_net_chunks(in, sizeof(in) - 1, NULL, 0, &c_); \
	CHECK(conv_is(&c_, want, sizeof(want) - 1)); \
} while (0)

static void
test_known(void)
{
	TO_NET("", "");
	TO_NET("abc", "abc");
	TO_NET("\n", "\r\n");
	TO_NET("a\nb\n", "a\r\nb\r\n");
	TO_NET("a\r\nb", "a\r\nb");
	TO_NET("\n\n", "\r\n\r\n");
	TO_NET("\r", "\r");
	TO_NET("\r\r\n", "\r\r\n");
	TO_NET("a\rb\n", "a\rb\r\n");
	TO_NET("\n\r\n\n", "\r\n\r\n\r\n");
	TO_NET("x\0\ny", "x\0\r\ny");

	FROM_NET("", "");
	FROM_NET("abc", "abc");
	FROM_NET("a\r\nb\r\n", "a\nb\n");
	FROM_NET("a\nb", "a\nb");
	FROM_NET("\r", "\r");
	FROM_NET("a\r", "a\r");
	FROM_NET("\r\r\n", "\r\n");
	FROM_NET("\r\r", "\r\r");
	FROM_NET("a\rb", "a\rb");
	FROM_NET("\n\r", "\n\r");
	FROM_NET("\r\n\r\n", "\n\n");
	FROM_NET("x\0\r\ny", "x\0\ny");
}

static const char *const samples[] = {
	"",
	"\n",
	"\r",
	"\r\n",
	"\n\r",
	"plain text without line ends",
	"line one\nline two\nline three\n",
	"dos one\r\ndos two\r\n",
	"mixed\r\nunix\nmac\rend",
	"\r\r\n\n\r\n\r\r\r\n\n\n",
	"trailing cr\r",
	"\r\n\r\n\r\n\r\n",
	"a\rb\nc\r\nd\n\re",
};

static void
check_splits(const char *s, size_t n)
{
	struct conv one, part;
	size_t cuts[2];
	int ok_to = 1, ok_from = 1;

	to_net_chunks(s, n, NULL, 0, &one);
	CHECK(one.len <= 2 * n);
	for (cuts[0] = 0; cuts[0] <= n; cuts[0]++) {
		to_net_chunks(s, n, cuts, 1, &part);
		ok_to &= conv_is(&part, one.out, one.len);
		for (cuts[1] = cuts[0]; cuts[1] <= n; cuts[1]++) {
			to_net_chunks(s, n, cuts, 2, &part);
			ok_to &= conv_is(&part, one.out, one.len);
		}
	}
	CHECK(ok_to);

	from_net_chunks(s, n, NULL, 0, &one);
	CHECK(one.len <= n);
	for (cuts[0] = 0; cuts[0] <= n; cuts[0]++) {
		from_net_chunks(s, n, cuts, 1, &part);
		ok_from &= conv_is(&part, one.out, one.len);
		for (cuts[1] = cuts[0]; cuts[1] <= n; cuts[1]++) {
			from_net_chunks(s, n, cuts, 2, &part);
			ok_from &= conv_is(&part, one.out, one.len);
		}
	}
	CHECK(ok_from);
}

static void
test_splits(void)
{
	size_t i;

	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		check_splits(samples[i], strlen(samples[i]));
}

/* Text without CR survives download then upload conversion unchanged. */
static void
test_round_trip(void)
{
	static const char *const texts[] = {
		"", "\n", "a\nb\n\n", "no newline", "\n\n\nx",
	};
	struct conv net, back;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i]);

		to_net_chunks(texts[i], n, NULL, 0, &net);
		from_net_chunks(net.out, net.len, NULL, 0, &back);
		CHECK(conv_is(&back, texts[i], n));
	}
}

/* The state flags follow the last byte, and an empty chunk keeps them. */
static void
test_state(void)
{
	char out[8];
	int prev_cr = 0, pending = 0;

	CHECK_INT(ascii_to_net("a\r", 2, out, &prev_cr), 2);
	CHECK_INT(prev_cr, 1);
	CHECK_INT(ascii_to_net("", 0, out, &prev_cr), 0);
	CHECK_INT(prev_cr, 1);
	CHECK_INT(ascii_to_net("\n", 1, out, &prev_cr), 1);
	CHECK(out[0] == '\n');
	CHECK_INT(prev_cr, 0);
	CHECK_INT(ascii_to_net("\n", 1, out, &prev_cr), 2);
	CHECK(memcmp(out, "\r\n", 2) == 0);

	CHECK_INT(ascii_from_net("a\r", 2, out, &pending), 1);
	CHECK_INT(pending, 1);
	CHECK_INT(ascii_from_net("", 0, out, &pending), 0);
	CHECK_INT(pending, 1);
	CHECK_INT(ascii_from_net("\r", 1, out, &pending), 1);	/* first CR out */
	CHECK(out[0] == '\r');
	CHECK_INT(pending, 1);
	CHECK_INT(ascii_from_net("\n", 1, out, &pending), 1);
	CHECK(out[0] == '\n');
	CHECK_INT(pending, 0);
	CHECK_INT(ascii_from_net_end(out, &pending), 0);
	CHECK_INT(ascii_from_net("\r", 1, out, &pending), 0);
	CHECK_INT(ascii_from_net_end(out, &pending), 1);
	CHECK(out[0] == '\r');
	CHECK_INT(pending, 0);
	/* A pending CR plus a full chunk needs the documented n+1 bytes. */
	pending = 1;
	CHECK_INT(ascii_from_net("abcdefg", 7, out, &pending), 8);
	CHECK(memcmp(out, "\rabcdefg", 8) == 0);
}

/* Big buffers: the memchr paths, against a byte-at-a-time reference. */
static void
test_large(void)
{
	size_t n = 1 << 16, i, ref_len, got, chunk;
	char *in = malloc(n), *ref = malloc(2 * n), *out = malloc(2 * n + 1);
	unsigned seed = 12345;
	int prev_cr = 0, pending = 0;

	if (in == NULL || ref == NULL || out == NULL) {
		CHECK(!"out of memory");
		free(in);
		free(ref);
		free(out);
		return;
	}
	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		switch ((seed >> 16) % 8) {
		case 0: in[i] = '\n'; break;
		case 1: in[i] = '\r'; break;
		default: in[i] = (char)('a' + (seed >> 20) % 26); break;
		}
	}
	ref_len = 0;
	for (i = 0; i < n; i++) {
		if (in[i] == '\n' && (i == 0 || in[i - 1] != '\r'))
			ref[ref_len++] = '\r';
		ref[ref_len++] = in[i];
	}
	got = 0;
	for (i = 0; i < n; i += chunk) {
		chunk = 1 + (i * 7) % 4093;
		if (chunk > n - i)
			chunk = n - i;
		got += ascii_to_net(in + i, chunk, out + got, &prev_cr);
	}
	CHECK(got == ref_len && memcmp(out, ref, got) == 0);

	ref_len = 0;
	for (i = 0; i < n; i++) {
		if (in[i] == '\r' && i + 1 < n && in[i + 1] == '\n')
			continue;
		ref[ref_len++] = in[i];
	}
	got = 0;
	for (i = 0; i < n; i += chunk) {
		chunk = 1 + (i * 13) % 3001;
		if (chunk > n - i)
			chunk = n - i;
		got += ascii_from_net(in + i, chunk, out + got, &pending);
	}
	got += ascii_from_net_end(out + got, &pending);
	CHECK(got == ref_len && memcmp(out, ref, got) == 0);
	free(in);
	free(ref);
	free(out);
}

int
main(void)
{
	test_known();
	test_splits();
	test_round_trip();
	test_state();
	test_large();
	return check_summary();
}
