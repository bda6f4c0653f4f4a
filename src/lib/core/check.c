/*
 * lv_check_run: every record of a dataset's history (head checkpoints, files
 * kept aside, archive segments, manifests, tags, branches), verified, and what
 * a damaged checkpoint or segment could still give back.
 *
 * Invariants:
 *  - Read-only, except with `salvage`, which only ever adds a checkpoint
 *    (through the writer, which deletes nothing it could not read).
 *  - A salvaged row comes from a file that decodes with its checksum
 *    ignored, carries the dataset_created of the dataset's usable
 *    checkpoints, and fills a version no readable record holds.
 *  - A file in _checkpoints/archive/ that lv__seg_choose leaves out is an
 *    item with its reason (a problem unless it is a valid, redundant
 *    segment); its rows are never salvaged.
 *  - A split identity (core/readopt.h) is an item; salvage re-adopts the
 *    complete older identity through the writer (rows of every usable head
 *    merged; a head it replaces was read whole and its rows are kept).
 */
#include "lancever/check.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/capture_gaps.h"
#include "core/checkpoint/checkpoint_internal.h"
#include "core/checkpoint/codec.h"
#include "core/checkpoint/ladder.h"
#include "core/checkpoint/store.h"
#include "core/dataset.h"
#include "core/fetch.h"
#include "core/hplan.h"
#include "core/manifests.h"
#include "core/readopt.h"
#include "core/vlist.h"
#include "format/manifest.h"
#include "core/refs.h"
#include "util/arena.h"
#include "util/abi.h"
#include "util/progress.h"
#include "util/util.h"

struct lv_check {
	lv_check_item *v;
	size_t n, cap;
	lv__arena strings;
	uint64_t salvaged;
	/* decoded damaged files, kept while their rows may be salvaged */
	lv__cp_file *files;
	size_t nfiles, capfiles;
	bool have_created;
	int64_t created;     /* dataset_created of the usable checkpoints */
	lv_version_list *history;
	lv__progress prog;   /* the options' on_progress, rate-limited */
};

/* Manifests parsed per progress step (the reads within go concurrently). */
#define CHECK_BATCH 1024

static int add(lv_check *c, int kind, const char *path, int status, const char *msg, uint64_t rows,
	       uint64_t first, uint64_t last)
{
	lv_check_item *nv = lv__grow(c->v, &c->cap, c->n, sizeof *nv, 16);
	if (!nv)
		return LV_ENOMEM;
	c->v = nv;
	lv_check_item *it = &c->v[c->n];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->path = path ? lv__arena_strdup(&c->strings, path) : NULL;
	it->message = lv__arena_strdup(&c->strings, msg ? msg : "");
	if ((path && !it->path) || !it->message)
		return LV_ENOMEM;
	it->status = status;
	it->rows = rows;
	it->first = first;
	it->last = last;
	c->n++;
	return 0;
}

/* ---- manifests and refs ---- */

static int parse_only(void *ctx, size_t chunk, size_t i, const char *path, const uint8_t *data,
		      size_t size, lv_error *err)
{
	(void)ctx;
	(void)chunk;
	(void)i;
	lv__manifest m;
	return lv__manifest_parse(data, size, path, NULL, &m, err);
}

