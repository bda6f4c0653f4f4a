/*
 * The process-wide cache of parsed Lance file schemas (schcache.c): a read whose
 * FileDescriptor bytes, footer column count and file version equal a cached parse's sets
 * up its schema state from a copy of it instead of parsing (issue 30: versions() on a
 * fresh handle reads the same checkpoint file again and again).  Nothing is shared: a hit
 * copies into the file's own arena, so lv_lancefile_free and every lifetime stay as
 * lf_file.h states them.
 */
#ifndef LV_LANCEFILE_SCHCACHE_H
#define LV_LANCEFILE_SCHCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "lancefile/lf_file.h"

/*
 * A cached parse of the n bytes at p for this footer column count and f->version: sets
 * f's schema state (as lv__lf_parse_schema does) and *nrows, and returns 1; 0 on a miss
 * (f untouched); LV_ENOMEM when f's copy cannot be allocated (f is freed by its caller).
 */
int lv__lf_schcache_get(lv__lf_rctx *r, lv_lancefile *f, const uint8_t *p, size_t n,
			size_t nphys, uint64_t *nrows);
/*
 * Stores f's schema state, just parsed from f->sch (before any column is read), when it
 * can be: every top-level column decodable, the bytes and the entry small enough.  Out of
 * memory: not stored (the read's answer is the same either way).
 */
void lv__lf_schcache_put(const lv_lancefile *f, size_t nphys, uint64_t nrows);

#ifdef LV_TEST_HOOKS
typedef struct lv__lf_schcache_stats {
	size_t entries, bytes;          /* held now */
	uint64_t hits, misses, stores;  /* since the last clear */
} lv__lf_schcache_stats;
/* The counters and what is held. */
void lv__lf_schcache_stat(lv__lf_schcache_stats *s);
/* Drops every entry (a referenced one is freed by its last reader) and zeroes the counters. */
void lv__lf_schcache_clear(void);
#endif

#endif
