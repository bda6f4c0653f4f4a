/*
 * lancever/checkpoint.h - version checkpoints (the "Version Checkpointing"
 * proposal), full history, and time travel by timestamp.
 *
 * A checkpoint is `_checkpoints/{latest covered version:020}.lance`, a Lance
 * file (format 2.1 by default) with one record batch of the 15 per-version columns.
 * It never creates a dataset version.  Writing one is deterministic: the same
 * dataset state gives byte-identical files, so concurrent writers agree.
 *
 * With the archive on (the default), history older than the head's range is
 * sealed into segments `_checkpoints/archive/{first:020}-{last:020}.lance`
 * (the same schema), each written once and never rewritten or deleted; the
 * head stays a checkpoint of the proposal (at most max_entries rows).
 *
 * Errors and ownership follow lancever/common.h; "the reading errors" are those of
 * lancever/dataset.h.
 */
#ifndef LANCEVER_CHECKPOINT_H
#define LANCEVER_CHECKPOINT_H

#include "dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of transaction-properties JSON kept before wrapping (proposal: 10 KB). */
#define LV_PROPERTIES_LIMIT 10240

/** Checkpoint configuration.  Fields left at -1 come from the dataset config, else defaults. */
typedef struct lv_checkpoint_config {
	int version;                  /**< LV_CHECKPOINT_CONFIG_VERSION */
	int enabled;                  /**< 1, 0, or -1 = dataset config / default (true) */
	int64_t max_entries;          /**< > 0, or -1 = dataset config / default (10000) */
	int64_t max_checkpoint_files; /**< > 0, or -1 = dataset config / default (2) */
	int archive;                  /**< 1, 0 (the proposal: history beyond max_entries is
					   dropped), or -1 = dataset config / default (true) */
	int64_t archive_segment_rows; /**< versions per segment, > 0 (at most max_entries are used),
					   or -1 = dataset config / default (4096) */
	/* version 3: */
	lv_progress_cb on_progress;   /**< lv_checkpoint_write's progress (lancever/common.h has the
					   contract): "listing", "reading manifests" (done of the
					   manifests the previous checkpoint lacks), "writing
					   checkpoint", "verifying", "done"; NULL = none.  Not a
					   setting: lv_checkpoint_config_resolve copies it as given */
	void *payload;                /**< passed to on_progress */
} lv_checkpoint_config;

/* Version 3 appended on_progress and payload; version 2 (without them) is still accepted. */
#define LV_CHECKPOINT_CONFIG_VERSION 3
#define LV_CHECKPOINT_CONFIG_INIT                                                            \
	{ .version = LV_CHECKPOINT_CONFIG_VERSION, .enabled = -1, .max_entries = -1,            \
	  .max_checkpoint_files = -1, .archive = -1, .archive_segment_rows = -1 }

/**
 * Sets c->version to `version` (pass LV_CHECKPOINT_CONFIG_VERSION) and every field of that
 * version's layout to -1 (dataset config, else default; no progress callback), as
 * LV_CHECKPOINT_CONFIG_INIT.  Errors: LV_EINVALID (NULL
 * c, a version this library does not know: then nothing is written).
 */
LV_EXTERN int lv_checkpoint_config_init(lv_checkpoint_config *c, int version);

/** Dataset config keys (Manifest.config) read by lancever. */
#define LV_CONFIG_ENABLED "lance.version_checkpoint.enabled"
#define LV_CONFIG_MAX_ENTRIES "lance.version_checkpoint.max_entries"
#define LV_CONFIG_MAX_FILES "lance.version_checkpoint.max_checkpoint_files"
#define LV_CONFIG_ARCHIVE "lance.version_checkpoint.archive"
#define LV_CONFIG_SEGMENT_ROWS "lance.version_checkpoint.archive_segment_rows"

/**
 * Resolves the effective configuration: explicit fields of `in` win, then the
 * latest manifest's config keys, then defaults.  `out` is the caller's, initialised
 * (lv_checkpoint_config_init); all its fields are written, its version kept.  Invalid dataset values (0,
 * negative, not a number, not true/false) are LV_EINVALID naming the key.  `in` may be
 * NULL.  Reads the listing and the latest manifest (one that vanished meanwhile counts
 * as absent).  Errors: LV_EINVALID (NULL out or ds, a bad explicit field or dataset
 * value), LV_ECORRUPT / LV_EUNSUPPORTED / LV_ELIMIT (the latest manifest), LV_ENOMEM,
 * storage errors; LV_EINVALID also for an `in` or `out` of an unknown version.  A
 * directory with no manifests is not an error (defaults apply).
 */
