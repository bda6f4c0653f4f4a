/*
 * Page decoders for Lance file format 2.0 (ArrayEncoding) and 2.1 (PageLayout).
 *
 * Every size and offset comes from the file and is checked before use.  A
 * structure we recognise but do not implement is LV_EUNSUPPORTED naming the
 * encoding; anything inconsistent is LV_ECORRUPT.  Values of null rows are
 * stored as 0 / empty so that results never depend on garbage in the file.
 */
#include <stdio.h>
#include <string.h>

#include "lancefile/lf_internal.h"

#define MAX_DEPTH 8
#define FSST_ESC 255

int lf_perr(lf_dctx *c, int code, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lv__err(c->err, code, "file %s: column '%s' page %zu: %s", c->file, c->col, c->page,
		       msg);
}

#define CORRUPT(c, ...) lf_perr((c), LV_ECORRUPT, __VA_ARGS__)
#define UNSUP(c, ...) lf_perr((c), LV_EUNSUPPORTED, __VA_ARGS__)
#define NOMEM(c) lf_perr((c), LV_ENOMEM, "out of memory")

int lf_pb_find(const uint8_t *p, size_t n, uint32_t num, lv_pb_field *out)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	int rc, found = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1) {
		if (f.num != num)
			continue;
		if (f.wire != LV_PB_LEN)
			return -1;
		*out = f; /* last one wins, as for a protobuf oneof / singular field */
		found = 1;
	}
	return rc < 0 ? -1 : found;
}

int lf_any_unwrap(const uint8_t *p, size_t n, const char *want_suffix, const uint8_t **val,
		  size_t *vlen, char *got_url, size_t got_cap)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	const uint8_t *url = NULL;
	size_t url_len = 0;
	int rc;
	*val = (const uint8_t *)"";
	*vlen = 0;
	got_url[0] = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1) {
		if (f.wire != LV_PB_LEN)
			continue;
		if (f.num == 1) {
			url = f.data;
			url_len = f.len;
		} else if (f.num == 2) {
			*val = f.data;
			*vlen = f.len;
		}
	}
	if (rc < 0)
		return LV_ECORRUPT;
	size_t k = url_len < got_cap - 1 ? url_len : got_cap - 1;
	for (size_t i = 0; i < k; i++)
		got_url[i] = (url[i] >= 0x20 && url[i] < 0x7f) ? (char)url[i] : '?';
	got_url[k] = 0;
	/* compare only the part after the last '/' (as prost's Any::to_msg does) */
	size_t s = 0;
	for (size_t i = 0; i < url_len; i++)
		if (url[i] == '/')
			s = i + 1;
	size_t wl = strlen(want_suffix);
	if (url_len - s != wl || memcmp(url + s, want_suffix, wl) != 0)
		return LV_EUNSUPPORTED;
	return 0;
}

/* Returns the number of the (last) LEN field of a oneof message: 0 none, -1 malformed. */
static int oneof(const uint8_t *p, size_t n, lv_pb_field *out)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	int rc, which = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1)
		if (f.wire == LV_PB_LEN) {
			*out = f;
			which = (int)f.num;
		}
	return rc < 0 ? -1 : which;
}

/* ---- column output ---- */

int lf_col_put_str(lf_dctx *c, size_t row, const uint8_t *p, size_t n)
{
	lf_colbuf *b = c->cb;
	if (!b->data.oom && n < b->data.cap - b->data.len) { /* room reserved: just copy */
		memcpy(b->data.ptr + b->data.len, p, n);
		b->data.len += n;
		b->data.ptr[b->data.len] = 0;
		b->offs[row + 1] = b->data.len;
		return 0;
	}
	int rc = lv_dbuf_add(&b->data, p, n);
	if (rc < 0)
		return lf_perr(c, rc, rc == LV_ELIMIT ? "decoded strings exceed the size limit"
						      : "out of memory");
	b->offs[row + 1] = b->data.len;
	return 0;
}

int lf_col_put_null(lf_dctx *c, size_t row)
{
	lf_colbuf *b = c->cb;
	if (!b->nullable)
		return CORRUPT(c, "null at row %zu of a non-nullable column", row);
	b->valid[row] = 0;
	if (b->type == LV_COL_UTF8)
		b->offs[row + 1] = b->data.len;
	else if (b->type == LV_COL_BOOL)
		b->bools[row] = 0;
	else
		b->u64[row] = 0;
	return 0;
}

static int need_buf(lf_dctx *c, uint64_t idx, const uint8_t **p, size_t *n)
{
	if (idx >= c->nbufs)
		return CORRUPT(c, "buffer index %llu out of range (%zu buffers)",
			       (unsigned long long)idx, c->nbufs);
	*p = c->buf[idx];
	*n = c->buflen[idx];
	return 0;
}

static inline uint64_t load_le(const uint8_t *p, unsigned bytes)
{
	switch (bytes) {
	case 8: return lv_le64(p);
	case 4: return lv_le32(p);
	case 2: return lv_le16(p);
	case 1: return p[0];
	default: break;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* n values of width w (bytes) into out; each width gets its own constant-width loop. */
static void load_le_n(const uint8_t *p, unsigned w, size_t n, uint64_t *out)
{
	switch (w) {
	case 8: for (size_t i = 0; i < n; i++) out[i] = lv_le64(p + 8 * i); break;
	case 4: for (size_t i = 0; i < n; i++) out[i] = lv_le32(p + 4 * i); break;
	case 2: for (size_t i = 0; i < n; i++) out[i] = lv_le16(p + 2 * i); break;
	case 1: for (size_t i = 0; i < n; i++) out[i] = p[i]; break;
	default: for (size_t i = 0; i < n; i++) out[i] = load_le(p + i * w, w); break;
	}
}

void lf_fastlanes_unpack(unsigned t, unsigned w, const uint8_t *in, uint64_t *out)
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
			uint64_t v = load_le(in + (size_t)(lanes * k + lane) * tb, tb) >> sh;
			if (sh + w > t)
				v |= load_le(in + (size_t)(lanes * (k + 1) + lane) * tb, tb) << (t - sh);
			out[order[row / 8] * 16 + (row % 8) * 128 + lane] = v & mask;
		}
	}
}

/* ======================= 2.0: ArrayEncoding ======================= */

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

