/*
 * lancever/lancefile.h - Lance file format v2: writer (2.0, 2.1) and reader (2.0, 2.1, 2.2).
 *
 * Both directions work on bytes in memory; neither does I/O.  The writer is
 * deterministic: the same columns, rows, metadata and options always give the
 * same bytes.  Writer column types: UInt64, Int64, Boolean, Utf8, each nullable
 * or not.  The reader also decodes Int8, Int16, Int32, UInt8, UInt16, UInt32, Float32,
 * Float64, Timestamp and FixedSizeList<Float32> (vectors); lv_lancefile_read_ex with
 * LV_LANCEFILE_READ_PARTIAL keeps the schema and every decodable column of a file
 * whose other columns it cannot decode, naming why for each.  Errors and ownership
 * follow lancever/common.h.
 */
#ifndef LANCEVER_LANCEFILE_H
#define LANCEVER_LANCEFILE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Column types.  The writer takes the first four.  Reader storage: every fixed-width
 * scalar is in `u64` as its bit pattern (INT8, INT16, INT32 and TIMESTAMP sign-extended,
 * so `i64` reads them as signed; FLOAT32 is the float's 32 bits, FLOAT64 the double's 64 bits);
 * FSL_FLOAT32 is `f32` with `list_size` floats per row.  LV_COL_UNDECODED (0) is a column
 * the reader could not decode (only with LV_LANCEFILE_READ_PARTIAL): no arrays.
 */
enum lv_col_type {
	LV_COL_UNDECODED = 0,
	LV_COL_UINT64 = 1,
	LV_COL_INT64 = 2,
	LV_COL_BOOL = 3,
	LV_COL_UTF8 = 4,
	LV_COL_INT32 = 5,
	LV_COL_FLOAT32 = 6,
	LV_COL_FLOAT64 = 7,
	LV_COL_TIMESTAMP = 8,   /**< int64 in the unit of the logical type ("timestamp:us:UTC") */
	LV_COL_FSL_FLOAT32 = 9, /**< FixedSizeList<Float32>: vectors of list_size floats */
	LV_COL_INT8 = 10,       /**< in `u64`, sign-extended like INT32 (`i64` reads them) */
	LV_COL_INT16 = 11,      /**< in `u64`, sign-extended */
	LV_COL_UINT8 = 12,      /**< in `u64` */
	LV_COL_UINT16 = 13,     /**< in `u64` */
	LV_COL_UINT32 = 14      /**< in `u64` */
};

/** File format versions (2.2 is read only). */
enum lv_lancefile_version { LV_LANCEFILE_V2_0 = 20, LV_LANCEFILE_V2_1 = 21, LV_LANCEFILE_V2_2 = 22 };

/**
 * One column of `length` rows.  Exactly the array for `type` is used:
 *  UINT64 -> u64, INT64 -> i64, BOOL -> bools (one byte per row, 0 or 1),
 *  UTF8 -> str_offsets (length+1 entries, non-decreasing, first 0) into str_data.
 * `validity` is one byte per row (1 = valid, 0 = null) or NULL for "all valid";
 * it must be NULL when `nullable` is false.  Values at null rows are ignored.
 */
typedef struct lv_column {
	const char *name;
	int type;          /**< enum lv_col_type */
	bool nullable;
	const uint64_t *u64;
	const int64_t *i64;
	const uint8_t *bools;
	const uint64_t *str_offsets;
	const char *str_data;
	const uint8_t *validity;
	/* reader only (the writer ignores them) */
	const float *f32;   /**< FSL_FLOAT32: num_rows * list_size floats (null rows: 0) */
	uint32_t list_size; /**< FSL_FLOAT32: floats per row */
} lv_column;

/** A schema-level metadata entry. */
typedef struct lv_kv {
	const char *key;
	const char *value;
	size_t value_len; /**< bytes of value (values may hold any bytes) */
} lv_kv;

typedef struct lv_lancefile_write_options {
	int version;          /**< LV_LANCEFILE_WRITE_OPTIONS_VERSION */
	int file_version;     /**< enum lv_lancefile_version; 0 = 2.1 (Lance 8.0.0's default) */
	size_t max_page_rows; /**< rows per page before a new page starts; 0 = default */
} lv_lancefile_write_options;

#define LV_LANCEFILE_WRITE_OPTIONS_VERSION 1
#define LV_LANCEFILE_WRITE_OPTIONS_INIT { LV_LANCEFILE_WRITE_OPTIONS_VERSION, 0, 0 }

/**
 * Writes a whole file into `out`: the caller's (lv_buf_dispose()), empty on error.
 * `opts` may be NULL.  Errors: LV_EINVALID (NULL out, unknown options or file version,
 * a missing or malformed column or metadata entry), LV_ELIMIT (too many rows or
 * columns, a file too large), LV_ENOMEM.
 */