LV_EXTERN int lv_checkpoint_config_resolve(lv_checkpoint_config *out, lv_dataset *ds,
					   const lv_checkpoint_config *in,
					   lv_error *err) LV_WARN_UNUSED;

/** What lv_checkpoint did: the caller's struct, initialised with lv_checkpoint_result_init. */
typedef struct lv_checkpoint_result {
	int version;               /**< LV_CHECKPOINT_RESULT_VERSION (set by its init) */
	bool written;              /**< false when disabled */
	bool already_present;      /**< an identical file was already there (idempotent success) */
	uint64_t latest_version;   /**< newest version covered */
	uint64_t entries;          /**< rows in the file */
	uint64_t new_entries;      /**< rows in the file that the previous checkpoint lacked (0 if already present) */
	uint64_t file_size;
	uint64_t files_pruned;     /**< old checkpoint files deleted */
	char path[64];             /**< "_checkpoints/<name>.lance" */
	lv_history_report *report; /**< NULL, or the caller's initialised report, written with how
				        the previous checkpoint was loaded (set it before the call) */
	uint64_t files_quarantined;   /**< damaged checkpoints moved aside (never deleted) */
	uint64_t unrecorded_versions; /**< versions in the range written that no row records */
	uint64_t segments_written;    /**< archive segments this write created */
	uint64_t segment_bytes;       /**< their bytes */
	uint64_t archived_through;    /**< versions <= this are in the archive (0: none, or archive off) */
	uint64_t recorded_versions;   /**< versions the head and the archive's index record */
} lv_checkpoint_result;

/* Version 1 (a struct without a version, whose report was held by value, is refused). */
#define LV_CHECKPOINT_RESULT_VERSION 1
#define LV_CHECKPOINT_RESULT_INIT { .version = LV_CHECKPOINT_RESULT_VERSION }

/** Zeroes r (report NULL) and sets r->version to `version` (pass
 *  LV_CHECKPOINT_RESULT_VERSION).  Errors: LV_EINVALID (NULL r, an unknown version: then
 *  nothing is written). */
LV_EXTERN int lv_checkpoint_result_init(lv_checkpoint_result *r, int version);

/**
 * Writes a checkpoint of the current history (the proposal's archive_versions).
 * `cleaned` lists versions about to be removed by a cleanup: they are recorded
 * with is_cleaned_up = true even though their manifests still exist
 * (may be NULL / 0).  `cfg` may be NULL.
 *
 * Never loses history it can read: a checkpoint that cannot be decoded is
 * moved aside to "<name>.damaged-<crc32c>" (byte for byte; never deleted,
 * never pruned, read by lv_checkpoint_check), and the rows of every usable
 * checkpoint are merged into the new file; one that cannot be read at all is
 * left in place, nothing is pruned while it exists, and its name is never
 * written over (LV_EIO naming it).  Versions the new file has no row for are
 * warnings on the dataset (LV_WARN_HISTORY_GAP).  `result` (may be NULL; initialised with
 * lv_checkpoint_result_init, and so is the report it points to) is written only on
 * success, its version and report pointer kept.
 * Errors: the reading errors; LV_EINVALID (NULL ds, a bad configuration as
 * lv_checkpoint_config_resolve(), a result or report of an unknown version); LV_EIO (above); LV_ECONFLICT (manifests kept
 * vanishing while read, the checkpoint lock held by another writer too long, or a
 * concurrent writer's file with other content under the same name); LV_ELIMIT
 * (version numbers exhausted).
 */
LV_EXTERN int lv_checkpoint_write(lv_dataset *ds, const lv_checkpoint_config *cfg,
				  const uint64_t *cleaned, size_t ncleaned,
				  lv_checkpoint_result *result, lv_error *err) LV_WARN_UNUSED;

/**
 * Every version ever recorded: the newest usable checkpoint's rows plus live
 * manifests, sorted by version; versions whose manifests are gone have
 * is_cleaned_up = true.  `report` (may be NULL, written only on success) says which
 * rung of the ladder answered.  *out is the caller's: lv_version_list_free(); NULL on
 * error.  Errors: LV_EINVALID (NULL out or ds), the reading errors.
 */
LV_EXTERN int lv_history(lv_version_list **out, lv_dataset *ds, lv_history_report *report,
			 lv_error *err) LV_WARN_UNUSED;

