/*
 * The schema bytes of a Lance v2 file in memory (global buffer 0, a FileDescriptor
 * {1 schema {1 fields, 5 metadata}, 2 length}), for the schema cache's tests.  The file
 * must be well formed (one written by lv_lancefile_write): offsets are not checked.
 */
#ifndef LV_TEST_LFSCHEMA_H
#define LV_TEST_LFSCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "lancever/common.h"

/* The bytes of the fields of b's schema (every Schema.fields entry, tags included, from the
 * first to the last; *n their length); fails the test when there is none. */
const uint8_t *tu_lf_fields_of(const lv_buf *b, size_t *n);
/* Rewrites b's schema in place (the same length) as field 0, every entry that is not a
 * field, then the other fields: the fields are no longer contiguous. */
void tu_lf_interleave(lv_buf *b);

#endif
