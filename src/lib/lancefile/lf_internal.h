/*
 * Internals shared by the Lance v2 file writer, the reader and the page decoders.
 * Layout facts: docs/lance-reference.md, "Lance file format" (2.0, 2.1); 2.2 additions are
 * described where they are decoded (miniblock.c, layout21.c, general.c).
 *
 * Invariants of the decoders: every size, count and offset from the file is checked
 * before it is used or allocated; decompressed sizes are bounded (general.c) and
 * charged to one per-file budget; null rows hold 0 / empty values.
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

#define LV__LF_FOOTER_SIZE 40
#define LV__LF_ALIGN 64
#define LV__LF_PAD_BYTE 0x48
#define LV__LF_MAX_PAGE_BUFS 16
#define LV__LF_MAX_DEPTH 8
#define LV__LF_MAX_LIST_SIZE 65536 /* floats per vector */

/* Any type URLs, written the way Lance writes them (no domain). */
#define LV__LF_URL_COLUMN_ENCODING "/lance.encodings.ColumnEncoding"
#define LV__LF_URL_ARRAY_ENCODING "/lance.encodings.ArrayEncoding"
#define LV__LF_URL_PAGE_LAYOUT "/lance.encodings21.PageLayout"

/* A column being decoded: arrays sized for the whole file, filled page by page. */
typedef struct lv__lf_colbuf {
	int type;
	bool nullable;
	uint64_t *u64;   /* every fixed-width scalar (bit pattern; INT32/TIMESTAMP sign-extended) */
	uint8_t *bools;
	uint64_t *offs;  /* UTF8: nrows+1 */
	lv__dbuf data;    /* UTF8 bytes */
	float *f32;      /* FSL_FLOAT32: nrows * dim */
	uint32_t dim;    /* FSL_FLOAT32 list size */
	uint8_t *valid;  /* nullable columns only */
} lv__lf_colbuf;

/* Bytes that decompression may still produce for the whole file (general.c). */
typedef struct lv__lf_budget {
	uint64_t left;
} lv__lf_budget;

/* Decoder context for one page: names for errors plus the page's buffers. */
typedef struct lv__lf_dctx {
	const char *file;
	const char *col;
	size_t page;
	lv_error *err;
	int version; /* 20, 21 or 22 */
	size_t nbufs;
	const uint8_t *buf[LV__LF_MAX_PAGE_BUFS];
	size_t buflen[LV__LF_MAX_PAGE_BUFS];
	lv__lf_colbuf *cb;
	lv__lf_budget *budget;
	size_t row0;  /* first row of the page within the column */
	size_t nrows; /* rows in the page */
	struct lv__lf_mbcache *mbc; /* the read's last mini-block layout, or NULL (miniblock.c) */
} lv__lf_dctx;

/* "file F: column 'C' page P: <msg>" */
int lv__lf_perr(lv__lf_dctx *c, int code, const char *fmt, ...) LV_PRINTF(3, 4);
#define LV__LF_CORRUPT(c, ...) lv__lf_perr((c), LV_ECORRUPT, __VA_ARGS__)
#define LV__LF_UNSUP(c, ...) lv__lf_perr((c), LV_EUNSUPPORTED, __VA_ARGS__)
#define LV__LF_NOMEM(c) lv__lf_perr((c), LV_ENOMEM, "out of memory")

int lv__lf_decode_page20(lv__lf_dctx *c, const uint8_t *enc, size_t len);
int lv__lf_decode_page21(lv__lf_dctx *c, const uint8_t *enc, size_t len);

/* ---- column output (column.c) ---- */

/* Bytes per fixed-width value of a scalar column type (0: not a fixed scalar). */
unsigned lv__lf_type_width(int type);
/* Appends a string to column data, with the decoded-size cap enforced. */
int lv__lf_col_put_str(lv__lf_dctx *c, size_t row, const uint8_t *p, size_t n);
int lv__lf_col_put_null(lv__lf_dctx *c, size_t row);
/* Stores a fixed-width value (raw bits of the column's width) at row. */
void lv__lf_col_put_fixed(lv__lf_colbuf *b, size_t row, uint64_t v);

/* ---- little-endian loads and protobuf helpers (pbutil.c) ---- */

