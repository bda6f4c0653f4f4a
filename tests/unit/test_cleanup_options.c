/*
 * Unit tests: Lance's newer cleanup options (issue 16) -- the exact version list, the
 * explanation's per-file unverified flag and referenced branches, the refusal of unknown
 * writer feature flags, and version-2 policies read as such.  The version list is checked
 * against a brute-force model of Lance's rule on random datasets.
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
#include <lancever/sys/testing.h>

#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

#define DAY (86400000LL)
#define BASE 1700000000000LL
#define MAXV 16

static lv_dataset *open_ds(lv_storage *st)
{
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, NULL, &err));
	return ds;
}

/* Versions 1..n, each with its own data file data/f<v>.lance, all files 30 days old. */
static lv_storage *series(uint64_t n)
{
	lv_storage *st = NULL;
	CHECK(lv_storage_mem_new(&st, &err));
	for (uint64_t v = 1; v <= n; v++) {
		char dp[32], full[48];
		snprintf(dp, sizeof dp, "f%llu.lance", (unsigned long long)v);
		synth_commit c = { .version = v, .ts_ms = BASE + (int64_t)v * 1000, .read_version = v - 1,
				   .data_path = dp };
		CHECK(synth_write(st, &c));
		snprintf(full, sizeof full, "data/%s", dp);
		CHECK(lv_storage_write(st, full, "xy", 2, &err));
	}
	tu_set_all_mtimes(st, BASE - 30 * DAY);
	return st;
}

static void branch_from(lv_storage *st, const char *name, uint64_t base)
{
	char path[128], body[256];
	snprintf(path, sizeof path, "_refs/branches/%s.json", name);
	snprintf(body, sizeof body,
		 "{\n  \"parentBranch\": null,\n  \"parentVersion\": %llu,\n  \"createAt\": 1700000002,\n"
		 "  \"manifestSize\": 100\n}", (unsigned long long)base);
	CHECK(lv_storage_write(st, path, body, strlen(body), &err));
}

static bool exists(lv_storage *st, const char *path)
{
	uint64_t sz;
	lv_error e = { 0 };
	return lv_storage_head(st, path, &sz, NULL, &e) == 0;
}

/* What the callbacks saw. */
typedef struct seen {
	bool manifest[MAXV + 1];  /* old manifests removed, by version */
	size_t nfiles, nunverified, nverified_data;
	char branch[4][32];
	uint64_t branch_version[4];
	bool branch_cascade[4];
	size_t nbranch;
	size_t nbranch_files;     /* candidates under tree/ (a cascaded branch's) */
	bool saw_b4;              /* tree/feat/data/b4.lance among them */
	uint64_t read_version, planned;
} seen;

static void on_candidate(const lv_cleanup_candidate *c, void *payload)
{
	seen *s = payload;
	s->nfiles++;
	if (!strncmp(c->path, "tree/", 5)) {
		s->nbranch_files++;
		s->saw_b4 |= !strcmp(c->path, "tree/feat/data/b4.lance");
		return;
	}
	if (c->kind == LV_KIND_MANIFEST) {
		assert_false(c->unverified);
		assert_true(c->version >= 1 && c->version <= MAXV);
		s->manifest[c->version] = true;
	}
	s->nunverified += c->unverified;
	s->nverified_data += c->kind == LV_KIND_DATA && !c->unverified;
}

static void on_branch(const char *name, uint64_t v, bool cascade, void *payload)
{
	seen *s = payload;
	assert_true(s->nbranch < 4);
	snprintf(s->branch[s->nbranch], sizeof s->branch[0], "%s", name);
	s->branch_cascade[s->nbranch] = cascade;
	s->branch_version[s->nbranch++] = v;
}

static void on_plan(uint64_t read_version, uint64_t total, uint64_t selected, void *payload)
{
	seen *s = payload;
	(void)total;
	s->read_version = read_version;
	s->planned = selected;
}

