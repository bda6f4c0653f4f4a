/*
 * The decoded file object shared by the reader (reader.c) and the schema parser
 * (schema.c).  Columns are the schema's top-level fields, in order; each maps to
 * one physical column of the file (col_index) or is undecoded with a reason.
 * Ownership: everything a read allocates lives in the file's arena (f->mem), but for the
 * lv_lancefile itself, each string column's bytes (str_data) and arrays of LV__BLOCK_MIN
 * bytes or more (f->big: lv__calloc'd, as fresh pages need no zeroing); lv_lancefile_free
 * frees those and disposes of the arena.  A schema-cache hit (schcache.c) fills the same
 * schema fields with copies in the same arena, never with pointers into the cache.
 */
#ifndef LV_LANCEFILE_FILE_H
#define LV_LANCEFILE_FILE_H

#include <stddef.h>

#include "lancefile/lf_internal.h"
#include "util/arena.h"

/* A large zeroed array of a read (schema.c lv__lf_zalloc), in a list of its own. */
typedef struct lv__lf_big {
	struct lv__lf_big *next;
	max_align_t data[];
} lv__lf_big;

typedef struct lv__lf_field {
	char *name, *ltype;
	bool nullable;
	bool blob;   /* field metadata lance-encoding:blob = true */
	bool packed; /* field metadata lance-encoding:packed = true (a struct in one column) */
	size_t name_len, ltype_len;
	unsigned depth;
	int64_t parent; /* field id of the parent, -1 top level */
	int64_t id;
} lv__lf_field;

struct lv_lancefile {
	int version;
	size_t nrows, ncols;   /* ncols: top-level fields */
	lv_column *cols;
	char **ltypes;
	char **errors;         /* per column: why it was not decoded, or NULL */
	size_t *phys;          /* per column: physical column index, or SIZE_MAX if unknown */
	lv__lf_field *fields;      /* every schema field, pre-order */
	size_t nfields;
	lv_kv *meta;
	size_t *meta_klen;     /* strlen of each key (lv_lancefile_metadata_find) */
	size_t nmeta;
	const uint8_t *sch;    /* the schema's bytes (the input's: only while reading) */
	size_t sch_n;
	char *sch_copy;        /* their copy, sch_n + 1 bytes, where every string lives (schema.c) */
	/* the schema's copy (every name, logical type and metadata key/value), the arrays above,
	 * the error strings and the columns' arrays except string bytes (str_data: lv__malloc,
	 * one per column) */
	lv__arena mem;
	lv__lf_big *big;       /* arrays of LV__BLOCK_MIN bytes or more, each its own block */
};

typedef struct lv__lf_rctx {
	const uint8_t *d;
	size_t size;
	const char *name;
	lv_error *err;
	unsigned flags;
} lv__lf_rctx;

int lv__lf_rcorrupt(lv__lf_rctx *r, const char *what);
/* n zeroed elements of `size` bytes (at least one) in the file's arena, or in a block of
 * their own (f->big) when large; NULL when out of memory or n * size overflows.  Freed with
 * the file (lv_lancefile_free), never alone. */
void *lv__lf_zalloc(lv_lancefile *f, size_t n, size_t size);
/*
 * Parses the FileDescriptor (global buffer 0): fields, metadata, row count; sets up
 * f->cols / ltypes / phys from the top-level fields.  `nphys` is the footer's column
 * count.  A top-level field whose type or column position is not known gets an
 * error string (LV_COL_UNDECODED) when LV_LANCEFILE_READ_PARTIAL is set, else fails.
 * Fields whose bytes, with the same count and f->version, were parsed before (with every
 * column decodable) are copied from the schema cache (schcache.h) instead; the metadata
 * and the row count are always parsed from p.
 */
int lv__lf_parse_schema(lv__lf_rctx *r, lv_lancefile *f, const uint8_t *p, size_t n, size_t nphys,
		    uint64_t *nrows);
/* Marks column i undecoded with `why` (partial reads); fails if the read is strict. */
int lv__lf_col_undecoded(lv__lf_rctx *r, lv_lancefile *f, size_t i, int code, const char *why);

#endif
