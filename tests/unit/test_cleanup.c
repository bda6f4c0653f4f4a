/* Unit tests: cleanup policy, Lance's file rules, safety, and a storage-fault sweep. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lancever/lancever.h>
#include <lancever/sys/testing.h>

#include "format/manifest.h"
#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"
#include "util/util.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

#define DAY (86400000LL)
/* t.lance (Lance 8.0.0): v1 Overwrite, v2 Append, v3 Delete (tag keep3), v4 Update,
 * v5 CreateIndex, v6 Overwrite; committed 2026-12-02T17:21:09.975Z .. .996Z */
#define T_LATEST_MS 1796232069996LL

static lv_dataset *open_ds(lv_storage *st)
{
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, NULL, &err));
	return ds;
}

static lv_cleanup_policy policy_all_old(void)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.error_if_tagged_old_versions = false;
	p.now_ms = T_LATEST_MS + 30 * DAY;
	return p;
}

/* Every file the manifest at `path` references (data, deletion, txn) must exist. */
typedef struct ref_check {
	lv_storage *st;
	const char *manifest;
	int missing;
} ref_check;

static void must_exist(ref_check *c, const char *path)
{
	uint64_t sz;
	lv_error e = { 0 };
	if (lv_storage_head(c->st, path, &sz, NULL, &e) != 0) {
		fprintf(stderr, "  %s references missing %s\n", c->manifest, path);
		c->missing++;
	}
}

static int rc_data(const lv__data_file_ref *f, void *p)
{
	char path[600];
	snprintf(path, sizeof path, "data/%.*s", (int)f->path.n, f->path.p);
	must_exist(p, path);
	return 0;
}

static int rc_del(const lv__deletion_ref *d, void *p)
{
	char path[200];
	snprintf(path, sizeof path, "_deletions/%llu-%llu-%llu.%s", (unsigned long long)d->fragment_id,
		 (unsigned long long)d->read_version, (unsigned long long)d->id,
		 d->file_type ? "bin" : "arrow");
	must_exist(p, path);
	return 0;
}

/*
 * Live manifests of the store; each one not in `doomed` (versions an
 * interrupted cleanup was removing) must be complete.
 */
static size_t check_retained_complete(lv_storage *st, const bool *doomed)
{
	lv_dataset *ds = open_ds(st);
	lv_version_list *l = tu_versions(ds, NULL);
	size_t n = lv_version_list_count(l);
	for (size_t i = 0; i < n; i++) {
		if (doomed && doomed[lv_version_list_get(l, i)->version])
			continue;
		/* from the manifest itself (a checkpoint row carries no manifest path) */
		lv_version_list *one = NULL;
		CHECK(lv_version_get(&one, ds, lv_version_list_get(l, i)->version, &err));
		const lv_version_info *v = lv_version_list_get(one, 0);
		lv_buf b = { 0 };
		CHECK(lv_storage_read(st, v->manifest_path, &b, &err));
		ref_check c = { st, v->manifest_path, 0 };
		lv__manifest_visitor vis = { rc_data, rc_del, NULL, &c };
		lv__manifest m;
		CHECK(lv__manifest_parse(b.ptr, b.size, v->manifest_path, &vis, &m, &err));
		if (v->transaction_file) {
			char tp[400];
			snprintf(tp, sizeof tp, "_transactions/%s", v->transaction_file);
			must_exist(&c, tp);
		}
		lv_buf_dispose(&b);
		if (c.missing)
			fail_msg("version %llu is incomplete", (unsigned long long)v->version);
		lv_version_list_free(one);
	}
	lv_version_list_free(l);
	lv_dataset_free(ds);
	return n;
}

static void expect_history(lv_storage *st, size_t n, const bool *cleaned)
{
	lv_dataset *ds = open_ds(st);
	lv_version_list *l = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(l), n);
	for (size_t i = 0; cleaned && i < n; i++)
		assert_int_equal(lv_version_list_get(l, i)->is_cleaned_up, cleaned[i]);
	lv_version_list_free(l);
	lv_dataset_free(ds);
}

