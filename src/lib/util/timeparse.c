/* Time and duration arguments (CLI and API).  Strict: junk anywhere is an error. */
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static bool digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

int64_t lv__days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dm[m - 1];
}

int lv_parse_time(const char *s, int64_t *out, lv_error *err)
{
	if (!s || !out)
		return lv__err(err, LV_EINVALID, "lv_parse_time: NULL argument");
	size_t n = strlen(s);
	uint64_t ms;
	if (n > 0 && n <= 19 && lv__parse_u64(s, n, &ms) && ms <= (uint64_t)INT64_MAX) {
		*out = (int64_t)ms;
		return 0;
	}
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0;
	int64_t frac_ms = 0;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
		goto bad;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		goto bad;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
			goto bad;
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &sec))
				goto bad;
			if (*p == '.' || *p == ',') {
				p++;
				int k = 0;
				int64_t scale = 100;
				while (*p >= '0' && *p <= '9') {
					if (k < 3)
						frac_ms += (*p - '0') * scale, scale /= 10;
					p++, k++;
				}
				if (k == 0 || k > 9)
					goto bad;
			}
		}
		if (h > 23 || mi > 59 || sec > 60)
			goto bad;
	}
	int64_t off_min = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (!digits(&p, 2, &oh))
			goto bad;
		if (*p == ':')
			p++;
		if (!digits(&p, 2, &om) || oh > 23 || om > 59)
			goto bad;
		off_min = sign * (oh * 60 + om);
	}
	if (*p)
		goto bad;
	int64_t days = lv__days_from_civil(y, mo, d);
	*out = ((days * 24 + h) * 60 + mi - off_min) * 60000 + (int64_t)sec * 1000 + frac_ms;
	return 0;
bad:
	return lv__err(err, LV_EINVALID,
		       "invalid time '%.64s': expected milliseconds or ISO 8601 (2026-12-02T17:00:00Z)", s);
}

int lv_parse_duration(const char *s, int64_t *out, lv_error *err)
{
	if (!s || !out)
		return lv__err(err, LV_EINVALID, "lv_parse_duration: NULL argument");
	const char *p = s;
	int64_t total = 0;
	if (!*p)
		goto bad;
	while (*p) {
		if (*p < '0' || *p > '9')
			goto bad;
		int64_t v = 0;
		while (*p >= '0' && *p <= '9') {
			if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
				goto bad;
			p++;
		}
		int64_t unit;
		if (!strncmp(p, "ms", 2)) unit = 1, p += 2;
		else if (*p == 's') unit = 1000, p++;
		else if (*p == 'm') unit = 60000, p++;
		else if (*p == 'h') unit = 3600000, p++;
		else if (*p == 'd') unit = 86400000, p++;
		else if (*p == 'w') unit = 7 * 86400000LL, p++;
		else goto bad;
		if (__builtin_mul_overflow(v, unit, &v) || __builtin_add_overflow(total, v, &total))
			goto bad;
	}
	*out = total;
	return 0;
bad:
	return lv__err(err, LV_EINVALID, "invalid duration '%.64s': expected e.g. 7d, 36h, 90m, 1d12h", s);
}

/* A humantime unit: one of its names (matched as a whole word, case-sensitive: m is a
 * minute, M a month) and its length. */
typedef struct hunit {
	const char *name;
	int64_t ns;
} hunit;

static const hunit hunits[] = {
	{ "nsec", 1 }, { "ns", 1 },
	{ "usec", 1000 }, { "us", 1000 },
	{ "msec", 1000000 }, { "ms", 1000000 },
	{ "seconds", 1000000000LL }, { "second", 1000000000LL }, { "secs", 1000000000LL },
	{ "sec", 1000000000LL }, { "s", 1000000000LL },
	{ "minutes", 60000000000LL }, { "minute", 60000000000LL }, { "mins", 60000000000LL },
	{ "min", 60000000000LL }, { "months", 2630016000000000LL }, { "month", 2630016000000000LL },
	{ "m", 60000000000LL }, { "M", 2630016000000000LL },
	{ "hours", 3600000000000LL }, { "hour", 3600000000000LL }, { "hrs", 3600000000000LL },
	{ "hr", 3600000000000LL }, { "h", 3600000000000LL },
	{ "days", 86400000000000LL }, { "day", 86400000000000LL }, { "d", 86400000000000LL },
	{ "weeks", 604800000000000LL }, { "week", 604800000000000LL }, { "w", 604800000000000LL },
	{ "years", 31557600000000000LL }, { "year", 31557600000000000LL },
	{ "y", 31557600000000000LL },
};

/* The unit spelled at p (its whole word: letters up to the next digit, space or end). */
static const hunit *hunit_at(const char *p, size_t *len)
{
	size_t n = 0;
	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z'))
		n++;
	for (size_t i = 0; i < sizeof hunits / sizeof hunits[0]; i++)
		if (strlen(hunits[i].name) == n && !strncmp(p, hunits[i].name, n)) {
			*len = n;
			return &hunits[i];
		}
	return NULL;
}

/*
 * A duration as Lance's config values spell it (the humantime crate's syntax:
 * "14days", "1h 30min", "2weeks"): spans of an integer and a unit, with
 * optional spaces; a month is 30.44 days and a year 365.25 days, as there.
 * Sub-millisecond spans are summed in nanoseconds, then truncated to ms.
 */
int lv__parse_humantime(const char *s, int64_t *out_ms)
{
	const char *p = s;
	int64_t total = 0;
	bool any = false;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p < '0' || *p > '9')
			return -1;
		int64_t v = 0;
		while (*p >= '0' && *p <= '9')
			if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p++ - '0', &v))
				return -1;
		while (*p == ' ')
			p++;
		size_t n;
		const hunit *u = hunit_at(p, &n);
		if (!u || __builtin_mul_overflow(v, u->ns, &v) || __builtin_add_overflow(total, v, &total))
			return -1;
		p += n;
		any = true;
	}
	if (!any)
		return -1;
	*out_ms = total / 1000000;
	return 0;
}
