/*
 * Unit tests: versions() on an object store reads the live manifests newer than the newest
 * listed checkpoint while the ladder reads that checkpoint (core/versions.c, issue 30 §4),
 * and uses them only when they are exactly what the checkpoint used lacks.  The store is a
 * memory store behind a backend that says it is remote and counts reads per path.
 *  - a checkpoint at 10 and live 1..15: one answer equal to the local one, the tail read
 *    while the checkpoint is (the checkpoint's read waits for a tail read to begin: it
 *    never does when the two are read one after the other), each tail manifest read once
 *    (the early read used, not repeated);
 *  - the newest checkpoint damaged: the ladder falls back to an older one, whose tail is
 *    longer than the early read; the answer is still the local one (the early read is
 *    wasted, never trusted);
 *  - a tail manifest removed before the call: skipped with a warning, as without the
 *    early read.
 * With a tag, still two rounds (t_tags_in_two_rounds): the tags listed with the first
 * round's listings, the tag file read with the checkpoint (versions() and history).
 * An archived versions() lists _versions/ and _checkpoints/ once (t_archived_lists_once).
 * And the refs a versions() list carries (lv_version_list_refs, issue 29's tag names with no
 * second load): the tags its is_tagged came from, also on a cached answer; none on history.
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
#include <lancever/sys/storage.h>

#include "support/relay.h"
#include "support/synth.h"
#include "support/testutil.h"

/* ---- a remote backend over a memory store, counting manifest reads ---- */

/* Requests whose start another can wait for (issue 30 §4's rounds with tags). */
enum { K_VLIST, K_TAGLIST, K_CKPT, K_TAGFILE, K_COUNT };

typedef struct remote {
	lv_storage *inner;
	bool gates;          /* each K_* request waits for its partner to begin */
	int begun[K_COUNT];  /* atomics */
	int met[K_COUNT];    /* the partner had begun (within 2 s) */
	int lists_versions, lists_checkpoints; /* listings of _versions/ and _checkpoints/ (atomics) */
	int reads[64];       /* by version, manifests only (atomics) */
	uint64_t tail_from;  /* a manifest read of this version or newer is "the tail" */
	int tail_started;    /* atomic */
	int overlapped;      /* the newest checkpoint's read saw a tail read begin */
} remote;

/* A request of kind k has begun; with gates on, it waits (up to 2 s) for its partner to begin
 * too: the partner begins only if the two are in flight at once (one round, not two). */
static void meet(remote *r, int k)
{
	static const int partner[K_COUNT] = { K_TAGLIST, K_VLIST, K_TAGFILE, K_CKPT };
	__atomic_store_n(&r->begun[k], 1, __ATOMIC_SEQ_CST);
	if (!r->gates)
		return;
	for (int i = 0; i < 2000 && !__atomic_load_n(&r->begun[partner[k]], __ATOMIC_SEQ_CST); i++) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	__atomic_store_n(&r->met[k], __atomic_load_n(&r->begun[partner[k]], __ATOMIC_SEQ_CST),
			 __ATOMIC_SEQ_CST);
}

static void count(remote *r, const char *path)
{
	if (!strcmp(path, "_checkpoints/00000000000000000010.lance"))
		meet(r, K_CKPT);
	if (!strncmp(path, "_refs/tags/", 11))
		meet(r, K_TAGFILE);
	unsigned long long inv;
	if (sscanf(path, "_versions/%llu.manifest", &inv) == 1) {
		unsigned long long v = UINT64_MAX - inv; /* V2 names */
		if (v < 64)
			__atomic_add_fetch(&r->reads[v], 1, __ATOMIC_SEQ_CST);
		if (r->tail_from && v >= r->tail_from)
			__atomic_store_n(&r->tail_started, 1, __ATOMIC_SEQ_CST);
	}
	/* The newest checkpoint's read waits (up to 2 s) for a tail read to begin: it begins
	 * only if the tail is read while the checkpoint is (one round trip, not two). */
	if (r->tail_from && !strcmp(path, "_checkpoints/00000000000000000010.lance")) {
		for (int i = 0; i < 2000 && !__atomic_load_n(&r->tail_started, __ATOMIC_SEQ_CST); i++) {
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
		}
		r->overlapped = __atomic_load_n(&r->tail_started, __ATOMIC_SEQ_CST);
	}
}

/* Relay hooks (support/relay.h). */
static void before_list(void *arg, const char *dir)
{
	remote *r = arg;
	if (!strcmp(dir, "_versions")) {
		__atomic_add_fetch(&r->lists_versions, 1, __ATOMIC_SEQ_CST);
		meet(r, K_VLIST);
	}
	if (!strcmp(dir, "_checkpoints"))
		__atomic_add_fetch(&r->lists_checkpoints, 1, __ATOMIC_SEQ_CST);
	if (!strcmp(dir, "_refs/tags"))
		meet(r, K_TAGLIST);
}

static void before_read(void *arg, const char *path)
{
	count(arg, path);
}

