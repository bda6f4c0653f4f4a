/*
 * Storage layer tests.  One behaviour suite runs against every backend in
 * `backends[]` (local in a mkdtemp directory, in-memory, a pass-through fault
 * shim over memory); a remote backend is added by appending one row.  Then
 * backend-specific tests: URI dispatch, local filesystem details, mem mtime,
 * and the fault shim itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "lancever/storage.h"
#include <lancever/sys/testing.h>
#include "lancever/sys/storage.h"
#include "storage/storage_int.h"
#include "util/util.h"

/* ---- helpers ---- */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_rf(const char *dir)
{
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = lv__sprintf("%s/lv-storage-test-XXXXXX", base && *base ? base : "/tmp");
	assert_non_null(tmpl);
	assert_non_null(mkdtemp(tmpl));
	return tmpl;
}

static void put(lv_storage *st, const char *path, const char *text)
{
	lv_error e = { 0 };
	int rc = lv_storage_write(st, path, text, strlen(text), &e);
	if (rc != 0)
		fail_msg("write %s: %s", path, e.message);
}

static void expect_content(lv_storage *st, const char *path, const char *text)
{
	lv_error e = { 0 };
	lv_buf b = { 0 };
	int rc = lv_storage_read(st, path, &b, &e);
	if (rc != 0)
		fail_msg("read %s: %s", path, e.message);
	assert_int_equal(b.size, strlen(text));
	assert_memory_equal(b.ptr, text, b.size);
	lv_buf_dispose(&b);
}

/* A listing collected into "path:size" lines joined by ' '. */
typedef struct listing {
	lv__dbuf out;
	int count;
	int stop_after; /* 0 = never */
} listing;

static int collect(const lv_list_entry *e, void *payload)
{
	listing *l = payload;
	if (l->count)
		lv__dbuf_addc(&l->out, ' ');
	lv__dbuf_printf(&l->out, "%s:%llu", e->path, (unsigned long long)e->size);
	l->count++;
	if (l->stop_after && l->count == l->stop_after)
		return 7;
	return 0;
}

/* Lists and returns the malloc'ed joined text (caller frees). */
static char *list_text(lv_storage *st, const char *dir, bool recursive)
{
	listing l = { .count = 0 };
	lv__dbuf_init(&l.out, 0);
	lv_error e = { 0 };
	int rc = lv_storage_list(st, dir, recursive, collect, &l, &e);
	if (rc != 0)
		fail_msg("list %s: %s", dir, e.message);
	char *s = lv__dbuf_take_str(&l.out);
	assert_non_null(s);
	return s;
}

static void expect_list(lv_storage *st, const char *dir, bool recursive, const char *want)
{
	char *got = list_text(st, dir, recursive);
	assert_string_equal(got, want);
	free(got);
}

/* ---- the backend table ---- */

typedef struct backend {
	const char *name;
	/* Opens a fresh, empty storage; *ctx is handed back to close_fn. */
	void (*open_fn)(lv_storage **out, void **ctx);
	void (*close_fn)(lv_storage *st, void *ctx);
} backend;

static void local_open_fn(lv_storage **out, void **ctx)
{
	char *dir = make_tmpdir();
	lv_error e = { 0 };
	assert_int_equal(lv_storage_open(out, dir, NULL, &e), 0);
	*ctx = dir;
}

static void local_close_fn(lv_storage *st, void *ctx)
{
	lv_storage_free(st);
	rm_rf(ctx);
	free(ctx);
}

static void mem_open_fn(lv_storage **out, void **ctx)
{
	lv_error e = { 0 };
	assert_int_equal(lv_storage_mem_new(out, &e), 0);
	*ctx = NULL;
}

static void fault_open_fn(lv_storage **out, void **ctx)
{
	lv_error e = { 0 };
	lv_storage *inner = NULL;
	assert_int_equal(lv_storage_mem_new(&inner, &e), 0);
	lv_fault_spec spec = { .ops = LV_FAULT_ALL, .nth = 0, .kind = LV_FAULT_FAIL };
	assert_int_equal(lv_storage_fault_wrap(out, inner, &spec, &e), 0);
	*ctx = NULL;
}

static void plain_close_fn(lv_storage *st, void *ctx)
{
	(void)ctx;
	lv_storage_free(st);
}

/*
 * S3 and Azure: when LV_TEST_S3_URI / LV_TEST_AZ_URI is set (test_s3_storage.mjs
 * and test_az_storage.mjs in tests/interop start a local server and set it), every
 * test gets a fresh prefix below it.
 */
static int s3_del_cb(const lv_list_entry *e, void *p)
{
	lv_error err = { 0 };
	assert_int_equal(lv_storage_delete(p, e->path, &err), 0);
	return 0;
}

/* The environment variable naming the object-store URI of a remote backend row. */
static const char *remote_var(const char *name)
{
	return !strcmp(name, "s3") ? "LV_TEST_S3_URI" : !strcmp(name, "az") ? "LV_TEST_AZ_URI" : NULL;
}

static const struct backend *cur_backend;

static void s3_open_fn(lv_storage **out, void **ctx)
{
	static int n;
	char uri[512];
	snprintf(uri, sizeof uri, "%s/t%d-%d", getenv(remote_var(cur_backend->name)), (int)getpid(), n++);
	lv_error e = { 0 };
	if (lv_storage_open(out, uri, NULL, &e) != 0)
		fail_msg("open %s: %s", uri, e.message);
	*ctx = NULL;
}

static void s3_close_fn(lv_storage *st, void *ctx)
{
	(void)ctx;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_list(st, "", true, s3_del_cb, st, &e), 0);
	lv_storage_free(st);
}

static const backend backends[] = {
	{ "local", local_open_fn, local_close_fn },
	{ "mem", mem_open_fn, plain_close_fn },
	{ "fault-over-mem", fault_open_fn, plain_close_fn },
	{ "s3", s3_open_fn, s3_close_fn }, /* only with LV_TEST_S3_URI */
	{ "az", s3_open_fn, s3_close_fn }, /* only with LV_TEST_AZ_URI (tests/interop/test_az_storage.mjs) */
};

typedef struct fixture {
	lv_storage *st;
	void *ctx;
} fixture;

static int suite_setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	assert_non_null(f);
	cur_backend->open_fn(&f->st, &f->ctx);
	*state = f;
	return 0;
}

static int suite_teardown(void **state)
{
	fixture *f = *state;
	cur_backend->close_fn(f->st, f->ctx);
	free(f);
	return 0;
}

#define ST (((fixture *)*state)->st)

/* ---- the shared suite ---- */

static void t_write_read(void **state)
{
	lv_storage *st = ST;
	put(st, "a/b/c.txt", "hello");
	expect_content(st, "a/b/c.txt", "hello");
	put(st, "a/b/c.txt", "replaced, longer");
	expect_content(st, "a/b/c.txt", "replaced, longer");
	put(st, "empty", "");
	expect_content(st, "empty", "");

	/* binary content with NULs survives */
	uint8_t bin[300];
	for (size_t i = 0; i < sizeof bin; i++)
		bin[i] = (uint8_t)(i * 7);
	lv_error e = { 0 };
	assert_int_equal(lv_storage_write(st, "bin", bin, sizeof bin, &e), 0);
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(st, "bin", &b, &e), 0);
	assert_int_equal(b.size, sizeof bin);
	assert_memory_equal(b.ptr, bin, sizeof bin);
	lv_buf_dispose(&b);
}

static void t_read_missing(void **state)
{
	lv_error e = { 0 };
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(ST, "_versions/1.manifest", &b, &e), LV_ENOTFOUND);
	assert_int_equal(e.code, LV_ENOTFOUND);
	assert_non_null(strstr(e.message, "_versions/1.manifest"));
	assert_null(b.ptr);
	assert_int_equal(lv_storage_read_range(ST, "nope", 0, 1, &b, &e), LV_ENOTFOUND);
	/* a "directory" is not an object */
	put(ST, "dir/x", "1");
	assert_int_equal(lv_storage_read(ST, "dir", &b, &e), LV_ENOTFOUND);
}

