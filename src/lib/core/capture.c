/*
 * lv_capture: incremental capture of one dataset (lancever/capture.h).
 *
 * Invariants:
 *  - The position `known` only grows, and only past versions that are held,
 *    noted as a pending gap, or recorded by a checkpoint (the newest one's
 *    name at open).  A failed poll takes nothing and leaves it where it was.
 *  - A record is held from its manifest as read (properties wrapped as a
 *    checkpoint wraps them); the manifest's bytes are not kept.  Held records
 *    are dropped only after a flush wrote and verified a checkpoint holding
 *    them (lv__cp_write_captured: create-if-absent, read back); a failed
 *    flush keeps them and the pending gaps for the next one.
 *  - Every version above the position at open is accounted for exactly once:
 *    held (captured), or in a gap (missed) whose note is written at a flush.
 *  - The dataset's warnings are cleared when a poll, or a flush with work, starts:
 *    a capture that runs for months holds no growing list of them.
 *  - A flush's checkpoint also records the manifests live when it was written,
 *    which may be newer than the position: their versions (`rec`: from the
 *    head the flush read back, or from the history when that head does not
 *    reach down to the position) are neither held again nor called missed;
 *    a version above the position that it did not record is still a gap.
 *  - The listing stops early only on a remote store, and only while every
 *    name seen is V2 (newest first in name order): it stops at the first
 *    name not newer than the position.
 */
#include "lancever/capture.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/capture_gaps.h"
#include "core/checkpoint/checkpoint_internal.h"
#include "core/checkpoint/writer.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/vlist.h"
#include "format/manifest.h"
#include "util/abi.h"
#include "util/util.h"

typedef struct pending_gap {
	uint64_t first, last;
	const char *reason;
} pending_gap;

struct lv_capture {
	lv_dataset *ds;
	int64_t flush_ms;
	uint64_t known;       /* the position */
	bool v2_only;         /* every manifest name seen is V2 */
	lv__rows held;        /* sorted by version, manifest_path set */
	pending_gap *gaps;
	size_t ngaps, capgaps;
	int64_t since;        /* lv_capture_clock_ms() of the oldest held record or gap */
	uint64_t *rec;        /* versions in (known, rec_upto] the last flush recorded, sorted */
	size_t nrec;
	uint64_t rec_upto;
	lv_capture_stats st;  /* counters (version: this library's) */
};

int lv_capture_options_init(lv_capture_options *o, int version)
{
	return lv__struct_init("lv_capture_options", o, sizeof *o, NULL, version, LV_CAPTURE_OPTIONS_VERSION,
			       LV_CAPTURE_OPTIONS_VERSION);
}

int lv_capture_stats_init(lv_capture_stats *s, int version)
{
	return lv__struct_init("lv_capture_stats", s, sizeof *s, NULL, version, LV_CAPTURE_STATS_VERSION,
			       LV_CAPTURE_STATS_VERSION);
}

int64_t lv_capture_clock_ms(void)
{
	return (int64_t)(lv__mono_ns() / 1000000u);
}

/* Copies the counters into the caller's checked struct, keeping its version (one version today). */
static void stats_out(lv_capture_stats *dst, const lv_capture *c)
{
	int v = dst->version;
	*dst = c->st;
	dst->version = v;
	dst->held = c->held.n;
}

int lv_capture_get_stats(const lv_capture *c, lv_capture_stats *s)
{
	if (!c || !s)
		return LV_EINVALID;
	LV_TRY(lv__struct_version("lv_capture_stats", s->version, LV_CAPTURE_STATS_VERSION,
				  LV_CAPTURE_STATS_VERSION, NULL));
	stats_out(s, c);
	return 0;
}

