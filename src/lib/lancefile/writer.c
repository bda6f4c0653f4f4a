/*
 * Lance file format v2 writer (2.0 and 2.1).
 *
 * The byte layout follows docs/lance-reference.md ("Lance file format") exactly, so that a 3-row file is
 * byte-identical to what Lance 8.0.0 writes: page buffers (64-aligned, padded
 * with 0x48), global buffer 0 (FileDescriptor), column metadata, CMO table,
 * GBO table, 40-byte footer.
 *
 * The output is reserved once from an upper bound of the file's size (size_bound) and 2.0
 * and 2.1 mini-block page buffers are written in place in it (full-zip pages, for long
 * strings, are built in scratch buffers).
 * Protobuf messages are built by writer_pb.c, inside-out in scratch lv_dbufs.  lv__dbuf
 * errors are sticky (`oom`), so message builders ignore per-call results and the
 * final lv__dbuf_take reports any failure once.
 */
#include <string.h>

#include "lancefile/lf_internal.h"
#include "lancefile/writer_pb.h"
#include "util/abi.h"

#define LF_DEFAULT_PAGE_ROWS 65536
#define LF_PAGE_STR_BYTES ((size_t)8 << 20) /* start a new string page past 8 MiB */
#define LF_FULLZIP_MIN_LEN 256              /* Lance's threshold for full-zip strings */
#define LF_CHUNK_TARGET 8192                /* aim for ~8 KiB mini-block chunks */
#define LF_CHUNK_MAX_VALUES 4096
#define LF_MAX_STRING ((uint64_t)1 << 30)

/* ---- file building ---- */

typedef struct wctx {
	lv__dbuf out;
	int ver;
	lv_error *err;
	/* the page being built */
	size_t nb;
	uint64_t off[LV__LF_MAX_PAGE_BUFS], size[LV__LF_MAX_PAGE_BUFS];
} wctx;

/* Pads b to a multiple of align past base; stops when b cannot grow (its oom flag, which
 * the writer checks at the end, says so; looping on would never end). */
static void pad_to(lv__dbuf *b, size_t base, size_t align, uint8_t byte)
{
	while ((b->len - base) % align && lv__dbuf_addc(b, byte) == 0) {
	}
}

/* Appends one page buffer at a 64-aligned position and records it. */
static void add_buffer(wctx *w, const void *p, size_t n)
{
	w->off[w->nb] = w->out.len;
	w->size[w->nb] = n;
	w->nb++;
	(void)lv__dbuf_add(&w->out, p, n);
	pad_to(&w->out, 0, LV__LF_ALIGN, LV__LF_PAD_BYTE);
}

/* Starts a page buffer of n bytes written in place at the end of w->out (no scratch copy):
 * returns where they go, or NULL when out cannot grow (its sticky oom flag says so; the
 * position is still recorded).  buffer_end closes it. */
static uint8_t *buffer_begin(wctx *w, size_t per, size_t count)
{
	size_t n;
	w->off[w->nb] = w->out.len;
	w->nb++;
	if (lv__mul_overflow(per, count, &n) || lv__dbuf_reserve(&w->out, n) < 0) {
		w->out.oom = true;
		w->size[w->nb - 1] = 0;
		return NULL;
	}
	w->size[w->nb - 1] = n;
	uint8_t *p = w->out.ptr + w->out.len;
	w->out.len += n;
	w->out.ptr[w->out.len] = 0;
	return p;
}

static void buffer_end(wctx *w) { pad_to(&w->out, 0, LV__LF_ALIGN, LV__LF_PAD_BYTE); }

static void add_buffer_dbuf(wctx *w, lv__dbuf *b)
{
	if (b->oom)
		w->out.oom = true;
	add_buffer(w, b->ptr, b->len);
	lv__dbuf_dispose(b);
	lv__dbuf_init(b, 0);
}

