/*
 * Byte buffers: the caller-owned lv_buf (lancever/common.h) and the growable,
 * capped lv__dbuf the writers and encoders build into.
 *
 * Invariants: an lv__dbuf never grows past its limit (LV_ELIMIT, its bytes intact);
 * after a failed call it is still valid and is emptied by lv__dbuf_dispose.
 */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lv_buf_dispose(lv_buf *b)
{
	if (!b)
		return;
	lv__free(b->ptr);
	b->ptr = NULL;
	b->size = 0;
}

int lv__buf_copy(lv_buf *out, const lv_buf *b)
{
	uint8_t *p = lv__memdupz(b->ptr, b->size);
	if (!p)
		return LV_ENOMEM;
	out->ptr = p;
	out->size = b->size;
	return 0;
}

/* ---- dbuf ---- */

void lv__dbuf_init(lv__dbuf *b, size_t limit)
{
	memset(b, 0, sizeof *b);
	b->limit = limit ? limit : SIZE_MAX / 2;
}

void lv__dbuf_dispose(lv__dbuf *b)
{
	lv__free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

int lv__dbuf_reserve(lv__dbuf *b, size_t extra)
{
	size_t need;
	if (b->oom)
		return LV_ENOMEM;
	if (lv__add_overflow(b->len, extra, &need) || lv__add_overflow(need, 1, &need) ||
	    need > b->limit) {
		b->oom = true;
		return LV_ELIMIT;
	}
	if (need <= b->cap)
		return 0;
	size_t nc = b->cap ? b->cap : 256;
	while (nc < need)
		nc = nc > SIZE_MAX / 4 ? need : nc * 2;
	if (nc > b->limit + 1)
		nc = b->limit + 1;
	uint8_t *p = lv__realloc(b->ptr, nc);
	if (!p) {
		b->oom = true;
		return LV_ENOMEM;
	}
	b->ptr = p;
	b->cap = nc;
	return 0;
}

int lv__dbuf_add(lv__dbuf *b, const void *p, size_t n)
{
	LV_TRY(lv__dbuf_reserve(b, n));
	if (n)
		memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = 0;
	return 0;
}

int lv__dbuf_addc(lv__dbuf *b, uint8_t c) { return lv__dbuf_add(b, &c, 1); }
int lv__dbuf_adds(lv__dbuf *b, const char *s) { return lv__dbuf_add(b, s, strlen(s)); }

int lv__dbuf_add_zeros(lv__dbuf *b, size_t n)
{
	LV_TRY(lv__dbuf_reserve(b, n));
	memset(b->ptr + b->len, 0, n);
	b->len += n;
	b->ptr[b->len] = 0;
	return 0;
}

int lv__dbuf_printf(lv__dbuf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	int rc = n < 0 ? LV_EINVALID : lv__dbuf_reserve(b, (size_t)n);
	if (rc == 0) {
		vsnprintf((char *)b->ptr + b->len, (size_t)n + 1, fmt, ap2);
		b->len += (size_t)n;
	}
	va_end(ap2);
	return rc;
}

int lv__dbuf_add_u16le(lv__dbuf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return lv__dbuf_add(b, x, 2);
}
int lv__dbuf_add_u32le(lv__dbuf *b, uint32_t v)
{
	uint8_t x[4];
	for (int i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return lv__dbuf_add(b, x, 4);
}
int lv__dbuf_add_u64le(lv__dbuf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return lv__dbuf_add(b, x, 8);
}

int lv__dbuf_take(lv__dbuf *b, lv_buf *out)
{
	if (b->oom)
		return LV_ENOMEM;
	if (!b->ptr)
		LV_TRY(lv__dbuf_reserve(b, 0));
	b->ptr[b->len] = 0;
	out->ptr = b->ptr;
	out->size = b->len;
	b->ptr = NULL;
	b->len = b->cap = 0;
	return 0;
}

char *lv__dbuf_take_str(lv__dbuf *b)
{
	lv_buf out;
	if (lv__dbuf_take(b, &out) < 0) {
		lv__dbuf_dispose(b);
		return NULL;
	}
	return (char *)out.ptr;
}
