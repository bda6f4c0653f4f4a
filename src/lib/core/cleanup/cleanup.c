/*
 * lv_cleanup(): Lance's cleanup rules, history first.
 *
 * Phases (one function each, in order):
 *   1. refs      tags and branches, strictly: a tag or branch we cannot read
 *                may protect a version or a file, so it aborts the cleanup
 *   2. read      every manifest of the dataset, concurrently, a batch at a
 *                time (mrefs.c), and
 *   3. select    each one as it is read: old (every set condition, not the
 *                latest, not tagged, not a branch's base) or kept; what it
 *                references goes to the kept or the old set (128-bit digests,
 *                taken on the reading threads); batch k is judged while batch
 *                k + 1 is read, in version order on one thread
 *   3b. cascade  referenced branches reported; with clean_referenced_branches
 *                the due ones cleaned now, each by its own lv_cleanup()
 *                (cascade.c says which and how)
 *   4. keep      what branches, detached and newer commits reference
 *   5. record    the checkpoint marking the old versions cleaned up; the
 *                sweep's scan (scan.c: listing, sizes and times, judging, no
 *                deleting) starts on its own thread, before it (overlapping
 *                it) or, with the own pass, right after it (overlapping 6)
 *   6. sweep     the files the scan judged to go deleted on this thread, in
 *                listing order (Lance's age rules); old manifests after every
 *                file they name that goes (locally, from the own pass's marks
 *                on, while the scan finishes _transactions/; else at the end)
 * Anything unreadable before phase 6 aborts with nothing deleted (a scan still
 * running is stopped and joined).  Every delete and every report is made on
 * the caller's thread, after the checkpoint.  Memory:
 * 16 bytes per manifest, the two sets, a batch of manifests; never a list of
 * every file or every manifest's references.
 */
#include "lancever/cleanup.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/cleanup/cleanup_int.h"
#include "core/manifests.h"
#include "format/manifest.h"
#include "core/refs.h"

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
	lv__manifest_entry *v; /* dataset manifests, sorted by version (16 bytes each) */
	uint32_t *size;       /* per manifest: bytes, from its read */
	uint8_t *old;         /* per manifest: selected for removal */
	size_t nv;
	uint64_t latest, retain_before;
	uint64_t hint;        /* the version hint's N: no manifest >= N goes (UINT64_MAX: none) */
	size_t nold;
	lv__mrow **rows;      /* rows built while reading, for the checkpoint (few, or none) */
	size_t nrows;
	lv__strset referenced; /* by kept manifests (and branches, detached, newer commits) */
	lv__strset verified;  /* by old manifests: known committed */
	bool suffix;          /* the kept versions are the newest ones */
	bool seen_kept;
	int64_t earliest_kept;
	lv__dbuf tagmsg;
	size_t ntagged;
	uint64_t *versions;   /* the policy's exact list, sorted (NULL = unset) */
	size_t nversions;
	const lv_branch **rb; /* referenced branches, in the order they were found (borrowed from refs) */
	size_t nrb;
	lv_cleanup_stats s;
	lv_cleanup_stats cascaded; /* what cleaning referenced branches removed */
	lv__deleter *del;
	lv__progress prog;    /* the policy's on_progress, rate-limited */
	lv__file_vec vtemps;  /* _versions/.tmp*, from phase 4's listing (the sweep judges them) */
	lv__scan *scan;       /* the sweep's scan, from phase 5 on (NULL: none running) */
	lv__cp_listing listed; /* phase 4's listing of _versions/, handed to the checkpoint writer */
	lv__txn_ref *txn;     /* per manifest: an old one's transaction file (name.rv UINT64_MAX:
			       * none); NULL: no own pass (remote stores list times; heads cost) */
	bool txn_other;       /* an old manifest names a transaction file the own pass cannot cover */
	lv__scan_own own;
} plan;

/* Manifests read at once: their references are folded into the sets, then dropped. */
#define READ_BATCH 4096
/* Rows for the checkpoint are built while reading only for a tail this short (else the
 * checkpoint writer reads those manifests itself, a range at a time). */
#define ROWS_MAX 8192

