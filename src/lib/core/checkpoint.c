/*
 * Version checkpoints: _checkpoints/{latest:020}.lance, the 15-column record
 * batch of the Version Checkpointing proposal, written with our Lance file
 * writer; the degradation ladder that reads them; history and time travel.
 *
 * Invariants:
 *  - A checkpoint's content is a pure function of (its rows, dataset_created);
 *    created_at is the newest covered commit's timestamp, never the wall
 *    clock, so identical states give identical bytes.
 *  - Liveness is never taken from a checkpoint: a covered version is live iff
 *    its manifest is listed now.  is_cleaned_up in a file is what the writer
 *    knew; readers OR it with "manifest gone".
 *  - A checkpoint is used only if its schema, checksum and identity hold.
 */
#include "lancever/checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/checkpoint_internal.h"
#include "core/crc32c.h"
#include "core/dataset_internal.h"
#include "format/manifest.h"
#include "format/refs.h"
#include "lancever/lancefile.h"
#include "util/util.h"

#define CP_DIR "_checkpoints"
#define CP_MAX_FILE_BYTES ((size_t)1 << 31)
#define KEY_CREATED "lance:checkpoint:dataset_created"
#define KEY_CREATED_AT "lance:checkpoint:created_at"
#define KEY_CHECKSUM "lancever:checksum"
#define KEY_IDENTITY "lancever:dataset_id"
#define KEY_FORMAT "lancever:format"
#define KEY_LATEST "lancever:latest_version"

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
	lv_dbuf b;
	lv_dbuf_init(&b, 0);
	lv_dbuf_add(&b, head, (size_t)hl - 1); /* without the opening quote: escape adds it */
	lv_json_escape(&b, json, take);
	lv_dbuf_addc(&b, '}');
	return lv_dbuf_take_str(&b);
}

/* Text stored in a checkpoint, as returned to callers: a JSON object, or the raw text wrapped. */
static const char *normalize_properties(lv_arena *a, const char *s, size_t n)
{
	if (n == 2 && s[0] == '{' && s[1] == '}')
		return "{}";
	json_error_t je;
	json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
	bool ok = j && json_is_object(j);
	json_decref(j);
	if (ok)
		return lv_arena_strndup(a, s, n);
	lv_dbuf b;
	lv_dbuf_init(&b, 0);
	lv_dbuf_adds(&b, "{\"transaction_properties\":");
	lv_json_escape(&b, s, n);
	lv_dbuf_addc(&b, '}');
	const char *r = b.oom ? NULL : lv_arena_strndup(a, (const char *)b.ptr, b.len);
	lv_dbuf_dispose(&b);
	return r;
}

/* ---- checksum and identity ---- */

static uint32_t crc_u64(uint32_t c, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return lv_crc32c(c, b, 8);
}

/* Appends a string field's canonical form (presence byte, u64 length, bytes) to b. */
static size_t put_str(uint8_t *b, const char *s, size_t n)
{
	b[0] = s != NULL;
	if (!s)
		return 1;
	lv_put_le64(b + 1, n);
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
 * properties as (present, u64 length, bytes).  A row is serialised into one
 * buffer and hashed with one call when it fits (the CRC is a stream, so this
 * equals hashing field by field).
 */
static uint32_t row_crc(uint32_t c, const row_view *v)
{
	uint8_t b[1024];
	for (int k = 0; k < 9; k++)
		lv_put_le64(b + 8 * k, v->f[k]);
	b[72] = v->tagged;
	b[73] = v->cleaned;
	b[74] = v->has_rv;
	lv_put_le64(b + 75, v->has_rv ? v->rv : 0);
	size_t total = 83;
	for (int k = 0; k < 3; k++)
		total += 9 + (v->s[k] ? v->len[k] : 0);
	if (total <= sizeof b) {
		size_t at = 83;
		for (int k = 0; k < 3; k++)
			at += put_str(b + at, v->s[k], v->s[k] ? v->len[k] : 0);
		return lv_crc32c(c, b, at);
	}
	c = lv_crc32c(c, b, 83);
	for (int k = 0; k < 3; k++) {
		size_t h = put_str(b, v->s[k], 0); /* the presence byte and (placeholder) length */
		if (v->s[k])
			lv_put_le64(b + 1, v->len[k]);
		c = lv_crc32c(c, b, h);
		if (v->s[k])
			c = lv_crc32c(c, v->s[k], v->len[k]);
	}
	return c;
}

static uint32_t checksum_start(int64_t created, size_t n)
{
	return crc_u64(crc_u64(0, (uint64_t)created), n);
}

/* The checksum of rows held as lv_version_info (what a writer has). */
static uint32_t rows_checksum(const lv_version_info *r, size_t n, int64_t created)
{
	uint32_t c = checksum_start(created, n);
	for (size_t i = 0; i < n; i++) {
		const lv_version_info *v = &r[i];
		row_view w = { { v->version, (uint64_t)v->timestamp_millis, v->total_fragments,
				 v->total_data_files, v->total_files_size, v->total_deletion_files,
				 v->total_data_file_rows, v->total_deletion_file_rows, v->total_rows },
			       v->is_tagged, v->is_cleaned_up, v->has_read_version, v->read_version,
			       { v->transaction_uuid, v->operation_type, v->transaction_properties },
			       { 0, 0, 0 } };
		for (int k = 0; k < 3; k++)
			w.len[k] = w.s[k] ? strlen(w.s[k]) : 0;
		c = row_crc(c, &w);
	}
	return c;
}

static void identity_of(char *buf, size_t cap, int64_t created, const lv_version_info *first)
{
	snprintf(buf, cap, "%" PRId64 "/%" PRIu64 "/%s", created, first ? first->version : 0,
		 first && first->transaction_uuid ? first->transaction_uuid : "-");
}

/* ---- encode ---- */

static int encode(const lv_version_info *rows, size_t n, int64_t created, lv_buf *out,
		  lv_error *err)
{
	int rc = LV_ENOMEM;
	uint64_t *u[C_NCOLS] = { 0 };
	int64_t *ts = lv__calloc(n, sizeof *ts);
	uint8_t *tagged = lv__calloc(n, 1), *cleaned = lv__calloc(n, 1);
	uint8_t *v_uuid = lv__calloc(n, 1), *v_rv = lv__calloc(n, 1), *v_op = lv__calloc(n, 1);
	uint64_t *o_uuid = lv__calloc(n + 1, 8), *o_op = lv__calloc(n + 1, 8), *o_props = lv__calloc(n + 1, 8);
	lv_dbuf s_uuid, s_op, s_props;
	lv_dbuf_init(&s_uuid, 0);
	lv_dbuf_init(&s_op, 0);
	lv_dbuf_init(&s_props, 0);
	static const int ucols[] = { C_VERSION, C_FRAGS, C_DFILES, C_FSIZE, C_DELFILES, C_DFROWS,
				     C_DELROWS, C_ROWS, C_READV };
	for (size_t k = 0; k < sizeof ucols / sizeof ucols[0]; k++)
		if (!(u[ucols[k]] = lv__calloc(n, sizeof(uint64_t))))
			goto out;
	if (!ts || !tagged || !cleaned || !v_uuid || !v_rv || !v_op || !o_uuid || !o_op || !o_props)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const lv_version_info *v = &rows[i];
		u[C_VERSION][i] = v->version;
		ts[i] = v->timestamp_millis;
		u[C_FRAGS][i] = v->total_fragments;
		u[C_DFILES][i] = v->total_data_files;
		u[C_FSIZE][i] = v->total_files_size;
		u[C_DELFILES][i] = v->total_deletion_files;
		u[C_DFROWS][i] = v->total_data_file_rows;
		u[C_DELROWS][i] = v->total_deletion_file_rows;
		u[C_ROWS][i] = v->total_rows;
		tagged[i] = v->is_tagged;
		cleaned[i] = v->is_cleaned_up;
		v_uuid[i] = v->transaction_uuid != NULL;
		if (v->transaction_uuid && lv_dbuf_adds(&s_uuid, v->transaction_uuid) < 0)
			goto out;
		o_uuid[i + 1] = s_uuid.len;
		v_rv[i] = v->has_read_version;
		u[C_READV][i] = v->has_read_version ? v->read_version : 0;
		v_op[i] = v->operation_type != NULL;
		if (v->operation_type && lv_dbuf_adds(&s_op, v->operation_type) < 0)
			goto out;
		o_op[i + 1] = s_op.len;
		if (lv_dbuf_adds(&s_props, v->transaction_properties ? v->transaction_properties : "{}") < 0)
			goto out;
		o_props[i + 1] = s_props.len;
	}
	lv_column cols[C_NCOLS];
	memset(cols, 0, sizeof cols);
	for (int c = 0; c < C_NCOLS; c++) {
		cols[c].name = schema[c].name;
		cols[c].type = schema[c].type;
		cols[c].nullable = schema[c].nullable;
		cols[c].u64 = u[c];
	}
	cols[C_TS].i64 = ts;
	cols[C_TAGGED].bools = tagged;
	cols[C_CLEANED].bools = cleaned;
	cols[C_UUID].str_offsets = o_uuid;
	cols[C_UUID].str_data = s_uuid.ptr ? (const char *)s_uuid.ptr : "";
	cols[C_UUID].validity = v_uuid;
	cols[C_READV].validity = v_rv;
	cols[C_OP].str_offsets = o_op;
	cols[C_OP].str_data = s_op.ptr ? (const char *)s_op.ptr : "";
	cols[C_OP].validity = v_op;
	cols[C_PROPS].str_offsets = o_props;
	cols[C_PROPS].str_data = s_props.ptr ? (const char *)s_props.ptr : "";

	char created_s[32], created_at_s[32], crc_s[32], latest_s[32], ident[256];
	int64_t created_at = n ? rows[n - 1].timestamp_millis : 0;
	snprintf(created_s, sizeof created_s, "%" PRId64, created);
	snprintf(created_at_s, sizeof created_at_s, "%" PRId64, created_at);
	snprintf(crc_s, sizeof crc_s, "crc32c:%08x", rows_checksum(rows, n, created));
	snprintf(latest_s, sizeof latest_s, "%" PRIu64, n ? rows[n - 1].version : 0);
	identity_of(ident, sizeof ident, created, n ? &rows[0] : NULL);
	lv_kv meta[] = {
		{ KEY_CREATED, created_s, strlen(created_s) },
		{ KEY_CREATED_AT, created_at_s, strlen(created_at_s) },
		{ KEY_FORMAT, "1", 1 },
		{ KEY_LATEST, latest_s, strlen(latest_s) },
		{ KEY_IDENTITY, ident, strlen(ident) },
		{ KEY_CHECKSUM, crc_s, strlen(crc_s) },
	};
	lv_lancefile_write_options wo = LV_LANCEFILE_WRITE_OPTIONS_INIT;
	wo.file_version = LV_LANCEFILE_V2_1;
	rc = lv_lancefile_write(out, cols, C_NCOLS, n, meta, sizeof meta / sizeof meta[0], &wo, err);
	goto done;
out:
	rc = lv__err(err, LV_ENOMEM, "out of memory encoding checkpoint");
done:
	for (int c = 0; c < C_NCOLS; c++)
		free(u[c]);
	free(ts);
	free(tagged);
	free(cleaned);
	free(v_uuid);
	free(v_rv);
	free(v_op);
	free(o_uuid);
	free(o_op);
	free(o_props);
	lv_dbuf_dispose(&s_uuid);
	lv_dbuf_dispose(&s_op);
	lv_dbuf_dispose(&s_props);
	return rc;
}

