/*
 * The history's entry points over the walk (hwalk.c): lv_history_each (the
 * steps run to the end, rows to the caller's callback), the lists
 * (lv_history, lv_history_list: the rows collected), and the pull-style
 * cursor (lv_history_cursor_*: the steps run while its buffer holds fewer
 * rows than asked for).
 *
 * Invariants:
 *  - One plan per call or cursor, read before the first row (hplan.h); the
 *    rows, gaps and warnings are the walk's, whichever entry point runs it.
 *  - A cursor holds at most one archive range's rows beyond what it was asked
 *    for (a step past the archive stops when the buffer is full), so its memory
 *    is bounded by a segment, the head and `max_rows`, not by the history.
 *  - Warnings are committed to the dataset when an answer is complete: at the
 *    end of lv_history_each, at a cursor's end, and after a cursor's gap scan
 *    (whose walk is the one that warns; the rows' walk is then quiet).
 */
#include "lancever/checkpoint.h"
#include "util/abi.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hwalk.h"
#include "core/vlist.h"
#include "util/util.h"

static int options_of(const lv_history_options *opts, lv_history_options *o, lv_error *err)
{
	lv_history_options d = LV_HISTORY_OPTIONS_INIT;
	*o = d;
	if (opts) {
		LV_TRY(lv__struct_version("lv_history_options", opts->version, LV_HISTORY_OPTIONS_VERSION,
					  LV_HISTORY_OPTIONS_VERSION, err));
		*o = *opts;
	}
	return 0;
}

/* Runs a walk to its end: 0, the stop value of a callback, or an error. */
static int walk_all(lv__hwalk *w, lv_error *err)
{
	int rc;
	while ((rc = lv__hwalk_step(w, err)) > 0)
		;
	return rc < 0 ? rc : lv__hwalk_end(w, err);
}

/* The end of an answer: the report completed and written, the warnings committed. */
static int answer_end(lv__hplan *p, const lv_storage_stats *s0, lv_history_report *report,
		      lv_error *err)
{
	uint64_t added = 0;
	lv__report_end(p->ds, &p->rep, s0);
	LV_TRY(lv__warn_commit_all(p->ds, &p->wl, &added, err));
	p->rep.warnings += added; /* a cursor's gap scan committed some already */
	lv__report_put(report, &p->rep);
	return 0;
}

/* lv_history_each, from a first round already made (`seed`, may be NULL: taken over). */
static int history_each_from(lv_dataset *ds, const lv_history_options *opts, lv_history_row_fn on_row,
			     lv_history_gap_fn on_gap, void *payload, lv__round1 *seed,
			     lv_history_report *report, lv_error *err)
{
	lv_history_options o;
	int crc = !ds || !on_row ? lv__err(err, LV_EINVALID, "lv_history_each: NULL argument")
				 : lv__report_check(report, err);
	if (crc == 0)
		crc = options_of(opts, &o, err);
	if (crc < 0) {
		if (seed)
			lv__round1_dispose(seed);
		return crc;
	}
	lv__hplan p;
	lv_storage_stats s0;
	LV_TRY(lv__hplan_start_from(ds, &p, &s0, seed, err));
	lv__hwalk *w = NULL;
	int rc = lv__hwalk_new(&w, &p, &o, 0, on_row, on_gap, payload, NULL, err);
	if (rc == 0)
		rc = walk_all(w, err);
	if (rc >= 0) {
		int end = answer_end(&p, &s0, report, err);
		rc = end < 0 ? end : rc;
	}
	lv__hwalk_free(w);
	lv__hplan_dispose(&p);
	return rc;
}

int lv_history_each(lv_dataset *ds, const lv_history_options *opts, lv_history_row_fn on_row,
		    lv_history_gap_fn on_gap, void *payload, lv_history_report *report, lv_error *err)
{
	return history_each_from(ds, opts, on_row, on_gap, payload, NULL, report, err);
}

/* ---- rows collected into a list ---- */

