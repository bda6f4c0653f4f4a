/*
 * lv_expire(): manifest-only expiry (upstream Lance's expire_versions).
 *
 * Phases:
 *   1. refs      tags and branches, strictly (an unreadable one aborts)
 *   2. record    a checkpoint of every version (reads only the manifests no
 *                checkpoint covers), so every live version has a row
 *   3. times     each live version's commit time: from the head's rows, else
 *                from the segment that holds it, else (newer than any
 *                checkpoint) from the manifest read by the plan
 *   4. select    cleanup's conditions, then thinning (one per window)
 *   5. mark      a checkpoint marking the selected versions cleaned up
 *   6. delete    the selected manifests, nothing else (rate limited)
 *
 * Invariants:
 *  - No manifest a checkpoint covers is read (its commit time comes from the
 *    checkpoint); nothing is deleted before history recording the versions
 *    to go has been written.
 *  - Never expired: the latest version, a tagged version, a branch's base, a
 *    version committed after the listing, a version whose commit time could
 *    not be read (a warning names it) when a condition needs it.
 *  - Only manifests are deleted: data files are a later cleanup's.
 */
#include "lancever/cleanup.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/cleanup/cleanup_int.h"
#include "core/hplan.h"
#include "core/vlist.h"
#include "core/refs.h"
#include "util/abi.h"

/* One live version: its manifest, commit time, and fate. */
typedef struct ver {
	uint64_t version;
	int64_t ts;
	bool known;    /* ts read from a record */
	bool expire;
	int scheme;
} ver;

typedef struct exp {
	lv_dataset *ds;
	const lv_expire_policy *pol;
	int64_t now, older;
	lv_refs *refs;
	lv__hplan plan;
	ver *v;
	size_t n, nexp;
	uint64_t hint; /* the version hint's N: no manifest >= N is expired (UINT64_MAX: none) */
	lv_cleanup_stats s;
	lv__warnlog wl;
	lv__progress prog; /* the policy's on_progress, rate-limited */
} exp;

/* The policy's callback at a bounded rate (util/progress.h). */
static void progress(exp *E, const char *phase, uint64_t done, uint64_t total)
{
	lv__progress_report(&E->prog, phase, done, total);
}

static int check_policy(lv_dataset *ds, const lv_expire_policy *p, const lv_cleanup_stats *stats,
			lv_error *err)
{
	if (!ds || !p)
		return lv__err(err, LV_EINVALID, "lv_expire: NULL argument");
	LV_TRY(lv__struct_version("lv_expire_policy", p->version, LV_EXPIRE_POLICY_VERSION,
				  LV_EXPIRE_POLICY_VERSION, err));
	LV_TRY(lv__stats_check(stats, err));
	if (ds->branch)
		return lv__err(err, LV_EUNSUPPORTED, "expiry on a branch is not supported (expire main)");
	if (p->older_than_ms < -1 || p->retain_versions == 0 || p->retain_versions < -1 ||
	    p->keep_one_per_ms == 0 || p->keep_one_per_ms < -1 || !(p->delete_rate_limit >= 0))
		return lv__err(err, LV_EINVALID, "expire: invalid policy (older_than >= 0, retain_versions >= 1, "
			       "keep_one_per > 0, delete_rate_limit >= 0)");
	return 0;
}

