/*
 * Clocks and the thread pool (lv__parallel_for).
 *
 * Invariants: lv__parallel_for runs fn(i) exactly once for every i < n, on at most
 * `threads` threads (the caller's among them, at most 256), and returns when all have
 * run; with threads <= 1 it runs them in order on the calling thread.
 */
#include "util/util.h"

#include <pthread.h>
#include <time.h>

int64_t lv__now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t lv__mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- thread pool ---- */

typedef struct pf_state {
	size_t n;
	size_t next;
	pthread_mutex_t mu;
	lv__parallel_fn fn;
	void *arg;
} pf_state;

static void *pf_worker(void *p)
{
	pf_state *s = p;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		size_t i = s->next < s->n ? s->next++ : s->n;
		pthread_mutex_unlock(&s->mu);
		if (i >= s->n)
			break;
		s->fn(i, s->arg);
	}
	return NULL;
}

int lv__parallel_for(size_t n, int threads, lv__parallel_fn fn, void *arg)
{
	if (threads <= 1 || n <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(i, arg);
		return 0;
	}
	if ((size_t)threads > n)
		threads = (int)n;
	if (threads > 256)
		threads = 256;
	pf_state s = { .n = n, .next = 0, .fn = fn, .arg = arg };
	pthread_mutex_init(&s.mu, NULL);
	pthread_t tids[256];
	int started = 0;
	for (int t = 0; t < threads - 1; t++) {
		if (pthread_create(&tids[t], NULL, pf_worker, &s) != 0)
			break;
		started++;
	}
	pf_worker(&s); /* the caller works too */
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	pthread_mutex_destroy(&s.mu);
	return 0;
}
