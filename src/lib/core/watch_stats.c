/*
 * Snapshots of a watcher's statistics (lancever/watch.h): every table's row and their
 * total, copied under w->mu so a snapshot is consistent and read without a lock.
 * Invariants: a snapshot owns copies of every string it hands out (names, targets,
 * branches), in one block; the total sums the counters and the lag histogram, takes the
 * largest newest_version and last_lag_ms, and adds listing failures to its errors.
 */
#include "core/watch_int.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

struct lv_watch_snapshot {
	size_t n;
	lv_watch_table_stats *rows;
	lv_watch_table_stats total;
	int64_t time_ms;
	char *text; /* the rows' strings */
};

static void add(lv_watch_table_stats *t, const lv_watch_table_stats *r)
{
	t->captured += r->captured;
	t->missed += r->missed;
	t->requests += r->requests;
	t->errors += r->errors;
	t->flushes += r->flushes;
	t->polls += r->polls;
	if (r->newest_version > t->newest_version)
		t->newest_version = r->newest_version;
	if (r->last_lag_ms > t->last_lag_ms)
		t->last_lag_ms = r->last_lag_ms;
	for (size_t b = 0; b < LV_WATCH_LAG_BUCKETS; b++)
		t->lag_buckets[b] += r->lag_buckets[b];
	t->lag_count += r->lag_count;
	t->lag_sum_ms += r->lag_sum_ms;
	t->tables++;
}

/* Copies every row with its strings into s (under w->mu). */
static int copy_rows(lv_watch_snapshot *s, lv_watcher *w)
{
	size_t bytes = 0;
	for (size_t i = 0; i < w->ntables; i++)
		bytes += strlen(w->tables[i]->name) + strlen(w->targets[w->tables[i]->target].uri) + 2;
	s->rows = lv__calloc(w->ntables ? w->ntables : 1, sizeof *s->rows);
	s->text = lv__malloc(bytes + 1);
	if (!s->rows || !s->text)
		return LV_ENOMEM;
	char *p = s->text;
	for (size_t i = 0; i < w->ntables; i++) {
		const wtable *t = w->tables[i];
		lv_watch_table_stats *r = &s->rows[i];
		*r = t->st;
		size_t nl = strlen(t->name) + 1, tl = strlen(t->st.target) + 1;
		memcpy(p, t->name, nl);
		r->table = p;
		r->branch = t->branch ? p + (t->branch - t->name) : NULL;
		memcpy(p + nl, t->st.target, tl);
		r->target = p + nl;
		p += nl + tl;
		add(&s->total, r);
	}
	s->n = w->ntables;
	return 0;
}

int lv_watch_snapshot_take(lv_watch_snapshot **out, lv_watcher *w, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "watch: NULL output");
	*out = NULL;
	if (!w)
		return lv__err(err, LV_EINVALID, "watch: NULL watcher");
	lv_watch_snapshot *s = lv__calloc(1, sizeof *s);
	if (!s)
		return lv__err(err, LV_ENOMEM, "watch: out of memory");
	s->total.table = s->total.target = "";
	s->total.last_lag_ms = -1;
	pthread_mutex_lock(&w->mu);
	int rc = copy_rows(s, w);
	s->total.errors += w->discover_errors;
	pthread_mutex_unlock(&w->mu);
	if (rc < 0) {
		lv_watch_snapshot_free(s);
		return lv__err(err, rc, "watch: out of memory");
	}
	s->time_ms = lv__now_ms();
	*out = s;
	return 0;
}

size_t lv_watch_snapshot_count(const lv_watch_snapshot *s)
{
	return s ? s->n : 0;
}

const lv_watch_table_stats *lv_watch_snapshot_table(const lv_watch_snapshot *s, size_t i)
{
	return s && i < s->n ? &s->rows[i] : NULL;
}

const lv_watch_table_stats *lv_watch_snapshot_total(const lv_watch_snapshot *s)
{
	return s ? &s->total : NULL;
}

int64_t lv_watch_snapshot_time(const lv_watch_snapshot *s)
{
	return s ? s->time_ms : 0;
}

void lv_watch_snapshot_free(lv_watch_snapshot *s)
{
	if (!s)
		return;
	lv__free(s->rows);
	lv__free(s->text);
	lv__free(s);
}
