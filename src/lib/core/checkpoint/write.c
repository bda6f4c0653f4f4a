/*
 * lv_checkpoint_write: every row the readable checkpoints hold, plus rows for
 * the live manifests they lack, written as the checkpoint of the latest
 * version with create-if-absent.
 *
 * Invariants (issue 13: history is never lost):
 *  - A checkpoint that could not be decoded is never deleted, replaced or
 *    pruned: it is moved aside byte for byte (store.c, lv__cp_quarantine).
 *  - One that could not be read at all (I/O) is left where it is; while one
 *    exists nothing is pruned, and its name is never written over.
 *  - When any checkpoint was rejected, the rows of every usable one are
 *    merged, so the new file holds every row still readable anywhere.
 *  - A file is pruned only after it was read back and every row it holds is
 *    in the file written (or older than that file's first row: max_entries).
 *  - A manifest or checkpoint that vanishes while being read means "list
 *    again" (a concurrent cleanup), never "skip it".
 */
#include "lancever/checkpoint.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/checkpoint/codec.h"
#include "core/checkpoint/config.h"
#include "core/checkpoint/identity.h"
#include "core/checkpoint/ladder.h"
#include "core/checkpoint/store.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/versions.h"
#include "core/vlist.h"
#include "core/warnings.h"
#include "util/util.h"

/* A name taken by a file that is not ours is looked at again this many times. */
#define CREATE_ATTEMPTS 4

/* What one attempt saw of the dataset. */
typedef struct seen {
	lv_manifest_entry *live;
	size_t nlive;
	lv__cp_names names;
	int *cls;             /* per names.v: enum lv__cp_class, -1 = not tried */
	lv__cp_file base;     /* rows of every usable checkpoint (merged), or of none */
	lv_version_list *fresh; /* rows read for live versions the base lacks */
	bool unreadable;      /* a checkpoint could not be read: prune nothing */
	int races;
	lv__warnlog wl;
	uint64_t max_rejected;
} seen;

static void seen_dispose(seen *s)
{
	free(s->live);
	lv__cp_names_free(&s->names);
	free(s->cls);
	lv__cp_file_dispose(&s->base);
	lv_version_list_free(s->fresh);
	lv__warnlog_dispose(&s->wl);
	memset(s, 0, sizeof *s);
}

/* One write's inputs and results. */
typedef struct writer {
	lv_dataset *ds;
	const lv_checkpoint_config *cfg_in;
	const uint64_t *cleaned; /* sorted */
	size_t ncleaned;
	const lv_version_info *const *pre; /* rows built by the caller, sorted by version */
	size_t npre;
	const lv_version_info *extra; /* salvaged rows (lv__checkpoint_write_extra), sorted */
	size_t nextra;
	lv_checkpoint_result r;
} writer;

/* A copy of `b` (lv__cp_try consumes the bytes it is handed). */
static int buf_copy(lv_buf *out, const lv_buf *b)
{
	uint8_t *p = lv__malloc(b->size + 1);
	if (!p)
		return LV_ENOMEM;
	memcpy(p, b->ptr, b->size);
	p[b->size] = 0;
	out->ptr = p;
	out->size = b->size;
	return 0;
}

/* Is the file whose bytes are `b` still one a reader would reject as damaged or foreign? */
static int still_rejected(lv_dataset *ds, seen *s, const lv__cp_name *name, const lv_buf *b,
			  bool *rejected, uint64_t *id_bytes)
{
	lv_buf copy = { 0 };
	if (buf_copy(&copy, b) < 0)
		return LV_ENOMEM;
	lv__cp_file f;
	lv_error e = { 0 };
	int cls;
	int rc = lv__cp_try(ds, name, s->live, s->nlive, true, NULL, NULL, &f, &cls, id_bytes, &copy, &e);
	lv__cp_file_dispose(&f);
	if (rc == LV_ENOMEM)
		return rc;
	*rejected = rc < 0 && (cls == LV__CP_DAMAGED || cls == LV__CP_FOREIGN);
	return 0;
}

static bool in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i = lv__lower_bound_u64(v, n, sizeof *v, 0, x);
	return i < n && v[i] == x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Union of two sorted row sets: rows of `a` win for immutable fields, flags are OR-ed. */