/* ---- decode ---- */

typedef struct cp_file {
	lv_version_list *rows; /* items + arena[0] own the strings */
	uint64_t latest;
	int64_t created;
	int64_t created_at;
	char path[64];
} cp_file;

static void cp_file_dispose(cp_file *f)
{
	lv_version_list_free(f->rows);
	f->rows = NULL;
}

static bool meta_i64(const lv_lancefile *lf, const char *key, int64_t *out)
{
	const lv_kv *kv = lv_lancefile_metadata_find(lf, key);
	if (!kv || kv->value_len == 0 || kv->value_len > 20)
		return false;
	bool neg = kv->value[0] == '-';
	uint64_t v;
	if (!lv_parse_u64(kv->value + neg, kv->value_len - neg, &v) || v > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

static const char *col_str(lv_arena *a, const lv_column *c, size_t i)
{
	if (c->validity && !c->validity[i])
		return NULL;
	uint64_t s = c->str_offsets[i], e = c->str_offsets[i + 1];
	return lv_arena_strndup(a, c->str_data + s, (size_t)(e - s));
}

/* Row i of the decoded columns as the checksum sees it (strings as they will read back:
 * up to a NUL, like the C strings a reader gets). */
static void col_row(const lv_column *const *col, size_t i, row_view *w)
{
	static const int fixed[9] = { C_VERSION, C_TS, C_FRAGS, C_DFILES, C_FSIZE, C_DELFILES,
				      C_DFROWS, C_DELROWS, C_ROWS };
	for (int k = 0; k < 9; k++)
		w->f[k] = col[fixed[k]]->u64[i];
	w->tagged = col[C_TAGGED]->bools[i] != 0;
	w->cleaned = col[C_CLEANED]->bools[i] != 0;
	w->has_rv = !col[C_READV]->validity || col[C_READV]->validity[i];
	w->rv = w->has_rv ? col[C_READV]->u64[i] : 0;
	static const int str[3] = { C_UUID, C_OP, C_PROPS };
	for (int k = 0; k < 3; k++) {
		const lv_column *c = col[str[k]];
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

/*
 * Decodes and validates one checkpoint file's bytes (no I/O).  Every row is
 * checked (order, checksum); only the rows whose versions are in `keep`
 * (sorted ascending; NULL = all) are materialised, so versions() on a long
 * history with few live versions builds few rows.  out->latest is the newest
 * row of the file either way.
 */
static int cp_decode(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
		     const lv_manifest_entry *keep, size_t nkeep, cp_file *out, lv_error *err)
{
	lv_lancefile *lf = NULL;
	int rc = lv_lancefile_read(&lf, data, size, path, err);
	if (rc < 0)
		return rc;
	size_t n = lv_lancefile_num_rows(lf);
	if (lv_lancefile_num_columns(lf) != C_NCOLS) {
		rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: %zu columns, expected %d", path,
			     lv_lancefile_num_columns(lf), C_NCOLS);
		goto out;
	}
	const lv_column *col[C_NCOLS];
	for (int c = 0; c < C_NCOLS; c++) {
		col[c] = lv_lancefile_column(lf, (size_t)c);
		if (strcmp(col[c]->name, schema[c].name) || col[c]->type != schema[c].type ||
		    (!schema[c].nullable && col[c]->nullable)) {
			rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: column %d is '%s', expected '%s'",
				     path, c, col[c]->name, schema[c].name);
			goto out;
		}
		if (!schema[c].nullable && col[c]->validity) {
			for (size_t i = 0; i < n; i++)
				if (!col[c]->validity[i]) {
					rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: null in column '%s'",
						     path, col[c]->name);
					goto out;
				}
		}
	}
	if (!meta_i64(lf, KEY_CREATED, &out->created) || !meta_i64(lf, KEY_CREATED_AT, &out->created_at)) {
		rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: missing %s / %s metadata", path, KEY_CREATED,
			     KEY_CREATED_AT);
		goto out;
	}
	/* Every row: strictly increasing versions, and the checksum over the stored text. */
	const uint64_t *ver = col[C_VERSION]->u64;
	uint32_t crc = checksum_start(out->created, n);
	size_t want = 0, ki = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && ver[i] <= ver[i - 1]) {
			rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: versions not strictly increasing at row %zu",
				     path, i);
			goto out;
		}
		row_view w;
		col_row(col, i, &w);
		crc = row_crc(crc, &w);
		if (keep) {
			while (ki < nkeep && keep[ki].version < ver[i])
				ki++;
			want += ki < nkeep && keep[ki].version == ver[i];
		}
	}
	if (!keep)
		want = n;
	const lv_kv *ck = lv_lancefile_metadata_find(lf, KEY_CHECKSUM);
	char expect[32];
	snprintf(expect, sizeof expect, "crc32c:%08x", crc);
	if (verify_checksum &&
	    (!ck || ck->value_len != strlen(expect) || memcmp(ck->value, expect, ck->value_len))) {
		rc = lv__err(err, LV_ECORRUPT, "checkpoint %s: checksum mismatch", path);
		goto out;
	}
	if (!(out->rows = lv__version_list_new(want, 1))) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	lv_arena *a = &out->rows->arenas[0];
	/* One block that holds every kept string and its NUL (more only if a property text is
	 * wrapped), sized from the columns when all rows are kept. */
	size_t sbytes = 3 * want + 64;
	for (int c = C_UUID; c <= C_PROPS && want == n; c++)
		if (col[c]->type == LV_COL_UTF8)
			sbytes += (size_t)col[c]->str_offsets[n] + 8 * n;
	if (want < n)
		sbytes += 160 * want;
	lv_arena_init(a, sbytes);
	out->rows->narenas = 1;
	ki = 0;
	for (size_t i = 0; i < n && out->rows->n < want; i++) {
		if (keep) {
			while (ki < nkeep && keep[ki].version < ver[i])
				ki++;
			if (ki >= nkeep || keep[ki].version != ver[i])
				continue;
		}
		lv_version_info *v = &out->rows->items[out->rows->n];
		memset(v, 0, sizeof *v);
		v->version = ver[i];
		v->timestamp_millis = col[C_TS]->i64[i];
		v->total_fragments = col[C_FRAGS]->u64[i];
		v->total_data_files = col[C_DFILES]->u64[i];
		v->total_files_size = col[C_FSIZE]->u64[i];
		v->total_deletion_files = col[C_DELFILES]->u64[i];
		v->total_data_file_rows = col[C_DFROWS]->u64[i];
		v->total_deletion_file_rows = col[C_DELROWS]->u64[i];
		v->total_rows = col[C_ROWS]->u64[i];
		v->is_tagged = col[C_TAGGED]->bools[i] != 0;
		v->is_cleaned_up = col[C_CLEANED]->bools[i] != 0;
		v->has_read_version = !col[C_READV]->validity || col[C_READV]->validity[i];
		v->read_version = v->has_read_version ? col[C_READV]->u64[i] : 0;
		v->transaction_uuid = col_str(a, col[C_UUID], i);
		v->operation_type = col_str(a, col[C_OP], i);
		const char *props = col_str(a, col[C_PROPS], i);
		v->transaction_properties = props ? normalize_properties(a, props, strlen(props)) : "{}";
		if ((col[C_UUID]->validity ? col[C_UUID]->validity[i] : 1) && !v->transaction_uuid) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
		if (!v->transaction_properties) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
		out->rows->n++;
	}
	out->latest = n ? ver[n - 1] : 0;
	rc = 0;
