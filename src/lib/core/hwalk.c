/*
 * The history walk: the history as a stream in version order, merged from
 * archive segments, the head checkpoint and the live manifests no record
 * holds, as a resumable machine (hwalk.h) under lv_history_each() and the
 * pull-style cursor (history.c).
 *
 * Invariants:
 *  - One code path: lv_history_each runs the steps to the end; the cursor runs
 *    them while its buffer is not full.  A step hands out one archive range
 *    (with the head's rows below it), or, past the archive, rows until `full`.
 *  - Liveness is never taken from a file: a row is cleaned up iff its
 *    manifest is not listed now; is_tagged comes from the tags read now.
 *  - Each version is handed out once, in increasing order; a version that no
 *    readable record holds is part of a gap, handed out in place and warned
 *    about, naming the segment or checkpoint that should have held it.
 *  - Segments are read one at a time locally (a few at once on object
 *    stores): memory is bounded by those, the head, and a chunk of manifests
 *    (with a limit, also by the rows asked for), not by the history.
 *  - Everything that can race with a concurrent writer is read in the plan,
 *    before the first row is handed out; segments are never rewritten or
 *    deleted, so reading them cannot race.
 */
#include "lancever/checkpoint.h"
#include "util/abi.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/capture_gaps.h"
#include "core/hwalk.h"
#include "core/vlist.h"
#include "format/refs.h"
#include "util/util.h"

/* A range whose segment could not be used (for the reason a gap gives). */
typedef struct failed {
	uint64_t first, last;
	char path[80];
	bool missing;
} failed;

/* The newest `cap` rows seen (--limit), deep copies. */
typedef struct ring {
	lv_version_info *v;
	char **strs;
	size_t cap, n, head; /* head: index of the oldest */
} ring;

/* What the stream does with one range of the archive. */
typedef struct seg_job {
	lv__seg_name name;
	bool missing; /* named by the head's index, not there */
	int rc;
	lv_error e;
	lv__cp_file f;
} seg_job;

enum { PH_SEGS, PH_TAIL, PH_RING, PH_END };

typedef struct lv__hwalk emitter;
struct lv__hwalk {
	lv__hplan *p;
	unsigned flags;    /* LV__HWALK_* */
	lv__warnlog *wl;   /* &p->wl, or (quiet) scratch */
	lv__warnlog scratch;
	const bool *full;  /* the consumer's: set, a step past the archive pauses */
	lv_version_info synth; /* versions only: the tail's current row */
	int phase;
	seg_job *jobs;     /* the archive's ranges, sorted */
	size_t njobs, ji, fetched; /* jobs[ji, fetched) are fetched */
	uint64_t floor, unrecorded;
	size_t rk;         /* ring rows handed out */
	const uint64_t (*known)[2]; /* quiet: the ranges the gap scan could not use */
	size_t nknown;
	lv_history_options o;
	lv_history_row_fn on_row;
	lv_history_gap_fn on_gap;
	void *payload;
	uint64_t *tagged; /* sorted versions tagged on this branch */
	size_t ntagged;
	size_t hi;        /* head rows handed out or passed */
	size_t ti;        /* tail entries consumed */
	lv_version_list *chunk; /* the tail's current chunk (streamed) */
	size_t ci;
	bool any;
	uint64_t last;    /* the last version handed out (or passed) */
	uint64_t next;    /* the lowest version not yet accounted for */
	bool gaps_on;     /* in-place gaps (not with a limit) */
	failed *failed;
	size_t nfailed;
	ring ring;
	int stop;         /* a callback's non-zero */
	uint64_t vanished;
	lv__capgaps notes; /* gap notes of captures (capture_gaps.h), listed at the first gap */
	bool notes_listed;
	bool nomem;        /* out of memory listing them: the call fails */
};

