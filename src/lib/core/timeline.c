/*
 * Time travel: the newest version committed at (or before) a time, exact
 * under clock skew: a suffix minimum of timestamps plus a binary search.
 */
#include "lancever/checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataset.h"
#include "core/vlist.h"
#include "core/warnings.h"
#include "util/util.h"
/* ---- time travel ---- */

struct lv_timeline {
	const lv_version_list *list;
	lv_version_list *owned;
	int64_t *sufmin; /* sufmin[i] = min(ts[i..n-1]); non-decreasing in i */
	size_t n;
};

int lv_timeline_from_list(lv_timeline **out, const lv_version_list *list, lv_error *err)
{
	if (!out || !list)
		return lv__err(err, LV_EINVALID, "lv_timeline_from_list: NULL argument");
	lv_timeline *t = calloc(1, sizeof *t);
	if (!t || !(t->sufmin = lv__calloc(list->n, sizeof *t->sufmin))) {
		free(t);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	t->list = list;
	t->n = list->n;
	for (size_t i = list->n; i-- > 0;) {
		int64_t ts = list->items[i].timestamp_millis;
		t->sufmin[i] = i + 1 < list->n && t->sufmin[i + 1] < ts ? t->sufmin[i + 1] : ts;
	}
	*out = t;
	return 0;
}

int lv_timeline_load(lv_timeline **out, lv_dataset *ds, lv_history_report *report, lv_error *err)
{
	lv_version_list *l = NULL;
	LV_TRY(lv_history(&l, ds, report, err));
	int rc = lv_timeline_from_list(out, l, err);
	if (rc < 0) {
		lv_version_list_free(l);
		return rc;
	}
	(*out)->owned = l;
	return 0;
}

void lv_timeline_free(lv_timeline *t)
{
	if (!t)
		return;
	lv_version_list_free(t->owned);
	free(t->sufmin);
	free(t);
}

const lv_version_info *lv_timeline_as_of(const lv_timeline *t, int64_t ts, bool strict)
{
	if (!t || t->n == 0)
		return NULL;
	/*
	 * The answer is the largest i with ts[i] <= T (or < T).  sufmin is
	 * non-decreasing, and sufmin[i] <= T iff some j >= i qualifies, so the
	 * largest i with sufmin[i] <= T is exactly the answer: binary search.
	 */
	size_t lo = 0, hi = t->n; /* find first i with !(sufmin[i] qualifies) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool q = strict ? t->sufmin[mid] < ts : t->sufmin[mid] <= ts;
		if (q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &t->list->items[lo - 1];
}

int lv_version_as_of(lv_version_list **out, lv_dataset *ds, int64_t ts_ms, bool strict,
		     lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_version_as_of: NULL argument");
	*out = NULL;
	lv_timeline *t = NULL;
	LV_TRY(lv_timeline_load(&t, ds, report, err));
	const lv_version_info *v = lv_timeline_as_of(t, ts_ms, strict);
	/*
	 * A version with no record could have been committed in time for T: the
	 * answer is certain only if every unrecorded version is older than it.
	 */
	const lv_version_list *h = t->owned;
	if (h->ngaps && (!v || h->gaps[h->ngaps - 1][1] > v->version)) {
		lv__warnlog wl = { 0 };
		uint64_t first = h->gaps[0][0], last = h->gaps[h->ngaps - 1][1];
		for (size_t g = 0; v && g < h->ngaps && h->gaps[g][1] < v->version; g++)
			first = h->gaps[g + 1][0];
		char range[64];
		lv__format_range(range, sizeof range, first, last);
		lv__warn(&wl, LV_WARN_ANSWER_UNCERTAIN, NULL, first, last,
			 "as-of answer may be wrong: %s have no record, and any of them may have been "
			 "committed %s %" PRId64 " ms", range, strict ? "before" : "at or before", ts_ms);
		size_t added = lv__warn_commit(ds, &wl);
		if (report)
			report->warnings += added;
	}
	if (!v) {
		bool gaps = h->ngaps > 0;
		lv_timeline_free(t);
		return lv__err(err, LV_ENOTFOUND, "no version committed %s %" PRId64 " ms%s",
			       strict ? "before" : "at or before", ts_ms,
			       gaps ? " among the recorded versions (some versions have no record)" : "");
	}
	/* Hand back a one-item list sharing the history's arenas. */
	lv_version_list *l = t->owned;
	size_t idx = (size_t)(v - l->items);
	l->items[0] = l->items[idx];
	l->n = 1;
	t->owned = NULL;
	lv_timeline_free(t);
	*out = l;
	return 0;
}
