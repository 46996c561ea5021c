/*
 * Unit tests for src/common/hashtab.c: insert, lookup, delete with
 * backward shift (runs of colliding keys, runs that wrap around the end
 * of the table), growth, and a long random mix checked against a plain
 * array.
 */
#include "src/common/hashtab.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

/* The table starts with 8 slots when asked for at most 4 entries. */
#define SMALL_CAP 8

/* The n-th key (from *next on) whose home slot in a table of cap slots is home. */
static uint32_t
key_with_home(size_t home, size_t cap, uint32_t *next)
{
	for (;;) {
		uint32_t k = (*next)++;

		if ((hashtab_hash(&k, sizeof(k)) & (cap - 1)) == home)
			return k;
	}
}

static void
test_basic(void)
{
	struct hashtab *t = hashtab_new(sizeof(uint32_t), sizeof(unsigned), 4);
	uint32_t k = 7, other = 8;
	unsigned *v;

	CHECK(t != NULL);
	CHECK_INT(hashtab_count(t), 0);
	CHECK(hashtab_find(t, &k) == NULL);
	v = hashtab_insert(t, &k);
	CHECK(v != NULL && *v == 0);
	*v = 42;
	CHECK_INT(hashtab_count(t), 1);
	/* Inserting a key that is there gives its value, not a new one. */
	v = hashtab_insert(t, &k);
	CHECK(v != NULL && *v == 42);
	CHECK_INT(hashtab_count(t), 1);
	v = hashtab_find(t, &k);
	CHECK(v != NULL && *v == 42);
	CHECK(hashtab_find(t, &other) == NULL);
	CHECK_INT(hashtab_delete(t, &other), -1);
	CHECK_INT(hashtab_delete(t, &k), 0);
	CHECK(hashtab_find(t, &k) == NULL);
	CHECK_INT(hashtab_count(t), 0);
	CHECK_INT(hashtab_delete(t, &k), -1);
	hashtab_free(t);
}

/*
 * Keys a, b, c share home h; d has home h+1 and so lands after them.
 * Deleting a must move b, c and d back, or d (whose home is now free
 * of a's run) and c would be lost behind the hole.
 */
static void
check_run_at(size_t h)
{
	struct hashtab *t = hashtab_new(sizeof(uint32_t), 0, SMALL_CAP / 2);
	uint32_t next = 0, a, b, c, d;

	a = key_with_home(h, SMALL_CAP, &next);
	b = key_with_home(h, SMALL_CAP, &next);
	c = key_with_home(h, SMALL_CAP, &next);
	d = key_with_home((h + 1) % SMALL_CAP, SMALL_CAP, &next);
	CHECK(t != NULL);
	CHECK(hashtab_insert(t, &a) != NULL);
	CHECK(hashtab_insert(t, &b) != NULL);
	CHECK(hashtab_insert(t, &c) != NULL);
	CHECK(hashtab_insert(t, &d) != NULL);
	CHECK_INT(hashtab_count(t), 4);	/* still 8 slots: no growth yet */
	CHECK_INT(hashtab_delete(t, &a), 0);
	CHECK(hashtab_find(t, &a) == NULL);
	CHECK(hashtab_find(t, &b) != NULL);
	CHECK(hashtab_find(t, &c) != NULL);
	CHECK(hashtab_find(t, &d) != NULL);
	CHECK_INT(hashtab_delete(t, &c), 0);
	CHECK(hashtab_find(t, &b) != NULL);
	CHECK(hashtab_find(t, &d) != NULL);
	CHECK_INT(hashtab_delete(t, &b), 0);
	CHECK(hashtab_find(t, &d) != NULL);
	CHECK_INT(hashtab_delete(t, &d), 0);
	CHECK_INT(hashtab_count(t), 0);
	hashtab_free(t);
}

static void
test_collisions(void)
{
	size_t h;

	/* Every home, so that some runs wrap past the last slot. */
	for (h = 0; h < SMALL_CAP; h++)
		check_run_at(h);
}

