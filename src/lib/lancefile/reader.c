/*
 * Lance file format v2 reader: footer, offset tables, schema (global buffer 0),
 * column metadata and pages; page bodies are decoded by decode.c.
 *
 * The reader never trusts the file: every position and size is checked
 * against the bytes at hand, and the number of decoded cells and string bytes
 * is capped relative to the input size so that a small corrupt file cannot
 * make it allocate gigabytes.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

#define MIN_CELLS ((uint64_t)1 << 22)    /* rows x columns always allowed */
#define MIN_STR_BYTES ((size_t)256 << 20) /* decoded string bytes always allowed */

struct lv_lancefile {
	int version;
	size_t nrows, ncols;
	lv_column *cols;
	char **ltypes;
	lv_kv *meta;
	size_t nmeta;
};

typedef struct rctx {
	const uint8_t *d;
	size_t size;
	const char *name;
	lv_error *err;
} rctx;

static int rcorrupt(rctx *r, const char *what)
{
	return lv__err(r->err, LV_ECORRUPT, "file %s: not a valid Lance v2 file: %s", r->name, what);
}

/* [pos, pos+len) must lie within the file before the footer. */
static bool in_file(const rctx *r, uint64_t pos, uint64_t len)
{
	uint64_t lim = r->size - LF_FOOTER_SIZE;
	return pos <= lim && len <= lim - pos;
}

void lv_lancefile_free(lv_lancefile *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ncols && f->cols; i++) {
		lv_column *c = &f->cols[i];
		free((void *)c->name);
		free((void *)c->u64);
		free((void *)c->bools);
		free((void *)c->str_offsets);
		free((void *)c->str_data);
		free((void *)c->validity);
		if (f->ltypes)
			free(f->ltypes[i]);
	}
	for (size_t i = 0; i < f->nmeta; i++) {
		free((void *)f->meta[i].key);
		free((void *)f->meta[i].value);
	}
	free(f->cols);
	free(f->ltypes);
	free(f->meta);
	free(f);
}

