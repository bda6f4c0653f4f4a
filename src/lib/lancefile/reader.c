/*
 * Lance file format v2 reader: footer, offset tables, schema (global buffer 0),
 * column metadata and pages; the schema is parsed by schema.c and page bodies by
 * page20.c (2.0) and layout21.c (2.1, 2.2).
 *
 * The reader never trusts the file: every position and size is checked
 * against the bytes at hand, and the number of decoded cells and string bytes
 * is capped relative to the input size so that a small corrupt file cannot
 * make it allocate gigabytes.  A string column's bytes are reserved once, before its
 * first page is decoded, from the sizes of its page buffers (each checked to lie within
 * the file first; the sum capped at the file's size), so they do not grow by doubling
 * (a column of one page: from that page's buffers, as the decode pass reads them).
 * Within a read, encodings and mini-block layouts with the bytes of the last valid one are
 * reused (enc_cache); everything a read allocates is in the file's arena (lf_file.h).
 */
#include <string.h>

#include "lancefile/lf_file.h"

#define MIN_CELLS ((uint64_t)1 << 22)    /* rows x columns always allowed */
#define MIN_STR_BYTES ((size_t)256 << 20) /* decoded string bytes always allowed */

/* [pos, pos+len) must lie within the file before the footer. */
static bool in_file(const lv__lf_rctx *r, uint64_t pos, uint64_t len)
{
	uint64_t lim = r->size - LV__LF_FOOTER_SIZE;
	return pos <= lim && len <= lim - pos;
}

void lv_lancefile_free(lv_lancefile *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ncols && f->cols; i++)
		if (f->cols[i].str_data)
			lv__free((void *)f->cols[i].str_data);
	for (lv__lf_big *b = f->big, *next; b; b = next) {
		next = b->next;
		lv__free(b);
	}
	lv__arena_dispose(&f->mem); /* everything else (lf_file.h) */
	lv__free(f);
}

typedef struct u64list {
	uint64_t v[LV__LF_MAX_PAGE_BUFS];
	size_t n;
	bool over;
} u64list;

/* Appends a repeated varint field's values (packed or not) to l; -1 when malformed.  Inlined
 * into page_meta, whose two calls per page it is most of. */
__attribute__((always_inline)) static inline int u64list_add(u64list *l, const lv__pb_field *h)
{
	if (h->wire == LV_PB_VARINT) {
		if (l->n < LV__LF_MAX_PAGE_BUFS)
			l->v[l->n++] = h->u;
		else
			l->over = true;
		return 0;
	}
	if (h->wire != LV_PB_LEN)
		return -1;
	lv__pb r = lv__pb_sub(h);
	while (!lv__pb_done(&r)) {
		uint64_t v;
		if (!lv__pb_varint(&r, &v))
			return -1;
		if (l->n < LV__LF_MAX_PAGE_BUFS)
			l->v[l->n++] = v;
		else
			l->over = true;
	}
	return 0;
}

/* Any type names the reader wants, with their lengths (no strlen per page). */
#define WANT(s) s, sizeof s - 1

/*
 * Parses the Encoding{1 indirect, 2 direct{1 Any}} of a page or column; yields the Any
 * value.  One pass over each level (the last field of a number wins, as for a oneof).
 */
static int direct_any(lv__lf_dctx *c, const uint8_t *p, size_t n, const char *want, size_t wl,
		      const uint8_t **val, size_t *vlen)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field g;
	const uint8_t *d = NULL;
	size_t dl = 0;
	int rc, ind = 0; /* 1: an indirect field, -1: a field 1 that is not one */
	while ((rc = lv__pb_next(&r, &g)) == 1) {
		if (g.num == 2 && g.wire != LV_PB_LEN)
			rc = -1;
		else if (g.num == 2)
			d = g.data, dl = g.len;
		else if (g.num == 1)
			ind = g.wire == LV_PB_LEN && ind >= 0 ? 1 : -1;
		if (rc < 0)
			break;
	}
	if (rc < 0)
		return lv__lf_perr(c, LV_ECORRUPT, "malformed encoding");
	if (!d)
		return lv__lf_perr(c, ind == 1 ? LV_EUNSUPPORTED : LV_ECORRUPT, "%s",
			       ind == 1 ? "unsupported indirect (deferred) encoding"
				        : "encoding is not direct");
	lv__pb_field a = { .data = (const uint8_t *)"", .len = 0 };
	if (lv__lf_pb_find(d, dl, 1, &a) < 0)
		return lv__lf_perr(c, LV_ECORRUPT, "malformed direct encoding");
	char url[96];
	rc = lv__lf_any_unwrap(a.data, a.len, want, wl, val, vlen, url, sizeof url);
	if (rc == LV_ECORRUPT)
		return lv__lf_perr(c, LV_ECORRUPT, "malformed Any");
	if (rc < 0)
		return lv__lf_perr(c, LV_EUNSUPPORTED, "unsupported encoding type '%s'", url);
	return 0;
}

