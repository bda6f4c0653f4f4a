/*
 * Unit tests for the Lance file layer's schema cache (src/lib/lancefile/schcache.c):
 *  - a hit gives what a fresh parse gives (every field, column, logical type, metadata
 *    entry, row count), with every string in the file's own copy of the schema (nothing
 *    points into the cache: the cache is cleared before the hit's answer is read);
 *  - the key is the fields' bytes, the footer's column count and the version: files that
 *    differ only in schema metadata and row count hit, and their metadata and row count
 *    are their own (two lancever checkpoints of different datasets: the second read hits
 *    and answers as a cold parse); fields that differ in one byte miss, and a footer with
 *    another column count is refused as before;
 *  - the bound: at most 8 entries, fields over 12 KiB are never stored (large metadata
 *    is no obstacle), least recently used first out;
 *  - fields with another entry between them are not looked up (the same answer);
 *  - a parse with an undecoded column (a partial read) or a corrupt or truncated schema is
 *    never stored: a strict read of the same bytes still fails;
 *  - allocation N of a read fails, every N, cold and warm: LV_ENOMEM or the same answer;
 *  - an entry replaced while a reader holds it stays readable and is freed by that reader;
 *    threads reading two files while a third makes the cache replace entries get the
 *    right answers (ASan build: no use after free of a replaced entry, no leak).
 * Files are written by lv_lancefile_write (2.1) and patched, or by lv_checkpoint_write.
 * The fuzz corpus through the cache: test_schcache_corpus.c.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#ifndef LV_TEST_HOOKS
#define LV_TEST_HOOKS 1
#endif
#include "lancefile/lf_file.h"
#include "lancefile/schcache.h"
#include "support/lfschema.h"
#include "support/lftext.h"
#include "support/memcopy.h"
#include "support/testutil.h"
#include "util/util.h"


#define ROWS 3

static const uint64_t vu[ROWS + 1] = { 1, 2, 3, 4 };
static const uint64_t so[ROWS + 2] = { 0, 1, 3, 3, 6 };
static const uint8_t sv[ROWS + 1] = { 1, 1, 0, 1 };
static const int64_t vi[ROWS + 1] = { -1, 5, 0, 7 };

/* Columns id (uint64), s (nullable string), v (nullable int64), `last` (uint64); the
 * metadata {"lancever:k", val}, {"z", "a\0b"} (a value with a NUL). */
static lv_buf write_named(const char *last, const char *val, size_t vlen, size_t rows)
{
	lv_column c[4];
	memset(c, 0, sizeof c);
	c[0] = (lv_column){ .name = "id", .type = LV_COL_UINT64, .u64 = vu };
	c[1] = (lv_column){ .name = "s", .type = LV_COL_UTF8, .nullable = true,
			    .str_offsets = so, .str_data = "abcdef", .validity = sv };
	c[2] = (lv_column){ .name = "v", .type = LV_COL_INT64, .nullable = true, .i64 = vi,
			    .validity = sv };
	c[3] = (lv_column){ .name = last, .type = LV_COL_UINT64, .u64 = vu };
	lv_kv meta[2] = { { .key = "lancever:k", .value = val, .value_len = vlen },
			  { .key = "z", .value = "a\0b", .value_len = 3 } };
	lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	o.file_version = LV_LANCEFILE_V2_1;
	lv_buf b = { 0 };
	lv_error e = { 0 };
	if (lv_lancefile_write(&b, c, 4, rows, meta, 2, &o, &e) != 0)
		fail_msg("write: %s", e.message);
	return b;
}

static lv_buf write_file(const char *val, size_t vlen, size_t rows)
{
	return write_named("d", val, vlen, rows);
}

static lv_buf write_val(const char *val) { return write_file(val, strlen(val), ROWS); }

static lv_lancefile *read_ok(const lv_buf *b)
{
	lv_lancefile *f = NULL;
	lv_error e = { 0 };
	if (lv_lancefile_read(&f, b->ptr, b->size, "t.lance", &e) != 0)
		fail_msg("read: %s", e.message);
	return f;
}

