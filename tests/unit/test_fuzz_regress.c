/*
 * Regression tests for defects found by the fuzz campaign (the fuzz/ targets, issue 8).
 * Each test names the target that found the defect; the input that found it is also
 * in that target's corpus, so the replay tests run it too.
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

#include "core/checkpoint/checkpoint_internal.h"
#include "core/checkpoint/codec.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "core/records.h"
#include "core/vlist.h"
#include "support/memcopy.h"
#include "support/testutil.h"
#include "util/util.h"
#include "wire/pb.h"

#define CP6 "_checkpoints/00000000000000000006.lance"

static lv_error err;

#define CHECK(expr) TU_CHECK(err, expr)

/*
 * Replaces the dataset's checkpoint _checkpoints/6 by a checksum-valid file of
 * another history: version 6 gets another transaction uuid; `created_delta`
 * shifts dataset_created; `extra` appends a row for version 7 (beyond the
 * dataset's latest).
 */
static void plant_foreign_checkpoint(lv_storage *st, int64_t created_delta, bool extra)
{
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, CP6, &b, &err));
	lv_version_list *rows = NULL;
	int64_t created = 0;
	CHECK(lv__cp_decode_rows(b.ptr, b.size, CP6, true, &rows, &created, &err));
	lv_buf_dispose(&b);
	assert_int_equal(rows->n, 6);
	lv_version_info v[7];
	memcpy(v, rows->items, 6 * sizeof v[0]);
	v[5].transaction_uuid = "ffffffff-ffff-4fff-8fff-ffffffffffff";
	if (extra) {
		v[6] = v[5];
		v[6].version = 7;
	}
	CHECK(lv__cp_encode(v, extra ? 7 : 6, created + created_delta, &b, &err));
	CHECK(lv_storage_write(st, CP6, b.ptr, b.size, &err));
	lv_buf_dispose(&b);
	lv_version_list_free(rows);
}

static void foreign_checkpoint_case(int64_t created_delta, bool extra)
{
	lv_storage *st = tu_mem_copy("lance8/t.lance");
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result res = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &res, &err));
	plant_foreign_checkpoint(st, created_delta, extra);

	/* readers reject it */
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *h = tu_history(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_MANIFESTS);
	assert_int_equal(rep.checkpoints_rejected, 1);
	lv_version_list_free(h);

	/* so the writer must not keep it, nor merge its rows: ours replaces it */
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &res, &err));
	assert_true(res.written);
	assert_false(res.already_present);
	assert_int_equal(res.latest_version, 6);
	assert_int_equal(res.entries, 6);
	CHECK(lv_history(&h, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rep.checkpoint_version, 6);
	assert_int_equal(lv_version_list_count(h), 6);
	const lv_version_info *v6 = lv_version_list_get(h, 5);
	assert_int_equal(v6->version, 6);
	assert_string_not_equal(v6->transaction_uuid, "ffffffff-ffff-4fff-8fff-ffffffffffff");
	lv_version_list_free(h);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* checkpoint_fuzz: a foreign file under the writer's name that "covers" its rows was kept. */
static void test_checkpoint_foreign_file_not_kept(void **state)
{
	(void)state;
	foreign_checkpoint_case(0, false);
}

/* checkpoint_fuzz: ... and one with another dataset_created was merged into ours. */
static void test_checkpoint_foreign_file_not_merged(void **state)
{
	(void)state;
	foreign_checkpoint_case(1, true);
}

/* pb_fuzz: lv__pb_make(NULL, 0) computed NULL + 0 (undefined behaviour; UBSan build). */
static void test_pb_make_null_empty(void **state)
{
	(void)state;
	lv__pb r = lv__pb_make(NULL, 0);
	lv__pb_field f;
	assert_true(lv__pb_done(&r));
	assert_int_equal(lv__pb_next(&r, &f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_foreign_file_not_kept),
		cmocka_unit_test(test_checkpoint_foreign_file_not_merged),
		cmocka_unit_test(test_pb_make_null_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
