/*
 * lv_show (lancever/show.h) and lv_diff_versions (lancever/diff.h): a version live or
 * recorded, and two versions compared, on the in-memory store.
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

#include "support/memcopy.h"
#include "support/rowcmp.h"
#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)
#define BASE_MS 1700000000000

static lv_error err;

/* Versions 1..10 (rows = 10 * version), a checkpoint, then versions 1..6 cleaned up. */
static lv_storage *cleaned_series(void)
{
	lv_storage *st = synth_mem_series(10, BASE_MS);
	lv_dataset *ds = tu_open(st);
	tu_cleanup_retain(ds, 4, BASE_MS + 86400000, NULL);
	lv_dataset_free(ds);
	return st;
}

static void test_show_live_and_recorded(void **state)
{
	(void)state;
	lv_storage *st = cleaned_series();
	lv_dataset *ds = tu_open(st);
	lv_version_list *h = tu_history(ds, NULL);
	for (uint64_t v = 1; v <= 10; v++) {
		lv_version_list *l = NULL;
		int source = 0;
		CHECK(lv_show(&l, ds, v, &source, &err));
		assert_int_equal(lv_version_list_count(l), 1);
		const lv_version_info *x = lv_version_list_get(l, 0);
		assert_int_equal(x->version, v);
		assert_int_equal(x->total_rows, 10 * v);
		assert_true(tu_same_checkpoint_row(x, lv_version_list_get(h, v - 1)));
		if (v <= 6) { /* cleaned up: the history's row, no manifest details */
			assert_int_equal(source, LV_SHOW_HISTORY);
			assert_true(x->is_cleaned_up);
			assert_false(x->has_manifest_details);
		} else {
			assert_int_equal(source, LV_SHOW_MANIFEST);
			assert_false(x->is_cleaned_up);
			assert_true(x->has_manifest_details);
			assert_non_null(x->manifest_path);
		}
		assert_null(lv_version_list_get(l, 1));
		lv_version_list_free(l);
	}
	lv_version_list_free(h);
	lv_version_list *l = NULL;
	CHECK(lv_show(&l, ds, 3, NULL, &err)); /* source may be NULL */
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_show_errors(void **state)
{
	(void)state;
	lv_storage *st = cleaned_series();
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = (lv_version_list *)1;
	int source = 99;
	assert_int_equal(lv_show(&l, ds, 11, &source, &err), LV_ENOTFOUND);
	assert_string_equal(err.message, "version 11 is neither live nor recorded in a checkpoint");
	assert_null(l);
	assert_int_equal(source, 99); /* written only on success */
	assert_int_equal(lv_show(NULL, ds, 1, NULL, &err), LV_EINVALID);
	assert_int_equal(lv_show(&l, NULL, 1, NULL, &err), LV_EINVALID);
	assert_int_equal(lv_show(&l, ds, 0, NULL, NULL), LV_ENOTFOUND); /* err may be NULL */
	lv_dataset_free(ds);
	lv_storage_free(st);
	/* not a dataset */
	lv_storage *empty = tu_mem();
	ds = tu_open(empty);
	assert_int_equal(lv_show(&l, ds, 1, NULL, &err), LV_ENOTFOUND);
	assert_null(l);
	lv_dataset_free(ds);
	lv_storage_free(empty);
}

/* A live manifest that cannot be read is the answer: no fallback to the history's row. */
static void test_show_does_not_hide_a_failed_read(void **state)
{
	(void)state;
	lv_storage *inner = synth_mem_series(5, BASE_MS), *st = NULL;
	tu_checkpoint(inner);
	char path[128];
	synth_manifest_path(path, sizeof path, 3);
	lv_fault_spec f = { LV_FAULT_READ, 1, true, LV_FAULT_FAIL, path };
	CHECK(lv_storage_fault_wrap(&st, inner, &f, &err));
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = NULL;
	assert_int_equal(lv_show(&l, ds, 3, NULL, &err), LV_EIO);
	assert_null(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_diff(void **state)
{
	(void)state;
	lv_storage *st = cleaned_series();
	lv_dataset *ds = tu_open(st);
	lv_diff *d = NULL;
	CHECK(lv_diff_versions(&d, ds, 9, 2, &err)); /* a live one and a cleaned-up one, backwards */
	assert_int_equal(lv_diff_from(d)->version, 9);
	assert_int_equal(lv_diff_to(d)->version, 2);
	assert_true(lv_diff_to(d)->is_cleaned_up);
	assert_int_equal(lv_diff_ms_between(d), -7000);
	assert_int_equal(lv_diff_count(d), 7);
	static const char *const names[] = { "total_fragments", "total_data_files", "total_files_size",
					     "total_deletion_files", "total_data_file_rows",
					     "total_deletion_file_rows", "total_rows" };
	for (size_t i = 0; i < 7; i++) {
		const char *name = NULL;
		uint64_t a, b;
		int64_t delta;
		assert_true(lv_diff_counter(d, i, &name, &a, &b, &delta));
		assert_string_equal(name, names[i]);
		assert_int_equal(delta, (int64_t)(b - a));
	}
	uint64_t a, b;
	int64_t delta;
	assert_true(lv_diff_counter(d, LV_DIFF_ROWS, NULL, &a, &b, &delta));
	assert_int_equal(a, 90);
	assert_int_equal(b, 20);
	assert_int_equal(delta, -70);
	assert_true(lv_diff_counter(d, LV_DIFF_FRAGMENTS, NULL, NULL, NULL, NULL));
	assert_false(lv_diff_counter(d, 7, NULL, &a, &b, &delta));
	lv_diff_free(d);
	/* the getters on NULL */
	assert_null(lv_diff_from(NULL));
	assert_null(lv_diff_to(NULL));
	assert_int_equal(lv_diff_ms_between(NULL), 0);
	assert_int_equal(lv_diff_count(NULL), 0);
	assert_false(lv_diff_counter(NULL, 0, NULL, NULL, NULL, NULL));
	lv_diff_free(NULL);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_diff_errors(void **state)
{
	(void)state;
	lv_storage *st = cleaned_series();
	lv_dataset *ds = tu_open(st);
	lv_diff *d = (lv_diff *)1;
	assert_int_equal(lv_diff_versions(&d, ds, 11, 12, &err), LV_ENOTFOUND);
	assert_string_equal(err.message, "version 11 not recorded"); /* `from` is checked first */
	assert_null(d);
	assert_int_equal(lv_diff_versions(&d, ds, 1, 12, &err), LV_ENOTFOUND);
	assert_string_equal(err.message, "version 12 not recorded");
	assert_int_equal(lv_diff_versions(NULL, ds, 1, 2, &err), LV_EINVALID);
	assert_int_equal(lv_diff_versions(&d, NULL, 1, 2, &err), LV_EINVALID);
	CHECK(lv_diff_versions(&d, ds, 4, 4, &err)); /* a version against itself */
	assert_int_equal(lv_diff_ms_between(d), 0);
	lv_diff_free(d);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_show_live_and_recorded),
		cmocka_unit_test(test_show_errors),
		cmocka_unit_test(test_show_does_not_hide_a_failed_read),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
