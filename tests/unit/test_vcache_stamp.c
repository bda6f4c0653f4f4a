/*
 * The versions() cache of a handle on local disk, keyed by the checkpoint as its read saw it:
 * a fresh handle lists _checkpoints/ without a stat per file and takes the newest checkpoint's
 * size and time from the read's own fstat (storage/stamped.h).  Checked here: the second call
 * is served from the cache (the key was set), a checkpoint rewritten under the same name and
 * size is read again (the key is the file's), and both answers equal a cold handle's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>

#include <lancever/lancever.h>
#include "support/testutil.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

static uint64_t bytes_read(lv_storage *st)
{
	lv_storage_stats s = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(st, &s);
	return s.bytes_read;
}

/* The versions of l, one line each with their transaction uuids and tags. */
static char *describe(const lv_version_list *l)
{
	size_t cap = 64 * (lv_version_list_count(l) + 1), len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	s[0] = 0;
	for (size_t i = 0; i < lv_version_list_count(l); i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		len += (size_t)snprintf(s + len, cap - len, "%llu %s %d\n", (unsigned long long)v->version,
					v->transaction_uuid ? v->transaction_uuid : "-", (int)v->is_tagged);
	}
	return s;
}

/* A copy of the LanceDB-written fixture with a checkpoint; its path in *cp_path. */
static const char *dataset_with_checkpoint(char *cp_path, size_t cap)
{
	const char *base = tu_tmpdir();
	tu_sh(tu_fmt("cp -r '%s' '%s/ds'", tu_fixture("lance8/t.lance"), base));
	const char *root = tu_fmt("%s/ds", base);
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open(&ds, root, NULL, &err));
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.written);
	snprintf(cp_path, cap, "%s/%s", root, r.path);
	lv_dataset_free(ds);
	return root;
}

static void test_fresh_handle_keys_from_read(void **state)
{
	(void)state;
	char cp[4300];
	const char *root = dataset_with_checkpoint(cp, sizeof cp);
	struct stat sb;
	assert_int_equal(stat(cp, &sb), 0);
	uint64_t cp_size = (uint64_t)sb.st_size;

	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, root, NULL, &err));
	lv_dataset *ds = tu_open(st);
	lv_version_list *a = NULL, *b = NULL, *c = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	uint64_t r0 = bytes_read(st);
	CHECK(lv_versions(&a, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_true(bytes_read(st) - r0 >= cp_size); /* the first call read the checkpoint */

	/* the second call is served: the key came from the first call's read */
	uint64_t r1 = bytes_read(st);
	CHECK(lv_versions(&b, ds, &rep, &err));
	assert_true(bytes_read(st) - r1 < cp_size);
	char *da = describe(a), *db = describe(b);
	assert_string_equal(da, db);

	/* the same bytes written again under the same name (a merge rewrites its checkpoint in
	 * place): another file, another time; the next call reads it again */
	tu_sh(tu_fmt("cp '%s' '%s.new' && touch -d '@2000000000' '%s.new'", cp, cp, cp));
	tu_sh(tu_fmt("mv '%s.new' '%s'", cp, cp));
	uint64_t r2 = bytes_read(st);
	CHECK(lv_versions(&c, ds, &rep, &err));
	assert_true(bytes_read(st) - r2 >= cp_size);
	char *dc = describe(c);
	assert_string_equal(da, dc);

	/* a cold handle agrees */
	lv_dataset *cold = NULL;
	lv_version_list *d = NULL;
	CHECK(lv_dataset_open(&cold, root, NULL, &err));
	CHECK(lv_versions(&d, cold, NULL, &err));
	char *dd = describe(d);
	assert_string_equal(da, dd);
	free(da);
	free(db);
	free(dc);
	free(dd);
	lv_version_list_free(a);
	lv_version_list_free(b);
	lv_version_list_free(c);
	lv_version_list_free(d);
	lv_dataset_free(cold);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_handle_keys_from_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
