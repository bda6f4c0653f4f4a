/*
 * Progress callbacks (lv_progress_cb, lancever/common.h) of lv_checkpoint_write and
 * lv_check_run (issue 29): called on the caller's thread, at a bounded rate, with done/total
 * that only grow within a phase, each counted phase ending at its total, a run ending with
 * "done"; and structs of the version before the callback (lv_checkpoint_config 2,
 * lv_check_options 2) still accepted, their init writing nothing beyond that layout.
 * Each old-version struct lives in a heap block of exactly its layout, so the sanitized
 * build catches a read or write past it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include <lancever/lancever.h>

#include "support/synth.h"
#include "support/testutil.h"
#include "util/progress.h"

#define CHECK(expr) TU_CHECK(err, expr)

static lv_error err;

typedef struct call {
	char phase[40];
	uint64_t done, total;
} call;

typedef struct calls {
	call v[512];
	size_t n;
	bool other_thread;
	pthread_t self;
} calls;

static void record(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	calls *c = payload;
	c->other_thread |= !pthread_equal(pthread_self(), c->self);
	if (c->n < sizeof c->v / sizeof c->v[0]) {
		snprintf(c->v[c->n].phase, sizeof c->v[c->n].phase, "%s", phase);
		c->v[c->n].done = done;
		c->v[c->n].total = total;
	}
	c->n++;
}

/* The contract: bounded, on the caller's thread, monotone within a phase, "done" last. */
static void check_contract(const calls *c)
{
	assert_false(c->other_thread);
	assert_true(c->n > 2 && c->n < sizeof c->v / sizeof c->v[0]);
	for (size_t i = 1; i < c->n; i++) {
		const call *a = &c->v[i - 1], *b = &c->v[i];
		if (!strcmp(a->phase, b->phase) && a->total == b->total)
			assert_true(b->done >= a->done);
		assert_true(!b->total || b->done <= b->total);
	}
	const call *last = &c->v[c->n - 1];
	assert_string_equal(last->phase, "done");
	assert_true(last->done == 1 && last->total == 1);
}

/* The last call of `phase`, or NULL. */
static const call *last_of(const calls *c, const char *phase)
{
	for (size_t i = c->n; i-- > 0;)
		if (!strcmp(c->v[i].phase, phase))
			return &c->v[i];
	return NULL;
}