/* Parses Flat{bits, buffer, compression} and resolves its page buffer. */
static int flat20(lf_dctx *c, const uint8_t *p, size_t n, uint64_t *bits, const uint8_t **data,
		  size_t *dlen)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	int rc;
	bool have_buf = false;
	uint64_t idx = 0, type = 0;
	*bits = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wire == LV_PB_VARINT) {
			*bits = f.u;
		} else if (f.num == 2 && f.wire == LV_PB_LEN) {
			have_buf = true;
			lv_pb br = lv_pb_sub(&f);
			lv_pb_field g = { 0 };
			while ((rc = lv_pb_next(&br, &g)) == 1) {
				if (g.num == 1 && g.wire == LV_PB_VARINT)
					idx = g.u;
				else if (g.num == 2 && g.wire == LV_PB_VARINT)
					type = g.u;
			}
			if (rc < 0)
				return CORRUPT(c, "malformed 2.0 buffer reference");
		} else if (f.num == 3 && f.wire == LV_PB_LEN) {
			lv_pb_field s = { 0 };
			char scheme[32] = "?";
			if (lf_pb_find(f.data, f.len, 1, &s) == 1) {
				size_t k = s.len < sizeof scheme - 1 ? s.len : sizeof scheme - 1;
				memcpy(scheme, s.data, k);
				scheme[k] = 0;
			}
			if (scheme[0] && strcmp(scheme, "none") != 0)
				return UNSUP(c, "unsupported 2.0 flat compression '%s'", scheme);
		}
	}
	if (rc < 0 || !have_buf)
		return CORRUPT(c, "malformed 2.0 flat encoding");
	if (type != 0)
		return UNSUP(c, "unsupported 2.0 buffer type %llu (only page buffers)",
			     (unsigned long long)type);
	return need_buf(c, idx, data, dlen);
}

/*
 * Decodes an ArrayEncoding yielding n fixed-width values (a bitmap gives 0/1).
 * valid (may be NULL: then nulls are an error) is ANDed with the validity found.
 */
static int fixed20(lf_dctx *c, const uint8_t *p, size_t plen, size_t n, uint64_t *vals,
		   uint8_t *valid, unsigned *bits_out, int depth)
{
	lv_pb_field f = { 0 }, g = { 0 };
	if (depth > MAX_DEPTH)
		return CORRUPT(c, "2.0 encoding nested too deeply");
	int k = oneof(p, plen, &f);
	if (k < 0)
		return CORRUPT(c, "malformed 2.0 array encoding");
	if (k == 1) {
		uint64_t bits;
		const uint8_t *d;
		size_t dl;
		LV_TRY(flat20(c, f.data, f.len, &bits, &d, &dl));
		if (bits == 1) {
			if (dl < (n + 7) / 8)
				return CORRUPT(c, "bitmap buffer has %zu bytes for %zu values", dl, n);
			for (size_t i = 0; i < n; i++)
				vals[i] = (d[i / 8] >> (i % 8)) & 1;
		} else if (bits == 8 || bits == 16 || bits == 32 || bits == 64) {
			size_t w = (size_t)bits / 8;
			if (dl / w < n)
				return CORRUPT(c, "value buffer has %zu bytes for %zu values of %u bits",
					       dl, n, (unsigned)bits);
			for (size_t i = 0; i < n; i++)
				vals[i] = load_le(d + i * w, (unsigned)w);
		} else {
			return UNSUP(c, "unsupported 2.0 flat bits_per_value %llu",
				     (unsigned long long)bits);
		}
		if (bits_out)
			*bits_out = (unsigned)bits;
		return 0;
	}
	if (k != 2)
		return UNSUP(c, "unsupported 2.0 array encoding '%s'", ae20_name(k));
	int nk = oneof(f.data, f.len, &g);
	if (nk == 1) { /* no_nulls{values} */
		lv_pb_field v = { 0 };
		if (lf_pb_find(g.data, g.len, 1, &v) != 1)
			return CORRUPT(c, "2.0 no_nulls without values");
		return fixed20(c, v.data, v.len, n, vals, valid, bits_out, depth + 1);
	}
	if (nk == 2) { /* some_nulls{validity, values} */
		lv_pb_field vf = { 0 }, vv = { 0 };
		if (lf_pb_find(g.data, g.len, 1, &vf) != 1 || lf_pb_find(g.data, g.len, 2, &vv) != 1)
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
		free(tmp);
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
} bin20;

static void bin20_free(bin20 *b)
{
	free(b->ends);
	free(b->valid);
	b->ends = NULL;
	b->valid = NULL;
}

static int binary20(lf_dctx *c, const uint8_t *p, size_t plen, size_t n, bin20 *out, int depth)
{
	lv_pb_field fi = { 0 }, fb = { 0 };
	uint64_t adj = 0;
	memset(out, 0, sizeof *out);
	if (lf_pb_find(p, plen, 1, &fi) != 1 || lf_pb_find(p, plen, 2, &fb) != 1)
		return CORRUPT(c, "2.0 binary without indices or bytes");
	lv_pb r = lv_pb_make(p, plen);
	lv_pb_field f = { 0 };
	int rc;
	while ((rc = lv_pb_next(&r, &f)) == 1)
		if (f.num == 3 && f.wire == LV_PB_VARINT)
			adj = f.u;
	if (rc < 0)
		return CORRUPT(c, "malformed 2.0 binary encoding");
	/* bytes: ArrayEncoding.flat{8} */
	lv_pb_field bf = { 0 };
	if (oneof(fb.data, fb.len, &bf) != 1)
		return UNSUP(c, "unsupported 2.0 binary bytes encoding '%s'",
			     ae20_name(oneof(fb.data, fb.len, &bf)));
	uint64_t bits;
	LV_TRY(flat20(c, bf.data, bf.len, &bits, &out->bytes, &out->nbytes));
	if (bits != 8)
		return UNSUP(c, "unsupported 2.0 binary bytes of %llu bits", (unsigned long long)bits);
	out->n = n;
	out->ends = lv__calloc(n + 1, sizeof *out->ends);
	out->valid = lv__malloc(n ? n : 1);
	if (!out->ends || !out->valid) {
		bin20_free(out);
		return NOMEM(c);
	}
	memset(out->valid, 1, n);
	rc = fixed20(c, fi.data, fi.len, n, out->ends + 1, NULL, NULL, depth + 1);
	if (rc < 0) {
		bin20_free(out);
		return rc;
	}
	/* indices[i] = end offset, plus null_adjustment for null rows (LANCE-FILE-V2 §6.2) */
	for (size_t i = 0; i < n; i++) {
		uint64_t v = out->ends[i + 1];
		if (adj && v >= adj) {
			v -= adj;
			out->valid[i] = 0;
		}
		if (v < out->ends[i] || v > out->nbytes) {
			bin20_free(out);
			return CORRUPT(c, "2.0 binary offset %llu out of order or past %zu bytes",
				       (unsigned long long)v, out->nbytes);
		}
		out->ends[i + 1] = v;
	}
	return 0;
}

static int strings20(lf_dctx *c, const uint8_t *p, size_t plen)
{
	lv_pb_field f = { 0 };
	int k = oneof(p, plen, &f);
	size_t n = c->nrows;
	int rc = 0;
	if (k == 6) {
		bin20 b;
		LV_TRY(binary20(c, f.data, f.len, n, &b, 0));
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = b.valid[i] ? lf_col_put_str(c, c->row0 + i, b.bytes + b.ends[i],
							 (size_t)(b.ends[i + 1] - b.ends[i]))
					: lf_col_put_null(c, c->row0 + i);
		bin20_free(&b);
		return rc;
	}
	if (k == 7) {
		/* dictionary{indices (0 = null, k = item k-1), items: binary, num_dictionary_items} */
		lv_pb_field fi = { 0 }, fit = { 0 }, bi = { 0 };
		uint64_t nitems = 0;
		if (lf_pb_find(f.data, f.len, 1, &fi) != 1 || lf_pb_find(f.data, f.len, 2, &fit) != 1)
			return CORRUPT(c, "2.0 dictionary without indices or items");
		lv_pb r = lv_pb_make(f.data, f.len);
		lv_pb_field g = { 0 };
		while ((rc = lv_pb_next(&r, &g)) == 1)
			if (g.num == 3 && g.wire == LV_PB_VARINT)
				nitems = g.u;
		if (rc < 0)
			return CORRUPT(c, "malformed 2.0 dictionary");
		int ik = oneof(fit.data, fit.len, &bi);
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
				rc = lf_col_put_null(c, c->row0 + i);
			else if (x > nitems)
				rc = CORRUPT(c, "dictionary index %llu past %llu items",
					     (unsigned long long)x, (unsigned long long)nitems);
			else if (!b.valid[x - 1])
				rc = lf_col_put_null(c, c->row0 + i);
			else
				rc = lf_col_put_str(c, c->row0 + i, b.bytes + b.ends[x - 1],
						    (size_t)(b.ends[x] - b.ends[x - 1]));
		}
		bin20_free(&b);
		free(idx);
		return rc;
	}
	if (k < 0)
		return CORRUPT(c, "malformed 2.0 array encoding");
	return UNSUP(c, "unsupported 2.0 string encoding '%s'", ae20_name(k));
}