static void test_real_dataset(void **state)
{
	(void)state;
	lv_storage *st = tu_mem_copy("lance8/t.lance");
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = policy_all_old();
	lv_cleanup_stats dry = LV_CLEANUP_STATS_INIT, s = LV_CLEANUP_STATS_INIT;
	p.dry_run = true;
	char *before = tu_snapshot(st);
	CHECK(lv_cleanup(ds, &p, &dry, &err));
	tu_expect_unchanged(st, before); /* a dry run changes nothing */
	p.dry_run = false;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_total, 6);
	assert_int_equal(s.versions_removed, 4); /* 1, 2, 4, 5; 3 is tagged, 6 is latest */
	assert_true(s.checkpoint_written);
	assert_int_equal(s.versions_archived, 6);
	for (int k = 0; k < LV_KIND_COUNT; k++) {
		assert_int_equal(dry.files_removed[k], s.files_removed[k]);
		assert_int_equal(dry.bytes_removed[k], s.bytes_removed[k]);
	}
	assert_int_equal(s.files_removed[LV_KIND_MANIFEST], 4);
	assert_int_equal(s.files_removed[LV_KIND_TRANSACTION], 4);
	assert_int_equal(s.files_removed[LV_KIND_INDEX], 2);     /* v5's btree: only v5 had it */
	assert_int_equal(s.files_removed[LV_KIND_DELETION], 1);  /* v4's; v3's is still in use */
	assert_int_equal(check_retained_complete(st, NULL), 2);
	bool cl[6] = { true, true, false, true, true, false };
	expect_history(st, 6, cl);
	/* a rerun has nothing left to do */
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 0);
	assert_int_equal(s.files_removed[LV_KIND_DATA] + s.files_removed[LV_KIND_DELETION], 0);
	free(before);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_tagged_refusal(void **state)
{
	(void)state;
	lv_storage *st = tu_mem_copy("lance8/t.lance");
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = policy_all_old();
	p.error_if_tagged_old_versions = true;
	char *before = tu_snapshot(st);
	assert_int_equal(lv_cleanup(ds, &p, NULL, &err), LV_ETAGGED);
	assert_non_null(strstr(err.message, "\"keep3\": 3"));
	tu_expect_unchanged(st, before);
	free(before);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_policy_selection(void **state)
{
	(void)state;
	struct { int64_t older; int64_t retain; uint64_t before; size_t removed; } cases[] = {
		{ -1, 3, 0, 7 },           /* keep the newest 3 of 10 */
		{ -1, -1, 4, 3 },          /* versions < 4 */
		{ -1, 20, 0, 0 },          /* retain more than exist */
		{ 0, 3, 5, 4 },            /* AND: < 5 and not among the newest 3 */
		{ 5500, -1, 0, 5 },        /* committed before now - 5.5 s: v1..v5 (now = v10 + 1 s) */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		lv_storage *st = synth_mem_series(10, 1700000000000);
		lv_dataset *ds = open_ds(st);
		lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
		p.older_than_ms = cases[c].older;
		p.retain_versions = cases[c].retain;
		p.before_version = cases[c].before;
		p.now_ms = 1700000011000;
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		CHECK(lv_cleanup(ds, &p, &s, &err));
		if (s.versions_removed != cases[c].removed)
			fail_msg("case %zu removed %llu", c, (unsigned long long)s.versions_removed);
		expect_history(st, 10, NULL);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
	/* no condition given: older than 7 days */
	lv_storage *st = synth_mem_series(5, 1700000000000);
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.now_ms = 1700000000000 + 3000 + 7 * DAY; /* v1, v2 are older than 7 days */
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 2);
	p.retain_versions = 0;
	assert_int_equal(lv_cleanup(ds, &p, &s, &err), LV_EINVALID);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Unreferenced files: 7-day rule, delete_unverified, and the kept-suffix cutoff. */
static void test_unverified_rules(void **state)
{
	(void)state;
	int64_t base = 1700000000000, now = base + 30 * DAY;
	lv_storage *st = tu_mem();
	for (uint64_t v = 1; v <= 3; v++) {
		char dp[32];
		snprintf(dp, sizeof dp, "f%llu.lance", (unsigned long long)v);
		synth_commit c = { .version = v, .ts_ms = base + (int64_t)v * DAY, .read_version = v - 1,
				   .data_path = dp };
		CHECK(synth_write(st, &c));
		char full[64];
		snprintf(full, sizeof full, "data/%s", dp);
		CHECK(lv_storage_write(st, full, "x", 1, &err));
	}
	CHECK(lv_storage_write(st, "data/orphan-old.lance", "x", 1, &err));
	CHECK(lv_storage_write(st, "data/orphan-young.lance", "x", 1, &err));
	CHECK(lv_storage_write(st, "data/notes.txt", "x", 1, &err));
	CHECK(lv_storage_write(st, "README.md", "x", 1, &err));
	tu_set_all_mtimes(st, base); /* older than every manifest */
	CHECK(lv_storage_mem_set_mtime(st, "data/orphan-young.lance", now - DAY, &err));
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.now_ms = now;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 2);
	uint64_t sz;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_head(st, "data/f1.lance", &sz, NULL, &e), LV_ENOTFOUND);
	assert_int_equal(lv_storage_head(st, "data/f2.lance", &sz, NULL, &e), LV_ENOTFOUND);
	assert_int_equal(lv_storage_head(st, "data/f3.lance", &sz, NULL, &e), 0);
	assert_int_equal(lv_storage_head(st, "data/orphan-old.lance", &sz, NULL, &e), LV_ENOTFOUND);
	/* younger than the newest kept manifest's commit: outside the cutoff, kept */
	assert_int_equal(lv_storage_head(st, "data/orphan-young.lance", &sz, NULL, &e), 0);
	assert_int_equal(lv_storage_head(st, "data/notes.txt", &sz, NULL, &e), 0);
	assert_int_equal(lv_storage_head(st, "README.md", &sz, NULL, &e), 0);
	/* young but within the cutoff: kept unless delete_unverified */
	CHECK(lv_storage_write(st, "data/orphan2.lance", "x", 1, &err));
	CHECK(lv_storage_mem_set_mtime(st, "data/orphan2.lance", base + 3 * DAY - LV_CLEANUP_MTIME_SLACK_MS - 1, &err));
	p.now_ms = base + 5 * DAY;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(lv_storage_head(st, "data/orphan2.lance", &sz, NULL, &e), 0);
	p.delete_unverified = true;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(lv_storage_head(st, "data/orphan2.lance", &sz, NULL, &e), LV_ENOTFOUND);
	/* newer than the earliest kept manifest: kept even with delete_unverified (Lance 14
	 * drops data/'s cutoff then; lancever keeps a concurrent writer's files) */
	assert_int_equal(lv_storage_head(st, "data/orphan-young.lance", &sz, NULL, &e), 0);
	assert_int_equal(s.files_removed[LV_KIND_DATA], 1);
	/* an unreferenced file stamped just before the newest kept commit (a coarse mtime of a
	 * concurrent writer) is inside the margin and kept, even with delete_unverified, where a
	 * cutoff applies (_deletions/: the earliest kept manifest) */
	CHECK(lv_storage_write(st, "_deletions/0-9-9.arrow", "x", 1, &err));
	CHECK(lv_storage_mem_set_mtime(st, "_deletions/0-9-9.arrow", base + 3 * DAY - 1, &err));
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(lv_storage_head(st, "_deletions/0-9-9.arrow", &sz, NULL, &e), 0);
	assert_int_equal(check_retained_complete(st, NULL), 1);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A manifest path leading outside the root aborts the cleanup before anything changes. */
static void test_path_escape(void **state)
{
	(void)state;
	static const char *bad[] = { "../outside.lance", "a/../../x.lance", "/etc/passwd", "s3://b/x.lance",
				     "a\\..\\x.lance", "./x.lance" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		lv_storage *st = synth_mem_series(3, 1700000000000);
		synth_commit c = { .version = 4, .ts_ms = 1700000004000, .read_version = 3, .data_path = bad[i] };
		CHECK(synth_write(st, &c));
		char *before = tu_snapshot(st);
		lv_dataset *ds = open_ds(st);
		lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
		p.older_than_ms = 0;
		p.delete_unverified = true;
		p.now_ms = 1700000000000 + 30 * DAY;
		assert_int_equal(lv_cleanup(ds, &p, NULL, &err), LV_ECORRUPT);
		assert_non_null(strstr(err.message, "leave the dataset root"));
		tu_expect_unchanged(st, before);
		free(before);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* A version a branch was created from is kept; root files a branch manifest uses are kept. */
static void test_branch_protection(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(4, 1700000000000);
	const char *br = "{\n  \"parentBranch\": null,\n  \"parentVersion\": 2,\n  \"createAt\": 1700000002,\n"
			 "  \"manifestSize\": 100\n}";
	CHECK(lv_storage_write(st, "_refs/branches/feat.json", br, strlen(br), &err));
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.now_ms = 1700000000000 + 30 * DAY;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 2); /* v1, v3; v2 is the branch's base */
	char path[96];
	uint64_t sz;
	assert_int_equal(lv_storage_head(st, synth_manifest_path(path, sizeof path, 2), &sz, NULL, &err), 0);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A commit that lands after the manifests were read keeps its files. */
typedef struct race {
	lv_storage *st;
	bool done;
} race;

static void commit_during(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	race *r = payload;
	(void)done;
	(void)total;
	/* the first progress report after the manifests were read: a writer commits v4 */
	if (!r->done && !strcmp(phase, "reading manifests") && total) {
		r->done = true;
		synth_commit c = { .version = 4, .ts_ms = 1700000004000, .read_version = 3,
				   .data_path = "new.lance" };
		lv_error e = { 0 };
		assert_int_equal(synth_write(r->st, &c), 0);
		assert_int_equal(lv_storage_write(r->st, "data/new.lance", "x", 1, &e), 0);
		/* its data file looks as old as everything else (coarse or skewed clocks) */
		assert_int_equal(lv_storage_mem_set_mtime(r->st, "data/new.lance", 1600000000000, &e), 0);
	}
}

static void test_concurrent_commit(void **state)
{
	(void)state;
	lv_storage *st = tu_mem();
	for (uint64_t v = 1; v <= 3; v++) {
		synth_commit c = { .version = v, .ts_ms = 1700000000000 + 1000 * (int64_t)v, .read_version = v - 1,
				   .data_path = "old.lance" };
		CHECK(synth_write(st, &c));
	}
	CHECK(lv_storage_write(st, "data/old.lance", "x", 1, &err));
	tu_set_all_mtimes(st, 1600000000000);
	lv_dataset *ds = open_ds(st);
	race r = { st, false };
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.delete_unverified = true;
	p.now_ms = 1700000000000 + 30 * DAY;
	p.on_progress = commit_during;
	p.payload = &r;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_true(r.done);
	uint64_t sz;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_head(st, "data/new.lance", &sz, NULL, &e), 0);
	assert_int_equal(check_retained_complete(st, NULL), 2); /* v3 (latest when it started), v4 */
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* _versions/ is listed once after the plan (phase 4, for newer commits and detached versions);
 * the sweep judges that listing's temporary files instead of listing a million manifests again.
 * So a stale temporary manifest is removed, and one that appears after the plan is not seen. */
static void tmp_during_sweep(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	race *r = payload;
	(void)done;
	(void)total;
	if (!r->done && !strcmp(phase, "checking files")) {
		r->done = true;
		lv_error e = { 0 };
		assert_int_equal(lv_storage_write(r->st, "_versions/.tmp-late", "x", 1, &e), 0);
		assert_int_equal(lv_storage_mem_set_mtime(r->st, "_versions/.tmp-late", 1600000000000, &e), 0);
	}
}

static void test_versions_listed_once(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(3, 1700000000000);
	CHECK(lv_storage_write(st, "_versions/.tmp-early", "x", 1, &err));
	tu_set_all_mtimes(st, 1600000000000);
	lv_dataset *ds = open_ds(st);
	race r = { st, false };
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.now_ms = 1700000000000 + 30 * DAY;
	p.on_progress = tmp_during_sweep;
	p.payload = &r;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_true(r.done);
	assert_int_equal(s.versions_removed, 2);
	assert_int_equal(s.files_removed[LV_KIND_TEMP], 1);
	uint64_t sz;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_head(st, "_versions/.tmp-early", &sz, NULL, &e), LV_ENOTFOUND);
	assert_int_equal(lv_storage_head(st, "_versions/.tmp-late", &sz, NULL, &e), 0);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Live versions of the store. */
static size_t live_count(lv_storage *st)
{
	lv_dataset *ds = open_ds(st);
	size_t n = tu_count_versions(ds);
	lv_dataset_free(ds);
	return n;
}

/* More manifests than one read batch (4,096): batch k is judged while k + 1 is read.  A tag
 * in the second batch keeps its version; an unreadable manifest in the third stops the run
 * with nothing changed (the batch being judged beside its read is dropped too). */
static void test_read_pipeline(void **state)
{
	(void)state;
	enum { N = 9000 };
	lv_storage *st = synth_mem_series(N, 1700000000000);
	CHECK(synth_tag(st, "keep", 5000));
	char bad[128];
	lv_buf junk = { 0 };
	CHECK(lv_storage_read(st, synth_manifest_path(bad, sizeof bad, 8500), &junk, &err));
	CHECK(lv_storage_write(st, bad, "not a manifest", 14, &err));
	tu_set_all_mtimes(st, 1600000000000);
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.retain_versions = 16;
	p.error_if_tagged_old_versions = false;
	p.now_ms = 1700000000000 + 30 * DAY;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	lv_error e = { 0 };
	assert_true(lv_cleanup(ds, &p, &s, &e) < 0);
	assert_non_null(strstr(e.message, bad));
	assert_int_equal(s.versions_removed, 0);
	lv_dataset_free(ds);
	CHECK(lv_storage_write(st, bad, junk.ptr, junk.size, &err));
	lv_buf_dispose(&junk);
	assert_int_equal(live_count(st), N); /* nothing went */
	ds = open_ds(st);
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, N - 16 - 1);
	assert_int_equal(live_count(st), 17);
	uint64_t sz;
	assert_int_equal(lv_storage_head(st, synth_manifest_path(bad, sizeof bad, 5000), &sz, NULL, &e), 0);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Threads of this process now. */
static int threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d)) != NULL;)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The sweep's scan starts before the checkpoint and overlaps it (scan.c).  A checkpoint that
 * cannot be written stops the cleanup with nothing deleted, and the scan with it: here it has
 * judged more files to go than its queue holds, so it waits, and only a cancel and a join end
 * its thread. */