static int merge_rows(const lv_version_info *a, size_t na, const lv_version_info *b, size_t nb,
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

/* Adds the rows of `add` to `into` (a decoded file whose list owns its strings). */
static int absorb(lv__cp_file *into, lv__cp_file *add)
{
	if (!into->rows) {
		*into = *add;
		memset(add, 0, sizeof *add);
		return 0;
	}
	lv_version_info *m;
	size_t nm;
	LV_TRY(merge_rows(into->rows->items, into->rows->n, add->rows->items, add->rows->n, &m, &nm));
	/* The merged rows point into both lists' arenas: move add's arenas over. */
	lv_version_list *l = into->rows, *o = add->rows;
	lv_arena *ar = lv__reallocarray(l->arenas, l->narenas + o->narenas, sizeof *ar);
	if (!ar) {
		free(m);
		return LV_ENOMEM;
	}
	l->arenas = ar;
	memcpy(l->arenas + l->narenas, o->arenas, o->narenas * sizeof *ar);
	l->narenas += o->narenas;
	o->narenas = 0;
	free(l->items);
	l->items = m;
	l->n = nm;
	if (add->latest > into->latest)
		into->latest = add->latest;
	lv__cp_file_dispose(add);
	return 0;
}

/*
 * After a rejection: every other checkpoint file is read, and the rows of the
 * usable ones (same dataset_created) are merged into s->base.
 */
static int merge_other_usable(lv_dataset *ds, seen *s, uint64_t *id_bytes, lv_error *err)
{
	for (size_t i = 0; i < s->names.n; i++) {
		if (s->cls[i] != -1)
			continue;
		lv__cp_file f;
		lv_error e = { 0 };
		int cls;
		int rc = lv__cp_try(ds, &s->names.v[i], s->live, s->nlive, true, NULL, NULL, &f, &cls,
				    id_bytes, NULL, &e);
		if (rc == LV_ENOMEM)
			return lv__err(err, rc, "out of memory");
		s->cls[i] = cls;
		if (rc < 0) {
			if (cls == LV__CP_VANISHED)
				s->races |= LV__RACE_VANISHED;
			else
				lv__warn(&s->wl, LV_WARN_CHECKPOINT_REJECTED, s->names.v[i].path, 0, 0,
					 "checkpoint %s rejected: %s", s->names.v[i].path, e.message);
			continue;
		}
		if (s->base.rows && f.created != s->base.created) {
			lv__cp_file_dispose(&f); /* another incarnation of the dataset */
			continue;
		}
		if ((rc = absorb(&s->base, &f)) < 0) {
			lv__cp_file_dispose(&f);
			return lv__err(err, rc, "out of memory");
		}
	}
	return 0;
}

/* The row of `pre` (sorted by version) for this version and manifest file, or NULL. */
static const lv_version_info *pre_row(const writer *w, uint64_t version, const char *path)
{
	size_t lo = 0, hi = w->npre;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->pre[mid]->version < version)
			lo = mid + 1;
		else
			hi = mid;
	}
	const lv_version_info *p = lo < w->npre ? w->pre[lo] : NULL;
	return p && p->version == version && p->manifest_path && !strcmp(p->manifest_path, path) ? p
												 : NULL;
}

