/*
 * lancever/diff.h - what changed between two recorded versions: the summary counters
 * of both and their differences (what `lancever diff` and Python's Dataset.diff answer).
 * These are net changes, not row-level differences.  Implemented in src/lib/core/diff.c.
 *
 * Ownership and the reading errors: lancever/dataset.h.
 */
#ifndef LANCEVER_DIFF_H
#define LANCEVER_DIFF_H

#include "dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lv_diff lv_diff;

/** The counters of a diff, in the order of the checkpoint columns (an index for
 *  lv_diff_counter; later releases may append counters: read lv_diff_count). */
enum lv_diff_counter_index {
	LV_DIFF_FRAGMENTS = 0,          /**< "total_fragments" */
	LV_DIFF_DATA_FILES = 1,         /**< "total_data_files" */
	LV_DIFF_FILES_SIZE = 2,         /**< "total_files_size" */
	LV_DIFF_DELETION_FILES = 3,     /**< "total_deletion_files" */
	LV_DIFF_DATA_FILE_ROWS = 4,     /**< "total_data_file_rows" */
	LV_DIFF_DELETION_FILE_ROWS = 5, /**< "total_deletion_file_rows" */
	LV_DIFF_ROWS = 6                /**< "total_rows" */
};

/**
 * Compares versions `from` and `to`, both recorded in the history of the dataset's
 * branch (lv_history: live or cleaned up).  *out is the caller's: lv_diff_free(); NULL
 * on error.
 * Errors: LV_EINVALID (NULL out or ds), LV_ENOTFOUND (a version the history does not
 * record, `from` checked first; or not a Lance dataset), the reading errors.
 */
LV_EXTERN int lv_diff_versions(lv_diff **out, lv_dataset *ds, uint64_t from, uint64_t to,
			       lv_error *err) LV_WARN_UNUSED;
/** The record of `from`.  Borrowed: valid until lv_diff_free(d).  Errors: none (NULL for
 *  NULL). */
LV_EXTERN const lv_version_info *lv_diff_from(const lv_diff *d);
/** The record of `to`.  Borrowed: valid until lv_diff_free(d).  Errors: none (NULL for
 *  NULL). */
LV_EXTERN const lv_version_info *lv_diff_to(const lv_diff *d);
/** to's commit time minus from's, in ms (negative when `to` was committed first).
 *  Errors: none (0 for NULL). */
LV_EXTERN int64_t lv_diff_ms_between(const lv_diff *d);
/** Number of counters (7: enum lv_diff_counter_index).  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_diff_count(const lv_diff *d);
/**
 * Counter `i` (< lv_diff_count): its checkpoint column name (static string), its values at
 * `from` and `to`, and to - from as a signed 64-bit number (modulo 2^64, as two's
 * complement).  Any output pointer may be NULL.  Errors: none; false (nothing written) if
 * `i` is out of range.
 */
LV_EXTERN bool lv_diff_counter(const lv_diff *d, size_t i, const char **name, uint64_t *from,
			       uint64_t *to, int64_t *delta);
/** Frees the diff and the records borrowed from it.  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_diff_free(lv_diff *d);

#ifdef __cplusplus
}
#endif
#endif
