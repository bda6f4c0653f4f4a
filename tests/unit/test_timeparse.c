/*
 * The one TIME and DURATION parser (util/timeparse.c, public lv_parse_time and
 * lv_parse_duration, which the branch cascade's `older_than` also reads): a table of accepted forms with their values, and of refused ones.
 * "now" is pinned through lv__parse_time_at.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include <lancever/lancever.h>
#include "util/util.h"

#define NOW 1796222390644LL /* 2026-12-02T14:39:50.644Z */
#define S 1000LL
#define MIN (60 * S)
#define H (60 * MIN)
#define D (24 * H)

static const struct {
	const char *text;
	int64_t ms;
} good_times[] = {
	{ "1700000000123", 1700000000123LL },
	{ "@1700000000123", 1700000000123LL },
	{ "@0", 0 },
	{ "1970-01-01T00:00:00Z", 0 },
	{ "2026-12-02", 1796169600000LL },
	{ "2026-12-02T14:39:50.644Z", NOW },
	{ "2026-12-02t14:39:50.644z", NOW },
	{ "2026-12-02 14:39:50.644", NOW },   /* no zone = UTC */
	{ "2026-12-02T16:39:50.644+02:00", NOW },
	{ "2026-12-02T16:39:50.644+0200", NOW },
	{ "2026-12-02T09:39:50,644-05:00", NOW },
	{ "2026-12-02T14:39", NOW - 50644 },
	{ "2024-02-29 12:00", 1709208000000LL },
	{ "now", NOW },
	{ "3 days ago", NOW - 3 * D },
	{ "3days ago", NOW - 3 * D },
	{ "2weeks ago", NOW - 14 * D },
	{ "1h 30min ago", NOW - 90 * MIN },
	{ "0s ago", NOW },
};

static const char *const bad_times[] = {
	"", "@", "@-5", "@x", "-5", "99999999999999999999", "@99999999999999999999", "2023-02-29",
	"2026-13-01", "2026-12-02T25:00", "2026-12-02T10:60", "abc", "2026-12-02Tx",
	"2026-12-02T10:00:00Zjunk", "2026-12-02T10:00:00+24:00", "2026-12-2", "26-12-02",
	"ago", " ago", "3 ago", "3 days", "days ago", "3 days ago ", "3 days  from now", "Now",
	"yesterday", "2026-12-02 ago", "99999999999999999999w ago", "300000y ago",
};

static const struct {
	const char *text;
	int64_t ms;
} good_durations[] = {
	{ "7d", 7 * D }, { "36h", 36 * H }, { "90m", 90 * MIN }, { "45s", 45 * S }, { "500ms", 500 },
	{ "1w", 7 * D }, { "1d12h", 36 * H }, { "14days", 14 * D }, { "2weeks", 14 * D },
	{ "1h 30min", 90 * MIN }, { "1 hour", H }, { "2 hours 5 minutes", 2 * H + 5 * MIN },
	{ "1day", D }, { "1M", 2630016000LL }, { "1y", 31557600000LL }, { "1500us", 1 },
	{ "0s", 0 }, { " 5m ", 5 * MIN }, { "1day 2h", D + 2 * H }, { "90 m", 90 * MIN },
	{ "1500000us", 1500 },
	/* the range is int64 milliseconds (not nanoseconds: fuzz/timeparse_fuzz.c's doubling
	 * property found 1699236h1699236h refused), with sub-ms spans summed apart */
	{ "300years", 300 * 31557600000LL }, { "1699236h1699236h", 2 * 1699236 * H },
	{ "1ms 999999ns", 1 }, { "2562047788015h", 2562047788015LL * H },
};

static const char *const bad_durations[] = {
	"", " ", "7", "d", "7x", "-1d", "1.5h", "7 d x", "1h30", "5 fortnights", "99999999999999999999w",
	"3 days ago", "7D", "1h,30m", "fortnight", "14", "days", "1d x",
	"99999999999999999999s", "2562047788016h", "106751991167301d", "292277025y",
};

static void test_times(void **state)
{
	(void)state;
	lv_error err = { 0 };
	for (size_t i = 0; i < sizeof good_times / sizeof good_times[0]; i++) {
		int64_t ms = -42;
		int rc = lv__parse_time_at(good_times[i].text, NOW, &ms, &err);
		if (rc != 0 || ms != good_times[i].ms)
			fail_msg("'%s': rc %d, %lld ms, want %lld (%s)", good_times[i].text, rc, (long long)ms,
				 (long long)good_times[i].ms, err.message);
	}
	for (size_t i = 0; i < sizeof bad_times / sizeof bad_times[0]; i++) {
		int64_t ms = -42;
		if (lv__parse_time_at(bad_times[i], NOW, &ms, &err) != LV_EINVALID || ms != -42)
			fail_msg("'%s' accepted as %lld", bad_times[i], (long long)ms);
		/* the message quotes the text as given */
		assert_non_null(strstr(err.message, bad_times[i]));
	}
	/* the public one reads the clock */
	int64_t a = 0, b = 0;
	assert_int_equal(lv_parse_time("now", &a, &err), 0);
	assert_int_equal(lv_parse_time("1 day ago", &b, &err), 0);
	assert_true(a - b >= D && a - b < D + 60 * S);
	assert_int_equal(lv_parse_time(NULL, &a, &err), LV_EINVALID);
}

static void test_durations(void **state)
{
	(void)state;
	lv_error err = { 0 };
	for (size_t i = 0; i < sizeof good_durations / sizeof good_durations[0]; i++) {
		int64_t ms = -42;
		int rc = lv_parse_duration(good_durations[i].text, &ms, &err);
		if (rc != 0 || ms != good_durations[i].ms)
			fail_msg("'%s': rc %d, %lld ms, want %lld", good_durations[i].text, rc, (long long)ms,
				 (long long)good_durations[i].ms);
	}
	for (size_t i = 0; i < sizeof bad_durations / sizeof bad_durations[0]; i++) {
		int64_t ms = -42;
		if (lv_parse_duration(bad_durations[i], &ms, &err) != LV_EINVALID || ms != -42)
			fail_msg("'%s' accepted as %lld", bad_durations[i], (long long)ms);
		assert_non_null(strstr(err.message, bad_durations[i]));
	}
	int64_t ms;
	assert_int_equal(lv_parse_duration(NULL, &ms, &err), LV_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_durations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
