/*
 * Mini-block dictionaries (MiniBlockLayout.dictionary, page buffer 2), decoded as one
 * block: fixed-width items (flat, inline bitpacking) or strings in Lance's binary
 * block layout (bits_per_offset, bytes_start, n+1 offsets relative to bytes_start, all
 * words of bits_per_offset bits: 32 for string, 64 for large_string [observed, Lance
 * 14.0.2], then the bytes), either possibly wrapped in general (zstd/lz4) compression.  The item count is bounded by the block's size before anything is
 * allocated.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

#define DICT_CAP ((size_t)1 << 30)

void lv__lf_dict_free(lv__lf_dict *d)
{
	lv__free(d->vals);
	lv__lf_varvals_free(&d->str);
	memset(d, 0, sizeof *d);
}

static int binary_block(lv__lf_dctx *c, const uint8_t *p, size_t n, lv__lf_dict *d)
{
	unsigned w = n >= 8 && lv__le32(p) == 32 ? 4 : n >= 16 && lv__le64(p) == 64 ? 8 : 0;
	if (!w)
		return LV__LF_UNSUP(c, "unsupported dictionary block layout");
	uint64_t start = lv__lf_load_le(p + w, w);
	if (start > n || (n - 2 * w) / w < d->n + 1 || start < w * (2 + (uint64_t)d->n + 1))
		return LV__LF_CORRUPT(c, "dictionary block offsets out of range");
	d->str.offs = lv__calloc(d->n + 1, sizeof *d->str.offs);
	if (!d->str.offs)
		return LV__LF_NOMEM(c);
	d->str.bytes = p + start;
	uint64_t room = n - start;
	lv__lf_load_le_n(p + 2 * w, w, d->n + 1, d->str.offs);
	for (size_t i = 0; i <= d->n; i++)
		if (d->str.offs[i] > room || (i && d->str.offs[i] < d->str.offs[i - 1]))
			return LV__LF_CORRUPT(c, "dictionary offsets out of order or past the block");
	return 0;
}

static int load(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, const uint8_t *p, size_t n,
		lv__lf_dict *d)
{
	const lv__lf_cenc *e = &t->node[node];
	bool strings = c->cb->type == LV_COL_UTF8;
	if (e->kind == CE_GENERAL) {
		uint8_t *u;
		size_t len;
		LV_TRY(lv__lf_decompress(c, e->scheme, p, n, 0, DICT_CAP, &u, &len));
		int rc = load(c, t, e->child[0], u, len, d);
		if (rc == 0 && strings && !d->str.owned)
			d->str.owned = u; /* the string offsets point into it */
		else
			lv__free(u);
		return rc;
	}
	if (strings) {
		if (e->kind != CE_VARIABLE)
			return LV__LF_UNSUP(c, "unsupported string dictionary encoding '%s'",
					lv__lf_cenc_name(e->kind));
		return binary_block(c, p, n, d);
	}
	if (e->kind != CE_FLAT && e->kind != CE_INLINE_BITPACK)
		return LV__LF_UNSUP(c, "unsupported dictionary encoding '%s'", lv__lf_cenc_name(e->kind));
	if (e->kind == CE_FLAT && e->bits / 8 * (uint64_t)d->n > n)
		return LV__LF_CORRUPT(c, "dictionary of %zu items in %zu bytes", d->n, n);
	d->vals = lv__calloc(d->n ? d->n : 1, sizeof *d->vals);
	if (!d->vals)
		return LV__LF_NOMEM(c);
	lv__lf_bufs b = { .p = { p }, .n = { n }, .count = 1 };
	unsigned bits;
	return lv__lf_fixed_decode(c, t, node, b, d->n, d->vals, &bits);
}

int lv__lf_dict_load(lv__lf_dctx *c, const lv__lf_cenc_tree *t, int node, const uint8_t *p, size_t n,
		 uint64_t items, lv__lf_dict *d)
{
	memset(d, 0, sizeof *d);
	/* a page dictionary holds at most the page's values; an uncompressed one at most
	 * one item per bit of the block */
	uint64_t room = t->node[node].kind == CE_GENERAL ? (uint64_t)c->nrows + 1 : (uint64_t)n * 8 + 1;
	if (items > room)
		return LV__LF_CORRUPT(c, "dictionary of %llu items in %zu bytes",
				  (unsigned long long)items, n);
	d->n = (size_t)items;
	int rc = load(c, t, node, p, n, d);
	if (rc)
		lv__lf_dict_free(d);
	return rc;
}
