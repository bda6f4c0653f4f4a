/*
 * lv_version_as_of(): the newest version committed at (or before) a time,
 * reading only what can hold the answer.
 *
 * Invariants:
 *  - Exact under clock skew: the answer is the largest version whose commit
 *    time qualifies, among every recorded version.  Versions beyond the
 *    archive (head rows, live manifests) are all looked at; if one
 *    qualifies, it is the answer.  Otherwise the archive's segments are
 *    searched by the head's index: the newest segment whose earliest commit
 *    time qualifies holds the answer (a suffix minimum over the index and a
 *    binary search), and only that segment is read.
 *  - A version with no record (a gap, a missing or rejected segment) newer
 *    than the answer could have been committed in time: then the answer says
 *    so (LV_WARN_ANSWER_UNCERTAIN, with the range).
 */
#include "lancever/checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "core/hplan.h"
#include "core/records.h"
#include "core/vlist.h"
#include "util/util.h"

typedef struct asof {
	lv__hplan *p;
	int64_t ts;
	bool strict;
	lv_version_info best;   /* the answer so far (version 0: none) */
	lv__arena arena;         /* its strings */
	uint64_t unrec_lo, unrec_hi; /* unrecorded versions that could change the answer */
	lv_version_list *chunk;
} asof;

static bool qualifies(const asof *a, int64_t t)
{
	return a->strict ? t < a->ts : t <= a->ts;
}

/* Takes row r as the answer if it qualifies and is newer: its checkpoint columns, strings
 * copied; none of its manifest details, whose strings live in the row's list (a live
 * manifest's row is freed with the read plan, before the answer is returned). */
static int consider(asof *a, const lv_version_info *r)
{
	if (!qualifies(a, r->timestamp_millis) || (a->best.version && r->version <= a->best.version))
		return 0;
	/* the checkpoint columns by name (no field order assumed), every other field 0 / NULL */
	a->best = (lv_version_info){
		.version = r->version, .timestamp_millis = r->timestamp_millis,
		.total_fragments = r->total_fragments, .total_data_files = r->total_data_files,
		.total_files_size = r->total_files_size, .total_deletion_files = r->total_deletion_files,
		.total_data_file_rows = r->total_data_file_rows,
		.total_deletion_file_rows = r->total_deletion_file_rows, .total_rows = r->total_rows,
		.is_tagged = r->is_tagged, .is_cleaned_up = r->is_cleaned_up,
		.has_read_version = r->has_read_version, .read_version = r->read_version,
	};
	a->best.transaction_uuid = lv__arena_strdup(&a->arena, r->transaction_uuid);
	a->best.operation_type = lv__arena_strdup(&a->arena, r->operation_type);
	a->best.transaction_properties = lv__arena_strdup(&a->arena, r->transaction_properties);
	return (r->transaction_uuid && !a->best.transaction_uuid) || !a->best.transaction_properties
		       ? LV_ENOMEM
		       : 0;
}

/* Versions lo..hi have no record: noted (only those newer than the final answer count). */
static void unrecorded(asof *a, uint64_t lo, uint64_t hi)
{
	if (lo > hi)
		return;
	if (!a->unrec_hi || lo < a->unrec_lo)
		a->unrec_lo = lo;
	if (hi > a->unrec_hi)
		a->unrec_hi = hi;
}

/*
 * Versions beyond the archive: the head's rows there and the live tail, merged in order
 * (the tail a chunk at a time when long), every one considered, jumps noted as unrecorded.
 */
