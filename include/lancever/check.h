/*
 * lancever/check.h - verify every history record of a dataset, and recover
 * what still parses from damaged checkpoints ("lancever check").
 *
 * Ownership: lv_check_run() returns a report you free with lv_check_free();
 * strings inside items are borrowed from it.
 */
#ifndef LANCEVER_CHECK_H
#define LANCEVER_CHECK_H

#include "checkpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a checked item is. */
enum lv_check_kind {
	LV_CHECK_CHECKPOINT = 1, /**< _checkpoints/{version:020}.lance */
	LV_CHECK_KEPT_ASIDE = 2, /**< a damaged checkpoint moved aside (<name>.damaged-<crc>) */
	LV_CHECK_MANIFEST = 3,   /**< a manifest of _versions/ (listed only when it fails) */
	LV_CHECK_REF = 4,        /**< a tag or branch file (listed only when it fails) */
	LV_CHECK_GAP = 5,        /**< versions first..last that no readable record holds */
	LV_CHECK_SEGMENT = 6     /**< an archive segment (_checkpoints/archive/...), or one the head's
				      index names that is missing (status LV_ENOTFOUND) */
};

/** One finding. */
typedef struct lv_check_item {
	int kind;             /**< enum lv_check_kind */
	const char *path;     /**< relative to the dataset root; NULL for a gap */
	int status;           /**< 0 = usable; else the LV_E* code that rejects it */
	const char *message;  /**< why it is rejected, or a summary ("" when nothing to say) */
	uint64_t rows;        /**< checkpoints: rows that decode (kept-aside: ignoring the checksum) */
	uint64_t first, last; /**< versions of those rows, or the gap */
	uint64_t salvageable; /**< kept-aside and rejected files: rows of versions in a gap */
} lv_check_item;

typedef struct lv_check lv_check;

/** Options for lv_check_run(). */
typedef struct lv_check_options {
	int version;   /**< LV_CHECK_OPTIONS_VERSION (set by lv_check_options_init) */
	bool salvage;  /**< write the salvageable rows into a new checkpoint */
	const lv_checkpoint_config *checkpoint; /**< for that checkpoint; NULL = the dataset
						     config, else defaults */
	/* version 3: */
	lv_progress_cb on_progress; /**< progress (lancever/common.h has the contract): "listing",
				       "checking manifests" (done of every manifest), "checking refs",
				       "checking checkpoints" and "checking segments" (done of the
				       files), "reading history", "salvaging", "done"; NULL = none */
	void *payload;              /**< passed to on_progress */
} lv_check_options;

/* Version 2: `checkpoint` became a pointer (version 1, from before 1.0, is refused).
 * Version 3 appended on_progress and payload; version 2 is still accepted. */
#define LV_CHECK_OPTIONS_VERSION 3
#define LV_CHECK_OPTIONS_INIT { .version = LV_CHECK_OPTIONS_VERSION }

/** Sets o->version to `version` (pass LV_CHECK_OPTIONS_VERSION) and every field of that
 *  version's layout to its default (no salvage, checkpoint NULL, no progress).  Errors: LV_EINVALID (NULL o, an unknown version:
 *  then nothing is written). */
LV_EXTERN int lv_check_options_init(lv_check_options *o, int version);

/**
 * Reads every checkpoint (and every file kept aside), every archive segment
 * (and notes each one the head's index names that is missing), every manifest, every
 * tag and branch file, and the history they make up; reports each file that
 * is rejected, each range of versions no readable record holds, and which of
 * those a damaged file could fill.  With opts->salvage, rows that decode from
 * damaged files (their checksum no longer holds) for versions no other record
 * holds are written into a new checkpoint; nothing is deleted.  Returns 0
 * whether or not problems were found (lv_check_problems() says), or an
 * error if the check itself could not run.  `opts` may be NULL.  *out is the
 * caller's: lv_check_free(); NULL on error.  A file that is rejected is an item, not
 * an error.  Errors: LV_EINVALID (NULL out or ds, opts of an unknown version), LV_ENOTFOUND (not a Lance dataset),
 * LV_ENOMEM, storage errors of the listings, those of lv_history() (the gaps are
 * found from it) and, with opts->salvage, those of lv_checkpoint_write().
 */
LV_EXTERN int lv_check_run(lv_check **out, lv_dataset *ds, const lv_check_options *opts,
			   lv_error *err) LV_WARN_UNUSED;
/** Number of items.  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_check_count(const lv_check *c);
/** Item `i`.  Borrowed: valid until lv_check_free(c), strings included.  Errors: none
 *  (NULL if out of range). */
LV_EXTERN const lv_check_item *lv_check_get(const lv_check *c, size_t i);
/** Items that are problems (rejected files, kept-aside files, gaps).  Errors: none. */
LV_EXTERN size_t lv_check_problems(const lv_check *c);
/** Rows written back by a salvage (0 without opts->salvage).  Errors: none. */
LV_EXTERN uint64_t lv_check_salvaged(const lv_check *c);
/** Frees the report and everything borrowed from it.  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_check_free(lv_check *c);

#ifdef __cplusplus
}
#endif
#endif