/* A column's zeroed arrays, in the file's arena (a column that fails leaves them there). */
static int col_alloc(lv_lancefile *f, lv__lf_colbuf *b, size_t nrows, size_t str_limit)
{
	size_t n = nrows ? nrows : 1, dim;
	lv__dbuf_init(&b->data, str_limit);
	if (b->type == LV_COL_UTF8) {
		if (!(b->offs = lv__lf_zalloc(f, nrows + 1, sizeof *b->offs)))
			return LV_ENOMEM;
	} else if (b->type == LV_COL_BOOL) {
		if (!(b->bools = lv__lf_zalloc(f, n, 1)))
			return LV_ENOMEM;
	} else if (b->type == LV_COL_FSL_FLOAT32) {
		if (lv__mul_overflow(n, b->dim, &dim) || !(b->f32 = lv__lf_zalloc(f, dim, sizeof *b->f32)))
			return LV_ENOMEM;
	} else if (!(b->u64 = lv__lf_zalloc(f, n, sizeof *b->u64))) {
		return LV_ENOMEM;
	}
	if (b->nullable) {
		if (!(b->valid = lv__lf_zalloc(f, n, 1)))
			return LV_ENOMEM;
		memset(b->valid, 1, n);
	}
	return 0;
}

/* Parses one Page message; resolves its buffers into c. */
static int page_meta(lv__lf_rctx *r, lv__lf_dctx *c, const lv__pb_field *g, uint64_t *plen,
		     const uint8_t **enc, size_t *enclen)
{
	u64list offs, sizes; /* the values are set as they are counted */
	offs.n = sizes.n = 0;
	offs.over = sizes.over = false;
	lv__pb pp = lv__pb_sub(g);
	lv__pb_field h;
	int prc;
	*plen = 0;
	*enc = NULL;
	*enclen = 0;
	while ((prc = lv__pb_next(&pp, &h)) == 1) {
		if (h.num == 1 && u64list_add(&offs, &h) < 0)
			prc = -1;
		else if (h.num == 2 && u64list_add(&sizes, &h) < 0)
			prc = -1;
		else if (h.num == 3 && h.wire == LV_PB_VARINT)
			*plen = h.u;
		else if (h.num == 4 && h.wire == LV_PB_LEN)
			*enc = h.data, *enclen = h.len;
		if (prc < 0)
			break;
	}
	if (prc < 0)
		return lv__lf_perr(c, LV_ECORRUPT, "malformed page metadata");
	if (offs.over || sizes.over || offs.n != sizes.n)
		return lv__lf_perr(c, LV_ECORRUPT, "page buffer lists are inconsistent");
	c->nbufs = offs.n;
	for (size_t i = 0; i < offs.n; i++) {
		if (!in_file(r, offs.v[i], sizes.v[i]))
			return lv__lf_perr(c, LV_ECORRUPT, "page buffer %zu out of the file", i);
		c->buf[i] = r->d + offs.v[i];
		c->buflen[i] = (size_t)sizes.v[i];
	}
	return 0;
}

/* The next page of a column's metadata (its field 2), its buffers checked and set in c (as
 * page_meta): 1, 0 after the last, or < 0 (an error, reported). */
static int page_next(lv__lf_rctx *r, lv__lf_dctx *c, lv__pb *pr, size_t *page, uint64_t *plen,
		     const uint8_t **enc, size_t *enclen)
{
	lv__pb_field g = { 0 };
	int more;
	while ((more = lv__pb_next(pr, &g)) == 1) {
		if (g.num != 2 || g.wire != LV_PB_LEN)
			continue;
		c->page = (*page)++;
		LV_TRY(page_meta(r, c, &g, plen, enc, enclen));
		return 1;
	}
	return more < 0 ? lv__lf_perr(c, LV_ECORRUPT, "malformed column metadata") : 0;
}

