/*
 * Values of one 2.1/2.2 mini-block chunk (or of a dictionary block) decoded from a
 * parsed CompressiveEncoding tree (cenc.c):
 *   fixed width: flat, inline bitpacking, rle (values + u8 run lengths), byte stream
 *                split, fixed_size_list (optional item validity + flat items),
 *                constant, and general (zstd/lz4) around any of these;
 *   variable:    variable (offsets relative to the buffer + bytes), fsst, general.
 * Every buffer is checked against the count it must hold before it is read; run
 * lengths must add up to the count; decompressed sizes are exact where the inner
 * encoding fixes them and capped otherwise (general.c).
 */
#include <string.h>

#include "lancefile/lf_internal.h"

#define VAR_CAP ((size_t)1 << 30) /* decompressed variable-width chunk or block */

unsigned lv__lf_fixed_bits(const lv__lf_cenc_tree *t, int node)
{
	const lv__lf_cenc *e = &t->node[node];
	switch (e->kind) {
	case CE_FLAT:
	case CE_INLINE_BITPACK: return (unsigned)e->bits;
	case CE_RLE:
	case CE_BSS:
	case CE_GENERAL:
	case CE_FSL: return lv__lf_fixed_bits(t, e->child[0]);
	case CE_CONSTANT: return e->blob_len >= 1 && e->blob_len <= 8 ? (unsigned)e->blob_len * 8 : 0;
	default: return 0;
	}
}

/* Exact decoded bytes of cnt values of a node, or 0 when the encoding does not fix it. */
static size_t exact_bytes(const lv__lf_cenc_tree *t, int node, size_t cnt)
{
	const lv__lf_cenc *e = &t->node[node];
	if (e->kind == CE_FLAT)
		return e->bits == 1 ? (cnt + 7) / 8 : cnt * (size_t)(e->bits / 8);
	if (e->kind == CE_BSS)
		return exact_bytes(t, e->child[0], cnt);
	return 0;
}

static int flat(lv__lf_dctx *c, unsigned bits, const uint8_t *p, size_t n, size_t cnt, uint64_t *out)
{
	if (bits == 1 && n < (cnt + 7) / 8)
		return LV__LF_CORRUPT(c, "bitmap of %zu bytes for %zu values", n, cnt);
	if (bits != 1 && n / (bits / 8) < cnt)
		return LV__LF_CORRUPT(c, "flat buffer of %zu bytes for %zu values", n, cnt);
	lv__lf_load_flat(p, bits, cnt, out);
	return 0;
}

static int rle(lv__lf_dctx *c, unsigned bits, lv__lf_bufs b, size_t cnt, uint64_t *out)
{
	size_t w = bits / 8, runs = b.n[1];
	if (b.count < 2)
		return LV__LF_CORRUPT(c, "rle chunk without a run-length buffer");
	if (b.n[0] % w || b.n[0] / w != runs)
		return LV__LF_CORRUPT(c, "rle chunk with %zu value bytes for %zu runs", b.n[0], runs);
	size_t done = 0;
	for (size_t r = 0; r < runs && done < cnt; r++) {
		uint64_t v = lv__lf_load_le(b.p[0] + r * w, (unsigned)w);
		size_t len = b.p[1][r];
		if (len > cnt - done)
			len = cnt - done; /* Lance stops at the chunk's count */
		for (size_t i = 0; i < len; i++)
			out[done + i] = v;
		done += len;
	}
	if (done != cnt)
		return LV__LF_CORRUPT(c, "rle runs hold %zu of %zu values", done, cnt);
	return 0;
}

static int bss(lv__lf_dctx *c, unsigned bits, const uint8_t *p, size_t n, size_t cnt, uint64_t *out)
{
	size_t w = bits / 8;
	if (n / w < cnt || n != cnt * w)
		return LV__LF_CORRUPT(c, "byte_stream_split buffer of %zu bytes for %zu values", n, cnt);
	for (size_t i = 0; i < cnt; i++) {
		uint64_t v = 0;
		for (size_t j = 0; j < w; j++)
			v |= (uint64_t)p[j * cnt + i] << (8 * j);
		out[i] = v;
	}
	return 0;
}

static int fsl(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, lv__lf_bufs b, size_t cnt, uint64_t *out)
{
	const lv__lf_cenc *e = &t->node[node];
	size_t items = (size_t)e->items, vb = 0;
	if (cnt > SIZE_MAX / items)
		return LV__LF_CORRUPT(c, "fixed_size_list of %zu x %zu items", cnt, items);
	if (e->has_validity) {
		/* item validity (empty when every item is valid), then the items */
		if (b.count < 2)
			return LV__LF_CORRUPT(c, "fixed_size_list chunk without its item buffer");
		if (b.n[0]) {
			if (b.n[0] < (cnt * items + 7) / 8)
				return LV__LF_CORRUPT(c, "item validity of %zu bytes", b.n[0]);
			/* items of a null row are invalid too; a null item in a valid row is
			 * something our vectors cannot hold */
			for (size_t i = 0; i < cnt * items; i++)
				if (!((b.p[0][i / 8] >> (i % 8)) & 1) && !(b.def && b.def[i / items]))
					return LV__LF_UNSUP(c, "unsupported vector with null items");
		}
		vb = 1;
	}
	return flat(c, (unsigned)t->node[e->child[0]].bits, b.p[vb], b.n[vb], cnt * items, out);
}

