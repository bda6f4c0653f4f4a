/*
 * Bounded reads of the files lancever parses (manifests, checkpoints,
 * transaction files): a length is checked before anything large is
 * allocated, and files are read footer-first.
 */
#ifndef LV_CORE_FETCH_H
#define LV_CORE_FETCH_H

#include <pthread.h>

#include "lancever/storage.h"

/* Files up to this size are read in one request (the first read tells their size). */
#define LV__FETCH_SMALL ((uint64_t)4 << 20)
/* A manifest or checkpoint larger than this is refused (Lance's largest seen: ~10 MB). */
#define LV__FETCH_MAX ((uint64_t)1 << 30)
/* Bytes of large files held at once by one concurrent read (lv__budget). */
#define LV__FETCH_INFLIGHT ((uint64_t)256 << 20)

/*
 * A cap on bytes in flight shared by concurrent readers: a reader waits
 * while others hold bytes and its own would exceed the cap (one reader alone
 * always proceeds, so a single file up to LV__FETCH_MAX is never refused).
 */
typedef struct lv__budget {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t cap, used;
} lv__budget;

void lv__budget_init(lv__budget *b, uint64_t cap);
void lv__budget_dispose(lv__budget *b);
void lv__budget_acquire(lv__budget *b, uint64_t n);
void lv__budget_release(lv__budget *b, uint64_t n);

/*
 * Reads a file that ends with Lance's "LANC" footer.  Up to LV__FETCH_SMALL:
 * one read.  Larger: its size first (refused beyond `max`), then its last 16
 * bytes (refused unless they are a LANC footer whose position lies inside the
 * file), then the rest, holding `size` bytes of `budget` (may be NULL) until
 * lv__budget_release(budget, *held).
 */
int lv__fetch_footered(lv_storage *st, const char *path, uint64_t max, lv__budget *budget,
		       lv_buf *out, uint64_t *held, lv_error *err);
/* The same, without a budget, and the file's size and modification time as the read saw them
 * (storage/stamped.h) from a store that stamps reads (a larger file: only if the head taken
 * before the rest sees the same and every byte came); else *mtime_ms is 0 (not known). */
int lv__fetch_footered_stamped(lv_storage *st, const char *path, uint64_t max, lv_buf *out,
			       uint64_t *size, int64_t *mtime_ms, lv_error *err);

/* Reads a whole file of at most `max` bytes (more: LV_ELIMIT naming it, nothing kept). */
int lv__fetch_capped(lv_storage *st, const char *path, uint64_t max, lv_buf *out, lv_error *err);

#endif
