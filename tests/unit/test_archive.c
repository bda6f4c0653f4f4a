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

#include <lancever/lancever.h>

#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)
#define BASE_MS 1700000000000LL

static lv_error err;

static lv_dataset *open_ds(lv_storage *st)
{
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, NULL, &err));
	return ds;
}

/*
 * A checkpoint larger than 4 MiB (read footer-first: size, then its last bytes) is used.
 * Before: the size check read a manifest's 16-byte footer at the end of a Lance data file
 * (whose footer is 40 bytes), so every checkpoint over 4 MiB was rejected as "no Lance
 * footer" and a 1,000,000-version cleanup stopped with "cannot be read".
 */
static void test_large_checkpoint_is_read(void **state)
{
	(void)state;
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	static char big[9000];
	memset(big, 'x', sizeof big - 1);
	const char *props[] = { "note", big, NULL };
	for (uint64_t v = 1; v <= 520; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1,
				   .props = props };
		CHECK(synth_write(st, &c));
	}
	lv_dataset *ds = open_ds(st);
	lv_checkpoint_result r;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.file_size > (4u << 20));
	lv_version_list *l = NULL;
	lv_history_report rep;
	CHECK(lv_versions(&l, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rep.checkpoints_rejected, 0);
	assert_int_equal(lv_version_list_count(l), 520);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_large_checkpoint_is_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
