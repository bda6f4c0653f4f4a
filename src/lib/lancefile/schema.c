/*
 * The schema of a Lance v2 file: global buffer 0 is a lance.file.FileDescriptor
 * {1 schema {1 fields, 5 metadata}, 2 length}.  Fields come in pre-order with
 * parent_id (-1 = top level); each top-level field is one column of the result.
 * Physical columns: a top-level leaf (any primitive type) or a fixed_size_list of a
 * primitive is one column [observed: Lance 8.0.0 and 12.0.0]; other nested types
 * (struct, list, map) take a number of columns we do not know, so they and every
 * top-level field after them are left undecoded (partial reads) or refused.
 * A blob column (field metadata lance-encoding:blob = true) is one physical column
 * whatever its type, and is not decoded.  In a data file of a 2.2 dataset, Lance 14.0.2
 * lists a blob column's descriptor fields (kind, position, size, blob_id, blob_uri) right
 * after it with id -1 and parent -1 [observed; pylance's own LanceFileReader cannot read
 * such a file]: fields of id -1 that follow a blob field are taken as its children.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lancefile/lf_file.h"
#include "lancefile/schcache.h"

int lv__lf_rcorrupt(lv__lf_rctx *r, const char *what)
{
	return lv__err(r->err, LV_ECORRUPT, "file %s: not a valid Lance v2 file: %s", r->name, what);
}

/*
 * A string of the schema (p: n bytes of it, NULL: absent, ""), NUL-terminated in the
 * schema's copy (f->sch_copy): its NUL goes on the byte after it there, which is a tag or
 * the copy's end, never a byte of another string the reader keeps (a string is a leaf
 * payload, and the next one's tag and length come before its bytes).  The copy is never
 * parsed: the original is.
 */
static char *schema_str(lv_lancefile *f, const uint8_t *p, size_t n)
{
	uintptr_t at = (uintptr_t)p, lo = (uintptr_t)f->sch;
	if (!p)
		return f->sch_copy + f->sch_n;
	if (at < lo || at - lo > f->sch_n || n > f->sch_n - (at - lo)) /* never: from the schema */
		return lv__arena_strndup(&f->mem, (const char *)p, n);
	char *s = f->sch_copy + (at - lo);
	s[n] = 0;
	return s;
}

void *lv__lf_zalloc(lv_lancefile *f, size_t n, size_t size)
{
	size_t t;
	if (lv__mul_overflow(n ? n : 1, size, &t))
		return NULL;
	if (t >= LV__BLOCK_MIN) { /* lv__calloc: fresh pages come zeroed, not written twice */
		if (t > SIZE_MAX - sizeof(lv__lf_big))
			return NULL;
		lv__lf_big *b = lv__calloc(1, sizeof *b + t);
		if (!b)
			return NULL;
		b->next = f->big;
		f->big = b;
		return b->data;
	}
	void *p = lv__arena_alloc(&f->mem, t);
	return p ? memset(p, 0, t) : NULL;
}

int lv__lf_col_undecoded(lv__lf_rctx *r, lv_lancefile *f, size_t i, int code, const char *why)
{
	if (!(r->flags & LV_LANCEFILE_READ_PARTIAL) || code == LV_ENOMEM)
		return lv__err(r->err, code, "%s", why);
	f->errors[i] = lv__arena_strdup(&f->mem, why); /* a former reason stays in the arena */
	f->cols[i].type = LV_COL_UNDECODED;
	return f->errors[i] ? 0 : lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
}

/* Column type of a logical type of len bytes; FSL also yields its list size.  0 = not
 * decoded.  Names are compared by length first (no strcmp of every entry). */