static void test_scan_stopped(void **state)
{
	(void)state;
	lv_storage *inner = synth_mem_series(3, 1700000000000);
	enum { STRAYS = 5000 };
	for (int i = 0; i < STRAYS; i++) {
		char p[64];
		snprintf(p, sizeof p, "data/stray%05d.lance", i);
		CHECK(lv_storage_write(inner, p, "x", 1, &err));
	}
	tu_set_all_mtimes(inner, 1600000000000);
	lv_fault_spec spec = { .ops = LV_FAULT_WRITE | LV_FAULT_CREATE, .nth = 1, .persistent = true,
			       .kind = LV_FAULT_FAIL, .path_substring = "_checkpoints/" };
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, inner, &spec, &err));
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.now_ms = 1700000000000 + 30 * DAY;
	int before = threads_now();
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	lv_error e = { 0 };
	assert_true(lv_cleanup(ds, &p, &s, &e) < 0);
	assert_int_equal(threads_now(), before);
	uint64_t sz;
	assert_int_equal(lv_storage_head(st, "data/stray00000.lance", &sz, NULL, &e), 0);
	assert_int_equal(lv_storage_head(st, "data/stray04999.lance", &sz, NULL, &e), 0);
	assert_int_equal(s.versions_removed, 0);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/*
 * The scan looks up the times of files listed by name (flat directories, on a local store)
 * a batch of 4,096 at a time, one batch while the listing fills the next: with 10,000 such
 * files, every old one is still deleted once and reported in listing order, and every new
 * one is kept.
 */
