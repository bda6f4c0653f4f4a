/*
 * lv_versions() and lv_version_get().  lv_versions(): where the rows come from.  The newest usable head checkpoint
 * (the ladder) plus the manifests it lacks; with no usable checkpoint, every
 * manifest.  When more than LV__TAIL_UPFRONT live versions are older than the
 * head's rows and the head has an archive (a dataset never cleaned up: their
 * rows were sealed into segments), the answer is the live rows of the history
 * stream (history.c), which reads those segments, one at a time, instead of
 * every manifest they cover (issue 30 §2).
 *
 * On an object store the live manifests newer than the newest listed
 * checkpoint (its name gives its version) are read while the ladder reads
 * that checkpoint: one round trip instead of two (issue 30 §4).  They are used
 * only if the checkpoint used lacks exactly them; else the tail is read as
 * before (the early reads wasted, never trusted).
 *
 * Invariants:
 *  - Liveness is never taken from a checkpoint: a covered version is live iff
 *    its manifest is listed now; readers OR is_cleaned_up with "manifest gone".
 *  - Only the final attempt of a call that retried after a race records
 *    warnings.
 */
#include "lancever/checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/ladder.h"
#include "core/checkpoint/store.h"
#include "core/dataset.h"
#include "core/hplan.h"
#include "core/manifests.h"
#include "core/records.h"
#include "core/vcache.h"
#include "core/vlist.h"
#include "core/warnings.h"
#include "core/refs.h"
#include "format/manifest.h"
#include "util/util.h"
/* ---- assembling versions / history ---- */

/* The first round is hplan.c's (lv__round1): _versions/, _checkpoints/ and the refs'
 * directories listed at once on an object store; the refs' files are read in round 2. */
typedef lv__round1 round1;

static void warn_vanished(lv__warnlog *wl, const lv_version_list *l)
{
	for (size_t i = 0; i < l->nvanished; i++)
		lv__warn(wl, LV_WARN_MANIFEST_VANISHED, l->vanished[i], 0, 0,
			 "manifest %s vanished while being read (a concurrent cleanup?); skipped",
			 l->vanished[i]);
}

/* The manifest path of live entry e, in l's arena (lv__mpath_after: from the previous
 * entry's path, 10,000 rows at a time).  NULL when out of memory. */
static const char *live_path(lv__arena *a, const lv__manifest_entry *e, const lv__manifest_entry *pe,
			     const char *prev)
{
	char *mp = lv__arena_alloc(a, e->scheme == LV_NAME_V2 ? LV__MPATH_V2 : LV__MPATH);
	return mp ? lv__mpath_after(e, pe, prev, mp) : NULL;
}

/* How many live manifests have no row in l (both sorted by version). */
static size_t count_tail(const lv_version_list *l, const lv__manifest_entry *live, size_t nlive)
{
	size_t li = 0, matched = 0;
	for (size_t i = 0; i < l->n && li < nlive; i++) {
		uint64_t v = l->items[i].version;
		while (li < nlive && live[li].version < v)
			li++;
		if (li < nlive && live[li].version == v) {
			matched++;
			li++;
		}
	}
	return nlive - matched;
}

/*
 * One merge walk over the two sorted sequences (the checkpoint's rows and the
 * live manifests): a row is live iff its manifest is listed (its path is
 * filled in from the listing); a live manifest without a row goes to `tail`.
 * The rows are filtered in place (versions() keeps live ones only).
 */
static int walk(lv_version_list *l, const lv__manifest_entry *live, size_t nlive, bool history,
		lv__manifest_entry *tail, size_t *ntail)
{
	size_t li = 0, w = 0;
	const lv__manifest_entry *pe = NULL; /* the last live entry given a path, and its path */
	const char *prev = NULL;
	*ntail = 0;
	for (size_t i = 0; i < l->n; i++) {
		lv_version_info *v = &l->items[i]; /* changed in place, moved down when rows were dropped */
		while (li < nlive && live[li].version < v->version)
			tail[(*ntail)++] = live[li++];
		bool is_live = li < nlive && live[li].version == v->version;
		if (is_live) {
			if (!(v->manifest_path = live_path(&l->arenas[0], &live[li], pe, prev)))
				return LV_ENOMEM;
			pe = &live[li++];
			prev = v->manifest_path;
		} else if (!history) {
			continue;
		}
		v->is_cleaned_up = !is_live;
		v->is_tagged = false;
		if (w != i)
			l->items[w] = *v;
		w++;
	}
	l->n = w;
	while (li < nlive)
		tail[(*ntail)++] = live[li++];
	if (*ntail == 0)
		return 0;
	/* room for the tail's rows and one arena per tail manifest */
	lv_version_info *items = lv__reallocarray(l->items, l->n + *ntail, sizeof *items);
	if (!items)
		return LV_ENOMEM;
	l->items = items;
	lv__arena *arenas = lv__reallocarray(l->arenas, l->narenas + *ntail, sizeof *arenas);
	if (!arenas)
		return LV_ENOMEM;
	l->arenas = arenas;
	return 0;
}

