/*
 * lv_arrow_ipc_write (Arrow IPC streaming format).  The bytes are decoded by a
 * small reader written here from the Arrow IPC spec and the FlatBuffers binary
 * format (independent of src/lib/arrow/flatbuf.c), and every field, type,
 * null and cell is compared with the version list; framing rules (continuation
 * markers, 8-byte metadata and body alignment, buffer offsets, end-of-stream)
 * are checked on every message.  Slices (non-zero offsets, unaligned bits,
 * Utf8 offsets not starting at 0), empty batches, unsupported types, failing
 * producers and writers, and failed allocations go through a producer written
 * here.  The independent check of the format is the interop test
 * (tests/interop/test_arrow_ipc.mjs, apache-arrow's tableFromIPC).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <lancever/lancever.h>
#include <lancever/arrow.h>
#include <lancever/sys/arrow.h>

#include "support/arrowds.h"
#include "support/testutil.h"

#define CHECK(expr) TU_CHECK(err, expr)

static lv_error err;

/* ---- a growable output buffer ---- */

typedef struct sink {
	uint8_t *p;
	size_t n, cap;
	int fail_at, calls; /* fail_at: the call number that fails (0 = never) */
} sink;

static int sink_write(const void *data, size_t size, void *payload)
{
	sink *s = payload;
	if (++s->calls == s->fail_at)
		return LV_EIO;
	if (s->n + size > s->cap) {
		s->cap = (s->n + size) * 2;
		s->p = realloc(s->p, s->cap);
		assert_non_null(s->p);
	}
	memcpy(s->p + s->n, data, size);
	s->n += size;
	return 0;
}

/* ---- the reader ---- */

static uint32_t u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static int64_t i64(const uint8_t *p) { return (int64_t)(u32(p) | (uint64_t)u32(p + 4) << 32); }

/* Field `id` of the table at t, or NULL when absent (FlatBuffers vtable lookup). */
static const uint8_t *fb_field(const uint8_t *t, int id)
{
	const uint8_t *vt = t - (int32_t)u32(t);
	uint16_t vsize = u16(vt);
	if (4 + 2 * id + 2 > vsize)
		return NULL;
	uint16_t off = u16(vt + 4 + 2 * id);
	return off ? t + off : NULL;
}

static const uint8_t *fb_ref(const uint8_t *t, int id)
{
	const uint8_t *f = fb_field(t, id);
	return f ? f + u32(f) : NULL;
}

typedef struct rfield {
	char name[64];
	bool nullable;
	int type, bits, is_signed; /* type: 2 Int, 5 Utf8, 6 Bool, 10 Timestamp */
	int unit;                  /* Timestamp: TimeUnit (1 = MILLISECOND) */
	char tz[16];               /* Timestamp: its time zone ("" = none) */
} rfield;

typedef struct rbatch {
	int64_t length;
	int64_t node_len[32], node_nulls[32];
	int64_t buf_off[96], buf_len[96];
	int nnodes, nbufs;
	const uint8_t *body;
} rbatch;

typedef struct rstream {
	rfield f[32];
	int nf;
	char md[8][2][64];
	int nmd;
	rbatch b[64];
	int nb;
} rstream;

static void fb_str(char *dst, size_t cap, const uint8_t *s)
{
	size_t n = u32(s);
	assert_true(n < cap);
	memcpy(dst, s + 4, n);
	dst[n] = 0;
	assert_int_equal(s[4 + n], 0);
}

