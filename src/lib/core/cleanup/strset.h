/*
 * A set of strings kept as 128-bit keyed digests (two SipHash-2-4 with keys
 * drawn at random once per process), so a million paths take 32 MB, not
 * the strings: a false "yes" needs a 128-bit collision under a key no input
 * can know.
 */
#ifndef LV_CORE_CLEANUP_STRSET_H
#define LV_CORE_CLEANUP_STRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lv__strset {
	uint64_t (*slot)[2]; /* {0, 0} = empty */
	size_t cap, n;
} lv__strset;

/* A string's digest, the set's key (thread-safe: digests may be taken on any thread). */
typedef struct lv__digest {
	uint64_t d[2];
} lv__digest;
lv__digest lv__strset_digest(const char *k, size_t n);
bool lv__strset_has_digest(const lv__strset *s, lv__digest d);
/* Adds a digest (no-op if present).  0 or LV_ENOMEM. */
int lv__strset_add_digest(lv__strset *s, lv__digest d);
bool lv__strset_has_n(const lv__strset *s, const char *k, size_t n);
bool lv__strset_has(const lv__strset *s, const char *k);
/* Adds k (no-op if present).  0 or LV_ENOMEM. */
int lv__strset_add(lv__strset *s, const char *k);
void lv__strset_dispose(lv__strset *s);

#endif
