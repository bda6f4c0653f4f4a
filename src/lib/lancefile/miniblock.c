/*
 * 2.1/2.2 mini-block pages (MiniBlockLayout): page buffer 0 holds one chunk-metadata
 * word per chunk (u16, or u32 when has_large_chunk, field 10, set by Lance 2.2), buffer 1
 * the chunks back to back, buffer 2 the dictionary if any.  A word gives the chunk's
 * size ((word >> 4) + 1) * 8 bytes and, except for the last chunk, log2 of its value
 * count (low 4 bits).  A chunk is
 *   [u16 num_levels][u16 rep size if rep][u16 def size if def]
 *   [num_buffers x (u32 if has_large_chunk else u16) value buffer sizes] pad to 8,
 *   [def levels] pad to 8, then each value buffer padded to 8.
 * Flat columns only (no repetition).  Every chunk, header and buffer is checked
 * against the bytes of its enclosing buffer before it is read.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

typedef lv__lf_mblayout mb_layout;

static int parse_layout(lv__lf_dctx *c, const uint8_t *p, size_t n, mb_layout *m)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 }, fdef = { 0 }, fval = { 0 }, fdict = { 0 };
	int rc, nlayers = 0;
	uint64_t depth = 0, layer = 0, large = 0;
	/* not a memset of the 2.4 KB layout: the trees are set up by lv__lf_cenc_parse */
	m->def.n = m->val.n = m->dict.n = 0;
	m->def_root = m->val_root = m->dict_root = -1;
	m->nitems = m->nbuf = m->ndict = 0;
	m->large = false;
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		switch (f.num) {
		case 1: return LV__LF_UNSUP(c, "unsupported repetition levels (list column)");
		case 2: fdef = f; break;
		case 3: fval = f; break;
		case 4: fdict = f; break;
		case 5: m->ndict = f.u; break;
		case 6: LV_TRY(lv__lf_parse_layers(c, &f, &layer, &nlayers)); break;
		case 7: m->nbuf = f.u; break;
		case 8: depth = f.u; break;
		case 9: m->nitems = f.u; break;
		case 10: large = f.u; break;
		default: break;
		}
	}
	if (rc < 0 || fval.wire != LV_PB_LEN)
		return LV__LF_CORRUPT(c, "malformed mini-block layout");
	LV_TRY(lv__lf_check_layer(c, layer, nlayers));
	if (depth)
		return LV__LF_UNSUP(c, "unsupported mini-block repetition index");
	if (m->nbuf < 1 || m->nbuf > 4)
		return LV__LF_UNSUP(c, "unsupported mini-block with %llu value buffers",
				(unsigned long long)m->nbuf);
	m->large = large != 0;
	if (fdef.wire == LV_PB_LEN)
		LV_TRY(lv__lf_cenc_parse(c, fdef.data, fdef.len, &m->def, &m->def_root));
	LV_TRY(lv__lf_cenc_parse(c, fval.data, fval.len, &m->val, &m->val_root));
	if (fdict.wire == LV_PB_LEN)
		LV_TRY(lv__lf_cenc_parse(c, fdict.data, fdict.len, &m->dict, &m->dict_root));
	return 0;
}

/* The width the column type needs from the values (or the dictionary items). */
static int check_types(lv__lf_dctx *c, const mb_layout *m)
{
	const lv__lf_cenc_tree *t = m->dict_root >= 0 ? &m->dict : &m->val;
	int root = m->dict_root >= 0 ? m->dict_root : m->val_root;
	int type = c->cb->type, kind = t->node[root].kind;
	while (kind == CE_GENERAL) {
		root = t->node[root].child[0];
		kind = t->node[root].kind;
	}
	if (type == LV_COL_UTF8) {
		bool var = kind == CE_VARIABLE || kind == CE_FSST;
		return var ? 0 : LV__LF_UNSUP(c, "unsupported string encoding '%s'", lv__lf_cenc_name(kind));
	}
	if (kind == CE_VARIABLE || kind == CE_FSST)
		return LV__LF_CORRUPT(c, "variable-width encoding for a fixed-width column");
	unsigned bits = lv__lf_fixed_bits(t, root);
	if (type == LV_COL_FSL_FLOAT32) {
		if (m->dict_root >= 0 || kind != CE_FSL || bits != 32 ||
		    t->node[root].items != c->cb->dim)
			return LV__LF_UNSUP(c, "unsupported vector encoding '%s'", lv__lf_cenc_name(kind));
		return 0;
	}
	unsigned want = type == LV_COL_BOOL ? 1 : lv__lf_type_width(type) * 8;
	if (kind == CE_FSL || bits != want)
		return LV__LF_UNSUP(c, "unsupported %s of %u bits for a %u-bit column", lv__lf_cenc_name(kind),
				bits, want);
	return 0;
}