static int read_rc(const lv_buf *b, unsigned flags, lv_lancefile **out)
{
	lv_lancefile *f = NULL;
	lv_error e = { 0 };
	int rc = lv_lancefile_read_ex(&f, b->ptr, b->size, "t.lance", flags, &e);
	if (out)
		*out = f;
	else
		lv_lancefile_free(f);
	return rc;
}

static lv__lf_schcache_stats stats(void)
{
	lv__lf_schcache_stats s;
	lv__lf_schcache_stat(&s);
	return s;
}

static bool within(const lv_lancefile *f, const char *s)
{
	return s >= f->sch_copy && s <= f->sch_copy + f->sch_n;
}

/* Every string of f lies in f's own copy of the schema. */
static void strings_own(const lv_lancefile *f)
{
	for (size_t i = 0; i < f->nfields; i++)
		assert_true(within(f, f->fields[i].name) && within(f, f->fields[i].ltype));
	for (size_t i = 0; i < f->ncols; i++)
		assert_true(within(f, f->cols[i].name) && within(f, f->ltypes[i]));
	for (size_t i = 0; i < f->nmeta; i++)
		assert_true(within(f, f->meta[i].key) && within(f, f->meta[i].value));
}

/* ---- tests ---- */

static void test_hit_same_as_parse(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf b = write_val("one");
	lv_lancefile *f = read_ok(&b);
	assert_int_equal(stats().misses, 1);
	assert_int_equal(stats().stores, 1);
	char *fresh = tu_lf_describe(f);
	lv_lancefile_free(f);
	f = read_ok(&b);
	assert_int_equal(stats().hits, 1);
	assert_int_equal(stats().stores, 1);
	lv__lf_schcache_clear(); /* the entry is gone: f must not point into it */
	strings_own(f);
	char *hit = tu_lf_describe(f);
	assert_string_equal(hit, fresh);
	assert_non_null(strstr(hit, "meta 'z' 3:610062 found 1"));
	assert_non_null(strstr(hit, "'v' type 2 null 1 list 0 ltype 'int64'"));
	lv_lancefile_free(f);
	free(fresh);
	free(hit);
	lv_buf_dispose(&b);
}

/* The text of a read of b on a cold cache (the cache cleared before and after). */
static char *cold(const lv_buf *b)
{
	lv__lf_schcache_clear();
	lv_lancefile *f = read_ok(b);
	char *d = tu_lf_describe(f);
	lv_lancefile_free(f);
	lv__lf_schcache_clear();
	return d;
}

/* Reads b (a hit expected: one more hit, no store) and checks its answer equals want, with
 * every string in its own copy; the cache is cleared before the answer is read. */
static void hit_equals(const lv_buf *b, const char *want)
{
	lv__lf_schcache_stats s0 = stats();
	lv_lancefile *f = read_ok(b);
	assert_int_equal(stats().hits, s0.hits + 1);
	assert_int_equal(stats().stores, s0.stores);
	lv__lf_schcache_clear();
	strings_own(f);
	char *got = tu_lf_describe(f);
	assert_string_equal(got, want);
	free(got);
	lv_lancefile_free(f);
}

/* Files that differ only in a metadata value and in the row count share an entry; each
 * answers its own metadata and rows (a read taking either from the cache fails here). */
static void test_metadata_rows_from_file(void **st)
{
	(void)st;
	lv_buf a = write_val("v1"), b = write_val("v2"), c = write_file("v1", 2, ROWS + 1);
	assert_int_equal(a.size, b.size);
	char *wb = cold(&b), *wc = cold(&c);
	lv_lancefile_free(read_ok(&a));
	assert_int_equal(stats().stores, 1);
	hit_equals(&b, wb);
	assert_int_equal(stats().entries, 0); /* hit_equals cleared it: store a again */
	lv_lancefile_free(read_ok(&a));
	hit_equals(&c, wc);
	assert_non_null(strstr(wb, "meta 'lancever:k' 2:7632"));  /* "v2" */
	assert_null(strstr(wc, "meta 'lancever:k' 2:7632"));
	lv_lancefile_free(read_ok(&a));
	lv_lancefile *fc = read_ok(&c), *fb = read_ok(&b);
	assert_int_equal(stats().hits, 2);
	assert_memory_equal(lv_lancefile_metadata_find(fb, "lancever:k")->value, "v2", 2);
	assert_int_equal(lv_lancefile_num_rows(fc), ROWS + 1);
	assert_int_equal(lv_lancefile_num_rows(fb), ROWS);
	assert_int_equal(lv_lancefile_column(fc, 0)->u64[ROWS], vu[ROWS]);
	lv_lancefile_free(fb);
	lv_lancefile_free(fc);
	free(wb);
	free(wc);
	lv_buf_dispose(&a);
	lv_buf_dispose(&b);
	lv_buf_dispose(&c);
}