static void
test_growth_keeps_values(void)
{
	struct hashtab *t = hashtab_new(sizeof(uint32_t), sizeof(uint32_t), 1);
	uint32_t k;
	size_t pos = 0, seen = 0;
	const void *key;
	void *val;

	CHECK(t != NULL);
	for (k = 1; k <= 5000; k++) {
		uint32_t *v = hashtab_insert(t, &k);

		CHECK(v != NULL);
		if (v != NULL)
			*v = k * 3;
	}
	CHECK_INT(hashtab_count(t), 5000);
	for (k = 1; k <= 5000; k++) {
		uint32_t *v = hashtab_find(t, &k);

		if (v == NULL || *v != k * 3) {
			CHECK(0);
			break;
		}
	}
	while ((key = hashtab_next(t, &pos, &val)) != NULL) {
		uint32_t kk, vv;

		memcpy(&kk, key, sizeof(kk));
		memcpy(&vv, val, sizeof(vv));
		if (vv != kk * 3)
			break;
		seen++;
	}
	CHECK_INT(seen, 5000);
	hashtab_free(t);
}

/* Keys wider than a word, and a value that is a struct. */
struct wide_key {
	unsigned char b[16];
};

static void
test_wide_keys(void)
{
	struct hashtab *t = hashtab_new(sizeof(struct wide_key), sizeof(struct wide_key), 2);
	struct wide_key k1, k2, *v;

	memset(&k1, 0, sizeof(k1));
	memset(&k2, 0, sizeof(k2));
	k2.b[15] = 1;	/* differs in the last byte only */
	CHECK(t != NULL);
	v = hashtab_insert(t, &k1);
	CHECK(v != NULL);
	if (v != NULL)
		memset(v->b, 0xaa, sizeof(v->b));
	CHECK(hashtab_find(t, &k2) == NULL);
	v = hashtab_insert(t, &k2);
	CHECK(v != NULL && v->b[0] == 0);
	v = hashtab_find(t, &k1);
	CHECK(v != NULL && v->b[15] == 0xaa);
	hashtab_free(t);
}

/*
 * A long random mix of inserts and deletes over few keys in a small
 * table (long colliding runs, repeated growth), each step checked
 * against a plain array.
 */
#define MIX_KEYS 64
#define MIX_STEPS 200000

static void
test_random_mix(void)
{
	struct hashtab *t = hashtab_new(sizeof(uint32_t), sizeof(uint32_t), 1);
	uint32_t model[MIX_KEYS];
	int present[MIX_KEYS] = { 0 };
	size_t n = 0, step, bad = 0;
	unsigned seed = 12345;

	CHECK(t != NULL);
	for (step = 0; step < MIX_STEPS && bad == 0; step++) {
		uint32_t k;
		uint32_t *v;

		seed = seed * 1103515245u + 12345u;
		k = (seed >> 16) % MIX_KEYS;
		if (present[k] && (seed & 1)) {
			bad += hashtab_delete(t, &k) != 0;
			present[k] = 0;
			n--;
		} else {
			v = hashtab_insert(t, &k);
			if (v == NULL) {
				bad++;
				break;
			}
			bad += present[k] && *v != model[k];
			if (!present[k])
				n++;
			present[k] = 1;
			model[k] = (uint32_t)step;
			*v = model[k];
		}
		bad += hashtab_count(t) != n;
		if (step % 97 == 0) {
			for (k = 0; k < MIX_KEYS; k++) {
				v = hashtab_find(t, &k);
				bad += present[k] ? v == NULL || *v != model[k] : v != NULL;
			}
		}
	}
	CHECK_INT(bad, 0);
	hashtab_free(t);
}

int
main(void)
{
	test_basic();
	test_collisions();
	test_growth_keeps_values();
	test_wide_keys();
	test_random_mix();
	return check_summary();
}