typedef struct stray_log {
	char **path;
	size_t n, cap;
} stray_log;

static void log_candidate(const lv_cleanup_candidate *c, void *payload)
{
	stray_log *l = payload;
	if (strncmp(c->path, "_transactions/stray", 19))
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->path = realloc(l->path, l->cap * sizeof *l->path);
		assert_non_null(l->path);
	}
	l->path[l->n++] = strdup(c->path);
}

static void test_scan_batches_in_order(void **state)
{
	(void)state;
	enum { STRAYS = 10000 };
	char base[600], cmd[1400];
	snprintf(base, sizeof base, "%s/ds", tu_tmpdir());
	snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", tu_fixture("lance8/t.lance"), base);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < STRAYS; i++) { /* every 7th a day old (kept), the others 90 days */
		char f[700];
		snprintf(f, sizeof f, "%s/_transactions/stray%05d.txn", base, i);
		tu_write_file(f, "x");
		/* the policy's now is T_LATEST_MS + 30 days: a day old is in progress */
		time_t t = (time_t)((T_LATEST_MS + (i % 7 ? -60 : 29) * DAY) / 1000);
		struct timespec ts[2] = { { t, 0 }, { t, 0 } };
		assert_int_equal(utimensat(AT_FDCWD, f, ts, 0), 0);
	}
	/* the order the scan meets them: the directory's own order */
	char dir[700];
	snprintf(dir, sizeof dir, "%s/_transactions", base);
	char **want = calloc(STRAYS, sizeof *want);
	size_t nwant = 0;
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		int i;
		if (sscanf(e->d_name, "stray%05d.txn", &i) == 1 && i % 7) {
			want[nwant] = malloc(strlen(e->d_name) + 15);
			sprintf(want[nwant++], "_transactions/%s", e->d_name);
		}
	}
	closedir(d);
	assert_int_equal(nwant, STRAYS - (STRAYS + 6) / 7);
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open(&ds, base, NULL, &err));
	lv_cleanup_policy p = policy_all_old();
	stray_log log = { 0 };
	p.on_candidate = log_candidate;
	p.payload = &log;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(log.n, nwant);
	for (size_t i = 0; i < nwant; i++) {
		if (strcmp(log.path[i], want[i]))
			fail_msg("delete %zu: %s, listing order says %s", i, log.path[i], want[i]);
		free(log.path[i]);
		free(want[i]);
	}
	assert_int_equal(s.files_removed[LV_KIND_TRANSACTION], nwant + 4); /* + v1, 2, 4, 5's */
	for (int i = 0; i < STRAYS; i++) { /* the new ones stay */
		char f[700];
		snprintf(f, sizeof f, "%s/_transactions/stray%05d.txn", base, i);
		assert_int_equal(access(f, F_OK) == 0, i % 7 == 0);
	}
	free(log.path);
	free(want);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/* Files a detached version uses are kept, even unverified ones with delete_unverified. */