/* Closes the current page: appends ColumnMetadata.Page to cm. */
static void end_page(wctx *w, lv__dbuf *cm, size_t rows, uint64_t priority, lv__dbuf *layout)
{
	lv__dbuf p;
	lv__dbuf_init(&p, 0);
	lv__lf_w_packed(&p, 1, w->off, w->nb);
	lv__lf_w_packed(&p, 2, w->size, w->nb);
	(void)lv__pbw_u64(&p, 3, rows);
	lv__lf_w_encoding(&p, 4, w->ver == LV_LANCEFILE_V2_0 ? LV__LF_URL_ARRAY_ENCODING : LV__LF_URL_PAGE_LAYOUT,
		   layout);
	(void)lv__pbw_u64(&p, 5, priority);
	lv__lf_w_sub(cm, 2, &p);
	w->nb = 0;
}

static inline bool is_valid(const lv_column *c, size_t i) { return !c->validity || c->validity[i]; }

static inline uint64_t fixed_val(const lv_column *c, size_t i)
{
	if (!is_valid(c, i))
		return 0;
	return c->type == LV_COL_UINT64 ? c->u64[i] : (uint64_t)c->i64[i];
}

static inline size_t str_len(const lv_column *c, size_t i)
{
	return is_valid(c, i) ? (size_t)(c->str_offsets[i + 1] - c->str_offsets[i]) : 0;
}

static size_t count_nulls(const lv_column *c, size_t a, size_t n)
{
	size_t k = 0;
	if (c->validity)
		for (size_t i = 0; i < n; i++)
			k += !c->validity[a + i];
	return k;
}

/* ---- 2.0 pages ---- */

/* A bitmap of n rows from a (validity, or the values of a boolean column) in place. */
static void page_bitmap(wctx *w, const lv_column *c, size_t a, size_t n, bool validity)
{
	uint8_t *q = buffer_begin(w, 1, (n + 7) / 8);
	if (q) {
		memset(q, 0, (n + 7) / 8);
		for (size_t i = 0; i < n; i++)
			if (validity ? is_valid(c, a + i) : (is_valid(c, a + i) && c->bools[a + i]))
				q[i / 8] |= (uint8_t)(1u << (i % 8));
	}
	buffer_end(w);
}

/* 2.0 pages: every buffer is written in place in the output. */
static void page20(wctx *w, lv__dbuf *cm, const lv_column *c, size_t a, size_t n)
{
	lv__dbuf enc;
	lv__dbuf_init(&enc, 0);
	size_t nulls = count_nulls(c, a, n);
	if (c->type == LV_COL_UTF8) {
		uint64_t total = 0;
		for (size_t i = 0; i < n; i++)
			total += str_len(c, a + i);
		uint64_t adj = total + 1, end = 0;
		uint8_t *q = buffer_begin(w, 8, n);
		for (size_t i = 0; q && i < n; i++) {
			end += str_len(c, a + i);
			lv__put_le64(q + 8 * i, is_valid(c, a + i) ? end : end + adj);
		}
		buffer_end(w);
		q = total > SIZE_MAX ? NULL : buffer_begin(w, 1, (size_t)total);
		for (size_t i = 0; q && i < n; i++) {
			size_t l = str_len(c, a + i);
			if (l)
				memcpy(q, c->str_data + c->str_offsets[a + i], l);
			q += l;
		}
		buffer_end(w);
		lv__lf_w_a20_binary(&enc, adj);
	} else if (nulls == n) {
		lv__lf_w_a20_allnull(&enc);
	} else {
		uint64_t bits = c->type == LV_COL_BOOL ? 1 : 64;
		if (nulls)
			page_bitmap(w, c, a, n, true);
		if (bits == 1) {
			page_bitmap(w, c, a, n, false);
		} else {
			uint8_t *q = buffer_begin(w, 8, n);
			for (size_t i = 0; q && i < n; i++)
				lv__put_le64(q + 8 * i, fixed_val(c, a + i));
			buffer_end(w);
		}
		if (nulls)
			lv__lf_w_a20_somenull(&enc, bits);
		else
			lv__lf_w_a20_nonull(&enc, bits, 0);
	}
	end_page(w, cm, n, 0, &enc);
}

/* ---- 2.1 pages ---- */

static void chunk_meta(lv__dbuf *meta, size_t bytes, unsigned log2n, bool last)
{
	/* bytes is a multiple of 8 and at most 32 KiB by construction */
	(void)lv__dbuf_add_u16le(meta, (uint16_t)(((bytes / 8 - 1) << 4) | (last ? 0 : log2n)));
}

