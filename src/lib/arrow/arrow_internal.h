/*
 * Internal interface of the Arrow export (src/lib/arrow).
 *
 * A table to export is described by a column list (name, type, nullability)
 * and a cell getter over some source rows; everything Arrow-specific (schema
 * and batch layout, release callbacks, the stream) is generic over that
 * description, so each kind of result (version lists, refs, cleanup files)
 * only supplies its columns and a getter.  This module sits above the public
 * API: it calls lv_* functions and util/, never core internals.
 */
#ifndef LV_ARROW_INTERNAL_H
#define LV_ARROW_INTERNAL_H

#include <errno.h>

#include <stdbool.h>
#include <string.h>

#include "lancever/arrow.h"

/* Column types the export produces (and the IPC writer reads). */
/* LV__A_TS_MS: milliseconds since the Unix epoch (the cell's `i`), exported as
 * timestamp[ms, tz=UTC] ("tsm:UTC"), laid out as int64. */
enum lv__atype { LV__A_U64, LV__A_I64, LV__A_BOOL, LV__A_UTF8, LV__A_TS_MS };

/* One cell.  `s`/`n` for UTF8 (s need not be NUL-terminated), else u, i or b. */
typedef struct lv__aval {
	uint64_t u;
	int64_t i;
	bool b;
	const char *s;
	size_t n;
} lv__aval;

/* Fills *v with cell (row, col) of `rows`; returns false for a null cell. */
typedef bool (*lv__aget_fn)(const void *rows, size_t row, size_t col, lv__aval *v);

typedef struct lv__acol {
	const char *name; /* static storage */
	int type;         /* enum lv__atype */
	bool nullable;
} lv__acol;

/* What a stream exports: owned by the stream once handed to lv__arrow_stream_new. */
typedef struct lv__asource {
	const lv__acol *cols; /* static table */
	size_t ncols;
	lv__aget_fn get;
	void *rows;           /* the getter's context, freed with free_rows */
	size_t nrows;
	void (*free_rows)(void *rows);
	char *metadata;       /* encoded schema metadata (lv__arrow_metadata), owned, or NULL */
	/* A source read a window at a time (NULL: every row is there from the start): makes
	 * the rows those of [keep, nrows) followed by the next ones, `want` in all (fewer, and
	 * *eof set, at the end).  0, or an errno value with the reason in msg (cap bytes). */
	int (*more)(struct lv__asource *src, size_t keep, size_t want, bool *eof, char *msg,
		    size_t cap);
} lv__asource;

/* ---- memory (alloc.c): every allocation of the export, counted for the test hooks ---- */

/* 64-byte aligned, zeroed; NULL on OOM or an injected failure. */
void *lv__arrow_alloc(size_t n);
void lv__arrow_free(void *p);
/* Exported-object accounting (lancever/sys/arrow.h). */
void lv__arrow_live_add(int64_t delta);

/* A stream's own copy of its rows: n fixed-size row structs whose strings point into one
 * block sized for them beforehand (the sum of lv__arows_slen over the strings kept). */
typedef struct lv__arows {
	void *rows;
	char *strings;
	size_t used, cap; /* of strings */
} lv__arows;
/* NULL on OOM (or overflow). */
lv__arows *lv__arows_new(size_t n, size_t row_size, size_t string_bytes);
/* Frees the rows (an lv__asource's free_rows); NULL is a no-op. */
void lv__arows_free(void *rows);
/* Copies s (NULL stays NULL) into the block, which must have room for it. */
const char *lv__arows_keep(lv__arows *r, const char *s);
/* What s takes in the block: strlen + 1, 0 for NULL. */
static inline size_t lv__arows_slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}
/* A UTF8 cell holding s; false (a null cell) for NULL. */
static inline bool lv__acell_str(const char *s, lv__aval *v)
{
	if (!s)
		return false;
	v->s = s;
	v->n = strlen(s);
	return true;
}

/* ---- schema and batches (table.c) ---- */

/* Encodes key/value pairs as the C Data Interface metadata blob (malloc'ed; NULL on OOM). */
char *lv__arrow_metadata(const char *const *keys, const char *const *values, size_t n);

/* Exports the struct schema of `cols` with `metadata` (copied; may be NULL).  0 or ENOMEM. */
int lv__arrow_schema_export(struct ArrowSchema *out, const lv__acol *cols, size_t ncols,
			    const char *metadata);

/*
 * Exports rows [first, first + count) of `src` as one struct array.  0, ENOMEM,
 * or EOVERFLOW when a string column exceeds what 32-bit offsets address.
 */
int lv__arrow_batch_export(struct ArrowArray *out, const lv__asource *src, size_t first,
			   size_t count);

/* ---- the stream (stream.c) ---- */

/*
 * Makes `out` a stream over `src`, which it owns from now on (freed on failure
 * too).  Returns 0 or LV_ENOMEM / LV_EINVALID with `err` set.
 */
/* LV_EINVALID (named) for options of another version; 0 for NULL or this version. */
int lv__arrow_opts_check(const lv_arrow_options *opts, lv_error *err);
int lv__arrow_stream_new(struct ArrowArrayStream *out, lv__asource *src,
			 const lv_arrow_options *opts, lv_error *err);
/* Frees what a source owns (rows, metadata). */
void lv__arrow_source_dispose(lv__asource *src);

#endif
