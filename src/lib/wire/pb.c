#include "wire/pb.h"

#include <string.h>

#include "util/util.h"

bool lv_pb_varint(lv_pb *r, uint64_t *out)
{
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

int lv_pb_next(lv_pb *r, lv_pb_field *f)
{
	if (r->p >= r->end)
		return 0;
	uint64_t key;
	if (!lv_pb_varint(r, &key))
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
		if (!lv_pb_varint(r, &f->u))
			goto bad;
		return 1;
	case LV_PB_I64:
		if (r->end - r->p < 8)
			goto bad;
		f->u = lv_le64(r->p);
		r->p += 8;
		return 1;
	case LV_PB_I32:
		if (r->end - r->p < 4)
			goto bad;
		f->u = lv_le32(r->p);
		r->p += 4;
		return 1;
	case LV_PB_LEN: {
		uint64_t n;
		if (!lv_pb_varint(r, &n))
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

long lv_pb_repeated_varint(const lv_pb_field *f, lv_pb_u64_cb cb, void *arg)
{
	if (f->wire == LV_PB_VARINT) {
		if (cb)
			cb(f->u, arg);
		return 1;
	}
	if (f->wire != LV_PB_LEN)
		return -1;
	lv_pb r = lv_pb_sub(f);
	long n = 0;
	while (!lv_pb_done(&r)) {
		uint64_t v;
		if (!lv_pb_varint(&r, &v))
			return -1;
		if (cb)
			cb(v, arg);
		n++;
	}
	return n;
}

size_t lv_pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int lv_pbw_varint(lv_dbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		tmp[n++] = c;
	} while (v);
	return lv_dbuf_add(b, tmp, n);
}

int lv_pbw_tag(lv_dbuf *b, uint32_t num, int wire)
{
	return lv_pbw_varint(b, ((uint64_t)num << 3) | (uint64_t)wire);
}

int lv_pbw_u64_always(lv_dbuf *b, uint32_t num, uint64_t v)
{
	LV_TRY(lv_pbw_tag(b, num, LV_PB_VARINT));
	return lv_pbw_varint(b, v);
}

int lv_pbw_u64(lv_dbuf *b, uint32_t num, uint64_t v)
{
	return v ? lv_pbw_u64_always(b, num, v) : 0;
}

int lv_pbw_bytes(lv_dbuf *b, uint32_t num, const void *p, size_t n)
{
	LV_TRY(lv_pbw_tag(b, num, LV_PB_LEN));
	LV_TRY(lv_pbw_varint(b, n));
	return lv_dbuf_add(b, p, n);
}

int lv_pbw_str(lv_dbuf *b, uint32_t num, const char *s)
{
	if (!s || !*s)
		return 0;
	return lv_pbw_bytes(b, num, s, strlen(s));
}
