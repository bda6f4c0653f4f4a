/*
 * Running a watcher (lancever/watch.h): lv_watch_run (the scheduler on the caller's
 * thread, a bounded pool of workers), lv_watch_run_once, and one table's work (a poll,
 * then a flush when due).
 *
 * Invariants: a table is in the queue or with a worker only while `busy` (set by the
 * scheduler under w->mu, cleared by the worker that did the job), so its capture has one
 * user at a time; the scheduler never waits longer than LV__WATCH_TICK_MS before it looks
 * at the stop flag again (a notifier wait is also woken by lv_watch_stop); a polled table's
 * interval is halved (not below min_interval_ms) after a poll that found something and
 * doubled (not above max_interval_ms) after one that found nothing or failed; a notified
 * table is polled LV__WATCH_NOTIFY_DELAY_MS (0) after a notification and every
 * max_interval_ms besides; at stop every
 * job finishes, then every table is polled once more and flushed.
 */
#include "core/watch_int.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Adds what the capture counted since the last call to the table's statistics (under mu). */
static void add_counts(lv_watcher *w, wtable *t, const lv_capture_stats *cs, bool polled,
		       uint64_t *dcap, uint64_t *dmiss)
{
	lv_watch_table_stats *s = &t->st;
	pthread_mutex_lock(&w->mu);
	*dcap = cs->captured - t->prev.captured;
	*dmiss = cs->missed - t->prev.missed;
	s->captured += *dcap;
	s->missed += *dmiss;
	s->requests += cs->requests - t->prev.requests;
	s->errors += cs->errors - t->prev.errors;
	s->flushes += cs->flushes - t->prev.flushes;
	s->polls += cs->polls - t->prev.polls;
	if (cs->newest_version > s->newest_version)
		s->newest_version = cs->newest_version;
	if (polled && *dcap) {
		int64_t lag = cs->last_lag_ms < 0 ? 0 : cs->last_lag_ms;
		s->last_lag_ms = lag;
		if (!t->backlog) {
			s->lag_buckets[lv__watch_lag_bucket(lag)]++;
			s->lag_count++;
			s->lag_sum_ms += lag;
		}
	}
	if (polled)
		t->backlog = false;
	s->interval_ms = t->wd >= 0 ? w->o.max_interval_ms : t->interval_ms;
	t->prev = *cs;
	pthread_mutex_unlock(&w->mu);
}

static void fail_event(lv_watcher *w, wtable *t, int rc, const char *what, const lv_error *e)
{
	lv_watch_field f[] = { { "code", lv_strerror(rc), false } };
	lv__watch_event(w, LV_WATCH_EV_ERROR, LV_WATCH_ERROR, t->name, f, 1, "%s failed: %s", what,
			e->message);
}

/* The dataset's warnings from the last capture call (a gap and its reason, a checkpoint
 * rejected, ...), one event each, then cleared so none is said twice. */
static void say_warnings(lv_watcher *w, wtable *t)
{
	size_t n = lv_dataset_warning_count(t->ds);
	for (size_t i = 0; i < n; i++) {
		const lv_warning *wn = lv_dataset_warning(t->ds, i);
		char k[24], a[24], b[24];
		snprintf(k, sizeof k, "%d", wn->kind);
		snprintf(a, sizeof a, "%llu", (unsigned long long)wn->first);
		snprintf(b, sizeof b, "%llu", (unsigned long long)wn->last);
		lv_watch_field f[4] = { { "kind", k, true } };
		size_t nf = 1;
		if (wn->first || wn->last) {
			f[nf++] = (lv_watch_field){ "first", a, true };
			f[nf++] = (lv_watch_field){ "last", b, true };
		}
		if (wn->path)
			f[nf++] = (lv_watch_field){ "path", wn->path, false };
		lv__watch_event(w, LV_WATCH_EV_WARNING, LV_WATCH_WARN, t->name, f, nf, "%s",
				wn->message ? wn->message : "(no message)");
	}
	if (n)
		lv_dataset_clear_warnings(t->ds);
}

