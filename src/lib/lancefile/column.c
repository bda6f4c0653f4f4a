/*
 * Column output of the page decoders: error messages naming file, column and page,
 * and the stores of one row's value or null into a column's arrays (lv__lf_colbuf).
 * Null rows always hold 0 / empty values, whatever the file holds there.
 */
#include <stdio.h>
#include <string.h>

#include "lancefile/lf_internal.h"

int lv__lf_perr(lv__lf_dctx *c, int code, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lv__err(c->err, code, "file %s: column '%s' page %zu: %s", c->file, c->col, c->page,
		       msg);
}

unsigned lv__lf_type_width(int type)
{
	switch (type) {
	case LV_COL_UINT64:
	case LV_COL_INT64:
	case LV_COL_FLOAT64:
	case LV_COL_TIMESTAMP: return 8;
	case LV_COL_INT32:
	case LV_COL_UINT32:
	case LV_COL_FLOAT32: return 4;
	case LV_COL_INT16:
	case LV_COL_UINT16: return 2;
	case LV_COL_INT8:
	case LV_COL_UINT8: return 1;
	default: return 0;
	}
}

int lv__lf_col_put_str(lv__lf_dctx *c, size_t row, const uint8_t *p, size_t n)
{
	lv__lf_colbuf *b = c->cb;
	if (!b->data.oom && n < b->data.cap - b->data.len) { /* room reserved: just copy */
		memcpy(b->data.ptr + b->data.len, p, n);
		b->data.len += n;
		b->data.ptr[b->data.len] = 0;
		b->offs[row + 1] = b->data.len;
		return 0;
	}
	int rc = lv__dbuf_add(&b->data, p, n);
	if (rc < 0)
		return lv__lf_perr(c, rc, rc == LV_ELIMIT ? "decoded strings exceed the size limit"
						      : "out of memory");
	b->offs[row + 1] = b->data.len;
	return 0;
}

int lv__lf_col_put_null(lv__lf_dctx *c, size_t row)
{
	lv__lf_colbuf *b = c->cb;
	if (!b->nullable)
		return LV__LF_CORRUPT(c, "null at row %zu of a non-nullable column", row);
	b->valid[row] = 0;
	if (b->type == LV_COL_UTF8)
		b->offs[row + 1] = b->data.len;
	else if (b->type == LV_COL_BOOL)
		b->bools[row] = 0;
	else if (b->type == LV_COL_FSL_FLOAT32)
		memset(b->f32 + (size_t)row * b->dim, 0, (size_t)b->dim * sizeof *b->f32);
	else
		b->u64[row] = 0;
	return 0;
}

void lv__lf_col_put_fixed(lv__lf_colbuf *b, size_t row, uint64_t v)
{
	switch (b->type) {
	case LV_COL_BOOL: b->bools[row] = (uint8_t)(v != 0); break;
	case LV_COL_INT32: b->u64[row] = (uint64_t)(int64_t)(int32_t)(uint32_t)v; break;
	case LV_COL_INT16: b->u64[row] = (uint64_t)(int64_t)(int16_t)(uint16_t)v; break;
	case LV_COL_INT8: b->u64[row] = (uint64_t)(int64_t)(int8_t)(uint8_t)v; break;
	case LV_COL_FLOAT32:
	case LV_COL_UINT32: b->u64[row] = (uint32_t)v; break;
	case LV_COL_UINT16: b->u64[row] = (uint16_t)v; break;
	case LV_COL_UINT8: b->u64[row] = (uint8_t)v; break;
	default: b->u64[row] = v; break;
	}
}