static void range_is(lv_storage *st, uint64_t off, uint64_t len, const char *want)
{
	lv_error e = { 0 };
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read_range(st, "r", off, len, &b, &e), 0);
	assert_int_equal(b.size, strlen(want));
	if (b.size)
		assert_memory_equal(b.ptr, want, b.size);
	lv_buf_dispose(&b);
}

static void t_read_range(void **state)
{
	put(ST, "r", "0123456789");
	range_is(ST, 0, 10, "0123456789");
	range_is(ST, 2, 3, "234");
	range_is(ST, 8, 10, "89");
	range_is(ST, 10, 5, "");
	range_is(ST, 100, 1, "");
	range_is(ST, 3, 0, "");
	range_is(ST, 0, UINT64_MAX, "0123456789");
	range_is(ST, 9, UINT64_MAX, "9");
	range_is(ST, UINT64_MAX, UINT64_MAX, "");
}

static void t_head(void **state)
{
	lv_error e = { 0 };
	put(ST, "h/x", "12345");
	uint64_t size = 0;
	int64_t mtime = 0;
	assert_int_equal(lv_storage_head(ST, "h/x", &size, &mtime, &e), 0);
	assert_int_equal(size, 5);
	int64_t now = lv__now_ms();
	assert_true(mtime > now - 120000 && mtime < now + 120000);
	assert_int_equal(lv_storage_head(ST, "h/x", NULL, NULL, &e), 0);
	assert_int_equal(lv_storage_head(ST, "h/missing", &size, &mtime, &e), LV_ENOTFOUND);
	assert_non_null(strstr(e.message, "h/missing"));
	assert_int_equal(lv_storage_head(ST, "h", &size, &mtime, &e), LV_ENOTFOUND);
}

static void t_create(void **state)
{
	lv_error e = { 0 };
	assert_int_equal(lv_storage_create(ST, "c/obj", "first", 5, &e), 0);
	expect_content(ST, "c/obj", "first");
	assert_int_equal(lv_storage_create(ST, "c/obj", "second!", 7, &e), LV_EEXISTS);
	assert_int_equal(e.code, LV_EEXISTS);
	assert_non_null(strstr(e.message, "c/obj"));
	expect_content(ST, "c/obj", "first");
	/* create works on an empty payload and in a deep new directory */
	assert_int_equal(lv_storage_create(ST, "c/d/e/f/empty", NULL, 0, &e), 0);
	expect_content(ST, "c/d/e/f/empty", "");
	/* no temporary files remain visible */
	expect_list(ST, "c", true, "c/d/e/f/empty:0 c/obj:5");
}

static void t_delete(void **state)
{
	lv_error e = { 0 };
	put(ST, "del/x", "x");
	put(ST, "del/y", "y");
	assert_int_equal(lv_storage_delete(ST, "del/x", &e), 0);
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(ST, "del/x", &b, &e), LV_ENOTFOUND);
	assert_int_equal(lv_storage_delete(ST, "del/x", &e), LV_ENOTFOUND);
	assert_non_null(strstr(e.message, "del/x"));
	assert_int_equal(lv_storage_delete(ST, "never/was", &e), LV_ENOTFOUND);
	expect_content(ST, "del/y", "y");
	expect_list(ST, "del", false, "del/y:1");
}

/* Batched deletes: existing and missing paths together; nothing else is touched. */
static void t_delete_many(void **state)
{
	put(ST, "dm/a", "a");
	put(ST, "dm/b c", "b");
	put(ST, "dm/sub/d", "d");
	put(ST, "dm/keep", "k");
	const char *paths[] = { "dm/a", "dm/b c", "dm/sub/d", "dm/never" };
	int rcs[4] = { 1, 1, 1, 1 };
	lv_error e = { 0 };
	assert_int_equal(lv_storage_delete_many(ST, paths, 4, rcs, &e), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rcs[i], 0);
	assert_true(rcs[3] == 0 || rcs[3] == LV_ENOTFOUND);
	expect_list(ST, "dm", true, "dm/keep:1");
	const char *bad[] = { "dm/keep", "../x" };
	assert_int_equal(lv_storage_delete_many(ST, bad, 2, NULL, &e), LV_EINVALID);
	expect_list(ST, "dm", true, "dm/keep:1"); /* refused before anything was deleted */
	assert_int_equal(lv_storage_delete_many(ST, NULL, 0, NULL, &e), 0);
}

static void t_list(void **state)
{
	lv_storage *st = ST;
	put(st, "d/b", "bb");
	put(st, "d/a", "a");
	put(st, "d/c/x", "xxx");
	put(st, "d/c/y/z", "zzzz");
	put(st, "e", "e");
	put(st, "d.txt", "dt");
	put(st, "dz", "1");
	expect_list(st, "d", false, "d/a:1 d/b:2");
	expect_list(st, "d", true, "d/a:1 d/b:2 d/c/x:3 d/c/y/z:4");
	expect_list(st, "d/c", false, "d/c/x:3");
	expect_list(st, "", false, "d.txt:2 dz:1 e:1");
	expect_list(st, "", true, "d.txt:2 d/a:1 d/b:2 d/c/x:3 d/c/y/z:4 dz:1 e:1");
	expect_list(st, "missing", false, "");
	expect_list(st, "missing/deeper", true, "");
	expect_list(st, "e", true, ""); /* a file is not a directory */

	/* the callback's non-zero return stops the listing and is returned */
	listing l = { .stop_after = 2 };
	lv__dbuf_init(&l.out, 0);
	lv_error e = { 0 };
	assert_int_equal(lv_storage_list(st, "d", true, collect, &l, &e), 7);
	assert_int_equal(l.count, 2);
	lv__dbuf_dispose(&l.out);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* lv_storage_list_names collects into a NULL-terminated, sorted array of paths. */
typedef struct name_set {
	char *v[32];
	int n;
} name_set;

static int collect_name(const lv_list_entry *e, void *payload)
{
	name_set *nm = payload;
	assert_true(nm->n < 31);
	nm->v[nm->n++] = strdup(e->path);
	return 0;
}

static void expect_names(lv_storage *st, const char *dir, const char *want)
{
	name_set nm = { .n = 0 };
	lv_error e = { 0 };
	int rc = lv_storage_list_names(st, dir, collect_name, &nm, &e);
	if (rc != 0)
		fail_msg("list_names %s: %s", dir, e.message);
	qsort(nm.v, (size_t)nm.n, sizeof nm.v[0], cmp_cstr);
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	for (int i = 0; i < nm.n; i++) {
		if (i)
			lv__dbuf_addc(&b, ' ');
		lv__dbuf_adds(&b, nm.v[i]);
		free(nm.v[i]);
	}
	char *got = lv__dbuf_take_str(&b);
	assert_string_equal(got, want);
	free(got);
}

/* Names-only listing: the same files as a flat listing (order aside), on every backend. */
static void t_list_names(void **state)
{
	lv_storage *st = ST;
	put(st, "n/b", "bb");
	put(st, "n/a", "a");
	put(st, "n/c/x", "xxx");
	put(st, "n.txt", "dt");
	expect_names(st, "n", "n/a n/b");
	expect_names(st, "n/c", "n/c/x");
	expect_names(st, "missing", "");
	expect_names(st, "n.txt", ""); /* a file is not a directory */
	lv_error e = { 0 };
	assert_int_equal(lv_storage_list_names(st, "../x", collect_name, NULL, &e), LV_EINVALID);
	/* the callback's non-zero return stops the listing and is returned */
	listing l = { .stop_after = 1 };
	lv__dbuf_init(&l.out, 0);
	assert_int_equal(lv_storage_list_names(st, "n", collect, &l, &e), 7);
	assert_int_equal(l.count, 1);
	lv__dbuf_dispose(&l.out);
}

typedef struct mtime_check {
	int n;
	int64_t lo, hi;
} mtime_check;

static int check_mtime(const lv_list_entry *e, void *payload)
{
	mtime_check *m = payload;
	assert_true(e->mtime_ms >= m->lo && e->mtime_ms <= m->hi);
	m->n++;
	return 0;
}

static void t_list_mtime(void **state)
{
	put(ST, "m/1", "1");
	int64_t now = lv__now_ms();
	mtime_check m = { 0, now - 120000, now + 120000 };
	lv_error e = { 0 };
	assert_int_equal(lv_storage_list(ST, "m", false, check_mtime, &m, &e), 0);
	assert_int_equal(m.n, 1);
}

static void t_sub(void **state)
{
	lv_storage *st = ST;
	lv_error e = { 0 };
	lv_storage *sub = NULL, *subsub = NULL;
	assert_int_equal(lv_storage_sub(&sub, st, "tree/feat/x", &e), 0);
	const char *pd = lv_storage_describe(st), *sd = lv_storage_describe(sub);
	assert_int_equal(strncmp(sd, pd, strlen(pd)), 0);
	assert_non_null(strstr(sd, "tree/feat/x"));

	put(sub, "_versions/1.manifest", "m1");
	expect_content(st, "tree/feat/x/_versions/1.manifest", "m1");
	put(st, "tree/feat/x/_versions/2.manifest", "m2");
	put(st, "tree/other", "o");
	expect_list(sub, "", true, "_versions/1.manifest:2 _versions/2.manifest:2");
	expect_list(sub, "_versions", false, "_versions/1.manifest:2 _versions/2.manifest:2");
	expect_list(sub, "", false, "");

	assert_int_equal(lv_storage_sub(&subsub, sub, "_versions", &e), 0);
	expect_content(subsub, "2.manifest", "m2");
	assert_int_equal(lv_storage_create(subsub, "2.manifest", "x", 1, &e), LV_EEXISTS);
	assert_int_equal(lv_storage_delete(subsub, "1.manifest", &e), 0);
	expect_list(st, "tree", true, "tree/feat/x/_versions/2.manifest:2 tree/other:1");
	lv_storage_free(subsub);

	/* a sub-handle cannot climb out */
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(sub, "../other", &b, &e), LV_EINVALID);
	assert_int_equal(lv_storage_sub(&subsub, sub, "..", &e), LV_EINVALID);
	assert_null(subsub);
	assert_int_equal(lv_storage_sub(&subsub, sub, "", &e), LV_EINVALID);
	lv_storage_free(sub);
	/* the parent still works after the child is gone */
	expect_content(st, "tree/other", "o");
}

