/*
 * Small protobuf helpers of the Lance file decoders: find a field, read a oneof,
 * unwrap google.protobuf.Any.  Pure functions over bytes; malformed input is -1 or
 * LV_ECORRUPT, never a read past `n`.
 */
#include <string.h>

#include "lancefile/lf_internal.h"

int lv__lf_pb_find(const uint8_t *p, size_t n, uint32_t num, lv__pb_field *out)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 };
	int rc, found = 0;
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		if (f.num != num)
			continue;
		if (f.wire != LV_PB_LEN)
			return -1;
		*out = f; /* last one wins, as for a protobuf oneof / singular field */
		found = 1;
	}
	return rc < 0 ? -1 : found;
}

int lv__lf_oneof(const uint8_t *p, size_t n, lv__pb_field *out)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 };
	int rc, which = 0;
	while ((rc = lv__pb_next(&r, &f)) == 1)
		if (f.wire == LV_PB_LEN) {
			*out = f;
			which = (int)f.num;
		}
	return rc < 0 ? -1 : which;
}

int lv__lf_varint_field(const uint8_t *p, size_t n, uint32_t num, uint64_t *v)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 };
	int rc;
	while ((rc = lv__pb_next(&r, &f)) == 1)
		if (f.num == num && f.wire == LV_PB_VARINT)
			*v = f.u;
	return rc;
}

int lv__lf_has_field(const uint8_t *p, size_t n, uint32_t num)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f = { 0 };
	int rc, found = 0;
	while ((rc = lv__pb_next(&r, &f)) == 1)
		if (f.num == num)
			found = 1;
	return rc < 0 ? -1 : found;
}

int lv__lf_any_unwrap(const uint8_t *p, size_t n, const char *want_suffix, size_t wl,
		      const uint8_t **val, size_t *vlen, char *got_url, size_t got_cap)
{
	lv__pb r = lv__pb_make(p, n);
	lv__pb_field f;
	const uint8_t *url = NULL;
	size_t url_len = 0;
	int rc;
	*val = (const uint8_t *)"";
	*vlen = 0;
	got_url[0] = 0;
	while ((rc = lv__pb_next(&r, &f)) == 1) {
		if (f.wire != LV_PB_LEN)
			continue;
		if (f.num == 1) {
			url = f.data;
			url_len = f.len;
		} else if (f.num == 2) {
			*val = f.data;
			*vlen = f.len;
		}
	}
	if (rc < 0)
		return LV_ECORRUPT;
	/* only the part after the last '/' counts (as prost's Any::to_msg does): as the wanted
	 * name holds no '/', that is the URL ending in it, whole or after a '/' */
	if (url_len >= wl && memcmp(url + url_len - wl, want_suffix, wl) == 0 &&
	    (url_len == wl || url[url_len - wl - 1] == '/'))
		return 0;
	/* the URL, printable, for the caller's message (only on a mismatch: every page has one) */
	size_t k = url_len < got_cap - 1 ? url_len : got_cap - 1;
	for (size_t i = 0; i < k; i++)
		got_url[i] = (url[i] >= 0x20 && url[i] < 0x7f) ? (char)url[i] : '?';
	got_url[k] = 0;
	return LV_EUNSUPPORTED;
}

void lv__lf_load_le_n(const uint8_t *p, unsigned w, size_t n, uint64_t *out)
{
	switch (w) {
	case 8: for (size_t i = 0; i < n; i++) out[i] = lv__le64(p + 8 * i); break;
	case 4: for (size_t i = 0; i < n; i++) out[i] = lv__le32(p + 4 * i); break;
	case 2: for (size_t i = 0; i < n; i++) out[i] = lv__le16(p + 2 * i); break;
	case 1: for (size_t i = 0; i < n; i++) out[i] = p[i]; break;
	default: for (size_t i = 0; i < n; i++) out[i] = lv__lf_load_le(p + i * w, w); break;
	}
}

void lv__lf_load_flat(const uint8_t *p, unsigned bits, size_t n, uint64_t *out)
{
	if (bits != 1) {
		lv__lf_load_le_n(p, bits / 8, n, out);
		return;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (p[i / 8] >> (i % 8)) & 1;
}
