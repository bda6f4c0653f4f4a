/*
 * lancever/show.h - one version, live or recorded (what `lancever show` and Python's
 * Dataset.show answer).  Implemented in src/lib/core/show.c.
 *
 * Ownership and the reading errors: lancever/dataset.h.
 */
#ifndef LANCEVER_SHOW_H
#define LANCEVER_SHOW_H

#include "dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where lv_show() found the version. */
enum lv_show_source {
	LV_SHOW_MANIFEST = 1, /**< a live manifest: the record has every manifest detail */
	LV_SHOW_HISTORY = 2   /**< no manifest (cleaned up): the row a checkpoint or archive
				   segment records (lv_history), without manifest details */
};

/**
 * Version `version` of the dataset's branch: read from its manifest when it is live
 * (lv_version_get), else the row the history records for it (lv_history).  *out is a
 * one-entry list, the caller's: lv_version_list_free(); NULL on error.  *source (may be
 * NULL) is set to an lv_show_source on success.
 * Errors: LV_EINVALID (NULL out or ds), LV_ENOTFOUND (neither live nor recorded; or not a
 * Lance dataset), the reading errors (lancever/dataset.h).
 */
LV_EXTERN int lv_show(lv_version_list **out, lv_dataset *ds, uint64_t version, int *source,
		      lv_error *err) LV_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
