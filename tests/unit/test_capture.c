/*
 * lv_capture (lancever/capture.h): incremental capture of one dataset.
 *
 * Every case runs on the in-memory store with synthetic manifests; a "cleanup"
 * is what Lance's does to _versions/ (manifests deleted, no checkpoint
 * written), so only what a capture flushed keeps those versions in history.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>

#include <lancever/lancever.h>
#include <lancever/sys/storage.h>
#include <lancever/sys/testing.h>

#include "objstore/http.h"
#include "objstore/objstore.h"

#include "support/memcopy.h"
#include "support/rowcmp.h"
#include "support/relay.h"
#include "support/synth.h"
#include "support/testutil.h"

#define BASE_MS 1700000000000LL

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

/* Lance's cleanup: the manifests of first..last deleted, nothing else. */
static void lance_cleanup(lv_storage *st, uint64_t first, uint64_t last)
{
	char path[128];
	for (uint64_t v = first; v <= last; v++)
		CHECK(lv_storage_delete(st, synth_manifest_path(path, sizeof path, v), &err));
}

static lv_capture *open_capture(lv_dataset *ds)
{
	lv_capture *c = NULL;
	lv_capture_options o = LV_CAPTURE_OPTIONS_INIT;
	CHECK(lv_capture_open(&c, ds, &o, &err));
	return c;
}

static lv_capture_stats poll_ok(lv_capture *c)
{
	lv_capture_stats s = LV_CAPTURE_STATS_INIT;
	CHECK(lv_capture_poll(c, &s, &err));
	return s;
}

/* History of st from a fresh reader: versions 1..n each recorded except those in [gf, gl]. */
static void expect_history(lv_storage *st, uint64_t n, uint64_t gf, uint64_t gl, const char *reason)
{
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	size_t k = 0;
	for (uint64_t v = 1; v <= n; v++) {
		if (gf && v >= gf && v <= gl)
			continue;
		const lv_version_info *r = lv_version_list_get(l, k++);
		if (!r || r->version != v)
			fail_msg("history: version %llu missing", (unsigned long long)v);
	}
	assert_int_equal(lv_version_list_count(l), k);
	assert_int_equal(lv_version_list_gap_count(l), gf ? 1 : 0);
	assert_int_equal(rep.unrecorded_versions, gf ? gl - gf + 1 : 0);
	bool said = !reason;
	for (size_t i = 0; i < lv_dataset_warning_count(ds); i++) {
		const lv_warning *w = lv_dataset_warning(ds, i);
		if (reason && w->kind == LV_WARN_HISTORY_GAP && strstr(w->message, reason))
			said = true;
	}
	if (!said)
		fail_msg("no gap warning saying \"%s\"", reason);
	lv_version_list_free(l);
	lv_dataset_free(ds);
}

/* A store with versions 1..n and a checkpoint of them. */
static lv_storage *checkpointed(uint64_t n)
{
	lv_storage *st = synth_mem_series(n, BASE_MS);
	tu_checkpoint(st);
	return st;
}

/* ---- cases ---- */

static void test_poll_flush_survives_cleanup(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(5);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	CHECK(synth_range(st, 6, 10, BASE_MS));
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, 5);
	assert_int_equal(s.held, 5);
	assert_int_equal(s.missed, 0);
	assert_int_equal(s.newest_version, 10);
	assert_true(lv_capture_due(c, lv_capture_clock_ms() + 1000));
	assert_false(lv_capture_due(c, lv_capture_clock_ms() - 10000));
	lance_cleanup(st, 6, 9); /* after the poll, before the flush: the records are held */
	CHECK(lv_capture_flush(c, &err));
	CHECK(lv_capture_get_stats(c, &s));
	assert_int_equal(s.held, 0);
	assert_int_equal(s.flushes, 1);
	assert_int_equal(s.flushed_version, 10);
	assert_false(lv_capture_due(c, lv_capture_clock_ms() + 100000));
	expect_history(st, 10, 0, 0, NULL);
	/* and a later cleanup of what was live at the flush loses nothing either */
	CHECK(synth_range(st, 11, 12, BASE_MS));
	s = poll_ok(c);
	assert_int_equal(s.captured, 7);
	lance_cleanup(st, 10, 11);
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 12, 0, 0, NULL);
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* A flush's checkpoint also records the manifests live when it is written, newer than the
 * capture's position (ops found it: the watcher then counted them missed once a cleanup
 * removed them, and noted a false gap).  They are neither missed nor held again; a version
 * the flush did not record is still a gap. */
