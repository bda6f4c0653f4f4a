/*
 * Checks a directory of real Lance files against its index.json (lfdigest.h): the
 * digest of make_fixtures.mjs / make_fixtures.py, computed from what lancever decodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "lancever/lancefile.h"
#include "support/lfdigest.h"
#include "support/testutil.h"

typedef struct fnv {
	uint64_t h;
} fnv;
static void fnv_bytes(fnv *d, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ULL;
}
static void fnv_u64(fnv *d, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	fnv_bytes(d, b, 8);
}
static void fnv_double(fnv *d, double x)
{
	uint64_t v;
	memcpy(&v, &x, 8);
	fnv_u64(d, v);
}

static const char *type_name(const lv_column *c, char *buf, size_t cap)
{
	switch (c->type) {
	case LV_COL_UINT64: return "uint64";
	case LV_COL_INT64: return "int64";
	case LV_COL_INT32: return "int32";
	case LV_COL_INT16: return "int16";
	case LV_COL_INT8: return "int8";
	case LV_COL_UINT32: return "uint32";
	case LV_COL_UINT16: return "uint16";
	case LV_COL_UINT8: return "uint8";
	case LV_COL_BOOL: return "bool";
	case LV_COL_FLOAT32: return "float";
	case LV_COL_FLOAT64: return "double";
	case LV_COL_UTF8: return "string";
	case LV_COL_TIMESTAMP: return "timestamp";
	case LV_COL_FSL_FLOAT32: snprintf(buf, cap, "vector%u", c->list_size); return buf;
	default: return "?";
	}
}

static void cell(fnv *d, const lv_column *c, size_t r)
{
	uint8_t one = 1;
	fnv_bytes(d, &one, 1);
	switch (c->type) {
	case LV_COL_BOOL: fnv_bytes(d, &c->bools[r], 1); break;
	case LV_COL_FLOAT32: {
		float f;
		uint32_t bits = (uint32_t)c->u64[r];
		memcpy(&f, &bits, 4);
		fnv_double(d, (double)f);
		break;
	}
	case LV_COL_FLOAT64: {
		double x;
		memcpy(&x, &c->u64[r], 8);
		fnv_double(d, x);
		break;
	}
	case LV_COL_UTF8: {
		uint64_t a = c->str_offsets[r], e = c->str_offsets[r + 1];
		uint8_t l[4] = { (uint8_t)(e - a), (uint8_t)((e - a) >> 8), (uint8_t)((e - a) >> 16),
				 (uint8_t)((e - a) >> 24) };
		fnv_bytes(d, l, 4);
		fnv_bytes(d, c->str_data + a, (size_t)(e - a));
		break;
	}
	case LV_COL_FSL_FLOAT32:
		for (uint32_t k = 0; k < c->list_size; k++)
			fnv_double(d, (double)c->f32[r * c->list_size + k]);
		break;
	default: fnv_u64(d, c->u64[r]); break;
	}
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void check_column(const char *file, const lv_lancefile *f, size_t i, json_t *want)
{
	const lv_column *c = lv_lancefile_column(f, i);
	if (strcmp(c->name, jstr(want, "name")) != 0)
		fail_msg("%s column %zu: %s, index: %s", file, i, c->name, jstr(want, "name"));
	if (!strcmp(jstr(want, "type"), "undecoded")) {
		const char *why = lv_lancefile_column_error(f, i);
		if (c->type != LV_COL_UNDECODED || !why || !strstr(why, jstr(want, "error")) ||
		    !strstr(why, file))
			fail_msg("%s column %s: decoded, or not for '%s': %s", file, c->name,
				 jstr(want, "error"), why ? why : "(no error)");
		return;
	}
	if (lv_lancefile_column_error(f, i))
		fail_msg("%s column %s: %s", file, c->name, lv_lancefile_column_error(f, i));
	char tb[32], hex[17];
	size_t nulls = 0, n = lv_lancefile_num_rows(f);
	fnv d = { 0xcbf29ce484222325ULL };
	for (size_t r = 0; r < n; r++) {
		if (c->validity && !c->validity[r]) {
			uint8_t z = 0;
			fnv_bytes(&d, &z, 1);
			nulls++;
			continue;
		}
		cell(&d, c, r);
	}
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)d.h);
	if (strcmp(type_name(c, tb, sizeof tb), jstr(want, "type")) ||
	    nulls != (size_t)json_integer_value(json_object_get(want, "nulls")) ||
	    strcmp(hex, jstr(want, "digest")) != 0)
		fail_msg("%s column %s: type %s nulls %zu digest %s, the peer: %s nulls %lld digest %s",
			 file, c->name, type_name(c, tb, sizeof tb), nulls, hex, jstr(want, "type"),
			 (long long)json_integer_value(json_object_get(want, "nulls")), jstr(want, "digest"));
}

/* 1 if the file's index entry names a column lancever does not decode. */
static bool has_undecoded(json_t *cols)
{
	for (size_t i = 0; i < json_array_size(cols); i++)
		if (!strcmp(jstr(json_array_get(cols, i), "type"), "undecoded"))
			return true;
	return false;
}

static int version_of(const char *v)
{
	return !strcmp(v, "2.0") ? LV_LANCEFILE_V2_0 : !strcmp(v, "2.1") ? LV_LANCEFILE_V2_1
					 : !strcmp(v, "2.2") ? LV_LANCEFILE_V2_2 : -1;
}

void lfd_check_index(const char *dir, size_t min_files)
{
	char path[512];
	json_error_t je;
	snprintf(path, sizeof path, "%s/index.json", dir);
	json_t *idx = json_load_file(path, 0, &je);
	if (!idx)
		fail_msg("%s: %s", path, je.text);
	json_t *files = json_object_get(idx, "files");
	assert_true(json_array_size(files) >= min_files);
	size_t k;
	json_t *e;
	json_array_foreach(files, k, e) {
		const char *name = jstr(e, "file");
		snprintf(path, sizeof path, "%s/%s", dir, name);
		size_t n;
		uint8_t *b = tu_read_file(path, &n);
		json_t *cols = json_object_get(e, "columns");
		lv_lancefile *f = NULL;
		lv_error err = { 0 };
		unsigned flags = has_undecoded(cols) ? LV_LANCEFILE_READ_PARTIAL : 0;
		if (lv_lancefile_read_ex(&f, b, n, name, flags, &err) != 0)
			fail_msg("%s: %s", name, err.message);
		assert_int_equal(lv_lancefile_file_version(f), version_of(jstr(e, "version")));
		assert_int_equal(lv_lancefile_num_rows(f), json_integer_value(json_object_get(e, "rows")));
		assert_int_equal(lv_lancefile_num_columns(f), json_array_size(cols));
		for (size_t i = 0; i < json_array_size(cols); i++)
			check_column(name, f, i, json_array_get(cols, i));
		lv_lancefile_free(f);
		free(b);
	}
	json_decref(idx);
}
