/*
 * In-process timing of lv_versions() and of as-of lookups (no process start-up).
 *
 *   time_versions DATASET [--repeat R]
 *       R times (default 9, after one warm-up): lv_dataset_open + lv_versions +
 *       free, and lv_versions alone on one open handle.  Prints one JSON line:
 *       {"versions":N,"rung":"...","manifests_read":M,"open_versions_ms":median,
 *        "versions_ms":median,"min_ms":min,"maxrss_kb":peak RSS of the process}
 *   time_versions DATASET --asof [--lookups L] [--repeat R]
 *       lv_timeline_load (median of R), then L (default 1,000,000) lookups at
 *       uniformly random times in [first - 1 s, last + 1 s], inclusive and strict,
 *       each checked against a linear scan for the first 2,000 (200 above 100,000
 *       versions).  Prints {"versions":N,"load_ms":median,"lookup_ns":per lookup,
 *       "lookups":L,"checked":K,"mismatches":0,"maxrss_kb":peak RSS}
 *   time_versions DATASET --asof-at TIME_MS [--repeat R]
 *       R times: lv_dataset_open + lv_version_as_of(TIME_MS) + free (a cold start in a
 *       process: nothing loaded before).  Prints {"version":V,"asof_ms":median,"min_ms":min,
 *       "segments_read":S,"bytes_read":B,"maxrss_kb":peak RSS}
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <lancever/lancever.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Peak resident set size of this process so far, KiB. */
static long maxrss_kb(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fail(const char *what, const lv_error *err)
{
	fprintf(stderr, "time_versions: %s: %s\n", what, err->message);
	exit(1);
}

static const char *rung_name(int r)
{
	return r == 0 ? "manifests" : r == 1 ? "newest checkpoint" : r == 2 ? "older checkpoint" : "?";
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Newest version with timestamp <= t (< t when strict), by linear scan; 0 if none. */
static uint64_t scan(const lv_version_list *l, int64_t t, bool strict)
{
	uint64_t best = 0;
	for (size_t i = 0; i < lv_version_list_count(l); i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		if ((strict ? v->timestamp_millis < t : v->timestamp_millis <= t) && v->version > best)
			best = v->version;
	}
	return best;
}

static int run_asof(const char *path, int repeat, long lookups)
{
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	if (lv_dataset_open(&ds, path, NULL, &err))
		fail("open", &err);
	double *t = calloc((size_t)repeat, sizeof *t);
	lv_timeline *tl = NULL;
	for (int r = -1; r < repeat; r++) {
		lv_timeline_free(tl);
		tl = NULL;
		double t0 = now_ms();
		if (lv_timeline_load(&tl, ds, NULL, &err))
			fail("lv_timeline_load", &err);
		if (r >= 0)
			t[r] = now_ms() - t0;
	}
	lv_version_list *hist = NULL;
	if (lv_history(&hist, ds, NULL, &err))
		fail("lv_history", &err);
	size_t n = lv_version_list_count(hist);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		int64_t ts = lv_version_list_get(hist, i)->timestamp_millis;
		lo = ts < lo ? ts : lo;
		hi = ts > hi ? ts : hi;
	}
	lo -= 1000;
	hi += 1000;
	uint64_t span = (uint64_t)(hi - lo) + 1;
	int64_t *q = malloc((size_t)lookups * sizeof *q);
	uint64_t s = 0x9E3779B97F4A7C15ull;
	for (long i = 0; i < lookups; i++)
		q[i] = lo + (int64_t)(rng(&s) % span);
	long checked = 0, bad = 0, to_check = n > 100000 ? 200 : 2000;
	for (long i = 0; i < lookups && i < to_check; i++, checked++) {
		for (int strict = 0; strict < 2; strict++) {
			const lv_version_info *v = lv_timeline_as_of(tl, q[i], strict);
			uint64_t want = scan(hist, q[i], strict);
			if ((v ? v->version : 0) != want && bad++ < 5)
				fprintf(stderr, "time_versions: as_of(%" PRId64 ", %d) = %" PRIu64
					", linear scan says %" PRIu64 "\n", q[i], strict,
					v ? v->version : 0, want);
		}
	}
	uint64_t sink = 0;
	double t0 = now_ms();
	for (long i = 0; i < lookups; i++) {
		const lv_version_info *v = lv_timeline_as_of(tl, q[i], (i & 1) != 0);
		sink += v ? v->version : 0;
	}
	double total = now_ms() - t0;
	printf("{\"versions\":%zu,\"load_ms\":%.4f,\"lookup_ns\":%.2f,\"lookups\":%ld,\"checked\":%ld,"
	       "\"mismatches\":%ld,\"sink\":%" PRIu64 ",\"maxrss_kb\":%ld}\n",
	       n, median(t, repeat), total * 1e6 / (double)lookups, lookups, checked, bad, sink,
	       maxrss_kb());
	lv_version_list_free(hist);
	lv_timeline_free(tl);
	lv_dataset_free(ds);
	free(q);
	free(t);
	return bad ? 1 : 0;
}

/* One cold query, timed: lv_dataset_open, then lv_version_as_of(at) if at >= 0 (the answer's
 * version in *version), else lv_versions (the count in *count), both filling rep; then free.
 * Returns the milliseconds it took. */
static double cold_query(const char *path, int64_t at, lv_history_report *rep, uint64_t *version,
			 size_t *count)
{
	lv_error err = { 0 };
	double t0 = now_ms();
	lv_dataset *ds = NULL;
	lv_version_list *list = NULL;
	if (lv_dataset_open(&ds, path, NULL, &err))
		fail("open", &err);
	if (at >= 0) {
		if (lv_version_as_of(&list, ds, at, false, rep, &err))
			fail("lv_version_as_of", &err);
		*version = lv_version_list_get(list, 0)->version;
	} else {
		if (lv_versions(&list, ds, rep, &err))
			fail("lv_versions", &err);
		*count = lv_version_list_count(list);
	}
	lv_version_list_free(list);
	lv_dataset_free(ds);
	return now_ms() - t0;
}

static int run_asof_at(const char *path, int repeat, int64_t at)
{
	double *t = calloc((size_t)repeat, sizeof *t), mn = 1e18;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	uint64_t version = 0;
	for (int r = -1; r < repeat; r++) {
		double d = cold_query(path, at, &rep, &version, NULL);
		if (r >= 0) {
			t[r] = d;
			mn = d < mn ? d : mn;
		}
	}
	printf("{\"version\":%" PRIu64 ",\"asof_ms\":%.4f,\"min_ms\":%.4f,\"segments_read\":%" PRIu64
	       ",\"bytes_read\":%" PRIu64 ",\"maxrss_kb\":%ld}\n",
	       version, median(t, repeat), mn, rep.segments_read, rep.bytes_read, maxrss_kb());
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int repeat = 9, asof = 0;
	long lookups = 1000000;
	long long at = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--lookups") && i + 1 < argc)
			lookups = atol(argv[++i]);
		else if (!strcmp(argv[i], "--asof"))
			asof = 1;
		else if (!strcmp(argv[i], "--asof-at") && i + 1 < argc)
			at = atoll(argv[++i]);
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path || repeat < 1 || lookups < 1) {
		fprintf(stderr, "usage: time_versions DATASET [--repeat R] [--asof [--lookups L]]\n");
		return 2;
	}
	if (asof)
		return run_asof(path, repeat, lookups);
	if (at >= 0)
		return run_asof_at(path, repeat, (int64_t)at);

	lv_error err = { 0 };
	double *fresh = calloc((size_t)repeat, sizeof *fresh);
	double *warm = calloc((size_t)repeat, sizeof *warm);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	size_t count = 0;
	for (int r = -1; r < repeat; r++) {
		double d = cold_query(path, -1, &rep, NULL, &count);
		if (r >= 0)
			fresh[r] = d;
	}
	lv_dataset *ds = NULL;
	if (lv_dataset_open(&ds, path, NULL, &err))
		fail("open", &err);
	for (int r = -1; r < repeat; r++) {
		lv_version_list *list = NULL;
		double t0 = now_ms();
		if (lv_versions(&list, ds, NULL, &err))
			fail("lv_versions", &err);
		if (r >= 0)
			warm[r] = now_ms() - t0;
		lv_version_list_free(list);
	}
	lv_dataset_free(ds);
	double mn = fresh[0];
	for (int r = 1; r < repeat; r++)
		mn = fresh[r] < mn ? fresh[r] : mn;
	printf("{\"versions\":%zu,\"rung\":\"%s\",\"manifests_read\":%" PRIu64 ",\"open_versions_ms\":%.4f,"
	       "\"versions_ms\":%.4f,\"min_ms\":%.4f,\"maxrss_kb\":%ld}\n",
	       count, rung_name(rep.rung), rep.manifests_read, median(fresh, repeat), median(warm, repeat), mn,
	       maxrss_kb());
	free(fresh);
	free(warm);
	return 0;
}