typedef struct collect {
	lv_version_list *l;
	size_t cap, capgaps;
	int rc;
	bool live_only; /* versions(): the rows whose manifest is listed */
	size_t want;    /* a cursor's: full once l holds this many rows */
	bool full;
} collect;

static int collect_start(collect *c)
{
	c->l = lv__version_list_new(256, 1);
	c->cap = 256;
	c->capgaps = 0;
	if (!c->l)
		return LV_ENOMEM;
	lv__arena_init(&c->l->arenas[0], 65536);
	c->l->narenas = 1;
	return 0;
}

static int collect_row(const lv_version_info *v, void *payload)
{
	collect *c = payload;
	lv_version_list *l = c->l;
	if (c->live_only && v->is_cleaned_up)
		return 0;
	lv_version_info *nv = lv__grow(l->items, &c->cap, l->n, sizeof *nv, 256);
	if (!nv || (c->rc = lv__version_info_copy(&l->arenas[0], v, &nv[l->n])) < 0) {
		if (nv)
			l->items = nv;
		c->rc = LV_ENOMEM;
		return 1;
	}
	l->items = nv;
	l->n++;
	c->full = c->want && l->n >= c->want;
	return 0;
}

static int collect_gap(uint64_t first, uint64_t last, void *payload)
{
	collect *c = payload;
	lv_version_list *l = c->l;
	uint64_t(*g)[2] = lv__grow(l->gaps, &c->capgaps, l->ngaps, sizeof *g, 4);
	if (!g) {
		c->rc = LV_ENOMEM;
		return 1;
	}
	l->gaps = g;
	l->gaps[l->ngaps][0] = first;
	l->gaps[l->ngaps][1] = last;
	l->ngaps++;
	return 0;
}

int lv_history_options_init(lv_history_options *o, int version)
{
	static const lv_history_options defaults = LV_HISTORY_OPTIONS_INIT;
	return lv__struct_init("lv_history_options", o, sizeof *o, &defaults, version,
				       LV_HISTORY_OPTIONS_VERSION, LV_HISTORY_OPTIONS_VERSION);
}

int lv_history(lv_version_list **out, lv_dataset *ds, lv_history_report *report, lv_error *err)
{
	return lv_history_list(out, ds, NULL, report, err);
}

