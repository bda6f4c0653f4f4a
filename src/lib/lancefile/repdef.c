/*
 * Repetition/definition layers of a 2.1/2.2 page layout (the `layers` field, packed or
 * not): which layer kinds lancever decodes.  A leaf: the layouts (layout21.c, miniblock.c,
 * fullzip.c) call it, it calls none of them.
 */
#include "lancefile/lf_internal.h"

int lv__lf_parse_layers(lv__lf_dctx *c, const lv__pb_field *f, uint64_t *layer, int *nlayers)
{
	if (f->wire == LV_PB_VARINT) {
		*layer = f->u;
		(*nlayers)++;
		return 0;
	}
	if (f->wire != LV_PB_LEN)
		return LV__LF_CORRUPT(c, "malformed repdef layers");
	lv__pb r = lv__pb_make(f->data, f->len);
	while (!lv__pb_done(&r)) {
		if (!lv__pb_varint(&r, layer))
			return LV__LF_CORRUPT(c, "malformed repdef layers");
		(*nlayers)++;
	}
	return 0;
}

int lv__lf_check_layer(lv__lf_dctx *c, uint64_t layer, int nlayers)
{
	if (nlayers != 1 || (layer != 1 && layer != 3))
		return LV__LF_UNSUP(c, "unsupported repdef layers (nested or list column)");
	return 0;
}