static int beyond_archive(asof *a, lv_error *err)
{
	lv__hplan *p = a->p;
	const lv_version_list *h = p->head.rows;
	size_t hi = 0, ti = 0, ci = 0;
	while (h && hi < h->n && h->items[hi].version <= p->through)
		hi++;
	uint64_t next = p->through + 1;
	for (;;) {
		const lv_version_info *x = h && hi < h->n ? &h->items[hi] : NULL, *y = NULL;
		if (p->tail_rows && ti < p->tail_rows->n)
			y = &p->tail_rows->items[ti];
		if (!p->tail_rows && (!a->chunk || ci == a->chunk->n) && ti < p->ntail) {
			size_t n = p->ntail - ti < LV__TAIL_CHUNK ? p->ntail - ti : LV__TAIL_CHUNK;
			lv_version_list_free(a->chunk);
			if (!(a->chunk = lv__version_list_new(n, n)))
				return lv__err(err, LV_ENOMEM, "out of memory");
			LV_TRY(lv__hplan_read_tail(p, ti, n, a->chunk, err));
			p->rep.manifests_read += n;
			lv__sort_infos(a->chunk->items, a->chunk->n);
			ti += n;
			ci = 0;
		}
		if (!p->tail_rows && a->chunk && ci < a->chunk->n)
			y = &a->chunk->items[ci];
		if (!x && !y)
			break;
		const lv_version_info *r = !y || (x && x->version <= y->version) ? x : y;
		if (r == x)
			hi++;
		else if (p->tail_rows)
			ti++;
		else
			ci++;
		if (r->version > next)
			unrecorded(a, next, r->version - 1);
		if (r->version >= next)
			next = r->version + 1;
		if (consider(a, r) < 0)
			return lv__err(err, LV_ENOMEM, "out of memory");
	}
	return 0;
}

/* One segment of the archive considered whole (its rows, its gaps); false if unusable. */
static int consider_segment(asof *a, const lv__seg_name *name, bool *ok, lv_error *err)
{
	lv__cp_file f;
	int rc = lv__hplan_read_segment(a->p, name, &f, &a->p->wl, err);
	*ok = rc == 0;
	if (rc == LV_ENOMEM)
		return rc;
	if (rc < 0) {
		unrecorded(a, name->first, name->last);
		return 0;
	}
	uint64_t next = name->first;
	for (size_t i = 0; i < f.rows->n && rc == 0; i++) {
		const lv_version_info *r = &f.rows->items[i];
		if (r->version > next)
			unrecorded(a, next, r->version - 1);
		next = r->version + 1;
		if (consider(a, r) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (next <= name->last)
		unrecorded(a, next, name->last);
	lv__cp_file_dispose(&f);
	return rc;
}

/* A listed segment the head's index describes exactly (its earliest commit time known). */
typedef struct indexed {
	const lv__seg_name *name;
	const lv__seg_entry *e;
} indexed;

/* Ranges of the archive that no segment answers for (holes), less the head's rows there. */
static void holes(asof *a)
{
	lv__hplan *p = a->p;
	uint64_t next = 1;
	for (size_t i = 0; i <= p->segs.n; i++) {
		uint64_t end = i < p->segs.n ? p->segs.v[i].first : p->through + 1;
		for (uint64_t v = next; v < end && end - next < 100000; v++) /* small holes only */
			if (!(p->head.rows && lv__vlist_find(p->head.rows, v)))
				unrecorded(a, v, v);
		if (end - next >= 100000)
			unrecorded(a, next, end - 1);
		if (i < p->segs.n && p->segs.v[i].last + 1 > next)
			next = p->segs.v[i].last + 1;
	}
	for (size_t i = 0; i < p->nmissing; i++)
		unrecorded(a, p->missing[i].first, p->missing[i].last);
}

/* The archive: the head's copies and orphans, unindexed segments whole, then the index. */
static int search_archive(asof *a, lv_error *err)
{
	lv__hplan *p = a->p;
	const lv_version_list *h = p->head.rows;
	for (size_t i = 0; h && i < h->n && h->items[i].version <= p->through; i++)
		if (consider(a, &h->items[i]) < 0)
			return lv__err(err, LV_ENOMEM, "out of memory");
	indexed *ix = lv__calloc(p->segs.n ? p->segs.n : 1, sizeof *ix);
	int64_t *sufmin = lv__calloc(p->segs.n ? p->segs.n : 1, sizeof *sufmin);
	int rc = ix && sufmin ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < p->segs.n && rc == 0; i++) {
		const lv__seg_entry *e = lv__arc_index_find(&p->ix, p->segs.v[i].first);
		bool ok;
		if (e && e->last == p->segs.v[i].last)
			ix[n++] = (indexed){ &p->segs.v[i], e };
		else /* written by a writer that stopped before its head: read whole */
			rc = consider_segment(a, &p->segs.v[i], &ok, err);
	}
	/* sufmin[k] = min(min_ts[k..n-1]); the answer's segment is the largest k where it qualifies */
	for (size_t k = n; k-- > 0;)
		sufmin[k] = k + 1 < n && sufmin[k + 1] < ix[k].e->min_ts ? sufmin[k + 1] : ix[k].e->min_ts;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (qualifies(a, sufmin[mid]))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k-- > 0 && rc == 0;) {
		if (a->best.version && ix[k].name->last < a->best.version)
			break; /* nothing older can be newer than the answer */
		if (!ix[k].e->rows || !qualifies(a, ix[k].e->min_ts))
			continue;
		bool ok;
		rc = consider_segment(a, ix[k].name, &ok, err);
		if (ok)
			break; /* it holds a qualifying row: older segments cannot beat it */
	}
	/* segments newer than the answer that were not read: their unrecorded versions */
	for (size_t k = 0; k < n; k++)
		if (ix[k].name->last > a->best.version &&
		    ix[k].e->rows < ix[k].e->last - ix[k].e->first + 1)
			unrecorded(a, ix[k].e->first, ix[k].e->last);
	holes(a);
	lv__free(ix);
	lv__free(sufmin);
	return rc;
}

