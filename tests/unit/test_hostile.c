/*
 * Unit tests: hostile dataset contents (symlinks are test_symlinks.c).
 *   - file paths in manifests that would leave the dataset: cleanup refuses and
 *     changes nothing, and files outside the root survive (local disk);
 *     base_paths pointing outside are never cleaned;
 *   - huge counts and lengths: lengths beyond the buffer, 2^32-byte strings and
 *     2^60-byte sections claimed, a million fragments, physical_rows that
 *     overflow the u64 sums, absurd timestamps, versions at u64 max;
 *   - deep nesting: protobuf nested 100,000 deep, JSON nested 100,000 deep in a
 *     tag file and in a transaction property.
 * Every case is an error naming the file or a well-defined answer; under
 * ASan+UBSan any overflow or out-of-bounds access fails the run.
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

#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"
#include "format/manifest.h"
#include "util/util.h"
#include "wire/pb.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

#define DAY (86400000LL)

/* ---- a raw manifest builder (bytes exactly as given, NULs included) ---- */

typedef struct raw_frag {
	const void *path;      /* data file path bytes (NULL: "f.lance") */
	size_t path_len;
	bool base_id;          /* the data file lives under base_paths[1] */
	uint64_t physical_rows;
	uint64_t file_size;
	bool deletion;
	uint64_t deleted_rows;
} raw_frag;

typedef struct raw_manifest {
	uint64_t version;
	int64_t ts_seconds;
	int32_t ts_nanos;
	const raw_frag *frags;
	size_t nfrags;
	size_t repeat_empty_frags; /* this many extra empty fragments */
	const char *txn_file;      /* transaction_file (NULL: none) */
	const char *base_path;     /* base_paths[1] = {path, is_dataset_root} (NULL: none) */
	const void *extra;         /* raw bytes appended to the Manifest message */
	size_t extra_len;
	const char *const *props;  /* inline transaction properties (NULL: no inline txn) */
	bool inline_txn;
} raw_manifest;

static void frag_bytes(lv__dbuf *out, const raw_frag *f, uint64_t id)
{
	lv__dbuf df, fr, del;
	lv__dbuf_init(&df, 0);
	if (f->path)
		lv__pbw_bytes(&df, 1, f->path, f->path_len);
	else
		lv__pbw_str(&df, 1, "f.lance");
	lv__pbw_u64(&df, 6, f->file_size);
	if (f->base_id)
		lv__pbw_u64_always(&df, 7, 1);
	lv__dbuf_init(&fr, 0);
	lv__pbw_u64(&fr, 1, id);
	lv__pbw_bytes(&fr, 2, df.ptr, df.len);
	if (f->deletion) {
		lv__dbuf_init(&del, 0);
		lv__pbw_u64(&del, 2, 1);
		lv__pbw_u64(&del, 3, 7);
		lv__pbw_u64(&del, 4, f->deleted_rows);
		lv__pbw_bytes(&fr, 3, del.ptr ? del.ptr : (uint8_t *)"", del.len);
		lv__dbuf_dispose(&del);
	}
	lv__pbw_u64(&fr, 4, f->physical_rows);
	lv__pbw_bytes(out, 2, fr.ptr, fr.len);
	lv__dbuf_dispose(&df);
	lv__dbuf_dispose(&fr);
}