static int count_entry(const lv_list_entry *e, void *payload)
{
	(void)e;
	(*(int *)payload)++;
	return 0;
}

/* lv_storage_interrupt(): every operation, on the handle and its sub-handles, fails before
 * the backend sees it (nothing written or deleted) until the interruption is lifted. */
static void t_interrupt(void **state)
{
	lv_storage *st = ST;
	lv_error e = { 0 };
	lv_storage *sub = NULL;
	put(st, "int/a", "aa");
	assert_int_equal(lv_storage_sub(&sub, st, "int", &e), 0);
	lv_storage_stats before = LV_STORAGE_STATS_INIT, after = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(st, &before);
	lv_storage_interrupt(st, true);
	lv_buf b = { 0 };
	int n = 0;
	const char *paths[] = { "a" };
	for (int round = 0; round < 2; round++) {
		lv_storage *h = round ? sub : st;
		const char *a = round ? "a" : "int/a", *c = round ? "c" : "int/c";
		assert_int_equal(lv_storage_read(h, a, &b, &e), LV_EIO);
		assert_non_null(strstr(e.message, "interrupted"));
		assert_int_equal(lv_storage_read_range(h, a, 0, 1, &b, &e), LV_EIO);
		assert_int_equal(lv_storage_head(h, a, NULL, NULL, &e), LV_EIO);
		assert_int_equal(lv_storage_list(h, "", true, count_entry, &n, &e), LV_EIO);
		assert_int_equal(lv_storage_list_names(h, "", count_entry, &n, &e), LV_EIO);
		assert_int_equal(lv_storage_write(h, c, "x", 1, &e), LV_EIO);
		assert_int_equal(lv_storage_create(h, c, "x", 1, &e), LV_EIO);
		assert_int_equal(lv_storage_delete(h, a, &e), LV_EIO);
		assert_int_equal(lv_storage_delete_many(h, round ? paths : (const char *[]){ "int/a" },
							1, NULL, &e), LV_EIO);
	}
	assert_int_equal(n, 0);
	lv_storage_get_stats(st, &after);
	assert_int_equal(after.requests, before.requests); /* no request reached the backend */
	lv_storage_interrupt(st, false);
	expect_content(sub, "a", "aa");
	expect_list(st, "int", true, "int/a:2");
	lv_storage_interrupt(NULL, true); /* ignored */
	lv_storage_free(sub);
}

static void t_stats(void **state)
{
	lv_storage *st = ST;
	lv_error e = { 0 };
	lv_storage_stats s = LV_STORAGE_STATS_INIT;
	lv_storage_reset_stats(st);
	lv_storage_get_stats(st, &s);
	assert_int_equal(s.requests, 0);
	put(st, "s/a", "12345");
	expect_content(st, "s/a", "12345");
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read_range(st, "s/a", 1, 2, &b, &e), 0);
	lv_buf_dispose(&b);
	free(list_text(st, "s", false));
	lv_storage_get_stats(st, &s);
	assert_int_equal(s.requests, 4);
	assert_int_equal(s.bytes_read, 7);
	assert_int_equal(s.bytes_written, 5);

	/* rejected paths never reach the backend and are not counted */
	assert_int_equal(lv_storage_read(st, "../x", &b, &e), LV_EINVALID);
	lv_storage_get_stats(st, &s);
	assert_int_equal(s.requests, 4);

	/* sub-handles count their own requests and add them to the parent's */
	lv_storage *sub = NULL;
	assert_int_equal(lv_storage_sub(&sub, st, "s", &e), 0);
	expect_content(sub, "a", "12345");
	lv_storage_stats ss = LV_STORAGE_STATS_INIT;
	lv_storage_get_stats(sub, &ss);
	assert_int_equal(ss.requests, 1);
	assert_int_equal(ss.bytes_read, 5);
	lv_storage_get_stats(st, &s);
	assert_int_equal(s.requests, 5);
	assert_int_equal(s.bytes_read, 12);
	lv_storage_free(sub);

	lv_storage_reset_stats(st);
	lv_storage_get_stats(st, &s);
	assert_int_equal(s.requests + s.bytes_read + s.bytes_written, 0);
}

static void t_path_validation(void **state)
{
	lv_storage *st = ST;
	static const char *bad[] = { "../x", "/abs", "a//b", "a/./b", "a/..", "", ".", "..",
				     "a/", "/", "x/../../y", "a\\b", "..\\x", "a\nb", "a\tb" };
	lv_error e = { 0 };
	lv_buf b = { 0 };
	uint64_t size;
	int64_t mtime;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p = bad[i];
		assert_int_equal(lv_storage_read(st, p, &b, &e), LV_EINVALID);
		assert_int_equal(e.code, LV_EINVALID);
		assert_int_equal(lv_storage_read_range(st, p, 0, 1, &b, &e), LV_EINVALID);
		assert_int_equal(lv_storage_head(st, p, &size, &mtime, &e), LV_EINVALID);
		assert_int_equal(lv_storage_write(st, p, "x", 1, &e), LV_EINVALID);
		assert_int_equal(lv_storage_create(st, p, "x", 1, &e), LV_EINVALID);
		assert_int_equal(lv_storage_delete(st, p, &e), LV_EINVALID);
		if (p[0]) /* "" is the root, valid for listings only */
			assert_int_equal(lv_storage_list(st, p, true, collect, NULL, &e),
					 LV_EINVALID);
	}
	assert_null(b.ptr);
	/* NULL arguments */
	assert_int_equal(lv_storage_read(st, NULL, &b, &e), LV_EINVALID);
	assert_int_equal(lv_storage_write(st, "x", NULL, 3, &e), LV_EINVALID);
	/* length cap */
	char *lng = malloc(5001);
	assert_non_null(lng);
	memset(lng, 'a', 5000);
	lng[5000] = 0;
	for (int i = 100; i < 5000; i += 100)
		lng[i] = '/';
	assert_int_equal(lv_storage_write(st, lng, "x", 1, &e), LV_EINVALID);
	free(lng);
	/* names with dots that are not "." or ".." are fine */
	put(st, "..a/.b/c..", "ok");
	expect_content(st, "..a/.b/c..", "ok");
	expect_list(st, "", true, "..a/.b/c..:2");
	/* nothing was created by the rejected calls */
}

