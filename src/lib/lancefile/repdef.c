/*
 * Repetition/definition layers of a 2.1/2.2 page layout (the `layers` field, packed or
 * not): which layer kinds lancever decodes.  A leaf: the layouts (layout21.c, miniblock.c,
 * fullzip.c) call it, it calls none of them.
 */
#include "lancefile/lf_internal.h"

int lf_parse_layers(lf_dctx *c, const lv_pb_field *f, uint64_t *layer, int *nlayers)
{
	if (f->wire == LV_PB_VARINT) {
		*layer = f->u;
		(*nlayers)++;
		return 0;
	}
	if (f->wire != LV_PB_LEN)
		return LF_CORRUPT(c, "malformed repdef layers");
	lv_pb r = lv_pb_make(f->data, f->len);
	while (!lv_pb_done(&r)) {
		if (!lv_pb_varint(&r, layer))
			return LF_CORRUPT(c, "malformed repdef layers");
		(*nlayers)++;
	}
	return 0;
}

int lf_check_layer(lf_dctx *c, uint64_t layer, int nlayers)
{
	if (nlayers != 1 || (layer != 1 && layer != 3))
		return LF_UNSUP(c, "unsupported repdef layers (nested or list column)");
	return 0;
}
