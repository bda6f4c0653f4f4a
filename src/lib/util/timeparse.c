/*
 * The one parser of time and duration text (CLI arguments, the public API, dataset config
 * values such as the branch cascade's `older_than`, storage-option timeouts).
 *
 * A DURATION is humantime's syntax, as Lance's config values spell it: spans of an integer
 * and a unit ("14days", "2weeks", "1h 30min", "7d", "1d12h", "500ms"), optional spaces.
 * A TIME is decimal milliseconds since the epoch, "@" and those milliseconds, ISO 8601
 * (no zone = UTC), "now", or a DURATION followed by " ago" (git's "3 days ago").
 *
 * Invariants: strict -- junk anywhere, an empty span, a field out of range or an overflow
 * is LV_EINVALID and nothing is written; the error message quotes the text as given.
 */
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
 * Spans are summed in milliseconds (so the range is that of int64 ms, not of
 * int64 ns: ~292 years); what a us or ns span has below a millisecond is summed
 * apart in nanoseconds (each part < 1 ms: no overflow), then truncated to ms
 * and added -- the same as summing everything in ns and truncating once.
 */
static int parse_humantime(const char *s, int64_t *out_ms)
{
	const char *p = s;
	int64_t total = 0, sub_ns = 0;
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
		if (!u)
			return -1;
		if (u->ns >= 1000000) { /* whole milliseconds */
			if (__builtin_mul_overflow(v, u->ns / 1000000, &v) ||
			    __builtin_add_overflow(total, v, &total))
				return -1;
		} else { /* us, ns: the whole ms go to total, the rest (< 1 ms) to sub_ns */
			int64_t per = 1000000 / u->ns;
			if (__builtin_add_overflow(total, v / per, &total) ||
			    __builtin_add_overflow(sub_ns, (v % per) * u->ns, &sub_ns))
				return -1;
		}
		p += n;
		any = true;
	}
	if (!any || __builtin_add_overflow(total, sub_ns / 1000000, &total))
		return -1;
	*out_ms = total;
	return 0;
}

/* ISO 8601 "YYYY-MM-DD[(T| )HH:MM[:SS[.fraction]]][Z|+HH[:]MM|-HH[:]MM]" (no zone = UTC);
 * true and *out, or false. */
static bool parse_iso(const char *s, int64_t *out)
{
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
	return true;
bad:
	return false;
}


int lv_parse_duration(const char *s, int64_t *out, lv_error *err)
{
	if (!s || !out)
		return lv__err(err, LV_EINVALID, "lv_parse_duration: NULL argument");
	if (parse_humantime(s, out) < 0)
		return lv__err(err, LV_EINVALID, "invalid duration '%.64s': expected e.g. 14days, 2weeks, "
			       "1h 30min, 36h, 90m", s);
	return 0;
}

int lv__parse_time_at(const char *s, int64_t now_ms, int64_t *out, lv_error *err)
{
	if (!s || !out)
		return lv__err(err, LV_EINVALID, "lv_parse_time: NULL argument");
	size_t n = strlen(s), k = sizeof " ago" - 1;
	uint64_t ms;
	int64_t t, d;
	const char *num = s[0] == '@' ? s + 1 : s;
	size_t nn = n - (size_t)(num - s);
	if (nn > 0 && nn <= 19 && lv__parse_u64(num, nn, &ms) && ms <= (uint64_t)INT64_MAX) {
		*out = (int64_t)ms;
		return 0;
	}
	if (!strcmp(s, "now")) {
		*out = now_ms;
		return 0;
	}
	if (n > k && !strcmp(s + n - k, " ago") && n - k < 128) {
		char span[128];
		memcpy(span, s, n - k);
		span[n - k] = 0;
		/* not before 0000-01-01T00:00:00Z, the first time ISO 8601 here can write */
		if (parse_humantime(span, &d) == 0 && !__builtin_sub_overflow(now_ms, d, &t) &&
		    t >= -62167219200000LL) {
			*out = t;
			return 0;
		}
	} else if (parse_iso(s, &t)) {
		*out = t;
		return 0;
	}
	return lv__err(err, LV_EINVALID,
		       "invalid time '%.64s': expected ISO 8601 (2026-12-02, 2026-12-02T17:00:00Z), "
		       "@MILLISECONDS, or a duration and 'ago' (3 days ago)", s);
}

int lv_parse_time(const char *s, int64_t *out, lv_error *err)
{
	return lv__parse_time_at(s, lv__now_ms(), out, err);
}
