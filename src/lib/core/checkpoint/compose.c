/*
 * The rows a checkpoint write produces: what the head holds and, with the
 * archive on, the complete cells of versions sealed into segments on the way.
 *
 * Invariants:
 *  - Every row the writer has is written somewhere: into the head, or into a
 *    segment that was read back (or found in place and read) holding it.
 *    Rows a segment in place lacks stay in the head ("orphans", recorded in
 *    the head's index so that later writers keep them too).
 *  - The head holds at most max_entries rows: first those newer than the
 *    sealed range (fewer than S), then orphans, then copies of live rows
 *    (newest first; a live row that does not fit is still in its segment,
 *    and versions() reads its manifest, as the proposal does).
 *  - Manifests are read one range at a time (a cell, then the rest), so
 *    memory is bounded by a cell and the head, not by the history.
 *  - Sealed ranges are cells of S versions from the end of the archive;
 *    concurrent writers that see the same dataset compute the same cells
 *    and the same bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/writer.h"
#include "core/records.h"
#include "core/vlist.h"
#include "core/refs.h"
#include "util/util.h"

/* ---- owned rows ---- */

void lv__rows_dispose(lv__rows *r)
{
	lv__free(r->v);
	lv__arena_dispose(&r->arena);
	memset(r, 0, sizeof *r);
}

int lv__rows_add_copy(lv__rows *r, const lv_version_info *v)
{
	if (!r->arena.block_size)
		lv__arena_init(&r->arena, 16384);
	lv_version_info *nv = lv__grow(r->v, &r->cap, r->n, sizeof *nv, 64);
	if (!nv)
		return LV_ENOMEM;
	r->v = nv;
	lv_version_info c = *v;
	c.transaction_uuid = lv__arena_strdup(&r->arena, v->transaction_uuid);
	c.operation_type = lv__arena_strdup(&r->arena, v->operation_type);
	c.transaction_properties = lv__arena_strdup(&r->arena, v->transaction_properties);
	c.manifest_path = NULL;
	if ((v->transaction_uuid && !c.transaction_uuid) || (v->operation_type && !c.operation_type) ||
	    !c.transaction_properties)
		return LV_ENOMEM;
	r->v[r->n++] = c;
	return 0;
}

int lv__cp_merge_rows(const lv_version_info *a, size_t na, const lv_version_info *b, size_t nb,
		      lv_version_info **out, size_t *nout)
{
	lv_version_info *m = lv__calloc(na + nb ? na + nb : 1, sizeof *m);
	if (!m)
		return LV_ENOMEM;
	size_t i = 0, j = 0, k = 0;
	while (i < na || j < nb) {
		if (j >= nb || (i < na && a[i].version < b[j].version)) {
			m[k++] = a[i++];
		} else if (i >= na || b[j].version < a[i].version) {
			m[k++] = b[j++];
		} else {
			m[k] = a[i];
			m[k].is_cleaned_up = a[i].is_cleaned_up || b[j].is_cleaned_up;
			m[k].is_tagged = a[i].is_tagged || b[j].is_tagged;
			k++, i++, j++;
		}
	}
	*out = m;
	*nout = k;
	return 0;
}

bool lv__in_sorted_u64(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i = lv__lower_bound_u64(v, n, sizeof *v, 0, x);
	return i < n && v[i] == x;
}

/* ---- the rows of one version range ---- */

/* The rows of [lo, hi]: pointers into the base, the caller's rows and the manifests read. */
typedef struct range_rows {
	lv_version_info *v;
	size_t n;
	lv_version_list *read; /* manifests read for this range */
	char **props;          /* wrapped property texts of v */
} range_rows;

static void range_dispose(range_rows *r)
{
	for (size_t i = 0; r->props && i < r->n; i++)
		lv__free(r->props[i]);
	lv__free(r->props);
	lv__free(r->v);
	lv_version_list_free(r->read);
	memset(r, 0, sizeof *r);
}

/* Rows of sorted `rows` within [lo, hi]: *first and *count. */
static void slice(const lv_version_info *rows, size_t n, uint64_t lo, uint64_t hi, size_t *first,
		  size_t *count)
{
	size_t a = lv__lower_bound_u64(rows, n, sizeof *rows, offsetof(lv_version_info, version), lo);
	size_t b = a;
	while (b < n && rows[b].version <= hi)
		b++;
	*first = a;
	*count = b - a;
}

