/*
 * What changed after Lance 12 (issue 25 section 2), on synthetic manifests: feature flags
 * above 128 (named; 128 and 256 read and cleaned, newer bits refused by cleanup), operations
 * newer than 115 (Unknown(N), never a failure), overlay data files referenced, blob sidecars
 * and .tmp leftovers, the version hint's floor, failed deletes counted (and an older caller's
 * stats struct never written past its end).  The same rules against pylance 14.0.2 itself:
 * tests/interop/lance14/test_cleanup_files.py.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cleanup/cleanup_int.h"
#include "format/manifest.h"
#include "lancever/lancever.h"
#include "lancever/sys/testing.h"
#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

#define DAY (86400000LL)
#define BASE 1700000000000LL

static lv_dataset *open_ds(lv_storage *st)
{
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, NULL, &err));
	return ds;
}

static bool exists(lv_storage *st, const char *path)
{
	uint64_t sz;
	lv_error e = { 0 };
	return lv_storage_head(st, path, &sz, NULL, &e) == 0;
}

/* Versions 1..n (data/f<v>.lance each), the newest with `last` as its commit; 30 days old. */
static lv_storage *series_with(uint64_t n, const synth_commit *last)
{
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	for (uint64_t v = 1; v <= n; v++) {
		char dp[32], full[48];
		snprintf(dp, sizeof dp, "f%llu.lance", (unsigned long long)v);
		synth_commit c = { .version = v, .ts_ms = BASE + (int64_t)v * 1000, .read_version = v - 1,
				   .data_path = dp };
		if (v == n && last) {
			c = *last;
			c.version = v, c.ts_ms = BASE + (int64_t)v * 1000, c.read_version = v - 1;
			c.data_path = dp;
		}
		CHECK(synth_write(st, &c));
		snprintf(full, sizeof full, "data/%s", dp);
		CHECK(lv_storage_write(st, full, "xy", 2, &err));
	}
	tu_set_all_mtimes(st, BASE - 30 * DAY);
	return st;
}

static lv_cleanup_policy all_old(void)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.now_ms = BASE + 30 * DAY;
	return p;
}

/* Every bit Lance releases use has a name; an unused bit has none. */
static void test_flag_names(void **state)
{
	(void)state;
	static const char *const want[] = { "deletion_files", "stable_row_ids",
		"use_v2_format_deprecated", "table_config", "base_paths", "disable_transaction_file",
		"unstable_data_overlay_files", "covered_index_metadata", "mixed_data_file_versions",
		"frag_reuse_with_stable_row_ids", "fragment_reuse_index",
		"semantic_types_or_managed_blobs" };
	for (unsigned b = 0; b < sizeof want / sizeof want[0]; b++)
		assert_string_equal(lv_feature_flag_name(b), want[b]);
	assert_null(lv_feature_flag_name(12));
	assert_null(lv_feature_flag_name(63));
	assert_null(lv_feature_flag_name(1000));
}

/*
 * 128 (covering-index metadata) and 256 (mixed data-file versions, with its reader flag) are
 * read and cleaned; 512, 1024, 2048 and above stop a cleanup (a dry run too) before anything
 * changes, naming the bits; as reader flags they are refused by every read.
 */