out:
	if (rc < 0)
		cp_file_dispose(out);
	lv_lancefile_free(lf);
	return rc;
}

int lv__checkpoint_decode(const uint8_t *data, size_t size, const char *path, bool verify_checksum,
			  lv_version_list **rows, int64_t *created, lv_error *err)
{
	cp_file f;
	memset(&f, 0, sizeof f);
	*rows = NULL;
	LV_TRY(cp_decode(data, size, path, verify_checksum, NULL, 0, &f, err));
	*rows = f.rows;
	if (created)
		*created = f.created;
	return 0;
}

int lv__checkpoint_encode(const lv_version_info *rows, size_t n, int64_t created, lv_buf *out,
			  lv_error *err)
{
	return encode(rows, n, created, out, err);
}

/* ---- listing checkpoint files ---- */

typedef struct cp_name {
	uint64_t version;
	char path[64];
} cp_name;

typedef struct cp_names {
	cp_name *v;
	size_t n, cap;
	int rc;
	cp_name *damaged; /* "<name>.lance" DAMAGED_SUFFIX "<crc>": kept aside, never read as checkpoints */
	size_t ndamaged, capdamaged;
} cp_names;

/*
 * A checkpoint file that could not be read as one is never deleted or
 * replaced: a writer moves it aside to "<name>.lance.damaged-<crc32c of its
 * bytes>", a name no reader takes for a checkpoint and no prune removes, so
 * the rows it may hold stay recoverable (lancever check --salvage).
 */
#define DAMAGED_SUFFIX ".damaged-"

static void cp_names_free(cp_names *c)
{
	free(c->v);
	free(c->damaged);
	c->v = c->damaged = NULL;
	c->n = c->ndamaged = 0;
}

static int cp_list_cb(const lv_list_entry *e, void *payload)
{
	cp_names *c = payload;
	const char *name = lv__basename(e->path);
	uint64_t v;
	size_t len = strlen(name), sl = strlen(DAMAGED_SUFFIX);
	if (len > 26 + sl && !strncmp(name + 20, ".lance" DAMAGED_SUFFIX, 6 + sl) &&
	    lv_parse_u64(name, 20, &v) && len < sizeof c->v[0].path - sizeof CP_DIR) {
		cp_name *nd = lv__grow(c->damaged, &c->capdamaged, c->ndamaged, sizeof *nd, 4);
		if (!nd) {
			c->rc = LV_ENOMEM;
			return 1;
		}
		c->damaged = nd;
		nd[c->ndamaged].version = v;
		snprintf(nd[c->ndamaged].path, sizeof nd[c->ndamaged].path, CP_DIR "/%s", name);
		c->ndamaged++;
		return 0;
	}
	if (len != 26 || strcmp(name + 20, ".lance") || !lv_parse_u64(name, 20, &v))
		return 0;
	cp_name *nv = lv__grow(c->v, &c->cap, c->n, sizeof *nv, 8);
	if (!nv) {
		c->rc = LV_ENOMEM;
		return 1;
	}
	c->v = nv;
	c->v[c->n].version = v;
	snprintf(c->v[c->n].path, sizeof c->v[c->n].path, CP_DIR "/%s", name);
	c->n++;
	return 0;
}

static int cmp_name_desc(const void *a, const void *b)
{
	const cp_name *x = a, *y = b;
	return x->version < y->version ? 1 : x->version > y->version ? -1 : 0;
}

static int cp_list(lv_storage *st, cp_names *out, lv_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = lv_storage_list(st, CP_DIR, false, cp_list_cb, out, err);
	if (rc >= 0 && out->rc < 0)
		rc = lv__err(err, out->rc, "out of memory");
	if (rc < 0) {
		cp_names_free(out);
		return rc;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_name_desc);
	if (out->ndamaged > 1)
		qsort(out->damaged, out->ndamaged, sizeof *out->damaged, cmp_name_desc);
	return 0;
}

int lv__checkpoint_newest_name(lv_storage *st, uint64_t *version, lv_error *err)
{
	cp_names names;
	*version = 0;
	int rc = cp_list(st, &names, err);
	if (rc < 0)
		return rc;
	if (names.n)
		*version = names.v[0].version;
	cp_names_free(&names);
	return 0;
}

/* ---- the ladder ---- */

static const lv_version_info *find_row(const lv_version_list *l, uint64_t version)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->items[mid].version < version)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->items[lo].version == version ? &l->items[lo] : NULL;
}

static bool entry_live(const lv_manifest_entry *e, size_t n, uint64_t version)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid].version < version)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && e[lo].version == version;
}

/* A first, small probe; a bigger one only when a section runs past it. */
#define HEAD_PROBE_SMALL 4096
#define HEAD_PROBE_BYTES 65536

/* Scans up to three "u32 len + message" sections of a manifest head for the
 * row's transaction.  1 found, 0 not found, -1 a section runs past the head. */
static int head_scan(const lv_buf *h, const char *path, const lv_version_info *row)
{
	size_t off = 0;
	for (int k = 0; k < 3 && h->size - off >= 4; k++) {
		uint32_t len = lv_le32(h->ptr + off);
		if (len > h->size - off - 4)
			return -1;
		lv_txn t;
		lv_error ignored = { 0 };
		if (lv__txn_parse(h->ptr + off + 4, len, path, &t, &ignored) == 0 &&
		    t.uuid.n == strlen(row->transaction_uuid) &&
		    !memcmp(t.uuid.p, row->transaction_uuid, t.uuid.n) &&
		    t.read_version == row->read_version)
			return 1;
		off += 4 + (size_t)len;
	}
	return 0;
}

/*
 * Fast identity probe: Lance writes the transaction as one of the first
 * "u32 len + message" sections of the manifest file (first, or right after
 * the index section), so a ranged read of the head usually holds it: 4 KiB
 * first, 64 KiB if a section runs past that.  Returns 1 if a section there
 * parses as a transaction with the row's uuid and read_version (a random
 * 36-character uuid cannot match by chance), 0 if the head does not settle
 * it, or a negative error.  The head is never interpreted any further.
 */
/* The small head of one manifest, read ahead of need (see cp_load_ladder_names). */
typedef struct head_pre {
	const char *path; /* NULL = nothing read ahead */
	int rc;
	lv_buf buf;
	lv_error err;
} head_pre;

static int head_confirms(lv_storage *st, const char *path, const lv_version_info *row,
			 const head_pre *pre, uint64_t *bytes, lv_error *err)
{
	if (!row->transaction_uuid || !row->has_read_version)
		return 0;
	int found = -1;
	for (uint64_t probe = HEAD_PROBE_SMALL; found < 0 && probe <= HEAD_PROBE_BYTES; probe *= 16) {
		lv_buf h = { 0 };
		bool mine = !(probe == HEAD_PROBE_SMALL && pre && pre->path && !strcmp(pre->path, path));
		if (!mine) { /* the read-ahead copy of this head */
			if (pre->rc < 0) {
				if (err)
					*err = pre->err;
				return pre->rc;
			}
			h = pre->buf;
		} else {
			int rc = lv_storage_read_range(st, path, 0, probe, &h, err);
			if (rc < 0)
				return rc;
		}
		*bytes += h.size;
		found = head_scan(&h, path, row);
		bool whole = h.size < probe; /* the file ends inside the probe */
		if (mine)
			lv_buf_dispose(&h);
		if (found < 0 && whole)
			found = 0;
	}
	return found < 0 ? 0 : found;
}

/*
 * Does this checkpoint belong to the dataset's present history?  It must not
 * cover versions beyond the latest live one, and the newest covered version
 * that is still live must carry the same transaction: confirmed from the
 * head of its manifest when possible (uuid and read_version), else from the
 * whole manifest (uuid and timestamp).
 */