/* The caller's row for this live version (same manifest file), or NULL. */
static const lv_version_info *pre_row(const lv__writer *w, const lv__manifest_entry *e)
{
	size_t lo = 0, hi = w->npre;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->pre[mid]->version < e->version)
			lo = mid + 1;
		else
			hi = mid;
	}
	const lv_version_info *p = lo < w->npre ? w->pre[lo] : NULL;
	char path[LV__MPATH];
	return p && p->version == e->version && p->manifest_path &&
			       !strcmp(p->manifest_path, lv__mpath(e, path))
		       ? p
		       : NULL;
}

static bool has_row(const lv_version_info *rows, size_t n, uint64_t v)
{
	size_t i = lv__lower_bound_u64(rows, n, sizeof *rows, offsetof(lv_version_info, version), v);
	return i < n && rows[i].version == v;
}

/* Manifests read at once by live_rows (a progress step; the reads within go concurrently). */
#define READ_BATCH 1024

/* "reading manifests": the live versions >= from that neither the base, `extra` nor the
 * caller's rows hold (none: no such phase). */
static void read_begin(lv__writer *w, lv__seen *s, uint64_t from)
{
	w->read_done = w->read_total = 0;
	if (!w->prog->cb)
		return;
	for (size_t i = 0; i < s->nlive; i++) {
		uint64_t v = s->live[i].version;
		w->read_total += v >= from && !(s->base.rows && lv__vlist_find(s->base.rows, v)) &&
				 !has_row(w->extra, w->nextra, v) && !pre_row(w, &s->live[i]);
	}
	if (w->read_total)
		lv__progress_report(w->prog, "reading manifests", 0, w->read_total);
}

/* Rows for the live versions of entries [li, end) that neither the base nor `extra` holds: the
 * caller's, else read now (concurrently).  Appended to add (room for end - li rows). */