static void hook(lv_cleanup_policy *p, seen *s)
{
	memset(s, 0, sizeof *s);
	p->on_candidate = on_candidate;
	p->on_referenced_branch = on_branch;
	p->on_plan = on_plan;
	p->payload = s;
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

/*
 * Lance's rule for an exact version list, by brute force: version v goes when it is in the
 * list, below before_version (if set), not the latest, not tagged, and (lancever) not a
 * branch's base.
 */
static bool model_removed(uint64_t v, uint64_t n, const bool *listed, uint64_t before,
			  const bool *tagged, const bool *based)
{
	return listed[v] && (!before || v < before) && v != n && !tagged[v] && !based[v];
}

static void test_versions_model(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 60; round++) {
		uint64_t n = 2 + rng_next(&x) % (MAXV - 2);
		bool listed[MAXV + 8] = { 0 }, tagged[MAXV + 1] = { 0 }, based[MAXV + 1] = { 0 };
		uint64_t list[MAXV + 8];
		size_t nl = 0;
		for (uint64_t v = 1; v <= n + 2; v++) /* n+1, n+2 do not exist: ignored, as in Lance */
			if (rng_next(&x) % 2) {
				listed[v] = true;
				list[nl++] = v;
			}
		if (!nl) {
			listed[1] = true;
			list[nl++] = 1;
		}
		lv_storage *st = series(n);
		if (rng_next(&x) % 2) {
			uint64_t t = 1 + rng_next(&x) % n;
			tagged[t] = true;
			CHECK(synth_tag(st, "keep", t));
		}
		if (rng_next(&x) % 3 == 0) {
			uint64_t b = 1 + rng_next(&x) % n;
			based[b] = true;
			branch_from(st, "feat", b);
		}
		uint64_t before = rng_next(&x) % 3 == 0 ? 1 + rng_next(&x) % (n + 1) : 0;
		lv_dataset *ds = open_ds(st);
		lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
		seen s;
		hook(&p, &s);
		p.versions = list;
		p.nversions = nl;
		p.before_version = before;
		p.error_if_tagged_old_versions = false;
		p.now_ms = BASE + 1000 * (int64_t)n + 1000; /* every version is a second old */
		lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
		CHECK(lv_cleanup(ds, &p, &stats, &err));
		uint64_t want = 0;
		for (uint64_t v = 1; v <= n; v++) {
			bool gone = model_removed(v, n, listed, before, tagged, based);
			want += gone;
			char mp[96], dp[48];
			synth_manifest_path(mp, sizeof mp, v);
			snprintf(dp, sizeof dp, "data/f%llu.lance", (unsigned long long)v);
			if (s.manifest[v] != gone || exists(st, mp) == gone || exists(st, dp) == gone)
				fail_msg("round %d, n %llu, version %llu: model says %s", round,
					 (unsigned long long)n, (unsigned long long)v, gone ? "removed" : "kept");
		}
		assert_int_equal(stats.versions_removed, want);
		assert_int_equal(s.planned, want);
		assert_int_equal(s.read_version, n);
		/* only the version list's versions: files of removed versions are verified */
		assert_int_equal(stats.files_removed[LV_KIND_DATA], want);
		/* history written first: every version is still listed */
		lv_version_list *l = NULL;
		CHECK(lv_history(&l, ds, NULL, &err));
		assert_int_equal(lv_version_list_count(l), n);
		for (size_t i = 0; i < n; i++) {
			const lv_version_info *vi = lv_version_list_get(l, i);
			assert_int_equal(vi->is_cleaned_up,
					 model_removed(vi->version, n, listed, before, tagged, based));
		}
		lv_version_list_free(l);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* A version list alone is a condition: no 7-day default hides young versions. */
static void test_versions_no_age_default(void **state)
{
	(void)state;
	lv_storage *st = series(5);
	lv_dataset *ds = open_ds(st);
	uint64_t list[] = { 2, 4 };
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.versions = list;
	p.nversions = 2;
	p.now_ms = BASE + 6000; /* every version is seconds old */
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 2);
	assert_true(exists(st, "data/f1.lance") && !exists(st, "data/f2.lance"));
	/* and with an age condition too, both must hold (Lance ANDs them) */
	uint64_t three[] = { 3 };
	p.versions = three;
	p.nversions = 1;
	p.older_than_ms = 7 * DAY;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 0);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Refusals: an empty list, a tagged version in the list (error, nothing changed, as Lance). */
static void test_versions_refusals(void **state)
{
	(void)state;
	lv_storage *st = series(5);
	CHECK(synth_tag(st, "keep3", 3));
	lv_dataset *ds = open_ds(st);
	uint64_t list[] = { 2, 3 };
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.versions = list;
	p.nversions = 0;
	p.now_ms = BASE + 6000;
	assert_int_equal(lv_cleanup(ds, &p, NULL, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "must not be empty"));
	p.nversions = 2;
	char *before = tu_snapshot(st);
	assert_int_equal(lv_cleanup(ds, &p, NULL, &err), LV_ETAGGED);
	assert_non_null(strstr(err.message, "\"keep3\": 3"));
	tu_expect_unchanged(st, before);
	/* a tagged version outside the list does not stop it */
	uint64_t two[] = { 2 };
	p.versions = two;
	p.nversions = 1;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &s, &err));
	assert_int_equal(s.versions_removed, 1);
	free(before);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A caller built against a header from before 1.0 (policy versions 1 to 5, which held the
 * checkpoint config by value) is refused with LV_EINVALID before anything is read or removed:
 * its struct is on the heap at the old version-2 size, so a read past it is caught by ASan. */