int lf_decode_page20(lf_dctx *c, const uint8_t *enc, size_t len)
{
	lf_colbuf *b = c->cb;
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
		free(tmp);
		return rc;
	}
	uint64_t *vals = b->u64 + c->row0;
	LV_TRY(fixed20(c, enc, len, n, vals, valid, &bits, 0));
	if (bits != 64 && bits != 0)
		return UNSUP(c, "64-bit integer column stored with %u bits per value", bits);
	if (valid)
		for (size_t i = 0; i < n; i++)
			if (!valid[i])
				vals[i] = 0;
	return 0;
}

/* ======================= 2.1: PageLayout ======================= */

enum { CE_FLAT = 1, CE_VARIABLE = 2, CE_CONSTANT = 3, CE_OOL_BITPACK = 4, CE_INLINE_BITPACK = 5,
       CE_FSST = 6, CE_DICTIONARY = 7, CE_GENERAL = 10 };

static const char *ce_name(int k)
{
	static const char *const names[] = {
		"?", "flat", "variable", "constant", "out_of_line_bitpacking", "inline_bitpacking",
		"fsst", "dictionary", "rle", "byte_stream_split", "general", "fixed_size_list",
		"packed_struct", "variable_packed_struct"
	};
	return k > 0 && k < (int)(sizeof names / sizeof names[0]) ? names[k] : "unknown";
}

/* A parsed CompressiveEncoding restricted to the shapes we decode. */
typedef struct cenc {
	int kind;
	uint64_t bits;       /* flat: bits; bitpacking: uncompressed bits; variable: offset bits */
	uint64_t inner_bits; /* out_of_line: packed width; fsst: offset bits of the inner variable */
	const uint8_t *symtab;
	size_t symtab_len;
} cenc;

static int varint_field(const uint8_t *p, size_t n, uint32_t num, uint64_t *v)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	int rc;
	while ((rc = lv_pb_next(&r, &f)) == 1)
		if (f.num == num && f.wire == LV_PB_VARINT)
			*v = f.u;
	return rc;
}

static int has_field(const uint8_t *p, size_t n, uint32_t num)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	int rc, found = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1)
		if (f.num == num)
			found = 1;
	return rc < 0 ? -1 : found;
}

static int parse_flat_bits(lf_dctx *c, const lv_pb_field *ff, uint64_t *bits)
{
	*bits = 0;
	if (varint_field(ff->data, ff->len, 1, bits) < 0)
		return CORRUPT(c, "malformed 2.1 flat encoding");
	int h = has_field(ff->data, ff->len, 2);
	if (h < 0)
		return CORRUPT(c, "malformed 2.1 flat encoding");
	if (h)
		return UNSUP(c, "unsupported 2.1 flat buffer compression (zstd/lz4)");
	return 0;
}