/** Which part of the history lv_history_each() hands out. */
typedef struct lv_history_options {
	int version;             /**< LV_HISTORY_OPTIONS_VERSION */
	uint64_t limit;          /**< only the newest N recorded versions (0 = all) */
	uint64_t since_version;  /**< only versions >= this (0 = from the first) */
	bool since_time;         /**< only versions committed at or after since_ms */
	int64_t since_ms;
} lv_history_options;

#define LV_HISTORY_OPTIONS_VERSION 1
#define LV_HISTORY_OPTIONS_INIT { .version = LV_HISTORY_OPTIONS_VERSION }

/** Sets o->version to `version` (pass LV_HISTORY_OPTIONS_VERSION) and every field to 0 (the
 *  whole history).  Errors: LV_EINVALID (NULL o, an unknown version: nothing written). */
LV_EXTERN int lv_history_options_init(lv_history_options *o, int version);

/** One version of a history stream (borrowed: valid during the call).  Non-zero stops. */
typedef int (*lv_history_row_fn)(const lv_version_info *v, void *payload);
/** A range of versions that no readable record holds (also a warning on the dataset). */
typedef int (*lv_history_gap_fn)(uint64_t first, uint64_t last, void *payload);

/**
 * The history as a stream, in version order, with what lv_history() returns
 * but without holding it: the head checkpoint and the live manifests beyond
 * it are read first (a race with a concurrent writer is met by looking
 * again), then archive segments one at a time (several at once on object
 * stores), so memory is bounded by a segment, not by the history.  With
 * `opts`, only the segments that can hold the versions asked for are read
 * (since_version and limit by version ranges and the head's index of row
 * counts; since_time by the index's commit-time ranges).  `on_gap` (may be
 * NULL) gets each range no readable record holds, in place; each is also a
 * warning.  Returns 0, or the non-zero value a callback returned to stop the
 * stream (a negative one is returned as is, `err` untouched), or a negative error.
 * `opts` and `report` may be NULL; `report` is written unless an error occurred.
 * Errors: LV_EINVALID (NULL ds or on_row, opts or report of an unknown version), the
 * reading errors.
 */
LV_EXTERN int lv_history_each(lv_dataset *ds, const lv_history_options *opts,
			      lv_history_row_fn on_row, lv_history_gap_fn on_gap, void *payload,
			      lv_history_report *report, lv_error *err) LV_WARN_UNUSED;

/**
 * lv_history() with `opts` (may be NULL): the versions lv_history_each() would hand out,
 * collected into a list (memory grows with the answer, as with lv_history()).
 * *out is the caller's: lv_version_list_free(); NULL on error.  Errors: as lv_history().
 */
LV_EXTERN int lv_history_list(lv_version_list **out, lv_dataset *ds, const lv_history_options *opts,
			      lv_history_report *report, lv_error *err) LV_WARN_UNUSED;

/**
 * A pull-style cursor over the history stream: the rows, gaps and warnings of
 * lv_history_each() (the same code), handed out a chunk at a time, so a consumer that
 * writes each chunk out (the CLI's --format csv|arrow, lv_history_cursor_arrow_stream)
 * holds no more than a chunk: memory is bounded by an archive segment, the head
 * checkpoint and `max_rows` (with opts->limit, also by the rows asked for), not by the
 * history.  The cursor holds the dataset: lv_dataset_free() may come before
 * lv_history_cursor_free() (the dataset is freed by the last of the two; a storage handle given
 * to lv_dataset_open_storage() must outlive both).  Do not call other functions on the
 * dataset from another thread while a cursor call runs, and do not use a cursor from two
 * threads at once.
 */
typedef struct lv_history_cursor lv_history_cursor;

/**
 * Opens a cursor and reads its plan (the listings, the head checkpoint, the tags, the
 * live manifests beyond the head when they are few): what lv_history_each() reads before
 * its first row; a race with a concurrent writer is met here by looking again.  `opts`
 * may be NULL.  *out is the caller's: lv_history_cursor_free(); NULL on error.
 * Errors: LV_EINVALID (NULL out or ds, opts of an unknown version), the reading errors.
 */
LV_EXTERN int lv_history_cursor_open(lv_history_cursor **out, lv_dataset *ds,
				     const lv_history_options *opts, lv_error *err) LV_WARN_UNUSED;