static void put_manifest(lv_storage *st, const raw_manifest *m)
{
	lv__dbuf man, ts, file, txn;
	lv__dbuf_init(&man, 0);
	for (size_t i = 0; i < m->nfrags; i++)
		frag_bytes(&man, &m->frags[i], i);
	for (size_t i = 0; i < m->repeat_empty_frags; i++)
		lv__pbw_bytes(&man, 2, "", 0);
	lv__pbw_u64_always(&man, 3, m->version);
	lv__dbuf_init(&ts, 0);
	lv__pbw_u64(&ts, 1, (uint64_t)m->ts_seconds);
	lv__pbw_u64(&ts, 2, (uint64_t)(int64_t)m->ts_nanos);
	lv__pbw_bytes(&man, 7, ts.ptr ? ts.ptr : (uint8_t *)"", ts.len);
	if (m->txn_file)
		lv__pbw_str(&man, 12, m->txn_file);
	if (m->base_path) {
		lv__dbuf bp;
		lv__dbuf_init(&bp, 0);
		lv__pbw_u64(&bp, 1, 1);
		lv__pbw_u64(&bp, 3, 1);
		lv__pbw_str(&bp, 4, m->base_path);
		lv__pbw_bytes(&man, 18, bp.ptr, bp.len);
		lv__dbuf_dispose(&bp);
	}
	if (m->inline_txn)
		lv__pbw_u64_always(&man, 21, 0);
	if (m->extra_len)
		lv__dbuf_add(&man, m->extra, m->extra_len);
	lv__dbuf_init(&file, 0);
	if (m->inline_txn) {
		lv__dbuf_init(&txn, 0);
		lv__pbw_u64(&txn, 1, m->version ? m->version - 1 : 0);
		lv__pbw_str(&txn, 2, "11111111-2222-4333-8444-555555555555");
		for (size_t i = 0; m->props && m->props[i]; i += 2) {
			lv__dbuf e;
			lv__dbuf_init(&e, 0);
			lv__pbw_str(&e, 1, m->props[i]);
			lv__pbw_str(&e, 2, m->props[i + 1]);
			lv__pbw_bytes(&txn, 4, e.ptr, e.len);
			lv__dbuf_dispose(&e);
		}
		lv__pbw_bytes(&txn, 100, "", 0);
		lv__dbuf_add_u32le(&file, (uint32_t)txn.len);
		lv__dbuf_add(&file, txn.ptr, txn.len);
		lv__dbuf_dispose(&txn);
	}
	synth_add_manifest(&file, &man);
	char path[96];
	CHECK(lv_storage_write(st, synth_manifest_path(path, sizeof path, m->version), file.ptr, file.len, &err));
	lv__dbuf_dispose(&man);
	lv__dbuf_dispose(&ts);
	lv__dbuf_dispose(&file);
}

/* A new in-memory store holding the one manifest `m`. */
static lv_storage *one_manifest(const raw_manifest *m)
{
	lv_storage *st = tu_mem();
	put_manifest(st, m);
	return st;
}

static lv_cleanup_policy all_old(void)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.error_if_tagged_old_versions = false;
	p.delete_unverified = true;
	p.now_ms = 1700000000000LL + 3650 * DAY;
	return p;
}

/* ---- paths that leave the dataset ---- */

typedef struct bad_path {
	const char *p;
	size_t n;
} bad_path;

/*
 * On local disk: base/ds is the dataset; files sit where each hostile path
 * would lead (base/x.lance, base/ds/x.lance, base/etc/passwd).  Version 1 (old)
 * references the hostile path; versions 2..3 are normal.  Cleanup must refuse
 * with "would leave the dataset root" and change nothing anywhere.
 */