static void test_policy_old_versions_refused(void **state)
{
	(void)state;
	for (int v = 0; v <= LV_CLEANUP_POLICY_VERSION + 1; v++) {
		if (v == LV_CLEANUP_POLICY_VERSION)
			continue;
		lv_storage *st = series(4);
		lv_dataset *ds = open_ds(st);
		size_t old = offsetof(lv_cleanup_policy, versions);
		lv_cleanup_policy full = LV_CLEANUP_POLICY_INIT;
		full.version = v;
		full.older_than_ms = 0;
		full.now_ms = BASE + 10000;
		lv_cleanup_policy *p = malloc(old);
		assert_non_null(p);
		memcpy(p, &full, old);
		lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
		s.versions_removed = 77;
		lv_error e = { 0 };
		assert_int_equal(lv_cleanup(ds, p, &s, &e), LV_EINVALID);
		assert_non_null(strstr(e.message, "lv_cleanup_policy: version"));
		assert_int_equal(s.versions_removed, 77); /* the stats untouched */
		char **left = tu_list_paths(st, "_versions", false);
		size_t n = 0;
		while (left[n])
			free(left[n++]);
		free(left);
		assert_int_equal(n, 4);
		free(p);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
	/* the init function: current version, the INIT macro's defaults */
	lv_cleanup_policy p, want = LV_CLEANUP_POLICY_INIT;
	memset(&p, 0x5a, sizeof p);
	assert_int_equal(lv_cleanup_policy_init(&p, LV_CLEANUP_POLICY_VERSION), 0);
	assert_int_equal(p.version, want.version);
	assert_int_equal(p.older_than_ms, -1);
	assert_int_equal(p.retain_versions, -1);
	assert_true(p.error_if_tagged_old_versions);
	assert_false(p.dry_run || p.delete_unverified || p.clean_referenced_branches);
	assert_null(p.checkpoint);
	assert_null(p.versions);
	assert_null(p.on_file);
	assert_int_equal(lv_cleanup_policy_init(&p, 5), LV_EINVALID);
	assert_int_equal(lv_cleanup_policy_init(NULL, LV_CLEANUP_POLICY_VERSION), LV_EINVALID);
}

/* Unknown writer feature flags stop any cleanup (a dry run too) before anything changes. */
static void test_unknown_writer_flags(void **state)
{
	(void)state;
	static const struct { uint64_t flags; int rc; const char *bits; } cases[] = {
		{ 64, LV_EUNSUPPORTED, "bit 6" },             /* data overlay files */
		{ 128 | 1024, LV_EUNSUPPORTED, "bit 10" },    /* 128 known, 1024 not */
		{ 512, LV_EUNSUPPORTED, "bit 9" },
		{ 2048 | 4096, LV_EUNSUPPORTED, "bit 11, 12" },
		{ (uint64_t)1 << 63, LV_EUNSUPPORTED, "bit 63" },
		/* known: 128 (covering-index metadata, pylance 14 sets it) among them; 256 needs
		 * its reader flag too (test_mixed_versions_flag) */
		{ 1 | 2 | 8 | 16 | 32 | 128, 0, NULL },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		lv_storage *st = series(3);
		synth_commit nc = { .version = 4, .ts_ms = BASE + 4000, .read_version = 3,
				    .data_path = "f4.lance", .writer_flags = cases[c].flags };
		CHECK(synth_write(st, &nc));
		CHECK(lv_storage_write(st, "data/f4.lance", "xy", 2, &err));
		lv_dataset *ds = open_ds(st);
		lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
		p.older_than_ms = 0;
		p.delete_unverified = true;
		p.now_ms = BASE + 30 * DAY;
		char *before = tu_snapshot(st);
		for (int dry = 1; dry >= 0; dry--) {
			p.dry_run = dry;
			lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
			int rc = lv_cleanup(ds, &p, &s, &err);
			assert_int_equal(rc, cases[c].rc);
			if (rc) {
				assert_non_null(strstr(err.message, "writer feature flags"));
				assert_non_null(strstr(err.message, cases[c].bits));
				tu_expect_unchanged(st, before);
			} else if (!dry) {
				assert_int_equal(s.versions_removed, 3);
			}
		}
		free(before);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* The explanation's facts: Lance's unverified flag, referenced branches, read version. */
static void test_explain_facts(void **state)
{
	(void)state;
	lv_storage *st = series(4);
	/* v1..v4 committed at BASE+1..4 s; "now" is 1 day later: files 30 days old are old
	 * enough (unverified in Lance's sense), a young one is verified only by a manifest */
	CHECK(lv_storage_mem_set_mtime(st, "data/f2.lance", BASE + 1500, &err));
	CHECK(lv_storage_write(st, "data/orphan.lance", "x", 1, &err));
	CHECK(lv_storage_mem_set_mtime(st, "data/orphan.lance", BASE - 30 * DAY, &err));
	branch_from(st, "feat", 3);   /* base selected by the policy: listed, kept */
	branch_from(st, "gone", 99);  /* base has no manifest: listed too, as Lance does */
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	seen s;
	hook(&p, &s);
	p.older_than_ms = 0;
	p.dry_run = true;
	p.now_ms = BASE + DAY;
	char *before = tu_snapshot(st);
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &stats, &err));
	tu_expect_unchanged(st, before);
	assert_int_equal(s.read_version, 4);
	assert_true(s.manifest[1] && s.manifest[2] && !s.manifest[3] && !s.manifest[4]);
	/* f1 (30 days old) and the orphan: unverified; f2 (young, named by removed v2): verified */
	assert_int_equal(s.nverified_data, 1);
	assert_int_equal(stats.files_removed[LV_KIND_DATA], 3);
	assert_int_equal(s.nbranch, 2);
	bool feat = false, gone = false;
	for (size_t i = 0; i < s.nbranch; i++) {
		feat |= !strcmp(s.branch[i], "feat") && s.branch_version[i] == 3;
		gone |= !strcmp(s.branch[i], "gone") && s.branch_version[i] == 99;
	}
	assert_true(feat && gone);
	/* a branch whose base the policy does not select is not listed */
	uint64_t one[] = { 1 };
	p.versions = one;
	p.nversions = 1;
	hook(&p, &s);
	CHECK(lv_cleanup(ds, &p, &stats, &err));
	assert_int_equal(s.nbranch, 1);
	assert_string_equal(s.branch[0], "gone");
	free(before);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/*
 * Cleaning a branch: its own versions and files under tree/<name>/ by the same rules; tags on
 * the branch and bases of its child branches kept; nothing of main (the parent) touched.
 */
static void test_branch_cleanup(void **state)
{
	(void)state;
	lv_storage *st = series(4);
	branch_from(st, "feat", 2);
	const char *child = "{\n  \"parentBranch\": \"feat\",\n  \"parentVersion\": 5,\n"
			    "  \"createAt\": 1700000002,\n  \"manifestSize\": 100\n}";
	CHECK(lv_storage_write(st, "_refs/branches/feat2.json", child, strlen(child), &err));
	const char *tag = "{\n  \"branch\": \"feat\",\n  \"version\": 4,\n  \"manifestSize\": 100,\n"
			  "  \"metadata\": {}\n}";
	CHECK(lv_storage_write(st, "_refs/tags/t4.json", tag, strlen(tag), &err));
	CHECK(synth_tag(st, "main6", 6)); /* a tag of main: says nothing about the branch's v6 */
	lv_storage *sub = NULL;
	CHECK(lv_storage_sub(&sub, st, "tree/feat", &err));
	for (uint64_t v = 3; v <= 7; v++) {
		char dp[32], full[48];
		snprintf(dp, sizeof dp, "b%llu.lance", (unsigned long long)v);
		synth_commit c = { .version = v, .ts_ms = BASE + (int64_t)v * 1000, .read_version = v - 1,
				   .data_path = dp };
		CHECK(synth_write(sub, &c));
		snprintf(full, sizeof full, "data/%s", dp);
		CHECK(lv_storage_write(sub, full, "xy", 2, &err));
	}
	/* an own file of the branch named like a main file: the branch's, removable */
	CHECK(lv_storage_write(sub, "data/stray.lance", "x", 1, &err));
	tu_set_all_mtimes(st, BASE - 30 * DAY);
	lv_storage_free(sub);
	char *main_before = tu_snapshot(st);

	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.branch = "feat";
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, &o, &err));
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.delete_unverified = true;
	p.now_ms = BASE + 30 * DAY;
	/* the branch's tag stops it, as on main */
	char *before = tu_snapshot(st);
	assert_int_equal(lv_cleanup(ds, &p, NULL, &err), LV_ETAGGED);
	assert_non_null(strstr(err.message, "\"t4\": 4"));
	tu_expect_unchanged(st, before);
	p.error_if_tagged_old_versions = false;
	seen s;
	hook(&p, &s);
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &stats, &err));
	/* 3 and 6 go; 4 is tagged on the branch, 5 is feat2's base, 7 the latest */
	assert_int_equal(stats.versions_removed, 2);
	assert_true(s.manifest[3] && s.manifest[6] && !s.manifest[4] && !s.manifest[5]);
	assert_int_equal(s.read_version, 7);
	assert_int_equal(s.nbranch, 1);
	assert_string_equal(s.branch[0], "feat2");
	assert_true(!exists(st, "tree/feat/data/b3.lance") && !exists(st, "tree/feat/data/b6.lance"));
	assert_true(exists(st, "tree/feat/data/b4.lance") && exists(st, "tree/feat/data/b5.lance") &&
		    exists(st, "tree/feat/data/b7.lance"));
	assert_false(exists(st, "tree/feat/data/stray.lance"));
	/* main, the parent: every file and manifest as it was */
	for (uint64_t v = 1; v <= 4; v++) {
		char mp[96], dp[48];
		snprintf(dp, sizeof dp, "data/f%llu.lance", (unsigned long long)v);
		assert_true(exists(st, synth_manifest_path(mp, sizeof mp, v)) && exists(st, dp));
	}
	char *main_after = tu_snapshot(st);
	/* the snapshot lines of the root, outside tree/, are unchanged */
	char *a = main_before, *b = main_after;
	size_t nroot = 0;
	for (char *line = strtok(a, "\n"); line; line = strtok(NULL, "\n"))
		if (strncmp(line, "tree/", 5) && strncmp(line, "_checkpoints/", 13)) {
			assert_non_null(strstr(b, line));
			nroot++;
		}
	assert_true(nroot >= 8);
	/* the branch's history is kept: the removed versions are recorded as cleaned up */
	lv_version_list *l = NULL;
	CHECK(lv_history(&l, ds, NULL, &err));
	size_t cleaned = 0;
	for (size_t i = 0; i < lv_version_list_count(l); i++) {
		const lv_version_info *vi = lv_version_list_get(l, i);
		if (vi->is_cleaned_up) {
			assert_true(vi->version == 3 || vi->version == 6);
			cleaned++;
		}
	}
	assert_int_equal(cleaned, 2);
	lv_version_list_free(l);
	free(before);
	free(main_before);
	free(main_after);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Main 1..4; branch feat made from main's v2, with its own versions 3..6 (data b3..b6), the
 * newest carrying `config` (key, value, ..., NULL) and a tag of feat on its v3.  Everything
 * 30 days old. */