static void test_flush_records_newer_live_manifests(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(3);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	CHECK(synth_range(st, 4, 5, BASE_MS));
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, 2);
	CHECK(synth_range(st, 6, 9, BASE_MS)); /* committed after the poll, before the flush */
	CHECK(lv_capture_flush(c, &err));
	CHECK(lv_capture_get_stats(c, &s));
	assert_int_equal(s.flushed_version, 9);
	assert_int_equal(s.captured, 6); /* 4, 5 held; 6..9 recorded by the flush */
	lance_cleanup(st, 6, 8);         /* the writer's cleanup, before the next poll */
	CHECK(synth_range(st, 10, 11, BASE_MS));
	s = poll_ok(c);
	assert_int_equal(s.missed, 0);
	assert_int_equal(s.captured, 8); /* 9 is not held again: 10 and 11 are new */
	assert_int_equal(s.held, 2);
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 11, 0, 0, NULL);
	/* a version above the position that the flush did not record is still a gap */
	CHECK(synth_range(st, 12, 13, BASE_MS));
	s = poll_ok(c);
	CHECK(synth_range(st, 14, 16, BASE_MS));
	lance_cleanup(st, 14, 14); /* gone before the flush: not recorded by it */
	CHECK(lv_capture_flush(c, &err));
	lance_cleanup(st, 15, 15);
	s = poll_ok(c);
	assert_int_equal(s.missed, 1); /* 14 */
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 16, 14, 14, "committed and removed between two polls");
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Without the capture's held records the same cleanup loses 6..9 (what the test guards). */
static void test_checkpoint_alone_loses_them(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(5);
	CHECK(synth_range(st, 6, 10, BASE_MS));
	lance_cleanup(st, 6, 9);
	tu_checkpoint(st);
	expect_history(st, 10, 6, 9, "no record");
	lv_storage_free(st);
}