static void test_escaping_paths(void **state)
{
	(void)state;
	char longp[6000];
	memset(longp, 'a', sizeof longp);
	for (size_t i = 100; i < sizeof longp; i += 100)
		longp[i] = '/';
	static const char nul[] = "ok.lance\0/../../x.lance";
	const bad_path bad[] = {
		{ "../x.lance", 0 }, { "../../x.lance", 0 }, { "data/../../x.lance", 0 },
		{ "a/../../../x.lance", 0 }, { "/etc/passwd", 0 }, { "file:///etc/passwd", 0 },
		{ "s3://bucket/x.lance", 0 }, { "gs://bucket/x.lance", 0 }, { "..\\..\\x.lance", 0 },
		{ "a\\b.lance", 0 }, { "", 0 }, { "./x.lance", 0 }, { "a//b.lance", 0 },
		{ nul, sizeof nul - 1 }, { longp, sizeof longp },
	};
	char base[4096];
	snprintf(base, sizeof base, "%s", tu_tmpdir());
	char cmd[8400];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/ds/data' '%s/etc' && echo v > '%s/x.lance' && echo v > '%s/ds/x.lance' "
		 "&& echo v > '%s/etc/passwd'", base, base, base, base, base);
	assert_int_equal(system(cmd), 0);
	char dsdir[4200];
	snprintf(dsdir, sizeof dsdir, "%s/ds", base);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		lv_storage *st = NULL;
		CHECK(lv_storage_open(&st, dsdir, NULL, &err));
		raw_frag f = { .path = bad[i].p, .path_len = bad[i].n ? bad[i].n : strlen(bad[i].p), .physical_rows = 5 };
		raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1 };
		put_manifest(st, &m);
		for (uint64_t v = 2; v <= 3; v++) {
			synth_commit c = { .version = v, .ts_ms = 1700000000000 + 1000 * (int64_t)v, .read_version = v - 1 };
			CHECK(synth_write(st, &c));
		}
		lv_dataset *ds = tu_open(st);
		/* versions() has no reason to refuse: it does not resolve data paths */
		assert_int_equal(tu_count_versions(ds), 3);
		lv_cleanup_policy p = all_old();
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		int rc = lv_cleanup(ds, &p, &s, &err);
		if (rc != LV_ECORRUPT || !strstr(err.message, "would leave the dataset root"))
			fail_msg("path #%zu: cleanup returned %d: %s", i, rc, err.message);
		/* the message never prints raw control bytes */
		for (const char *q = err.message; *q; q++)
			assert_true((unsigned char)*q >= 0x20);
		char p1[4300];
		struct stat sb;
		snprintf(p1, sizeof p1, "%s/x.lance", base);
		assert_int_equal(stat(p1, &sb), 0);
		snprintf(p1, sizeof p1, "%s/ds/x.lance", base);
		assert_int_equal(stat(p1, &sb), 0);
		snprintf(p1, sizeof p1, "%s/etc/passwd", base);
		assert_int_equal(stat(p1, &sb), 0);
		/* nothing was deleted: all three manifests remain */
		char **names = tu_list_dir(strcat(strcpy(p1, dsdir), "/_versions"));
		size_t n = 0;
		while (names[n])
			n++;
		assert_int_equal(n, 3);
		tu_free_list(names);
		lv_dataset_free(ds);
		lv_storage_free(st);
		snprintf(cmd, sizeof cmd, "rm -rf '%s/_versions' '%s/_transactions' '%s/_checkpoints'", dsdir, dsdir, dsdir);
		assert_int_equal(system(cmd), 0);
	}
	tu_rmrf(base);
}

/* Names that only look like escapes are ordinary names inside data/: cleanup works normally. */
static void test_lookalike_paths(void **state)
{
	(void)state;
	static const char *ok[] = { "%2e%2e/x.lance", "%2E%2E%2Fx.lance", "..x.lance", "x..lance", "....lance", "~/x.lance" };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		raw_frag f = { .path = ok[i], .path_len = strlen(ok[i]), .physical_rows = 5 };
		raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1 };
		lv_storage *st = one_manifest(&m);
		char dp[256];
		snprintf(dp, sizeof dp, "data/%s", ok[i]);
		CHECK(lv_storage_write(st, dp, "x", 1, &err));
		CHECK(lv_storage_write(st, "x.lance", "keep", 4, &err)); /* where %2e%2e would decode to */
		synth_commit c = { .version = 2, .ts_ms = 1700000002000, .read_version = 1 };
		CHECK(synth_write(st, &c));
		tu_set_all_mtimes(st, 1600000000000LL); /* older than every commit */
		lv_dataset *ds = tu_open(st);
		lv_cleanup_policy p = all_old();
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		CHECK(lv_cleanup(ds, &p, &s, &err));
		uint64_t sz;
		if (lv_storage_head(st, dp, &sz, NULL, &err) != LV_ENOTFOUND) /* removed: only v1 used it */
			fail_msg("%s kept (%llu versions removed, %llu data files)", dp, (unsigned long long)s.versions_removed, (unsigned long long)s.files_removed[LV_KIND_DATA]);
		CHECK(lv_storage_head(st, "x.lance", &sz, NULL, &err));
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* A transaction_file name that escapes: versions() refuses it; cleanup refuses too. */
static void test_escaping_transaction_file(void **state)
{
	(void)state;
	static const char *bad[] = { "../../x.txn", "..", "a/b.txn", "a\\b.txn" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		raw_frag f = { .physical_rows = 5 };
		raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1, .txn_file = bad[i] };
		lv_storage *st = one_manifest(&m);
		CHECK(lv_storage_write(st, "x.txn", "keep", 4, &err));
		lv_dataset *ds = tu_open(st);
		lv_version_list *l = NULL;
		int rc = lv_versions(&l, ds, NULL, &err);
		assert_int_equal(rc, LV_ECORRUPT);
		assert_non_null(strstr(err.message, "transaction_file"));
		assert_non_null(strstr(err.message, "_versions/"));
		lv_cleanup_policy p = all_old();
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		assert_true(lv_cleanup(ds, &p, &s, &err) < 0);
		uint64_t sz;
		CHECK(lv_storage_head(st, "x.txn", &sz, NULL, &err));
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/*
 * base_paths pointing outside the root (absolute path, is_dataset_root): files
 * with that base_id belong to another root and are never touched, even when
 * the only version that used them is removed.
 */
static void test_base_paths_outside(void **state)
{
	(void)state;
	char base[4096];
	snprintf(base, sizeof base, "%s", tu_tmpdir());
	char cmd[8400];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/other/data' '%s/ds' && echo v > '%s/other/data/f.lance'", base, base, base);
	assert_int_equal(system(cmd), 0);
	char dsdir[4200], other[4200];
	snprintf(dsdir, sizeof dsdir, "%s/ds", base);
	snprintf(other, sizeof other, "%s/other", base);
	static const char *bases[] = { NULL, "file:///etc", "s3://bucket/x", "../other" };
	for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
		lv_storage *st = NULL;
		CHECK(lv_storage_open(&st, dsdir, NULL, &err));
		raw_frag f = { .base_id = true, .physical_rows = 5, .file_size = 2 };
		raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1,
				   .base_path = bases[i] ? bases[i] : other };
		put_manifest(st, &m);
		/* the same name under our own data/ is ours and unreferenced: it goes */
		CHECK(lv_storage_write(st, "data/f.lance", "mine", 4, &err));
		synth_commit c = { .version = 2, .ts_ms = 1700000002000, .read_version = 1 };
		CHECK(synth_write(st, &c));
		lv_dataset *ds = tu_open(st);
		lv_cleanup_policy p = all_old();
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		CHECK(lv_cleanup(ds, &p, &s, &err));
		assert_int_equal(s.versions_removed, 1);
		char fp[4300];
		struct stat sb;
		snprintf(fp, sizeof fp, "%s/data/f.lance", other);
		assert_int_equal(stat(fp, &sb), 0);
		lv_dataset_free(ds);
		lv_storage_free(st);
		snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dsdir);
		assert_int_equal(system(cmd), 0);
	}
	tu_rmrf(base);
}

