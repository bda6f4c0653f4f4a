/*
 * The allocation-failure sweep (issue 26 section 6, as SQLite tests malloc failure): for
 * each main entry point on the in-memory store, fail allocation N of one call (dataset
 * open, the call, the answer's release) for N = 1, 2, ... until a run makes fewer than N
 * allocations.  Every run must
 *   - return LV_ENOMEM, or succeed with the same answer as a run without failure (a
 *     fallback that absorbed the failure; counted, never a silently different answer);
 *   - leak nothing (LeakSanitizer: a recoverable check after each entry point's sweep in
 *     the ASan build; LV_SWEEP_LEAKCHECK_EACH=1 checks after every run, to find the N);
 *   - leave recorded history as it was (writers: a fresh reader's history has the same
 *     rows, no gap, and each row's is_cleaned_up as before the call or as after a
 *     successful one).
 * The counts per entry point are printed ("sweep: ...") for RELIABILITY.md.
 * Needs the library's test hooks (LV_TEST_HOOKS: lv__alloc_fail_at in util/util.h).
 */
#include <errno.h>
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

/* The hook's declaration; the library must be built with the hooks (else: undefined
 * lv__alloc_fail_at at link time). */
#ifndef LV_TEST_HOOKS
#define LV_TEST_HOOKS 1
#endif
#include "support/memcopy.h"
#include "support/rowcmp.h"
#include "support/synth.h"
#include "support/testutil.h"
#include "util/util.h"



#define BASE_MS 1700000000000
#define NOW_MS (BASE_MS + 86400000)
#define NVERSIONS 12

static lv_storage *plain;   /* versions 1..12, a tag on 3; checkpoint at 8 (head + segments) */
static lv_storage *cleaned; /* plain after a cleanup that kept the newest 4 (and tagged 3) */
static lv_storage *gappy;   /* versions 1..12 without a checkpoint, manifest 5 gone: a gap */
static lv_storage *noted;   /* gappy with a capture's note on its gap (removed-unseen) */

/* ---- the answer of a run, as text (libc memory: not counted by the hook) ---- */

static char answer[1 << 16];
static size_t answer_len;

static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(answer + answer_len, sizeof answer - answer_len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof answer - answer_len);
	answer_len += (size_t)n;
}

static void say_row(const lv_version_info *v)
{
	say("%llu %lld %llu %llu %d %d %s %s %s;", (unsigned long long)v->version,
	    (long long)v->timestamp_millis, (unsigned long long)v->total_rows,
	    (unsigned long long)v->total_fragments, v->is_tagged, v->is_cleaned_up,
	    v->operation_type ? v->operation_type : "-",
	    v->transaction_uuid ? v->transaction_uuid : "-", v->transaction_properties);
}

static void say_list(const lv_version_list *l)
{
	for (size_t i = 0; i < lv_version_list_count(l); i++)
		say_row(lv_version_list_get(l, i));
	say("gaps %zu", lv_version_list_gap_count(l));
}

/* ---- the entry points ---- */

/* Says the list a call made (rc 0), frees it, returns rc. */
static int said(int rc, lv_version_list *l)
{
	if (rc == 0)
		say_list(l);
	lv_version_list_free(l);
	return rc;
}

static int run_versions(lv_dataset *ds, lv_error *e)
{
	lv_version_list *l = NULL;
	int rc = lv_versions(&l, ds, NULL, e); /* before l is read */
	return said(rc, l);
}

static int run_history(lv_dataset *ds, lv_error *e)
{
	lv_version_list *l = NULL;
	int rc = lv_history(&l, ds, NULL, e); /* before l is read */
	return said(rc, l);
}

/* lv_version_list_select of a history: its first, middle and last entries. */
static int run_select(lv_dataset *ds, lv_error *e)
{
	lv_version_list *l = NULL, *s = NULL;
	int rc = lv_history(&l, ds, NULL, e);
	size_t n = lv_version_list_count(l);
	size_t idx[3] = { 0, n / 2, n - 1 };
	if (rc == 0)
		rc = lv_version_list_select(&s, l, idx, n >= 3 ? 3 : 0, e); /* before s is read */
	lv_version_list_free(l);
	return said(rc, s);
}

static int run_as_of(lv_dataset *ds, lv_error *e)
{
	lv_version_list *l = NULL;
	int rc = lv_version_as_of(&l, ds, BASE_MS + 5500, false, NULL, e); /* before l is read */
	return said(rc, l);
}

