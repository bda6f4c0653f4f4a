/*
 * The process-wide cache of parsed Lance file schema fields (schcache.c): a read whose
 * schema fields (the bytes of every Schema.fields entry, field 1 of the Schema, tags
 * included), footer column count and file version equal a cached parse's sets up its
 * fields and top-level columns from a copy of it instead of parsing them (issue 30: every
 * checkpoint file of a dataset carries the same fields; a process parses them once).  The
 * key holds nothing else: the schema's metadata (field 5) and the row count
 * (FileDescriptor field 2), which differ from file to file, are always parsed from the
 * file's own bytes.  Nothing is shared: the parser (schema.c) copies a hit into the file's
 * own arena and points its strings into the file's own copy of the schema, so
 * lv_lancefile_free and every lifetime stay as lf_file.h states them.
 */
#ifndef LV_LANCEFILE_SCHCACHE_H
#define LV_LANCEFILE_SCHCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "lancefile/lf_file.h"

/* A stored parse (immutable) of n bytes of schema fields: the fields (name and ltype
 * NULL: their strings are at name_at / ltype_at bytes from the fields' first byte, SIZE_MAX
 * for an absent one, and end at name_len / ltype_len), the top-level columns (type,
 * nullable and list_size only) and their physical columns. */
typedef struct lv__lf_schsnap {
	size_t n, nfields, ncols;
	const lv__lf_field *fields;
	const size_t *name_at, *ltype_at;
	const lv_column *cols;
	const size_t *phys;
} lv__lf_schsnap;

/* The stored parse of the n bytes of schema fields at p for this footer column count and
 * file version, referenced until lv__lf_schcache_release(); NULL on a miss. */
const lv__lf_schsnap *lv__lf_schcache_acquire(const uint8_t *p, size_t n, size_t nphys,
					      int version);
void lv__lf_schcache_release(const lv__lf_schsnap *s);
/*
 * Stores f's fields and columns, just parsed from f->sch (before any column is read), the
 * fields being the n bytes at f->sch + at, when it can be: every top-level column
 * decodable, every field string in those bytes, the bytes and the entry small enough.
 * Out of memory: not stored (the read's answer is the same either way).
 */
void lv__lf_schcache_put(const lv_lancefile *f, size_t at, size_t n, size_t nphys);

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