/* 3. Commit times: head rows, then the segments holding the rest, then the plan's manifests. */
static int times(exp *E, lv_error *err)
{
	lv__hplan *p = &E->plan;
	if (!(E->v = lv__calloc(p->nlive ? p->nlive : 1, sizeof *E->v)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	E->n = p->nlive;
	for (size_t i = 0; i < p->nlive; i++) {
		ver *v = &E->v[i];
		v->version = p->live[i].version;
		v->scheme = p->live[i].scheme;
		const lv_version_info *r = p->head.rows ? lv__vlist_find(p->head.rows, v->version) : NULL;
		if (!r && p->tail_rows)
			r = lv__vlist_find(p->tail_rows, v->version);
		if (r)
			*v = (ver){ v->version, r->timestamp_millis, true, false, v->scheme };
	}
	/* a long tail of manifests no checkpoint covers (a dry run): read a chunk at a time */
	for (size_t t = 0; !p->tail_rows && t < p->ntail; t += LV__TAIL_CHUNK) {
		size_t n = p->ntail - t < LV__TAIL_CHUNK ? p->ntail - t : LV__TAIL_CHUNK;
		lv_version_list *l = lv__version_list_new(n, n);
		int rc = l ? lv__hplan_read_tail(p, t, n, l, err) : lv__err(err, LV_ENOMEM, "out of memory");
		for (size_t i = 0; rc == 0 && i < l->n; i++) {
			size_t k = lv__lower_bound_u64(E->v, E->n, sizeof *E->v, offsetof(ver, version),
						       l->items[i].version);
			if (k < E->n && E->v[k].version == l->items[i].version)
				E->v[k].ts = l->items[i].timestamp_millis, E->v[k].known = true;
		}
		lv_version_list_free(l);
		LV_TRY(rc);
		progress(E, "reading manifests", t + n, p->ntail);
	}
	/* versions only the archive records: each segment needed is read once (steps: the
	 * versions walked so far) */
	bool read_any = false;
	for (size_t i = 0; i < E->n;) {
		if (E->v[i].known) {
			i++;
			continue;
		}
		const lv__seg_name *name = lv__seg_find(&p->segs, E->v[i].version);
		uint64_t last = name ? name->last : E->v[i].version;
		lv__cp_file f;
		int rc = name ? lv__hplan_read_segment(p, name, &f, &E->wl, err) : LV_ENOTFOUND;
		if (rc == LV_ENOMEM)
			return rc;
		for (; i < E->n && E->v[i].version <= last; i++) {
			const lv_version_info *r = rc == 0 ? lv__vlist_find(f.rows, E->v[i].version) : NULL;
			if (r) {
				E->v[i].ts = r->timestamp_millis;
				E->v[i].known = true;
			}
			if (!E->v[i].known)
				lv__warn(&E->wl, LV_WARN_HISTORY_GAP, NULL, E->v[i].version, E->v[i].version,
					 "version %" PRIu64 ": no record of its commit time; it is not expired",
					 E->v[i].version);
		}
		if (rc == 0)
			lv__cp_file_dispose(&f);
		progress(E, "reading segments", i, E->n);
		read_any = true;
	}
	if (read_any)
		progress(E, "reading segments", E->n, E->n);
	return 0;
}

static bool branch_base(const lv_refs *refs, uint64_t v)
{
	for (size_t b = 0; b < lv_refs_branch_count(refs); b++) {
		const lv_branch *br = lv_refs_branch(refs, b);
		if ((!br->parent_branch || !strcmp(br->parent_branch, "main")) && br->parent_version == v)
			return true;
	}
	return false;
}

/* Tags on version v of main, worded as cleanup words them; how many. */
static size_t tags_on(const lv_refs *refs, uint64_t v, lv__dbuf *msg)
{
	size_t n = 0;
	for (size_t t = 0; t < lv_refs_tag_count(refs); t++) {
		const lv_tag *tg = lv_refs_tag(refs, t);
		if (tg->version != v || (tg->branch && strcmp(tg->branch, "main")))
			continue;
		n++;
		lv__dbuf_printf(msg, "%s\"%s\": %" PRIu64, msg->len ? ", " : "", tg->name, tg->version);
	}
	return n;
}

/* floor(ts / w): windows aligned to the epoch, also before it. */
static int64_t window_of(int64_t ts, int64_t w)
{
	int64_t q = ts / w;
	return ts % w < 0 ? q - 1 : q;
}

typedef struct win {
	int64_t w;
	uint64_t version;
} win;

static int cmp_win(const void *a, const void *b)
{
	const win *x = a, *y = b;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return x->version < y->version ? -1 : x->version > y->version;
}

/*
 * Thinning: a selected version stays if it is the newest version of its window (by commit
 * time; any version counts, selected or not), so every window keeps at least one manifest.
 */
static int thin(exp *E, lv_error *err)
{
	int64_t width = E->pol->keep_one_per_ms;
	win *w = lv__calloc(E->n, sizeof *w);
	if (!w)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < E->n; i++)
		if (E->v[i].known)
			w[n++] = (win){ window_of(E->v[i].ts, width), E->v[i].version };
	qsort(w, n, sizeof *w, cmp_win);
	for (size_t i = 0; i < E->n; i++) {
		if (!E->v[i].expire)
			continue;
		int64_t mine = window_of(E->v[i].ts, width);
		size_t lo = 0, hi = n; /* the last entry of this window: its newest version */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (w[mid].w <= mine)
				lo = mid + 1;
			else
				hi = mid;
		}
		E->v[i].expire = lo > 0 && w[lo - 1].w == mine && w[lo - 1].version > E->v[i].version;
	}
	lv__free(w);
	return 0;
}

