/*
 * Unit tests: history at scale (issue 18) -- archive segments, the head checkpoint,
 * streaming history, as-of across segments, and large checkpoint files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>

#include <lancever/lancever.h>
#include <lancever/sys/testing.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"

static void check_cursor(lv_dataset *ds, const lv_history_options *o, const lv_version_list *l);

#define CHECK(expr) TU_CHECK(err, expr)
#define BASE_MS 1700000000000LL

static lv_error err;

/*
 * A checkpoint larger than 4 MiB (read footer-first: size, then its last bytes) is used.
 * Before: the size check read a manifest's 16-byte footer at the end of a Lance data file
 * (whose footer is 40 bytes), so every checkpoint over 4 MiB was rejected as "no Lance
 * footer" and a 1,000,000-version cleanup stopped with "cannot be read".
 */
static void test_large_checkpoint_is_read(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	static char big[9000];
	memset(big, 'x', sizeof big - 1);
	const char *props[] = { "note", big, NULL };
	for (uint64_t v = 1; v <= 520; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1,
				   .props = props };
		CHECK(synth_write(st, &c));
	}
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.file_size > (4u << 20));
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_versions(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rep.checkpoints_rejected, 0);
	assert_int_equal(lv_version_list_count(l), 520);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* ---- a model of the dataset: every version ever committed ---- */

#define MAXV 2048

typedef struct truth {
	int64_t ts[MAXV + 1];
	bool committed[MAXV + 1];
	uint64_t n;
} truth;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void) { return tu_rng(&rng_state); }

/* Commits versions first..last; skew: timestamps jump back and forth by up to that many ms. */
static void commit_range(lv_storage *st, truth *t, uint64_t first, uint64_t last, int64_t skew)
{
	for (uint64_t v = first; v <= last; v++) {
		int64_t ts = BASE_MS + 1000 * (int64_t)v;
		if (skew)
			ts += (int64_t)(rng() % (uint64_t)(2 * skew + 1)) - skew;
		synth_commit c = { .version = v, .ts_ms = ts, .read_version = v - 1 };
		CHECK(synth_write(st, &c));
		if (t) {
			t->ts[v] = ts;
			t->committed[v] = true;
			t->n = v > t->n ? v : t->n;
		}
	}
}

/* A fresh in-memory store holding versions 1..last (commit_range), its model in *t. */
static lv_storage *new_store(truth *t, uint64_t last, int64_t skew)
{
	lv_storage *st = tu_mem();
	memset(t, 0, sizeof *t);
	commit_range(st, t, 1, last, skew);
	return st;
}

static lv_checkpoint_config small_cfg(int64_t max_entries, int64_t seg_rows)
{
	lv_checkpoint_config c = LV_CHECKPOINT_CONFIG_INIT;
	c.max_entries = max_entries;
	c.archive_segment_rows = seg_rows;
	c.max_checkpoint_files = 2;
	return c;
}

static void cleanup_retain(lv_storage *st, int64_t n, const lv_checkpoint_config *cfg)
{
	lv_dataset *ds = tu_open(st);
	tu_cleanup_retain(ds, n, BASE_MS + 100000000, cfg);
	lv_dataset_free(ds);
}

/* The segments in the store, sorted (tu_free_list). */
static char **segments(lv_storage *st)
{
	return tu_list_paths(st, "_checkpoints/archive", false);
}

static bool is_live(lv_storage *st, uint64_t v)
{
	char path[96];
	return lv_storage_head(st, synth_manifest_path(path, sizeof path, v), NULL, NULL, &err) == 0;
}

/*
 * History against the model: every committed version, in order, with its commit time,
 * cleaned up iff its manifest is gone; no gap, no warning.
 */
static void assert_history_complete(lv_storage *st, const truth *t)
{
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	size_t k = 0;
	for (uint64_t v = 1; v <= t->n; v++) {
		if (!t->committed[v])
			continue;
		const lv_version_info *r = lv_version_list_get(l, k++);
		if (!r || r->version != v)
			fail_msg("history: version %llu missing (got %llu)", (unsigned long long)v,
				 r ? (unsigned long long)r->version : 0ull);
		assert_int_equal(r->timestamp_millis, t->ts[v]);
		assert_int_equal(r->is_cleaned_up, !is_live(st, v));
	}
	assert_int_equal(lv_version_list_count(l), k);
	assert_int_equal(lv_version_list_gap_count(l), 0);
	assert_int_equal(lv_dataset_warning_count(ds), 0);
	lv_version_list_free(l);
	lv_dataset_free(ds);
}

