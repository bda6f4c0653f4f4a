/*
 * The sweep's scan (the reading half of cleanup's phase 6), on a thread of its
 * own: the directories a cleanup sweeps are listed, each listed file is
 * classified, a file kept manifests reference is skipped, the size and time of
 * a file listed by name are looked up (a batch at once, concurrently), and the
 * file is judged by the caller's rule.  What goes is queued for the caller.
 * Started before the checkpoint is written, the scan overlaps it, and then
 * the caller's deleting.
 *
 * Invariants:
 *  - The scan lists, heads and judges; it deletes nothing and calls no user
 *    callback.  The caller's thread takes each decision off the queue in
 *    listing order, so the deletes (and their reports) are those of a serial
 *    sweep, in the same order, on the caller's thread.
 *  - At most LV__SCAN_QUEUE decisions wait, so memory stays bounded whatever
 *    the directories hold: a full queue makes the scan wait.
 *  - It starts only once the plan is complete (the sets, the newer commits):
 *    the rule and the sets are only read while it runs.
 *  - It is always joined: lv__scan_end cancels a scan still running and waits
 *    for its thread, so nothing it uses is freed under it.
 *  - With the own pass, a mark is queued only after every decision on the
 *    files it covers (and on every directory before _transactions/), so a
 *    caller removing manifests behind a mark has queued their files first.
 */
#include "core/cleanup/cleanup_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

const char *const lv__sweep_dirs[LV__SWEEP_NDIRS] = { "_versions", "data", "_deletions",
						      "_indices", "_transactions" };
/* Lance keeps the flat ones flat (data/ and _indices/ may nest). */
static const bool flat[LV__SWEEP_NDIRS] = { true, false, true, false, true };

#define LV__SCAN_QUEUE 4096
#define CAND_BATCH 4096

/* A file listed by name that could go: its size and time are looked up (a batch at once). */
typedef struct cand {
	const char *path; /* in the scan's arena */
	lv__digest key;   /* of the name it is referenced by */
	int kind;
	bool tmp;
	uint64_t size;
	int64_t mtime_ms;
	int rc;
} cand;

struct lv__scan {
	lv_dataset *ds;
	const lv__strset *referenced;
	const lv__file_vec *vtemps;
	const lv__scan_own *own; /* NULL: no own pass */
	bool skip_settled;       /* the own pass is done: _transactions/ skips what it settled */
	int threads;             /* for the lookups: one with the own pass (the caller's thread
				  * removes manifests meanwhile, on a core of its own) */
	lv__scan_rule rule;
	void *payload;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	lv__scan_item q[LV__SCAN_QUEUE]; /* a ring: qh first, qn waiting */
	size_t qh, qn;
	size_t dirs_done;
	bool done, cancel;
	int stop;        /* atomic: cancel, as the scan thread checks it without the lock */
	int rc;
	lv_error err;
	/* the scan thread's own */
	cand c[CAND_BATCH];
	size_t nc;
	lv__arena names; /* the candidates' paths, until their batch is judged */
};

