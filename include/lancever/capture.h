/*
 * lancever/capture.h - incremental capture of ONE dataset (issue 28): what
 * `lancever watch` runs per table, and what the Python package offers.
 * Implemented in src/lib/core/capture.c (and capture_gaps.c: gap notes).
 *
 * A capture keeps a position, the newest version it knows (read, recorded
 * by a checkpoint, or noted as a gap).  lv_capture_poll() lists only what is
 * newer, reads each new manifest at once and keeps its record (a checkpoint
 * row, a few hundred bytes), not the manifest; lv_capture_flush() makes the
 * held records durable as an ordinary checkpoint (lv_checkpoint_write's
 * rules: create-if-absent, read back and verified, archive as configured)
 * without reading those manifests again, so a version whose manifest a
 * cleanup removed after the poll is still recorded.
 *
 * Misses: a version whose manifest vanished between the listing and the read,
 * or that was committed and removed between two polls (a hole in the version
 * numbers), is a gap with its reason, noted durably at the next flush in
 * `_checkpoints/gaps/` (docs/format.md); lv_history() then names the reason in
 * the gap's warning.  Each such version counts once in `missed`.
 *
 * Restart: a new capture starts at the version of the newest checkpoint in
 * `_checkpoints/` (nothing flushed is lost); live manifests newer than it are
 * read by the first poll; versions newer than it with no manifest are a gap
 * (reason: removed while no capture held them).  Versions at or below it that
 * no checkpoint records but whose manifests are live are recorded by the
 * flush (the checkpoint writer reads them).  A dataset with no checkpoint
 * starts at version 0: its first poll reads every live manifest.
 *
 * Two captures of the same table (two watchers) are safe: the checkpoint is
 * written create-if-absent and merged under the checkpoint lock when another
 * writer's head has the same name; a gap note is created once.  A version one
 * capture missed and the other read is recorded (the note is then unused).
 *
 * Cost of a poll: one listing of `_versions/` (on an object store whose
 * names are V2 the listing stops at the first name not newer than the
 * position), plus one read per new manifest.  State per table: the position,
 * the held records until they are flushed, counters.
 *
 * Warnings: a poll, and a flush that has work, start by clearing the dataset's
 * warnings (lv_dataset_clear_warnings), so after the call lv_dataset_warning*() are
 * that call's (a gap found, a checkpoint rejected, ...) and none pile up in a
 * long-running process.
 *
 * Threads: one lv_capture is used by one thread at a time; captures of
 * different datasets run in parallel.  Errors and ownership: lancever/common.h.
 */
#ifndef LANCEVER_CAPTURE_H
#define LANCEVER_CAPTURE_H

#include "dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An incremental capture of one dataset (opaque; a few kilobytes plus the held records). */
typedef struct lv_capture lv_capture;

/** Options of lv_capture_open(): the caller's, initialised with lv_capture_options_init. */
typedef struct lv_capture_options {
	int version;      /**< LV_CAPTURE_OPTIONS_VERSION */
	int64_t flush_ms; /**< held records older than this are due (lv_capture_due); 0 = 1000 */
} lv_capture_options;

#define LV_CAPTURE_OPTIONS_VERSION 1
#define LV_CAPTURE_OPTIONS_INIT { .version = LV_CAPTURE_OPTIONS_VERSION }
/** The flush interval a flush_ms of 0 means. */
#define LV_CAPTURE_FLUSH_MS_DEFAULT 1000

/** Sets o->version to `version` (pass LV_CAPTURE_OPTIONS_VERSION) and every field to 0 (the
 *  defaults).  Errors: LV_EINVALID (NULL o, an unknown version: nothing written). */
LV_EXTERN int lv_capture_options_init(lv_capture_options *o, int version);

/** Counters of a capture since it was opened: the caller's struct, initialised with
 *  lv_capture_stats_init; written by lv_capture_poll() and lv_capture_get_stats(). */
typedef struct lv_capture_stats {
	int version;             /**< LV_CAPTURE_STATS_VERSION */
	uint64_t captured;       /**< manifests read and held (or flushed) */
	uint64_t missed;         /**< versions whose manifest was gone before it could be read */
	uint64_t requests;       /**< storage requests of the dataset's handle during this capture's
				      open, polls and flushes (another thread's on the same handle too) */
	uint64_t errors;         /**< polls and flushes that failed */
	uint64_t flushes;        /**< flushes that wrote (or found) a checkpoint */
	uint64_t newest_version; /**< the position: the newest version known */
	int64_t last_lag_ms;     /**< read time - commit time of the newest manifest read (0: none yet) */
	uint64_t held;           /**< records read and not yet flushed */
	uint64_t polls;          /**< polls made (failed ones too) */
	uint64_t flushed_version;/**< newest version the last successful flush made durable (0: none) */
} lv_capture_stats;

#define LV_CAPTURE_STATS_VERSION 1
#define LV_CAPTURE_STATS_INIT { .version = LV_CAPTURE_STATS_VERSION }

/** Zeroes s and sets s->version to `version` (pass LV_CAPTURE_STATS_VERSION).
 *  Errors: LV_EINVALID (NULL s, an unknown version: nothing written). */