static lv_storage *remote_over(remote *r, lv_storage *inner)
{
	memset(r, 0, sizeof *r);
	r->inner = inner;
	tu_relay_hooks h = { .arg = r, .before_list = before_list, .before_read = before_read };
	lv_storage *st = tu_relay(inner, &h, LV_STORAGE_FLAG_REMOTE);
	assert_true(lv_storage_is_remote(st));
	return st;
}

/* ---- helpers ---- */

static lv_version_list *versions_of(lv_storage *st, lv_history_report *rep)
{
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = tu_versions(ds, rep);
	lv_dataset_free(ds);
	return l;
}

static void expect_same(const lv_version_list *a, const lv_version_list *b)
{
	assert_int_equal(lv_version_list_count(a), lv_version_list_count(b));
	for (size_t i = 0; i < lv_version_list_count(a); i++) {
		const lv_version_info *x = lv_version_list_get(a, i), *y = lv_version_list_get(b, i);
		assert_int_equal(x->version, y->version);
		assert_int_equal(x->timestamp_millis, y->timestamp_millis);
		assert_int_equal(x->total_rows, y->total_rows);
		assert_int_equal(x->has_manifest_details, y->has_manifest_details);
		assert_string_equal(x->manifest_path, y->manifest_path);
		assert_string_equal(x->transaction_uuid, y->transaction_uuid);
	}
}

/* live 1..15, a checkpoint at 10 (and, with two, one at 8 before it) */
static lv_storage *dataset(bool two)
{
	lv_storage *mem = synth_mem_series(two ? 8 : 10, 1700000000000);
	if (two) {
		tu_checkpoint(mem);
		assert_int_equal(synth_range(mem, 9, 10, 1700000000000), 0);
	}
	tu_checkpoint(mem);
	assert_int_equal(synth_range(mem, 11, 15, 1700000000000), 0);
	return mem;
}

static void t_tail_read_once(void **state)
{
	(void)state;
	lv_storage *mem = dataset(false);
	lv_history_report lrep = LV_HISTORY_REPORT_INIT, rrep = LV_HISTORY_REPORT_INIT;
	lv_version_list *local = versions_of(mem, &lrep);
	remote r;
	lv_storage *st = remote_over(&r, mem);
	r.tail_from = 11;
	lv_version_list *far = versions_of(st, &rrep);
	expect_same(local, far);
	assert_true(r.overlapped); /* the tail was read while the checkpoint was */
	assert_int_equal(rrep.rung, LV_RUNG_NEWEST_CHECKPOINT);
	assert_int_equal(rrep.manifests_read, 5);
	for (int v = 11; v <= 15; v++)
		assert_int_equal(r.reads[v], 1); /* the early read, not a second one */
	lv_version_list_free(local);
	lv_version_list_free(far);
	lv_storage_free(st);
	lv_storage_free(mem);
}

static void t_fallback_to_an_older_checkpoint(void **state)
{
	(void)state;
	lv_storage *mem = dataset(true);
	lv_history_report lrep = LV_HISTORY_REPORT_INIT, rrep = LV_HISTORY_REPORT_INIT;
	/* the newest checkpoint (at 10) damaged: its last byte flipped */
	char path[64];
	snprintf(path, sizeof path, "_checkpoints/%020d.lance", 10);
	lv_buf b = tu_read(mem, path);
	((uint8_t *)b.ptr)[b.size - 1] ^= 0xFF;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_write(mem, path, b.ptr, b.size, &e), 0);
	lv_buf_dispose(&b);
	lv_version_list *truth = versions_of(mem, &lrep); /* the local answer on the same state */
	assert_int_equal(lrep.rung, LV_RUNG_OLDER_CHECKPOINT);
	remote r;
	lv_storage *st = remote_over(&r, mem);
	lv_version_list *far = versions_of(st, &rrep);
	expect_same(truth, far);
	assert_int_equal(rrep.rung, LV_RUNG_OLDER_CHECKPOINT);
	assert_int_equal(rrep.checkpoint_version, 8);
	assert_int_equal(rrep.manifests_read, 7); /* 9..15: the early 11..15 were not enough */
	lv_version_list_free(truth);
	lv_version_list_free(far);
	lv_storage_free(st);
	lv_storage_free(mem);
}

static void t_removed_tail_manifest(void **state)
{
	(void)state;
	lv_storage *mem = dataset(false);
	char path[64];
	lv_error e = { 0 };
	assert_int_equal(lv_storage_delete(mem, synth_manifest_path(path, sizeof path, 13), &e), 0);
	lv_history_report lrep = LV_HISTORY_REPORT_INIT, rrep = LV_HISTORY_REPORT_INIT;
	lv_version_list *local = versions_of(mem, &lrep);
	remote r;
	lv_storage *st = remote_over(&r, mem);
	lv_version_list *far = versions_of(st, &rrep);
	expect_same(local, far);
	assert_int_equal(lv_version_list_count(far), 14);
	assert_int_equal(rrep.manifests_read, 4);
	lv_version_list_free(local);
	lv_version_list_free(far);
	lv_storage_free(st);
	lv_storage_free(mem);
}