/* The policy's callback at a bounded rate (util/progress.h; P->prog is the run's one state). */
static void progress(plan *P, const char *phase, uint64_t done, uint64_t total)
{
	lv__progress_report(&P->prog, phase, done, total);
}

static int ignore_entry(const lv_list_entry *e, void *payload)
{
	(void)e;
	(void)payload;
	return 0;
}

/* Stops a listing at its first entry: enough to know the directory can be listed (a
 * symlinked one fails before any entry). */
static int first_entry(const lv_list_entry *e, void *payload)
{
	(void)e;
	(void)payload;
	return 1;
}

/* 1. Tags and branches; every registered branch's _versions/ must be listable. */
static int phase_refs(plan *P, lv_error *err)
{
	lv_dataset *ds = P->ds;
	LV_TRY(lv__refs_load_storage(&P->refs, ds->root, err));
	size_t nb = lv_refs_branch_count(P->refs);
	if (!(P->rb = lv__calloc(nb ? nb : 1, sizeof *P->rb)))
		return lv__err(err, LV_ENOMEM, "out of memory");
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

/* Does a tag's or a branch's parent branch name (NULL = main) name the lineage cleaned
 * (`cur`: NULL = main, else the branch opened)? */
static bool same_lineage(const char *b, const char *cur)
{
	return cur ? b && !strcmp(b, cur) : !b || !strcmp(b, "main");
}

/* Is version v of the lineage tagged?  Each tag naming it is added to `msg` as Lance words it. */
static size_t tags_on(const lv_refs *refs, const char *cur, uint64_t v, lv__dbuf *msg)
{
	size_t n = 0;
	for (size_t t = 0; t < lv_refs_tag_count(refs); t++) {
		const lv_tag *tg = lv_refs_tag(refs, t);
		if (tg->version != v || !same_lineage(tg->branch, cur))
			continue;
		n++;
		lv__dbuf_printf(msg, "%s\"%s\": %" PRIu64, msg->len ? ", " : "", tg->name, tg->version);
	}
	return n;
}

static bool branch_base(const lv_refs *refs, const char *cur, uint64_t v)
{
	for (size_t b = 0; b < lv_refs_branch_count(refs); b++) {
		const lv_branch *br = lv_refs_branch(refs, b);
		if (same_lineage(br->parent_branch, cur) && br->parent_version == v)
			return true;
	}
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The policy's conditions on one version (Lance's should_clean: not the latest check). */
static bool conditions(const plan *P, uint64_t version, int64_t ts)
{
	const lv_cleanup_policy *pol = P->pol;
	bool sel = true;
	if (P->versions && !bsearch(&version, P->versions, P->nversions, sizeof *P->versions, cmp_u64))
		return false;
	if (P->older >= 0)
		sel = sel && ts < P->now - P->older;
	if (pol->before_version)
		sel = sel && version < pol->before_version;
	if (pol->retain_versions > 0)
		sel = sel && version < P->retain_before;
	return sel;
}

/* Does the policy select this version (before tags and branches are considered)? */
static bool selected(const plan *P, uint64_t version, int64_t ts)
{
	return version < P->latest && version < P->hint && conditions(P, version, ts);
}

/*
 * Branches made from version v of the lineage cleaned when the policy's conditions select v
 * (Lance's find_referenced_branches), noted as each base is judged (reported and, with
 * clean_referenced_branches, cleaned by phase_cascade).  Each branch has one base: no
 * duplicates.  rb has room for every branch (phase_refs).
 */
static void note_branches_on(plan *P, uint64_t v, int64_t ts)
{
	if (!conditions(P, v, ts))
		return;
	for (size_t b = 0; b < lv_refs_branch_count(P->refs); b++) {
		const lv_branch *br = lv_refs_branch(P->refs, b);
		if (same_lineage(br->parent_branch, P->ds->branch) && br->parent_version == v)
			P->rb[P->nrb++] = br;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const lv__manifest_entry *)a)->version, y = ((const lv__manifest_entry *)b)->version;
	return x < y ? -1 : x > y;
}

/* Branches whose base version has no manifest: Lance lists them too (their files may still
 * be in use). */