/* Fields that differ in one byte (a column's name, a field's nullable flag): another key. */
static void test_fields_differ_misses(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf a = write_named("d", "v", 1, ROWS), b = write_named("e", "v", 1, ROWS);
	lv_buf c = write_named("d", "v", 1, ROWS);
	assert_int_equal(a.size, b.size);
	/* d's logical type, then field 7 = 1: the tag of field 6 (nullable) instead */
	uint8_t *nul = tu_nth(&c, "\x2a\x06" "uint64\x38\x01", 10, 1);
	assert_non_null(nul);
	assert_null(tu_nth(&c, "\x2a\x06" "uint64\x38\x01", 10, 2));
	nul[8] = 0x30; /* d is now nullable (its pages: no nulls) */
	lv_lancefile *fa = read_ok(&a), *fb = read_ok(&b), *fc = read_ok(&c);
	assert_int_equal(stats().hits, 0);
	assert_int_equal(stats().stores, 3);
	assert_string_equal(lv_lancefile_column(fa, 3)->name, "d");
	assert_string_equal(lv_lancefile_column(fb, 3)->name, "e");
	assert_false(lv_lancefile_column(fa, 3)->nullable);
	assert_true(lv_lancefile_column(fc, 3)->nullable);
	lv_lancefile_free(fa);
	lv_lancefile_free(fb);
	lv_lancefile_free(fc);
	fb = read_ok(&b); /* and each hits its own */
	assert_int_equal(stats().hits, 1);
	assert_string_equal(lv_lancefile_column(fb, 3)->name, "e");
	lv_lancefile_free(fb);
	lv_buf_dispose(&a);
	lv_buf_dispose(&b);
	lv_buf_dispose(&c);
}

/* Two checkpoints (lv_checkpoint_write) of different datasets: other rows, other metadata
 * (latest version, checksum...), the same fields.  The second read hits and answers as a
 * cold parse. */
static void test_checkpoints_share_fields(void **st)
{
	(void)st;
	lv_storage *s1 = tu_mem_copy("lance8/t.lance"), *s2 = tu_mem_copy("lance8/v1.lance");
	lv_checkpoint_result r1 = tu_checkpoint(s1), r2 = tu_checkpoint(s2);
	lv_buf c1 = tu_read(s1, r1.path), c2 = tu_read(s2, r2.path);
	lv_storage_free(s1);
	lv_storage_free(s2);
	char *w1 = cold(&c1), *w2 = cold(&c2);
	lv_lancefile *f1 = read_ok(&c1), *f2 = read_ok(&c2);
	assert_int_equal(stats().hits, 1);
	assert_int_equal(stats().stores, 1);
	assert_true(lv_lancefile_num_rows(f1) != lv_lancefile_num_rows(f2));
	assert_int_equal(lv_lancefile_num_columns(f2), 15);
	const lv_kv *k1 = lv_lancefile_metadata_find(f1, "lancever:checksum");
	const lv_kv *k2 = lv_lancefile_metadata_find(f2, "lancever:checksum");
	assert_true(k1 && k2 && (k1->value_len != k2->value_len ||
				 memcmp(k1->value, k2->value, k1->value_len)));
	lv_lancefile_free(f1);
	lv_lancefile_free(f2);
	assert_true(strcmp(w1, w2) != 0);
	hit_equals(&c1, w1);
	lv_lancefile_free(read_ok(&c1)); /* stores it again */
	hit_equals(&c2, w2);
	free(w1);
	free(w2);
	lv_buf_dispose(&c1);
	lv_buf_dispose(&c2);
}

