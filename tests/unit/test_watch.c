/*
 * lv_watcher (lancever/watch.h): the shard hash (stability, distribution), "I/N" parsing,
 * the adaptive interval, discovery of tables and branches under a folder, shards that
 * partition it, a version missed, the fallback from inotify to polling (the local
 * backend's test hook), and a run stopped by lv_watch_stop that flushes what it read.
 * Datasets are synthetic manifests (support/synth.c) in mkdtemp directories.
 */
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/sys/testing.h>

#include "core/watch_int.h"
#include "support/synth.h"

#define BASE_MS 1700000000000LL

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/lv-watch-unit.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	(void)nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* Writes versions first..last (skipping `skip`, 0 = none) into <root>/<rel>. */
static void make_ds(const char *rel, uint64_t first, uint64_t last, uint64_t skip)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	lv_storage *st = NULL; /* writes make the directories */
	assert_int_equal(lv_storage_open(&st, path, NULL, NULL), 0);
	for (uint64_t v = first; v <= last; v++) {
		if (v == skip)
			continue;
		synth_commit c = { .version = v, .ts_ms = BASE_MS + 1000 * (int64_t)v,
				   .read_version = v - 1 };
		assert_int_equal(synth_write(st, &c), 0);
	}
	lv_storage_free(st);
}

/* ---- events, recorded ---- */

typedef struct evlog {
	pthread_mutex_t mu;
	int count[16];
	char codes[8][32];
	int ncodes;
} evlog;

static void on_event(const lv_watch_event *ev, void *ctx)
{
	evlog *l = ctx;
	pthread_mutex_lock(&l->mu);
	if (ev->kind > 0 && ev->kind < 16)
		l->count[ev->kind]++;
	assert_non_null(ev->message);
	assert_string_not_equal(lv_watch_event_name(ev->kind), "unknown");
	for (size_t i = 0; i < ev->nfields; i++)
		if (ev->kind == LV_WATCH_EV_FALLBACK && !strcmp(ev->fields[i].key, "code") &&
		    l->ncodes < 8)
			snprintf(l->codes[l->ncodes++], 32, "%s", ev->fields[i].value);
	pthread_mutex_unlock(&l->mu);
}

static int64_t interval_ms = 40; /* open_watch's max interval */
static int64_t discover_ms = 0;  /* and discovery interval (0 = default) */

static lv_watcher *open_watch(const char *target, evlog *l, uint32_t si, uint32_t sn)
{
	lv_watch_options o;
	assert_int_equal(lv_watch_options_init(&o, LV_WATCH_OPTIONS_VERSION), 0);
	o.on_event = on_event;
	o.event_ctx = l;
	o.shard_index = si;
	o.shard_count = sn;
	o.min_interval_ms = interval_ms < 5 ? interval_ms : 5;
	o.max_interval_ms = interval_ms;
	o.discover_ms = discover_ms;
	o.flush_ms = 20;
	lv_watcher *w = NULL;
	const char *t[] = { target };
	lv_error e = { 0 };
	assert_int_equal(lv_watch_open(&w, t, 1, &o, &e), 0);
	return w;
}

static const lv_watch_table_stats *row(const lv_watch_snapshot *s, const char *name)
{
	for (size_t i = 0; i < lv_watch_snapshot_count(s); i++)
		if (!strcmp(lv_watch_snapshot_table(s, i)->table, name))
			return lv_watch_snapshot_table(s, i);
	return NULL;
}

/* Versions recorded by the history of <root>/<rel> (branch may be NULL), and gaps. */
static size_t recorded(const char *rel, const char *branch, size_t *gaps)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	lv_open_options o;
	lv_open_options_init(&o, LV_OPEN_OPTIONS_VERSION);
	o.branch = branch;
	lv_dataset *ds = NULL;
	assert_int_equal(lv_dataset_open(&ds, path, &o, NULL), 0);
	lv_version_list *l = NULL;
	lv_error e = { 0 };
	assert_int_equal(lv_history(&l, ds, NULL, &e), 0);
	size_t n = lv_version_list_count(l);
	if (gaps)
		*gaps = lv_version_list_gap_count(l);
	lv_version_list_free(l);
	lv_dataset_free(ds);
	return n;
}

