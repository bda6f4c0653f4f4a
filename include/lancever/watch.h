/*
 * lancever/watch.h - the multi-table watcher: every new version of every dataset under
 * one or more targets, recorded within a bounded lag (`lancever watch`).
 *
 * A target is a dataset (a directory or prefix with `_versions/`) or a folder/prefix
 * holding datasets (a LanceDB database folder of `*.lance` tables, `s3://bucket/prefix/`,
 * `az://...`): every directory under it that has `_versions/` is a table, found again
 * every discover_ms, and so is each of its branches (`tree/<branch>/`).  Each table is
 * captured incrementally by an lv_capture (lancever/capture.h): polled on its own
 * adaptive interval (halved down to min_interval_ms when a poll finds something,
 * doubled up to max_interval_ms while it finds nothing) and, where the store can notify
 * (local disk: inotify on `_versions/`), polled as soon as a manifest appears; what is
 * read is flushed as ordinary checkpoints when older than flush_ms, and at stop.
 *
 * Threads: lv_watch_run() / lv_watch_run_once() run on the caller's thread plus at most
 * `threads` workers.  lv_watch_stop() may be called from any thread and from a signal
 * handler.  lv_watch_snapshot_take() may be called from any thread while the watcher runs:
 * it copies the statistics under a lock, so the snapshot is consistent and the caller
 * walks it without holding anything.  The event callback is called from the run thread
 * and the workers, one call at a time (the watcher serialises them).
 *
 * Errors and ownership follow lancever/common.h.
 */
#ifndef LANCEVER_WATCH_H
#define LANCEVER_WATCH_H

#include "dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lv_watcher lv_watcher;
typedef struct lv_watch_snapshot lv_watch_snapshot;

/** Levels of watch events (lv_watch_event.level). */
enum lv_watch_level {
	LV_WATCH_ERROR = 0, /**< an operation failed (it is retried on the next poll) */
	LV_WATCH_WARN = 1,  /**< something was lost or degraded: a missed version, polling fallback */
	LV_WATCH_INFO = 2   /**< progress: start, discovered, captured, flushed, stop */
};

/** What an event reports (lv_watch_event.kind); the name is lv_watch_event_name(kind). */
enum lv_watch_event_kind {
	LV_WATCH_EV_START = 1,    /**< run began ("start"); fields: targets, threads, shard */
	LV_WATCH_EV_DISCOVER = 2, /**< a table (or branch) was found ("discovered") */
	LV_WATCH_EV_CAPTURE = 3,  /**< a poll read new versions ("captured"); fields: count, newest, lag_ms */
	LV_WATCH_EV_MISS = 4,     /**< versions could not be read ("missed"); fields: count, reason */
	LV_WATCH_EV_FLUSH = 5,    /**< held records were made durable ("flush"); fields: tables, ms */
	LV_WATCH_EV_ERROR = 6,    /**< a poll, flush, open or listing failed ("error"); fields: code */
	LV_WATCH_EV_FALLBACK = 7, /**< notification unavailable for a table: polling ("fallback") */
	LV_WATCH_EV_STOP = 8,     /**< run ended ("stop"); fields: captured, missed */
	LV_WATCH_EV_LOST = 9,     /**< a table vanished from its target ("lost") */
	LV_WATCH_EV_WARNING = 10  /**< a warning of a table's poll or flush, e.g. a gap and its
				       reason ("warning"); fields: kind (enum lv_warning_kind),
				       first, last, path when the warning has them */
};

/** One key/value of an event (handed out: no version, fields only appended). */
typedef struct lv_watch_field {
	const char *key;   /**< static: "count", "reason", "lag_ms", ... */
	const char *value; /**< text (a number written in decimal when is_number) */
	bool is_number;    /**< the value is a decimal integer (JSON: unquoted) */
} lv_watch_field;

/** An event (handed out: no version, fields only appended); valid only during the call. */
typedef struct lv_watch_event {
	int kind;                     /**< enum lv_watch_event_kind */
	int level;                    /**< enum lv_watch_level */
	const char *table;            /**< the table's name (lv_watch_table_stats.table), or NULL */
	const char *message;          /**< one line of text, never a credential */
	const lv_watch_field *fields; /**< nfields entries */
	size_t nfields;
	int64_t time_ms;              /**< wall-clock time of the event */
} lv_watch_event;

/** Receives events, one at a time (see above); must not call back into the watcher
 *  except lv_watch_stop(). */