static void read_schema(rstream *r, const uint8_t *schema)
{
	const uint8_t *fields = fb_ref(schema, 1);
	assert_non_null(fields);
	r->nf = (int)u32(fields);
	assert_true(r->nf <= 32);
	for (int i = 0; i < r->nf; i++) {
		const uint8_t *e = fields + 4 + 4 * i, *f = e + u32(e);
		rfield *x = &r->f[i];
		fb_str(x->name, sizeof x->name, fb_ref(f, 0));
		x->nullable = fb_field(f, 1) && *fb_field(f, 1);
		assert_non_null(fb_field(f, 2));
		x->type = *fb_field(f, 2);
		const uint8_t *t = fb_ref(f, 3), *kids = fb_ref(f, 5);
		assert_non_null(t);
		assert_non_null(kids); /* Arrow C++ requires the children vector */
		assert_int_equal(u32(kids), 0);
		if (x->type == 2) {
			x->bits = (int)u32(fb_field(t, 0));
			x->is_signed = fb_field(t, 1) && *fb_field(t, 1);
		}
		if (x->type == 10) { /* Timestamp { unit: short, timezone: string }: int64 cells */
			x->bits = 64;
			x->is_signed = 1;
			x->unit = fb_field(t, 0) ? u16(fb_field(t, 0)) : 0;
			if (fb_ref(t, 1))
				fb_str(x->tz, sizeof x->tz, fb_ref(t, 1));
		}
	}
	const uint8_t *md = fb_ref(schema, 2);
	r->nmd = md ? (int)u32(md) : 0;
	for (int i = 0; i < r->nmd; i++) {
		const uint8_t *e = md + 4 + 4 * i, *kv = e + u32(e);
		fb_str(r->md[i][0], 64, fb_ref(kv, 0));
		fb_str(r->md[i][1], 64, fb_ref(kv, 1));
	}
}

static void read_batch(rbatch *b, const uint8_t *rb, const uint8_t *body, int64_t body_len)
{
	b->length = i64(fb_field(rb, 0));
	const uint8_t *nodes = fb_ref(rb, 1), *bufs = fb_ref(rb, 2);
	assert_non_null(nodes);
	assert_non_null(bufs);
	b->nnodes = (int)u32(nodes);
	b->nbufs = (int)u32(bufs);
	assert_int_equal((uintptr_t)(nodes + 4) % 8, 0); /* structs of int64 are 8-aligned */
	for (int i = 0; i < b->nnodes; i++) {
		b->node_len[i] = i64(nodes + 4 + 16 * i);
		b->node_nulls[i] = i64(nodes + 12 + 16 * i);
	}
	int64_t at = 0;
	for (int i = 0; i < b->nbufs; i++) {
		b->buf_off[i] = i64(bufs + 4 + 16 * i);
		b->buf_len[i] = i64(bufs + 12 + 16 * i);
		assert_int_equal(b->buf_off[i] % 8, 0);
		assert_int_equal(b->buf_off[i], at);
		at += (b->buf_len[i] + 7) / 8 * 8;
	}
	assert_int_equal(at, body_len);
	b->body = body;
}

/* Decodes a whole IPC stream (the buffer must be 8-aligned, as malloc's is). */
static void read_stream(rstream *r, const uint8_t *p, size_t n)
{
	memset(r, 0, sizeof *r);
	size_t at = 0;
	bool schema_seen = false;
	for (;;) {
		assert_true(at + 8 <= n);
		assert_int_equal(u32(p + at), 0xFFFFFFFFu);
		uint32_t len = u32(p + at + 4);
		if (len == 0) {
			assert_int_equal(at + 8, n); /* end-of-stream is the last thing */
			break;
		}
		assert_int_equal(len % 8, 0);
		const uint8_t *fb = p + at + 8, *msg = fb + u32(fb);
		assert_int_equal(u16(fb_field(msg, 0)), 4); /* MetadataVersion V5 */
		int type = *fb_field(msg, 1);
		int64_t body_len = i64(fb_field(msg, 3));
		assert_int_equal(body_len % 8, 0);
		const uint8_t *body = fb + len;
		assert_true(at + 8 + len + (size_t)body_len <= n);
		if (type == 1) {
			assert_false(schema_seen);
			schema_seen = true;
			assert_int_equal(body_len, 0);
			read_schema(r, fb_ref(msg, 2));
		} else {
			assert_int_equal(type, 3);
			assert_true(schema_seen && r->nb < 64);
			read_batch(&r->b[r->nb++], fb_ref(msg, 2), body, body_len);
		}
		at += 8 + len + (size_t)body_len;
	}
	assert_true(schema_seen);
}