static int run_checkpoint(lv_dataset *ds, lv_error *e)
{
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	int rc = lv_checkpoint_write(ds, NULL, NULL, 0, &r, e);
	if (rc == 0)
		say("%d %llu %llu", r.written, (unsigned long long)r.latest_version,
		    (unsigned long long)r.entries);
	return rc;
}

static int run_cleanup(lv_dataset *ds, lv_error *e)
{
	lv_cleanup_policy p = tu_retain_policy(4, NOW_MS, NULL);
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	int rc = lv_cleanup(ds, &p, &s, e);
	if (rc == 0)
		say("%llu", (unsigned long long)s.versions_removed);
	return rc;
}

static int run_expire(lv_dataset *ds, lv_error *e)
{
	lv_expire_policy p = LV_EXPIRE_POLICY_INIT;
	p.retain_versions = 4;
	p.error_if_tagged_old_versions = false;
	p.now_ms = NOW_MS;
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	int rc = lv_expire(ds, &p, &s, e);
	if (rc == 0)
		say("%llu", (unsigned long long)s.versions_removed);
	return rc;
}

/* The whole history as an Arrow stream, batches of 5 rows, read to its end. */
static int run_arrow(lv_dataset *ds, lv_error *e)
{
	struct ArrowArrayStream s;
	lv_arrow_options o = LV_ARROW_OPTIONS_INIT;
	o.batch_rows = 5;
	int rc = lv_history_arrow_stream(&s, ds, &o, NULL, e);
	if (rc)
		return rc;
	struct ArrowSchema schema;
	int x = s.get_schema(&s, &schema);
	if (x == 0) {
		say("%s %lld;", schema.format, (long long)schema.n_children);
		schema.release(&schema);
	}
	for (int guard = 0; x == 0 && guard < 100; guard++) {
		struct ArrowArray b;
		if ((x = s.get_next(&s, &b)) || !b.release)
			break;
		say("%lld;", (long long)b.length);
		b.release(&b);
	}
	if (x) { /* the stream's errors are errno values */
		assert_int_equal(x, ENOMEM);
		assert_non_null(strstr(s.get_last_error(&s), "out of memory"));
		rc = lv__err(e, LV_ENOMEM, "%s", s.get_last_error(&s));
	}
	s.release(&s);
	return rc;
}

static int show(lv_dataset *ds, uint64_t v, lv_error *e)
{
	lv_version_list *l = NULL;
	int source = 0;
	int rc = lv_show(&l, ds, v, &source, e);
	if (rc == 0)
		say("%d ", source);
	return said(rc, l);
}

static int run_show_live(lv_dataset *ds, lv_error *e) { return show(ds, 12, e); }
static int run_show_recorded(lv_dataset *ds, lv_error *e) { return show(ds, 2, e); }

static int run_diff(lv_dataset *ds, lv_error *e)
{
	lv_diff *d = NULL;
	int rc = lv_diff_versions(&d, ds, 2, 12, e);
	if (rc == 0) {
		say("%lld", (long long)lv_diff_ms_between(d));
		for (size_t i = 0; i < lv_diff_count(d); i++) {
			int64_t delta;
			assert_true(lv_diff_counter(d, i, NULL, NULL, NULL, &delta));
			say(" %lld", (long long)delta);
		}
	}
	lv_diff_free(d);
	return rc;
}

/* A capture of `plain` (checkpoint at 8): versions 9..12 polled, held and flushed. */
static int run_capture(lv_dataset *ds, lv_error *e)
{
	lv_capture *c = NULL;
	lv_capture_stats s = LV_CAPTURE_STATS_INIT;
	int rc = lv_capture_open(&c, ds, NULL, e);
	if (rc == 0)
		rc = lv_capture_poll(c, &s, e);
	if (rc == 0)
		rc = lv_capture_flush(c, e);
	if (rc == 0)
		say("captured %llu missed %llu", (unsigned long long)s.captured, (unsigned long long)s.missed);
	lv_capture_free(c);
	return rc;
}

/* The reason a capture's note gives for `noted`'s gap at 5 (lv_capture_gap_reason). */
static int run_gap_reason(lv_dataset *ds, lv_error *e)
{
	const char *reason = NULL, *text = NULL;
	int rc = lv_capture_gap_reason(ds, 5, 5, &reason, &text, e);
	if (rc == 0)
		say("%s: %s", reason ? reason : "-", text ? text : "-");
	return rc;
}

/* ---- the sweep ---- */

typedef struct entry {
	const char *name;
	lv_storage **base;
	int (*run)(lv_dataset *ds, lv_error *e);
	bool writes;
} entry;

