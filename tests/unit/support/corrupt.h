/*
 * Corruption cases for sweeps over real files: every byte XOR 0xFF, a seeded
 * sample of single-bit flips, and truncations.  Shared by the parser-level
 * sweeps (test_manifest.c) and the public-API sweeps (test_corruption.c).
 */
#ifndef LV_CORRUPT_H
#define LV_CORRUPT_H

#include <stddef.h>
#include <stdint.h>

enum { CM_XOR = 0, CM_BIT = 1, CM_TRUNC = 2 };

typedef struct cm_case {
	int kind;   /* CM_* */
	size_t pos; /* byte flipped, or the truncated length */
	int bit;    /* CM_BIT: 0..7 */
} cm_case;

/*
 * The cases for a file of `size` bytes: every `stride`-th byte XOR 0xFF; `nbits` distinct
 * single-bit flips drawn with a fixed seed (all 8*size of them when nbits >=
 * 8*size); every truncation length 0..size-1 that is a multiple of
 * `stride` (1 = all).  Returns the count; *out is malloc'ed.
 */
size_t cm_cases(size_t size, uint64_t seed, size_t nbits, size_t stride, cm_case **out);
/* Writes the corrupted file into dst (capacity >= size); returns its length. */
size_t cm_apply(const uint8_t *orig, size_t size, const cm_case *c, uint8_t *dst);
/* "xor@12", "bit@12.3", "trunc@12" */
const char *cm_name(const cm_case *c, char *buf, size_t cap);
/* The environment variable LV_CORRUPTION_DENSE=1 asks for every bit flip. */
int cm_dense(void);
/* LV_CORRUPTION_QUICK=1 (tests/valgrind.sh) asks for every 7th byte and 64 bit flips. */
int cm_quick(void);

#endif
