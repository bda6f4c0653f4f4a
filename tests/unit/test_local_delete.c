/*
 * Unit tests: lv_storage_delete_many() on local disk (the backend's del_many,
 * which walks to each directory once per run of paths): every path gets its
 * own status, a missing file is LV_ENOTFOUND, a directory is not deleted, a
 * symbolic link on the way is refused and its target untouched, runs of
 * paths in different directories (of the same name length) in any order, and the same paths deleted
 * one by one give the same statuses.
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
#include <unistd.h>

#include <lancever/lancever.h>

#include "support/testutil.h"

static char base[4096];

static void put(const char *rel)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	tu_write_file(p, "x");
}

static bool exists(const char *rel)
{
	char p[4200];
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s", base, rel);
	return lstat(p, &sb) == 0;
}

static void mk(const char *rel)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	assert_int_equal(mkdir(p, 0777), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof base, "/tmp/lv_test_local_delete_XXXXXX");
	assert_non_null(mkdtemp(base));
	mk("ds");
	mk("ds/a");
	mk("ds/b");
	mk("ds/b/c");
	mk("outside");
	put("outside/keep");
	char p[4200], t[4200];
	snprintf(t, sizeof t, "%s/outside", base);
	snprintf(p, sizeof p, "%s/ds/link", base);
	assert_int_equal(symlink(t, p), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

/* The paths of one batch and the status each must get (relative to base/ds). */
static const char *paths[] = { "a/1", "a/2", "b/c/3", "a/3", "b/6", "a/missing", "b", "link/keep", "top", "b/c/4", "nodir/x" };
static const int want[] = { 0, 0, 0, 0, 0, LV_ENOTFOUND, LV_ENOTFOUND, LV_EINVALID, 0, 0, LV_ENOTFOUND };
#define NP (sizeof paths / sizeof paths[0])

static void make_files(void)
{
	const char *files[] = { "ds/a/1", "ds/a/2", "ds/b/c/3", "ds/a/3", "ds/b/6", "ds/top", "ds/b/c/4" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		put(files[i]);
}

static void check_after(const int *rcs)
{
	for (size_t i = 0; i < NP; i++) {
		if (rcs[i] != want[i])
			fail_msg("%s: %d, want %d", paths[i], rcs[i], want[i]);
		char rel[64];
		snprintf(rel, sizeof rel, "ds/%s", paths[i]);
		if (want[i] == 0)
			assert_false(exists(rel));
	}
	assert_true(exists("ds/b"));
	assert_true(exists("outside/keep"));
	assert_true(exists("ds/link"));
}

/* The files of a batch made, and base/ds opened as a local store. */
static lv_storage *open_ds(void)
{
	make_files();
	char root[4200];
	snprintf(root, sizeof root, "%s/ds", base);
	lv_storage *st = NULL;
	lv_error err = { 0 };
	assert_int_equal(lv_storage_open(&st, root, NULL, &err), 0);
	return st;
}

static void test_delete_many(void **state)
{
	(void)state;
	lv_error err = { 0 };
	lv_storage *st = open_ds();
	int rcs[NP];
	int rc = lv_storage_delete_many(st, paths, NP, rcs, &err);
	assert_int_equal(rc, LV_EINVALID); /* the first failure that is not "missing": the link */
	assert_non_null(strstr(err.message, "link"));
	check_after(rcs);
	/* the same batch again: everything is missing now, except what never goes */
	rc = lv_storage_delete_many(st, paths, NP, rcs, &err);
	for (size_t i = 0; i < NP; i++)
		assert_int_equal(rcs[i], want[i] == LV_EINVALID ? LV_EINVALID : LV_ENOTFOUND);
	lv_storage_free(st);
}

/* One by one (lv_storage_delete) the statuses are the same. */
static void test_delete_one_by_one(void **state)
{
	(void)state;
	lv_error err = { 0 };
	lv_storage *st = open_ds();
	int rcs[NP];
	for (size_t i = 0; i < NP; i++)
		rcs[i] = lv_storage_delete(st, paths[i], &err);
	check_after(rcs);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_delete_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_one_by_one, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
