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
/* SSE4.2 has a CRC-32C instruction: about 8 bytes per cycle. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = ~crc;
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