/* Parses a CompressiveEncoding message body (the oneof wrapper). */
static int parse_cenc(lf_dctx *c, const uint8_t *p, size_t n, cenc *ce, int depth)
{
	lv_pb_field f = { 0 }, g = { 0 }, h = { 0 };
	memset(ce, 0, sizeof *ce);
	if (depth > MAX_DEPTH)
		return CORRUPT(c, "2.1 encoding nested too deeply");
	int k = oneof(p, n, &f);
	if (k < 0)
		return CORRUPT(c, "malformed 2.1 compressive encoding");
	if (k == 0)
		return CORRUPT(c, "empty 2.1 compressive encoding");
	ce->kind = k;
	switch (k) {
	case CE_FLAT:
		LV_TRY(parse_flat_bits(c, &f, &ce->bits));
		if (ce->bits != 1 && ce->bits != 8 && ce->bits != 16 && ce->bits != 32 && ce->bits != 64)
			return UNSUP(c, "unsupported 2.1 flat bits_per_value %llu",
				     (unsigned long long)ce->bits);
		return 0;
	case CE_VARIABLE: {
		if (lf_pb_find(f.data, f.len, 1, &g) != 1)
			return CORRUPT(c, "2.1 variable without offsets");
		if (has_field(f.data, f.len, 2) == 1)
			return UNSUP(c, "unsupported 2.1 variable values compression (zstd/lz4)");
		cenc off;
		LV_TRY(parse_cenc(c, g.data, g.len, &off, depth + 1));
		if (off.kind != CE_FLAT || (off.bits != 32 && off.bits != 64))
			return UNSUP(c, "unsupported 2.1 variable offsets encoding '%s'",
				     ce_name(off.kind));
		ce->bits = off.bits;
		return 0;
	}
	case CE_INLINE_BITPACK:
		if (varint_field(f.data, f.len, 1, &ce->bits) < 0)
			return CORRUPT(c, "malformed 2.1 inline_bitpacking");
		if (has_field(f.data, f.len, 2) == 1)
			return UNSUP(c, "unsupported 2.1 inline_bitpacking values compression");
		if (ce->bits != 8 && ce->bits != 16 && ce->bits != 32 && ce->bits != 64)
			return UNSUP(c, "unsupported inline_bitpacking width %llu",
				     (unsigned long long)ce->bits);
		return 0;
	case CE_OOL_BITPACK: {
		if (varint_field(f.data, f.len, 1, &ce->bits) < 0)
			return CORRUPT(c, "malformed 2.1 out_of_line_bitpacking");
		if (ce->bits != 8 && ce->bits != 16 && ce->bits != 32 && ce->bits != 64)
			return UNSUP(c, "unsupported out_of_line_bitpacking width %llu",
				     (unsigned long long)ce->bits);
		if (lf_pb_find(f.data, f.len, 3, &g) != 1)
			return CORRUPT(c, "out_of_line_bitpacking without values");
		if (oneof(g.data, g.len, &h) != CE_FLAT)
			return UNSUP(c, "unsupported out_of_line_bitpacking values encoding '%s'",
				     ce_name(oneof(g.data, g.len, &h)));
		LV_TRY(parse_flat_bits(c, &h, &ce->inner_bits));
		if (ce->inner_bits > ce->bits)
			return CORRUPT(c, "out_of_line_bitpacking width %llu over %llu",
				       (unsigned long long)ce->inner_bits, (unsigned long long)ce->bits);
		return 0;
	}
	case CE_FSST: {
		lv_pb_field st = { 0 };
		if (lf_pb_find(f.data, f.len, 1, &st) < 0 || lf_pb_find(f.data, f.len, 2, &g) != 1)
			return CORRUPT(c, "fsst without values");
		if (lf_pb_find(f.data, f.len, 1, &st) != 1)
			return CORRUPT(c, "fsst without a symbol table");
		cenc inner;
		LV_TRY(parse_cenc(c, g.data, g.len, &inner, depth + 1));
		if (inner.kind != CE_VARIABLE)
			return UNSUP(c, "unsupported fsst inner encoding '%s'", ce_name(inner.kind));
		ce->inner_bits = inner.bits;
		ce->symtab = st.data;
		ce->symtab_len = st.len;
		return 0;
	}
	default:
		return UNSUP(c, "unsupported 2.1 compressive encoding '%s'", ce_name(k));
	}
}

/* ---- FSST ---- */

typedef struct fsst {
	bool on;
	unsigned nsym;
	uint64_t sym[256];
	uint8_t len[256];
} fsst;

static int fsst_init(lf_dctx *c, const uint8_t *t, size_t n, fsst *f)
{
	if (n < 8)
		return CORRUPT(c, "fsst symbol table of %zu bytes", n);
	uint64_t hdr = lv_le64(t);
	if ((hdr >> 32) != 0x46535354u)
		return CORRUPT(c, "fsst symbol table without magic");
	f->on = (hdr >> 24) & 1;
	f->nsym = (unsigned)(hdr & 0xff);
	if (n < 8 + (size_t)f->nsym * 9)
		return CORRUPT(c, "fsst symbol table too short for %u symbols", f->nsym);
	for (unsigned i = 0; i < f->nsym; i++) {
		f->sym[i] = lv_le64(t + 8 + 8 * i);
		f->len[i] = t[8 + 8 * f->nsym + i];
		if (f->len[i] < 1 || f->len[i] > 8)
			return CORRUPT(c, "fsst symbol %u has length %u", i, f->len[i]);
	}
	return 0;
}

/* Decompresses one FSST string straight into the column at `row`. */
static int fsst_put(lf_dctx *c, const fsst *f, size_t row, const uint8_t *in, size_t n)
{
	if (!f->on)
		return lf_col_put_str(c, row, in, n);
	lv_dbuf *d = &c->cb->data;
	size_t i = 0;
	while (i < n) {
		uint8_t code = in[i++];
		int rc;
		if (code == FSST_ESC) {
			if (i >= n)
				return CORRUPT(c, "fsst string ends in an escape");
			rc = lv_dbuf_addc(d, in[i++]);
		} else {
			if (code >= f->nsym)
				return CORRUPT(c, "fsst code %u past %u symbols", code, f->nsym);
			uint8_t s[8];
			for (unsigned b = 0; b < 8; b++)
				s[b] = (uint8_t)(f->sym[code] >> (8 * b));
			rc = lv_dbuf_add(d, s, f->len[code]);
		}
		if (rc < 0)
			return lf_perr(c, rc, rc == LV_ELIMIT ? "decoded strings exceed the size limit"
							      : "out of memory");
	}
	c->cb->offs[row + 1] = d->len;
	return 0;
}

/* ---- 2.1 building blocks ---- */