/* The head checkpoint's number of rows. */
static size_t head_rows(lv_storage *st)
{
	char **n = tu_list_paths(st, "_checkpoints", false);
	size_t best = 0, rows = 0;
	for (size_t i = 0; n[i]; i++) {
		if (strlen(n[i]) != 13 + 26)
			continue;
		lv_buf b = { 0 };
		CHECK(lv_storage_read(st, n[i], &b, &err));
		lv_version_list *l = NULL;
		CHECK(lv__cp_decode_rows(b.ptr, b.size, n[i], true, &l, NULL, &err));
		size_t v = strtoull(n[i] + 13, NULL, 10);
		if (v >= best) {
			best = v;
			rows = lv_version_list_count(l);
		}
		lv_version_list_free(l);
		lv_buf_dispose(&b);
	}
	tu_free_list(n);
	return rows;
}

/*
 * Sealing at every boundary: S (segment rows) and max_entries around each other, histories
 * of max_entries - 1 .. 2 * max_entries + 1 versions, cleaned to one version.  Cells of S
 * versions are sealed exactly when complete; the head never holds more than max_entries rows;
 * history is complete.
 */
static void test_seal_boundaries(void **state)
{
	(void)state;
	const int64_t shapes[][2] = { { 4, 4 }, { 5, 4 }, { 4, 5 }, { 3, 7 } }; /* max_entries, S */
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		int64_t max = shapes[k][0], S = shapes[k][1] < max ? shapes[k][1] : max;
		for (int64_t n = max - 1; n <= 2 * max + 1; n++) {
			truth t;
			lv_storage *st = new_store(&t, (uint64_t)n, 0);
			lv_checkpoint_config cfg = small_cfg(max, shapes[k][1]);
			lv_dataset *ds = tu_open(st);
			lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
			CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
			lv_dataset_free(ds);
			char **segs = segments(st);
			assert_int_equal(tu_list_len(segs), (size_t)(n / S));
			for (size_t i = 0; segs[i]; i++) {
				char want[96];
				snprintf(want, sizeof want, "_checkpoints/archive/%020llu-%020llu.lance",
					 (unsigned long long)(i * (size_t)S + 1), (unsigned long long)((i + 1) * (size_t)S));
				assert_string_equal(segs[i], want);
			}
			tu_free_list(segs);
			assert_int_equal(r.archived_through, (uint64_t)(n / S * S));
			assert_true(r.entries <= (uint64_t)max);
			assert_history_complete(st, &t);
			cleanup_retain(st, 1, &cfg);
			assert_true(head_rows(st) <= (size_t)max);
			assert_history_complete(st, &t);
			lv_storage_free(st);
		}
	}
}

/* One cleanup of a long history without any checkpoint seals many cells at once. */
static void test_multiple_seals_in_one_cleanup(void **state)
{
	(void)state;
	truth t;
	lv_storage *st = new_store(&t, 30, 0);
	lv_checkpoint_config cfg = small_cfg(6, 4);
	cleanup_retain(st, 2, &cfg);
	char **segs = segments(st);
	assert_int_equal(tu_list_len(segs), 7); /* 1-4 ... 25-28 */
	tu_free_list(segs);
	assert_true(head_rows(st) <= 6);
	assert_history_complete(st, &t);
	/* versions() from the head alone: the two live versions */
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_versions(ds, &rep);
	assert_int_equal(lv_version_list_count(l), 2);
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rep.manifests_read, 0);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static bool same_object(lv_storage *a, lv_storage *b, const char *path)
{
	lv_buf x = { 0 }, y = { 0 };
	CHECK(lv_storage_read(a, path, &x, &err));
	CHECK(lv_storage_read(b, path, &y, &err));
	bool same = x.size == y.size && !memcmp(x.ptr, y.ptr, x.size);
	lv_buf_dispose(&x);
	lv_buf_dispose(&y);
	return same;
}