static char *dup_bytes(const uint8_t *p, size_t n)
{
	char *s = lv__malloc(n + 1);
	if (s) {
		if (n)
			memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static int type_of(const char *lt)
{
	if (!strcmp(lt, "uint64"))
		return LV_COL_UINT64;
	if (!strcmp(lt, "int64"))
		return LV_COL_INT64;
	if (!strcmp(lt, "bool"))
		return LV_COL_BOOL;
	if (!strcmp(lt, "string") || !strcmp(lt, "large_string"))
		return LV_COL_UTF8;
	return 0;
}

/* Parses one schema Field into column slot i. */
static int parse_field(rctx *r, lv_lancefile *f, size_t i, const uint8_t *p, size_t n)
{
	lv_pb pr = lv_pb_make(p, n);
	lv_pb_field g = { 0 };
	int rc;
	const uint8_t *name = NULL, *lt = NULL;
	size_t name_len = 0, lt_len = 0;
	uint64_t parent = 0, nullable = 0;
	bool have_parent = false;
	while ((rc = lv_pb_next(&pr, &g)) == 1) {
		if (g.num == 2 && g.wire == LV_PB_LEN) {
			name = g.data;
			name_len = g.len;
		} else if (g.num == 4 && g.wire == LV_PB_VARINT) {
			parent = g.u;
			have_parent = true;
		} else if (g.num == 5 && g.wire == LV_PB_LEN) {
			lt = g.data;
			lt_len = g.len;
		} else if (g.num == 6 && g.wire == LV_PB_VARINT) {
			nullable = g.u;
		}
	}
	if (rc < 0)
		return rcorrupt(r, "malformed schema field");
	lv_column *c = &f->cols[i];
	c->name = dup_bytes(name ? name : (const uint8_t *)"", name_len);
	f->ltypes[i] = dup_bytes(lt ? lt : (const uint8_t *)"", lt_len);
	if (!c->name || !f->ltypes[i])
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	/* parent_id is an int32 written as a 64-bit varint: -1 = top level */
	if (have_parent && parent != UINT64_MAX && parent != 0xffffffffu)
		return lv__err(r->err, LV_EUNSUPPORTED,
			       "file %s: column '%s': nested fields are not supported", r->name,
			       c->name);
	c->type = type_of(f->ltypes[i]);
	if (!c->type)
		return lv__err(r->err, LV_EUNSUPPORTED,
			       "file %s: column '%s': unsupported logical type '%s'", r->name, c->name,
			       f->ltypes[i]);
	c->nullable = nullable != 0;
	return 0;
}

static int parse_schema(rctx *r, lv_lancefile *f, const uint8_t *p, size_t n, uint64_t *nrows)
{
	lv_pb_field fs = { 0 };
	int rc = lf_pb_find(p, n, 1, &fs);
	if (rc != 1)
		return rcorrupt(r, rc < 0 ? "malformed file descriptor" : "file descriptor without schema");
	*nrows = 0;
	lv_pb pr = lv_pb_make(p, n);
	lv_pb_field g = { 0 };
	while ((rc = lv_pb_next(&pr, &g)) == 1)
		if (g.num == 2 && g.wire == LV_PB_VARINT)
			*nrows = g.u;
	if (rc < 0)
		return rcorrupt(r, "malformed file descriptor");
	size_t nfields = 0, nmeta = 0;
	pr = lv_pb_sub(&fs);
	while ((rc = lv_pb_next(&pr, &g)) == 1) {
		nfields += g.num == 1 && g.wire == LV_PB_LEN;
		nmeta += g.num == 5 && g.wire == LV_PB_LEN;
	}
	if (rc < 0)
		return rcorrupt(r, "malformed schema");
	if (nfields != f->ncols)
		return lv__err(r->err, nfields > f->ncols ? LV_EUNSUPPORTED : LV_ECORRUPT,
			       "file %s: schema has %zu fields but the file has %zu columns%s", r->name,
			       nfields, f->ncols, nfields > f->ncols ? " (nested types?)" : "");
	f->meta = lv__calloc(nmeta ? nmeta : 1, sizeof *f->meta);
	if (!f->meta)
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	size_t fi = 0;
	pr = lv_pb_sub(&fs);
	while (lv_pb_next(&pr, &g) == 1) {
		if (g.num == 1 && g.wire == LV_PB_LEN) {
			LV_TRY(parse_field(r, f, fi++, g.data, g.len));
		} else if (g.num == 5 && g.wire == LV_PB_LEN) {
			lv_pb er = lv_pb_sub(&g);
			lv_pb_field e = { 0 };
			const uint8_t *k = NULL, *v = NULL;
			size_t kl = 0, vl = 0;
			while ((rc = lv_pb_next(&er, &e)) == 1) {
				if (e.num == 1 && e.wire == LV_PB_LEN) {
					k = e.data;
					kl = e.len;
				} else if (e.num == 2 && e.wire == LV_PB_LEN) {
					v = e.data;
					vl = e.len;
				}
			}
			if (rc < 0)
				return rcorrupt(r, "malformed schema metadata entry");
			lv_kv *kv = &f->meta[f->nmeta++];
			kv->key = dup_bytes(k ? k : (const uint8_t *)"", kl);
			kv->value = dup_bytes(v ? v : (const uint8_t *)"", vl);
			kv->value_len = vl;
			if (!kv->key || !kv->value)
				return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
		}
	}
	for (size_t i = 0; i < f->ncols; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(f->cols[i].name, f->cols[j].name))
				return rcorrupt(r, "duplicate column name");
	return 0;
}

typedef struct u64list {
	uint64_t v[LF_MAX_PAGE_BUFS];
	size_t n;
	bool over;
} u64list;

static void u64list_add(uint64_t v, void *arg)
{
	u64list *l = arg;
	if (l->n < LF_MAX_PAGE_BUFS)
		l->v[l->n++] = v;
	else
		l->over = true;
}

/* Parses the Encoding{direct{Any}} of a page or column; yields the Any value. */
static int direct_any(lf_dctx *c, const uint8_t *p, size_t n, const char *want, const uint8_t **val,
		      size_t *vlen)
{
	lv_pb_field f = { 0 }, g = { 0 };
	int k = lf_pb_find(p, n, 2, &f);
	if (k < 0)
		return lf_perr(c, LV_ECORRUPT, "malformed encoding");
	if (k == 0) {
		int ind = lf_pb_find(p, n, 1, &g);
		return lf_perr(c, ind == 1 ? LV_EUNSUPPORTED : LV_ECORRUPT, "%s",
			       ind == 1 ? "unsupported indirect (deferred) encoding"
				        : "encoding is not direct");
	}
	if (lf_pb_find(f.data, f.len, 1, &g) < 0)
		return lf_perr(c, LV_ECORRUPT, "malformed direct encoding");
	if (lf_pb_find(f.data, f.len, 1, &g) == 0) {
		g.data = (const uint8_t *)"";
		g.len = 0;
	}
	char url[96];
	int rc = lf_any_unwrap(g.data, g.len, want, val, vlen, url, sizeof url);
	if (rc == LV_ECORRUPT)
		return lf_perr(c, LV_ECORRUPT, "malformed Any");
	if (rc < 0)
		return lf_perr(c, LV_EUNSUPPORTED, "unsupported encoding type '%s'", url);
	return 0;
}

static int col_alloc(lf_colbuf *b, size_t nrows, size_t str_limit)
{
	size_t n = nrows ? nrows : 1;
	lv_dbuf_init(&b->data, str_limit);
	if (b->type == LV_COL_UTF8) {
		b->offs = lv__calloc(nrows + 1, sizeof *b->offs);
		if (!b->offs)
			return LV_ENOMEM;
	} else if (b->type == LV_COL_BOOL) {
		if (!(b->bools = lv__calloc(n, 1)))
			return LV_ENOMEM;
	} else if (!(b->u64 = lv__calloc(n, sizeof *b->u64))) {
		return LV_ENOMEM;
	}
	if (b->nullable) {
		if (!(b->valid = lv__malloc(n)))
			return LV_ENOMEM;
		memset(b->valid, 1, n);
	}
	return 0;
}

static int read_column(rctx *r, lv_lancefile *f, size_t ci, uint64_t pos, uint64_t len,
		       size_t str_limit)
{
	lv_column *col = &f->cols[ci];
	lf_colbuf b = { .type = col->type, .nullable = col->nullable };
	lf_dctx c = { .file = r->name, .col = col->name, .err = r->err, .version = f->version,
		      .cb = &b };
	int rc = col_alloc(&b, f->nrows, str_limit);
	if (rc < 0) {
		rc = lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
		goto out;
	}
	const uint8_t *cm = r->d + pos;
	const uint8_t *val;
	size_t vlen;
	lv_pb_field g = { 0 };
	if (lf_pb_find(cm, (size_t)len, 1, &g) != 1) {
		rc = lf_perr(&c, LV_ECORRUPT, "column metadata without an encoding");
		goto out;
	}
	c.page = 0;
	rc = direct_any(&c, g.data, g.len, "lance.encodings.ColumnEncoding", &val, &vlen);
	if (rc < 0)
		goto out;
	rc = lf_pb_find(val, vlen, 1, &g);
	if (rc != 1) {
		rc = lf_perr(&c, rc < 0 ? LV_ECORRUPT : LV_EUNSUPPORTED, "%s",
			     rc < 0 ? "malformed column encoding"
				    : "unsupported column encoding (zone index or blob)");
		goto out;
	}
	lv_pb pr = lv_pb_make(cm, (size_t)len);
	size_t row = 0, page = 0;
	rc = 0;
	int more;
	while (rc == 0 && (more = lv_pb_next(&pr, &g)) == 1) {
		if (g.num != 2 || g.wire != LV_PB_LEN)
			continue;
		c.page = page++;
		u64list offs = { .n = 0 }, sizes = { .n = 0 };
		uint64_t plen = 0;
		const uint8_t *enc = NULL;
		size_t enclen = 0;
		lv_pb pp = lv_pb_sub(&g);
		lv_pb_field h = { 0 };
		int prc;
		while ((prc = lv_pb_next(&pp, &h)) == 1) {
			if (h.num == 1 && lv_pb_repeated_varint(&h, u64list_add, &offs) < 0)
				prc = -1;
			else if (h.num == 2 && lv_pb_repeated_varint(&h, u64list_add, &sizes) < 0)
				prc = -1;
			else if (h.num == 3 && h.wire == LV_PB_VARINT)
				plen = h.u;
			else if (h.num == 4 && h.wire == LV_PB_LEN) {
				enc = h.data;
				enclen = h.len;
			}
			if (prc < 0)
				break;
		}
		if (prc < 0) {
			rc = lf_perr(&c, LV_ECORRUPT, "malformed page metadata");
			break;
		}
		if (offs.over || sizes.over || offs.n != sizes.n) {
			rc = lf_perr(&c, LV_ECORRUPT, "page buffer lists are inconsistent");
			break;
		}
		if (plen > f->nrows - row) {
			rc = lf_perr(&c, LV_ECORRUPT, "pages hold more than the file's %zu rows",
				     f->nrows);
			break;
		}
		if (plen == 0)
			continue; /* like Lance's 2.0 reader, skip empty pages */
		if (!enc) {
			rc = lf_perr(&c, LV_ECORRUPT, "page without an encoding");
			break;
		}
		c.nbufs = offs.n;
		for (size_t i = 0; i < offs.n && rc == 0; i++) {
			if (!in_file(r, offs.v[i], sizes.v[i]))
				rc = lf_perr(&c, LV_ECORRUPT, "page buffer %zu out of the file", i);
			c.buf[i] = r->d + (rc == 0 ? offs.v[i] : 0);
			c.buflen[i] = (size_t)sizes.v[i];
		}
		if (rc)
			break;
		rc = direct_any(&c, enc, enclen,
				f->version == LV_LANCEFILE_V2_0 ? "lance.encodings.ArrayEncoding"
								: "lance.encodings21.PageLayout",
				&val, &vlen);
		if (rc)
			break;
		c.row0 = row;
		c.nrows = (size_t)plen;
		rc = f->version == LV_LANCEFILE_V2_0 ? lf_decode_page20(&c, val, vlen)
						     : lf_decode_page21(&c, val, vlen);
		row += (size_t)plen;
	}
	if (rc == 0 && more < 0)
		rc = lf_perr(&c, LV_ECORRUPT, "malformed column metadata");
	if (rc == 0 && row != f->nrows)
		rc = lv__err(r->err, LV_ECORRUPT, "file %s: column '%s': pages hold %zu of %zu rows",
			     r->name, col->name, row, f->nrows);
	if (rc == 0) {
		lv_buf data;
		if (b.type == LV_COL_UTF8 && lv_dbuf_take(&b.data, &data) < 0) {
			rc = lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
			goto out;
		}
		col->u64 = b.u64;
		col->i64 = (const int64_t *)b.u64;
		col->bools = b.bools;
		col->str_offsets = b.offs;
		col->str_data = b.type == LV_COL_UTF8 ? (const char *)data.ptr : NULL;
		col->validity = b.valid;
		return 0;
	}
out:
	free(b.u64);
	free(b.bools);
	free(b.offs);
	free(b.valid);
	lv_dbuf_dispose(&b.data);
	return rc;
}

int lv_lancefile_read(lv_lancefile **out, const uint8_t *data, size_t size, const char *name,
		      lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "lancefile read: out is NULL");
	*out = NULL;
	rctx r = { .d = data, .size = size, .name = name ? name : "<memory>", .err = err };
	if (!data && size)
		return lv__err(err, LV_EINVALID, "lancefile read: data is NULL");
	if (size < LF_FOOTER_SIZE)
		return rcorrupt(&r, "shorter than the 40-byte footer");
	const uint8_t *ft = data + size - LF_FOOTER_SIZE;
	if (memcmp(ft + 36, "LANC", 4) != 0)
		return rcorrupt(&r, "missing LANC magic");
	uint64_t cm_start = lv_le64(ft), gbo = lv_le64(ft + 16);
	uint32_t ngb = lv_le32(ft + 24), ncols = lv_le32(ft + 28);
	uint16_t major = lv_le16(ft + 32), minor = lv_le16(ft + 34);
	int version;
	if ((major == 0 && minor == 3) || (major == 2 && minor == 0))
		version = LV_LANCEFILE_V2_0;
	else if (major == 2 && minor == 1)
		version = LV_LANCEFILE_V2_1;
	else if (major == 0 && minor == 2)
		return lv__err(err, LV_EUNSUPPORTED,
			       "file %s: legacy Lance v1 file (footer 0.2) is not supported", r.name);
	else
		return lv__err(err, LV_EUNSUPPORTED, "file %s: unsupported Lance file version %u.%u",
			       r.name, major, minor);
	if (ngb == 0)
		return rcorrupt(&r, "no global buffers (schema expected)");
	if (!in_file(&r, gbo, (uint64_t)ngb * 16))
		return rcorrupt(&r, "global buffer table out of range");
	/* Lance takes the CMO table as the last 16*ncols bytes before the GBO table */
	if (cm_start > gbo || gbo - cm_start < (uint64_t)ncols * 16)
		return rcorrupt(&r, "column metadata offset table out of range");
	uint64_t cmo = gbo - (uint64_t)ncols * 16;
	uint64_t gb0 = lv_le64(data + gbo), gb0_len = lv_le64(data + gbo + 8);
	if (!in_file(&r, gb0, gb0_len) || gb0 + gb0_len > gbo)
		return rcorrupt(&r, "schema buffer out of range");

	lv_lancefile *f = lv__calloc(1, sizeof *f);
	if (!f)
		return lv__err(err, LV_ENOMEM, "file %s: out of memory", r.name);
	f->version = version;
	f->ncols = ncols;
	f->cols = lv__calloc(ncols ? ncols : 1, sizeof *f->cols);
	f->ltypes = lv__calloc(ncols ? ncols : 1, sizeof *f->ltypes);
	int rc = 0;
	if (!f->cols || !f->ltypes)
		rc = lv__err(err, LV_ENOMEM, "file %s: out of memory", r.name);
	uint64_t nrows = 0;
	if (rc == 0)
		rc = parse_schema(&r, f, data + gb0, (size_t)gb0_len, &nrows);
	/* cap decoded work relative to the input: see the comment at the top */
	uint64_t cell_cap = MIN_CELLS + (uint64_t)size * 64;
	if (rc == 0 && (nrows > UINT32_MAX || (ncols && nrows > cell_cap / ncols)))
		rc = lv__err(err, LV_ELIMIT, "file %s: %llu rows x %u columns exceed the decode limit",
			     r.name, (unsigned long long)nrows, ncols);
	if (rc == 0)
		f->nrows = (size_t)nrows;
	size_t str_limit = MIN_STR_BYTES + (size > SIZE_MAX / 128 ? SIZE_MAX / 2 : size * 64);
	for (size_t i = 0; i < ncols && rc == 0; i++) {
		uint64_t p = lv_le64(data + cmo + 16 * i), l = lv_le64(data + cmo + 16 * i + 8);
		if (p < cm_start || p > cmo || l > cmo - p)
			rc = lv__err(err, LV_ECORRUPT,
				     "file %s: column %zu metadata out of range", r.name, i);
		else
			rc = read_column(&r, f, i, p, l, str_limit);
	}
	if (rc < 0) {
		lv_lancefile_free(f);
		return rc;
	}
	*out = f;
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
	for (size_t i = f->nmeta; i-- > 0;)
		if (!strcmp(f->meta[i].key, key))
			return &f->meta[i];
	return NULL;
}
