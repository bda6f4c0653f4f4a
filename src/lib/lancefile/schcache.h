/*
 * The process-wide cache of parsed Lance file schemas (schcache.c): a read whose
 * FileDescriptor bytes, footer column count and file version equal a cached parse's sets
 * up its schema state from a copy of it instead of parsing (issue 30: versions() on a
 * fresh handle reads the same checkpoint file again and again).  Nothing is shared: the
 * parser (schema.c) copies a hit into the file's own arena, so lv_lancefile_free and every
 * lifetime stay as lf_file.h states them.
 */
#ifndef LV_LANCEFILE_SCHCACHE_H
#define LV_LANCEFILE_SCHCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "lancefile/lf_file.h"

/* A stored parse (immutable): the state lv__lf_parse_schema set up for n bytes of
 * FileDescriptor, its strings in `copy` (n + 1 bytes, the strings' NULs in place), its
 * columns with name, type, nullable and list_size only. */
typedef struct lv__lf_schsnap {
	size_t n, block_size, nfields, nmeta, ncols;
	uint64_t nrows;
	const char *copy;
	const lv__lf_field *fields;
	const lv_kv *meta;
	const size_t *meta_klen;
	const lv_column *cols;
	char *const *ltypes;
	const size_t *phys;
} lv__lf_schsnap;

/* The stored parse of the n bytes at p for this footer column count and file version,
 * referenced until lv__lf_schcache_release(); NULL on a miss. */
const lv__lf_schsnap *lv__lf_schcache_acquire(const uint8_t *p, size_t n, size_t nphys,
					      int version);
void lv__lf_schcache_release(const lv__lf_schsnap *s);
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