static void test_flags_above_128(void **state)
{
	(void)state;
	static const struct { uint64_t rf, wf; int rc; const char *msg; } cases[] = {
		{ 128, 128, 0, NULL },
		{ 256, 256, 0, NULL },
		{ 128 | 256 | 2, 128 | 256 | 2, 0, NULL },
		{ 0, 512, LV_EUNSUPPORTED, "bit 9" },
		{ 0, 1024 | 128, LV_EUNSUPPORTED, "bit 10" },
		{ 0, 2048, LV_EUNSUPPORTED, "bit 11" },
		{ 512, 512, LV_EUNSUPPORTED, "unknown reader feature flags" },
		{ 256, 0, LV_ECORRUPT, "(256)" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		synth_commit last = { .reader_flags = cases[c].rf, .writer_flags = cases[c].wf };
		lv_storage *st = series_with(4, &last);
		lv_dataset *ds = open_ds(st);
		char *before = tu_snapshot(st);
		lv_cleanup_policy p = all_old();
		for (int dry = 1; dry >= 0; dry--) {
			p.dry_run = dry;
			lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
			lv_error e = { 0 };
			int rc = lv_cleanup(ds, &p, &s, &e);
			assert_int_equal(rc, cases[c].rc);
			if (rc) {
				assert_non_null(strstr(e.message, cases[c].msg));
				tu_expect_unchanged(st, before);
			} else {
				assert_int_equal(s.versions_removed, 3);
			}
		}
		free(before);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* Operations after 115 (116 is contested upstream; pylance 14.0.2 names none past
 * DataOverlay) read as Unknown(N): history and versions list them, never fail. */
static void test_new_operations(void **state)
{
	(void)state;
	static const uint32_t ops[] = { 115, 116, 117, 150, 199 };
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	for (uint64_t v = 1; v <= 5; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE + (int64_t)v * 1000, .read_version = v - 1,
				   .op_field = ops[v - 1], .txn_file_only = v == 3 };
		CHECK(synth_write(st, &c));
	}
	lv_dataset *ds = open_ds(st);
	lv_version_list *l = tu_versions(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 5);
	static const char *const names[] = { "DataOverlay", "Unknown(116)", "Unknown(117)",
					     "Unknown(150)", "Unknown(199)" };
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(lv_version_list_get(l, i)->operation_type, names[i]);
	lv_version_list_free(l);
	l = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(l), 5);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

typedef struct visited {
	char paths[8][64];
	size_t n;
} visited;

static int on_data(const lv__data_file_ref *f, void *payload)
{
	visited *v = payload;
	if (v->n < 8)
		snprintf(v->paths[v->n++], 64, "%.*s", (int)f->path.n, f->path.p);
	return 0;
}

/* An overlay's data file (DataFragment.overlays, field 11) is a referenced data file: reported
 * to the visitor, not counted in the summary (as Lance 14's summary), kept by cleanup while a
 * kept version's fragment has it. */
static void test_overlay_files(void **state)
{
	(void)state;
	synth_commit last = { .overlay_path = "ov.lance" };
	lv_storage *st = series_with(3, &last);
	CHECK(lv_storage_write(st, "data/ov.lance", "ov", 2, &err));
	CHECK(lv_storage_write(st, "data/ov-orphan.lance", "ov", 2, &err));
	tu_set_all_mtimes(st, BASE - 30 * DAY);
	char mp[96];
	lv_buf b = tu_read(st, synth_manifest_path(mp, sizeof mp, 3));
	visited v = { 0 };
	lv__manifest_visitor vis = { on_data, NULL, NULL, &v };
	lv__manifest m;
	CHECK(lv__manifest_parse(b.ptr, b.size, mp, &vis, &m, &err));
	assert_int_equal(v.n, 2);
	assert_string_equal(v.paths[0], "f3.lance");
	assert_string_equal(v.paths[1], "ov.lance");
	assert_int_equal(m.summary.total_data_files, 1);
	assert_int_equal(m.summary.total_files_size, 1003);
	lv_buf_dispose(&b);
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = all_old();
	p.delete_unverified = true;
	CHECK(lv_cleanup(ds, &p, NULL, &err));
	assert_true(exists(st, "data/ov.lance") && exists(st, "data/f3.lance"));
	assert_false(exists(st, "data/ov-orphan.lance") || exists(st, "data/f1.lance"));
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Which rule a listed path falls under, and its key. */
static void test_classify(void **state)
{
	(void)state;
	static const struct { const char *path; int kind; const char *key; bool tmp; } cases[] = {
		{ "data/k.lance", LV_KIND_DATA, "data/k.lance", false },
		{ "data/k/00000000000000000000000000000001.blob", LV_KIND_DATA, "data/k.lance", false },
		{ "data/k/x.blob", LV_KIND_DATA, "data/k.lance", false },
		{ "data/k/sub/x.blob", -1, NULL, false },
		{ "data/k/x.pack", -1, NULL, false },
		{ "data/.tmp_abc", LV_KIND_DATA, "data/.tmp_abc", true },
		{ "data/k/.tmp_abc", LV_KIND_DATA, "data/k/.tmp_abc", true },
		{ "data/k/sub/.tmp_abc", -1, NULL, false },
		{ "data/notes.txt", -1, NULL, false },
		{ "_versions/.tmp_x", LV_KIND_TEMP, "_versions/.tmp_x", true },
		{ "_versions/5.manifest-0b6d5d6e-2b6b-4b68-9b9e-9a7c5bb0a3f1", -1, NULL, false },
		{ "_indices/u/part.idx", LV_KIND_INDEX, "_indices/u", false },
		{ "_blobs/x.blob", -1, NULL, false },
		{ "_fri/m/stable_partition.lance", -1, NULL, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char key[256];
		bool tmp = !cases[i].tmp;
		int kind = lv__classify(cases[i].path, key, sizeof key, &tmp);
		assert_int_equal(kind, cases[i].kind);
		if (kind >= 0) {
			assert_string_equal(key, cases[i].key);
			assert_int_equal(tmp, cases[i].tmp);
		}
	}
}

/* Sidecars follow their data file; .tmp leftovers go only when unverified-old. */
static void test_sidecars_and_tmp(void **state)
{
	(void)state;
	lv_storage *st = series_with(3, NULL);
	static const char *const files[] = { "data/f1/00000000000000000000000000000001.blob",
		"data/f3/00000000000000000000000000000001.blob", "data/orphan/1.blob",
		"data/.tmp_old", "data/f3/.tmp_old", "data/f3/.tmp_new", "_versions/.tmp_new" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		CHECK(lv_storage_write(st, files[i], "blob", 4, &err));
	tu_set_all_mtimes(st, BASE - 30 * DAY);
	/* the new ones: an hour old at the cleanup's clock */
	CHECK(lv_storage_mem_set_mtime(st, "data/f3/.tmp_new", BASE + 30 * DAY - 3600000, &err));
	CHECK(lv_storage_mem_set_mtime(st, "_versions/.tmp_new", BASE + 30 * DAY - 3600000, &err));
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = all_old();
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_false(exists(st, files[0])); /* f1 went: so did its sidecar (verified) */
	assert_true(exists(st, files[1]));  /* f3 is the latest's */
	assert_false(exists(st, files[2])); /* unreferenced parent, 30 days old */
	assert_false(exists(st, files[3]) || exists(st, files[4]));
	assert_true(exists(st, files[5]) && exists(st, files[6])); /* young: may be in progress */
	/* f1, f2, f1's sidecar, the orphan sidecar, the two old .tmp files: data, as Lance counts */
	assert_int_equal(s.files_removed[LV_KIND_DATA], 6);
	lv_dataset_free(ds);
	/* with delete_unverified: both are newer than the earliest kept manifest (the cutoff of
	 * _versions/, and of data/ for lancever: Lance 14 drops data/'s then) and stay */
	ds = open_ds(st);
	p.delete_unverified = true;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_true(exists(st, files[5]) && exists(st, files[6]));
	/* once older than the earliest kept manifest they go */
	CHECK(lv_storage_mem_set_mtime(st, "data/f3/.tmp_new", BASE, &err));
	CHECK(lv_storage_mem_set_mtime(st, "_versions/.tmp_new", BASE, &err));
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_false(exists(st, files[5]) || exists(st, files[6]));
	assert_true(exists(st, files[1]));
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void write_hint(lv_storage *st, const char *body)
{
	CHECK(lv_storage_write(st, "_versions/latest_version_hint.json", body, strlen(body), &err));
}

/* No manifest at or above the hint's version goes (cleanup, expire, any policy); a hint that
 * does not parse stops both before anything changes. */
static void test_version_hint(void **state)
{
	(void)state;
	for (int expire = 0; expire < 2; expire++) {
		lv_storage *st = series_with(10, NULL);
		write_hint(st, "{\"version\":5}");
		lv_dataset *ds = open_ds(st);
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		if (expire) {
			lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
			p.older_than_ms = 0;
			p.now_ms = BASE + 30 * DAY;
			CHECK(lv_expire(ds, &p, &s, &err));
		} else {
			lv_cleanup_policy p = all_old();
			uint64_t list[] = { 2, 6, 7 };
			p.versions = list;
			p.nversions = 3;
			CHECK(lv_cleanup(ds, &p, &s, &err));
			assert_int_equal(s.versions_removed, 1); /* 2; never 6 or 7 */
			p.versions = NULL;
			p.nversions = 0;
			CHECK(lv_cleanup(ds, &p, &s, &err));
		}
		lv_version_list *l = tu_versions(ds, NULL);
		assert_int_equal(lv_version_list_count(l), 6); /* 5..10 */
		assert_int_equal(lv_version_list_get(l, 0)->version, 5);
		lv_version_list_free(l);
		/* a hint that does not parse */
		static const char *const bad[] = { "{\"version\":\"7\"}", "{}", "[7]", "nope" };
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			write_hint(st, bad[i]);
			char *before = tu_snapshot(st);
			lv_error e = { 0 };
			int rc;
			if (expire) {
				lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
				p.older_than_ms = 0;
				p.now_ms = BASE + 30 * DAY;
				rc = lv_expire(ds, &p, NULL, &e);
			} else {
				lv_cleanup_policy p = all_old();
				rc = lv_cleanup(ds, &p, NULL, &e);
			}
			assert_int_equal(rc, LV_ECORRUPT);
			assert_non_null(strstr(e.message, "version hint"));
			tu_expect_unchanged(st, before); /* expire: not even a checkpoint */
			free(before);
		}
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* A delete the store refuses is counted and the run goes on (Lance 14): every other file
 * goes, the refused ones stay. */
static void test_failed_deletes(void **state)
{
	(void)state;
	lv_storage *inner = series_with(6, NULL), *st = NULL;
	lv_fault_spec spec = { LV_FAULT_DELETE, 1, true, LV_FAULT_FAIL, "data/" };
	CHECK(lv_storage_fault_wrap(&st, inner, &spec, &err));
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = all_old();
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.failed_deletes, 5);
	assert_int_equal(s.files_removed[LV_KIND_DATA], 0);
	assert_int_equal(s.versions_removed, 5);
	for (int v = 1; v <= 5; v++) {
		char dp[32];
		snprintf(dp, sizeof dp, "data/f%d.lance", v);
		assert_true(exists(st, dp));
	}
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A caller built against an older header (policy version 4, expire policy version 2) has a
 * stats struct without a version field: refused with LV_EINVALID, nothing written to it (on
 * the heap at its old size, a write past the end is caught by ASan) and nothing removed. */
static void test_stats_older_layout(void **state)
{
	(void)state;
	for (int expire = 0; expire < 2; expire++) {
		lv_storage *st = series_with(4, NULL);
		lv_dataset *ds = open_ds(st);
		size_t old = offsetof(lv_cleanup_stats, failed_deletes) - sizeof(uint64_t);
		unsigned char *buf = malloc(old);
		memset(buf, 0, old); /* what an old caller's `= {0}` gives: version 0 */
		lv_error e = { 0 };
		if (expire) {
			lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
			p.version = 2;
			p.older_than_ms = 0;
			p.now_ms = BASE + 30 * DAY;
			assert_int_equal(lv_expire(ds, &p, (lv_cleanup_stats *)(void *)buf, &e), LV_EINVALID);
			p.version = LV_EXPIRE_POLICY_VERSION; /* a current policy, the old stats */
			assert_int_equal(lv_expire(ds, &p, (lv_cleanup_stats *)(void *)buf, &e), LV_EINVALID);
		} else {
			lv_cleanup_policy p = all_old();
			p.version = 4;
			assert_int_equal(lv_cleanup(ds, &p, (lv_cleanup_stats *)(void *)buf, &e), LV_EINVALID);
			p.version = LV_CLEANUP_POLICY_VERSION;
			assert_int_equal(lv_cleanup(ds, &p, (lv_cleanup_stats *)(void *)buf, &e), LV_EINVALID);
		}
		assert_non_null(strstr(e.message, "lv_cleanup_stats: version is 0"));
		for (size_t i = 0; i < old; i++)
			assert_int_equal(buf[i], 0);
		lv_version_list *l = tu_versions(ds, NULL); /* nothing removed */
		assert_int_equal(lv_version_list_count(l), 4);
		lv_version_list_free(l);
		free(buf);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flag_names),
		cmocka_unit_test(test_flags_above_128),
		cmocka_unit_test(test_new_operations),
		cmocka_unit_test(test_overlay_files),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_sidecars_and_tmp),
		cmocka_unit_test(test_version_hint),
		cmocka_unit_test(test_failed_deletes),
		cmocka_unit_test(test_stats_older_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