static void test_vanished_before_read_is_a_noted_gap(void **state)
{
	(void)state;
	lv_storage *mem = checkpointed(3);
	CHECK(synth_range(mem, 4, 6, BASE_MS));
	char path[128];
	lv_fault_spec f = { .ops = LV_FAULT_READ, .nth = 1, .persistent = true, .kind = LV_FAULT_HIDE,
			    .path_substring = synth_manifest_path(path, sizeof path, 5) };
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, mem, &f, &err)); /* listed, gone when read */
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, 2);
	assert_int_equal(s.missed, 1);
	assert_int_equal(s.newest_version, 6);
	lance_cleanup(st, 5, 5);
	CHECK(lv_storage_fault_set(st, NULL, &err));
	CHECK(lv_capture_flush(c, &err));
	char **notes = tu_list_paths(st, "_checkpoints/gaps", false);
	assert_int_equal(tu_list_len(notes), 1);
	assert_string_equal(notes[0], "_checkpoints/gaps/00000000000000000005-00000000000000000005."
				      LV_CAPTURE_GAP_VANISHED);
	tu_free_list(notes);
	expect_history(st, 6, 5, 5, "no record; lancever capture missed version 5: manifest removed before it could be read");
	CHECK(lv_storage_write(st, "_checkpoints/gaps/README", "x", 1, &err)); /* not a note: said */
	expect_history(st, 6, 5, 5, "1 name(s) in _checkpoints/gaps are not gap notes (ignored)");
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_removed_between_polls_is_a_noted_gap(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(3);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	CHECK(synth_range(st, 4, 8, BASE_MS));
	lance_cleanup(st, 4, 6); /* committed and removed before any poll saw them */
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, 2);
	assert_int_equal(s.missed, 3);
	CHECK(lv_capture_flush(c, &err));
	assert_int_equal(lv_dataset_warning_count(ds), 1); /* the flush's: 4-6 not in the checkpoint */
	assert_int_equal(lv_dataset_warning(ds, 0)->kind, LV_WARN_HISTORY_GAP);
	lv_capture_stats s2 = poll_ok(c);
	assert_int_equal(s2.missed, 3);
	assert_int_equal(lv_dataset_warning_count(ds), 0); /* cleared: none pile up */
	expect_history(st, 8, 4, 6, "committed and removed between two polls (or while no capture ran)");
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_restart_keeps_flushed_rereads_live(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(3);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	CHECK(synth_range(st, 4, 8, BASE_MS));
	poll_ok(c);
	CHECK(lv_capture_flush(c, &err));
	CHECK(synth_range(st, 9, 12, BASE_MS));
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.held, 4);
	lv_capture_free(c); /* killed: 9..12 never flushed */
	lance_cleanup(st, 4, 10);
	c = open_capture(ds); /* restarts at the newest checkpoint: 8 */
	CHECK(lv_capture_get_stats(c, &s));
	assert_int_equal(s.newest_version, 8);
	s = poll_ok(c);
	assert_int_equal(s.captured, 2); /* 11, 12: live, read again */
	assert_int_equal(s.missed, 2);   /* 9, 10: gone, a gap with its reason */
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 12, 9, 10, "committed and removed between two polls (or while no capture ran)");
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Another writer seals the cells of versions whose manifests a cleanup removed after the capture
 * read them: the capture's rows of those versions are kept (the segments lack them). */
static void test_rows_in_cells_another_writer_sealed(void **state)
{
	(void)state;
	const char *cfg[] = { "lance.version_checkpoint.max_entries", "8",
			      "lance.version_checkpoint.archive_segment_rows", "4", NULL };
	lv_storage *st = tu_mem();
	for (uint64_t v = 1; v <= 3; v++) {
		synth_commit sc = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1,
				    .config = cfg };
		CHECK(synth_write(st, &sc));
	}
	tu_checkpoint(st);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	for (uint64_t v = 4; v <= 6; v++) {
		synth_commit sc = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1,
				    .config = cfg };
		CHECK(synth_write(st, &sc));
	}
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.held, 3);
	lance_cleanup(st, 4, 5);
	for (uint64_t v = 7; v <= 10; v++) {
		synth_commit sc = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1,
				    .config = cfg };
		CHECK(synth_write(st, &sc));
	}
	lv_checkpoint_result r = tu_checkpoint(st); /* seals 1-4 (without 4) and 5-8 (without 5) */
	assert_true(r.archived_through >= 8);
	expect_history(st, 10, 4, 5, NULL);
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 10, 0, 0, NULL);
	/* and a later writer keeps them */
	tu_checkpoint(st);
	expect_history(st, 10, 0, 0, NULL);
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Writes versions first..last with the config map `cfg` (NULL: none). */
static void write_cfg(lv_storage *st, uint64_t first, uint64_t last, const char *const *cfg)
{
	for (uint64_t v = first; v <= last; v++) {
		synth_commit sc = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v, .read_version = v - 1,
				    .config = cfg };
		CHECK(synth_write(st, &sc));
	}
}

/*
 * A flush that also records live manifests beyond what it held (26..33 here) learns which it
 * recorded from the head it read back: that head is read once, not read back and then read
 * again through the history.  With a head too short to reach down to the position
 * (max_entries 4, older rows sealed into segments), the history answers; either way 26..33 are not called missed once a
 * cleanup removes their manifests.
 */
