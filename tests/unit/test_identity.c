/*
 * Unit tests (issue 24, sections 4 and 5): a stray file in _checkpoints/archive/ never
 * shadows the segments the head's index names; a writer never starts a new history
 * identity while the dataset shows signs of recorded history (a listing that omits
 * _checkpoints/); check --salvage re-adopts a complete older identity.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/sys/testing.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/checkpoint/codec.h"
#include "core/vlist.h"
#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)
#define BASE_MS 1700000000000LL
#define SEG(a, b) "_checkpoints/archive/" a "-" b ".lance"
#define Z18 "000000000000000000"
#define Z17 "00000000000000000"

static lv_error err;

static void commit_range(lv_storage *st, uint64_t first, uint64_t last)
{
	CHECK(synth_range(st, first, last, BASE_MS));
}

static lv_checkpoint_config small_cfg(void)
{
	lv_checkpoint_config c = LV_CHECKPOINT_CONFIG_INIT;
	c.max_entries = 20;
	c.archive_segment_rows = 10;
	c.max_checkpoint_files = 2;
	return c;
}

/* Versions 1..205, cleaned to the newest 3: segments 1-10 .. 191-200, the head 201-205. */
static lv_storage *archived_store(void)
{
	lv_storage *st = tu_mem();
	commit_range(st, 1, 205);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_config cfg = small_cfg();
	tu_cleanup_retain(ds, 3, BASE_MS + 100000000, &cfg);
	lv_dataset_free(ds);
	return st;
}

static bool warned(const lv_dataset *ds, int kind, const char *path)
{
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		if (w->kind == kind && (!path || (w->path && !strcmp(w->path, path))))
			return true;
	}
	return false;
}

/* History holds 1..205 exactly, with no gap; as-of of version 160's commit time answers 160. */
static void expect_full_history(lv_dataset *ds)
{
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	if (lv_version_list_count(l) != 205)
		fail_msg("history: %zu rows, not 205", lv_version_list_count(l));
	for (size_t i = 0; i < 205; i++)
		assert_int_equal(lv_version_list_get(l, i)->version, i + 1);
	assert_int_equal(lv_version_list_gap_count(l), 0);
	lv_version_list_free(l);
	CHECK(lv_version_as_of(&l, ds, BASE_MS + 160000, false, &rep, &err));
	assert_int_equal(lv_version_list_count(l), 1);
	assert_int_equal(lv_version_list_get(l, 0)->version, 160);
	lv_version_list_free(l);
}

static void put_copy(lv_storage *st, const char *from, const char *to, size_t cut)
{
	lv_buf b = tu_read(st, from);
	CHECK(lv_storage_write(st, to, b.ptr, b.size - cut, &err));
	lv_buf_dispose(&b);
}

/*
 * Section 5: stray files of several shapes next to an intact, indexed archive.  Each is
 * ignored with a warning naming it (or, beyond the index, rejected when read), history is
 * complete, check lists it as a problem, and neither check --salvage nor a checkpoint nor a
 * cleanup touches it.  Before: the copy named 1-18446744073709551615 cut history from 205
 * rows to 15 (the segment 1-10 and the head's rows).
 */