/* Every manifest parses; each one that does not is an item with its own message. */
static int check_manifests(lv_check *c, lv_dataset *ds, const lv__manifest_entry *live, size_t n,
			   lv_error *err)
{
	const char **paths = NULL;
	char *block = NULL;
	int *rcs = lv__calloc(n ? n : 1, sizeof *rcs);
	int rc = rcs && lv__mpaths(live, n, &paths, &block) == 0 ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	/* Chunks of one: each failure keeps its own message. */
	lv_error first = { 0 };
	lv__progress_report(&c->prog, "checking manifests", 0, n);
	for (size_t at = 0; at < n && rc == 0; at += CHECK_BATCH) {
		size_t k = n - at < CHECK_BATCH ? n - at : CHECK_BATCH;
		if (lv__manifests_each(ds->st, ds->threads, paths + at, k, 1, parse_only, NULL, rcs + at,
				       &first) == LV_ENOMEM)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
		lv__progress_report(&c->prog, "checking manifests", at + k, n);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (rcs[i] == 0 || rcs[i] == LV_ENOTFOUND)
			continue;
		/* Read again alone for its message (failures are rare). */
		lv_buf b = { 0 };
		lv_error e = { 0 };
		uint64_t held;
		int r = lv__fetch_footered(ds->st, paths[i], LV__FETCH_MAX, NULL, &b, &held, &e);
		if (r == 0)
			r = parse_only(NULL, 0, i, paths[i], b.ptr, b.size, &e);
		lv_buf_dispose(&b);
		if (add(c, LV_CHECK_MANIFEST, paths[i], rcs[i], e.message, 0, live[i].version,
			live[i].version) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	lv__free(paths);
	lv__free(block);
	lv__free(rcs);
	return rc;
}

static int check_refs(lv_check *c, lv_dataset *ds, lv_error *err)
{
	lv_refs *refs = NULL;
	LV_TRY(lv__refs_load_lenient(&refs, ds->root, ds->remote ? ds->threads : 1, err));
	int rc = 0;
	for (size_t i = 0; i < lv_refs_unreadable_count(refs) && rc == 0; i++) {
		const lv_refs_bad *b = lv_refs_unreadable(refs, i);
		if (add(c, LV_CHECK_REF, b->path, LV_ECORRUPT, b->message, 0, 0, 0) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	lv_refs_free(refs);
	return rc;
}

/* ---- checkpoints ---- */

/* Keeps a decoded damaged file (its rows may be salvaged). */
static int keep_file(lv_check *c, lv__cp_file *f)
{
	lv__cp_file *nv = lv__grow(c->files, &c->capfiles, c->nfiles, sizeof *nv, 4);
	if (!nv)
		return LV_ENOMEM;
	c->files = nv;
	c->files[c->nfiles++] = *f;
	memset(f, 0, sizeof *f);
	return 0;
}

/* A damaged file's rows, decoded with the checksum ignored (into c->files), or why not. */
static int decode_damaged(lv_check *c, lv_dataset *ds, const lv__cp_name *name, uint64_t *rows,
			  uint64_t *first, uint64_t *last, lv_error *why)
{
	lv_buf b = { 0 };
	uint64_t held;
	int rc = lv__fetch_footered(ds->st, name->path, LV__CP_MAX_FILE_BYTES, NULL, &b, &held, why);
	lv__cp_file f;
	memset(&f, 0, sizeof f);
	if (rc == 0)
		rc = lv__cp_decode(b.ptr, b.size, name->path, false, NULL, 0, &f, why);
	lv_buf_dispose(&b);
	if (rc < 0)
		return rc == LV_ENOMEM ? rc : 0;
	snprintf(f.path, sizeof f.path, "%s", name->path);
	*rows = f.rows->n;
	*first = f.rows->n ? f.rows->items[0].version : 0;
	*last = f.latest;
	rc = keep_file(c, &f);
	lv__cp_file_dispose(&f);
	return rc;
}

static int check_one(lv_check *c, lv_dataset *ds, const lv__cp_name *name, int kind,
		     const lv__manifest_entry *live, size_t nlive, lv_error *err)
{
	lv__cp_file f;
	lv_error e = { 0 };
	int cls;
	uint64_t idb = 0, rows = 0, first = 0, last = 0;
	int rc = lv__cp_try(ds, name, live, nlive, true, NULL, NULL, &f, &cls, &idb, NULL, &e);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	if (rc == 0) {
		rows = f.rows->n;
		first = rows ? f.rows->items[0].version : 0;
		last = f.latest;
		if (kind == LV_CHECK_CHECKPOINT && !c->have_created) {
			c->have_created = true;
			c->created = f.created;
		}
		lv__cp_file_dispose(&f);
		snprintf(e.message, sizeof e.message, "%s",
			 kind == LV_CHECK_KEPT_ASIDE ? "decodes (kept aside by a writer that could not use it)"
						     : "");
	} else if (cls != LV__CP_VANISHED) {
		lv_error why = { 0 };
		if (decode_damaged(c, ds, name, &rows, &first, &last, &why) == LV_ENOMEM)
			return lv__err(err, LV_ENOMEM, "out of memory");
	} else {
		return 0;
	}
	if (add(c, kind, name->path, rc, e.message, rows, first, last) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	return 0;
}

static int check_checkpoints(lv_check *c, lv_dataset *ds, const lv__manifest_entry *live,
			     size_t nlive, lv_error *err)
{
	lv__cp_names names;
	LV_TRY(lv__cp_list(ds->st, &names, err));
	int rc = 0;
	uint64_t total = names.n + names.ndamaged;
	lv__progress_report(&c->prog, "checking checkpoints", 0, total);
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		rc = check_one(c, ds, &names.v[i], LV_CHECK_CHECKPOINT, live, nlive, err);
		lv__progress_report(&c->prog, "checking checkpoints", i + 1, total);
	}
	for (size_t i = 0; i < names.ndamaged && rc == 0; i++) {
		rc = check_one(c, ds, &names.damaged[i], LV_CHECK_KEPT_ASIDE, live, nlive, err);
		lv__progress_report(&c->prog, "checking checkpoints", names.n + i + 1, total);
	}
	lv__cp_names_free(&names);
	return rc;
}

/* Every listed segment, and every one the head's index names that is not there. */
static int check_segments(lv_check *c, lv_dataset *ds, lv_error *err)
{
	lv__hplan p;
	memset(&p, 0, sizeof p);
	LV_TRY(lv__hplan_load(ds, &p, err));
	int rc = 0;
	lv__progress_report(&c->prog, "checking segments", 0, p.segs.n);
	for (size_t i = 0; i < p.segs.n && rc == 0; i++) {
		lv__progress_report(&c->prog, "checking segments", i, p.segs.n);
		const lv__seg_name *name = &p.segs.v[i];
		lv__cp_file f;
		lv_error e = { 0 };
		uint64_t rows = 0, first = 0, last = 0;
		int src = lv__hplan_read_segment(&p, name, &f, &p.wl, &e);
		if (src == LV_ENOMEM) {
			rc = lv__err(err, src, "out of memory");
			break;
		}
		const lv__seg_entry *ent = lv__arc_index_find(&p.ix, name->first);
		if (src == 0) {
			rows = f.rows->n;
			first = rows ? f.rows->items[0].version : 0;
			last = f.latest;
			e.message[0] = 0;
			if (ent && ent->last == name->last && ent->rows != rows)
				src = lv__err(&e, LV_ECORRUPT, "holds %" PRIu64 " rows; the head's index says %" PRIu64,
					      rows, ent->rows);
			lv__cp_file_dispose(&f);
		} else {
			lv__cp_name n = { 0 };
			snprintf(n.path, sizeof n.path, "%s", name->path);
			lv_error why = { 0 };
			if (decode_damaged(c, ds, &n, &rows, &first, &last, &why) == LV_ENOMEM)
				rc = lv__err(err, LV_ENOMEM, "out of memory");
		}
		if (rc == 0 && add(c, LV_CHECK_SEGMENT, name->path, src, e.message, rows, first, last) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	lv__progress_report(&c->prog, "checking segments", p.segs.n, p.segs.n);
	for (size_t i = 0; i < p.segs.nstray && rc == 0; i++) /* reported, never read for salvage */
		if (add(c, LV_CHECK_SEGMENT, p.segs.stray[i].name.path, p.segs.stray[i].redundant ? 0 : LV_ECONFLICT,
			p.segs.stray[i].why, 0, 0, 0) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t i = 0; i < p.nmissing && rc == 0; i++) {
		char path[80], msg[160];
		lv__seg_path(path, sizeof path, p.missing[i].first, p.missing[i].last);
		snprintf(msg, sizeof msg, "missing: the head's index records %" PRIu64 " rows of versions %" PRIu64
			 "-%" PRIu64 " in it", p.missing[i].rows, p.missing[i].first, p.missing[i].last);
		if (add(c, LV_CHECK_SEGMENT, path, LV_ENOTFOUND, msg, 0, p.missing[i].first,
			p.missing[i].last) < 0)
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	lv__warn_commit(ds, &p.wl);
	lv__hplan_dispose(&p);
	return rc;
}

/* ---- a split identity (issue 24) ---- */

/* Reported; with salvage, the complete older identity re-adopted (nothing deleted). */
static int check_split(lv_check *c, lv_dataset *ds, const lv__manifest_entry *live, size_t nlive,
		       const lv_check_options *opts, lv_error *err)
{
	lv__split sp;
	LV_TRY(lv__split_find(ds, live, nlive, &sp, err));
	if (!sp.found)
		return 0;
	char msg[400];
	snprintf(msg, sizeof msg, "carries dataset_created %" PRId64 ", but the complete history it "
		 "relies on (%s%s, %" PRIu64 " segment(s) verified) carries %" PRId64 ": readers take that "
		 "history for another dataset's; lancever check --salvage re-adopts it", sp.newer,
		 sp.segments ? "e.g. " : "", sp.evidence, sp.segments, sp.older);
	if (add(c, LV_CHECK_CHECKPOINT, sp.head, LV_ECONFLICT, msg, 0, 0, 0) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (!opts || !opts->salvage)
		return 0;
	lv_checkpoint_result res = LV_CHECKPOINT_RESULT_INIT;
	LV_TRY(lv__cp_write_adopt(ds, opts->checkpoint, sp.older, &res, err));
	snprintf(msg, sizeof msg, "re-adopted dataset_created %" PRId64 ": %" PRIu64 " rows of both "
		 "identities' heads written under it", sp.older, res.entries);
	c->have_created = true;
	c->created = sp.older;
	return add(c, LV_CHECK_CHECKPOINT, res.path, 0, msg, res.entries, 0, res.latest_version) < 0
		       ? lv__err(err, LV_ENOMEM, "out of memory")
		       : 0;
}

/* ---- history gaps and salvage ---- */

static bool in_gap(const lv_version_list *h, uint64_t v)
{
	for (size_t g = 0; g < h->ngaps; g++)
		if (v >= h->gaps[g][0] && v <= h->gaps[g][1])
			return true;
	return false;
}

/* May a row of damaged file f fill version v's gap? */
static bool salvageable(const lv_check *c, const lv__cp_file *f, uint64_t v)
{
	return (!c->have_created || f->created == c->created) && in_gap(c->history, v);
}

static int check_gaps(lv_check *c, lv_dataset *ds, lv_error *err)
{
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv__progress_report(&c->prog, "reading history", 0, 0);
	LV_TRY(lv_history(&c->history, ds, &rep, err));
	const lv_version_list *h = c->history;
	for (size_t g = 0; g < h->ngaps; g++) {
		char msg[200];
		const char *reason = NULL; /* a capture's gap note gives a gap its reason (listed once) */
		if (lv__ds_gap_reason(ds, h->gaps[g][0], h->gaps[g][1], &reason, NULL) == LV_ENOMEM)
			return lv__err(err, LV_ENOMEM, "out of memory");
		int n = snprintf(msg, sizeof msg, "no readable record of versions %" PRIu64 "-%" PRIu64,
				 h->gaps[g][0], h->gaps[g][1]);
		if (reason && n > 0 && (size_t)n < sizeof msg)
			snprintf(msg + n, sizeof msg - (size_t)n, " (a capture missed them: %s, %s)", reason,
				 lv__capgap_text(reason));
		if (add(c, LV_CHECK_GAP, NULL, LV_ENOTFOUND, msg, 0, h->gaps[g][0], h->gaps[g][1]) < 0)
			return lv__err(err, LV_ENOMEM, "out of memory");
	}
	/* Which rows the damaged files could give back (counted per item, by path). */
	for (size_t k = 0; k < c->nfiles; k++) {
		const lv__cp_file *f = &c->files[k];
		uint64_t n = 0;
		for (size_t i = 0; i < f->rows->n; i++)
			n += salvageable(c, f, f->rows->items[i].version);
		for (size_t i = 0; i < c->n; i++)
			if (c->v[i].path && !strcmp(c->v[i].path, f->path))
				c->v[i].salvageable = n;
	}
	return 0;
}

typedef struct cand {
	lv_version_info row;
	size_t order; /* files are newest first: the first file that has a version wins */
} cand;

static int cmp_cand(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->row.version != y->row.version)
		return x->row.version < y->row.version ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Writes the salvageable rows (one per version, the first file that has it) into a checkpoint. */
static int salvage(lv_check *c, lv_dataset *ds, const lv_checkpoint_config *cfg, lv_error *err)
{
	size_t cap = 0;
	for (size_t k = 0; k < c->nfiles; k++)
		cap += c->files[k].rows->n;
	cand *cd = lv__calloc(cap ? cap : 1, sizeof *cd);
	lv_version_info *rows = lv__calloc(cap ? cap : 1, sizeof *rows);
	if (!cd || !rows) {
		lv__free(cd);
		lv__free(rows);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	size_t nc = 0, n = 0;
	for (size_t k = 0; k < c->nfiles; k++)
		for (size_t i = 0; i < c->files[k].rows->n; i++) {
			const lv_version_info *r = &c->files[k].rows->items[i];
			if (salvageable(c, &c->files[k], r->version))
				cd[nc] = (cand){ *r, nc }, nc++;
		}
	qsort(cd, nc, sizeof *cd, cmp_cand);
	for (size_t i = 0; i < nc; i++)
		if (i == 0 || cd[i].row.version != cd[i - 1].row.version)
			rows[n++] = cd[i].row;
	int rc = 0;
	if (n) {
		lv_checkpoint_result res = LV_CHECKPOINT_RESULT_INIT; /* the writer reports its phases */
		rc = lv__cp_write_extra(ds, cfg, rows, n, &c->prog, &res, err);
		if (rc == 0)
			c->salvaged = n;
	}
	lv__free(cd);
	lv__free(rows);
	return rc;
}

/* Version 2 is the floor; 3 appended on_progress and payload. */
#define CHECK_FLOOR 2

int lv_check_options_init(lv_check_options *o, int version)
{
	static const lv_check_options defaults = LV_CHECK_OPTIONS_INIT;
	size_t size = version >= 3 ? sizeof *o : offsetof(lv_check_options, on_progress);
	return lv__struct_init("lv_check_options", o, size, &defaults, version, CHECK_FLOOR,
			       LV_CHECK_OPTIONS_VERSION);
}

int lv_check_run(lv_check **out, lv_dataset *ds, const lv_check_options *opts, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_check_run: NULL argument");
	*out = NULL;
	if (opts)
		LV_TRY(lv__struct_version("lv_check_options", opts->version, CHECK_FLOOR,
					  LV_CHECK_OPTIONS_VERSION, err));
	lv_check *c = lv__calloc(1, sizeof *c);
	if (!c)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv__arena_init(&c->strings, 4096);
	if (opts && opts->version >= 3) {
		c->prog.cb = opts->on_progress;
		c->prog.payload = opts->payload;
	}
	lv__progress_report(&c->prog, "listing", 0, 0);
	lv__manifest_entry *live = NULL;
	size_t nlive = 0;
	int rc = lv__manifests_list(ds->st, &live, &nlive, err);
	if (rc == 0 && nlive == 0)
		rc = lv__not_a_dataset(ds, err);
	if (rc == 0)
		rc = check_manifests(c, ds, live, nlive, err);
	if (rc == 0) {
		lv__progress_report(&c->prog, "checking refs", 0, 0);
		rc = check_refs(c, ds, err);
	}
	if (rc == 0)
		rc = check_checkpoints(c, ds, live, nlive, err);
	if (rc == 0)
		rc = check_segments(c, ds, err);
	if (rc == 0)
		rc = check_split(c, ds, live, nlive, opts, err);
	if (rc == 0)
		rc = check_gaps(c, ds, err);
	if (rc == 0 && opts && opts->salvage)
		rc = salvage(c, ds, opts->checkpoint, err);
	lv__free(live);
	if (rc < 0) {
		lv_check_free(c);
		return rc;
	}
	lv__progress_report(&c->prog, "done", 1, 1);
	*out = c;
	return 0;
}

size_t lv_check_count(const lv_check *c) { return c ? c->n : 0; }

const lv_check_item *lv_check_get(const lv_check *c, size_t i)
{
	return c && i < c->n ? &c->v[i] : NULL;
}

size_t lv_check_problems(const lv_check *c)
{
	size_t n = 0;
	for (size_t i = 0; c && i < c->n; i++)
		n += c->v[i].status != 0 || c->v[i].kind == LV_CHECK_KEPT_ASIDE;
	return n;
}

uint64_t lv_check_salvaged(const lv_check *c) { return c ? c->salvaged : 0; }

void lv_check_free(lv_check *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < c->nfiles; k++)
		lv__cp_file_dispose(&c->files[k]);
	lv__free(c->files);
	lv_version_list_free(c->history);
	lv__arena_dispose(&c->strings);
	lv__free(c->v);
	lv__free(c);
}