/* The same schema bytes with a footer that counts one more column: refused as without the
 * cache (the footer's count is part of the key). */
static void test_footer_columns_keyed(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf b = write_val("one");
	lv_lancefile_free(read_ok(&b));
	uint8_t *nc = b.ptr + b.size - 40 + 28; /* footer: 3 x u64, u32 buffers, u32 columns */
	assert_int_equal(nc[0], 4);
	nc[0] = 5;
	assert_int_equal(read_rc(&b, 0, NULL), LV_ECORRUPT);
	assert_int_equal(stats().hits, 0);
	lv_buf_dispose(&b);
}

static void test_bound(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf b[20];
	char name[32];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "col-%02d", i);
		b[i] = write_named(name, "v", 1, ROWS);
		lv_lancefile_free(read_ok(&b[i]));
		assert_true(stats().entries <= 8);
	}
	lv__lf_schcache_stats s = stats();
	assert_int_equal(s.entries, 8);
	assert_int_equal(s.stores, 20);
	assert_true(s.bytes > 0 && s.bytes < 8 * ((size_t)32 << 10));
	for (int i = 12; i < 20; i++) /* the newest 8 are held ... */
		lv_lancefile_free(read_ok(&b[i]));
	assert_int_equal(stats().hits, 8);
	lv_lancefile_free(read_ok(&b[12])); /* 13 is now the least recently used */
	assert_int_equal(stats().hits, 9);
	lv_lancefile_free(read_ok(&b[11])); /* the ninth newest is not held: it replaces 13 */
	assert_int_equal(stats().hits, 9);
	assert_int_equal(stats().stores, 21);
	lv_lancefile_free(read_ok(&b[12]));
	assert_int_equal(stats().hits, 10);
	lv_lancefile_free(read_ok(&b[13]));
	assert_int_equal(stats().hits, 10);
	for (int i = 0; i < 20; i++)
		lv_buf_dispose(&b[i]);
	/* fields over 12 KiB are never stored; a metadata value of 20000 bytes is no obstacle */
	char *big = malloc(20001);
	assert_non_null(big);
	memset(big, 'x', 20000);
	big[20000] = 0;
	lv_buf l = write_named(big, "v", 1, ROWS), m = write_file(big, 20000, ROWS);
	s = stats();
	for (int k = 0; k < 2; k++) {
		lv_lancefile *f = read_ok(&l);
		assert_int_equal(strlen(lv_lancefile_column(f, 3)->name), 20000);
		lv_lancefile_free(f);
	}
	assert_int_equal(stats().stores, s.stores);
	assert_int_equal(stats().hits, s.hits);
	for (int k = 0; k < 2; k++) {
		lv_lancefile *f = read_ok(&m);
		assert_int_equal(lv_lancefile_metadata_find(f, "lancever:k")->value_len, 20000);
		lv_lancefile_free(f);
	}
	assert_int_equal(stats().stores, s.stores + 1);
	assert_int_equal(stats().hits, s.hits + 1);
	free(big);
	lv_buf_dispose(&l);
	lv_buf_dispose(&m);
}

/* A partial read with an undecoded column is not stored: a strict read of the same bytes
 * still fails, naming the column. */
static void test_undecoded_not_cached(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf b = write_val("one");
	uint8_t *p = tu_nth(&b, "uint64", 6, 1); /* d's logical type */
	assert_non_null(p);
	assert_null(tu_nth(&b, "uint64", 6, 2));
	memcpy(p, "uint65", 6);
	lv_lancefile *f = NULL;
	assert_int_equal(read_rc(&b, LV_LANCEFILE_READ_PARTIAL, &f), 0);
	assert_int_equal(lv_lancefile_column(f, 3)->type, LV_COL_UNDECODED);
	assert_non_null(strstr(lv_lancefile_column_error(f, 3), "unsupported logical type 'uint65'"));
	lv_lancefile_free(f);
	assert_int_equal(stats().stores, 0);
	lv_error e = { 0 };
	assert_int_equal(lv_lancefile_read(&f, b.ptr, b.size, "t.lance", &e), LV_EUNSUPPORTED);
	assert_non_null(strstr(e.message, "'d'"));
	lv_buf_dispose(&b);
}

