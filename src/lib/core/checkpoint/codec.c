/*
 * The checkpoint file codec: the proposal's 15 columns (one table, below),
 * transaction-properties wrapping, the lancever checksum, and encode/decode
 * of a checkpoint file's bytes.  No I/O.
 *
 * Invariants:
 *  - A checkpoint's content is a pure function of (its rows, dataset_created);
 *    created_at is the newest covered commit's timestamp, never the wall
 *    clock, so identical states give identical bytes.
 *  - Decode checks every row (schema, nulls, strictly increasing versions,
 *    checksum) even when it materialises only some of them; it reads each row once,
 *    for the checks and the row built, and returns no row when a check fails.
 */
#include "core/checkpoint/codec.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/crc32c.h"
#include "core/vlist.h"
#include "lancever/lancefile.h"
#include "util/util.h"
#define KEY_CREATED "lance:checkpoint:dataset_created"

#define KEY_CREATED_AT "lance:checkpoint:created_at"

#define KEY_CHECKSUM "lancever:checksum"

#define KEY_IDENTITY "lancever:dataset_id"

#define KEY_FORMAT "lancever:format"

#define KEY_LATEST "lancever:latest_version"

#define KEY_SEGMENT "lancever:segment"

#define KEY_ARCHIVE "lancever:archive"

#define KEY_EXTRA_CHECKSUM "lancever:archive_checksum"
enum {
	C_VERSION, C_TS, C_FRAGS, C_DFILES, C_FSIZE, C_DELFILES, C_DFROWS, C_DELROWS, C_ROWS,
	C_TAGGED, C_CLEANED, C_UUID, C_READV, C_OP, C_PROPS, C_NCOLS
};

static const struct {
	const char *name;
	int type;
	bool nullable;
} schema[C_NCOLS] = {
	{ "version", LV_COL_UINT64, false },
	{ "timestamp_millis", LV_COL_INT64, false },
	{ "total_fragments", LV_COL_UINT64, false },
	{ "total_data_files", LV_COL_UINT64, false },
	{ "total_files_size", LV_COL_UINT64, false },
	{ "total_deletion_files", LV_COL_UINT64, false },
	{ "total_data_file_rows", LV_COL_UINT64, false },
	{ "total_deletion_file_rows", LV_COL_UINT64, false },
	{ "total_rows", LV_COL_UINT64, false },
	{ "is_tagged", LV_COL_BOOL, false },
	{ "is_cleaned_up", LV_COL_BOOL, false },
	{ "transaction_uuid", LV_COL_UTF8, true },
	{ "read_version", LV_COL_UINT64, true },
	{ "operation_type", LV_COL_UTF8, true },
	{ "transaction_properties", LV_COL_UTF8, false },
};

/* ---- transaction properties ---- */

/* Bytes `n` of s as a JSON string body would take (without quotes). */
static size_t escaped_len(const unsigned char *s, size_t n)
{
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += (s[i] == '"' || s[i] == '\\') ? 2 : s[i] < 0x20 ? 6 : 1;
	return t;
}

