/*
 * OpenSSL's heap in a session process. A session process is forked from
 * the listener and shares its heap page by page until it writes one;
 * glibc's malloc serves OpenSSL's many small allocations (a key's
 * decoding, a handshake's temporaries) from free holes scattered over
 * that inherited heap, so each one copies a page: an idle TLS session
 * cost some 200 KB more than the bytes it keeps. So OpenSSL allocates
 * from regions of its own, in size classes with free lists: the
 * listener's objects lie together (a session touching their reference
 * counts copies few pages), and a session process that takes over its
 * heap (tls_heap_own) maps a fresh region for what it allocates, so that
 * what it keeps lies together and a handshake's temporaries are reused
 * by the next, and never frees into the inherited one.
 * Sanitizer builds keep glibc's (ASan must see every allocation).
 */
#include "src/tls.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/crypto.h>

#include "src/common/util.h"
#include "tw_build.h"

#if !TW_SANITIZER_BUILD

/* Address space only (MAP_NORESERVE): pages cost when touched. */
#define HEAP_REGION (16u << 20)
/* Every block starts with its class, keeping the payload 16-aligned. */
#define HEAP_HDR 16u
#define HEAP_ALIGN 16u
/* Four classes per power of two from 128 bytes; 16-byte steps below. */
#define HEAP_SMALL_MAX 128u
#define HEAP_CLASSES 64
/* Larger blocks (record buffers are 16 KB) go to glibc. */
#define HEAP_LARGE (8u * 1024u)

struct free_block {
	struct free_block *next;
};

static int heap_on;
static char *heap_base, *heap_top, *heap_end;
static struct free_block *heap_free[HEAP_CLASSES];
/*
 * The parent's region, inherited: read, never written by a free (a free
 * list running through it would copy its pages one by one).
 */
static char *old_base, *old_end;

/* The class of a request of n bytes, and the size of that class. */
static unsigned
size_class(size_t n, size_t *size)
{
	size_t step, top;
	unsigned c;

	if (n <= HEAP_SMALL_MAX) {
		c = n == 0 ? 0 : (unsigned)((n - 1) / HEAP_ALIGN);
		*size = ((size_t)c + 1) * HEAP_ALIGN;
		return c;
	}
	c = HEAP_SMALL_MAX / HEAP_ALIGN;	/* 8: the first class above 128 */
	for (top = HEAP_SMALL_MAX; ; top *= 2) {
		step = top / 4;
		if (n <= top * 2) {
			size_t k = (n - top + step - 1) / step;	/* 1..4 */

			*size = top + k * step;
			return c + (unsigned)(k - 1);
		}
		c += 4;
	}
}

/* The size of class c: the largest request it serves. */
static size_t
class_size(unsigned c)
{
	size_t top;

	if (c < HEAP_SMALL_MAX / HEAP_ALIGN)
		return ((size_t)c + 1) * HEAP_ALIGN;
	c -= HEAP_SMALL_MAX / HEAP_ALIGN;
	top = (size_t)HEAP_SMALL_MAX << (c / 4);
	return top + (c % 4 + 1) * (top / 4);
}

static int
in_heap(const void *p)
{
	return heap_base != NULL && (const char *)p >= heap_base && (const char *)p < heap_end;
}

static int
in_old(const void *p)
{
	return old_base != NULL && (const char *)p >= old_base && (const char *)p < old_end;
}

static void *
heap_malloc(size_t n, const char *file, int line)
{
	size_t size;
	unsigned c;
	char *b;

	(void)file;
	(void)line;
	if (!heap_on || n > HEAP_LARGE)
		return malloc(n);
	c = size_class(n, &size);
	if (heap_free[c] != NULL) {
		b = (char *)heap_free[c];
		heap_free[c] = heap_free[c]->next;
		return b;
	}
	if (heap_base == NULL) {
		void *r = mmap(NULL, HEAP_REGION, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (r == MAP_FAILED) {
			heap_on = 0;
			return malloc(n);
		}
		heap_base = heap_top = r;
		heap_end = heap_base + HEAP_REGION;
	}
	if ((size_t)(heap_end - heap_top) < HEAP_HDR + size)
		return malloc(n);	/* the region is full: glibc's */
	*(uint32_t *)heap_top = c;
	b = heap_top + HEAP_HDR;
	heap_top = b + size;
	return b;
}

static void
heap_free_block(void *p, const char *file, int line)
{
	struct free_block *f = p;
	uint32_t c;

	(void)file;
	(void)line;
	if (p == NULL || in_old(p))
		return;
	if (!in_heap(p)) {
		free(p);
		return;
	}
	c = *(uint32_t *)((char *)p - HEAP_HDR);
	if (c >= HEAP_CLASSES)
		bug("%s: a block of class %u", __func__, c);
	f->next = heap_free[c];
	heap_free[c] = f;
}

static void *
heap_realloc(void *p, size_t n, const char *file, int line)
{
	size_t old;
	void *q;

	if (p == NULL)
		return heap_malloc(n, file, line);
	if (in_old(p)) {
		old = class_size(*(uint32_t *)((char *)p - HEAP_HDR));
	} else if (!in_heap(p)) {
		if (!heap_on)
			return realloc(p, n);
		old = malloc_usable_size(p);
	} else {
		old = class_size(*(uint32_t *)((char *)p - HEAP_HDR));
		if (n <= old)
			return p;
	}
	q = heap_malloc(n, file, line);
	if (q == NULL)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	heap_free_block(p, file, line);
	return q;
}

int
tls_heap_install(void)
{
	if (!CRYPTO_set_mem_functions(heap_malloc, heap_realloc, heap_free_block))
		return -1;
	/* The listener's OpenSSL objects lie together too: what a session
	 * touches of them (reference counts) is few pages. */
	heap_on = 1;
	return 0;
}

void
tls_heap_own(void)
{
	size_t i;

	if (!heap_on)
		return;
	old_base = heap_base;
	old_end = heap_end;
	heap_base = heap_top = heap_end = NULL;
	for (i = 0; i < HEAP_CLASSES; i++)
		heap_free[i] = NULL;
}

#else	/* sanitizer builds: glibc's allocator, which ASan watches */

int
tls_heap_install(void)
{
	return 0;
}

void
tls_heap_own(void)
{
}

#endif