/* ---- huge counts and lengths ---- */

static int versions_rc(lv_storage *st, lv_version_list **out)
{
	lv_dataset *ds = tu_open(st);
	int rc = lv_versions(out, ds, NULL, &err);
	lv_dataset_free(ds);
	return rc;
}

/* A manifest message with raw trailing bytes: lengths that run past the buffer. */
static void test_lengths_beyond_buffer(void **state)
{
	(void)state;
	/* field 2 (fragments) LEN 2^60; field 13 LEN 2^32; field 1 LEN 2^64-1; a 2^32 path inside a fragment */
	static const uint8_t huge60[] = { 0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10 };
	static const uint8_t huge32[] = { 0x6a, 0x80, 0x80, 0x80, 0x80, 0x10, 'x' };
	static const uint8_t huge64[] = { 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t tenbyte[] = { 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	static const uint8_t path32[] = { 0x12, 0x08, 0x12, 0x06, 0x0a, 0x80, 0x80, 0x80, 0x80, 0x10 };
	static const uint8_t badwire[] = { 0x1f };
	const struct { const uint8_t *p; size_t n; } extra[] = {
		{ huge60, sizeof huge60 }, { huge32, sizeof huge32 }, { huge64, sizeof huge64 },
		{ tenbyte, sizeof tenbyte }, { path32, sizeof path32 }, { badwire, sizeof badwire },
	};
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .extra = extra[i].p, .extra_len = extra[i].n };
		lv_storage *st = one_manifest(&m);
		lv_version_list *l = NULL;
		int rc = versions_rc(st, &l);
		if (rc >= 0)
			fail_msg("extra #%zu parsed", i);
		assert_non_null(strstr(err.message, "_versions/18446744073709551614.manifest"));
		lv_storage_free(st);
	}
	/* the section length prefix and the footer offset claim more than the file */
	raw_manifest m = { .version = 1, .ts_seconds = 1700000001 };
	lv_storage *st = one_manifest(&m);
	char path[96];
	synth_manifest_path(path, sizeof path, 1);
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, path, &b, &err));
	uint8_t *c = malloc(b.size);
	for (int k = 0; k < 3; k++) {
		memcpy(c, b.ptr, b.size);
		if (k == 0)
			memset(c, 0xff, 4); /* u32 section length 2^32-1 */
		else if (k == 1)
			memset(c + b.size - 16, 0xff, 8); /* footer position u64 max */
		else
			memset(c + b.size - 16, 0x7f, 8);
		CHECK(lv_storage_write(st, path, c, b.size, &err));
		lv_version_list *l = NULL;
		assert_true(versions_rc(st, &l) < 0);
		assert_non_null(strstr(err.message, path));
	}
	free(c);
	lv_buf_dispose(&b);
	lv_storage_free(st);
}