/* 8 threads race to create the same object. */
#define RACERS 8

typedef struct race {
	lv_storage *st;
	pthread_barrier_t barrier;
	char path[64];
	int rc[RACERS];
	char payload[RACERS][64];
} race;

typedef struct racer {
	race *r;
	int id;
} racer;

static void *race_fn(void *p)
{
	racer *me = p;
	race *r = me->r;
	lv_error e = { 0 };
	const char *data = r->payload[me->id];
	pthread_barrier_wait(&r->barrier);
	r->rc[me->id] = lv_storage_create(r->st, r->path, data, strlen(data), &e);
	return NULL;
}

static void t_concurrent_create(void **state)
{
	race *r = calloc(1, sizeof *r);
	assert_non_null(r);
	r->st = ST;
	for (int round = 0; round < 10; round++) {
		snprintf(r->path, sizeof r->path, "race/%d/obj", round);
		pthread_barrier_init(&r->barrier, NULL, RACERS);
		pthread_t th[RACERS];
		racer rs[RACERS];
		for (int i = 0; i < RACERS; i++) {
			/* different lengths, so a mix of two writers could not go unnoticed */
			snprintf(r->payload[i], sizeof r->payload[i], "writer-%d-%.*s", i, i * 5,
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
			rs[i] = (racer){ r, i };
			assert_int_equal(pthread_create(&th[i], NULL, race_fn, &rs[i]), 0);
		}
		for (int i = 0; i < RACERS; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&r->barrier);
		int winner = -1, wins = 0;
		for (int i = 0; i < RACERS; i++) {
			if (r->rc[i] == 0) {
				winner = i;
				wins++;
			} else {
				assert_int_equal(r->rc[i], LV_EEXISTS);
			}
		}
		assert_int_equal(wins, 1);
		expect_content(ST, r->path, r->payload[winner]);
	}
	char *all = list_text(ST, "race", true);
	assert_int_equal(strstr(all, ".tmp-lancever-") == NULL, 1);
	free(all);
	free(r);
}

/* Concurrent writers and readers of one path: every read sees one complete version. */
typedef struct wr_race {
	lv_storage *st;
	int failures;
	pthread_mutex_t mu;
} wr_race;

static void wr_item(size_t i, void *arg)
{
	wr_race *w = arg;
	lv_error e = { 0 };
	char buf[128];
	if (i % 2 == 0) {
		int n = snprintf(buf, sizeof buf, "version-%zu-%.*s", i, (int)(i % 50),
				 "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
		if (lv_storage_write(w->st, "wr/obj", buf, (size_t)n, &e) != 0)
			goto bad;
		return;
	}
	lv_buf b = { 0 };
	if (lv_storage_read(w->st, "wr/obj", &b, &e) != 0)
		goto bad;
	/* a complete version parses back to the same length it encodes */
	size_t v;
	int ok = sscanf((const char *)b.ptr, "version-%zu-", &v) == 1 &&
		 b.size == (size_t)snprintf(buf, sizeof buf, "version-%zu-%.*s", v, (int)(v % 50),
					    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
	lv_buf_dispose(&b);
	if (ok)
		return;
bad:
	pthread_mutex_lock(&w->mu);
	w->failures++;
	pthread_mutex_unlock(&w->mu);
}

static void t_concurrent_write_read(void **state)
{
	put(ST, "wr/obj", "version-0-");
	wr_race w = { ST, 0, PTHREAD_MUTEX_INITIALIZER };
	assert_int_equal(lv__parallel_for(400, 8, wr_item, &w), 0);
	assert_int_equal(w.failures, 0);
	/* exactly one object, no leftover temporary files */
	char *l = list_text(ST, "wr", false);
	assert_int_equal(strncmp(l, "wr/obj:", 7), 0);
	assert_null(strchr(l, ' '));
	free(l);
}

#define SUITE(f) cmocka_unit_test_setup_teardown(f, suite_setup, suite_teardown)

static int run_suite(const backend *b)
{
	struct CMUnitTest tests[] = {
		SUITE(t_write_read),	 SUITE(t_read_missing),	     SUITE(t_read_range),
		SUITE(t_head),		 SUITE(t_create),	     SUITE(t_delete),
		SUITE(t_delete_many),
		SUITE(t_list),		 SUITE(t_list_names),	     SUITE(t_list_mtime),
		SUITE(t_sub),		 SUITE(t_interrupt),
		SUITE(t_stats),		 SUITE(t_path_validation),   SUITE(t_concurrent_create),
		SUITE(t_concurrent_write_read),
	};
	enum { NT = sizeof tests / sizeof tests[0] };
	/* "backend/test" names, so a failure says which backend broke */
	static char names[NT][96];
	for (size_t i = 0; i < NT; i++) {
		snprintf(names[i], sizeof names[i], "%s/%s", b->name, tests[i].name);
		tests[i].name = names[i];
	}
	cur_backend = b;
	char group[64];
	snprintf(group, sizeof group, "storage suite: %s", b->name);
	return _cmocka_run_group_tests(group, tests, NT, NULL, NULL);
}

/* ---- URI dispatch and describe ---- */

static void t_open_uris(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_storage *st = NULL;
	char *dir = make_tmpdir();

	assert_int_equal(lv_storage_open(&st, dir, NULL, &e), 0);
	char *want = lv__sprintf("file://%s", dir);
	assert_string_equal(lv_storage_describe(st), want);
	put(st, "x", "1");
	lv_storage_free(st);

	char *uri = lv__sprintf("file://%s", dir);
	lv_storage_options *opts = NULL;
	assert_int_equal(lv_storage_options_new(&opts, &e), 0);
	assert_int_equal(lv_storage_open(&st, uri, opts, &e), 0); /* an empty bag */
	lv_storage_options_free(opts);
	assert_string_equal(lv_storage_describe(st), want);
	expect_content(st, "x", "1");
	lv_storage_free(st);
	free(uri);

	/* percent escapes in file:// URIs and localhost */
	char *sp = lv__sprintf("%s/with space", dir);
	assert_int_equal(mkdir(sp, 0777), 0);
	uri = lv__sprintf("file://localhost%s/with%%20space", dir);
	assert_int_equal(lv_storage_open(&st, uri, NULL, &e), 0);
	char *want2 = lv__sprintf("file://%s", sp);
	assert_string_equal(lv_storage_describe(st), want2);
	lv_storage_free(st);
	free(uri);
	free(want2);
	free(sp);

	/* a relative plain path becomes absolute (cwd-joined) */
	assert_int_equal(lv_storage_open(&st, "some/relative/nonexistent/../ds", NULL, &e), 0);
	const char *d = lv_storage_describe(st);
	assert_int_equal(strncmp(d, "file:///", 8), 0);
	assert_non_null(strstr(d, "/some/relative/ds"));
	lv_storage_free(st);

	/* a path that does not exist opens; it lists empty and reads say not found */
	char *missing = lv__sprintf("%s/not/yet", dir);
	assert_int_equal(lv_storage_open(&st, missing, NULL, &e), 0);
	expect_list(st, "", true, "");
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(st, "_versions/1.manifest", &b, &e), LV_ENOTFOUND);
	assert_non_null(strstr(e.message, "read _versions/1.manifest"));
	/* and the first write creates it */
	put(st, "_versions/1.manifest", "m");
	expect_list(st, "", true, "_versions/1.manifest:1");
	lv_storage_free(st);
	free(missing);

	/* a regular file is not a storage root */
	char *file = lv__sprintf("%s/x", dir);
	assert_int_equal(lv_storage_open(&st, file, NULL, &e), LV_EINVALID);
	assert_null(st);
	free(file);

	assert_int_equal(lv_storage_open(&st, "mem://scratch", NULL, &e), 0);
	assert_string_equal(lv_storage_describe(st), "mem://scratch");
	expect_list(st, "", true, "");
	lv_storage_free(st);
	assert_int_equal(lv_storage_mem_new(&st, &e), 0);
	assert_string_equal(lv_storage_describe(st), "mem://");
	lv_storage *sub = NULL;
	assert_int_equal(lv_storage_sub(&sub, st, "tree/b", &e), 0);
	assert_string_equal(lv_storage_describe(sub), "mem://tree/b");
	lv_storage_free(sub);
	lv_storage_free(st);

	/* credentials in an S3 URI are refused and never reach the message */
	st = (lv_storage *)1;
	assert_int_equal(lv_storage_open(&st, "s3://AKIASECRETKEY:hunter2@bucket/prefix", NULL, &e),
			 LV_EINVALID);
	assert_null(st);
	assert_null(strstr(e.message, "hunter2"));
	assert_null(strstr(e.message, "AKIASECRETKEY"));
	assert_non_null(strstr(e.message, "s3://"));
	/* a bucket name with a space is an invalid bucket name, and says so (issue 14) */
	assert_int_equal(lv_storage_open(&st, "s3://bu cket/x", NULL, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "invalid bucket name 'bu cket'"));
	assert_int_equal(lv_storage_open(&st, "gs://user:pw@b/p", NULL, &e), LV_EUNSUPPORTED);
	assert_null(strstr(e.message, "pw@"));
	assert_non_null(strstr(e.message, "gs://"));
	assert_int_equal(lv_storage_open(&st, "file://otherhost/x", NULL, &e), LV_EUNSUPPORTED);
	assert_int_equal(lv_storage_open(&st, "", NULL, &e), LV_EINVALID);
	assert_int_equal(lv_storage_open(&st, NULL, NULL, &e), LV_EINVALID);

	lv_storage_free(NULL);
	rm_rf(dir);
	free(dir);
	free(want);
}

/* ---- local backend details ---- */

static void t_local_fs(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_storage *st = NULL;
	char *dir = make_tmpdir();
	char *outside = make_tmpdir();
	assert_int_equal(lv_storage_open(&st, dir, NULL, &e), 0);

	put(st, "a/real", "r");
	/* stray temp files (a crashed writer) and symlinks are not listed */
	char *p = lv__sprintf("%s/a/.tmp-lancever-0123456789abcdef", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	free(p);
	char *target = lv__sprintf("%s/secret", outside);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("outside", f);
	fclose(f);
	p = lv__sprintf("%s/a/link-to-file", dir);
	assert_int_equal(symlink(target, p), 0);
	free(p);
	p = lv__sprintf("%s/a/link-to-dir", dir);
	assert_int_equal(symlink(outside, p), 0);
	free(p);
	p = lv__sprintf("%s/a/loop", dir);
	assert_int_equal(symlink(dir, p), 0);
	free(p);
	expect_list(st, "a", false, "a/real:1");
	expect_list(st, "", true, "a/real:1");
	expect_names(st, "a", "a/real");

	/* writes leave no temp files and keep the directory tree */
	put(st, "b/c/d", "1");
	assert_int_equal(lv_storage_delete(st, "b/c/d", &e), 0);
	struct stat sb;
	p = lv__sprintf("%s/b/c", dir);
	assert_int_equal(stat(p, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	free(p);
	/* deleting a directory is "not found" (it is not an object) */
	assert_int_equal(lv_storage_delete(st, "b/c", &e), LV_ENOTFOUND);

	/* a write through a path whose parent is a file fails cleanly */
	assert_int_equal(lv_storage_write(st, "a/real/child", "x", 1, &e), LV_EIO);
	assert_non_null(strstr(e.message, "a/real/child"));

	/* set_mtime is for the in-memory backend only */
	assert_int_equal(lv_storage_mem_set_mtime(st, "a/real", 5, &e), LV_EINVALID);

	lv_storage_free(st);
	rm_rf(dir);
	rm_rf(outside);
	free(dir);
	free(outside);
	free(target);
}

/* ---- in-memory backend details ---- */

static void t_mem_mtime(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_storage *st = NULL, *sub = NULL, *shim = NULL;
	assert_int_equal(lv_storage_mem_new(&st, &e), 0);
	put(st, "tree/b/old", "1");
	assert_int_equal(lv_storage_mem_set_mtime(st, "tree/b/old", 1234, &e), 0);
	int64_t mt = 0;
	assert_int_equal(lv_storage_head(st, "tree/b/old", NULL, &mt, &e), 0);
	assert_int_equal(mt, 1234);
	mtime_check m = { 0, 1234, 1234 };
	assert_int_equal(lv_storage_list(st, "tree/b", false, check_mtime, &m, &e), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(lv_storage_mem_set_mtime(st, "tree/b/none", 1, &e), LV_ENOTFOUND);
	assert_int_equal(lv_storage_mem_set_mtime(st, "../x", 1, &e), LV_EINVALID);

	/* through a sub-handle, and through a fault shim */
	assert_int_equal(lv_storage_sub(&sub, st, "tree/b", &e), 0);
	assert_int_equal(lv_storage_mem_set_mtime(sub, "old", 99, &e), 0);
	assert_int_equal(lv_storage_head(st, "tree/b/old", NULL, &mt, &e), 0);
	assert_int_equal(mt, 99);
	lv_storage_free(sub);
	assert_int_equal(lv_storage_fault_wrap(&shim, st, NULL, &e), 0);
	assert_int_equal(lv_storage_mem_set_mtime(shim, "tree/b/old", 77, &e), 0);
	assert_int_equal(lv_storage_head(shim, "tree/b/old", NULL, &mt, &e), 0);
	assert_int_equal(mt, 77);
	lv_storage_free(shim); /* frees st too */

	assert_int_equal(lv_storage_mem_set_mtime(NULL, "x", 1, &e), LV_EINVALID);
}

/* ---- custom backends through lv_storage_new ---- */

static int custom_closed;
static int c_list(void *impl, const char *dir, bool rec, lv_list_cb cb, void *pl, lv_error *err)
{
	lv_list_entry en = { "sub/obj", 3, 42 };
	return cb(&en, pl);
}
static int c_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	return lv__err(err, LV_EIO, "read %s: custom", path);
}
static int c_range(void *impl, const char *path, uint64_t o, uint64_t l, lv_buf *out,
		   lv_error *err)
{
	return c_read(impl, path, out, err);
}
static int c_head(void *impl, const char *path, uint64_t *s, int64_t *m, lv_error *err)
{
	*s = 3;
	*m = 42;
	return 0;
}
static int c_write(void *impl, const char *path, const void *d, size_t n, lv_error *err)
{
	return 0;
}
static int c_del(void *impl, const char *path, lv_error *err) { return 0; }
static void c_close(void *impl) { custom_closed++; }

static void t_custom_backend(void **state)
{
	(void)state;
	lv_storage_ops ops = { LV_STORAGE_OPS_VERSION, c_list, c_read, c_range, c_head,
			       c_write, c_write, c_del, c_close, NULL, NULL, 0, NULL };
	lv_error e = { 0 };
	lv_storage *st = NULL, *sub = NULL;
	assert_int_equal(lv_storage_new(&st, &ops, NULL, "custom://x", &e), 0);
	assert_string_equal(lv_storage_describe(st), "custom://x");
	assert_int_equal(lv_storage_sub(&sub, st, "sub", &e), 0);
	expect_list(sub, "", true, "obj:3");
	lv_storage_free(sub);
	assert_int_equal(custom_closed, 0);
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(st, "x", &b, &e), LV_EIO);
	lv_storage_free(st);
	assert_int_equal(custom_closed, 1);

	ops.version = LV_STORAGE_OPS_VERSION + 1;
	assert_int_equal(lv_storage_new(&st, &ops, NULL, "x", &e), LV_EINVALID);
	ops.version = 0;
	assert_int_equal(lv_storage_new(&st, &ops, NULL, "x", &e), LV_EINVALID);
	ops.version = LV_STORAGE_OPS_VERSION;
	ops.head = NULL;
	assert_int_equal(lv_storage_new(&st, &ops, NULL, "x", &e), LV_EINVALID);
	assert_int_equal(custom_closed, 1);
}

/* ---- properties: remote or not, credential source; ops and options versions ---- */

static void c_creds(void *impl, char *buf, size_t cap)
{
	(void)impl;
	snprintf(buf, cap, "test source");
}

/* The version-1 layout of lv_storage_ops: a backend built against the old header. */
typedef struct ops_v1 {
	int version;
	void *fns[10];
} ops_v1;

static void t_properties(void **state)
{
	(void)state;
	lv_error e = { 0 };
	char buf[64];
	lv_storage *st = NULL, *shim = NULL, *sub = NULL;
	assert_int_equal(lv_storage_mem_new(&st, &e), 0);
	assert_false(lv_storage_is_remote(st));
	assert_int_equal(lv_storage_credential_source(st, buf, sizeof buf), 0);
	assert_string_equal(buf, "none");
	lv_storage_free(st);
	assert_false(lv_storage_is_remote(NULL));
	assert_int_equal(lv_storage_credential_source(NULL, buf, sizeof buf), LV_EINVALID);

	/* a remote custom backend, and a fault shim over it, and a sub-handle of the shim */
	lv_storage_ops ops = { LV_STORAGE_OPS_VERSION, c_list, c_read, c_range, c_head, c_write,
			       c_write, c_del, NULL, NULL, NULL, LV_STORAGE_FLAG_REMOTE, c_creds };
	assert_int_equal(lv_storage_new(&st, &ops, NULL, "custom://r", &e), 0);
	assert_true(lv_storage_is_remote(st));
	assert_int_equal(lv_storage_credential_source(st, buf, 5), 0);
	assert_string_equal(buf, "test"); /* cut to fit */
	assert_int_equal(lv_storage_fault_wrap(&shim, st, NULL, &e), 0);
	assert_true(lv_storage_is_remote(shim));
	assert_int_equal(lv_storage_credential_source(shim, buf, sizeof buf), 0);
	assert_string_equal(buf, "test source");
	assert_int_equal(lv_storage_sub(&sub, shim, "tree/b", &e), 0);
	assert_true(lv_storage_is_remote(sub));
	lv_storage_free(sub);
	lv_storage_free(shim); /* frees st too */

	/* a version-1 table (shorter struct, from before 1.0): refused, never read past its end
	 * (on the heap at its own size, so ASan would see a read beyond it) */
	ops_v1 *v1 = malloc(sizeof *v1);
	assert_non_null(v1);
	*v1 = (ops_v1){ 1, { (void *)c_list, (void *)c_read, (void *)c_range, (void *)c_head,
			     (void *)c_write, (void *)c_write, (void *)c_del, NULL, NULL, NULL } };
	st = NULL;
	assert_int_equal(lv_storage_new(&st, (const lv_storage_ops *)(void *)v1, NULL, "v1://", &e),
			 LV_EINVALID);
	assert_null(st);
	assert_non_null(strstr(e.message, "lv_storage_ops: version 1"));
	free(v1);
	/* lv_storage_ops_init: the current version, every op NULL; an unknown version writes nothing */
	lv_storage_ops fresh;
	memset(&fresh, 0x5a, sizeof fresh);
	assert_int_equal(lv_storage_ops_init(&fresh, LV_STORAGE_OPS_VERSION), 0);
	assert_int_equal(fresh.version, LV_STORAGE_OPS_VERSION);
	assert_null(fresh.list);
	assert_int_equal(fresh.flags, 0);
	assert_int_equal(lv_storage_ops_init(&fresh, LV_STORAGE_OPS_VERSION + 1), LV_EINVALID);
	assert_int_equal(fresh.version, LV_STORAGE_OPS_VERSION);
	assert_int_equal(lv_storage_ops_init(NULL, LV_STORAGE_OPS_VERSION), LV_EINVALID);
}

/* A bag of n pairs (keys[i], vals[i]). */
static lv_storage_options *bag_of(const char *const *keys, const char *const *vals, size_t n)
{
	lv_error e = { 0 };
	lv_storage_options *o = NULL;
	assert_int_equal(lv_storage_options_new(&o, &e), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(lv_storage_options_set(o, keys[i], vals[i], &e), 0);
	return o;
}

/* Opens uri with the n pairs: the result code, e filled. */
static int open_with(const char *uri, const char *const *keys, const char *const *vals, size_t n,
		     lv_error *e)
{
	lv_storage *st = NULL;
	lv_storage_options *o = bag_of(keys, vals, n);
	int rc = lv_storage_open(&st, uri, o, e);
	lv_storage_options_free(o);
	lv_storage_free(st);
	return rc;
}

static void t_storage_options(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_storage *st = NULL;
	char *dir = make_tmpdir();
	assert_int_equal(open_with(dir, NULL, NULL, 0, &e), 0);

	/* local stores take no options; the key is named, never the value */
	const char *k1[] = { "aws_access_key_id" }, *v1s[] = { "SECRETVALUE" };
	assert_int_equal(open_with(dir, k1, v1s, 1, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "'aws_access_key_id'"));
	assert_null(strstr(e.message, "SECRETVALUE"));
	assert_int_equal(open_with("mem://x", k1, v1s, 1, &e), LV_EINVALID);
	/* ... but ignore the keys that say where an object store is, as Lance does */
	const char *kw[] = { "aws_region", "Endpoint", "allow_http" }, *vw[] = { "r", "http://x", "true" };
	assert_int_equal(open_with(dir, kw, vw, 3, &e), 0);
	assert_int_equal(open_with("mem://x", kw, vw, 3, &e), 0);

	/* object stores: an unknown key, an unsupported one, a bad value -- before any request */
	const char *k2[] = { "aws_region", "No_Such_Option" }, *v2[] = { "us-east-1", "SECRETVALUE" };
	assert_int_equal(open_with("s3://bucket/p", k2, v2, 2, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "unknown storage option 'No_Such_Option' for s3://"));
	assert_null(strstr(e.message, "SECRETVALUE"));
	assert_int_equal(open_with("az://cont/p", k2, v2, 2, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "unknown storage option 'aws_region' for az://"));
	const char *k3[] = { "AWS_SSE_KMS_KEY_ID" }, *v3[] = { "SECRETVALUE" };
	assert_int_equal(open_with("s3://bucket/p", k3, v3, 1, &e), LV_EUNSUPPORTED);
	assert_non_null(strstr(e.message, "'AWS_SSE_KMS_KEY_ID' is not supported"));
	const char *k4[] = { "allow_http" };
	assert_int_equal(open_with("s3://bucket/p", k4, v3, 1, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "allow_http: expected true or false"));
	assert_null(strstr(e.message, "SECRETVALUE"));
	const char *k5[] = { "timeout" }, *v5[] = { "soon" };
	assert_int_equal(open_with("az://cont/p", k5, v5, 1, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "timeout: expected a duration"));
	/* the bag refuses a NULL or empty key and a NULL value; the same bag serves many opens */
	lv_storage_options *o = bag_of(NULL, NULL, 0);
	assert_int_equal(lv_storage_options_set(o, NULL, "v", &e), LV_EINVALID);
	assert_int_equal(lv_storage_options_set(o, "", "v", &e), LV_EINVALID);
	assert_int_equal(lv_storage_options_set(o, "k", NULL, &e), LV_EINVALID);
	assert_int_equal(lv_storage_options_new(NULL, &e), LV_EINVALID);
	assert_int_equal(lv_storage_open(&st, dir, o, &e), 0);
	lv_storage_free(st);
	assert_int_equal(lv_storage_options_set(o, "timeout", "soon", &e), 0);
	assert_int_equal(lv_storage_open(&st, "s3://bucket/p", o, &e), LV_EINVALID);
	assert_int_equal(lv_storage_open(&st, "s3://bucket/p", o, &e), LV_EINVALID);
	lv_storage_options_free(o);
	lv_storage_options_free(NULL);
	/* '?' and '#' in an object-store URI */
	assert_int_equal(lv_storage_open(&st, "s3://bucket/a?b", NULL, &e), LV_EINVALID);
	assert_non_null(strstr(e.message, "URL query"));
	assert_int_equal(lv_storage_open(&st, "az://cont/a#b", NULL, &e), LV_EINVALID);
	rm_rf(dir);
	free(dir);
}

/* ---- fault shim ---- */

static lv_storage *new_shim(const lv_fault_spec *spec)
{
	lv_error e = { 0 };
	lv_storage *mem = NULL, *shim = NULL;
	assert_int_equal(lv_storage_mem_new(&mem, &e), 0);
	put(mem, "obj", "abcdefgh");
	put(mem, "_versions/1.manifest", "manifest-1");
	put(mem, "_versions/2.manifest", "manifest-2");
	put(mem, "data/x.lance", "data-x");
	assert_int_equal(lv_storage_fault_wrap(&shim, mem, spec, &e), 0);
	assert_string_equal(lv_storage_describe(shim), "fault+mem://");
	return shim;
}

static int count_cb(const lv_list_entry *en, void *payload)
{
	(*(int *)payload)++;
	return 0;
}

/* Performs one call of the op in `op` (a single LV_FAULT_* bit); returns its status. */
static int do_op(lv_storage *st, unsigned op, int i, int *cb_calls)
{
	lv_error e = { 0 };
	lv_buf b = { 0 };
	uint64_t size;
	int64_t mt;
	char path[32];
	int rc = LV_EINVALID;
	switch (op) {
	case LV_FAULT_LIST:
		rc = lv_storage_list(st, "", true, count_cb, cb_calls, &e);
		break;
	case LV_FAULT_READ:
		rc = lv_storage_read(st, "obj", &b, &e);
		lv_buf_dispose(&b);
		break;
	case LV_FAULT_HEAD:
		rc = lv_storage_head(st, "obj", &size, &mt, &e);
		break;
	case LV_FAULT_WRITE:
		snprintf(path, sizeof path, "w/%d", i);
		rc = lv_storage_write(st, path, "w", 1, &e);
		break;
	case LV_FAULT_CREATE:
		snprintf(path, sizeof path, "c/%d", i);
		rc = lv_storage_create(st, path, "c", 1, &e);
		break;
	case LV_FAULT_DELETE:
		snprintf(path, sizeof path, "d/%d", i);
		lv_storage_write(st, path, "d", 1, &e) == 0 ? (void)0 : fail();
		rc = lv_storage_delete(st, path, &e);
		break;
	}
	if (rc == LV_EIO)
		assert_non_null(strstr(e.message, "injected"));
	return rc;
}

static bool exists(lv_storage *st, const char *path)
{
	lv_error e = { 0 };
	return lv_storage_head(st, path, NULL, NULL, &e) == 0;
}

static void t_fault_each_op(void **state)
{
	(void)state;
	static const unsigned ops[] = { LV_FAULT_LIST, LV_FAULT_READ, LV_FAULT_HEAD,
					LV_FAULT_WRITE, LV_FAULT_CREATE, LV_FAULT_DELETE };
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		lv_fault_spec spec = { .ops = ops[k], .nth = 2, .kind = LV_FAULT_FAIL };
		lv_storage *shim = new_shim(&spec);
		int cb = 0;
		assert_int_equal(do_op(shim, ops[k], 1, &cb), 0);
		int before = cb;
		assert_int_equal(do_op(shim, ops[k], 2, &cb), LV_EIO);
		assert_int_equal(cb, before); /* a failed list makes no callback */
		assert_int_equal(do_op(shim, ops[k], 3, &cb), 0);
		assert_int_equal(lv_storage_fault_calls(shim), 3);
		/* the failed call had no effect */
		if (ops[k] == LV_FAULT_WRITE) {
			assert_true(exists(shim, "w/1") && !exists(shim, "w/2") && exists(shim, "w/3"));
		} else if (ops[k] == LV_FAULT_CREATE) {
			assert_true(exists(shim, "c/1") && !exists(shim, "c/2") && exists(shim, "c/3"));
		} else if (ops[k] == LV_FAULT_DELETE) {
			assert_true(!exists(shim, "d/1") && exists(shim, "d/2") && !exists(shim, "d/3"));
		}
		/* calls of other ops are not counted (head is used above for checks) */
		if (ops[k] != LV_FAULT_HEAD)
			assert_int_equal(lv_storage_fault_calls(shim), 3);
		lv_storage_free(shim);
	}
}

static void read_is(lv_storage *st, const char *path, const char *want, size_t n)
{
	lv_error e = { 0 };
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(st, path, &b, &e), 0);
	assert_int_equal(b.size, n);
	assert_memory_equal(b.ptr, want, n);
	lv_buf_dispose(&b);
}

static void t_fault_short_corrupt(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_fault_spec spec = { .ops = LV_FAULT_READ, .nth = 1, .kind = LV_FAULT_SHORT };
	lv_storage *shim = new_shim(&spec);
	read_is(shim, "obj", "abcd", 4);
	read_is(shim, "obj", "abcdefgh", 8); /* only the nth */

	spec.kind = LV_FAULT_CORRUPT;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	assert_int_equal(lv_storage_fault_calls(shim), 0);
	char want[] = "abcdefgh";
	want[4] ^= 0xFF;
	read_is(shim, "obj", want, 8);
	read_is(shim, "obj", "abcdefgh", 8);

	/* ranged reads are reads too */
	spec.kind = LV_FAULT_SHORT;
	spec.persistent = true;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read_range(shim, "obj", 2, 4, &b, &e), 0);
	assert_int_equal(b.size, 2);
	assert_memory_equal(b.ptr, "cd", 2);
	lv_buf_dispose(&b);
	spec.kind = LV_FAULT_CORRUPT;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	assert_int_equal(lv_storage_read_range(shim, "obj", 2, 4, &b, &e), 0);
	assert_int_equal(b.size, 4);
	assert_int_equal(b.ptr[2], (uint8_t)('e' ^ 0xFF));
	lv_buf_dispose(&b);

	/* SHORT/CORRUPT do not touch calls without payload, nor what was stored */
	spec.ops = LV_FAULT_ALL;
	spec.kind = LV_FAULT_SHORT;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	put(shim, "new", "12345678");
	assert_true(exists(shim, "new"));
	assert_int_equal(lv_storage_fault_set(shim, NULL, &e), 0);
	read_is(shim, "new", "12345678", 8);
	lv_storage_free(shim);
}

static void t_fault_persistent(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_fault_spec spec = { .ops = LV_FAULT_READ, .nth = 2, .kind = LV_FAULT_FAIL,
			       .persistent = true };
	lv_storage *shim = new_shim(&spec);
	int cb = 0;
	assert_int_equal(do_op(shim, LV_FAULT_READ, 0, &cb), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(do_op(shim, LV_FAULT_READ, 0, &cb), LV_EIO);
	assert_int_equal(lv_storage_fault_calls(shim), 6);
	/* other ops keep working */
	assert_int_equal(do_op(shim, LV_FAULT_WRITE, 0, &cb), 0);
	/* set resets the counter and the trigger */
	spec.nth = 0;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	assert_int_equal(lv_storage_fault_calls(shim), 0);
	assert_int_equal(do_op(shim, LV_FAULT_READ, 0, &cb), 0);
	assert_int_equal(lv_storage_fault_calls(shim), 1);
	lv_storage_free(shim);
}

static void t_fault_path_filter(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_fault_spec spec = { .ops = LV_FAULT_READ | LV_FAULT_LIST, .nth = 2,
			       .kind = LV_FAULT_FAIL, .path_substring = ".manifest" };
	lv_storage *shim = new_shim(&spec);
	lv_buf b = { 0 };
	read_is(shim, "data/x.lance", "data-x", 6);
	read_is(shim, "obj", "abcdefgh", 8);
	free(list_text(shim, "_versions", false)); /* "_versions" lacks ".manifest" */
	assert_int_equal(lv_storage_fault_calls(shim), 0);
	read_is(shim, "_versions/1.manifest", "manifest-1", 10);
	assert_int_equal(lv_storage_read(shim, "_versions/2.manifest", &b, &e), LV_EIO);
	assert_non_null(strstr(e.message, "_versions/2.manifest"));
	read_is(shim, "data/x.lance", "data-x", 6);
	read_is(shim, "_versions/2.manifest", "manifest-2", 10);
	assert_int_equal(lv_storage_fault_calls(shim), 3);

	/* the shim's spec owns its copy of the substring */
	char sub[] = "lance";
	spec.path_substring = sub;
	spec.nth = 1;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	sub[0] = 'X';
	assert_int_equal(lv_storage_read(shim, "data/x.lance", &b, &e), LV_EIO);

	/* sub-handles of a shim see prefixed paths in the filter */
	lv_storage *s2 = NULL;
	spec.path_substring = "data/";
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), 0);
	assert_int_equal(lv_storage_sub(&s2, shim, "data", &e), 0);
	assert_int_equal(lv_storage_read(s2, "x.lance", &b, &e), LV_EIO);
	lv_storage_free(s2);
	lv_storage_free(shim);
}

static void t_fault_api_errors(void **state)
{
	(void)state;
	lv_error e = { 0 };
	lv_storage *mem = NULL, *shim = NULL;
	assert_int_equal(lv_storage_mem_new(&mem, &e), 0);
	lv_fault_spec spec = { .ops = LV_FAULT_READ, .nth = 1, .kind = 42 };
	assert_int_equal(lv_storage_fault_wrap(&shim, mem, &spec, &e), LV_EINVALID);
	assert_null(shim);
	spec.kind = LV_FAULT_FAIL;
	spec.ops = 0x100;
	assert_int_equal(lv_storage_fault_wrap(&shim, mem, &spec, &e), LV_EINVALID);
	/* on failure the caller still owns inner */
	spec.ops = LV_FAULT_READ;
	assert_int_equal(lv_storage_fault_set(mem, &spec, &e), LV_EINVALID);
	assert_int_equal(lv_storage_fault_calls(mem), 0);
	assert_int_equal(lv_storage_fault_wrap(&shim, NULL, &spec, &e), LV_EINVALID);
	assert_int_equal(lv_storage_fault_wrap(&shim, mem, &spec, &e), 0);
	spec.kind = 0;
	assert_int_equal(lv_storage_fault_set(shim, &spec, &e), LV_EINVALID);
	/* shims stack */
	lv_storage *outer = NULL;
	assert_int_equal(lv_storage_fault_wrap(&outer, shim, NULL, &e), 0);
	put(outer, "x", "1");
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(outer, "x", &b, &e), LV_EIO); /* inner shim, nth=1 */
	lv_storage_free(outer);
}