/*
 * What a read has already checked, by the bytes it checked (the file's, alive for the whole
 * read): a column or page encoding with the same bytes as the last valid one gives the same
 * result, so it is taken instead of being parsed again (a file's columns of one type have
 * the same encodings).  Checks that depend on the page (rows, buffers, column type) are
 * made for every page all the same.
 */
typedef struct enc_cache {
	const uint8_t *col, *page; /* the last valid column / page encoding, NULL: none */
	size_t col_len, page_len;
	size_t val_off, val_len;   /* the page encoding's Any value, within it */
	lv__lf_mbcache mb;         /* the last mini-block layout (miniblock.c) */
} enc_cache;

static bool same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	return a && an == bn && memcmp(a, b, an) == 0;
}

/* Checks a column's Encoding (direct ColumnEncoding with values). */
static int column_encoding(lv__lf_dctx *c, const lv__pb_field *g, enc_cache *k)
{
	if (same_bytes(k->col, k->col_len, g->data, g->len))
		return 0;
	const uint8_t *val;
	size_t vlen;
	lv__pb_field e;
	LV_TRY(direct_any(c, g->data, g->len, WANT("lance.encodings.ColumnEncoding"), &val, &vlen));
	int rc = lv__lf_pb_find(val, vlen, 1, &e);
	if (rc != 1)
		return lv__lf_perr(c, rc < 0 ? LV_ECORRUPT : LV_EUNSUPPORTED, "%s",
			       rc < 0 ? "malformed column encoding"
				      : "unsupported column encoding (zone index or blob)");
	k->col = g->data;
	k->col_len = g->len;
	return 0;
}

/* A page's Encoding: its Any value (ArrayEncoding in 2.0, PageLayout after). */
static int page_encoding(lv__lf_dctx *c, const uint8_t *enc, size_t n, enc_cache *k,
			 const uint8_t **val, size_t *vlen)
{
	if (same_bytes(k->page, k->page_len, enc, n)) {
		*val = enc + k->val_off;
		*vlen = k->val_len;
		return 0;
	}
	if (c->version == LV_LANCEFILE_V2_0)
		LV_TRY(direct_any(c, enc, n, WANT("lance.encodings.ArrayEncoding"), val, vlen));
	else
		LV_TRY(direct_any(c, enc, n, WANT("lance.encodings21.PageLayout"), val, vlen));
	if (*val >= enc && *vlen <= n && (size_t)(*val - enc) <= n - *vlen) { /* not "" */
		k->page = enc;
		k->page_len = n;
		k->val_off = (size_t)(*val - enc);
		k->val_len = *vlen;
	}
	return 0;
}

/* Reserves a string column's bytes: exactly the bound (a dbuf would round it up to a power
 * of two), under the limit. */
static int reserve_strings(lv__lf_colbuf *b, size_t bound, size_t str_limit)
{
	if (!bound)
		return 0;
	b->data.cap = (bound < str_limit ? bound : str_limit - 1) + 1;
	if (!(b->data.ptr = lv__malloc(b->data.cap))) {
		b->data.cap = 0;
		return LV_ENOMEM;
	}
	b->data.ptr[0] = 0;
	return 0;
}

/* sum + the sizes of the current page's buffers (each checked by page_meta to lie within the
 * file), capped at the file's size (pages may share bytes). */
static size_t add_page_bufs(const lv__lf_rctx *r, const lv__lf_dctx *c, size_t sum)
{
	for (size_t i = 0; i < c->nbufs; i++)
		sum = c->buflen[i] > r->size - sum ? r->size : sum + c->buflen[i];
	return sum;
}

/* Decodes every page of a column's metadata cm[0..len) into c->cb; a string column of one
 * page (lazy) has its bytes reserved from that page's buffers before it is decoded. */
