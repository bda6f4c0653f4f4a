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
};

/* Another holder of ds (a history cursor): lv_dataset_free by the last holder frees it. */
void lv__dataset_hold(lv_dataset *ds);

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