/* The answer's warning when a version with no record could change it. */
static void warn_uncertain(asof *a)
{
	uint64_t v = a->best.version;
	if (!a->unrec_hi || a->unrec_hi <= v)
		return;
	uint64_t first = a->unrec_lo > v ? a->unrec_lo : v + 1, last = a->unrec_hi;
	char range[64];
	lv__format_range(range, sizeof range, first, last);
	lv__warn(&a->p->wl, LV_WARN_ANSWER_UNCERTAIN, NULL, first, last,
		 "as-of answer may be wrong: %s have no record, and any of them may have been "
		 "committed %s %" PRId64 " ms", range, a->strict ? "before" : "at or before", a->ts);
}

int lv_version_as_of(lv_version_list **out, lv_dataset *ds, int64_t ts_ms, bool strict,
		     lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_version_as_of: NULL argument");
	*out = NULL;
	LV_TRY(lv__report_check(report, err));
	lv__hplan p;
	lv_storage_stats s0;
	LV_TRY(lv__hplan_start(ds, &p, &s0, err));
	asof a = { .p = &p, .ts = ts_ms, .strict = strict };
	lv__arena_init(&a.arena, 1024);
	int rc = beyond_archive(&a, err);
	if (rc == 0 && !a.best.version)
		rc = search_archive(&a, err);
	lv_version_list *l = NULL;
	if (rc == 0) {
		warn_uncertain(&a);
		lv__report_end(ds, &p.rep, &s0);
		rc = lv__warn_commit_all(ds, &p.wl, &p.rep.warnings, err);
		if (rc == 0)
			lv__report_put(report, &p.rep);
		if (rc == 0 && !a.best.version)
			rc = lv__err(err, LV_ENOTFOUND, "no version committed %s %" PRId64 " ms%s",
				     strict ? "before" : "at or before", ts_ms,
				     a.unrec_hi ? " among the recorded versions (some versions have no record)" : "");
	}
	if (rc == 0 && !(l = lv__version_list_new(1, 1)))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (rc == 0) {
		l->arenas[0] = a.arena; /* the answer's strings */
		l->narenas = 1;
		memset(&a.arena, 0, sizeof a.arena);
		char pbuf[LV__MPATH];
		bool live = lv__hplan_live(&p, a.best.version, pbuf);
		const char *path = live ? pbuf : NULL;
		a.best.is_cleaned_up = !live;
		a.best.manifest_path = NULL;
		a.best.is_tagged = false;
		l->items[0] = a.best;
		l->n = 1;
		rc = lv__mark_tags_with(ds, p.refs, &p.refs_err, l->items, 1, NULL, err);
		if (rc == 0 && path && !(l->items[0].manifest_path = lv__arena_strdup(&l->arenas[0], path)))
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (rc < 0) {
		lv_version_list_free(l);
		l = NULL;
	}
	*out = l;
	lv__arena_dispose(&a.arena);
	lv_version_list_free(a.chunk);
	lv__hplan_dispose(&p);
	return rc;
}