static bool has_checkpoint(const char *rel, uint64_t v)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s/_checkpoints/%020llu.lance", root, rel,
		 (unsigned long long)v);
	return access(path, F_OK) == 0;
}

/* ---- the tests ---- */

static void test_shard_hash_stable(void **state)
{
	(void)state;
	/* FNV-1a 64 reference vectors, and one table name pinned forever */
	assert_true(lv_watch_shard_hash("") == 0xcbf29ce484222325ULL);
	assert_true(lv_watch_shard_hash(NULL) == 0xcbf29ce484222325ULL);
	assert_true(lv_watch_shard_hash("a") == 0xaf63dc4c8601ec8cULL);
	assert_true(lv_watch_shard_hash("foobar") == 0x85944171f73967e8ULL);
	assert_true(lv_watch_shard_hash("db/t1.lance") == lv_watch_shard_hash("db/t1.lance"));
	assert_true(lv_watch_shard_hash("db/t1.lance") != lv_watch_shard_hash("db/t2.lance"));
}

static void test_shard_distribution(void **state)
{
	(void)state;
	enum { N = 20000 };
	for (unsigned shards = 2; shards <= 16; shards *= 2) {
		unsigned count[16] = { 0 };
		char name[64];
		for (int i = 0; i < N; i++) {
			snprintf(name, sizeof name, "table_%d.lance", i);
			count[lv_watch_shard_hash(name) % shards]++;
		}
		for (unsigned s = 0; s < shards; s++) { /* within 10% of even */
			assert_true(count[s] * 10 >= (N / shards) * 9);
			assert_true(count[s] * 10 <= (N / shards) * 11);
		}
	}
}

static void test_parse_shard(void **state)
{
	(void)state;
	uint32_t i = 9, n = 9;
	assert_int_equal(lv_watch_parse_shard("0/1", &i, &n, NULL), 0);
	assert_true(i == 0 && n == 1);
	assert_int_equal(lv_watch_parse_shard("3/4", &i, &n, NULL), 0);
	assert_true(i == 3 && n == 4);
	const char *bad[] = { "4/4", "1/0", "a/2", "1", "-1/2", "1/2x", "", "/", "1/", "/2",
			      "0/4294967296" };
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		lv_error e = { 0 };
		assert_int_equal(lv_watch_parse_shard(bad[k], &i, &n, &e), LV_EINVALID);
		assert_true(i == 3 && n == 4);
	}
}

static void test_adaptive_interval(void **state)
{
	(void)state;
	int64_t t = 100;
	const int64_t up[] = { 200, 400, 800, 1000, 1000 };
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(t = lv__watch_next_interval(t, 100, 1000, false), up[k]);
	const int64_t down[] = { 500, 250, 125, 100, 100 };
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(t = lv__watch_next_interval(t, 100, 1000, true), down[k]);
	assert_int_equal(lv__watch_next_interval(5000, 100, 1000, false), 1000);
	assert_int_equal(lv__watch_next_interval(INT64_MAX, 1, INT64_MAX, false), INT64_MAX);
	/* the histogram's buckets */
	assert_int_equal(lv__watch_lag_bucket(0), 0);
	assert_int_equal(lv__watch_lag_bucket(10), 0);
	assert_int_equal(lv__watch_lag_bucket(11), 1);
	assert_int_equal(lv__watch_lag_bucket(60000), LV_WATCH_LAG_BUCKETS - 2);
	assert_int_equal(lv__watch_lag_bucket(60001), LV_WATCH_LAG_BUCKETS - 1);
	assert_int_equal(lv_watch_lag_bound(0), 10);
	assert_int_equal(lv_watch_lag_bound(LV_WATCH_LAG_BUCKETS - 1), -1);
}

