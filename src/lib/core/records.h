/* Version records from manifests, with is_tagged from the dataset's tags. */
#ifndef LV_CORE_RECORDS_H
#define LV_CORE_RECORDS_H

#include "core/manifests.h"
#include "lancever/dataset.h"

/* Marks is_tagged from the branch's tags (items sorted by version); tag problems never fail
 * (they are warnings), but running out of memory does: LV_ENOMEM (err set), else 0. */
int lv__mark_tags(lv_dataset *ds, lv_version_info *items, size_t n, lv_history_report *rep,
		  lv_error *err);
/* The same with refs already loaded (NULL = they could not be: load_err says why; LV_ENOMEM
 * when that was a lack of memory, never a warning). */
int lv__mark_tags_with(lv_dataset *ds, const lv_refs *refs, const lv_error *load_err,
		       lv_version_info *items, size_t n, lv_history_report *rep, lv_error *err);
/* Every listed manifest read into a new list.  `refs` may be NULL: they are then loaded here. */
int lv__versions_from_manifests(lv_version_list **out, lv_dataset *ds,
				const lv__manifest_entry *entries, size_t n, const lv_refs *refs,
				const lv_error *refs_err, lv_history_report *rep, lv_error *err);

#endif
