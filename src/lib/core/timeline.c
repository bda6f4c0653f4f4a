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
	lv_timeline *t = lv__calloc(1, sizeof *t);
	if (!t || !(t->sufmin = lv__calloc(list->n, sizeof *t->sufmin))) {
		lv__free(t);
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
	lv__free(t->sufmin);
	lv__free(t);
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