static void test_options(void **state)
{
	(void)state;
	lv_watch_options o = LV_WATCH_OPTIONS_INIT;
	lv_watcher *w = (lv_watcher *)&o;
	const char *t[] = { root };
	lv_error e = { 0 };
	o.min_interval_ms = 500;
	o.max_interval_ms = 100;
	assert_int_equal(lv_watch_open(&w, t, 1, &o, &e), LV_EINVALID);
	assert_null(w);
	o = (lv_watch_options)LV_WATCH_OPTIONS_INIT;
	o.threads = 65;
	assert_int_equal(lv_watch_open(&w, t, 1, &o, &e), LV_EINVALID);
	o.threads = 0;
	o.shard_index = 2;
	o.shard_count = 2;
	assert_int_equal(lv_watch_open(&w, t, 1, &o, &e), LV_EINVALID);
	o.version = 0;
	assert_int_equal(lv_watch_open(&w, t, 1, &o, &e), LV_EINVALID);
	assert_int_equal(lv_watch_open(&w, t, 0, NULL, &e), LV_EINVALID);
	const char *missing[] = { "/nonexistent/lv-watch" };
	assert_int_equal(lv_watch_open(&w, missing, 1, NULL, &e) < 0, true);
	assert_null(w);
}

/* a folder: two tables, one nested, one with a branch, a directory that is no dataset */
static void make_folder(void)
{
	make_ds("db/a.lance", 1, 3, 0);
	make_ds("db/a.lance/tree/br", 1, 2, 0);
	make_ds("db/b.lance", 1, 2, 0);
	make_ds("db/sub/c.lance", 1, 1, 0);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/db/junk' && echo x > '%s/db/junk/x.manifest'", root,
		 root);
	assert_int_equal(system(cmd), 0);
}

static void test_discover_once(void **state)
{
	(void)state;
	make_folder();
	char db[128];
	snprintf(db, sizeof db, "%s/db", root);
	evlog l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	lv_watcher *w = open_watch(db, &l, 0, 1);
	lv_error e = { 0 };
	assert_int_equal(lv_watch_run_once(w, &e), 0);
	lv_watch_snapshot *s = NULL;
	assert_int_equal(lv_watch_snapshot_take(&s, w, &e), 0);
	assert_int_equal(lv_watch_snapshot_count(s), 4);
	const lv_watch_table_stats *a = row(s, "a.lance"), *br = row(s, "a.lance/tree/br");
	assert_non_null(a);
	assert_non_null(br);
	assert_null(a->branch);
	assert_string_equal(br->branch, "br");
	assert_string_equal(br->target, db);
	assert_int_equal(a->captured, 3);
	assert_int_equal(br->captured, 2);
	assert_int_equal(row(s, "b.lance")->captured, 2);
	assert_int_equal(row(s, "sub/c.lance")->captured, 1);
	const lv_watch_table_stats *tot = lv_watch_snapshot_total(s);
	assert_int_equal(tot->captured, 8);
	assert_int_equal(tot->missed, 0);
	assert_int_equal(tot->tables, 4);
	assert_int_equal(tot->newest_version, 3);
	assert_int_equal(tot->lag_count, 0); /* the backlog of the first discovery: no lag */
	assert_true(tot->last_lag_ms > 0);
	assert_true(tot->requests > 0);
	lv_watch_snapshot_free(s);
	assert_int_equal(l.count[LV_WATCH_EV_START], 1);
	assert_int_equal(l.count[LV_WATCH_EV_DISCOVER], 4);
	assert_int_equal(l.count[LV_WATCH_EV_CAPTURE], 4);
	assert_int_equal(l.count[LV_WATCH_EV_FLUSH], 4);
	assert_int_equal(l.count[LV_WATCH_EV_STOP], 1);
	assert_true(has_checkpoint("db/a.lance", 3));
	assert_true(has_checkpoint("db/a.lance/tree/br", 2));
	assert_true(has_checkpoint("db/sub/c.lance", 1));
	/* a second pass finds nothing new and writes nothing */
	memset(l.count, 0, sizeof l.count);
	assert_int_equal(lv_watch_run_once(w, &e), 0);
	assert_int_equal(l.count[LV_WATCH_EV_CAPTURE], 0);
	assert_int_equal(l.count[LV_WATCH_EV_FLUSH], 0);
	/* a table dropped: lost (closed, its row kept); made again: opened anew and read */
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/db/b.lance'", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(lv_watch_run_once(w, &e), 0);
	assert_int_equal(l.count[LV_WATCH_EV_LOST], 1);
	make_ds("db/b.lance", 1, 1, 0);
	assert_int_equal(lv_watch_run_once(w, &e), 0);
	assert_int_equal(l.count[LV_WATCH_EV_DISCOVER], 1);
	assert_int_equal(lv_watch_snapshot_take(&s, w, &e), 0);
	assert_int_equal(lv_watch_snapshot_count(s), 4);
	assert_int_equal(row(s, "b.lance")->captured, 3); /* 2 before, 1 after */
	lv_watch_snapshot_free(s);
	assert_true(has_checkpoint("db/b.lance", 1));
	lv_watch_free(w);
}

