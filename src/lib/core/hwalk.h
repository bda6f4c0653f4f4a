/*
 * The history walk (hwalk.c): lv_history_each's stream as a resumable machine
 * over a plan (hplan.h).  lv_history_each runs its steps to the end; the
 * pull-style cursor (lv_history_cursor, history.c) runs them while its buffer is
 * not full, and the Arrow export's gap scan runs a second, quiet walk over the
 * same plan first.
 */
#ifndef LV_CORE_HWALK_H
#define LV_CORE_HWALK_H

#include "core/hplan.h"

/* A gap scan already warned: no gap warnings or unrecorded count, segment warnings dropped. */
#define LV__HWALK_QUIET 1u
/* Versions only: the tail's and the live manifests are not read (such rows carry only their
 * version, and is_cleaned_up / is_tagged). */
#define LV__HWALK_VERSIONS 2u

typedef struct lv__hwalk lv__hwalk;

/* A walk over `p` (which must outlive it) handing rows to on_row and gaps to on_gap (may be
 * NULL).  `full` (may be NULL = never): while it is true, a step past the archive hands out
 * nothing more (a step over an archive range always hands out that whole range).  *out is
 * set even on failure (free it with lv__hwalk_free). */
int lv__hwalk_new(lv__hwalk **out, lv__hplan *p, const lv_history_options *o, unsigned flags,
		  lv_history_row_fn on_row, lv_history_gap_fn on_gap, void *payload, const bool *full,
		  lv_error *err);
/* One step: 1 = more to do, 0 = over (a callback's stop ends it too), < 0 an error. */
int lv__hwalk_step(lv__hwalk *w, lv_error *err);
/* After the last step: the callbacks' stop value (0 when none stopped the walk), or LV_ENOMEM
 * (the gap notes could not be listed). */
int lv__hwalk_end(lv__hwalk *w, lv_error *err);
void lv__hwalk_free(lv__hwalk *w);
/* The archive ranges the walk could not use (missing or rejected), as a new array (*out, the
 * caller's: lv__free); 0 or LV_ENOMEM. */
int lv__hwalk_failed(const lv__hwalk *w, uint64_t (**out)[2], size_t *n);
/* A quiet walk: the ranges its gap scan could not use (borrowed).  Any other range it cannot
 * use fails the walk (the scan promised its rows) instead of becoming a gap. */
void lv__hwalk_known_failed(lv__hwalk *w, const uint64_t (*known)[2], size_t n);

#endif
