/*
 * The multi-table watcher's insides (lancever/watch.h), shared by watch.c (options, open,
 * free, stop, events), watch_discover.c (finding tables under the targets), watch_run.c
 * (the scheduler, the workers, one table's poll and flush) and watch_stats.c (snapshots).
 *
 * Invariants: tables are only appended to w->tables (never removed or moved: a table that
 * vanished is closed and kept as `lost`, so snapshot rows and notification ids stay
 * valid); w->mu guards the table array's growth, every table's `st`, `busy`, `kicked`,
 * `next_ms`, and the work queue; a table's capture and dataset are used by one thread at a
 * time, the one that set `busy`; events are delivered under w->evmu, one at a time.
 * Times named *_ms without "wall" are lv_capture_clock_ms() (monotonic).
 */
#ifndef LV_CORE_WATCH_INT_H
#define LV_CORE_WATCH_INT_H

#include "lancever/capture.h"
#include "lancever/watch.h"
#include "storage/notify.h"

#include <pthread.h>

#define LV__WATCH_MAX_THREADS 64
/* The longest the run thread waits before it looks at the stop flag and the tables again. */
#define LV__WATCH_TICK_MS 100
/* A notified table is polled this long after the notification: at once, since a version can
 * live for milliseconds (LanceDB 0.31's optimize removes its compaction's first version right
 * after writing it).  A manifest caught half-written fails that poll, which takes nothing,
 * and the next poll reads it whole. */
#define LV__WATCH_NOTIFY_DELAY_MS 0
/* After something appeared in a target's own directory (a new table, perhaps still empty),
 * the target is listed every LV__WATCH_NEWDIR_EVERY_MS for LV__WATCH_NEWDIR_FOR_MS. */
#define LV__WATCH_NEWDIR_EVERY_MS 200
#define LV__WATCH_NEWDIR_FOR_MS 3000

typedef struct wtarget {
	char *uri;       /* as given */
	lv_storage *st;  /* the target's store, opened once */
	bool notify;     /* its backend can notify (and options allow it) */
	int64_t root_wd; /* a notification on the target's own directory (new tables), or -1 */
} wtarget;

typedef struct wtable {
	char *name;         /* relative to the target ("" = the target; "t/tree/b" = a branch) */
	char *branch;       /* NULL for main, else points into name after "/tree/" */
	size_t name_root;   /* length of the table root within name (before "/tree/") */
	uint32_t target;    /* index into w->targets */
	lv_storage *sub;    /* the table root's sub-handle (NULL: the target itself) */
	lv_dataset *ds;
	lv_capture *cap;    /* NULL while closed (lost, or its open failed) */
	int64_t wd;         /* notification id, -1 when polled only */
	int64_t interval_ms, next_ms;
	bool busy, kicked, lost, seen, open_failed;
	bool backlog;       /* found by the first discovery: its first poll's lag is not observed */
	bool notify_tried;  /* a notification was asked for (not in a --once pass) */
	lv_watch_table_stats st; /* st.table/target/branch point into name / the target's uri */
	lv_capture_stats prev; /* the capture's counters when they were last added to st */
	bool want_poll;       /* the queued job polls (else it only flushes) */
	struct wtable *qnext; /* the work queue */
} wtable;

struct lv_watcher {
	lv_watch_options o;
	wtarget *targets;
	size_t ntargets;
	wtable **tables;
	size_t ntables, cap_tables;
	lv__notify *notify;   /* NULL: every table is polled */
	pthread_mutex_t mu;
	pthread_cond_t work;  /* a job was queued, or quit */
	pthread_cond_t idle;  /* a job finished */
	wtable *qhead, *qtail;
	size_t running;       /* jobs taken and not finished */
	bool quit;            /* workers end */
	pthread_mutex_t evmu; /* one event at a time */
	int stop;             /* lv_watch_stop: atomic */
	int in_run;           /* a run is in progress: atomic */
	int64_t rediscover_until; /* (mu) a new directory in a target: discover often until then */
	uint64_t discover_errors;
	uint64_t discoveries; /* completed discoveries (the run thread's) */
	bool once;            /* in lv_watch_run_once: no notification is asked for */
};

/* watch.c: an event to o.on_event (fields: n key/value pairs; numbers as is_number). */
void lv__watch_event(lv_watcher *w, int kind, int level, const char *table,
		     const lv_watch_field *f, size_t n, const char *fmt, ...) LV_PRINTF(7, 8);
/* watch.c: the bucket of a lag in ms. */
size_t lv__watch_lag_bucket(int64_t lag_ms);

/* watch_event.c: a polled table's next interval: halved after a poll that found something
 * (`changed`), doubled after one that did not, within [min_ms, max_ms]. */
int64_t lv__watch_next_interval(int64_t cur, int64_t min_ms, int64_t max_ms, bool changed);

/* watch_discover.c: lists every target and opens new tables (and branches), marks vanished
 * ones lost.  0, or the first listing error (also an event); opening errors are events. */
int lv__watch_discover(lv_watcher *w, lv_error *err);
/* watch_discover.c: watches the table's `_versions/` when its store can notify (not in a
 * one-pass run); otherwise (or when the watch cannot be added: limits, a network filesystem)
 * the table is polled, said in an event.  0, or LV_ENOMEM (never a fallback). */
int lv__watch_table_notify(lv_watcher *w, wtable *t, lv_error *err);
/* watch_discover.c: closes a table's capture, dataset and handle (no flush). */
void lv__watch_table_close(lv_watcher *w, wtable *t);

/* watch_run.c: one table's work: a poll when `poll`, then a flush when due or `force`.
 * Returns the first error (also an event). */
int lv__watch_table_work(lv_watcher *w, wtable *t, bool poll, bool force_flush, lv_error *err);

#endif
