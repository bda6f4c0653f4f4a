/*
 * Unit tests: lancever expire (issue 18) -- manifest-only expiry.  Policies and thinning
 * against a brute-force model; history written first; only manifests deleted; manifests a
 * checkpoint covers are not read; the delete rate limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/sys/testing.h>

#include "support/memcopy.h"
#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)
#define BASE_MS 1700000000000LL
#define NV 240
#define HOUR 3600000LL

static lv_error err;
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint64_t rng(void) { return tu_rng(&rng_state); }

typedef struct model {
	int64_t ts[NV + 1];
	bool tagged[NV + 1];
	uint64_t base; /* a branch's parent version */
} model;

/* NV versions over ~20 hours, commit times skewed by up to an hour either way. */
static lv_storage *build(model *m)
{
	lv_storage *st = tu_mem();
	memset(m, 0, sizeof *m);
	for (uint64_t v = 1; v <= NV; v++) {
		m->ts[v] = BASE_MS + (int64_t)v * 300000 + (int64_t)(rng() % (2 * HOUR)) - HOUR;
		synth_commit c = { .version = v, .ts_ms = m->ts[v], .read_version = v - 1 };
		CHECK(synth_write(st, &c));
	}
	const uint64_t tags[] = { 7, 50, 51, 133 };
	for (size_t i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "t%llu", (unsigned long long)tags[i]);
		CHECK(synth_tag(st, name, tags[i]));
		m->tagged[tags[i]] = true;
	}
	m->base = 90;
	const char *br = "{\"parentBranch\": null, \"parentVersion\": 90, \"createAt\": 1700000100, "
			 "\"manifestSize\": 300, \"metadata\": {}}";
	CHECK(lv_storage_write(st, "_refs/branches/b.json", br, strlen(br), &err));
	return st;
}

static int64_t window_of(int64_t ts, int64_t w)
{
	return ts / w - (ts % w < 0);
}

/* The brute-force answer: which versions a policy expires. */
static void brute(const model *m, const lv_expire_policy *p, bool out[NV + 1])
{
	int64_t older = p->older_than_ms;
	if (older < 0 && p->retain_versions < 0 && !p->before_version)
		older = 7 * 24 * HOUR;
	for (uint64_t v = 1; v <= NV; v++) {
		bool sel = v < NV;
		if (older >= 0)
			sel = sel && m->ts[v] < p->now_ms - older;
		if (p->before_version)
			sel = sel && v < p->before_version;
		if (p->retain_versions > 0)
			sel = sel && v + (uint64_t)p->retain_versions <= NV;
		out[v] = sel && !m->tagged[v] && v != m->base;
	}
	if (p->keep_one_per_ms <= 0)
		return;
	bool keep[NV + 1] = { 0 };
	for (uint64_t v = 1; v <= NV; v++) { /* the newest version of each window */
		bool newest = true;
		for (uint64_t k = v + 1; k <= NV && newest; k++)
			newest = window_of(m->ts[k], p->keep_one_per_ms) != window_of(m->ts[v], p->keep_one_per_ms);
		keep[v] = newest;
	}
	for (uint64_t v = 1; v <= NV; v++)
		out[v] = out[v] && !keep[v];
}

static bool manifest_exists(lv_storage *st, uint64_t v)
{
	char path[96];
	return lv_storage_head(st, synth_manifest_path(path, sizeof path, v), NULL, NULL, &err) == 0;
}

static int count_cb(const lv_list_entry *e, void *p)
{
	(void)e;
	(*(size_t *)p)++;
	return 0;
}

static size_t count_files(lv_storage *st, const char *dir)
{
	size_t n = 0;
	CHECK(lv_storage_list(st, dir, true, count_cb, &n, &err));
	return n;
}

/* Every version recorded, the expired ones cleaned up. */
static void assert_history(lv_storage *st, const bool expired[NV + 1])
{
	lv_dataset *ds = tu_open(st);
	tu_expect_history(ds, NV, expired);
	lv_dataset_free(ds);
}