/* Definition levels of one chunk. */
static int levels(lv__lf_dctx *c, const mb_layout *m, const uint8_t *p, size_t n, size_t cnt,
		  uint64_t *out)
{
	const lv__lf_cenc *e = &m->def.node[m->def_root];
	if (e->kind == CE_OOL_BITPACK)
		return lv__lf_ool_bitpack(c, (unsigned)e->bits, (unsigned)m->def.node[e->child[0]].bits, p,
				      n, cnt, out);
	if (e->kind == CE_FLAT && e->bits == 1)
		return LV__LF_UNSUP(c, "unsupported 1-bit flat definition levels");
	if (e->kind == CE_RLE) {
		/* block form [observed, Lance 12.0.0]: u64 LE byte length of the run values,
		 * the values, then one u8 run length per value */
		if (n < 8 || lv__le64(p) > n - 8)
			return LV__LF_CORRUPT(c, "rle definition levels of %zu bytes", n);
		size_t vb = (size_t)lv__le64(p);
		lv__lf_bufs rb = { .p = { p + 8, p + 8 + vb }, .n = { vb, n - 8 - vb }, .count = 2 };
		unsigned bits;
		return lv__lf_fixed_decode(c, &m->def, m->def_root, rb, cnt, out, &bits);
	}
	if (e->kind != CE_FLAT && e->kind != CE_INLINE_BITPACK && e->kind != CE_GENERAL &&
	    e->kind != CE_BSS)
		return LV__LF_UNSUP(c, "unsupported definition level encoding '%s'",
				lv__lf_cenc_name(e->kind));
	lv__lf_bufs b = { .p = { p }, .n = { n }, .count = 1 };
	unsigned bits;
	return lv__lf_fixed_decode(c, &m->def, m->def_root, b, cnt, out, &bits);
}

int lv__lf_def_null(lv__lf_dctx *c, size_t row, const uint64_t *def, size_t i)
{
	if (!def || !def[i])
		return 0;
	if (def[i] != 1)
		return LV__LF_CORRUPT(c, "definition level %llu in a flat column",
				  (unsigned long long)def[i]);
	LV_TRY(lv__lf_col_put_null(c, row + i));
	return 1;
}

/* Stores one chunk's decoded values (fixed, dictionary indices or vectors). */
static int store_fixed(lv__lf_dctx *c, size_t row, size_t cnt, const uint64_t *v, const uint64_t *def,
		       const lv__lf_dict *dict)
{
	lv__lf_colbuf *b = c->cb;
	if (!def && !dict && (b->type == LV_COL_UINT64 || b->type == LV_COL_INT64)) {
		memcpy(b->u64 + row, v, cnt * sizeof *v); /* no nulls, no dictionary: as they are */
		return 0;
	}
	for (size_t i = 0; i < cnt; i++) {
		int dn = lv__lf_def_null(c, row, def, i);
		if (dn < 0)
			return dn;
		if (dn)
			continue;
		uint64_t x = v[i];
		if (dict && x >= dict->n)
			return LV__LF_CORRUPT(c, "dictionary index %llu past %zu items",
					  (unsigned long long)x, dict->n);
		if (dict && b->type == LV_COL_UTF8) {
			LV_TRY(lv__lf_col_put_str(c, row + i, dict->str.bytes + dict->str.offs[x],
					      (size_t)(dict->str.offs[x + 1] - dict->str.offs[x])));
		} else if (b->type == LV_COL_FSL_FLOAT32) {
			for (uint32_t k = 0; k < b->dim; k++) {
				uint32_t bits = (uint32_t)v[i * b->dim + k];
				memcpy(&b->f32[(row + i) * b->dim + k], &bits, sizeof bits);
			}
		} else {
			lv__lf_col_put_fixed(b, row + i, dict ? dict->vals[x] : x);
		}
	}
	return 0;
}