static int read_pages(lv__lf_rctx *r, lv_lancefile *f, lv__lf_dctx *c, const uint8_t *cm, size_t len,
		      enc_cache *k, bool lazy, size_t str_limit)
{
	const uint8_t *val;
	size_t vlen;
	lv__pb_field g = { 0 };
	if (lv__lf_pb_find(cm, len, 1, &g) != 1)
		return lv__lf_perr(c, LV_ECORRUPT, "column metadata without an encoding");
	c->page = 0;
	LV_TRY(column_encoding(c, &g, k));
	c->mbc = &k->mb;
	lv__pb pr = lv__pb_make(cm, len);
	size_t row = 0, page = 0;
	uint64_t plen;
	const uint8_t *enc;
	size_t enclen;
	int rc;
	while ((rc = page_next(r, c, &pr, &page, &plen, &enc, &enclen)) == 1) {
		if (plen > f->nrows - row)
			return lv__lf_perr(c, LV_ECORRUPT, "pages hold more than the file's %zu rows",
				       f->nrows);
		if (plen == 0)
			continue; /* like Lance's 2.0 reader, skip empty pages */
		if (!enc)
			return lv__lf_perr(c, LV_ECORRUPT, "page without an encoding");
		LV_TRY(page_encoding(c, enc, enclen, k, &val, &vlen));
		if (lazy) { /* the one page: its buffers (checked by page_meta) bound the bytes */
			if (reserve_strings(c->cb, add_page_bufs(r, c, 0), str_limit) < 0)
				return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
			lazy = false;
		}
		c->row0 = row;
		c->nrows = (size_t)plen;
		LV_TRY(f->version == LV_LANCEFILE_V2_0 ? lv__lf_decode_page20(c, val, vlen)
						       : lv__lf_decode_page21(c, val, vlen));
		row += (size_t)plen;
	}
	if (rc < 0)
		return rc;
	if (row != f->nrows)
		return lv__err(r->err, LV_ECORRUPT, "file %s: column '%s': pages hold %zu of %zu rows",
			       r->name, c->col, row, f->nrows);
	return 0;
}

/*
 * The bytes a string column's pages hold: the sum of their buffers' sizes, each buffer
 * checked to lie within the file first (page_meta), the sum capped at the file's size (pages
 * may share bytes).  Uncompressed strings take no more than that, so reserving it once
 * replaces the growth by doubling (a fresh mapping and a copy at every step); compressed or
 * dictionary strings grow past it as before.  Walked before decoding for a column of more
 * than one page (many_pages); a column of one page is bounded by the decode pass itself.
 */
static int str_bytes_bound(lv__lf_rctx *r, lv__lf_dctx *c, const uint8_t *cm, size_t len,
			   size_t *out)
{
	lv__pb pr = lv__pb_make(cm, len);
	size_t sum = 0, page = 0;
	uint64_t plen;
	const uint8_t *enc;
	size_t enclen;
	int rc;
	*out = 0;
	while ((rc = page_next(r, c, &pr, &page, &plen, &enc, &enclen)) == 1)
		sum = add_page_bufs(r, c, sum);
	if (rc < 0)
		return rc;
	*out = sum;
	return 0;
}

/* Whether column metadata cm holds more than one page (or is malformed: the full walk of
 * str_bytes_bound then reports it); a skip over its fields, none parsed. */
static bool many_pages(const uint8_t *cm, size_t len)
{
	lv__pb pr = lv__pb_make(cm, len);
	lv__pb_field g;
	int rc, n = 0;
	while ((rc = lv__pb_next(&pr, &g)) == 1)
		if (g.num == 2 && g.wire == LV_PB_LEN && ++n > 1)
			return true;
	return rc < 0;
}

static int read_column(lv__lf_rctx *r, lv_lancefile *f, size_t ci, uint64_t pos, uint64_t len,
		       size_t str_limit, lv__lf_budget *budget, enc_cache *k)
{
	lv_column *col = &f->cols[ci];
	lv__lf_colbuf b = { .type = col->type, .nullable = col->nullable, .dim = col->list_size };
	lv__lf_dctx c; /* every field but the page buffers (nbufs says how many are set) */
	c.file = r->name;
	c.col = col->name;
	c.page = 0;
	c.err = r->err;
	c.version = f->version;
	c.nbufs = 0;
	c.cb = &b;
	c.budget = budget;
	c.row0 = c.nrows = 0;
	c.mbc = NULL;
	size_t bound = 0;
	const uint8_t *cm = r->d + pos;
	bool str = col->type == LV_COL_UTF8, many = str && many_pages(cm, (size_t)len);
	int rc = many ? str_bytes_bound(r, &c, cm, (size_t)len, &bound) : 0;
	if (rc == 0 && (rc = col_alloc(f, &b, f->nrows, str_limit)) == 0)
		rc = reserve_strings(&b, bound, str_limit);
	if (rc == LV_ENOMEM)
		rc = lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	else if (rc == 0)
		rc = read_pages(r, f, &c, cm, (size_t)len, k, str && !many, str_limit);
	lv_buf data = { 0 };
	if (rc == 0 && b.type == LV_COL_UTF8 && lv__dbuf_take(&b.data, &data) < 0)
		rc = lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	if (rc < 0) {
		lv__dbuf_dispose(&b.data); /* the arrays stay in the arena */
		return rc;
	}
	col->u64 = b.u64;
	col->i64 = (const int64_t *)b.u64;
	col->bools = b.bools;
	col->str_offsets = b.offs;
	col->str_data = b.type == LV_COL_UTF8 ? (const char *)data.ptr : NULL;
	col->f32 = b.f32;
	col->validity = b.valid;
	return 0;
}

