/*
 * A minimal FlatBuffers builder, enough for Arrow IPC messages (Schema.fbs,
 * Message.fbs).  Written from the FlatBuffers binary format: little-endian
 * scalars aligned to their size; a table starts with an int32 offset back to
 * its vtable (vtable = table - soffset); the vtable lists uint16 vtable size,
 * uint16 table size, then one uint16 offset per field id (0 = absent);
 * references are uint32 offsets forward from where they are stored; vectors
 * and strings are a uint32 count followed by the elements (strings add a NUL).
 *
 * Invariants: the buffer is built back to front (children before parents), so
 * every reference points forward; an object is named by its distance from
 * the end of the buffer (lv__fb_ref), which stays valid while the buffer grows.
 * One table is open at a time.  Allocation failure is sticky (`oom`): calls
 * become no-ops and lv__fb_finish reports it.
 */
#ifndef LV_ARROW_FLATBUF_H
#define LV_ARROW_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t lv__fb_ref;

#define LV__FB_MAX_FIELDS 8

typedef struct lv__fb {
	uint8_t *buf;      /* bytes live in buf[cap - len, cap) */
	size_t cap, len;
	size_t minalign;
	bool oom;
	size_t table_start;
	lv__fb_ref field[LV__FB_MAX_FIELDS]; /* position of each field of the open table, 0 = unset */
	int nfields;
} lv__fb;

void lv__fb_init(lv__fb *b);
void lv__fb_dispose(lv__fb *b);

lv__fb_ref lv__fb_string(lv__fb *b, const char *s, size_t n);
/* A vector of `n` structs of `size` bytes each (already little-endian, in order). */
lv__fb_ref lv__fb_struct_vector(lv__fb *b, const void *elems, size_t n, size_t size, size_t align);
/* A vector of references to objects built before. */
lv__fb_ref lv__fb_ref_vector(lv__fb *b, const lv__fb_ref *refs, size_t n);

void lv__fb_table_start(lv__fb *b);
void lv__fb_add_u8(lv__fb *b, int id, uint8_t v);
void lv__fb_add_i16(lv__fb *b, int id, int16_t v);
void lv__fb_add_i32(lv__fb *b, int id, int32_t v);
void lv__fb_add_i64(lv__fb *b, int id, int64_t v);
void lv__fb_add_ref(lv__fb *b, int id, lv__fb_ref r);
lv__fb_ref lv__fb_table_end(lv__fb *b);

/* Finishes with `root` as the root table; data and size receive the buffer (owned by b). */
int lv__fb_finish(lv__fb *b, lv__fb_ref root, const uint8_t **data, size_t *size);

#endif
