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

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Where the uuid's dashes are (36 characters). */
static bool dash_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

bool lv__txn_name_parse(const char *p, size_t n, lv__txn_name *out)
{
	size_t d = 0;
	uint64_t rv = 0;
	while (d < n && p[d] >= '0' && p[d] <= '9') {
		if (d == 20 || (d == 1 && p[0] == '0'))
			return false; /* too long, or a leading zero */
		uint64_t digit = (uint64_t)(p[d] - '0');
		if (rv > (UINT64_MAX - digit) / 10)
			return false;
		rv = rv * 10 + digit;
		d++;
	}
	/* "-" + 36 + ".txn"; UINT64_MAX is the array's "none" */
	if (d == 0 || rv == UINT64_MAX || n != d + 1 + 36 + 4 || p[d] != '-' ||
	    memcmp(p + n - 4, ".txn", 4))
		return false;
	const char *u = p + d + 1;
	size_t b = 0;
	for (size_t i = 0; i < 36;) {
		if (dash_at(i)) {
			if (u[i++] != '-')
				return false;
			continue;
		}
		int hi = hexval(u[i]), lo = hexval(u[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out->uuid[b++] = (uint8_t)(hi << 4 | lo);
		i += 2;
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
	for (size_t i = 0, b = 0; i < 36; i++) {
		if (dash_at(i)) {
			*o++ = '-';
			continue;
		}
		*o++ = hex[t->uuid[b] >> 4];
		*o++ = hex[t->uuid[b++] & 15];
		i++;
	}
	memcpy(o, ".txn", 5);
	return (size_t)(o + 4 - buf);
}
