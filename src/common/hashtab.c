#include "src/common/hashtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Values are handed out as pointers into the slots: aligned for any
 * integer or pointer (not for long double, which no caller stores).
 */
#define HASHTAB_ALIGN _Alignof(uint64_t)
#define HASHTAB_MIN_CAP 8

struct hashtab {
	unsigned char *slots;	/* cap slots of slot_len bytes: key, then value */
	unsigned char *used;	/* cap flags */
	size_t cap;		/* a power of two */
	size_t count;
	size_t key_len, val_off, val_len, slot_len;
};

static size_t
round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

size_t
hashtab_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return (size_t)(h ^ (h >> 29));
}

static unsigned char *
slot_at(const struct hashtab *t, size_t i)
{
	return t->slots + i * t->slot_len;
}

static size_t
home_of(const struct hashtab *t, const void *key)
{
	return hashtab_hash(key, t->key_len) & (t->cap - 1);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t
probe(const struct hashtab *t, const void *key)
{
	size_t i = home_of(t, key);

	while (t->used[i] && memcmp(slot_at(t, i), key, t->key_len) != 0)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int
alloc_slots(struct hashtab *t, size_t cap)
{
	/* Both counts are bounded by the half-full rule: cap * slot_len fits. */
	if (cap > SIZE_MAX / 2 / t->slot_len)
		return -1;
	t->slots = calloc(cap, t->slot_len);
	t->used = calloc(cap, 1);
	if (t->slots == NULL || t->used == NULL) {
		free(t->slots);
		free(t->used);
		return -1;
	}
	t->cap = cap;
	return 0;
}

struct hashtab *
hashtab_new(size_t key_len, size_t val_len, size_t min_entries)
{
	struct hashtab *t;
	size_t cap = HASHTAB_MIN_CAP;

	if (key_len == 0 || key_len > SIZE_MAX / 4 || val_len > SIZE_MAX / 4)
		return NULL;
	while (cap / 2 < min_entries) {
		if (cap > SIZE_MAX / 4)
			return NULL;
		cap *= 2;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->key_len = key_len;
	t->val_off = round_up(key_len, HASHTAB_ALIGN);
	t->val_len = val_len;
	t->slot_len = round_up(t->val_off + val_len, HASHTAB_ALIGN);
	if (alloc_slots(t, cap) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

void
hashtab_free(struct hashtab *t)
{
	if (t == NULL)
		return;
	free(t->slots);
	free(t->used);
	free(t);
}

static int
grow(struct hashtab *t)
{
	struct hashtab old = *t;
	size_t i;

	if (alloc_slots(t, old.cap * 2) != 0) {
		*t = old;
		return -1;
	}
	for (i = 0; i < old.cap; i++) {
		size_t j;

		if (!old.used[i])
			continue;
		j = probe(t, slot_at(&old, i));
		memcpy(slot_at(t, j), slot_at(&old, i), t->slot_len);
		t->used[j] = 1;
	}
	free(old.slots);
	free(old.used);
	return 0;
}

void *
hashtab_find(const struct hashtab *t, const void *key)
{
	size_t i = probe(t, key);

	return t->used[i] ? slot_at(t, i) + t->val_off : NULL;
}

void *
hashtab_insert(struct hashtab *t, const void *key)
{
	size_t i = probe(t, key);

	if (t->used[i])
		return slot_at(t, i) + t->val_off;
	/* Half full at most: probes stay short, and one slot is always empty. */
	if ((t->count + 1) * 2 > t->cap) {
		if (grow(t) != 0)
			return NULL;
		i = probe(t, key);
	}
	memset(slot_at(t, i), 0, t->slot_len);
	memcpy(slot_at(t, i), key, t->key_len);
	t->used[i] = 1;
	t->count++;
	return slot_at(t, i) + t->val_off;
}

/*
 * Backward-shift deletion: after emptying slot i, every entry further on
 * in the same run whose home does not lie cyclically in (i, j] would no
 * longer be found past the hole, so it moves back into it, and the hole
 * moves on to where it was.
 */
int
hashtab_delete(struct hashtab *t, const void *key)
{
	size_t i = probe(t, key), j = i, mask = t->cap - 1;

	if (!t->used[i])
		return -1;
	t->count--;
	for (;;) {
		size_t home;

		t->used[i] = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!t->used[j])
				return 0;
			home = home_of(t, slot_at(t, j));
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		memcpy(slot_at(t, i), slot_at(t, j), t->slot_len);
		t->used[i] = 1;
		i = j;
	}
}

size_t
hashtab_count(const struct hashtab *t)
{
	return t->count;
}

const void *
hashtab_next(const struct hashtab *t, size_t *pos, void **val)
{
	while (*pos < t->cap) {
		size_t i = (*pos)++;

		if (t->used[i]) {
			if (val != NULL)
				*val = slot_at(t, i) + t->val_off;
			return slot_at(t, i);
		}
	}
	return NULL;
}