/* Open descriptors of this process (/proc/self/fd entries). */
static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) != -1;
	return n;
}

/* The local backend keeps the directories it read from open for a while (local_dircache.c),
 * at most 64 over the whole process: 100 handles each reading a file hold no more. */
static void t_local_dircache_bounded(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	lv_storage *st[100];
	lv_error e = { 0 };
	assert_int_equal(lv_storage_open(&st[0], dir, NULL, &e), 0);
	put(st[0], "d/f", "x");
	lv_storage_free(st[0]);
	int before = open_fds();
	for (int i = 0; i < 100; i++) {
		assert_int_equal(lv_storage_open(&st[i], dir, NULL, &e), 0);
		lv_buf b = { 0 };
		assert_int_equal(lv_storage_read(st[i], "d/f", &b, &e), 0);
		lv_buf_dispose(&b);
	}
	int held = open_fds() - before;
	assert_true(held > 0);   /* the cache is on */
	assert_true(held <= 64); /* and bounded */
	for (int i = 0; i < 100; i++)
		lv_storage_free(st[i]);
	assert_int_equal(open_fds(), before); /* closed with their handles */
	rm_rf(dir);
	free(dir);
}

/* Reads leave a file's access time alone (O_NOATIME): a cleanup reading a million manifests
 * must not dirty a million inodes.  An atime two days old is one relatime would update. */