/* Size of a variable chunk's value buffer (offsets + bytes, padded to 4). */
static size_t var_value_size(const uint64_t *pre, size_t a, size_t k)
{
	size_t v = 4 * (k + 1) + (size_t)(pre[a + k] - pre[a]);
	return (v + 3) & ~(size_t)3;
}

static size_t var_chunk_size(const uint64_t *pre, size_t a, size_t k, bool def)
{
	size_t s = 8 + (def ? (2 * k + 7) / 8 * 8 : 0);
	return s + (var_value_size(pre, a, k) + 7) / 8 * 8;
}

/* Rows in the next chunk of a page from row i of n (page-relative), and whether it is the
 * last: fixed values in chunks of 512 (booleans 4,096); strings in the largest power of two
 * of rows (at most 4,096) that keeps the chunk near 8 KiB, or all the rest if they fit. */
static size_t next_chunk(const lv_column *c, const uint64_t *pre, size_t i, size_t n, bool def,
			 bool *last)
{
	size_t rem = n - i, k;
	if (c->type != LV_COL_UTF8) {
		size_t per = c->type == LV_COL_BOOL ? 4096 : 512;
		k = rem < per ? rem : per;
	} else if (rem <= LF_CHUNK_MAX_VALUES && var_chunk_size(pre, i, rem, def) <= LF_CHUNK_TARGET) {
		k = rem;
	} else {
		k = 2;
		while (k * 2 <= rem && k * 2 <= LF_CHUNK_MAX_VALUES &&
		       var_chunk_size(pre, i, k * 2, def) <= LF_CHUNK_TARGET)
			k *= 2;
		if (k > rem)
			k = rem;
	}
	*last = i + k == n;
	return k;
}

/* Bytes of the value buffer and of the whole chunk of rows [pa, pa+k) of the page: the
 * header (padded to 8), the definition levels (padded to 8), the values (padded to 8). */
static size_t chunk_vsize(const lv_column *c, const uint64_t *pre, size_t pa, size_t k)
{
	if (c->type == LV_COL_UTF8)
		return var_value_size(pre, pa, k);
	return c->type == LV_COL_BOOL ? (k + 7) / 8 : 8 * k;
}

static size_t chunk_size(const lv_column *c, const uint64_t *pre, size_t pa, size_t k, bool def)
{
	return 8 + (def ? (2 * k + 7) / 8 * 8 : 0) + (chunk_vsize(c, pre, pa, k) + 7) / 8 * 8;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint64_t v)
{
	for (int j = 0; j < 4; j++)
		p[j] = (uint8_t)(v >> (8 * j));
}

/*
 * Writes one mini-block chunk of rows [a, a+k) of column c (page-relative prefix sums `pre`
 * for strings, the chunk's first row pa within them) in place at q, chunk_size() bytes:
 * [u16 levels][u16 level bytes if def][u16 value bytes] padded with 0xFE to 8, the u16
 * levels (0 valid, 1 null) padded to 8, the values (u64 words, a bitmap, or u32 offsets and
 * the bytes padded with 0x48 to 4) padded with 0xFE to 8.
 */
static void write_chunk(uint8_t *q, const lv_column *c, size_t a, size_t k, bool def,
			const uint64_t *pre, size_t pa)
{
	size_t vsize = chunk_vsize(c, pre, pa, k), o = 0;
	memset(q, 0xFE, chunk_size(c, pre, pa, k, def));
	put16(q, def ? k : 0);
	if (def)
		put16(q + 2, 2 * k);
	put16(q + (def ? 4 : 2), vsize);
	o = 8;
	if (def) {
		for (size_t i = 0; i < k; i++)
			put16(q + o + 2 * i, is_valid(c, a + i) ? 0 : 1);
		o += (2 * k + 7) / 8 * 8;
	}
	uint8_t *v = q + o;
	if (c->type == LV_COL_UTF8) {
		uint64_t off = 4 * (k + 1);
		put32(v, off);
		for (size_t i = 0; i < k; i++) {
			size_t l = str_len(c, a + i);
			if (l)
				memcpy(v + off, c->str_data + c->str_offsets[a + i], l);
			off += l;
			put32(v + 4 * (i + 1), off);
		}
		memset(v + off, LV__LF_PAD_BYTE, vsize - off);
	} else if (c->type == LV_COL_BOOL) {
		memset(v, 0, vsize);
		for (size_t i = 0; i < k; i++)
			if (is_valid(c, a + i) && c->bools[a + i])
				v[i / 8] |= (uint8_t)(1u << (i % 8));
	} else {
		for (size_t i = 0; i < k; i++)
			lv__put_le64(v + 8 * i, fixed_val(c, a + i));
	}
}