/* ---- tags ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int load_tagged(emitter *em)
{
	const lv_refs *refs = em->p->refs;
	lv_dataset *ds = em->p->ds;
	if (!refs) {
		lv__warn(em->wl, LV_WARN_TAG_UNREADABLE, LV_REFS_TAGS_DIR, 0, 0,
			 "tags could not be read (%s); is_tagged may be incomplete", em->p->refs_err.message);
		return 0;
	}
	size_t nt = lv_refs_tag_count(refs);
	if (!(em->tagged = lv__calloc(nt ? nt : 1, sizeof *em->tagged)))
		return LV_ENOMEM;
	for (size_t t = 0; t < nt; t++) {
		const lv_tag *tag = lv_refs_tag(refs, t);
		bool tag_main = !tag->branch || !strcmp(tag->branch, "main");
		if (ds->branch ? (!tag_main && !strcmp(tag->branch, ds->branch)) : tag_main)
			em->tagged[em->ntagged++] = tag->version;
	}
	qsort(em->tagged, em->ntagged, sizeof *em->tagged, cmp_u64);
	return 0;
}

/* ---- gaps ---- */

/* The note of a capture that missed some of first..last (the folder is listed at the first gap;
 * one that cannot be listed gives no note: the gap is reported as before). */
static const lv__capgap *gap_note(emitter *em, uint64_t first, uint64_t last)
{
	if (!em->notes_listed) {
		lv_error e = { 0 };
		em->notes_listed = true;
		int rc = lv__capgap_list(em->p->ds->st, &em->notes, &e);
		if (rc == LV_ENOMEM) { /* never a warning: the call fails (the stream stops here) */
			em->nomem = true;
			em->stop = em->stop ? em->stop : LV_ENOMEM;
		} else if (rc < 0) {
			lv__warn(em->wl, LV_WARN_HISTORY_GAP, LV__CAPGAP_DIR, 0, 0,
				 "gap notes could not be listed (%s); gaps are reported without their reason",
				 e.message);
		} else if (em->notes.nstray) {
			lv__warn(em->wl, LV_WARN_HISTORY_GAP, LV__CAPGAP_DIR, 0, 0,
				 "%zu name(s) in " LV__CAPGAP_DIR " are not gap notes (ignored)", em->notes.nstray);
		}
		if (rc == 0) /* the handle answers the caller's gap reasons from it (no memory: it lists again) */
			(void)lv__ds_notes_keep(em->p->ds, &em->notes);
	}
	return lv__capgap_find(&em->notes, first, last);
}

static const char *note_range(const lv__capgap *g, char *buf, size_t cap)
{
	lv__format_range(buf, cap, g->first, g->last);
	return buf;
}

/* Why versions first..last have no record, for the warning that says so. */
static void warn_gap(emitter *em, uint64_t first, uint64_t last)
{
	lv__hplan *p = em->p;
	const lv__capgap *note;
	char range[64], nr[64];
	lv__format_range(range, sizeof range, first, last);
	for (size_t i = 0; i < em->nfailed; i++) {
		const failed *f = &em->failed[i];
		if (f->first <= last && first <= f->last) {
			lv__warn(em->wl, LV_WARN_HISTORY_GAP, f->path, first, last,
				 "%s: no record; segment %s %s", range, f->path,
				 f->missing ? "is missing" : "could not be used (see above)");
			return;
		}
	}
	const lv__cp_name *aside = NULL; /* the oldest damaged file that may hold the range */
	for (size_t i = p->names.ndamaged; i-- > 0 && !aside;)
		if (p->names.damaged[i].version >= first)
			aside = &p->names.damaged[i];
	if (p->max_rejected >= first)
		lv__warn(em->wl, LV_WARN_HISTORY_GAP, NULL, first, last,
			 "%s: no record in any usable checkpoint; a rejected checkpoint (see above) may hold them",
			 range);
	else if (aside)
		lv__warn(em->wl, LV_WARN_HISTORY_GAP, aside->path, first, last,
			 "%s: no record; the damaged checkpoint kept as %s may hold them "
			 "(lancever check --salvage)", range, aside->path);
	else if ((note = gap_note(em, first, last)) != NULL)
		lv__warn(em->wl, LV_WARN_HISTORY_GAP, NULL, first, last, "%s: no record; lancever capture missed %s: %s",
			 range, note_range(note, nr, sizeof nr), lv__capgap_text(note->reason));
	else
		lv__warn(em->wl, LV_WARN_HISTORY_GAP, NULL, first, last,
			 "%s: no record (cleaned up before any checkpoint recorded them, or trimmed "
			 "by max_entries)", range);
}

