/*
 * Protobuf messages of the Lance file writer (declared in writer_pb.h): built inside-out in
 * scratch lv__dbufs, the byte layout of docs/lance-reference.md ("Lance file format") that
 * makes a 3-row file byte-identical to Lance 8.0.0's.
 *
 * Invariants: every builder consumes the sub-messages it embeds (disposed and reset to
 * empty); lv__dbuf errors are sticky (`oom`), so builders ignore per-call results and the
 * writer's final lv__dbuf_take reports any failure once.
 */
#include <string.h>

#include "lancefile/writer_pb.h"
#include "wire/pb.h"

void lv__lf_w_sub(lv__dbuf *m, uint32_t f, lv__dbuf *sub)
{
	if (sub->oom)
		m->oom = true;
	else
		(void)lv__pbw_bytes(m, f, sub->ptr, sub->len);
	lv__dbuf_dispose(sub);
	lv__dbuf_init(sub, 0);
}

/* Replaces m by a message holding m as field f. */
static void m_wrap(lv__dbuf *m, uint32_t f)
{
	lv__dbuf t;
	lv__dbuf_init(&t, 0);
	lv__lf_w_sub(&t, f, m);
	*m = t;
}

void lv__lf_w_packed(lv__dbuf *m, uint32_t f, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	lv__dbuf t;
	lv__dbuf_init(&t, 0);
	for (size_t i = 0; i < n; i++)
		(void)lv__pbw_varint(&t, v[i]);
	lv__lf_w_sub(m, f, &t);
}

/* 2.0 ArrayEncoding.flat{bits, buffer{index}} (the buffer is always present). */
static void a20_flat(lv__dbuf *m, uint64_t bits, uint32_t idx)
{
	lv__dbuf b, f;
	lv__dbuf_init(&b, 0);
	lv__dbuf_init(&f, 0);
	(void)lv__pbw_u64(&b, 1, idx);
	(void)lv__pbw_u64(&f, 1, bits);
	lv__lf_w_sub(&f, 2, &b);
	lv__lf_w_sub(m, 1, &f);
}

/* nullable{no_nulls{values: flat{bits, buffer idx}}} */
void lv__lf_w_a20_nonull(lv__dbuf *m, uint64_t bits, uint32_t idx)
{
	lv__dbuf v;
	lv__dbuf_init(&v, 0);
	a20_flat(&v, bits, idx);
	m_wrap(&v, 1); /* NoNull.values */
	m_wrap(&v, 1); /* Nullable.no_nulls */
	lv__lf_w_sub(m, 2, &v);
}

/* {1: first (consumed), 2: flat{bits, buf 1}} into a new v: the shape of the two-buffer
 * encodings (some_nulls: validity, values; binary: indices, bytes). */
static void a20_two_buffers(lv__dbuf *v, lv__dbuf *first, uint64_t bits)
{
	lv__dbuf x;
	lv__dbuf_init(v, 0);
	lv__lf_w_sub(v, 1, first);
	lv__dbuf_init(&x, 0);
	a20_flat(&x, bits, 1);
	lv__lf_w_sub(v, 2, &x);
}

/* nullable{some_nulls{validity: flat{1, buf 0}, values: flat{bits, buf 1}}} */
void lv__lf_w_a20_somenull(lv__dbuf *m, uint64_t bits)
{
	lv__dbuf v, validity;
	lv__dbuf_init(&validity, 0);
	a20_flat(&validity, 1, 0);
	a20_two_buffers(&v, &validity, bits);
	m_wrap(&v, 2); /* Nullable.some_nulls */
	lv__lf_w_sub(m, 2, &v);
}

void lv__lf_w_a20_allnull(lv__dbuf *m)
{
	lv__dbuf v;
	lv__dbuf_init(&v, 0);
	(void)lv__pbw_bytes(&v, 3, NULL, 0);
	lv__lf_w_sub(m, 2, &v);
}

/* binary{indices: nullable{no_nulls{flat{64, buf 0}}}, bytes: flat{8, buf 1}, null_adjustment} */
void lv__lf_w_a20_binary(lv__dbuf *m, uint64_t adj)
{
	lv__dbuf v, indices;
	lv__dbuf_init(&indices, 0);
	lv__lf_w_a20_nonull(&indices, 64, 0);
	a20_two_buffers(&v, &indices, 8);
	(void)lv__pbw_u64(&v, 3, adj);
	lv__lf_w_sub(m, 6, &v);
}

/* 2.1 CompressiveEncoding{flat{bits}} */
static void c21_flat(lv__dbuf *m, uint64_t bits)
{
	lv__dbuf f;
	lv__dbuf_init(&f, 0);
	(void)lv__pbw_u64(&f, 1, bits);
	lv__lf_w_sub(m, 1, &f);
}

/* CompressiveEncoding{variable{offsets: flat{32}}} */
static void c21_variable(lv__dbuf *m)
{
	lv__dbuf o;
	lv__dbuf_init(&o, 0);
	c21_flat(&o, 32);
	m_wrap(&o, 1);
	lv__lf_w_sub(m, 2, &o);
}

/* PageLayout{mini_block_layout{...}}; value_bits 0 = variable. */
void lv__lf_w_l21_miniblock(lv__dbuf *m, bool def, uint64_t value_bits, size_t items)
{
	lv__dbuf l, x;
	lv__dbuf_init(&l, 0);
	lv__dbuf_init(&x, 0);
	if (def) {
		c21_flat(&x, 16);
		lv__lf_w_sub(&l, 2, &x);
	}
	if (value_bits)
		c21_flat(&x, value_bits);
	else
		c21_variable(&x);
	lv__lf_w_sub(&l, 3, &x);
	uint8_t layer = def ? 3 : 1;
	(void)lv__pbw_bytes(&l, 6, &layer, 1);
	(void)lv__pbw_u64(&l, 7, 1);
	(void)lv__pbw_u64(&l, 9, items);
	lv__lf_w_sub(m, 1, &l);
}

void lv__lf_w_l21_fullzip(lv__dbuf *m, bool def, size_t items)
{
	lv__dbuf l, x;
	lv__dbuf_init(&l, 0);
	lv__dbuf_init(&x, 0);
	(void)lv__pbw_u64(&l, 2, def ? 1 : 0);
	(void)lv__pbw_u64(&l, 4, 32);
	(void)lv__pbw_u64(&l, 5, items);
	(void)lv__pbw_u64(&l, 6, items);
	c21_variable(&x);
	lv__lf_w_sub(&l, 7, &x);
	uint8_t layer = def ? 3 : 1;
	(void)lv__pbw_bytes(&l, 8, &layer, 1);
	lv__lf_w_sub(m, 3, &l);
}

void lv__lf_w_l21_allnull(lv__dbuf *m)
{
	lv__dbuf l;
	lv__dbuf_init(&l, 0);
	uint8_t layer = 3;
	(void)lv__pbw_bytes(&l, 5, &layer, 1);
	lv__lf_w_sub(m, 2, &l);
}

/* Encoding{direct{encoding: Any{url, value}}}; consumes value. */
void lv__lf_w_encoding(lv__dbuf *m, uint32_t f, const char *url, lv__dbuf *value)
{
	lv__dbuf any;
	lv__dbuf_init(&any, 0);
	(void)lv__pbw_bytes(&any, 1, url, strlen(url));
	lv__lf_w_sub(&any, 2, value);
	m_wrap(&any, 1); /* DirectEncoding.encoding */
	m_wrap(&any, 2); /* Encoding.direct */
	lv__lf_w_sub(m, f, &any);
}
