/*
 * Page decoder for Lance file format 2.0 (ArrayEncoding): flat, nullable, binary
 * and dictionary, the shapes Lance's 2.0 writer emits for scalar and string columns.
 *
 * Every size and offset comes from the file and is checked before use.  A
 * structure we recognise but do not implement is LV_EUNSUPPORTED naming the
 * encoding; anything inconsistent is LV_ECORRUPT.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

#define CORRUPT LV__LF_CORRUPT
#define UNSUP LV__LF_UNSUP
#define NOMEM LV__LF_NOMEM
#define MAX_DEPTH LV__LF_MAX_DEPTH

static int need_buf(lv__lf_dctx *c, uint64_t idx, const uint8_t **p, size_t *n)
{
	if (idx >= c->nbufs)
		return CORRUPT(c, "buffer index %llu out of range (%zu buffers)",
			       (unsigned long long)idx, c->nbufs);
	*p = c->buf[idx];
	*n = c->buflen[idx];
	return 0;
}

static const char *ae20_name(int k)
{
	static const char *const names[] = {
		"?", "flat", "nullable", "fixed_size_list", "list", "struct", "binary",
		"dictionary", "fsst", "packed_struct", "bitpacked", "fixed_size_binary",
		"bitpacked_for_non_neg", "constant", "inline_bitpacking", "out_of_line_bitpacking",
		"variable", "packed_struct_fixed_width_mini_block", "block", "rle",
		"general_mini_block", "byte_stream_split"
	};
	return k > 0 && k < (int)(sizeof names / sizeof names[0]) ? names[k] : "unknown";
}

/*
 * Parses Flat{bits, buffer, compression} and resolves its page buffer.  A compressed
 * buffer (scheme "zstd" or "lz4": the whole page buffer, in the format of general.c) is
 * decompressed into *owned, which the caller frees.
 */
static int flat20(lv__lf_dctx *c, const uint8_t *p, size_t n, uint64_t *bits, const uint8_t **data,
		  size_t *dlen, uint8_t **owned)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 };
	int rc, comp = LV__LF_COMP_NONE;
	bool have_buf = false;
	uint64_t idx = 0, type = 0;
	*bits = 0;
	*owned = NULL;
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wire == LV_PB_VARINT) {
			*bits = f.u;
		} else if (f.num == 2 && f.wire == LV_PB_LEN) {
			have_buf = true;
			lv__pb br = lv__pb_sub(&f);
			lv__pb_field g = { 0 };
			while ((rc = lv__pb_next(&br, &g)) == 1) {
				if (g.num == 1 && g.wire == LV_PB_VARINT)
					idx = g.u;
				else if (g.num == 2 && g.wire == LV_PB_VARINT)
					type = g.u;
			}
			if (rc < 0)
				return CORRUPT(c, "malformed 2.0 buffer reference");
		} else if (f.num == 3 && f.wire == LV_PB_LEN) {
			lv__pb_field s = { 0 };
			char scheme[32] = "?";
			if (lv__lf_pb_find(f.data, f.len, 1, &s) == 1) {
				size_t k = s.len < sizeof scheme - 1 ? s.len : sizeof scheme - 1;
				memcpy(scheme, s.data, k);
				scheme[k] = 0;
			}
			if (!strcmp(scheme, "zstd"))
				comp = LV__LF_COMP_ZSTD;
			else if (!strcmp(scheme, "lz4"))
				comp = LV__LF_COMP_LZ4;
			else if (scheme[0] && strcmp(scheme, "none") != 0)
				return UNSUP(c, "unsupported 2.0 flat compression '%s'", scheme);
		}
	}
	if (rc < 0 || !have_buf)
		return CORRUPT(c, "malformed 2.0 flat encoding");
	if (type != 0)
		return UNSUP(c, "unsupported 2.0 buffer type %llu (only page buffers)",
			     (unsigned long long)type);
	LV_TRY(need_buf(c, idx, data, dlen));
	if (comp == LV__LF_COMP_NONE)
		return 0;
	LV_TRY(lv__lf_decompress(c, comp, *data, *dlen, 0, SIZE_MAX, owned, dlen));
	*data = *owned;
	return 0;
}