/* Checks a variable buffer ((cnt+1) offsets of ob bits, relative to the buffer). */
static int var_offsets(lf_dctx *c, const uint8_t *p, size_t n, size_t cnt, uint64_t ob)
{
	size_t w = (size_t)ob / 8;
	if (n / w < cnt + 1)
		return CORRUPT(c, "variable buffer of %zu bytes too short for %zu offsets", n, cnt + 1);
	uint64_t prev = load_le(p, (unsigned)w);
	if (prev > n)
		return CORRUPT(c, "variable offset past its buffer");
	for (size_t i = 1; i <= cnt; i++) {
		uint64_t o = load_le(p + i * w, (unsigned)w);
		if (o < prev || o > n)
			return CORRUPT(c, "variable offsets out of order or past the buffer");
		prev = o;
	}
	return 0;
}

/* Decodes fixed-width values (flat or inline bitpacking) of one chunk buffer. */
static int fixed21(lf_dctx *c, const cenc *ce, const uint8_t *p, size_t n, size_t cnt,
		   uint64_t *out)
{
	if (ce->kind == CE_FLAT) {
		if (ce->bits == 1) {
			if (n < (cnt + 7) / 8)
				return CORRUPT(c, "bitmap of %zu bytes for %zu values", n, cnt);
			for (size_t i = 0; i < cnt; i++)
				out[i] = (p[i / 8] >> (i % 8)) & 1;
			return 0;
		}
		size_t w = (size_t)ce->bits / 8;
		if (n / w < cnt)
			return CORRUPT(c, "flat buffer of %zu bytes for %zu values", n, cnt);
		load_le_n(p, (unsigned)w, cnt, out);
		return 0;
	}
	if (ce->kind == CE_INLINE_BITPACK) {
		/* chunks of 1024 values: [width word][1024*width/T words] each */
		unsigned t = (unsigned)ce->bits, tb = t / 8;
		uint64_t *blk = lv__malloc(1024 * sizeof *blk);
		if (!blk)
			return NOMEM(c);
		size_t pos = 0, done = 0;
		int rc = 0;
		while (done < cnt) {
			if (n - pos < tb) {
				rc = CORRUPT(c, "inline_bitpacking block truncated");
				break;
			}
			uint64_t w = load_le(p + pos, tb);
			pos += tb;
			if (w > t) {
				rc = CORRUPT(c, "inline_bitpacking width %llu over %u",
					     (unsigned long long)w, t);
				break;
			}
			size_t need = (size_t)(1024 * w / 8);
			if (n - pos < need) {
				rc = CORRUPT(c, "inline_bitpacking block of %zu bytes, need %zu", n - pos,
					     need);
				break;
			}
			lf_fastlanes_unpack(t, (unsigned)w, p + pos, blk);
			pos += need;
			size_t k = cnt - done < 1024 ? cnt - done : 1024;
			memcpy(out + done, blk, k * sizeof *blk);
			done += k;
		}
		free(blk);
		return rc;
	}
	return UNSUP(c, "unsupported 2.1 compressive encoding '%s' for fixed-width values",
		     ce_name(ce->kind));
}

/* Decodes `cnt` definition levels of one chunk (block compression). */
static int levels21(lf_dctx *c, const cenc *ce, const uint8_t *p, size_t n, size_t cnt,
		    uint64_t *out)
{
	if (ce->kind == CE_FLAT || ce->kind == CE_INLINE_BITPACK) {
		if (ce->kind == CE_FLAT && ce->bits == 1)
			return UNSUP(c, "unsupported 1-bit flat definition levels");
		return fixed21(c, ce, p, n, cnt, out);
	}
	if (ce->kind != CE_OOL_BITPACK)
		return UNSUP(c, "unsupported 2.1 definition level encoding '%s'", ce_name(ce->kind));
	/* whole 1024-value blocks of w bits, then a tail either packed (padded) or raw */
	unsigned t = (unsigned)ce->bits, tb = t / 8, w = (unsigned)ce->inner_bits;
	size_t wpc = (1024 * (size_t)w + t - 1) / t; /* words per block */
	size_t full = cnt / 1024, tail = cnt % 1024;
	size_t words = n / tb, base = full * wpc;
	bool raw_tail = tail && words == base + tail;
	if (n % tb || words < base + (tail ? (raw_tail ? tail : wpc) : 0))
		return CORRUPT(c, "out_of_line_bitpacking payload of %zu bytes for %zu values", n, cnt);
	uint64_t *blk = lv__malloc(1024 * sizeof *blk);
	if (!blk)
		return NOMEM(c);
	for (size_t b = 0; b < full; b++) {
		lf_fastlanes_unpack(t, w, p + b * wpc * tb, blk);
		memcpy(out + b * 1024, blk, 1024 * sizeof *blk);
	}
	if (tail) {
		if (raw_tail) {
			for (size_t i = 0; i < tail; i++)
				out[full * 1024 + i] = load_le(p + (base + i) * tb, tb);
		} else {
			lf_fastlanes_unpack(t, w, p + base * tb, blk);
			memcpy(out + full * 1024, blk, tail * sizeof *blk);
		}
	}
	free(blk);
	return 0;
}

/* A dictionary: fixed values or strings (offsets relative to `bytes`). */
typedef struct dict21 {
	size_t n;
	uint64_t *vals;       /* fixed */
	uint64_t *offs;       /* strings: n+1 */
	const uint8_t *bytes;
} dict21;

static int dict_load(lf_dctx *c, const cenc *ce, const uint8_t *p, size_t n, uint64_t items,
		     dict21 *d)
{
	memset(d, 0, sizeof *d);
	if (items > n * 8 + 1)
		return CORRUPT(c, "dictionary of %llu items in %zu bytes", (unsigned long long)items, n);
	d->n = (size_t)items;
	if (c->cb->type != LV_COL_UTF8) {
		if (ce->kind != CE_FLAT && ce->kind != CE_INLINE_BITPACK)
			return UNSUP(c, "unsupported 2.1 dictionary encoding '%s'", ce_name(ce->kind));
		d->vals = lv__calloc(d->n ? d->n : 1, sizeof *d->vals);
		if (!d->vals)
			return NOMEM(c);
		return fixed21(c, ce, p, n, d->n, d->vals);
	}
	if (ce->kind != CE_VARIABLE)
		return UNSUP(c, "unsupported 2.1 dictionary encoding '%s'", ce_name(ce->kind));
	/* binary block: u32 bits_per_offset, u32 bytes_start, offsets, bytes */
	if (n < 8 || lv_le32(p) != 32)
		return UNSUP(c, "unsupported 2.1 dictionary block layout");
	uint64_t start = lv_le32(p + 4);
	if (start > n || (n - 8) / 4 < d->n + 1 || start < 8 + 4 * ((uint64_t)d->n + 1))
		return CORRUPT(c, "dictionary block offsets out of range");
	d->offs = lv__calloc(d->n + 1, sizeof *d->offs);
	if (!d->offs)
		return NOMEM(c);
	d->bytes = p + start;
	uint64_t room = n - start;
	for (size_t i = 0; i <= d->n; i++) {
		d->offs[i] = lv_le32(p + 8 + 4 * i);
		if (d->offs[i] > room || (i && d->offs[i] < d->offs[i - 1]))
			return CORRUPT(c, "dictionary offsets out of order or past the block");
	}
	return 0;
}

