/*
 * A minimal FlatBuffers builder (see flatbuf.h for the format and invariants).
 */
#include <string.h>

#include "arrow/arrow_internal.h"
#include "arrow/flatbuf.h"

void lv__fb_init(lv__fb *b)
{
	memset(b, 0, sizeof *b);
	b->minalign = 1;
}

void lv__fb_dispose(lv__fb *b)
{
	lv__arrow_free(b->buf);
	memset(b, 0, sizeof *b);
}

/* Room for n more bytes in front of the data, moving it to the end of a bigger buffer. */
static bool reserve(lv__fb *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->cap - b->len >= n)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 4) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	uint8_t *nb = lv__arrow_alloc(cap);
	if (!nb) {
		b->oom = true;
		return false;
	}
	if (b->len)
		memcpy(nb + cap - b->len, b->buf + b->cap - b->len, b->len);
	lv__arrow_free(b->buf);
	b->buf = nb;
	b->cap = cap;
	return true;
}

static void push(lv__fb *b, const void *p, size_t n)
{
	if (n == 0 || !reserve(b, n))
		return;
	b->len += n;
	if (p)
		memcpy(b->buf + b->cap - b->len, p, n);
	else
		memset(b->buf + b->cap - b->len, 0, n);
}

/* Pads so that after `extra` more bytes the data is aligned to `align` (a power of 2). */
static void prep(lv__fb *b, size_t align, size_t extra)
{
	if (align > b->minalign)
		b->minalign = align;
	size_t pad = (~(b->len + extra) + 1) & (align - 1);
	push(b, NULL, pad);
}

/* Pushes the low n bytes of v, little-endian, aligned to n. */
static void push_le(lv__fb *b, uint64_t v, size_t n)
{
	uint8_t t[8];
	for (size_t i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	prep(b, n, 0);
	push(b, t, n);
}

/* A uint32 reference, stored at the position it will occupy, to the object at r. */
static void push_ref(lv__fb *b, lv__fb_ref r)
{
	prep(b, 4, 0);
	push_le(b, (uint32_t)(b->len + 4 - r), 4);
}

lv__fb_ref lv__fb_string(lv__fb *b, const char *s, size_t n)
{
	prep(b, 4, n + 1);
	push(b, NULL, 1);
	push(b, s, n);
	push_le(b, (uint32_t)n, 4);
	return (lv__fb_ref)b->len;
}

lv__fb_ref lv__fb_struct_vector(lv__fb *b, const void *elems, size_t n, size_t size, size_t align)
{
	prep(b, 4, n * size);
	prep(b, align, n * size);
	push(b, elems, n * size);
	push_le(b, (uint32_t)n, 4);
	return (lv__fb_ref)b->len;
}

lv__fb_ref lv__fb_ref_vector(lv__fb *b, const lv__fb_ref *refs, size_t n)
{
	prep(b, 4, 4 * n);
	for (size_t i = n; i-- > 0;)
		push_ref(b, refs[i]);
	push_le(b, (uint32_t)n, 4);
	return (lv__fb_ref)b->len;
}

void lv__fb_table_start(lv__fb *b)
{
	memset(b->field, 0, sizeof b->field);
	b->nfields = 0;
	b->table_start = b->len;
}

static void mark(lv__fb *b, int id)
{
	b->field[id] = (lv__fb_ref)b->len;
	if (id + 1 > b->nfields)
		b->nfields = id + 1;
}

void lv__fb_add_u8(lv__fb *b, int id, uint8_t v)
{
	push_le(b, v, 1);
	mark(b, id);
}

void lv__fb_add_i16(lv__fb *b, int id, int16_t v)
{
	push_le(b, (uint16_t)v, 2);
	mark(b, id);
}

void lv__fb_add_i32(lv__fb *b, int id, int32_t v)
{
	push_le(b, (uint32_t)v, 4);
	mark(b, id);
}

void lv__fb_add_i64(lv__fb *b, int id, int64_t v)
{
	push_le(b, (uint64_t)v, 8);
	mark(b, id);
}

void lv__fb_add_ref(lv__fb *b, int id, lv__fb_ref r)
{
	push_ref(b, r);
	mark(b, id);
}

lv__fb_ref lv__fb_table_end(lv__fb *b)
{
	push_le(b, 0, 4); /* the soffset to the vtable, patched below */
	size_t tpos = b->len;
	for (int id = b->nfields - 1; id >= 0; id--)
		push_le(b, b->field[id] ? tpos - b->field[id] : 0, 2);
	push_le(b, tpos - b->table_start, 2);
	push_le(b, 4 + 2 * (size_t)b->nfields, 2);
	if (!b->oom) {
		uint32_t so = (uint32_t)(b->len - tpos); /* vtable = table - soffset */
		uint8_t *p = b->buf + b->cap - tpos;
		for (int i = 0; i < 4; i++)
			p[i] = (uint8_t)(so >> (8 * i));
	}
	return (lv__fb_ref)tpos;
}

int lv__fb_finish(lv__fb *b, lv__fb_ref root, const uint8_t **data, size_t *size)
{
	prep(b, b->minalign > 4 ? b->minalign : 4, 4);
	push_ref(b, root);
	if (b->oom)
		return LV_ENOMEM;
	*data = b->buf + b->cap - b->len;
	*size = b->len;
	return 0;
}
