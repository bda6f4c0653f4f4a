/*
 * lv_watcher: options, opening and freeing, the stop request, the shard hash and the
 * events (lancever/watch.h; the run is watch_run.c's, discovery watch_discover.c's,
 * snapshots watch_stats.c's).
 *
 * Invariants: lv_watch_open validates every option before it opens anything and opens
 * each target's store once; lv_watch_stop only stores an atomic flag and writes to the
 * notifier's wake descriptor (async-signal-safe); events are delivered one at a time
 * (w->evmu) with a message of at most 1 KiB; the shard hash is FNV-1a 64, fixed forever.
 */
#include "core/watch_int.h"
#include "util/abi.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FLUSH_MS 1000
#define DEFAULT_MIN_MS 100
#define DEFAULT_MAX_MS 5000
#define DEFAULT_DISCOVER_MS 30000
#define DEFAULT_THREADS 4

static const int64_t lag_bounds[] = { LV_WATCH_LAG_BOUNDS_MS };
_Static_assert(sizeof lag_bounds / sizeof lag_bounds[0] == LV_WATCH_LAG_BUCKETS - 1,
	       "LV_WATCH_LAG_BUCKETS is the bounds plus +Inf");

int lv_watch_options_init(lv_watch_options *o, int version)
{
	return lv__struct_init("lv_watch_options", o, sizeof *o, NULL, version,
			       LV_WATCH_OPTIONS_VERSION, LV_WATCH_OPTIONS_VERSION);
}

uint64_t lv_watch_shard_hash(const char *name)
{
	uint64_t h = 14695981039346656037ULL;
	for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return h;
}

int lv_watch_parse_shard(const char *s, uint32_t *index, uint32_t *count, lv_error *err)
{
	if (!s || !index || !count)
		return lv__err(err, LV_EINVALID, "shard: NULL argument");
	const char *slash = strchr(s, '/');
	uint64_t i, n;
	if (!slash || !lv__parse_u64(s, (size_t)(slash - s), &i) ||
	    !lv__parse_u64(slash + 1, strlen(slash + 1), &n) || n == 0 || n > UINT32_MAX || i >= n)
		return lv__err(err, LV_EINVALID, "shard '%s': expected I/N with 0 <= I < N", s);
	*index = (uint32_t)i;
	*count = (uint32_t)n;
	return 0;
}

int64_t lv_watch_lag_bound(size_t i)
{
	return i < LV_WATCH_LAG_BUCKETS - 1 ? lag_bounds[i] : -1;
}

size_t lv__watch_lag_bucket(int64_t lag_ms)
{
	size_t i = 0;
	while (i < LV_WATCH_LAG_BUCKETS - 1 && lag_ms > lag_bounds[i])
		i++;
	return i;
}

const char *lv_watch_event_name(int kind)
{
	static const char *const names[] = { "unknown", "start", "discovered", "captured",
					     "missed", "flush", "error", "fallback", "stop", "lost" };
	return kind > 0 && (size_t)kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

void lv__watch_event(lv_watcher *w, int kind, int level, const char *table,
		     const lv_watch_field *f, size_t n, const char *fmt, ...)
{
	if (!w->o.on_event)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	lv_watch_event ev = { .kind = kind, .level = level, .table = table, .message = msg,
			      .fields = f, .nfields = n, .time_ms = lv__now_ms() };
	pthread_mutex_lock(&w->evmu);
	w->o.on_event(&ev, w->o.event_ctx);
	pthread_mutex_unlock(&w->evmu);
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

static int open_targets(lv_watcher *w, const char *const *targets, size_t n, lv_error *err)
{
	w->targets = lv__calloc(n, sizeof *w->targets);
	if (!w->targets)
		return lv__err(err, LV_ENOMEM, "watch: out of memory");
	w->ntargets = n;
	for (size_t i = 0; i < n; i++) {
		if (!targets[i])
			return lv__err(err, LV_EINVALID, "watch: NULL target");
		w->targets[i].uri = lv__strdup(targets[i]);
		if (!w->targets[i].uri)
			return lv__err(err, LV_ENOMEM, "watch: out of memory");
		LV_TRY(lv_storage_open(&w->targets[i].st, targets[i], w->o.storage, err));
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
		free(w->tables[i]->name);
		free(w->tables[i]);
	}
	free(w->tables);
	lv__notify_free(w->notify);
	for (size_t i = 0; w->targets && i < w->ntargets; i++) {
		lv_storage_free(w->targets[i].st);
		free(w->targets[i].uri);
	}
	free(w->targets);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->evmu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->idle);
	free(w);
}