static int store_strings(lv__lf_dctx *c, size_t row, size_t cnt, const lv__lf_varvals *s,
			 const uint64_t *def)
{
	int rc = lv__dbuf_reserve(&c->cb->data, (size_t)(s->offs[cnt] - s->offs[0]));
	if (rc < 0)
		return lv__lf_perr(c, rc, rc == LV_ELIMIT ? "decoded strings exceed the size limit"
						      : "out of memory");
	if (!def) { /* no nulls: the chunk's bytes at once (its offsets are checked: values21.c) */
		lv__dbuf *d = &c->cb->data;
		size_t base = d->len, total = (size_t)(s->offs[cnt] - s->offs[0]);
		memcpy(d->ptr + base, s->bytes + s->offs[0], total);
		for (size_t i = 0; i < cnt; i++)
			c->cb->offs[row + i + 1] = base + (s->offs[i + 1] - s->offs[0]);
		d->len = base + total;
		d->ptr[d->len] = 0;
		return 0;
	}
	for (size_t i = 0; i < cnt; i++) {
		int dn = lv__lf_def_null(c, row, def, i);
		if (dn < 0)
			return dn;
		if (!dn)
			LV_TRY(lv__lf_col_put_str(c, row + i, s->bytes + s->offs[i],
					      (size_t)(s->offs[i + 1] - s->offs[i])));
	}
	return 0;
}

/* Scratch arrays for one chunk: values (cnt * items) and levels. */
/* Decoded values and levels of one chunk: on the stack for small chunks (a small file's
 * pages are one chunk of a few values: no allocation), else allocated and reused. */
#define MB_STACK_VALUES 256
typedef struct mb_scratch {
	uint64_t *vals, *def;
	size_t cap;
	bool heap;
	uint64_t vals0[MB_STACK_VALUES], def0[MB_STACK_VALUES];
} mb_scratch;

/* Parses chunk k's header and decodes it into rows [row, row+cnt). */
static int chunk(lv__lf_dctx *c, const mb_layout *m, const uint8_t *ch, size_t bytes, size_t cnt,
		 size_t row, const lv__lf_dict *dict, mb_scratch *s)
{
	bool have_def = m->def_root >= 0;
	size_t sw = m->large ? 4 : 2, hdr = 2 + (have_def ? 2 : 0) + (size_t)m->nbuf * sw;
	if (hdr > bytes)
		return LV__LF_CORRUPT(c, "chunk header truncated");
	size_t nlev = lv__le16(ch), dsz = have_def ? lv__le16(ch + 2) : 0;
	size_t off = (hdr + 7) & ~(size_t)7, doff = off;
	if (dsz > bytes - doff)
		return LV__LF_CORRUPT(c, "chunk definition levels run past the chunk");
	off += (dsz + 7) & ~(size_t)7;
	lv__lf_bufs b = { .count = (size_t)m->nbuf };
	for (size_t i = 0; i < b.count; i++) {
		const uint8_t *q = ch + 2 + (have_def ? 2 : 0) + i * sw;
		b.n[i] = m->large ? lv__le32(q) : lv__le16(q);
		if (off > bytes || b.n[i] > bytes - off)
			return LV__LF_CORRUPT(c, "chunk buffers run past the chunk");
		b.p[i] = ch + off;
		off += (b.n[i] + 7) & ~(size_t)7;
	}
	if (have_def && nlev != cnt)
		return LV__LF_CORRUPT(c, "chunk has %zu levels for %zu values", nlev, cnt);
	size_t items = c->cb->type == LV_COL_FSL_FLOAT32 ? c->cb->dim : 1;
	if (!s->vals && cnt * items <= MB_STACK_VALUES) {
		s->vals = s->vals0;
		s->def = s->def0;
		s->cap = MB_STACK_VALUES;
	} else if (cnt * items > s->cap || !s->vals) {
		if (s->heap) {
			lv__free(s->vals);
			lv__free(s->def);
		}
		s->cap = cnt * items > 0 ? cnt * items : 1;
		s->vals = lv__malloc(s->cap * sizeof *s->vals);
		s->def = lv__malloc(s->cap * sizeof *s->def);
		s->heap = true;
		if (!s->vals || !s->def)
			return LV__LF_NOMEM(c);
	}
	uint64_t *def = have_def ? s->def : NULL;
	if (have_def)
		LV_TRY(levels(c, m, ch + doff, dsz, cnt, def));
	if (c->cb->type == LV_COL_UTF8 && !dict) {
		lv__lf_varvals v;
		LV_TRY(lv__lf_var_decode(c, &m->val, m->val_root, b, cnt, &v, s->vals, s->cap));
		int rc = store_strings(c, row, cnt, &v, def);
		lv__lf_varvals_free(&v);
		return rc;
	}
	unsigned bits;
	b.def = def;
	LV_TRY(lv__lf_fixed_decode(c, &m->val, m->val_root, b, cnt, s->vals, &bits));
	return store_fixed(c, row, cnt, s->vals, def, dict);
}