static void t_list_carries_its_refs(void **state)
{
	(void)state;
	lv_storage *mem = dataset(false);
	assert_int_equal(synth_tag(mem, "five", 5), 0);
	lv_dataset *ds = tu_open(mem);
	for (int call = 0; call < 2; call++) { /* the second answer comes from the handle's cache */
		lv_version_list *l = tu_versions(ds, NULL);
		const lv_refs *r = lv_version_list_refs(l);
		assert_non_null(r);
		assert_int_equal(lv_refs_tag_count(r), 1);
		assert_string_equal(lv_refs_tag(r, 0)->name, "five");
		assert_int_equal(lv_refs_tag(r, 0)->version, 5);
		assert_true(lv_version_list_get(l, 4)->is_tagged);
		lv_version_list_free(l);
	}
	lv_version_list *h = tu_history(ds, NULL);
	assert_null(lv_version_list_refs(h));
	assert_null(lv_version_list_refs(NULL));
	lv_version_list_free(h);
	lv_dataset_free(ds);
	lv_storage_free(mem);
}

/*
 * With a tag, versions() and history from a checkpoint still take two rounds on an object
 * store: the tags directory is listed with _versions/ (and _checkpoints/), and the tag file
 * is read with the checkpoint.  Each of those requests waits for its partner to begin: before
 * the change the tag file was read in the first round, so its partner, the checkpoint read,
 * could not begin until it had ended (the wait ran out; met[] stayed 0).
 */
static void t_tags_in_two_rounds(void **state)
{
	(void)state;
	lv_storage *mem = dataset(false);
	assert_int_equal(synth_tag(mem, "five", 5), 0);
	for (int hist = 0; hist < 2; hist++) {
		lv_history_report lrep = LV_HISTORY_REPORT_INIT, rrep = LV_HISTORY_REPORT_INIT;
		lv_dataset *lds = tu_open(mem);
		lv_version_list *local = hist ? tu_history(lds, &lrep) : tu_versions(lds, &lrep);
		lv_dataset_free(lds);
		remote r;
		lv_storage *st = remote_over(&r, mem);
		r.gates = true;
		lv_dataset *ds = tu_open(st);
		lv_version_list *far = hist ? tu_history(ds, &rrep) : tu_versions(ds, &rrep);
		expect_same(local, far);
		assert_true(lv_version_list_get(far, 4)->is_tagged);
		assert_int_equal(rrep.rung, LV_RUNG_NEWEST_CHECKPOINT);
		for (int k = 0; k < K_COUNT; k++) {
			if (!r.met[k])
				fail_msg("%s: request kind %d did not meet its partner", hist ? "history" : "versions", k);
		}
		lv_version_list_free(local);
		lv_version_list_free(far);
		lv_dataset_free(ds);
		lv_storage_free(st);
	}
	lv_storage_free(mem);
}

/*
 * versions() on a dataset whose older live versions are in the archive (more than 8,192 older
 * than the head's rows) is answered by the history stream, from versions()'s own first round:
 * _versions/ and _checkpoints/ are listed once.  Before, the history stream listed both again.
 */
static void t_archived_lists_once(void **state)
{
	(void)state;
	lv_storage *mem = synth_mem_series(8400, 1700000000000);
	lv_dataset *ds = tu_open(mem);
	lv_checkpoint_config cfg = LV_CHECKPOINT_CONFIG_INIT;
	cfg.max_entries = 100;
	lv_checkpoint_result res = LV_CHECKPOINT_RESULT_INIT;
	lv_error e = { 0 };
	assert_int_equal(lv_checkpoint_write(ds, &cfg, NULL, 0, &res, &e), 0);
	lv_history_report lrep = LV_HISTORY_REPORT_INIT, rrep = LV_HISTORY_REPORT_INIT;
	lv_version_list *local = tu_versions(ds, &lrep);
	lv_dataset_free(ds);
	assert_true(lrep.segments_read > 0); /* the archive answered */
	assert_int_equal(lrep.manifests_read, 0);
	remote r;
	lv_storage *st = remote_over(&r, mem);
	lv_version_list *far = versions_of(st, &rrep);
	expect_same(local, far);
	assert_int_equal(lv_version_list_count(far), 8400);
	assert_int_equal(r.lists_versions, 1);
	assert_int_equal(r.lists_checkpoints, 1);
	lv_version_list_free(local);
	lv_version_list_free(far);
	lv_storage_free(st);
	lv_storage_free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tail_read_once),
		cmocka_unit_test(t_fallback_to_an_older_checkpoint),
		cmocka_unit_test(t_removed_tail_manifest),
		cmocka_unit_test(t_list_carries_its_refs),
		cmocka_unit_test(t_tags_in_two_rounds),
		cmocka_unit_test(t_archived_lists_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
