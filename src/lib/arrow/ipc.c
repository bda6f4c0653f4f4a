/*
 * lv_arrow_ipc_write: an ArrowArrayStream written as an Arrow IPC stream.
 *
 * Written from the Arrow columnar format spec ("Serialization and
 * Interprocess Communication"): each message is the continuation marker
 * 0xFFFFFFFF, an int32 metadata length, a flatbuffer `Message` (Message.fbs)
 * padded to 8 bytes, then the body; the stream is a Schema message, one
 * RecordBatch message per batch and the end-of-stream marker (0xFFFFFFFF, 0).
 * A RecordBatch lists one FieldNode (length, null count) per column and its
 * buffers (offset into the body, length): validity, then values (Boolean,
 * integers and timestamps, which are int64) or offsets and data (Utf8).
 *
 * Invariants: the stream is released on every path; body buffers start at
 * multiples of 8 and are zero-padded; a column with no nulls gets an empty
 * validity buffer; slices (non-zero offsets, the parent's included) are
 * normalised, so every buffer written starts at element 0 and Utf8 offsets
 * start at 0.  Nothing from the producer is trusted beyond the C Data spec's
 * contract, and lengths and offsets are checked before they are used.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arrow/arrow_internal.h"
#include "arrow/flatbuf.h"
#include "util/util.h"

/* Message.fbs / Schema.fbs enumerations and field ids used below. */
enum { MD_V5 = 4 };
enum { HDR_SCHEMA = 1, HDR_RECORD_BATCH = 3 };
enum { TYPE_INT = 2, TYPE_UTF8 = 5, TYPE_BOOL = 6, TYPE_TIMESTAMP = 10 };

typedef struct ipc_col {
	const char *name;
	int type;      /* TYPE_* */
	int bits;      /* Int: 8, 16, 32, 64; Timestamp: 64 */
	int unit;      /* Timestamp: TimeUnit (0 s, 1 ms, 2 us, 3 ns) */
	const char *tz; /* Timestamp: its time zone, borrowed from the schema ("" = none) */
	bool is_signed, nullable;
} ipc_col;

typedef struct ipc_buf {
	const void *p;
	size_t n;
	void *owned; /* a normalised copy, freed after writing */
} ipc_buf;

typedef struct ipc {
	lv_arrow_write_fn write;
	void *payload;
	lv_error *err;
	ipc_col *cols;
	size_t ncols;
} ipc;

static int out(ipc *w, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	int rc = w->write(p, n, w->payload);
	return rc < 0 ? lv__err(w->err, rc, "arrow ipc: writing %zu bytes failed", n) : 0;
}