/* A mini-block page's two buffers: the chunk metadata words, then the chunks, written in
 * place in the output (the metadata first: the chunks' sizes are known before they are). */
static void miniblock_buffers(wctx *w, const lv_column *c, size_t a, size_t n, bool def,
			      const uint64_t *pre)
{
	lv__dbuf meta;
	lv__dbuf_init(&meta, 0);
	size_t total = 0;
	bool last = false;
	for (size_t i = 0, k; i < n; i += k) {
		k = next_chunk(c, pre, i, n, def, &last);
		unsigned lg = 0;
		while (((size_t)1 << lg) < k)
			lg++;
		size_t bytes = chunk_size(c, pre, i, k, def);
		chunk_meta(&meta, bytes, lg, last);
		total += bytes;
	}
	add_buffer_dbuf(w, &meta);
	uint8_t *q = buffer_begin(w, 1, total);
	for (size_t i = 0, k; q && i < n; i += k) {
		k = next_chunk(c, pre, i, n, def, &last);
		write_chunk(q, c, a + i, k, def, pre, i);
		q += chunk_size(c, pre, i, k, def);
	}
	buffer_end(w);
}

static int page21(wctx *w, lv__dbuf *cm, const lv_column *c, size_t a, size_t n)
{
	lv__dbuf enc;
	lv__dbuf_init(&enc, 0);
	size_t nulls = count_nulls(c, a, n);
	bool def = nulls > 0;
	if (nulls == n) {
		lv__lf_w_l21_allnull(&enc);
		end_page(w, cm, n, a, &enc);
		return 0;
	}
	if (c->type != LV_COL_UTF8) {
		miniblock_buffers(w, c, a, n, def, NULL);
		lv__lf_w_l21_miniblock(&enc, def, c->type == LV_COL_BOOL ? 1 : 64, n);
		end_page(w, cm, n, a, &enc);
		return 0;
	}
	/* strings: prefix sums of valid lengths within the page */
	uint64_t *pre = lv__calloc(n + 1, sizeof *pre);
	if (!pre)
		return lv__err(w->err, LV_ENOMEM, "lancefile: out of memory");
	size_t maxlen = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = str_len(c, a + i);
		pre[i + 1] = pre[i] + l;
		if (l > maxlen)
			maxlen = l;
	}
	if (maxlen >= LF_FULLZIP_MIN_LEN) {
		/* full zip: [control byte if def] [u32 length + bytes if valid] per row */
		lv__dbuf ri, ch;
		lv__dbuf_init(&ri, 0);
		lv__dbuf_init(&ch, 0);
		uint64_t *starts = lv__calloc(n + 1, sizeof *starts);
		if (!starts) {
			lv__free(pre);
			return lv__err(w->err, LV_ENOMEM, "lancefile: out of memory");
		}
		for (size_t i = 0; i < n; i++) {
			starts[i] = ch.len;
			if (def)
				(void)lv__dbuf_addc(&ch, is_valid(c, a + i) ? 0 : 1);
			if (is_valid(c, a + i)) {
				size_t l = str_len(c, a + i);
				(void)lv__dbuf_add_u32le(&ch, (uint32_t)l);
				(void)lv__dbuf_add(&ch, c->str_data + c->str_offsets[a + i], l);
			}
		}
		starts[n] = ch.len;
		/* repetition index: byte-packed row start positions, width from the maximum */
		uint64_t mx = ch.len;
		unsigned wdt = mx <= 0xff ? 1 : mx <= 0xffff ? 2 : mx <= 0xffffffffu ? 4 : 8;
		for (size_t i = 0; i <= n; i++)
			for (unsigned b = 0; b < wdt; b++)
				(void)lv__dbuf_addc(&ri, (uint8_t)(starts[i] >> (8 * b)));
		lv__free(starts);
		add_buffer_dbuf(w, &ch);
		add_buffer_dbuf(w, &ri);
		lv__lf_w_l21_fullzip(&enc, def, n);
	} else {
		miniblock_buffers(w, c, a, n, def, pre);
		lv__lf_w_l21_miniblock(&enc, def, 0, n);
	}
	lv__free(pre);
	end_page(w, cm, n, a, &enc);
	return 0;
}

