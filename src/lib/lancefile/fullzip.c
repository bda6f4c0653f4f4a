/*
 * 2.1/2.2 full-zip pages (FullZipLayout): page buffer 0 holds the rows one after
 * another, each a control word carrying the definition level (0, 1 or 2 bytes by
 * bits_def), then for a valid row either bits_per_value/8 bytes (fixed width) or a
 * bits_per_offset length and that many bytes (variable width), FSST-compressed or
 * general-compressed (zstd/lz4, one compressed buffer per value) as the value
 * compression says.  A null row of a fixed-width column still holds its value's
 * bytes (skipped); a null variable-width row holds no length [observed, Lance 14.0.2].
 * A vector whose fixed_size_list encoding has item validity carries ceil(dim/8) bytes of
 * item bitmap before its floats (bits_per_value counts both) [observed, Lance 14.0.2].
 * Flat columns only; every read is checked against the buffer.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

#define VALUE_CAP ((size_t)1 << 30)

typedef struct fz_layout {
	uint64_t bdef, bpv, bpo;
	bool fixed;
	size_t vbytes; /* vectors: bytes of item validity before each value */
	lv__lf_cenc_tree t;
	int root;
	lv__lf_fsst fsst;
} fz_layout;

static int parse_layout(lv__lf_dctx *c, const uint8_t *p, size_t n, fz_layout *z)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 }, fval = { 0 };
	int rc, nlayers = 0;
	bool var = false;
	uint64_t brep = 0, items = 0, visible = 0, layer = 0;
	memset(z, 0, sizeof *z);
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		switch (f.num) {
		case 1: brep = f.u; break;
		case 2: z->bdef = f.u; break;
		case 3: z->bpv = f.u; z->fixed = true; var = false; break;
		case 4: z->bpo = f.u; var = true; z->fixed = false; break;
		case 5: items = f.u; break;
		case 6: visible = f.u; break;
		case 7: fval = f; break;
		case 8: LV_TRY(lv__lf_parse_layers(c, &f, &layer, &nlayers)); break;
		default: break;
		}
	}
	if (rc < 0 || fval.wire != LV_PB_LEN || (!z->fixed && !var))
		return LV__LF_CORRUPT(c, "malformed full-zip layout");
	LV_TRY(lv__lf_check_layer(c, layer, nlayers));
	if (brep)
		return LV__LF_UNSUP(c, "unsupported full-zip repetition levels (list column)");
	if (z->bdef > 16)
		return LV__LF_UNSUP(c, "unsupported full-zip with %llu definition bits",
				(unsigned long long)z->bdef);
	if (items != c->nrows || visible != items)
		return LV__LF_CORRUPT(c, "full-zip num_items %llu / visible %llu but page has %zu rows",
				  (unsigned long long)items, (unsigned long long)visible, c->nrows);
	if (c->nbufs < 1)
		return LV__LF_CORRUPT(c, "full-zip page without buffers");
	return lv__lf_cenc_parse(c, fval.data, fval.len, &z->t, &z->root);
}

static int check_types(lv__lf_dctx *c, fz_layout *z)
{
	const lv__lf_cenc *e = &z->t.node[z->root];
	int type = c->cb->type;
	if (!z->fixed) {
		if (type != LV_COL_UTF8)
			return LV__LF_CORRUPT(c, "variable full-zip for a fixed-width column");
		if (z->bpo != 8 && z->bpo != 16 && z->bpo != 32 && z->bpo != 64)
			return LV__LF_UNSUP(c, "unsupported full-zip bits_per_offset %llu",
					(unsigned long long)z->bpo);
		if (e->kind == CE_FSST)
			return lv__lf_fsst_init(c, e->blob, e->blob_len, &z->fsst);
		if (e->kind == CE_GENERAL && z->t.node[e->child[0]].kind == CE_VARIABLE)
			return 0;
		if (e->kind != CE_VARIABLE)
			return LV__LF_UNSUP(c, "unsupported full-zip compressive encoding '%s'",
					lv__lf_cenc_name(e->kind));
		return 0;
	}
	unsigned want = lv__lf_type_width(type) * 8;
	bool ok = e->kind == CE_FLAT && want && e->bits == want && z->bpv == want;
	if (type == LV_COL_FSL_FLOAT32) {
		z->vbytes = e->kind == CE_FSL && e->has_validity ? (c->cb->dim + 7) / 8 : 0;
		ok = e->kind == CE_FSL && e->items == c->cb->dim && z->t.node[e->child[0]].bits == 32 &&
		     z->bpv == 32 * (uint64_t)c->cb->dim + 8 * (uint64_t)z->vbytes;
	}
	if (!ok)
		return LV__LF_UNSUP(c, "unsupported fixed full-zip of %llu bits ('%s')",
				(unsigned long long)z->bpv, lv__lf_cenc_name(e->kind));
	return 0;
}

