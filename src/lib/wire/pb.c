#include "wire/pb.h"

#include <string.h>

#include "util/util.h"

long lv__pb_repeated_varint(const lv__pb_field *f, lv__pb_u64_cb cb, void *arg)
{
	if (f->wire == LV_PB_VARINT) {
		if (cb)
			cb(f->u, arg);
		return 1;
	}
	if (f->wire != LV_PB_LEN)
		return -1;
	lv__pb r = lv__pb_sub(f);
	long n = 0;
	while (!lv__pb_done(&r)) {
		uint64_t v;
		if (!lv__pb_varint(&r, &v))
			return -1;
		if (cb)
			cb(v, arg);
		n++;
	}
	return n;
}

size_t lv__pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int lv__pbw_varint(lv__dbuf *b, uint64_t v)
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
	return lv__dbuf_add(b, tmp, n);
}

int lv__pbw_tag(lv__dbuf *b, uint32_t num, int wire)
{
	return lv__pbw_varint(b, ((uint64_t)num << 3) | (uint64_t)wire);
}

int lv__pbw_u64_always(lv__dbuf *b, uint32_t num, uint64_t v)
{
	LV_TRY(lv__pbw_tag(b, num, LV_PB_VARINT));
	return lv__pbw_varint(b, v);
}

int lv__pbw_u64(lv__dbuf *b, uint32_t num, uint64_t v)
{
	return v ? lv__pbw_u64_always(b, num, v) : 0;
}

int lv__pbw_bytes(lv__dbuf *b, uint32_t num, const void *p, size_t n)
{
	LV_TRY(lv__pbw_tag(b, num, LV_PB_LEN));
	LV_TRY(lv__pbw_varint(b, n));
	return lv__dbuf_add(b, p, n);
}

int lv__pbw_str(lv__dbuf *b, uint32_t num, const char *s)
{
	if (!s || !*s)
		return 0;
	return lv__pbw_bytes(b, num, s, strlen(s));
}
