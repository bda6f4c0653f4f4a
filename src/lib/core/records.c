/*
 * Version records from manifests: is_tagged from the dataset's tags, and a list
 * built from every listed manifest (lv_versions: versions.c; one live version by
 * number, lv_version_get: versions.c).
 */
#include "core/records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataset.h"
#include "core/manifests.h"
#include "core/vlist.h"
#include "core/warnings.h"
#include "format/manifest.h"
#include "core/refs.h"
#include "util/util.h"
/* Marks is_tagged from the tags of the main branch.  Tag problems never fail a listing;
 * a lack of memory does (an answer that a retry would change is not a warning). */
int lv__mark_tags(lv_dataset *ds, lv_version_info *items, size_t n, lv_history_report *rep,
		  lv_error *err)
{
	lv_refs *refs = NULL;
	lv_error e = { 0 };
	int rc = lv__refs_load_lenient(&refs, ds->root, 1, &e);
	int marked = lv__mark_tags_with(ds, rc < 0 ? NULL : refs, &e, items, n, rep, err);
	if (rc == 0 && marked == 0) { /* a tag file skipped: its version is not marked, and the answer says so */
		lv__warnlog wl = { 0 };
		lv__warn_refs(&wl, refs);
		lv__warn_commit(ds, &wl);
	}
	lv_refs_free(refs);
	return marked;
}

int lv__mark_tags_with(lv_dataset *ds, const lv_refs *refs, const lv_error *load_err,
		       lv_version_info *items, size_t n, lv_history_report *rep, lv_error *err)
{
	if (!refs && load_err && load_err->code == LV_ENOMEM)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (!refs) {
		if (rep)
			snprintf(rep->note, sizeof rep->note, "tags unreadable, is_tagged may be incomplete: %.200s",
				 load_err ? load_err->message : "");
		lv__warnlog wl = { 0 };
		lv__warn(&wl, LV_WARN_TAG_UNREADABLE, LV_REFS_TAGS_DIR, 0, 0,
			 "tags could not be read (%s); is_tagged may be incomplete",
			 load_err ? load_err->message : "unknown error");
		lv__warn_commit(ds, &wl);
		return 0;
	}
	size_t nt = lv_refs_tag_count(refs);
	for (size_t t = 0; t < nt; t++) {
		const lv_tag *tag = lv_refs_tag(refs, t);
		/* Tags live at the root; each names its branch (null = main). */
		bool tag_main = !tag->branch || !strcmp(tag->branch, "main");
		if (ds->branch ? (tag_main || strcmp(tag->branch, ds->branch) != 0) : !tag_main)
			continue;
		/* items are sorted by version: binary search */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (items[mid].version < tag->version)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && items[lo].version == tag->version)
			items[lo].is_tagged = true;
	}
	return 0;
}

int lv__versions_from_manifests(lv_version_list **out, lv_dataset *ds,
				const lv__manifest_entry *entries, size_t n, const lv_refs *refs,
				const lv_error *refs_err, lv_history_report *rep, lv_error *err)
{
	lv_version_list *l = lv__version_list_new(n, n);
	const char **paths = NULL;
	char *block = NULL;
	int rc;
	if (!l || lv__mpaths(entries, n, &paths, &block) < 0) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = lv__read_into_list(l, ds->st, ds->threads, paths, n, err)) < 0)
		goto out;
	rep->manifests_read += n;
	rep->manifests_vanished += l->nvanished;
	lv__sort_infos(l->items, l->n);
	if ((rc = refs || refs_err ? lv__mark_tags_with(ds, refs, refs_err, l->items, l->n, rep, err)
				   : lv__mark_tags(ds, l->items, l->n, rep, err)) < 0)
		goto out;
	*out = l;
	l = NULL;
out:
	lv_version_list_free(l);
	lv__free(paths);
	lv__free(block);
	return rc;
}