static void test_shards_partition(void **state)
{
	(void)state;
	make_folder();
	char db[128];
	snprintf(db, sizeof db, "%s/db", root);
	size_t total = 0;
	bool seen_a = false;
	for (uint32_t i = 0; i < 3; i++) {
		evlog l = { .mu = PTHREAD_MUTEX_INITIALIZER };
		lv_watcher *w = open_watch(db, &l, i, 3);
		assert_int_equal(lv_watch_run_once(w, NULL), 0);
		lv_watch_snapshot *s = NULL;
		assert_int_equal(lv_watch_snapshot_take(&s, w, NULL), 0);
		for (size_t k = 0; k < lv_watch_snapshot_count(s); k++) {
			const lv_watch_table_stats *r = lv_watch_snapshot_table(s, k);
			/* a branch goes with its table */
			char rootname[256];
			snprintf(rootname, sizeof rootname, "%s", r->table);
			char *tree = strstr(rootname, "/tree/");
			if (tree)
				*tree = 0;
			assert_int_equal(lv_watch_shard_hash(rootname) % 3, i);
			if (!strcmp(r->table, "a.lance")) {
				seen_a = true;
				assert_non_null(row(s, "a.lance/tree/br"));
			}
		}
		total += lv_watch_snapshot_count(s);
		lv_watch_snapshot_free(s);
		lv_watch_free(w);
	}
	assert_true(seen_a);
	assert_int_equal(total, 4);
}

static void test_missed(void **state)
{
	(void)state;
	make_ds("m.lance", 1, 5, 3); /* version 3's manifest is gone */
	char ds[128];
	snprintf(ds, sizeof ds, "%s/m.lance", root);
	evlog l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	lv_watcher *w = open_watch(ds, &l, 0, 1);
	assert_int_equal(lv_watch_run_once(w, NULL), 0);
	lv_watch_snapshot *s = NULL;
	assert_int_equal(lv_watch_snapshot_take(&s, w, NULL), 0);
	assert_int_equal(lv_watch_snapshot_count(s), 1);
	assert_string_equal(lv_watch_snapshot_table(s, 0)->table, "");
	assert_int_equal(lv_watch_snapshot_total(s)->captured, 4);
	assert_int_equal(lv_watch_snapshot_total(s)->missed, 1);
	lv_watch_snapshot_free(s);
	assert_int_equal(l.count[LV_WATCH_EV_MISS], 1);
	lv_watch_free(w);
	size_t gaps = 0;
	assert_int_equal(recorded("m.lance", NULL, &gaps), 4);
	assert_int_equal(gaps, 1);
}

typedef struct runner {
	lv_watcher *w;
	int rc;
} runner;

static void *run_thread(void *arg)
{
	runner *r = arg;
	r->rc = lv_watch_run(r->w, NULL);
	return NULL;
}