/* A million fragments: counted exactly, in linear time. */
static void test_million_fragments(void **state)
{
	(void)state;
	raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .repeat_empty_frags = 1000000 };
	lv_storage *st = one_manifest(&m);
	lv_version_list *l = NULL;
	CHECK(versions_rc(st, &l));
	assert_int_equal(lv_version_list_get(l, 0)->total_fragments, 1000000);
	assert_int_equal(lv_version_list_get(l, 0)->total_rows, 0);
	lv_version_list_free(l);
	lv_storage_free(st);
}

/*
 * physical_rows / file sizes / deleted rows whose u64 sums overflow: Lance sums
 * in u64 (wrapping in release builds); so do we, without undefined behaviour.
 */
static void test_counter_overflow(void **state)
{
	(void)state;
	const uint64_t big = UINT64_MAX - 1;
	raw_frag f[3] = {
		{ .physical_rows = big, .file_size = big },
		{ .physical_rows = big, .file_size = big },
		{ .physical_rows = 10, .deletion = true, .deleted_rows = UINT64_MAX },
	};
	raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = f, .nfrags = 3 };
	lv_storage *st = one_manifest(&m);
	lv_version_list *l = NULL;
	CHECK(versions_rc(st, &l));
	const lv_version_info *v = lv_version_list_get(l, 0);
	assert_int_equal(v->total_fragments, 3);
	assert_true(v->total_rows == big + big); /* wraps: 2^64 - 4 */
	assert_true(v->total_files_size == big + big);
	assert_true(v->total_deletion_file_rows == UINT64_MAX);
	assert_true(v->total_data_file_rows == v->total_rows + UINT64_MAX);
	lv_version_list_free(l);
	/* the checkpoint stores and returns them exactly */
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	CHECK(lv_history(&l, ds, NULL, &err));
	assert_true(lv_version_list_get(l, 0)->total_rows == big + big);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Absurd and negative timestamps: no overflow, ordered answers, as-of still exact. */
static void test_absurd_timestamps(void **state)
{
	(void)state;
	const struct { int64_t s; int32_t ns; } ts[] = {
		{ INT64_MIN, 0 }, { INT64_MAX, 999999999 }, { -1, -1 }, { 0, INT32_MAX },
		{ -62135596800LL, 0 }, { 253402300800LL, 0 }, { 1700000000, INT32_MIN },
	};
	lv_storage *st = tu_mem();
	for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
		raw_manifest m = { .version = i + 1, .ts_seconds = ts[i].s, .ts_nanos = ts[i].ns };
		put_manifest(st, &m);
	}
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_versions(ds, NULL);
	assert_int_equal(lv_version_list_count(l), sizeof ts / sizeof ts[0]);
	lv_timeline *tl = NULL;
	CHECK(lv_timeline_from_list(&tl, l, &err));
	/* brute force: the newest version with timestamp <= t */
	const int64_t probes[] = { INT64_MIN, -1, 0, 1, 1700000000000LL, INT64_MAX };
	for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
		uint64_t want = 0;
		for (size_t i = 0; i < lv_version_list_count(l); i++)
			if (lv_version_list_get(l, i)->timestamp_millis <= probes[k])
				want = lv_version_list_get(l, i)->version;
		const lv_version_info *got = lv_timeline_as_of(tl, probes[k], false);
		assert_int_equal(got ? got->version : 0, want);
	}
	lv_timeline_free(tl);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	lv_version_list *h = tu_history(ds, NULL);
	for (size_t i = 0; i < lv_version_list_count(l); i++)
		assert_true(lv_version_list_get(h, i)->timestamp_millis == lv_version_list_get(l, i)->timestamp_millis);
	lv_version_list_free(h);
	/* cleanup with an age cutoff at these times */
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 1;
	p.error_if_tagged_old_versions = false;
	p.now_ms = INT64_MIN + 5;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	p.dry_run = true;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	p.now_ms = INT64_MAX;
	p.older_than_ms = INT64_MAX;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Commit times exactly as LanceDB's listVersions() reported them for the same crafted
 * manifests (tests/interop/test_corruption.mjs, "absurd timestamps"). */
