/*
 * Racing writers with different archive settings (issue 24, case 3).  Writer
 * A (segments of 50) is about to create its head when writer B (segments of
 * 40) runs to the end; A then finds the name taken and merges.  Before the
 * fix, the merged head's index listed both writers' overlapping segments
 * (41-80 next to 51-100) and every reader, the writer's own included,
 * rejected it.  Now the index is one cover chosen from both, the same in
 * either order, and history stays whole.  Made deterministic by a storage
 * hook that runs B at A's first create of its head.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/checkpoint/codec.h"
#include "lancever/lancever.h"
#include "support/relay.h"
#include "support/synth.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)
#define T0 1700000000000LL
#define NOW 1800000000000LL
#define N 130
#define HEAD "_checkpoints/00000000000000000130.lance"

static lv_error err;

enum job { JOB_CHECKPOINT, JOB_CLEANUP };

/* The hook: at the first create of HEAD, the other writer runs on the inner store. */
typedef struct hook {
	lv_storage *inner;
	bool fired;
	int job;
	int64_t segment_rows, max_entries;
	int rc;
	lv_error e;
} hook;

static lv_checkpoint_config cfg_of(int64_t s, int64_t max)
{
	lv_checkpoint_config c = LV_CHECKPOINT_CONFIG_INIT;
	c.archive_segment_rows = s;
	c.max_entries = max;
	return c;
}

static int run_job(lv_storage *st, int job, int64_t s, int64_t max, lv_error *e)
{
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_config cfg = cfg_of(s, max);
	int rc;
	if (job == JOB_CLEANUP) {
		lv_cleanup_policy p = tu_retain_policy(3, NOW, &cfg);
		p.older_than_ms = 0;
		lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
		rc = lv_cleanup(ds, &p, &stats, e);
	} else {
		lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
		rc = lv_checkpoint_write(ds, &cfg, NULL, 0, &r, e);
	}
	lv_dataset_free(ds);
	return rc;
}

/* A relay hook (support/relay.h): B runs at A's first create of HEAD. */
static void before_create(void *arg, const char *path)
{
	hook *h = arg;
	if (!h->fired && !strcmp(path, HEAD)) {
		h->fired = true;
		h->rc = run_job(h->inner, h->job, h->segment_rows, h->max_entries, &h->e);
	}
}

/* The head's archive index text (malloc'ed). */
static char *head_index(lv_storage *st)
{
	lv_buf b = tu_read(st, HEAD);
	lv__cp_file f;
	memset(&f, 0, sizeof f);
	CHECK(lv__cp_decode(b.ptr, b.size, HEAD, true, NULL, 0, &f, &err));
	assert_non_null(f.archive);
	char *ix = strdup(f.archive);
	lv__cp_file_dispose(&f);
	lv_buf_dispose(&b);
	return ix;
}

/* History whole (1..N), answered from the head, and `check` finds nothing wrong. */
static void expect_sound(lv_storage *st)
{
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *h = tu_history(ds, &rep);
	assert_int_equal(rep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(lv_version_list_count(h), N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(lv_version_list_get(h, i)->version, i + 1);
	lv_version_list_free(h);
	lv_check *c = NULL;
	lv_check_options o = LV_CHECK_OPTIONS_INIT;
	CHECK(lv_check_run(&c, ds, &o, &err));
	for (size_t i = 0; i < lv_check_count(c); i++) {
		const lv_check_item *it = lv_check_get(c, i);
		if (it->status != 0)
			fail_msg("check: %s: %s", it->path ? it->path : "(gap)", it->message);
	}
	assert_int_equal(lv_check_problems(c), 0);
	lv_check_free(c);
	lv_dataset_free(ds);
}

/* A (sa/ma) races B (sb/mb), B finishing inside A's head write; returns the head's index. */
static char *race(int job, int64_t sa, int64_t ma, int64_t sb, int64_t mb)
{
	lv_storage *mem = synth_mem_series(N, T0);
	hook *h = calloc(1, sizeof *h);
	*h = (hook){ .inner = mem, .job = job, .segment_rows = sb, .max_entries = mb };
	tu_relay_hooks rh = { .arg = h, .before_create = before_create };
	lv_storage *st = tu_relay(mem, &rh, 0);
	lv_error e = { 0 };
	int rc = run_job(st, job, sa, ma, &e);
	if (rc != 0)
		fail_msg("writer A: %d %s", rc, e.message);
	assert_true(h->fired);
	if (h->rc != 0)
		fail_msg("writer B: %d %s", h->rc, h->e.message);
	expect_sound(mem);
	char *ix = head_index(mem);
	lv_storage_free(st);
	free(h);
	lv_storage_free(mem);
	return ix;
}

/* Both orders of the race (A/B sizes swapped) must give the same index; returned (malloc'ed). */
static char *race_both_orders(int job, int64_t s1, int64_t m1, int64_t s2, int64_t m2)
{
	char *ab = race(job, s1, m1, s2, m2);
	char *ba = race(job, s2, m2, s1, m1);
	assert_string_equal(ab, ba); /* the same cover, whichever merged last */
	if (getenv("LV_TEST_VERBOSE"))
		printf("%s", ab);
	free(ba);
	return ab;
}

/* The repro: checkpoint --segment-rows 50 --max-entries 200 racing 40 / 150. */
static void test_checkpoints_mixed_sizes(void **state)
{
	(void)state;
	free(race_both_orders(JOB_CHECKPOINT, 50, 200, 40, 150));
}

/* Two cleanups with different sizes: the same, and nothing of history lost. */
static void test_cleanups_mixed_sizes(void **state)
{
	(void)state;
	free(race_both_orders(JOB_CLEANUP, 50, 200, 40, 150));
}

/* Sizes that leave versions to left-out segments only (30 vs 50: the cover is 1-50, 51-100,
 * and only the left-out 91-120 holds 101-120): their rows stay in the head as orphans. */
static void test_cover_keeps_orphans(void **state)
{
	(void)state;
	char *ix = race_both_orders(JOB_CLEANUP, 30, 200, 50, 200);
	assert_non_null(strstr(ix, "\no 101 120\n"));
	free(ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoints_mixed_sizes),
		cmocka_unit_test(test_cleanups_mixed_sizes),
		cmocka_unit_test(test_cover_keeps_orphans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
