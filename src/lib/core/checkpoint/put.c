/*
 * Writing the head checkpoint: create-if-absent under its name; a name taken
 * by another writer's file is judged (identical, already says everything, to
 * be merged, or damaged) and only ever changed under the merge lock.
 *
 * Invariants:
 *  - A file under our name that cannot be read or verified is never
 *    replaced; a damaged one is moved aside byte for byte first.
 *  - A merge keeps the union of both files' rows (flags OR-ed) and of their
 *    archive indexes, trimmed to max_entries.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/ladder.h"
#include "core/checkpoint/writer.h"
#include "core/vlist.h"
#include "util/util.h"

/* A name taken by a file that is not ours is looked at again this many times. */
#define CREATE_ATTEMPTS 4

/* Does their index say everything ours says (range sealed, segments, orphan ranges)? */
static bool index_covers(const char *theirs, const char *ours)
{
	if (!ours || (theirs && !strcmp(theirs, ours)))
		return true;
	if (!theirs)
		return false;
	lv__arc_index a, b;
	lv_error e = { 0 };
	if (lv__arc_index_parse(ours, "", &a, &e) < 0)
		return false;
	bool ok = lv__arc_index_parse(theirs, "", &b, &e) == 0 && b.through >= a.through;
	for (size_t i = 0; ok && i < a.n; i++)
		ok = lv__arc_index_find(&b, a.v[i].first) != NULL;
	for (size_t i = 0; ok && i < a.norphans; i++) { /* their ranges are joined: one holds ours */
		bool in = false;
		for (size_t j = 0; !in && j < b.norphans; j++)
			in = b.orphans[j][0] <= a.orphans[i][0] && a.orphans[i][1] <= b.orphans[j][1];
		ok = in;
	}
	lv__arc_index_dispose(&a);
	lv__arc_index_dispose(&b);
	return ok;
}

/* Does `theirs` (decoded, same history) already say everything `keep` (and our index) says? */
static bool covers(const lv__cp_file *theirs, const lv_version_info *keep, size_t nkeep,
		   int64_t created, const char *index)
{
	if (!theirs->rows || theirs->created != created || !index_covers(theirs->archive, index))
		return false;
	for (size_t i = 0; i < nkeep; i++) {
		const lv_version_info *o = lv__vlist_find(theirs->rows, keep[i].version);
		if (!o || (!o->is_cleaned_up && keep[i].is_cleaned_up))
			return false;
	}
	return true;
}

/* The state of a file found under the name we want: what to do about it. */
enum taken { TAKEN_SAME, TAKEN_COVERS, TAKEN_MERGE, TAKEN_DAMAGED, TAKEN_GONE };

