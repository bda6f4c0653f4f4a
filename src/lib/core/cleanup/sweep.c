/*
 * Deleting: the rule each listed file falls under, and batched deletes
 * (one DeleteObjects request per 1000 on S3).  Stats count only what this
 * process deleted.
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
	int rc = d->p->dry_run ? 0 : lv_storage_delete_many(d->ds->st, d->path, d->n, d->rcs, err);
	for (size_t i = 0; i < d->n; i++) {
		/* Only what this process removed counts: LV_ENOTFOUND is a concurrent cleanup's. */
		if (d->p->dry_run || d->rcs[i] == 0) {
			d->s->files_removed[d->kind[i]]++;
			d->s->bytes_removed[d->kind[i]] += d->size[i];
			d->manifests_deleted += d->kind[i] == LV_KIND_MANIFEST;
			/* reported once gone, so a listing names only what this process removed */
			if (d->p->on_file)
				d->p->on_file(d->path[i], d->kind[i], d->size[i], d->reason[i], d->p->payload);
			if (d->p->on_candidate) {
				lv_cleanup_candidate c = { d->path[i], d->kind[i], d->size[i], d->reason[i],
							   d->unverified[i], d->version[i] };
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
		free(d->held[i]);
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

int lv__classify(const char *path, char *key, size_t cap)
{
	snprintf(key, cap, "%s", path);
	if (!strncmp(path, "data/", 5))
		return lv__ends_with(path, ".lance") ? LV_KIND_DATA : -1;
	if (!strncmp(path, "_deletions/", 11))
		return lv__ends_with(path, ".arrow") || lv__ends_with(path, ".bin") ? LV_KIND_DELETION : -1;
	if (!strncmp(path, "_transactions/", 14))
		return lv__ends_with(path, ".txn") ? LV_KIND_TRANSACTION : -1;
	if (!strncmp(path, "_indices/", 9)) {
		const char *u = path + 9, *slash = strchr(u, '/');
		if (!slash || slash == u)
			return -1;
		snprintf(key, cap, "_indices/%.*s", (int)(slash - u), u);
		return LV_KIND_INDEX;
	}
	if (!strncmp(path, "_versions/", 10)) {
		const char *b = path + 10;
		/* rename-commit temp manifests: "<n>.manifest-<uuid>" or ".tmp*" */
		if (!strchr(b, '/') && (!strncmp(b, ".tmp", 4) || strstr(b, ".manifest-")))
			return LV_KIND_TEMP;
		return -1;
	}
	return -1;
}