static lv_storage *with_branch(const char *const *config)
{
	lv_storage *st = series(4);
	branch_from(st, "feat", 2);
	const char *tag = "{\n  \"branch\": \"feat\",\n  \"version\": 3,\n  \"manifestSize\": 100,\n"
			  "  \"metadata\": {}\n}";
	CHECK(lv_storage_write(st, "_refs/tags/f3.json", tag, strlen(tag), &err));
	lv_storage *sub = NULL;
	CHECK(lv_storage_sub(&sub, st, "tree/feat", &err));
	for (uint64_t v = 3; v <= 6; v++) {
		char dp[32], full[48];
		snprintf(dp, sizeof dp, "b%llu.lance", (unsigned long long)v);
		synth_commit c = { .version = v, .ts_ms = BASE + (int64_t)v * 1000, .read_version = v - 1,
				   .data_path = dp, .config = v == 6 ? config : NULL };
		CHECK(synth_write(sub, &c));
		snprintf(full, sizeof full, "data/%s", dp);
		CHECK(lv_storage_write(sub, full, "xy", 2, &err));
	}
	tu_set_all_mtimes(st, BASE - 30 * DAY);
	lv_storage_free(sub);
	return st;
}

/* Main's policy: everything older than now (30 days on), so main's v2 (feat's base) is
 * selected and feat is a referenced branch. */