static void dict_free(dict21 *d)
{
	free(d->vals);
	free(d->offs);
}

/*
 * Definition level of item i of a flat column: 0 = valid (returns 0), 1 = null
 * (stores the null, returns 1), anything else is corrupt (negative).
 */
static int def_null(lf_dctx *c, size_t row, const uint64_t *def, size_t i)
{
	if (!def || !def[i])
		return 0;
	if (def[i] != 1)
		return CORRUPT(c, "definition level %llu in a flat column", (unsigned long long)def[i]);
	LV_TRY(lf_col_put_null(c, row + i));
	return 1;
}

/* Stores rows [row, row+cnt) from decoded fixed values and definition levels. */
static int store_fixed(lf_dctx *c, size_t row, size_t cnt, const uint64_t *v, const uint64_t *def,
		       const dict21 *dict)
{
	lf_colbuf *b = c->cb;
	if (!def && !dict) { /* no nulls, no dictionary: a straight copy */
		if (b->type == LV_COL_BOOL)
			for (size_t i = 0; i < cnt; i++)
				b->bools[row + i] = (uint8_t)(v[i] != 0);
		else if (cnt)
			memcpy(b->u64 + row, v, cnt * sizeof *v);
		return 0;
	}
	for (size_t i = 0; i < cnt; i++) {
		int dn = def_null(c, row, def, i);
		if (dn < 0)
			return dn;
		if (dn)
			continue;
		uint64_t x = v[i];
		if (dict) {
			if (x >= dict->n)
				return CORRUPT(c, "dictionary index %llu past %zu items",
					       (unsigned long long)x, dict->n);
			x = dict->vals[x];
		}
		if (b->type == LV_COL_BOOL)
			b->bools[row + i] = (uint8_t)(x != 0);
		else
			b->u64[row + i] = x;
	}
	return 0;
}

/* Stores strings of a variable buffer (offsets relative to it), optionally FSST-compressed. */
static int store_var(lf_dctx *c, size_t row, size_t cnt, const uint8_t *p, uint64_t ob,
		     const uint64_t *def, const fsst *f)
{
	size_t w = (size_t)ob / 8;
	if (!f && cnt) {
		/* offsets were checked (var_offsets): the chunk's bytes, reserved once */
		uint64_t first = load_le(p, (unsigned)w), last = load_le(p + cnt * w, (unsigned)w);
		int rc = lv_dbuf_reserve(&c->cb->data, (size_t)(last - first));
		if (rc < 0)
			return lf_perr(c, rc, rc == LV_ELIMIT ? "decoded strings exceed the size limit"
							      : "out of memory");
	}
	for (size_t i = 0; i < cnt; i++) {
		int dn = def_null(c, row, def, i);
		if (dn < 0)
			return dn;
		if (dn)
			continue;
		uint64_t a = load_le(p + i * w, (unsigned)w), e = load_le(p + (i + 1) * w, (unsigned)w);
		if (f)
			LV_TRY(fsst_put(c, f, row + i, p + a, (size_t)(e - a)));
		else
			LV_TRY(lf_col_put_str(c, row + i, p + a, (size_t)(e - a)));
	}
	return 0;
}

static int store_dict_str(lf_dctx *c, size_t row, size_t cnt, const uint64_t *v,
			  const uint64_t *def, const dict21 *d)
{
	for (size_t i = 0; i < cnt; i++) {
		int dn = def_null(c, row, def, i);
		if (dn < 0)
			return dn;
		if (dn)
			continue;
		if (v[i] >= d->n)
			return CORRUPT(c, "dictionary index %llu past %zu items",
				       (unsigned long long)v[i], d->n);
		LV_TRY(lf_col_put_str(c, row + i, d->bytes + d->offs[v[i]],
				      (size_t)(d->offs[v[i] + 1] - d->offs[v[i]])));
	}
	return 0;
}

static int parse_layer(lf_dctx *c, const lv_pb_field *f, uint64_t *layer, int *nlayers)
{
	if (f->wire == LV_PB_VARINT) {
		*layer = f->u;
		(*nlayers)++;
		return 0;
	}
	if (f->wire != LV_PB_LEN)
		return CORRUPT(c, "malformed repdef layers");
	lv_pb r = lv_pb_make(f->data, f->len);
	while (!lv_pb_done(&r)) {
		if (!lv_pb_varint(&r, layer))
			return CORRUPT(c, "malformed repdef layers");
		(*nlayers)++;
	}
	return 0;
}

static int check_layer(lf_dctx *c, uint64_t layer, int nlayers)
{
	if (nlayers != 1 || (layer != 1 && layer != 3))
		return UNSUP(c, "unsupported 2.1 repdef layers (nested or list column)");
	return 0;
}