static int cp_verify_identity(lv_dataset *ds, const cp_file *f, const lv_manifest_entry *live,
			      size_t nlive, const head_pre *pre, uint64_t *bytes, lv_error *err)
{
	if (nlive && f->latest > live[nlive - 1].version)
		return lv__err(err, LV_ECONFLICT,
			       "checkpoint %s covers version %" PRIu64 " but the dataset's latest is %" PRIu64
			       " (different history)",
			       f->path, f->latest, live[nlive - 1].version);
	for (size_t k = nlive; k-- > 0;) {
		if (live[k].version > f->latest)
			continue;
		const lv_version_info *row = find_row(f->rows, live[k].version);
		if (!row)
			continue;
		int hc = head_confirms(ds->st, live[k].path, row, pre, bytes, err);
		if (hc == LV_ENOTFOUND) /* vanished meanwhile: try an older one */
			continue;
		if (hc < 0)
			return hc;
		if (hc == 1)
			return 0;
		lv_arena a;
		lv_arena_init(&a, 1024);
		lv_version_info info;
		int rc = lv__read_version_info(ds->st, live[k].path, &a, &info, err);
		if (rc == 0)
			*bytes += info.manifest_size;
		if (rc == LV_ENOTFOUND) { /* vanished meanwhile: try an older one */
			lv_arena_dispose(&a);
			continue;
		}
		if (rc < 0) {
			lv_arena_dispose(&a);
			return rc;
		}
		bool same = info.timestamp_millis == row->timestamp_millis &&
			    ((!info.transaction_uuid && !row->transaction_uuid) ||
			     (info.transaction_uuid && row->transaction_uuid &&
			      !strcmp(info.transaction_uuid, row->transaction_uuid)));
		lv_arena_dispose(&a);
		if (!same)
			return lv__err(err, LV_ECONFLICT,
				       "checkpoint %s: version %" PRIu64
				       " differs from its manifest (dataset recreated? different history)",
				       f->path, live[k].version);
		return 0;
	}
	return 0;
}

/*
 * Races the ladder can see (a concurrent cleanup or checkpoint): a listed
 * checkpoint was pruned before it could be read, or one covers versions
 * committed after the manifests were listed.  Either way an older file may
 * answer, one that lacks versions whose manifests are already gone.
 */
#define RACE_VANISHED 1
#define RACE_AHEAD 2

/* Job 0 reads a checkpoint file, job 1 the small head of a manifest (into pre). */
typedef struct pre_read {
	lv_storage *st;
	const char *cp_path, *head_path;
	lv_buf *cp_buf;
	int rc;
	lv_error *cp_err;
	head_pre *pre;
} pre_read;

static void pre_read_job(size_t i, void *arg)
{
	pre_read *p = arg;
	if (i == 0)
		p->rc = lv_storage_read(p->st, p->cp_path, p->cp_buf, p->cp_err);
	else
		p->pre->rc = lv_storage_read_range(p->st, p->head_path, 0, HEAD_PROBE_SMALL, &p->pre->buf,
						   &p->pre->err);
}

/*
 * Why a checkpoint file was not used.  Only DAMAGED and FOREIGN files are
 * moved aside by a writer; the others are kept where they are.
 */
enum cp_class {
	CP_USABLE = 0,
	CP_VANISHED,   /* gone since the listing (a concurrent prune) */
	CP_AHEAD,      /* covers versions beyond the listed manifests (a race, or another history) */
	CP_DAMAGED,    /* does not decode, fails its checksum, or is misnamed */
	CP_FOREIGN,    /* decodes, but a live manifest contradicts it (another history) */
	CP_UNREADABLE  /* could not be read or verified (I/O): nothing is known of it */
};

static int classify_read_error(int rc)
{
	return rc == LV_ENOTFOUND ? CP_VANISHED : CP_UNREADABLE;
}

static int classify_decode_error(int rc)
{
	return rc == LV_ECORRUPT || rc == LV_ELIMIT || rc == LV_EUNSUPPORTED || rc == LV_EINVALID
		       ? CP_DAMAGED
		       : CP_UNREADABLE;
}

/*
 * Reads and validates one checkpoint file.  Returns 0 (usable: *f filled) or
 * the error that rejected it (e names the file), with *cls saying which kind
 * of rejection; LV_ENOMEM is returned as itself.  With `keep`, the bytes read
 * are handed back there (a writer moves damaged files aside byte for byte).
 * `pre` (may be NULL) is a manifest head read ahead of need.
 */
static int cp_try(lv_dataset *ds, const cp_name *name, const lv_manifest_entry *live, size_t nlive,
		  bool all_rows, const head_pre *pre, lv_buf *keep, cp_file *f, int *cls,
		  uint64_t *id_bytes, lv_buf *pre_read_cp, lv_error *e)
{
	lv_buf b = { 0 };
	int rc = 0;
	memset(f, 0, sizeof *f);
	snprintf(f->path, sizeof f->path, "%s", name->path);
	if (pre_read_cp) { /* read already, with the manifest head (see cp_load_ladder) */
		b = *pre_read_cp;
		memset(pre_read_cp, 0, sizeof *pre_read_cp);
	} else {
		rc = lv_storage_read(ds->st, name->path, &b, e);
	}
	*cls = CP_USABLE;
	if (rc < 0) {
		*cls = classify_read_error(rc);
		return rc;
	}
	if (b.size > CP_MAX_FILE_BYTES)
		rc = lv__err(e, LV_ELIMIT, "checkpoint %s too large", name->path);
	if (rc == 0)
		rc = cp_decode(b.ptr, b.size, name->path, true, all_rows ? NULL : live,
			       all_rows ? 0 : nlive, f, e);
	if (rc == 0 && f->latest != name->version)
		rc = lv__err(e, LV_ECORRUPT, "checkpoint %s: covers version %" PRIu64
			     " but is named for %" PRIu64, name->path, f->latest, name->version);
	if (rc < 0 && rc != LV_ENOMEM)
		*cls = classify_decode_error(rc);
	if (rc == 0 && nlive && f->latest > live[nlive - 1].version) {
		*cls = CP_AHEAD;
		rc = lv__err(e, LV_ECONFLICT,
			     "checkpoint %s covers version %" PRIu64 " but the dataset's latest is %" PRIu64
			     " (written after the manifests were listed, or another history)",
			     name->path, f->latest, live[nlive - 1].version);
	}
	if (rc == 0) {
		rc = cp_verify_identity(ds, f, live, nlive, pre, id_bytes, e);
		if (rc < 0 && rc != LV_ENOMEM)
			*cls = rc == LV_ECONFLICT ? CP_FOREIGN : CP_UNREADABLE;
	}
	if (rc < 0)
		cp_file_dispose(f);
	if (keep)
		*keep = b;
	else
		lv_buf_dispose(&b);
	return rc;
}

/* The ladder's record of the files it rejected (for warnings and gap reasons). */
static void note_rejected(lv__warnlog *wl, lv_history_report *rep, const cp_name *name, int cls,
			  const lv_error *e, uint64_t *max_rejected)
{
	rep->checkpoints_rejected++;
	if (rep->checkpoints_rejected == 1)
		snprintf(rep->note, sizeof rep->note, "rejected %.230s", e->message);
	if (cls != CP_AHEAD && name->version > *max_rejected)
		*max_rejected = name->version;
	lv__warn(wl, LV_WARN_CHECKPOINT_REJECTED, name->path, 0, 0, "checkpoint %s rejected: %s",
		 name->path, e->message);
}

/*
 * Loads the newest usable checkpoint of `names` (newest first; not freed
 * here).  out->rows stays NULL when none is usable.  Each rejected file is a
 * warning in `wl`; *max_rejected is the newest version a rejected file (other
 * than one ahead of the manifests) may record.  !all_rows keeps only the
 * rows of live versions (what versions() needs).
 */
static int cp_load_ladder(lv_dataset *ds, const cp_names *names, const lv_manifest_entry *live,
			  size_t nlive, bool all_rows, cp_file *out, lv_history_report *rep,
			  int *races, lv__warnlog *wl, uint64_t *max_rejected, lv_error *err)
{
	memset(out, 0, sizeof *out);
	head_pre pre;
	memset(&pre, 0, sizeof pre);
	int rc = 0;
	for (size_t i = 0; i < names->n; i++) {
		lv_error e = { 0 };
		lv_buf first = { 0 };
		bool have_first = false;
		if (i == 0 && ds->remote) {
			/*
			 * On an object store the newest file and the head of the manifest
			 * that will confirm its identity (the newest live one it covers, by
			 * its name) are read at once: one round trip instead of two.
			 */
			size_t k = nlive;
			while (k > 0 && live[k - 1].version > names->v[0].version)
				k--;
			pre_read pr = { ds->st, names->v[0].path, k ? live[k - 1].path : NULL, &first, 0, &e, &pre };
			pre.path = pr.head_path;
			lv_parallel_for(pre.path ? 2 : 1, 2, pre_read_job, &pr);
			if (pr.rc < 0) {
				int cls = classify_read_error(pr.rc);
				if (cls == CP_VANISHED)
					*races |= RACE_VANISHED;
				else
					note_rejected(wl, rep, &names->v[0], cls, &e, max_rejected);
				continue;
			}
			have_first = true;
		}
		cp_file f;
		int cls;
		rc = cp_try(ds, &names->v[i], live, nlive, all_rows, i == 0 ? &pre : NULL, NULL, &f, &cls,
			    &rep->identity_bytes, have_first ? &first : NULL, &e);
		lv_buf_dispose(&first);
		if (rc == LV_ENOMEM)
			break;
		if (rc == 0) {
			*out = f;
			rep->rung = i == 0 ? LV_RUNG_NEWEST_CHECKPOINT : LV_RUNG_OLDER_CHECKPOINT;
			rep->checkpoint_version = f.latest;
			break;
		}
		if (cls == CP_VANISHED) {
			*races |= RACE_VANISHED;
			continue;
		}
		if (cls == CP_AHEAD)
			*races |= RACE_AHEAD;
		note_rejected(wl, rep, &names->v[i], cls, &e, max_rejected);
	}
	lv_buf_dispose(&pre.buf);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	return 0;
}

