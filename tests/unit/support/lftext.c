/* Everything a reader can ask of a Lance file, as text (lftext.h). */
#include "support/lftext.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

typedef struct text {
	char *p;
	size_t n, cap;
} text;

static void put(text *t, const void *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		t->cap = (t->n + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = 0;
}

/* n bytes of s in hex (values and arrays hold NULs: the text holds none). */
static void hex(text *t, const void *s, size_t n)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		uint8_t c = ((const uint8_t *)s)[i];
		char two[2] = { d[c >> 4], d[c & 15] };
		put(t, two, 2);
	}
}

static void putf(text *t, const char *fmt, ...) LV_PRINTF(2, 3);
static void putf(text *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	put(t, buf, (size_t)k);
}

static void put_col(text *t, const lv_lancefile *f, size_t i)
{
	const lv_column *c = lv_lancefile_column(f, i);
	const char *why = lv_lancefile_column_error(f, i);
	size_t n = lv_lancefile_num_rows(f);
	putf(t, "col %zu '%s' type %d null %d list %u ltype '%s' err '%s':", i, c->name, c->type,
	     c->nullable, c->list_size, lv_lancefile_column_logical_type(f, i), why ? why : "-");
	if (c->u64)
		hex(t, c->u64, n * sizeof *c->u64);
	if (c->str_offsets) {
		hex(t, c->str_offsets, (n + 1) * sizeof *c->str_offsets);
		hex(t, c->str_data, c->str_offsets[n]);
	}
	if (c->i64)
		hex(t, c->i64, n * sizeof *c->i64);
	if (c->bools)
		hex(t, c->bools, n);
	if (c->f32)
		hex(t, c->f32, n * c->list_size * sizeof *c->f32);
	if (c->validity)
		hex(t, c->validity, n);
	put(t, "\n", 1);
}

char *tu_lf_describe(const lv_lancefile *f)
{
	text t = { 0 };
	putf(&t, "version %d rows %zu fields %zu cols %zu meta %zu\n", lv_lancefile_file_version(f),
	     lv_lancefile_num_rows(f), lv_lancefile_num_fields(f), lv_lancefile_num_columns(f),
	     lv_lancefile_num_metadata(f));
	for (size_t i = 0; i < lv_lancefile_num_fields(f); i++) {
		const char *name, *lt;
		bool nullable;
		unsigned depth;
		assert_int_equal(lv_lancefile_field(f, i, &name, &lt, &nullable, &depth), 0);
		putf(&t, "field '%s' '%s' %d %u\n", name, lt, nullable, depth);
	}
	for (size_t i = 0; i < lv_lancefile_num_columns(f); i++)
		put_col(&t, f, i);
	for (size_t i = 0; i < lv_lancefile_num_metadata(f); i++) {
		const lv_kv *kv = lv_lancefile_metadata(f, i);
		putf(&t, "meta '%s' %zu:", kv->key, kv->value_len);
		hex(&t, kv->value, kv->value_len);
		putf(&t, " found %d\n", lv_lancefile_metadata_find(f, kv->key) == kv);
	}
	return t.p;
}