/* Sealers of the same state write identical segments: twins sealed apart, and four at once. */
static void test_concurrent_sealers_identical(void **state)
{
	(void)state;
	truth t;
	lv_storage *a = new_store(&t, 41, 300);
	lv_storage *b = tu_mem_clone(a), *c = tu_mem_clone(a);
	lv_checkpoint_config cfg = small_cfg(8, 8);
	tu_checkpoint_job one = { a, &cfg, 0, { 0 } };
	tu_checkpoint_job_run(&one);
	CHECK(one.rc);
	tu_checkpoint_job two = { b, &cfg, 0, { 0 } };
	tu_checkpoint_job_run(&two);
	CHECK(two.rc);
	pthread_t th[4];
	tu_checkpoint_job args[4];
	for (int i = 0; i < 4; i++) {
		args[i] = (tu_checkpoint_job){ c, &cfg, 0, { 0 } };
		assert_int_equal(pthread_create(&th[i], NULL, tu_checkpoint_job_run, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		if (args[i].rc)
			fail_msg("concurrent sealer %d: %s", i, args[i].err.message);
	}
	char **sa = segments(a), **sb = segments(b), **sc = segments(c);
	assert_int_equal(tu_list_len(sa), 5);
	assert_int_equal(tu_list_len(sb), tu_list_len(sa));
	assert_int_equal(tu_list_len(sc), tu_list_len(sa));
	for (size_t i = 0; sa[i]; i++) {
		assert_string_equal(sa[i], sb[i]);
		assert_string_equal(sa[i], sc[i]);
		assert_true(same_object(a, b, sa[i]));
		assert_true(same_object(a, c, sa[i]));
	}
	tu_free_list(sa);
	tu_free_list(sb);
	tu_free_list(sc);
	assert_true(same_object(a, b, "_checkpoints/00000000000000000041.lance"));
	assert_true(same_object(a, c, "_checkpoints/00000000000000000041.lance"));
	assert_history_complete(c, &t);
	lv_storage_free(a);
	lv_storage_free(b);
	lv_storage_free(c);
}

/* Does a warning of `kind` name `path` (or, kind GAP, cover version v)? */
static bool warned(const lv_dataset *ds, int kind, const char *path, uint64_t v)
{
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		if (w->kind != kind)
			continue;
		if (path && w->path && !strcmp(w->path, path))
			return true;
		if (v && w->first <= v && v <= w->last)
			return true;
	}
	return false;
}

/*
 * A damaged or missing segment loses only its range: history returns every other row
 * exactly, the range's live versions from their manifests, and a gap naming the segment
 * for the rest; never a wrong row.  Writers neither replace nor delete it.
 */
/* An error part-way through a history stream (the store interrupted after the gap scan)
 * fails that get_next and every later one with EIO and a message: never a short stream. */
static void check_stream_error(lv_storage *st, lv_dataset *ds)
{
	struct ArrowArrayStream s;
	lv_arrow_options ao = LV_ARROW_OPTIONS_INIT;
	ao.batch_rows = 4;
	CHECK(lv_history_arrow_stream(&s, ds, &ao, NULL, &err));
	struct ArrowArray b;
	assert_int_equal(s.get_next(&s, &b), 0); /* the head's rows below the first segment */
	assert_non_null(b.release);
	b.release(&b);
	lv_storage_interrupt(st, true);
	int rc = 0;
	for (int i = 0; i < 40 && rc == 0; i++) {
		if ((rc = s.get_next(&s, &b)) == 0) {
			assert_non_null(b.release); /* never the end while rows are unread */
			b.release(&b);
		}
	}
	assert_int_equal(rc, EIO);
	assert_non_null(s.get_last_error(&s));
	assert_non_null(strstr(s.get_last_error(&s), "interrupted"));
	assert_int_equal(s.get_next(&s, &b), EIO);
	s.release(&s);
	lv_storage_interrupt(st, false);
	/* the stream holds its dataset: freed first, the rows still come (ASan sees any use after) */
	lv_dataset *d2 = tu_open(st);
	lv_version_list *l = tu_history(d2, NULL);
	CHECK(lv_history_arrow_stream(&s, d2, &ao, NULL, &err));
	lv_dataset_free(d2);
	int64_t rows = 0;
	while (s.get_next(&s, &b) == 0 && b.release) {
		rows += b.length;
		b.release(&b);
	}
	assert_int_equal(rows, (int64_t)lv_version_list_count(l));
	s.release(&s);
	lv_version_list_free(l);
}

static void test_damaged_and_missing_segments(void **state)
{
	(void)state;
	for (int mode = 0; mode < 3; mode++) { /* flipped byte, truncated, deleted */
		truth t;
		lv_storage *st = new_store(&t, 40, 0);
		lv_checkpoint_config cfg = small_cfg(10, 8);
		cleanup_retain(st, 3, &cfg); /* 1-8 ... 33-40? no: 33-40 holds live 38-40 */
		const char *victim = "_checkpoints/archive/00000000000000000009-00000000000000000016.lance";
		lv_buf orig = { 0 };
		CHECK(lv_storage_read(st, victim, &orig, &err));
		if (mode == 0) { /* flip bytes until the codec rejects it (padding tolerates flips) */
			lv_version_list *rows = NULL;
			lv_error de = { 0 };
			for (size_t at = orig.size / 3;
			     lv__cp_decode_rows(orig.ptr, orig.size, victim, true, &rows, NULL, &de) == 0; at++) {
				lv_version_list_free(rows);
				rows = NULL;
				orig.ptr[at] ^= 0x5A;
			}
			CHECK(lv_storage_write(st, victim, orig.ptr, orig.size, &err));
		} else if (mode == 1) {
			CHECK(lv_storage_write(st, victim, orig.ptr, orig.size / 2, &err));
		} else {
			CHECK(lv_storage_delete(st, victim, &err));
		}
		lv_dataset *ds = tu_open(st);
		lv_history_report rep = LV_HISTORY_REPORT_INIT;
		lv_version_list *l = tu_history(ds, &rep);
		assert_int_equal(lv_version_list_count(l), 40 - 8);
		for (size_t i = 0; i < lv_version_list_count(l); i++) {
			const lv_version_info *r = lv_version_list_get(l, i);
			assert_true(r->version < 9 || r->version > 16);
			assert_int_equal(r->timestamp_millis, t.ts[r->version]);
		}
		assert_int_equal(lv_version_list_gap_count(l), 1);
		uint64_t gf, gl;
		assert_true(lv_version_list_gap(l, 0, &gf, &gl));
		assert_int_equal(gf, 9);
		assert_int_equal(gl, 16);
		assert_true(warned(ds, LV_WARN_HISTORY_GAP, victim, 12));
		assert_true(warned(ds, mode == 2 ? LV_WARN_SEGMENT_MISSING : LV_WARN_CHECKPOINT_REJECTED,
				   victim, 0));
		check_cursor(ds, NULL, l);
		check_stream_error(st, ds);
		lv_version_list_free(l);
		/* writers: more versions, a checkpoint and a cleanup; the damaged bytes stay */
		commit_range(st, &t, 41, 60, 0);
		lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
		CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
		lv_dataset_free(ds);
		cleanup_retain(st, 2, &cfg);
		lv_buf now = { 0 };
		int rc = lv_storage_read(st, victim, &now, &err);
		if (mode == 2) {
			assert_int_equal(rc, LV_ENOTFOUND);
		} else {
			CHECK(rc);
			assert_int_equal(now.size, mode == 1 ? orig.size / 2 : orig.size);
			assert_memory_equal(now.ptr, orig.ptr, now.size);
		}
		lv_buf_dispose(&now);
		ds = tu_open(st);
		CHECK(lv_history(&l, ds, &rep, &err));
		assert_int_equal(lv_version_list_count(l), 60 - 8);
		lv_version_list_free(l);
		lv_dataset_free(ds);
		lv_buf_dispose(&orig);
		lv_storage_free(st);
	}
}

/* Brute force: the newest committed version with ts <= t (< t when strict), 0 if none. */
static uint64_t brute_asof(const truth *t, int64_t at, bool strict)
{
	uint64_t best = 0;
	for (uint64_t v = 1; v <= t->n; v++)
		if (t->committed[v] && (strict ? t->ts[v] < at : t->ts[v] <= at))
			best = v;
	return best;
}

typedef struct got {
	uint64_t v[MAXV];
	size_t n;
	size_t gaps;
} got;

static int got_row(const lv_version_info *v, void *p)
{
	got *g = p;
	g->v[g->n++] = v->version;
	return 0;
}

static int got_gap(uint64_t first, uint64_t last, void *p)
{
	(void)first;
	(void)last;
	((got *)p)->gaps++;
	return 0;
}

/* The gaps lv_history_cursor_gaps must give for the list `l` of a history read with `o`:
 * all of them, or with options those strictly between the first and the last row (what
 * lv_version_list_select keeps). */
static lv_version_list *expected_gaps(const lv_version_list *l, const lv_history_options *o)
{
	size_t n = lv_version_list_count(l), *idx = calloc(n ? n : 1, sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	lv_version_list *sel = NULL;
	if (o && (o->since_version || o->since_time || o->limit))
		CHECK(lv_version_list_select(&sel, l, idx, n, &err));
	free(idx);
	return sel;
}

/* The cursor (issue 29: --format csv|arrow in bounded memory) hands out the rows of the list
 * `l` that lv_history_list read with `o`, in chunks of each size, then NULL; its gap scan
 * gives the list's gaps. */
static void check_cursor(lv_dataset *ds, const lv_history_options *o, const lv_version_list *l)
{
	const size_t sizes[] = { 1, 3, 1000, (size_t)1 << 60 }; /* the last: all (Python's batch_rows) */
	lv_version_list *sel = expected_gaps(l, o);
	const lv_version_list *want = sel ? sel : l;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		lv_history_cursor *c = NULL;
		CHECK(lv_history_cursor_open(&c, ds, o, &err));
		if (s == 1) { /* the gap scan first: the rows' walk is then quiet */
			lv_version_list *gaps = NULL;
			CHECK(lv_history_cursor_gaps(c, &gaps, NULL, &err));
			assert_int_equal(lv_version_list_count(gaps), 0);
			assert_int_equal(lv_version_list_gap_count(gaps), lv_version_list_gap_count(want));
			for (size_t i = 0; i < lv_version_list_gap_count(want); i++) {
				uint64_t a0, a1, b0, b1;
				assert_true(lv_version_list_gap(gaps, i, &a0, &a1));
				assert_true(lv_version_list_gap(want, i, &b0, &b1));
				assert_int_equal(a0, b0);
				assert_int_equal(a1, b1);
			}
			lv_version_list_free(gaps);
			assert_int_equal(lv_history_cursor_gaps(c, &gaps, NULL, &err), LV_EINVALID);
		}
		size_t at = 0;
		lv_version_list *chunk = NULL;
		for (;;) {
			CHECK(lv_history_cursor_next(c, sizes[s], &chunk, NULL, &err));
			if (!chunk)
				break;
			assert_true(lv_version_list_count(chunk) <= sizes[s]);
			for (size_t i = 0; i < lv_version_list_count(chunk); i++, at++) {
				const lv_version_info *x = lv_version_list_get(chunk, i), *y = lv_version_list_get(l, at);
				assert_non_null(y);
				assert_int_equal(x->version, y->version);
				assert_int_equal(x->timestamp_millis, y->timestamp_millis);
				assert_int_equal(x->is_cleaned_up, y->is_cleaned_up);
				assert_int_equal(x->is_tagged, y->is_tagged);
				assert_string_equal(x->transaction_properties ? x->transaction_properties : "",
						    y->transaction_properties ? y->transaction_properties : "");
			}
			lv_version_list_free(chunk);
		}
		assert_int_equal(at, lv_version_list_count(l));
		CHECK(lv_history_cursor_next(c, 1, &chunk, NULL, &err)); /* the end stays the end */
		assert_null(chunk);
		lv_history_cursor_free(c);
	}
	lv_version_list_free(sel);
}

/* lv_history_each with options against the model. */
static void check_options(lv_storage *st, const truth *t, const lv_history_options *o)
{
	uint64_t want[MAXV];
	size_t nw = 0;
	for (uint64_t v = 1; v <= t->n; v++)
		if (t->committed[v] && v >= o->since_version && (!o->since_time || t->ts[v] >= o->since_ms))
			want[nw++] = v;
	size_t from = o->limit && nw > o->limit ? nw - (size_t)o->limit : 0;
	lv_dataset *ds = tu_open(st);
	got *g = calloc(1, sizeof *g);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	CHECK(lv_history_each(ds, o, got_row, got_gap, g, &rep, &err));
	assert_int_equal(g->n, nw - from);
	for (size_t i = 0; i < g->n; i++)
		assert_int_equal(g->v[i], want[from + i]);
	if (g->gaps)
		fail_msg("limit %llu since %llu time %d %lld: %zu gaps", (unsigned long long)o->limit,
			 (unsigned long long)o->since_version, o->since_time, (long long)o->since_ms, g->gaps);
	/* the same as a list: a row without manifest details points at none (they were freed
	 * with the stream's plan: issue 29's Arrow export of history --since --limit read them) */
	lv_version_list *l = NULL;
	CHECK(lv_history_list(&l, ds, o, NULL, &err));
	assert_int_equal(lv_version_list_count(l), g->n);
	check_cursor(ds, o, l);
	for (size_t i = 0; i < g->n; i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		assert_int_equal(v->version, g->v[i]);
		if (!v->has_manifest_details && (v->writer_library || v->writer_version || v->data_format ||
						  v->transaction_file || v->branch || v->num_config))
			fail_msg("v%llu: manifest details without has_manifest_details",
				 (unsigned long long)v->version);
	}
	/* lv_version_list_select: every other entry, a sorted copy of its own */
	size_t idx[MAXV], k = 0;
	for (size_t i = 0; i < g->n; i += 2)
		idx[k++] = i;
	lv_version_list *sel = NULL;
	CHECK(lv_version_list_select(&sel, l, idx, k, &err));
	lv_version_list_free(l); /* the selection owns its strings */
	assert_int_equal(lv_version_list_count(sel), k);
	for (size_t i = 0; i < k; i++) {
		const lv_version_info *v = lv_version_list_get(sel, i);
		assert_int_equal(v->version, g->v[idx[i]]);
		assert_non_null(v->transaction_properties);
		assert_true(strlen(v->transaction_properties) >= 2);
	}
	if (k >= 2) {
		size_t back[2] = { idx[1], idx[0] };
		lv_version_list *bad = NULL;
		assert_int_equal(lv_version_list_select(&bad, sel, back, 2, &err), LV_EINVALID);
		assert_null(bad);
	}
	lv_version_list_free(sel);
	free(g);
	lv_dataset_free(ds);
}

/*
 * History, as-of and the stream's options across segments against brute force, with
 * commit times that jump back and forth (clock skew) and a history partly cleaned up,
 * partly beyond the archive, with a tagged old version.
 */
static void test_history_asof_brute_force(void **state)
{
	(void)state;
	truth t;
	lv_storage *st = new_store(&t, 150, 5000);
	lv_checkpoint_config cfg = small_cfg(12, 8);
	CHECK(synth_tag(st, "keep", 37));
	cleanup_retain(st, 10, &cfg);
	commit_range(st, &t, 151, 203, 5000);
	cleanup_retain(st, 25, &cfg);
	commit_range(st, &t, 204, 210, 5000); /* beyond the head: read from manifests */
	assert_history_complete(st, &t);
	char **segs = segments(st);
	assert_true(tu_list_len(segs) >= 20);
	tu_free_list(segs);
	lv_dataset *ds = tu_open(st);
	int64_t lo = BASE_MS - 10000, hi = BASE_MS + 1000 * 211 + 10000;
	for (int i = 0; i < 400; i++) {
		int64_t at = lo + (int64_t)(rng() % (uint64_t)(hi - lo));
		if (i < 40) /* exactly at commit times: inclusive and strict differ */
			at = t.ts[1 + rng() % 210];
		for (int strict = 0; strict < 2; strict++) {
			uint64_t want = brute_asof(&t, at, strict);
			lv_version_list *one = NULL;
			lv_history_report rep = LV_HISTORY_REPORT_INIT;
			int rc = lv_version_as_of(&one, ds, at, strict, &rep, &err);
			if (!want) {
				assert_int_equal(rc, LV_ENOTFOUND);
				continue;
			}
			CHECK(rc);
			if (lv_version_list_get(one, 0)->version != want)
				fail_msg("as_of(%lld, %d) = %llu, brute force %llu", (long long)at, strict,
					 (unsigned long long)lv_version_list_get(one, 0)->version,
					 (unsigned long long)want);
			assert_true(rep.segments_read <= 1);
			lv_version_list_free(one);
		}
	}
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++)
		fprintf(stderr, "warning: %s\n", lv_dataset_warning(ds, i)->message);
	assert_int_equal(lv_dataset_warning_count(ds), 0);
	lv_dataset_free(ds);
	lv_history_options o = LV_HISTORY_OPTIONS_INIT;
	const uint64_t limits[] = { 1, 5, 8, 9, 30, 209, 210, 500 };
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		o.limit = limits[i];
		check_options(st, &t, &o);
	}
	o.limit = 0;
	const uint64_t since[] = { 1, 2, 8, 9, 100, 150, 151, 210, 211 };
	for (size_t i = 0; i < sizeof since / sizeof since[0]; i++) {
		o.since_version = since[i];
		check_options(st, &t, &o);
		o.limit = 7;
		check_options(st, &t, &o);
		o.limit = 0;
	}
	o.since_version = 0;
	for (int i = 0; i < 30; i++) {
		o.since_time = true;
		o.since_ms = lo + (int64_t)(rng() % (uint64_t)(hi - lo));
		check_options(st, &t, &o);
		o.limit = 3;
		check_options(st, &t, &o);
		o.limit = 0;
	}
	lv_storage_free(st);
}