/* ---- assembling versions / history ---- */

/*
 * The first round of a history call: the three listings it needs do not
 * depend on each other, so on an object store they run at once (one round
 * trip instead of four).  On local disk a thread costs more than it saves.
 */
typedef struct round1 {
	lv_dataset *ds;
	lv_manifest_entry *live;
	size_t nlive;
	cp_names names;
	lv_refs *refs;
	int rc[3];
	lv_error err[3];
} round1;

static void round1_job(size_t i, void *arg)
{
	round1 *r = arg;
	if (i == 0)
		r->rc[0] = lv__list_manifests(r->ds->st, &r->live, &r->nlive, &r->err[0]);
	else if (i == 1)
		r->rc[1] = cp_list(r->ds->st, &r->names, &r->err[1]);
	else
		r->rc[2] = lv__refs_load_lenient(&r->refs, r->ds->root,
						 r->ds->remote ? r->ds->threads : 1, &r->err[2]);
}

/* Why versions first..last have no record, for the warning that says so. */
static void warn_gap(lv__warnlog *wl, const cp_names *names, uint64_t max_rejected, uint64_t first,
		     uint64_t last)
{
	char range[64];
	lv__format_range(range, sizeof range, first, last);
	const cp_name *aside = NULL; /* the oldest damaged file that may hold the range */
	for (size_t i = names->ndamaged; i-- > 0 && !aside;)
		if (names->damaged[i].version >= first)
			aside = &names->damaged[i];
	if (max_rejected >= first)
		lv__warn(wl, LV_WARN_HISTORY_GAP, NULL, first, last,
			 "%s: no record in any usable checkpoint; a rejected checkpoint (see above) may hold them",
			 range);
	else if (aside)
		lv__warn(wl, LV_WARN_HISTORY_GAP, aside->path, first, last,
			 "%s: no record; the damaged checkpoint kept as %s may hold them "
			 "(lancever check --salvage)", range, aside->path);
	else
		lv__warn(wl, LV_WARN_HISTORY_GAP, NULL, first, last,
			 "%s: no record (cleaned up before any checkpoint recorded them, or trimmed "
			 "by max_entries)", range);
}

/* Gaps of a history list, each a warning; the first version of main is 1. */
static int history_gaps(lv_dataset *ds, lv_version_list *l, const cp_names *names,
			uint64_t max_rejected, lv_history_report *rep, lv__warnlog *wl)
{
	if (l->n == 0)
		return 0;
	uint64_t start = ds->branch ? l->items[0].version : 1;
	if (lv__list_find_gaps(l, start) < 0)
		return LV_ENOMEM;
	for (size_t g = 0; g < l->ngaps; g++)
		warn_gap(wl, names, max_rejected, l->gaps[g][0], l->gaps[g][1]);
	rep->unrecorded_versions = lv__list_gap_versions(l);
	return 0;
}

static void warn_vanished(lv__warnlog *wl, const lv_version_list *l)
{
	for (size_t i = 0; i < l->nvanished; i++)
		lv__warn(wl, LV_WARN_MANIFEST_VANISHED, l->vanished[i], 0, 0,
			 "manifest %s vanished while being read (a concurrent cleanup?); skipped",
			 l->vanished[i]);
}

static int assemble_once(lv_dataset *ds, bool history, lv_version_list **out,
			 lv_history_report *report, int *races, lv__warnlog *wl, lv_error *err)
{
	lv_history_report rep;
	lv_storage_stats s0;
	lv__report_begin(ds, &rep, &s0);
	lv_manifest_entry *live = NULL;
	size_t nlive = 0;
	cp_file cp;
	memset(&cp, 0, sizeof cp);
	lv_version_list *l = NULL;
	const char **tail = NULL;
	round1 r1;
	memset(&r1, 0, sizeof r1);
	r1.ds = ds;
	lv_parallel_for(3, ds->remote ? 3 : 1, round1_job, &r1);
	live = r1.live;
	nlive = r1.nlive;
	uint64_t max_rejected = 0;
	int rc = r1.rc[0] < 0 ? r1.rc[0] : r1.rc[1];
	if (rc < 0) {
		if (err)
			*err = r1.err[r1.rc[0] < 0 ? 0 : 1];
		goto out;
	}
	lv__warn_refs(wl, r1.refs);
	if ((rc = cp_load_ladder(ds, &r1.names, live, nlive, history, &cp, &rep, races, wl,
				 &max_rejected, err)) < 0)
		goto out;
	if (!cp.rows) {
		if (nlive == 0) {
			rc = lv__err(err, LV_ENOTFOUND,
				     "%s: not a Lance dataset (no manifests in _versions/)",
				     lv_storage_describe(ds->st));
			goto out;
		}
		rc = lv__versions_from_manifests(&l, ds, live, nlive, r1.refs, &r1.err[2], &rep, err);
		if (rc < 0)
			goto out;
		rep.rung = LV_RUNG_MANIFESTS;
		goto done;
	}
	/* live versions the checkpoint lacks: the tail (and any trimmed by max_entries) */
	size_t ntail = 0;
	tail = lv__calloc(nlive ? nlive : 1, sizeof *tail);
	if (!tail) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * One merge walk over the two sorted sequences (rows and live manifests):
	 * a row is live iff its manifest is listed; a live manifest without a row
	 * is in the tail and is read below.  The checkpoint's rows are filtered in
	 * place and its list (with its string arena) becomes the answer: no second
	 * copy of the rows.
	 */
	l = cp.rows;
	cp.rows = NULL;
	size_t li = 0, w = 0;
	for (size_t i = 0; i < l->n; i++) {
		lv_version_info v = l->items[i];
		while (li < nlive && live[li].version < v.version)
			tail[ntail++] = live[li++].path;
		bool is_live = li < nlive && live[li].version == v.version;
		if (is_live)
			li++;
		else if (!history)
			continue;
		v.is_cleaned_up = !is_live;
		v.is_tagged = false;
		l->items[w++] = v;
	}
	l->n = w;
	while (li < nlive)
		tail[ntail++] = live[li++].path;
	if (ntail) {
		/* room for the tail's rows and one arena per tail manifest */
		lv_version_info *items = lv__reallocarray(l->items, l->n + ntail, sizeof *items);
		if (items)
			l->items = items;
		lv_arena *arenas = items ? lv__reallocarray(l->arenas, l->narenas + ntail, sizeof *arenas) : NULL;
		if (!arenas) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
		l->arenas = arenas;
	}
	if ((rc = lv__read_into_list(l, ds->st, ds->threads, tail, ntail, err)) < 0)
		goto out;
	rep.manifests_read += ntail;
	rep.manifests_vanished += l->nvanished;
	lv__sort_infos(l->items, l->n);
	lv__mark_tags_with(ds, r1.refs, &r1.err[2], l->items, l->n, &rep);
done:
	warn_vanished(wl, l);
	if (history && (rc = history_gaps(ds, l, &r1.names, max_rejected, &rep, wl)) < 0) {
		rc = lv__err(err, rc, "out of memory");
		goto out;
	}
	lv__report_end(ds, &rep, &s0);
	if (report)
		*report = rep;
	*out = l;
	l = NULL;
	rc = 0;
out:
	lv_version_list_free(l);
	cp_file_dispose(&cp);
	free(live);
	free(tail);
	cp_names_free(&r1.names);
	lv_refs_free(r1.refs);
	return rc;
}

/*
 * A cleanup records the versions it removes in a checkpoint before it deletes
 * their manifests, and checkpoints are pruned only once newer ones exist.  So
 * when a pass finds a listed manifest or checkpoint gone, the versions it was
 * about to miss are in a checkpoint written meanwhile: history lists again
 * (taking "gone" as "skip it" lost them).  A checkpoint ahead of the listed
 * manifests is looked at again once (it may also mean another history).
 * versions() needs no retry: a vanished manifest is no longer live.
 */
#define RACE_RETRIES 8