/* A corrupt (duplicate column names) or truncated schema is never stored. */
static void test_corrupt_not_cached(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf b = write_val("one");
	uint8_t *p = tu_nth(&b, "\x12\x01" "d", 3, 0); /* field name "d" -> "s" */
	assert_non_null(p);
	p[2] = 's';
	for (int k = 0; k < 2; k++)
		assert_int_equal(read_rc(&b, LV_LANCEFILE_READ_PARTIAL, NULL), LV_ECORRUPT);
	assert_int_equal(stats().stores, 0);
	assert_int_equal(stats().misses, 2);
	lv_buf_dispose(&b);
	/* the schema buffer one byte short: the row count's varint cut */
	b = write_val("one");
	lv_lancefile_free(read_ok(&b));
	uint64_t gbo, len;
	memcpy(&gbo, b.ptr + b.size - 40 + 16, 8);
	memcpy(&len, b.ptr + gbo + 8, 8);
	len--;
	memcpy(b.ptr + gbo + 8, &len, 8);
	for (int k = 0; k < 2; k++)
		assert_int_equal(read_rc(&b, 0, NULL), LV_ECORRUPT);
	assert_int_equal(stats().stores, 1);
	assert_int_equal(stats().hits, 0);
	lv_buf_dispose(&b);
}

/* Fields with metadata between them are not looked up (nor stored): the same answer as the
 * same file written fields first, on every read. */
static void test_split_fields_not_cached(void **st)
{
	(void)st;
	lv_buf a = write_val("split"), b = write_val("split");
	tu_lf_interleave(&b);
	assert_true(memcmp(a.ptr, b.ptr, a.size) != 0);
	char *want = cold(&a);
	for (int k = 0; k < 2; k++) {
		lv_lancefile *f = read_ok(&b);
		char *got = tu_lf_describe(f);
		assert_string_equal(got, want);
		free(got);
		lv_lancefile_free(f);
	}
	assert_int_equal(stats().stores, 0);
	assert_int_equal(stats().hits + stats().misses, 0);
	free(want);
	lv_buf_dispose(&a);
	lv_buf_dispose(&b);
}

/* An entry replaced while a reader holds it stays readable, and its reader frees it (ASan
 * build: a use after free, or a leak, fails). */
static void test_replaced_while_read(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	lv_buf b = write_val("held");
	lv_lancefile *f = read_ok(&b);
	int version = lv_lancefile_file_version(f);
	lv_lancefile_free(f);
	size_t n;
	const uint8_t *p = tu_lf_fields_of(&b, &n);
	const lv__lf_schsnap *s = lv__lf_schcache_acquire(p, n, 4, version);
	assert_non_null(s);
	assert_null(lv__lf_schcache_acquire(p, n, 3, version));
	assert_null(lv__lf_schcache_acquire(p, n - 1, 4, version));
	lv__lf_schcache_clear();
	assert_int_equal(stats().entries, 0);
	assert_int_equal(s->n, n);
	assert_int_equal(s->ncols, 4);
	assert_int_equal(s->cols[3].type, LV_COL_UINT64);
	assert_memory_equal(lv_lancefile_metadata_find(f = read_ok(&b), "lancever:k")->value, "held", 4);
	lv_lancefile_free(f);
	lv__lf_schcache_clear(); /* the entry read above is not the one held */
	assert_int_equal(s->nfields, 4);
	assert_memory_equal(p + s->name_at[3], "d", 1);
	assert_int_equal(s->fields[3].name_len, 1);
	lv__lf_schcache_release(s);
	assert_int_equal(tu_leak_check(), 0);
	lv_buf_dispose(&b);
}

/* Allocation N of a read fails, for every N, on a cold cache (the parse and the store) and on
 * a warm one (the copy of a hit): LV_ENOMEM or the same answer, and a read after it is right
 * (a store that failed stored nothing half-made). */
