/*
 * util/progress.h - a caller's lv_progress_cb, called at a bounded rate.
 *
 * Invariants (the contract in lancever/common.h): the callback is called only from the
 * thread that owns the lv__progress (the operation's calling thread); within a phase at
 * most once per LV__PROGRESS_MS, except that a phase's first call and the call with
 * done == total always go through; `done` is never passed lower than the phase's last
 * call (a caller's count that goes back is clamped, so done/total only grows).
 */
#ifndef LV_UTIL_PROGRESS_H
#define LV_UTIL_PROGRESS_H

#include <stdint.h>

#include "lancever/common.h"

#define LV__PROGRESS_MS 100

typedef struct lv__progress {
	lv_progress_cb cb;   /* NULL: every call is a no-op */
	void *payload;
	const char *phase;   /* the phase of the last call (static text) */
	uint64_t done, total;
	uint64_t last_ns;
} lv__progress;

/* Reports `done` of `total` in `phase` (static text) when the rule above lets it through. */
void lv__progress_report(lv__progress *p, const char *phase, uint64_t done, uint64_t total);

#endif