static lv_cleanup_policy cascade_policy(seen *s, bool cascade)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.now_ms = BASE + 30 * DAY;
	p.clean_referenced_branches = cascade;
	hook(&p, s);
	return p;
}

/* How many of feat's files (data and manifests, versions 3..6) are there. */
static int feat_files(lv_storage *st)
{
	int n = 0;
	for (uint64_t v = 3; v <= 6; v++) {
		char dp[48], mp[96], sp[128];
		snprintf(dp, sizeof dp, "tree/feat/data/b%llu.lance", (unsigned long long)v);
		snprintf(sp, sizeof sp, "tree/feat/%s", synth_manifest_path(mp, sizeof mp, v));
		n += exists(st, dp) + exists(st, sp);
	}
	return n;
}

/*
 * clean_referenced_branches: a branch made from a version the cleanup selects is cleaned
 * first, with the policy of its own lance.auto_cleanup.* keys (interval due at its latest
 * version, older_than, retain_versions; its tags kept without failing), its files reported
 * under tree/feat/, its removals added to the stats and its history recorded.
 */
static void cascade_due(const char *interval)
{
	const char *const due[] = { "lance.auto_cleanup.interval", interval,
				    "lance.auto_cleanup.older_than", "1day",
				    "lance.auto_cleanup.retain_versions", "2", NULL };
	lv_storage *st = with_branch(due);
	lv_dataset *ds = open_ds(st);
	seen s;
	lv_cleanup_policy p = cascade_policy(&s, true);
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &stats, &err));
	/* main: 1 and 3 go (2 is feat's base, 4 the latest); feat: 4 goes (3 is tagged on feat,
	 * 5 and 6 are its newest two) */
	assert_int_equal(stats.versions_removed, 3);
	assert_true(s.manifest[1] && s.manifest[3] && !s.manifest[2]);
	assert_int_equal(s.nbranch, 1);
	assert_string_equal(s.branch[0], "feat");
	assert_true(s.branch_cascade[0]);
	assert_true(s.saw_b4);
	assert_int_equal(s.nbranch_files, 3); /* feat's v4: b4.lance, its .txn, its manifest */
	assert_false(exists(st, "tree/feat/data/b4.lance"));
	assert_true(exists(st, "tree/feat/data/b3.lance") && exists(st, "tree/feat/data/b5.lance"));
	assert_int_equal(feat_files(st), 6);
	/* the branch's history records its removed version */
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.branch = "feat";
	lv_dataset *bds = NULL;
	CHECK(lv_dataset_open_storage(&bds, st, &o, &err));
	lv_version_list *l = NULL;
	CHECK(lv_history(&l, bds, NULL, &err));
	size_t cleaned = 0;
	for (size_t i = 0; i < lv_version_list_count(l); i++)
		if (lv_version_list_get(l, i)->is_cleaned_up) {
			assert_int_equal(lv_version_list_get(l, i)->version, 4);
			cleaned++;
		}
	assert_int_equal(cleaned, 1);
	lv_version_list_free(l);
	lv_dataset_free(bds);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_cascade(void **state)
{
	(void)state;
	cascade_due("3");
}