static void gap(emitter *em, uint64_t first, uint64_t last)
{
	if (!(em->flags & LV__HWALK_QUIET)) { /* else a gap scan warned and counted it */
		warn_gap(em, first, last);
		em->p->rep.unrecorded_versions += last - first + 1;
	}
	if (em->on_gap && !em->stop)
		em->stop = em->on_gap(first, last, em->payload);
}

/* ---- the limit's ring ---- */

static void ring_dispose(ring *r)
{
	for (size_t i = 0; r->strs && i < r->cap; i++)
		lv__free(r->strs[i]);
	lv__free(r->strs);
	lv__free(r->v);
	memset(r, 0, sizeof *r);
}

/* A deep copy of v into slot i. */
static int ring_put(ring *r, size_t i, const lv_version_info *v)
{
	const char *s[4] = { v->transaction_uuid, v->operation_type, v->transaction_properties,
			     v->manifest_path };
	size_t len[4], total = 0;
	for (int k = 0; k < 4; k++)
		total += (len[k] = s[k] ? strlen(s[k]) + 1 : 0);
	char *buf = lv__malloc(total ? total : 1), *at = buf;
	if (!buf)
		return LV_ENOMEM;
	lv__free(r->strs[i]);
	r->strs[i] = buf;
	lv_version_info c = *v;
	const char **dst[4] = { &c.transaction_uuid, &c.operation_type, &c.transaction_properties,
				&c.manifest_path };
	for (int k = 0; k < 4; k++) {
		*dst[k] = s[k] ? memcpy(at, s[k], len[k]) : NULL;
		at += len[k];
	}
	c.has_manifest_details = false; /* the other details' strings are not kept */
	r->v[i] = c;
	return 0;
}

static int ring_push(ring *r, const lv_version_info *v)
{
	if (r->n < r->cap) {
		LV_TRY(ring_put(r, (r->head + r->n) % r->cap, v));
		r->n++;
		return 0;
	}
	LV_TRY(ring_put(r, r->head, v));
	r->head = (r->head + 1) % r->cap;
	return 0;
}

/* Hands out the ring's rows in order, with the gaps between them. */
static void ring_flush(emitter *em)
{
	ring *r = &em->ring;
	for (size_t k = em->rk; k < r->n && !em->stop && !*em->full; k = ++em->rk) {
		const lv_version_info *v = &r->v[(r->head + k) % r->cap];
		if (k > 0 && !em->o.since_time) {
			uint64_t prev = r->v[(r->head + k - 1) % r->cap].version;
			if (v->version > prev + 1)
				gap(em, prev + 1, v->version - 1);
		}
		if (!em->stop)
			em->stop = em->on_row(v, em->payload);
	}
}

/* ---- handing out one row ---- */

static int emit_row(emitter *em, const lv_version_info *src)
{
	uint64_t v = src->version;
	if (em->stop || (em->any && v <= em->last))
		return 0; /* already handed out (a copy in the head, an overlapping segment) */
	em->any = true;
	em->last = v;
	lv_version_info r = *src;
	char path[LV__MPATH];
	bool live = lv__hplan_live(em->p, v, path);
	r.is_cleaned_up = !live;
	if (!r.has_manifest_details)
		r.manifest_path = live ? path : NULL;
	size_t t = lv__lower_bound_u64(em->tagged, em->ntagged, sizeof *em->tagged, 0, v);
	r.is_tagged = t < em->ntagged && em->tagged[t] == v;
	if (em->gaps_on) {
		if (em->next == 0)
			em->next = em->p->ds->branch ? v : 1;
		if (v > em->next)
			gap(em, em->next, v - 1);
		if (v >= em->next)
			em->next = v + 1;
	}
	if (v < em->o.since_version || (em->o.since_time && r.timestamp_millis < em->o.since_ms) ||
	    em->stop)
		return 0;
	if (em->o.limit)
		return ring_push(&em->ring, &r);
	em->stop = em->on_row(&r, em->payload);
	return 0;
}