/* Waits (up to 30 s: a bound for a hung test, not a timing assertion) until `table` of w
 * has captured `want` versions. */
static void wait_captured(lv_watcher *w, const char *table, uint64_t want)
{
	for (int i = 0; i < 3000; i++) {
		lv_watch_snapshot *s = NULL;
		assert_int_equal(lv_watch_snapshot_take(&s, w, NULL), 0);
		const lv_watch_table_stats *r = row(s, table);
		bool done = r && r->captured >= want;
		lv_watch_snapshot_free(s);
		if (done)
			return;
		struct timespec ts = { 0, 10000000L };
		nanosleep(&ts, NULL);
	}
	fail_msg("%s never captured %llu versions", table, (unsigned long long)want);
}

/* The first table's watch cannot be added (as at the system's limit): it is polled, said by
 * a fallback event; a run then captures new versions of both tables, and a stop flushes. */
static void test_fallback_and_run(void **state)
{
	(void)state;
	make_ds("db/p.lance", 1, 2, 0);
	make_ds("db/q.lance", 1, 2, 0);
	char db[128];
	snprintf(db, sizeof db, "%s/db", root);
	evlog l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	lv_watcher *w = open_watch(db, &l, 0, 1);
	lv_storage_notify_fail(2, LV_ELIMIT); /* the folder's own watch (added first), then p's */
	runner r = { w, -1 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, run_thread, &r), 0);
	wait_captured(w, "p.lance", 2);
	wait_captured(w, "q.lance", 2);
	lv_storage_notify_fail(0, 0);
	assert_int_equal(l.count[LV_WATCH_EV_FALLBACK], 1);
	assert_string_equal(l.codes[0], "LV_ELIMIT");
	lv_watch_snapshot *s = NULL;
	assert_int_equal(lv_watch_snapshot_take(&s, w, NULL), 0);
	assert_true(row(s, "p.lance")->notified != row(s, "q.lance")->notified);
	lv_watch_snapshot_free(s);
	make_ds("db/p.lance", 3, 4, 0);
	make_ds("db/q.lance", 3, 5, 0);
	wait_captured(w, "p.lance", 4);
	wait_captured(w, "q.lance", 5);
	lv_watch_stop(w);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(l.count[LV_WATCH_EV_STOP], 1);
	assert_true(has_checkpoint("db/p.lance", 4));
	assert_true(has_checkpoint("db/q.lance", 5));
	assert_int_equal(recorded("db/q.lance", NULL, NULL), 5);
	lv_watch_free(w);
}

/* With polls and discoveries an hour apart, only a notification (inotify) can bring new
 * versions or a new table in: they are captured, and a stop ends the run at once (the
 * notifier's wait is woken). */
static void test_notify_wakes(void **state)
{
	(void)state;
	make_ds("db/n.lance", 1, 1, 0);
	char db[128];
	snprintf(db, sizeof db, "%s/db", root);
	evlog l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	interval_ms = discover_ms = 3600000;
	lv_watcher *w = open_watch(db, &l, 0, 1);
	interval_ms = 40;
	discover_ms = 0;
	runner r = { w, -1 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, run_thread, &r), 0);
	wait_captured(w, "n.lance", 1);
	make_ds("db/n.lance", 2, 3, 0);
	wait_captured(w, "n.lance", 3);
	lv_watch_snapshot *s = NULL;
	assert_int_equal(lv_watch_snapshot_take(&s, w, NULL), 0);
	assert_true(row(s, "n.lance")->notified);
	assert_int_equal(row(s, "n.lance")->interval_ms, 3600000);
	lv_watch_snapshot_free(s);
	/* a new table in the folder is found at once (the folder is watched too) */
	make_ds("db/new.lance", 1, 2, 0);
	wait_captured(w, "new.lance", 2);
	assert_int_equal(lv_watch_snapshot_take(&s, w, NULL), 0);
	for (int k = 0; k < 2; k++) { /* n's later versions and the new table: observed lags */
		const lv_watch_table_stats *t = row(s, k ? "new.lance" : "n.lance");
		uint64_t sum = 0;
		for (size_t b = 0; b < LV_WATCH_LAG_BUCKETS; b++)
			sum += t->lag_buckets[b];
		assert_true(t->lag_count >= 1 && sum == t->lag_count);
		assert_int_equal(t->lag_buckets[LV_WATCH_LAG_BUCKETS - 1], t->lag_count); /* > 60 s */
	}
	lv_watch_snapshot_free(s);
	lv_watch_stop(w);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.rc, 0);
	assert_true(has_checkpoint("db/n.lance", 3));
	assert_true(has_checkpoint("db/new.lance", 2));
	lv_watch_free(w);
}