static void test_detached_protection(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(3, 1700000000000);
	synth_commit d = { .version = 7, .ts_ms = 1700000000500, .read_version = 1, .scheme = 3,
			   .data_path = "detached.lance" };
	CHECK(synth_write(st, &d));
	CHECK(lv_storage_write(st, "data/detached.lance", "x", 1, &err));
	CHECK(lv_storage_write(st, "data/orphan.lance", "x", 1, &err));
	tu_set_all_mtimes(st, 1600000000000);
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.delete_unverified = true;
	p.now_ms = 1700000000000 + 30 * DAY;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_total, 3); /* the detached manifest is not a version */
	uint64_t sz;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_head(st, "data/detached.lance", &sz, NULL, &e), 0);
	assert_int_equal(lv_storage_head(st, "data/orphan.lance", &sz, NULL, &e), LV_ENOTFOUND);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Is `got` `want` with exactly one more line (both sorted listings)? */
static bool one_line_more(const char *got, const char *want)
{
	size_t gl = strlen(got), wl = strlen(want);
	for (const char *s = got; *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = (size_t)(nl - s + 1), off = (size_t)(s - got);
		if (gl - n == wl && !strncmp(got, want, off) && !strcmp(s + n, want + off))
			return true;
		s = nl + 1;
	}
	return false;
}