int lv_capture_open(lv_capture **out, lv_dataset *ds, const lv_capture_options *o, lv_error *err)
{
	if (out)
		*out = NULL;
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_capture_open: NULL argument");
	if (o) {
		LV_TRY(lv__struct_version("lv_capture_options", o->version, LV_CAPTURE_OPTIONS_VERSION,
					  LV_CAPTURE_OPTIONS_VERSION, err));
		if (o->flush_ms < 0)
			return lv__err(err, LV_EINVALID, "lv_capture_open: flush_ms is negative");
	}
	lv_capture *c = lv__calloc(1, sizeof *c);
	if (!c)
		return lv__err(err, LV_ENOMEM, "out of memory");
	c->ds = ds;
	c->flush_ms = o && o->flush_ms ? o->flush_ms : LV_CAPTURE_FLUSH_MS_DEFAULT;
	c->v2_only = true;
	c->st.version = LV_CAPTURE_STATS_VERSION;
	lv_storage_stats s0 = LV_STORAGE_STATS_INIT, s1 = LV_STORAGE_STATS_INIT;
	(void)lv_storage_get_stats(ds->root, &s0);
	int rc = lv__cp_newest_name(ds->st, &c->known, err);
	(void)lv_storage_get_stats(ds->root, &s1);
	c->st.requests += s1.requests - s0.requests;
	if (rc < 0) {
		lv__free(c);
		return rc;
	}
	c->st.newest_version = c->known;
	*out = c;
	return 0;
}

void lv_capture_free(lv_capture *c)
{
	if (!c)
		return;
	lv__rows_dispose(&c->held);
	lv__free(c->gaps);
	lv__free(c->rec);
	lv__free(c);
}

bool lv_capture_due(const lv_capture *c, int64_t now_ms)
{
	return c && (c->held.n || c->ngaps) && now_ms - c->since >= c->flush_ms;
}

/* ---- the listing ---- */

typedef struct listing {
	lv__manifest_entry *v; /* versions > known */
	size_t n, cap;
	uint64_t known;
	bool early;            /* may stop at the first V2 name not newer than known */
	bool v1;               /* a V1 name was seen */
	int rc;
} listing;

static int list_cb(const lv_list_entry *e, void *payload)
{
	listing *l = payload;
	const char *base = strrchr(e->path, '/');
	const char *name = base ? base + 1 : e->path;
	uint64_t version;
	int scheme = lv__version_name_parse(name, &version);
	/* the canonical spellings only (lv__mpath writes them back): no leading zero in V1 */
	if (scheme == LV_NAME_NONE || (scheme == LV_NAME_V1 && name[0] == '0'))
		return 0;
	l->v1 |= scheme == LV_NAME_V1;
	if (version <= l->known)
		return l->early && scheme == LV_NAME_V2 && !l->v1 ? 1 : 0;
	lv__manifest_entry *nv = lv__grow(l->v, &l->cap, l->n, sizeof *nv, 16);
	if (!nv) {
		l->rc = LV_ENOMEM;
		return 1;
	}
	l->v = nv;
	nv[l->n++] = (lv__manifest_entry){ version, scheme };
	return 0;
}

/* The manifests newer than the position, sorted, one per version (V2 kept). */
static int list_new(lv_capture *c, listing *l, lv_error *err)
{
	memset(l, 0, sizeof *l);
	l->known = c->known;
	lv_storage *st = c->ds->st;
	int rc;
	if (lv_storage_is_remote(st)) { /* name order (S3, Azure): V2 newest first, stop early */
		l->early = c->v2_only && c->known > 0;
		rc = lv_storage_list(st, "_versions", false, list_cb, l, err);
	} else { /* one request whatever its order: names only, no stat per entry */
		rc = lv_storage_list_names(st, "_versions", list_cb, l, err);
	}
	if (rc >= 0 && l->rc < 0)
		rc = lv__err(err, l->rc, "out of memory listing _versions");
	if (rc < 0) {
		lv__free(l->v);
		l->v = NULL;
		return rc;
	}
	c->v2_only &= !l->v1;
	l->n = lv__entries_sort_fold(l->v, l->n);
	return 0;
}

/* ---- holding ---- */

static int add_gap(lv_capture *c, uint64_t first, uint64_t last, const char *reason)
{
	pending_gap *g = lv__grow(c->gaps, &c->capgaps, c->ngaps, sizeof *g, 4);
	if (!g)
		return LV_ENOMEM;
	c->gaps = g;
	g[c->ngaps++] = (pending_gap){ first, last, reason };
	c->st.missed += last - first + 1;
	return 0;
}

static bool recorded(const lv_capture *c, uint64_t v)
{
	size_t i = lv__lower_bound_u64(c->rec, c->nrec, sizeof *c->rec, 0, v);
	return v <= c->rec_upto && i < c->nrec && c->rec[i] == v;
}