/* A stop before the run: it returns at once, flushing nothing held (nothing was read). */
static void test_stop_before_run(void **state)
{
	(void)state;
	make_ds("s.lance", 1, 1, 0);
	char ds[128];
	snprintf(ds, sizeof ds, "%s/s.lance", root);
	evlog l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	lv_watcher *w = open_watch(ds, &l, 0, 1);
	lv_watch_stop(w);
	lv_watch_stop(NULL);
	assert_int_equal(lv_watch_run(w, NULL), 0);
	lv_watch_free(w);
	lv_watch_free(NULL);
	assert_null(lv_watch_snapshot_table(NULL, 0));
	assert_int_equal(lv_watch_snapshot_count(NULL), 0);
}

/* Every allocation of open + one pass + a stopped run + a snapshot failed in turn: LV_ENOMEM or the same
 * answer (RELIABILITY.md section 11), never another one (a fallback to polling, a table left
 * out). */
static void test_alloc_sweep(void **state)
{
	(void)state;
	uint64_t ref_allocs = 0;
	for (uint64_t n = 0;; n++) {
		char rel[64], db[128];
		snprintf(rel, sizeof rel, "sw%llu/t.lance", (unsigned long long)n);
		make_ds(rel, 1, 2, 0);
		snprintf(db, sizeof db, "%s/sw%llu", root, (unsigned long long)n);
		const char *t[] = { db };
		lv_watcher *w = NULL;
		lv_watch_snapshot *s = NULL;
		lv_error e = { 0 };
		lv__alloc_fail_at(n);
		int rc = lv_watch_open(&w, t, 1, NULL, &e);
		if (rc == 0)
			rc = lv_watch_run_once(w, &e);
		if (rc == 0) { /* a run stopped at once: the notifications are added, then it ends */
			lv_watch_stop(w);
			rc = lv_watch_run(w, &e);
		}
		if (rc == 0)
			rc = lv_watch_snapshot_take(&s, w, &e);
		uint64_t allocs = lv__alloc_fail_at(0);
		if (rc != 0 && rc != LV_ENOMEM)
			fail_msg("allocation %llu failed: %d (%s), not LV_ENOMEM", (unsigned long long)n,
				 rc, e.message);
		if (rc == 0) {
			const lv_watch_table_stats *tot = lv_watch_snapshot_total(s);
			if (tot->tables != 1 || tot->captured != 2 || !lv_watch_snapshot_table(s, 0)->notified)
				fail_msg("allocation %llu failed: another answer (%llu tables, %llu "
					 "captured)", (unsigned long long)n,
					 (unsigned long long)tot->tables, (unsigned long long)tot->captured);
		}
		lv_watch_snapshot_free(s);
		lv_watch_free(w);
		if (n == 0)
			ref_allocs = allocs;
		else if (allocs < n) /* nothing failed: the end */
			break;
		assert_true(n <= ref_allocs + 64);
	}
	assert_true(ref_allocs > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shard_hash_stable),
		cmocka_unit_test(test_shard_distribution),
		cmocka_unit_test(test_parse_shard),
		cmocka_unit_test(test_adaptive_interval),
		cmocka_unit_test_setup_teardown(test_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discover_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shards_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fallback_and_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notify_wakes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_before_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_sweep, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
