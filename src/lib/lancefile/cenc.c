/*
 * Parses a 2.1/2.2 CompressiveEncoding (encodings_v2_1.proto) into a small tree of
 * nodes, validated once so the decoders can trust its shape: widths are ones we
 * decode, required children are present, nesting is bounded (LV__LF_MAX_DEPTH) and the
 * tree never exceeds LV__LF_CENC_MAX_NODES.  Kinds we know but do not decode are
 * LV_EUNSUPPORTED naming the kind.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

const char *lv__lf_cenc_name(int kind)
{
	static const char *const names[] = {
		"?", "flat", "variable", "constant", "out_of_line_bitpacking", "inline_bitpacking",
		"fsst", "dictionary", "rle", "byte_stream_split", "general", "fixed_size_list",
		"packed_struct", "variable_packed_struct"
	};
	return kind > 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "unknown";
}

static bool word_bits(uint64_t b) { return b == 8 || b == 16 || b == 32 || b == 64; }

static int parse_node(lv__lf_dctx *c, const uint8_t *p, size_t n, lv__lf_cenc_tree *t, int depth);

/* Parses sub-message field `num` of m as a child node; absent is corrupt. */
static int child(lv__lf_dctx *c, const lv__pb_field *m, uint32_t num, lv__lf_cenc_tree *t, int depth,
		 const char *what)
{
	lv__pb_field g = { 0 };
	int k = lv__lf_pb_find(m->data, m->len, num, &g);
	if (k != 1)
		return LV__LF_CORRUPT(c, "compressive encoding without its %s encoding", what);
	return parse_node(c, g.data, g.len, t, depth + 1);
}

/* BufferCompression{1 scheme, 2 level} g (NULL: absent) -> LF_COMP_*; unknown schemes are
 * unsupported. */
static int scheme_of(lv__lf_dctx *c, const lv__pb_field *g, int *scheme)
{
	uint64_t s = 0;
	*scheme = LV__LF_COMP_NONE;
	if (!g)
		return 0;
	if (lv__lf_varint_field(g->data, g->len, 1, &s) < 0)
		return LV__LF_CORRUPT(c, "malformed buffer compression");
	if (s != LV__LF_COMP_LZ4 && s != LV__LF_COMP_ZSTD)
		return LV__LF_UNSUP(c, "unsupported compression scheme %llu", (unsigned long long)s);
	*scheme = (int)s;
	return 0;
}

/* The BufferCompression in field `num` of m (see scheme_of). */
static int parse_scheme(lv__lf_dctx *c, const lv__pb_field *m, uint32_t num, int *scheme)
{
	lv__pb_field g = { 0 };
	int k = lv__lf_pb_find(m->data, m->len, num, &g);
	*scheme = LV__LF_COMP_NONE;
	if (k < 0)
		return LV__LF_CORRUPT(c, "malformed buffer compression");
	return scheme_of(c, k ? &g : NULL, scheme);
}

/*
 * Flat / inline bitpacking {1 bits_per_value, 2 BufferCompression}, the most common node,
 * in one pass (what lv__lf_varint_field and parse_scheme would find in two): the last
 * varint 1 is the width; a field 2 that is not a message is a malformed compression.
 */
static int flat_fields(lv__lf_dctx *c, const lv__pb_field *m, lv__lf_cenc *e, int *scheme)
{
	lv__pb r = lv__pb_sub(m);
	lv__pb_field f, comp = { 0 };
	bool have = false, bad = false;
	int rc;
	*scheme = LV__LF_COMP_NONE;
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		if (f.num == 1 && f.wire == LV_PB_VARINT)
			e->bits = f.u;
		else if (f.num == 2 && f.wire != LV_PB_LEN)
			bad = true;
		else if (f.num == 2)
			comp = f, have = true;
	}
	if (rc < 0)
		return LV__LF_CORRUPT(c, "malformed %s encoding", lv__lf_cenc_name(e->kind));
	if (bad)
		return LV__LF_CORRUPT(c, "malformed buffer compression");
	return scheme_of(c, have ? &comp : NULL, scheme);
}