/* Reads the file now at r.path and decides; *theirs gets its rows when it is ours to merge. */
static int judge_taken(lv__writer *w, lv__seen *s, const lv_buf *file, const lv_version_info *keep,
		       size_t nkeep, int64_t created, const char *index, lv_buf *old,
		       lv__cp_file *theirs, int *verdict, lv_error *err)
{
	lv_buf_dispose(old);
	lv__cp_file_dispose(theirs);
	int rc = lv_storage_read(w->ds->st, w->r.path, old, err);
	if (rc == LV_ENOTFOUND) {
		*verdict = TAKEN_GONE; /* pruned meanwhile: newer checkpoints exist */
		return 0;
	}
	if (rc < 0)
		return lv__err_prefix(err, rc, "%s exists but cannot be read; not replacing it",
				      w->r.path);
	if (old->size == file->size && !memcmp(old->ptr, file->ptr, file->size)) {
		*verdict = TAKEN_SAME;
		return 0;
	}
	lv_error e = { 0 };
	lv__cp_name name = { 0 };
	name.version = w->r.latest_version;
	snprintf(name.path, sizeof name.path, "%s", w->r.path);
	lv_buf copy = { 0 };
	if (lv__buf_copy(&copy, old) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	int cls;
	rc = lv__cp_try(w->ds, &name, s->live, s->nlive, true, NULL, NULL, theirs, &cls,
			&w->rep.identity_bytes, &copy, &e);
	lv_buf_dispose(&copy);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	if (rc < 0 && cls == LV__CP_UNREADABLE)
		return lv__err(err, rc, "%s exists but cannot be verified (%s); not replacing it",
			       w->r.path, e.message);
	if (rc < 0) {
		*verdict = TAKEN_DAMAGED;
		return 0;
	}
	*verdict = covers(theirs, keep, nkeep, created, index) ? TAKEN_COVERS : TAKEN_MERGE;
	return 0;
}

/* Rows of the versions only left-out segments hold, read back from them (kept in `held`). */
typedef struct gap_rows {
	lv__cp_file *held; /* the segments read */
	size_t nheld;
	lv_version_info *v; /* rows borrowed from `held`, sorted */
	size_t n;
} gap_rows;

static void gap_rows_dispose(gap_rows *g)
{
	for (size_t i = 0; i < g->nheld; i++)
		lv__cp_file_dispose(&g->held[i]);
	lv__free(g->held);
	lv__free(g->v);
	memset(g, 0, sizeof *g);
}

/* One left-out segment: the parts of its range the cover misses become orphan ranges, and its
 * rows there are read back (verified: checksum, range, identity) to stay in the head. */
static int keep_dropped(lv__writer *w, lv__arc_index *mix, const lv__seg_entry *d, int64_t created,
			gap_rows *g, lv_error *err)
{
	uint64_t(*gaps)[2] = lv__calloc(mix->n + 1, sizeof *gaps);
	if (!gaps)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t ng = lv__arc_index_uncovered(mix, d->first, d->last, gaps, mix->n + 1);
	int rc = 0;
	if (ng) {
		lv__seg_name name = { d->first, d->last, 0, "" };
		lv__seg_path(name.path, sizeof name.path, d->first, d->last);
		lv__cp_file *f = &g->held[g->nheld];
		int cls;
		rc = lv__seg_read(w->ds->st, &name, created, f, &cls, NULL, err);
		if (rc == 0)
			g->nheld++;
		for (size_t i = 0; rc == 0 && i < f->rows->n; i++) {
			uint64_t v = f->rows->items[i].version;
			for (size_t k = 0; k < ng; k++)
				if (gaps[k][0] <= v && v <= gaps[k][1])
					g->v[g->n++] = f->rows->items[i];
		}
		for (size_t k = 0; rc == 0 && k < ng; k++)
			if (lv__arc_index_orphan(mix, gaps[k][0], gaps[k][1]) < 0)
				rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	lv__free(gaps);
	return rc;
}

/* Our index with theirs folded in as one cover (cover.c); *g gets the rows of the versions
 * only left-out segments held.  *has says whether either side had an index. */
static int fold_indexes(lv__writer *w, const char *ours, const char *theirs, int64_t created,
			lv__arc_index *mix, gap_rows *g, bool *has, lv_error *err)
{
	memset(mix, 0, sizeof *mix);
	memset(g, 0, sizeof *g);
	*has = ours || theirs;
	if (!*has)
		return 0;
	lv__arc_index b;
	LV_TRY(lv__arc_index_parse(ours ? ours : theirs, w->r.path, mix, err));
	if (!ours || !theirs)
		return 0;
	int rc = lv__arc_index_parse(theirs, w->r.path, &b, err);
	if (rc < 0) {
		lv__arc_index_dispose(mix);
		return rc;
	}
	lv__seg_entry *dropped = NULL;
	size_t nd = 0;
	if (lv__arc_index_fold(mix, &b, &dropped, &nd) < 0)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	uint64_t nrows = 0;
	for (size_t i = 0; i < nd; i++)
		nrows += dropped[i].rows;
	g->held = rc == 0 ? lv__calloc(nd + 1, sizeof *g->held) : NULL;
	g->v = rc == 0 ? lv__calloc(nrows + 1, sizeof *g->v) : NULL;
	if (rc == 0 && (!g->held || !g->v))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < nd; i++)
		rc = keep_dropped(w, mix, &dropped[i], created, g, err);
	if (rc == 0)
		lv__sort_infos(g->v, g->n);
	lv__free(dropped);
	lv__arc_index_dispose(&b);
	if (rc < 0) {
		lv__arc_index_dispose(mix);
		gap_rows_dispose(g);
	}
	return rc;
}

/* Rows of a and b (sorted) merged into a new array (*out, *n); 0 or LV_ENOMEM. */
static int merge3(const lv_version_info *a, size_t na, const lv__cp_file *theirs, const gap_rows *g,
		  lv_version_info **out, size_t *n)
{
	lv_version_info *ab = NULL;
	size_t nab;
	LV_TRY(lv__cp_merge_rows(a, na, theirs->rows->items, theirs->rows->n, &ab, &nab));
	int rc = lv__cp_merge_rows(ab, nab, g->v, g->n, out, n);
	lv__free(ab);
	return rc;
}

/* TAKEN_MERGE: both files' rows (and indexes), then the name replaced atomically (under the lock). */
static int merge_into(lv__writer *w, lv__seen *s, lv_buf *file, const lv_version_info *keep,
		      size_t nkeep, const lv__cp_file *theirs, int64_t created, const char *index,
		      lv_error *err)
{
	lv__arc_index mix;
	gap_rows g;
	bool has_ix;
	LV_TRY(fold_indexes(w, index, theirs->archive, created, &mix, &g, &has_ix, err));
	lv_version_info *merged = NULL;
	size_t nm;
	if (merge3(keep, nkeep, theirs, &g, &merged, &nm) < 0) {
		lv__arc_index_dispose(&mix);
		gap_rows_dispose(&g);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nm; i++) /* liveness as of now, not as their file says */
		merged[i].is_cleaned_up = merged[i].is_cleaned_up ||
					  !lv__entries_has(s->live, s->nlive, merged[i].version) ||
					  lv__in_sorted_u64(w->cleaned, w->ncleaned, merged[i].version);
	char *ix = NULL;
	if (has_ix) {
		/* rows the archive holds leave the head, as compose does: cleaned up, sealed, no orphan */
		size_t k = 0;
		for (size_t i = 0; i < nm; i++)
			if (!(merged[i].version <= mix.through && merged[i].is_cleaned_up &&
			      !lv__arc_index_is_orphan(&mix, merged[i].version)))
				merged[k++] = merged[i];
		nm = k;
		ix = lv__arc_index_format(&mix);
		lv__arc_index_dispose(&mix);
	}
	size_t max = (size_t)w->cfg.max_entries, first = nm > max ? nm - max : 0;
	lv_buf_dispose(file);
	lv__cp_extra x = { NULL, ix };
	int rc = has_ix && !ix ? lv__err(err, LV_ENOMEM, "out of memory")
			       : lv__cp_encode_x(merged + first, nm - first, created, &x, file, err);
	lv__free(merged);
	lv__free(ix);
	gap_rows_dispose(&g);
	if (rc == 0)
		rc = lv__cp_check_publishable(file, w->r.path, created, w->r.latest_version, err);
	if (rc == 0 && (rc = lv_storage_write(w->ds->st, w->r.path, file->ptr, file->size, err)) == 0) {
		w->r.entries = nm - first;
		w->r.file_size = file->size;
	}
	return rc;
}

int lv__cp_put_head(lv__writer *w, lv__seen *s, lv_buf *file, const lv_version_info *keep, size_t nkeep,
		    int64_t created, const char *index, lv_error *err)
{
	lv_storage *st = w->ds->st;
	char lock[128] = "";
	lv_buf old = { 0 };
	lv__cp_file theirs;
	memset(&theirs, 0, sizeof theirs);
	int rc = LV_EEXISTS;
	for (int attempt = 0; rc == LV_EEXISTS && attempt < CREATE_ATTEMPTS; attempt++) {
		if ((rc = lv_storage_create(st, w->r.path, file->ptr, file->size, err)) != LV_EEXISTS)
			break;
		/* Someone wrote this name first.  Identical or covering: done.  Anything that
		 * changes the file is decided again, on what is there, under the merge lock. */
		int verdict;
		if ((rc = judge_taken(w, s, file, keep, nkeep, created, index, &old, &theirs, &verdict, err)) < 0)
			break;
		if ((verdict == TAKEN_MERGE || verdict == TAKEN_DAMAGED) && !lock[0]) {
			snprintf(lock, sizeof lock, "%s" LV__CP_LOCK_SUFFIX, w->r.path);
			if ((rc = lv__cp_lock_take(st, lock, err)) < 0) {
				lock[0] = 0;
				break;
			}
			if ((rc = judge_taken(w, s, file, keep, nkeep, created, index, &old, &theirs, &verdict,
					      err)) < 0)
				break;
		}
		if (verdict == TAKEN_SAME || verdict == TAKEN_COVERS) {
			w->r.already_present = true;
			if (verdict == TAKEN_COVERS) {
				w->r.entries = theirs.rows->n;
				w->r.file_size = old.size;
			}
			break;
		}
		if (verdict == TAKEN_DAMAGED) { /* a bad file appeared under our name: move it aside */
			lv__cp_name name = { 0 };
			snprintf(name.path, sizeof name.path, "%s", w->r.path);
			char aside[160];
			if ((rc = lv__cp_quarantine(st, &name, &old, aside, sizeof aside, err)) < 0)
				break;
			w->r.files_quarantined++;
			rc = LV_EEXISTS; /* create again */
			continue;
		}
		if (verdict == TAKEN_GONE) {
			rc = LV_EEXISTS;
			continue;
		}
		rc = merge_into(w, s, file, keep, nkeep, &theirs, created, index, err);
	}
	if (rc == LV_EEXISTS)
		rc = lv__err(err, LV_ECONFLICT, "%s: kept changing while being written", w->r.path);
	if (lock[0]) {
		lv_error e = { 0 };
		if (lv_storage_delete(st, lock, &e) < 0) {
			/* left behind: broken once stale (pruning sweeps those) */
		}
	}
	lv_buf_dispose(&old);
	lv__cp_file_dispose(&theirs);
	return rc;
}
