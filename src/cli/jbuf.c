/*
 * The JSON buffer's out-of-line half (jbuf.h): flushing, strings, numbers.
 *
 * Invariants: lvcli_json_plain is exact (a string it calls plain holds no byte below 0x20,
 * at or above 0x80, '"' or '\\'; one it calls not plain holds one), so a plain string is
 * copied as-is and every other string goes to lvcli_json_strn (escape.c) after a flush;
 * the string's bytes are read within [s, s + n) only.  A piece of DIRECT_MIN bytes or more is
 * written to f's descriptor only after f's own buffer is flushed (the order holds); a write
 * that fails goes back through stdio, so f's error flag is set and its errno noted.
 */
#include "jbuf.h"

#include <errno.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cli.h"

/* A piece this large goes to f's descriptor itself, after f's buffer: stdio would copy its
 * first block into the buffer and make two write calls of it. */
#define DIRECT_MIN ((size_t)16 << 10)

/* n bytes of s to f (in order after what f holds); a write that fails is left to fwrite,
 * which fails the same way and sets f's error flag, and its errno is noted (output.c). */
static void put_out(FILE *f, const void *s, size_t n)
{
	const char *c = s;
	int fd = n >= DIRECT_MIN && fflush_unlocked(f) == 0 ? fileno_unlocked(f) : -1;
	while (fd >= 0 && n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		c += w;
		n -= (size_t)w;
	}
	errno = 0;
	if (n && fwrite_unlocked(c, 1, n, f) < n && errno)
		lvcli_note_write_error(f, errno);
}

void lvcli_jb_flush(lvcli_jbuf *j)
{
	if (j->p > j->b)
		put_out(j->f, j->b, (size_t)(j->p - j->b));
	j->p = j->b;
}

void lvcli_jb_write(lvcli_jbuf *j, const void *s, size_t n)
{
	if (n > lvcli_jb_free(j))
		lvcli_jb_flush(j);
	if (n > (size_t)(j->end - j->b)) {
		put_out(j->f, s, n);
		return;
	}
	memcpy(j->p, s, n);
	j->p += n;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGH UINT64_C(0x8080808080808080)

/*
 * Are all 8 bytes of w plain?  A byte is flagged when it is below 0x20 (x - 0x20 sets its high
 * bit), has its high bit set (x itself), or equals '"' or '\\' (the zero-byte test on x ^ c).
 * A borrow between bytes only ever starts at a byte that is itself flagged, so the answer for
 * the word is exact.
 */
static inline bool plain8(uint64_t w)
{
	uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
	return !(((w - ONES * 0x20) | w | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGH);
}

static inline bool plain1(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

bool lvcli_json_plain(const char *s, size_t n)
{
	uint64_t w;
	if (n < 8) {
		for (size_t i = 0; i < n; i++)
			if (!plain1((unsigned char)s[i]))
				return false;
		return true;
	}
	for (size_t i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if (!plain8(w))
			return false;
	}
	memcpy(&w, s + n - 8, 8); /* the last 8 bytes (overlapping the last whole word) */
	return plain8(w);
}

#ifdef __SSE2__
/* Are all 16 bytes at s plain?  (A signed compare with 0x20 catches 0x00-0x1f and, as
 * negative, 0x80-0xff.) */
static inline bool plain16(__m128i x)
{
	__m128i bad = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
				   _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
						_mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
	return _mm_movemask_epi8(bad) == 0;
}
#endif

/* Copies plain s[0..n) to o, checking as it goes (16 or 8 bytes at a time, the last piece
 * overlapping the one before; o has room for n bytes); false, with o's contents undefined,
 * when s is not plain. */
static bool copy_plain(char *o, const char *s, size_t n)
{
	uint64_t w;
	if (n < 8) {
		for (size_t i = 0; i < n; i++)
			if (!plain1((unsigned char)(o[i] = s[i])))
				return false;
		return true;
	}
#ifdef __SSE2__
	if (n >= 16) {
		__m128i x;
		for (size_t i = 0; i + 16 <= n; i += 16) {
			x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
			if (!plain16(x))
				return false;
			_mm_storeu_si128((__m128i *)(void *)(o + i), x);
		}
		x = _mm_loadu_si128((const __m128i *)(const void *)(s + n - 16));
		_mm_storeu_si128((__m128i *)(void *)(o + n - 16), x);
		return plain16(x);
	}
#endif
	for (size_t i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if (!plain8(w))
			return false;
		memcpy(o + i, &w, 8);
	}
	memcpy(&w, s + n - 8, 8);
	memcpy(o + n - 8, &w, 8);
	return plain8(w);
}

void lvcli_jb_str(lvcli_jbuf *j, const char *s)
{
	if (!s) {
		LVCLI_JB_LIT(j, "null");
		return;
	}
	size_t n = strlen(s);
	if (n + 10 <= (size_t)(j->end - j->b)) {
		if (n + 10 > lvcli_jb_free(j))
			lvcli_jb_flush(j);
		if (copy_plain(j->p + 1, s, n)) { /* j->p advances only over a whole plain string */
			j->p[0] = '"';
			j->p[n + 1] = '"';
			j->p += n + 2;
			return;
		}
	}
	lvcli_jb_flush(j);
	lvcli_json_strn(j->f, s, n);
}

static const char D2[200] = "0001020304050607080910111213141516171819"
			    "2021222324252627282930313233343536373839"
			    "4041424344454647484950515253545556575859"
			    "6061626364656667686970717273747576777879"
			    "8081828384858687888990919293949596979899";

char *lvcli_jb_digits(char *end, uint64_t v)
{
	while (v >= 100) {
		size_t k = (size_t)(v % 100) * 2;
		v /= 100;
		end -= 2;
		memcpy(end, D2 + k, 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, D2 + v * 2, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

/* 10^k for k = 0..19 */
static const uint64_t P10[20] = {
	UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
	UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
	UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
	UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
	UINT64_C(10000000000000000), UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000),
};

char *lvcli_jb_dec(char *o, uint64_t v)
{
	if (v < 10) {
		*o = (char)('0' + v);
		return o + 1;
	}
	/* the digits from the bit length: 1233 / 4096 is just above log10(2) */
	size_t t = ((size_t)(64 - __builtin_clzll(v)) * 1233) >> 12; /* 1..19 */
	size_t n = t + (v >= P10[t]);
	lvcli_jb_digits(o + n, v); /* written in place, from the last digit back */
	return o + n;
}

void lvcli_jb_u64_slow(lvcli_jbuf *j, uint64_t v)
{
	if (lvcli_jb_free(j) < 20)
		lvcli_jb_flush(j);
	j->p = lvcli_jb_dec(j->p, v);
}

char *lvcli_jb_idec(char *o, int64_t v)
{
	if (v >= 0)
		return lvcli_jb_dec(o, (uint64_t)v);
	*o++ = '-';
	return lvcli_jb_dec(o, (uint64_t)0 - (uint64_t)v); /* INT64_MIN too */
}

void lvcli_jb_i64(lvcli_jbuf *j, int64_t v)
{
	if (lvcli_jb_free(j) < 21)
		lvcli_jb_flush(j);
	j->p = lvcli_jb_idec(j->p, v);
}