static void test_stray_segments_hide_nothing(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to;
		size_t cut;
		bool stray_warning; /* else: beyond the index, rejected when read */
	} cases[] = {
		{ SEG(Z18 "01", Z18 "10"), SEG(Z18 "01", "18446744073709551615"), 0, true },
		{ SEG(Z18 "01", Z18 "10"), SEG(Z17 "100", Z18 "50"), 0, true },      /* first > last */
		{ SEG(Z18 "11", Z18 "20"), SEG(Z18 "11", Z18 "45"), 0, true },       /* spans 3 */
		{ SEG(Z18 "21", Z18 "30"), SEG(Z18 "21", Z18 "31"), 40, true },      /* cut copy */
		{ SEG(Z18 "21", Z18 "30"), SEG(Z18 "25", Z18 "29"), 0, true },       /* inside one */
		{ SEG(Z18 "01", Z18 "10"), SEG(Z17 "201", Z17 "205"), 0, false },    /* beyond */
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		lv_storage *st = archived_store();
		put_copy(st, cases[k].from, cases[k].to, cases[k].cut);
		lv_buf stray = tu_read(st, cases[k].to);
		lv_dataset *ds = tu_open(st);
		expect_full_history(ds);
		assert_true(warned(ds, cases[k].stray_warning ? LV_WARN_SEGMENT_STRAY
							      : LV_WARN_CHECKPOINT_REJECTED, cases[k].to));
		lv_dataset_clear_warnings(ds);
		/* check lists it as a problem; salvage writes nothing from it */
		lv_check_options o = LV_CHECK_OPTIONS_INIT;
		o.salvage = true;
		lv_checkpoint_config small = small_cfg();
		o.checkpoint = &small;
		lv_check *c = NULL;
		CHECK(lv_check_run(&c, ds, &o, &err));
		bool listed = false;
		for (size_t i = 0; i < lv_check_count(c); i++) {
			const lv_check_item *it = lv_check_get(c, i);
			assert_int_not_equal(it->kind, LV_CHECK_GAP);
			if (it->path && !strcmp(it->path, cases[k].to)) {
				listed = true;
				assert_int_not_equal(it->status, 0);
			}
		}
		assert_true(listed);
		assert_int_equal(lv_check_salvaged(c), 0);
		lv_check_free(c);
		/* writers leave it in place, byte for byte */
		commit_range(st, 206, 230);
		lv_checkpoint_config cfg = small_cfg();
		tu_cleanup_retain(ds, 2, BASE_MS + 100000000, &cfg);
		lv_buf now = tu_read(st, cases[k].to);
		assert_int_equal(now.size, stray.size);
		assert_memory_equal(now.ptr, stray.ptr, stray.size);
		lv_buf_dispose(&now);
		lv_buf_dispose(&stray);
		lv_version_list *l = tu_history(ds, NULL);
		assert_int_equal(lv_version_list_count(l), 230);
		assert_int_equal(lv_version_list_gap_count(l), 0);
		lv_version_list_free(l);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/*
 * Section 5 without a head: every head checkpoint gone, only the archive and the live
 * manifests.  The stray copy named 1-18446744073709551615 overlaps every segment and ends
 * past the latest version: ignored with a warning; history is what it was without it.
 */
static void test_stray_segment_without_head(void **state)
{
	(void)state;
	lv_storage *st = archived_store();
	char **names = tu_list_paths(st, "_checkpoints", false);
	for (size_t i = 0; names[i]; i++)
		if (strstr(names[i], ".lance") && !strstr(names[i], "archive"))
			CHECK(lv_storage_delete(st, names[i], &err));
	tu_free_list(names);
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_history(ds, NULL); /* 1-200 and 203-205 (201-202 were the head's) */
	assert_int_equal(lv_version_list_count(l), 203);
	lv_version_list_free(l);
	lv_dataset_clear_warnings(ds);
	const char *to = SEG(Z18 "01", "18446744073709551615");
	put_copy(st, SEG(Z18 "11", Z18 "20"), to, 0);
	l = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 203);
	assert_int_equal(lv_version_list_gap_count(l), 1);
	assert_true(warned(ds, LV_WARN_SEGMENT_STRAY, to));
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* ---- section 4: a new identity only on a dataset without recorded history ---- */

/* A fault shim over st (which it takes) whose listings under _checkpoints come back empty. */
static lv_storage *lying_lister(lv_storage *st)
{
	lv_fault_spec spec = { .ops = LV_FAULT_LIST, .nth = 1, .persistent = true, .kind = LV_FAULT_UNLISTED,
			       .path_substring = "_checkpoints/" };
	lv_storage *shim = NULL;
	CHECK(lv_storage_fault_wrap(&shim, st, &spec, &err));
	return shim;
}

static void lists_truly(lv_storage *shim)
{
	CHECK(lv_storage_fault_set(shim, NULL, &err));
}

/* The dataset_created values of the head checkpoints in st (distinct count). */
static size_t identities(lv_storage *st)
{
	char **n = tu_list_paths(st, "_checkpoints", false);
	int64_t seen[16];
	size_t k = 0;
	for (size_t i = 0; n[i]; i++) {
		if (strlen(n[i]) != 13 + 26)
			continue;
		lv_buf b = tu_read(st, n[i]);
		lv_version_list *l = NULL;
		int64_t created;
		CHECK(lv__cp_decode_rows(b.ptr, b.size, n[i], true, &l, &created, &err));
		bool dup = false;
		for (size_t j = 0; j < k; j++)
			dup |= seen[j] == created;
		if (!dup && k < 16)
			seen[k++] = created;
		lv_version_list_free(l);
		lv_buf_dispose(&b);
	}
	tu_free_list(n);
	return k;
}

/*
 * Section 4: a listing of _checkpoints/ that omits every key (the fault shim's UNLISTED).
 * checkpoint and cleanup stop with LV_ECONFLICT naming what a HEAD found, write nothing and
 * delete nothing; once the store lists truly, history is complete under one identity.  Also
 * when 100 versions were committed since the head (its name is beyond the probe; the first
 * segment's name is found).  Before: each wrote a head with a new dataset_created, and
 * history fell from 205 rows to the live versions plus gaps.
 */
static void test_lying_listing_starts_no_new_identity(void **state)
{
	(void)state;
	for (int late = 0; late < 2; late++) {
		lv_storage *st = archived_store();
		if (late)
			commit_range(st, 206, 305);
		uint64_t n = late ? 305 : 205;
		lv_storage *shim = lying_lister(st);
		lv_dataset *ds = tu_open(shim);
		lv_checkpoint_config cfg = small_cfg();
		lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
		lv_error e = { 0 };
		assert_int_equal(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &e), LV_ECONFLICT);
		assert_non_null(strstr(e.message, late ? "archive/" : "_checkpoints/"));
		assert_non_null(strstr(e.message, "new history identity"));
		lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
		p.retain_versions = 1;
		p.error_if_tagged_old_versions = false;
		p.now_ms = BASE_MS + 100000000;
		p.checkpoint = &cfg;
		lv_cleanup_stats cs = LV_CLEANUP_STATS_INIT;
		assert_int_equal(lv_cleanup(ds, &p, &cs, &e), LV_ECONFLICT);
		lists_truly(shim);
		lv_version_list *l = tu_versions(ds, NULL);
		assert_int_equal(lv_version_list_count(l), late ? 103 : 3); /* nothing deleted */
		lv_version_list_free(l);
		l = tu_history(ds, NULL);
		assert_int_equal(lv_version_list_count(l), n);
		assert_int_equal(lv_version_list_gap_count(l), 0);
		lv_version_list_free(l);
		assert_int_equal(identities(st), 1);
		lv_dataset_free(ds);
		lv_storage_free(shim);
	}
}