static void test_checkpoint_reports_phases(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(3000, 1700000000000LL);
	lv_dataset *ds = tu_open(st);
	calls *c = calloc(1, sizeof *c);
	c->self = pthread_self();
	lv_checkpoint_config cfg;
	CHECK(lv_checkpoint_config_init(&cfg, LV_CHECKPOINT_CONFIG_VERSION));
	cfg.on_progress = record;
	cfg.payload = c;
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	assert_true(r.written);
	check_contract(c);
	assert_string_equal(c->v[0].phase, "listing");
	const call *rd = last_of(c, "reading manifests");
	assert_non_null(rd);
	assert_true(rd->done == 3000 && rd->total == 3000); /* every manifest, read: 100% */
	const call *w = last_of(c, "writing checkpoint"), *v = last_of(c, "verifying");
	assert_true(w && w->done == 1 && w->total == 1);
	assert_true(v && v->done == 1 && v->total == 1);
	/* a second write reads nothing new: no "reading manifests" phase at all */
	memset(c, 0, sizeof *c);
	c->self = pthread_self();
	CHECK(lv_checkpoint_write(ds, &cfg, NULL, 0, &r, &err));
	assert_null(last_of(c, "reading manifests"));
	check_contract(c);
	free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_check_reports_phases(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(2500, 1700000000000LL);
	tu_checkpoint(st);
	lv_dataset *ds = tu_open(st);
	calls *c = calloc(1, sizeof *c);
	c->self = pthread_self();
	lv_check_options o;
	CHECK(lv_check_options_init(&o, LV_CHECK_OPTIONS_VERSION));
	o.on_progress = record;
	o.payload = c;
	lv_check *chk = NULL;
	CHECK(lv_check_run(&chk, ds, &o, &err));
	assert_int_equal(lv_check_problems(chk), 0);
	check_contract(c);
	const call *m = last_of(c, "checking manifests");
	assert_true(m && m->done == 2500 && m->total == 2500);
	const call *k = last_of(c, "checking checkpoints");
	assert_true(k && k->done == k->total && k->total >= 1);
	assert_non_null(last_of(c, "reading history"));
	lv_check_free(chk);
	free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* The version-2 layouts, as a caller built with the previous header sees them. */
typedef struct config_v2 {
	int version, enabled;
	int64_t max_entries, max_checkpoint_files;
	int archive;
	int64_t archive_segment_rows;
} config_v2;
typedef struct check_options_v2 {
	int version;
	bool salvage;
	const lv_checkpoint_config *checkpoint;
} check_options_v2;
_Static_assert(sizeof(config_v2) == offsetof(lv_checkpoint_config, on_progress), "v2 layout");
_Static_assert(sizeof(check_options_v2) == offsetof(lv_check_options, on_progress), "v2 layout");

/* Version 2 of each struct: init writes only its layout, and the entry points accept it. */
static void test_old_versions_accepted(void **state)
{
	(void)state;
	lv_storage *st = synth_mem_series(40, 1700000000000LL);
	lv_dataset *ds = tu_open(st);
	size_t csz = offsetof(lv_checkpoint_config, on_progress);
	unsigned char *blk = malloc(sizeof(lv_checkpoint_config));
	memset(blk, 0x5a, sizeof(lv_checkpoint_config));
	CHECK(lv_checkpoint_config_init((lv_checkpoint_config *)blk, 2));
	for (size_t i = csz; i < sizeof(lv_checkpoint_config); i++)
		assert_int_equal(blk[i], 0x5a); /* nothing beyond version 2's layout */
	free(blk);
	config_v2 *c2 = malloc(sizeof *c2); /* exactly version 2's bytes */
	CHECK(lv_checkpoint_config_init((lv_checkpoint_config *)c2, 2));
	c2->max_entries = 16;
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, (lv_checkpoint_config *)c2, NULL, 0, &r, &err));
	assert_true(r.written && r.entries <= 16);
	config_v2 *out2 = malloc(sizeof *out2);
	CHECK(lv_checkpoint_config_init((lv_checkpoint_config *)out2, 2));
	CHECK(lv_checkpoint_config_resolve((lv_checkpoint_config *)out2, ds, (lv_checkpoint_config *)c2,
					   &err));
	assert_int_equal(out2->version, 2);
	assert_int_equal(out2->max_entries, 16);
	free(out2);

	size_t osz = offsetof(lv_check_options, on_progress);
	blk = malloc(sizeof(lv_check_options));
	memset(blk, 0x5a, sizeof(lv_check_options));
	CHECK(lv_check_options_init((lv_check_options *)blk, 2));
	for (size_t i = osz; i < sizeof(lv_check_options); i++)
		assert_int_equal(blk[i], 0x5a);
	free(blk);
	check_options_v2 *o2 = malloc(sizeof *o2);
	CHECK(lv_check_options_init((lv_check_options *)o2, 2));
	o2->checkpoint = (lv_checkpoint_config *)c2;
	lv_check *chk = NULL;
	CHECK(lv_check_run(&chk, ds, (lv_check_options *)o2, &err));
	lv_check_free(chk);
	/* version 1 (before 1.0) stays refused */
	o2->version = 1;
	assert_int_equal(lv_check_run(&chk, ds, (lv_check_options *)o2, NULL), LV_EINVALID);
	c2->version = 1;
	assert_int_equal(lv_checkpoint_write(ds, (lv_checkpoint_config *)c2, NULL, 0, &r, NULL), LV_EINVALID);
	free(o2);
	free(c2);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* The rate limit: a million steps of one phase reach the callback a handful of times, its
 * first and its last step always. */
static void test_rate_bounded(void **state)
{
	(void)state;
	calls *c = calloc(1, sizeof *c);
	c->self = pthread_self();
	lv__progress p = { .cb = record, .payload = c };
	for (uint64_t i = 0; i <= 1000000; i++)
		lv__progress_report(&p, "removing old manifests", i, 1000000);
	lv__progress_report(&p, "removing old manifests", 5, 1000000); /* a count going back: kept */
	lv__progress_report(&p, "done", 1, 1);
	assert_true(c->n >= 3 && c->n < 64);
	assert_true(c->v[0].done == 0 && c->v[c->n - 2].done == 1000000);
	check_contract(c);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_reports_phases),
		cmocka_unit_test(test_check_reports_phases),
		cmocka_unit_test(test_old_versions_accepted),
		cmocka_unit_test(test_rate_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