/*
 * Cost bounded by what changed: versions() touches no segment at all, and a checkpoint that
 * seals nothing writes only the head (here every call on a segment fails, and they succeed);
 * the bytes an incremental checkpoint writes do not grow with the archive.
 */
static void test_costs_do_not_touch_the_archive(void **state)
{
	(void)state;
	truth t;
	lv_storage *mem = new_store(&t, 1000, 0);
	lv_checkpoint_config cfg = small_cfg(64, 64);
	cleanup_retain(mem, 5, &cfg);
	commit_range(mem, &t, 1001, 1003, 0);
	lv_fault_spec none = { 0, 0, false, LV_FAULT_FAIL, NULL };
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, mem, &none, &err));
	lv_fault_spec seg = { LV_FAULT_ALL, 1, true, LV_FAULT_FAIL, "_checkpoints/archive" };
	CHECK(lv_storage_fault_set(st, &seg, &err));
	lv_dataset *ds = tu_open(st);
	assert_int_equal(tu_count_versions(ds), 8);
	seg.ops = LV_FAULT_READ | LV_FAULT_HEAD | LV_FAULT_WRITE | LV_FAULT_CREATE | LV_FAULT_DELETE;
	CHECK(lv_storage_fault_set(st, &seg, &err));
	lv_storage_stats s0 = LV_STORAGE_STATS_INIT, s1 = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(st, &s0);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	lv_history_report rrep = LV_HISTORY_REPORT_INIT;
	r.report = &rrep;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	lv_storage_get_stats(st, &s1);
	assert_int_equal(r.segments_written, 0);
	assert_int_equal(r.new_entries, 3);
	assert_int_equal(rrep.manifests_read, 3);
	assert_true(s1.bytes_written - s0.bytes_written <= r.file_size + 64);
	assert_true(r.entries < 64);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static size_t count_tagged(const lv_version_list *l)
{
	size_t n = 0;
	for (size_t i = 0; i < lv_version_list_count(l); i++)
		n += lv_version_list_get(l, i)->is_tagged;
	return n;
}