/*
 * Section 4: the listing shows a kept-aside checkpoint but no head (a head moved aside by a
 * writer that then stopped, or a partial listing): no new identity.  Before: a head of the
 * live versions with a new dataset_created, so the kept-aside rows of versions 1-27 could
 * no longer be salvaged (another history).
 */
static void test_kept_aside_without_head_refuses(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	commit_range(st, 1, 30);
	lv_dataset *ds = tu_open(st);
	tu_cleanup_retain(ds, 3, BASE_MS + 100000000, NULL);
	const char *head = "_checkpoints/00000000000000000030.lance";
	lv_buf b = tu_read(st, head);
	CHECK(lv_storage_write(st, "_checkpoints/00000000000000000030.lance.damaged-0badf00d", b.ptr, b.size,
			       &err));
	CHECK(lv_storage_delete(st, head, &err));
	lv_buf_dispose(&b);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	lv_error e = { 0 };
	assert_int_equal(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &e), LV_ECONFLICT);
	assert_non_null(strstr(e.message, ".damaged-0badf00d"));
	char **names = tu_list_paths(st, "_checkpoints", false);
	assert_int_equal(tu_list_len(names), 1);
	tu_free_list(names);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Versions 1..30 cleaned to 3 (one head, 30, holding 1-30, no segment), then 31-32 committed;
 * wrapped in a fault shim with `f` (NULL: none yet). */
static lv_storage *small_head_store(const lv_fault_spec *f)
{
	lv_storage *mem = tu_mem();
	commit_range(mem, 1, 30);
	lv_dataset *ds = tu_open(mem);
	tu_cleanup_retain(ds, 3, BASE_MS + 100000000, NULL);
	lv_dataset_free(ds);
	commit_range(mem, 31, 32);
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, mem, f, &err));
	return st;
}

/*
 * Section 4, the race: the head appears after the writer listed _checkpoints/ (here: only
 * the first listing omits it).  A new listing shows it, so the writer gathers again and
 * uses it: no error, one identity.
 */
static void test_head_written_after_listing_is_a_race(void **state)
{
	(void)state;
	lv_storage *st = small_head_store(NULL);
	lv_dataset *ds = tu_open(st);
	/* the write lists _versions/ (1st call), then _checkpoints/ (2nd): that listing omits it */
	lv_fault_spec f = { .ops = LV_FAULT_LIST, .nth = 2, .kind = LV_FAULT_UNLISTED,
			    .path_substring = "_checkpoints/" };
	CHECK(lv_storage_fault_set(st, &f, &err));
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.written);
	assert_true(lv_storage_fault_calls(st) >= 4); /* the omitting listing was reached */
	assert_int_equal(identities(st), 1);
	lv_version_list *l = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 32);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Section 4: the only head cannot be read (I/O): no new identity either (before: written). */
