/*
 * The _checkpoints/ directory: checkpoint names, damaged files kept aside,
 * the merge lock, pruning.
 */
#ifndef LV_CORE_CHECKPOINT_STORE_H
#define LV_CORE_CHECKPOINT_STORE_H

#include "core/checkpoint/codec.h"

/*
 * A checkpoint file that could not be read as one is never deleted or
 * replaced: a writer moves it aside to "<name>.lance" LV__CP_DAMAGED_SUFFIX
 * "<crc32c of its bytes, 8 hex>", a name no reader takes for a checkpoint and
 * no prune removes, so the rows it may hold stay recoverable.
 */
#define LV__CP_DAMAGED_SUFFIX ".damaged-"

typedef struct lv__cp_name {
	uint64_t version;
	uint64_t size;
	int64_t mtime_ms; /* from the listing (0 if it did not say) */
	char path[96];
} lv__cp_name;

typedef struct lv__cp_names {
	lv__cp_name *v;        /* checkpoints, newest first */
	size_t n, cap;
	int rc;
	lv__cp_name *damaged;  /* files kept aside, newest first */
	size_t ndamaged, capdamaged;
	size_t nother;         /* other lancever files ("{version:020}.lance<suffix>": locks, temporaries) */
} lv__cp_names;

int lv__cp_list(lv_storage *st, lv__cp_names *out, lv_error *err);
/* The same without sizes and times (size and mtime_ms 0: no stat per file on local disk). */
int lv__cp_list_names(lv_storage *st, lv__cp_names *out, lv_error *err);
void lv__cp_names_free(lv__cp_names *c);

/*
 * Moves a damaged checkpoint aside: its exact bytes (as read) are copied to
 * "<path>" LV__CP_DAMAGED_SUFFIX "<crc32c>" (created once, checked by reading it
 * back), then the original is deleted if it still holds those bytes.  `aside`
 * receives the new name.
 */
int lv__cp_quarantine(lv_storage *st, const lv__cp_name *name, const lv_buf *bytes, char *aside,
		      size_t cap, lv_error *err);

/* The merge lock "<checkpoint>.lock": taken with create-if-absent, broken when stale. */
#define LV__CP_LOCK_SUFFIX ".lock"
int lv__cp_lock_take(lv_storage *st, const char *path, lv_error *err);
/* Removes lock objects that killed writers left in _checkpoints/ (best effort). */
void lv__cp_sweep_stale_locks(lv_storage *st);

#endif