/* ---- schema ---- */

static void write_schema(lv__dbuf *gb, const lv_column *cols, size_t ncols, size_t nrows,
			 const lv_kv *meta, size_t nmeta)
{
	static const char *const ltype[] = { "", "uint64", "int64", "bool", "string" };
	lv__dbuf s, f, e;
	lv__dbuf_init(&s, 0);
	lv__dbuf_init(&f, 0);
	lv__dbuf_init(&e, 0);
	for (size_t i = 0; i < ncols; i++) {
		(void)lv__pbw_str(&f, 2, cols[i].name);
		(void)lv__pbw_u64(&f, 3, i);
		(void)lv__pbw_u64_always(&f, 4, UINT64_MAX); /* parent_id -1 */
		(void)lv__pbw_str(&f, 5, ltype[cols[i].type]);
		(void)lv__pbw_u64(&f, 6, cols[i].nullable);
		(void)lv__pbw_u64(&f, 7, cols[i].type == LV_COL_UTF8 ? 2 : 1);
		lv__lf_w_sub(&s, 1, &f);
	}
	for (size_t i = 0; i < nmeta; i++) {
		(void)lv__pbw_str(&e, 1, meta[i].key);
		if (meta[i].value_len)
			(void)lv__pbw_bytes(&e, 2, meta[i].value, meta[i].value_len);
		lv__lf_w_sub(&s, 5, &e);
	}
	lv__lf_w_sub(gb, 1, &s);
	(void)lv__pbw_u64(gb, 2, nrows);
}

static int check_input(const lv_column *cols, size_t ncols, size_t nrows, const lv_kv *meta,
		       size_t nmeta, lv_error *err)
{
	if (ncols && !cols)
		return lv__err(err, LV_EINVALID, "lancefile write: columns missing");
	if (nmeta && !meta)
		return lv__err(err, LV_EINVALID, "lancefile write: metadata missing");
	if (nrows > UINT32_MAX)
		return lv__err(err, LV_ELIMIT, "lancefile write: %zu rows exceed 2^32-1", nrows);
	if (ncols > UINT32_MAX)
		return lv__err(err, LV_ELIMIT, "lancefile write: too many columns");
	for (size_t i = 0; i < ncols; i++) {
		const lv_column *c = &cols[i];
		if (!c->name || !*c->name || strchr(c->name, '.'))
			return lv__err(err, LV_EINVALID,
				       "lancefile write: column %zu: name must be non-empty without '.'",
				       i);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(cols[j].name, c->name))
				return lv__err(err, LV_EINVALID,
					       "lancefile write: duplicate column name '%s'", c->name);
		if (!c->nullable && c->validity)
			return lv__err(err, LV_EINVALID,
				       "lancefile write: column '%s': validity given but not nullable",
				       c->name);
		bool have;
		switch (c->type) {
		case LV_COL_UINT64: have = c->u64; break;
		case LV_COL_INT64: have = c->i64; break;
		case LV_COL_BOOL: have = c->bools; break;
		case LV_COL_UTF8: have = c->str_offsets && (c->str_data || nrows == 0); break;
		default:
			return lv__err(err, LV_EINVALID, "lancefile write: column '%s': bad type %d",
				       c->name, c->type);
		}
		if (c->type == LV_COL_UTF8 && !c->str_offsets)
			have = false;
		if (!have && nrows)
			return lv__err(err, LV_EINVALID, "lancefile write: column '%s': values missing",
				       c->name);
		if (c->type == LV_COL_UTF8) {
			for (size_t r = 0; r < nrows; r++) {
				if (c->str_offsets[r + 1] < c->str_offsets[r])
					return lv__err(err, LV_EINVALID,
						       "lancefile write: column '%s': offsets decrease at row %zu",
						       c->name, r);
				if (c->str_offsets[r + 1] - c->str_offsets[r] > LF_MAX_STRING)
					return lv__err(err, LV_ELIMIT,
						       "lancefile write: column '%s': row %zu string over 1 GiB",
						       c->name, r);
			}
		}
	}
	for (size_t i = 0; i < nmeta; i++)
		if (!meta[i].key || (meta[i].value_len && !meta[i].value))
			return lv__err(err, LV_EINVALID, "lancefile write: metadata entry %zu invalid", i);
	return 0;
}

