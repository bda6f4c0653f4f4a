/*
 * libFuzzer target: lv_parse_time and lv_parse_duration (src/lib/util/timeparse.c).
 *
 * The input (cut at 256 bytes and at its first NUL) is parsed as a time and
 * as a duration.  Properties:
 *   time:     an accepted value formats as milliseconds (when >= 0) and as
 *             ISO 8601 UTC with milliseconds (when its year is 0000-9999),
 *             and both forms parse back to the same value; an accepted ISO
 *             form stays within years -1..10000 (offsets move it by < 1 day);
 *   duration: an accepted value is >= 0, "<n>ms" and the w/d/h/m/s/ms
 *             decomposition parse back to it, and the input repeated twice
 *             parses to twice the value (or is refused on overflow).
 * Rejections must set a message; nothing may crash.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lancever/common.h"

#define FUZZ_NAME "timeparse_fuzz"
#include "fuzz.h"

#define DAY_MS 86400000LL

/* Days since 1970-01-01 -> proleptic Gregorian y-m-d. */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;                                  /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);           /* [0, 365] */
	int64_t mp = (5 * doy + 2) / 153;                                /* [0, 11] */
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ISO 8601 UTC with milliseconds; false if the year is outside 0000-9999. */
static bool format_iso(int64_t ms, char *buf, size_t cap)
{
	int64_t days = floordiv(ms, DAY_MS);
	int64_t rem = ms - days * DAY_MS;
	int64_t y;
	int m, d;
	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		return false;
	snprintf(buf, cap, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d,
		 (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
		 (int)(rem % 1000));
	return true;
}

static void check_time(const char *s)
{
	int64_t ms;
	lv_error err = { 0 };
	if (lv_parse_time(s, &ms, &err) != 0) {
		CHECK(err.code == LV_EINVALID && err.message[0]);
		return;
	}
	char buf[64];
	int64_t back;
	if (ms >= 0) {
		snprintf(buf, sizeof buf, "%" PRId64, ms);
		CHECK(lv_parse_time(buf, &back, &err) == 0 && back == ms);
	}
	/* any other form (ISO 8601, "now", "3 days ago") lies in years 0000-9999, give or take a
	 * day; milliseconds, also after "@", may be anything in int64 */
	const char *num = s[0] == '@' ? s + 1 : s;
	bool digits_only = num[0] != 0;
	for (const char *p = num; *p; p++)
		if (*p < '0' || *p > '9')
			digits_only = false;
	if (!digits_only) {
		const int64_t lo = -62167219200000LL - DAY_MS;  /* 0000-01-01 minus a day */
		const int64_t hi = 253402300800000LL + DAY_MS;  /* 10000-01-01 plus a day */
		CHECK(ms >= lo && ms <= hi);
	}
	if (format_iso(ms, buf, sizeof buf)) {
		CHECK(lv_parse_time(buf, &back, &err) == 0);
		CHECK(back == ms);
	}
}

static void check_duration(const char *s, size_t n)
{
	int64_t v;
	lv_error err = { 0 };
	if (lv_parse_duration(s, &v, &err) != 0) {
		CHECK(err.code == LV_EINVALID && err.message[0]);
		return;
	}
	CHECK(v >= 0);
	char buf[128];
	int64_t back;
	snprintf(buf, sizeof buf, "%" PRId64 "ms", v);
	CHECK(lv_parse_duration(buf, &back, &err) == 0 && back == v);
	/* w/d/h/m/s/ms decomposition */
	static const struct { int64_t unit; const char *sfx; } u[] = {
		{ 7 * DAY_MS, "w" }, { DAY_MS, "d" }, { 3600000, "h" },
		{ 60000, "m" }, { 1000, "s" }, { 1, "ms" },
	};
	size_t len = 0;
	int64_t left = v;
	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
		int64_t q = left / u[i].unit;
		left -= q * u[i].unit;
		if (q)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%" PRId64 "%s", q, u[i].sfx);
	}
	if (!len)
		snprintf(buf, sizeof buf, "0s");
	CHECK(lv_parse_duration(buf, &back, &err) == 0 && back == v);
	/* sums: the input twice is twice the value -- or one more: sub-millisecond spans (us, ns)
	 * are summed before the truncation to ms, so two 922us make 1 ms where one makes 0 */
	char *twice = malloc(2 * n + 1);
	CHECK(twice != NULL);
	memcpy(twice, s, n);
	memcpy(twice + n, s, n);
	twice[2 * n] = 0;
	int64_t dbl;
	int rc = lv_parse_duration(twice, &dbl, &err);
	if (v <= INT64_MAX / 2) /* 2v + 1 <= INT64_MAX */
		CHECK(rc == 0 && (dbl == 2 * v || dbl == 2 * v + 1));
	else
		CHECK(rc != 0);
	free(twice);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < 256 ? size : 256;
	char *s = malloc(n + 1);
	if (!s)
		return 0;
	memcpy(s, data, n);
	s[n] = 0;
	n = strlen(s);
	check_time(s);
	check_duration(s, n);
	/* NULL arguments are refused, not dereferenced */
	lv_error err = { 0 };
	int64_t v;
	CHECK(lv_parse_time(NULL, &v, &err) == LV_EINVALID);
	CHECK(lv_parse_duration(s, NULL, &err) == LV_EINVALID);
	free(s);
	return 0;
}