static void t_local_noatime(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	lv_storage *st;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_open(&st, dir, NULL, &e), 0);
	put(st, "d/f", "manifest bytes");
	char path[4096];
	snprintf(path, sizeof path, "%s/d/f", dir);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct timespec ts[2] = { { now.tv_sec - 2 * 86400, 0 }, { now.tv_sec - 3 * 86400, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	lv_buf b = { 0 };
	assert_int_equal(lv_storage_read(st, "d/f", &b, &e), 0);
	lv_buf_dispose(&b);
	assert_int_equal(lv_storage_read_range(st, "d/f", 2, 4, &b, &e), 0);
	lv_buf_dispose(&b);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_atim.tv_sec, ts[0].tv_sec);
	lv_storage_free(st);
	rm_rf(dir);
	free(dir);
}

/* Reads `rel` below `root` through a fresh handle; 0 when the bytes came back. */
static int read_one(const char *root, const char *rel)
{
	lv_storage *st = NULL;
	lv_error e = { 0 };
	lv_buf b = { 0 };
	int rc = lv_storage_open(&st, root, NULL, &e);
	for (int i = 0; rc == 0 && i < 2; i++) { /* the first read meets EPERM, the second not */
		rc = lv_storage_read(st, rel, &b, &e);
		if (rc == 0 && b.size == 0)
			rc = -1;
		lv_buf_dispose(&b);
	}
	if (rc != 0)
		fprintf(stderr, "read_one %s/%s: %d %s\n", root, rel, rc, e.message);
	lv_storage_free(st);
	return rc;
}

