/*
 * Finding the tables of a watcher's targets (lancever/watch.h): one recursive listing per
 * target; every directory holding `_versions/<name>.manifest` is a dataset, and one that
 * lies at `<dataset>/tree/<branch>` is that dataset's branch.  Tables outside this
 * watcher's shard (FNV-1a 64 of the table root's name, so a branch goes with its table)
 * are left alone.
 *
 * Invariants: tables are only appended (under w->mu) and never freed before lv_watch_free;
 * a table that no longer lists is closed without a flush (its manifests are gone; a flush
 * would create `_checkpoints/` in a dropped table) and kept as `lost` until it lists again,
 * when it is opened anew; a table is opened or closed only by the thread that claimed it
 * (busy); every error is an event, and a table whose open failed is tried again at the
 * next discovery.
 */
#include "core/watch_int.h"
#include "util/path.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct cands {
	char **v;
	size_t n, cap;
	int rc;
} cands;

static const char VERS[] = "_versions";
#define VERS_LEN (sizeof VERS - 1)

/* The dataset root of a listed file: "<root>/_versions/<x>.manifest" -> "<root>". */
static int on_entry(const lv_list_entry *e, void *arg)
{
	cands *c = arg;
	const char *p = e->path, *slash = strrchr(p, '/');
	size_t pl = strlen(p);
	if (!slash || pl < 9 || strcmp(p + pl - 9, ".manifest") != 0)
		return 0;
	size_t dl = (size_t)(slash - p);
	if (dl < VERS_LEN || memcmp(slash - VERS_LEN, VERS, VERS_LEN) != 0 ||
	    (dl > VERS_LEN && slash[-(ptrdiff_t)VERS_LEN - 1] != '/'))
		return 0;
	size_t rl = dl > VERS_LEN ? dl - VERS_LEN - 1 : 0;
	if (c->n && strlen(c->v[c->n - 1]) == rl && memcmp(c->v[c->n - 1], p, rl) == 0)
		return 0; /* the listing is sorted on every built-in store: mostly the same root */
	char **g = lv__grow(c->v, &c->cap, c->n, sizeof *c->v, 64);
	char *s = g ? lv__strndup(p, rl) : NULL;
	if (!s) {
		if (g)
			c->v = g;
		c->rc = LV_ENOMEM;
		return 1;
	}
	c->v = g;
	c->v[c->n++] = s;
	return 0;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has(const cands *c, const char *s)
{
	return bsearch(&s, c->v, c->n, sizeof *c->v, cmpstr) != NULL;
}

/* The length of the table root of candidate s: before the first "tree/" split whose
 * prefix is itself a dataset; strlen(s) when s is not a branch. */
static size_t root_len(const cands *c, const char *s)
{
	char buf[LV__PATH_MAX + 1];
	for (const char *t = s; (t = strstr(t, "tree/")) != NULL; t++) {
		if (t != s && t[-1] != '/')
			continue;
		size_t rl = t == s ? 0 : (size_t)(t - s) - 1;
		if (rl > LV__PATH_MAX || !t[5])
			break;
		memcpy(buf, s, rl);
		buf[rl] = 0;
		if (has(c, buf))
			return rl;
	}
	return strlen(s);
}

static wtable *find(lv_watcher *w, uint32_t target, const char *name)
{
	for (size_t i = 0; i < w->ntables; i++)
		if (w->tables[i]->target == target && strcmp(w->tables[i]->name, name) == 0)
			return w->tables[i];
	return NULL;
}

void lv__watch_table_close(lv_watcher *w, wtable *t)
{
	if (t->wd >= 0)
		lv__notify_remove(w->notify, t->wd);
	t->wd = -1;
	lv_capture_free(t->cap);
	lv_dataset_free(t->ds);
	lv_storage_free(t->sub);
	t->cap = NULL;
	t->ds = NULL;
	t->sub = NULL;
}

int lv__watch_table_notify(lv_watcher *w, wtable *t, lv_error *err)
{
	wtarget *tg = &w->targets[t->target];
	t->wd = -1;
	if (!tg->notify || w->once)
		return 0;
	t->notify_tried = true;
	lv_error e = { 0 };
	char *dir = lv__sprintf("%s%s%s", t->name, t->name[0] ? "/" : "", VERS);
	if (!dir)
		return lv__err(err, LV_ENOMEM, "watch: out of memory");
	int rc = lv__notify_add(w->notify, tg->st, dir, &t->wd, &e);
	lv__free(dir);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "%s", e.message);
	if (rc < 0) {
		t->wd = -1;
		lv_watch_field f[] = { { "code", lv_strerror(rc), false } };
		lv__watch_event(w, LV_WATCH_EV_FALLBACK, LV_WATCH_WARN, t->name, f, 1,
				"polling instead of notification: %s", e.message);
	}
	return 0;
}