static void test_alloc_failures(void **st)
{
	(void)st;
	lv_buf b = write_val("alloc");
	lv__lf_schcache_clear();
	lv_lancefile *f = read_ok(&b);
	char *want = tu_lf_describe(f);
	lv_lancefile_free(f);
	for (int warm = 0; warm < 2; warm++) {
		uint64_t n = 1, made, nomem = 0, absorbed = 0;
		do {
			if (!warm)
				lv__lf_schcache_clear();
			lv__alloc_fail_at(n);
			int rc = read_rc(&b, 0, &f);
			made = lv__alloc_fail_at(0);
			if (rc != 0 && rc != LV_ENOMEM)
				fail_msg("allocation %llu failed: %d", (unsigned long long)n, rc);
			nomem += rc == LV_ENOMEM;
			if (!warm && rc == 0 && made >= n) { /* absorbed: the store's allocation */
				assert_int_equal(stats().entries, 0);
				absorbed++;
			}
			char *got = rc ? NULL : tu_lf_describe(f);
			if (got && strcmp(got, want))
				fail_msg("allocation %llu failed: another answer", (unsigned long long)n);
			free(got);
			lv_lancefile_free(f);
			f = read_ok(&b); /* and the next read is right, from whatever was stored */
			got = tu_lf_describe(f);
			assert_string_equal(got, want);
			free(got);
			lv_lancefile_free(f);
			assert_true(stats().entries == 1);
		} while (made >= n++);
		assert_true(nomem > 0);
		assert_int_equal(absorbed, warm ? 0 : 1);
	}
	free(want);
	assert_int_equal(tu_leak_check(), 0);
	lv_buf_dispose(&b);
}

/* ---- threads ---- */

#define THREADS 4
#define ITERS 300

static lv_buf tb[2], churn[12];
static int bad;

static void *reader(void *arg)
{
	int k = (int)(intptr_t)arg;
	for (int i = 0; i < ITERS; i++) {
		int w = (i + k) & 1;
		lv_lancefile *f = NULL;
		lv_error e = { 0 };
		if (lv_lancefile_read(&f, tb[w].ptr, tb[w].size, "t.lance", &e) != 0) {
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		const lv_kv *kv = lv_lancefile_metadata_find(f, "lancever:k");
		const lv_column *d = lv_lancefile_column(f, 3);
		if (!kv || kv->value_len != 5 || memcmp(kv->value, w ? "file1" : "file0", 5) ||
		    lv_lancefile_num_rows(f) != (size_t)(ROWS + w) || !d || strcmp(d->name, "d") ||
		    d->u64[ROWS - 1 + w] != vu[ROWS - 1 + w])
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		lv_lancefile_free(f);
	}
	return NULL;
}

/* Reads twelve other files over and over: the cache keeps replacing entries. */
static void *churner(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		lv_lancefile *f = NULL;
		lv_error e = { 0 };
		const lv_buf *b = &churn[i % 12];
		if (lv_lancefile_read(&f, b->ptr, b->size, "c.lance", &e) != 0)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		lv_lancefile_free(f);
	}
	return NULL;
}

static void test_threads(void **st)
{
	(void)st;
	lv__lf_schcache_clear();
	tb[0] = write_file("file0", 5, ROWS);
	tb[1] = write_file("file1", 5, ROWS + 1);
	char name[32];
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof name, "churn-%02d", i);
		churn[i] = write_named(name, "v", 1, ROWS);
	}
	pthread_t t[THREADS + 1];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i), 0);
	assert_int_equal(pthread_create(&t[THREADS], NULL, churner, NULL), 0);
	for (int i = 0; i <= THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(bad, 0);
	lv__lf_schcache_stats s = stats();
	assert_true(s.entries <= 8);
	assert_true(s.hits > 0);
	assert_int_equal(s.hits + s.misses, THREADS * ITERS + ITERS);
	for (int i = 0; i < 2; i++)
		lv_buf_dispose(&tb[i]);
	for (int i = 0; i < 12; i++)
		lv_buf_dispose(&churn[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_same_as_parse),
		cmocka_unit_test(test_metadata_rows_from_file),
		cmocka_unit_test(test_fields_differ_misses),
		cmocka_unit_test(test_checkpoints_share_fields),
		cmocka_unit_test(test_split_fields_not_cached),
		cmocka_unit_test(test_footer_columns_keyed),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_undecoded_not_cached),
		cmocka_unit_test(test_corrupt_not_cached),
		cmocka_unit_test(test_replaced_while_read),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