typedef struct run_out {
	int rc;
	uint64_t allocs; /* allocations the run made (counted up to the failure and after it) */
	char *answer;    /* malloc'ed */
	char message[LV_ERROR_MESSAGE_MAX];
} run_out;

/* One run on `st`: open, the call, free; allocation `nth` fails (0 = none). */
static run_out run_once(const entry *en, lv_storage *st, uint64_t nth)
{
	lv_error e = { 0 };
	lv_dataset *ds = NULL;
	answer_len = 0;
	answer[0] = 0;
	lv__alloc_fail_at(nth);
	int rc = lv_dataset_open_storage(&ds, st, NULL, &e);
	if (rc == 0)
		rc = en->run(ds, &e);
	if (rc == 0) /* a failure turned into a warning would change the answer */
		for (size_t i = 0; i < lv_dataset_warning_count(ds); i++)
			say("; warning %d %.120s", lv_dataset_warning(ds, i)->kind,
			    lv_dataset_warning(ds, i)->message);
	lv_dataset_free(ds);
	run_out o = { rc, lv__alloc_fail_at(0), strdup(answer), { 0 } };
	memcpy(o.message, e.message, sizeof o.message);
	return o;
}

/* The history a fresh reader sees on `st` (the reference for writers). */
static lv_version_list *fresh_history(lv_storage *st)
{
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_history(ds, NULL);
	lv_dataset_free(ds);
	return l;
}

/* After a writer's run, history is as before (`pre`) or as after a successful run (`post`). */
static void expect_history(const char *name, uint64_t n, lv_storage *st, const lv_version_list *pre,
			   const lv_version_list *post)
{
	lv_version_list *l = fresh_history(st);
	size_t count = lv_version_list_count(l);
	if (count != lv_version_list_count(pre) || lv_version_list_gap_count(l))
		fail_msg("%s, allocation %llu failed: history has %zu rows, %zu gaps (want %zu, 0)",
			 name, (unsigned long long)n, count, lv_version_list_gap_count(l),
			 lv_version_list_count(pre));
	for (size_t i = 0; i < count; i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		const lv_version_info *a = lv_version_list_get(pre, i), *b = lv_version_list_get(post, i);
		if (!tu_same_checkpoint_row(v, a) ||
		    (v->is_cleaned_up != a->is_cleaned_up && v->is_cleaned_up != b->is_cleaned_up))
			fail_msg("%s, allocation %llu failed: history row of version %llu changed", name,
				 (unsigned long long)n, (unsigned long long)v->version);
	}
	lv_version_list_free(l);
}

typedef struct counts {
	uint64_t allocs, runs, enomem, absorbed;
} counts;