/* The live manifests newer than the newest listed checkpoint, read early (remote only). */
typedef struct prefetch {
	lv_dataset *ds;
	const lv__manifest_entry *live; /* the tail: live[0..n) */
	size_t n;
	lv_version_list *l;             /* what was read (NULL: nothing, or it failed) */
} prefetch;

static void prefetch_run(prefetch *pf)
{
	const char **paths = NULL;
	char *block = NULL;
	lv_error e = { 0 };
	pf->l = lv__version_list_new(pf->n, pf->n);
	int rc = pf->l ? lv__mpaths(pf->live, pf->n, &paths, &block) : LV_ENOMEM;
	if (rc == 0)
		rc = lv__read_into_list(pf->l, pf->ds->st, pf->ds->threads, paths, pf->n, &e);
	lv__free(paths);
	lv__free(block);
	if (rc < 0) { /* the regular read meets the error again and reports it */
		lv_version_list_free(pf->l);
		pf->l = NULL;
	}
}

/* Moves the prefetched rows into l when they are exactly the tail walk() found (same
 * versions); l has room for them (walk() grew it by ntail).  True if it did. */
static bool prefetch_take(prefetch *pf, lv_version_list *l, const lv__manifest_entry *tail,
			  size_t ntail, int *rc)
{
	if (!pf || !pf->l || pf->n != ntail)
		return false;
	for (size_t i = 0; i < ntail; i++)
		if (pf->live[i].version != tail[i].version)
			return false;
	lv_version_list *p = pf->l;
	memcpy(l->items + l->n, p->items, p->n * sizeof *p->items);
	l->n += p->n;
	memcpy(l->arenas + l->narenas, p->arenas, p->narenas * sizeof *p->arenas);
	l->narenas += p->narenas;
	p->n = p->narenas = 0; /* the rows and their strings are l's now */
	for (size_t i = 0; i < p->nvanished && *rc == 0; i++)
		*rc = lv__add_vanished(l, p->vanished[i]);
	return true;
}

/* The checkpoint's rows (taken over: its list and string arena become the answer) plus the
 * live manifests it lacks, read now (or early: `pf`, may be NULL). */