static int miniblock21(lf_dctx *c, const uint8_t *p, size_t n)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 };
	int rc, nlayers = 0;
	lv_pb_field fdef = { 0 }, fval = { 0 }, fdict = { 0 };
	bool have_def = false, have_val = false, have_dict = false;
	uint64_t nitems = 0, nbuf = 0, depth = 0, ndict = 0, layer = 0, large = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1) {
		switch (f.num) {
		case 1: return UNSUP(c, "unsupported 2.1 repetition levels (list column)");
		case 2: fdef = f; have_def = f.wire == LV_PB_LEN; break;
		case 3: fval = f; have_val = f.wire == LV_PB_LEN; break;
		case 4: fdict = f; have_dict = f.wire == LV_PB_LEN; break;
		case 5: ndict = f.u; break;
		case 6: LV_TRY(parse_layer(c, &f, &layer, &nlayers)); break;
		case 7: nbuf = f.u; break;
		case 8: depth = f.u; break;
		case 9: nitems = f.u; break;
		case 10: large = f.u; break;
		default: break;
		}
	}
	if (rc < 0 || !have_val)
		return CORRUPT(c, "malformed 2.1 mini-block layout");
	LV_TRY(check_layer(c, layer, nlayers));
	if (depth)
		return UNSUP(c, "unsupported 2.1 mini-block repetition index");
	if (large)
		return UNSUP(c, "unsupported 2.1 mini-block large chunks");
	if (nbuf != 1)
		return UNSUP(c, "unsupported 2.1 mini-block with %llu value buffers",
			     (unsigned long long)nbuf);
	if (nitems != c->nrows)
		return CORRUPT(c, "mini-block num_items %llu but page has %zu rows",
			       (unsigned long long)nitems, c->nrows);
	cenc cdef = { 0 }, cval, cdict = { 0 };
	if (have_def)
		LV_TRY(parse_cenc(c, fdef.data, fdef.len, &cdef, 0));
	LV_TRY(parse_cenc(c, fval.data, fval.len, &cval, 0));
	if (have_dict)
		LV_TRY(parse_cenc(c, fdict.data, fdict.len, &cdict, 0));
	int type = c->cb->type;
	bool str_values = type == LV_COL_UTF8 && !have_dict;
	if (str_values && cval.kind != CE_VARIABLE && cval.kind != CE_FSST)
		return UNSUP(c, "unsupported 2.1 string encoding '%s'", ce_name(cval.kind));
	if (!str_values && (cval.kind == CE_VARIABLE || cval.kind == CE_FSST))
		return CORRUPT(c, "variable-width encoding for a fixed-width column");
	if (!have_dict && type == LV_COL_BOOL && !(cval.kind == CE_FLAT && cval.bits == 1))
		return UNSUP(c, "unsupported 2.1 boolean encoding '%s'", ce_name(cval.kind));
	if (!have_dict && (type == LV_COL_UINT64 || type == LV_COL_INT64) && cval.bits != 64)
		return UNSUP(c, "unsupported 2.1 %s of %llu bits for a 64-bit column",
			     ce_name(cval.kind), (unsigned long long)cval.bits);
	if (c->nbufs < (have_dict ? 3u : 2u))
		return CORRUPT(c, "mini-block page with %zu buffers", c->nbufs);
	fsst fs;
	if (cval.kind == CE_FSST)
		LV_TRY(fsst_init(c, cval.symtab, cval.symtab_len, &fs));
	dict21 dict = { 0 };
	if (have_dict && (rc = dict_load(c, &cdict, c->buf[2], c->buflen[2], ndict, &dict)) < 0) {
		dict_free(&dict);
		return rc;
	}

	const uint8_t *meta = c->buf[0], *chunks = c->buf[1];
	size_t mlen = c->buflen[0], clen = c->buflen[1];
	uint64_t *vals = NULL, *def = NULL;
	size_t scratch = 0;
	rc = 0;
	if (mlen % 2)
		rc = CORRUPT(c, "chunk metadata of odd size %zu", mlen);
	size_t nchunks = mlen / 2, pos = 0, done = 0;
	if (rc == 0 && nchunks == 0 && nitems)
		rc = CORRUPT(c, "mini-block page without chunks");
	for (size_t k = 0; k < nchunks && rc == 0; k++) {
		uint16_t word = lv_le16(meta + 2 * k);
		size_t bytes = ((size_t)(word >> 4) + 1) * 8, cnt;
		if (k + 1 < nchunks) {
			cnt = (size_t)1 << (word & 15);
			if (cnt > nitems - done) {
				rc = CORRUPT(c, "chunk %zu holds more values than the page", k);
				break;
			}
		} else {
			cnt = nitems - done;
		}
		if (bytes > clen - pos) {
			rc = CORRUPT(c, "chunk %zu runs past the chunk buffer", k);
			break;
		}
		const uint8_t *ch = chunks + pos;
		size_t hdr = 2 + (have_def ? 2 : 0) + 2;
		if (hdr > bytes) {
			rc = CORRUPT(c, "chunk %zu header truncated", k);
			break;
		}
		size_t nlev = lv_le16(ch), dsz = have_def ? lv_le16(ch + 2) : 0;
		size_t vsz = lv_le16(ch + hdr - 2), off = (hdr + 7) & ~(size_t)7;
		size_t doff = off;
		off += (dsz + 7) & ~(size_t)7;
		size_t voff = off;
		if (doff + dsz > bytes || voff + vsz > bytes) {
			rc = CORRUPT(c, "chunk %zu buffers run past the chunk", k);
			break;
		}
		if (have_def && nlev != cnt) {
			rc = CORRUPT(c, "chunk %zu has %zu levels for %zu values", k, nlev, cnt);
			break;
		}
		/* scratch for this chunk's values and levels (every entry is written before use) */
		if (cnt > scratch || !vals) {
			free(vals);
			free(def);
			scratch = cnt ? cnt : 1;
			vals = lv__malloc(scratch * sizeof *vals);
			def = have_def ? lv__malloc(scratch * sizeof *def) : NULL;
			if (!vals || (have_def && !def)) {
				rc = NOMEM(c);
				break;
			}
		}
		if (have_def)
			rc = levels21(c, &cdef, ch + doff, dsz, cnt, def);
		if (rc)
			break;
		size_t row = c->row0 + done;
		if (str_values) {
			uint64_t ob = cval.kind == CE_FSST ? cval.inner_bits : cval.bits;
			rc = var_offsets(c, ch + voff, vsz, cnt, ob);
			if (rc == 0)
				rc = store_var(c, row, cnt, ch + voff, ob, def,
					       cval.kind == CE_FSST ? &fs : NULL);
		} else {
			rc = fixed21(c, &cval, ch + voff, vsz, cnt, vals);
			if (rc == 0 && have_dict && type == LV_COL_UTF8)
				rc = store_dict_str(c, row, cnt, vals, def, &dict);
			else if (rc == 0)
				rc = store_fixed(c, row, cnt, vals, def, have_dict ? &dict : NULL);
		}
		pos += bytes;
		done += cnt;
	}
	if (rc == 0 && done != nitems)
		rc = CORRUPT(c, "chunks hold %zu values, page has %llu", done,
			     (unsigned long long)nitems);
	free(vals);
	free(def);
	dict_free(&dict);
	return rc;
}