/* Footer checks; yields the version and the table positions. */
static int footer(lv__lf_rctx *r, int *version, uint64_t *cm_start, uint64_t *gbo, uint32_t *ngb,
		  uint32_t *ncols)
{
	if (r->size < LV__LF_FOOTER_SIZE)
		return lv__lf_rcorrupt(r, "shorter than the 40-byte footer");
	const uint8_t *ft = r->d + r->size - LV__LF_FOOTER_SIZE;
	if (memcmp(ft + 36, "LANC", 4) != 0)
		return lv__lf_rcorrupt(r, "missing LANC magic");
	*cm_start = lv__le64(ft);
	*gbo = lv__le64(ft + 16);
	*ngb = lv__le32(ft + 24);
	*ncols = lv__le32(ft + 28);
	uint16_t major = lv__le16(ft + 32), minor = lv__le16(ft + 34);
	if ((major == 0 && minor == 3) || (major == 2 && minor == 0))
		*version = LV_LANCEFILE_V2_0;
	else if (major == 2 && minor == 1)
		*version = LV_LANCEFILE_V2_1;
	else if (major == 2 && minor == 2)
		*version = LV_LANCEFILE_V2_2;
	else if (major == 0 && minor == 2)
		return lv__err(r->err, LV_EUNSUPPORTED,
			       "file %s: legacy Lance v1 file (footer 0.2) is not supported", r->name);
	else
		return lv__err(r->err, LV_EUNSUPPORTED, "file %s: unsupported Lance file version %u.%u",
			       r->name, major, minor);
	if (*ngb == 0)
		return lv__lf_rcorrupt(r, "no global buffers (schema expected)");
	if (!in_file(r, *gbo, (uint64_t)*ngb * 16))
		return lv__lf_rcorrupt(r, "global buffer table out of range");
	/* Lance takes the CMO table as the last 16*ncols bytes before the GBO table */
	if (*cm_start > *gbo || *gbo - *cm_start < (uint64_t)*ncols * 16)
		return lv__lf_rcorrupt(r, "column metadata offset table out of range");
	return 0;
}

/* Decodes every column that has a physical column; partial reads keep going. */
static int read_columns(lv__lf_rctx *r, lv_lancefile *f, uint64_t cm_start, uint64_t cmo)
{
	size_t str_limit = MIN_STR_BYTES + (r->size > SIZE_MAX / 128 ? SIZE_MAX / 2 : r->size * 64);
	lv__lf_budget budget = { .left = (uint64_t)MIN_STR_BYTES + (uint64_t)r->size * 64 };
	enc_cache ec; /* empty: the layout's 2.4 KB are written when one is parsed */
	ec.col = ec.page = NULL;
	ec.col_len = ec.page_len = ec.val_off = ec.val_len = 0;
	ec.mb.p = NULL;
	ec.mb.n = 0;
	for (size_t i = 0; i < f->ncols; i++) {
		if (f->cols[i].type == LV_COL_UNDECODED)
			continue;
		size_t k = f->phys[i];
		uint64_t p = lv__le64(r->d + cmo + 16 * k), l = lv__le64(r->d + cmo + 16 * k + 8);
		if (p < cm_start || p > cmo || l > cmo - p)
			return lv__err(r->err, LV_ECORRUPT,
				       "file %s: column %zu metadata out of range", r->name, k);
		lv_error cerr; /* not the 512-byte zeroing of every column's: set when used */
		cerr.code = 0;
		cerr.message[0] = 0;
		lv_error *keep = r->err;
		r->err = &cerr;
		int rc = read_column(r, f, i, p, l, str_limit, &budget, &ec);
		r->err = keep;
		if (rc < 0)
			LV_TRY(lv__lf_col_undecoded(r, f, i, rc, cerr.message));
	}
	return 0;
}

