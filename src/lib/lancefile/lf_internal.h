/*
 * Internals shared by the Lance v2 file writer, the reader and the page decoders.
 * Layout facts: /work/shared/reference/LANCE-FILE-V2.md.
 */
#ifndef LV_LANCEFILE_INTERNAL_H
#define LV_LANCEFILE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "lancever/lancefile.h"
#include "util/util.h"
#include "wire/pb.h"

#define LF_FOOTER_SIZE 40
#define LF_ALIGN 64
#define LF_PAD_BYTE 0x48
#define LF_MAX_PAGE_BUFS 16

/* Any type URLs, written the way Lance writes them (no domain). */
#define LF_URL_COLUMN_ENCODING "/lance.encodings.ColumnEncoding"
#define LF_URL_ARRAY_ENCODING "/lance.encodings.ArrayEncoding"
#define LF_URL_PAGE_LAYOUT "/lance.encodings21.PageLayout"

/* A column being decoded: arrays sized for the whole file, filled page by page. */
typedef struct lf_colbuf {
	int type;
	bool nullable;
	uint64_t *u64;   /* UINT64 and INT64 (bit pattern) */
	uint8_t *bools;
	uint64_t *offs;  /* UTF8: nrows+1 */
	lv_dbuf data;    /* UTF8 bytes */
	uint8_t *valid;  /* nullable columns only */
} lf_colbuf;

/* Decoder context for one page: names for errors plus the page's buffers. */
typedef struct lf_dctx {
	const char *file;
	const char *col;
	size_t page;
	lv_error *err;
	int version; /* 20 or 21 */
	size_t nbufs;
	const uint8_t *buf[LF_MAX_PAGE_BUFS];
	size_t buflen[LF_MAX_PAGE_BUFS];
	lf_colbuf *cb;
	size_t row0;  /* first row of the page within the column */
	size_t nrows; /* rows in the page */
} lf_dctx;

/* "file F: column 'C' page P: <msg>" */
int lf_perr(lf_dctx *c, int code, const char *fmt, ...) LV_PRINTF(3, 4);

int lf_decode_page20(lf_dctx *c, const uint8_t *enc, size_t len);
int lf_decode_page21(lf_dctx *c, const uint8_t *enc, size_t len);

/* Appends a string to column data, with the decoded-size cap enforced. */
int lf_col_put_str(lf_dctx *c, size_t row, const uint8_t *p, size_t n);
int lf_col_put_null(lf_dctx *c, size_t row);

/*
 * FastLanes unpacking of one 1024-value block packed at width w (0..t) from words of
 * t bits (8/16/32/64) into out[1024].  `in` holds 1024*w/t words (little endian).
 */
void lf_fastlanes_unpack(unsigned t, unsigned w, const uint8_t *in, uint64_t *out);

/* Finds the first LEN field `num` in a message; returns 1 found, 0 absent, -1 malformed. */
int lf_pb_find(const uint8_t *p, size_t n, uint32_t num, lv_pb_field *out);
/* Unwraps google.protobuf.Any: checks the type-url suffix, yields the value. */
int lf_any_unwrap(const uint8_t *p, size_t n, const char *want_suffix, const uint8_t **val,
		  size_t *vlen, char *got_url, size_t got_cap);

#endif
