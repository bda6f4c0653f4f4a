#include "support/corrupt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a fixed, portable sequence for the seeded sample. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

size_t cm_cases(size_t size, uint64_t seed, size_t nbits, size_t stride, cm_case **out)
{
	size_t bits = size * 8;
	if (nbits > bits)
		nbits = bits;
	if (stride == 0)
		stride = 1;
	size_t cap = 2 * (size / stride + 1) + nbits;
	cm_case *v = calloc(cap ? cap : 1, sizeof *v);
	if (!v) {
		*out = NULL;
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < size; i += stride)
		v[n++] = (cm_case){ CM_XOR, i, 0 };
	if (nbits == bits) {
		for (size_t b = 0; b < bits; b++)
			v[n++] = (cm_case){ CM_BIT, b / 8, (int)(b % 8) };
	} else if (nbits) {
		/* distinct bits: a partial Fisher-Yates over the bit indices */
		size_t *idx = malloc(bits * sizeof *idx);
		if (!idx) {
			free(v);
			*out = NULL;
			return 0;
		}
		for (size_t b = 0; b < bits; b++)
			idx[b] = b;
		uint64_t s = seed;
		for (size_t k = 0; k < nbits; k++) {
			size_t j = k + (size_t)(next(&s) % (bits - k));
			size_t t = idx[k];
			idx[k] = idx[j];
			idx[j] = t;
			v[n++] = (cm_case){ CM_BIT, idx[k] / 8, (int)(idx[k] % 8) };
		}
		free(idx);
	}
	for (size_t len = 0; len < size; len += stride)
		v[n++] = (cm_case){ CM_TRUNC, len, 0 };
	*out = v;
	return n;
}

size_t cm_apply(const uint8_t *orig, size_t size, const cm_case *c, uint8_t *dst)
{
	memcpy(dst, orig, size);
	switch (c->kind) {
	case CM_XOR:
		dst[c->pos] ^= 0xff;
		return size;
	case CM_BIT:
		dst[c->pos] ^= (uint8_t)(1u << c->bit);
		return size;
	default:
		return c->pos;
	}
}

const char *cm_name(const cm_case *c, char *buf, size_t cap)
{
	if (c->kind == CM_XOR)
		snprintf(buf, cap, "xor@%zu", c->pos);
	else if (c->kind == CM_BIT)
		snprintf(buf, cap, "bit@%zu.%d", c->pos, c->bit);
	else
		snprintf(buf, cap, "trunc@%zu", c->pos);
	return buf;
}

int cm_dense(void)
{
	const char *e = getenv("LV_CORRUPTION_DENSE");
	return e && e[0] && strcmp(e, "0") != 0;
}

int cm_quick(void)
{
	const char *e = getenv("LV_CORRUPTION_QUICK");
	return e && e[0] && strcmp(e, "0") != 0;
}
