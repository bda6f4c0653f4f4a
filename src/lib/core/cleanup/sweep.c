/*
 * Deleting: the rule each listed file falls under, and batched deletes
 * (one DeleteObjects request per 1000 on S3).  Stats count only what this
 * process deleted.  A file the store refuses to delete (its own result an
 * error) is counted in failed_deletes and the sweep goes on, as in Lance 14:
 * it is still there, so the next run finds it again.  A request that failed
 * as a whole (no result per file: an interrupted handle, a bad path, no
 * memory) stops the run, as before.
 */
#include "core/cleanup/cleanup_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

/*
 * The rate limit, as Lance counts it: each file is one delete, even in a batched request.
 * Before a batch goes out, wait until `sent` deletes fit in the time since the first.
 */
static void rate_wait(lv__deleter *d)
{
	if (d->rate <= 0 || d->p->dry_run)
		return;
	uint64_t now = lv__mono_ns();
	if (!d->sent)
		d->start_ns = now;
	uint64_t due = d->start_ns + (uint64_t)((double)d->sent / d->rate * 1e9);
	if (due > now) {
		struct timespec ts = { (time_t)((due - now) / 1000000000u), (long)((due - now) % 1000000000u) };
		while (nanosleep(&ts, &ts) != 0) {
		}
	}
	d->sent += d->n;
}

/* A delete's result slot the store did not fill. */
#define NO_RESULT 1

/* Deletes per request: 1000 (S3's DeleteObjects); under a rate limit, a tenth of a second's. */
static size_t batch_size(const lv__deleter *d)
{
	if (d->rate <= 0)
		return LV__DEL_BATCH;
	size_t b = d->rate < 10 ? 1 : (size_t)(d->rate / 10);
	return b < LV__DEL_BATCH ? b : LV__DEL_BATCH;
}

int lv__del_flush(lv__deleter *d, lv_error *err)
{
	if (!d->n)
		return 0;
	rate_wait(d);
	for (size_t i = 0; i < d->n; i++)
		d->rcs[i] = NO_RESULT;
	lv_error e = { 0 };
	int rc = d->p->dry_run ? 0 : lv_storage_delete_many(d->ds->st, d->path, d->n, d->rcs, &e);
	bool per_file = true; /* every file has its own result */
	for (size_t i = 0; i < d->n && !d->p->dry_run; i++)
		per_file = per_file && d->rcs[i] != NO_RESULT;
	if (rc < 0 && per_file)
		rc = 0; /* each failure is counted below */
	else if (rc < 0)
		lv__err(err, rc, "%s", e.message);
	for (size_t i = 0; i < d->n; i++) {
		if (!d->p->dry_run && per_file && d->rcs[i] < 0 && d->rcs[i] != LV_ENOTFOUND)
			d->s->failed_deletes++;
		/* Only what this process removed counts: LV_ENOTFOUND is a concurrent cleanup's. */
		if (d->p->dry_run || d->rcs[i] == 0) {
			d->s->files_removed[d->kind[i]]++;
			d->s->bytes_removed[d->kind[i]] += d->size[i];
			d->manifests_deleted += d->kind[i] == LV_KIND_MANIFEST;
			/* reported once gone, so a listing names only what this process removed */
			if (d->p->on_file)
				d->p->on_file(d->path[i], d->kind[i], d->size[i], d->reason[i], d->p->payload);
			if (d->p->on_candidate) {
				lv_cleanup_candidate c = { .path = d->path[i], .kind = d->kind[i],
							   .size = d->size[i], .reason = d->reason[i],
							   .unverified = d->unverified[i],
							   .version = d->version[i] };
				d->p->on_candidate(&c, d->p->payload);
			}
		}
	}
	d->n = 0;
	lv__del_release(d);
	return rc;
}

int lv__del_hold(lv__deleter *d, char *path)
{
	if (d->nheld == LV__DEL_BATCH) /* never: a batch is sent when it has that many */
		return LV_ENOMEM;
	d->held[d->nheld++] = path;
	return 0;
}

void lv__del_release(lv__deleter *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nheld; i++)
		lv__free(d->held[i]);
	d->nheld = 0;
}

int lv__remove_file(lv__deleter *d, const char *path, int kind, uint64_t size, const char *reason,
		       lv_error *err)
{
	return lv__remove_file_u(d, path, kind, size, reason, false, 0, err);
}

int lv__remove_file_u(lv__deleter *d, const char *path, int kind, uint64_t size, const char *reason,
		      bool unverified, uint64_t version, lv_error *err)
{
	d->unverified[d->n] = unverified;
	d->version[d->n] = version;
	d->path[d->n] = path;
	d->reason[d->n] = reason;
	d->kind[d->n] = kind;
	d->size[d->n] = size;
	d->n++;
	return d->n >= batch_size(d) ? lv__del_flush(d, err) : 0;
}

/* data/<key>/<name>.blob, a blob sidecar (Lance's blob v2): its key is data/<key>.lance, so it
 * is kept exactly while that data file is (Lance 14's rule, checked with pylance 14.0.2). */
static bool sidecar_key(const char *path, char *key, size_t cap)
{
	const char *rel = path + 5, *slash = strchr(rel, '/');
	if (!slash || slash == rel || strchr(slash + 1, '/') || !lv__ends_with(slash + 1, ".blob"))
		return false;
	snprintf(key, cap, "data/%.*s.lance", (int)(slash - rel), rel);
	return true;
}

int lv__classify(const char *path, char *key, size_t cap, bool *tmp)
{
	bool t = false;
	int kind = -1;
	const char *base = lv__basename(path);
	size_t pl = strlen(path); /* key = path (snprintf's truncation, without its cost per file) */
	if (cap) {
		pl = pl < cap ? pl : cap - 1;
		memcpy(key, path, pl);
		key[pl] = 0;
	}
	if (!strncmp(path, "data/", 5)) {
		/* a killed writer's data/.tmp* or data/<key>/.tmp* (two levels at most) */
		const char *slash = strchr(path + 5, '/');
		t = !strncmp(base, ".tmp", 4) && (!slash || !strchr(slash + 1, '/'));
		if (t || lv__ends_with(path, ".lance") || sidecar_key(path, key, cap))
			kind = LV_KIND_DATA;
	} else if (!strncmp(path, "_deletions/", 11)) {
		if (lv__ends_with(path, ".arrow") || lv__ends_with(path, ".bin"))
			kind = LV_KIND_DELETION;
	} else if (!strncmp(path, "_transactions/", 14)) {
		if (lv__ends_with(path, ".txn"))
			kind = LV_KIND_TRANSACTION;
	} else if (!strncmp(path, "_indices/", 9)) {
		const char *u = path + 9, *slash = strchr(u, '/');
		if (slash && slash != u) {
			snprintf(key, cap, "_indices/%.*s", (int)(slash - u), u);
			kind = LV_KIND_INDEX;
		}
	} else if (!strncmp(path, "_versions/", 10)) {
		const char *b = path + 10;
		/* a rename-commit's temporary manifest ".tmp*"; never a staged manifest
		 * "<v>.manifest-<uuid>": a commit store may still publish it (Lance 14 keeps it too,
		 * checked with pylance 14.0.2; an 8-day-old one stayed) */
		if (!strchr(b, '/') && !strncmp(b, ".tmp", 4))
			kind = LV_KIND_TEMP, t = true;
	}
	if (tmp)
		*tmp = t;
	return kind;
}
