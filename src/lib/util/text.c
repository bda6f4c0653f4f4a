/*
 * Text: UTF-8 decoding and validation, JSON string escaping, decimal u64 parsing.
 *
 * Invariants: nothing here allocates except through an lv__dbuf; invalid UTF-8 is
 * reported, never replaced.
 */
#include "util/util.h"

#include <string.h>

size_t lv__utf8_decode(const void *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = s;
	unsigned c = p[0];
	size_t len;
	uint32_t min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) { len = 2; min = 0x80; }
	else if (c >= 0xE0 && c <= 0xEF) { len = 3; min = 0x800; }
	else if (c >= 0xF0 && c <= 0xF4) { len = 4; min = 0x10000; }
	else return 0;
	if (n < len)
		return 0;
	uint32_t v = c & (0x7Fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp;
	return lv__utf8_decode(s, n, &cp);
}

bool lv__utf8_valid(const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t i = 0;
	while (i < n) {
		/* ASCII runs, 8 bytes at a time: paths and names are nearly always ASCII */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		size_t l = utf8_seq(p + i, n - i);
		if (l == 0)
			return false;
		i += l;
	}
	return true;
}

int lv__json_escape(lv__dbuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	LV_TRY(lv__dbuf_addc(b, '"'));
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			LV_TRY(lv__dbuf_addc(b, '\\'));
			LV_TRY(lv__dbuf_addc(b, c));
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n': LV_TRY(lv__dbuf_adds(b, "\\n")); break;
			case '\r': LV_TRY(lv__dbuf_adds(b, "\\r")); break;
			case '\t': LV_TRY(lv__dbuf_adds(b, "\\t")); break;
			case '\b': LV_TRY(lv__dbuf_adds(b, "\\b")); break;
			case '\f': LV_TRY(lv__dbuf_adds(b, "\\f")); break;
			default: LV_TRY(lv__dbuf_printf(b, "\\u%04x", c)); break;
			}
			i++;
		} else if (c < 0x80) {
			LV_TRY(lv__dbuf_addc(b, c));
			i++;
		} else {
			size_t l = utf8_seq(p + i, n - i);
			if (l == 0) {
				LV_TRY(lv__dbuf_adds(b, "\\ufffd"));
				i++;
			} else {
				LV_TRY(lv__dbuf_add(b, p + i, l));
				i += l;
			}
		}
	}
	return lv__dbuf_addc(b, '"');
}

/* Are s[0..8) all decimal digits?  Then *out is their value (8 at a time: a manifest name
 * has 20, and versions() parses 10,000 of them).  A byte fails the first test unless its high
 * nibble is 3, and the second unless it is at most '9'; a valid byte never carries into the
 * next, and one that does (0xFA and up) fails the first. */
__attribute__((always_inline)) static inline bool digits8(const char *s, uint64_t *out)
{
	const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), zeros = UINT64_C(0x3030303030303030);
	uint64_t w;
	memcpy(&w, s, 8);
	w = lv__le64((const uint8_t *)&w); /* s[0], the first digit, in the low byte */
	if ((w & hi) != zeros || ((w + UINT64_C(0x0606060606060606)) & hi) != zeros)
		return false;
	uint64_t v = w - zeros;
	v = v * 10 + (v >> 8); /* pairs of digits */
	v = (((v & UINT64_C(0x000000FF000000FF)) * (100 + (UINT64_C(1000000) << 32))) +
	     (((v >> 16) & UINT64_C(0x000000FF000000FF)) * (1 + (UINT64_C(10000) << 32)))) >> 32;
	*out = v;
	return true;
}

/* Four ASCII digits at s (s[0] most significant); false if any is not a digit. */
__attribute__((always_inline)) static inline bool digits4(const char *s, uint64_t *out)
{
	const uint32_t hi = 0xF0F0F0F0u, zeros = 0x30303030u;
	uint32_t w = (uint32_t)(unsigned char)s[0] | (uint32_t)(unsigned char)s[1] << 8 |
		     (uint32_t)(unsigned char)s[2] << 16 | (uint32_t)(unsigned char)s[3] << 24;
	if ((w & hi) != zeros || ((w + 0x06060606u) & hi) != zeros)
		return false;
	w -= zeros;
	w = w * 10 + (w >> 8); /* pairs: bytes 0 and 2 */
	*out = (w & 0xFF) * 100 + ((w >> 16) & 0xFF);
	return true;
}

bool lv__parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (n == 20) { /* a version in a V2 manifest or checkpoint name: every listed entry */
		uint64_t a, b, c;
		if (!digits8(s, &a) || !digits8(s + 8, &b) || !digits4(s + 16, &c))
			return false;
		uint64_t v = a * 100000000 + b; /* < 10^16 */
		if (__builtin_mul_overflow(v, 10000, &v) || __builtin_add_overflow(v, c, &v))
			return false;
		*out = v;
		return true;
	}
	if (n == 0 || n > 20)
		return false;
	/* Up to 19 digits cannot overflow (10^19 - 1 < 2^64); only a 20th is checked. */
	size_t fast = n < 19 ? n : 19, i = 0;
	uint64_t v = 0, x;
	for (; i + 8 <= fast; i += 8) {
		if (!digits8(s + i, &x))
			return false;
		v = v * 100000000 + x;
	}
	for (; i < fast; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return false;
		v = v * 10 + d;
	}
	if (n == 20) {
		unsigned d = (unsigned)(unsigned char)s[19] - '0';
		if (d > 9 || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)d, &v))
			return false;
	}
	*out = v;
	return true;
}