typedef void (*lv_watch_event_fn)(const lv_watch_event *ev, void *ctx);

/** The event kind's name ("start", "discovered", ...; "unknown" for others; static).
 *  Errors: none. */
LV_EXTERN const char *lv_watch_event_name(int kind);

/** How the watcher runs. */
typedef struct lv_watch_options {
	int version;             /**< LV_WATCH_OPTIONS_VERSION */
	int64_t flush_ms;        /**< records are made durable when older than this (0 = 1000) */
	int64_t min_interval_ms; /**< shortest poll interval of a table (0 = 100) */
	int64_t max_interval_ms; /**< longest (0 = 5000); also the safety poll of a notified table */
	int64_t discover_ms;     /**< how often targets are listed again for new tables (0 = 10000) */
	int threads;             /**< worker threads (0 = 4; at most 64) */
	uint32_t shard_index;    /**< this watcher's shard, < shard_count */
	uint32_t shard_count;    /**< 0 or 1 = every table; else only tables whose
				      lv_watch_shard_hash(name) % shard_count == shard_index */
	bool no_notify;          /**< true: never use store notifications, only poll */
	const lv_storage_options *storage; /**< NULL = none; borrowed for lv_watch_open */
	lv_watch_event_fn on_event;        /**< NULL = no events */
	void *event_ctx;
} lv_watch_options;

#define LV_WATCH_OPTIONS_VERSION 1
#define LV_WATCH_OPTIONS_INIT { .version = LV_WATCH_OPTIONS_VERSION }

/** Sets o->version to `version` (pass LV_WATCH_OPTIONS_VERSION) and every field to its
 *  default (0/NULL/false, as LV_WATCH_OPTIONS_INIT).  Errors: LV_EINVALID (NULL o, a
 *  version this library does not know: then nothing is written). */
LV_EXTERN int lv_watch_options_init(lv_watch_options *o, int version);

/**
 * The shard hash of a table name: FNV-1a 64 of its bytes (the name as
 * lv_watch_table_stats.table gives it: the table's path relative to its target, '/'
 * separated, "" for a target that is itself a dataset; a branch adds "/tree/<branch>").
 * Stable across releases and machines.  Errors: none (NULL hashes as "").
 */
LV_EXTERN uint64_t lv_watch_shard_hash(const char *name);

/**
 * Parses "I/N" (0 <= I < N, N >= 1) into *index and *count.  Errors: LV_EINVALID
 * (NULL argument, anything else).
 */
LV_EXTERN int lv_watch_parse_shard(const char *s, uint32_t *index, uint32_t *count,
				   lv_error *err) LV_WARN_UNUSED;

/**
 * Makes a watcher of `ntargets` targets (URIs as lv_dataset_open takes; each store is
 * opened once here, nothing is listed yet).  *out is the caller's: lv_watch_free();
 * NULL on error.  Errors: LV_EINVALID (NULL out or targets, ntargets 0, options of an
 * unknown version, a negative interval, min > max, shard_index >= shard_count, threads
 * < 0 or > 64), the errors of lv_storage_open for a target (LV_ENOTFOUND: a local path
 * that does not exist), LV_ENOMEM.
 */
LV_EXTERN int lv_watch_open(lv_watcher **out, const char *const *targets, size_t ntargets,
			    const lv_watch_options *opts, lv_error *err) LV_WARN_UNUSED;

/**
 * Runs until lv_watch_stop(): discovers, polls, flushes; on stop flushes everything held
 * and returns.  A failure of one table (a poll, a flush, a listing) is an event and is
 * retried; it does not end the run.  Returns 0 after a stop, or an error that prevents
 * running at all.  Errors: LV_EINVALID (NULL w, a run already in progress), LV_ENOMEM.
 */
LV_EXTERN int lv_watch_run(lv_watcher *w, lv_error *err) LV_WARN_UNUSED;

/**
 * One pass: discovers the tables, polls each once (waiting for no notification), flushes
 * everything held, returns.  Returns 0 when every table was polled and flushed (versions
 * may still have been missed: see the snapshot's total), or the first error of a table
 * (the other tables are still done; every error is also an event).  Errors: LV_EINVALID
 * (NULL w, a run in progress), LV_ENOMEM, a table's capture errors.
 */
LV_EXTERN int lv_watch_run_once(lv_watcher *w, lv_error *err) LV_WARN_UNUSED;

