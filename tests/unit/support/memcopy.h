/* In-memory copies of stores and fixture datasets, and whole-store snapshots for comparisons. */
#ifndef LV_MEMCOPY_H
#define LV_MEMCOPY_H

#include <lancever/storage.h>
#include <lancever/sys/testing.h>

/* A fresh in-memory store holding a copy of every object of `src` (fails the test on error). */
lv_storage *tu_mem_clone(lv_storage *src);
/* A fresh in-memory store holding a copy of tests/fixtures/<rel> (fails the test on error). */
lv_storage *tu_mem_copy(const char *rel);
/* Every object as "path:size" lines, sorted, newline-joined (malloc'ed). */
char *tu_snapshot(lv_storage *st);
/* Asserts that `st` holds what it held when `before` (its tu_snapshot()) was taken. */
void tu_expect_unchanged(lv_storage *st, const char *before);
/* Sets every object's mtime (in-memory stores). */
void tu_set_all_mtimes(lv_storage *st, int64_t mtime_ms);

#endif