int lv_lancefile_read_ex(lv_lancefile **out, const uint8_t *data, size_t size, const char *name,
			 unsigned flags, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "lancefile read: out is NULL");
	*out = NULL;
	lv__lf_rctx r = { .d = data, .size = size, .name = name ? name : "<memory>", .err = err,
		      .flags = flags };
	if (!data && size)
		return lv__err(err, LV_EINVALID, "lancefile read: data is NULL");
	int version = 0;
	uint64_t cm_start = 0, gbo = 0;
	uint32_t ngb = 0, nphys = 0;
	LV_TRY(footer(&r, &version, &cm_start, &gbo, &ngb, &nphys));
	uint64_t cmo = gbo - (uint64_t)nphys * 16;
	uint64_t gb0 = lv__le64(data + gbo), gb0_len = lv__le64(data + gbo + 8);
	if (!in_file(&r, gb0, gb0_len) || gb0 + gb0_len > gbo)
		return lv__lf_rcorrupt(&r, "schema buffer out of range");
	lv_lancefile *f = lv__calloc(1, sizeof *f);
	if (!f)
		return lv__err(err, LV_ENOMEM, "file %s: out of memory", r.name);
	f->version = version;
	uint64_t nrows = 0;
	int rc = lv__lf_parse_schema(&r, f, data + gb0, (size_t)gb0_len, nphys, &nrows);
	/* cap decoded work relative to the input: see the comment at the top */
	uint64_t cells = 0, cell_cap = MIN_CELLS + (uint64_t)size * 64;
	for (size_t i = 0; rc == 0 && i < f->ncols; i++)
		cells += f->cols[i].type == LV_COL_FSL_FLOAT32 ? f->cols[i].list_size : 1;
	if (rc == 0 && (nrows > UINT32_MAX || (cells && nrows > cell_cap / cells)))
		rc = lv__err(err, LV_ELIMIT, "file %s: %llu rows x %llu cells exceed the decode limit",
			     r.name, (unsigned long long)nrows, (unsigned long long)cells);
	if (rc == 0) {
		f->nrows = (size_t)nrows;
		rc = read_columns(&r, f, cm_start, cmo);
	}
	if (rc < 0) {
		lv_lancefile_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int lv_lancefile_read(lv_lancefile **out, const uint8_t *data, size_t size, const char *name,
		      lv_error *err)
{
	return lv_lancefile_read_ex(out, data, size, name, 0, err);
}

const char *lv_lancefile_column_error(const lv_lancefile *f, size_t i)
{
	return f && i < f->ncols ? f->errors[i] : NULL;
}

size_t lv_lancefile_num_fields(const lv_lancefile *f) { return f ? f->nfields : 0; }

int lv_lancefile_field(const lv_lancefile *f, size_t i, const char **name,
		       const char **logical_type, bool *nullable, unsigned *depth)
{
	if (!f || i >= f->nfields)
		return LV_EINVALID;
	if (name)
		*name = f->fields[i].name;
	if (logical_type)
		*logical_type = f->fields[i].ltype;
	if (nullable)
		*nullable = f->fields[i].nullable;
	if (depth)
		*depth = f->fields[i].depth;
	return 0;
}

int lv_lancefile_file_version(const lv_lancefile *f) { return f ? f->version : 0; }
size_t lv_lancefile_num_rows(const lv_lancefile *f) { return f ? f->nrows : 0; }
size_t lv_lancefile_num_columns(const lv_lancefile *f) { return f ? f->ncols : 0; }

const lv_column *lv_lancefile_column(const lv_lancefile *f, size_t i)
{
	return f && i < f->ncols ? &f->cols[i] : NULL;
}

const char *lv_lancefile_column_logical_type(const lv_lancefile *f, size_t i)
{
	return f && i < f->ncols ? f->ltypes[i] : NULL;
}

size_t lv_lancefile_num_metadata(const lv_lancefile *f) { return f ? f->nmeta : 0; }

const lv_kv *lv_lancefile_metadata(const lv_lancefile *f, size_t i)
{
	return f && i < f->nmeta ? &f->meta[i] : NULL;
}

const lv_kv *lv_lancefile_metadata_find(const lv_lancefile *f, const char *key)
{
	if (!f || !key)
		return NULL;
	size_t n = strlen(key); /* lengths first: keys share long prefixes ("lancever:") */
	for (size_t i = f->nmeta; i-- > 0;)
		if (f->meta_klen[i] == n && !memcmp(f->meta[i].key, key, n))
			return &f->meta[i];
	return NULL;
}