/* n values of a flat buffer: a bitmap (bits 1, values 0/1) or little-endian words. */
static int flat_values(lv__lf_dctx *c, uint64_t bits, const uint8_t *d, size_t dl, size_t n,
		       uint64_t *vals)
{
	if (bits == 1 && dl < (n + 7) / 8)
		return CORRUPT(c, "bitmap buffer has %zu bytes for %zu values", dl, n);
	if (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64)
		return UNSUP(c, "unsupported 2.0 flat bits_per_value %llu", (unsigned long long)bits);
	if (bits != 1 && dl / (bits / 8) < n)
		return CORRUPT(c, "value buffer has %zu bytes for %zu values of %u bits", dl, n,
			       (unsigned)bits);
	lv__lf_load_flat(d, (unsigned)bits, n, vals);
	return 0;
}

/*
 * Decodes an ArrayEncoding yielding n fixed-width values (a bitmap gives 0/1).
 * valid (may be NULL: then nulls are an error) is ANDed with the validity found.
 */
static int fixed20(lv__lf_dctx *c, const uint8_t *p, size_t plen, size_t n, uint64_t *vals,
		   uint8_t *valid, unsigned *bits_out, int depth)
{
	lv__pb_field f = { 0 }, g = { 0 };
	if (depth > MAX_DEPTH)
		return CORRUPT(c, "2.0 encoding nested too deeply");
	int k = lv__lf_oneof(p, plen, &f);
	if (k < 0)
		return CORRUPT(c, "malformed 2.0 array encoding");
	if (k == 1) {
		uint64_t bits;
		const uint8_t *d;
		size_t dl;
		uint8_t *owned;
		LV_TRY(flat20(c, f.data, f.len, &bits, &d, &dl, &owned));
		int frc = flat_values(c, bits, d, dl, n, vals);
		lv__free(owned);
		LV_TRY(frc);
		if (bits_out)
			*bits_out = (unsigned)bits;
		return 0;
	}
	if (k != 2)
		return UNSUP(c, "unsupported 2.0 array encoding '%s'", ae20_name(k));
	int nk = lv__lf_oneof(f.data, f.len, &g);
	if (nk == 1) { /* no_nulls{values} */
		lv__pb_field v = { 0 };
		if (lv__lf_pb_find(g.data, g.len, 1, &v) != 1)
			return CORRUPT(c, "2.0 no_nulls without values");
		return fixed20(c, v.data, v.len, n, vals, valid, bits_out, depth + 1);
	}
	if (nk == 2) { /* some_nulls{validity, values} */
		lv__pb_field vf = { 0 }, vv = { 0 };
		if (lv__lf_pb_find(g.data, g.len, 1, &vf) != 1 || lv__lf_pb_find(g.data, g.len, 2, &vv) != 1)
			return CORRUPT(c, "2.0 some_nulls without validity or values");
		if (!valid)
			return CORRUPT(c, "nulls where none are allowed");
		LV_TRY(fixed20(c, vv.data, vv.len, n, vals, valid, bits_out, depth + 1));
		uint64_t *tmp = lv__calloc(n ? n : 1, sizeof *tmp);
		if (!tmp)
			return NOMEM(c);
		int rc = fixed20(c, vf.data, vf.len, n, tmp, NULL, NULL, depth + 1);
		if (rc == 0)
			for (size_t i = 0; i < n; i++)
				if (!tmp[i])
					valid[i] = 0;
		lv__free(tmp);
		return rc;
	}
	if (nk == 3) { /* all_nulls */
		if (!valid)
			return CORRUPT(c, "nulls where none are allowed");
		memset(valid, 0, n);
		memset(vals, 0, n * sizeof *vals);
		if (bits_out)
			*bits_out = 0;
		return 0;
	}
	return CORRUPT(c, "2.0 nullable encoding without a variant");
}

/* A decoded 2.0 Binary: per value end offsets, bytes, validity. */
typedef struct bin20 {
	size_t n;
	uint64_t *ends; /* n+1, ends[0] = 0 */
	uint8_t *valid; /* n */
	const uint8_t *bytes;
	size_t nbytes;
	uint8_t *owned; /* decompressed bytes */
} bin20;

static void bin20_free(bin20 *b)
{
	lv__free(b->ends);
	lv__free(b->valid);
	lv__free(b->owned);
	b->ends = NULL;
	b->valid = NULL;
	b->owned = NULL;
}

