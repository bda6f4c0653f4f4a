/*
 * A set of strings as 128-bit keyed digests (see strset.h): the files kept
 * manifests reference, and the files old manifests reference.
 *
 * Invariants: a digest is never {0, 0} (that marks an empty slot); the table
 * is at most half full.
 */
#include "core/cleanup/strset.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static uint64_t key[4];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void init_key(void)
{
	if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key) { /* never in practice */
		key[0] = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull;
		key[1] = (uint64_t)getpid() * 0xBF58476D1CE4E5B9ull;
		key[2] = key[0] ^ 0x94D049BB133111EBull;
		key[3] = key[1] ^ 0x2545F4914F6CDD1Dull;
	}
}

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                       \
	do {                                                                           \
		v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);              \
		v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                                 \
		v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                                 \
		v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);              \
	} while (0)

/* SipHash-2-4 of s[0..n) under (k0, k1). */
static uint64_t siphash(const uint8_t *s, size_t n, uint64_t k0, uint64_t k1)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	size_t full = n / 8 * 8;
	for (size_t i = 0; i < full; i += 8) {
		uint64_t m = lv__le64(s + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	uint64_t b = (uint64_t)n << 56;
	for (size_t i = full; i < n; i++)
		b |= (uint64_t)s[i] << (8 * (i - full));
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

lv__digest lv__strset_digest(const char *k, size_t n)
{
	pthread_once(&key_once, init_key);
	lv__digest g = { { siphash((const uint8_t *)k, n, key[0], key[1]),
			   siphash((const uint8_t *)k, n, key[2], key[3]) } };
	if (!g.d[0] && !g.d[1])
		g.d[1] = 1;
	return g;
}

/* The slot holding d, or the empty one where it would go. */
static size_t find(const lv__strset *s, const uint64_t d[2])
{
	size_t i = d[0] & (s->cap - 1);
	while ((s->slot[i][0] || s->slot[i][1]) && (s->slot[i][0] != d[0] || s->slot[i][1] != d[1]))
		i = (i + 1) & (s->cap - 1);
	return i;
}

bool lv__strset_has_digest(const lv__strset *s, lv__digest g)
{
	if (!s->cap)
		return false;
	size_t i = find(s, g.d);
	return s->slot[i][0] == g.d[0] && s->slot[i][1] == g.d[1];
}

bool lv__strset_has_n(const lv__strset *s, const char *k, size_t n)
{
	return s->cap && lv__strset_has_digest(s, lv__strset_digest(k, n));
}

bool lv__strset_has(const lv__strset *s, const char *k) { return lv__strset_has_n(s, k, strlen(k)); }

static int grow(lv__strset *s)
{
	size_t nc = s->cap ? s->cap * 2 : 64;
	lv__strset t = { lv__calloc(nc, sizeof *t.slot), nc, 0 };
	if (!t.slot)
		return LV_ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i][0] || s->slot[i][1]) {
			size_t j = find(&t, s->slot[i]);
			t.slot[j][0] = s->slot[i][0];
			t.slot[j][1] = s->slot[i][1];
			t.n++;
		}
	lv__free(s->slot);
	*s = t;
	return 0;
}

int lv__strset_add_digest(lv__strset *s, lv__digest g)
{
	if ((s->n + 1) * 2 > s->cap)
		LV_TRY(grow(s));
	size_t i = find(s, g.d);
	if (s->slot[i][0] == g.d[0] && s->slot[i][1] == g.d[1])
		return 0;
	s->slot[i][0] = g.d[0];
	s->slot[i][1] = g.d[1];
	s->n++;
	return 0;
}

int lv__strset_add(lv__strset *s, const char *k)
{
	return lv__strset_add_digest(s, lv__strset_digest(k, strlen(k)));
}

void lv__strset_dispose(lv__strset *s)
{
	lv__free(s->slot);
	memset(s, 0, sizeof *s);
}
