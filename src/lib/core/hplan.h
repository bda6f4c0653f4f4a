/*
 * The plan of a history answer: the listings, the newest usable head, its
 * archive index, and the live manifests no record holds -- everything a
 * history, as-of or check call needs before it reads any segment.
 */
#ifndef LV_CORE_HPLAN_H
#define LV_CORE_HPLAN_H

#include "core/checkpoint/archive.h"
#include "core/checkpoint/store.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/refs.h"
#include "core/warnings.h"

/* A tail of live manifests larger than this is read while streaming, a chunk at a time. */
#define LV__TAIL_UPFRONT 8192
#define LV__TAIL_CHUNK 4096

/*
 * The first round of a versions() or history call: the listings that do not depend on each
 * other (_versions/, _checkpoints/, the refs' directories, the archive), at once on an object
 * store.  The refs' files are read in the second round, beside the checkpoint
 * (lv__round1_refs_read).  versions() hands its round to the history stream when the
 * archive answers (lv__history_live_list_from), so nothing is listed twice.
 */
enum { LV__R1_LIVE, LV__R1_NAMES, LV__R1_REFS, LV__R1_SEGS };
typedef struct lv__round1 {
	lv_dataset *ds;
	lv_storage_stats s0;       /* the caller's, before the round (a seeded plan counts from it) */
	lv__manifest_entry *live;  /* sorted */
	size_t nlive;
	lv__cp_names names;
	lv__seg_names segs;        /* when segs_listed */
	bool segs_listed;
	bool cp_unstamped;         /* names listed without sizes and times (lv__round1_run) */
	lv__refs_listing *listed;  /* the refs' directories (NULL: not listed, or failed) */
	lv_refs *refs;             /* once read (NULL: not yet, or unreadable: err[LV__R1_REFS]) */
	int rc[4];                 /* by LV__R1_* */
	lv_error err[4];
} lv__round1;
/* Runs the round (the refs with `refs`; the archive with `segs`, which needs `refs`): the
 * outcome of each listing is in rc[]/err[].  `stamped_cp`: the checkpoints' sizes and times
 * are taken from their reads (storage/stamped.h), not by the listing; only where reads are
 * stamped (else listed as before), and then names.v[i].mtime_ms is 0 (cp_unstamped). */
void lv__round1_run(lv__round1 *r, lv_dataset *ds, bool refs, bool segs, bool stamped_cp);
/* Reads the listed refs' files (lenient): r->refs, or rc/err[LV__R1_REFS]; a no-op if not
 * listed or read already. */
void lv__round1_refs_read(lv__round1 *r);
void lv__round1_dispose(lv__round1 *r);

typedef struct lv__hplan {
	lv_dataset *ds;
	lv__manifest_entry *live;
	size_t nlive;
	lv__cp_names names;
	lv__seg_names segs;    /* listed segments, sorted */
	lv_refs *refs;         /* NULL: unreadable (refs_err says why) */
	lv_error refs_err;
	lv__cp_file head;      /* the newest usable head (rows NULL: none) */
	lv__arc_index ix;      /* its archive index (empty without one) */
	bool have_created;     /* dataset_created of this history is known */
	int64_t created;
	uint64_t through;      /* versions <= this are the archive's (the index's, else the segments') */
	/* live versions that no head row holds and that lie beyond the archive: */
	const lv__manifest_entry **tail; /* sorted by version */
	size_t ntail;
	lv_version_list *tail_rows;     /* read already (ntail <= LV__TAIL_UPFRONT), else NULL */
	lv__seg_entry *missing;         /* index entries whose segment is not there */
	size_t nmissing;
	lv_history_report rep;
	lv__warnlog wl;
	uint64_t max_rejected;
	int races;
} lv__hplan;

/*
 * Loads the plan, retrying after races with concurrent writers (as history
 * always did): `rep` is begun by the caller.  On success the plan's warnings
 * are in p->wl (committed by the caller once the answer is complete).
 */
int lv__hplan_load(lv_dataset *ds, lv__hplan *p, lv_error *err);
/* Starts a history read: *p zeroed, its report begun (request counters from *s0, which
 * lv__report_end takes), the plan loaded (lv__hplan_load). */
int lv__hplan_start(lv_dataset *ds, lv__hplan *p, lv_storage_stats *s0, lv_error *err);
/* The same from a first round already made (`seed`, may be NULL: taken over and disposed;
 * only the archive is listed if it was not): its first attempt lists nothing again, and a
 * started plan counts requests from the seed's s0. */
int lv__hplan_load_from(lv_dataset *ds, lv__hplan *p, lv__round1 *seed, lv_error *err);
int lv__hplan_start_from(lv_dataset *ds, lv__hplan *p, lv_storage_stats *s0, lv__round1 *seed,
			 lv_error *err);
void lv__hplan_dispose(lv__hplan *p);

/* Is version v live (its manifest listed)?  If so, path (LV__MPATH bytes, may be NULL)
 * receives its manifest's path. */
bool lv__hplan_live(const lv__hplan *p, uint64_t v, char *path);
/* Reads the tail's manifests [from, from + n) into l (room for n items and n arenas). */
int lv__hplan_read_tail(lv__hplan *p, size_t from, size_t n, lv_version_list *l, lv_error *err);

/*
 * Reads one segment for the plan: validated (lv__seg_read with the history's
 * dataset_created), not beyond the latest version, and agreeing with the
 * head's copies of its live rows.  A rejected segment is a warning; its
 * range is the caller's to report.  Returns 0 (usable), LV_ENOMEM, or
 * another error (rejected: f empty).
 */
/* history.c: the live rows of the history stream (lv_history_each), collected: what
 * versions() answers when most live versions are in the archive (versions.c). */
int lv__history_live_list(lv_version_list **out, lv_dataset *ds, lv_history_report *report,
			  lv_error *err);
/* The same from versions()'s first round (`seed`, taken over). */
int lv__history_live_list_from(lv_version_list **out, lv_dataset *ds, lv__round1 *seed,
			       lv_history_report *report, lv_error *err);
int lv__hplan_read_segment(lv__hplan *p, const lv__seg_name *name, lv__cp_file *f, lv__warnlog *wl,
			   lv_error *err);
/* The same in two steps: the read (safe on worker threads), then the checks and warning (not). */
int lv__hplan_segment_fetch(const lv__hplan *p, const lv__seg_name *name, lv__cp_file *f, lv_error *e);
int lv__hplan_segment_accept(lv__hplan *p, const lv__seg_name *name, int rc, lv__cp_file *f,
			     lv_error *e, lv__warnlog *wl);

#endif