static void flush_recorded_case(const char *const *cfg, uint64_t head_reads)
{
	lv_storage *mem = tu_mem(), *st = NULL;
	write_cfg(mem, 1, 20, cfg);
	tu_checkpoint(mem);
	CHECK(lv_storage_fault_wrap(&st, mem, NULL, &err));
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	write_cfg(st, 21, 25, cfg);
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.held, 5);
	write_cfg(st, 26, 33, cfg); /* live when the flush writes: it records them too */
	lv_fault_spec count = { .ops = LV_FAULT_READ, .path_substring = "_checkpoints/00000000000000000033" };
	CHECK(lv_storage_fault_set(st, &count, &err));
	CHECK(lv_capture_flush(c, &err));
	assert_int_equal(lv_storage_fault_calls(st), head_reads);
	CHECK(lv_storage_fault_set(st, NULL, &err));
	CHECK(lv_capture_get_stats(c, &s));
	assert_int_equal(s.captured, 13);
	lance_cleanup(st, 21, 33);
	write_cfg(st, 34, 34, cfg);
	s = poll_ok(c);
	assert_int_equal(s.missed, 0);
	assert_int_equal(s.captured, 14);
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 34, 0, 0, NULL);
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_flush_reads_its_head_once(void **state)
{
	(void)state;
	flush_recorded_case(NULL, 1);
	const char *small[] = { "lance.version_checkpoint.max_entries", "4",
				"lance.version_checkpoint.archive_segment_rows", "4", NULL };
	flush_recorded_case(small, 2); /* the read-back, then the history's read */
}

/* A history with three noted gaps: the gap notes are listed once for the history and every
 * gap's reason asked after it, and afresh by the next history call. */
static void test_gap_reasons_list_the_notes_once(void **state)
{
	(void)state;
	lv_storage *mem = checkpointed(3);
	lv_dataset *ds = tu_open(mem);
	lv_capture *c = open_capture(ds);
	for (uint64_t base = 4; base <= 12; base += 4) {
		CHECK(synth_range(mem, base, base + 3, BASE_MS));
		lance_cleanup(mem, base, base + 1); /* gone before the capture saw them: a gap */
		lv_capture_stats s = poll_ok(c);
		assert_int_equal(s.missed, (base / 4) * 2);
		CHECK(lv_capture_flush(c, &err));
	}
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, mem, NULL, &err));
	ds = tu_open(st);
	lv_fault_spec count = { .ops = LV_FAULT_LIST, .path_substring = "gaps" };
	CHECK(lv_storage_fault_set(st, &count, &err));
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	assert_int_equal(lv_version_list_gap_count(l), 3);
	assert_int_equal(lv_storage_fault_calls(st), 1);
	for (size_t i = 0; i < 3; i++) {
		uint64_t first = 0, last = 0;
		assert_true(lv_version_list_gap(l, i, &first, &last));
		const char *reason = NULL;
		CHECK(lv_capture_gap_reason(ds, first, last, &reason, NULL, &err));
		assert_non_null(reason);
		assert_string_equal(reason, LV_CAPTURE_GAP_UNSEEN);
	}
	assert_int_equal(lv_storage_fault_calls(st), 1);
	lv_version_list_free(l);
	l = tu_history(ds, &rep);
	assert_int_equal(lv_storage_fault_calls(st), 2); /* a new call lists again */
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

typedef struct flush_job {
	lv_capture *c;
	int rc;
	lv_error err;
} flush_job;

static void *flush_run(void *p)
{
	flush_job *j = p;
	j->rc = lv_capture_flush(j->c, &j->err);
	return NULL;
}