static inline uint64_t lv__lf_load_le(const uint8_t *p, unsigned bytes)
{
	switch (bytes) {
	case 8: return lv__le64(p);
	case 4: return lv__le32(p);
	case 2: return lv__le16(p);
	case 1: return p[0];
	default: break;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}
/* n values of width w (bytes) into out. */
void lv__lf_load_le_n(const uint8_t *p, unsigned w, size_t n, uint64_t *out);
/* n values of a flat buffer of `bits` per value: 1 is a bitmap (LSB first, values 0/1), else
 * little-endian words of bits/8 bytes.  The caller has checked p holds them. */
void lv__lf_load_flat(const uint8_t *p, unsigned bits, size_t n, uint64_t *out);

/* Finds the last LEN field `num` in a message; returns 1 found, 0 absent, -1 malformed. */
int lv__lf_pb_find(const uint8_t *p, size_t n, uint32_t num, lv__pb_field *out);
/* Number of the (last) LEN field of a oneof message: 0 none, -1 malformed. */
int lv__lf_oneof(const uint8_t *p, size_t n, lv__pb_field *out);
/* Last VARINT field `num` into *v (left alone when absent); <0 malformed. */
int lv__lf_varint_field(const uint8_t *p, size_t n, uint32_t num, uint64_t *v);
/* 1 if field `num` is present (any wire type), 0 absent, -1 malformed. */
int lv__lf_has_field(const uint8_t *p, size_t n, uint32_t num);
/* Unwraps google.protobuf.Any: checks the type-url's last segment is want_suffix (wl bytes,
 * no '/'), yields the value; on a mismatch (LV_EUNSUPPORTED) got_url holds the URL,
 * printable, for the message (else ""). */
int lv__lf_any_unwrap(const uint8_t *p, size_t n, const char *want_suffix, size_t wl,
		      const uint8_t **val, size_t *vlen, char *got_url, size_t got_cap);

/* ---- bit packing (bitpack.c) ---- */

/*
 * FastLanes unpacking of one 1024-value block packed at width w (0..t) from words of
 * t bits (8/16/32/64) into out[1024].  `in` holds 1024*w/t words (little endian).
 */
void lv__lf_fastlanes_unpack(unsigned t, unsigned w, const uint8_t *in, uint64_t *out);
/* Inline bitpacking (2.1): blocks of [width word][1024*width/t words]; cnt values out. */
int lv__lf_inline_bitpack(lv__lf_dctx *c, unsigned t, const uint8_t *p, size_t n, size_t cnt,
		      uint64_t *out);
/* Out-of-line bitpacking of width w in words of t bits; cnt values out. */
int lv__lf_ool_bitpack(lv__lf_dctx *c, unsigned t, unsigned w, const uint8_t *p, size_t n, size_t cnt,
		   uint64_t *out);

/* ---- 2.1/2.2 CompressiveEncoding trees (cenc.c) ---- */

enum {
	CE_FLAT = 1, CE_VARIABLE = 2, CE_CONSTANT = 3, CE_OOL_BITPACK = 4, CE_INLINE_BITPACK = 5,
	CE_FSST = 6, CE_DICTIONARY = 7, CE_RLE = 8, CE_BSS = 9, CE_GENERAL = 10, CE_FSL = 11,
	CE_PACKED_STRUCT = 12, CE_VAR_PACKED_STRUCT = 13
};
/* BufferCompression schemes (encodings_v2_1.proto CompressionScheme). */
enum { LV__LF_COMP_NONE = 0, LV__LF_COMP_LZ4 = 1, LV__LF_COMP_ZSTD = 2 };

#define LV__LF_CENC_MAX_NODES 12

/* One parsed CompressiveEncoding node; children are indexes into the tree (-1 none). */
typedef struct lv__lf_cenc {
	int kind;
	uint64_t bits;   /* flat/bitpacking: (uncompressed) bits per value */
	int scheme;      /* general: LF_COMP_* */
	int child[2];    /* variable: offsets; fsst/bss/general/fsl/ool: values; rle: values, lengths */
	const uint8_t *blob; /* fsst: symbol table; constant: value */
	size_t blob_len;
	uint64_t items;  /* fsl: items per value */
	bool has_validity; /* fsl */
} lv__lf_cenc;

typedef struct lv__lf_cenc_tree {
	lv__lf_cenc node[LV__LF_CENC_MAX_NODES];
	int n;
} lv__lf_cenc_tree;

const char *lv__lf_cenc_name(int kind);
/* Parses a CompressiveEncoding body into t; *root gets its node. */
int lv__lf_cenc_parse(lv__lf_dctx *c, const uint8_t *p, size_t n, lv__lf_cenc_tree *t, int *root);

/* ---- general-purpose buffer compression (general.c) ---- */

/*
 * Decompresses one Lance compressed buffer (zstd: u64 LE size + frame, or a bare
 * frame; lz4: u32 LE size + block) into a new allocation *out of *outlen bytes.
 * `expect` (0 = unknown) is the exact size the caller needs; the claimed size must
 * match it, stay under `cap` and fit the file's budget.
 */
int lv__lf_decompress(lv__lf_dctx *c, int scheme, const uint8_t *p, size_t n, size_t expect, size_t cap,
		  uint8_t **out, size_t *outlen);

/* ---- values of one mini-block chunk or block (values21.c) ---- */

/* A chunk's value buffers (mini-block: num_buffers of them). */
typedef struct lv__lf_bufs {
	const uint8_t *p[4];
	size_t n[4];
	size_t count;
	const uint64_t *def; /* fixed_size_list: the chunk's definition levels, or NULL */
} lv__lf_bufs;

/* Decoded variable-width values: cnt+1 offsets into bytes. */
typedef struct lv__lf_varvals {
	uint64_t *offs;
	const uint8_t *bytes;
	uint8_t *owned; /* decompressed / FSST-decoded bytes, freed by lv__lf_varvals_free */
	bool borrowed;  /* offs is the caller's scratch (not freed) */
} lv__lf_varvals;
void lv__lf_varvals_free(lv__lf_varvals *v);

/*
 * Fixed-width values: cnt values (cnt*items for FSL) of the node's width into out;
 * *width_bits gets the decoded width.  Mini-block chunk buffers (not dictionaries).
 */
int lv__lf_fixed_decode(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, lv__lf_bufs b, size_t cnt,
		    uint64_t *out, unsigned *width_bits);
/* Variable-width values (variable, fsst, general) of one chunk: cnt strings.  Offsets that
 * fit in scratch[scratch_n] (NULL, 0: none) are decoded there instead of an allocation. */
int lv__lf_var_decode(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, lv__lf_bufs b, size_t cnt,
		  lv__lf_varvals *out, uint64_t *scratch, size_t scratch_n);
/* Bits per value a fixed node decodes to (0 when not fixed-width). */
unsigned lv__lf_fixed_bits(const lv__lf_cenc_tree *t, int node);

/* A mini-block dictionary: fixed values or strings. */
typedef struct lv__lf_dict {
	size_t n;
	uint64_t *vals;   /* fixed */
	lv__lf_varvals str;   /* strings: n+1 offsets */
} lv__lf_dict;
int lv__lf_dict_load(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, const uint8_t *p, size_t n,
		 uint64_t items, lv__lf_dict *d);
void lv__lf_dict_free(lv__lf_dict *d);

/* FSST decompression of one string into the column at row (fsst.c). */
typedef struct lv__lf_fsst {
	bool on;
	unsigned nsym;
	uint64_t sym[256];
	uint8_t len[256];
} lv__lf_fsst;
int lv__lf_fsst_init(lv__lf_dctx *c, const uint8_t *t, size_t n, lv__lf_fsst *f);
/* Decodes one FSST string, appending to d (bounded by d's limit). */
int lv__lf_fsst_decode(lv__lf_dctx *c, const lv__lf_fsst *f, const uint8_t *in, size_t n, lv__dbuf *d);

/* ---- page layouts (miniblock.c, fullzip.c, layout21.c) ---- */

/* A parsed MiniBlockLayout: a pure function of its bytes (checks against the page, such as
 * num_items against the page's rows, are made for every page). */
typedef struct lv__lf_mblayout {
	lv__lf_cenc_tree def, val, dict;
	int def_root, val_root, dict_root; /* -1 when absent */
	uint64_t nitems, nbuf, ndict;
	bool large;
} lv__lf_mblayout;

/*
 * The last mini-block layout a read parsed without error, with its bytes: a page whose
 * layout has the same bytes (a file's columns of one type usually do) takes it as it is
 * instead of parsing them again.  The bytes are the file's, alive for the whole read.
 */
typedef struct lv__lf_mbcache {
	const uint8_t *p; /* NULL: empty */
	size_t n;
	lv__lf_mblayout m;
} lv__lf_mbcache;

int lv__lf_parse_layers(lv__lf_dctx *c, const lv__pb_field *f, uint64_t *layer, int *nlayers);
int lv__lf_check_layer(lv__lf_dctx *c, uint64_t layer, int nlayers);
int lv__lf_miniblock(lv__lf_dctx *c, const uint8_t *p, size_t n);
int lv__lf_fullzip(lv__lf_dctx *c, const uint8_t *p, size_t n);
/* Definition level of item i: 0 valid (returns 0), 1 null (stores it, returns 1), else <0. */
int lv__lf_def_null(lv__lf_dctx *c, size_t row, const uint64_t *def, size_t i);

#endif