/* 4. Cleanup's conditions, tags and branch bases, then one kept per window. */
static int select_versions(exp *E, lv_error *err)
{
	const lv_expire_policy *pol = E->pol;
	uint64_t latest = E->v[E->n - 1].version, hint = E->hint;
	uint64_t retain_before = 0;
	if (pol->retain_versions > 0)
		retain_before = (size_t)pol->retain_versions >= E->n ? E->v[0].version
								    : E->v[E->n - (size_t)pol->retain_versions].version;
	lv__dbuf tagmsg;
	lv__dbuf_init(&tagmsg, 0);
	size_t ntagged = 0;
	for (size_t i = 0; i < E->n; i++) {
		ver *v = &E->v[i];
		bool sel = v->version < latest && v->version < hint;
		if (E->older >= 0)
			sel = sel && v->known && v->ts < E->now - E->older;
		if (pol->before_version)
			sel = sel && v->version < pol->before_version;
		if (pol->retain_versions > 0)
			sel = sel && v->version < retain_before;
		if (pol->keep_one_per_ms > 0)
			sel = sel && v->known;
		if (!sel)
			continue;
		size_t k = tags_on(E->refs, v->version, &tagmsg);
		ntagged += k;
		v->expire = !k && !branch_base(E->refs, v->version);
	}
	int rc = 0;
	if (ntagged && pol->error_if_tagged_old_versions)
		rc = lv__err(err, LV_ETAGGED,
			     "%zu tagged version(s) have been marked for cleanup. Either set "
			     "`error_if_tagged_old_versions=false` or delete the following tag(s) to enable "
			     "cleanup: {%.300s}",
			     ntagged, tagmsg.ptr ? (const char *)tagmsg.ptr : "");
	lv__dbuf_dispose(&tagmsg);
	if (rc == 0 && pol->keep_one_per_ms > 0)
		rc = thin(E, err);
	for (size_t i = 0; i < E->n; i++)
		E->nexp += E->v[i].expire;
	return rc;
}