static int table_open(lv_watcher *w, wtable *t, lv_error *err)
{
	wtarget *tg = &w->targets[t->target];
	char root[LV__PATH_MAX + 1];
	memcpy(root, t->name, t->name_root);
	root[t->name_root] = 0;
	int rc = 0;
	if (root[0])
		rc = lv_storage_sub(&t->sub, tg->st, root, err);
	lv_open_options oo;
	lv_open_options_init(&oo, LV_OPEN_OPTIONS_VERSION);
	oo.threads = 1;
	oo.branch = t->branch;
	if (rc == 0)
		rc = lv_dataset_open_storage(&t->ds, t->sub ? t->sub : tg->st, &oo, err);
	lv_capture_options co;
	lv_capture_options_init(&co, LV_CAPTURE_OPTIONS_VERSION);
	co.flush_ms = w->o.flush_ms;
	if (rc == 0)
		rc = lv_capture_open(&t->cap, t->ds, &co, err);
	if (rc == 0)
		rc = lv__watch_table_notify(w, t, err);
	if (rc < 0) {
		lv__watch_table_close(w, t);
		return rc;
	}
	lv_capture_stats_init(&t->prev, LV_CAPTURE_STATS_VERSION);
	pthread_mutex_lock(&w->mu);
	t->st.notified = t->wd >= 0;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* A new table of candidate `name`; NULL only when out of memory. */
static wtable *table_new(lv_watcher *w, uint32_t target, const char *name, size_t rl)
{
	wtable *t = lv__calloc(1, sizeof *t);
	char *n = t ? lv__strdup(name) : NULL;
	if (!n) {
		lv__free(t);
		return NULL;
	}
	t->name = n;
	t->name_root = rl;
	t->branch = n[rl] ? n + rl + (rl ? 6 : 5) : NULL; /* after "/tree/" or "tree/" */
	t->target = target;
	t->backlog = w->discoveries == 0;
	t->wd = -1;
	t->interval_ms = w->o.min_interval_ms;
	t->st.table = t->name;
	t->st.target = w->targets[target].uri;
	t->st.branch = t->branch;
	t->st.last_lag_ms = -1;
	t->st.tables = 1;
	return t;
}

static int add_table(lv_watcher *w, wtable *t, lv_error *err)
{
	pthread_mutex_lock(&w->mu);
	wtable **g = lv__grow(w->tables, &w->cap_tables, w->ntables, sizeof *g, 16);
	if (g) {
		w->tables = g;
		w->tables[w->ntables++] = t;
	}
	pthread_mutex_unlock(&w->mu);
	return g ? 0 : lv__err(err, LV_ENOMEM, "watch: out of memory");
}

/* Claims t (busy) when no worker has it; false when one has. */
static bool claim(lv_watcher *w, wtable *t)
{
	pthread_mutex_lock(&w->mu);
	bool ok = !t->busy;
	t->busy = true;
	pthread_mutex_unlock(&w->mu);
	return ok;
}

static void release(lv_watcher *w, wtable *t)
{
	pthread_mutex_lock(&w->mu);
	t->busy = false;
	t->next_ms = lv_capture_clock_ms();
	t->kicked = true;
	pthread_mutex_unlock(&w->mu);
}

/* Opens (or reopens) a listed table.  Errors of the open are events. */
static int found(lv_watcher *w, uint32_t target, const char *name, size_t rl, lv_error *err)
{
	wtable *t = find(w, target, name);
	bool fresh = !t;
	if (fresh) {
		t = table_new(w, target, name, rl);
		if (!t)
			return lv__err(err, LV_ENOMEM, "watch: out of memory");
		t->busy = true; /* not yet visible: no one else can have it */
	}
	t->seen = true;
	if (!fresh && (t->cap || !claim(w, t)))
		return 0; /* open, or a worker has it */
	lv_error e = { 0 };
	int rc = table_open(w, t, &e);
	if (rc == LV_ENOMEM) {
		if (fresh) {
			lv__free(t->name);
			lv__free(t);
		} else {
			release(w, t);
		}
		return lv__err(err, rc, "%s", e.message);
	}
	t->open_failed = rc < 0;
	if (rc < 0) {
		pthread_mutex_lock(&w->mu);
		t->st.errors++;
		pthread_mutex_unlock(&w->mu);
		lv_watch_field f[] = { { "code", lv_strerror(rc), false } };
		lv__watch_event(w, LV_WATCH_EV_ERROR, LV_WATCH_ERROR, t->name, f, 1,
				"cannot open the table: %s", e.message);
	} else {
		t->lost = false;
		lv_watch_field f[] = { { "target", w->targets[target].uri, false },
				       { "branch", t->branch ? t->branch : "main", false },
				       { "notified", t->wd >= 0 ? "true" : "false", false } };
		lv__watch_event(w, LV_WATCH_EV_DISCOVER, LV_WATCH_INFO, t->name, f, 3,
				"table discovered (%s)", t->wd >= 0 ? "notified" : "polled");
	}
	if (fresh) {
		t->busy = false;
		t->kicked = true;
		rc = add_table(w, t, err);
		if (rc < 0) {
			lv__watch_table_close(w, t);
			lv__free(t->name);
			lv__free(t);
		}
		return rc;
	}
	release(w, t);
	return 0;
}

/* Closes the tables of `target` that did not list this time. */
static void lose_unseen(lv_watcher *w, uint32_t target)
{
	for (size_t i = 0; i < w->ntables; i++) {
		wtable *t = w->tables[i];
		if (t->target != target || t->seen || t->lost || !claim(w, t))
			continue;
		lv__watch_table_close(w, t);
		t->lost = true;
		pthread_mutex_lock(&w->mu);
		t->st.notified = false;
		pthread_mutex_unlock(&w->mu);
		lv__watch_event(w, LV_WATCH_EV_LOST, LV_WATCH_WARN, t->name, NULL, 0,
				"the table no longer lists under its target: closed");
		pthread_mutex_lock(&w->mu);
		t->busy = false;
		pthread_mutex_unlock(&w->mu);
	}
}

static int discover_target(lv_watcher *w, uint32_t ti, lv_error *err)
{
	cands c = { 0 };
	int rc = lv_storage_list(w->targets[ti].st, "", true, on_entry, &c, err);
	if (c.rc)
		rc = lv__err(err, c.rc, "watch: out of memory");
	if (rc == 0 && c.n > 1) {
		qsort(c.v, c.n, sizeof *c.v, cmpstr);
		size_t k = 1;
		for (size_t i = 1; i < c.n; i++) {
			if (strcmp(c.v[i], c.v[k - 1]) == 0)
				lv__free(c.v[i]);
			else
				c.v[k++] = c.v[i];
		}
		c.n = k;
	}
	for (size_t i = 0; rc == 0 && i < w->ntables; i++)
		if (w->tables[i]->target == ti)
			w->tables[i]->seen = false;
	for (size_t i = 0; rc == 0 && i < c.n; i++) {
		size_t rl = root_len(&c, c.v[i]);
		char save = c.v[i][rl];
		c.v[i][rl] = 0;
		uint64_t h = lv_watch_shard_hash(c.v[i]);
		c.v[i][rl] = save;
		if (h % w->o.shard_count == w->o.shard_index)
			rc = found(w, ti, c.v[i], rl, err);
	}
	if (rc == 0)
		lose_unseen(w, ti);
	for (size_t i = 0; i < c.n; i++)
		lv__free(c.v[i]);
	lv__free(c.v);
	return rc;
}

int lv__watch_discover(lv_watcher *w, lv_error *err)
{
	int first = 0;
	for (uint32_t i = 0; i < w->ntargets; i++) {
		lv_error e = { 0 };
		int rc = discover_target(w, i, &e);
		if (rc == LV_ENOMEM)
			return lv__err(err, rc, "%s", e.message);
		if (rc < 0) {
			pthread_mutex_lock(&w->mu);
			w->discover_errors++;
			pthread_mutex_unlock(&w->mu);
			lv_watch_field f[] = { { "code", lv_strerror(rc), false } };
			lv__watch_event(w, LV_WATCH_EV_ERROR, LV_WATCH_ERROR, NULL, f, 1,
					"listing %s failed: %s", w->targets[i].uri, e.message);
			if (!first) {
				first = rc;
				lv__err(err, rc, "%s", e.message);
			}
		}
	}
	w->discoveries++; /* tables the first one found are its backlog */
	return first;
}
