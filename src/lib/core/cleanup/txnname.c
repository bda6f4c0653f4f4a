/*
 * A transaction file's name in Lance's own form, "{read_version}-{uuid}.txn"
 * (decimal without leading zeros, the uuid in lowercase hex with its four
 * dashes), kept in 24 bytes so cleanup can hold one per old manifest.
 *
 * Invariant: a name is taken only if formatting it back gives the same bytes,
 * so the path cleanup looks up is exactly the one the manifest names.
 */
#include "core/cleanup/cleanup_int.h"

#include <string.h>

/* Where each uuid byte's two hex digits start in its 36 characters (the dashes at 8, 13, 18, 23). */
static const uint8_t at[16] = { 0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34 };

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool lv__txn_name_parse(const char *p, size_t n, lv__txn_name *out)
{
	size_t d = 0;
	uint64_t rv = 0;
	while (d < n && p[d] >= '0' && p[d] <= '9') {
		if (d == 20 || (d == 1 && p[0] == '0'))
			return false; /* too long, or a leading zero */
		uint64_t digit = (uint64_t)(p[d] - '0');
		if (d >= 19 && rv > (UINT64_MAX - digit) / 10)
			return false;
		rv = rv * 10 + digit;
		d++;
	}
	/* "-" + 36 + ".txn"; UINT64_MAX is the array's "none" */
	if (d == 0 || rv == UINT64_MAX || n != d + 1 + 36 + 4 || p[d] != '-' ||
	    memcmp(p + n - 4, ".txn", 4))
		return false;
	const char *u = p + d + 1;
	if (u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-')
		return false;
	for (size_t b = 0; b < 16; b++) {
		int hi = hexval(u[at[b]]), lo = hexval(u[at[b] + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out->uuid[b] = (uint8_t)(hi << 4 | lo);
	}
	out->rv = rv;
	return true;
}

size_t lv__txn_name_path(const lv__txn_name *t, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	char *o = buf;
	memcpy(o, "_transactions/", 14);
	o += 14;
	char digits[20];
	size_t nd = 0;
	uint64_t v = t->rv;
	do {
		digits[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (nd)
		*o++ = digits[--nd];
	*o++ = '-';
	memcpy(o, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", 36);
	for (size_t b = 0; b < 16; b++) {
		o[at[b]] = hex[t->uuid[b] >> 4];
		o[at[b] + 1] = hex[t->uuid[b] & 15];
	}
	o += 36;
	memcpy(o, ".txn", 5);
	return (size_t)(o + 4 - buf);
}