/* ---- the head's rows and the tail's, merged ---- */

/* The next tail row (read a chunk at a time when the tail was too long to read first), or NULL. */
static const lv_version_info *tail_peek(emitter *em, lv_error *err, int *rc)
{
	lv__hplan *p = em->p;
	*rc = 0;
	if (p->tail_rows)
		return em->ti < p->tail_rows->n ? &p->tail_rows->items[em->ti] : NULL;
	if (em->flags & LV__HWALK_VERSIONS) { /* the listing's versions, no manifest read */
		if (em->ti >= p->ntail)
			return NULL;
		em->synth = (lv_version_info){ .version = p->tail[em->ti]->version };
		return &em->synth;
	}
	if (em->chunk && em->ci < em->chunk->n)
		return &em->chunk->items[em->ci];
	while (em->ti < p->ntail) {
		lv_version_list_free(em->chunk);
		em->ci = 0;
		size_t n = p->ntail - em->ti < LV__TAIL_CHUNK ? p->ntail - em->ti : LV__TAIL_CHUNK;
		if (!(em->chunk = lv__version_list_new(n, n))) {
			*rc = lv__err(err, LV_ENOMEM, "out of memory");
			return NULL;
		}
		*rc = lv__hplan_read_tail(p, em->ti, n, em->chunk, err);
		em->ti += n;
		p->rep.manifests_read += n;
		if (*rc < 0)
			return NULL;
		for (size_t i = 0; i < em->chunk->nvanished; i++) /* never quiet: no scan read them */
			lv__warn(&p->wl, LV_WARN_MANIFEST_VANISHED, em->chunk->vanished[i], 0, 0,
				 "manifest %s vanished while being read (a concurrent cleanup?); skipped",
				 em->chunk->vanished[i]);
		p->rep.manifests_vanished += em->chunk->nvanished;
		em->vanished += em->chunk->nvanished;
		lv__sort_infos(em->chunk->items, em->chunk->n);
		if (em->chunk->n)
			return &em->chunk->items[0];
	}
	return NULL;
}

static void tail_pop(emitter *em)
{
	if (em->p->tail_rows || (em->flags & LV__HWALK_VERSIONS))
		em->ti++;
	else
		em->ci++;
}

/* Hands out (or, pass, skips) the head's and the tail's rows up to version `upto`, in order. */
static int emit_until(emitter *em, uint64_t upto, bool pass, lv_error *err)
{
	const lv_version_list *h = em->p->head.rows;
	while (!em->stop && !(em->phase == PH_TAIL && *em->full)) {
		int rc;
		const lv_version_info *a = h && em->hi < h->n && h->items[em->hi].version <= upto
						   ? &h->items[em->hi]
						   : NULL;
		const lv_version_info *b = tail_peek(em, err, &rc);
		if (rc < 0)
			return rc;
		if (b && b->version > upto)
			b = NULL;
		if (!a && !b)
			return 0;
		const lv_version_info *take = !b || (a && a->version <= b->version) ? a : b;
		if (take == a)
			em->hi++;
		else
			tail_pop(em);
		if (!pass && (rc = emit_row(em, take)) < 0)
			return lv__err(err, rc, "out of memory");
	}
	return 0;
}

/* ---- segments ---- */

static void fetch_job(size_t i, void *arg)
{
	void **a = arg;
	lv__hplan *p = a[0];
	seg_job *jobs = a[1];
	seg_job *j = &jobs[i];
	if (!j->missing)
		j->rc = lv__hplan_segment_fetch(p, &j->name, &j->f, &j->e);
}