static const uint8_t *rbuf(const rbatch *b, int i)
{
	return b->body + b->buf_off[i];
}

/* Checks cell k of column c of batch b (buffers starting at `bi`) against e. */
static void check_cell(const rbatch *b, const rfield *f, int bi, int64_t k, ads_cell e)
{
	const uint8_t *validity = b->buf_len[bi] ? rbuf(b, bi) : NULL;
	bool valid = !validity || ((validity[k / 8] >> (k % 8)) & 1);
	if (e.null) {
		assert_false(valid);
		return;
	}
	assert_true(valid);
	const uint8_t *v = rbuf(b, bi + 1);
	if (f->type == 6) {
		assert_int_equal((v[k / 8] >> (k % 8)) & 1, e.b);
	} else if (f->type == 5) {
		int32_t o0 = (int32_t)u32(v + 4 * k), o1 = (int32_t)u32(v + 4 * k + 4);
		assert_int_equal((size_t)(o1 - o0), strlen(e.s));
		assert_memory_equal(rbuf(b, bi + 2) + o0, e.s, strlen(e.s));
	} else if (f->bits == 64) {
		assert_int_equal((uint64_t)i64(v + 8 * k), f->is_signed ? (uint64_t)e.i : e.u);
	} else {
		int w = f->bits / 8;
		uint64_t x = 0;
		for (int j = 0; j < w; j++)
			x |= (uint64_t)v[w * k + j] << (8 * j);
		assert_int_equal(x, e.u);
	}
}

/* ---- tests ---- */

static void test_history_roundtrip(void **state)
{
	(void)state;
	ads_fixture fx = ads_open();
	lv_arrow_options o = { LV_ARROW_OPTIONS_VERSION, 4, 0 };
	struct ArrowArrayStream s;
	CHECK(lv_history_arrow_stream(&s, fx.ds, &o, NULL, &err));
	sink out = { 0 };
	CHECK(lv_arrow_ipc_write(&s, sink_write, &out, &err));
	assert_null(s.release);
	assert_int_equal(lv_arrow_live_objects(), 0);
	static rstream r;
	read_stream(&r, out.p, out.n);
	assert_int_equal(r.nf, LV_ARROW_VERSION_COLUMNS);
	for (int c = 0; c < r.nf; c++) {
		const ads_column *e = &ads_columns[c];
		assert_string_equal(r.f[c].name, e->name);
		assert_int_equal(r.f[c].nullable, e->nullable);
		int want = e->format[0] == 'u' ? 5 : e->format[0] == 'b' ? 6 : e->format[0] == 't' ? 10 : 2;
		assert_int_equal(r.f[c].type, want);
		if (want == 2) {
			assert_int_equal(r.f[c].bits, 64);
			assert_int_equal(r.f[c].is_signed, e->format[0] == 'l');
		}
		if (want == 10) { /* "tsm:UTC": timestamp[ms, tz=UTC] */
			assert_int_equal(r.f[c].unit, 1);
			assert_string_equal(r.f[c].tz, "UTC");
		}
	}
	assert_int_equal(r.nmd, 2);
	assert_string_equal(r.md[0][0], "lancever:kind");
	assert_string_equal(r.md[0][1], "history");
	assert_string_equal(r.md[1][1], "[[13,13]]");
	assert_int_equal(r.nb, 4);
	size_t row = 0;
	for (int i = 0; i < r.nb; i++) {
		const rbatch *b = &r.b[i];
		assert_int_equal(b->nnodes, r.nf);
		int bi = 0;
		for (int c = 0; c < r.nf; c++) {
			assert_int_equal(b->node_len[c], b->length);
			int64_t nulls = 0;
			for (int64_t k = 0; k < b->length; k++) {
				ads_cell e = ads_expect(lv_version_list_get(fx.l, row + (size_t)k), (size_t)c);
				nulls += e.null;
				check_cell(b, &r.f[c], bi, k, e);
			}
			assert_int_equal(b->node_nulls[c], nulls);
			if (!nulls)
				assert_int_equal(b->buf_len[bi], 0);
			bi += r.f[c].type == 5 ? 3 : 2;
		}
		assert_int_equal(bi, b->nbufs);
		row += (size_t)b->length;
	}
	assert_int_equal(row, lv_version_list_count(fx.l));
	free(out.p);
	ads_close(&fx);
}