/* A 2.0 Binary's parts: the indices' encoding, the null adjustment and the bytes (flat{8},
 * decompressed into *owned when compressed: the caller frees it). */
typedef struct bin20_parts {
	lv__pb_field indices;
	uint64_t adj;
	const uint8_t *bytes;
	size_t nbytes;
	uint8_t *owned;
} bin20_parts;

static int binary20_parts(lv__lf_dctx *c, const uint8_t *p, size_t plen, bin20_parts *o)
{
	lv__pb_field fb = { 0 };
	memset(o, 0, sizeof *o);
	if (lv__lf_pb_find(p, plen, 1, &o->indices) != 1 || lv__lf_pb_find(p, plen, 2, &fb) != 1)
		return CORRUPT(c, "2.0 binary without indices or bytes");
	lv__pb r = lv__pb_make(p, plen);
	lv__pb_field f = { 0 };
	int rc;
	while ((rc = lv__pb_next(&r, &f)) == 1)
		if (f.num == 3 && f.wire == LV_PB_VARINT)
			o->adj = f.u;
	if (rc < 0)
		return CORRUPT(c, "malformed 2.0 binary encoding");
	/* bytes: ArrayEncoding.flat{8} */
	lv__pb_field bf = { 0 };
	if (lv__lf_oneof(fb.data, fb.len, &bf) != 1)
		return UNSUP(c, "unsupported 2.0 binary bytes encoding '%s'",
			     ae20_name(lv__lf_oneof(fb.data, fb.len, &bf)));
	uint64_t bits;
	LV_TRY(flat20(c, bf.data, bf.len, &bits, &o->bytes, &o->nbytes, &o->owned));
	if (bits != 8) {
		lv__free(o->owned);
		o->owned = NULL;
		return UNSUP(c, "unsupported 2.0 binary bytes of %llu bits", (unsigned long long)bits);
	}
	return 0;
}

/* indices[i] = end offset, plus null_adjustment for null rows (docs/lance-reference.md, "2.0
 * page encodings"): value i's end into *end and whether it is null; checked against the
 * previous end and the bytes. */
static int binary20_end(lv__lf_dctx *c, const bin20_parts *o, uint64_t v, uint64_t prev,
			uint64_t *end, bool *null)
{
	*null = o->adj && v >= o->adj;
	if (*null)
		v -= o->adj;
	if (v < prev || v > o->nbytes)
		return CORRUPT(c, "2.0 binary offset %llu out of order or past %zu bytes",
			       (unsigned long long)v, o->nbytes);
	*end = v;
	return 0;
}

static int binary20(lv__lf_dctx *c, const uint8_t *p, size_t plen, size_t n, bin20 *out, int depth)
{
	bin20_parts o;
	memset(out, 0, sizeof *out);
	LV_TRY(binary20_parts(c, p, plen, &o));
	out->bytes = o.bytes;
	out->nbytes = o.nbytes;
	out->owned = o.owned;
	out->n = n;
	out->ends = lv__calloc(n + 1, sizeof *out->ends);
	out->valid = lv__malloc(n ? n : 1);
	if (!out->ends || !out->valid) {
		bin20_free(out);
		return NOMEM(c);
	}
	memset(out->valid, 1, n);
	int rc = fixed20(c, o.indices.data, o.indices.len, n, out->ends + 1, NULL, NULL, depth + 1);
	for (size_t i = 0; i < n && rc == 0; i++) {
		bool null = false;
		rc = binary20_end(c, &o, out->ends[i + 1], out->ends[i], &out->ends[i + 1], &null);
		if (null)
			out->valid[i] = 0;
	}
	if (rc < 0)
		bin20_free(out);
	return rc;
}

/*
 * A 2.0 Binary page straight into the column: its indices are decoded into the column's
 * own offsets (the page's n slots from row0+1), then each is checked and replaced by the
 * column's end offset as its bytes are copied; no per-page arrays.
 */
