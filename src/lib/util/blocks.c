/*
 * The large-block cache behind lv__malloc/lv__calloc/lv__realloc/lv__free (alloc.c):
 * a few freed blocks of LV__BLOCK_MIN bytes or more are kept for the next large request,
 * so a call that is repeated (versions() on a fresh handle, a checkpoint read, an Arrow
 * export) reuses pages that are already mapped and faulted in instead of asking the
 * kernel for new ones and returning them at free (issue 30: glibc serves such blocks with
 * mmap and unmaps them on free, and a page fault costs microseconds on some VMs).  The
 * library changes no process-wide setting (no mallopt, no environment).
 *
 * Invariants:
 *  - A cached block is a live malloc() block nobody else holds; it is handed out at most
 *    once, whole, and only for a request of at least an eighth of its usable size (no
 *    large block is pinned by a small request).
 *  - At most LV__BLOCK_SLOTS blocks and LV__BLOCK_BYTES bytes are held; a block larger than
 *    LV__BLOCK_MAX is never held.  When a new block does not fit, the least recently
 *    cached ones are freed first.
 *  - One mutex guards the table; fork() is safe (pthread_atfork: the child's lock is free).
 *  - Under AddressSanitizer the cache is off (it would hide a use after free).
 */
#include "util/util.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define LV__BLOCKS_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LV__BLOCKS_ON 0
#endif
#endif
#ifndef LV__BLOCKS_ON
#define LV__BLOCKS_ON 1
#endif

#define LV__BLOCK_SLOTS 16
#define LV__BLOCK_BYTES ((size_t)16 << 20)
#define LV__BLOCK_MAX ((size_t)8 << 20)

typedef struct {
	void *p;
	size_t size; /* malloc_usable_size(p) */
} block;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static block slots[LV__BLOCK_SLOTS]; /* oldest first */
static size_t nslots, held;

static void lock(void) { pthread_mutex_lock(&mu); }
static void unlock(void) { pthread_mutex_unlock(&mu); }
static void setup(void) { pthread_atfork(lock, unlock, unlock); }

static void drop(size_t i)
{
	held -= slots[i].size;
	for (size_t k = i + 1; k < nslots; k++)
		slots[k - 1] = slots[k];
	nslots--;
}

void *lv__blocks_take(size_t n)
{
	if (!LV__BLOCKS_ON || n < LV__BLOCK_MIN)
		return NULL;
	pthread_once(&once, setup);
	lock();
	size_t best = nslots;
	for (size_t i = 0; i < nslots; i++)
		if (slots[i].size >= n && slots[i].size / 8 <= n &&
		    (best == nslots || slots[i].size < slots[best].size))
			best = i;
	void *p = NULL;
	if (best < nslots) {
		p = slots[best].p;
		drop(best);
	}
	unlock();
	return p;
}

bool lv__blocks_give(void *p)
{
	if (!LV__BLOCKS_ON || !p)
		return false;
	size_t size = malloc_usable_size(p);
	if (size < LV__BLOCK_MIN || size > LV__BLOCK_MAX)
		return false;
	pthread_once(&once, setup);
	void *evicted[LV__BLOCK_SLOTS];
	size_t nev = 0;
	lock();
	while (nslots && (nslots == LV__BLOCK_SLOTS || held + size > LV__BLOCK_BYTES)) {
		evicted[nev++] = slots[0].p;
		drop(0);
	}
	slots[nslots++] = (block){p, size};
	held += size;
	unlock();
	for (size_t i = 0; i < nev; i++)
		free(evicted[i]);
	return true;
}

size_t lv__blocks_usable(const void *p) { return p ? malloc_usable_size((void *)p) : 0; }

size_t lv__blocks_held(size_t *nblocks)
{
	pthread_once(&once, setup);
	lock();
	size_t bytes = held;
	if (nblocks)
		*nblocks = nslots;
	unlock();
	return bytes;
}

void lv__blocks_release(void)
{
	if (!LV__BLOCKS_ON)
		return;
	pthread_once(&once, setup);
	lock();
	while (nslots) {
		free(slots[nslots - 1].p);
		held -= slots[nslots - 1].size;
		nslots--;
	}
	unlock();
}