/* Rows for live versions in [first, last] that neither `f` nor the head holds (read now). */
static int live_missing(emitter *em, const seg_job *j, lv_version_list **out, lv_error *err)
{
	lv__hplan *p = em->p;
	size_t li = lv__lower_bound_u64(p->live, p->nlive, sizeof *p->live,
					offsetof(lv__manifest_entry, version), j->name.first);
	lv__manifest_entry *want = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = li; i < p->nlive && p->live[i].version <= j->name.last; i++) {
		uint64_t v = p->live[i].version;
		if ((j->f.rows && lv__vlist_find(j->f.rows, v)) || (p->head.rows && lv__vlist_find(p->head.rows, v)))
			continue;
		lv__manifest_entry *nw = lv__grow(want, &cap, n, sizeof *nw, 16);
		if (!nw) {
			lv__free(want);
			return lv__err(err, LV_ENOMEM, "out of memory");
		}
		want = nw;
		want[n++] = p->live[i];
	}
	int rc = 0;
	if (n && (em->flags & LV__HWALK_VERSIONS)) { /* their versions are enough */
		if (!(*out = lv__version_list_new(n, 1)))
			rc = lv__err(err, LV_ENOMEM, "out of memory");
		for (size_t i = 0; rc == 0 && i < n; i++)
			(*out)->items[(*out)->n++] = (lv_version_info){ .version = want[i].version };
	} else if (n) {
		const char **paths = NULL;
		char *block = NULL;
		*out = lv__version_list_new(n, n);
		rc = *out && lv__mpaths(want, n, &paths, &block) == 0
			     ? lv__read_into_list(*out, p->ds->st, p->ds->threads, paths, n, err)
			     : lv__err(err, LV_ENOMEM, "out of memory");
		lv__free(paths);
		lv__free(block);
		p->rep.manifests_read += n;
		if (rc == 0)
			lv__sort_infos((*out)->items, (*out)->n);
	}
	lv__free(want);
	return rc;
}

/* One range of the archive: the segment's rows merged with the head's and any live manifest's. */
static int emit_segment(emitter *em, seg_job *j, lv_error *err)
{
	LV_TRY(emit_until(em, j->name.first - 1, false, err));
	if (j->missing || j->rc < 0) {
		failed *nf = lv__reallocarray(em->failed, em->nfailed + 1, sizeof *nf);
		if (!nf)
			return lv__err(err, LV_ENOMEM, "out of memory");
		em->failed = nf;
		nf[em->nfailed] = (failed){ j->name.first, j->name.last, "", j->missing };
		snprintf(nf[em->nfailed].path, sizeof nf->path, "%s", j->name.path);
		em->nfailed++;
	}
	lv_version_list *extra = NULL;
	int rc = live_missing(em, j, &extra, err);
	const lv_version_list *s = j->f.rows;
	size_t si = 0, xi = 0;
	while (rc == 0) {
		const lv_version_info *a = s && si < s->n ? &s->items[si] : NULL;
		const lv_version_info *b = extra && xi < extra->n ? &extra->items[xi] : NULL;
		if (!a && !b)
			break;
		uint64_t v = !b || (a && a->version <= b->version) ? a->version : b->version;
		/* the head's (and tail's) rows below v first, then the lowest of the two */
		if ((rc = emit_until(em, v - 1, false, err)) < 0)
			break;
		const lv_version_info *take = !b || (a && a->version <= b->version) ? a : b;
		if (take == a)
			si++;
		else
			xi++;
		if ((rc = emit_row(em, take)) < 0)
			rc = lv__err(err, rc, "out of memory");
	}
	if (rc == 0)
		rc = emit_until(em, j->name.last, false, err);
	lv_version_list_free(extra);
	return rc;
}

/* ---- which ranges are read ---- */

static int cmp_job(const void *a, const void *b)
{
	const seg_job *x = a, *y = b;
	if (x->name.first != y->name.first)
		return x->name.first < y->name.first ? -1 : 1;
	return x->name.last < y->name.last ? -1 : x->name.last > y->name.last;
}

