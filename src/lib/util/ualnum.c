/*
 * Unicode alphanumerics as Rust's char::is_alphanumeric defines them (the Alphabetic property,
 * or General_Category Nd/Nl/No): Lance accepts exactly these, plus '.', '-' and '_', in a
 * branch-name segment (format/refs.c).  The ranges are generated (gen_ualnum.pl, from perl's
 * Unicode database; its version is LV__UALNUM_UNICODE); code points assigned in a later Unicode
 * version than the table's are refused.
 *
 * Invariant: lv__ualnum_ranges is sorted, its ranges disjoint and inclusive.
 */
#include <stdint.h>

#include "util/util.h"
#include "util/ualnum_table.h"

bool lv__unicode_alnum(uint32_t cp)
{
	if (cp < 0x80)
		return (cp >= '0' && cp <= '9') || ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z');
	size_t lo = 0, hi = LV__UALNUM_NRANGES; /* the first range ending at or after cp */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (lv__ualnum_ranges[mid][1] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < LV__UALNUM_NRANGES && lv__ualnum_ranges[lo][0] <= cp;
}