static int assemble(lv_dataset *ds, bool history, lv_version_list **out, lv_history_report *report,
		    lv_error *err)
{
	lv_history_report rep;
	lv__warnlog wl = { 0 };
	for (int attempt = 0;; attempt++) {
		int races = 0;
		lv__warnlog_dispose(&wl); /* only the final attempt's warnings count */
		int rc = assemble_once(ds, history, out, &rep, &races, &wl, err);
		if (rc < 0) {
			lv__warnlog_dispose(&wl);
			return rc;
		}
		bool again = (races & RACE_VANISHED) || rep.manifests_vanished ||
			     ((races & RACE_AHEAD) && attempt == 0);
		if (!history || !again || attempt == RACE_RETRIES)
			break;
		lv_version_list_free(*out);
		*out = NULL;
	}
	rep.warnings = lv__warn_commit(ds, &wl);
	if (report)
		*report = rep;
	return 0;
}

int lv_versions(lv_version_list **out, lv_dataset *ds, lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_versions: NULL argument");
	*out = NULL;
	return assemble(ds, false, out, report, err);
}

int lv_history(lv_version_list **out, lv_dataset *ds, lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_history: NULL argument");
	*out = NULL;
	return assemble(ds, true, out, report, err);
}

/* ---- configuration ---- */

static int parse_cfg_bool(const char *key, const char *v, int *out, lv_error *err)
{
	if (!strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = 0;
	else
		return lv__err(err, LV_EINVALID, "dataset config %s = '%s': expected true or false", key, v);
	return 0;
}

static int parse_cfg_pos(const char *key, const char *v, int64_t *out, lv_error *err)
{
	uint64_t x;
	if (!lv_parse_u64(v, strlen(v), &x) || x == 0 || x > INT64_MAX)
		return lv__err(err, LV_EINVALID, "dataset config %s = '%s': expected a positive integer",
			       key, v);
	*out = (int64_t)x;
	return 0;
}

/* Resolves config from `in` and the config map of `latest` (may be NULL). */
static int resolve_config(lv_checkpoint_config *out, const lv_version_info *latest,
			  const lv_checkpoint_config *in, lv_error *err)
{
	lv_checkpoint_config c = { LV_CHECKPOINT_CONFIG_VERSION, 1, 10000, 2 };
	for (size_t i = 0; latest && i < latest->num_config; i++) {
		const char *k = latest->config_keys[i], *v = latest->config_values[i];
		if (!strcmp(k, LV_CONFIG_ENABLED))
			LV_TRY(parse_cfg_bool(k, v, &c.enabled, err));
		else if (!strcmp(k, LV_CONFIG_MAX_ENTRIES))
			LV_TRY(parse_cfg_pos(k, v, &c.max_entries, err));
		else if (!strcmp(k, LV_CONFIG_MAX_FILES))
			LV_TRY(parse_cfg_pos(k, v, &c.max_checkpoint_files, err));
	}
	if (in) {
		if (in->enabled < -1 || in->enabled > 1)
			return lv__err(err, LV_EINVALID, "checkpoint enabled must be 0 or 1");
		if (in->max_entries == 0 || in->max_entries < -1)
			return lv__err(err, LV_EINVALID, "max_entries must be a positive integer");
		if (in->max_checkpoint_files == 0 || in->max_checkpoint_files < -1)
			return lv__err(err, LV_EINVALID, "max_checkpoint_files must be a positive integer");
		if (in->enabled != -1)
			c.enabled = in->enabled;
		if (in->max_entries != -1)
			c.max_entries = in->max_entries;
		if (in->max_checkpoint_files != -1)
			c.max_checkpoint_files = in->max_checkpoint_files;
	}
	*out = c;
	return 0;
}

int lv_checkpoint_config_resolve(lv_checkpoint_config *out, lv_dataset *ds,
				 const lv_checkpoint_config *in, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_checkpoint_config_resolve: NULL argument");
	lv_manifest_entry *live = NULL;
	size_t n = 0;
	LV_TRY(lv__list_manifests(ds->st, &live, &n, err));
	lv_arena a;
	lv_arena_init(&a, 1024);
	lv_version_info info;
	int rc = 0;
	bool have = false;
	if (n) {
		rc = lv__read_version_info(ds->st, live[n - 1].path, &a, &info, err);
		have = rc == 0;
		if (rc == LV_ENOTFOUND)
			rc = 0;
	}
	if (rc == 0)
		rc = resolve_config(out, have ? &info : NULL, in, err);
	lv_arena_dispose(&a);
	free(live);
	return rc;
}

/* ---- writing ---- */

static bool in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Union of two sorted row sets: rows of `a` win for immutable fields, flags are OR-ed. */
static int merge_rows(const lv_version_info *a, size_t na, const lv_version_info *b, size_t nb,
		      lv_version_info **out, size_t *nout)
{
	lv_version_info *m = lv__calloc(na + nb, sizeof *m);
	if (!m)
		return LV_ENOMEM;
	size_t i = 0, j = 0, k = 0;
	while (i < na || j < nb) {
		if (j >= nb || (i < na && a[i].version < b[j].version))
			m[k++] = a[i++];
		else if (i >= na || b[j].version < a[i].version)
			m[k++] = b[j++];
		else {
			m[k] = a[i];
			m[k].is_cleaned_up = a[i].is_cleaned_up || b[j].is_cleaned_up;
			m[k].is_tagged = a[i].is_tagged || b[j].is_tagged;
			k++, i++, j++;
		}
	}
	*out = m;
	*nout = k;
	return 0;
}

/* ---- the merge lock ---- */

/*
 * Replacing a checkpoint (the merge in lv_checkpoint_write) is read, merge,
 * write: two writers doing it at once each wrote a merge of what they had
 * read, and the last one dropped the other's is_cleaned_up flags (a lost
 * update; seen on S3 by tests/interop/test_concurrency.mjs).  So it runs
 * under a lock: the object "<checkpoint>.lock", taken with create-if-absent
 * (atomic on every backend) and deleted afterwards.  Its text names the holder
 * ("<host> <pid> <ms>"); a lock whose holder died on this host, or older than
 * LOCK_LEASE_MS, is broken.  Readers never look at lock objects; prune_old
 * removes stale ones a killed writer left.
 */
#define LOCK_SUFFIX ".lock"
#define LOCK_LEASE_MS 30000
#define LOCK_WAIT_MS 120000

static void lock_holder(char *buf, size_t cap)
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) != 0 || !host[0] || strchr(host, ' '))
		snprintf(host, sizeof host, "-");
	snprintf(buf, cap, "%s %ld %" PRId64 "\n", host, (long)getpid(), lv_now_ms());
}

/* Is the lock text `b` stale at `now`: its holder is gone from this host, or its lease is over? */
static bool lock_stale(const lv_buf *b, int64_t now)
{
	char text[512], host[256], mine[300];
	size_t n = b->size < sizeof text - 1 ? b->size : sizeof text - 1;
	memcpy(text, b->ptr, n);
	text[n] = 0;
	long long pid, ms;
	if (sscanf(text, "%255s %lld %lld", host, &pid, &ms) != 3)
		return true; /* not ours: only complete lock texts are ever created */
	if (now - ms > LOCK_LEASE_MS)
		return true;
	lock_holder(mine, sizeof mine);
	size_t hl = strlen(host);
	bool same_host = !strncmp(mine, host, hl) && mine[hl] == ' ';
	return same_host && pid != (long long)getpid() && pid > 0 && kill((pid_t)pid, 0) != 0 &&
	       errno == ESRCH;
}

