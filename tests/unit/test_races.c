/*
 * Unit tests: history and checkpoints racing a concurrent cleanup, made
 * deterministic.  A "hook" storage backend forwards every call to an inner
 * in-memory store and, at the first read of a chosen path, runs what a
 * concurrent `lancever cleanup` would do at that moment (write its checkpoint
 * marking versions cleaned up, then delete their manifests, and prune an
 * older checkpoint) before the read proceeds, so the read finds the file gone.
 *
 * A cleanup always records the versions it removes in a checkpoint before it
 * deletes their manifests, so a reader that finds a manifest (or a checkpoint
 * file) gone must look again: the history is in a checkpoint written
 * meanwhile.  Taking the vanished manifest as "skip it" lost those versions
 * from history; a checkpoint written that way lost them for good.
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

#include "core/checkpoint/checkpoint_internal.h"
#include "support/relay.h"
#include "support/synth.h"
#include "support/testutil.h"

static lv_error err;

#define CHECK(expr) TU_CHECK(err, expr)

#define BASE_MS 1700000000000LL

/* ---- the hook backend ---- */

typedef struct hook {
	lv_storage *inner; /* borrowed */
	const char *trigger; /* fires on reads of this path... */
	const char *trigger_write; /* ...or on writes (replacements) of this one */
	const char *trigger_list; /* ...or on a listing of this directory */
	int list_skip;            /* listings of `trigger_list` to let through before firing */
	void (*fire)(struct hook *h);
	void *arg;
	int skip; /* reads of `trigger` to let through before firing */
	pthread_mutex_t mu;
	int seen;
	char manifest[64]; /* trigger's text when it is a manifest path (hook_on_manifest) */
} hook;

static void maybe_fire(hook *h, const char *path)
{
	pthread_mutex_lock(&h->mu);
	if (h->trigger && !strcmp(path, h->trigger) && h->seen++ == h->skip)
		h->fire(h);
	pthread_mutex_unlock(&h->mu);
}

/* The relay's hooks (support/relay.h). */
static void before_list(void *arg, const char *dir)
{
	hook *h = arg;
	pthread_mutex_lock(&h->mu);
	if (h->trigger_list && !strcmp(dir, h->trigger_list) && h->list_skip-- == 0) {
		h->trigger_list = NULL;
		h->fire(h);
	}
	pthread_mutex_unlock(&h->mu);
}

static void before_read(void *arg, const char *path)
{
	maybe_fire(arg, path);
}

static void before_write(void *arg, const char *path)
{
	hook *h = arg;
	if (h->trigger_write && !strcmp(path, h->trigger_write) && h->seen++ == h->skip)
		h->fire(h);
}

static void closed(void *arg)
{
	hook *h = arg;
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static hook *last_hook; /* the impl of the handle hook_new made last */

static lv_storage *hook_new(lv_storage *inner, const char *trigger, int skip, void (*fire)(hook *),
			    void *arg)
{
	hook *h = calloc(1, sizeof *h);
	assert_non_null(h);
	h->inner = inner;
	h->trigger = trigger;
	h->fire = fire;
	h->arg = arg;
	h->skip = skip;
	pthread_mutex_init(&h->mu, NULL);
	tu_relay_hooks rh = { .arg = h, .before_list = before_list, .before_read = before_read,
			      .before_write = before_write, .closed = closed };
	lv_storage *st = tu_relay(inner, &rh, 0);
	last_hook = h;
	return st;
}

/* Makes the hook fire on the first write (replacement) of `path` instead of a read. */

static void hook_arm_write(lv_storage *st, const char *path)
{
	(void)st; /* the impl of the handle hook_new just made */
	last_hook->trigger_write = path;
}

/* ---- helpers ---- */

static lv_dataset *open_ds(lv_storage *st)
{
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.threads = 1; /* manifests read in version order: the hook fires at a known point */
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open_storage(&ds, st, &o, &err));
	return ds;
}

/* The checkpoint a cleanup of versions 1..upto (cleaned = 1..cleaned_upto) writes: its name and bytes. */
typedef struct cp_bytes {
	char path[64];
	lv_buf bytes;
} cp_bytes;

static cp_bytes cleanup_checkpoint(uint64_t upto, uint64_t cleaned_upto)
{
	lv_storage *st = synth_mem_series(upto, BASE_MS);
	lv_dataset *ds = open_ds(st);
	uint64_t cleaned[64];
	for (uint64_t v = 1; v <= cleaned_upto; v++)
		cleaned[v - 1] = v;
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, cleaned, cleaned_upto, &r, &err));
	assert_true(r.written);
	cp_bytes c;
	memset(&c, 0, sizeof c);
	snprintf(c.path, sizeof c.path, "%s", r.path);
	CHECK(lv_storage_read(st, r.path, &c.bytes, &err));
	lv_dataset_free(ds);
	lv_storage_free(st);
	return c;
}