static int do_poll(lv_watcher *w, wtable *t, lv_error *err)
{
	lv_capture_stats cs;
	lv_capture_stats_init(&cs, LV_CAPTURE_STATS_VERSION);
	lv_error e = { 0 };
	int rc = lv_capture_poll(t->cap, &cs, &e);
	uint64_t dcap, dmiss;
	t->interval_ms = lv__watch_next_interval(t->interval_ms, w->o.min_interval_ms,
						 w->o.max_interval_ms,
						 rc == 0 && cs.captured + cs.missed !=
								    t->prev.captured + t->prev.missed);
	add_counts(w, t, &cs, true, &dcap, &dmiss);
	say_warnings(w, t);
	char a[24], b[24], c[24];
	if (dcap) {
		snprintf(a, sizeof a, "%llu", (unsigned long long)dcap);
		snprintf(b, sizeof b, "%llu", (unsigned long long)cs.newest_version);
		snprintf(c, sizeof c, "%lld", (long long)t->st.last_lag_ms);
		lv_watch_field f[] = { { "count", a, true }, { "newest", b, true },
				       { "lag_ms", c, true } };
		lv__watch_event(w, LV_WATCH_EV_CAPTURE, LV_WATCH_INFO, t->name, f, 3,
				"captured %s version%s (newest %s, lag %s ms)", a, dcap == 1 ? "" : "s",
				b, c);
	}
	if (dmiss) {
		snprintf(a, sizeof a, "%llu", (unsigned long long)dmiss);
		lv_watch_field f[] = { { "count", a, true },
				       { "reason", "manifest removed before it was read", false } };
		lv__watch_event(w, LV_WATCH_EV_MISS, LV_WATCH_WARN, t->name, f, 2,
				"missed %s version%s: manifest removed before it was read (recorded "
				"as a gap)", a, dmiss == 1 ? "" : "s");
	}
	if (rc < 0) {
		fail_event(w, t, rc, "poll", &e);
		lv__err(err, rc, "%s: %s", t->name, e.message);
	}
	return rc;
}

static int do_flush(lv_watcher *w, wtable *t, lv_error *err)
{
	lv_capture_stats before, cs;
	lv_capture_stats_init(&before, LV_CAPTURE_STATS_VERSION);
	lv_capture_stats_init(&cs, LV_CAPTURE_STATS_VERSION);
	(void)lv_capture_get_stats(t->cap, &before);
	lv_error e = { 0 };
	int64_t t0 = lv_capture_clock_ms();
	int rc = lv_capture_flush(t->cap, &e);
	int64_t ms = lv_capture_clock_ms() - t0;
	(void)lv_capture_get_stats(t->cap, &cs);
	uint64_t dcap, dmiss;
	add_counts(w, t, &cs, false, &dcap, &dmiss);
	say_warnings(w, t);
	if (rc < 0) {
		fail_event(w, t, rc, "flush", &e);
		return lv__err(err, rc, "%s: %s", t->name, e.message);
	}
	if (before.held) {
		char a[24], b[24], c[24];
		snprintf(a, sizeof a, "%llu", (unsigned long long)before.held);
		snprintf(b, sizeof b, "%llu", (unsigned long long)cs.flushed_version);
		snprintf(c, sizeof c, "%lld", (long long)ms);
		lv_watch_field f[] = { { "count", a, true }, { "flushed_version", b, true },
				       { "ms", c, true } };
		lv__watch_event(w, LV_WATCH_EV_FLUSH, LV_WATCH_INFO, t->name, f, 3,
				"flushed %s record%s through version %s in %s ms", a,
				before.held == 1 ? "" : "s", b, c);
	}
	return 0;
}

int lv__watch_table_work(lv_watcher *w, wtable *t, bool poll, bool force_flush, lv_error *err)
{
	if (!t->cap)
		return 0;
	int first = poll ? do_poll(w, t, err) : 0;
	if (force_flush || lv_capture_due(t->cap, lv_capture_clock_ms())) {
		int rc = do_flush(w, t, first ? NULL : err);
		if (!first)
			first = rc;
	}
	return first;
}

/* ---- the worker pool ---- */

static void *worker(void *arg)
{
	lv_watcher *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->qhead && !w->quit)
			pthread_cond_wait(&w->work, &w->mu);
		wtable *t = w->qhead;
		if (!t)
			break; /* quit with nothing queued */
		w->qhead = t->qnext;
		if (!w->qhead)
			w->qtail = NULL;
		t->qnext = NULL;
		w->running++;
		bool poll = t->want_poll;
		t->kicked = false;
		pthread_mutex_unlock(&w->mu);
		(void)lv__watch_table_work(w, t, poll, false, NULL);
		pthread_mutex_lock(&w->mu);
		if (poll)
			t->next_ms = lv_capture_clock_ms() +
				     (t->wd >= 0 ? w->o.max_interval_ms : t->interval_ms);
		t->busy = false;
		w->running--;
		pthread_cond_broadcast(&w->idle);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Queues every table whose poll or flush is due; the ms until the next one is (at most a
 * tick). */