static int lock_take(lv_storage *st, const char *path, lv_error *err)
{
	int64_t start = lv_now_ms();
	for (unsigned spin = 0;; spin++) {
		char text[300];
		lock_holder(text, sizeof text);
		int rc = lv_storage_create(st, path, text, strlen(text), err);
		if (rc != LV_EEXISTS)
			return rc;
		lv_buf b = { 0 };
		lv_error e = { 0 };
		bool held = false;
		rc = lv_storage_read(st, path, &b, &e);
		if (rc == 0) {
			held = !lock_stale(&b, lv_now_ms());
			if (!held) /* its writer died: break it */
				rc = lv_storage_delete(st, path, &e);
		}
		lv_buf_dispose(&b);
		if (rc < 0 && rc != LV_ENOTFOUND) /* not found: released meanwhile */
			return lv__err(err, rc, "%s", e.message);
		if (lv_now_ms() - start > LOCK_WAIT_MS)
			return lv__err(err, LV_ECONFLICT, "%s: held by another writer for %d s; giving up",
				       path, LOCK_WAIT_MS / 1000);
		if (held) {
			struct timespec ts = { 0, (long)(spin < 10 ? 1 + spin : 20) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
}

/* Removes lock objects left in _checkpoints/ by killed writers. */
typedef struct lock_names {
	char **v;
	size_t n, cap;
	int rc;
} lock_names;

static int lock_list_cb(const lv_list_entry *e, void *payload)
{
	lock_names *l = payload;
	size_t n = strlen(e->path), sl = strlen(LOCK_SUFFIX);
	if (n <= sl || strcmp(e->path + n - sl, LOCK_SUFFIX))
		return 0;
	char **nv = lv__grow(l->v, &l->cap, l->n, sizeof *nv, 4);
	if (!nv || !(nv[l->n] = lv__strdup(e->path))) {
		if (nv)
			l->v = nv;
		l->rc = LV_ENOMEM;
		return 1;
	}
	l->v = nv;
	l->n++;
	return 0;
}

static void sweep_stale_locks(lv_storage *st)
{
	lock_names l = { 0 };
	lv_error e = { 0 };
	if (lv_storage_list(st, CP_DIR, false, lock_list_cb, &l, &e) >= 0) {
		for (size_t i = 0; i < l.n; i++) {
			lv_buf b = { 0 };
			if (lv_storage_read(st, l.v[i], &b, &e) == 0 && lock_stale(&b, lv_now_ms()) &&
			    lv_storage_delete(st, l.v[i], &e) < 0) {
				/* best effort: the next prune tries again */
			}
			lv_buf_dispose(&b);
		}
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
}

static int prune_old(lv_dataset *ds, int64_t keep, const char *written, uint64_t *pruned,
		     lv_error *err)
{
	cp_names names;
	LV_TRY(cp_list(ds->st, &names, err));
	sweep_stale_locks(ds->st);
	int rc = 0;
	for (size_t i = (size_t)keep; i < names.n; i++) {
		if (!strcmp(names.v[i].path, written))
			continue;
		rc = lv_storage_delete(ds->st, names.v[i].path, err);
		if (rc == LV_ENOTFOUND) /* a concurrent pruner got there first */
			rc = 0;
		if (rc < 0)
			break;
		(*pruned)++;
	}
	free(names.v);
	return rc;
}

int lv_checkpoint_write(lv_dataset *ds, const lv_checkpoint_config *cfg_in, const uint64_t *cleaned_in,
			size_t ncleaned, lv_checkpoint_result *res, lv_error *err)
{
	return lv__checkpoint_write_pre(ds, cfg_in, cleaned_in, ncleaned, NULL, 0, res, err);
}

/* The row of `pre` (sorted by version) for this version and manifest file, or NULL. */
static const lv_version_info *pre_row(const lv_version_info *const *pre, size_t npre,
				      uint64_t version, const char *path)
{
	size_t lo = 0, hi = npre;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pre[mid]->version < version)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < npre && pre[lo]->version == version && pre[lo]->manifest_path &&
	    !strcmp(pre[lo]->manifest_path, path))
		return pre[lo];
	return NULL;
}

int lv__checkpoint_write_pre(lv_dataset *ds, const lv_checkpoint_config *cfg_in,
			     const uint64_t *cleaned_in, size_t ncleaned,
			     const lv_version_info *const *pre, size_t npre, lv_checkpoint_result *res,
			     lv_error *err)
{
	if (!ds || (npre && !pre))
		return lv__err(err, LV_EINVALID, "lv_checkpoint_write: NULL argument");
	lv_checkpoint_result r;
	memset(&r, 0, sizeof r);
	lv_storage_stats s0;
	lv__report_begin(ds, &r.report, &s0);
	lv_manifest_entry *live = NULL;
	size_t nlive = 0;
	cp_file cp, existing;
	memset(&cp, 0, sizeof cp);
	memset(&existing, 0, sizeof existing);
	lv_version_list *fresh = NULL;
	const char **paths = NULL;
	uint64_t *cleaned = NULL;
	lv_version_info *rows = NULL, *merged = NULL;
	lv_buf file = { 0 }, old = { 0 };
	char lock[96] = "";
	int recreate = 0;
	char **props = NULL;
	size_t nrows = 0;
	int rc, attempt = 0, races;
	cp_names names = { 0 };
	lv__warnlog wl = { 0 };
	uint64_t max_rejected = 0;

again: /* see assemble(): a manifest or checkpoint that vanishes means "list again" */
	races = 0;
	if ((rc = lv__list_manifests(ds->st, &live, &nlive, err)) < 0)
		goto out;
	if (nlive == 0) {
		rc = lv__err(err, LV_ENOTFOUND, "%s: not a Lance dataset (no manifests in _versions/)",
			     lv_storage_describe(ds->st));
		goto out;
	}
	cp_names_free(&names);
	if ((rc = cp_list(ds->st, &names, err)) < 0)
		goto out;
	lv__warnlog_dispose(&wl); /* only the final attempt's warnings count */
	if ((rc = cp_load_ladder(ds, &names, live, nlive, true, &cp, &r.report, &races, &wl,
				 &max_rejected, err)) < 0)
		goto out;

	/* Live versions the previous checkpoint lacks are read now (concurrently). */
	if (!(paths = lv__calloc(nlive, sizeof *paths))) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	/* Room for every live version; pages of slots never written are never touched. */
	if (!(fresh = lv__version_list_new(nlive, nlive))) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	size_t nnew = 0;
	for (size_t i = 0; i < nlive; i++) {
		if (cp.rows && find_row(cp.rows, live[i].version))
			continue;
		/* A row the caller built from this very manifest file (its strings stay theirs). */
		const lv_version_info *p = pre_row(pre, npre, live[i].version, live[i].path);
		if (p)
			fresh->items[fresh->n++] = *p;
		else
			paths[nnew++] = live[i].path;
	}
	if ((rc = lv__read_into_list(fresh, ds->st, ds->threads, paths, nnew, err)) < 0)
		goto out;
	r.report.manifests_read += nnew;
	r.report.manifests_vanished += fresh->nvanished;
	if (fresh->nvanished || (races & RACE_VANISHED) || ((races & RACE_AHEAD) && attempt == 0)) {
		if (attempt++ < RACE_RETRIES) {
			free(live);
			live = NULL;
			cp_file_dispose(&cp);
			free(paths);
			paths = NULL;
			lv_version_list_free(fresh);
			fresh = NULL;
			goto again;
		}
		if (fresh->nvanished || (races & RACE_VANISHED)) {
			/* A file written now could lack versions a cleanup just removed. */
			rc = lv__err(err, LV_ECONFLICT,
				     "checkpoint: manifests kept vanishing while being read (%d attempts; "
				     "concurrent cleanups?); nothing written",
				     attempt);
			goto out;
		}
	}
	lv__sort_infos(fresh->items, fresh->n);
	r.new_entries = fresh->n;

	/* Config: explicit > the latest manifest's config map > defaults. */
	const lv_version_info *latest_info = fresh->n ? &fresh->items[fresh->n - 1] : NULL;
	lv_checkpoint_config cfg;
	if (latest_info && latest_info->version != live[nlive - 1].version)
		latest_info = NULL;
	if (!latest_info) {
		if ((rc = lv_checkpoint_config_resolve(&cfg, ds, cfg_in, err)) < 0)
			goto out;
	} else if ((rc = resolve_config(&cfg, latest_info, cfg_in, err)) < 0) {
		goto out;
	}
	if (!cfg.enabled) {
		r.written = false;
		goto report;
	}

	if (ncleaned) {
		if (!(cleaned = lv__calloc(ncleaned, sizeof *cleaned))) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
		memcpy(cleaned, cleaned_in, ncleaned * sizeof *cleaned);
		qsort(cleaned, ncleaned, sizeof *cleaned, cmp_u64);
	}
	/* Merge: previous rows (flags refreshed) + new rows. */
	size_t nprev = cp.rows ? cp.rows->n : 0;
	if ((rc = merge_rows(cp.rows ? cp.rows->items : NULL, nprev, fresh->items, fresh->n, &rows,
			     &nrows)) < 0) {
		lv__err(err, rc, "out of memory");
		goto out;
	}
	if (nrows == 0) {
		rc = lv__err(err, LV_ENOTFOUND, "nothing to checkpoint: every manifest vanished");
		goto out;
	}
	if (!(props = lv__calloc(nrows, sizeof *props))) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nrows; i++) {
		lv_version_info *v = &rows[i];
		v->is_cleaned_up = v->is_cleaned_up || !entry_live(live, nlive, v->version) ||
				   in_sorted(cleaned, ncleaned, v->version);
		v->is_tagged = false;
		/* Checkpoint rows carry only the 15 columns. */
		v->has_manifest_details = false;
		if (!(props[i] = lv_properties_truncate(v->transaction_properties ? v->transaction_properties : "{}",
							LV_PROPERTIES_LIMIT))) {
			rc = lv__err(err, LV_ENOMEM, "out of memory");
			goto out;
		}
		v->transaction_properties = props[i];
	}
	lv__mark_tags(ds, rows, nrows, &r.report);
	int64_t created = cp.rows ? cp.created : rows[0].timestamp_millis;
	size_t first = nrows > (size_t)cfg.max_entries ? nrows - (size_t)cfg.max_entries : 0;
	const lv_version_info *keep = rows + first;
	size_t nkeep = nrows - first;
	if ((rc = encode(keep, nkeep, created, &file, err)) < 0)
		goto out;

	r.latest_version = keep[nkeep - 1].version;
	r.entries = nkeep;
	r.file_size = file.size;
	snprintf(r.path, sizeof r.path, CP_DIR "/%020" PRIu64 ".lance", r.latest_version);
create:
	rc = lv_storage_create(ds->st, r.path, file.ptr, file.size, err);
	if (rc == LV_EEXISTS) {
		/*
		 * Someone wrote this name first.  Identical bytes: idempotent
		 * success.  Otherwise keep theirs if it already says everything
		 * ours does; else merge both and replace it (atomically).  If it is
		 * gone by the time we read it (pruned: newer checkpoints exist),
		 * create ours again.
		 */
		if ((rc = lv_storage_read(ds->st, r.path, &old, err)) < 0) {
			if (rc == LV_ENOTFOUND && recreate++ < 4)
				goto create;
			goto out;
		}
		if (old.size == file.size && !memcmp(old.ptr, file.ptr, file.size)) {
			r.already_present = true;
			goto written;
		}
		/* Compare and replace under the merge lock, on what is there now. */
		snprintf(lock, sizeof lock, "%s" LOCK_SUFFIX, r.path);
		if ((rc = lock_take(ds->st, lock, err)) < 0) {
			lock[0] = 0;
			goto out;
		}
		lv_buf_dispose(&old);
		if ((rc = lv_storage_read(ds->st, r.path, &old, err)) < 0) {
			if (rc == LV_ENOTFOUND && recreate++ < 4) {
				lv_error e = { 0 };
				if (lv_storage_delete(ds->st, lock, &e) < 0) {
					/* left behind: broken once stale */
				}
				lock[0] = 0;
				goto create;
			}
			goto out;
		}
		if (old.size == file.size && !memcmp(old.ptr, file.ptr, file.size)) {
			r.already_present = true;
			goto written;
		}
		lv_error e2 = { 0 };
		bool covers = false;
		/*
		 * Theirs counts only if a reader would use it: it decodes, is named
		 * for what it covers and belongs to this history.  Otherwise (a file
		 * of another history, or corrupt) ours replaces it: keeping it, or
		 * merging its rows into ours, would leave a checkpoint every reader
		 * rejects (found by fuzz/checkpoint_fuzz.c).
		 */
		if (cp_decode(old.ptr, old.size, r.path, true, NULL, 0, &existing, &e2) == 0) {
			int vr = existing.latest == r.latest_version
					 ? cp_verify_identity(ds, &existing, live, nlive, NULL,
							      &r.report.identity_bytes, &e2)
					 : LV_ECONFLICT;
			if (vr == LV_ECONFLICT) {
				cp_file_dispose(&existing);
			} else if (vr < 0) {
				rc = lv__err(err, vr, "%s", e2.message);
				goto out;
			}
		}
		if (existing.rows && existing.created == created) {
			covers = true;
			for (size_t i = 0; i < nkeep && covers; i++) {
				const lv_version_info *o = find_row(existing.rows, keep[i].version);
				covers = o && (o->is_cleaned_up || !keep[i].is_cleaned_up);
			}
		}
		if (covers) {
			r.already_present = true;
			r.entries = existing.rows->n;
			r.file_size = old.size;
			goto written;
		}
		size_t nm = nkeep;
		if (existing.rows) {
			if ((rc = merge_rows(keep, nkeep, existing.rows->items, existing.rows->n, &merged, &nm)) < 0) {
				lv__err(err, rc, "out of memory");
				goto out;
			}
			first = nm > (size_t)cfg.max_entries ? nm - (size_t)cfg.max_entries : 0;
			lv_buf_dispose(&file);
			if ((rc = encode(merged + first, nm - first, created, &file, err)) < 0)
				goto out;
			r.entries = nm - first;
			r.file_size = file.size;
		}
		rc = lv_storage_write(ds->st, r.path, file.ptr, file.size, err);
	}
	if (rc < 0)
		goto out;
written:
	r.written = true;
	if ((rc = prune_old(ds, cfg.max_checkpoint_files, r.path, &r.files_pruned, err)) < 0)
		goto out;
report:
	lv__report_end(ds, &r.report, &s0);
	if (res)
		*res = r;
	rc = 0;
out:
	if (lock[0]) {
		lv_error e = { 0 };
		if (lv_storage_delete(ds->st, lock, &e) < 0) {
			/* left behind: broken once stale (prune_old sweeps those) */
		}
	}
	if (props)
		for (size_t i = 0; i < nrows; i++)
			free(props[i]);
	free(props);
	free(rows);
	free(merged);
	free(cleaned);
	free(paths);
	free(live);
	lv_buf_dispose(&file);
	lv_buf_dispose(&old);
	lv_version_list_free(fresh);
	cp_file_dispose(&cp);
	cp_file_dispose(&existing);
	cp_names_free(&names);
	if (rc == 0)
		r.report.warnings = lv__warn_commit(ds, &wl);
	lv__warnlog_dispose(&wl);
	if (rc == 0 && res)
		res->report.warnings = r.report.warnings;
	return rc;
}

/* ---- time travel ---- */

struct lv_timeline {
	const lv_version_list *list;
	lv_version_list *owned;
	int64_t *sufmin; /* sufmin[i] = min(ts[i..n-1]); non-decreasing in i */
	size_t n;
};

int lv_timeline_from_list(lv_timeline **out, const lv_version_list *list, lv_error *err)
{
	if (!out || !list)
		return lv__err(err, LV_EINVALID, "lv_timeline_from_list: NULL argument");
	lv_timeline *t = calloc(1, sizeof *t);
	if (!t || !(t->sufmin = lv__calloc(list->n, sizeof *t->sufmin))) {
		free(t);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	t->list = list;
	t->n = list->n;
	for (size_t i = list->n; i-- > 0;) {
		int64_t ts = list->items[i].timestamp_millis;
		t->sufmin[i] = i + 1 < list->n && t->sufmin[i + 1] < ts ? t->sufmin[i + 1] : ts;
	}
	*out = t;
	return 0;
}

int lv_timeline_load(lv_timeline **out, lv_dataset *ds, lv_history_report *report, lv_error *err)
{
	lv_version_list *l = NULL;
	LV_TRY(lv_history(&l, ds, report, err));
	int rc = lv_timeline_from_list(out, l, err);
	if (rc < 0) {
		lv_version_list_free(l);
		return rc;
	}
	(*out)->owned = l;
	return 0;
}

void lv_timeline_free(lv_timeline *t)
{
	if (!t)
		return;
	lv_version_list_free(t->owned);
	free(t->sufmin);
	free(t);
}

const lv_version_info *lv_timeline_as_of(const lv_timeline *t, int64_t ts, bool strict)
{
	if (!t || t->n == 0)
		return NULL;
	/*
	 * The answer is the largest i with ts[i] <= T (or < T).  sufmin is
	 * non-decreasing, and sufmin[i] <= T iff some j >= i qualifies, so the
	 * largest i with sufmin[i] <= T is exactly the answer: binary search.
	 */
	size_t lo = 0, hi = t->n; /* find first i with !(sufmin[i] qualifies) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool q = strict ? t->sufmin[mid] < ts : t->sufmin[mid] <= ts;
		if (q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &t->list->items[lo - 1];
}

int lv_version_as_of(lv_version_list **out, lv_dataset *ds, int64_t ts_ms, bool strict,
		     lv_history_report *report, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_version_as_of: NULL argument");
	*out = NULL;
	lv_timeline *t = NULL;
	LV_TRY(lv_timeline_load(&t, ds, report, err));
	const lv_version_info *v = lv_timeline_as_of(t, ts_ms, strict);
	/*
	 * A version with no record could have been committed in time for T: the
	 * answer is certain only if every unrecorded version is older than it.
	 */
	const lv_version_list *h = t->owned;
	if (h->ngaps && (!v || h->gaps[h->ngaps - 1][1] > v->version)) {
		lv__warnlog wl = { 0 };
		uint64_t first = h->gaps[0][0], last = h->gaps[h->ngaps - 1][1];
		for (size_t g = 0; v && g < h->ngaps && h->gaps[g][1] < v->version; g++)
			first = h->gaps[g + 1][0];
		char range[64];
		lv__format_range(range, sizeof range, first, last);
		lv__warn(&wl, LV_WARN_ANSWER_UNCERTAIN, NULL, first, last,
			 "as-of answer may be wrong: %s have no record, and any of them may have been "
			 "committed %s %" PRId64 " ms", range, strict ? "before" : "at or before", ts_ms);
		size_t added = lv__warn_commit(ds, &wl);
		if (report)
			report->warnings += added;
	}
	if (!v) {
		bool gaps = h->ngaps > 0;
		lv_timeline_free(t);
		return lv__err(err, LV_ENOTFOUND, "no version committed %s %" PRId64 " ms%s",
			       strict ? "before" : "at or before", ts_ms,
			       gaps ? " among the recorded versions (some versions have no record)" : "");
	}
	/* Hand back a one-item list sharing the history's arenas. */
	lv_version_list *l = t->owned;
	size_t idx = (size_t)(v - l->items);
	l->items[0] = l->items[idx];
	l->n = 1;
	t->owned = NULL;
	lv_timeline_free(t);
	*out = l;
	return 0;
}