static void test_timestamps_like_lance(void **state)
{
	(void)state;
	const struct { int64_t s; int32_t ns; int64_t want; } c[] = {
		{ -1, 0, 0 }, { -1, 999999999, 0 }, { -62135596800LL, 0, 0 },
		{ 253402300800LL, 0, 253402300800000LL }, { 8640000000000LL, 0, 0 },
		{ 1LL << 40, 5, (1LL << 40) * 1000 }, { -(1LL << 40), 0, 0 }, { INT64_MAX, 999999999, 0 },
		{ INT64_MIN, 0, 0 }, { 8210266876799LL, 999999999, 8210266876800000LL }, { 8210266876800LL, 0, 0 },
		{ 9223372036LL, 854775807, 9223372036854LL }, { 0, INT32_MAX, 2147 },
		{ 1796232069, INT32_MIN, 1796232066852LL }, { 1796232069, 999999999, 1796232069999LL },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		lv__manifest m;
		memset(&m, 0, sizeof m);
		m.ts_seconds = c[i].s;
		m.ts_nanos = c[i].ns;
		int64_t got = lv__manifest_ts_millis(&m, NULL);
		if (got != c[i].want)
			fail_msg("%lld s %d ns: %lld ms, Lance says %lld", (long long)c[i].s, c[i].ns, (long long)got,
				 (long long)c[i].want);
	}
}

