/*
 * FSST string decompression (the symbol table Lance stores in an fsst encoding:
 * u64 header with magic "FSST" in the top 32 bits, the escape-mode flag at bit 24 and
 * the symbol count in the low byte, then the symbols as u64 words and their lengths
 * as bytes).  Codes past the table, escapes at the end of a string and symbol lengths
 * outside 1..8 are corrupt; output is bounded by the destination buffer's limit.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

#define FSST_ESC 255

int lv__lf_fsst_init(lv__lf_dctx *c, const uint8_t *t, size_t n, lv__lf_fsst *f)
{
	if (n < 8)
		return LV__LF_CORRUPT(c, "fsst symbol table of %zu bytes", n);
	uint64_t hdr = lv__le64(t);
	if ((hdr >> 32) != 0x46535354u)
		return LV__LF_CORRUPT(c, "fsst symbol table without magic");
	f->on = (hdr >> 24) & 1;
	f->nsym = (unsigned)(hdr & 0xff);
	if (n < 8 + (size_t)f->nsym * 9)
		return LV__LF_CORRUPT(c, "fsst symbol table too short for %u symbols", f->nsym);
	for (unsigned i = 0; i < f->nsym; i++) {
		f->sym[i] = lv__le64(t + 8 + 8 * i);
		f->len[i] = t[8 + 8 * f->nsym + i];
		if (f->len[i] < 1 || f->len[i] > 8)
			return LV__LF_CORRUPT(c, "fsst symbol %u has length %u", i, f->len[i]);
	}
	return 0;
}

int lv__lf_fsst_decode(lv__lf_dctx *c, const lv__lf_fsst *f, const uint8_t *in, size_t n, lv__dbuf *d)
{
	int rc = 0;
	if (!f->on) {
		rc = lv__dbuf_add(d, in, n);
	} else {
		size_t i = 0;
		while (i < n && rc == 0) {
			uint8_t code = in[i++];
			if (code == FSST_ESC) {
				if (i >= n)
					return LV__LF_CORRUPT(c, "fsst string ends in an escape");
				rc = lv__dbuf_addc(d, in[i++]);
			} else {
				if (code >= f->nsym)
					return LV__LF_CORRUPT(c, "fsst code %u past %u symbols", code,
							  f->nsym);
				uint8_t s[8];
				for (unsigned b = 0; b < 8; b++)
					s[b] = (uint8_t)(f->sym[code] >> (8 * b));
				rc = lv__dbuf_add(d, s, f->len[code]);
			}
		}
	}
	if (rc < 0)
		return lv__lf_perr(c, rc, rc == LV_ELIMIT ? "decoded strings exceed the size limit"
						      : "out of memory");
	return 0;
}