static int from_checkpoint(lv_dataset *ds, bool history, lv__cp_file *cp, const round1 *r1,
			   prefetch *pf, lv_history_report *rep, lv_version_list **out, lv_error *err)
{
	lv_version_list *l = cp->rows;
	cp->rows = NULL;
	size_t nt = count_tail(l, r1->live, r1->nlive); /* usually none: no 10,000-entry array */
	lv__manifest_entry *tail = lv__malloc((nt ? nt : 1) * sizeof *tail);
	size_t ntail = 0;
	const char **paths = NULL;
	char *block = NULL;
	int rc = tail ? walk(l, r1->live, r1->nlive, history, tail, &ntail) : LV_ENOMEM;
	bool early = rc == 0 && prefetch_take(pf, l, tail, ntail, &rc);
	if (rc == 0 && !early)
		rc = lv__mpaths(tail, ntail, &paths, &block);
	if (rc < 0)
		rc = lv__err(err, rc, "out of memory");
	if (rc == 0 && !early)
		rc = lv__read_into_list(l, ds->st, ds->threads, paths, ntail, err);
	lv__free(tail);
	lv__free(paths);
	lv__free(block);
	if (rc < 0) {
		lv_version_list_free(l);
		return rc;
	}
	rep->manifests_read += ntail;
	rep->manifests_vanished += l->nvanished;
	lv__sort_infos(l->items, l->n);
	rc = lv__mark_tags_with(ds, r1->refs, &r1->err[LV__R1_REFS], l->items, l->n, rep, err);
	if (rc < 0) {
		lv_version_list_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

/* Lists the first round into r1; 0 or the first error.  `answered`: the cache holds an
 * answer, whose lookup needs the listing's checkpoint sizes and times and reads the refs
 * itself; otherwise the refs are listed here and the newest checkpoint's size and time come
 * from its read (versions_once). */
static int round1_run(lv_dataset *ds, round1 *r1, bool answered, const lv_storage_stats *s0,
		      lv_error *err)
{
	lv__round1_run(r1, ds, !answered, false, !answered);
	r1->s0 = *s0;
	int k = r1->rc[LV__R1_LIVE] < 0 ? LV__R1_LIVE : LV__R1_NAMES;
	if (r1->rc[k] < 0 && err)
		*err = r1->err[k];
	return r1->rc[k];
}

/* How many live versions are older than the head's oldest row (their rows, if any, are in
 * the archive's segments). */
static size_t archived_live(const round1 *r1, const lv__cp_file *cp)
{
	uint64_t first = cp->rows->n ? cp->rows->items[0].version : cp->latest + 1;
	return lv__lower_bound_u64(r1->live, r1->nlive, sizeof *r1->live,
				   offsetof(lv__manifest_entry, version), first);
}

/* The second round: the ladder, the refs' files and, on an object store, the early read of
 * the tail, at once. */
typedef struct ladder_job {
	lv_dataset *ds;
	round1 *r1;
	lv__cp_file *cp;
	lv_history_report *rep;
	int *races;
	lv__warnlog *wl;
	uint64_t *max_rejected;
	lv_error *err;
	int rc;
	prefetch pf;
	int job[3]; /* what each item of the round is (JOB_*) */
	size_t njobs;
} ladder_job;

enum { JOB_LADDER, JOB_REFS, JOB_TAIL };

static void ladder_job_run(size_t i, void *arg)
{
	ladder_job *j = arg;
	if (j->job[i] == JOB_TAIL) {
		prefetch_run(&j->pf);
		return;
	}
	if (j->job[i] == JOB_REFS) {
		lv__round1_refs_read(j->r1);
		return;
	}
	j->rc = lv__cp_load_ladder(j->ds, &j->r1->names, j->r1->live, j->r1->nlive, false, j->cp,
				   j->rep, j->races, j->wl, j->max_rejected, NULL, j->err);
}

/* On an object store, with a checkpoint listed: the live manifests newer than the newest
 * one (at most LV__TAIL_UPFRONT of them) are the early read's. */
static void early_tail(ladder_job *j)
{
	const round1 *r1 = j->r1;
	j->pf.ds = j->ds;
	if (!j->ds->remote || !r1->names.n || r1->names.v[0].version == UINT64_MAX)
		return;
	uint64_t v = r1->names.v[0].version;
	size_t k = lv__lower_bound_u64(r1->live, r1->nlive, sizeof *r1->live,
				       offsetof(lv__manifest_entry, version), v + 1);
	if (k < r1->nlive && r1->nlive - k <= LV__TAIL_UPFRONT) {
		j->pf.live = r1->live + k;
		j->pf.n = r1->nlive - k;
	}
}

/* One versions() pass over the first round's listings (a vanished manifest is no longer
 * live: no retry).  *clean: from the newest checkpoint, nothing vanished or rejected.
 * *archived: nothing answered, the history stream should (archived_live over the bound). */
static int versions_once(lv_dataset *ds, round1 *r1, lv_version_list **out, lv_history_report *rep,
			 lv__warnlog *wl, bool *clean, bool *archived, lv_error *err)
{
	lv__cp_file cp;
	memset(&cp, 0, sizeof cp);
	lv_version_list *l = NULL;
	uint64_t max_rejected = 0;
	int races = 0;
	ladder_job lj = { ds, r1, &cp, rep, &races, wl, &max_rejected, err, 0, { 0 }, { 0 }, 0 };
	early_tail(&lj);
	lj.job[lj.njobs++] = JOB_LADDER;
	if (r1->listed && !r1->refs)
		lj.job[lj.njobs++] = JOB_REFS;
	if (lj.pf.n)
		lj.job[lj.njobs++] = JOB_TAIL;
	/* on local disk only the early tail is worth a thread (early_tail: remote only) */
	lv__parallel_for(lj.njobs, ds->remote ? 3 : 1, ladder_job_run, &lj);
	lv__warn_refs(wl, r1->refs);
	int rc = lj.rc;
	if (rc == 0 && cp.rows && r1->cp_unstamped && rep->rung == LV_RUNG_NEWEST_CHECKPOINT) {
		/* the cache's key for this answer: the file as its read saw it (0: not known, and
		 * then the answer is never served again: vcache.c) */
		r1->names.v[0].size = cp.file_size;
		r1->names.v[0].mtime_ms = cp.file_mtime_ms;
	}
	*archived = rc == 0 && cp.rows && cp.archive && archived_live(r1, &cp) > LV__TAIL_UPFRONT;
	if (*archived) {
		lv_version_list_free(lj.pf.l);
		lv__cp_file_dispose(&cp);
		return 0;
	}
	if (rc == 0 && cp.rows) {
		rc = from_checkpoint(ds, false, &cp, r1, &lj.pf, rep, &l, err);
	} else if (rc == 0 && r1->nlive == 0) {
		rc = lv__not_a_dataset(ds, err);
	} else if (rc == 0) {
		rc = lv__versions_from_manifests(&l, ds, r1->live, r1->nlive, r1->refs,
						 &r1->err[LV__R1_REFS], rep, err);
		rep->rung = LV_RUNG_MANIFESTS;
	}
	lv_version_list_free(lj.pf.l); /* what from_checkpoint did not take */
	if (rc == 0)
		warn_vanished(wl, l);
	*clean = rc == 0 && rep->rung == LV_RUNG_NEWEST_CHECKPOINT && !l->nvanished && !wl->n &&
		 r1->refs;
	if (rc == 0) { /* the refs is_tagged came from go with the answer (lv_version_list_refs) */
		l->refs = r1->refs;
		r1->refs = NULL;
		*out = l;
	}
	lv__cp_file_dispose(&cp);
	return rc;
}

int lv_versions(lv_version_list **out, lv_dataset *ds, lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_versions: NULL argument");
	*out = NULL;
	LV_TRY(lv__report_check(report, err));
	lv_history_report rep;
	lv_storage_stats s0;
	lv__report_begin(ds, &rep, &s0);
	bool cache = lv__vcache_enter(ds);
	bool answered = cache && ds->vcache->answer; /* worth a look: the refs are then digested */
	round1 r1;
	uint64_t refs_sig = 0;
	lv_error se = { 0 };
	int rc = round1_run(ds, &r1, answered, &s0, err);
	bool served = false;
	if (rc == 0 && cache && !answered && r1.rc[LV__R1_REFS] == 0 && r1.listed) {
		/* a first call: the refs were just listed; the tags' digest keys the answer */
		refs_sig = lv__refs_listing_sig(r1.listed);
	} else if (rc == 0 && cache && lv__vcache_refs_sig(ds, &refs_sig, &se) < 0) {
		lv__vcache_leave(ds);
		cache = false;
	} else if (rc == 0 && answered && r1.names.n) {
		served = lv__vcache_lookup(ds, &r1.names.v[0], r1.live, r1.nlive, refs_sig, out, &rep) == 1;
	}
	if (served) {
		lv__report_end(ds, &rep, &s0);
		lv__report_put(report, &rep);
		if (cache)
			lv__vcache_leave(ds);
		lv__round1_dispose(&r1);
		return 0;
	}
	if (rc == 0 && answered) /* the refs were not read: read them now */
		r1.rc[LV__R1_REFS] = lv__refs_load_lenient(&r1.refs, ds->root, ds->remote ? ds->threads : 1,
							   &r1.err[LV__R1_REFS]);
	lv__warnlog wl = { 0 };
	bool clean = false, archived = false;
	if (rc == 0)
		rc = versions_once(ds, &r1, out, &rep, &wl, &clean, &archived, err);
	if (rc == 0 && archived) { /* the history stream answers (its own report and warnings), from
				    * this call's listings (taken over: nothing is listed twice) */
		lv__warnlog_dispose(&wl);
		if (cache)
			lv__vcache_leave(ds);
		lv_history_report hrep = LV_HISTORY_REPORT_INIT;
		rc = lv__history_live_list_from(out, ds, &r1, &hrep, err);
		if (rc == 0)
			lv__report_put(report, &hrep);
		return rc;
	}
	if (rc == 0) {
		lv__report_end(ds, &rep, &s0);
		if ((rc = lv__warn_commit_all(ds, &wl, &rep.warnings, err)) < 0) {
			lv_version_list_free(*out);
			*out = NULL;
		}
	}
	if (rc == 0) {
		if (cache && clean)
			lv__vcache_store(ds, &r1.names.v[0], r1.live, r1.nlive, refs_sig, out, &rep);
		lv__report_put(report, &rep);
	}
	lv__warnlog_dispose(&wl);
	if (cache)
		lv__vcache_leave(ds);
	lv__round1_dispose(&r1);
	return rc;
}

/* One live version by number: its manifest read (V2 name, then V1), is_tagged marked. */
int lv_version_get(lv_version_list **out, lv_dataset *ds, uint64_t version, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_version_get: NULL argument");
	*out = NULL;
	lv_version_list *l = lv__version_list_new(1, 1);
	if (!l)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv__arena_init(&l->arenas[0], 1024);
	l->narenas = 1;
	char path[64];
	int rc = LV_ENOTFOUND;
	static const int schemes[2] = { LV_NAME_V2, LV_NAME_V1 };
	for (int s = 0; s < 2 && rc == LV_ENOTFOUND; s++) {
		lv__version_path(path, sizeof path, version, schemes[s]);
		rc = lv__read_version_info(ds->st, path, &l->arenas[0], &l->items[0], err);
	}
	if (rc == LV_ENOTFOUND)
		rc = lv__err(err, LV_ENOTFOUND, "version %llu not found", (unsigned long long)version);
	if (rc < 0) {
		lv_version_list_free(l);
		return rc;
	}
	l->n = 1;
	if ((rc = lv__mark_tags(ds, l->items, 1, NULL, err)) < 0) {
		lv_version_list_free(l);
		return rc;
	}
	*out = l;
	return 0;
}