/* ---- a producer written here: slices, nulls, narrow ints, failures on demand ---- */

typedef struct prod {
	const char *formats[4];
	int fail_next; /* get_next returns this errno (0 = no) */
	int batches, released;
} prod;

static const char *const NAMES[4] = { "u64", "flag", "text", "i32" };
static struct ArrowSchema kid_s[4], *kid_sp[4];

static void noop_schema(struct ArrowSchema *s) { s->release = NULL; }
static void noop_array(struct ArrowArray *a) { a->release = NULL; }

static int p_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
	prod *p = st->private_data;
	for (int i = 0; i < 4; i++) {
		kid_s[i] = (struct ArrowSchema){ .format = p->formats[i], .name = NAMES[i],
						 .flags = ARROW_FLAG_NULLABLE, .release = noop_schema };
		kid_sp[i] = &kid_s[i];
	}
	*out = (struct ArrowSchema){ .format = "+s", .n_children = 4, .children = kid_sp,
				     .release = noop_schema };
	return 0;
}

/* 16 logical rows; the batch is rows [2, 2 + 9) of it (parent offset 2), and every child
 * array has its own offset 3 into its buffers.  Row r: u64 = 1000 + r (null when r % 4 == 1),
 * flag = r % 3 == 0, text = "t<r>" repeated r % 3 times (null when r % 5 == 4), i32 = -r. */
static uint64_t v_u64[32];
static uint8_t v_u64_valid[4], v_flag[4], v_text_valid[4];
static int32_t v_text_off[33], v_i32[32];
static char v_text[512];
static const void *bufs_u64[2], *bufs_flag[2], *bufs_text[3], *bufs_i32[2];
static struct ArrowArray kid_a[4], *kid_ap[4];
static const void *top_bufs[1];

static void set(uint8_t *bits, int i) { bits[i / 8] |= (uint8_t)(1 << (i % 8)); }

static void build_slices(void)
{
	memset(v_u64_valid, 0, sizeof v_u64_valid);
	memset(v_flag, 0, sizeof v_flag);
	memset(v_text_valid, 0, sizeof v_text_valid);
	int32_t off = 37; /* offsets deliberately not starting at 0 */
	for (int j = 0; j < 19; j++) { /* buffer index j = logical row j - 3 */
		int r = j - 3;
		v_u64[j] = 1000 + (uint64_t)r;
		if (r < 0 || r % 4 != 1)
			set(v_u64_valid, j);
		if (r >= 0 && r % 3 == 0)
			set(v_flag, j);
		v_i32[j] = -r;
		v_text_off[j] = off;
		if (r < 0 || r % 5 != 4) {
			set(v_text_valid, j);
			for (int k = 0; r >= 0 && k < r % 3; k++)
				off += sprintf(v_text + off, "t%d", r);
		}
	}
	v_text_off[19] = off;
	bufs_u64[0] = v_u64_valid, bufs_u64[1] = v_u64;
	bufs_flag[0] = NULL, bufs_flag[1] = v_flag;
	bufs_text[0] = v_text_valid, bufs_text[1] = v_text_off, bufs_text[2] = v_text;
	bufs_i32[0] = NULL, bufs_i32[1] = v_i32;
	const void **b[4] = { bufs_u64, bufs_flag, bufs_text, bufs_i32 };
	for (int i = 0; i < 4; i++) {
		kid_a[i] = (struct ArrowArray){ .length = 16, .null_count = -1, .offset = 3,
						.n_buffers = i == 2 ? 3 : 2, .buffers = b[i],
						.release = noop_array };
		kid_ap[i] = &kid_a[i];
	}
}