static int64_t schedule(lv_watcher *w, int64_t now)
{
	int64_t next = now + LV__WATCH_TICK_MS;
	bool queued = false;
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->ntables; i++) {
		wtable *t = w->tables[i];
		if (t->busy || !t->cap)
			continue;
		bool poll = t->kicked || now >= t->next_ms;
		if (!poll && !lv_capture_due(t->cap, now)) {
			if (t->next_ms < next)
				next = t->next_ms;
			continue;
		}
		t->busy = true;
		t->want_poll = poll;
		if (w->qtail)
			w->qtail->qnext = t;
		else
			w->qhead = t;
		w->qtail = t;
		queued = true;
	}
	if (queued)
		pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
	return next > now ? next - now : 0;
}

/* A notification for watch wd (-1: the queue overflowed, so any). */
static void on_notify(int64_t wd, void *arg)
{
	lv_watcher *w = arg;
	int64_t soon = lv_capture_clock_ms() + LV__WATCH_NOTIFY_DELAY_MS;
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->ntargets; i++)
		if (wd < 0 || w->targets[i].root_wd == wd)
			w->rediscover_until = soon + LV__WATCH_NEWDIR_FOR_MS;
	for (size_t i = 0; i < w->ntables; i++) {
		wtable *t = w->tables[i];
		if (t->wd < 0 || (wd >= 0 && t->wd != wd))
			continue;
		if (t->busy)
			t->kicked = true; /* polled again as soon as its job ends */
		else if (soon < t->next_ms)
			t->next_ms = soon;
	}
	pthread_mutex_unlock(&w->mu);
}

static void nap(lv_watcher *w, int64_t ms)
{
	if (ms > LV__WATCH_TICK_MS)
		ms = LV__WATCH_TICK_MS;
	if (w->notify) {
		lv_error e = { 0 };
		if (lv__notify_wait(w->notify, ms, on_notify, w, &e) == 0)
			return;
	}
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

static bool stopping(lv_watcher *w)
{
	return __atomic_load_n(&w->stop, __ATOMIC_SEQ_CST) != 0;
}

static void start_event(lv_watcher *w)
{
	char a[24], b[24], c[40];
	snprintf(a, sizeof a, "%zu", w->ntargets);
	snprintf(b, sizeof b, "%d", w->o.threads);
	snprintf(c, sizeof c, "%u/%u", w->o.shard_index, w->o.shard_count);
	lv_watch_field f[] = { { "targets", a, true }, { "threads", b, true }, { "shard", c, false } };
	lv__watch_event(w, LV_WATCH_EV_START, LV_WATCH_INFO, NULL, f, 3,
			"watching %s target%s with %s thread%s (shard %s)", a,
			w->ntargets == 1 ? "" : "s", b, w->o.threads == 1 ? "" : "s", c);
}

typedef struct pass {
	lv_watcher *w;
	bool poll;
	pthread_mutex_t mu;
	int first;
	lv_error *err;
} pass;

static void pass_one(size_t i, void *arg)
{
	pass *p = arg;
	lv_error e = { 0 };
	int rc = lv__watch_table_work(p->w, p->w->tables[i], p->poll, true, &e);
	pthread_mutex_lock(&p->mu);
	if (rc < 0 && !p->first) {
		p->first = rc;
		lv__err(p->err, rc, "%s", e.message);
	}
	pthread_mutex_unlock(&p->mu);
}

/* Polls (when `poll`) and flushes every table, in parallel; the first error. */
static int pass_all(lv_watcher *w, bool poll, lv_error *err)
{
	pass p = { .w = w, .poll = poll, .err = err };
	pthread_mutex_init(&p.mu, NULL);
	int rc = lv__parallel_for(w->ntables, w->o.threads, pass_one, &p);
	pthread_mutex_destroy(&p.mu);
	return p.first ? p.first : rc;
}

static void stop_event(lv_watcher *w)
{
	uint64_t cap = 0, miss = 0;
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->ntables; i++) {
		cap += w->tables[i]->st.captured;
		miss += w->tables[i]->st.missed;
	}
	pthread_mutex_unlock(&w->mu);
	char a[24], b[24];
	snprintf(a, sizeof a, "%llu", (unsigned long long)cap);
	snprintf(b, sizeof b, "%llu", (unsigned long long)miss);
	lv_watch_field f[] = { { "captured", a, true }, { "missed", b, true } };
	lv__watch_event(w, LV_WATCH_EV_STOP, LV_WATCH_INFO, NULL, f, 2,
			"stopped: %s captured, %s missed", a, b);
}