/*
 * Fail each storage call of a cleanup in turn (1..N).  After every failure:
 * the retained versions are complete, no history is lost, and a rerun
 * finishes the job with the same result as an undisturbed run.  (Versions
 * being removed may be left without some files: they are recorded as cleaned
 * up before anything is deleted, and the rerun removes them.)
 */
static void test_fault_sweep(void **state)
{
	(void)state;
	lv_cleanup_policy p = policy_all_old();
	/* the undisturbed result */
	lv_storage *ref = tu_mem_copy("lance8/t.lance");
	lv_dataset *rds = open_ds(ref);
	CHECK(lv_cleanup(rds, &p, NULL, &err));
	char *want = tu_snapshot(ref);
	lv_dataset_free(rds);
	lv_storage_free(ref);
	bool cl[6] = { true, true, false, true, true, false };
	uint64_t n;
	int failures = 0, soft = 0;
	for (n = 1;; n++) {
		lv_storage *inner = tu_mem_copy("lance8/t.lance"), *st = NULL;
		lv_fault_spec spec = { LV_FAULT_ALL, n, false, LV_FAULT_FAIL, NULL };
		CHECK(lv_storage_fault_wrap(&st, inner, &spec, &err));
		lv_dataset *ds = open_ds(st);
		lv_error e = { 0 };
		lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
		int rc = lv_cleanup(ds, &p, &stats, &e);
		bool hit = lv_storage_fault_calls(st) >= n;
		lv_fault_spec off = { 0, 0, false, LV_FAULT_FAIL, NULL };
		CHECK(lv_storage_fault_set(st, &off, &err));
		if (rc == 0 && stats.failed_deletes) {
			/* a delete the store refused: counted, the run went on (Lance 14); the file
			 * is still there.  An old manifest goes on the rerun; any other file is now
			 * unreferenced (a later run removes it by the age rules, as Lance does): the
			 * result is the undisturbed one, or that plus the one file */
			soft++;
			assert_true(hit);
			assert_int_equal(stats.failed_deletes, 1);
			static const bool doomed[7] = { false, true, true, false, true, true, false };
			check_retained_complete(st, doomed);
			expect_history(st, 6, NULL);
			CHECK(lv_cleanup(ds, &p, NULL, &err)); /* a manifest left behind goes now */
		}
		if (rc < 0) {
			failures++;
			assert_true(hit);
			assert_int_equal(rc, LV_EIO);
			/* retained versions (3 tagged, 6 latest) are complete; 1, 2, 4, 5 may not be */
			static const bool doomed[7] = { false, true, true, false, true, true, false };
			check_retained_complete(st, doomed);
			expect_history(st, 6, NULL); /* every version still recorded */
			CHECK(lv_cleanup(ds, &p, NULL, &err)); /* the rerun converges */
		}
		check_retained_complete(st, NULL);
		expect_history(st, 6, cl);
		char *got = tu_snapshot(st);
		/* checkpoint files may differ in number (an interrupted run wrote one more) */
		lv__dbuf a, b;
		lv__dbuf_init(&a, 0);
		lv__dbuf_init(&b, 0);
		for (const char *s = got; *s;) {
			const char *nl = strchr(s, '\n');
			if (strncmp(s, "_checkpoints/", 13))
				lv__dbuf_add(&a, s, (size_t)(nl - s + 1));
			s = nl + 1;
		}
		for (const char *s = want; *s;) {
			const char *nl = strchr(s, '\n');
			if (strncmp(s, "_checkpoints/", 13))
				lv__dbuf_add(&b, s, (size_t)(nl - s + 1));
			s = nl + 1;
		}
		if (rc == 0 && stats.failed_deletes && strcmp(a.ptr ? (char *)a.ptr : "", b.ptr ? (char *)b.ptr : ""))
			assert_true(one_line_more(a.ptr ? (char *)a.ptr : "", b.ptr ? (char *)b.ptr : ""));
		else
			assert_string_equal(a.ptr ? (char *)a.ptr : "", b.ptr ? (char *)b.ptr : "");
		lv__dbuf_dispose(&a);
		lv__dbuf_dispose(&b);
		free(got);
		lv_dataset_free(ds);
		lv_storage_free(st);
		if (!hit)
			break; /* the whole cleanup ran in fewer than n calls */
	}
	assert_true(failures > 20);
	assert_true(soft > 0);
	fprintf(stderr, "fault sweep: %llu storage calls, each failed once (%d failed deletes counted)\n",
		(unsigned long long)n - 1, soft);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_dataset),
		cmocka_unit_test(test_tagged_refusal),
		cmocka_unit_test(test_policy_selection),
		cmocka_unit_test(test_unverified_rules),
		cmocka_unit_test(test_path_escape),
		cmocka_unit_test(test_branch_protection),
		cmocka_unit_test(test_detached_protection),
		cmocka_unit_test(test_concurrent_commit),
		cmocka_unit_test(test_versions_listed_once),
		cmocka_unit_test(test_scan_stopped),
		cmocka_unit_test(test_scan_batches_in_order),
		cmocka_unit_test(test_read_pipeline),
		cmocka_unit_test(test_fault_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
