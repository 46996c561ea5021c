/*
 * A hash table of fixed-size keys and values, compared as bytes: open
 * addressing with linear probing, kept at most half full, and
 * backward-shift deletion (no tombstones), so that a lookup, an insert
 * and a delete cost O(1) however many entries come and go. The listener
 * keeps its live sessions by pid and its per-address counts in two of
 * these.
 */
#ifndef TW_HASHTAB_H
#define TW_HASHTAB_H

#include <stddef.h>

struct hashtab;

/*
 * A table for keys of key_len bytes and values of val_len bytes (0 for a
 * set), with room for at least min_entries before it first grows. NULL
 * when out of memory.
 */
struct hashtab *hashtab_new(size_t key_len, size_t val_len, size_t min_entries);
void hashtab_free(struct hashtab *t);

/*
 * The value stored under key, or NULL when there is none. A value is
 * aligned for any integer or pointer; it stays where it is until the
 * table next changes.
 */
void *hashtab_find(const struct hashtab *t, const void *key);

/*
 * The value under key, a new zeroed one if key was not there (the table
 * grows first when it would be more than half full). NULL when out of
 * memory; the table is then unchanged.
 */
void *hashtab_insert(struct hashtab *t, const void *key);

/* Removes key and its value. Returns 0, or -1 when key was not there. */
int hashtab_delete(struct hashtab *t, const void *key);

/* How many keys the table holds. */
size_t hashtab_count(const struct hashtab *t);

/*
 * Walks the entries: start with *pos = 0; each call returns the next
 * key (its value through *val if val is not NULL), or NULL at the end.
 * The table must not change during a walk.
 */
const void *hashtab_next(const struct hashtab *t, size_t *pos, void **val);

/* The hash of n bytes (FNV-1a, high bits folded into the low ones). */
size_t hashtab_hash(const void *p, size_t n);

#endif