/* lv_history_list, or with live_only the live rows of the history stream and no gaps. */
static int history_collect(lv_version_list **out, lv_dataset *ds, const lv_history_options *opts,
			   bool live_only, lv__round1 *seed, lv_history_report *report, lv_error *err)
{
	*out = NULL;
	collect c = { .live_only = live_only };
	if (collect_start(&c) < 0) {
		if (seed)
			lv__round1_dispose(seed);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	int rc = history_each_from(ds, opts, collect_row, live_only ? NULL : collect_gap, &c, seed,
				   report, err);
	if (rc >= 0 && c.rc < 0)
		rc = lv__err(err, c.rc, "out of memory");
	if (rc < 0) {
		lv_version_list_free(c.l);
		return rc;
	}
	*out = c.l;
	return 0;
}

int lv__history_live_list(lv_version_list **out, lv_dataset *ds, lv_history_report *report,
			  lv_error *err)
{
	return history_collect(out, ds, NULL, true, NULL, report, err);
}

int lv__history_live_list_from(lv_version_list **out, lv_dataset *ds, lv__round1 *seed,
			       lv_history_report *report, lv_error *err)
{
	return history_collect(out, ds, NULL, true, seed, report, err);
}

int lv_history_list(lv_version_list **out, lv_dataset *ds, const lv_history_options *opts,
		    lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_history: NULL argument");
	return history_collect(out, ds, opts, false, NULL, report, err);
}

/* ---- the cursor ---- */

enum { CUR_FRESH, CUR_ROWS, CUR_END, CUR_FAILED };
#define CURSOR_PRESIZE ((size_t)1 << 20) /* rows asked for that are made room for at once */

struct lv_history_cursor {
	lv_dataset *ds; /* held (lv__dataset_hold): the caller may free it first */
	lv__hplan p;
	lv_storage_stats s0;
	lv_history_options o;
	lv__hwalk *w;   /* the rows' walk (made at the first next) */
	bool scanned;   /* a gap scan warned: the rows' walk is quiet */
	uint64_t (*known)[2]; /* the ranges that scan could not use */
	size_t nknown;
	int state;
	collect buf;    /* rows walked, not yet handed out */
};

int lv_history_cursor_open(lv_history_cursor **out, lv_dataset *ds, const lv_history_options *opts,
			   lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_history_cursor_open: NULL argument");
	*out = NULL;
	lv_history_options o;
	LV_TRY(options_of(opts, &o, err));
	lv_history_cursor *c = lv__calloc(1, sizeof *c);
	if (!c)
		return lv__err(err, LV_ENOMEM, "out of memory");
	c->o = o;
	c->ds = ds;
	lv__dataset_hold(ds);
	int rc = lv__hplan_start(ds, &c->p, &c->s0, err);
	if (rc == 0 && collect_start(&c->buf) < 0)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (rc < 0) {
		lv_history_cursor_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void lv_history_cursor_free(lv_history_cursor *c)
{
	if (!c)
		return;
	lv__hwalk_free(c->w);
	lv__free(c->known);
	lv_version_list_free(c->buf.l);
	if (c->p.ds)
		lv__hplan_dispose(&c->p);
	lv_dataset_free(c->ds); /* the hold; the dataset itself if its caller freed it already */
	lv__free(c);
}

static int cursor_fail(lv_history_cursor *c, int rc)
{
	c->state = CUR_FAILED;
	return rc;
}

/* The gap scan: the gaps (a collect, first: collect_gap's payload) and the rows' range. */
typedef struct scan {
	collect g;
	bool any;
	uint64_t first, last;
} scan;

static int scan_row(const lv_version_info *v, void *payload)
{
	scan *s = payload;
	if (!s->any)
		s->first = v->version;
	s->any = true;
	s->last = v->version;
	return 0;
}

/* With options, only the gaps strictly between the first and the last row handed out are
 * kept: what lv_version_list_select keeps of a list's gaps. */
static void scan_trim(scan *s, const lv_history_options *o)
{
	lv_version_list *l = s->g.l;
	if (!o->since_version && !o->since_time && !o->limit)
		return;
	size_t k = 0;
	for (size_t i = 0; i < l->ngaps; i++)
		if (s->any && l->gaps[i][0] > s->first && l->gaps[i][1] < s->last) {
			l->gaps[k][0] = l->gaps[i][0];
			l->gaps[k++][1] = l->gaps[i][1];
		}
	l->ngaps = k;
}

int lv_history_cursor_gaps(lv_history_cursor *c, lv_version_list **out, lv_history_report *report,
			   lv_error *err)
{
	if (!c || !out)
		return lv__err(err, LV_EINVALID, "lv_history_cursor_gaps: NULL argument");
	*out = NULL;
	LV_TRY(lv__report_check(report, err));
	if (c->state != CUR_FRESH || c->scanned)
		return lv__err(err, LV_EINVALID, "lv_history_cursor_gaps: only before the first row");
	scan sc = { 0 };
	collect *g = &sc.g;
	if (collect_start(g) < 0)
		return cursor_fail(c, lv__err(err, LV_ENOMEM, "out of memory"));
	lv__hwalk *w = NULL;
	/* Versions only, unless a time bound needs the tail's commit times to pick its rows. */
	int rc = lv__hwalk_new(&w, &c->p, &c->o, c->o.since_time ? 0 : LV__HWALK_VERSIONS, scan_row,
			       collect_gap, &sc, NULL, err);
	if (rc == 0)
		rc = walk_all(w, err);
	if (rc >= 0 && g->rc < 0)
		rc = lv__err(err, g->rc, "out of memory");
	if (rc >= 0)
		scan_trim(&sc, &c->o);
	if (rc >= 0 && lv__hwalk_failed(w, &c->known, &c->nknown) < 0)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (rc >= 0)
		rc = answer_end(&c->p, &c->s0, report, err);
	lv__hwalk_free(w);
	if (rc < 0) {
		lv_version_list_free(g->l);
		return cursor_fail(c, rc);
	}
	c->scanned = true;
	*out = g->l;
	return 0;
}

/* Hands out the buffer's first n rows (with every gap met so far); the rest stays buffered. */
static int cursor_take(lv_history_cursor *c, size_t n, lv_version_list **out)
{
	lv_version_list *l = c->buf.l;
	collect rest = { .want = c->buf.want };
	if (collect_start(&rest) < 0)
		return LV_ENOMEM;
	for (size_t i = n; i < l->n; i++)
		if (collect_row(&l->items[i], &rest) || rest.rc < 0) {
			lv_version_list_free(rest.l);
			return LV_ENOMEM;
		}
	l->n = n;
	*out = l;
	c->buf = rest;
	return 0;
}

int lv_history_cursor_next(lv_history_cursor *c, size_t max_rows, lv_version_list **out,
			   lv_history_report *report, lv_error *err)
{
	if (!c || !out || !max_rows)
		return lv__err(err, LV_EINVALID, "lv_history_cursor_next: NULL argument or max_rows 0");
	*out = NULL;
	LV_TRY(lv__report_check(report, err));
	if (c->state == CUR_FAILED)
		return lv__err(err, LV_EINVALID, "lv_history_cursor_next: the cursor failed before");
	if (c->state == CUR_END)
		return 0;
	int rc = 0;
	if (!c->w && (rc = lv__hwalk_new(&c->w, &c->p, &c->o, c->scanned ? LV__HWALK_QUIET : 0,
					 collect_row, collect_gap, &c->buf, &c->buf.full, err)) < 0)
		return cursor_fail(c, rc);
	lv__hwalk_known_failed(c->w, (const uint64_t(*)[2])c->known, c->nknown);
	c->state = CUR_ROWS;
	c->buf.want = max_rows;
	/* room for the rows asked for and a step's overshoot (a segment's rows, 4,096 unless
	 * sealed otherwise) at once, not by doubling past them; a huge max_rows (all of them)
	 * grows as it fills */
	size_t room = (max_rows < CURSOR_PRESIZE ? max_rows : CURSOR_PRESIZE) + LV__TAIL_CHUNK;
	if (c->buf.cap < room) {
		lv_version_info *nv = lv__reallocarray(c->buf.l->items, room, sizeof *nv);
		if (!nv)
			return cursor_fail(c, lv__err(err, LV_ENOMEM, "out of memory"));
		c->buf.l->items = nv;
		c->buf.cap = room;
	}
	c->buf.full = c->buf.l->n >= max_rows;
	while (!c->buf.full && (rc = lv__hwalk_step(c->w, err)) > 0)
		c->buf.full = c->buf.l->n >= max_rows;
	if (rc == 0 && !c->buf.full)
		rc = lv__hwalk_end(c->w, err);
	if (rc >= 0 && c->buf.rc < 0)
		rc = lv__err(err, c->buf.rc, "out of memory");
	if (rc < 0)
		return cursor_fail(c, rc);
	size_t n = c->buf.l->n < max_rows ? c->buf.l->n : max_rows;
	if (!c->buf.full) { /* the walk is over */
		if ((rc = answer_end(&c->p, &c->s0, report, err)) < 0)
			return cursor_fail(c, rc);
		c->state = CUR_END;
		if (n == 0 && c->buf.l->ngaps == 0)
			return 0;
	}
	if (cursor_take(c, n, out) < 0)
		return cursor_fail(c, lv__err(err, LV_ENOMEM, "out of memory"));
	return 0;
}