static void note_branches_without_base(plan *P)
{
	for (size_t b = 0; b < lv_refs_branch_count(P->refs); b++) {
		const lv_branch *br = lv_refs_branch(P->refs, b);
		lv__manifest_entry key = { br->parent_version, 0 };
		if (same_lineage(br->parent_branch, P->ds->branch) &&
		    !bsearch(&key, P->v, P->nv, sizeof *P->v, cmp_entry))
			P->rb[P->nrb++] = br;
	}
}

/* 3. One manifest read: old (not latest, not tagged, not a branch base) or kept; its
 * references go to the matching set. */
static int judge(plan *P, size_t i, lv__mref *m, lv_error *err)
{
	uint64_t version = P->v[i].version;
	P->size[i] = m->size > UINT32_MAX ? UINT32_MAX : (uint32_t)m->size;
	note_branches_on(P, version, m->ts_ms);
	bool old = false;
	if (selected(P, version, m->ts_ms)) {
		size_t k = tags_on(P->refs, P->ds->branch, version, &P->tagmsg);
		P->ntagged += k;
		old = !k && !branch_base(P->refs, P->ds->branch, version);
	}
	P->old[i] = old;
	if (old) {
		P->nold++;
		P->suffix = P->suffix && !P->seen_kept;
	} else {
		P->seen_kept = true;
		if (m->ts_ms < P->earliest_kept)
			P->earliest_kept = m->ts_ms;
	}
	if (P->txn) {
		P->txn[i] = m->txn;
		if (!old || m->txn_form != LV__TXN_LANCE)
			P->txn[i].name.rv = UINT64_MAX;
		P->txn_other = P->txn_other || (old && m->txn_form == LV__TXN_OTHER);
	}
	if (lv__mrefs_add_to(old ? &P->verified : &P->referenced, m) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (m->row) { /* for the checkpoint step */
		P->rows[P->nrows++] = m->row;
		m->row = NULL;
	}
	return 0;
}

/* One batch of manifests: read (concurrently), then judged in version order. */
typedef struct batch {
	size_t first, n;
	lv__mref *m;
	char *block; /* the paths */
	lv_error err;
	int rc;
} batch;

static void batch_free(batch *b)
{
	lv__mrefs_dispose(b->m, b->m ? b->n : 0);
	lv__free(b->block);
	*b = (batch){ 0 };
}

/* Reads manifests [first, first + n) into b (b->rc, b->err). */
static void batch_read(plan *P, batch *b, size_t first, size_t n, uint64_t cp_newest, bool rows)
{
	*b = (batch){ .first = first, .n = n };
	b->m = lv__calloc(n ? n : 1, sizeof *b->m);
	b->block = lv__malloc((n ? n : 1) * LV__MPATH);
	if (!b->m || !b->block) {
		b->rc = lv__err(&b->err, LV_ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		b->m[i].path = lv__mpath(&P->v[first + i], b->block + i * LV__MPATH);
		b->m[i].want_info = rows && P->v[first + i].version > cp_newest;
		lv__dbuf_init(&b->m[i].refs, 0);
	}
	b->rc = lv__mrefs_read(P->ds, P->ds->st, b->m, n, &b->err);
}

static int batch_judge(plan *P, batch *b)
{
	for (size_t i = 0; i < b->n && b->rc == 0; i++)
		b->rc = judge(P, b->first + i, &b->m[i], &b->err);
	return b->rc;
}

/*
 * 2 and 3 as a pipeline: while batch k is judged (on one thread: the sets and the plan are
 * the judge's alone), batch k + 1 is read (on the others); the judging stays in version order.
 */
typedef struct reader {
	plan *P;
	batch cur, next;
	size_t next_first, next_n;
	uint64_t cp_newest;
	bool rows;
} reader;

static void rd_step(size_t i, void *arg)
{
	reader *p = arg;
	if (i == 0 && p->next_n)
		batch_read(p->P, &p->next, p->next_first, p->next_n, p->cp_newest, p->rows);
	else if (i == 1)
		batch_judge(p->P, &p->cur);
}

/* Reads and judges every manifest; the first failure (in version order) is the answer. */
static int read_all(plan *P, uint64_t cp_newest, bool rows, lv_error *err)
{
	reader p = { .P = P, .cp_newest = cp_newest, .rows = rows };
	size_t n0 = P->nv < READ_BATCH ? P->nv : READ_BATCH;
	batch_read(P, &p.cur, 0, n0, cp_newest, rows);
	int rc = 0;
	for (;;) {
		p.next_first = p.cur.first + p.cur.n;
		p.next_n = P->nv - p.next_first < READ_BATCH ? P->nv - p.next_first : READ_BATCH;
		if (p.cur.rc < 0) /* a failed read: nothing more is started */
			p.next_n = 0;
		/* judge the current batch while the next one is read (not one with a failed read) */
		if (p.cur.rc == 0 && p.next_n)
			lv__parallel_for(2, P->ds->threads, rd_step, &p);
		else
			batch_judge(P, &p.cur);
		progress(P, "reading manifests", p.next_first, P->nv);
		if (p.cur.rc < 0) {
			rc = p.cur.rc;
			if (err)
				*err = p.cur.err;
		}
		batch_free(&p.cur);
		if (rc < 0 || !p.next_n) {
			batch_free(&p.next);
			return rc;
		}
		p.cur = p.next;
		p.next = (batch){ 0 };
	}
}

/* 2. Every manifest, read (concurrently, a batch at a time); any failure aborts. */
static int phase_read(plan *P, lv_error *err)
{
	lv_dataset *ds = P->ds;
	progress(P, "reading manifests", 0, 0);
	LV_TRY(lv__manifests_list(ds->st, &P->v, &P->nv, err));
	if (P->nv == 0)
		return lv__not_a_dataset(ds, err);
	P->size = lv__calloc(P->nv, sizeof *P->size);
	P->old = lv__calloc(P->nv, sizeof *P->old);
	if (!ds->remote)
		P->txn = lv__calloc(P->nv, sizeof *P->txn);
	int rc = P->size && P->old && (ds->remote || P->txn) ? 0
							   : lv__err(err, LV_ENOMEM, "out of memory");
	if (rc < 0)
		return rc;
	P->latest = P->v[P->nv - 1].version;
	LV_TRY(lv__hint_floor(ds, &P->hint, err)); /* read after the listing: never older than it */
	if (P->pol->retain_versions > 0)
		P->retain_before = (size_t)P->pol->retain_versions >= P->nv
					   ? P->v[0].version
					   : P->v[P->nv - (size_t)P->pol->retain_versions].version;
	/*
	 * Rows for the checkpoint step are built only for versions newer than the
	 * newest checkpoint's name, and only when they are few: the checkpoint
	 * normally holds the older ones already.  A dry run writes no checkpoint.
	 */
	uint64_t cp_newest = 0;
	lv_error ce = { 0 };
	if (!P->pol->dry_run && lv__cp_newest_name(ds->st, &cp_newest, &ce) < 0)
		cp_newest = 0;
	size_t tail = 0;
	for (size_t i = P->nv; i-- > 0 && P->v[i].version > cp_newest;)
		tail++;
	bool rows = !P->pol->dry_run && tail <= ROWS_MAX;
	if (rows && !(P->rows = lv__calloc(tail ? tail : 1, sizeof *P->rows)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	rc = read_all(P, cp_newest, rows, err);
	P->s.versions_total = P->nv;
	progress(P, "reading manifests", P->nv, P->nv);
	if (rc == 0)
		note_branches_without_base(P);
	if (rc == 0 && P->pol->on_plan)
		P->pol->on_plan(P->latest, P->nv, P->nold, P->pol->payload);
	if (rc == 0 && P->ntagged && P->pol->error_if_tagged_old_versions)
		rc = lv__err(err, LV_ETAGGED,
			     "%zu tagged version(s) have been marked for cleanup. Either set "
			     "`error_if_tagged_old_versions=false` or delete the following tag(s) to enable "
			     "cleanup: {%.300s}",
			     P->ntagged, P->tagmsg.ptr ? (const char *)P->tagmsg.ptr : "");
	return rc;
}

/* One due branch cleaned with the policy its config gave (bp); its removals go to `into`. */
static int clean_branch(const plan *P, lv_dataset *bds, const char *name, lv_cleanup_policy *bp,
			lv_cleanup_stats *into, lv_error *err)
{
	lv__relay r = { P->pol, name };
	lv__cascade_relay(bp, &r);
	lv_cleanup_stats bs = LV_CLEANUP_STATS_INIT;
	int rc = lv_cleanup(bds, bp, &bs, err);
	lv__cleanup_stats_add(into, &bs);
	if (rc < 0) {
		char why[LV_ERROR_MESSAGE_MAX];
		snprintf(why, sizeof why, "%s", err ? err->message : "");
		return lv__err(err, rc, "clean_referenced_branches: branch %s: %s", name, why);
	}
	return 0;
}

/* 3b. Each referenced branch reported; with clean_referenced_branches, the due ones are
 * cleaned now, before this lineage's keep set is built: the files they stop using are then
 * free to go here too.  A failure stops the run before anything of this lineage changes. */
static int phase_cascade(plan *P, lv_error *err)
{
	const lv_cleanup_policy *pol = P->pol;
	int rc = 0;
	for (size_t i = 0; i < P->nrb && rc == 0; i++) {
		const lv_branch *br = P->rb[i];
		lv_dataset *bds = NULL;
		lv_cleanup_policy bp;
		bool due = false;
		if (pol->clean_referenced_branches) {
			lv_open_options o = LV_OPEN_OPTIONS_INIT;
			o.branch = br->name;
			o.threads = P->ds->threads;
			rc = lv_dataset_open_storage(&bds, P->ds->root, &o, err);
			if (rc == 0)
				rc = lv__cascade_policy(bds, br->name, pol, &bp, &due, err);
		}
		if (rc == 0 && pol->on_referenced_branch)
			pol->on_referenced_branch(br->name, br->parent_version, due, pol->payload);
		if (rc == 0 && due) {
			progress(P, "cleaning referenced branches", i, P->nrb);
			rc = clean_branch(P, bds, br->name, &bp, &P->cascaded, err);
		}
		if (bds)
			lv__cascade_keep_warnings(P->ds, bds, br->name);
		lv_dataset_free(bds);
	}
	return rc;
}

/* 4. What branches, detached versions and commits newer than the plan reference is kept;
 * and every directory the sweep will list can be (a symlinked one is refused now, before the
 * checkpoint: nothing changes). */
static int phase_keep(plan *P, lv_error *err)
{
	for (size_t d = 0; d < LV__SWEEP_NDIRS; d++)
		LV_TRY(lv_storage_list_names(P->ds->st, lv__sweep_dirs[d], first_entry, NULL, err));
	LV_TRY(lv__mrefs_of_others(P->ds, &P->referenced, err));
	/*
	 * Commits that landed since the manifests were read may own files the
	 * sweep will list: read the manifests now newer than our latest and keep
	 * what they reference.
	 */
	return lv__mrefs_of_newer(P->ds, P->latest, &P->referenced, &P->vtemps, &P->listed.v,
				  &P->listed.n, err);
}

/* 5. The old versions' history is recorded before anything goes. */
static const char *scan_rule_fn(void *payload, const lv_list_entry *f, int kind, lv__digest key,
				bool tmp, bool *unverified);

/* The own pass's path of manifest i's transaction file (scan.c), if it settles one. */
static bool own_txn(void *payload, size_t i, char *buf, lv__digest *key)
{
	const plan *P = payload;
	if (P->txn[i].name.rv == UINT64_MAX)
		return false;
	lv__txn_name_path(&P->txn[i].name, buf);
	*key = P->txn[i].key;
	return true;
}

/* The checkpoint recording the old versions as cleaned up, written and read back. */
static int record(plan *P, lv_error *err)
{
	if (P->pol->dry_run || !P->nold)
		return 0;
	/* the writer reports its own phases ("listing", "reading manifests", ...) */
	/* read in version order: the rows are sorted */
	const lv_version_info **pre = lv__calloc(P->nrows ? P->nrows : 1, sizeof *pre);
	uint64_t *cleaned = lv__calloc(P->nold, sizeof *cleaned);
	if (!pre || !cleaned) {
		lv__free(pre);
		lv__free(cleaned);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < P->nrows; i++)
		pre[i] = &P->rows[i]->info;
	for (size_t i = 0, k = 0; i < P->nv; i++)
		if (P->old[i])
			cleaned[k++] = P->v[i].version;
	lv_checkpoint_result cr = LV_CHECKPOINT_RESULT_INIT;
	int rc = lv__cp_write_pre(P->ds, P->pol->checkpoint, cleaned, P->nold, pre, P->nrows,
				  &P->prog, &P->listed, &cr, err);
	lv__free(pre);
	lv__free(cleaned);
	for (size_t i = 0; i < P->nrows; i++)
		lv__mrow_free(P->rows[i]);
	P->nrows = 0;
	if (rc < 0)
		return rc;
	P->s.checkpoint_written = cr.written;
	P->s.versions_archived = cr.written ? cr.recorded_versions : 0;
	snprintf(P->s.checkpoint_path, sizeof P->s.checkpoint_path, "%s", cr.written ? cr.path : "");
	return 0;
}

/*
 * The sweep's scan (listing, sizes and times, judging: no deleting) starts once the plan is
 * complete; phase 6 deletes what it found.  The own pass runs when every old manifest's
 * reference into _transactions/ is its own transaction file in Lance's form (so the listing
 * may skip what it settled).  With it, the scan starts after the checkpoint (it overlaps the
 * removal of the manifests, and the checkpoint's read-back has the cores to itself); without
 * it, before (it overlaps the checkpoint).
 */
static int phase_record(plan *P, lv_error *err)
{
	bool own = P->txn && !P->txn_other && P->nold;
	P->own = (lv__scan_own){ P->nv, own_txn, P, &P->verified };
	if (!own)
		LV_TRY(lv__scan_start(&P->scan, P->ds, &P->referenced, &P->vtemps, NULL, scan_rule_fn,
				      P, err));
	LV_TRY(record(P, err));
	if (own)
		LV_TRY(lv__scan_start(&P->scan, P->ds, &P->referenced, &P->vtemps, &P->own,
				      scan_rule_fn, P, err));
	return 0;
}

/*
 * The listing time cutoff of a file's directory (Lance 14's, checked with pylance 14.0.2):
 * only files older than it are judged; INT64_MAX = none.  None at all unless the kept set is a
 * suffix (a tag or branch base keeping an old version would otherwise leave the newer files
 * the old versions made forever); then _indices/ has none; data/ max(earliest kept manifest,
 * now - 7 days) (an abandoned write newer than the kept floor is reclaimed once 7 days old);
 * the others the earliest kept manifest.  One difference on purpose: under delete_unverified
 * Lance 14 drops data/'s and _indices/'s cutoffs, so a concurrent writer's new data file or
 * index goes (an append racing a cleanup then fails: interop test_cleanup (f)); lancever keeps
 * the earliest kept manifest as their cutoff then (the 7-day rule no longer protects them).
 */
static int64_t cutoff_of(const plan *P, const char *path)
{
	bool data = !strncmp(path, "data/", 5), index = !strncmp(path, "_indices/", 9);
	if (!P->suffix || (index && !P->pol->delete_unverified))
		return INT64_MAX;
	if (index)
		return P->earliest_kept;
	int64_t week = P->now - LV_CLEANUP_UNVERIFIED_MS;
	if (data && week > P->earliest_kept)
		return week;
	return P->earliest_kept;
}

/* Why an unreferenced file may go, or NULL if it stays (Lance's rules); *unverified gets
 * Lance's flag for it (see lv_cleanup_candidate).  `tmp`: a writer's temporary file. */
static const char *removal_reason(const plan *P, const lv_list_entry *f, int kind, lv__digest key,
				  bool tmp, bool *unverified)
{
	/*
	 * Only files older than the directory's cutoff.  File systems stamp
	 * mtimes from a coarse clock (a file written just after a commit can look
	 * milliseconds older than it), so files no old manifest mentions get a
	 * margin.
	 */
	bool known = lv__strset_has_digest(&P->verified, key);
	int64_t cut = cutoff_of(P, f->path);
	if (cut != INT64_MAX && f->mtime_ms > cut - (known ? 0 : LV_CLEANUP_MTIME_SLACK_MS))
		return NULL;
	bool in_progress = !P->pol->delete_unverified && f->mtime_ms >= P->now - LV_CLEANUP_UNVERIFIED_MS;
	/* Lance: old enough (or delete_unverified) makes a file unverified even if a removed
	 * manifest names it, except a transaction file (unverified = named by none) */
	*unverified = tmp || (kind == LV_KIND_TRANSACTION ? !known : !in_progress);
	if (tmp)
		return in_progress ? NULL : kind == LV_KIND_TEMP ? "stale temporary manifest"
								 : "stale temporary file";
	if (lv__strset_has_digest(&P->referenced, key))
		return NULL;
	if (known)
		return "referenced only by removed versions";
	if (!in_progress)
		return P->pol->delete_unverified ? "unreferenced (delete_unverified)"
						 : "unreferenced and older than 7 days";
	return NULL;
}

/* removal_reason as the scan's rule (scan.c: called on the scan's thread; reads the plan) */
static const char *scan_rule_fn(void *payload, const lv_list_entry *f, int kind, lv__digest key,
				bool tmp, bool *unverified)
{
	return removal_reason(payload, f, kind, key, tmp, unverified);
}

/* Where phase 6 is in removing old manifests: [0, next) queued, k of them old. */
typedef struct mcursor {
	size_t next, k, slot;
	char *block; /* their paths (READ_BATCH), alive until their batch is sent */
} mcursor;

/* Queues the old manifests in [c->next, upto), in version order. */
static int queue_manifests(plan *P, mcursor *c, size_t upto, lv_error *err)
{
	int rc = 0;
	for (; c->next < upto && rc >= 0; c->next++) {
		size_t i = c->next;
		if (!P->old[i])
			continue;
		progress(P, "removing old manifests", ++c->k, P->nold);
		if (c->slot == READ_BATCH) { /* the paths of one batch live until it is sent */
			if ((rc = lv__del_flush(P->del, err)) < 0)
				break;
			c->slot = 0;
		}
		const char *path = lv__mpath(&P->v[i], c->block + c->slot++ * LV__MPATH);
		rc = lv__remove_file_u(P->del, path, LV_KIND_MANIFEST, P->size[i], "old version", false,
				       P->v[i].version, err);
	}
	return rc < 0 ? rc : 0;
}

/* One item of the scan: a file queued, or at a mark, the manifests behind it (their files'
 * deletes sent first). */
static int sweep_item(plan *P, mcursor *c, lv__scan_item *it, lv_error *err)
{
	if (!it->path) {
		LV_TRY(lv__del_flush(P->del, err));
		return queue_manifests(P, c, it->mark, err);
	}
	if (lv__del_hold(P->del, it->path) < 0) {
		lv__free(it->path);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	return lv__remove_file_u(P->del, it->path, it->kind, it->size, it->reason, it->unverified, 0,
				 err);
}

/*
 * 6. Unreferenced files, and old manifests after every file they name that goes.  Deleting
 * a manifest before its files would make an interrupted run leak those files: a rerun no
 * longer knows they were committed (verified), so the age rules keep them (younger than 7
 * days, or than the cutoff) until a later cleanup finds them old enough
 * (tests/unit/test_cleanup_order.c).  Kept versions are complete in either order; the old
 * ones are already recorded as cleaned up by the checkpoint.  Each directory is judged while
 * it is listed (after the plan and the commits newer than it were read), so no list of every
 * file is held.  The manifests go behind the own pass's marks (every directory but
 * _transactions/ settled, and their own transaction files), in version order, while the scan
 * finishes; without it, after the whole scan.
 */
static int phase_sweep(plan *P, lv_error *err)
{
	lv__deleter *del = P->del;
	progress(P, "checking files", 0, LV__SWEEP_NDIRS);
	mcursor c = { 0 };
	if (!(c.block = lv__malloc(READ_BATCH * LV__MPATH)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv__scan_item it;
	size_t dirs_done = 0;
	int rc;
	/* the scan judged each file in listing order; the deletes go out here, on this thread */
	while ((rc = lv__scan_next(P->scan, &it, &dirs_done, err)) > 0) {
		if (!c.k) /* once manifests go, their count is the progress (the scan's end follows) */
			progress(P, "checking files", dirs_done, LV__SWEEP_NDIRS);
		if ((rc = sweep_item(P, &c, &it, err)) < 0)
			break;
	}
	lv__scan_end(P->scan);
	P->scan = NULL;
	if (rc >= 0) {
		if (!c.k)
			progress(P, "checking files", LV__SWEEP_NDIRS, LV__SWEEP_NDIRS);
		rc = lv__del_flush(del, err);
	}
	if (rc >= 0)
		rc = queue_manifests(P, &c, P->nv, err);
	if (rc >= 0)
		rc = lv__del_flush(del, err);
	lv__free(c.block);
	P->s.versions_removed = P->pol->dry_run ? P->nold : del->manifests_deleted;
	return rc < 0 ? rc : 0;
}

/* The policy's version list, sorted, for bsearch. */
static int sort_versions(plan *P, lv_error *err)
{
	if (!P->pol->versions)
		return 0;
	P->versions = lv__calloc(P->pol->nversions, sizeof *P->versions);
	if (!P->versions)
		return lv__err(err, LV_ENOMEM, "out of memory");
	memcpy(P->versions, P->pol->versions, P->pol->nversions * sizeof *P->versions);
	qsort(P->versions, P->pol->nversions, sizeof *P->versions, cmp_u64);
	P->nversions = P->pol->nversions;
	return 0;
}

int lv_cleanup(lv_dataset *ds, const lv_cleanup_policy *pol, lv_cleanup_stats *stats,
	       lv_error *err)
{
	LV_TRY(lv__cleanup_policy_read(ds, pol, stats, err));
	plan P;
	memset(&P, 0, sizeof P);
	P.ds = ds;
	P.pol = pol;
	P.prog.cb = pol->on_progress;
	P.prog.payload = pol->payload;
	P.now = lv__policy_now(pol->now_ms);
	P.suffix = true;
	P.hint = UINT64_MAX;
	P.earliest_kept = INT64_MAX;
	lv__dbuf_init(&P.tagmsg, 0);
	P.older = lv__policy_older(pol->older_than_ms, pol->retain_versions, pol->before_version,
				   pol->versions != NULL);
	lv__deleter *del = P.del = lv__calloc(1, sizeof *del);
	int rc = del ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	if (del) {
		del->ds = ds;
		del->p = pol;
		del->s = &P.s;
		del->rate = pol->delete_rate_limit;
	}
	/* the phases, in order: the first failure stops the run */
	static int (*const phase[])(plan *, lv_error *) = {
		sort_versions, phase_refs, phase_read, phase_cascade, phase_keep, phase_record,
		phase_sweep,
	};
	for (size_t i = 0; i < sizeof phase / sizeof phase[0] && rc == 0; i++)
		rc = phase[i](&P, err);
	if (rc == 0)
		progress(&P, "done", 1, 1);
	lv__scan_end(P.scan); /* a phase failed while it ran: stopped and joined */
	P.scan = NULL;
	lv__cleanup_stats_add(&P.s, &P.cascaded);
	lv__stats_out(stats, &P.s);
	lv__free(P.rb);
	lv_refs_free(P.refs);
	lv__free(P.v);
	lv__free(P.listed.v);
	lv__free(P.size);
	lv__free(P.old);
	lv__free(P.txn);
	for (size_t i = 0; i < P.nrows; i++)
		lv__mrow_free(P.rows[i]);
	lv__free(P.rows);
	lv__dbuf_dispose(&P.tagmsg);
	lv__free(P.versions);
	lv__strset_dispose(&P.referenced);
	lv__strset_dispose(&P.verified);
	lv__file_vec_dispose(&P.vtemps);
	lv__del_release(del);
	lv__free(del);
	return rc;
}
