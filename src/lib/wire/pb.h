/*
 * A bounds-checked, zero-copy protobuf wire-format reader and a small writer.
 *
 * Reader: an lv__pb span over (ptr, end).  lv__pb_next() yields one field at a
 * time: its number, wire type and either a scalar value or a sub-span for
 * length-delimited fields.  Nothing is allocated.  Every length is checked
 * against the bytes that remain; varints over 10 bytes, field number 0, group
 * wire types (3/4) and truncated data are errors.  Unknown fields are simply
 * not looked at by the caller (skipping is implicit in lv__pb_next).
 */
#ifndef LV_WIRE_PB_H
#define LV_WIRE_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

enum { LV_PB_VARINT = 0, LV_PB_I64 = 1, LV_PB_LEN = 2, LV_PB_I32 = 5 };

typedef struct lv__pb {
	const uint8_t *p;
	const uint8_t *end;
} lv__pb;

typedef struct lv__pb_field {
	uint32_t num;
	int wire;
	uint64_t u;          /* VARINT, I64, I32 value */
	const uint8_t *data; /* LEN payload */
	size_t len;
} lv__pb_field;

static inline lv__pb lv__pb_make(const uint8_t *p, size_t n)
{
	lv__pb r = { p, p ? p + n : p }; /* NULL + 0 is undefined behaviour in C */
	return r;
}

static inline bool lv__pb_done(const lv__pb *r) { return r->p >= r->end; }

static inline uint32_t lv__pb__le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t lv__pb__le64(const uint8_t *p)
{
	return (uint64_t)lv__pb__le32(p) | ((uint64_t)lv__pb__le32(p + 4) << 32);
}

/*
 * lv__pb_varint: reads a varint; false on truncation or > 10 bytes.
 * lv__pb_next: reads the next field.  Returns 1 if a field was read, 0 at the
 * end of the span, -1 on malformed input (the span is then left at its end).
 * Both are inline: they are the inner loop of every manifest scan.
 */
static inline bool lv__pb_varint(lv__pb *r, uint64_t *out)
{
	/* fast path: most varints in manifests are one byte */
	if (r->p < r->end && !(*r->p & 0x80)) {
		*out = *r->p++;
		return true;
	}
	uint64_t v = 0;
	const uint8_t *p = r->p;
	for (int i = 0; i < 10; i++) {
		if (p >= r->end)
			return false;
		uint8_t b = *p++;
		if (i == 9 && b > 1)
			return false; /* would overflow 64 bits */
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			r->p = p;
			*out = v;
			return true;
		}
	}
	return false;
}

static inline int lv__pb_next(lv__pb *r, lv__pb_field *f)
{
	if (r->p >= r->end)
		return 0;
	uint64_t key;
	if (!lv__pb_varint(r, &key))
		goto bad;
	uint64_t num = key >> 3;
	if (num == 0 || num > 0x1fffffff)
		goto bad;
	f->num = (uint32_t)num;
	f->wire = (int)(key & 7);
	f->data = NULL;
	f->len = 0;
	f->u = 0;
	switch (f->wire) {
	case LV_PB_VARINT:
		if (!lv__pb_varint(r, &f->u))
			goto bad;
		return 1;
	case LV_PB_I64:
	case LV_PB_I32: { /* fixed64 / fixed32: 8 or 4 little-endian bytes */
		ptrdiff_t w = f->wire == LV_PB_I64 ? 8 : 4;
		if (r->end - r->p < w)
			goto bad;
		f->u = w == 8 ? lv__pb__le64(r->p) : lv__pb__le32(r->p);
		r->p += w;
		return 1;
	}
	case LV_PB_LEN: {
		uint64_t n;
		if (!lv__pb_varint(r, &n))
			goto bad;
		if (n > (uint64_t)(r->end - r->p))
			goto bad;
		f->data = r->p;
		f->len = (size_t)n;
		r->p += n;
		return 1;
	}
	default:
		goto bad;
	}
bad:
	r->p = r->end;
	return -1;
}


/* Sub-span of a LEN field. */
static inline lv__pb lv__pb_sub(const lv__pb_field *f) { return lv__pb_make(f->data, f->len); }

/*
 * Iterates the values of a repeated varint field that may be packed (LEN) or
 * not (VARINT): call with the field; for LEN fields it walks the payload.
 * Returns the count of values, or -1 if malformed.  `cb` may be NULL.
 */
typedef void (*lv__pb_u64_cb)(uint64_t v, void *arg);
long lv__pb_repeated_varint(const lv__pb_field *f, lv__pb_u64_cb cb, void *arg);

/* ---- writer (appends to an lv__dbuf) ---- */
struct lv__dbuf;
int lv__pbw_varint(struct lv__dbuf *b, uint64_t v);
int lv__pbw_tag(struct lv__dbuf *b, uint32_t num, int wire);
int lv__pbw_u64(struct lv__dbuf *b, uint32_t num, uint64_t v);     /* omitted if 0 */
int lv__pbw_u64_always(struct lv__dbuf *b, uint32_t num, uint64_t v);
int lv__pbw_bytes(struct lv__dbuf *b, uint32_t num, const void *p, size_t n); /* always written */
int lv__pbw_str(struct lv__dbuf *b, uint32_t num, const char *s);  /* omitted if empty/NULL */
size_t lv__pb_varint_size(uint64_t v);

#endif