static int fullzip21(lf_dctx *c, const uint8_t *p, size_t n)
{
	lv_pb r = lv_pb_make(p, n);
	lv_pb_field f = { 0 }, fval = { 0 };
	int rc, nlayers = 0;
	bool have_val = false, fixed = false, var = false;
	uint64_t brep = 0, bdef = 0, bpv = 0, bpo = 0, items = 0, visible = 0, layer = 0;
	while ((rc = lv_pb_next(&r, &f)) == 1) {
		switch (f.num) {
		case 1: brep = f.u; break;
		case 2: bdef = f.u; break;
		case 3: bpv = f.u; fixed = true; var = false; break;
		case 4: bpo = f.u; var = true; fixed = false; break;
		case 5: items = f.u; break;
		case 6: visible = f.u; break;
		case 7: fval = f; have_val = f.wire == LV_PB_LEN; break;
		case 8: LV_TRY(parse_layer(c, &f, &layer, &nlayers)); break;
		default: break;
		}
	}
	if (rc < 0 || !have_val || (!fixed && !var))
		return CORRUPT(c, "malformed 2.1 full-zip layout");
	LV_TRY(check_layer(c, layer, nlayers));
	if (brep)
		return UNSUP(c, "unsupported 2.1 full-zip repetition levels (list column)");
	if (bdef > 16)
		return UNSUP(c, "unsupported full-zip with %llu definition bits",
			     (unsigned long long)bdef);
	if (items != c->nrows || visible != items)
		return CORRUPT(c, "full-zip num_items %llu / visible %llu but page has %zu rows",
			       (unsigned long long)items, (unsigned long long)visible, c->nrows);
	if (c->nbufs < 1)
		return CORRUPT(c, "full-zip page without buffers");
	cenc ce;
	LV_TRY(parse_cenc(c, fval.data, fval.len, &ce, 0));
	int type = c->cb->type;
	fsst fs;
	size_t lw = 0, vw = 0;
	if (var) {
		if (type != LV_COL_UTF8)
			return CORRUPT(c, "variable full-zip for a fixed-width column");
		if (ce.kind != CE_VARIABLE && ce.kind != CE_FSST)
			return UNSUP(c, "unsupported 2.1 full-zip compressive encoding '%s'",
				     ce_name(ce.kind));
		if (bpo != 8 && bpo != 16 && bpo != 32 && bpo != 64)
			return UNSUP(c, "unsupported full-zip bits_per_offset %llu",
				     (unsigned long long)bpo);
		if (ce.kind == CE_FSST)
			LV_TRY(fsst_init(c, ce.symtab, ce.symtab_len, &fs));
		lw = (size_t)bpo / 8;
	} else {
		if ((type != LV_COL_UINT64 && type != LV_COL_INT64) || bpv != 64 ||
		    ce.kind != CE_FLAT || ce.bits != 64)
			return UNSUP(c, "unsupported 2.1 fixed full-zip of %llu bits ('%s')",
				     (unsigned long long)bpv, ce_name(ce.kind));
		vw = 8;
	}
	size_t cw = bdef == 0 ? 0 : bdef <= 8 ? 1 : 2;
	const uint8_t *d = c->buf[0];
	size_t dl = c->buflen[0], pos = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		size_t row = c->row0 + i;
		uint64_t lev = 0;
		if (cw) {
			if (dl - pos < cw)
				return CORRUPT(c, "full-zip data truncated at row %zu", i);
			lev = load_le(d + pos, (unsigned)cw) & ((1u << bdef) - 1);
			pos += cw;
		}
		if (lev) {
			if (lev != 1)
				return CORRUPT(c, "definition level %llu in a flat column",
					       (unsigned long long)lev);
			LV_TRY(lf_col_put_null(c, row));
			continue;
		}
		if (fixed) {
			if (dl - pos < vw)
				return CORRUPT(c, "full-zip data truncated at row %zu", i);
			c->cb->u64[row] = lv_le64(d + pos);
			pos += vw;
			continue;
		}
		if (dl - pos < lw)
			return CORRUPT(c, "full-zip data truncated at row %zu", i);
		uint64_t len = load_le(d + pos, (unsigned)lw);
		pos += lw;
		if (len > dl - pos)
			return CORRUPT(c, "full-zip value of %llu bytes past the buffer at row %zu",
				       (unsigned long long)len, i);
		if (ce.kind == CE_FSST)
			LV_TRY(fsst_put(c, &fs, row, d + pos, (size_t)len));
		else
			LV_TRY(lf_col_put_str(c, row, d + pos, (size_t)len));
		pos += (size_t)len;
	}
	return 0;
}

int lf_decode_page21(lf_dctx *c, const uint8_t *enc, size_t len)
{
	static const char *const layouts[] = { "?", "mini_block", "constant", "full_zip", "blob",
					       "delta_blob" };
	lv_pb_field f = { 0 };
	int k = oneof(enc, len, &f);
	if (k < 0)
		return CORRUPT(c, "malformed 2.1 page layout");
	if (k == 1)
		return miniblock21(c, f.data, f.len);
	if (k == 3)
		return fullzip21(c, f.data, f.len);
	if (k == 2) {
		/* all_null_layout (constant_layout in 2.2): only the all-null form here */
		int nlayers = 0;
		uint64_t layer = 0;
		lv_pb r = lv_pb_make(f.data, f.len);
		lv_pb_field g = { 0 };
		int rc;
		while ((rc = lv_pb_next(&r, &g)) == 1) {
			if (g.num == 5)
				LV_TRY(parse_layer(c, &g, &layer, &nlayers));
			else if (g.num >= 6 && g.num <= 10)
				return UNSUP(c, "unsupported 2.1 constant layout");
		}
		if (rc < 0)
			return CORRUPT(c, "malformed 2.1 all-null layout");
		if (nlayers != 1 || layer != 3)
			return UNSUP(c, "unsupported 2.1 all-null layout layers");
		for (size_t i = 0; i < c->nrows; i++)
			LV_TRY(lf_col_put_null(c, c->row0 + i));
		return 0;
	}
	if (k == 0)
		return CORRUPT(c, "2.1 page layout without a layout");
	return UNSUP(c, "unsupported 2.1 page layout '%s'",
		     k < (int)(sizeof layouts / sizeof layouts[0]) ? layouts[k] : "unknown");
}