static void test_two_captures_race(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(3);
	lv_dataset *da = tu_open(st), *db = tu_open(st);
	lv_capture *a = open_capture(da), *b = open_capture(db);
	CHECK(synth_range(st, 4, 6, BASE_MS));
	poll_ok(a);
	CHECK(synth_range(st, 7, 9, BASE_MS));
	poll_ok(b); /* b holds 4..9, a 4..6 */
	lance_cleanup(st, 4, 8);
	flush_job ja = { a, 0, { 0 } }, jb = { b, 0, { 0 } };
	pthread_t ta, tb;
	assert_int_equal(pthread_create(&ta, NULL, flush_run, &ja), 0);
	assert_int_equal(pthread_create(&tb, NULL, flush_run, &jb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	if (ja.rc || jb.rc)
		fail_msg("flushes: %d (%s), %d (%s)", ja.rc, ja.err.message, jb.rc, jb.err.message);
	expect_history(st, 9, 0, 0, NULL);
	/* again, the same records from both: idempotent */
	CHECK(synth_range(st, 10, 11, BASE_MS));
	poll_ok(a);
	poll_ok(b);
	lance_cleanup(st, 9, 10);
	CHECK(lv_capture_flush(b, &err));
	CHECK(lv_capture_flush(a, &err));
	expect_history(st, 11, 0, 0, NULL);
	lv_capture_free(a);
	lv_capture_free(b);
	lv_dataset_free(da);
	lv_dataset_free(db);
	lv_storage_free(st);
}

static void test_idle_poll_costs_one_listing(void **state)
{
	(void)state;
	lv_storage *st = checkpointed(20);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	lv_capture_stats s0 = poll_ok(c);
	assert_int_equal(s0.captured, 0);
	lv_capture_stats s1 = poll_ok(c);
	assert_int_equal(s1.requests - s0.requests, 1);
	assert_int_equal(s1.polls, 2);
	CHECK(lv_capture_flush(c, &err)); /* nothing held: no request */
	CHECK(lv_capture_get_stats(c, &s0));
	assert_int_equal(s0.requests, s1.requests);
	assert_int_equal(s0.flushes, 0);
	/* a poll that finds one new version: the listing and its read */
	CHECK(synth_range(st, 21, 21, BASE_MS));
	s0 = poll_ok(c);
	assert_int_equal(s0.captured, 1);
	assert_true(s0.requests - s1.requests >= 2 && s0.requests - s1.requests <= 3);
	assert_true(s0.last_lag_ms > 0);
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_fresh_dataset_and_failures(void **state)
{
	(void)state;
	lv_storage *mem = synth_mem_series(4, BASE_MS); /* no checkpoint: starts at 0 */
	lv_fault_spec never = { 0 };
	lv_storage *st = NULL;
	CHECK(lv_storage_fault_wrap(&st, mem, &never, &err));
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, 4);
	/* a failed flush keeps the records; the next one writes them */
	lv_fault_spec f = { .ops = LV_FAULT_CREATE | LV_FAULT_WRITE, .nth = 1, .persistent = true,
			    .kind = LV_FAULT_FAIL };
	CHECK(lv_storage_fault_set(st, &f, &err));
	lv_error e = { 0 };
	assert_true(lv_capture_flush(c, &e) < 0);
	CHECK(lv_capture_get_stats(c, &s));
	assert_int_equal(s.held, 4);
	assert_int_equal(s.errors, 1);
	CHECK(lv_storage_fault_set(st, NULL, &err));
	lance_cleanup(st, 1, 3);
	CHECK(lv_capture_flush(c, &err));
	expect_history(st, 4, 0, 0, NULL);
	/* a failed poll takes nothing and leaves the position */
	CHECK(synth_range(st, 5, 6, BASE_MS));
	lv_fault_spec fr = { .ops = LV_FAULT_READ, .nth = 1, .persistent = true, .kind = LV_FAULT_FAIL };
	CHECK(lv_storage_fault_set(st, &fr, &err));
	lv_capture_stats s2 = LV_CAPTURE_STATS_INIT;
	assert_true(lv_capture_poll(c, &s2, &e) < 0);
	assert_int_equal(s2.newest_version, 4);
	assert_int_equal(s2.held, 0);
	CHECK(lv_storage_fault_set(st, NULL, &err));
	s2 = poll_ok(c);
	assert_int_equal(s2.captured, 6);
	/* arguments */
	lv_capture_options bad = LV_CAPTURE_OPTIONS_INIT;
	bad.flush_ms = -1;
	lv_capture *x = NULL;
	assert_int_equal(lv_capture_open(&x, ds, &bad, &e), LV_EINVALID);
	bad.version = 0;
	assert_int_equal(lv_capture_open(&x, ds, &bad, &e), LV_EINVALID);
	assert_null(x);
	lv_capture_stats bs = { 0 };
	assert_int_equal(lv_capture_poll(c, &bs, &e), LV_EINVALID);
	assert_int_equal(lv_capture_poll(NULL, NULL, &e), LV_EINVALID);
	assert_int_equal(lv_capture_flush(NULL, &e), LV_EINVALID);
	assert_false(lv_capture_due(NULL, 0));
	lv_capture_free(NULL);
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

/* Datasets Lance wrote (tests/fixtures/lance8: t.lance with V2 names, v1.lance with V1 names):
 * every version captured, then every manifest but the latest removed, then flushed. */
static void capture_fixture(const char *rel)
{
	lv_storage *st = tu_mem_copy(rel);
	lv_dataset *ds = tu_open(st);
	lv_version_list *before = tu_history(ds, NULL);
	size_t n = lv_version_list_count(before);
	assert_true(n >= 2);
	lv_capture *c = open_capture(ds);
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, n);
	const lv_version_info *last = lv_version_list_get(before, n - 1);
	uint64_t latest = last->version;
	char **names = tu_list_paths(st, "_versions", false);
	for (size_t i = 0; names[i]; i++) /* Lance's cleanup of all but the latest */
		if (strcmp(names[i], last->manifest_path) && strstr(names[i], ".manifest"))
			CHECK(lv_storage_delete(st, names[i], &err));
	tu_free_list(names);
	CHECK(lv_capture_flush(c, &err));
	lv_dataset *d2 = tu_open(st);
	lv_version_list *after = tu_history(d2, NULL);
	assert_int_equal(lv_version_list_count(after), n);
	for (size_t i = 0; i < n; i++) {
		const lv_version_info *a = lv_version_list_get(before, i), *b = lv_version_list_get(after, i);
		assert_true(tu_same_checkpoint_row(a, b));
		assert_int_equal(b->is_cleaned_up, b->version != latest);
	}
	lv_version_list_free(before);
	lv_version_list_free(after);
	lv_capture_free(c);
	lv_dataset_free(d2);
	lv_dataset_free(ds);
	lv_storage_free(st);
}

static void test_real_lance_dataset(void **state)
{
	(void)state;
	capture_fixture("lance8/t.lance");
	capture_fixture("lance8/v1.lance");
}

/* ---- bounded listing on object stores ---- */

/* An object store whose LIST answers three pages of two V2 manifest names each, newest first. */
static int pages_asked;

static int fake_list_page(void *impl, const char *kprefix, bool recursive, const char *token,
			  const char *dname, const char *what, lv__list_page *pg, lv_error *e)
{
	(void)impl, (void)recursive, (void)dname, (void)what, (void)e;
	int page = token ? token[1] - '0' : 0;
	pages_asked++;
	pg->objs = calloc(2, sizeof *pg->objs);
	for (int i = 0; i < 2; i++) {
		char path[128];
		synth_manifest_path(path, sizeof path, (uint64_t)(6 - 2 * page - i));
		pg->objs[i].key = malloc(strlen(kprefix) + 64);
		sprintf(pg->objs[i].key, "%s%s", kprefix, strchr(path, '/') + 1);
	}
	pg->n = pg->cap = 2;
	pg->truncated = page < 2;
	if (pg->truncated) {
		pg->next_token = strdup("p0");
		pg->next_token[1] = (char)('1' + page);
	}
	return 0;
}

static const lv__objsvc fake_svc = { .name = "Fake", .list_page = fake_list_page };

typedef struct upto {
	uint64_t stop_at; /* stop at the first version <= this */
	size_t seen;
	char last[128];
} upto;

static int upto_cb(const lv_list_entry *en, void *payload)
{
	upto *u = payload;
	u->seen++;
	snprintf(u->last, sizeof u->last, "%s", en->path);
	uint64_t v = UINT64_MAX - strtoull(strrchr(en->path, '/') + 1, NULL, 10);
	return v <= u->stop_at ? 1 : 0;
}

static void test_objstore_listing_stops_at_the_page(void **state)
{
	(void)state;
	lv__http_limits lim;
	lv__http_limits_default(&lim);
	lv__objstore o = { .svc = &fake_svc, .prefix = (char *)"" };
	CHECK(lv__http_new(&o.http, &lim, "fake", &err));
	upto u = { .stop_at = 5 }; /* 6 and 5 are on the first page */
	pages_asked = 0;
	assert_int_equal(lv__obj_list(&o, "_versions", false, upto_cb, &u, &err), 1);
	assert_int_equal(pages_asked, 1);
	assert_int_equal(u.seen, 2);
	u = (upto){ .stop_at = 0 }; /* a whole listing: every page, in key order */
	pages_asked = 0;
	CHECK(lv__obj_list(&o, "_versions", false, upto_cb, &u, &err));
	assert_int_equal(pages_asked, 3);
	assert_int_equal(u.seen, 6);
	char path[128];
	assert_string_equal(u.last, synth_manifest_path(path, sizeof path, 1));
	lv__http_free(o.http);
}

/* A "remote" store over the in-memory one (lists in name order), counting entries delivered. */
static size_t delivered;

static void count_entry(void *arg, const lv_list_entry *e)
{
	(void)arg;
	(void)e;
	delivered++;
}

static void test_remote_poll_stops_listing_early(void **state)
{
	(void)state;
	lv_storage *mem = checkpointed(50);
	tu_relay_hooks h = { .listed = count_entry };
	lv_storage *st = tu_relay(mem, &h, LV_STORAGE_FLAG_REMOTE);
	lv_dataset *ds = tu_open(st);
	lv_capture *c = open_capture(ds);
	CHECK(synth_range(mem, 51, 52, BASE_MS));
	delivered = 0;
	lv_capture_stats s = poll_ok(c);
	assert_int_equal(s.captured, 2);
	assert_int_equal(delivered, 3); /* 52, 51, then 50: the listing stops there */
	delivered = 0;
	s = poll_ok(c);
	assert_int_equal(delivered, 1);
	lance_cleanup(mem, 40, 51);
	CHECK(lv_capture_flush(c, &err));
	expect_history(mem, 52, 0, 0, NULL);
	lv_capture_free(c);
	lv_dataset_free(ds);
	lv_storage_free(st);
	lv_storage_free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poll_flush_survives_cleanup),
		cmocka_unit_test(test_checkpoint_alone_loses_them),
		cmocka_unit_test(test_vanished_before_read_is_a_noted_gap),
		cmocka_unit_test(test_removed_between_polls_is_a_noted_gap),
		cmocka_unit_test(test_flush_records_newer_live_manifests),
		cmocka_unit_test(test_restart_keeps_flushed_rereads_live),
		cmocka_unit_test(test_two_captures_race),
		cmocka_unit_test(test_rows_in_cells_another_writer_sealed),
		cmocka_unit_test(test_idle_poll_costs_one_listing),
		cmocka_unit_test(test_flush_reads_its_head_once),
		cmocka_unit_test(test_gap_reasons_list_the_notes_once),
		cmocka_unit_test(test_fresh_dataset_and_failures),
		cmocka_unit_test(test_real_lance_dataset),
		cmocka_unit_test(test_objstore_listing_stops_at_the_page),
		cmocka_unit_test(test_remote_poll_stops_listing_early),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