static int p_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
	prod *p = st->private_data;
	if (p->fail_next)
		return p->fail_next;
	if (p->batches++ >= 2) {
		out->release = NULL;
		return 0;
	}
	build_slices();
	/* batch 1: 9 rows from offset 2; batch 2: empty */
	*out = (struct ArrowArray){ .length = p->batches == 1 ? 9 : 0, .offset = 2, .n_buffers = 1,
				    .n_children = 4, .buffers = top_bufs, .children = kid_ap,
				    .release = noop_array };
	return 0;
}

static const char *p_error(struct ArrowArrayStream *st)
{
	(void)st;
	return "producer says boom";
}

static void p_release(struct ArrowArrayStream *st)
{
	((prod *)st->private_data)->released++;
	st->release = NULL;
}

static struct ArrowArrayStream make_stream(prod *p)
{
	return (struct ArrowArrayStream){ p_schema, p_next, p_error, p_release, p };
}

static void test_slices_and_narrow_ints(void **state)
{
	(void)state;
	prod p = { { "L", "b", "u", "i" }, 0, 0, 0 };
	struct ArrowArrayStream s = make_stream(&p);
	sink out = { 0 };
	CHECK(lv_arrow_ipc_write(&s, sink_write, &out, &err));
	assert_int_equal(p.released, 1);
	static rstream r;
	read_stream(&r, out.p, out.n);
	assert_int_equal(r.nf, 4);
	assert_int_equal(r.f[3].bits, 32);
	assert_true(r.f[3].is_signed);
	assert_int_equal(r.nb, 2);
	const rbatch *b = &r.b[0];
	assert_int_equal(b->length, 9);
	for (int64_t k = 0; k < 9; k++) {
		int row = 2 + (int)k;
		char text[64] = "";
		for (int j = 0; j < row % 3; j++)
			sprintf(text + strlen(text), "t%d", row);
		check_cell(b, &r.f[0], 0, k, (ads_cell){ .null = row % 4 == 1, .u = 1000 + (uint64_t)row });
		check_cell(b, &r.f[1], 2, k, (ads_cell){ .b = row % 3 == 0 });
		check_cell(b, &r.f[2], 4, k, (ads_cell){ .null = row % 5 == 4, .s = text });
		check_cell(b, &r.f[3], 7, k, (ads_cell){ .u = (uint32_t)-row });
	}
	assert_int_equal(b->node_nulls[0], 2);  /* rows 5, 9 */
	assert_int_equal(b->node_nulls[2], 2);  /* rows 4, 9 */
	assert_int_equal((int32_t)u32(rbuf(b, 5)), 0); /* Utf8 offsets rebased */
	assert_int_equal(r.b[1].length, 0);
	assert_int_equal(r.b[1].buf_len[5], 4); /* an empty Utf8 column still has offset 0 */
	free(out.p);
	assert_int_equal(lv_arrow_live_objects(), 0);
}

/* Timestamps of any unit, with or without a time zone, are int64 cells with their
 * Timestamp type; a format that is not "ts" + unit + ":" is unsupported. */