/* A new in-memory store holding versions 1..10 and a plain checkpoint of them (*r). */
static lv_storage *checkpointed_series(lv_checkpoint_result *r)
{
	lv_storage *mem = synth_mem_series(10, BASE_MS);
	lv_dataset *ds = open_ds(mem);
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, r, &err));
	lv_dataset_free(ds);
	return mem;
}

/* The rows of the checkpoint file at `path` of `st`. */
static lv_version_list *checkpoint_rows(lv_storage *st, const char *path)
{
	lv_buf b = tu_read(st, path);
	lv_version_list *rows = NULL;
	int64_t created;
	CHECK(lv__cp_decode_rows(b.ptr, b.size, path, true, &rows, &created, &err));
	lv_buf_dispose(&b);
	return rows;
}

/* What the concurrent cleanup does when the hook fires. */
typedef struct cleanup_sim {
	cp_bytes cp;          /* its checkpoint */
	uint64_t delete_upto; /* then deletes manifests 1..delete_upto */
	const char *prune;    /* and prunes this checkpoint file (NULL = none) */
} cleanup_sim;

static void fire_cleanup(hook *h)
{
	cleanup_sim *s = h->arg;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_create(h->inner, s->cp.path, s->cp.bytes.ptr, s->cp.bytes.size, &e), 0);
	for (uint64_t v = 1; v <= s->delete_upto; v++) {
		char p[64];
		assert_int_equal(lv_storage_delete(h->inner, synth_manifest_path(p, sizeof p, v), &e), 0);
	}
	if (s->prune)
		assert_int_equal(lv_storage_delete(h->inner, s->prune, &e), 0);
}

/* A hook on `mem` that runs the concurrent cleanup `sim` on a read of version v's manifest
 * (after `skip` reads). */
static lv_storage *hook_on_manifest(lv_storage *mem, uint64_t v, int skip, cleanup_sim *sim)
{
	lv_storage *st = hook_new(mem, NULL, skip, fire_cleanup, sim);
	last_hook->trigger = synth_manifest_path(last_hook->manifest, sizeof last_hook->manifest, v);
	return st;
}

/* History of `st` (open_ds): every version 1..n, cleaned up exactly for 1..cleaned. */
static void assert_history_complete(lv_storage *st, uint64_t n, uint64_t cleaned)
{
	bool want[64] = { false };
	assert_true(n < 64);
	for (uint64_t v = 1; v <= cleaned; v++)
		want[v] = true;
	lv_dataset *ds = open_ds(st);
	tu_expect_history(ds, n, want);
	lv_dataset_free(ds);
}

/*
 * A checkpoint writer lists manifests 1..10 (no checkpoint yet) and starts
 * reading them; meanwhile a cleanup that planned before version 10 landed
 * writes its checkpoint _checkpoints/…09 (versions 1..9, 1..5 cleaned up) and
 * deletes manifests 1..5.  The writer's checkpoint …10 must still hold
 * versions 1..5: it is the newest file, so readers use it, and it makes …09
 * prunable.
 */