LV_EXTERN int lv_capture_stats_init(lv_capture_stats *s, int version);

/**
 * Opens a capture of `ds` (borrowed: it must outlive the capture, and is used by the
 * capture's thread only while a capture call runs).  Reads the name of the newest
 * checkpoint (one listing of `_checkpoints/`): the starting position.  `o` may be NULL
 * (defaults).  *out is the caller's: lv_capture_free(); NULL on error.
 * Errors: LV_EINVALID (NULL out or ds, o of an unknown version, a negative flush_ms),
 * LV_ENOMEM, storage errors.
 */
LV_EXTERN int lv_capture_open(lv_capture **out, lv_dataset *ds, const lv_capture_options *o,
			      lv_error *err) LV_WARN_UNUSED;

/**
 * Lists only what is newer than the newest manifest known (V2 names sort newest first),
 * reads each new manifest at once and holds its record in memory; a manifest that
 * vanished before it was read becomes a gap with that reason (a miss), and so does a
 * version missing between two listed ones or between the position and the oldest new
 * one.  `stats` (may be NULL; initialised) receives the counters after the poll, also
 * when it fails.  A failed poll takes nothing: the position stays, the next poll lists
 * and reads again.  A capture that starts at version 0 (no checkpoint) reads and holds
 * every live manifest at its first poll; versions below the oldest live one are not
 * noted (history reports them as ever).
 * Errors: LV_EINVALID (NULL c, stats of an unknown version), LV_ECORRUPT / LV_EUNSUPPORTED /
 * LV_ELIMIT (a manifest that cannot be parsed: nothing beyond it is taken), LV_ENOMEM,
 * storage errors.
 */
LV_EXTERN int lv_capture_poll(lv_capture *c, lv_capture_stats *stats, lv_error *err) LV_WARN_UNUSED;

/**
 * Makes every held record durable as an ordinary checkpoint (O(new) work, archive as
 * today, create-if-absent, idempotent, safe with a second capture of the same table),
 * read back and verified, and notes the pending gaps in `_checkpoints/gaps/`; a no-op
 * when nothing is held.  On success the records are dropped; on failure they are kept
 * (and are due again one interval later).  A held record of a version that a full
 * segment of the archive already covers is taken as held by it (another writer sealed
 * it); in a segment that lacks versions the head keeps it.  A dataset whose config
 * disables checkpoints (lance.version_checkpoint.enabled false) gets nothing written:
 * the records are dropped and `flushes` does not count it.  The position does not move:
 * versions the flush recorded beyond it are read again by the next poll.
 * Errors: LV_EINVALID (NULL c), the errors of lv_checkpoint_write (lancever/checkpoint.h),
 * LV_ENOMEM, storage errors.
 */
LV_EXTERN int lv_capture_flush(lv_capture *c, lv_error *err) LV_WARN_UNUSED;

/**
 * True when held records or gaps are older than flush_ms: the oldest was read at
 * lv_capture_clock_ms() time t with now_ms - t >= flush_ms.  False for NULL c.  Errors: none.
 */
LV_EXTERN bool lv_capture_due(const lv_capture *c, int64_t now_ms);

/** The clock lv_capture_due() compares with: monotonic milliseconds (CLOCK_MONOTONIC).
 *  Errors: none. */
LV_EXTERN int64_t lv_capture_clock_ms(void);

/** The counters now, into the caller's initialised `s` (its version kept).
 *  Errors: LV_EINVALID (NULL c or s, s of an unknown version: nothing written). */
LV_EXTERN int lv_capture_get_stats(const lv_capture *c, lv_capture_stats *s);

/** Frees the capture.  Does NOT flush: held records are dropped (a new capture reads their
 *  manifests again if they are live).  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_capture_free(lv_capture *c);

/** Reasons a gap note gives (`_checkpoints/gaps/<first>-<last>.<reason>`). */
#define LV_CAPTURE_GAP_VANISHED "removed-before-read" /**< listed, gone when read */
#define LV_CAPTURE_GAP_UNSEEN "removed-unseen"        /**< committed and removed between polls */

/**
 * Why a capture missed some of versions first..last, from its gap notes
 * (`_checkpoints/gaps/`, read as the history reads them for its gap warnings): *reason is
 * LV_CAPTURE_GAP_VANISHED, LV_CAPTURE_GAP_UNSEEN or "other" (a reason this library does not
 * know), and *text words for it ("manifest removed before it could be read"); both static,
 * both NULL when no note covers any of those versions (no note is not an error).  Either
 * pointer may be NULL.  Costs at most one listing of `_checkpoints/gaps/` (a missing folder
 * lists as none); nothing is read.  The handle keeps the listing its last history call made
 * (or this call's) until the next history or versions call on it starts, so asking for every
 * gap of a history lists the folder once.  Errors: LV_EINVALID (NULL ds, first == 0 or first > last),
 * LV_ENOMEM, storage errors of the listing.
 */
LV_EXTERN int lv_capture_gap_reason(lv_dataset *ds, uint64_t first, uint64_t last, const char **reason,
				    const char **text, lv_error *err) LV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