/* Rows for the live versions the base lacks: the caller's, else read now (concurrently). */
static int read_fresh(writer *w, seen *s, lv_error *err)
{
	lv_dataset *ds = w->ds;
	const char **paths = lv__calloc(s->nlive, sizeof *paths);
	/* Room for every live version; pages of slots never written are never touched. */
	s->fresh = lv__version_list_new(s->nlive, s->nlive);
	if (!paths || !s->fresh) {
		free(paths);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	size_t nread = 0;
	for (size_t i = 0; i < s->nlive; i++) {
		if (s->base.rows && lv__vlist_find(s->base.rows, s->live[i].version))
			continue;
		const lv_version_info *p = pre_row(w, s->live[i].version, s->live[i].path);
		if (p)
			s->fresh->items[s->fresh->n++] = *p; /* its strings stay the caller's */
		else
			paths[nread++] = s->live[i].path;
	}
	int rc = lv__read_into_list(s->fresh, ds->st, ds->threads, paths, nread, err);
	free(paths);
	w->r.report.manifests_read += nread;
	w->r.report.manifests_vanished += s->fresh->nvanished;
	if (rc == 0)
		lv__sort_infos(s->fresh->items, s->fresh->n);
	return rc;
}

/* One look at the dataset: manifests, checkpoints (classified), the base rows, fresh rows. */
static int gather_once(writer *w, seen *s, lv_error *err)
{
	lv_dataset *ds = w->ds;
	LV_TRY(lv__list_manifests(ds->st, &s->live, &s->nlive, err));
	if (s->nlive == 0)
		return lv__not_a_dataset(ds, err);
	LV_TRY(lv__cp_list(ds->st, &s->names, err));
	if (!(s->cls = lv__calloc(s->names.n ? s->names.n : 1, sizeof *s->cls)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv_history_report *rep = &w->r.report;
	LV_TRY(lv__cp_load_ladder(ds, &s->names, s->live, s->nlive, true, &s->base, rep, &s->races,
				  &s->wl, &s->max_rejected, s->cls, err));
	bool rejected = false;
	for (size_t i = 0; i < s->names.n; i++) {
		rejected |= s->cls[i] > LV__CP_USABLE && s->cls[i] != LV__CP_VANISHED;
		s->unreadable |= s->cls[i] == LV__CP_UNREADABLE;
	}
	if (rejected)
		LV_TRY(merge_other_usable(ds, s, &rep->identity_bytes, err));
	for (size_t i = 0; i < s->names.n; i++)
		s->unreadable |= s->cls[i] == LV__CP_UNREADABLE;
	return read_fresh(w, s, err);
}

/* Gathers until no race is seen (bounded); fails if manifests keep vanishing. */
static int gather(writer *w, seen *s, lv_error *err)
{
	for (int attempt = 0;; attempt++) {
		seen_dispose(s);
		LV_TRY(gather_once(w, s, err));
		bool vanished = s->fresh->nvanished || (s->races & LV__RACE_VANISHED);
		bool ahead = (s->races & LV__RACE_AHEAD) && attempt == 0;
		if (!vanished && !ahead)
			return 0;
		if (attempt == LV__RACE_RETRIES) {
			if (!vanished)
				return 0;
			/* A file written now could lack versions a cleanup just removed. */
			return lv__err(err, LV_ECONFLICT,
				       "checkpoint: manifests kept vanishing while being read (%d attempts; "
				       "concurrent cleanups?); nothing written",
				       attempt + 1);
		}
	}
}

/* Moves each damaged or foreign checkpoint aside (its name becomes free). */
static int quarantine_rejected(writer *w, seen *s, lv_error *err)
{
	for (size_t i = 0; i < s->names.n; i++) {
		if (s->cls[i] != LV__CP_DAMAGED && s->cls[i] != LV__CP_FOREIGN)
			continue;
		const lv__cp_name *name = &s->names.v[i];
		lv_buf b = { 0 };
		lv_error e = { 0 };
		int rc = lv_storage_read(w->ds->st, name->path, &b, &e);
		if (rc == LV_ENOTFOUND)
			continue; /* moved aside by a concurrent writer */
		char aside[160];
		bool rejected = true;
		if (rc == 0)
			rc = still_rejected(w->ds, s, name, &b, &rejected, &w->r.report.identity_bytes);
		if (rc == 0 && !rejected) { /* replaced by a good file meanwhile */
			lv_buf_dispose(&b);
			continue;
		}
		if (rc == 0)
			rc = lv__cp_quarantine(w->ds->st, name, &b, aside, sizeof aside, &e);
		lv_buf_dispose(&b);
		if (rc == LV_ENOMEM)
			return lv__err(err, rc, "out of memory");
		if (rc < 0) { /* left in place: nothing is pruned, its name never written over */
			s->unreadable = true;
			lv__warn(&s->wl, LV_WARN_CHECKPOINT_REJECTED, name->path, 0, 0,
				 "checkpoint %s could not be moved aside: %s", name->path, e.message);
			continue;
		}
		w->r.files_quarantined++;
		lv__warn(&s->wl, LV_WARN_CHECKPOINT_DAMAGED, aside, 0, 0,
			 "checkpoint %s could not be used; kept as %s (never deleted)", name->path, aside);
	}
	return 0;
}

/* The rows to write: base + fresh, flags refreshed, properties wrapped; `props` owns the texts. */
static int build_rows(writer *w, seen *s, lv_version_info **rows, size_t *nrows, char ***props,
		      lv_error *err)
{
	size_t nb = s->base.rows ? s->base.rows->n : 0;
	if (merge_rows(nb ? s->base.rows->items : NULL, nb, s->fresh->items, s->fresh->n, rows, nrows) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (w->nextra) { /* salvaged rows fill only versions nothing readable holds */
		lv_version_info *with;
		size_t nwith;
		if (merge_rows(*rows, *nrows, w->extra, w->nextra, &with, &nwith) < 0)
			return lv__err(err, LV_ENOMEM, "out of memory");
		free(*rows);
		*rows = with;
		*nrows = nwith;
	}
	if (*nrows == 0)
		return lv__err(err, LV_ENOTFOUND, "nothing to checkpoint: every manifest vanished");
	if (!(*props = lv__calloc(*nrows, sizeof **props)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; i < *nrows; i++) {
		lv_version_info *v = &(*rows)[i];
		v->is_cleaned_up = v->is_cleaned_up || !lv__entries_has(s->live, s->nlive, v->version) ||
				   in_sorted(w->cleaned, w->ncleaned, v->version);
		v->is_tagged = false;
		v->has_manifest_details = false; /* checkpoint rows carry only the 15 columns */
		const char *p = v->transaction_properties ? v->transaction_properties : "{}";
		if (!((*props)[i] = lv_properties_truncate(p, LV_PROPERTIES_LIMIT)))
			return lv__err(err, LV_ENOMEM, "out of memory");
		v->transaction_properties = (*props)[i];
	}
	lv__mark_tags(w->ds, *rows, *nrows, &w->r.report);
	return 0;
}

/* Does `theirs` (decoded, same history) already say everything `keep` says? */
static bool covers(const lv__cp_file *theirs, const lv_version_info *keep, size_t nkeep,
		   int64_t created)
{
	if (!theirs->rows || theirs->created != created)
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
static int judge_taken(writer *w, seen *s, const lv_buf *file, const lv_version_info *keep,
		       size_t nkeep, int64_t created, lv_buf *old, lv__cp_file *theirs, int *verdict,
		       lv_error *err)
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
	if (buf_copy(&copy, old) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	int cls;
	rc = lv__cp_try(w->ds, &name, s->live, s->nlive, true, NULL, NULL, theirs, &cls,
			&w->r.report.identity_bytes, &copy, &e);
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
	*verdict = covers(theirs, keep, nkeep, created) ? TAKEN_COVERS : TAKEN_MERGE;
	return 0;
}

/* Writes `file` under r.path: create-if-absent, else settle with the file found there. */
static int put_file(writer *w, seen *s, lv_buf *file, const lv_version_info *keep, size_t nkeep,
		    int64_t created, size_t max_entries, lv_error *err)
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
		if ((rc = judge_taken(w, s, file, keep, nkeep, created, &old, &theirs, &verdict, err)) < 0)
			break;
		if ((verdict == TAKEN_MERGE || verdict == TAKEN_DAMAGED) && !lock[0]) {
			snprintf(lock, sizeof lock, "%s" LV__CP_LOCK_SUFFIX, w->r.path);
			if ((rc = lv__cp_lock_take(st, lock, err)) < 0) {
				lock[0] = 0;
				break;
			}
			if ((rc = judge_taken(w, s, file, keep, nkeep, created, &old, &theirs, &verdict,
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
		/* TAKEN_MERGE: both files' rows, then replace (atomically) under the lock. */
		lv_version_info *merged = NULL;
		size_t nm;
		if ((rc = merge_rows(keep, nkeep, theirs.rows->items, theirs.rows->n, &merged, &nm)) < 0) {
			lv__err(err, rc, "out of memory");
			break;
		}
		size_t first = nm > max_entries ? nm - max_entries : 0;
		lv_buf_dispose(file);
		rc = lv__cp_encode(merged + first, nm - first, created, file, err);
		free(merged);
		if (rc == 0 && (rc = lv_storage_write(st, w->r.path, file->ptr, file->size, err)) == 0) {
			w->r.entries = nm - first;
			w->r.file_size = file->size;
		}
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

/* May the checkpoint `f` go, given the file written holds `rows` (sorted)? */
static bool prunable(const lv__cp_file *f, const lv_version_info *rows, size_t n, int64_t created)
{
	if (f->created != created)
		return false;
	for (size_t i = 0; i < f->rows->n; i++) {
		uint64_t v = f->rows->items[i].version;
		size_t k = lv__lower_bound_u64(rows, n, sizeof *rows, offsetof(lv_version_info, version), v);
		if ((k >= n || rows[k].version != v) && v > rows[0].version)
			return false; /* a row ours lacks (not one max_entries dropped) */
	}
	return true;
}

/*
 * Keeps the newest `keep` checkpoints (ours among them); each older one is
 * read first and deleted only if ours holds every row it holds; a damaged one
 * is moved aside instead.  Nothing is pruned while a checkpoint is unreadable.
 */
static int prune_old(writer *w, seen *s, int64_t keep, const lv_version_info *rows, size_t n,
		     int64_t created, lv_error *err)
{
	if (s->unreadable)
		return 0;
	lv__cp_names names;
	LV_TRY(lv__cp_list(w->ds->st, &names, err));
	lv__cp_sweep_stale_locks(w->ds->st);
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
				&w->r.report.identity_bytes, NULL, &e);
		if (rc == 0 && prunable(&f, rows, n, created)) {
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
	lv__cp_names_free(&names);
	return rc;
}

/* Versions in [first row (1 on main), latest] the written file has no row for: warnings. */
static void note_gaps(writer *w, seen *s, const lv_version_info *rows, size_t n)
{
	uint64_t next = w->ds->branch ? rows[0].version : 1;
	for (size_t i = 0; i <= n; i++) {
		uint64_t v = i < n ? rows[i].version : next;
		if (v > next) {
			char range[64];
			lv__format_range(range, sizeof range, next, v - 1);
			lv__warn(&s->wl, LV_WARN_HISTORY_GAP, NULL, next, v - 1,
				 "%s: no record in the checkpoint written (no readable file held them%s)",
				 range, next < rows[0].version ? ", or max_entries trimmed them" : "");
			w->r.unrecorded_versions += v - next;
		}
		if (i < n && v >= next)
			next = v + 1;
	}
}

/* The write proper, once the dataset has been looked at. */
static int write_rows(writer *w, seen *s, const lv_checkpoint_config *cfg, lv_error *err)
{
	lv_version_info *rows = NULL;
	char **props = NULL;
	size_t nrows = 0;
	lv_buf file = { 0 };
	int rc = build_rows(w, s, &rows, &nrows, &props, err);
	if (rc < 0)
		goto out;
	int64_t created = s->base.rows ? s->base.created : rows[0].timestamp_millis;
	size_t first = nrows > (size_t)cfg->max_entries ? nrows - (size_t)cfg->max_entries : 0;
	const lv_version_info *keep = rows + first;
	size_t nkeep = nrows - first;
	if ((rc = lv__cp_encode(keep, nkeep, created, &file, err)) < 0)
		goto out;
	w->r.latest_version = keep[nkeep - 1].version;
	w->r.entries = nkeep;
	w->r.file_size = file.size;
	for (size_t i = 0; i < nkeep; i++)
		w->r.new_entries += !s->base.rows || !lv__vlist_find(s->base.rows, keep[i].version);
	snprintf(w->r.path, sizeof w->r.path, LV__CP_DIR "/%020" PRIu64 ".lance", w->r.latest_version);
	for (size_t i = 0; i < s->names.n; i++)
		if (s->cls[i] == LV__CP_UNREADABLE && !strcmp(s->names.v[i].path, w->r.path)) {
			rc = lv__err(err, LV_EIO, "%s cannot be read; not writing over it", w->r.path);
			goto out;
		}
	if ((rc = put_file(w, s, &file, keep, nkeep, created, (size_t)cfg->max_entries, err)) < 0)
		goto out;
	w->r.written = true;
	if (w->r.already_present)
		w->r.new_entries = 0;
	note_gaps(w, s, keep, nkeep);
	rc = prune_old(w, s, cfg->max_checkpoint_files, keep, nkeep, created, err);
out:
	for (size_t i = 0; props && i < nrows; i++)
		free(props[i]);
	free(props);
	free(rows);
	lv_buf_dispose(&file);
	return rc;
}

/* Config: explicit > the latest manifest's config map > defaults. */
static int resolve(writer *w, seen *s, lv_checkpoint_config *cfg, lv_error *err)
{
	const lv_version_info *latest = s->fresh->n ? &s->fresh->items[s->fresh->n - 1] : NULL;
	if (latest && latest->version == s->live[s->nlive - 1].version)
		return lv__cp_config_from_info(cfg, latest, w->cfg_in, err);
	return lv_checkpoint_config_resolve(cfg, w->ds, w->cfg_in, err);
}

static int write_with(lv_dataset *ds, const lv_checkpoint_config *cfg_in, const uint64_t *cleaned_in,
		      size_t ncleaned, const lv_version_info *const *pre, size_t npre,
		      const lv_version_info *extra, size_t nextra, lv_checkpoint_result *res,
		      lv_error *err)
{
	if (!ds || (npre && !pre) || (ncleaned && !cleaned_in))
		return lv__err(err, LV_EINVALID, "lv_checkpoint_write: NULL argument");
	writer w;
	memset(&w, 0, sizeof w);
	w.ds = ds;
	w.cfg_in = cfg_in;
	w.pre = pre;
	w.npre = npre;
	w.extra = extra;
	w.nextra = nextra;
	uint64_t *cleaned = ncleaned ? lv__calloc(ncleaned, sizeof *cleaned) : NULL;
	if (ncleaned && !cleaned)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (ncleaned) {
		memcpy(cleaned, cleaned_in, ncleaned * sizeof *cleaned);
		qsort(cleaned, ncleaned, sizeof *cleaned, cmp_u64);
	}
	w.cleaned = cleaned;
	w.ncleaned = ncleaned;
	lv_storage_stats s0;
	lv__report_begin(ds, &w.r.report, &s0);
	seen s;
	memset(&s, 0, sizeof s);
	lv_checkpoint_config cfg;
	int rc = gather(&w, &s, err);
	if (rc == 0)
		rc = resolve(&w, &s, &cfg, err);
	if (rc == 0 && cfg.enabled)
		rc = quarantine_rejected(&w, &s, err);
	if (rc == 0 && cfg.enabled)
		rc = write_rows(&w, &s, &cfg, err);
	if (rc == 0) {
		lv__report_end(ds, &w.r.report, &s0);
		w.r.report.warnings = lv__warn_commit(ds, &s.wl);
		if (res)
			*res = w.r;
	}
	seen_dispose(&s);
	free(cleaned);
	return rc;
}

int lv__checkpoint_write_pre(lv_dataset *ds, const lv_checkpoint_config *cfg_in,
			     const uint64_t *cleaned_in, size_t ncleaned,
			     const lv_version_info *const *pre, size_t npre, lv_checkpoint_result *res,
			     lv_error *err)
{
	return write_with(ds, cfg_in, cleaned_in, ncleaned, pre, npre, NULL, 0, res, err);
}

int lv__checkpoint_write_extra(lv_dataset *ds, const lv_checkpoint_config *cfg,
			       const lv_version_info *extra, size_t nextra, lv_checkpoint_result *res,
			       lv_error *err)
{
	return write_with(ds, cfg, NULL, 0, NULL, 0, extra, nextra, res, err);
}

int lv_checkpoint_write(lv_dataset *ds, const lv_checkpoint_config *cfg_in, const uint64_t *cleaned_in,
			size_t ncleaned, lv_checkpoint_result *res, lv_error *err)
{
	return lv__checkpoint_write_pre(ds, cfg_in, cleaned_in, ncleaned, NULL, 0, res, err);
}
