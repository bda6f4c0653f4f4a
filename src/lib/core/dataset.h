/*
 * The dataset handle (internal view) and the report helpers every history
 * call uses.  Public API: lancever/dataset.h.
 */
#ifndef LV_CORE_DATASET_H
#define LV_CORE_DATASET_H

#include <pthread.h>

#include "core/warnings.h"
#include "lancever/dataset.h"

struct lv_dataset {
	lv_storage *st;        /* where _versions/ lives: the root, or tree/<branch> */
	lv_storage *root;      /* the root dataset (tags, branches); == st on main */
	lv_storage *owned_root; /* the store lv_dataset_open opened (NULL over a borrowed one) */
	lv_storage *owned_mid;  /* a "<root>/tree/<branch>" path's root, a sub-handle of it */
	lv_storage *owned_sub;  /* the branch's sub-handle */
	char *branch;          /* NULL = main */
	int threads;
	bool remote;           /* an object store: each request is a round trip */
	lv__warnlog warnings;  /* accumulated over calls; see lv_dataset_warning() */
	pthread_mutex_t warn_mu; /* guards `warnings` (calls on one handle may run in threads) */
	struct lv__vcache *vcache; /* the last versions() answer (vcache.c) */
	int holders;           /* atomic: holders beyond the caller (a history cursor, its stream) */
	/* The gap notes (capture_gaps.h) the last listing found, kept until the next history or
	 * versions call on the handle starts (lv__report_begin) or a capture writes a note. */
	pthread_mutex_t notes_mu;
	struct lv__capgap *notes;
	size_t nnotes;
	bool notes_valid;
};

/* Another holder of ds (a history cursor): lv_dataset_free by the last holder frees it. */
void lv__dataset_hold(lv_dataset *ds);

/* The gap-note cache (see struct lv_dataset).  keep: copies the notes of a listing (0 or
 * LV_ENOMEM: then nothing is cached).  find: true when the cache answers; *reason is then the
 * reason of the note overlapping first..last, or NULL for none.  forget: drops it. */
struct lv__capgaps;
int lv__ds_notes_keep(lv_dataset *ds, const struct lv__capgaps *g);
bool lv__ds_notes_find(lv_dataset *ds, uint64_t first, uint64_t last, const char **reason);
void lv__ds_notes_forget(lv_dataset *ds);
/* The reason of the gap note overlapping first..last (*reason NULL: none), from the cache, else
 * from one listing that is then kept.  0, LV_ENOMEM or the listing's error. */
int lv__ds_gap_reason(lv_dataset *ds, uint64_t first, uint64_t last, const char **reason, lv_error *err);

/* Starts / ends a report: zeroes it and counts the requests and bytes in between. */
/* A caller's report (may be NULL): 0 when its version is one this library writes, else
 * LV_EINVALID (util/abi.h).  Entry points check it before doing anything. */
int lv__report_check(const lv_history_report *r, lv_error *err);
/* Writes `src` into the caller's checked report `dst` (NULL: nothing), only the fields of
 * dst's version, which it keeps. */
void lv__report_put(lv_history_report *dst, const lv_history_report *src);
void lv__report_begin(lv_dataset *ds, lv_history_report *rep, lv_storage_stats *s0);
void lv__report_end(lv_dataset *ds, lv_history_report *rep, const lv_storage_stats *s0);

/* The one "not a Lance dataset" error: LV_ENOTFOUND naming the dataset, or, on a branch
 * that _refs/branches does not register, saying so. */
int lv__not_a_dataset(const lv_dataset *ds, lv_error *err);

#endif
