/* The schema bytes of a Lance v2 file in memory (lfschema.h). */
#include "support/lfschema.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "wire/pb.h"

/* The Schema message of b's FileDescriptor (global buffer 0). */
static lv__pb schema_of(const lv_buf *b)
{
	uint64_t gbo, gb0, len;
	memcpy(&gbo, b->ptr + b->size - 40 + 16, 8);
	memcpy(&gb0, b->ptr + gbo, 8);
	memcpy(&len, b->ptr + gbo + 8, 8);
	lv__pb fd = lv__pb_make(b->ptr + gb0, len), sc = { 0 };
	lv__pb_field g = { 0 };
	while (lv__pb_next(&fd, &g) == 1)
		if (g.num == 1)
			sc = lv__pb_sub(&g);
	assert_non_null(sc.p);
	return sc;
}

/* The bytes of the fields of b's schema (every Schema.fields entry, contiguous). */
const uint8_t *tu_lf_fields_of(const lv_buf *b, size_t *n)
{
	lv__pb sc = schema_of(b);
	lv__pb_field g = { 0 };
	const uint8_t *lo = NULL, *hi = NULL, *at = sc.p;
	while (lv__pb_next(&sc, &g) == 1) {
		if (g.num == 1) {
			lo = lo ? lo : at;
			hi = sc.p;
		}
		at = sc.p;
	}
	assert_non_null(lo);
	*n = (size_t)(hi - lo);
	return lo;
}

/* Rewrites b's schema (in place, the same length) as field 0, the metadata, the other
 * fields: the fields are no longer contiguous. */
void tu_lf_interleave(lv_buf *b)
{
	lv__pb sc = schema_of(b);
	uint8_t *s0 = (uint8_t *)sc.p, *out = malloc((size_t)(sc.end - sc.p)), *o = out;
	assert_non_null(out);
	const uint8_t *at[32], *end[32];
	bool field[32];
	size_t n = 0;
	lv__pb_field g = { 0 };
	for (at[0] = sc.p; n < 32 && lv__pb_next(&sc, &g) == 1; at[++n] = sc.p) {
		end[n] = sc.p;
		field[n] = g.num == 1;
	}
	assert_true(n >= 3 && n < 32 && field[0] && field[1] && !field[n - 1]);
	for (int pass = 0; pass < 3; pass++) /* field 0; the rest that is not a field; fields */
		for (size_t i = 0; i < n; i++)
			if ((pass == 0 && i == 0) || (pass == 1 && !field[i]) ||
			    (pass == 2 && field[i] && i > 0)) {
				memcpy(o, at[i], (size_t)(end[i] - at[i]));
				o += end[i] - at[i];
			}
	assert_int_equal(o - out, sc.end - s0);
	memcpy(s0, out, (size_t)(o - out));
	free(out);
}