/* Versions at the top of the u64 range: listing, show, checkpoint, history, cleanup. */
static void test_version_u64_max(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	const uint64_t vs[] = { 1, UINT64_MAX - 1, UINT64_MAX };
	for (size_t i = 0; i < 3; i++) {
		raw_frag f = { .physical_rows = 1 };
		raw_manifest m = { .version = vs[i], .ts_seconds = 1700000001 + (int64_t)i, .frags = &f, .nfrags = 1,
				   .inline_txn = true };
		put_manifest(st, &m);
	}
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_versions(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 3);
	assert_true(lv_version_list_get(l, 2)->version == UINT64_MAX);
	lv_version_list_free(l);
	CHECK(lv_version_get(&l, ds, UINT64_MAX, &err));
	lv_version_list_free(l);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_string_equal(r.path, "_checkpoints/18446744073709551615.lance");
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	CHECK(lv_history(&l, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(lv_version_list_count(l), 3);
	lv_version_list_free(l);
	assert_int_equal(tu_cleanup_retain(ds, 1, 0, NULL).versions_removed, 2);
	CHECK(lv_history(&l, ds, &rep, &err));
	assert_int_equal(lv_version_list_count(l), 3);
	assert_true(lv_version_list_get(l, 0)->is_cleaned_up);
	assert_false(lv_version_list_get(l, 2)->is_cleaned_up);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* ---- deep nesting ---- */

/* An unknown manifest field holding a message nested 100,000 deep: skipped, no recursion. */
static void test_deep_protobuf(void **state)
{
	(void)state;
	const size_t depth = 100000;
	/* field 1 (LEN) wrapping field 1 wrapping ... an empty message, built in O(depth):
	 * len[k] is the size of level k's content; headers are written outermost first. */
	size_t *len = malloc((depth + 1) * sizeof *len);
	len[0] = 0;
	for (size_t k = 1; k <= depth; k++) {
		size_t v = len[k - 1], vl = 1;
		while (v >= 0x80) {
			v >>= 7;
			vl++;
		}
		len[k] = 1 + vl + len[k - 1];
	}
	lv__dbuf inner;
	lv__dbuf_init(&inner, 0);
	for (size_t k = depth; k >= 1; k--) {
		lv__pbw_tag(&inner, 1, LV_PB_LEN);
		lv__pbw_varint(&inner, len[k - 1]);
	}
	assert_int_equal(inner.len, len[depth]);
	free(len);
	lv__dbuf field;
	lv__dbuf_init(&field, 0);
	lv__pbw_bytes(&field, 99, inner.ptr, inner.len);           /* unknown manifest field */
	lv__dbuf schema;                                           /* a schema Field with it in an unknown field */
	lv__dbuf_init(&schema, 0);
	lv__pbw_str(&schema, 2, "id");
	lv__pbw_bytes(&schema, 50, inner.ptr, inner.len);
	lv__pbw_bytes(&field, 1, schema.ptr, schema.len);
	lv__dbuf_dispose(&schema);
	raw_frag f = { .physical_rows = 3 };
	raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1,
			   .extra = field.ptr, .extra_len = field.len };
	lv_storage *st = one_manifest(&m);
	lv_version_list *l = NULL;
	CHECK(versions_rc(st, &l));
	assert_int_equal(lv_version_list_get(l, 0)->total_rows, 3);
	lv_version_list_free(l);
	/* the nesting where a schema Field's varint `type` (field 1) should be: malformed, as for prost */
	lv__dbuf_dispose(&field);
	lv__dbuf_init(&field, 0);
	lv__pbw_bytes(&field, 1, inner.ptr, inner.len);
	raw_manifest m2 = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1,
			    .extra = field.ptr, .extra_len = field.len };
	put_manifest(st, &m2);
	assert_int_equal(versions_rc(st, &l), LV_ECORRUPT);
	assert_non_null(strstr(err.message, "18446744073709551614.manifest"));
	lv__dbuf_dispose(&field);
	lv__dbuf_dispose(&inner);
	lv_storage_free(st);
}

static char *deep_json(size_t depth)
{
	char *s = malloc(2 * depth + 1);
	memset(s, '[', depth);
	memset(s + depth, ']', depth);
	s[2 * depth] = 0;
	return s;
}

/* A tag file nested 100,000 deep: an error naming the file, never a stack overflow. */
static void test_deep_json_tag(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(2, 1700000000000);
	char *j = deep_json(100000);
	CHECK(lv_storage_write(st, "_refs/tags/deep.json", j, strlen(j), &err));
	/* the same depth inside an otherwise valid tag object */
	char *obj = malloc(strlen(j) + 64);
	sprintf(obj, "{\"version\": 1, \"branch\": null, \"metadata\": %s}", j);
	CHECK(lv_storage_write(st, "_refs/tags/deep2.json", obj, strlen(obj), &err));
	lv_dataset *ds = tu_open(st);
	lv_refs *r = NULL;
	int rc = lv_refs_load(&r, ds, &err);
	if (rc == 0) {
		/* a tolerant loader may skip the bad files; then neither may count as a tag */
		for (size_t i = 0; i < lv_refs_tag_count(r); i++)
			assert_true(strncmp(lv_refs_tag(r, i)->name, "deep", 4) != 0);
		lv_refs_free(r);
	} else {
		assert_non_null(strstr(err.message, "_refs/tags/deep"));
	}
	lv_version_list *l = NULL;
	rc = lv_versions(&l, ds, NULL, &err);
	if (rc == 0)
		lv_version_list_free(l);
	else
		assert_non_null(strstr(err.message, "_refs/tags/deep"));
	lv_dataset_free(ds);
	free(obj);
	free(j);
	lv_storage_free(st);
}

/*
 * A transaction property whose value is JSON nested 100,000 deep (and a 1 MB
 * key): a string to us, escaped into the properties object; the checkpoint
 * wraps it (over 10 KB) and history returns that wrapper as valid JSON.
 */
static void test_deep_json_property(void **state)
{
	(void)state;
	char *j = deep_json(100000);
	char *key = malloc(1 << 20);
	memset(key, 'k', (1 << 20) - 1);
	key[(1 << 20) - 1] = 0;
	const char *props[] = { "deep", j, key, "v", NULL };
	raw_frag f = { .physical_rows = 1 };
	raw_manifest m = { .version = 1, .ts_seconds = 1700000001, .frags = &f, .nfrags = 1, .inline_txn = true,
			   .props = props };
	lv_storage *st = one_manifest(&m);
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_versions(ds, NULL);
	const char *tp = lv_version_list_get(l, 0)->transaction_properties;
	assert_non_null(strstr(tp, "\"deep\":\"[[[["));
	lv_version_list_free(l);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	CHECK(lv_history(&l, ds, &rep, &err));
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	/* from the checkpoint the versions row is the manifest's again; history carries the wrapper */
	tp = lv_version_list_get(l, 0)->transaction_properties;
	assert_true(strlen(tp) <= LV_PROPERTIES_LIMIT);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	free(key);
	free(j);
	lv_storage_free(st);
}

/* ---- Lance files with absurd counts and positions ---- */

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A valid Lance file (2.0 and 2.1, several pages per column) whose footer, CMO
 * and GBO tables claim 2^32-1 columns or buffers, positions near 2^63 and sizes
 * of 2^60 (not the footer's CMO position, which Lance's reader ignores, and so
 * does ours): every one is an error naming the file, with no huge allocation
 * (ASan would report one) and no out-of-bounds read.  The same bytes as the
 * newest checkpoint of a dataset are rejected and the answer comes from the
 * manifests.
 */
static void test_absurd_lance_files(void **state)
{
	(void)state;
	uint64_t vals[300];
	for (size_t i = 0; i < 300; i++)
		vals[i] = i * 7;
	lv_column col = { .name = "version", .type = LV_COL_UINT64, .u64 = vals };
	for (int ver = 0; ver < 2; ver++) {
		lv_lancefile_write_options o = LV_LANCEFILE_WRITE_OPTIONS_INIT;
		o.file_version = ver ? LV_LANCEFILE_V2_1 : LV_LANCEFILE_V2_0;
		o.max_page_rows = 50;
		lv_buf good = { 0 };
		CHECK(lv_lancefile_write(&good, &col, 1, 300, NULL, 0, &o, &err));
		size_t n = good.size;
		const uint8_t *f = good.ptr + n - 40;
		uint64_t cmo = 0, gbo = 0;
		for (int i = 7; i >= 0; i--) {
			cmo = cmo << 8 | f[8 + i];
			gbo = gbo << 8 | f[16 + i];
		}
		const struct { size_t off; uint64_t v; int w; } patch[] = {
			{ n - 40 + 28, 0xffffffffu, 4 },              /* columns */
			{ n - 40 + 24, 0xffffffffu, 4 },              /* global buffers */
			{ n - 40 + 24, 0, 4 },                        /* no schema buffer */
			{ n - 40 + 0, (uint64_t)1 << 63, 8 },         /* column metadata start */
			{ n - 40 + 16, UINT64_MAX - 7, 8 },           /* GBO table position */
			{ cmo, (uint64_t)1 << 62, 8 },                /* column 0 metadata position */
			{ cmo + 8, (uint64_t)1 << 60, 8 },            /* column 0 metadata size */
			{ gbo, UINT64_MAX, 8 },                       /* schema buffer position */
			{ gbo + 8, (uint64_t)1 << 60, 8 },            /* schema buffer size */
			{ n - 40 + 32, 0xffff, 2 },                   /* major version */
		};
		uint8_t *bad = malloc(n);
		for (size_t i = 0; i < sizeof patch / sizeof patch[0]; i++) {
			memcpy(bad, good.ptr, n);
			put_le(bad + patch[i].off, patch[i].v, patch[i].w);
			lv_lancefile *lf = NULL;
			lv_error e = { 0 };
			int rc = lv_lancefile_read(&lf, bad, n, "absurd.lance", &e);
			if (rc == 0)
				fail_msg("v2.%d patch #%zu read OK", ver, i);
			assert_non_null(strstr(e.message, "absurd.lance"));
			/* as the newest checkpoint: rejected, the manifests answer */
			lv_storage *st = synth_mem_series(3, 1700000000000);
			CHECK(lv_storage_write(st, "_checkpoints/00000000000000000003.lance", bad, n, &err));
			tu_expect_history_rung(st, LV_RUNG_MANIFESTS, 3);
			lv_storage_free(st);
		}
		free(bad);
		lv_buf_dispose(&good);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping_paths),
		cmocka_unit_test(test_lookalike_paths),
		cmocka_unit_test(test_escaping_transaction_file),
		cmocka_unit_test(test_base_paths_outside),
		cmocka_unit_test(test_lengths_beyond_buffer),
		cmocka_unit_test(test_million_fragments),
		cmocka_unit_test(test_counter_overflow),
		cmocka_unit_test(test_absurd_timestamps),
		cmocka_unit_test(test_timestamps_like_lance),
		cmocka_unit_test(test_version_u64_max),
		cmocka_unit_test(test_deep_protobuf),
		cmocka_unit_test(test_deep_json_tag),
		cmocka_unit_test(test_deep_json_property),
		cmocka_unit_test(test_absurd_lance_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