/**
 * Asks a running lv_watch_run() to flush and return (and a later one to return at
 * once).  Async-signal-safe: sets an atomic flag and wakes the run thread (it never
 * waits longer than 100 ms before it sees the flag).  Accepts NULL.  Errors: none.
 */
LV_EXTERN void lv_watch_stop(lv_watcher *w);

/** Frees the watcher (not while it runs).  Does NOT flush: a run flushes at its end.
 *  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_watch_free(lv_watcher *w);

/* ---- statistics ---- */

/** Upper bounds (ms, inclusive) of the lag histogram's buckets; the last bucket, index
 *  LV_WATCH_LAG_BUCKETS - 1, has no bound (+Inf).  Fixed: a change is a new name. */
#define LV_WATCH_LAG_BOUNDS_MS 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000
#define LV_WATCH_LAG_BUCKETS 13

/** The bound of bucket i in ms (i < LV_WATCH_LAG_BUCKETS - 1), or -1 for the last
 *  (+Inf) and beyond.  Errors: none. */
LV_EXTERN int64_t lv_watch_lag_bound(size_t i);

/**
 * One table's statistics, or the total (handed out by a snapshot: no version, fields
 * only appended).  Counters are cumulative since lv_watch_open.  The lag of a poll that
 * found versions is the read time minus the commit time of the newest manifest read;
 * each such poll adds one observation to the histogram, except the first poll of a table
 * found by the run's first discovery (its backlog: versions committed before the watcher
 * started, whose lag says nothing about the watcher).
 */
typedef struct lv_watch_table_stats {
	const char *table;   /**< name relative to its target ("" for the target itself; a
				  branch "<table>/tree/<branch>"); "" in the total */
	const char *target;  /**< the target as given ("" in the total) */
	const char *branch;  /**< the branch, or NULL for main (and in the total) */
	uint64_t captured;   /**< versions read and held or flushed */
	uint64_t missed;     /**< versions recorded as a gap (manifest gone before read) */
	uint64_t requests;   /**< storage requests made for this table */
	uint64_t errors;     /**< failed polls, flushes and opens */
	uint64_t flushes;    /**< flushes that wrote something */
	uint64_t polls;      /**< polls made */
	uint64_t newest_version; /**< newest version known (max over tables in the total) */
	int64_t last_lag_ms; /**< lag of the last poll that found versions (-1: none yet) */
	uint64_t lag_buckets[LV_WATCH_LAG_BUCKETS]; /**< observations per bucket (not cumulative) */
	uint64_t lag_count;  /**< observations (the sum of lag_buckets) */
	int64_t lag_sum_ms;  /**< their sum */
	int64_t interval_ms; /**< the current poll interval (0 in the total) */
	bool notified;       /**< the store notifies this table (inotify); false: polling only */
	uint64_t tables;     /**< 1 for a table; the number of tables in the total */
} lv_watch_table_stats;

/**
 * Copies the statistics of every table and their total under the watcher's lock.  May
 * be called from any thread at any time, also while lv_watch_run runs.  *out is the
 * caller's: lv_watch_snapshot_free().  Errors: LV_EINVALID (NULL out or w), LV_ENOMEM.
 */
LV_EXTERN int lv_watch_snapshot_take(lv_watch_snapshot **out, lv_watcher *w,
				     lv_error *err) LV_WARN_UNUSED;

/** Number of tables in the snapshot (in discovery order).  Errors: none (0 for NULL). */
LV_EXTERN size_t lv_watch_snapshot_count(const lv_watch_snapshot *s);

/** Table i (< count), borrowed from the snapshot; NULL out of range.  Errors: none. */
LV_EXTERN const lv_watch_table_stats *lv_watch_snapshot_table(const lv_watch_snapshot *s,
							      size_t i);

/** The total over every table (borrowed; NULL for a NULL snapshot).  Errors: none. */
LV_EXTERN const lv_watch_table_stats *lv_watch_snapshot_total(const lv_watch_snapshot *s);

/** Wall-clock time (ms) at which the snapshot was taken.  Errors: none (0 for NULL). */
LV_EXTERN int64_t lv_watch_snapshot_time(const lv_watch_snapshot *s);

/** Frees a snapshot.  Accepts NULL.  Errors: none. */
LV_EXTERN void lv_watch_snapshot_free(lv_watch_snapshot *s);

#ifdef __cplusplus
}
#endif
#endif
