#include "core/crc32c.h"

#include <pthread.h>
#include <string.h>

static uint32_t table[8][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
/* SSE4.2 has a CRC-32C instruction: one 8-byte step per cycle, but each step waits ~3 cycles
 * for the one before it.  Long inputs are therefore hashed as three interleaved lanes of
 * LANE bytes each, and the lanes joined with `shift`: the register is linear in GF(2), so
 * crc(A || B) = shift_|B|(crc(A)) ^ crc_from_0(B), and shift by LANE zero bytes is a fixed
 * linear map, tabulated per byte of the register (lane_shift, built once). */
#define LANE 256u

static uint32_t lane_shift[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static void init_shift(void)
{
	uint32_t z[32]; /* register bit j advanced over LANE zero bytes */
	for (int j = 0; j < 32; j++) {
		uint32_t v = 1u << j;
		for (unsigned k = 0; k < LANE / 4; k++)
			v = _mm_crc32_u32(v, 0);
		z[j] = v;
	}
	for (int t = 0; t < 4; t++)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = 0;
			for (int b = 0; b < 8; b++)
				if (i >> b & 1)
					v ^= z[8 * t + b];
			lane_shift[t][i] = v;
		}
}

static uint32_t shift(uint32_t v)
{
	return lane_shift[0][v & 0xff] ^ lane_shift[1][(v >> 8) & 0xff] ^
	       lane_shift[2][(v >> 16) & 0xff] ^ lane_shift[3][v >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = ~crc;
	if (n >= 3 * LANE) {
		pthread_once(&shift_once, init_shift);
		do {
			uint64_t b = 0, d = 0, w;
			for (unsigned i = 0; i < LANE; i += 8) {
				memcpy(&w, p + i, 8);
				c = _mm_crc32_u64(c, w);
				memcpy(&w, p + LANE + i, 8);
				b = _mm_crc32_u64(b, w);
				memcpy(&w, p + 2 * LANE + i, 8);
				d = _mm_crc32_u64(d, w);
			}
			c = shift(shift((uint32_t)c) ^ (uint32_t)b) ^ (uint32_t)d;
			p += 3 * LANE;
			n -= 3 * LANE;
		} while (n >= 3 * LANE);
	}
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
		p += 8;
		n -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (n--)
		c32 = _mm_crc32_u8(c32, *p++);
	return ~c32;
}

static int have_hw = -1;
static void detect_hw(void) { have_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0; }
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;
#endif

uint32_t lv__crc32c(uint32_t crc, const void *data, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	pthread_once(&hw_once, detect_hw);
	if (have_hw)
		return crc_hw(crc, data, n);
#endif
	pthread_once(&once, init_table);
	const uint8_t *p = data;
	crc = ~crc;
	while (n >= 8) { /* slicing-by-8 */
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		      table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^
		      table[0][p[7]];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}
