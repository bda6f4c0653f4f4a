/*
 * Two heads' archive indexes folded into one (a merge under the lock), so that
 * racing writers with different segment sizes converge (issue 24, case 3).
 *
 * The cell size is a property of each writer: a writer lays its cells from
 * the end of the archive it found.  Two writers that found the same archive
 * but use different sizes seal overlapping segments (1-40, 41-80 next to
 * 1-50, 51-100).  Both are valid files and stay; the index a head carries
 * must still be a non-overlapping cover, or every reader rejects the head.
 *
 * Invariants:
 *  - The cover is a function of the set of entries only: entries sorted by
 *    first (ascending), then last (descending), then size, and taken greedily
 *    when they start after the last one taken.  So every merger, in any
 *    order, ends with the same index.
 *  - An entry left out is returned to the caller, who must keep the rows of
 *    the versions it alone held in the head (as orphans): the cover never
 *    drops a version's record.
 *  - Orphan ranges of both indexes are kept; `through` and `segment_rows` are
 *    the larger ones.
 */
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/writer.h"
#include "util/util.h"

static int cmp_entry(const void *a, const void *b)
{
	const lv__seg_entry *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if (x->last != y->last)
		return x->last > y->last ? -1 : 1;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

int lv__arc_index_fold(lv__arc_index *into, const lv__arc_index *b, lv__seg_entry **dropped,
		       size_t *ndropped)
{
	*dropped = NULL;
	*ndropped = 0;
	size_t n = into->n + b->n;
	lv__seg_entry *all = lv__calloc(n ? n : 1, sizeof *all);
	lv__seg_entry *out = lv__calloc(n ? n : 1, sizeof *out);
	if (!all || !out) {
		lv__free(all);
		lv__free(out);
		return LV_ENOMEM;
	}
	if (into->n)
		memcpy(all, into->v, into->n * sizeof *all);
	if (b->n)
		memcpy(all + into->n, b->v, b->n * sizeof *all);
	if (n > 1)
		qsort(all, n, sizeof *all, cmp_entry);
	size_t k = 0, nd = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && all[i].first == all[k - 1].first && all[i].last == all[k - 1].last)
			continue; /* the same segment in both */
		if (k && all[i].first <= all[k - 1].last)
			out[nd++] = all[i]; /* overlaps the cover: left out */
		else
			all[k++] = all[i];
	}
	lv__free(into->v);
	into->v = all;
	into->n = into->cap = k;
	for (size_t i = 0; i < b->norphans; i++)
		if (lv__arc_index_orphan(into, b->orphans[i][0], b->orphans[i][1]) < 0) {
			lv__free(out);
			return LV_ENOMEM;
		}
	into->through = into->through > b->through ? into->through : b->through;
	if (b->segment_rows > into->segment_rows) /* informational; the larger, in either order */
		into->segment_rows = b->segment_rows;
	*dropped = out;
	*ndropped = nd;
	return 0;
}

size_t lv__arc_index_uncovered(const lv__arc_index *ix, uint64_t first, uint64_t last,
			       uint64_t (*out)[2], size_t cap)
{
	size_t n = 0;
	uint64_t at = first;
	for (size_t i = 0; i < ix->n && at <= last; i++) {
		const lv__seg_entry *e = &ix->v[i];
		if (e->last < at)
			continue;
		if (e->first > last)
			break;
		if (e->first > at && n < cap)
			out[n][0] = at, out[n][1] = e->first - 1, n++;
		if (e->last >= last)
			return n;
		at = e->last + 1;
	}
	if (at <= last && n < cap)
		out[n][0] = at, out[n][1] = last, n++;
	return n;
}