/* add_gap for the versions of [first, last] the last flush did not record. */
static int add_gap_unrecorded(lv_capture *c, uint64_t first, uint64_t last, const char *reason)
{
	uint64_t from = first;
	size_t i = lv__lower_bound_u64(c->rec, c->nrec, sizeof *c->rec, 0, first);
	for (; i < c->nrec && c->rec[i] <= last; i++) {
		if (c->rec[i] > from)
			LV_TRY(add_gap(c, from, c->rec[i] - 1, reason));
		from = c->rec[i] + 1;
	}
	return from <= last ? add_gap(c, from, last, reason) : 0;
}

/* The config entries the checkpoint writer resolves (lance.version_checkpoint.*), copied into
 * the held rows' arena: the rest of the manifest's details are not kept. */
#define CP_KEY_PREFIX "lance.version_checkpoint."

static bool is_cp_key(const char *k)
{
	return k && !strncmp(k, CP_KEY_PREFIX, sizeof CP_KEY_PREFIX - 1);
}

static int keep_config(lv__arena *a, lv_version_info *h, const lv_version_info *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->num_config; i++)
		n += is_cp_key(v->config_keys[i]);
	h->num_config = 0;
	h->config_keys = h->config_values = NULL;
	if (!n)
		return 0;
	const char **k = lv__arena_alloc(a, n * sizeof *k), **val = lv__arena_alloc(a, n * sizeof *val);
	if (!k || !val)
		return LV_ENOMEM;
	for (size_t i = 0, j = 0; i < v->num_config; i++) {
		if (!is_cp_key(v->config_keys[i]))
			continue;
		k[j] = lv__arena_strdup(a, v->config_keys[i]);
		val[j] = lv__arena_strdup(a, v->config_values[i] ? v->config_values[i] : "");
		if (!k[j] || !val[j])
			return LV_ENOMEM;
		j++;
	}
	h->config_keys = k;
	h->config_values = val;
	h->num_config = n;
	return 0;
}

/* Holds a copy of `v` (read from `path`): the 15 columns (properties wrapped as a checkpoint
 * wraps them), the manifest path and the checkpoint config; no other manifest detail. */
static int hold(lv_capture *c, const lv_version_info *v, const char *path)
{
	char *props = lv_properties_truncate(v->transaction_properties ? v->transaction_properties : "{}",
					     LV_PROPERTIES_LIMIT);
	if (!props)
		return LV_ENOMEM;
	lv_version_info copy = { /* the 15 columns, field by field (no layout assumed) */
		.version = v->version,
		.timestamp_millis = v->timestamp_millis,
		.total_fragments = v->total_fragments,
		.total_data_files = v->total_data_files,
		.total_files_size = v->total_files_size,
		.total_deletion_files = v->total_deletion_files,
		.total_data_file_rows = v->total_data_file_rows,
		.total_deletion_file_rows = v->total_deletion_file_rows,
		.total_rows = v->total_rows,
		.transaction_uuid = v->transaction_uuid,
		.has_read_version = v->has_read_version,
		.read_version = v->read_version,
		.operation_type = v->operation_type,
		.transaction_properties = props,
	};
	int rc = lv__rows_add_copy(&c->held, &copy);
	lv__free(props);
	if (rc < 0)
		return rc;
	lv_version_info *h = &c->held.v[c->held.n - 1];
	if (!(h->manifest_path = lv__arena_strdup(&c->held.arena, path)) ||
	    keep_config(&c->held.arena, h, v) < 0) {
		c->held.n--;
		return LV_ENOMEM;
	}
	return 0;
}

/*
 * Takes what one listing found: gaps for versions it lacks, a record for each manifest read,
 * a gap for each that vanished.  `l` holds the read records in version order.
 */
static int take(lv_capture *c, const listing *ls, const lv_version_list *l, const char *const *paths)
{
	uint64_t expect = c->known + 1; /* a fresh capture (known 0) notes nothing below the first */
	size_t j = 0;
	for (size_t i = 0; i < ls->n; i++) {
		uint64_t v = ls->v[i].version;
		if (c->known > 0 && v > expect)
			LV_TRY(add_gap_unrecorded(c, expect, v - 1, LV_CAPTURE_GAP_UNSEEN));
		bool read = j < l->n && l->items[j].version == v;
		if (recorded(c, v)) { /* the last flush's checkpoint holds it already */
		} else if (read) {
			LV_TRY(hold(c, &l->items[j], paths[i]));
			c->st.captured++;
		} else {
			LV_TRY(add_gap(c, v, v, LV_CAPTURE_GAP_VANISHED));
		}
		j += read;
		expect = v + 1;
		c->known = v;
	}
	return 0;
}

