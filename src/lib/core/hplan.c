/*
 * The plan of a history answer (see hplan.h).
 *
 * Invariants:
 *  - The plan is made before any row is handed out, so a race with a
 *    concurrent writer (a head pruned, a manifest gone) is met by looking
 *    again, never by skipping what was missed.
 *  - A segment is used only if it decodes, names its range, carries this
 *    history's dataset_created, does not reach past the latest version and
 *    agrees with the head's copies of its rows; otherwise it is a warning
 *    and its range is reported by whoever reads it.
 *  - A segment the head's index names but the listing lacks is looked for
 *    once more (it may have been written after the listing), then reported
 *    missing.
 *  - The segments read are chosen from the listing by lv__seg_choose: what the
 *    head's index names takes precedence, and a stray file (unindexed and
 *    overlapping it, or invalid where segments overlap) is a warning that
 *    hides nothing; so the ranges read never shadow an indexed segment.
 */
#include "core/hplan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/identity.h"
#include "core/checkpoint/ladder.h"
#include "core/vlist.h"
#include "core/refs.h"
#include "storage/stamped.h"
#include "util/util.h"

/* ---- the first round, shared with versions() ---- */

static void round1_job(size_t i, void *arg)
{
	lv__round1 *r = arg;
	lv_dataset *ds = r->ds;
	if (i == LV__R1_LIVE)
		r->rc[i] = lv__manifests_list(ds->st, &r->live, &r->nlive, &r->err[i]);
	else if (i == LV__R1_NAMES)
		r->rc[i] = r->cp_unstamped ? lv__cp_list_names(ds->st, &r->names, &r->err[i])
					   : lv__cp_list(ds->st, &r->names, &r->err[i]);
	else if (i == LV__R1_REFS)
		r->rc[i] = lv__refs_list(&r->listed, ds->root, ds->remote ? ds->threads : 1, &r->err[i]);
	else
		r->rc[i] = lv__seg_list(ds->st, &r->segs, &r->err[i]);
}

void lv__round1_run(lv__round1 *r, lv_dataset *ds, bool refs, bool segs, bool stamped_cp)
{
	memset(r, 0, sizeof *r);
	r->ds = ds;
	r->segs_listed = segs;
	r->cp_unstamped = stamped_cp && lv__storage_reads_stamped(ds->st);
	size_t n = segs ? 4 : refs ? 3 : 2; /* items in LV__R1_* order (segs: refs too) */
	lv__parallel_for(n, ds->remote ? n : 1, round1_job, r);
}

void lv__round1_refs_read(lv__round1 *r)
{
	if (!r->listed || r->refs)
		return;
	r->rc[LV__R1_REFS] = lv__refs_read_listed(&r->refs, r->listed, true, &r->err[LV__R1_REFS]);
	lv__refs_listing_free(r->listed);
	r->listed = NULL;
}

void lv__round1_dispose(lv__round1 *r)
{
	lv__free(r->live);
	lv__cp_names_free(&r->names);
	lv__seg_names_free(&r->segs);
	lv__refs_listing_free(r->listed);
	lv_refs_free(r->refs);
	memset(r, 0, sizeof *r);
}

/* The second round of a plan: the ladder (item 0) and the listed refs' files (item 1). */
typedef struct round2 {
	lv__hplan *p;
	lv__round1 *r1;
	int ladder_rc;
	lv_error *ladder_err;
} round2;

static void round2_job(size_t i, void *arg)
{
	round2 *r = arg;
	lv__hplan *p = r->p;
	if (i == 1) {
		lv__round1_refs_read(r->r1);
		return;
	}
	r->ladder_rc = lv__cp_load_ladder(p->ds, &p->names, p->live, p->nlive, true, &p->head, &p->rep,
					  &p->races, &p->wl, &p->max_rejected, NULL, r->ladder_err);
}

void lv__hplan_dispose(lv__hplan *p)
{
	lv__free(p->live);
	lv__cp_names_free(&p->names);
	lv__seg_names_free(&p->segs);
	lv_refs_free(p->refs);
	lv__cp_file_dispose(&p->head);
	lv__arc_index_dispose(&p->ix);
	lv__free(p->tail);
	lv_version_list_free(p->tail_rows);
	lv__free(p->missing);
	lv__warnlog_dispose(&p->wl);
	lv_dataset *ds = p->ds;
	lv_history_report rep = p->rep;
	memset(p, 0, sizeof *p);
	p->ds = ds;
	p->rep = rep;
}