/* Walks the chunk metadata words and decodes every chunk. */
static int chunks(lv__lf_dctx *c, const mb_layout *m, const lv__lf_dict *dict)
{
	const uint8_t *meta = c->buf[0], *data = c->buf[1];
	size_t mlen = c->buflen[0], dlen = c->buflen[1], ww = m->large ? 4 : 2;
	if (mlen % ww)
		return LV__LF_CORRUPT(c, "chunk metadata of %zu bytes", mlen);
	size_t nchunks = mlen / ww, pos = 0, done = 0;
	if (nchunks == 0 && m->nitems)
		return LV__LF_CORRUPT(c, "mini-block page without chunks");
	mb_scratch s;
	s.vals = s.def = NULL;
	s.cap = 0;
	s.heap = false;
	int rc = 0;
	for (size_t k = 0; k < nchunks && rc == 0; k++) {
		uint32_t word = m->large ? lv__le32(meta + 4 * k) : lv__le16(meta + 2 * k);
		size_t bytes = ((size_t)(word >> 4) + 1) * 8, cnt = (size_t)(m->nitems - done);
		if (k + 1 < nchunks) {
			cnt = (size_t)1 << (word & 15);
			if (cnt > m->nitems - done) {
				rc = LV__LF_CORRUPT(c, "chunk %zu holds more values than the page", k);
				break;
			}
		}
		if (bytes > dlen - pos) {
			rc = LV__LF_CORRUPT(c, "chunk %zu runs past the chunk buffer", k);
			break;
		}
		rc = chunk(c, m, data + pos, bytes, cnt, c->row0 + done, dict, &s);
		pos += bytes;
		done += cnt;
	}
	if (rc == 0 && done != m->nitems)
		rc = LV__LF_CORRUPT(c, "chunks hold %zu values, page has %llu", done,
				(unsigned long long)m->nitems);
	if (s.heap) {
		lv__free(s.vals);
		lv__free(s.def);
	}
	return rc;
}

/* The page's layout: the read's cached one when the bytes are the same, else parsed (into
 * the cache when there is one, else into *local). */
static int layout_of(lv__lf_dctx *c, const uint8_t *p, size_t n, mb_layout *local, const mb_layout **out)
{
	lv__lf_mbcache *mc = c->mbc;
	if (mc && mc->p && mc->n == n && memcmp(mc->p, p, n) == 0) {
		*out = &mc->m;
		return 0;
	}
	mb_layout *m = mc ? &mc->m : local;
	if (mc)
		mc->p = NULL; /* empty until the parse succeeds */
	LV_TRY(parse_layout(c, p, n, m));
	if (mc) {
		mc->p = p;
		mc->n = n;
	}
	*out = m;
	return 0;
}

int lv__lf_miniblock(lv__lf_dctx *c, const uint8_t *p, size_t n)
{
	mb_layout layout; /* 2.4 KB: on the stack, not allocated per page */
	const mb_layout *m = NULL;
	int rc = layout_of(c, p, n, &layout, &m);
	if (rc == 0 && m->nitems != c->nrows)
		rc = LV__LF_CORRUPT(c, "mini-block num_items %llu but page has %zu rows",
				(unsigned long long)m->nitems, c->nrows);
	if (rc == 0)
		rc = check_types(c, m);
	bool have_dict = rc == 0 && m->dict_root >= 0;
	if (rc == 0 && c->nbufs < (have_dict ? 3u : 2u))
		rc = LV__LF_CORRUPT(c, "mini-block page with %zu buffers", c->nbufs);
	lv__lf_dict dict = { 0 };
	if (rc == 0 && have_dict)
		rc = lv__lf_dict_load(c, &m->dict, m->dict_root, c->buf[2], c->buflen[2], m->ndict, &dict);
	if (rc == 0)
		rc = chunks(c, m, have_dict ? &dict : NULL);
	if (have_dict)
		lv__lf_dict_free(&dict);
	return rc;
}