/*
 * O_NOATIME is refused (EPERM) to a reader that neither owns the file nor has CAP_FOWNER;
 * the read must then go on without it.  As root: a child that became uid/gid 65534 reads a
 * root-owned file; otherwise this process reads a root-owned system file.  Fails if the
 * EPERM is reported instead of retried.
 */
static void t_local_noatime_not_owner(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		struct stat sb;
		assert_int_equal(stat("/etc/passwd", &sb), 0);
		assert_int_not_equal(sb.st_uid, geteuid()); /* else the test proves nothing */
		assert_int_equal(read_one("/etc", "passwd"), 0);
		return;
	}
	char *dir = lv__sprintf("/tmp/lv-noatime-XXXXXX"); /* /tmp: uid 65534 can reach it */
	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	char path[4096];
	snprintf(path, sizeof path, "%s/f", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("manifest bytes", f);
	fclose(f);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(path, 0644), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		_exit(read_one(dir, "f") == 0 ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		if (remote_var(backends[i].name) && !getenv(remote_var(backends[i].name)))
			continue; /* run by tests/interop/test_s3_storage.mjs, which fails without it */
		failed += run_suite(&backends[i]);
	}

	const struct CMUnitTest specific[] = {
		cmocka_unit_test(t_open_uris),	       cmocka_unit_test(t_local_fs),
		cmocka_unit_test(t_mem_mtime),	       cmocka_unit_test(t_custom_backend),
		cmocka_unit_test(t_properties),	       cmocka_unit_test(t_storage_options),
		cmocka_unit_test(t_fault_each_op),     cmocka_unit_test(t_fault_short_corrupt),
		cmocka_unit_test(t_fault_persistent),  cmocka_unit_test(t_fault_path_filter),
		cmocka_unit_test(t_fault_api_errors),
		cmocka_unit_test(t_local_dircache_bounded), cmocka_unit_test(t_local_noatime),
		cmocka_unit_test(t_local_noatime_not_owner),
	};
	failed += cmocka_run_group_tests_name("storage specific", specific, NULL, NULL);
	return failed ? 1 : 0;
}
