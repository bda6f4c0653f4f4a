/*
 * Bounded reads (see fetch.h).
 *
 * Invariants:
 *  - No buffer larger than LV__FETCH_SMALL is allocated for a file before its
 *    size is known to be within the caller's limit and, for footered files,
 *    its last 16 bytes are a LANC footer.
 *  - Every byte read comes through the storage layer (which reads regular
 *    files only).
 */
#include "core/fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/stamped.h"
#include "util/util.h"

void lv__budget_init(lv__budget *b, uint64_t cap)
{
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->cap = cap;
	b->used = 0;
}

void lv__budget_dispose(lv__budget *b)
{
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}

void lv__budget_acquire(lv__budget *b, uint64_t n)
{
	pthread_mutex_lock(&b->mu);
	while (b->used > 0 && b->used + n > b->cap)
		pthread_cond_wait(&b->cv, &b->mu);
	b->used += n;
	pthread_mutex_unlock(&b->mu);
}

void lv__budget_release(lv__budget *b, uint64_t n)
{
	if (!b || !n)
		return;
	pthread_mutex_lock(&b->mu);
	b->used -= n;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* Size and footer of a file known to be larger than the first read. */
static int check_large(lv_storage *st, const char *path, uint64_t max, uint64_t *size,
		       int64_t *mtime_ms, lv_error *err)
{
	LV_TRY(lv_storage_head(st, path, size, mtime_ms, err));
	if (*size > max)
		return lv__err(err, LV_ELIMIT, "%s: %llu bytes, more than the %llu bytes accepted", path,
			       (unsigned long long)*size, (unsigned long long)max);
	/*
	 * Two footers end in "LANC": a manifest's 16 bytes ([u64 position][u16][u16]"LANC") and a
	 * Lance data file's 40 bytes ([u64 column_meta_start][u64][u64][u32][u32][u16][u16]"LANC",
	 * what checkpoints are).  Either one must point inside the file.
	 */
	lv_buf tail = { 0 };
	LV_TRY(lv_storage_read_range(st, path, *size - 40, 40, &tail, err));
	bool ok = tail.size == 40 && !memcmp(tail.ptr + 36, "LANC", 4) &&
		  (lv__le64(tail.ptr + 24) < *size - 16 || lv__le64(tail.ptr) < *size - 40);
	lv_buf_dispose(&tail);
	if (!ok)
		return lv__err(err, LV_ECORRUPT, "%s: no Lance footer at its end (%llu bytes); not read",
			       path, (unsigned long long)*size);
	return 0;
}

/* lv__fetch_footered; with `fsize` set, the file's stamp as the first read saw it, kept for a
 * larger file only if the head before the rest saw the same size and time and every byte came
 * (else *mtime_ms 0: not known; a file replaced meanwhile by other bytes fails its checksum). */
static int fetch(lv_storage *st, const char *path, uint64_t max, lv__budget *budget, lv_buf *out,
		 uint64_t *held, uint64_t *fsize, int64_t *mtime_ms, lv_error *err)
{
	*held = 0;
	lv_buf first = { 0 };
	if (fsize)
		LV_TRY(lv__storage_read_range_stamped(st, path, 0, LV__FETCH_SMALL, &first, fsize,
						      mtime_ms, err));
	else
		LV_TRY(lv_storage_read_range(st, path, 0, LV__FETCH_SMALL, &first, err));
	if (first.size < LV__FETCH_SMALL) {
		*out = first;
		return 0;
	}
	uint64_t size;
	int64_t mt = 0;
	int rc = check_large(st, path, max, &size, &mt, err);
	if (fsize && (rc < 0 || size != *fsize || mt != *mtime_ms))
		*mtime_ms = 0; /* another file than the first read's: no stamp */
	if (rc < 0) {
		lv_buf_dispose(&first);
		return rc;
	}
	if (budget)
		lv__budget_acquire(budget, size);
	*held = budget ? size : 0;
	lv_buf rest = { 0 };
	uint8_t *all = NULL;
	if ((rc = lv_storage_read_range(st, path, first.size, size - first.size, &rest, err)) == 0 &&
	    !(all = lv__malloc((size_t)(first.size + rest.size) + 1)))
		rc = lv__err(err, LV_ENOMEM, "%s: out of memory (%llu bytes)", path,
			     (unsigned long long)size);
	if (rc == 0) {
		memcpy(all, first.ptr, first.size);
		memcpy(all + first.size, rest.ptr, rest.size);
		all[first.size + rest.size] = 0;
		out->ptr = all;
		out->size = first.size + rest.size;
		if (fsize && out->size != *fsize)
			*mtime_ms = 0; /* short: not the whole of the file stamped */
	}
	lv_buf_dispose(&first);
	lv_buf_dispose(&rest);
	if (rc < 0) {
		lv__budget_release(budget, *held);
		*held = 0;
	}
	return rc;
}

int lv__fetch_footered(lv_storage *st, const char *path, uint64_t max, lv__budget *budget,
		       lv_buf *out, uint64_t *held, lv_error *err)
{
	return fetch(st, path, max, budget, out, held, NULL, NULL, err);
}

int lv__fetch_footered_stamped(lv_storage *st, const char *path, uint64_t max, lv_buf *out,
			       uint64_t *size, int64_t *mtime_ms, lv_error *err)
{
	uint64_t held; /* the stamped read sets *size and *mtime_ms first, on failure too */
	return fetch(st, path, max, NULL, out, &held, size, mtime_ms, err);
}

int lv__fetch_capped(lv_storage *st, const char *path, uint64_t max, lv_buf *out, lv_error *err)
{
	LV_TRY(lv_storage_read_range(st, path, 0, max + 1, out, err));
	if (out->size > max) {
		lv_buf_dispose(out);
		return lv__err(err, LV_ELIMIT, "%s: more than the %llu bytes accepted", path,
			       (unsigned long long)max);
	}
	return 0;
}