/* Stores one valid variable-width value. */
static int put_var(lv__lf_dctx *c, const fz_layout *z, size_t row, const uint8_t *p, size_t len)
{
	const lv__lf_cenc *e = &z->t.node[z->root];
	if (e->kind == CE_FSST) {
		LV_TRY(lv__lf_fsst_decode(c, &z->fsst, p, len, &c->cb->data));
		c->cb->offs[row + 1] = c->cb->data.len;
		return 0;
	}
	if (e->kind != CE_GENERAL)
		return lv__lf_col_put_str(c, row, p, len);
	uint8_t *d;
	size_t dl;
	LV_TRY(lv__lf_decompress(c, e->scheme, p, len, 0, VALUE_CAP, &d, &dl));
	int rc = lv__lf_col_put_str(c, row, d, dl);
	lv__free(d);
	return rc;
}

/* Stores one valid fixed-width value of w bytes (a vector: after its item validity). */
static int put_fixed(lv__lf_dctx *c, const fz_layout *z, size_t row, const uint8_t *p, size_t w)
{
	lv__lf_colbuf *b = c->cb;
	if (b->type == LV_COL_FSL_FLOAT32) {
		for (uint32_t k = 0; k < b->dim; k++)
			if (z->vbytes && !((p[k / 8] >> (k % 8)) & 1))
				return LV__LF_UNSUP(c, "unsupported vector with null items");
		p += z->vbytes;
		for (uint32_t k = 0; k < b->dim; k++) {
			uint32_t bits = lv__le32(p + 4 * k);
			memcpy(&b->f32[row * b->dim + k], &bits, sizeof bits);
		}
		return 0;
	}
	lv__lf_col_put_fixed(b, row, lv__lf_load_le(p, (unsigned)w));
	return 0;
}

static int rows(lv__lf_dctx *c, const fz_layout *z)
{
	size_t cw = z->bdef == 0 ? 0 : z->bdef <= 8 ? 1 : 2;
	size_t lw = (size_t)z->bpo / 8, vw = (size_t)z->bpv / 8;
	const uint8_t *d = c->buf[0];
	size_t dl = c->buflen[0], pos = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		size_t row = c->row0 + i;
		uint64_t lev = 0;
		if (cw) {
			if (dl - pos < cw)
				return LV__LF_CORRUPT(c, "full-zip data truncated at row %zu", i);
			lev = lv__lf_load_le(d + pos, (unsigned)cw) & ((1u << z->bdef) - 1);
			pos += cw;
		}
		if (lev > 1)
			return LV__LF_CORRUPT(c, "definition level %llu in a flat column",
					  (unsigned long long)lev);
		if (lev)
			LV_TRY(lv__lf_col_put_null(c, row));
		if (z->fixed) {
			if (dl - pos < vw)
				return LV__LF_CORRUPT(c, "full-zip data truncated at row %zu", i);
			if (!lev)
				LV_TRY(put_fixed(c, z, row, d + pos, vw));
			pos += vw;
			continue;
		}
		if (lev)
			continue;
		if (dl - pos < lw)
			return LV__LF_CORRUPT(c, "full-zip data truncated at row %zu", i);
		uint64_t len = lv__lf_load_le(d + pos, (unsigned)lw);
		pos += lw;
		if (len > dl - pos)
			return LV__LF_CORRUPT(c, "full-zip value of %llu bytes past the buffer at row %zu",
					  (unsigned long long)len, i);
		LV_TRY(put_var(c, z, row, d + pos, (size_t)len));
		pos += (size_t)len;
	}
	return 0;
}

int lv__lf_fullzip(lv__lf_dctx *c, const uint8_t *p, size_t n)
{
	fz_layout *z = lv__malloc(sizeof *z);
	if (!z)
		return LV__LF_NOMEM(c);
	int rc = parse_layout(c, p, n, z);
	if (rc == 0)
		rc = check_types(c, z);
	if (rc == 0)
		rc = rows(c, z);
	lv__free(z);
	return rc;
}