/*
 * An upper bound of the file's size (saturating), so the output is allocated once instead
 * of growing by doubling: per row at most 8 value bytes, 2 of definition levels and 6 of
 * string offsets, length words and chunk headers; the strings' bytes (and 1/64 of them for
 * chunk padding); per page its buffers' padding and metadata.  Only a reservation: a file
 * that needs more grows as before.
 */
static size_t size_bound(const lv_column *cols, size_t ncols, size_t nrows, const lv_kv *meta,
			 size_t nmeta, size_t page_rows)
{
	uint64_t t = 65536, pages = nrows / page_rows + 1, lim = (uint64_t)1 << 62;
	for (size_t i = 0; i < nmeta; i++)
		t += strlen(meta[i].key) + meta[i].value_len + 16;
	for (size_t i = 0; i < ncols && t < lim; i++) {
		uint64_t per = cols[i].type == LV_COL_BOOL ? 3 : 10, bytes = 0;
		if (cols[i].type == LV_COL_UTF8 && nrows) {
			bytes = cols[i].str_offsets[nrows] - cols[i].str_offsets[0];
			per = 16;
		}
		if (bytes > lim)
			return 0;
		t += strlen(cols[i].name) + 64 + per * nrows + bytes + bytes / 64 +
		     (pages + bytes / LF_PAGE_STR_BYTES + 1) * (4 * LV__LF_ALIGN + 512);
	}
	return t < lim && t <= SIZE_MAX / 2 ? (size_t)t : 0;
}

int lv_lancefile_write_options_init(lv_lancefile_write_options *o, int version)
{
	static const lv_lancefile_write_options defaults = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	return lv__struct_init("lv_lancefile_write_options", o, sizeof *o, &defaults, version,
				       LV_LANCEFILE_WRITE_OPTIONS_VERSION, LV_LANCEFILE_WRITE_OPTIONS_VERSION);
}