/* Kind-specific fields of node i (message m); children parsed recursively. */
static int parse_kind(lv__lf_dctx *c, const lv__pb_field *m, lv__lf_cenc_tree *t, int i, int depth)
{
	lv__lf_cenc *e = &t->node[i];
	int k, scheme;
	switch (e->kind) {
	case CE_FLAT:
	case CE_INLINE_BITPACK:
		LV_TRY(flat_fields(c, m, e, &scheme));
		if (scheme)
			return LV__LF_UNSUP(c, "unsupported %s with buffer compression",
					lv__lf_cenc_name(e->kind));
		if (!word_bits(e->bits) && !(e->kind == CE_FLAT && e->bits == 1))
			return LV__LF_UNSUP(c, "unsupported %s of %llu bits", lv__lf_cenc_name(e->kind),
					(unsigned long long)e->bits);
		return 0;
	case CE_VARIABLE:
		LV_TRY(parse_scheme(c, m, 2, &scheme));
		if (scheme)
			return LV__LF_UNSUP(c, "unsupported variable values compression");
		LV_TRY(k = child(c, m, 1, t, depth, "offsets"));
		if (t->node[k].kind != CE_FLAT || (t->node[k].bits != 32 && t->node[k].bits != 64))
			return LV__LF_UNSUP(c, "unsupported variable offsets encoding '%s'",
					lv__lf_cenc_name(t->node[k].kind));
		t->node[i].child[0] = k;
		t->node[i].bits = t->node[k].bits;
		return 0;
	case CE_CONSTANT: {
		lv__pb_field g = { 0 };
		if (lv__lf_pb_find(m->data, m->len, 1, &g) < 0)
			return LV__LF_CORRUPT(c, "malformed constant encoding");
		e->blob = g.data;
		e->blob_len = g.len;
		return 0;
	}
	case CE_OOL_BITPACK:
		if (lv__lf_varint_field(m->data, m->len, 1, &e->bits) < 0)
			return LV__LF_CORRUPT(c, "malformed out_of_line_bitpacking");
		if (!word_bits(e->bits))
			return LV__LF_UNSUP(c, "unsupported out_of_line_bitpacking width %llu",
					(unsigned long long)e->bits);
		LV_TRY(k = child(c, m, 3, t, depth, "values"));
		if (t->node[k].kind != CE_FLAT)
			return LV__LF_UNSUP(c, "unsupported out_of_line_bitpacking values encoding '%s'",
					lv__lf_cenc_name(t->node[k].kind));
		if (t->node[k].bits > t->node[i].bits)
			return LV__LF_CORRUPT(c, "out_of_line_bitpacking width %llu over %llu",
					  (unsigned long long)t->node[k].bits,
					  (unsigned long long)t->node[i].bits);
		t->node[i].child[0] = k;
		return 0;
	case CE_FSST: {
		lv__pb_field st = { 0 };
		if (lv__lf_pb_find(m->data, m->len, 1, &st) != 1)
			return LV__LF_CORRUPT(c, "fsst without a symbol table");
		e->blob = st.data;
		e->blob_len = st.len;
		LV_TRY(k = child(c, m, 2, t, depth, "values"));
		if (t->node[k].kind != CE_VARIABLE)
			return LV__LF_UNSUP(c, "unsupported fsst inner encoding '%s'",
					lv__lf_cenc_name(t->node[k].kind));
		t->node[i].child[0] = k;
		return 0;
	}
	case CE_RLE:
		LV_TRY(k = child(c, m, 1, t, depth, "values"));
		t->node[i].child[0] = k;
		LV_TRY(k = child(c, m, 2, t, depth, "run lengths"));
		t->node[i].child[1] = k;
		if (t->node[t->node[i].child[0]].kind != CE_FLAT || t->node[k].kind != CE_FLAT ||
		    t->node[k].bits != 8 || !word_bits(t->node[t->node[i].child[0]].bits))
			return LV__LF_UNSUP(c, "unsupported rle values or run lengths encoding");
		return 0;
	case CE_BSS:
		LV_TRY(k = child(c, m, 1, t, depth, "values"));
		if (t->node[k].kind != CE_FLAT || !word_bits(t->node[k].bits))
			return LV__LF_UNSUP(c, "unsupported byte_stream_split values encoding '%s'",
					lv__lf_cenc_name(t->node[k].kind));
		t->node[i].child[0] = k;
		return 0;
	case CE_GENERAL:
		LV_TRY(parse_scheme(c, m, 1, &scheme));
		if (!scheme)
			return LV__LF_CORRUPT(c, "general compression without a scheme");
		e->scheme = scheme;
		LV_TRY(k = child(c, m, 3, t, depth, "values"));
		t->node[i].child[0] = k;
		return 0;
	case CE_FSL: {
		uint64_t hv = 0;
		if (lv__lf_varint_field(m->data, m->len, 1, &e->items) < 0 ||
		    lv__lf_varint_field(m->data, m->len, 3, &hv) < 0)
			return LV__LF_CORRUPT(c, "malformed fixed_size_list encoding");
		e->has_validity = hv != 0;
		if (e->items == 0 || e->items > LV__LF_MAX_LIST_SIZE)
			return LV__LF_UNSUP(c, "unsupported fixed_size_list of %llu items",
					(unsigned long long)e->items);
		LV_TRY(k = child(c, m, 2, t, depth, "values"));
		if (t->node[k].kind != CE_FLAT || t->node[k].bits < 8)
			return LV__LF_UNSUP(c, "unsupported fixed_size_list values encoding '%s'",
					lv__lf_cenc_name(t->node[k].kind));
		t->node[i].child[0] = k;
		return 0;
	}
	default:
		return LV__LF_UNSUP(c, "unsupported compressive encoding '%s'", lv__lf_cenc_name(e->kind));
	}
}

static int parse_node(lv__lf_dctx *c, const uint8_t *p, size_t n, lv__lf_cenc_tree *t, int depth)
{
	lv__pb_field f = { 0 };
	if (depth > LV__LF_MAX_DEPTH)
		return LV__LF_CORRUPT(c, "compressive encoding nested too deeply");
	if (t->n >= LV__LF_CENC_MAX_NODES)
		return LV__LF_UNSUP(c, "compressive encoding with more than %d nodes", LV__LF_CENC_MAX_NODES);
	int k = lv__lf_oneof(p, n, &f);
	if (k < 0)
		return LV__LF_CORRUPT(c, "malformed compressive encoding");
	if (k == 0)
		return LV__LF_CORRUPT(c, "empty compressive encoding");
	int i = t->n++;
	memset(&t->node[i], 0, sizeof t->node[i]);
	t->node[i].kind = k;
	t->node[i].child[0] = t->node[i].child[1] = -1;
	LV_TRY(parse_kind(c, &f, t, i, depth));
	return i;
}

int lv__lf_cenc_parse(lv__lf_dctx *c, const uint8_t *p, size_t n, lv__lf_cenc_tree *t, int *root)
{
	t->n = 0;
	int r = parse_node(c, p, n, t, 0);
	if (r < 0)
		return r;
	*root = r;
	return 0;
}
