/*
 * lv_cleanup(): Lance's cleanup rules, history first.
 *
 * Phases (one function each, in order):
 *   1. refs      tags and branches, strictly: a tag or branch we cannot read
 *                may protect a version or a file, so it aborts the cleanup
 *   2. read      every manifest of the dataset, concurrently (mrefs.c)
 *   3. select    old versions: every set condition, not the latest, not
 *                tagged, not a branch's base
 *   4. keep      what kept manifests, branches, detached and newer commits
 *                reference; the files to consider, listed before any delete
 *   5. record    the checkpoint marking the old versions cleaned up
 *   6. sweep     unreferenced files by Lance's age rules, then old manifests
 * Anything unreadable before phase 6 aborts with nothing changed.
 */
#include "lancever/cleanup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/cleanup/cleanup_int.h"
#include "core/manifests.h"
#include "format/manifest.h"
#include "format/refs.h"

const char *lv_file_kind_name(int kind)
{
	static const char *const names[LV_KIND_COUNT] = { "manifest", "data", "deletion",
							  "index", "transaction", "temp" };
	return kind >= 0 && kind < LV_KIND_COUNT ? names[kind] : "?";
}

/* One cleanup's state. */
typedef struct plan {
	lv_dataset *ds;
	const lv_cleanup_policy *pol;
	int64_t now, older;   /* the clock and the age condition (-1 = unset) */
	lv_refs *refs;
	lv__mref *m;          /* dataset manifests, sorted by version */
	size_t nm;
	bool *old;            /* per manifest */
	uint64_t *cleaned;    /* versions of the old manifests */
	size_t nold;
	lv__strset referenced; /* by kept manifests (and branches, detached, newer commits) */
	lv__strset verified;  /* by old manifests: known committed */
	bool suffix;          /* the kept versions are the newest ones */
	int64_t earliest_kept;
	lv__file_vec files;   /* listed before anything is deleted */
	lv_cleanup_stats s;
} plan;

static void progress(const plan *P, const char *phase, uint64_t done, uint64_t total)
{
	if (P->pol->on_progress)
		P->pol->on_progress(phase, done, total, P->pol->payload);
}

static int cmp_mref(const void *a, const void *b)
{
	const lv__mref *x = a, *y = b;
	return x->version < y->version ? -1 : x->version > y->version;
}

static int ignore_entry(const lv_list_entry *e, void *payload)
{
	(void)e;
	(void)payload;
	return 0;
}

/* 1. Tags and branches; every registered branch's _versions/ must be listable. */
static int phase_refs(plan *P, lv_error *err)
{
	lv_dataset *ds = P->ds;
	LV_TRY(lv__refs_load_storage(&P->refs, ds->root, err));
	/*
	 * The recursive listing of tree/ skips a branch directory that is a
	 * symlink (or unreadable), and its manifests may use our files.  Listing
	 * each branch's _versions/ directly fails on such a path (the local
	 * backend never crosses a symlink).
	 */
	for (size_t b = 0; b < lv_refs_branch_count(P->refs); b++) {
		const char *name = lv_refs_branch(P->refs, b)->name;
		char bp[LV_ERROR_MESSAGE_MAX];
		snprintf(bp, sizeof bp, "tree/%s/_versions", name);
		int rc = lv_storage_list_names(ds->root, bp, ignore_entry, NULL, err);
		if (rc < 0) {
			char why[LV_ERROR_MESSAGE_MAX];
			snprintf(why, sizeof why, "%s", err ? err->message : "");
			return lv__err(err, rc, "branch %s cannot be read (%s); refusing to clean up", name,
				       why);
		}
	}
	return 0;
}