int lv_lancefile_write(lv_buf *out, const lv_column *cols, size_t ncols, size_t nrows,
		       const lv_kv *meta, size_t nmeta, const lv_lancefile_write_options *opts,
		       lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "lancefile write: out is NULL");
	out->ptr = NULL;
	out->size = 0;
	int ver = LV_LANCEFILE_V2_1;
	size_t page_rows = LF_DEFAULT_PAGE_ROWS;
	if (opts) {
		LV_TRY(lv__struct_version("lv_lancefile_write_options", opts->version,
					  LV_LANCEFILE_WRITE_OPTIONS_VERSION,
					  LV_LANCEFILE_WRITE_OPTIONS_VERSION, err));
		if (opts->file_version == LV_LANCEFILE_V2_0 || opts->file_version == LV_LANCEFILE_V2_1)
			ver = opts->file_version;
		else if (opts->file_version != 0)
			return lv__err(err, LV_EINVALID, "lancefile write: unknown file version %d",
				       opts->file_version);
		if (opts->max_page_rows)
			page_rows = opts->max_page_rows;
	}
	LV_TRY(check_input(cols, ncols, nrows, meta, nmeta, err));

	wctx w = { .ver = ver, .err = err };
	lv__dbuf_init(&w.out, 0);
	size_t bound = size_bound(cols, ncols, nrows, meta, nmeta, page_rows);
	if (bound && lv__dbuf_reserve(&w.out, bound) < 0)
		w.out.oom = false; /* only a reservation: nothing written yet, grow as needed */
	lv__dbuf *cms = lv__calloc(ncols ? ncols : 1, sizeof *cms);
	if (!cms) {
		lv__dbuf_dispose(&w.out); /* the reservation above */
		return lv__err(err, LV_ENOMEM, "lancefile write: out of memory");
	}
	int rc = 0;
	for (size_t i = 0; i < ncols && rc == 0; i++) {
		const lv_column *c = &cols[i];
		lv__dbuf_init(&cms[i], 0);
		lv__dbuf colenc;
		lv__dbuf_init(&colenc, 0);
		(void)lv__pbw_bytes(&colenc, 1, NULL, 0); /* ColumnEncoding.values = Empty */
		lv__lf_w_encoding(&cms[i], 1, LV__LF_URL_COLUMN_ENCODING, &colenc);
		for (size_t a = 0; a < nrows && rc == 0;) {
			size_t n = nrows - a < page_rows ? nrows - a : page_rows;
			if (c->type == LV_COL_UTF8) {
				/* also cut string pages by bytes, keeping at least one row */
				size_t bytes = 0, k = 0;
				while (k < n && (k == 0 || bytes + str_len(c, a + k) <= LF_PAGE_STR_BYTES))
					bytes += str_len(c, a + k++);
				n = k;
			}
			if (ver == LV_LANCEFILE_V2_0)
				page20(&w, &cms[i], c, a, n);
			else
				rc = page21(&w, &cms[i], c, a, n);
			a += n;
		}
	}
	if (rc == 0) {
		uint64_t gb0 = w.out.len, gb0_size;
		lv__dbuf gb;
		lv__dbuf_init(&gb, 0);
		write_schema(&gb, cols, ncols, nrows, meta, nmeta);
		if (gb.oom)
			w.out.oom = true;
		(void)lv__dbuf_add(&w.out, gb.ptr, gb.len);
		gb0_size = gb.len;
		lv__dbuf_dispose(&gb);
		uint64_t cm_start = w.out.len;
		uint64_t *pos = lv__calloc(ncols ? ncols : 1, sizeof *pos);
		if (!pos) {
			rc = lv__err(err, LV_ENOMEM, "lancefile write: out of memory");
		} else {
			for (size_t i = 0; i < ncols; i++) {
				pos[i] = w.out.len;
				if (cms[i].oom)
					w.out.oom = true;
				(void)lv__dbuf_add(&w.out, cms[i].ptr, cms[i].len);
			}
			uint64_t cmo = w.out.len;
			for (size_t i = 0; i < ncols; i++) {
				(void)lv__dbuf_add_u64le(&w.out, pos[i]);
				(void)lv__dbuf_add_u64le(&w.out, cms[i].len);
			}
			uint64_t gbo = w.out.len;
			(void)lv__dbuf_add_u64le(&w.out, gb0);
			(void)lv__dbuf_add_u64le(&w.out, gb0_size);
			(void)lv__dbuf_add_u64le(&w.out, ncols ? cm_start : cmo);
			(void)lv__dbuf_add_u64le(&w.out, cmo);
			(void)lv__dbuf_add_u64le(&w.out, gbo);
			(void)lv__dbuf_add_u32le(&w.out, 1);
			(void)lv__dbuf_add_u32le(&w.out, (uint32_t)ncols);
			(void)lv__dbuf_add_u16le(&w.out, ver == LV_LANCEFILE_V2_0 ? 0 : 2);
			(void)lv__dbuf_add_u16le(&w.out, ver == LV_LANCEFILE_V2_0 ? 3 : 1);
			(void)lv__dbuf_add(&w.out, "LANC", 4);
			lv__free(pos);
			rc = lv__dbuf_take(&w.out, out);
			if (rc < 0)
				rc = lv__err(err, rc, "lancefile write: %s",
					     rc == LV_ENOMEM ? "out of memory" : "file too large");
		}
	}
	for (size_t i = 0; i < ncols; i++)
		lv__dbuf_dispose(&cms[i]);
	lv__free(cms);
	lv__dbuf_dispose(&w.out);
	return rc;
}