/*
 * The handle's versions() cache: a repeated call reads no checkpoint (a listing and the
 * identity probe), and whatever changes -- a commit, a cleanup, a tag, a new checkpoint, the
 * dataset recreated under the same name -- is seen by the next call; a list handed out
 * earlier stays valid and unchanged.
 */
/*
 * A handle's first versions() costs what it did before the cache: list _versions and
 * _checkpoints, read the head, list the tags, read the one tag, list the branches, the
 * identity probe.  The cache's key comes from the tags listing the refs load made (it used
 * to list _refs/tags once more: 8 requests, 8 round trips on S3).
 */
static void test_versions_first_call_requests(void **state)
{
	(void)state;
	truth t;
	lv_storage *st = new_store(&t, 10, 0);
	lv_checkpoint_config cfg = small_cfg(100, 32);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	lv_dataset_free(ds);
	CHECK(synth_tag(st, "v5", 5));
	ds = tu_open(st);
	lv_version_list *a = NULL, *b = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	CHECK(lv_versions(&a, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(a), 10);
	assert_int_equal(count_tagged(a), 1);
	assert_int_equal(rep.requests, 7);
	/* the second call is served from the cache, and sees a new tag */
	CHECK(synth_tag(st, "v6", 6));
	CHECK(lv_versions(&b, ds, &rep, &err));
	assert_int_equal(count_tagged(b), 2);
	lv_version_list_free(a);
	lv_version_list_free(b);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_versions_cache(void **state)
{
	(void)state;
	truth t;
	lv_storage *st = new_store(&t, 300, 0);
	lv_checkpoint_config cfg = small_cfg(100, 32);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	lv_version_list *a = NULL, *b = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	CHECK(lv_versions(&a, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(a), 300);
	lv_storage_stats s0 = LV_STORAGE_STATS_INIT, s1 = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(st, &s0);
	CHECK(lv_versions(&b, ds, &rep, &err));
	lv_storage_get_stats(st, &s1);
	assert_int_equal(lv_version_list_count(b), 300);
	assert_true(s1.bytes_read - s0.bytes_read < 8192); /* the identity probe, not the checkpoint */
	for (size_t i = 0; i < 300; i++)
		assert_int_equal(lv_version_list_get(a, i)->version, lv_version_list_get(b, i)->version);
	lv_version_list_free(b);
	/* a commit */
	commit_range(st, &t, 301, 301, 0);
	CHECK(lv_versions(&b, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(b), 301);
	lv_version_list_free(b);
	/* a tag */
	CHECK(synth_tag(st, "v5", 5));
	CHECK(lv_versions(&b, ds, &rep, &err));
	assert_int_equal(count_tagged(b), 1);
	lv_version_list_free(b);
	/* a cleanup (a new head, fewer live versions) */
	lv_dataset_free(ds);
	cleanup_retain(st, 20, &cfg);
	ds = tu_open(st);
	CHECK(lv_versions(&b, ds, &rep, &err));
	lv_version_list_free(b);
	CHECK(lv_versions(&b, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(b), 21); /* 20 and the tagged 5 */
	lv_version_list_free(b);
	/* the earlier list is untouched */
	assert_int_equal(lv_version_list_count(a), 300);
	assert_int_equal(lv_version_list_get(a, 299)->version, 300);
	lv_version_list_free(a);
	/* recreated under the same name: the same live version numbers and tag, every manifest
	 * of another history, the checkpoint left behind (the cache's key is unchanged: only the
	 * identity probe can tell) */
	char **all = tu_list_paths(st, "_versions", false);
	assert_int_equal(tu_list_len(all), 21);
	for (size_t i = 0; all[i]; i++)
		CHECK(lv_storage_delete(st, all[i], &err));
	tu_free_list(all);
	for (uint64_t v = 1; v <= 301; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 7 + 1000 * (int64_t)v,
				   .read_version = v - 1, .uuid = "another-history" };
		if (v >= 282 || v == 5)
			CHECK(synth_write(st, &c));
	}
	CHECK(lv_versions(&b, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_MANIFESTS);
	assert_int_equal(lv_version_list_count(b), 21);
	assert_string_equal(lv_version_list_get(b, 0)->transaction_uuid, "another-history");
	lv_version_list_free(b);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_checkpoint_is_read),
		cmocka_unit_test(test_seal_boundaries),
		cmocka_unit_test(test_multiple_seals_in_one_cleanup),
		cmocka_unit_test(test_concurrent_sealers_identical),
		cmocka_unit_test(test_damaged_and_missing_segments),
		cmocka_unit_test(test_history_asof_brute_force),
		cmocka_unit_test(test_costs_do_not_touch_the_archive),
		cmocka_unit_test(test_versions_cache),
		cmocka_unit_test(test_versions_first_call_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
