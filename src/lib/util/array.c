/*
 * Arrays: growing one by doubling (lv__grow) and the one binary search over
 * u64 keys (lv__lower_bound_u64).
 *
 * Invariants: lv__grow leaves the array and *cap unchanged when it fails.
 */
#include "util/util.h"

#include <string.h>

void *lv__grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : first;
	if (nc <= n)
		nc = n + 1;
	void *nv = lv__reallocarray(arr, nc, elem);
	if (nv)
		*cap = nc;
	return nv;
}

size_t lv__lower_bound_u64(const void *base, size_t n, size_t size, size_t off, uint64_t key)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, b + mid * size + off, sizeof k);
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