LV_EXTERN int lv_lancefile_write(lv_buf *out, const lv_column *cols, size_t ncols, size_t nrows,
				 const lv_kv *meta, size_t nmeta,
				 const lv_lancefile_write_options *opts,
				 lv_error *err) LV_WARN_UNUSED;

typedef struct lv_lancefile lv_lancefile;

/**
 * Parses and decodes a whole file.  The result owns copies of every value and
 * does not reference `data` afterwards.  Unknown encodings are LV_EUNSUPPORTED
 * with the encoding named in the message; malformed bytes are LV_ECORRUPT.
 * `name` (may be NULL) is used in error messages.  *out is the caller's:
 * lv_lancefile_free(); NULL on error.  Errors: LV_EINVALID (NULL out, NULL data with
 * size > 0), LV_ECORRUPT, LV_EUNSUPPORTED (above), LV_ELIMIT (more rows or decoded
 * cells than the decode limit allows for the input's size), LV_ENOMEM.
 */
LV_EXTERN int lv_lancefile_read(lv_lancefile **out, const uint8_t *data, size_t size,
				const char *name, lv_error *err) LV_WARN_UNUSED;

/** lv_lancefile_read_ex flags. */
enum {
	/** Keep going past a column that cannot be decoded: it becomes LV_COL_UNDECODED with
	 *  lv_lancefile_column_error() saying why.  The footer, the schema and the column
	 *  metadata must still be valid. */
	LV_LANCEFILE_READ_PARTIAL = 1
};

/** lv_lancefile_read with flags (0 = lv_lancefile_read); *out is the caller's, as there.
 *  Errors: as lv_lancefile_read(); with LV_LANCEFILE_READ_PARTIAL a column it cannot
 *  decode is not one. */
LV_EXTERN int lv_lancefile_read_ex(lv_lancefile **out, const uint8_t *data, size_t size,
				   const char *name, unsigned flags, lv_error *err) LV_WARN_UNUSED;

/** Frees the file and everything borrowed from it.  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_lancefile_free(lv_lancefile *f);
/** Why column i was not decoded (LV_COL_UNDECODED), or NULL when it was (or i is out of
 *  range).  Borrowed: valid until lv_lancefile_free(f).  Errors: none. */
LV_EXTERN const char *lv_lancefile_column_error(const lv_lancefile *f, size_t i);
/** Number of schema fields, nested ones included (>= columns for nested types).
 *  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_lancefile_num_fields(const lv_lancefile *f);
/**
 * Schema field i in pre-order: name, logical type, nullable, depth (0 = top level); each
 * out may be NULL.  The strings are borrowed: valid until lv_lancefile_free(f).
 * Returns 0.  Errors: LV_EINVALID (NULL f, i out of range; nothing written).
 */
LV_EXTERN int lv_lancefile_field(const lv_lancefile *f, size_t i, const char **name,
				 const char **logical_type, bool *nullable, unsigned *depth);
/** The file's format version (enum lv_lancefile_version).  Errors: none (0 for NULL). */
LV_EXTERN int lv_lancefile_file_version(const lv_lancefile *f);
/** Number of rows.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_lancefile_num_rows(const lv_lancefile *f);
/** Number of columns (lv_lancefile_column).  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_lancefile_num_columns(const lv_lancefile *f);
/** Column view (arrays as in lv_column; validity is never NULL for nullable columns).
 *  Borrowed: valid until lv_lancefile_free(f).  Errors: none (NULL if out of range). */
LV_EXTERN const lv_column *lv_lancefile_column(const lv_lancefile *f, size_t i);
/** Logical type string of column i as stored ("uint64", "string", ...).  Borrowed: valid
 *  until lv_lancefile_free(f).  Errors: none (NULL if out of range). */
LV_EXTERN const char *lv_lancefile_column_logical_type(const lv_lancefile *f, size_t i);
/** Number of schema metadata entries.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_lancefile_num_metadata(const lv_lancefile *f);
/** Metadata entry i.  Borrowed: valid until lv_lancefile_free(f).  Errors: none (NULL if
 *  out of range). */
LV_EXTERN const lv_kv *lv_lancefile_metadata(const lv_lancefile *f, size_t i);
/** The entry of metadata `key` (the last one if the key repeats), or NULL.  Borrowed:
 *  valid until lv_lancefile_free(f).  Errors: none. */
LV_EXTERN const lv_kv *lv_lancefile_metadata_find(const lv_lancefile *f, const char *key);

#ifdef __cplusplus
}
#endif
#endif
