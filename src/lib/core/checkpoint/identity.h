/* Does a checkpoint belong to the dataset's present history? */
#ifndef LV_CORE_CHECKPOINT_IDENTITY_H
#define LV_CORE_CHECKPOINT_IDENTITY_H

#include "core/checkpoint/codec.h"
#include "core/dataset.h"

/* The first, small probe of a manifest's head. */
#define LV__HEAD_PROBE_SMALL 4096

/* The small head of one manifest, read ahead of need (on object stores). */
typedef struct lv__head_pre {
	const char *path; /* NULL = nothing read ahead */
	int rc;
	lv_buf buf;
	lv_error err;
} lv__head_pre;

/*
 * 0 if `f` belongs to the present history; LV_ECONFLICT naming it if it does
 * not (another history: the dataset was recreated); another error if the
 * manifest needed could not be read.  *bytes counts what was read for it.
 */
int lv__cp_verify_identity(lv_dataset *ds, const lv__cp_file *f, const lv__manifest_entry *live,
			   size_t nlive, const lv__head_pre *pre, uint64_t *bytes, lv_error *err);
/* One row of checkpoint `cp_path` against the manifest of live version e: 0 if it agrees,
 * LV_ECONFLICT if not, LV_ENOTFOUND if the manifest vanished, another error if unreadable. */
int lv__cp_confirm_row(lv_dataset *ds, const lv__manifest_entry *e, const lv_version_info *row,
		       const lv__head_pre *pre, const char *cp_path, uint64_t *bytes, lv_error *err);

#endif