/* Queues an item (its path is then the queue's); 1 when the scan is cancelled. */
static int enqueue(lv__scan *s, lv__scan_item it)
{
	pthread_mutex_lock(&s->mu);
	while (s->qn == LV__SCAN_QUEUE && !s->cancel)
		pthread_cond_wait(&s->cv, &s->mu);
	bool cancel = s->cancel;
	if (!cancel) {
		s->q[(s->qh + s->qn++) % LV__SCAN_QUEUE] = it;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	if (cancel)
		lv__free(it.path);
	return cancel;
}

/* Queues a decision (its path copied); 1 when the scan is cancelled, <0 on no memory. */
static int push(lv__scan *s, const lv_list_entry *f, int kind, const char *reason, bool unverified)
{
	char *copy = lv__strdup(f->path);
	if (!copy)
		return lv__err(&s->err, LV_ENOMEM, "out of memory");
	return enqueue(s, (lv__scan_item){ copy, kind, f->size, reason, unverified, 0 });
}

static int judge(lv__scan *s, const lv_list_entry *f, int kind, lv__digest key, bool tmp)
{
	bool unverified = false;
	const char *reason = s->rule(s->payload, f, kind, key, tmp, &unverified);
	return reason ? push(s, f, kind, reason, unverified) : 0;
}

static void head_job(size_t i, void *arg)
{
	lv__scan *s = arg;
	lv_error e = { 0 };
	cand *c = &s->c[i];
	c->rc = lv_storage_head(s->ds->st, c->path, &c->size, &c->mtime_ms, &e);
}

/* A lookup that failed, but not as "not found": the scan fails (nothing judged on a guess). */
static int head_failed(lv__scan *s, const cand *c)
{
	lv_error e = { 0 };
	uint64_t size;
	int64_t mtime;
	int rc = lv_storage_head(s->ds->st, c->path, &size, &mtime, &e);
	if (rc == 0 || rc == LV_ENOTFOUND) { /* the first lookup's error is gone: report its code */
		rc = c->rc;
		snprintf(e.message, sizeof e.message, "lookup failed");
	}
	return lv__err(&s->err, rc, "cleanup: %s could not be looked up (%s); stopping before its "
			       "version goes", c->path, e.message);
}

/* The candidates' times, read at once (a file gone meanwhile is skipped; one that cannot be
 * looked up stops the scan), then each judged. */
static int flush(lv__scan *s)
{
	lv__parallel_for(s->nc, s->threads, head_job, s);
	int rc = 0;
	for (size_t i = 0; i < s->nc && rc == 0; i++) {
		cand *c = &s->c[i];
		lv_list_entry e = { c->path, c->size, c->mtime_ms };
		if (c->rc == 0)
			rc = judge(s, &e, c->kind, c->key, c->tmp);
		else if (c->rc != LV_ENOTFOUND)
			rc = head_failed(s, c);
	}
	s->nc = 0;
	lv__arena_dispose(&s->names);
	lv__arena_init(&s->names, 1 << 16);
	return rc;
}

/* A listing callback: one file classified, judged now (listed with its time) or batched. */
static int scan_file(const lv_list_entry *f, void *payload)
{
	lv__scan *s = payload;
	if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		return s->rc = 1;
	char key[LV__CLEANUP_KEY_MAX];
	bool tmp = false;
	int kind = lv__classify(f->path, key, sizeof key, &tmp);
	if (kind < 0)
		return 0;
	lv__digest g = lv__strset_digest(key, strlen(key)); /* one digest for both sets */
	if (!tmp && lv__strset_has_digest(s->referenced, g))
		return 0; /* kept, whatever its age */
	if (s->skip_settled && kind == LV_KIND_TRANSACTION && lv__strset_has_digest(s->own->settled, g))
		return 0; /* judged by the own pass */
	if (f->mtime_ms)
		return (s->rc = judge(s, f, kind, g, tmp)) != 0;
	cand *c = &s->c[s->nc]; /* listed by name only */
	*c = (cand){ lv__arena_strdup(&s->names, f->path), g, kind, tmp, 0, 0, 0 };
	if (!c->path)
		return (s->rc = lv__err(&s->err, LV_ENOMEM, "out of memory")) != 0;
	if (++s->nc == CAND_BATCH)
		s->rc = flush(s);
	return s->rc != 0;
}

/* One directory: _versions/ from the listing the plan made (its temporary files), the flat
 * ones by name only (no list of them is held), the others with sizes and times. */
static int scan_dir(lv__scan *s, size_t d)
{
	int rc = 0;
	if (!strcmp(lv__sweep_dirs[d], "_versions")) {
		for (size_t i = 0; s->vtemps && i < s->vtemps->n && s->rc == 0; i++) {
			lv_list_entry e = { s->vtemps->v[i].path, 0, 0 };
			scan_file(&e, s);
		}
	} else if (flat[d]) {
		rc = lv_storage_list_names(s->ds->st, lv__sweep_dirs[d], scan_file, s, &s->err);
	} else {
		rc = lv_storage_list(s->ds->st, lv__sweep_dirs[d], true, scan_file, s, &s->err);
	}
	if (rc < 0)
		return rc;
	if (s->rc == 0)
		s->rc = flush(s);
	return s->rc;
}

/*
 * The own pass: each old manifest's transaction file, in version order, looked up and judged
 * a batch at a time (a file kept manifests name is skipped, one gone is skipped), a mark
 * queued after each full batch.
 */
static int own_pass(lv__scan *s)
{
	const lv__scan_own *o = s->own;
	char path[LV__TXN_PATH_MAX];
	for (size_t i = 0; i < o->n && s->rc == 0; i++) {
		if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
			return s->rc = 1;
		lv__digest g;
		if (!o->path(o->payload, i, path, &g))
			continue;
		if (lv__strset_has_digest(s->referenced, g))
			continue;
		cand *c = &s->c[s->nc];
		*c = (cand){ lv__arena_strdup(&s->names, path), g, LV_KIND_TRANSACTION, false, 0, 0, 0 };
		if (!c->path)
			return s->rc = lv__err(&s->err, LV_ENOMEM, "out of memory");
		if (++s->nc == CAND_BATCH && (s->rc = flush(s)) == 0)
			s->rc = enqueue(s, (lv__scan_item){ .mark = i + 1 });
	}
	if (s->rc == 0)
		s->rc = flush(s);
	s->skip_settled = true;
	return s->rc;
}

/* _transactions/ with the own pass: the pass, the listing of the rest, then the last mark
 * (so a run of one batch lists _transactions/ before any of its files goes: the listing does
 * not depend on how far the caller got). */
static int own_dir(lv__scan *s, size_t d)
{
	int rc = own_pass(s);
	if (rc == 0)
		rc = scan_dir(s, d);
	if (rc == 0)
		rc = s->rc = enqueue(s, (lv__scan_item){ .mark = s->own->n });
	return rc;
}

static void *scan_main(void *arg)
{
	lv__scan *s = arg;
	int rc = 0;
	for (size_t d = 0; d < LV__SWEEP_NDIRS && rc == 0; d++) {
		if (s->own && !strcmp(lv__sweep_dirs[d], "_transactions"))
			rc = own_dir(s, d);
		else
			rc = scan_dir(s, d);
		pthread_mutex_lock(&s->mu);
		s->dirs_done = d + 1;
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_lock(&s->mu);
	s->rc = rc < 0 ? rc : 0; /* 1 = cancelled: nobody reads it */
	s->done = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int lv__scan_start(lv__scan **out, lv_dataset *ds, const lv__strset *referenced,
		   const lv__file_vec *vtemps, const lv__scan_own *own, lv__scan_rule rule,
		   void *payload, lv_error *err)
{
	*out = NULL;
	lv__scan *s = lv__calloc(1, sizeof *s);
	if (!s)
		return lv__err(err, LV_ENOMEM, "out of memory");
	*s = (lv__scan){ .ds = ds, .referenced = referenced, .vtemps = vtemps, .own = own,
			 .threads = own ? 1 : ds->threads, .rule = rule, .payload = payload };
	lv__arena_init(&s->names, 1 << 16);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (pthread_create(&s->tid, NULL, scan_main, s) != 0) {
		lv__arena_dispose(&s->names);
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		lv__free(s);
		return lv__err(err, LV_ENOMEM, "cleanup: could not start the sweep's thread");
	}
	*out = s;
	return 0;
}

int lv__scan_next(lv__scan *s, lv__scan_item *item, size_t *dirs_done, lv_error *err)
{
	pthread_mutex_lock(&s->mu);
	while (!s->qn && !s->done)
		pthread_cond_wait(&s->cv, &s->mu);
	int rc = 0;
	if (s->qn) {
		*item = s->q[s->qh];
		s->qh = (s->qh + 1) % LV__SCAN_QUEUE;
		s->qn--;
		pthread_cond_broadcast(&s->cv);
		rc = 1;
	} else if (s->rc < 0) {
		rc = s->rc;
		if (err)
			*err = s->err;
	}
	*dirs_done = s->dirs_done;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void lv__scan_end(lv__scan *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->cancel = true;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->tid, NULL);
	for (size_t i = 0; i < s->qn; i++)
		lv__free(s->q[(s->qh + i) % LV__SCAN_QUEUE].path);
	lv__arena_dispose(&s->names);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	lv__free(s);
}
