/*
 * Lance's general-purpose buffer compression (CompressiveEncoding.general and the
 * per-value compression of full-zip pages), with Debian's libzstd and liblz4 linked
 * in (see docs/format.md "Lance file format layer" for why they are linked rather than loaded):
 *   zstd: u64 LE decompressed size, then a zstd frame (Lance 8..12 write this); a buffer
 *         that is a bare zstd frame (magic, reserved header bit clear) is also accepted,
 *         as Lance reads its older output.
 *   lz4:  u32 LE decompressed size, then one LZ4 block.
 * Hostile input: the claimed size is checked against the caller's exact expectation,
 * the caller's cap and the file's remaining decompression budget BEFORE anything is
 * allocated; the decoder must then produce exactly that many bytes.  A bare zstd frame
 * without a size is decoded in steps that stop at the cap.
 */
#include <lz4.h>
#include <string.h>
#include <zstd.h>

#include "lancefile/lf_internal.h"

#define ZSTD_MAGIC 0xFD2FB528u

static const char *scheme_name(int s) { return s == LV__LF_COMP_LZ4 ? "lz4" : "zstd"; }

/* Checks a claimed decompressed size and charges it to the budget. */
static int admit(lv__lf_dctx *c, int scheme, uint64_t claim, size_t expect, size_t cap)
{
	if (expect && claim != expect)
		return LV__LF_CORRUPT(c, "%s buffer claims %llu decompressed bytes, %zu expected",
				  scheme_name(scheme), (unsigned long long)claim, expect);
	if (claim > cap)
		return LV__LF_CORRUPT(c, "%s buffer claims %llu decompressed bytes, over the %zu limit",
				  scheme_name(scheme), (unsigned long long)claim, cap);
	if (c->budget) {
		if (claim > c->budget->left)
			return lv__lf_perr(c, LV_ELIMIT,
				       "decompressed data exceeds the file's limit (%llu bytes left)",
				       (unsigned long long)c->budget->left);
		c->budget->left -= claim;
	}
	return 0;
}

/* Decompresses n bytes into a new buffer of exactly `size` bytes. */
static int run(lv__lf_dctx *c, int scheme, const uint8_t *p, size_t n, size_t size, uint8_t **out);

/* A bare zstd frame; its size comes from the frame header or, if absent, from decoding
 * in steps into a buffer grown up to the limit. */
static int zstd_bare(lv__lf_dctx *c, const uint8_t *p, size_t n, size_t expect, size_t cap,
		     uint8_t **out, size_t *outlen)
{
	unsigned long long fcs = ZSTD_getFrameContentSize(p, n);
	if (fcs == ZSTD_CONTENTSIZE_ERROR)
		return LV__LF_CORRUPT(c, "invalid zstd frame header");
	if (fcs != ZSTD_CONTENTSIZE_UNKNOWN) {
		LV_TRY(admit(c, LV__LF_COMP_ZSTD, fcs, expect, cap));
		LV_TRY(run(c, LV__LF_COMP_ZSTD, p, n, (size_t)fcs, out));
		*outlen = (size_t)fcs;
		return 0;
	}
	size_t lim = expect ? expect : cap, size = lim < 65536 ? lim : 65536;
	uint8_t *d = lv__malloc(size ? size : 1);
	ZSTD_DCtx *z = ZSTD_createDCtx();
	int rc = d && z ? 0 : LV__LF_NOMEM(c);
	ZSTD_inBuffer in = { p, n, 0 };
	ZSTD_outBuffer ob = { d, size, 0 };
	size_t r = 1;
	while (rc == 0 && r != 0) {
		if (ob.pos == ob.size) { /* full: grow, or stop at the limit */
			if (ob.size >= lim) {
				rc = LV__LF_CORRUPT(c, "zstd frame decompresses to over %zu bytes", lim);
				break;
			}
			size_t ns = ob.size > lim / 2 ? lim : ob.size * 2;
			uint8_t *nd = lv__realloc(d, ns);
			if (!nd) {
				rc = LV__LF_NOMEM(c);
				break;
			}
			d = nd;
			ob.dst = d;
			ob.size = ns;
		}
		size_t before = ob.pos, used = in.pos;
		r = ZSTD_decompressStream(z, &ob, &in);
		if (ZSTD_isError(r))
			rc = LV__LF_CORRUPT(c, "zstd: %s", ZSTD_getErrorName(r));
		else if (r != 0 && ob.pos == before && in.pos == used && ob.pos < ob.size)
			rc = LV__LF_CORRUPT(c, "zstd frame truncated");
	}
	ZSTD_freeDCtx(z);
	if (rc == 0)
		rc = admit(c, LV__LF_COMP_ZSTD, ob.pos, expect, cap);
	if (rc) {
		lv__free(d);
		return rc;
	}
	*out = d;
	*outlen = ob.pos;
	return 0;
}

/* Decompresses n bytes into a new buffer of exactly `size` bytes. */
static int run(lv__lf_dctx *c, int scheme, const uint8_t *p, size_t n, size_t size, uint8_t **out)
{
	uint8_t *d = lv__malloc(size ? size : 1);
	if (!d)
		return LV__LF_NOMEM(c);
	int rc = 0;
	if (scheme == LV__LF_COMP_ZSTD) {
		size_t r = ZSTD_decompress(d, size, p, n);
		if (ZSTD_isError(r))
			rc = LV__LF_CORRUPT(c, "zstd: %s", ZSTD_getErrorName(r));
		else if (r != size)
			rc = LV__LF_CORRUPT(c, "zstd produced %zu of %zu bytes", r, size);
	} else {
		if (n > INT32_MAX || size > INT32_MAX)
			rc = LV__LF_UNSUP(c, "lz4 block over 2 GiB");
		else if (LZ4_decompress_safe((const char *)p, (char *)d, (int)n, (int)size) != (int)size)
			rc = LV__LF_CORRUPT(c, "lz4 block is corrupt or not %zu bytes", size);
	}
	if (rc) {
		lv__free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int lv__lf_decompress(lv__lf_dctx *c, int scheme, const uint8_t *p, size_t n, size_t expect, size_t cap,
		  uint8_t **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	if (n == 0) { /* Lance writes nothing for an empty buffer */
		if (expect)
			return LV__LF_CORRUPT(c, "empty %s buffer, %zu bytes expected", scheme_name(scheme),
					  expect);
		*out = lv__malloc(1);
		return *out ? 0 : LV__LF_NOMEM(c);
	}
	if (c->budget && cap > c->budget->left)
		cap = (size_t)c->budget->left;
	uint64_t claim;
	size_t hdr;
	if (scheme == LV__LF_COMP_ZSTD) {
		if (n >= 8 && lv__le32(p) == ZSTD_MAGIC && !(p[4] & 0x10))
			return zstd_bare(c, p, n, expect, cap, out, outlen);
		if (n < 8)
			return LV__LF_CORRUPT(c, "zstd buffer of %zu bytes", n);
		claim = lv__le64(p);
		hdr = 8;
	} else if (scheme == LV__LF_COMP_LZ4) {
		if (n < 4)
			return LV__LF_CORRUPT(c, "lz4 buffer of %zu bytes", n);
		claim = lv__le32(p);
		hdr = 4;
	} else {
		return LV__LF_UNSUP(c, "unsupported compression scheme %d", scheme);
	}
	LV_TRY(admit(c, scheme, claim, expect, cap));
	LV_TRY(run(c, scheme, p + hdr, n - hdr, (size_t)claim, out));
	*outlen = (size_t)claim;
	return 0;
}