/* Every listed segment and every one the index names but is missing, sorted. */
static seg_job *all_jobs(const lv__hplan *p, size_t *n)
{
	*n = p->segs.n + p->nmissing;
	seg_job *j = lv__calloc(*n ? *n : 1, sizeof *j);
	if (!j)
		return NULL;
	for (size_t i = 0; i < p->segs.n; i++)
		j[i].name = p->segs.v[i];
	for (size_t i = 0; i < p->nmissing; i++) {
		seg_job *m = &j[p->segs.n + i];
		m->missing = true;
		m->name.first = p->missing[i].first;
		m->name.last = p->missing[i].last;
		lv__seg_path(m->name.path, sizeof m->name.path, m->name.first, m->name.last);
	}
	qsort(j, *n, sizeof *j, cmp_job);
	return j;
}

/*
 * The oldest version a --limit needs: the head's own rows and the live tail
 * count exactly; segments count by the index's row counts (an unindexed or
 * missing one counts nothing, so one more is read), newest first.
 */
static uint64_t limit_floor(const lv__hplan *p, const seg_job *jobs, size_t n, uint64_t limit)
{
	uint64_t have = p->ntail;
	const lv_version_list *h = p->head.rows;
	for (size_t i = 0; h && i < h->n; i++)
		have += h->items[i].version > p->through;
	for (size_t i = n; i-- > 0 && have < limit;) {
		const lv__seg_entry *e = lv__arc_index_find(&p->ix, jobs[i].name.first);
		if (e && e->last == jobs[i].name.last && !jobs[i].missing)
			have += e->rows;
		if (have >= limit)
			return jobs[i].name.first;
	}
	return have >= limit ? p->through + 1 : 0;
}

/* Is this range left unread?  (Its versions are all older than what was asked for.) */
static bool skipped(const emitter *em, const seg_job *j, uint64_t floor, uint64_t *unrecorded)
{
	const lv_history_options *o = &em->o;
	if (o->since_version && j->name.last < o->since_version)
		return true;
	if (o->limit && j->name.last < floor)
		return true;
	if (o->since_time && !j->missing) {
		const lv__seg_entry *e = lv__arc_index_find(&em->p->ix, j->name.first);
		if (e && e->last == j->name.last && e->max_ts < o->since_ms) {
			if (unrecorded) /* NULL: a look ahead, counted when reached */
				*unrecorded += (e->last - e->first + 1) - e->rows;
			return true;
		}
	}
	return false;
}

static bool known_failed(const emitter *em, const seg_job *j)
{
	for (size_t i = 0; i < em->nknown; i++)
		if (em->known[i][0] == j->name.first && em->known[i][1] == j->name.last)
			return true;
	return false;
}

/* The next archive range: skipped (accounted for, not read), or read -- the next run of ranges
 * that are read is fetched at once (one locally, several at once on object stores). */
static int step_segment(emitter *em, lv_error *err)
{
	lv__hplan *p = em->p;
	seg_job *j = &em->jobs[em->ji];
	int rc = 0;
	if (em->ji >= em->fetched && skipped(em, j, em->floor, &em->unrecorded)) {
		rc = emit_until(em, j->name.first - 1, false, err);
		if (rc == 0)
			rc = emit_until(em, j->name.last, true, err);
		if (em->next <= j->name.last)
			em->next = j->name.last + 1; /* accounted for, not read */
		em->ji++;
		return rc;
	}
	if (em->ji >= em->fetched) {
		size_t batch = p->ds->remote ? (size_t)(p->ds->threads < 8 ? p->ds->threads : 8) : 1;
		size_t k = 1;
		while (em->ji + k < em->njobs && k < batch && !skipped(em, &j[k], em->floor, NULL))
			k++;
		void *args[2] = { p, j };
		lv__parallel_for(k, (int)batch, fetch_job, args);
		em->fetched = em->ji + k;
	}
	lv__warnlog *wl = em->flags & LV__HWALK_QUIET ? &em->scratch : &p->wl;
	if (!j->missing && (j->rc = lv__hplan_segment_accept(p, &j->name, j->rc, &j->f, &j->e, wl)) == LV_ENOMEM)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	else if (!j->missing && j->rc < 0 && (em->flags & LV__HWALK_QUIET) && !known_failed(em, j))
		/* the scan used it (its rows are promised): a gap now would be a silent hole */
		rc = lv__err(err, j->rc, "%s could not be read again (%s)", j->name.path, j->e.message);
	if (rc == 0 && !em->stop)
		rc = emit_segment(em, j, err);
	lv__cp_file_dispose(&j->f);
	em->ji++;
	return rc;
}