/* Policies (alone and combined) and thinning against the brute-force model. */
static void test_policies_against_model(void **state)
{
	(void)state;
	model m;
	lv_storage *base = build(&m);
	int64_t now = BASE_MS + 240 * 300000 + 2 * HOUR;
	typedef struct { int64_t older, retain; uint64_t before; int64_t per; } shape;
	const shape shapes[] = {
		{ -1, -1, 0, -1 },          { 10 * HOUR, -1, 0, -1 }, { -1, 40, 0, -1 },
		{ -1, -1, 100, -1 },        { 5 * HOUR, 30, 200, -1 }, { 0, -1, 0, HOUR },
		{ 0, -1, 0, 24 * HOUR },    { 3 * HOUR, -1, 0, HOUR }, { -1, 10, 0, 2 * HOUR },
		{ 0, -1, 0, 1 },            { 0, -1, 0, 7 * 60000 },
	};
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		for (int dry = 0; dry < 2; dry++) {
			lv_storage *st = tu_mem_clone(base);
			lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
			p.older_than_ms = shapes[k].older;
			p.retain_versions = shapes[k].retain;
			p.before_version = shapes[k].before;
			p.keep_one_per_ms = shapes[k].per;
			p.error_if_tagged_old_versions = false;
			p.now_ms = now;
			p.dry_run = dry;
			lv_checkpoint_config seg16 = LV_CHECKPOINT_CONFIG_INIT;
			seg16.archive_segment_rows = 16;
			p.checkpoint = &seg16;
			bool want[NV + 1];
			brute(&m, &p, want);
			size_t nwant = 0;
			for (uint64_t v = 1; v <= NV; v++)
				nwant += want[v];
			size_t data = count_files(st, "_transactions");
			lv_dataset *ds = tu_open(st);
			lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
			CHECK(lv_expire(ds, &p, &s, &err));
			lv_dataset_free(ds);
			assert_int_equal(s.versions_removed, nwant);
			for (uint64_t v = 1; v <= NV; v++)
				if (manifest_exists(st, v) != (dry || !want[v]))
					fail_msg("shape %zu%s: version %llu %s", k, dry ? " (dry run)" : "",
						 (unsigned long long)v, want[v] ? "kept" : "expired");
			assert_int_equal(count_files(st, "_transactions"), data); /* only manifests go */
			if (dry)
				assert_int_equal(count_files(st, "_checkpoints"), 0);
			else
				assert_history(st, want);
			lv_storage_free(st);
		}
	}
	lv_storage_free(base);
}

/* A tagged version the policy selects: refused by default (nothing changed), kept otherwise. */
static void test_tagged_refused(void **state)
{
	(void)state;
	model m;
	lv_storage *st = build(&m);
	lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
	p.retain_versions = 5;
	p.now_ms = BASE_MS + 1000 * HOUR;
	lv_dataset *ds = tu_open(st);
	assert_int_equal(lv_expire(ds, &p, NULL, &err), LV_ETAGGED);
	assert_non_null(strstr(err.message, "\"t50\": 50"));
	for (uint64_t v = 1; v <= NV; v++)
		assert_true(manifest_exists(st, v));
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/*
 * Manifests a checkpoint covers are not read: with the history checkpointed, an expiry reads
 * the same few manifests (the identity probe, the latest's config) whether it covers 60
 * versions or 240.  Counted by failing the (K+1)th manifest read.
 */
static size_t manifest_reads(uint64_t n)
{
	lv_storage *mem = tu_mem();
	for (uint64_t v = 1; v <= n; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1 };
		CHECK(synth_write(mem, &c));
	}
	lv_dataset *ds = tu_open(mem);
	lv_checkpoint_config cfg = LV_CHECKPOINT_CONFIG_INIT;
	cfg.archive_segment_rows = 16;
	cfg.max_entries = 20;
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	lv_dataset_free(ds);
	lv_fault_spec none = { 0, 0, false, LV_FAULT_FAIL, NULL };
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, mem, &none, &err));
	size_t k;
	for (k = 0; k < 50; k++) {
		lv_fault_spec f = { LV_FAULT_READ, k + 1, true, LV_FAULT_FAIL, "_versions/" };
		CHECK(lv_storage_fault_set(st, &f, &err));
		ds = tu_open(st);
		lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
		p.retain_versions = 3;
		p.dry_run = true; /* counts reads without changing the store */
		p.checkpoint = &cfg;
		int rc = lv_expire(ds, &p, NULL, &err);
		lv_dataset_free(ds);
		if (rc == 0)
			break;
	}
	lv_storage_free(st);
	return k;
}

static void test_covered_manifests_not_read(void **state)
{
	(void)state;
	size_t small = manifest_reads(61), big = manifest_reads(241);
	assert_true(small <= 3);
	assert_true(big <= 3);
}

/* --delete-rate-limit: 40 deletes at 100 per second take at least ~0.4 s. */
static void test_delete_rate_limit(void **state)
{
	(void)state;
	model m;
	lv_storage *st = build(&m);
	lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
	p.before_version = 45;
	p.error_if_tagged_old_versions = false;
	p.delete_rate_limit = 100;
	p.now_ms = BASE_MS + 1000 * HOUR;
	lv_dataset *ds = tu_open(st);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	CHECK(lv_expire(ds, &p, &s, &err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_int_equal(s.versions_removed, 43); /* 1..44 less tag 7 */
	assert_true(secs >= 0.35); /* batches of 10 every 0.1 s: the rate limit is a lower bound */
	lv_dataset_free(ds);
	lv_storage_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policies_against_model),
		cmocka_unit_test(test_tagged_refused),
		cmocka_unit_test(test_covered_manifests_not_read),
		cmocka_unit_test(test_delete_rate_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
