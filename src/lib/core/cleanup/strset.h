/* A set of strings (open addressing, owned copies). */
#ifndef LV_CORE_CLEANUP_STRSET_H
#define LV_CORE_CLEANUP_STRSET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct lv__strset {
	char **slot;
	size_t cap, n;
} lv__strset;

bool lv__strset_has_n(const lv__strset *s, const char *k, size_t n);
bool lv__strset_has(const lv__strset *s, const char *k);
/* Adds a copy of k (no-op if present).  0 or LV_ENOMEM. */
int lv__strset_add(lv__strset *s, const char *k);
void lv__strset_dispose(lv__strset *s);

#endif