/* Length of the UTF-8 sequence starting at lead byte c (1 for invalid/continuation). */
static size_t utf8_len(unsigned char c)
{
	return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

char *lv_properties_truncate(const char *json, size_t limit)
{
	size_t n = strlen(json);
	if (n <= limit)
		return lv__strdup(json);
	char head[96];
	int hl = snprintf(head, sizeof head, "{\"_truncated\":true,\"_size\":%zu,\"_data\":\"", n);
	/* The wrapper itself stays within `limit`, so wrapping is idempotent. */
	size_t budget = limit > (size_t)hl + 2 ? limit - (size_t)hl - 2 : 0;
	const unsigned char *s = (const unsigned char *)json;
	size_t take = 0, used = 0;
	while (take < n) {
		size_t l = utf8_len(s[take]);
		if (take + l > n)
			break;
		size_t e = escaped_len(s + take, l);
		if (used + e > budget)
			break;
		take += l;
		used += e;
	}
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	lv__dbuf_add(&b, head, (size_t)hl - 1); /* without the opening quote: escape adds it */
	lv__json_escape(&b, json, take);
	lv__dbuf_addc(&b, '}');
	return lv__dbuf_take_str(&b);
}

/* Text stored in a checkpoint, as returned to callers: a JSON object, or the raw text wrapped. */
static const char *normalize_properties(lv__arena *a, const char *s, size_t n)
{
	if (n == 2 && s[0] == '{' && s[1] == '}')
		return "{}";
	json_error_t je;
	json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
	bool ok = j && json_is_object(j);
	json_decref(j);
	if (ok)
		return lv__arena_strndup(a, s, n);
	lv__dbuf b;
	lv__dbuf_init(&b, 0);
	lv__dbuf_adds(&b, "{\"transaction_properties\":");
	lv__json_escape(&b, s, n);
	lv__dbuf_addc(&b, '}');
	const char *r = b.oom ? NULL : lv__arena_strndup(a, (const char *)b.ptr, b.len);
	lv__dbuf_dispose(&b);
	return r;
}

/* ---- checksum and identity ---- */

static uint32_t crc_u64(uint32_t c, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return lv__crc32c(c, b, 8);
}

/* Appends a string field's canonical form (presence byte, u64 length, bytes) to b. */
static size_t put_str(uint8_t *b, const char *s, size_t n)
{
	b[0] = s != NULL;
	if (!s)
		return 1;
	lv__put_le64(b + 1, n);
	memcpy(b + 9, s, n);
	return 9 + n;
}

/* One row's fields as the checksum sees them (strings with their lengths; NULL = null). */
typedef struct row_view {
	uint64_t f[9]; /* version, timestamp, the seven counters */
	bool tagged, cleaned, has_rv;
	uint64_t rv;
	const char *s[3]; /* uuid, operation, properties */
	size_t len[3];
} row_view;

/*
 * CRC-32C over a canonical serialisation of the rows: independent of the file
 * encoding.  Per row: the nine counters and timestamp (u64 LE), is_tagged,
 * is_cleaned_up, has_read_version, read_version, then uuid, operation and
 * properties as (present, u64 length, bytes).  Rows are serialised one after
 * another into the accumulator's buffer, hashed a buffer at a time (long
 * inputs hash three times faster: lv__crc32c's interleaved lanes); a row too
 * long for the buffer is hashed field by field.  The CRC is a stream, so this
 * equals hashing field by field.
 */
typedef struct crc_acc {
	uint32_t c;
	size_t n;
	uint8_t b[8192];
} crc_acc;

static void acc_flush(crc_acc *a)
{
	a->c = lv__crc32c(a->c, a->b, a->n);
	a->n = 0;
}

static uint32_t checksum_start(int64_t created, size_t n)
{
	return crc_u64(crc_u64(0, (uint64_t)created), n);
}

/* An accumulator at the start of n rows' checksum. */
static void acc_start(crc_acc *a, int64_t created, size_t n)
{
	a->c = checksum_start(created, n);
	a->n = 0;
}

/* The checksum of the rows added. */
static uint32_t acc_end(crc_acc *a)
{
	acc_flush(a);
	return a->c;
}

static void row_crc(crc_acc *a, const row_view *v)
{
	size_t total = 83;
	for (int k = 0; k < 3; k++)
		total += 9 + (v->s[k] ? v->len[k] : 0);
	if (total > sizeof a->b - a->n)
		acc_flush(a);
	uint8_t *b = total <= sizeof a->b ? a->b + a->n : a->b;
	for (int k = 0; k < 9; k++)
		lv__put_le64(b + 8 * k, v->f[k]);
	b[72] = v->tagged;
	b[73] = v->cleaned;
	b[74] = v->has_rv;
	lv__put_le64(b + 75, v->has_rv ? v->rv : 0);
	if (total <= sizeof a->b) {
		size_t at = 83;
		for (int k = 0; k < 3; k++)
			at += put_str(b + at, v->s[k], v->s[k] ? v->len[k] : 0);
		a->n += at;
		return;
	}
	a->c = lv__crc32c(a->c, b, 83);
	for (int k = 0; k < 3; k++) {
		size_t h = put_str(b, v->s[k], 0); /* the presence byte and (placeholder) length */
		if (v->s[k])
			lv__put_le64(b + 1, v->len[k]);
		a->c = lv__crc32c(a->c, b, h);
		if (v->s[k])
			a->c = lv__crc32c(a->c, v->s[k], v->len[k]);
	}
}

/*
 * A file of the archive carries a second checksum (KEY_EXTRA_CHECKSUM): the
 * rows' checksum carried on over its archive metadata (a tag byte, the u64
 * length, the bytes of a segment's range and of a head's segment index).  The
 * first checksum stays the rows' alone, so a reader that knows nothing of the
 * archive still takes the head.
 */
static uint32_t checksum_extra(uint32_t c, const lv__cp_extra *x, size_t seglen, size_t arclen)
{
	if (x && x->segment) {
		c = lv__crc32c(c, "S", 1);
		c = crc_u64(c, seglen);
		c = lv__crc32c(c, x->segment, seglen);
	}
	if (x && x->archive) {
		c = lv__crc32c(c, "A", 1);
		c = crc_u64(c, arclen);
		c = lv__crc32c(c, x->archive, arclen);
	}
	return c;
}

/*
 * The one mapping between the 15 columns and a row: FIXED[k] is the column
 * of row_view.f[k]; STRS[k] the column of row_view.s[k].  Encode, decode and
 * the checksum all go through row_view.
 */
static const int FIXED[9] = { C_VERSION, C_TS,      C_FRAGS,   C_DFILES, C_FSIZE,
			      C_DELFILES, C_DFROWS, C_DELROWS, C_ROWS };
static const int STRS[3] = { C_UUID, C_OP, C_PROPS };

/* A writer's row as the checksum sees it. */
static void row_of_info(const lv_version_info *v, row_view *w)
{
	const uint64_t f[9] = { v->version, (uint64_t)v->timestamp_millis, v->total_fragments,
				v->total_data_files, v->total_files_size, v->total_deletion_files,
				v->total_data_file_rows, v->total_deletion_file_rows, v->total_rows };
	memcpy(w->f, f, sizeof f);
	w->tagged = v->is_tagged;
	w->cleaned = v->is_cleaned_up;
	w->has_rv = v->has_read_version;
	w->rv = v->read_version;
	w->s[0] = v->transaction_uuid;
	w->s[1] = v->operation_type;
	w->s[2] = v->transaction_properties ? v->transaction_properties : "{}";
	for (int k = 0; k < 3; k++)
		w->len[k] = w->s[k] ? strlen(w->s[k]) : 0;
}

/* A checksum as the metadata holds it: "crc32c:" and 8 lower-case hex digits (what "%08x"
 * writes), the 15 bytes of out[0, CRC_TAG_LEN) and a NUL. */
#define CRC_TAG_LEN 15
static void crc_tag(char out[CRC_TAG_LEN + 1], uint32_t crc)
{
	static const char hex[] = "0123456789abcdef";
	memcpy(out, "crc32c:", 7);
	for (int i = 0; i < 8; i++)
		out[7 + i] = hex[(crc >> (28 - 4 * i)) & 15];
	out[CRC_TAG_LEN] = 0;
}

/* The checksum of rows held as lv_version_info (what a writer has). */
static uint32_t rows_checksum(const lv_version_info *r, size_t n, int64_t created)
{
	crc_acc a;
	acc_start(&a, created, n);
	for (size_t i = 0; i < n; i++) {
		row_view w;
		row_of_info(&r[i], &w);
		row_crc(&a, &w);
	}
	return acc_end(&a);
}

static void identity_of(char *buf, size_t cap, int64_t created, const lv_version_info *first)
{
	snprintf(buf, cap, "%" PRId64 "/%" PRIu64 "/%s", created, first ? first->version : 0,
		 first && first->transaction_uuid ? first->transaction_uuid : "-");
}

/* ---- encode ---- */

/* The 15 columns of n rows, as the Lance file writer takes them. */
typedef struct cp_columns {
	uint64_t *u[C_NCOLS];  /* the nine fixed columns and read_version (timestamps as bits) */
	uint8_t *bools[2];     /* is_tagged, is_cleaned_up */
	uint8_t *valid[3];     /* uuid, operation, read_version present */
	uint64_t *off[3];      /* string offsets of STRS[k] */
	lv__dbuf str[3];
} cp_columns;

static void columns_free(cp_columns *c)
{
	for (int k = 0; k < C_NCOLS; k++)
		lv__free(c->u[k]);
	for (int k = 0; k < 3; k++) {
		lv__free(c->valid[k]);
		lv__free(c->off[k]);
		lv__dbuf_dispose(&c->str[k]);
	}
	lv__free(c->bools[0]);
	lv__free(c->bools[1]);
}

static int columns_alloc(cp_columns *c, size_t n)
{
	memset(c, 0, sizeof *c);
	bool ok = true;
	for (int k = 0; k < 9; k++)
		ok = ok && (c->u[FIXED[k]] = lv__calloc(n ? n : 1, sizeof(uint64_t)));
	ok = ok && (c->u[C_READV] = lv__calloc(n ? n : 1, sizeof(uint64_t)));
	for (int k = 0; k < 3; k++) {
		lv__dbuf_init(&c->str[k], 0);
		ok = ok && (c->valid[k] = lv__calloc(n ? n : 1, 1)) && (c->off[k] = lv__calloc(n + 1, 8));
	}
	ok = ok && (c->bools[0] = lv__calloc(n ? n : 1, 1)) && (c->bools[1] = lv__calloc(n ? n : 1, 1));
	return ok ? 0 : LV_ENOMEM;
}

static int columns_put(cp_columns *c, size_t i, const row_view *w)
{
	for (int k = 0; k < 9; k++)
		c->u[FIXED[k]][i] = w->f[k];
	c->bools[0][i] = w->tagged;
	c->bools[1][i] = w->cleaned;
	c->valid[2][i] = w->has_rv;
	c->u[C_READV][i] = w->has_rv ? w->rv : 0;
	for (int k = 0; k < 3; k++) {
		if (k < 2)
			c->valid[k][i] = w->s[k] != NULL;
		if (w->s[k] && lv__dbuf_add(&c->str[k], w->s[k], w->len[k]) < 0)
			return LV_ENOMEM;
		c->off[k][i + 1] = c->str[k].len;
	}
	return 0;
}

/* Describes the columns for the writer (views into c). */
static void columns_describe(cp_columns *c, lv_column cols[C_NCOLS])
{
	memset(cols, 0, C_NCOLS * sizeof *cols);
	for (int k = 0; k < C_NCOLS; k++) {
		cols[k].name = schema[k].name;
		cols[k].type = schema[k].type;
		cols[k].nullable = schema[k].nullable;
		cols[k].u64 = c->u[k];
	}
	cols[C_TS].i64 = (const int64_t *)c->u[C_TS];
	cols[C_TAGGED].bools = c->bools[0];
	cols[C_CLEANED].bools = c->bools[1];
	cols[C_READV].validity = c->valid[2];
	for (int k = 0; k < 3; k++) {
		lv_column *col = &cols[STRS[k]];
		col->str_offsets = c->off[k];
		col->str_data = c->str[k].ptr ? (const char *)c->str[k].ptr : "";
		if (k < 2)
			col->validity = c->valid[k];
	}
}

int lv__cp_encode_x(const lv_version_info *rows, size_t n, int64_t created, const lv__cp_extra *x,
		    lv_buf *out, lv_error *err)
{
	cp_columns c;
	int rc = columns_alloc(&c, n);
	for (size_t i = 0; i < n && rc == 0; i++) {
		row_view w;
		row_of_info(&rows[i], &w);
		rc = columns_put(&c, i, &w);
	}
	if (rc < 0) {
		columns_free(&c);
		return lv__err(err, LV_ENOMEM, "out of memory encoding checkpoint");
	}
	lv_column cols[C_NCOLS];
	columns_describe(&c, cols);
	char created_s[32], created_at_s[32], crc_s[32], xcrc_s[32], latest_s[32], ident[256];
	snprintf(created_s, sizeof created_s, "%" PRId64, created);
	snprintf(created_at_s, sizeof created_at_s, "%" PRId64, n ? rows[n - 1].timestamp_millis : 0);
	uint32_t crc = rows_checksum(rows, n, created);
	crc_tag(crc_s, crc);
	crc_tag(xcrc_s, checksum_extra(crc, x, x && x->segment ? strlen(x->segment) : 0,
				       x && x->archive ? strlen(x->archive) : 0));
	snprintf(latest_s, sizeof latest_s, "%" PRIu64, n ? rows[n - 1].version : 0);
	identity_of(ident, sizeof ident, created, n ? &rows[0] : NULL);
	lv_kv meta[9] = {
		{ KEY_CREATED, created_s, strlen(created_s) },
		{ KEY_CREATED_AT, created_at_s, strlen(created_at_s) },
		{ KEY_FORMAT, "1", 1 },
		{ KEY_LATEST, latest_s, strlen(latest_s) },
		{ KEY_IDENTITY, ident, strlen(ident) },
		{ KEY_CHECKSUM, crc_s, strlen(crc_s) },
	};
	size_t nmeta = 6;
	if (x && x->segment)
		meta[nmeta++] = (lv_kv){ KEY_SEGMENT, x->segment, strlen(x->segment) };
	if (x && x->archive)
		meta[nmeta++] = (lv_kv){ KEY_ARCHIVE, x->archive, strlen(x->archive) };
	if (x && (x->segment || x->archive))
		meta[nmeta++] = (lv_kv){ KEY_EXTRA_CHECKSUM, xcrc_s, strlen(xcrc_s) };
	lv_lancefile_write_options wo = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	wo.file_version = LV_LANCEFILE_V2_1;
	rc = lv_lancefile_write(out, cols, C_NCOLS, n, meta, nmeta, &wo, err);
	columns_free(&c);
	return rc;
}

int lv__cp_encode(const lv_version_info *rows, size_t n, int64_t created, lv_buf *out,
		  lv_error *err)
{
	return lv__cp_encode_x(rows, n, created, NULL, out, err);
}

/* ---- decode ---- */

void lv__cp_file_dispose(lv__cp_file *f)
{
	lv_version_list_free(f->rows);
	f->rows = NULL;
	lv__free(f->archive);
	f->archive = NULL;
}

int lv__cp_file_read_end(int rc, lv__cp_file *f, lv_buf *b, lv_buf *keep)
{
	if (rc < 0)
		lv__cp_file_dispose(f);
	if (keep)
		*keep = *b;
	else
		lv_buf_dispose(b);
	return rc;
}

/* The optional archive keys of a decoded file, copied out (a NUL in either is corrupt). */
static int extra_keys(const lv_lancefile *lf, const char *path, lv__cp_file *out, lv_error *err)
{
	const lv_kv *seg = lv_lancefile_metadata_find(lf, KEY_SEGMENT);
	const lv_kv *arc = lv_lancefile_metadata_find(lf, KEY_ARCHIVE);
	if (seg) {
		const char *dash = memchr(seg->value, '-', seg->value_len);
		size_t a = dash ? (size_t)(dash - seg->value) : 0;
		if (!dash || !lv__parse_u64(seg->value, a, &out->seg_first) ||
		    !lv__parse_u64(dash + 1, seg->value_len - a - 1, &out->seg_last) ||
		    out->seg_first > out->seg_last)
			return lv__err(err, LV_ECORRUPT, "checkpoint %s: bad %s metadata", path, KEY_SEGMENT);
		out->is_segment = true;
	}
	if (arc) {
		if (memchr(arc->value, 0, arc->value_len))
			return lv__err(err, LV_ECORRUPT, "checkpoint %s: bad %s metadata", path, KEY_ARCHIVE);
		if (!(out->archive = lv__strndup(arc->value, arc->value_len)))
			return lv__err(err, LV_ENOMEM, "out of memory");
	}
	return 0;
}

static bool meta_i64(const lv_lancefile *lf, const char *key, int64_t *out)
{
	const lv_kv *kv = lv_lancefile_metadata_find(lf, key);
	if (!kv || kv->value_len == 0 || kv->value_len > 20)
		return false;
	bool neg = kv->value[0] == '-';
	uint64_t v;
	if (!lv__parse_u64(kv->value + neg, kv->value_len - neg, &v) || v > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/* Row i of the decoded columns as the checksum sees it (strings as they will read back:
 * up to a NUL, like the C strings a reader gets). */
static void col_row(const lv_column *const *col, size_t i, row_view *w)
{
	for (int k = 0; k < 9; k++)
		w->f[k] = col[FIXED[k]]->u64[i];
	w->tagged = col[C_TAGGED]->bools[i] != 0;
	w->cleaned = col[C_CLEANED]->bools[i] != 0;
	w->has_rv = !col[C_READV]->validity || col[C_READV]->validity[i];
	w->rv = w->has_rv ? col[C_READV]->u64[i] : 0;
	for (int k = 0; k < 3; k++) {
		const lv_column *c = col[STRS[k]];
		if (c->validity && !c->validity[i]) {
			w->s[k] = k == 2 ? "{}" : NULL; /* properties are never null */
			w->len[k] = k == 2 ? 2 : 0;
			continue;
		}
		uint64_t b = c->str_offsets[i], e = c->str_offsets[i + 1];
		w->s[k] = c->str_data + b;
		w->len[k] = strnlen(w->s[k], (size_t)(e - b));
	}
}

/* The 15 columns, in order, with the proposal's names, types and nullability. */
static int check_schema(const lv_lancefile *lf, const char *path, const lv_column *col[C_NCOLS],
			lv_error *err)
{
	size_t n = lv_lancefile_num_rows(lf);
	if (lv_lancefile_num_columns(lf) != C_NCOLS)
		return lv__err(err, LV_ECORRUPT, "checkpoint %s: %zu columns, expected %d", path,
			       lv_lancefile_num_columns(lf), C_NCOLS);
	for (int c = 0; c < C_NCOLS; c++) {
		col[c] = lv_lancefile_column(lf, (size_t)c);
		if (strcmp(col[c]->name, schema[c].name) || col[c]->type != schema[c].type ||
		    (!schema[c].nullable && col[c]->nullable))
			return lv__err(err, LV_ECORRUPT, "checkpoint %s: column %d is '%s', expected '%s'",
				       path, c, col[c]->name, schema[c].name);
		for (size_t i = 0; !schema[c].nullable && col[c]->validity && i < n; i++)
			if (!col[c]->validity[i])
				return lv__err(err, LV_ECORRUPT, "checkpoint %s: null in column '%s'", path,
					       col[c]->name);
	}
	return 0;
}

/* Does metadata `key` say "crc32c:<crc>"? */
static bool meta_is(const lv_lancefile *lf, const char *key, uint32_t crc)
{
	const lv_kv *ck = lv_lancefile_metadata_find(lf, key);
	char expect[CRC_TAG_LEN + 1];
	crc_tag(expect, crc);
	return ck && ck->value_len == CRC_TAG_LEN && !memcmp(ck->value, expect, CRC_TAG_LEN);
}

/* Is version v in keep (sorted), advancing *ki?  keep == NULL keeps everything. */
static bool kept(const lv__manifest_entry *keep, size_t nkeep, size_t *ki, uint64_t v)
{
	if (!keep)
		return true;
	while (*ki < nkeep && keep[*ki].version < v)
		(*ki)++;
	return *ki < nkeep && keep[*ki].version == v;
}

/* How many rows `keep` selects (all without it); exact when the versions increase, which
 * decode_rows checks. */
static size_t count_kept(const uint64_t *ver, size_t n, const lv__manifest_entry *keep,
			 size_t nkeep)
{
	if (!keep)
		return n;
	size_t ki = 0, want = 0;
	for (size_t i = 0; i < n; i++)
		want += kept(keep, nkeep, &ki, ver[i]);
	return want;
}

/* A reader's row (strings copied into a, properties normalised).  LV_ENOMEM or 0. */
/* An item's manifest details, cleared field by field (independent of the struct's layout, which
 * is the public header's to change: the ABI's shuffled-layout test reverses it). */
static void details_clear(lv_version_info *v)
{
	v->has_manifest_details = false;
	v->timestamp_nanos = 0;
	v->manifest_path = NULL;
	v->manifest_size = 0;
	v->writer_library = NULL;
	v->writer_version = NULL;
	v->data_format = NULL;
	v->transaction_file = NULL;
	v->transaction_inline = false;
	v->reader_feature_flags = 0;
	v->writer_feature_flags = 0;
	v->branch = NULL;
	v->num_indices = 0;
	v->num_config = 0;
	v->config_keys = NULL;
	v->config_values = NULL;
}

static int info_of_row(const row_view *w, lv__arena *a, lv_version_info *v)
{
	/* field by field: a compound literal zeroes the 248 bytes first with `rep stos`, which
	 * was a third of this loop's time (every field is set: a new one must be added here) */
	v->version = w->f[0];
	v->timestamp_millis = (int64_t)w->f[1];
	v->total_fragments = w->f[2];
	v->total_data_files = w->f[3];
	v->total_files_size = w->f[4];
	v->total_deletion_files = w->f[5];
	v->total_data_file_rows = w->f[6];
	v->total_deletion_file_rows = w->f[7];
	v->total_rows = w->f[8];
	v->is_tagged = w->tagged;
	v->is_cleaned_up = w->cleaned;
	v->transaction_uuid = NULL;
	v->has_read_version = w->has_rv;
	v->read_version = w->rv;
	v->operation_type = NULL;
	v->transaction_properties = NULL;
	details_clear(v);
	/* the uuid and the operation in one piece of the arena, each with its NUL; the
	 * properties are normalised from the column (a copy only when they are not "{}") */
	size_t l0 = w->s[0] ? w->len[0] + 1 : 0, l1 = w->s[1] ? w->len[1] + 1 : 0;
	char *p = l0 + l1 ? lv__arena_alloc(a, l0 + l1) : NULL;
	if (l0 + l1 && !p)
		return LV_ENOMEM;
	if (l0)
		v->transaction_uuid = lv__copyz(p, w->s[0], w->len[0]);
	if (l1)
		v->operation_type = lv__copyz(p + l0, w->s[1], w->len[1]);
	v->transaction_properties = normalize_properties(a, w->s[2], w->len[2]);
	return v->transaction_properties ? 0 : LV_ENOMEM;
}

/* The list for `want` kept rows of n, with one arena block that holds every kept string and
 * its NUL (more only if a property text is wrapped), sized from the columns when all rows
 * are kept. */
static int rows_alloc(const lv_column *const *col, size_t n, size_t want, lv__cp_file *out)
{
	if (!(out->rows = lv__version_list_new(want, 1)))
		return LV_ENOMEM;
	size_t sbytes = 3 * want + 64;
	for (int k = 0; k < 3 && want == n; k++)
		sbytes += (size_t)col[STRS[k]]->str_offsets[n] + 8 * n;
	if (want < n)
		sbytes += 160 * want;
	lv__arena_init(&out->rows->arenas[0], sbytes);
	out->rows->narenas = 1;
	return 0;
}

/*
 * One pass over the rows: strictly increasing versions, the checksum over the stored text,
 * and the rows `keep` selects built into out->rows as they are seen (each row's view is
 * taken once, for both).  Rows built before a failure are the caller's to dispose.
 */
static int decode_rows(const lv_lancefile *lf, const lv_column *const *col, int64_t created,
		       bool verify_checksum, const lv__manifest_entry *keep, size_t nkeep,
		       const char *path, lv__cp_file *out, lv_error *err)
{
	size_t n = lv_lancefile_num_rows(lf), ki = 0;
	const uint64_t *ver = col[C_VERSION]->u64;
	size_t want = count_kept(ver, n, keep, nkeep);
	if (rows_alloc(col, n, want, out) < 0)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv_version_list *l = out->rows;
	crc_acc acc;
	acc_start(&acc, created, n);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && ver[i] <= ver[i - 1])
			return lv__err(err, LV_ECORRUPT,
				       "checkpoint %s: versions not strictly increasing at row %zu", path, i);
		row_view w;
		col_row(col, i, &w);
		row_crc(&acc, &w);
		if (l->n < want && kept(keep, nkeep, &ki, ver[i])) {
			if (info_of_row(&w, &l->arenas[0], &l->items[l->n]) < 0)
				return lv__err(err, LV_ENOMEM, "out of memory");
			l->n++;
		}
	}
	uint32_t crc = acc_end(&acc);
	const lv_kv *seg = lv_lancefile_metadata_find(lf, KEY_SEGMENT);
	const lv_kv *arc = lv_lancefile_metadata_find(lf, KEY_ARCHIVE);
	lv__cp_extra x = { seg ? seg->value : NULL, arc ? arc->value : NULL };
	uint32_t xcrc = checksum_extra(crc, &x, seg ? seg->value_len : 0, arc ? arc->value_len : 0);
	if (!verify_checksum)
		return 0;
	if (!meta_is(lf, KEY_CHECKSUM, crc) || ((seg || arc) && !meta_is(lf, KEY_EXTRA_CHECKSUM, xcrc)))
		return lv__err(err, LV_ECORRUPT, "checkpoint %s: checksum mismatch", path);
	return 0;
}

/*
 * Decodes and validates one checkpoint file's bytes (no I/O).  Every row is
 * checked (order, checksum); only the rows whose versions are in `keep`
 * (sorted ascending; NULL = all) are materialised, so versions() on a long
 * history with few live versions builds few rows.  out->latest is the newest
 * row of the file either way.
 */
int lv__cp_decode(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
		  const lv__manifest_entry *keep, size_t nkeep, lv__cp_file *out, lv_error *err)
{
	lv_lancefile *lf = NULL;
	LV_TRY(lv_lancefile_read(&lf, data, size, path, err));
	size_t n = lv_lancefile_num_rows(lf);
	const lv_column *col[C_NCOLS];
	int rc = check_schema(lf, path, col, err);
	if (rc == 0 &&
	    (!meta_i64(lf, KEY_CREATED, &out->created) || !meta_i64(lf, KEY_CREATED_AT, &out->created_at)))
		rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: missing %s / %s metadata", path, KEY_CREATED,
			     KEY_CREATED_AT);
	if (rc == 0)
		rc = decode_rows(lf, col, out->created, verify_checksum, keep, nkeep, path, out, err);
	if (rc == 0)
		rc = extra_keys(lf, path, out, err);
	if (rc == 0)
		out->latest = n ? col[C_VERSION]->u64[n - 1] : 0;
	if (rc < 0)
		lv__cp_file_dispose(out);
	lv_lancefile_free(lf);
	return rc;
}

#ifdef LV_TEST_HOOKS /* a test helper (checkpoint_internal.h): the test library only */
int lv__cp_decode_rows(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
		       lv_version_list **rows, int64_t *created, lv_error *err)
{
	lv__cp_file f;
	memset(&f, 0, sizeof f);
	*rows = NULL;
	LV_TRY(lv__cp_decode(data, size, path, verify_checksum, NULL, 0, &f, err));
	*rows = f.rows; /* the rows are the caller's; the rest of the decoded file is not */
	f.rows = NULL;
	if (created)
		*created = f.created;
	lv__cp_file_dispose(&f);
	return 0;
}
#endif
