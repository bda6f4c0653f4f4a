/*
 * A split history identity (see readopt.h): found and verified, read-only.
 *
 * Invariants:
 *  - Only heads the ladder would use (decoded, checksum, confirmed by the live
 *    manifests) and segments that read as valid are evidence.
 *  - An identity is offered for re-adoption only when every segment the index
 *    it comes from names is there and valid under it, agrees with the newest
 *    head's rows, and no listed segment carries the newer identity: then the
 *    re-adopted head (rows of both identities' heads, merged) hides nothing.
 */
#include "core/readopt.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/checkpoint/archive.h"
#include "core/checkpoint/ladder.h"
#include "core/vlist.h"
#include "util/util.h"

/* Does every row of segment f that the head also holds say the same (commit time, transaction)? */
static bool agrees(const lv__cp_file *head, const lv__cp_file *f)
{
	for (size_t i = 0; i < f->rows->n; i++) {
		const lv_version_info *a = &f->rows->items[i];
		const lv_version_info *b = lv__vlist_find(head->rows, a->version);
		if (b && (a->timestamp_millis != b->timestamp_millis ||
			  (!a->transaction_uuid) != (!b->transaction_uuid) ||
			  (a->transaction_uuid && strcmp(a->transaction_uuid, b->transaction_uuid))))
			return false;
	}
	return true;
}

/*
 * The identity every segment `index` names carries (*created; learned from the first when
 * it is INT64_MIN on entry).  *ok false (why_not says) when one is missing, invalid, of
 * another identity, or disagrees with the head.  0 or LV_ENOMEM.
 */
static int index_identity(lv_dataset *ds, const lv__seg_names *segs, const char *index,
			  const lv__cp_file *head, int64_t *created, bool *ok, lv__split *out)
{
	lv__arc_index ix;
	lv_error e = { 0 };
	*ok = false;
	if (!index || lv__arc_index_parse(index, head->path, &ix, &e) < 0)
		return 0;
	*ok = ix.n > 0;
	out->segments = 0;
	for (size_t i = 0; *ok && i < ix.n; i++) {
		lv__seg_name name = { ix.v[i].first, ix.v[i].last, 0, "" };
		lv__seg_path(name.path, sizeof name.path, name.first, name.last);
		const lv__seg_name *listed = lv__seg_find(segs, name.first);
		lv__cp_file f;
		int cls, rc = listed && listed->first == name.first && listed->last == name.last
				      ? lv__seg_read(ds->st, &name, *created, &f, &cls, NULL, &e)
				      : lv__err(&e, LV_ENOTFOUND, "not listed");
		if (rc == LV_ENOMEM) {
			lv__arc_index_dispose(&ix);
			return rc;
		}
		if (rc == 0 && *created == INT64_MIN)
			*created = f.created;
		if (rc == 0 && !agrees(head, &f))
			rc = lv__err(&e, LV_ECONFLICT, "disagrees with %s", head->path);
		if (rc < 0)
			snprintf(out->why_not, sizeof out->why_not, "segment %s: %.120s", name.path, e.message);
		else if (!out->segments++)
			snprintf(out->evidence, sizeof out->evidence, "%s", name.path);
		*ok = rc == 0;
		if (rc == 0)
			lv__cp_file_dispose(&f);
	}
	lv__arc_index_dispose(&ix);
	return 0;
}

/* No listed segment may carry the newer identity (its rows would be hidden by re-adopting). */
static int none_carry(lv_dataset *ds, const lv__seg_names *segs, int64_t newer, bool *ok, lv__split *out)
{
	*ok = true;
	for (size_t i = 0; *ok && i < segs->n; i++) {
		lv__cp_file f;
		lv_error e = { 0 };
		int cls, rc = lv__seg_read(ds->st, &segs->v[i], INT64_MIN, &f, &cls, NULL, &e);
		if (rc == LV_ENOMEM)
			return rc;
		if (rc == 0 && f.created == newer) {
			*ok = false;
			snprintf(out->why_not, sizeof out->why_not, "segment %s carries the newest head's "
				 "dataset_created", segs->v[i].path);
		}
		if (rc == 0)
			lv__cp_file_dispose(&f);
	}
	return 0;
}

/* The newest usable head (*h) and the newest usable one of another identity (*o), if any. */
static int usable_heads(lv_dataset *ds, const lv__cp_names *names, const lv__manifest_entry *live,
			size_t nlive, lv__cp_file *h, lv__cp_file *o)
{
	for (size_t i = 0; i < names->n && !o->rows; i++) {
		lv__cp_file f;
		lv_error e = { 0 };
		int cls;
		uint64_t idb = 0;
		int rc = lv__cp_try(ds, &names->v[i], live, nlive, true, NULL, NULL, &f, &cls, &idb, NULL, &e);
		if (rc == LV_ENOMEM)
			return rc;
		if (rc < 0)
			continue;
		if (!h->rows)
			*h = f;
		else if (f.created != h->created)
			*o = f;
		else
			lv__cp_file_dispose(&f);
	}
	return 0;
}

int lv__split_find(lv_dataset *ds, const lv__manifest_entry *live, size_t nlive, lv__split *out,
		   lv_error *err)
{
	memset(out, 0, sizeof *out);
	lv__cp_names names;
	lv__seg_names segs;
	LV_TRY(lv__cp_list(ds->st, &names, err));
	int rc = lv__seg_list(ds->st, &segs, err);
	if (rc < 0) {
		lv__cp_names_free(&names);
		return rc;
	}
	lv__cp_file h, o;
	memset(&h, 0, sizeof h);
	memset(&o, 0, sizeof o);
	rc = usable_heads(ds, &names, live, nlive, &h, &o);
	bool ok = false;
	int64_t a = INT64_MIN;
	if (rc == 0 && h.rows) { /* A from the segments the newest head names */
		out->newer = h.created;
		snprintf(out->head, sizeof out->head, "%s", h.path);
		rc = index_identity(ds, &segs, h.archive, &h, &a, &ok, out);
		ok = ok && a != h.created;
	}
	if (rc == 0 && !ok && o.rows) { /* else from an older head of another identity */
		a = o.created;
		rc = index_identity(ds, &segs, o.archive, &h, &a, &ok, out);
		ok = ok || (!o.archive && !segs.n);
		if (ok && !out->segments)
			snprintf(out->evidence, sizeof out->evidence, "%s", o.path);
	}
	if (rc == 0 && ok)
		rc = none_carry(ds, &segs, h.created, &ok, out);
	out->found = rc == 0 && ok;
	out->older = out->found ? a : 0;
	lv__cp_file_dispose(&h);
	lv__cp_file_dispose(&o);
	lv__cp_names_free(&names);
	lv__seg_names_free(&segs);
	return rc < 0 ? lv__err(err, rc, "out of memory") : 0;
}