/* 2. Every manifest, read concurrently; any failure aborts. */
static int phase_read(plan *P, lv_error *err)
{
	lv_dataset *ds = P->ds;
	lv_manifest_entry *live = NULL;
	size_t nlive = 0;
	progress(P, "reading manifests", 0, 0);
	LV_TRY(lv__list_manifests(ds->st, &live, &nlive, err));
	if (nlive == 0) {
		free(live);
		return lv__not_a_dataset(ds, err);
	}
	P->nm = nlive;
	P->m = lv__calloc(nlive, sizeof *P->m);
	P->old = lv__calloc(nlive, sizeof *P->old);
	P->cleaned = lv__calloc(nlive, sizeof *P->cleaned);
	int rc = P->m && P->old && P->cleaned ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	/*
	 * Rows for the checkpoint step are built only for versions newer than the
	 * newest checkpoint's name: it normally holds the older ones already, and
	 * a million rows built for nothing cost ~0.8 KB each.  If that file turns
	 * out unusable, the checkpoint step reads what it lacks, as without rows.
	 * A dry run writes no checkpoint and builds none.
	 */
	uint64_t cp_newest = 0;
	lv_error ce = { 0 };
	if (rc == 0 && !P->pol->dry_run && lv__checkpoint_newest_name(ds->st, &cp_newest, &ce) < 0)
		cp_newest = 0;
	for (size_t i = 0; i < nlive && rc == 0; i++) {
		P->m[i].path = lv__strdup(live[i].path);
		P->m[i].want_info = !P->pol->dry_run && live[i].version > cp_newest;
		lv_dbuf_init(&P->m[i].refs, 0);
		if (!P->m[i].path)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	free(live);
	if (rc == 0)
		rc = lv__mrefs_read(ds, P->m, P->nm, err);
	if (rc < 0)
		return rc;
	qsort(P->m, P->nm, sizeof *P->m, cmp_mref);
	P->s.versions_total = P->nm;
	progress(P, "reading manifests", P->nm, P->nm);
	return 0;
}

/* Is version v of main tagged?  Each tag naming it is added to `msg` as Lance words it. */
static size_t tags_on(const lv_refs *refs, uint64_t v, lv_dbuf *msg)
{
	size_t n = 0;
	for (size_t t = 0; t < lv_refs_tag_count(refs); t++) {
		const lv_tag *tg = lv_refs_tag(refs, t);
		if (tg->version != v || (tg->branch && strcmp(tg->branch, "main")))
			continue;
		n++;
		lv_dbuf_printf(msg, "%s\"%s\": %" PRIu64, msg->len ? ", " : "", tg->name, tg->version);
	}
	return n;
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

/* Does the policy select manifest m (before tags and branches are considered)? */
static bool selected(const plan *P, const lv__mref *m, uint64_t latest, uint64_t retain_before)
{
	const lv_cleanup_policy *pol = P->pol;
	bool sel = m->version < latest;
	if (P->older >= 0)
		sel = sel && m->ts_ms < P->now - P->older;
	if (pol->before_version)
		sel = sel && m->version < pol->before_version;
	if (pol->retain_versions > 0)
		sel = sel && m->version < retain_before;
	return sel;
}

/* 3. Old versions: selected by every set condition, not latest, not tagged, not a branch base. */
static int phase_select(plan *P, lv_error *err)
{
	const lv_cleanup_policy *pol = P->pol;
	uint64_t latest = P->m[P->nm - 1].version;
	uint64_t retain_before = 0;
	if (pol->retain_versions > 0)
		retain_before = (size_t)pol->retain_versions >= P->nm
					? P->m[0].version
					: P->m[P->nm - (size_t)pol->retain_versions].version;
	lv_dbuf tagmsg;
	lv_dbuf_init(&tagmsg, 0);
	size_t ntagged = 0;
	for (size_t i = 0; i < P->nm; i++) {
		const lv__mref *m = &P->m[i];
		if (!selected(P, m, latest, retain_before))
			continue;
		size_t k = tags_on(P->refs, m->version, &tagmsg);
		ntagged += k;
		if (k || branch_base(P->refs, m->version))
			continue;
		P->old[i] = true;
		P->cleaned[P->nold++] = m->version;
	}
	int rc = 0;
	if (ntagged && pol->error_if_tagged_old_versions)
		rc = lv__err(err, LV_ETAGGED,
			     "%zu tagged version(s) have been marked for cleanup. Either set "
			     "`error_if_tagged_old_versions=false` or delete the following tag(s) to enable "
			     "cleanup: {%.300s}",
			     ntagged, tagmsg.ptr ? (const char *)tagmsg.ptr : "");
	lv_dbuf_dispose(&tagmsg);
	return rc;
}

/* 4. What stays referenced, what old manifests vouch for, and the files to consider. */
static int phase_keep(plan *P, lv_error *err)
{
	lv_dataset *ds = P->ds;
	P->earliest_kept = INT64_MAX;
	P->suffix = true;
	bool seen_kept = false;
	for (size_t i = 0; i < P->nm; i++) {
		int rc;
		if (P->old[i]) {
			P->suffix = P->suffix && !seen_kept;
			rc = lv__mrefs_add_to(&P->verified, &P->m[i]);
		} else {
			seen_kept = true;
			if (P->m[i].ts_ms < P->earliest_kept)
				P->earliest_kept = P->m[i].ts_ms;
			rc = lv__mrefs_add_to(&P->referenced, &P->m[i]);
		}
		if (rc < 0)
			return lv__err(err, rc, "out of memory");
	}
	LV_TRY(lv__refs_of_others(ds, &P->referenced, err));
	static const char *const dirs[] = { "_versions", "_transactions", "data", "_indices", "_deletions" };
	for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
		int rc = lv_storage_list(ds->root, dirs[d], true, lv__collect_file, &P->files, err);
		if (rc >= 0 && P->files.rc < 0)
			rc = lv__err(err, P->files.rc, "out of memory");
		if (rc < 0)
			return rc;
	}
	/*
	 * Commits that landed since the manifests were read may own files in that
	 * listing: read the manifests now newer than our latest and keep what
	 * they reference.
	 */
	return lv__refs_of_newer(ds, P->m[P->nm - 1].version, &P->referenced, err);
}

/* 5. The old versions' history is recorded before anything goes. */
static int phase_record(plan *P, lv_error *err)
{
	if (P->pol->dry_run || !P->nold)
		return 0;
	progress(P, "writing checkpoint", 0, 1);
	/* P->m is sorted by version: so are the rows built while reading it. */
	const lv_version_info **pre = lv__calloc(P->nm, sizeof *pre);
	if (!pre)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t npre = 0;
	for (size_t i = 0; i < P->nm; i++)
		if (P->m[i].row)
			pre[npre++] = &P->m[i].row->info;
	lv_checkpoint_result cr;
	int rc = lv__checkpoint_write_pre(P->ds, &P->pol->checkpoint, P->cleaned, P->nold, pre, npre,
					  &cr, err);
	free(pre);
	if (rc < 0)
		return rc;
	P->s.checkpoint_written = cr.written;
	P->s.versions_archived = cr.written ? cr.recorded_versions : 0;
	snprintf(P->s.checkpoint_path, sizeof P->s.checkpoint_path, "%s", cr.written ? cr.path : "");
	return 0;
}

/* Why an unreferenced file may go, or NULL if it stays (Lance's rules). */
static const char *removal_reason(const plan *P, const lv__file_ent *f, int kind, const char *key)
{
	/*
	 * Only files older than every kept manifest, when the kept set is a
	 * suffix.  File systems stamp mtimes from a coarse clock (a file written
	 * just after a commit can look milliseconds older than it), so files no
	 * old manifest mentions get a margin.
	 */
	bool known = lv__strset_has(&P->verified, key);
	if (P->suffix && f->mtime_ms > P->earliest_kept - (known ? 0 : LV_CLEANUP_MTIME_SLACK_MS))
		return NULL;
	bool in_progress = !P->pol->delete_unverified && f->mtime_ms >= P->now - LV_CLEANUP_UNVERIFIED_MS;
	if (kind == LV_KIND_TEMP)
		return in_progress ? NULL : "stale temporary manifest";
	if (lv__strset_has(&P->referenced, key))
		return NULL;
	if (known)
		return "referenced only by removed versions";
	if (!in_progress)
		return P->pol->delete_unverified ? "unreferenced (delete_unverified)"
						 : "unreferenced and older than 7 days";
	return NULL;
}

/*
 * 6. Unreferenced files, then old manifests last.  Deleting manifests before
 * their files would make an interrupted run leak those files for good: a
 * rerun no longer knows they were committed (verified), and the age cutoff
 * may then protect them.  Kept versions are complete in either order; the old
 * ones are already recorded as cleaned up by the checkpoint.
 */
static int phase_sweep(plan *P, lv__deleter *del, lv_error *err)
{
	for (size_t i = 0; i < P->files.n; i++) {
		const lv__file_ent *f = &P->files.v[i];
		char key[LV__CLEANUP_KEY_MAX];
		int kind = lv__classify(f->path, key, sizeof key);
		if (kind < 0)
			continue;
		progress(P, "checking files", i + 1, P->files.n);
		const char *reason = removal_reason(P, f, kind, key);
		if (reason)
			LV_TRY(lv__remove_file(del, f->path, kind, f->size, reason, err));
	}
	LV_TRY(lv__del_flush(del, err));
	for (size_t i = 0, k = 0; i < P->nm; i++) {
		if (!P->old[i])
			continue;
		progress(P, "removing old manifests", ++k, P->nold);
		LV_TRY(lv__remove_file(del, P->m[i].path, LV_KIND_MANIFEST, P->m[i].size, "old version",
				       err));
	}
	LV_TRY(lv__del_flush(del, err));
	P->s.versions_removed = P->pol->dry_run ? P->nold : del->manifests_deleted;
	return 0;
}

static int check_policy(lv_dataset *ds, const lv_cleanup_policy *pol, lv_error *err)
{
	if (!ds || !pol)
		return lv__err(err, LV_EINVALID, "lv_cleanup: NULL argument");
	if (ds->branch)
		return lv__err(err, LV_EUNSUPPORTED, "cleanup of a branch is not supported (clean main)");
	if (pol->older_than_ms < -1 || pol->retain_versions == 0 || pol->retain_versions < -1 ||
	    (pol->version >= 2 && !(pol->delete_rate_limit >= 0)))
		return lv__err(err, LV_EINVALID,
			       "cleanup: invalid policy (older_than >= 0, retain_versions >= 1, "
			       "delete_rate_limit >= 0)");
	return 0;
}

int lv_cleanup(lv_dataset *ds, const lv_cleanup_policy *pol, lv_cleanup_stats *stats,
	       lv_error *err)
{
	LV_TRY(check_policy(ds, pol, err));
	plan P;
	memset(&P, 0, sizeof P);
	P.ds = ds;
	P.pol = pol;
	P.now = pol->now_ms ? pol->now_ms : lv_now_ms();
	P.older = pol->older_than_ms;
	if (P.older < 0 && pol->retain_versions < 0 && pol->before_version == 0)
		P.older = LV_CLEANUP_DEFAULT_OLDER_THAN_MS;
	lv__deleter *del = calloc(1, sizeof *del);
	int rc = del ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	if (del) {
		del->ds = ds;
		del->p = pol;
		del->s = &P.s;
		del->rate = pol->version >= 2 ? pol->delete_rate_limit : 0;
	}
	if (rc == 0)
		rc = phase_refs(&P, err);
	if (rc == 0)
		rc = phase_read(&P, err);
	if (rc == 0)
		rc = phase_select(&P, err);
	if (rc == 0)
		rc = phase_keep(&P, err);
	if (rc == 0)
		rc = phase_record(&P, err);
	if (rc == 0)
		rc = phase_sweep(&P, del, err);
	if (rc == 0)
		progress(&P, "done", 1, 1);
	if (stats)
		*stats = P.s;
	lv_refs_free(P.refs);
	free(P.cleaned);
	lv__mrefs_dispose(P.m, P.nm);
	free(P.old);
	lv__strset_dispose(&P.referenced);
	lv__strset_dispose(&P.verified);
	lv__file_vec_dispose(&P.files);
	free(del);
	return rc;
}
