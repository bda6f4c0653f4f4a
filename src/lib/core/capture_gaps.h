/*
 * Gap notes (issue 28): why versions have no record, written by a capture
 * (core/capture.c) and read by history when it reports a gap (core/history.c).
 *
 * A note is the object `_checkpoints/gaps/{first:020}-{last:020}.{reason}`
 * (docs/format.md): the name says everything a reader needs, so finding the
 * reason of a gap costs one listing and no read; the body is a few lines of
 * text for people.  Notes are created once (create-if-absent), never
 * rewritten or deleted by lancever; the checkpoint files' format is unchanged
 * (readers that do not know notes see an ordinary gap).
 */
#ifndef LV_CORE_CAPTURE_GAPS_H
#define LV_CORE_CAPTURE_GAPS_H

#include "lancever/capture.h"

#define LV__CAPGAP_DIR "_checkpoints/gaps"

typedef struct lv__capgap {
	uint64_t first, last;
	const char *reason; /* LV_CAPTURE_GAP_* (static), or "other" for a reason this build does not know */
} lv__capgap;

typedef struct lv__capgaps {
	lv__capgap *v; /* sorted by first */
	size_t n, cap;
	size_t nstray; /* names in the folder that are not notes (ignored) */
} lv__capgaps;

/* Notes versions first..last as missed for `reason` (an LV_CAPTURE_GAP_*), at noted_ms.  0 also
 * when the note exists already (another capture wrote it).  Errors: LV_EINVALID (first > last,
 * 0), LV_ENOMEM, storage errors. */
int lv__capgap_put(lv_storage *st, uint64_t first, uint64_t last, const char *reason, int64_t noted_ms,
		   lv_error *err);
/* Lists the notes of st (a missing folder lists as none).  Free with lv__capgaps_dispose. */
int lv__capgap_list(lv_storage *st, lv__capgaps *out, lv_error *err);
void lv__capgaps_dispose(lv__capgaps *g);
/* The first note overlapping [first, last], or NULL. */
const lv__capgap *lv__capgap_find(const lv__capgaps *g, uint64_t first, uint64_t last);
/* Words for a reason ("manifest removed before it could be read"). */
const char *lv__capgap_text(const char *reason);

#endif
