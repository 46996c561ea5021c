/*
 * Unit tests for src/tls_heap.c, OpenSSL's allocator in session
 * processes: every size gets a block that holds it, realloc keeps the
 * bytes, freed blocks are reused, blocks of the parent's region are never
 * written by a free, and large blocks go to glibc.
 */
#include "src/tls.h"
#include "check.h"

#include <openssl/crypto.h>
#include <stdint.h>

#include "tw_build.h"

#define SIZES 2000

/* A pattern that says which block and byte it is. */
static void
fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 31 + i);
}

static int
intact(const unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed * 31 + i))
			return 0;
	return 1;
}

static void
test_sizes_and_realloc(void)
{
	static unsigned char *blocks[SIZES];
	size_t i, bad = 0;

	/* Every size up to 9000 bytes (past the large threshold) at once:
	 * writing one block must not touch another. */
	for (i = 0; i < SIZES; i++) {
		size_t n = i * 9000 / SIZES + 1;

		blocks[i] = OPENSSL_malloc(n);
		CHECK(blocks[i] != NULL);
		CHECK(((uintptr_t)blocks[i] & 15) == 0);
		fill(blocks[i], n, (unsigned)i);
	}
	for (i = 0; i < SIZES; i++)
		bad += !intact(blocks[i], i * 9000 / SIZES + 1, (unsigned)i);
	CHECK_INT(bad, 0);
	/* Growing and shrinking keep what fits. */
	for (i = 0; i < SIZES; i += 7) {
		size_t n = i * 9000 / SIZES + 1;
		unsigned char *q = OPENSSL_realloc(blocks[i], n * 3);

		CHECK(q != NULL && intact(q, n, (unsigned)i));
		blocks[i] = OPENSSL_realloc(q, n / 2 + 1);
		CHECK(blocks[i] != NULL && intact(blocks[i], n / 2 + 1, (unsigned)i));
	}
	for (i = 0; i < SIZES; i++)
		OPENSSL_free(blocks[i]);
}

#if !TW_SANITIZER_BUILD
/* Sanitizer builds keep glibc's allocator (tls_heap.c): nothing below holds. */
static void
test_reuse(void)
{
	void *a = OPENSSL_malloc(100), *b;

	OPENSSL_free(a);
	b = OPENSSL_malloc(97);		/* the same class: the same block */
	CHECK(a == b);
	OPENSSL_free(b);
	OPENSSL_clear_free(OPENSSL_zalloc(40), 40);
}

/* After tls_heap_own, blocks of the region before it are left alone. */
static void
test_own(void)
{
	unsigned char *parent = OPENSSL_malloc(64), *child;

	fill(parent, 64, 7);
	tls_heap_own();
	OPENSSL_free(parent);		/* a free into the parent's region ... */
	CHECK(intact(parent, 64, 7));	/* ... writes nothing there */
	child = OPENSSL_malloc(64);
	CHECK(child != parent);
	OPENSSL_free(child);
	child = OPENSSL_realloc(OPENSSL_malloc(64), 64);
	CHECK(child != NULL);
	OPENSSL_free(child);
}
#endif

int
main(void)
{
	CHECK(tls_heap_install() == 0);
	test_sizes_and_realloc();
#if !TW_SANITIZER_BUILD
	test_reuse();
	test_own();
#endif
	return check_summary();
}
