/*
 * Display width (the columns a terminal gives a string) and readable sizes.
 *
 * Width: wcwidth's rules from a small table of our own, so a table lines up the same under
 * every locale (LC_ALL=C included, where the C library's wcwidth knows no wide character):
 * East Asian Wide and Fullwidth code points (Unicode's EastAsianWidth W/F blocks: Hangul Jamo,
 * CJK, kana, Hangul syllables, fullwidth forms, the emoji planes) are 2 columns; combining
 * marks (the Mn/Me blocks below), zero-width spaces/joiners and variation selectors are 0;
 * everything else 1.  The input is terminal text from lvcli_esc (valid UTF-8 and \xNN escapes);
 * a byte that does not start a valid sequence counts as 1 column.
 *
 * Sizes: lvcli_size writes "68.4 MB" (powers of 1000, one decimal below 100, none above, as
 * `ls -h --si` does), or the exact byte count with --bytes.  JSON never goes through it.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

typedef struct { uint32_t lo, hi; } range;

/* Zero width: combining marks (the common blocks), ZWSP..RLM, word joiner, variation selectors. */
static const range ZERO[] = {
	{ 0x0300, 0x036F }, { 0x0483, 0x0489 }, { 0x0591, 0x05BD }, { 0x05BF, 0x05BF },
	{ 0x05C1, 0x05C2 }, { 0x05C4, 0x05C5 }, { 0x05C7, 0x05C7 }, { 0x0610, 0x061A },
	{ 0x064B, 0x065F }, { 0x0670, 0x0670 }, { 0x06D6, 0x06DC }, { 0x06DF, 0x06E4 },
	{ 0x06E7, 0x06E8 }, { 0x06EA, 0x06ED }, { 0x0711, 0x0711 }, { 0x0730, 0x074A },
	{ 0x07A6, 0x07B0 }, { 0x0900, 0x0902 }, { 0x093A, 0x093A }, { 0x093C, 0x093C },
	{ 0x0941, 0x0948 }, { 0x094D, 0x094D }, { 0x0951, 0x0957 }, { 0x0E31, 0x0E31 },
	{ 0x0E34, 0x0E3A }, { 0x0E47, 0x0E4E }, { 0x1AB0, 0x1AFF }, { 0x1DC0, 0x1DFF },
	{ 0x200B, 0x200F }, { 0x2060, 0x2064 }, { 0x20D0, 0x20FF }, { 0x302A, 0x302D },
	{ 0x3099, 0x309A }, { 0xFE00, 0xFE0F }, { 0xFE20, 0xFE2F }, { 0xFEFF, 0xFEFF },
	{ 0xE0100, 0xE01EF },
};

/* Two columns: East Asian Wide (W) and Fullwidth (F). */
static const range WIDE[] = {
	{ 0x1100, 0x115F }, { 0x231A, 0x231B }, { 0x2329, 0x232A }, { 0x23E9, 0x23EC },
	{ 0x23F0, 0x23F0 }, { 0x23F3, 0x23F3 }, { 0x25FD, 0x25FE }, { 0x2614, 0x2615 },
	{ 0x2648, 0x2653 }, { 0x267F, 0x267F }, { 0x2693, 0x2693 }, { 0x26A1, 0x26A1 },
	{ 0x26AA, 0x26AB }, { 0x26BD, 0x26BE }, { 0x26C4, 0x26C5 }, { 0x26CE, 0x26CE },
	{ 0x26D4, 0x26D4 }, { 0x26EA, 0x26EA }, { 0x26F2, 0x26F3 }, { 0x26F5, 0x26F5 },
	{ 0x26FA, 0x26FA }, { 0x26FD, 0x26FD }, { 0x2705, 0x2705 }, { 0x270A, 0x270B },
	{ 0x2728, 0x2728 }, { 0x274C, 0x274C }, { 0x274E, 0x274E }, { 0x2753, 0x2755 },
	{ 0x2757, 0x2757 }, { 0x2795, 0x2797 }, { 0x27B0, 0x27B0 }, { 0x27BF, 0x27BF },
	{ 0x2B1B, 0x2B1C }, { 0x2B50, 0x2B50 }, { 0x2B55, 0x2B55 }, { 0x2E80, 0x303E },
	{ 0x3041, 0x3247 }, { 0x3250, 0x4DBF }, { 0x4E00, 0xA4CF }, { 0xA960, 0xA97F },
	{ 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF }, { 0xFE10, 0xFE19 }, { 0xFE30, 0xFE6F },
	{ 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x16FE0, 0x16FE4 }, { 0x17000, 0x18CFF },
	{ 0x1B000, 0x1B2FF }, { 0x1F004, 0x1F004 }, { 0x1F0CF, 0x1F0CF }, { 0x1F18E, 0x1F18E },
	{ 0x1F191, 0x1F19A }, { 0x1F200, 0x1F251 }, { 0x1F260, 0x1F265 }, { 0x1F300, 0x1F64F },
	{ 0x1F680, 0x1F6FF }, { 0x1F7E0, 0x1F7EB }, { 0x1F90C, 0x1F9FF }, { 0x1FA70, 0x1FAFF },
	{ 0x20000, 0x2FFFD }, { 0x30000, 0x3FFFD },
};

static bool in(const range *t, size_t n, uint32_t c)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* binary search: the tables are sorted and disjoint */
		size_t mid = (lo + hi) / 2;
		if (c < t[mid].lo)
			hi = mid;
		else if (c > t[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

int lvcli_cp_width(uint32_t c)
{
	if (c < 0x20 || (c >= 0x7F && c < 0xA0))
		return 0; /* controls: lvcli_esc has escaped them already */
	if (c < 0x300)
		return 1;
	if (in(ZERO, sizeof ZERO / sizeof ZERO[0], c))
		return 0;
	return in(WIDE, sizeof WIDE / sizeof WIDE[0], c) ? 2 : 1;
}

/* One UTF-8 sequence at p (n bytes left): its code point and length, or length 0 if invalid. */
static size_t decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3
		   : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
	if (!len || len > n)
		return 0;
	uint32_t c = len == 1 ? p[0] : p[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3F);
	}
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

size_t lvcli_width(const char *s)
{
	size_t w = 0, n = s ? strlen(s) : 0;
	const unsigned char *p = (const unsigned char *)s;
	while (n) {
		uint32_t c = 0;
		size_t len = decode(p, n, &c);
		if (!len) { /* not UTF-8: one column, as a terminal shows a replacement */
			w++;
			p++;
			n--;
			continue;
		}
		w += (size_t)lvcli_cp_width(c);
		p += len;
		n -= len;
	}
	return w;
}

void lvcli_pad(FILE *f, const char *s, size_t width)
{
	fputs(s, f);
	for (size_t w = lvcli_width(s); w < width; w++)
		fputc(' ', f);
}

const char *lvcli_size(char *buf, size_t cap, uint64_t bytes)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };
	if (lvcli_ui.bytes || bytes < 1000) {
		snprintf(buf, cap, lvcli_ui.bytes ? "%" PRIu64 : "%" PRIu64 " B", bytes);
		return buf;
	}
	double v = (double)bytes;
	int u = 0;
	while (v >= 999.95 && u < 6) {
		v /= 1000;
		u++;
	}
	snprintf(buf, cap, v < 99.95 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

const char *lvcli_size_words(char *buf, size_t cap, uint64_t bytes)
{
	if (!lvcli_ui.bytes)
		return lvcli_size(buf, cap, bytes);
	snprintf(buf, cap, "%" PRIu64 " bytes", bytes);
	return buf;
}