static int poll_once(lv_capture *c, lv_error *err)
{
	listing ls;
	LV_TRY(list_new(c, &ls, err));
	if (ls.n == 0) {
		lv__free(ls.v);
		return 0;
	}
	const char **paths = NULL;
	char *block = NULL;
	lv_version_list *l = NULL;
	int rc = lv__mpaths(ls.v, ls.n, &paths, &block);
	if (rc == 0 && !(l = lv__version_list_new(ls.n, ls.n)))
		rc = LV_ENOMEM;
	if (rc < 0)
		rc = lv__err(err, rc, "out of memory");
	if (rc == 0)
		rc = lv__read_into_list(l, c->ds->st, c->ds->threads, paths, ls.n, err);
	if (rc == 0) {
		bool was_empty = c->held.n == 0 && c->ngaps == 0;
		size_t h0 = c->held.n, g0 = c->ngaps;
		lv_capture_stats s0 = c->st;
		uint64_t k0 = c->known;
		if ((rc = take(c, &ls, l, paths)) < 0) { /* out of memory: take nothing */
			c->held.n = h0, c->ngaps = g0, c->st = s0, c->known = k0;
			rc = lv__err(err, rc, "out of memory");
		} else {
			if (was_empty && (c->held.n || c->ngaps))
				c->since = lv_capture_clock_ms();
			if (l->n && l->items[l->n - 1].timestamp_millis > 0) /* 0: no commit time */
				c->st.last_lag_ms = lv__now_ms() - l->items[l->n - 1].timestamp_millis;
		}
	}
	lv_version_list_free(l);
	lv__free(paths);
	lv__free(block);
	lv__free(ls.v);
	return rc;
}

int lv_capture_poll(lv_capture *c, lv_capture_stats *stats, lv_error *err)
{
	if (!c)
		return lv__err(err, LV_EINVALID, "lv_capture_poll: NULL argument");
	if (stats)
		LV_TRY(lv__struct_version("lv_capture_stats", stats->version, LV_CAPTURE_STATS_VERSION,
					  LV_CAPTURE_STATS_VERSION, err));
	lv_dataset_clear_warnings(c->ds); /* after the call they are this poll's: none pile up */
	lv_storage_stats s0 = LV_STORAGE_STATS_INIT, s1 = LV_STORAGE_STATS_INIT;
	(void)lv_storage_get_stats(c->ds->root, &s0);
	int rc = poll_once(c, err);
	(void)lv_storage_get_stats(c->ds->root, &s1);
	c->st.requests += s1.requests - s0.requests;
	c->st.polls++;
	c->st.errors += rc < 0;
	c->st.newest_version = c->known;
	if (stats)
		stats_out(stats, c);
	return rc;
}

/* ---- flushing ---- */

/* Writes the pending gap notes; those written leave the list (a failed one stays, first error kept). */
static int flush_gaps(lv_capture *c, lv_error *err)
{
	int first_rc = 0;
	size_t w = 0;
	int64_t now = lv__now_ms();
	for (size_t i = 0; i < c->ngaps; i++) {
		pending_gap *g = &c->gaps[i];
		lv_error e = { 0 };
		int rc = lv__capgap_put(c->ds->st, g->first, g->last, g->reason, now, &e);
		if (rc < 0) {
			if (first_rc == 0) {
				first_rc = rc;
				if (err)
					*err = e;
			}
			c->gaps[w++] = *g;
		}
	}
	c->ngaps = w;
	lv__ds_notes_forget(c->ds); /* the handle's cached listing lacks what was just written */
	return first_rc;
}

typedef struct rec_load {
	lv_capture *c;
	uint64_t upto;
	size_t cap;
	int rc;
} rec_load;

static int rec_row(const lv_version_info *v, void *payload)
{
	rec_load *r = payload;
	lv_capture *c = r->c;
	if (v->version > r->upto)
		return 1; /* past what the flush wrote: stop */
	uint64_t *a = lv__grow(c->rec, &r->cap, c->nrec, sizeof *a, 16);
	if (!a) {
		r->rc = LV_ENOMEM;
		return 1;
	}
	c->rec = a;
	c->rec[c->nrec++] = v->version;
	return 0;
}

