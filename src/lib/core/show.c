/*
 * lv_show (lancever/show.h): one version, live or recorded.  The live manifest answers
 * when there is one (every manifest detail); else the history's row, handed out as a
 * one-entry view of the history list (lv__vlist_slice), so nothing is copied.
 *
 * Invariants: *out is set only on success; the source says which record answered;
 * a failure of the manifest read other than LV_ENOTFOUND is the answer (never hidden
 * by the fallback).
 */
#include "lancever/show.h"

#include <inttypes.h>

#include "lancever/checkpoint.h"
#include "core/vlist.h"
#include "util/util.h"

int lv_show(lv_version_list **out, lv_dataset *ds, uint64_t version, int *source, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_show: NULL argument");
	*out = NULL;
	lv_version_list *l = NULL;
	int rc = lv_version_get(&l, ds, version, err);
	int from = LV_SHOW_MANIFEST;
	if (rc == LV_ENOTFOUND) {
		from = LV_SHOW_HISTORY;
		LV_TRY(lv_history(&l, ds, NULL, err));
		const lv_version_info *v = lv__vlist_find(l, version);
		lv_version_list *one = v ? lv__vlist_slice(l, (size_t)(v - l->items)) : NULL;
		if (!one) {
			lv_version_list_free(l);
			return v ? lv__err(err, LV_ENOMEM, "out of memory")
				 : lv__err(err, LV_ENOTFOUND,
					   "version %" PRIu64 " is neither live nor recorded in a checkpoint",
					   version);
		}
		l = one;
	} else if (rc < 0) {
		return rc;
	}
	*out = l;
	if (source)
		*source = from;
	return 0;
}
