/*
 * Unit tests: temporary files of the local backend after a crash.
 *
 * Writes go through an unnamed O_TMPFILE file, so a writer killed before it
 * names the file leaves nothing (tests/interop/test_crash.mjs kills
 * `lancever checkpoint` at every syscall with strace and checks the file set).
 * A named temporary ".tmp-lancever-*" still exists briefly for a replacing
 * write (link, then rename) and on filesystems without O_TMPFILE; one left
 * behind by a killed writer is removed by a later create in that directory
 * once it is an hour old.  Listings never show them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <lancever/lancever.h>

#include "support/testutil.h"

static lv_error err;

#define CHECK(expr) TU_CHECK(err, expr)

static void touch(const char *path, const char *text, int64_t age_s)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct timeval tv[2];
	gettimeofday(&tv[0], NULL);
	tv[0].tv_sec -= age_s;
	tv[1] = tv[0];
	assert_int_equal(utimes(path, tv), 0);
}

static bool exists(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* Number of ".tmp-lancever-" names in dir (tu_list_dir skips dot files). */
static int temps_in(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, ".tmp-lancever-", 14);
	closedir(d);
	return n;
}

static int count_cb(const lv_list_entry *e, void *payload)
{
	assert_null(strstr(e->path, ".tmp-lancever-"));
	(*(int *)payload)++;
	return 0;
}

static void test_writes_leave_no_temporaries(void **state)
{
	(void)state;
	const char *root = tu_tmpdir();
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, root, NULL, &err));
	CHECK(lv_storage_create(st, "_checkpoints/a.lance", "one", 3, &err));
	assert_int_equal(lv_storage_create(st, "_checkpoints/a.lance", "two", 3, &err), LV_EEXISTS);
	lv_buf b = tu_read(st, "_checkpoints/a.lance");
	assert_int_equal(b.size, 3);
	assert_memory_equal(b.ptr, "one", 3);
	lv_buf_dispose(&b);
	CHECK(lv_storage_write(st, "_checkpoints/a.lance", "three", 5, &err));
	b = tu_read(st, "_checkpoints/a.lance");
	assert_int_equal(b.size, 5);
	assert_memory_equal(b.ptr, "three", 5);
	lv_buf_dispose(&b);
	CHECK(lv_storage_write(st, "_checkpoints/new.lance", "", 0, &err));
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/_checkpoints", root);
	assert_int_equal(temps_in(dir), 0);
	lv_storage_free(st);
	tu_rmrf(root);
}

static void test_stale_temporaries_swept_by_create(void **state)
{
	(void)state;
	const char *root = tu_tmpdir();
	char dir[4096], p[4200];
	snprintf(dir, sizeof dir, "%s/_checkpoints", root);
	assert_int_equal(mkdir(dir, 0777), 0);
	/* Left behind by killed writers: two hours old, and a fresh one (maybe a live writer's). */
	snprintf(p, sizeof p, "%s/.tmp-lancever-00000000000000aa", dir);
	touch(p, "stale", 7200);
	snprintf(p, sizeof p, "%s/.tmp-lancever-00000000000000bb", dir);
	touch(p, "fresh", 60);
	snprintf(p, sizeof p, "%s/other.tmp", dir); /* not ours: never touched */
	touch(p, "x", 7200);
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, root, NULL, &err));
	CHECK(lv_storage_create(st, "_checkpoints/00000000000000000001.lance", "cp", 2, &err));
	assert_false(exists(dir, ".tmp-lancever-00000000000000aa"));
	assert_true(exists(dir, ".tmp-lancever-00000000000000bb"));
	assert_true(exists(dir, "other.tmp"));
	assert_true(exists(dir, "00000000000000000001.lance"));
	assert_int_equal(temps_in(dir), 1);
	/* Listings never show temporaries. */
	int n = 0;
	CHECK(lv_storage_list(st, "_checkpoints", false, count_cb, &n, &err));
	assert_int_equal(n, 2); /* other.tmp and the checkpoint */
	lv_storage_free(st);
	tu_rmrf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes_leave_no_temporaries),
		cmocka_unit_test(test_stale_temporaries_swept_by_create),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
