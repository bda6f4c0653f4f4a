/*
 * lv_checkpoint_write: every row the readable checkpoints hold, plus rows for
 * the live manifests they lack, written as the head checkpoint of the latest
 * version with create-if-absent; with the archive on, complete cells of
 * versions are sealed into segments on the way (compose.c).
 *
 * Invariants (issue 13: history is never lost):
 *  - A checkpoint that could not be decoded is never deleted, replaced or
 *    pruned: it is moved aside byte for byte (store.c, lv__cp_quarantine).
 *  - One that could not be read at all (I/O) is left where it is; while one
 *    exists nothing is pruned, and its name is never written over.
 *  - When any checkpoint was rejected, the rows of every usable one are
 *    merged, so the new file holds every row still readable anywhere.
 *  - A file is pruned only after it was read back and every row it holds is
 *    held elsewhere (prune.c).  Segments are never pruned.
 *  - What is published is decoded first, and the head is read back from the
 *    store (with the segments the versions to clean up rely on) before any
 *    prune; a caller deletes manifests only after this returned 0 (verify.c).
 *  - A manifest or checkpoint that vanishes while being read means "look
 *    again" (a concurrent cleanup), never "skip it".
 *  - Rows a caller read earlier (a capture's, lv__cp_write_captured) are
 *    written whether or not their manifests are still live: they are records
 *    like the base's, and their manifests are not read again.
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
#include "core/checkpoint/writer.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/records.h"
#include "core/vlist.h"
#include "core/warnings.h"
#include "util/abi.h"
#include "util/util.h"

typedef lv__seen seen;
typedef lv__writer writer;

static void seen_dispose(seen *s)
{
	lv__free(s->live);
	lv__cp_names_free(&s->names);
	lv__free(s->cls);
	lv__cp_file_dispose(&s->base);
	lv__seg_names_free(&s->segs);
	lv__arc_index_dispose(&s->ix);
	lv__warnlog_dispose(&s->wl);
	memset(s, 0, sizeof *s);
}

/* Is the file whose bytes are `b` still one a reader would reject as damaged or foreign? */
static int still_rejected(lv_dataset *ds, seen *s, const lv__cp_name *name, const lv_buf *b,
			  bool *rejected, uint64_t *id_bytes)
{
	lv_buf copy = { 0 };
	if (lv__buf_copy(&copy, b) < 0)
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
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
	LV_TRY(lv__cp_merge_rows(into->rows->items, into->rows->n, add->rows->items, add->rows->n, &m, &nm));
	/* The merged rows point into both lists' arenas: move add's arenas over. */
	lv_version_list *l = into->rows, *o = add->rows;
	lv__arena *ar = lv__reallocarray(l->arenas, l->narenas + o->narenas, sizeof *ar);
	if (!ar) {
		lv__free(m);
		return LV_ENOMEM;
	}
	l->arenas = ar;
	memcpy(l->arenas + l->narenas, o->arenas, o->narenas * sizeof *ar);
	l->narenas += o->narenas;
	o->narenas = 0;
	lv__free(l->items);
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

/*
 * With no usable head, the dataset_created of the history is taken from the
 * archive (lv__seg_history_created), so the head written next keeps the
 * archive's identity.
 */
static int created_from_archive(writer *w, seen *s, lv_error *err)
{
	bool found, confirmed;
	const char *which;
	uint64_t nread = 0;
	LV_TRY(lv__seg_history_created(w->ds, &s->segs, s->live, s->nlive, &s->created, &found, &confirmed,
				       &which, &nread, &w->rep.identity_bytes, err));
	s->have_created = found;
	return 0;
}

/* ---- re-adopting an identity (check --salvage, issue 24) ---- */

/* The `through` of an index text (0 if none or malformed). */
static uint64_t index_through(const char *text)
{
	lv__arc_index ix;
	lv_error e = { 0 };
	if (!text || lv__arc_index_parse(text, "", &ix, &e) < 0)
		return 0;
	uint64_t t = ix.through;
	lv__arc_index_dispose(&ix);
	return t;
}

/*
 * The base becomes every usable head's rows, whatever its dataset_created, under the adopted
 * one, with the index that reaches furthest (heads that cannot be used were classified and
 * warned about by the ladder; they are left to the quarantine as ever).
 */
static int adopt_base(writer *w, seen *s, lv_error *err)
{
	lv__cp_file_dispose(&s->base);
	for (size_t i = 0; i < s->names.n; i++) {
		lv__cp_file f;
		lv_error e = { 0 };
		int cls;
		int rc = lv__cp_try(w->ds, &s->names.v[i], s->live, s->nlive, true, NULL, NULL, &f, &cls,
				    &w->rep.identity_bytes, NULL, &e);
		if (rc == LV_ENOMEM)
			return lv__err(err, rc, "out of memory");
		if (rc < 0) {
			s->races |= cls == LV__CP_VANISHED ? LV__RACE_VANISHED : 0;
			continue;
		}
		if (s->base.rows && index_through(f.archive) > index_through(s->base.archive)) {
			char *t = s->base.archive;
			s->base.archive = f.archive;
			f.archive = t;
		}
		if ((rc = absorb(&s->base, &f)) < 0) {
			lv__cp_file_dispose(&f);
			return lv__err(err, rc, "out of memory");
		}
	}
	s->base.created = w->adopt_created;
	return 0;
}

/* One look at the dataset: manifests, checkpoints (classified), the base rows, fresh rows. */
static int gather_once(writer *w, seen *s, lv_error *err)
{
	lv_dataset *ds = w->ds;
	lv__progress_report(w->prog, "listing", 0, 0);
	if (w->listed) { /* the caller listed just before: its listing is ours, once */
		s->live = w->listed;
		s->nlive = w->nlisted;
		w->listed = NULL;
	} else {
		LV_TRY(lv__manifests_list(ds->st, &s->live, &s->nlive, err));
	}
	if (s->nlive == 0)
		return lv__not_a_dataset(ds, err);
	LV_TRY(lv__cp_list(ds->st, &s->names, err));
	if (!(s->cls = lv__calloc(s->names.n ? s->names.n : 1, sizeof *s->cls)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv_history_report *rep = &w->rep;
	LV_TRY(lv__cp_load_ladder(ds, &s->names, s->live, s->nlive, true, &s->base, rep, &s->races,
				  &s->wl, &s->max_rejected, s->cls, err));
	bool rejected = false;
	for (size_t i = 0; i < s->names.n; i++) {
		rejected |= s->cls[i] > LV__CP_USABLE && s->cls[i] != LV__CP_VANISHED;
		s->unreadable |= s->cls[i] == LV__CP_UNREADABLE;
	}
	if (rejected)
		LV_TRY(merge_other_usable(ds, s, &rep->identity_bytes, err));
	if (w->adopting)
		LV_TRY(adopt_base(w, s, err));
	for (size_t i = 0; i < s->names.n; i++)
		s->unreadable |= s->cls[i] == LV__CP_UNREADABLE;
	LV_TRY(lv__seg_list(ds->st, &s->segs, err));
	if (s->base.rows && s->base.archive)
		LV_TRY(lv__arc_index_parse(s->base.archive, s->base.path, &s->ix, err));
	if (!s->base.rows && s->segs.n)
		LV_TRY(created_from_archive(w, s, err));
	bool known = s->base.rows || s->have_created;
	return lv__seg_choose(ds->st, &s->segs, &s->ix, s->base.rows ? s->base.created : known ? s->created
									     : INT64_MIN,
			      s->live[s->nlive - 1].version, &s->wl, &w->rep.segments_read, err);
}

/* Gathers until no race is seen (bounded); fails if manifests keep vanishing. */
static int gather(writer *w, seen *s, lv_error *err)
{
	for (int attempt = 0;; attempt++) {
		seen_dispose(s);
		LV_TRY(gather_once(w, s, err));
		bool vanished = s->races & LV__RACE_VANISHED;
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
			rc = still_rejected(w->ds, s, name, &b, &rejected, &w->rep.identity_bytes);
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

/* The write proper, once the dataset has been looked at: compose, put the head, prune. */
static int write_rows(writer *w, seen *s, lv_error *err)
{
	lv__rows head;
	char *index = NULL;
	lv_buf file = { 0 };
	int rc = lv__cp_compose(w, s, &head, &index, err);
	if (rc < 0 || w->fresh_vanished)
		return rc;
	int64_t created = s->base.rows ? s->base.created : s->created;
	lv__cp_extra x = { NULL, index };
	if ((rc = lv__cp_encode_x(head.v, head.n, created, &x, &file, err)) < 0)
		goto out;
	w->r.latest_version = head.v[head.n - 1].version;
	w->r.entries = head.n;
	w->r.file_size = file.size;
	for (size_t i = 0; i < head.n; i++)
		w->r.new_entries += !s->base.rows || !lv__vlist_find(s->base.rows, head.v[i].version);
	snprintf(w->r.path, sizeof w->r.path, LV__CP_DIR "/%020" PRIu64 ".lance", w->r.latest_version);
	for (size_t i = 0; i < s->names.n; i++)
		if (s->cls[i] == LV__CP_UNREADABLE && !strcmp(s->names.v[i].path, w->r.path)) {
			rc = lv__err(err, LV_EIO, "%s cannot be read; not writing over it", w->r.path);
			goto out;
		}
	lv__progress_report(w->prog, "writing checkpoint", 0, 1);
	if ((rc = lv__cp_check_publishable(&file, w->r.path, created, w->r.latest_version, err)) < 0 ||
	    (rc = lv__cp_put_head(w, s, &file, head.v, head.n, created, index, err)) < 0)
		goto out;
	lv__progress_report(w->prog, "writing checkpoint", 1, 1);
	/* nothing is pruned, and no caller deletes, before the store is seen to hold it */
	lv__progress_report(w->prog, "verifying", 0, 1);
	if ((rc = lv__cp_verify_published(w, head.v, head.n, created, err)) < 0)
		goto out;
	lv__progress_report(w->prog, "verifying", 1, 1);
	w->r.written = true;
	if (w->r.already_present)
		w->r.new_entries = 0;
	rc = lv__cp_prune(w, s, w->cfg.max_checkpoint_files, head.v, head.n, created, err);
out:
	lv__rows_dispose(&head);
	lv__free(index);
	lv_buf_dispose(&file);
	return rc;
}

/* Config: explicit > the latest manifest's config map > defaults (the caller's row, else read). */
static int resolve(writer *w, seen *s, lv_error *err)
{
	const lv__manifest_entry *latest = &s->live[s->nlive - 1];
	char path[LV__MPATH];
	lv__mpath(latest, path);
	for (size_t i = w->npre; i-- > 0;)
		if (w->pre[i]->version == latest->version && w->pre[i]->manifest_path &&
		    !strcmp(w->pre[i]->manifest_path, path))
			return lv__cp_config_from_info(&w->cfg, w->pre[i], w->cfg_in, err);
	lv__arena a;
	lv__arena_init(&a, 1024);
	lv_version_info info;
	int rc = lv__read_version_info(w->ds->st, path, &a, &info, err);
	if (rc == 0)
		rc = lv__cp_config_from_info(&w->cfg, &info, w->cfg_in, err);
	else if (rc == LV_ENOTFOUND) /* vanished: a concurrent cleanup; gather again */
		w->fresh_vanished++, rc = 0;
	lv__arena_dispose(&a);
	return rc;
}

/* One attempt: gather, resolve, quarantine, write.  w->fresh_vanished set: try again. */
static int attempt(writer *w, seen *s, lv_error *err)
{
	w->fresh_vanished = 0;
	LV_TRY(gather(w, s, err));
	LV_TRY(resolve(w, s, err));
	if (w->fresh_vanished || !w->cfg.enabled)
		return 0;
	if (!s->base.rows && !s->have_created)
		LV_TRY(lv__cp_guard_new_identity(w, s, err));
	if (w->fresh_vanished) /* a head written since our listing: look again */
		return 0;
	LV_TRY(quarantine_rejected(w, s, err));
	return write_rows(w, s, err);
}

static void writer_reset(writer *w)
{
	for (size_t i = 0; i < w->nsealed; i++)
		lv__free(w->sealed[i].versions);
	lv__free(w->sealed);
	w->sealed = NULL;
	w->nsealed = w->capsealed = 0;
}

int lv_checkpoint_result_init(lv_checkpoint_result *r, int version)
{
	return lv__struct_init("lv_checkpoint_result", r, sizeof *r, NULL, version,
				       LV_CHECKPOINT_RESULT_VERSION, LV_CHECKPOINT_RESULT_VERSION);
}

/* The caller's result (may be NULL) and the report it points to: versions this library writes. */
static int result_check(const lv_checkpoint_result *r, lv_error *err)
{
	if (!r)
		return 0;
	LV_TRY(lv__struct_version("lv_checkpoint_result", r->version, LV_CHECKPOINT_RESULT_VERSION,
				  LV_CHECKPOINT_RESULT_VERSION, err));
	return lv__report_check(r->report, err);
}

/* Writes the fields of dst's version (1: all), keeping its version and report pointer. */
static void result_put(lv_checkpoint_result *dst, const lv_checkpoint_result *src,
		       const lv_history_report *rep)
{
	if (!dst)
		return;
	int v = dst->version;
	lv_history_report *r = dst->report;
	*dst = *src;
	dst->version = v;
	dst->report = r;
	lv__report_put(r, rep);
}

static int write_run(writer *w, lv_dataset *ds, const lv_checkpoint_config *cfg_in,
		     const uint64_t *cleaned_in, size_t ncleaned, const lv_version_info *const *pre,
		     size_t npre, const lv_version_info *extra, size_t nextra, bool captured,
		     lv__recorded *rec, const int64_t *adopt, lv__progress *prog,
		     lv_checkpoint_result *res, lv_error *err)
{
	if (!ds || (npre && !pre) || (ncleaned && !cleaned_in))
		return lv__err(err, LV_EINVALID, "lv_checkpoint_write: NULL argument");
	LV_TRY(result_check(res, err));
	w->ds = ds;
	w->cfg_in = cfg_in;
	w->pre = pre;
	w->npre = npre;
	w->extra = extra;
	w->nextra = nextra;
	w->captured = captured;
	w->rec = rec;
	w->adopting = adopt != NULL;
	w->adopt_created = adopt ? *adopt : 0;
	lv__progress own; /* the config's callback, unless the caller reports for the whole run */
	lv__cp_config_progress(cfg_in, &own);
	w->prog = prog ? prog : &own;
	uint64_t *cleaned = ncleaned ? lv__calloc(ncleaned, sizeof *cleaned) : NULL;
	if (ncleaned && !cleaned)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (ncleaned) {
		memcpy(cleaned, cleaned_in, ncleaned * sizeof *cleaned);
		qsort(cleaned, ncleaned, sizeof *cleaned, cmp_u64);
	}
	w->cleaned = cleaned;
	w->ncleaned = ncleaned;
	lv_storage_stats s0;
	lv__report_begin(ds, &w->rep, &s0);
	seen s;
	memset(&s, 0, sizeof s);
	int rc = 0;
	for (int n = 0; rc == 0; n++) {
		writer_reset(w);
		rc = attempt(w, &s, err);
		if (rc < 0 || !w->fresh_vanished)
			break;
		seen_dispose(&s);
		if (n == LV__RACE_RETRIES) /* a head written now could lack versions a cleanup removed */
			rc = lv__err(err, LV_ECONFLICT,
				     "checkpoint: manifests kept vanishing while being read (%d attempts; "
				     "concurrent cleanups?); no head written", n + 1);
	}
	writer_reset(w);
	if (rc == 0) {
		lv__report_end(ds, &w->rep, &s0);
		/* the checkpoint is in place: a retry finds it (already_present) */
		rc = lv__warn_commit_all(ds, &s.wl, &w->rep.warnings, err);
		if (rc == 0)
			result_put(res, &w->r, &w->rep);
	}
	seen_dispose(&s);
	lv__free(cleaned);
	return rc;
}

/* `listed` (may be NULL): the caller's listing of _versions/, taken over (emptied) here. */
static int write_with(lv_dataset *ds, const lv_checkpoint_config *cfg_in, const uint64_t *cleaned_in,
		      size_t ncleaned, const lv_version_info *const *pre, size_t npre,
		      const lv_version_info *extra, size_t nextra, bool captured, lv__recorded *rec,
		      const int64_t *adopt, lv__progress *prog, lv__cp_listing *listed,
		      lv_checkpoint_result *res, lv_error *err)
{
	writer w;
	memset(&w, 0, sizeof w);
	if (listed) {
		w.listed = listed->v;
		w.nlisted = listed->n;
		listed->v = NULL;
		listed->n = 0;
	}
	int rc = write_run(&w, ds, cfg_in, cleaned_in, ncleaned, pre, npre, extra, nextra, captured,
			   rec, adopt, prog, res, err);
	lv__free(w.listed); /* not taken: no gather ran */
	return rc;
}
int lv__cp_write_pre(lv_dataset *ds, const lv_checkpoint_config *cfg_in,
			     const uint64_t *cleaned_in, size_t ncleaned,
			     const lv_version_info *const *pre, size_t npre, lv__progress *prog,
			     lv__cp_listing *listed, lv_checkpoint_result *res, lv_error *err)
{
	return write_with(ds, cfg_in, cleaned_in, ncleaned, pre, npre, NULL, 0, false, NULL, NULL, prog,
			  listed, res, err);
}

int lv__cp_write_extra(lv_dataset *ds, const lv_checkpoint_config *cfg,
			       const lv_version_info *extra, size_t nextra, lv__progress *prog,
			       lv_checkpoint_result *res, lv_error *err)
{
	return write_with(ds, cfg, NULL, 0, NULL, 0, extra, nextra, false, NULL, NULL, prog, NULL, res, err);
}

int lv__cp_write_adopt(lv_dataset *ds, const lv_checkpoint_config *cfg, int64_t created,
			       lv_checkpoint_result *res, lv_error *err)
{
	return write_with(ds, cfg, NULL, 0, NULL, 0, NULL, 0, false, NULL, &created, NULL, NULL, res, err);
}

int lv__cp_write_captured(lv_dataset *ds, const lv_checkpoint_config *cfg, const lv_version_info *rows,
			  size_t n, lv__recorded *rec, lv_checkpoint_result *res, lv_error *err)
{
	if (n && !rows)
		return lv__err(err, LV_EINVALID, "lv_checkpoint_write: NULL argument");
	/* the rows are also `pre`: the config is taken from the newest one when it is the latest */
	const lv_version_info **pre = lv__calloc(n ? n : 1, sizeof *pre);
	if (!pre)
		return lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		pre[i] = &rows[i];
	int rc = write_with(ds, cfg, NULL, 0, pre, n, rows, n, true, rec, NULL, NULL, NULL, res, err);
	lv__free(pre);
	return rc;
}

int lv_checkpoint_write(lv_dataset *ds, const lv_checkpoint_config *cfg_in, const uint64_t *cleaned_in,
			size_t ncleaned, lv_checkpoint_result *res, lv_error *err)
{
	lv__progress prog;
	lv__cp_config_progress(cfg_in, &prog);
	int rc = lv__cp_write_pre(ds, cfg_in, cleaned_in, ncleaned, NULL, 0, &prog, NULL, res, err);
	if (rc == 0)
		lv__progress_report(&prog, "done", 1, 1);
	return rc;
}