static void test_unreadable_head_refuses(void **state)
{
	(void)state;
	lv_fault_spec f = { LV_FAULT_READ, 1, true, LV_FAULT_FAIL, "00000000000000000030.lance" };
	lv_storage *st = small_head_store(&f);
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	lv_error e = { 0 };
	assert_int_equal(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &e), LV_ECONFLICT);
	assert_non_null(strstr(e.message, "could not be read"));
	char **names = tu_list_paths(st, "_checkpoints", false);
	assert_int_equal(tu_list_len(names), 1);
	tu_free_list(names);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* ---- re-adopting a complete older identity (check --salvage) ---- */

/*
 * Rewrites the head checkpoint `path` of st under dataset_created + 12345 (a new identity),
 * with `rows` (NULL: its own) and its archive index kept or dropped.
 */
static void reidentify(lv_storage *st, const char *path, const char *from, bool keep_index)
{
	lv_buf b = tu_read(st, from);
	lv__cp_file f;
	memset(&f, 0, sizeof f);
	CHECK(lv__cp_decode(b.ptr, b.size, from, true, NULL, 0, &f, &err));
	lv__cp_extra x = { NULL, keep_index ? f.archive : NULL };
	lv_buf out = { 0 };
	CHECK(lv__cp_encode_x(f.rows->items, f.rows->n, f.created + 12345, &x, &out, &err));
	CHECK(lv_storage_write(st, path, out.ptr, out.size, &err));
	lv__cp_file_dispose(&f);
	lv_buf_dispose(&out);
	lv_buf_dispose(&b);
}

static size_t history_rows(lv_dataset *ds, size_t *gaps)
{
	lv_version_list *l = tu_history(ds, NULL);
	size_t n = lv_version_list_count(l);
	*gaps = lv_version_list_gap_count(l);
	lv_version_list_free(l);
	return n;
}

/*
 * The state an earlier writer left after an incomplete listing: (0) the head merged under a
 * new dataset_created, keeping the old index (every segment now "another history"), or (1)
 * a newer head of a new identity next to the older, complete head.  check reports the split
 * (LV_ECONFLICT on the newest head); check --salvage re-adopts the older identity: history
 * is complete again, every file still there (the rewritten head's rows kept).
 */
static void test_salvage_readopts_older_identity(void **state)
{
	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		lv_storage *st = archived_store();
		const char *a_head = "_checkpoints/00000000000000000205.lance";
		uint64_t n = 205;
		if (mode == 0) {
			reidentify(st, a_head, a_head, true);
		} else {
			commit_range(st, 206, 210);
			n = 210;
			lv_dataset *ds = tu_open(st);
			lv_checkpoint_config cfg = small_cfg();
			lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
			CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
			lv_dataset_free(ds);
			reidentify(st, "_checkpoints/00000000000000000210.lance",
				   "_checkpoints/00000000000000000210.lance", false);
		}
		lv_dataset *ds = tu_open(st);
		size_t gaps;
		size_t before = history_rows(ds, &gaps);
		assert_true(before < 20 && gaps > 0);
		lv_check_options o = LV_CHECK_OPTIONS_INIT;
		lv_checkpoint_config small = small_cfg();
		o.checkpoint = &small;
		for (int salvage = 0; salvage < 2; salvage++) {
			o.salvage = salvage;
			lv_check *c = NULL;
			CHECK(lv_check_run(&c, ds, &o, &err));
			bool split = false, readopted = false;
			for (size_t i = 0; i < lv_check_count(c); i++) {
				const lv_check_item *it = lv_check_get(c, i);
				split |= it->kind == LV_CHECK_CHECKPOINT && it->status == LV_ECONFLICT &&
					 strstr(it->message, "re-adopts");
				readopted |= it->status == 0 && strstr(it->message, "re-adopted");
			}
			assert_true(split);
			assert_int_equal(readopted, salvage);
			lv_check_free(c);
		}
		lv_dataset_clear_warnings(ds);
		assert_int_equal(history_rows(ds, &gaps), n);
		assert_int_equal(gaps, 0);
		assert_int_equal(lv_dataset_warning_count(ds), 0);
		/* once re-adopted, check finds nothing, and writers carry on */
		lv_check *c = NULL;
		o.salvage = false;
		CHECK(lv_check_run(&c, ds, &o, &err));
		assert_int_equal(lv_check_problems(c), 0);
		lv_check_free(c);
		tu_cleanup_retain(ds, 1, BASE_MS + 100000000, o.checkpoint);
		assert_int_equal(history_rows(ds, &gaps), n);
		assert_int_equal(gaps, 0);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* Writes a valid segment first..last of st's identity from the rows of segments 1-10, 11-20. */
static void forge_segment(lv_storage *st, uint64_t first, uint64_t last)
{
	const char *src[2] = { SEG(Z18 "01", Z18 "10"), SEG(Z18 "11", Z18 "20") };
	lv_version_info rows[20];
	size_t n = 0;
	lv__cp_file f[2];
	memset(f, 0, sizeof f);
	for (int k = 0; k < 2; k++) {
		lv_buf b = tu_read(st, src[k]);
		CHECK(lv__cp_decode(b.ptr, b.size, src[k], true, NULL, 0, &f[k], &err));
		lv_buf_dispose(&b);
		for (size_t i = 0; i < f[k].rows->n; i++)
			if (f[k].rows->items[i].version >= first && f[k].rows->items[i].version <= last)
				rows[n++] = f[k].rows->items[i];
	}
	char range[48], path[96];
	snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)first, (unsigned long long)last);
	snprintf(path, sizeof path, "_checkpoints/archive/%020llu-%020llu.lance", (unsigned long long)first,
		 (unsigned long long)last);
	lv__cp_extra x = { range, NULL };
	lv_buf out = { 0 };
	CHECK(lv__cp_encode_x(rows, n, f[0].created, &x, &out, &err));
	CHECK(lv_storage_write(st, path, out.ptr, out.size, &err));
	lv_buf_dispose(&out);
	lv__cp_file_dispose(&f[0]);
	lv__cp_file_dispose(&f[1]);
}

