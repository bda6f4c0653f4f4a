/*
 * Watch events, the lag histogram's buckets, the shard hash and the adaptive interval
 * (lancever/watch.h): the leaf of the watcher (watch.c, watch_discover.c, watch_run.c call
 * it; it calls none of them).
 * Invariants: events are delivered one at a time (w->evmu) with a message of at most
 * 1 KiB, never holding w->mu; the bucket bounds are LV_WATCH_LAG_BOUNDS_MS and the shard
 * hash FNV-1a 64, both fixed forever.
 */
#include "core/watch_int.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const int64_t lag_bounds[] = { LV_WATCH_LAG_BOUNDS_MS };
_Static_assert(sizeof lag_bounds / sizeof lag_bounds[0] == LV_WATCH_LAG_BUCKETS - 1,
	       "LV_WATCH_LAG_BUCKETS is the bounds plus +Inf");

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

int64_t lv__watch_next_interval(int64_t cur, int64_t min_ms, int64_t max_ms, bool changed)
{
	int64_t next = changed ? cur / 2 : cur > max_ms / 2 ? max_ms : cur * 2;
	return next < min_ms ? min_ms : next > max_ms ? max_ms : next;
}

const char *lv_watch_event_name(int kind)
{
	static const char *const names[] = { "unknown", "start", "discovered", "captured",
					     "missed", "flush", "error", "fallback", "stop", "lost",
					     "warning" };
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