static int zeros(ipc *w, size_t n)
{
	static const uint8_t z[64];
	return out(w, z, n);
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Writes one encapsulated message: marker, length, the flatbuffer of a V5 Message with this
 * header (type and table) and body length, padding (the body follows). */
static int write_message(ipc *w, lv__fb *fb, uint8_t header_type, lv__fb_ref header, int64_t body_length)
{
	lv__fb_table_start(fb);
	lv__fb_add_i16(fb, 0, MD_V5);
	lv__fb_add_u8(fb, 1, header_type);
	lv__fb_add_ref(fb, 2, header);
	lv__fb_add_i64(fb, 3, body_length);
	lv__fb_ref root = lv__fb_table_end(fb);
	const uint8_t *data;
	size_t size;
	if (lv__fb_finish(fb, root, &data, &size) < 0)
		return lv__err(w->err, LV_ENOMEM, "arrow ipc: out of memory");
	if (size > INT32_MAX - 8)
		return lv__err(w->err, LV_ELIMIT, "arrow ipc: message metadata too large");
	uint8_t head[8];
	uint32_t cont = 0xFFFFFFFFu, len = (uint32_t)pad8(size);
	for (int i = 0; i < 4; i++) {
		head[i] = (uint8_t)(cont >> (8 * i));
		head[4 + i] = (uint8_t)(len >> (8 * i));
	}
	LV_TRY(out(w, head, 8));
	LV_TRY(out(w, data, size));
	return zeros(w, len - size);
}

/* ---- schema ---- */

static int parse_format(ipc_col *c, const struct ArrowSchema *s, lv_error *err)
{
	static const struct { const char *f; int bits; bool sgn; } ints[] = {
		{ "c", 8, true },   { "C", 8, false },  { "s", 16, true }, { "S", 16, false },
		{ "i", 32, true },  { "I", 32, false }, { "l", 64, true }, { "L", 64, false },
	};
	c->name = s->name ? s->name : "";
	c->nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
	if (s->n_children || s->dictionary || !s->format)
		goto unsupported;
	if (!strcmp(s->format, "b")) {
		c->type = TYPE_BOOL;
		return 0;
	}
	if (!strcmp(s->format, "u")) {
		c->type = TYPE_UTF8;
		return 0;
	}
	/* "ts" + unit + ":" + time zone (possibly empty): the C Data Interface's timestamps */
	const char *units = "smun", *u = s->format[0] == 't' && s->format[1] == 's' && s->format[2] ?
						strchr(units, s->format[2]) : NULL;
	if (u && s->format[3] == ':') {
		*c = (ipc_col){ .name = c->name, .nullable = c->nullable, .type = TYPE_TIMESTAMP,
				.bits = 64, .unit = (int)(u - units), .tz = s->format + 4 };
		return 0;
	}
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (!strcmp(s->format, ints[i].f)) {
			c->type = TYPE_INT;
			c->bits = ints[i].bits;
			c->is_signed = ints[i].sgn;
			return 0;
		}
unsupported:
	return lv__err(err, LV_EUNSUPPORTED, "arrow ipc: column '%s' has type '%s', not supported",
		       c->name, s->format ? s->format : "?");
}

/* KeyValue tables of a C Data metadata blob; returns the vector (0 = none). */
static lv__fb_ref metadata_vector(lv__fb *fb, const char *md, int *rc, lv_error *err)
{
	int32_t n, l[2];
	if (!md)
		return 0;
	memcpy(&n, md, 4);
	if (n < 0 || n > 4096) {
		*rc = lv__err(err, LV_ELIMIT, "arrow ipc: %" PRId32 " schema metadata entries", n);
		return 0;
	}
	lv__fb_ref kv[4096];
	const char *p = md + 4;
	for (int32_t i = 0; i < n; i++) {
		lv__fb_ref s[2];
		for (int k = 0; k < 2; k++) {
			memcpy(&l[k], p, 4);
			if (l[k] < 0) {
				*rc = lv__err(err, LV_ECORRUPT, "arrow ipc: negative metadata length");
				return 0;
			}
			s[k] = lv__fb_string(fb, p + 4, (size_t)l[k]);
			p += 4 + l[k];
		}
		lv__fb_table_start(fb);
		lv__fb_add_ref(fb, 0, s[0]);
		lv__fb_add_ref(fb, 1, s[1]);
		kv[i] = lv__fb_table_end(fb);
	}
	return lv__fb_ref_vector(fb, kv, (size_t)n);
}

static lv__fb_ref field_table(lv__fb *fb, const ipc_col *c)
{
	lv__fb_ref name = lv__fb_string(fb, c->name, strlen(c->name));
	lv__fb_ref tz = c->type == TYPE_TIMESTAMP && *c->tz ? lv__fb_string(fb, c->tz, strlen(c->tz)) : 0;
	lv__fb_table_start(fb);
	if (c->type == TYPE_INT) {
		lv__fb_add_i32(fb, 0, c->bits);
		lv__fb_add_u8(fb, 1, c->is_signed);
	}
	if (c->type == TYPE_TIMESTAMP) { /* Timestamp { unit: TimeUnit (short), timezone } */
		lv__fb_add_i16(fb, 0, (int16_t)c->unit);
		if (tz)
			lv__fb_add_ref(fb, 1, tz);
	}
	lv__fb_ref type = lv__fb_table_end(fb);
	lv__fb_ref children = lv__fb_ref_vector(fb, NULL, 0);
	lv__fb_table_start(fb);
	lv__fb_add_ref(fb, 0, name);
	lv__fb_add_u8(fb, 1, c->nullable);
	lv__fb_add_u8(fb, 2, (uint8_t)c->type);
	lv__fb_add_ref(fb, 3, type);
	lv__fb_add_ref(fb, 5, children);
	return lv__fb_table_end(fb);
}

static int write_schema(ipc *w, const struct ArrowSchema *s)
{
	lv__fb fb;
	lv__fb_init(&fb);
	int rc = 0;
	lv__fb_ref *fields = lv__arrow_alloc(w->ncols * sizeof *fields);
	if (!fields)
		return lv__err(w->err, LV_ENOMEM, "arrow ipc: out of memory");
	for (size_t i = 0; i < w->ncols; i++)
		fields[i] = field_table(&fb, &w->cols[i]);
	lv__fb_ref fv = lv__fb_ref_vector(&fb, fields, w->ncols);
	lv__fb_ref md = metadata_vector(&fb, s->metadata, &rc, w->err);
	lv__arrow_free(fields);
	if (rc < 0) {
		lv__fb_dispose(&fb);
		return rc;
	}
	lv__fb_table_start(&fb);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	lv__fb_add_i16(&fb, 0, 1); /* Endianness.Big: buffers are in host order */
#endif
	lv__fb_add_ref(&fb, 1, fv);
	if (md)
		lv__fb_add_ref(&fb, 2, md);
	rc = write_message(w, &fb, HDR_SCHEMA, lv__fb_table_end(&fb), 0);
	lv__fb_dispose(&fb);
	return rc;
}

/* ---- record batches ---- */

static bool bit(const uint8_t *bits, int64_t i)
{
	return (bits[i / 8] >> (i % 8)) & 1;
}

/* Bits [off, off + len) of `bits` as a buffer starting at bit 0 (a slice when aligned). */
static int bits_buffer(ipc_buf *b, const uint8_t *bits, int64_t off, int64_t len)
{
	size_t n = (size_t)(len + 7) / 8;
	if (off % 8 == 0) {
		*b = (ipc_buf){ bits + off / 8, n, NULL };
		return 0;
	}
	uint8_t *c = lv__arrow_alloc(n);
	if (!c)
		return LV_ENOMEM;
	for (int64_t i = 0; i < len; i++)
		if (bit(bits, off + i))
			c[i / 8] |= (uint8_t)(1u << (i % 8));
	*b = (ipc_buf){ c, n, c };
	return 0;
}

/* Utf8 offsets and data of elements [off, off + len), offsets rebased to start at 0. */
static int utf8_buffers(ipc_buf b[2], const struct ArrowArray *a, int64_t off, int64_t len,
			lv_error *err)
{
	const int32_t *o = a->buffers[1];
	const uint8_t *data = a->buffers[2];
	if (!o || (!data && o[off + len] != o[off]) || o[off] < 0 || o[off + len] < o[off])
		return lv__err(err, LV_ECORRUPT, "arrow ipc: bad Utf8 offsets");
	int32_t base = o[off];
	size_t n = 4 * (size_t)(len + 1);
	if (base == 0) {
		b[0] = (ipc_buf){ o + off, n, NULL };
	} else {
		int32_t *c = lv__arrow_alloc(n);
		if (!c)
			return lv__err(err, LV_ENOMEM, "arrow ipc: out of memory");
		for (int64_t i = 0; i <= len; i++)
			c[i] = o[off + i] - base;
		b[0] = (ipc_buf){ c, n, c };
	}
	b[1] = (ipc_buf){ data ? data + base : NULL, (size_t)(o[off + len] - base), NULL };
	return 0;
}

static int nomem(ipc *w)
{
	return lv__err(w->err, LV_ENOMEM, "arrow ipc: out of memory");
}

/* The buffers of one column over [off, off + len) of its array; *nulls gets the null count. */
static int column_buffers(ipc *w, const ipc_col *c, const struct ArrowArray *a, int64_t off,
			  int64_t len, ipc_buf b[3], int64_t *nulls)
{
	static const int32_t zero_offset = 0;
	int want = c->type == TYPE_UTF8 ? 3 : 2;
	*nulls = 0;
	if (a->n_buffers != want || !a->buffers || a->offset < 0 || a->length < off + len)
		return lv__err(w->err, LV_ECORRUPT, "arrow ipc: column '%s': bad array layout", c->name);
	if (len == 0) { /* empty buffers; Utf8 still has its one offset */
		if (c->type == TYPE_UTF8)
			b[1] = (ipc_buf){ &zero_offset, 4, NULL };
		return 0;
	}
	int64_t start = a->offset + off;
	const uint8_t *validity = a->buffers[0];
	if (validity && a->null_count != 0)
		for (int64_t i = 0; i < len; i++)
			*nulls += !bit(validity, start + i);
	if (*nulls && bits_buffer(&b[0], validity, start, len) < 0)
		return nomem(w);
	if (c->type == TYPE_UTF8)
		return utf8_buffers(&b[1], a, start, len, w->err);
	if (!a->buffers[1])
		return lv__err(w->err, LV_ECORRUPT, "arrow ipc: column '%s': no values", c->name);
	if (c->type == TYPE_BOOL)
		return bits_buffer(&b[1], a->buffers[1], start, len) < 0 ? nomem(w) : 0;
	size_t width = (size_t)c->bits / 8;
	b[1] = (ipc_buf){ (const uint8_t *)a->buffers[1] + (size_t)start * width,
			  (size_t)len * width, NULL };
	return 0;
}

/* Little-endian (int64, int64) pairs: FieldNode{length, null_count}, Buffer{offset, length}. */
static void put_pair(uint8_t *p, int64_t x, int64_t y)
{
	lv__put_le64(p, (uint64_t)x);
	lv__put_le64(p + 8, (uint64_t)y);
}

static int write_batch_message(ipc *w, int64_t length, const int64_t *nulls, const ipc_buf *bufs,
			       size_t nbufs, size_t body)
{
	uint8_t *nodes = lv__arrow_alloc(16 * w->ncols), *bl = lv__arrow_alloc(16 * nbufs);
	int rc = 0;
	if (!nodes || !bl) {
		rc = lv__err(w->err, LV_ENOMEM, "arrow ipc: out of memory");
		goto done;
	}
	size_t at = 0;
	for (size_t i = 0; i < w->ncols; i++)
		put_pair(nodes + 16 * i, length, nulls[i]);
	for (size_t i = 0; i < nbufs; i++) {
		put_pair(bl + 16 * i, (int64_t)at, (int64_t)bufs[i].n);
		at += pad8(bufs[i].n);
	}
	lv__fb fb;
	lv__fb_init(&fb);
	lv__fb_ref nv = lv__fb_struct_vector(&fb, nodes, w->ncols, 16, 8);
	lv__fb_ref bv = lv__fb_struct_vector(&fb, bl, nbufs, 16, 8);
	lv__fb_table_start(&fb);
	lv__fb_add_i64(&fb, 0, length);
	lv__fb_add_ref(&fb, 1, nv);
	lv__fb_add_ref(&fb, 2, bv);
	rc = write_message(w, &fb, HDR_RECORD_BATCH, lv__fb_table_end(&fb), (int64_t)body);
	lv__fb_dispose(&fb);
done:
	lv__arrow_free(nodes);
	lv__arrow_free(bl);
	return rc;
}

static int write_batch(ipc *w, const struct ArrowArray *batch)
{
	if (batch->n_children != (int64_t)w->ncols || batch->length < 0 || batch->offset < 0 ||
	    batch->null_count > 0)
		return lv__err(w->err, LV_ECORRUPT, "arrow ipc: record batch does not match the schema");
	size_t nb = 0, body = 0;
	ipc_buf *bufs = lv__arrow_alloc(3 * w->ncols * sizeof *bufs);
	int64_t *nulls = lv__arrow_alloc(w->ncols * sizeof *nulls);
	int rc = bufs && nulls ? 0 : lv__err(w->err, LV_ENOMEM, "arrow ipc: out of memory");
	for (size_t i = 0; rc == 0 && i < w->ncols; i++) {
		ipc_buf b[3] = { { 0 } };
		const struct ArrowArray *a = batch->children[i];
		rc = a ? column_buffers(w, &w->cols[i], a, batch->offset, batch->length, b, &nulls[i])
		       : lv__err(w->err, LV_ECORRUPT, "arrow ipc: missing child array");
		int k = w->cols[i].type == TYPE_UTF8 ? 3 : 2;
		for (int j = 0; j < k; j++) {
			bufs[nb++] = b[j];
			body += pad8(b[j].n);
		}
	}
	if (rc == 0)
		rc = write_batch_message(w, batch->length, nulls, bufs, nb, body);
	for (size_t i = 0; rc == 0 && i < nb; i++) {
		rc = out(w, bufs[i].p, bufs[i].n);
		if (rc == 0)
			rc = zeros(w, pad8(bufs[i].n) - bufs[i].n);
	}
	for (size_t i = 0; bufs && i < nb; i++)
		lv__arrow_free(bufs[i].owned);
	lv__arrow_free(bufs);
	lv__arrow_free(nulls);
	return rc;
}

/* ---- the stream ---- */

static int stream_error(ipc *w, struct ArrowArrayStream *st, int code, const char *what)
{
	const char *m = st->get_last_error ? st->get_last_error(st) : NULL;
	return lv__err(w->err, code == ENOMEM ? LV_ENOMEM : LV_EIO, "arrow ipc: %s failed: %s", what,
		       m ? m : strerror(code));
}

static int write_all(ipc *w, struct ArrowArrayStream *st, struct ArrowSchema *schema)
{
	int rc = st->get_schema(st, schema);
	if (rc)
		return stream_error(w, st, rc, "get_schema");
	if (!schema->format || strcmp(schema->format, "+s") || schema->n_children < 0 ||
	    (schema->n_children && !schema->children))
		return lv__err(w->err, LV_EUNSUPPORTED, "arrow ipc: the stream's schema is not a struct");
	w->ncols = (size_t)schema->n_children;
	w->cols = lv__arrow_alloc(w->ncols * sizeof *w->cols);
	if (!w->cols)
		return lv__err(w->err, LV_ENOMEM, "arrow ipc: out of memory");
	for (size_t i = 0; i < w->ncols; i++)
		LV_TRY(parse_format(&w->cols[i], schema->children[i], w->err));
	LV_TRY(write_schema(w, schema));
	for (;;) {
		struct ArrowArray batch = { 0 };
		rc = st->get_next(st, &batch);
		if (rc)
			return stream_error(w, st, rc, "get_next");
		if (!batch.release)
			break;
		rc = write_batch(w, &batch);
		batch.release(&batch);
		LV_TRY(rc);
	}
	static const uint8_t eos[8] = { 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0 };
	return out(w, eos, sizeof eos);
}

int lv_arrow_ipc_write(struct ArrowArrayStream *stream, lv_arrow_write_fn write, void *payload,
		       lv_error *err)
{
	if (!stream || !stream->release)
		return lv__err(err, LV_EINVALID, "arrow ipc: no stream");
	ipc w = { .write = write, .payload = payload, .err = err };
	struct ArrowSchema schema = { 0 };
	int rc = write ? write_all(&w, stream, &schema)
		       : lv__err(err, LV_EINVALID, "arrow ipc: no write callback");
	if (schema.release)
		schema.release(&schema);
	lv__arrow_free(w.cols);
	stream->release(stream);
	return rc;
}
