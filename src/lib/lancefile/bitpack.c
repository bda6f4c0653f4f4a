/*
 * FastLanes bit unpacking as Lance's 2.1+ encodings use it: inline bitpacking (a
 * width word before each 1024-value block) and out-of-line bitpacking (one width for
 * the buffer, a packed or raw tail).  Every block is checked against the bytes at
 * hand before it is unpacked; widths over the word size are corrupt.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

void lv__lf_fastlanes_unpack(unsigned t, unsigned w, const uint8_t *in, uint64_t *out)
{
	/* FastLanes' transposed order: value (row, lane) lives at index(row, lane). */
	static const unsigned order[8] = { 0, 4, 2, 6, 1, 5, 3, 7 };
	unsigned lanes = 1024 / t, tb = t / 8;
	if (w == 0) {
		memset(out, 0, 1024 * sizeof *out);
		return;
	}
	uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
	for (unsigned lane = 0; lane < lanes; lane++) {
		for (unsigned row = 0; row < t; row++) {
			unsigned bit = row * w, k = bit / t, sh = bit % t;
			uint64_t v = lv__lf_load_le(in + (size_t)(lanes * k + lane) * tb, tb) >> sh;
			if (sh + w > t)
				v |= lv__lf_load_le(in + (size_t)(lanes * (k + 1) + lane) * tb, tb) << (t - sh);
			out[order[row / 8] * 16 + (row % 8) * 128 + lane] = v & mask;
		}
	}
}

int lv__lf_inline_bitpack(lv__lf_dctx *c, unsigned t, const uint8_t *p, size_t n, size_t cnt,
		      uint64_t *out)
{
	unsigned tb = t / 8;
	uint64_t *blk = lv__malloc(1024 * sizeof *blk);
	if (!blk)
		return LV__LF_NOMEM(c);
	size_t pos = 0, done = 0;
	int rc = 0;
	while (done < cnt) {
		if (n - pos < tb) {
			rc = LV__LF_CORRUPT(c, "inline_bitpacking block truncated");
			break;
		}
		uint64_t w = lv__lf_load_le(p + pos, tb);
		pos += tb;
		if (w > t) {
			rc = LV__LF_CORRUPT(c, "inline_bitpacking width %llu over %u", (unsigned long long)w,
					t);
			break;
		}
		size_t need = (size_t)(1024 * w / 8);
		if (n - pos < need) {
			rc = LV__LF_CORRUPT(c, "inline_bitpacking block of %zu bytes, need %zu", n - pos,
					need);
			break;
		}
		lv__lf_fastlanes_unpack(t, (unsigned)w, p + pos, blk);
		pos += need;
		size_t k = cnt - done < 1024 ? cnt - done : 1024;
		memcpy(out + done, blk, k * sizeof *blk);
		done += k;
	}
	lv__free(blk);
	return rc;
}

int lv__lf_ool_bitpack(lv__lf_dctx *c, unsigned t, unsigned w, const uint8_t *p, size_t n, size_t cnt,
		   uint64_t *out)
{
	/* whole 1024-value blocks of w bits, then a tail either packed (padded) or raw */
	unsigned tb = t / 8;
	size_t wpc = (1024 * (size_t)w + t - 1) / t; /* words per block */
	size_t full = cnt / 1024, tail = cnt % 1024;
	size_t words = n / tb, base = full * wpc;
	bool raw_tail = tail && words == base + tail;
	if (n % tb || words < base + (tail ? (raw_tail ? tail : wpc) : 0))
		return LV__LF_CORRUPT(c, "out_of_line_bitpacking payload of %zu bytes for %zu values", n,
				  cnt);
	uint64_t *blk = lv__malloc(1024 * sizeof *blk);
	if (!blk)
		return LV__LF_NOMEM(c);
	for (size_t b = 0; b < full; b++) {
		lv__lf_fastlanes_unpack(t, w, p + b * wpc * tb, blk);
		memcpy(out + b * 1024, blk, 1024 * sizeof *blk);
	}
	if (tail) {
		if (raw_tail) {
			for (size_t i = 0; i < tail; i++)
				out[full * 1024 + i] = lv__lf_load_le(p + (base + i) * tb, tb);
		} else {
			lv__lf_fastlanes_unpack(t, w, p + base * tb, blk);
			memcpy(out + full * 1024, blk, tail * sizeof *blk);
		}
	}
	lv__free(blk);
	return 0;
}