/* Takes the versions in (known, upto] of a flush's read-back head (rec: sorted) as recorded. */
static void take_recorded(lv_capture *c, lv__recorded *rec, uint64_t upto)
{
	size_t n = 0;
	while (n < rec->n && rec->v[n] <= upto)
		n++;
	c->rec = rec->v;
	c->nrec = n;
	c->rec_upto = upto;
	c->st.captured += n;
	rec->v = NULL;
}

/*
 * The versions in (known, upto] the flush's checkpoint recorded beyond what was held: the
 * manifests live when it was written.  Taken from the head the flush read back when its rows
 * reach down to known + 1; otherwise read from the history (since_version) and counted as
 * captured (the flush captured them).  Out of memory is an error; a failed read leaves `rec`
 * empty (later polls may then call some of them missed: they say more than happened, never
 * less).
 */
static int load_recorded(lv_capture *c, lv__recorded *got, uint64_t upto, lv_error *err)
{
	lv__free(c->rec);
	c->rec = NULL;
	c->nrec = 0;
	c->rec_upto = 0;
	if (got->have) {
		take_recorded(c, got, upto);
		return 0;
	}
	lv_history_options o = LV_HISTORY_OPTIONS_INIT;
	o.since_version = c->known + 1;
	rec_load r = { c, upto, 0, 0 };
	lv_error e = { 0 };
	int rc = lv_history_each(c->ds, &o, rec_row, NULL, &r, NULL, &e);
	if (r.rc == LV_ENOMEM || rc == LV_ENOMEM) {
		lv__free(c->rec);
		c->rec = NULL;
		c->nrec = 0;
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (rc < 0) {
		c->nrec = 0;
		return 0;
	}
	c->rec_upto = upto;
	c->st.captured += c->nrec;
	return 0;
}

static int flush_once(lv_capture *c, lv_error *err)
{
	int rc = flush_gaps(c, err);
	if (rc < 0 || c->held.n == 0)
		return rc;
	lv_checkpoint_result res = LV_CHECKPOINT_RESULT_INIT;
	lv__recorded got = { c->known, NULL, 0, false };
	rc = lv__cp_write_captured(c->ds, NULL, c->held.v, c->held.n, &got, &res, err);
	if (rc < 0) {
		lv__free(got.v);
		return rc;
	}
	c->st.flushes += res.written;
	if (res.written && res.latest_version > c->st.flushed_version)
		c->st.flushed_version = res.latest_version;
	lv__rows_dispose(&c->held); /* written, or checkpoints are disabled by the dataset's config */
	if (res.written && res.latest_version > c->known)
		rc = load_recorded(c, &got, res.latest_version, err);
	lv__free(got.v);
	return rc;
}

int lv_capture_flush(lv_capture *c, lv_error *err)
{
	if (!c)
		return lv__err(err, LV_EINVALID, "lv_capture_flush: NULL argument");
	if (c->held.n == 0 && c->ngaps == 0)
		return 0;
	lv_dataset_clear_warnings(c->ds);
	lv_storage_stats s0 = LV_STORAGE_STATS_INIT, s1 = LV_STORAGE_STATS_INIT;
	(void)lv_storage_get_stats(c->ds->root, &s0);
	int rc = flush_once(c, err);
	(void)lv_storage_get_stats(c->ds->root, &s1);
	c->st.requests += s1.requests - s0.requests;
	c->st.errors += rc < 0;
	if (c->held.n || c->ngaps)
		c->since = lv_capture_clock_ms(); /* what is left is due again one interval from now */
	return rc;
}

int lv_capture_gap_reason(lv_dataset *ds, uint64_t first, uint64_t last, const char **reason,
			  const char **text, lv_error *err)
{
	if (reason)
		*reason = NULL;
	if (text)
		*text = NULL;
	if (!ds || first == 0 || first > last)
		return lv__err(err, LV_EINVALID, "lv_capture_gap_reason: NULL dataset or bad range");
	const char *found;
	LV_TRY(lv__ds_gap_reason(ds, first, last, &found, err));
	if (found) {
		/* the note's reason, as the one static string this library has for it */
		const char *r = !strcmp(found, LV_CAPTURE_GAP_VANISHED) ? LV_CAPTURE_GAP_VANISHED
				: !strcmp(found, LV_CAPTURE_GAP_UNSEEN) ? LV_CAPTURE_GAP_UNSEEN
									 : "other";
		if (reason)
			*reason = r;
		if (text)
			*text = lv__capgap_text(r);
	}
	return 0;
}
