/*
 * lv_watcher: options, opening and freeing, the stop request and the shard hash
 * (lancever/watch.h; the run is watch_run.c's, discovery watch_discover.c's, events, the
 * lag buckets and the shard hash watch_event.c's, snapshots watch_stats.c's).
 *
 * Invariants: lv_watch_open validates every option before it opens anything and opens
 * each target's store once; lv_watch_stop only stores an atomic flag and writes to the
 * notifier's wake descriptor (async-signal-safe).
 */
#include "core/stores.h"
#include "core/watch_int.h"
#include "storage/address.h"
#include "storage/backends.h"
#include "util/abi.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FLUSH_MS 1000
#define DEFAULT_MIN_MS 100
#define DEFAULT_MAX_MS 5000
#define DEFAULT_DISCOVER_MS 30000
#define DEFAULT_THREADS 4

int lv_watch_options_init(lv_watch_options *o, int version)
{
	return lv__struct_init("lv_watch_options", o, sizeof *o, NULL, version,
			       LV_WATCH_OPTIONS_VERSION, LV_WATCH_OPTIONS_VERSION);
}

static int check_options(lv_watch_options *o, const lv_watch_options *in, lv_error *err)
{
	lv_watch_options_init(o, LV_WATCH_OPTIONS_VERSION);
	if (in) {
		LV_TRY(lv__struct_version("lv_watch_options", in->version, LV_WATCH_OPTIONS_VERSION,
					  LV_WATCH_OPTIONS_VERSION, err));
		*o = *in;
	}
	if (o->flush_ms < 0 || o->min_interval_ms < 0 || o->max_interval_ms < 0 ||
	    o->discover_ms < 0)
		return lv__err(err, LV_EINVALID, "watch: a negative interval");
	if (o->threads < 0 || o->threads > LV__WATCH_MAX_THREADS)
		return lv__err(err, LV_EINVALID, "watch: threads must be 0..%d",
			       LV__WATCH_MAX_THREADS);
	if (o->shard_count > 1 && o->shard_index >= o->shard_count)
		return lv__err(err, LV_EINVALID, "watch: shard %u/%u: the index must be below the count",
			       o->shard_index, o->shard_count);
	if (!o->flush_ms)
		o->flush_ms = DEFAULT_FLUSH_MS;
	if (!o->min_interval_ms)
		o->min_interval_ms = o->max_interval_ms && o->max_interval_ms < DEFAULT_MIN_MS
					     ? o->max_interval_ms : DEFAULT_MIN_MS;
	if (!o->max_interval_ms)
		o->max_interval_ms = o->min_interval_ms > DEFAULT_MAX_MS ? o->min_interval_ms
									 : DEFAULT_MAX_MS;
	if (o->min_interval_ms > o->max_interval_ms)
		return lv__err(err, LV_EINVALID, "watch: the minimum interval (%lld ms) is above the "
			       "maximum (%lld ms)", (long long)o->min_interval_ms,
			       (long long)o->max_interval_ms);
	if (!o->discover_ms)
		o->discover_ms = DEFAULT_DISCOVER_MS;
	if (!o->threads)
		o->threads = DEFAULT_THREADS;
	if (o->shard_count <= 1) {
		o->shard_count = 1;
		o->shard_index = 0;
	}
	return 0;
}

/* Opens a target's store once; a local path must be an existing directory. */
static int open_store(lv_storage **out, const char *uri, const lv_storage_options *so,
		      lv_error *err)
{
	lv__stores_builtin();
	lv__address a;
	int rc = lv__address_parse(&a, uri, so, err);
	if (rc == 0) {
		a.must_exist = true;
		rc = lv__storage_open_address(out, &a, err);
	}
	lv__address_dispose(&a);
	return rc;
}

static int open_targets(lv_watcher *w, const char *const *targets, size_t n, lv_error *err)
{
	w->targets = lv__calloc(n, sizeof *w->targets);
	if (!w->targets)
		return lv__err(err, LV_ENOMEM, "watch: out of memory");
	w->ntargets = n;
	for (size_t i = 0; i < n; i++) {
		if (!targets[i])
			return lv__err(err, LV_EINVALID, "watch: NULL target");
		w->targets[i].root_wd = -1;
		w->targets[i].uri = lv__strdup(targets[i]);
		if (!w->targets[i].uri)
			return lv__err(err, LV_ENOMEM, "watch: out of memory");
		LV_TRY(open_store(&w->targets[i].st, targets[i], w->o.storage, err));
		if (w->o.no_notify)
			continue;
		if (!w->notify && lv__notify_new(&w->notify, w->targets[i].st, NULL) == LV_ENOMEM)
			return lv__err(err, LV_ENOMEM, "watch: out of memory");
		w->targets[i].notify = lv__notify_can(w->notify, w->targets[i].st);
	}
	return 0;
}

int lv_watch_open(lv_watcher **out, const char *const *targets, size_t ntargets,
		  const lv_watch_options *opts, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "watch: NULL output");
	*out = NULL;
	if (!targets || !ntargets)
		return lv__err(err, LV_EINVALID, "watch: no target");
	lv_watcher *w = lv__calloc(1, sizeof *w);
	if (!w)
		return lv__err(err, LV_ENOMEM, "watch: out of memory");
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->evmu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->idle, NULL);
	int rc = check_options(&w->o, opts, err);
	if (rc == 0) {
		rc = open_targets(w, targets, ntargets, err);
		w->o.storage = NULL; /* borrowed for the open only */
	}
	if (rc < 0) {
		lv_watch_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void lv_watch_stop(lv_watcher *w)
{
	if (!w)
		return;
	__atomic_store_n(&w->stop, 1, __ATOMIC_SEQ_CST);
	lv__notify_wake(w->notify);
}

void lv_watch_free(lv_watcher *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->ntables; i++) {
		lv__watch_table_close(w, w->tables[i]);
		lv__free(w->tables[i]->name);
		lv__free(w->tables[i]);
	}
	lv__free(w->tables);
	lv__notify_free(w->notify);
	for (size_t i = 0; w->targets && i < w->ntargets; i++) {
		lv_storage_free(w->targets[i].st);
		lv__free(w->targets[i].uri);
	}
	lv__free(w->targets);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->evmu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->idle);
	lv__free(w);
}
