/*
 * Warnings collected by a call and committed to its dataset (see
 * lv_dataset_warning() in lancever/dataset.h).
 */
#ifndef LV_CORE_WARNINGS_H
#define LV_CORE_WARNINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/dataset.h"

/*
 * A list of warnings.  A call collects into its own log per attempt and
 * commits the final attempt's to the dataset (lv__warn_commit), so a race
 * that a retry resolved leaves no warning behind.
 */
typedef struct lv__warnlog {
	lv_warning *v;
	size_t n, cap;
	bool lost; /* a warning could not be recorded (out of memory); kept across commits */
} lv__warnlog;

/* Adds a warning (message formatted; path copied, may be NULL).  Out of memory drops it and
 * sets wl->lost: lv__warn_commit_all then fails the call. */
void lv__warn(lv__warnlog *wl, int kind, const char *path, uint64_t first, uint64_t last,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Moves wl's warnings onto ds (folding duplicates); wl is left empty.  Returns how many were new. */
size_t lv__warn_commit(lv_dataset *ds, lv__warnlog *wl);
/* lv__warn_commit, for a call about to answer: LV_ENOMEM (err set) if a warning of wl was lost
 * (an answer must not look complete when it is not), else 0; *added (may be NULL) = new ones. */
int lv__warn_commit_all(lv_dataset *ds, lv__warnlog *wl, uint64_t *added, lv_error *err);
void lv__warnlog_dispose(lv__warnlog *wl);
/* One warning per tag or branch file a lenient refs load skipped. */
void lv__warn_refs(lv__warnlog *wl, const lv_refs *refs);
/* "version 7" or "versions 3-9". */
void lv__format_range(char *buf, size_t cap, uint64_t first, uint64_t last);

#endif