/* An interval of 0 is due at every version: Lance 14 runs its auto-cleanup on every commit
 * then (pylance 14.0.2: interval 0 cleaned as interval 1 did, checked). */
static void test_cascade_interval_zero(void **state)
{
	(void)state;
	cascade_due("0");
}

/* The branch is left alone without the option, when its interval is not due at its latest
 * version (6), or is absent; and a dry run cleans nothing but reports its files.  An interval
 * of 0 is due at every version, as in Lance 14 (pylance 14.0.2 cleans after every commit):
 * the branch is cleaned by its default policy (7 days), which takes 4 and 5 as the dry run
 * does. */
static void test_cascade_not_due(void **state)
{
	(void)state;
	static const char *const due[] = { "lance.auto_cleanup.interval", "2",
					   "lance.auto_cleanup.older_than", "1h 30min", NULL };
	static const char *const later[] = { "lance.auto_cleanup.interval", "4", NULL };
	static const char *const zero[] = { "lance.auto_cleanup.interval", "0", NULL };
	static const char *const none[] = { "lance.auto_cleanup.older_than", "1day", NULL };
	const char *const *cfg[5] = { due, later, zero, none, due };
	for (int i = 0; i < 5; i++) {
		lv_storage *st = with_branch(cfg[i]);
		lv_dataset *ds = open_ds(st);
		seen s;
		lv_cleanup_policy p = cascade_policy(&s, i != 0);
		p.dry_run = i == 4;
		lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
		CHECK(lv_cleanup(ds, &p, &stats, &err));
		assert_int_equal(s.nbranch, 1);
		assert_int_equal(s.branch_cascade[0], i == 2 || i == 4);
		assert_int_equal(feat_files(st), i == 2 ? 4 : 8);
		/* the dry run lists what feat would lose (4 and 5: 3 is tagged, 6 the latest) */
		assert_int_equal(s.nbranch_files, i == 2 || i == 4 ? 6 : 0); /* data, .txn, manifest */
		assert_int_equal(stats.versions_removed, i == 2 || i == 4 ? 4 : 2);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

/* A branch's auto-cleanup value that does not parse stops the run before anything changes. */
static void test_cascade_bad_config(void **state)
{
	(void)state;
	static const char *const bad[3][5] = {
		{ "lance.auto_cleanup.interval", "3", "lance.auto_cleanup.older_than", "fortnight", NULL },
		{ "lance.auto_cleanup.interval", "3", "lance.auto_cleanup.retain_versions", "0", NULL },
		{ "lance.auto_cleanup.interval", "-3", NULL, NULL, NULL },
	};
	static const char *const key[3] = { "older_than", "retain_versions", "interval" };
	for (int i = 0; i < 3; i++) {
		lv_storage *st = with_branch(bad[i]);
		char *before = tu_snapshot(st);
		lv_dataset *ds = open_ds(st);
		seen s;
		lv_cleanup_policy p = cascade_policy(&s, true);
		assert_int_equal(lv_cleanup(ds, &p, NULL, &err), LV_EINVALID);
		assert_non_null(strstr(err.message, "branch feat"));
		assert_non_null(strstr(err.message, key[i]));
		tu_expect_unchanged(st, before);
		free(before);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions_model),
		cmocka_unit_test(test_versions_no_age_default),
		cmocka_unit_test(test_versions_refusals),
		cmocka_unit_test(test_policy_old_versions_refused),
		cmocka_unit_test(test_unknown_writer_flags),
		cmocka_unit_test(test_explain_facts),
		cmocka_unit_test(test_branch_cleanup),
		cmocka_unit_test(test_cascade),
		cmocka_unit_test(test_cascade_interval_zero),
		cmocka_unit_test(test_cascade_not_due),
		cmocka_unit_test(test_cascade_bad_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