/**
 * The next rows: *out is a list (the caller's: lv_version_list_free) of at most
 * `max_rows` versions in version order, carrying the gaps met since the previous call
 * (lv_version_list_gap), or NULL at the end.  When the end is reached the cursor's
 * warnings are committed to the dataset and `report` (may be NULL; written only then)
 * says what the cursor read.  After an error the cursor fails every later call
 * (LV_EINVALID); rows already handed out stay valid.  Errors: LV_EINVALID (NULL c or out,
 * max_rows 0, a report of an unknown version, a failed cursor), the reading errors of
 * lv_history_each(), LV_ENOMEM.
 */
LV_EXTERN int lv_history_cursor_next(lv_history_cursor *c, size_t max_rows, lv_version_list **out,
				     lv_history_report *report, lv_error *err) LV_WARN_UNUSED;

/**
 * Before the first lv_history_cursor_next(): the gaps the cursor's rows will have, as an
 * empty list's gaps (lv_version_list_gap; the caller's: lv_version_list_free), for an
 * export that must name them before its rows (the Arrow schema's "lancever:gaps"); with
 * options (since, limit), those strictly between the first and the last version handed
 * out, as lv_version_list_select keeps of a list's gaps.  Reads
 * every archive segment the rows will read once more (the manifests beyond the head are
 * taken from the listing, not read, unless opts->since_time needs their commit times);
 * this scan is the one that warns (committed to the
 * dataset now) and `report` (may be NULL) says what the plan and the scan read.  A
 * manifest that vanishes between this scan and its row is skipped with a warning, and its
 * version is a gap this list lacks.  Errors: LV_EINVALID (NULL c or out, a report of an
 * unknown version, called after a row or twice), the reading errors, LV_ENOMEM.
 */
LV_EXTERN int lv_history_cursor_gaps(lv_history_cursor *c, lv_version_list **out,
				     lv_history_report *report, lv_error *err) LV_WARN_UNUSED;

/** Frees the cursor (rows it handed out stay valid).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_history_cursor_free(lv_history_cursor *c);

/** A loaded timeline for repeated as-of lookups (O(log n) each). */
typedef struct lv_timeline lv_timeline;

/**
 * Loads the history (lv_history()) into a timeline.  *out is the caller's:
 * lv_timeline_free(); left untouched on error.  Errors: as lv_history().
 */
LV_EXTERN int lv_timeline_load(lv_timeline **out, lv_dataset *ds, lv_history_report *report,
			       lv_error *err) LV_WARN_UNUSED;
/**
 * Builds a timeline from an existing list (borrowed: the list must outlive the timeline).
 * *out is the caller's: lv_timeline_free(); left untouched on error.
 * Errors: LV_EINVALID (NULL out or list), LV_ENOMEM.
 */
LV_EXTERN int lv_timeline_from_list(lv_timeline **out, const lv_version_list *list,
				    lv_error *err) LV_WARN_UNUSED;
/** Frees the timeline (and the list lv_timeline_load read).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_timeline_free(lv_timeline *tl);

/**
 * The newest version whose commit time is <= ts_ms (or < ts_ms when `strict`;
 * Python Lance's asof is strict).  Exact even when timestamps are not
 * monotonic in version order.  Returns NULL if no version qualifies.  The
 * pointer is borrowed from the timeline (and its list).  A result with is_cleaned_up set
 * can no longer be checked out.  Errors: none (NULL for NULL tl).
 */
LV_EXTERN const lv_version_info *lv_timeline_as_of(const lv_timeline *tl, int64_t ts_ms,
						   bool strict);

/**
 * One-shot convenience: the answer of lv_timeline_as_of(), reading only the history it
 * needs (archive segments by the head's index).  *out is the caller's:
 * lv_version_list_free() (one entry); NULL on error.  `report` may be NULL.
 * Errors: LV_ENOTFOUND (no version qualifies, or not a Lance dataset), LV_EINVALID (NULL
 * out or ds), the reading errors.
 */
LV_EXTERN int lv_version_as_of(lv_version_list **out, lv_dataset *ds, int64_t ts_ms, bool strict,
			       lv_history_report *report, lv_error *err) LV_WARN_UNUSED;

/**
 * Wraps transaction-properties JSON longer than `limit` bytes as
 * {"_truncated":true,"_size":N,"_data":"<first bytes, cut at a UTF-8 boundary>"}.
 * Returns a malloc'ed string, the caller's: free() (the input copied when short enough).
 * `json` must not be NULL.  Errors: none but out of memory, which returns NULL.
 */
LV_EXTERN char *lv_properties_truncate(const char *json, size_t limit);

#ifdef __cplusplus
}
#endif
#endif