static int binary20_column(lv__lf_dctx *c, const uint8_t *p, size_t plen)
{
	size_t n = c->nrows;
	bin20_parts o;
	LV_TRY(binary20_parts(c, p, plen, &o));
	uint64_t *e = c->cb->offs + c->row0 + 1, prev = 0;
	int rc = fixed20(c, o.indices.data, o.indices.len, n, e, NULL, NULL, 1);
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t end = prev;
		bool null = false;
		rc = binary20_end(c, &o, e[i], prev, &end, &null);
		if (rc == 0)
			rc = null ? lv__lf_col_put_null(c, c->row0 + i)
				  : lv__lf_col_put_str(c, c->row0 + i, o.bytes + prev,
						       (size_t)(end - prev));
		prev = end;
	}
	lv__free(o.owned);
	return rc;
}

static int strings20(lv__lf_dctx *c, const uint8_t *p, size_t plen)
{
	lv__pb_field f = { 0 };
	int k = lv__lf_oneof(p, plen, &f);
	size_t n = c->nrows;
	int rc = 0;
	if (k == 6)
		return binary20_column(c, f.data, f.len);
	if (k == 7) {
		/* dictionary{indices (0 = null, k = item k-1), items: binary, num_dictionary_items} */
		lv__pb_field fi = { 0 }, fit = { 0 }, bi = { 0 };
		uint64_t nitems = 0;
		if (lv__lf_pb_find(f.data, f.len, 1, &fi) != 1 || lv__lf_pb_find(f.data, f.len, 2, &fit) != 1)
			return CORRUPT(c, "2.0 dictionary without indices or items");
		lv__pb r = lv__pb_make(f.data, f.len);
		lv__pb_field g = { 0 };
		while ((rc = lv__pb_next(&r, &g)) == 1)
			if (g.num == 3 && g.wire == LV_PB_VARINT)
				nitems = g.u;
		if (rc < 0)
			return CORRUPT(c, "malformed 2.0 dictionary");
		int ik = lv__lf_oneof(fit.data, fit.len, &bi);
		if (ik != 6)
			return UNSUP(c, "unsupported 2.0 dictionary items encoding '%s'", ae20_name(ik));
		uint64_t *idx = lv__calloc(n ? n : 1, sizeof *idx);
		if (!idx)
			return NOMEM(c);
		rc = fixed20(c, fi.data, fi.len, n, idx, NULL, NULL, 0);
		bin20 b = { 0 };
		if (rc == 0 && nitems > (uint64_t)c->nrows + ((uint64_t)1 << 20))
			rc = CORRUPT(c, "2.0 dictionary claims %llu items", (unsigned long long)nitems);
		if (rc == 0)
			rc = binary20(c, bi.data, bi.len, (size_t)nitems, &b, 0);
		for (size_t i = 0; i < n && rc == 0; i++) {
			uint64_t x = idx[i];
			if (x == 0)
				rc = lv__lf_col_put_null(c, c->row0 + i);
			else if (x > nitems)
				rc = CORRUPT(c, "dictionary index %llu past %llu items",
					     (unsigned long long)x, (unsigned long long)nitems);
			else if (!b.valid[x - 1])
				rc = lv__lf_col_put_null(c, c->row0 + i);
			else
				rc = lv__lf_col_put_str(c, c->row0 + i, b.bytes + b.ends[x - 1],
						    (size_t)(b.ends[x] - b.ends[x - 1]));
		}
		bin20_free(&b);
		lv__free(idx);
		return rc;
	}
	if (k < 0)
		return CORRUPT(c, "malformed 2.0 array encoding");
	return UNSUP(c, "unsupported 2.0 string encoding '%s'", ae20_name(k));
}

/*
 * A 2.0 FixedSizeList<Float32> page: nullable{no_nulls|some_nulls{validity, values:
 * fixed_size_list{dimension, items}}} or all_nulls; the items are n*dimension floats,
 * themselves nullable (a null row's items are null too [observed, Lance 12.0.0]).  A
 * null item in a valid row is something lv_column cannot hold: unsupported.
 */
