/*
 * Unit tests: a dataset's address is parsed once and its store opened once
 * (storage/address.h, storage/backends.h, core/dataset.c).  A counting backend,
 * registered by scheme as any backend is, proves the one open (also with a
 * branch and with storage options); a local "<root>/tree/<branch>" path is
 * opened as that branch when <root> registers it, and as a dataset of its own
 * when not; a missing local path or a file is named by the library at open.
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

#include "core/stores.h"
#include "storage/backends.h"
#include "support/synth.h"
#include "support/testutil.h"

/* ---- a backend that counts its opens: an in-memory store holding versions 1..3 ---- */

static int opens;

static int count_open(lv_storage **out, lv__address *a, lv_error *err)
{
	opens++;
	(void)lv__opt_get(&a->opts, LV_OPT("count_hint")); /* the one option it takes */
	LV_TRY(lv_storage_mem_new(out, err));
	return synth_series(*out, 3, 1700000000000);
}

static const lv__backend count_backend = { "count", LV__ADDR_NAME, "count://", count_open };

static int setup(void **state)
{
	(void)state;
	lv__stores_builtin();
	int rc = lv__backend_register(&count_backend);
	return rc == 0 || rc == LV_EEXISTS ? 0 : -1;
}

static size_t live_versions(lv_dataset *ds)
{
	lv_error e = { 0 };
	lv_version_list *l = NULL;
	assert_int_equal(lv_versions(&l, ds, NULL, &e), 0);
	size_t n = lv_version_list_count(l);
	lv_version_list_free(l);
	return n;
}

static void t_open_once(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_dataset *ds = NULL;
	opens = 0;
	assert_int_equal(lv_dataset_open(&ds, "count://x", NULL, &e), 0);
	assert_int_equal(opens, 1);
	assert_int_equal(live_versions(ds), 3);
	assert_int_equal(opens, 1); /* reading opens nothing */
	lv_dataset_free(ds);

	/* with a branch and with storage options: still one open */
	lv_storage_options *so = NULL;
	assert_int_equal(lv_storage_options_new(&so, &e), 0);
	assert_int_equal(lv_storage_options_set(so, "count_hint", "1", &e), 0);
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.branch = "dev";
	o.storage = so;
	opens = 0;
	assert_int_equal(lv_dataset_open(&ds, "count://x", &o, &e), 0);
	assert_int_equal(opens, 1);
	lv_dataset_free(ds);
	/* an option the backend did not take is refused by name, after its one open */
	assert_int_equal(lv_storage_options_set(so, "no_such_key", "SECRET", &e), 0);
	opens = 0;
	assert_int_equal(lv_dataset_open(&ds, "count://x", &o, &e), LV_EINVALID);
	assert_null(ds);
	assert_int_equal(opens, 1);
	assert_non_null(strstr(e.message, "'no_such_key' for count://"));
	assert_null(strstr(e.message, "SECRET"));
	lv_storage_options_free(so);

	/* an open-options struct of the old layout (version 1: storage held by value) */
	o.version = 1;
	assert_int_equal(lv_dataset_open(&ds, "count://x", &o, &e), LV_EINVALID);
	assert_null(ds);
}

/* Writes "<dir>/<rel>" as a local store holding versions 1..n. */
static void local_series(const char *dir, const char *rel, uint64_t n)
{
	lv_error e = { 0 };
	lv_storage *st = NULL, *sub = NULL;
	TU_CHECK(e, lv_storage_open(&st, dir, NULL, &e));
	if (rel[0])
		TU_CHECK(e, lv_storage_sub(&sub, st, rel, &e));
	TU_CHECK(e, synth_series(sub ? sub : st, n, 1700000000000));
	lv_storage_free(sub);
	lv_storage_free(st);
}

static void t_branch_path(void **state)
{
	(void)state;
	lv_error e = { 0 };
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tu_tmpdir());
	local_series(dir, "", 2);
	local_series(dir, "tree/dev", 5);
	local_series(dir, "tree/stray", 4);
	lv_storage *st = NULL;
	TU_CHECK(e, lv_storage_open(&st, dir, NULL, &e));
	TU_CHECK(e, lv_storage_write(st, "_refs/branches/dev.json", "{}", 2, &e));
	lv_storage_free(st);

	/* registered: the branch of the root (its versions, the root's refs) */
	char *path = lv__sprintf("%s/tree/dev/", dir);
	lv_dataset *ds = NULL;
	TU_CHECK(e, lv_dataset_open(&ds, path, NULL, &e));
	assert_int_equal(live_versions(ds), 5);
	const char *d = lv_storage_describe(lv_dataset_storage(ds));
	assert_non_null(strstr(d, "/tree/dev"));
	lv_dataset_free(ds);
	free(path);

	/* not registered: a dataset of its own */
	path = lv__sprintf("%s/tree/stray", dir);
	TU_CHECK(e, lv_dataset_open(&ds, path, NULL, &e));
	assert_int_equal(live_versions(ds), 4);
	lv_dataset_free(ds);
	free(path);

	/* missing, or a file: named by the library when opening */
	path = lv__sprintf("%s/tree/nope", dir);
	assert_int_equal(lv_dataset_open(&ds, path, NULL, &e), LV_ENOTFOUND);
	assert_null(ds);
	char *want = lv__sprintf("%s: does not exist", path);
	assert_string_equal(e.message, want);
	free(want);
	free(path);
	path = lv__sprintf("%s/_refs/branches/dev.json", dir);
	assert_int_equal(lv_dataset_open(&ds, path, NULL, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "dev.json: is not a directory"));
	free(path);
	tu_rmrf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_open_once),
		cmocka_unit_test(t_branch_path),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