static void test_timestamps(void **state)
{
	(void)state;
	static const struct { const char *f; int unit; const char *tz; } ok[] = {
		{ "tss:", 0, "" }, { "tsm:UTC", 1, "UTC" }, { "tsn:Europe/Paris", 3, "Europe/Paris" },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		prod p = { { ok[i].f, "b", "u", "i" }, 0, 0, 0 };
		struct ArrowArrayStream s = make_stream(&p);
		sink out = { 0 };
		CHECK(lv_arrow_ipc_write(&s, sink_write, &out, &err));
		static rstream r;
		read_stream(&r, out.p, out.n);
		assert_int_equal(r.f[0].type, 10);
		assert_int_equal(r.f[0].unit, ok[i].unit);
		assert_string_equal(r.f[0].tz, ok[i].tz);
		for (int64_t k = 0; k < 9; k++) /* the int64 values, as the u64 column had them */
			check_cell(&r.b[0], &r.f[0], 0, k,
				   (ads_cell){ .null = (2 + k) % 4 == 1, .i = 1002 + k });
		free(out.p);
	}
	const char *bad[] = { "ts", "tsm", "tsx:UTC", "tdm" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		prod p = { { bad[i], "b", "u", "i" }, 0, 0, 0 };
		struct ArrowArrayStream s = make_stream(&p);
		sink out = { 0 };
		assert_int_equal(lv_arrow_ipc_write(&s, sink_write, &out, &err), LV_EUNSUPPORTED);
		assert_non_null(strstr(err.message, "'u64'"));
		free(out.p);
	}
	assert_int_equal(lv_arrow_live_objects(), 0);
}

static void test_errors_release_the_stream(void **state)
{
	(void)state;
	/* An unsupported type names the column. */
	prod p = { { "L", "b", "g", "i" }, 0, 0, 0 };
	struct ArrowArrayStream s = make_stream(&p);
	sink out = { 0 };
	assert_int_equal(lv_arrow_ipc_write(&s, sink_write, &out, &err), LV_EUNSUPPORTED);
	assert_non_null(strstr(err.message, "'text'"));
	assert_int_equal(p.released, 1);
	/* A failing producer: its get_last_error text is passed on. */
	prod q = { { "L", "b", "u", "i" }, EIO, 0, 0 };
	s = make_stream(&q);
	assert_int_equal(lv_arrow_ipc_write(&s, sink_write, &out, &err), LV_EIO);
	assert_non_null(strstr(err.message, "producer says boom"));
	assert_int_equal(q.released, 1);
	/* A failing writer, at every call in turn. */
	for (int n = 1;; n++) {
		prod w = { { "L", "b", "u", "i" }, 0, 0, 0 };
		s = make_stream(&w);
		sink o = { .fail_at = n };
		int rc = lv_arrow_ipc_write(&s, sink_write, &o, &err);
		assert_int_equal(w.released, 1);
		free(o.p);
		if (rc == 0) {
			assert_true(n > 10);
			break;
		}
		assert_int_equal(rc, LV_EIO);
	}
	/* No callback at all. */
	prod z = { { "L", "b", "u", "i" }, 0, 0, 0 };
	s = make_stream(&z);
	assert_int_equal(lv_arrow_ipc_write(&s, NULL, NULL, &err), LV_EINVALID);
	assert_int_equal(z.released, 1);
	free(out.p);
}

/* Every allocation of export + IPC writing fails in turn: an error, nothing leaked. */
static void test_allocation_failures(void **state)
{
	(void)state;
	ads_fixture fx = ads_open();
	lv_arrow_options o = { LV_ARROW_OPTIONS_VERSION, 6, 0 };
	int failures = 0;
	for (uint64_t nth = 1;; nth++) {
		lv_arrow_fail_alloc_at(nth);
		struct ArrowArrayStream s;
		sink out = { 0 };
		int rc = lv_version_list_arrow_stream(&s, fx.l, "history", &o, &err);
		if (rc == 0)
			rc = lv_arrow_ipc_write(&s, sink_write, &out, &err);
		free(out.p);
		uint64_t seen = lv_arrow_fail_alloc_at(0);
		assert_int_equal(lv_arrow_live_objects(), 0);
		if (rc == 0 && seen < nth)
			break;
		assert_int_equal(rc, LV_ENOMEM);
		assert_non_null(strstr(err.message, "out of memory"));
		failures++;
	}
	assert_true(failures > 20);
	ads_close(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_roundtrip),
		cmocka_unit_test(test_slices_and_narrow_ints),
		cmocka_unit_test(test_timestamps),
		cmocka_unit_test(test_errors_release_the_stream),
		cmocka_unit_test(test_allocation_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