static int fsl20(lv__lf_dctx *c, const uint8_t *p, size_t plen)
{
	lv__lf_colbuf *b = c->cb;
	size_t n = c->nrows, dim = b->dim;
	lv__pb_field f = { 0 }, g = { 0 }, vals = { 0 }, vf = { 0 }, items = { 0 };
	if (lv__lf_oneof(p, plen, &f) != 2)
		return UNSUP(c, "unsupported 2.0 vector encoding");
	int nk = lv__lf_oneof(f.data, f.len, &g);
	if (nk == 3) {
		for (size_t i = 0; i < n; i++)
			LV_TRY(lv__lf_col_put_null(c, c->row0 + i));
		return 0;
	}
	if ((nk != 1 && nk != 2) || lv__lf_pb_find(g.data, g.len, nk == 1 ? 1 : 2, &vals) != 1 ||
	    (nk == 2 && lv__lf_pb_find(g.data, g.len, 1, &vf) != 1))
		return CORRUPT(c, "malformed 2.0 nullable vector encoding");
	uint64_t d = 0;
	if (lv__lf_oneof(vals.data, vals.len, &f) != 3 || lv__lf_varint_field(f.data, f.len, 1, &d) < 0 ||
	    lv__lf_pb_find(f.data, f.len, 2, &items) != 1)
		return UNSUP(c, "unsupported 2.0 vector values encoding");
	if (d != dim)
		return CORRUPT(c, "2.0 fixed_size_list of dimension %llu, schema says %zu",
			       (unsigned long long)d, dim);
	size_t nd = n * dim > 0 ? n * dim : 1;
	uint64_t *v = lv__calloc(nd, sizeof *v), *rowv = NULL;
	uint8_t *iv = lv__malloc(nd);
	int rc = v && iv ? 0 : NOMEM(c);
	unsigned bits = 0;
	if (rc == 0) {
		memset(iv, 1, n * dim);
		rc = fixed20(c, items.data, items.len, n * dim, v, iv, &bits, 1);
	}
	if (rc == 0 && bits != 32 && bits != 0)
		rc = UNSUP(c, "vector items of %u bits", bits);
	if (rc == 0 && nk == 2 && !(rowv = lv__calloc(n ? n : 1, sizeof *rowv)))
		rc = NOMEM(c);
	if (rc == 0 && nk == 2)
		rc = fixed20(c, vf.data, vf.len, n, rowv, NULL, NULL, 1);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (rowv && !rowv[i]) {
			rc = lv__lf_col_put_null(c, c->row0 + i);
			continue;
		}
		for (size_t k = 0; k < dim && rc == 0; k++) {
			uint32_t x = (uint32_t)v[i * dim + k];
			if (!iv[i * dim + k])
				rc = UNSUP(c, "unsupported vector with null items");
			memcpy(&b->f32[(c->row0 + i) * dim + k], &x, sizeof x);
		}
	}
	lv__free(v);
	lv__free(iv);
	lv__free(rowv);
	return rc;
}

int lv__lf_decode_page20(lv__lf_dctx *c, const uint8_t *enc, size_t len)
{
	lv__lf_colbuf *b = c->cb;
	size_t n = c->nrows;
	if (b->type == LV_COL_UTF8)
		return strings20(c, enc, len);
	uint8_t *valid = b->nullable ? b->valid + c->row0 : NULL;
	unsigned bits = 0;
	if (b->type == LV_COL_BOOL) {
		uint64_t *tmp = lv__calloc(n ? n : 1, sizeof *tmp);
		if (!tmp)
			return NOMEM(c);
		int rc = fixed20(c, enc, len, n, tmp, valid, &bits, 0);
		if (rc == 0 && bits != 1 && bits != 0)
			rc = UNSUP(c, "boolean column stored with %u bits per value", bits);
		for (size_t i = 0; i < n && rc == 0; i++)
			b->bools[c->row0 + i] = (uint8_t)(tmp[i] && (!valid || valid[i]));
		lv__free(tmp);
		return rc;
	}
	if (b->type == LV_COL_FSL_FLOAT32)
		return fsl20(c, enc, len);
	uint64_t *vals = b->u64 + c->row0;
	unsigned w = lv__lf_type_width(b->type) * 8;
	LV_TRY(fixed20(c, enc, len, n, vals, valid, &bits, 0));
	if (bits != w && bits != 0)
		return UNSUP(c, "%u-bit column stored with %u bits per value", w, bits);
	for (size_t i = 0; i < n; i++) {
		if (valid && !valid[i])
			vals[i] = 0;
		else
			lv__lf_col_put_fixed(b, c->row0 + i, vals[i]);
	}
	return 0;
}