/*
 * Section 5 without a head: valid unindexed segments of another size that overlap (racing
 * writers with different segment sizes) are used -- history is what it was -- and one lying
 * inside another is left out; neither is warned about (both are valid).
 */
static void test_overlapping_valid_segments_without_head(void **state)
{
	(void)state;
	lv_storage *st = archived_store();
	char **names = tu_list_paths(st, "_checkpoints", false);
	for (size_t i = 0; names[i]; i++)
		if (strstr(names[i], ".lance") && !strstr(names[i], "archive"))
			CHECK(lv_storage_delete(st, names[i], &err));
	tu_free_list(names);
	forge_segment(st, 5, 14);
	forge_segment(st, 3, 7);
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 203);
	for (size_t i = 0; i < 200; i++)
		assert_int_equal(lv_version_list_get(l, i)->version, i + 1);
	assert_int_equal(lv_version_list_gap_count(l), 1);
	assert_false(warned(ds, LV_WARN_SEGMENT_STRAY, NULL)); /* both valid: 3-7 is not needed */
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/*
 * Section 5 with a head: a valid segment of another size overlapping indexed ones (what a
 * merge of writers with different segment sizes leaves out of the index) is redundant: left
 * out, no warning, a check item with status 0; history complete.
 */
static void test_redundant_valid_segment_is_not_a_problem(void **state)
{
	(void)state;
	lv_storage *st = archived_store();
	forge_segment(st, 5, 14);
	lv_dataset *ds = tu_open(st);
	expect_full_history(ds);
	assert_int_equal(lv_dataset_warning_count(ds), 0);
	lv_check *c = NULL;
	CHECK(lv_check_run(&c, ds, NULL, &err));
	bool listed = false;
	for (size_t i = 0; i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		if (it->path && !strcmp(it->path, SEG(Z18 "05", Z18 "14")))
			listed = it->status == 0;
	}
	assert_true(listed);
	assert_int_equal(lv_check_problems(c), 0);
	lv_check_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stray_segments_hide_nothing),
		cmocka_unit_test(test_stray_segment_without_head),
		cmocka_unit_test(test_overlapping_valid_segments_without_head),
		cmocka_unit_test(test_redundant_valid_segment_is_not_a_problem),
		cmocka_unit_test(test_lying_listing_starts_no_new_identity),
		cmocka_unit_test(test_kept_aside_without_head_refuses),
		cmocka_unit_test(test_unreadable_head_refuses),
		cmocka_unit_test(test_head_written_after_listing_is_a_race),
		cmocka_unit_test(test_salvage_readopts_older_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