static counts sweep(const entry *en)
{
	counts c = { 0 };
	lv_storage *st = tu_mem_clone(*en->base);
	run_out ref = run_once(en, st, 0);
	if (ref.rc)
		fail_msg("%s without failure: %d %s", en->name, ref.rc, ref.message);
	c.allocs = ref.allocs;
	lv_version_list *pre = fresh_history(*en->base), *post = fresh_history(st);
	lv_storage_free(st);
	bool each = getenv("LV_SWEEP_LEAKCHECK_EACH") != NULL;
	for (uint64_t n = 1;; n++) {
		st = tu_mem_clone(*en->base);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		run_out o = run_once(en, st, n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		c.runs++;
		if (getenv("LV_SWEEP_VERBOSE"))
			fprintf(stderr, "%s %llu: %d %llu %.1f ms %s\n", en->name, (unsigned long long)n,
				o.rc, (unsigned long long)o.allocs,
				(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
				o.message);
		if (o.rc != 0 && o.rc != LV_ENOMEM)
			fail_msg("%s, allocation %llu failed: returned %d (%s), not LV_ENOMEM", en->name,
				 (unsigned long long)n, o.rc, o.message);
		if (o.rc == LV_ENOMEM)
			c.enomem++;
		if (o.rc == 0 && strcmp(o.answer, ref.answer)) {
			size_t at = 0;
			while (o.answer[at] == ref.answer[at])
				at++;
			while (at && o.answer[at - 1] != ';')
				at--;
			fail_msg("%s, allocation %llu failed: succeeded with another answer at\n%.200s\nwant\n%.200s",
				 en->name, (unsigned long long)n, o.answer + at, ref.answer + at);
		}
		if (o.rc == 0 && o.allocs >= n)
			c.absorbed++;
		if (en->writes)
			expect_history(en->name, n, st, pre, post);
		lv_storage_free(st);
		free(o.answer);
		if (each && tu_leak_check())
			fail_msg("%s: a leak after allocation %llu failed", en->name, (unsigned long long)n);
		if (o.allocs < n) { /* nothing failed: the end */
			if (o.rc)
				fail_msg("%s: failed (%d %s) with no allocation failing", en->name, o.rc,
					 o.message);
			break;
		}
	}
	lv_version_list_free(pre);
	lv_version_list_free(post);
	free(ref.answer);
	if (tu_leak_check())
		fail_msg("%s: leaks (rerun with LV_SWEEP_LEAKCHECK_EACH=1 to find the allocation)",
			 en->name);
	printf("sweep: %-16s %6llu allocations per call, %6llu runs, %6llu LV_ENOMEM, %llu absorbed\n",
	       en->name, (unsigned long long)c.allocs, (unsigned long long)c.runs,
	       (unsigned long long)c.enomem, (unsigned long long)c.absorbed);
	return c;
}

static const entry entries[] = {
	{ "versions", &plain, run_versions, false },
	{ "history", &plain, run_history, false },
	{ "as_of", &plain, run_as_of, false },
	{ "checkpoint", &plain, run_checkpoint, true },
	{ "cleanup", &plain, run_cleanup, true },
	{ "expire", &plain, run_expire, true },
	{ "arrow_history", &plain, run_arrow, false },
	{ "show_live", &cleaned, run_show_live, false },
	{ "show_recorded", &cleaned, run_show_recorded, false },
	{ "diff", &cleaned, run_diff, false },
	{ "history_gap", &gappy, run_history, false },
	{ "select_gap", &gappy, run_select, false },
	{ "capture", &plain, run_capture, true },
	{ "gap_reason", &noted, run_gap_reason, false },
};

/* One cmocka test per entry point (state: its index in entries[]). */
static void test_sweep(void **state)
{
	const entry *en = *state;
	const char *only = getenv("LV_SWEEP_ONLY"); /* debugging: one entry point */
	if (only && strcmp(only, en->name))
		skip();
	counts c = sweep(en);
	assert_true(c.runs >= c.allocs); /* every allocation of the call was failed once */
	assert_true(c.enomem > 0);
}

static int setup(void **state)
{
	(void)state;
	lv_error e = { 0 };
	const char *cfg[] = { "lance.version_checkpoint.max_entries", "4", NULL };
	plain = tu_mem();
	for (uint64_t v = 1; v <= NVERSIONS; v++) {
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v,
				   .read_version = v - 1, .config = cfg };
		TU_CHECK(e, synth_write(plain, &c));
		if (v == 8)
			tu_checkpoint(plain);
	}
	TU_CHECK(e, synth_tag(plain, "kept", 3));
	cleaned = tu_mem_clone(plain);
	lv_dataset *ds = tu_open(cleaned);
	tu_cleanup_retain(ds, 4, NOW_MS, NULL);
	lv_dataset_free(ds);
	gappy = synth_mem_series(NVERSIONS, BASE_MS);
	char path[128];
	TU_CHECK(e, lv_storage_delete(gappy, synth_manifest_path(path, sizeof path, 5), &e));
	noted = tu_mem_clone(gappy);
	static const char note[] = "noted\n";
	TU_CHECK(e, lv_storage_write(noted, "_checkpoints/gaps/00000000000000000005-00000000000000000005."
				     LV_CAPTURE_GAP_UNSEEN, note, sizeof note - 1, &e));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lv_storage_free(plain);
	lv_storage_free(cleaned);
	lv_storage_free(gappy);
	lv_storage_free(noted);
	return 0;
}

#define SWEEP(name, i) { "sweep_" name, test_sweep, NULL, NULL, (void *)&entries[i] }

int main(void)
{
	const struct CMUnitTest tests[] = {
		SWEEP("versions", 0), SWEEP("history", 1), SWEEP("as_of", 2),
		SWEEP("checkpoint", 3), SWEEP("cleanup", 4), SWEEP("expire", 5),
		SWEEP("arrow_history", 6), SWEEP("show_live", 7), SWEEP("show_recorded", 8),
		SWEEP("diff", 9), SWEEP("history_gap", 10), SWEEP("select_gap", 11),
		SWEEP("capture", 12), SWEEP("gap_reason", 13),
	};
	_Static_assert(sizeof tests / sizeof tests[0] == sizeof entries / sizeof entries[0],
		       "one test per entry point");
	return cmocka_run_group_tests(tests, setup, teardown);
}