static int enter(lv_watcher *w, lv_error *err)
{
	if (!w)
		return lv__err(err, LV_EINVALID, "watch: NULL watcher");
	if (__atomic_exchange_n(&w->in_run, 1, __ATOMIC_SEQ_CST))
		return lv__err(err, LV_EINVALID, "watch: a run is already in progress");
	return 0;
}

int lv_watch_run_once(lv_watcher *w, lv_error *err)
{
	LV_TRY(enter(w, err));
	start_event(w);
	lv_error e = { 0 };
	w->once = true;
	int rc = lv__watch_discover(w, &e);
	w->once = false;
	if (rc == LV_ENOMEM) {
		__atomic_store_n(&w->in_run, 0, __ATOMIC_SEQ_CST);
		return lv__err(err, rc, "%s", e.message);
	}
	int rc2 = pass_all(w, true, rc ? NULL : err);
	stop_event(w);
	__atomic_store_n(&w->in_run, 0, __ATOMIC_SEQ_CST);
	if (rc < 0)
		lv__err(err, rc, "%s", e.message);
	return rc ? rc : rc2;
}

/* The scheduler: until stop, discovery every discover_ms and due tables to the workers. */
/* Watches each target's own directory, where new tables appear (LanceDB: `<name>.lance/`);
 * where that cannot be done, new tables wait for the next periodic discovery.  Tables a
 * one-pass run opened get their notification now.  0, or LV_ENOMEM. */
static int watch_roots(lv_watcher *w, lv_error *err)
{
	for (size_t i = 0; i < w->ntargets; i++) {
		wtarget *tg = &w->targets[i];
		lv_error e = { 0 };
		int rc = tg->notify && tg->root_wd < 0
				 ? lv__notify_add(w->notify, tg->st, "", &tg->root_wd, &e) : 0;
		if (rc == LV_ENOMEM)
			return lv__err(err, rc, "%s", e.message);
		if (rc < 0)
			tg->root_wd = -1;
	}
	for (size_t i = 0; i < w->ntables; i++) {
		wtable *t = w->tables[i];
		if (!t->cap || t->notify_tried)
			continue;
		LV_TRY(lv__watch_table_notify(w, t, err));
		pthread_mutex_lock(&w->mu);
		t->st.notified = t->wd >= 0;
		pthread_mutex_unlock(&w->mu);
	}
	return 0;
}

/* When the next discovery is due, given the last one. */
static int64_t discovery_due(lv_watcher *w, int64_t last)
{
	pthread_mutex_lock(&w->mu);
	bool soon = last < w->rediscover_until;
	pthread_mutex_unlock(&w->mu);
	int64_t every = soon && LV__WATCH_NEWDIR_EVERY_MS < w->o.discover_ms
				? LV__WATCH_NEWDIR_EVERY_MS : w->o.discover_ms;
	return last + every;
}

static int loop(lv_watcher *w, lv_error *err)
{
	int64_t last_discover = 0, next_discover = 0;
	LV_TRY(watch_roots(w, err));
	while (!stopping(w)) {
		int64_t now = lv_capture_clock_ms();
		if (now >= next_discover) {
			lv_error e = { 0 };
			if (lv__watch_discover(w, &e) == LV_ENOMEM)
				return lv__err(err, LV_ENOMEM, "%s", e.message);
			last_discover = lv_capture_clock_ms();
			now = last_discover;
		}
		next_discover = discovery_due(w, last_discover);
		int64_t wait = schedule(w, now);
		if (next_discover - now < wait)
			wait = next_discover - now;
		if (!stopping(w))
			nap(w, wait);
	}
	return 0;
}

int lv_watch_run(lv_watcher *w, lv_error *err)
{
	LV_TRY(enter(w, err));
	pthread_t th[LV__WATCH_MAX_THREADS];
	int started = 0;
	w->quit = false;
	for (; started < w->o.threads; started++)
		if (pthread_create(&th[started], NULL, worker, w) != 0)
			break;
	int rc = started ? 0 : lv__err(err, LV_ENOMEM, "watch: cannot start a worker thread");
	if (rc == 0) {
		start_event(w);
		rc = loop(w, err);
	}
	pthread_mutex_lock(&w->mu);
	while (w->qhead || w->running)
		pthread_cond_wait(&w->idle, &w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (started) {
		(void)pass_all(w, true, NULL); /* the last poll and flush; failures are events */
		stop_event(w);
	}
	__atomic_store_n(&w->in_run, 0, __ATOMIC_SEQ_CST);
	return rc;
}
