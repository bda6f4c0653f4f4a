/*
 * 2.1/2.2 page layouts (PageLayout oneof): mini-block (miniblock.c), full-zip
 * (fullzip.c) and field 2, which is AllNullLayout in 2.1 and ConstantLayout in 2.2:
 *   5 layers, 6 inline_value (<= 32 bytes, fixed-width types), 7/8 rep/def compression,
 *   9/10 rep/def value counts.
 * An all-null page has no value.  A constant page without an inline value keeps the
 * value in page buffer 0 as a one-row array: u32 buffer count, u32 size of each, then
 * the buffers (a Utf8 value: two u32 offsets, then the bytes) [observed, Lance 12.0.0].
 * A 2.2 constant page of a nullable column with some rows null (Lance 14.0.2) keeps,
 * after the value buffer if there is one, two more page buffers: repetition levels
 * (empty: flat columns) and definition levels, one u16 per row (0 valid, 1 null),
 * uncompressed, with rep/def compression and value counts left unset [observed].  Levels
 * in any other form (compressed, counted) are refused as unsupported.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

/* A one-row Utf8 array in a page buffer: [u32 2][u32 8][u32 n][u32 0][u32 n][bytes]. */
static int const_string(lv__lf_dctx *c, const uint8_t **s, size_t *len)
{
	const uint8_t *p = c->nbufs ? c->buf[0] : NULL;
	size_t n = c->nbufs ? c->buflen[0] : 0;
	if (n < 12 || lv__le32(p) != 2 || lv__le32(p + 4) != 8)
		return LV__LF_UNSUP(c, "unsupported constant value buffer");
	uint64_t dl = lv__le32(p + 8);
	if (dl != n - 20 || n < 20 || lv__le32(p + 12) != 0 || lv__le32(p + 16) != dl)
		return LV__LF_CORRUPT(c, "constant string value of inconsistent sizes");
	*s = p + 20;
	*len = (size_t)dl;
	return 0;
}

/*
 * The definition levels of a 2.2 constant page: page buffers first+0 (repetition, must
 * be empty) and first+1 (u16 per row, or empty / absent when every row is valid).
 * *def is NULL when every row is valid; each level is checked to be 0 or 1.
 */
static int def_levels(lv__lf_dctx *c, size_t first, const uint8_t **def)
{
	*def = NULL;
	if (c->nbufs <= first)
		return 0;
	if (c->buflen[first] != 0)
		return LV__LF_UNSUP(c, "unsupported constant layout with repetition levels");
	if (c->nbufs <= first + 1 || c->buflen[first + 1] == 0)
		return 0;
	const uint8_t *p = c->buf[first + 1];
	if (c->buflen[first + 1] / 2 != c->nrows || c->buflen[first + 1] % 2)
		return LV__LF_UNSUP(c, "unsupported constant layout definition levels of %zu bytes for %zu rows",
				c->buflen[first + 1], c->nrows);
	for (size_t i = 0; i < c->nrows; i++)
		if (lv__le16(p + 2 * i) > 1)
			return LV__LF_CORRUPT(c, "definition level %u in a flat column", lv__le16(p + 2 * i));
	*def = p;
	return 0;
}

static int constant(lv__lf_dctx *c, const uint8_t *p, size_t n)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field g = { 0 }, val = { 0 };
	int rc, nlayers = 0;
	bool have_val = false, levels = false;
	uint64_t layer = 0;
	while ((rc = lv__pb_next(&r, &g)) == 1) {
		if (g.num == 5)
			LV_TRY(lv__lf_parse_layers(c, &g, &layer, &nlayers));
		else if (g.num == 6 && g.wire == LV_PB_LEN)
			val = g, have_val = true;
		else if (g.num >= 7 && g.num <= 10)
			levels = levels || g.wire == LV_PB_LEN || g.u != 0;
	}
	if (rc < 0)
		return LV__LF_CORRUPT(c, "malformed constant layout");
	LV_TRY(lv__lf_check_layer(c, layer, nlayers));
	if (levels)
		return LV__LF_UNSUP(c, "unsupported constant layout with definition levels");
	lv__lf_colbuf *b = c->cb;
	bool all_null = layer == 3 && !have_val && (c->version < LV_LANCEFILE_V2_2 || c->nbufs == 0);
	const uint8_t *def = NULL;
	if (!all_null && c->version >= LV_LANCEFILE_V2_2 && layer == 3)
		LV_TRY(def_levels(c, have_val ? 0 : 1, &def));
	if (all_null || (c->version < LV_LANCEFILE_V2_2 && layer == 3)) {
		for (size_t i = 0; i < c->nrows; i++)
			LV_TRY(lv__lf_col_put_null(c, c->row0 + i));
		return 0;
	}
	if (c->version < LV_LANCEFILE_V2_2)
		return LV__LF_UNSUP(c, "unsupported all-null layout layers");
	if (b->type == LV_COL_UTF8) {
		const uint8_t *s = NULL;
		size_t len = 0;
		if (have_val)
			return LV__LF_UNSUP(c, "unsupported inline constant for a string column");
		LV_TRY(const_string(c, &s, &len));
		for (size_t i = 0; i < c->nrows; i++)
			LV_TRY(def && lv__le16(def + 2 * i) ? lv__lf_col_put_null(c, c->row0 + i)
							     : lv__lf_col_put_str(c, c->row0 + i, s, len));
		return 0;
	}
	size_t w = b->type == LV_COL_BOOL ? 1 : lv__lf_type_width(b->type);
	if (!have_val || !w || val.len != w)
		return LV__LF_UNSUP(c, "unsupported constant of %zu bytes for this column type",
				have_val ? val.len : (size_t)0);
	uint64_t v = lv__lf_load_le(val.data, (unsigned)w);
	for (size_t i = 0; i < c->nrows; i++) {
		if (def && lv__le16(def + 2 * i))
			LV_TRY(lv__lf_col_put_null(c, c->row0 + i));
		else
			lv__lf_col_put_fixed(b, c->row0 + i, v);
	}
	return 0;
}

int lv__lf_decode_page21(lv__lf_dctx *c, const uint8_t *enc, size_t len)
{
	static const char *const layouts[] = { "?", "mini_block", "constant", "full_zip", "blob",
					       "delta_blob" };
	lv__pb_field f = { 0 };
	int k = lv__lf_oneof(enc, len, &f);
	if (k < 0)
		return LV__LF_CORRUPT(c, "malformed page layout");
	if (k == 1)
		return lv__lf_miniblock(c, f.data, f.len);
	if (k == 3)
		return lv__lf_fullzip(c, f.data, f.len);
	if (k == 2)
		return constant(c, f.data, f.len);
	if (k == 0)
		return LV__LF_CORRUPT(c, "page layout without a layout");
	return LV__LF_UNSUP(c, "unsupported page layout '%s'",
			k < (int)(sizeof layouts / sizeof layouts[0]) ? layouts[k] : "unknown");
}