int lv__hwalk_step(lv__hwalk *em, lv_error *err)
{
	if (em->stop)
		em->phase = PH_END;
	switch (em->phase) {
	case PH_SEGS:
		if (em->ji < em->njobs) {
			int rc = step_segment(em, err);
			return rc < 0 ? rc : 1;
		}
		if (em->unrecorded)
			lv__warn(em->wl, LV_WARN_HISTORY_GAP, NULL, 0, 0,
				 "%" PRIu64 " versions in segments not read (every version they record is older "
				 "than the time asked for) have no record; any of them may have been committed "
				 "later", em->unrecorded);
		em->phase = PH_TAIL;
		return 1;
	case PH_TAIL:
		LV_TRY(emit_until(em, UINT64_MAX, false, err));
		if (!*em->full || em->stop)
			em->phase = em->o.limit ? PH_RING : PH_END;
		return 1;
	case PH_RING:
		ring_flush(em);
		if (em->rk >= em->ring.n || em->stop)
			em->phase = PH_END;
		return 1;
	default:
		return 0;
	}
}

static const bool never_full = false;

int lv__hwalk_new(lv__hwalk **out, lv__hplan *p, const lv_history_options *o, unsigned flags,
		  lv_history_row_fn on_row, lv_history_gap_fn on_gap, void *payload, const bool *full,
		  lv_error *err)
{
	emitter *em = lv__calloc(1, sizeof *em);
	if (!em)
		return lv__err(err, LV_ENOMEM, "out of memory");
	*em = (emitter){ .p = p, .o = *o, .flags = flags, .on_row = on_row, .on_gap = on_gap,
			 .payload = payload, .full = full ? full : &never_full, .gaps_on = !o->limit,
			 .next = o->since_version };
	em->wl = flags & LV__HWALK_QUIET ? &em->scratch : &p->wl;
	*out = em;
	if (load_tagged(em) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (o->limit) {
		em->ring.cap = o->limit;
		em->ring.v = lv__calloc(o->limit, sizeof *em->ring.v);
		em->ring.strs = lv__calloc(o->limit, sizeof *em->ring.strs);
		if (!em->ring.v || !em->ring.strs)
			return lv__err(err, LV_ENOMEM, "out of memory (--limit %" PRIu64 ")", o->limit);
	}
	if (!(em->jobs = all_jobs(p, &em->njobs)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	em->floor = o->limit ? limit_floor(p, em->jobs, em->njobs, o->limit) : 0;
	return 0;
}

int lv__hwalk_end(lv__hwalk *em, lv_error *err)
{
	if (em->nomem)
		return lv__err(err, LV_ENOMEM, "out of memory listing " LV__CAPGAP_DIR);
	return em->stop;
}

void lv__hwalk_free(lv__hwalk *em)
{
	if (!em)
		return;
	for (size_t i = 0; em->jobs && i < em->njobs; i++)
		lv__cp_file_dispose(&em->jobs[i].f);
	lv__free(em->jobs);
	ring_dispose(&em->ring);
	lv_version_list_free(em->chunk);
	lv__free(em->failed);
	lv__capgaps_dispose(&em->notes);
	lv__free(em->tagged);
	lv__warnlog_dispose(&em->scratch);
	lv__free(em);
}

int lv__hwalk_failed(const lv__hwalk *em, uint64_t (**out)[2], size_t *n)
{
	*n = 0;
	if (!(*out = lv__calloc(em->nfailed ? em->nfailed : 1, sizeof **out)))
		return LV_ENOMEM;
	for (size_t i = 0; i < em->nfailed; i++) {
		(*out)[i][0] = em->failed[i].first;
		(*out)[i][1] = em->failed[i].last;
	}
	*n = em->nfailed;
	return 0;
}

void lv__hwalk_known_failed(lv__hwalk *em, const uint64_t (*known)[2], size_t n)
{
	em->known = known;
	em->nknown = n;
}