static int type_of(const char *lt, size_t len, uint32_t *dim)
{
#define T(s, t) { s, sizeof s - 1, t }
	static const struct { const char *lt; size_t len; int type; } simple[] = {
		T("uint64", LV_COL_UINT64), T("int64", LV_COL_INT64), T("bool", LV_COL_BOOL),
		T("string", LV_COL_UTF8), T("large_string", LV_COL_UTF8), T("int32", LV_COL_INT32),
		T("float", LV_COL_FLOAT32), T("double", LV_COL_FLOAT64), T("int8", LV_COL_INT8),
		T("int16", LV_COL_INT16), T("uint8", LV_COL_UINT8), T("uint16", LV_COL_UINT16),
		T("uint32", LV_COL_UINT32),
	};
#undef T
	for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
		if (len == simple[i].len && !memcmp(lt, simple[i].lt, len))
			return simple[i].type;
	if (!strncmp(lt, "timestamp:", 10))
		return LV_COL_TIMESTAMP;
	const char *pre = "fixed_size_list:float:";
	if (strncmp(lt, pre, strlen(pre)) != 0)
		return 0;
	uint64_t v = 0;
	const char *s = lt + strlen(pre);
	for (; *s >= '0' && *s <= '9' && v <= LV__LF_MAX_LIST_SIZE; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	if (*s || v == 0 || v > LV__LF_MAX_LIST_SIZE)
		return 0;
	*dim = (uint32_t)v;
	return LV_COL_FSL_FLOAT32;
}

/* 1 if a field's metadata entry (repeated {1 key, 2 value}) sets `key` = true. */
static int meta_true(const lv__pb_field *g, const char *key)
{
	lv__pb_field k = { 0 }, v = { 0 };
	if (lv__lf_pb_find(g->data, g->len, 1, &k) != 1 || lv__lf_pb_find(g->data, g->len, 2, &v) != 1)
		return 0;
	return k.len == strlen(key) && !memcmp(k.data, key, k.len) && v.len == 4 &&
	       !memcmp(v.data, "true", 4);
}

/* Length of the C string s of at most n bytes (a name may hold a NUL: it ends there). */
static size_t strlen_n(const char *s, size_t n)
{
	const char *z = memchr(s, 0, n);
	return z ? (size_t)(z - s) : n;
}

/* Depth and parent of field i; a field of id -1 after a blob field is its child. */
static int place_field(lv__lf_rctx *r, lv_lancefile *f, size_t i)
{
	lv__lf_field *fd = &f->fields[i];
	fd->depth = 0;
	if (fd->parent < 0 && fd->id == -1 && i > 0) {
		const lv__lf_field *prev = &f->fields[i - 1];
		if (prev->blob && prev->depth == 0)
			fd->parent = prev->id;
		else if (prev->id == -1 && prev->depth == 1)
			fd->parent = prev->parent;
	}
	if (fd->parent >= 0) {
		size_t j = i;
		while (j-- > 0 && f->fields[j].id != fd->parent)
			;
		if (j == SIZE_MAX)
			return lv__lf_rcorrupt(r, "schema field whose parent does not precede it");
		fd->depth = f->fields[j].depth + 1;
	}
	return 0;
}

/* Parses one schema Field into f->fields[i]. */
static int parse_field(lv__lf_rctx *r, lv_lancefile *f, size_t i, const uint8_t *p, size_t n)
{
	lv__pb pr = lv__pb_make(p, n);
	lv__pb_field g = { 0 };
	int rc;
	const uint8_t *name = NULL, *lt = NULL;
	size_t name_len = 0, lt_len = 0;
	uint64_t parent = UINT64_MAX, id = 0, nullable = 0;
	bool blob = false, packed = false;
	while ((rc = lv__pb_next(&pr, &g)) == 1) {
		if (g.num == 2 && g.wire == LV_PB_LEN)
			name = g.data, name_len = g.len;
		else if (g.num == 3 && g.wire == LV_PB_VARINT)
			id = g.u;
		else if (g.num == 4 && g.wire == LV_PB_VARINT)
			parent = g.u;
		else if (g.num == 5 && g.wire == LV_PB_LEN)
			lt = g.data, lt_len = g.len;
		else if (g.num == 6 && g.wire == LV_PB_VARINT)
			nullable = g.u;
		else if (g.num == 10 && g.wire == LV_PB_LEN) {
			blob = blob || meta_true(&g, "lance-encoding:blob");
			packed = packed || meta_true(&g, "lance-encoding:packed");
		}
	}
	if (rc < 0)
		return lv__lf_rcorrupt(r, "malformed schema field");
	lv__lf_field *fd = &f->fields[i];
	fd->name = schema_str(f, name, name_len);
	fd->ltype = schema_str(f, lt, lt_len);
	fd->name_len = strlen_n(fd->name, name_len);
	fd->ltype_len = strlen_n(fd->ltype, lt_len);
	if (!fd->name || !fd->ltype)
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	fd->nullable = nullable != 0;
	fd->blob = blob;
	fd->packed = packed;
	fd->id = (int64_t)(int32_t)(uint32_t)id;
	/* parent_id is an int32 written as a 64-bit varint: -1 = top level */
	fd->parent = parent == UINT64_MAX || parent == 0xffffffffu ? -1 : (int64_t)(int32_t)parent;
	return place_field(r, f, i);
}

static int parse_meta(lv__lf_rctx *r, lv_lancefile *f, const lv__pb_field *g)
{
	lv__pb er = lv__pb_sub(g);
	lv__pb_field e = { 0 };
	const uint8_t *k = NULL, *v = NULL;
	size_t kl = 0, vl = 0;
	int rc;
	while ((rc = lv__pb_next(&er, &e)) == 1) {
		if (e.num == 1 && e.wire == LV_PB_LEN)
			k = e.data, kl = e.len;
		else if (e.num == 2 && e.wire == LV_PB_LEN)
			v = e.data, vl = e.len;
	}
	if (rc < 0)
		return lv__lf_rcorrupt(r, "malformed schema metadata entry");
	lv_kv *kv = &f->meta[f->nmeta++];
	kv->key = schema_str(f, k, kl);
	f->meta_klen[f->nmeta - 1] = strlen_n(kv->key, kl);
	kv->value = schema_str(f, v, vl);
	kv->value_len = vl;
	if (!kv->key || !kv->value)
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	return 0;
}

/*
 * The arena's block size: one block holds everything a small file's read allocates (the
 * schema's copy, n + 1 bytes, which holds every string; the per-field
 * arrays; the columns' arrays when nrows is small).  Larger requests take blocks of their
 * own (a large file's column arrays: one block each, as lv__malloc would give them).
 */
static size_t arena_block(size_t n, size_t nfields, size_t nmeta, uint64_t nrows)
{
	size_t per_field = sizeof(lv__lf_field) + sizeof(lv_column) + 2 * sizeof(char *) + sizeof(size_t);
	size_t cols = 0;
	if (nrows <= 1024 && nfields <= 4096) { /* values (or offsets), validity, alignment */
		cols = nfields * ((size_t)(nrows + 1) * 9 + 24);
		cols = cols <= ((size_t)64 << 10) ? cols : 0;
	}
	return n + 256 + nfields * per_field + nmeta * (sizeof(lv_kv) + sizeof(size_t)) + cols;
}

/*
 * The top level of a Schema: its fields and metadata entries counted, and the bytes of its
 * fields [lo, hi) (tags included), the schema cache's key, unless another entry lies
 * between two of them (split: not looked up).
 */
typedef struct sch_scan {
	const uint8_t *lo, *hi;
	size_t nfields, nmeta;
	bool split;
} sch_scan;

static int scan_schema(lv__lf_rctx *r, const lv__pb_field *fs, sch_scan *sc)
{
	lv__pb pr = lv__pb_sub(fs);
	lv__pb_field g = { 0 };
	const uint8_t *at = pr.p;
	bool other = false; /* an entry that is not a field after the first field */
	int rc;
	*sc = (sch_scan){ 0 };
	while ((rc = lv__pb_next(&pr, &g)) == 1) {
		if (g.num == 1 && g.wire == LV_PB_LEN) {
			if (!sc->nfields++)
				sc->lo = at;
			sc->split = sc->split || other;
			sc->hi = pr.p;
		} else {
			sc->nmeta += g.num == 5 && g.wire == LV_PB_LEN;
			other = sc->nfields > 0;
		}
		at = pr.p;
	}
	return rc < 0 ? lv__lf_rcorrupt(r, "malformed schema") : 0;
}

/* The arrays of fields and metadata (zeroed) and the schema's copy, in the order a parse
 * and a cache hit both allocate them. */
static int alloc_schema(lv__lf_rctx *r, lv_lancefile *f, const sch_scan *sc, uint64_t nrows)
{
	f->mem.block_size = arena_block(f->sch_n, sc->nfields, sc->nmeta, nrows);
	f->fields = lv__lf_zalloc(f, sc->nfields, sizeof *f->fields);
	f->meta = lv__lf_zalloc(f, sc->nmeta, sizeof *f->meta);
	f->meta_klen = lv__lf_zalloc(f, sc->nmeta, sizeof *f->meta_klen);
	f->sch_copy = lv__arena_alloc(&f->mem, f->sch_n + 1);
	if (f->sch_copy) {
		memcpy(f->sch_copy, f->sch, f->sch_n);
		f->sch_copy[f->sch_n] = 0;
	}
	if (!f->fields || !f->meta || !f->meta_klen || !f->sch_copy)
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	return 0;
}

/* Parses the entries of n bytes of a Schema at p: its fields (unless `fields` is false:
 * they came from the cache) and its metadata. */
static int parse_entries(lv__lf_rctx *r, lv_lancefile *f, const uint8_t *p, size_t n, bool fields)
{
	lv__pb pr = lv__pb_make(p, n);
	lv__pb_field g = { 0 };
	while (lv__pb_next(&pr, &g) == 1) {
		if (fields && g.num == 1 && g.wire == LV_PB_LEN) {
			f->nfields++; /* counted first: a half-parsed field is freed with the file */
			LV_TRY(parse_field(r, f, f->nfields - 1, g.data, g.len));
		} else if (g.num == 5 && g.wire == LV_PB_LEN) {
			LV_TRY(parse_meta(r, f, &g));
		}
	}
	return 0;
}

/* Number of children of field i (fields directly below it). */
static size_t children(const lv_lancefile *f, size_t i)
{
	size_t k = 0;
	for (size_t j = i + 1; j < f->nfields && f->fields[j].depth > f->fields[i].depth; j++)
		k += f->fields[j].depth == f->fields[i].depth + 1;
	return k;
}

/* A field stored as one physical column: a leaf, a blob, a packed struct, or a
 * fixed_size_list of a leaf. */
static bool one_column(const lv_lancefile *f, size_t i)
{
	const lv__lf_field *fd = &f->fields[i];
	size_t kids = children(f, i);
	return kids == 0 || fd->blob || fd->packed ||
	       (kids == 1 && !strncmp(fd->ltype, "fixed_size_list:", 16) && children(f, i + 1) == 0);
}

/*
 * Physical columns of top-level field i [observed, Lance 14.0.2 for 2.0, 2.1 and 2.2]:
 * from 2.1 on, the one-column fields of its tree (struct, list and map themselves take
 * none); in 2.0 every struct and list takes one more (validity / offsets).  Walks the
 * subtree in pre-order without recursion; the caller checks the sum against the footer.
 */
static size_t width(const lv_lancefile *f, size_t i)
{
	size_t n = 0;
	unsigned skip = UINT_MAX; /* below a one-column field: its fields take none */
	for (size_t j = i; j < f->nfields && (j == i || f->fields[j].depth > f->fields[i].depth); j++) {
		unsigned d = f->fields[j].depth;
		if (d > skip)
			continue;
		skip = UINT_MAX;
		if (one_column(f, j)) {
			n++;
			skip = d;
		} else if (f->version == LV_LANCEFILE_V2_0) {
			n++;
		}
	}
	return n;
}

/* Field i has no fields below it: one column (one_column), of width 1. */
static bool leaf(const lv_lancefile *f, size_t i)
{
	return i + 1 == f->nfields || f->fields[i + 1].depth <= f->fields[i].depth;
}

/* Sets up one column per top-level field and maps it to its physical column. */
static int map_columns(lv__lf_rctx *r, lv_lancefile *f, size_t nphys)
{
	size_t ncols = 0;
	for (size_t i = 0; i < f->nfields; i++)
		ncols += f->fields[i].depth == 0;
	f->cols = lv__lf_zalloc(f, ncols, sizeof *f->cols);
	f->ltypes = lv__lf_zalloc(f, ncols, sizeof *f->ltypes);
	f->errors = lv__lf_zalloc(f, ncols, sizeof *f->errors);
	f->phys = lv__lf_zalloc(f, ncols, sizeof *f->phys);
	if (!f->cols || !f->ltypes || !f->errors || !f->phys)
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	f->ncols = ncols;
	size_t phys = 0, c = 0, total = 0;
	for (size_t i = 0; i < f->nfields; i++) /* f->phys holds the widths until set below */
		if (f->fields[i].depth == 0)
			total += f->phys[c++] = leaf(f, i) ? 1 : width(f, i);
	c = 0;
	bool widths = total == nphys; /* else: nothing after a nested field is placed */
	const char *nested = NULL;
	char why[LV_ERROR_MESSAGE_MAX];
	for (size_t i = 0; i < f->nfields; i++) {
		const lv__lf_field *fd = &f->fields[i];
		if (fd->depth)
			continue;
		lv_column *col = &f->cols[c];
		col->name = fd->name; /* the arena's strings, shared (never changed, freed with it) */
		f->ltypes[c] = fd->ltype;
		col->nullable = fd->nullable;
		col->type = type_of(fd->ltype, fd->ltype_len, &col->list_size);
		size_t w = f->phys[c];
		bool one = (leaf(f, i) || one_column(f, i)) && (fd->blob || !fd->packed);
		if (fd->blob)
			col->type = 0;
		f->phys[c] = nested || !one ? SIZE_MAX : phys;
		if (widths)
			phys += w;
		else if (!nested && one)
			phys++;
		if (!one && !nested && !widths)
			nested = fd->name;
		why[0] = 0;
		if (f->phys[c] == SIZE_MAX && one)
			snprintf(why, sizeof why, "file %s: column '%s': its data follows nested field '%s', whose column count is not known", r->name, col->name, nested);
		else if (!one)
			snprintf(why, sizeof why, "file %s: column '%s': nested type '%s' is not supported", r->name, col->name, fd->ltype);
		else if (fd->blob)
			snprintf(why, sizeof why, "file %s: column '%s': blob column ('%s', lance-encoding:blob) is not decoded", r->name, col->name, fd->ltype);
		else if (!col->type)
			snprintf(why, sizeof why, "file %s: column '%s': unsupported logical type '%s'", r->name, col->name, fd->ltype);
		if (why[0])
			LV_TRY(lv__lf_col_undecoded(r, f, c, LV_EUNSUPPORTED, why));
		for (size_t j = 0; j < i; j++) /* lengths first: no strcmp of every pair */
			if (f->fields[j].depth == 0 && f->fields[j].name_len == fd->name_len &&
			    !memcmp(f->fields[j].name, fd->name, fd->name_len))
				return lv__lf_rcorrupt(r, "duplicate column name");
		c++;
	}
	if (!nested && phys != nphys)
		return lv__err(r->err, phys < nphys ? LV_ECORRUPT : LV_EUNSUPPORTED,
			       "file %s: schema describes %zu columns but the file has %zu", r->name,
			       phys, nphys);
	if (phys > nphys)
		return lv__lf_rcorrupt(r, "schema describes more columns than the file has");
	return 0;
}

/* n elements of `size` bytes copied from src into f (lv__lf_zalloc), or NULL. */
static void *dup_array(lv_lancefile *f, const void *src, size_t n, size_t size)
{
	void *d = lv__lf_zalloc(f, n, size);
	if (d && n)
		memcpy(d, src, n * size);
	return d;
}

/* A stored field string at `at` from the fields' first byte (base), len bytes, ended by a
 * NUL in the file's copy as a parse ends it; SIZE_MAX: absent (""). */
static char *place_str(lv_lancefile *f, char *base, size_t at, size_t len)
{
	if (at == SIZE_MAX)
		return f->sch_copy + f->sch_n;
	base[at + len] = 0; /* a parse's NUL, or one inside the string (a name holding a NUL) */
	return base + at;
}

/*
 * f's fields and columns from a stored parse of the fields at sc->lo (the same bytes),
 * allocated in the order a parse allocates them; the metadata parsed from f's bytes.
 */
static int from_cache(lv__lf_rctx *r, lv_lancefile *f, const lv__lf_schsnap *s,
		      const sch_scan *sc, const lv__pb_field *fs, uint64_t nrows)
{
	LV_TRY(alloc_schema(r, f, sc, nrows));
	memcpy(f->fields, s->fields, s->nfields * sizeof *f->fields);
	char *base = f->sch_copy + (sc->lo - f->sch);
	for (size_t i = 0; i < s->nfields; i++) {
		lv__lf_field *fd = &f->fields[i];
		fd->name = place_str(f, base, s->name_at[i], fd->name_len);
		fd->ltype = place_str(f, base, s->ltype_at[i], fd->ltype_len);
	}
	f->nfields = s->nfields; /* the metadata: the entries before and after the fields */
	LV_TRY(parse_entries(r, f, fs->data, (size_t)(sc->lo - fs->data), false));
	LV_TRY(parse_entries(r, f, sc->hi, (size_t)(fs->data + fs->len - sc->hi), false));
	f->cols = dup_array(f, s->cols, s->ncols, sizeof *f->cols);
	f->ltypes = lv__lf_zalloc(f, s->ncols, sizeof *f->ltypes);
	f->errors = lv__lf_zalloc(f, s->ncols, sizeof *f->errors);
	f->phys = dup_array(f, s->phys, s->ncols, sizeof *f->phys);
	if (!f->cols || !f->ltypes || !f->errors || !f->phys)
		return lv__err(r->err, LV_ENOMEM, "file %s: out of memory", r->name);
	for (size_t i = 0, c = 0; i < s->nfields && c < s->ncols; i++)
		if (f->fields[i].depth == 0) {
			f->cols[c].name = f->fields[i].name;
			f->ltypes[c++] = f->fields[i].ltype;
		}
	f->ncols = s->ncols; /* last: lv_lancefile_free reads cols[0, ncols) */
	return 0;
}

int lv__lf_parse_schema(lv__lf_rctx *r, lv_lancefile *f, const uint8_t *p, size_t n, size_t nphys,
		    uint64_t *nrows)
{
	lv__pb_field fs = { 0 };
	int rc = lv__lf_pb_find(p, n, 1, &fs);
	if (rc != 1)
		return lv__lf_rcorrupt(r, rc < 0 ? "malformed file descriptor" : "file descriptor without schema");
	*nrows = 0;
	if (lv__lf_varint_field(p, n, 2, nrows) < 0)
		return lv__lf_rcorrupt(r, "malformed file descriptor");
	f->sch = p;
	f->sch_n = n;
	sch_scan sc;
	LV_TRY(scan_schema(r, &fs, &sc));
	bool key = sc.nfields && !sc.split;
	size_t kn = (size_t)(sc.hi - sc.lo);
	const lv__lf_schsnap *s = key ? lv__lf_schcache_acquire(sc.lo, kn, nphys, f->version) : NULL;
	if (s) {
		rc = from_cache(r, f, s, &sc, &fs, *nrows);
		lv__lf_schcache_release(s);
		return rc;
	}
	LV_TRY(alloc_schema(r, f, &sc, *nrows));
	LV_TRY(parse_entries(r, f, fs.data, fs.len, true));
	LV_TRY(map_columns(r, f, nphys));
	if (key)
		lv__lf_schcache_put(f, (size_t)(sc.lo - p), kn, nphys);
	return 0;
}