bool lv__hplan_live(const lv__hplan *p, uint64_t v, char *path)
{
	size_t i = lv__lower_bound_u64(p->live, p->nlive, sizeof *p->live,
				       offsetof(lv__manifest_entry, version), v);
	bool live = i < p->nlive && p->live[i].version == v;
	if (path && live)
		lv__mpath(&p->live[i], path);
	return live;
}

/* With no usable head: the history's dataset_created from the archive (said so when no live
 * manifest confirms it). */
static int created_from_segments(lv__hplan *p, lv_error *err)
{
	bool found, confirmed;
	const char *which;
	LV_TRY(lv__seg_history_created(p->ds, &p->segs, p->live, p->nlive, &p->created, &found, &confirmed,
				       &which, &p->rep.segments_read, &p->rep.identity_bytes, err));
	p->have_created = found;
	if (found && !confirmed)
		lv__warn(&p->wl, LV_WARN_ANSWER_UNCERTAIN, which, 0, 0,
			 "no usable head checkpoint: the archive's segments (newest %s) are used as "
			 "this dataset's history without a head or a live manifest to confirm them", which);
	return 0;
}

/* Index entries whose segment the listing lacks: looked for once more, else missing. */
static int find_missing(lv__hplan *p, lv_error *err)
{
	for (size_t i = 0; i < p->ix.n; i++) {
		const lv__seg_entry *e = &p->ix.v[i];
		const lv__seg_name *s = lv__seg_find(&p->segs, e->first);
		if (s && s->first == e->first && s->last == e->last)
			continue;
		char path[80];
		lv__seg_path(path, sizeof path, e->first, e->last);
		lv_error he = { 0 };
		uint64_t size = 0;
		int rc = lv_storage_head(p->ds->st, path, &size, NULL, &he);
		if (rc < 0 && rc != LV_ENOTFOUND)
			return lv__err(err, rc, "%s", he.message);
		if (rc == 0) { /* written after the listing: use it */
			lv__seg_name *nv = lv__grow(p->segs.v, &p->segs.cap, p->segs.n, sizeof *nv, 16);
			if (!nv)
				return lv__err(err, LV_ENOMEM, "out of memory");
			p->segs.v = nv;
			size_t at = 0;
			while (at < p->segs.n && p->segs.v[at].first < e->first)
				at++;
			memmove(nv + at + 1, nv + at, (p->segs.n - at) * sizeof *nv);
			nv[at] = (lv__seg_name){ e->first, e->last, size, "" };
			snprintf(nv[at].path, sizeof nv[at].path, "%s", path);
			p->segs.n++;
			continue;
		}
		lv__seg_entry *nm = lv__reallocarray(p->missing, p->nmissing + 1, sizeof *nm);
		if (!nm)
			return lv__err(err, LV_ENOMEM, "out of memory");
		p->missing = nm;
		nm[p->nmissing++] = *e;
		lv__warn(&p->wl, LV_WARN_SEGMENT_MISSING, path, e->first, e->last,
			 "segment %s is missing (the head's index records %" PRIu64 " rows of versions %" PRIu64
			 "-%" PRIu64 " in it)", path, e->rows, e->first, e->last);
	}
	return 0;
}

int lv__hplan_read_tail(lv__hplan *p, size_t from, size_t n, lv_version_list *l, lv_error *err)
{
	const char **paths = lv__calloc(n ? n : 1, sizeof *paths);
	char *block = lv__malloc((n ? n : 1) * LV__MPATH);
	int rc = paths && block ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++)
		paths[i] = lv__mpath(p->tail[from + i], block + i * LV__MPATH);
	if (rc == 0)
		rc = lv__read_into_list(l, p->ds->st, p->ds->threads, paths, n, err);
	lv__free(paths);
	lv__free(block);
	return rc;
}

