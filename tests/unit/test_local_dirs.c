/*
 * The local backend's directories.  Its directory reader (storage/local_dirent.c): every
 * entry exactly once whatever the directory's size (a small one read in the reader's own
 * 1 KiB, a larger one switching to the heap buffer mid-way), a small directory without any
 * allocation, and a failed allocation at the switch reported as -ENOMEM.  Its directory
 * cache (local_dircache.c): short names kept in the entry, long ones on the heap, both read
 * through again and again (ASan: no leak, no bad free).
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
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lancever/lancever.h>
#include "storage/local_int.h"
#include "support/testutil.h"
#include "util/util.h"

/* A directory of n files named f<i>_ followed by a filler of (i * 37) % maxfill bytes. */
static char dir[4200]; /* the last one made: removed by done() */

static int make_dir(size_t n, size_t maxfill)
{
	snprintf(dir, sizeof dir, "%s/d", tu_tmpdir());
	assert_int_equal(mkdir(dir, 0755), 0);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	for (size_t i = 0; i < n; i++) {
		char name[256];
		int k = snprintf(name, sizeof name, "f%zu_", i);
		size_t fill = (i * 37) % maxfill;
		memset(name + k, 'x', fill);
		name[k + fill] = 0;
		int fd = openat(dfd, name, O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	return dfd;
}

static void done(int dfd)
{
	close(dfd);
	char *up = strrchr(dir, '/');
	*up = 0;
	tu_rmrf(dir);
}

/* Reads every entry of dfd; each f<i>_ must come exactly once.  Returns the count. */
static size_t read_all(int dfd, size_t n)
{
	unsigned char *seen = calloc(n + 1, 1);
	assert_non_null(seen);
	lv__dents it;
	lv__dents_open(&it, dfd);
	size_t count = 0;
	const char *name;
	unsigned char type;
	int r;
	while ((r = lv__dents_next(&it, &name, &type)) > 0) {
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		size_t i = strtoull(name + 1, NULL, 10);
		assert_true(name[0] == 'f' && i < n);
		assert_int_equal(seen[i], 0);
		seen[i] = 1;
		count++;
	}
	assert_int_equal(r, 0);
	lv__dents_close(&it);
	free(seen);
	return count;
}

static void test_every_entry_once(void **state)
{
	(void)state;
	static const size_t sizes[] = { 0, 1, 5, 9, 20, 100, 3000 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int dfd = make_dir(sizes[k], 200);
		assert_int_equal(read_all(dfd, sizes[k]), sizes[k]);
		done(dfd);
	}
}

/* A small directory allocates nothing: it is read with every allocation failing. */
static void test_small_allocates_nothing(void **state)
{
	(void)state;
	int dfd = make_dir(5, 1); /* well under half of the reader's own buffer */
	lv__alloc_fail_at(1);
	size_t got = read_all(dfd, 5);
	uint64_t allocs = lv__alloc_fail_at(0);
	assert_int_equal(got, 5);
	assert_int_equal(allocs, 0);
	done(dfd);
}

/* A large one needs the heap buffer: refused with -ENOMEM, not a short listing. */
static void test_large_enomem(void **state)
{
	(void)state;
	int dfd = make_dir(500, 200);
	lv__dents it;
	lv__dents_open(&it, dfd);
	lv__alloc_fail_at(1);
	const char *name;
	unsigned char type;
	int r;
	size_t count = 0;
	while ((r = lv__dents_next(&it, &name, &type)) > 0)
		count++;
	lv__alloc_fail_at(0);
	assert_int_equal(r, -ENOMEM);
	assert_true(count > 0 && count < 500);
	lv__dents_close(&it);
	done(dfd);
}

/* Reads through cached directories with short and long names, over more directories than the
 * cache has slots, so entries are evicted and reused. */
static void test_dircache_names(void **state)
{
	(void)state;
	const char *root = tu_tmpdir();
	lv_error err = { 0 };
	lv_storage *st = NULL;
	TU_CHECK(err, lv_storage_open(&st, root, NULL, &err));
	char paths[12][200];
	for (int i = 0; i < 12; i++) {
		if (i % 2)
			snprintf(paths[i], sizeof paths[i], "d%d/f", i);
		else
			snprintf(paths[i], sizeof paths[i],
				 "a-directory-name-longer-than-an-entry-keeps-%d/sub/f", i);
		TU_CHECK(err, lv_storage_write(st, paths[i], paths[i], strlen(paths[i]), &err));
	}
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 12; i++) {
			lv_buf b = { 0 };
			TU_CHECK(err, lv_storage_read(st, paths[i], &b, &err));
			assert_int_equal(b.size, strlen(paths[i]));
			assert_memory_equal(b.ptr, paths[i], b.size);
			lv_buf_dispose(&b);
		}
	lv_storage_free(st);
	tu_rmrf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dircache_names),
		cmocka_unit_test(test_every_entry_once),
		cmocka_unit_test(test_small_allocates_nothing),
		cmocka_unit_test(test_large_enomem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