/* 5 and 6: history marks the versions to go, then their manifests go (only them). */
static int expire_manifests(exp *E, lv_error *err)
{
	const lv_expire_policy *pol = E->pol;
	uint64_t *cleaned = lv__calloc(E->nexp ? E->nexp : 1, sizeof *cleaned);
	if (!cleaned)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < E->n; i++)
		if (E->v[i].expire)
			cleaned[k++] = E->v[i].version;
	int rc = 0;
	if (!pol->dry_run) {
		lv_checkpoint_result cr = LV_CHECKPOINT_RESULT_INIT; /* the writer reports its phases */
		rc = lv__cp_write_pre(E->ds, pol->checkpoint, cleaned, k, NULL, 0, &E->prog, NULL, &cr, err);
		if (rc == 0) {
			E->s.checkpoint_written = cr.written;
			E->s.versions_archived = cr.written ? cr.recorded_versions : 0;
			snprintf(E->s.checkpoint_path, sizeof E->s.checkpoint_path, "%s", cr.written ? cr.path : "");
		}
	}
	lv__free(cleaned);
	lv_cleanup_policy cp = LV_CLEANUP_POLICY_INIT; /* what the deleter needs of a policy */
	cp.dry_run = pol->dry_run;
	cp.on_file = pol->on_file;
	cp.payload = pol->payload;
	lv__deleter *del = rc == 0 ? lv__calloc(1, sizeof *del) : NULL;
	if (rc == 0 && !del)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (del)
		*del = (lv__deleter){ .ds = E->ds, .p = &cp, .s = &E->s, .rate = pol->delete_rate_limit };
	for (size_t i = 0, done = 0; i < E->n && rc == 0; i++) {
		if (!E->v[i].expire)
			continue;
		progress(E, "removing old manifests", ++done, E->nexp);
		lv__manifest_entry e = { E->v[i].version, E->v[i].scheme };
		char path[LV__MPATH], *copy = lv__strdup(lv__mpath(&e, path));
		if (!copy || lv__del_hold(del, copy) < 0) {
			lv__free(copy);
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			break;
		}
		rc = lv__remove_file(del, copy, LV_KIND_MANIFEST, 0, "expired", err);
	}
	if (rc == 0)
		rc = lv__del_flush(del, err);
	if (del)
		E->s.versions_removed = pol->dry_run ? E->nexp : del->manifests_deleted;
	lv__del_release(del);
	lv__free(del);
	return rc;
}

int lv_expire(lv_dataset *ds, const lv_expire_policy *pol, lv_cleanup_stats *stats, lv_error *err)
{
	LV_TRY(check_policy(ds, pol, stats, err));
	exp E;
	memset(&E, 0, sizeof E);
	E.ds = ds;
	E.pol = pol;
	E.prog.cb = pol->on_progress;
	E.prog.payload = pol->payload;
	E.now = lv__policy_now(pol->now_ms);
	E.older = lv__policy_older(pol->older_than_ms, pol->retain_versions, pol->before_version,
				   false);
	progress(&E, "reading tags", 0, 0);
	int rc = lv__refs_load_storage(&E.refs, ds->root, err);
	/* the hint before anything is written: one that does not parse changes nothing (read
	 * before the listing, it can only be lower, so protect more, than one read after) */
	if (rc == 0)
		rc = lv__hint_floor(ds, &E.hint, err);
	if (rc == 0 && !pol->dry_run) { /* every version recorded before anything is chosen */
		lv_checkpoint_result cr = LV_CHECKPOINT_RESULT_INIT; /* the writer reports its phases */
		rc = lv__cp_write_pre(ds, pol->checkpoint, NULL, 0, NULL, 0, &E.prog, NULL, &cr, err);
	}
	progress(&E, "reading commit times", 0, 0);
	if (rc == 0)
		rc = lv__hplan_load(ds, &E.plan, err);
	if (rc == 0 && E.plan.nlive == 0)
		rc = lv__not_a_dataset(ds, err);
	if (rc == 0)
		rc = times(&E, err);
	if (rc == 0)
		rc = select_versions(&E, err);
	if (rc == 0)
		rc = expire_manifests(&E, err);
	E.s.versions_total = E.n;
	lv__stats_out(stats, &E.s);
	if (rc == 0) {
		lv__warn_commit(ds, &E.plan.wl);
		lv__warn_commit(ds, &E.wl);
		progress(&E, "done", 1, 1);
	}
	lv__warnlog_dispose(&E.wl);
	lv__hplan_dispose(&E.plan);
	lv_refs_free(E.refs);
	lv__free(E.v);
	return rc;
}
