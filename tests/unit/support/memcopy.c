#include "support/memcopy.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/testutil.h"
#include "util/util.h"

lv_storage *tu_mem_clone(lv_storage *src)
{
	lv_storage *dst = tu_mem();
	/* collect first: reading a store while listing it is not something to rely on */
	char **all = tu_list_paths(src, "", true);
	for (char **p = all; *p; p++) {
		lv_buf b = { 0 };
		lv_error err = { 0 };
		if (lv_storage_read(src, *p, &b, &err) || lv_storage_write(dst, *p, b.ptr, b.size, &err))
			fail_msg("copy %s: %s", *p, err.message);
		lv_buf_dispose(&b);
	}
	tu_free_list(all);
	return dst;
}

lv_storage *tu_mem_copy(const char *rel)
{
	lv_storage *src = NULL;
	lv_error err = { 0 };
	if (lv_storage_open(&src, tu_fixture(rel), NULL, &err))
		fail_msg("open %s: %s", rel, err.message);
	lv_storage *dst = tu_mem_clone(src);
	lv_storage_free(src);
	return dst;
}

static int snap_cb(const lv_list_entry *e, void *p)
{
	lv__dbuf_printf(p, "%s:%llu\n", e->path, (unsigned long long)e->size);
	return 0;
}

char *tu_snapshot(lv_storage *st)
{
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	lv_error err = { 0 };
	if (lv_storage_list(st, "", true, snap_cb, &b, &err))
		fail_msg("snapshot: %s", err.message);
	char *s = lv__dbuf_take_str(&b);
	assert_non_null(s);
	return s;
}

void tu_expect_unchanged(lv_storage *st, const char *before)
{
	char *after = tu_snapshot(st);
	assert_string_equal(before, after);
	free(after);
}

typedef struct mt_ctx {
	lv_storage *st;
	int64_t t;
} mt_ctx;

static int mt_cb(const lv_list_entry *e, void *p)
{
	mt_ctx *m = p;
	lv_error err = { 0 };
	if (lv_storage_mem_set_mtime(m->st, e->path, m->t, &err))
		fail_msg("set mtime %s: %s", e->path, err.message);
	return 0;
}

void tu_set_all_mtimes(lv_storage *st, int64_t t)
{
	/* collect first: changing mtimes while listing a store is not something to rely on */
	char *snap = tu_snapshot(st);
	mt_ctx m = { st, t };
	for (char *line = snap, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = 0;
		*strrchr(line, ':') = 0;
		lv_list_entry e = { line, 0, 0 };
		mt_cb(&e, &m);
	}
	free(snap);
}