int lv__lf_fixed_decode(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, lv__lf_bufs b, size_t cnt,
		    uint64_t *out, unsigned *width_bits)
{
	const lv__lf_cenc *e = &t->node[node];
	*width_bits = lv__lf_fixed_bits(t, node);
	if (b.count < 1)
		return LV__LF_CORRUPT(c, "chunk without a value buffer");
	switch (e->kind) {
	case CE_FLAT: return flat(c, (unsigned)e->bits, b.p[0], b.n[0], cnt, out);
	case CE_INLINE_BITPACK: return lv__lf_inline_bitpack(c, (unsigned)e->bits, b.p[0], b.n[0], cnt, out);
	case CE_RLE: return rle(c, *width_bits, b, cnt, out);
	case CE_BSS: return bss(c, *width_bits, b.p[0], b.n[0], cnt, out);
	case CE_FSL: return fsl(c, t, node, b, cnt, out);
	case CE_CONSTANT:
		if (!*width_bits)
			return LV__LF_UNSUP(c, "unsupported constant of %zu bytes", e->blob_len);
		for (size_t i = 0; i < cnt; i++)
			out[i] = lv__lf_load_le(e->blob, (unsigned)e->blob_len);
		return 0;
	case CE_GENERAL: {
		size_t exact = exact_bytes(t, e->child[0], cnt), len;
		uint8_t *d;
		LV_TRY(lv__lf_decompress(c, e->scheme, b.p[0], b.n[0], exact, cnt * 16 + 65536, &d, &len));
		b.p[0] = d;
		b.n[0] = len;
		int rc = lv__lf_fixed_decode(c, t, e->child[0], b, cnt, out, width_bits);
		lv__free(d);
		return rc;
	}
	default:
		return LV__LF_UNSUP(c, "unsupported compressive encoding '%s' for fixed-width values",
				lv__lf_cenc_name(e->kind));
	}
}

void lv__lf_varvals_free(lv__lf_varvals *v)
{
	if (!v->borrowed)
		lv__free(v->offs);
	lv__free(v->owned);
	memset(v, 0, sizeof *v);
}

/* (cnt+1) offsets of ob bits relative to the buffer: non-decreasing, within it. */
static int variable(lv__lf_dctx *c, unsigned ob, const uint8_t *p, size_t n, size_t cnt,
		    lv__lf_varvals *out, uint64_t *scratch, size_t scratch_n)
{
	size_t w = ob / 8;
	if (n / w < cnt + 1)
		return LV__LF_CORRUPT(c, "variable buffer of %zu bytes too short for %zu offsets", n,
				  cnt + 1);
	out->borrowed = scratch && cnt < scratch_n; /* cnt + 1 offsets fit */
	out->offs = out->borrowed ? scratch : lv__malloc((cnt + 1) * sizeof *out->offs);
	if (!out->offs)
		return LV__LF_NOMEM(c);
	lv__lf_load_le_n(p, (unsigned)w, cnt + 1, out->offs);
	for (size_t i = 0; i <= cnt; i++)
		if (out->offs[i] > n || (i && out->offs[i] < out->offs[i - 1]))
			return LV__LF_CORRUPT(c, "variable offsets out of order or past the buffer");
	out->bytes = p;
	return 0;
}

/* FSST: decode each string of the inner variable values into one owned buffer. */
static int fsst(lv__lf_dctx *c, const lv__lf_cenc *e, lv__lf_varvals *in, size_t cnt, lv__lf_varvals *out)
{
	lv__lf_fsst f;
	LV_TRY(lv__lf_fsst_init(c, e->blob, e->blob_len, &f));
	lv__dbuf d;
	lv__dbuf_init(&d, VAR_CAP);
	out->offs = lv__malloc((cnt + 1) * sizeof *out->offs);
	if (!out->offs)
		return LV__LF_NOMEM(c);
	out->offs[0] = 0;
	int rc = 0;
	for (size_t i = 0; i < cnt && rc == 0; i++) {
		rc = lv__lf_fsst_decode(c, &f, in->bytes + in->offs[i],
				    (size_t)(in->offs[i + 1] - in->offs[i]), &d);
		out->offs[i + 1] = d.len;
	}
	lv_buf whole = { 0 };
	if (rc == 0 && lv__dbuf_take(&d, &whole) < 0)
		rc = LV__LF_NOMEM(c);
	lv__dbuf_dispose(&d);
	if (rc)
		return rc;
	out->owned = whole.ptr;
	out->bytes = whole.ptr;
	return 0;
}

int lv__lf_var_decode(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, lv__lf_bufs b, size_t cnt,
		  lv__lf_varvals *out, uint64_t *scratch, size_t scratch_n)
{
	const lv__lf_cenc *e = &t->node[node];
	memset(out, 0, sizeof *out);
	if (b.count < 1)
		return LV__LF_CORRUPT(c, "chunk without a value buffer");
	int rc;
	switch (e->kind) {
	case CE_VARIABLE:
		rc = variable(c, (unsigned)e->bits, b.p[0], b.n[0], cnt, out, scratch, scratch_n);
		break;
	case CE_FSST: {
		lv__lf_varvals in;
		rc = lv__lf_var_decode(c, t, e->child[0], b, cnt, &in, scratch, scratch_n);
		if (rc == 0)
			rc = fsst(c, e, &in, cnt, out);
		lv__lf_varvals_free(&in);
		break;
	}
	case CE_GENERAL: {
		uint8_t *d;
		size_t len;
		LV_TRY(lv__lf_decompress(c, e->scheme, b.p[0], b.n[0], 0, VAR_CAP, &d, &len));
		b.p[0] = d;
		b.n[0] = len;
		rc = lv__lf_var_decode(c, t, e->child[0], b, cnt, out, scratch, scratch_n);
		if (rc == 0 && !out->owned)
			out->owned = d; /* the offsets point into it */
		else
			lv__free(d);
		break;
	}
	default:
		return LV__LF_UNSUP(c, "unsupported string encoding '%s'", lv__lf_cenc_name(e->kind));
	}
	if (rc)
		lv__lf_varvals_free(out);
	return rc;
}