static void test_checkpoint_write_vs_cleanup(void **state)
{
	(void)state;
	lv_storage *mem = synth_mem_series(10, BASE_MS);
	cleanup_sim sim = { cleanup_checkpoint(9, 5), 5, NULL };
	lv_storage *st = hook_on_manifest(mem, 1, 0, &sim);
	lv_dataset *ds = open_ds(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	assert_true(r.written);
	assert_string_equal(r.path, "_checkpoints/00000000000000000010.lance");
	assert_int_equal(r.entries, 10);
	lv_dataset_free(ds);
	lv_storage_free(st);
	/* Even once the cleanup's own checkpoint is pruned, history is whole. */
	CHECK(lv_storage_delete(mem, sim.cp.path, &err));
	assert_history_complete(mem, 10, 5);
	lv_buf_dispose(&sim.cp.bytes);
	lv_storage_free(mem);
}

/* Counts the manifests a cleanup reports through on_file (what `--list` prints). */
static void count_manifest_files(const char *path, int kind, uint64_t size, const char *reason,
				 void *payload)
{
	(void)path, (void)size, (void)reason;
	if (kind == LV_KIND_MANIFEST)
		(*(int *)payload)++;
}

/*
 * The same race inside a cleanup: after planning (every manifest read once),
 * its checkpoint step lists the manifests and the checkpoints again, and
 * another cleanup writes its checkpoint and removes versions 1..3 in between.
 * Ours removes 1..4; afterwards history must still hold 1..10 (1..4 cleaned
 * up).  The checkpoint step builds its rows from the planning reads: each
 * manifest is read once in the whole run.
 */
static void test_cleanup_vs_cleanup(void **state)
{
	(void)state;
	lv_storage *mem = synth_mem_series(10, BASE_MS);
	cleanup_sim sim = { cleanup_checkpoint(9, 3), 3, NULL };
	/*
	 * Fires when the checkpoint step lists _checkpoints/ (the first listing is
	 * cleanup's, before planning); reads of v10 are only counted.
	 */
	lv_storage *st = hook_on_manifest(mem, 10, 1000, &sim);
	last_hook->trigger_list = "_checkpoints";
	last_hook->list_skip = 1;
	hook *h = last_hook;
	lv_dataset *ds = open_ds(st);
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = 6;
	p.now_ms = BASE_MS + 100000;
	int listed = 0;
	p.on_file = count_manifest_files;
	p.payload = &listed;
	lv_cleanup_stats cs = LV_CLEANUP_STATS_INIT;
	CHECK(lv_cleanup(ds, &p, &cs, &err));
	/* Only what this process deleted counts: the other cleanup removed 1..3 (issue 14). */
	assert_int_equal(cs.versions_removed, 1);
	assert_int_equal(cs.files_removed[LV_KIND_MANIFEST], 1);
	/* and only that is reported as removed (`cleanup --list`) */
	assert_int_equal(listed, 1);
	assert_null(h->trigger_list); /* the race happened */
	assert_int_equal(h->seen, 1); /* v10's manifest was read once */
	lv_dataset_free(ds);
	lv_storage_free(st);
	CHECK(lv_storage_delete(mem, sim.cp.path, &err)); /* pruned later by someone */
	assert_history_complete(mem, 10, 4);
	lv_buf_dispose(&sim.cp.bytes);
	lv_storage_free(mem);
}

/*
 * history: the newest checkpoint is …03; while history reads the tail
 * (manifests 4..10), a cleanup writes …09 (1..9, 1..5 cleaned up) and deletes
 * manifests 1..5.  History must list 1..10.
 */
static void test_history_vs_cleanup(void **state)
{
	(void)state;
	lv_storage *mem = synth_mem_series(10, BASE_MS);
	cp_bytes c3 = cleanup_checkpoint(3, 0);
	CHECK(lv_storage_create(mem, c3.path, c3.bytes.ptr, c3.bytes.size, &err));
	cleanup_sim sim = { cleanup_checkpoint(9, 5), 5, NULL };
	lv_storage *st = hook_on_manifest(mem, 4, 0, &sim);
	assert_history_complete(st, 10, 5);
	lv_storage_free(st);
	lv_buf_dispose(&c3.bytes);
	lv_buf_dispose(&sim.cp.bytes);
	lv_storage_free(mem);
}

/*
 * history: it lists checkpoints …06 and …03; before it reads …06, a cleanup
 * writes …09 (1..9, 1..7 cleaned up), prunes …06 and deletes manifests
 * 1..7.  Falling back to …03 and the manifests it listed would miss 4..7.
 */
static void test_history_checkpoint_pruned(void **state)
{
	(void)state;
	lv_storage *mem = synth_mem_series(10, BASE_MS);
	cp_bytes c3 = cleanup_checkpoint(3, 0), c6 = cleanup_checkpoint(6, 0);
	CHECK(lv_storage_create(mem, c3.path, c3.bytes.ptr, c3.bytes.size, &err));
	CHECK(lv_storage_create(mem, c6.path, c6.bytes.ptr, c6.bytes.size, &err));
	cleanup_sim sim = { cleanup_checkpoint(9, 7), 7, c6.path };
	lv_storage *st = hook_new(mem, c6.path, 0, fire_cleanup, &sim);
	lv_dataset *ds = open_ds(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	assert_int_equal(lv_version_list_count(l), 10);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(lv_version_list_get(l, i)->version, i + 1);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	lv_storage_free(st);
	lv_buf_dispose(&c3.bytes);
	lv_buf_dispose(&c6.bytes);
	lv_buf_dispose(&sim.cp.bytes);
	lv_storage_free(mem);
}

/*
 * Two writers replace the same checkpoint at once (merge): A, a cleanup of
 * versions 1..2, and C, a cleanup of 3..4, both find _checkpoints/…10 written
 * by a plain checkpoint (nothing cleaned up).  C runs while A is about to
 * write its merge.  Unserialised, C read the old file too, and A's write then
 * dropped C's flags (a lost update); under the merge lock C waits for A and
 * merges into A's file.  The file must end with versions 1..4 cleaned up.
 */
typedef struct writer_arg {
	lv_storage *st;
	uint64_t cleaned[2];
	int rc;
	pthread_t th;
	int started;
} writer_arg;

static void *writer_main(void *p)
{
	writer_arg *w = p;
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	lv_dataset *ds = NULL;
	lv_error e = { 0 };
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	w->rc = lv_dataset_open_storage(&ds, w->st, &o, &e);
	if (!w->rc)
		w->rc = lv_checkpoint_write(ds, NULL, w->cleaned, 2, &r, &e);
	if (w->rc)
		fprintf(stderr, "writer: %s\n", e.message);
	lv_dataset_free(ds);
	return NULL;
}

static void fire_second_writer(hook *h)
{
	writer_arg *c = h->arg;
	c->started = 1;
	assert_int_equal(pthread_create(&c->th, NULL, writer_main, c), 0);
	/* Give C time to finish (unserialised) or to block on the lock (serialised). */
	struct timespec ts = { 0, 300 * 1000000L };
	nanosleep(&ts, NULL);
}

static void test_concurrent_merges(void **state)
{
	(void)state;
	lv_checkpoint_result r0 = LV_CHECKPOINT_RESULT_INIT;
	lv_storage *mem = checkpointed_series(&r0);
	writer_arg c = { mem, { 3, 4 }, 0, 0, 0 };
	/* A writes through the hook: its replacement of …10 starts C first. */
	lv_storage *st = hook_new(mem, NULL, 0, fire_second_writer, &c);
	hook_arm_write(st, r0.path);
	writer_arg a = { st, { 1, 2 }, 0, 0, 0 };
	writer_main(&a);
	assert_int_equal(a.rc, 0);
	assert_true(c.started);
	pthread_join(c.th, NULL);
	assert_int_equal(c.rc, 0);
	lv_version_list *rows = checkpoint_rows(mem, r0.path);
	assert_int_equal(lv_version_list_count(rows), 10);
	for (size_t i = 0; i < 10; i++) {
		const lv_version_info *v = lv_version_list_get(rows, i);
		assert_int_equal(v->is_cleaned_up, v->version <= 4);
	}
	lv_version_list_free(rows);
	lv_storage_free(st);
	lv_storage_free(mem);
}

/*
 * A writer finds its checkpoint's name taken (EEXISTS) and, before it reads
 * that file, another writer prunes it (newer checkpoints exist).  The writer
 * must create its file again, not fail with "not found" (seen on S3 by
 * tests/interop/test_concurrency.mjs: a cleanup aborted on a 404).
 */
typedef struct prune_sim {
	const char *path;
} prune_sim;

static void fire_prune(hook *h)
{
	prune_sim *p = h->arg;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_delete(h->inner, p->path, &e), 0);
}

static void test_checkpoint_pruned_after_exists(void **state)
{
	(void)state;
	lv_checkpoint_result r0 = LV_CHECKPOINT_RESULT_INIT;
	lv_storage *mem = checkpointed_series(&r0);
	/* Reads of …10: the ladder's (passes), then the one after EEXISTS (fires). */
	prune_sim ps = { r0.path };
	lv_storage *st = hook_new(mem, r0.path, 1, fire_prune, &ps);
	lv_dataset *ds = open_ds(st);
	uint64_t cleaned[1] = { 1 };
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	CHECK(lv_checkpoint_write(ds, NULL, cleaned, 1, &r, &err));
	assert_true(r.written);
	assert_string_equal(r.path, r0.path);
	lv_dataset_free(ds);
	lv_storage_free(st);
	lv_version_list *rows = checkpoint_rows(mem, r0.path);
	assert_int_equal(lv_version_list_count(rows), 10);
	assert_true(lv_version_list_get(rows, 0)->is_cleaned_up);
	lv_version_list_free(rows);
	lv_storage_free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_write_vs_cleanup),
		cmocka_unit_test(test_cleanup_vs_cleanup),
		cmocka_unit_test(test_history_vs_cleanup),
		cmocka_unit_test(test_history_checkpoint_pruned),
		cmocka_unit_test(test_concurrent_merges),
		cmocka_unit_test(test_checkpoint_pruned_after_exists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