static int live_rows(lv__writer *w, lv__seen *s, size_t li, size_t end, range_rows *r,
		     lv_version_info *add, size_t *nadd, lv_error *err)
{
	const char **paths = lv__calloc(end - li + 1, sizeof *paths);
	char *block = lv__malloc((end - li + 1) * LV__MPATH);
	if (!paths || !block) {
		lv__free(paths);
		lv__free(block);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	size_t nread = 0;
	for (size_t i = li; i < end; i++) {
		uint64_t v = s->live[i].version;
		if ((s->base.rows && lv__vlist_find(s->base.rows, v)) || has_row(w->extra, w->nextra, v))
			continue;
		const lv_version_info *p = pre_row(w, &s->live[i]);
		if (p)
			add[(*nadd)++] = *p; /* its strings stay the caller's */
		else
			paths[nread] = lv__mpath(&s->live[i], block + nread * LV__MPATH), nread++;
	}
	int rc = 0;
	if (nread) {
		r->read = lv__version_list_new(nread, nread);
		rc = r->read ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
		/* a batch at a time, for progress (the list has room for every item and arena) */
		for (size_t at = 0; at < nread && rc == 0; at += READ_BATCH) {
			size_t k = nread - at < READ_BATCH ? nread - at : READ_BATCH;
			rc = lv__read_into_list(r->read, w->ds->st, w->ds->threads, paths + at, k, err);
			w->read_done += k;
			lv__progress_report(w->prog, "reading manifests", w->read_done, w->read_total);
		}
		w->rep.manifests_read += nread;
		if (rc == 0) {
			w->rep.manifests_vanished += r->read->nvanished;
			w->fresh_vanished += r->read->nvanished;
			for (size_t i = 0; i < r->read->n; i++)
				add[(*nadd)++] = r->read->items[i];
		}
	}
	lv__free(paths);
	lv__free(block);
	return rc;
}

/*
 * Every row of [lo, hi] the writer has: the base's, the caller's salvaged
 * ones, and (with `read_live`) rows for live versions neither holds.  Sorted,
 * flags set (cleaned up: manifest gone or about to go; tagged from `refs`),
 * properties wrapped.
 */
static int range_collect(lv__writer *w, lv__seen *s, const lv_refs *refs, const lv_error *refs_err,
			 uint64_t lo, uint64_t hi, bool read_live, range_rows *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	size_t bf = 0, bn = 0, xf, xn;
	if (s->base.rows)
		slice(s->base.rows->items, s->base.rows->n, lo, hi, &bf, &bn);
	slice(w->extra, w->nextra, lo, hi, &xf, &xn);
	lv_version_info *known = NULL, *add = NULL;
	size_t nknown = 0, nadd = 0;
	if (lv__cp_merge_rows(bn ? s->base.rows->items + bf : NULL, bn, xn ? w->extra + xf : NULL, xn, &known,
			      &nknown) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	int rc = 0;
	if (read_live) {
		size_t li = lv__lower_bound_u64(s->live, s->nlive, sizeof *s->live,
						offsetof(lv__manifest_entry, version), lo);
		size_t end = li;
		while (end < s->nlive && s->live[end].version <= hi)
			end++;
		add = lv__calloc(end - li + 1, sizeof *add);
		rc = add ? live_rows(w, s, li, end, r, add, &nadd, err) : lv__err(err, LV_ENOMEM, "out of memory");
		if (rc == 0)
			lv__sort_infos(add, nadd);
	}
	if (rc == 0 && lv__cp_merge_rows(known, nknown, add, nadd, &r->v, &r->n) < 0)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	lv__free(known);
	lv__free(add);
	if (rc == 0 && !(r->props = lv__calloc(r->n ? r->n : 1, sizeof *r->props)))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < r->n; i++) {
		lv_version_info *v = &r->v[i];
		v->is_cleaned_up = v->is_cleaned_up || !lv__entries_has(s->live, s->nlive, v->version) ||
				   lv__in_sorted_u64(w->cleaned, w->ncleaned, v->version);
		v->is_tagged = false;
		v->has_manifest_details = false; /* checkpoint rows carry only the 15 columns */
		const char *p = v->transaction_properties ? v->transaction_properties : "{}";
		if (!(r->props[i] = lv_properties_truncate(p, LV_PROPERTIES_LIMIT)))
			rc = lv__err(err, LV_ENOMEM, "out of memory");
		else
			v->transaction_properties = r->props[i];
	}
	if (rc == 0)
		rc = lv__mark_tags_with(w->ds, refs, refs_err, r->v, r->n, NULL, err);
	if (rc < 0)
		range_dispose(r);
	return rc;
}

/* ---- the composition ---- */

typedef struct composer {
	lv__writer *w;
	lv__seen *s;
	lv_refs *refs;
	lv_error refs_err;
	bool have_created;
	int64_t created;
	uint64_t S, L, through;
	uint64_t next_gap;   /* the lowest version not yet accounted for (gap notes) */
	lv__arc_index ix;    /* the index the head will carry */
	lv__rows copies;     /* rows of live versions in sealed ranges */
	lv__rows orphans;    /* rows no segment holds */
	lv__rows own;        /* rows newer than `through` */
} composer;

static void composer_dispose(composer *c)
{
	lv_refs_free(c->refs);
	lv__arc_index_dispose(&c->ix);
	lv__rows_dispose(&c->copies);
	lv__rows_dispose(&c->orphans);
	lv__rows_dispose(&c->own);
}

static void learn_created(composer *c, const range_rows *r)
{
	if (!c->have_created && r->n) {
		c->created = r->v[0].timestamp_millis; /* a new history: its oldest row */
		c->have_created = true;
	}
}

/* Versions of [c->next_gap, upto] that `r` has no row for: warnings (what the write records). */
static void note_gaps(composer *c, const range_rows *r, uint64_t upto)
{
	if (c->next_gap == UINT64_MAX) { /* a branch: its history starts at its first row */
		if (!r->n)
			return;
		c->next_gap = r->v[0].version;
	}
	for (size_t i = 0; i <= r->n; i++) {
		uint64_t v = i < r->n ? r->v[i].version : upto + 1;
		if (v > c->next_gap && c->next_gap <= upto) {
			uint64_t last = v - 1 < upto ? v - 1 : upto;
			char range[64];
			lv__format_range(range, sizeof range, c->next_gap, last);
			lv__warn(&c->s->wl, LV_WARN_HISTORY_GAP, NULL, c->next_gap, last,
				 "%s: no record in the checkpoint written (no readable file held them)", range);
			c->w->r.unrecorded_versions += last - c->next_gap + 1;
		}
		if (i < r->n && v >= c->next_gap)
			c->next_gap = v + 1;
	}
	if (upto + 1 > c->next_gap)
		c->next_gap = upto + 1;
}

/* Keeps the newest max_entries copies (rebuilt when twice that many: bounded memory). */
static int add_copy(composer *c, const lv_version_info *v)
{
	size_t cap = (size_t)c->w->cfg.max_entries;
	LV_TRY(lv__rows_add_copy(&c->copies, v));
	if (c->copies.n <= 2 * cap)
		return 0;
	lv__rows keep;
	memset(&keep, 0, sizeof keep);
	for (size_t i = c->copies.n - cap; i < c->copies.n; i++)
		if (lv__rows_add_copy(&keep, &c->copies.v[i]) < 0) {
			lv__rows_dispose(&keep);
			return LV_ENOMEM;
		}
	lv__rows_dispose(&c->copies);
	c->copies = keep;
	return 0;
}

/* The lowest version >= v that has a row or is live (UINT64_MAX: none). */
static uint64_t next_row(const composer *c, uint64_t v)
{
	const lv__seen *s = c->s;
	const lv__writer *w = c->w;
	uint64_t best = UINT64_MAX;
	size_t i = lv__lower_bound_u64(s->live, s->nlive, sizeof *s->live, offsetof(lv__manifest_entry, version), v);
	if (i < s->nlive)
		best = s->live[i].version;
	if (s->base.rows) {
		const lv_version_list *b = s->base.rows;
		i = lv__lower_bound_u64(b->items, b->n, sizeof *b->items, offsetof(lv_version_info, version), v);
		if (i < b->n && b->items[i].version < best)
			best = b->items[i].version;
	}
	i = lv__lower_bound_u64(w->extra, w->nextra, sizeof *w->extra, offsetof(lv_version_info, version), v);
	if (i < w->nextra && w->extra[i].version < best)
		best = w->extra[i].version;
	return best;
}

/* Does the index name a segment holding every version of its range, v's included? */
static bool sealed_whole(const lv__arc_index *ix, uint64_t v)
{
	if (v == UINT64_MAX)
		return false;
	size_t i = lv__lower_bound_u64(ix->v, ix->n, sizeof *ix->v, offsetof(lv__seg_entry, first), v + 1);
	const lv__seg_entry *e = i ? &ix->v[i - 1] : NULL;
	return e && e->first <= v && v <= e->last && e->rows == e->last - e->first + 1;
}

/* Rows of the range before the cells this write seals: live ones are copied, orphans kept. */
static int keep_old(composer *c, uint64_t hi, lv_error *err)
{
	range_rows r;
	LV_TRY(range_collect(c->w, c->s, c->refs, &c->refs_err, 1, hi, false, &r, err));
	int rc = 0;
	for (size_t i = 0; i < r.n && rc == 0; i++) {
		const lv_version_info *v = &r.v[i];
		/* no segment listed for it, or salvaged: only the head can hold it; a capture's row
		 * is the segment's only where the index says the segment holds every version of
		 * its range (another writer may have sealed it after the manifest was removed) */
		bool extra = has_row(c->w->extra, c->w->nextra, v->version);
		bool hole = !lv__seg_find(&c->s->segs, v->version) ||
			    (extra && !(c->w->captured && sealed_whole(&c->ix, v->version)));
		if (lv__arc_index_is_orphan(&c->ix, v->version) || hole) {
			rc = lv__rows_add_copy(&c->orphans, v);
			if (rc == 0 && hole)
				rc = lv__arc_index_orphan(&c->ix, v->version, v->version);
		} else if (!v->is_cleaned_up) {
			rc = add_copy(c, v);
		}
	}
	range_dispose(&r);
	return rc < 0 ? lv__err(err, rc, "out of memory") : 0;
}

/* One complete cell [c0, c1]: its rows sealed into a segment; live ones copied, orphans kept. */
static int seal_cell(composer *c, uint64_t c0, uint64_t c1, lv_error *err)
{
	range_rows r;
	LV_TRY(range_collect(c->w, c->s, c->refs, &c->refs_err, c0, c1, true, &r, err));
	int rc = 0;
	if (c->w->fresh_vanished)
		goto out; /* a concurrent cleanup: the caller gathers again */
	learn_created(c, &r);
	note_gaps(c, &r, c1);
	bool holds = true;
	if (r.n) {
		lv__seg_entry e;
		rc = lv__seg_put(c->w, c->s, c0, c1, r.v, r.n, c->created, &e, &holds, err);
		if (rc == 0 && e.rows)
			rc = lv__arc_index_put(&c->ix, &e) < 0 ? lv__err(err, LV_ENOMEM, "out of memory") : 0;
		if (rc == 0 && !holds && lv__arc_index_orphan(&c->ix, c0, c1) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < r.n && rc == 0; i++) {
		if (!holds)
			rc = lv__rows_add_copy(&c->orphans, &r.v[i]);
		else if (!r.v[i].is_cleaned_up)
			rc = add_copy(c, &r.v[i]);
		if (rc < 0)
			rc = lv__err(err, rc, "out of memory");
	}
	c->through = c1;
out:
	range_dispose(&r);
	return rc;
}

/* Head rows, newest last: own rows, then orphans, then live copies while they fit. */
static int head_rows(composer *c, lv__rows *head, lv_error *err)
{
	size_t cap = (size_t)c->w->cfg.max_entries;
	size_t room = cap > c->own.n ? cap - c->own.n : 0;
	size_t no = c->orphans.n < room ? c->orphans.n : room;
	if (no < c->orphans.n) {
		uint64_t first = c->orphans.v[0].version, last = c->orphans.v[c->orphans.n - no - 1].version;
		char range[64];
		lv__format_range(range, sizeof range, first, last);
		lv__warn(&c->s->wl, LV_WARN_HISTORY_GAP, NULL, first, last,
			 "%s: no segment holds these rows and the head has no room for them (max_entries); "
			 "older checkpoints that hold them are kept", range);
	}
	room -= no;
	/* live copies, newest first, not already kept as orphans */
	size_t nc = 0, from = c->copies.n;
	while (from > 0 && nc < room) {
		from--;
		if (!lv__arc_index_is_orphan(&c->ix, c->copies.v[from].version))
			nc++;
	}
	const lv__rows *parts[3] = { &c->orphans, &c->copies, &c->own };
	size_t firsts[3] = { c->orphans.n - no, from, 0 };
	int rc = 0;
	lv__rows tmp;
	memset(&tmp, 0, sizeof tmp);
	for (int k = 0; k < 3 && rc == 0; k++)
		for (size_t i = firsts[k]; i < parts[k]->n && rc == 0; i++)
			if (k != 1 || !lv__arc_index_is_orphan(&c->ix, parts[k]->v[i].version))
				rc = lv__rows_add_copy(&tmp, &parts[k]->v[i]);
	if (rc < 0) {
		lv__rows_dispose(&tmp);
		return lv__err(err, rc, "out of memory");
	}
	lv__sort_infos(tmp.v, tmp.n);
	*head = tmp;
	return 0;
}

/* The archive off: the proposal's head, every row the writer has, the newest max_entries kept. */
static int compose_plain(composer *c, lv__rows *head, lv_error *err)
{
	range_rows r;
	read_begin(c->w, c->s, 0);
	LV_TRY(range_collect(c->w, c->s, c->refs, &c->refs_err, 0, UINT64_MAX, true, &r, err));
	int rc = 0;
	size_t cap = (size_t)c->w->cfg.max_entries, first = r.n > cap ? r.n - cap : 0;
	if (!c->w->fresh_vanished && r.n) {
		c->next_gap = c->w->ds->branch ? r.v[0].version : 1;
		range_rows kept = r;
		kept.v += first;
		kept.n -= first;
		if (first) {
			char range[64];
			lv__format_range(range, sizeof range, r.v[0].version, r.v[first - 1].version);
			lv__warn(&c->s->wl, LV_WARN_HISTORY_GAP, NULL, r.v[0].version, r.v[first - 1].version,
				 "%s: trimmed by max_entries (the archive is off)", range);
			c->next_gap = kept.v[0].version;
		}
		note_gaps(c, &kept, c->L);
		for (size_t i = first; i < r.n && rc == 0; i++)
			rc = lv__rows_add_copy(head, &r.v[i]);
		if (rc < 0)
			rc = lv__err(err, rc, "out of memory");
		c->created = c->have_created ? c->created : r.v[0].timestamp_millis;
		c->have_created = true;
		c->w->r.recorded_versions = r.n - first;
	}
	range_dispose(&r);
	return rc;
}

/* The archive on: cells sealed, then the head's own rows, orphans and live copies. */
static int compose_archive(composer *c, lv__rows *head, char **index, lv_error *err)
{
	lv__seen *s = c->s;
	uint64_t start = s->base.rows ? c->ix.through + 1 : 1;
	c->through = start - 1;
	c->next_gap = c->w->ds->branch ? UINT64_MAX : start; /* a branch's history starts at its fork */
	if (start > 1)
		LV_TRY(keep_old(c, start - 1, err));
	read_begin(c->w, s, start);
	for (uint64_t c0 = start; c0 <= c->L && c->L - c0 + 1 >= c->S;) {
		/* cells with no row at all are sealed empty: skipped without a file */
		uint64_t next = next_row(c, c0), skip = next > c0 ? (next - c0) / c->S : 0;
		if (skip) {
			c0 += skip * c->S;
			c->through = c0 - 1;
			continue;
		}
		LV_TRY(seal_cell(c, c0, c0 + c->S - 1, err));
		if (c->w->fresh_vanished || c0 + c->S - 1 == UINT64_MAX)
			return c->w->fresh_vanished ? 0 : lv__err(err, LV_ELIMIT, "version numbers exhausted");
		c0 += c->S;
	}
	range_rows r;
	LV_TRY(range_collect(c->w, s, c->refs, &c->refs_err, c->through + 1, UINT64_MAX, true, &r, err));
	int rc = 0;
	if (!c->w->fresh_vanished) {
		learn_created(c, &r);
		note_gaps(c, &r, c->L);
		for (size_t i = 0; i < r.n && rc == 0; i++)
			rc = lv__rows_add_copy(&c->own, &r.v[i]);
		if (rc < 0)
			rc = lv__err(err, rc, "out of memory");
	}
	range_dispose(&r);
	if (rc < 0 || c->w->fresh_vanished)
		return rc;
	LV_TRY(head_rows(c, head, err));
	c->ix.segment_rows = c->S;
	c->ix.through = c->through;
	c->w->r.archived_through = c->through;
	c->w->r.recorded_versions = c->own.n + c->orphans.n;
	for (size_t i = 0; i < c->ix.n; i++)
		c->w->r.recorded_versions += c->ix.v[i].rows;
	if (!(*index = lv__arc_index_format(&c->ix)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	return 0;
}

int lv__cp_compose(lv__writer *w, lv__seen *s, lv__rows *head, char **index, lv_error *err)
{
	composer c;
	memset(&c, 0, sizeof c);
	memset(head, 0, sizeof *head);
	*index = NULL;
	c.w = w;
	c.s = s;
	c.L = s->live[s->nlive - 1].version;
	uint64_t S = (uint64_t)w->cfg.archive_segment_rows, cap = (uint64_t)w->cfg.max_entries;
	c.S = S < cap ? S : cap;
	c.have_created = s->base.rows != NULL || s->have_created;
	c.created = s->base.rows ? s->base.created : s->created;
	/* the index carried on: the base head's (moved), to which this write adds */
	c.ix = s->ix;
	memset(&s->ix, 0, sizeof s->ix);
	c.ix.through = s->base.rows ? c.ix.through : 0;
	if (lv__refs_load_lenient(&c.refs, w->ds->root, 1, &c.refs_err) < 0)
		c.refs = NULL;
	int rc = w->cfg.archive ? compose_archive(&c, head, index, err) : compose_plain(&c, head, err);
	s->created = c.created;
	s->have_created = c.have_created;
	if (rc == 0 && !w->fresh_vanished && head->n == 0)
		rc = lv__err(err, LV_ENOTFOUND, "nothing to checkpoint: every manifest vanished");
	if (rc < 0 || w->fresh_vanished) {
		lv__rows_dispose(head);
		lv__free(*index);
		*index = NULL;
	}
	composer_dispose(&c);
	return rc;
}
