/*
 * Pruning old head checkpoints (max_checkpoint_files).
 *
 * Invariants (issue 13, and segments for issue 18):
 *  - Nothing is pruned while a checkpoint could not be read.
 *  - An old head is deleted only after it was read and every row it holds is
 *    in the head just written, or in a segment that was read (by this write,
 *    or now) and holds it; with the archive off, rows older than the new
 *    head's first row may also be what max_entries dropped.
 *  - A damaged or foreign old head is moved aside, never deleted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/ladder.h"
#include "core/checkpoint/writer.h"
#include "core/vlist.h"
#include "util/util.h"

/* Segments read for this prune: the versions each holds (NULL: could not be used). */
typedef struct seg_cache {
	lv__sealed *v;
	size_t n, cap;
} seg_cache;

static void cache_dispose(seg_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		lv__free(c->v[i].versions);
	lv__free(c->v);
}

/* The versions the segment covering v holds (written or read by this write, else read now). */
static const lv__sealed *segment_of(lv__writer *w, lv__seen *s, seg_cache *c, uint64_t v,
				    int64_t created)
{
	for (size_t i = 0; i < w->nsealed; i++)
		if (w->sealed[i].first <= v && v <= w->sealed[i].last)
			return &w->sealed[i];
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].first <= v && v <= c->v[i].last)
			return c->v[i].versions ? &c->v[i] : NULL;
	const lv__seg_name *name = lv__seg_find(&s->segs, v);
	if (!name)
		return NULL;
	lv__sealed *nv = lv__grow(c->v, &c->cap, c->n, sizeof *nv, 4);
	if (!nv)
		return NULL;
	c->v = nv;
	lv__sealed *e = &c->v[c->n++];
	*e = (lv__sealed){ name->first, name->last, NULL, 0 };
	lv__cp_file f;
	lv_error err = { 0 };
	int cls;
	if (lv__seg_read(w->ds->st, name, created, &f, &cls, NULL, &err) < 0)
		return NULL;
	if ((e->versions = lv__calloc(f.rows->n ? f.rows->n : 1, sizeof *e->versions)))
		for (size_t i = 0; i < f.rows->n; i++)
			e->versions[e->n++] = f.rows->items[i].version;
	lv__cp_file_dispose(&f);
	return e->versions ? e : NULL;
}

/* May the checkpoint `f` go, given the head written holds `rows` (sorted)? */
static bool prunable(lv__writer *w, lv__seen *s, seg_cache *c, const lv__cp_file *f,
		     const lv_version_info *rows, size_t n, int64_t created)
{
	if (f->created != created)
		return false;
	uint64_t through = w->cfg.archive ? w->r.archived_through : 0;
	for (size_t i = 0; i < f->rows->n; i++) {
		uint64_t v = f->rows->items[i].version;
		size_t k = lv__lower_bound_u64(rows, n, sizeof *rows, offsetof(lv_version_info, version), v);
		if (k < n && rows[k].version == v)
			continue;
		if (v <= through) {
			const lv__sealed *seg = segment_of(w, s, c, v, created);
			if (!seg || !lv__in_sorted_u64(seg->versions, seg->n, v))
				return false; /* no segment shown to hold it */
			continue;
		}
		if (w->cfg.archive || v > rows[0].version)
			return false; /* a row ours lacks (not one max_entries dropped) */
	}
	return true;
}

int lv__cp_prune(lv__writer *w, lv__seen *s, int64_t keep, const lv_version_info *rows, size_t n,
		 int64_t created, lv_error *err)
{
	if (s->unreadable)
		return 0;
	lv__cp_names names;
	LV_TRY(lv__cp_list(w->ds->st, &names, err));
	lv__cp_sweep_stale_locks(w->ds->st);
	seg_cache cache;
	memset(&cache, 0, sizeof cache);
	int rc = 0;
	for (size_t i = (size_t)keep; i < names.n && rc == 0; i++) {
		const lv__cp_name *name = &names.v[i];
		if (!strcmp(name->path, w->r.path) || name->version > w->r.latest_version)
			continue;
		lv__cp_file f;
		lv_error e = { 0 };
		lv_buf bytes = { 0 };
		int cls;
		rc = lv__cp_try(w->ds, name, s->live, s->nlive, true, NULL, &bytes, &f, &cls,
				&w->rep.identity_bytes, NULL, &e);
		if (rc == 0 && prunable(w, s, &cache, &f, rows, n, created)) {
			rc = lv_storage_delete(w->ds->st, name->path, err);
			if (rc == 0)
				w->r.files_pruned++;
		} else if (rc < 0 && (cls == LV__CP_DAMAGED || cls == LV__CP_FOREIGN)) {
			char aside[160];
			if ((rc = lv__cp_quarantine(w->ds->st, name, &bytes, aside, sizeof aside, &e)) == 0)
				w->r.files_quarantined++;
		}
		if (rc == LV_ENOMEM)
			rc = lv__err(err, rc, "out of memory");
		else if (rc == LV_ENOTFOUND || (rc < 0 && rc != LV_ENOMEM))
			rc = 0; /* gone (a concurrent pruner), or left in place: both keep history */
		lv__cp_file_dispose(&f);
		lv_buf_dispose(&bytes);
	}
	cache_dispose(&cache);
	lv__cp_names_free(&names);
	return rc;
}