/* Live versions that no head row holds and that lie beyond the archive; read now if few. */
static int plan_tail(lv__hplan *p, lv_error *err)
{
	uint64_t through = p->ix.through;
	for (size_t i = 0; !p->head.rows && i < p->segs.n; i++) /* no head: the archive's end */
		through = p->segs.v[i].last > through ? p->segs.v[i].last : through;
	p->through = through;
	if (!(p->tail = lv__calloc(p->nlive ? p->nlive : 1, sizeof *p->tail)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->nlive; i++)
		if (p->live[i].version > through &&
		    !(p->head.rows && lv__vlist_find(p->head.rows, p->live[i].version)))
			p->tail[p->ntail++] = &p->live[i];
	if (p->ntail > LV__TAIL_UPFRONT)
		return 0; /* read a chunk at a time while streaming */
	p->tail_rows = lv__version_list_new(p->ntail, p->ntail);
	if (!p->tail_rows)
		return lv__err(err, LV_ENOMEM, "out of memory");
	int rc = lv__hplan_read_tail(p, 0, p->ntail, p->tail_rows, err);
	p->rep.manifests_read += p->ntail;
	p->rep.manifests_vanished += p->tail_rows->nvanished;
	if (rc == 0)
		lv__sort_infos(p->tail_rows->items, p->tail_rows->n);
	return rc;
}

/* The first round's listings: a versions() call's (`seed`, taken over, with only the archive
 * listed now) or made here. */
static int plan_round1(lv__hplan *p, lv__round1 *seed, lv__round1 *r1, lv_error *err)
{
	lv_dataset *ds = p->ds;
	if (seed) {
		*r1 = *seed;
		memset(seed, 0, sizeof *seed);
		if (!r1->segs_listed)
			r1->rc[LV__R1_SEGS] = lv__seg_list(ds->st, &r1->segs, &r1->err[LV__R1_SEGS]);
		r1->segs_listed = true;
	} else {
		lv__round1_run(r1, ds, true, true, false);
	}
	static const int must[3] = { LV__R1_LIVE, LV__R1_NAMES, LV__R1_SEGS };
	for (int k = 0; k < 3; k++) {
		int i = must[k];
		if (r1->rc[i] < 0) {
			if (err)
				*err = r1->err[i];
			int rc = r1->rc[i];
			lv__round1_dispose(r1);
			return rc;
		}
	}
	/* the listings are the plan's now */
	p->live = r1->live;
	p->nlive = r1->nlive;
	p->names = r1->names;
	p->segs = r1->segs;
	r1->live = NULL;
	r1->nlive = 0;
	memset(&r1->names, 0, sizeof r1->names);
	memset(&r1->segs, 0, sizeof r1->segs);
	return 0;
}

static int load_once(lv__hplan *p, lv__round1 *seed, lv_error *err)
{
	lv_dataset *ds = p->ds;
	lv__round1 r1;
	LV_TRY(plan_round1(p, seed, &r1, err));
	round2 r2 = { p, &r1, 0, err };
	bool refs = r1.listed && !r1.refs;
	lv__parallel_for(refs ? 2 : 1, ds->remote ? 2 : 1, round2_job, &r2);
	int refs_rc = r1.rc[LV__R1_REFS];
	lv_error refs_err = r1.err[LV__R1_REFS];
	p->refs = r1.refs;
	r1.refs = NULL;
	lv__round1_dispose(&r1);
	if (refs_rc == LV_ENOMEM) { /* tags that could not be read are a warning; no memory is not */
		if (err)
			*err = refs_err;
		return LV_ENOMEM;
	}
	if (refs_rc < 0) {
		lv_refs_free(p->refs);
		p->refs = NULL;
		p->refs_err = refs_err;
	}
	lv__warn_refs(&p->wl, p->refs);
	LV_TRY(r2.ladder_rc);
	if (p->head.rows) {
		p->have_created = true;
		p->created = p->head.created;
		if (p->head.archive)
			LV_TRY(lv__arc_index_parse(p->head.archive, p->head.path, &p->ix, err));
	} else if (p->segs.n) {
		LV_TRY(created_from_segments(p, err));
	}
	if (p->nlive == 0 && !p->head.rows)
		return lv__not_a_dataset(ds, err);
	LV_TRY(lv__seg_choose(ds->st, &p->segs, &p->ix, p->have_created ? p->created : INT64_MIN,
			      p->nlive ? p->live[p->nlive - 1].version : 0, &p->wl, &p->rep.segments_read,
			      err));
	LV_TRY(find_missing(p, err));
	return plan_tail(p, err);
}

int lv__hplan_load(lv_dataset *ds, lv__hplan *p, lv_error *err)
{
	return lv__hplan_load_from(ds, p, NULL, err);
}

int lv__hplan_load_from(lv_dataset *ds, lv__hplan *p, lv__round1 *seed, lv_error *err)
{
	lv_history_report rep = p->rep;
	for (int attempt = 0;; attempt++) {
		lv__hplan_dispose(p);
		p->ds = ds;
		p->rep = rep;
		int rc = load_once(p, attempt ? NULL : seed, err); /* a retry lists afresh */
		if (rc < 0) {
			lv__hplan_dispose(p);
			return rc;
		}
		bool again = (p->races & LV__RACE_VANISHED) || (p->tail_rows && p->tail_rows->nvanished) ||
			     ((p->races & LV__RACE_AHEAD) && attempt == 0);
		if (!again || attempt == LV__RACE_RETRIES)
			break;
	}
	if (p->tail_rows)
		for (size_t i = 0; i < p->tail_rows->nvanished; i++)
			lv__warn(&p->wl, LV_WARN_MANIFEST_VANISHED, p->tail_rows->vanished[i], 0, 0,
				 "manifest %s vanished while being read (a concurrent cleanup?); skipped",
				 p->tail_rows->vanished[i]);
	return 0;
}

/* Do the head's copies of this segment's rows say the same (same commit, same transaction)? */
static bool agrees_with_head(const lv__hplan *p, const lv__cp_file *f, uint64_t *bad)
{
	if (!p->head.rows)
		return true;
	for (size_t i = 0; i < f->rows->n; i++) {
		const lv_version_info *a = &f->rows->items[i];
		const lv_version_info *b = lv__vlist_find(p->head.rows, a->version);
		if (b && (a->timestamp_millis != b->timestamp_millis ||
			  (!a->transaction_uuid) != (!b->transaction_uuid) ||
			  (a->transaction_uuid && strcmp(a->transaction_uuid, b->transaction_uuid)))) {
			*bad = a->version;
			return false;
		}
	}
	return true;
}

int lv__hplan_segment_fetch(const lv__hplan *p, const lv__seg_name *name, lv__cp_file *f, lv_error *e)
{
	int cls;
	return lv__seg_read(p->ds->st, name, p->have_created ? p->created : INT64_MIN, f, &cls, NULL, e);
}

int lv__hplan_segment_accept(lv__hplan *p, const lv__seg_name *name, int rc, lv__cp_file *f,
			     lv_error *e, lv__warnlog *wl)
{
	uint64_t latest = p->nlive ? p->live[p->nlive - 1].version : 0, bad = 0;
	if (rc == LV_ENOMEM)
		return rc;
	p->rep.segments_read++;
	if (rc == 0 && f->latest > latest)
		rc = lv__err(e, LV_ECONFLICT, "segment %s records version %" PRIu64 " but the dataset's "
			     "latest is %" PRIu64 " (another history)", name->path, f->latest, latest);
	else if (rc == 0 && !agrees_with_head(p, f, &bad))
		rc = lv__err(e, LV_ECONFLICT, "segment %s: version %" PRIu64 " differs from the head "
			     "checkpoint's record of it (another history)", name->path, bad);
	if (rc < 0) {
		lv__cp_file_dispose(f);
		lv__warn(wl, LV_WARN_CHECKPOINT_REJECTED, name->path, 0, 0, "segment %s rejected: %s",
			 name->path, e->message);
	}
	return rc;
}

int lv__hplan_read_segment(lv__hplan *p, const lv__seg_name *name, lv__cp_file *f, lv__warnlog *wl,
			   lv_error *err)
{
	lv_error e = { 0 };
	int rc = lv__hplan_segment_fetch(p, name, f, &e);
	rc = lv__hplan_segment_accept(p, name, rc, f, &e, wl);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	if (rc < 0 && err)
		*err = e;
	return rc;
}

int lv__hplan_start(lv_dataset *ds, lv__hplan *p, lv_storage_stats *s0, lv_error *err)
{
	return lv__hplan_start_from(ds, p, s0, NULL, err);
}

int lv__hplan_start_from(lv_dataset *ds, lv__hplan *p, lv_storage_stats *s0, lv__round1 *seed,
			 lv_error *err)
{
	memset(p, 0, sizeof *p);
	lv__report_begin(ds, &p->rep, s0);
	if (seed)
		*s0 = seed->s0; /* the requests of the seed's round count too */
	int rc = lv__hplan_load_from(ds, p, seed, err);
	if (seed)
		lv__round1_dispose(seed); /* what a failure or a retry left of it */
	return rc;
}
