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
 *  - Besides the slots, one "big" block of more than LV__BLOCK_MAX and at most LV__BIG_MAX
 *    bytes is kept (a Lance file's whole output or input buffer, ~20 MB at 100,000 rows):
 *    a newer big block replaces it, it is handed out only for a request over
 *    LV__BLOCK_MAX and of at least a quarter of its size, and while it is held its whole
 *    pages are madvise(MADV_FREE)d, so the kernel may take them back under memory
 *    pressure (then they read as zeros: nothing is read from a free block) and, if it
 *    does not, the next user writes them without a fault.
 *  - One mutex guards the table; fork() is safe (pthread_atfork: the child's lock is free).
 *  - Under AddressSanitizer the cache is off (it would hide a use after free).
 *
 * Why 32 KiB and 64 slots: glibc also gives back the free top of its heaps above 128 KiB
 * (trim), so a call whose many medium blocks (checkpoint columns, arena chunks, manifests
 * read by worker threads, whose arenas shrink too) add up to more than that faults them in
 * again on the next call; keeping them here leaves the heap top in use.
 *
 * Why 32 MiB in all (16 before): the decoded columns of a 100,000-row Lance file (the
 * checkpoint schema: ten 800 KB value arrays, three offset arrays, ~9-11 MB of strings, one
 * block each, ~22 MB) are freed together by lv_lancefile_free; under 16 MiB a third of them
 * were dropped and the next read faulted them in again (~2,000 faults a read).  Calls whose
 * blocks add up to less hold no more than before (versions() from a checkpoint at 10,000
 * versions: the same 8.5 MB peak RSS and faults at 16, 24 and 32 MiB).
 */
#include "util/util.h"

#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
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

#define LV__BLOCK_SLOTS 64
#define LV__BLOCK_BYTES ((size_t)32 << 20)
#define LV__BLOCK_MAX ((size_t)8 << 20)
#define LV__BIG_MAX ((size_t)64 << 20)

typedef struct {
	void *p;
	size_t size; /* malloc_usable_size(p) */
} block;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static block slots[LV__BLOCK_SLOTS]; /* oldest first */
static size_t nslots, held;
static block big; /* the one big block, or {NULL, 0} */

/* Lets the kernel reclaim the whole pages of a held block (never its first partial page,
 * where malloc keeps its header, nor past its usable end). */
static void lazy_free(void *p, size_t size)
{
#ifdef MADV_FREE
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)p + pg - 1) & ~(pg - 1),
		  b = ((uintptr_t)p + size) & ~(pg - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_FREE);
#else
	(void)p, (void)size;
#endif
}

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
	if (n > LV__BLOCK_MAX && big.p && big.size >= n && big.size / 4 <= n) {
		void *p = big.p;
		big = (block){ NULL, 0 };
		unlock();
		return p;
	}
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
	if (size < LV__BLOCK_MIN || size > LV__BIG_MAX)
		return false;
	pthread_once(&once, setup);
	if (size > LV__BLOCK_MAX) {
		lazy_free(p, size);
		lock();
		void *old = big.p;
		big = (block){ p, size };
		unlock();
		free(old);
		return true;
	}
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
	size_t bytes = held + big.size;
	if (nblocks)
		*nblocks = nslots + (big.p != NULL);
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
	free(big.p);
	big = (block){ NULL, 0 };
	unlock();
}
