/*
 * Unit tests for issue 13 (trust): history is never lost, and an answer that
 * may be incomplete says so.  Each test is the regression test of a repro from
 * the issue; each was checked to fail on the code before its fix.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <lancever/lancever.h>

#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)

static lv_error err;

static lv_dataset *open_ds(lv_storage *st)
{
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, NULL, &err));
	return ds;
}

/* Commits versions first..last (timestamps 1000*v past a fixed base). */
static void commit_range(lv_storage *st, uint64_t first, uint64_t last)
{
	for (uint64_t v = first; v <= last; v++) {
		synth_commit c = { .version = v, .ts_ms = 1700000000000LL + 1000 * (int64_t)v,
				   .read_version = v - 1 };
		CHECK(synth_write(st, &c));
	}
}

static void cleanup_retain(lv_dataset *ds, int64_t n)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = n;
	p.error_if_tagged_old_versions = false;
	p.now_ms = 1800000000000LL;
	lv_cleanup_stats s;
	CHECK(lv_cleanup(ds, &p, &s, &err));
}

/* The repro: 1..10, cleanup to 5; 11..15, cleanup to 3.  Two checkpoints (10, 15). */
static lv_storage *two_cleanups(void)
{
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	commit_range(st, 1, 10);
	lv_dataset *ds = open_ds(st);
	cleanup_retain(ds, 5);
	commit_range(st, 11, 15);
	cleanup_retain(ds, 3);
	lv_dataset_free(ds);
	return st;
}

static void truncate_obj(lv_storage *st, const char *path, size_t n)
{
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, path, &b, &err));
	assert_true(b.size > n);
	CHECK(lv_storage_write(st, path, b.ptr, n, &err));
	lv_buf_dispose(&b);
}

static const lv_warning *find_warning(const lv_dataset *ds, int kind)
{
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++)
		if (lv_dataset_warning(ds, i)->kind == kind)
			return lv_dataset_warning(ds, i);
	return NULL;
}

#define CP15 "_checkpoints/00000000000000000015.lance"

/* A damaged newest checkpoint: history says which file was rejected and which versions
 * it cannot account for (before: versions 11-12 silently missing, exit 0). */
static void test_history_warns_on_damaged_checkpoint(void **state)
{
	(void)state;
	lv_storage *st = two_cleanups();
	truncate_obj(st, CP15, 1000);
	lv_dataset *ds = open_ds(st);
	lv_version_list *h = NULL;
	lv_history_report rep;
	CHECK(lv_history(&h, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_OLDER_CHECKPOINT);
	const lv_warning *w = find_warning(ds, LV_WARN_CHECKPOINT_REJECTED);
	assert_non_null(w);
	assert_string_equal(w->path, CP15);
	assert_non_null(strstr(w->message, CP15));
	w = find_warning(ds, LV_WARN_HISTORY_GAP);
	assert_non_null(w);
	assert_int_equal(w->first, 11);
	assert_int_equal(w->last, 12);
	assert_int_equal(lv_version_list_gap_count(h), 1);
	uint64_t a, b;
	assert_true(lv_version_list_gap(h, 0, &a, &b));
	assert_int_equal(a, 11);
	assert_int_equal(b, 12);
	assert_int_equal(rep.unrecorded_versions, 2);
	assert_true(rep.warnings >= 2);
	lv_version_list_free(h);

	/* As of a time inside the gap: the answer (10) may be wrong, and says so. */
	lv_dataset_clear_warnings(ds);
	assert_int_equal(lv_dataset_warning_count(ds), 0);
	lv_version_list *one = NULL;
	CHECK(lv_version_as_of(&one, ds, 1700000000000LL + 11500, false, &rep, &err));
	assert_int_equal(lv_version_list_get(one, 0)->version, 10);
	w = find_warning(ds, LV_WARN_ANSWER_UNCERTAIN);
	assert_non_null(w);
	assert_int_equal(w->first, 11);
	assert_int_equal(w->last, 12);
	lv_version_list_free(one);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* One malformed tag file must not untag every version (before: all is_tagged = false). */
static void test_malformed_tag_keeps_other_tags(void **state)
{
	(void)state;
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	commit_range(st, 1, 8);
	CHECK(synth_tag(st, "good", 3));
	const char *bad = "{\"version\": 6,";
	CHECK(lv_storage_write(st, "_refs/tags/bad.json", bad, strlen(bad), &err));
	lv_dataset *ds = open_ds(st);
	for (int pass = 0; pass < 2; pass++) { /* from manifests, then from a checkpoint */
		lv_version_list *l = NULL;
		lv_history_report rep;
		CHECK(lv_versions(&l, ds, &rep, &err));
		assert_int_equal(lv_version_list_count(l), 8);
		for (size_t i = 0; i < 8; i++)
			assert_int_equal(lv_version_list_get(l, i)->is_tagged, i == 2);
		const lv_warning *w = find_warning(ds, LV_WARN_TAG_UNREADABLE);
		assert_non_null(w);
		assert_string_equal(w->path, "_refs/tags/bad.json");
		lv_version_list_free(l);
		lv_checkpoint_result r;
		CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	}
	/* The reader API also lists the good tag and names the bad file. */
	lv_refs *refs = NULL;
	CHECK(lv_refs_load(&refs, ds, &err));
	assert_int_equal(lv_refs_tag_count(refs), 1);
	assert_int_equal(lv_refs_unreadable_count(refs), 1);
	assert_string_equal(lv_refs_unreadable(refs, 0)->path, "_refs/tags/bad.json");
	lv_refs_free(refs);
	/* Cleanup still refuses: it must know every tag. */
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = 2;
	p.now_ms = 1800000000000LL;
	lv_error e = { 0 };
	assert_true(lv_cleanup(ds, &p, NULL, &e) < 0);
	assert_non_null(strstr(e.message, "bad.json"));
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void mkdirs(const char *p)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", p);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(buf, 0755);
			*s = '/';
		}
	mkdir(buf, 0755);
}

/* X/tree/t is a branch of X only if X's _refs/branches registers t (before: any X with a
 * _versions/ directory, even empty, made t its branch: t's own tags were ignored). */
static void test_tree_path_is_branch_only_when_registered(void **state)
{
	(void)state;
	char root[512], inner[600], path[700];
	snprintf(root, sizeof root, "%s/X", tu_tmpdir());
	snprintf(inner, sizeof inner, "%s/tree/t", root);
	snprintf(path, sizeof path, "%s/_versions", root);
	mkdirs(path);
	mkdirs(inner);
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, inner, NULL, &err));
	commit_range(st, 1, 4);
	CHECK(synth_tag(st, "own", 2));
	lv_storage_free(st);

	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open(&ds, inner, NULL, &err));
	lv_version_list *l = NULL;
	CHECK(lv_versions(&l, ds, NULL, &err));
	assert_int_equal(lv_version_list_count(l), 4);
	assert_true(lv_version_list_get(l, 1)->is_tagged);
	assert_null(lv_version_list_get(l, 1)->branch);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	tu_rmrf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_warns_on_damaged_checkpoint),
		cmocka_unit_test(test_malformed_tag_keeps_other_tags),
		cmocka_unit_test(test_tree_path_is_branch_only_when_registered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
