/*
 * lancever watch TARGET...: records every new version of every dataset under the targets
 * (lancever/watch.h) until SIGTERM/SIGINT, or one pass with --once.  Log lines on stderr
 * (text or JSON, one per event); --metrics ADDR serves the statistics (metrics.c).
 *
 * Invariants: the signal handler only calls lv_watch_stop (async-signal-safe); the run
 * flushes before it returns, so SIGTERM/SIGINT end with exit status 0 after a flush; every
 * name from disk is printed escaped (lvcli_esc, lvcli_json_str); --once's exit status is 0
 * when nothing was missed, LVCLI_EXIT_MISSED when versions were recorded as gaps, 1 when a
 * table failed (a failure wins over misses), 2 for a usage error.
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* --once: versions were missed (recorded as gaps). */
#define LVCLI_EXIT_MISSED 3

static const lvcli_opt watch_opts[] = {
	{ "--flush", "DURATION", "make what is read durable within this (default 1s)", LVCLI_DURATION,
	  0, 0, offsetof(lvcli_args, flush_ms) },
	{ "--min-interval", "DURATION", "shortest poll interval of a table (default 100ms)",
	  LVCLI_DURATION, 0, 0, offsetof(lvcli_args, min_interval_ms) },
	{ "--max-interval", "DURATION",
	  "longest poll interval of an idle table, and the safety poll of a notified one (default 5s)",
	  LVCLI_DURATION, 0, 0, offsetof(lvcli_args, max_interval_ms) },
	{ "--discover-interval", "DURATION", "how often targets are listed for new tables (default 30s)",
	  LVCLI_DURATION, 0, 0, offsetof(lvcli_args, discover_ms) },
	{ "--once", NULL, "one pass: discover, poll every table, flush, exit", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, once) },
	{ "--shard", "I/N", "only the tables whose path hashes to I modulo N (0 <= I < N)",
	  LVCLI_STRING, 0, 0, offsetof(lvcli_args, shard) },
	{ "--threads", "N", "worker threads, 1..64 (default 4)", LVCLI_NUMBER, 1, 64,
	  offsetof(lvcli_args, threads) },
	{ "--no-notify", NULL, "poll every table, also on local disk (no inotify)", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, no_notify) },
	{ "--log-format", "FORMAT", "text (default) or json: one line per event on stderr",
	  LVCLI_STRING, 0, 0, offsetof(lvcli_args, log_format) },
	{ "--metrics", "ADDR",
	  "serve Prometheus metrics at http://ADDR/metrics (PORT or :PORT = 127.0.0.1; HOST:PORT)",
	  LVCLI_STRING, 0, 0, offsetof(lvcli_args, metrics) },
	{ 0 },
};

static lv_watcher *volatile running;
static volatile sig_atomic_t stop_asked; /* a signal before the watcher was running */

static void on_signal(int sig)
{
	(void)sig;
	stop_asked = 1;
	lv_watch_stop(running); /* async-signal-safe; NULL before the run */
}

static void time_text(char *buf, size_t cap, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

static const char *level_name(int level)
{
	return level == LV_WATCH_ERROR ? "error" : level == LV_WATCH_WARN ? "warn" : "info";
}

typedef struct logctx {
	bool json;
} logctx;

static void log_json(const lv_watch_event *ev, const char *when)
{
	fprintf(stderr, "{\"time\":\"%s\",\"level\":\"%s\",\"event\":\"%s\",\"table\":", when,
		level_name(ev->level), lv_watch_event_name(ev->kind));
	lvcli_json_str(stderr, ev->table);
	fputs(",\"message\":", stderr);
	lvcli_json_str(stderr, ev->message);
	for (size_t i = 0; i < ev->nfields; i++) {
		fputc(',', stderr);
		lvcli_json_str(stderr, ev->fields[i].key);
		fputc(':', stderr);
		if (ev->fields[i].is_number)
			fputs(ev->fields[i].value, stderr);
		else
			lvcli_json_str(stderr, ev->fields[i].value);
	}
	fputs("}\n", stderr);
}

/* One event: "TIME LEVEL EVENT [TABLE]: message" or a JSON object, one line on stderr. */
static void on_event(const lv_watch_event *ev, void *arg)
{
	const logctx *lc = arg;
	if (lvcli_g.quiet && ev->level == LV_WATCH_INFO)
		return;
	char when[40];
	time_text(when, sizeof when, ev->time_ms);
	if (lc->json) {
		log_json(ev, when);
	} else {
		fprintf(stderr, "%s %s %s", when, level_name(ev->level), lv_watch_event_name(ev->kind));
		if (ev->table)
			fprintf(stderr, " [%s]", ev->table[0] ? lvcli_esc(ev->table) : ".");
		fprintf(stderr, ": %s\n", lvcli_esc(ev->message));
	}
	fflush(stderr);
}

/* The positional arguments (the targets), in order: argv without options and their values. */
static int targets_of(int argc, char **argv, const char **out)
{
	int n = 0;
	bool rest = false;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!rest && !strcmp(s, "--")) {
			rest = true;
			continue;
		}
		if (rest || s[0] != '-' || !s[1] || (s[1] >= '0' && s[1] <= '9')) {
			out[n++] = s;
			continue;
		}
		if (strchr(s, '='))
			continue;
		for (const lvcli_opt *o = watch_opts; o->name; o++)
			if (!strcmp(o->name, s) && o->value)
				i++;
	}
	return n;
}

static int options(const lvcli_args *a, lv_watch_options *o, logctx *lc)
{
	lv_watch_options_init(o, LV_WATCH_OPTIONS_VERSION);
	o->flush_ms = a->flush_ms;
	o->min_interval_ms = a->min_interval_ms;
	o->max_interval_ms = a->max_interval_ms;
	o->discover_ms = a->discover_ms;
	o->threads = (int)a->threads;
	o->no_notify = a->no_notify;
	lv_error e = { 0 };
	if (a->shard && lv_watch_parse_shard(a->shard, &o->shard_index, &o->shard_count, &e) < 0)
		return lvcli_usage_error("--shard wants I/N with 0 <= I < N, got '%s'",
					 lvcli_esc(a->shard));
	if (a->log_format && strcmp(a->log_format, "text") && strcmp(a->log_format, "json"))
		return lvcli_usage_error("--log-format wants text or json, got '%s'",
					 lvcli_esc(a->log_format));
	if (a->min_interval_ms && a->max_interval_ms && a->min_interval_ms > a->max_interval_ms)
		return lvcli_usage_error("--min-interval is above --max-interval");
	lc->json = a->log_format && !strcmp(a->log_format, "json");
	o->on_event = on_event;
	o->event_ctx = lc;
	return 0;
}

/* --once: 0, LVCLI_EXIT_MISSED when a version was missed, 1 when a table failed. */
static int once_status(lv_watcher *w, int rc, const lv_error *err)
{
	lv_watch_snapshot *s = NULL;
	lv_error e = { 0 };
	if (rc < 0)
		return lvcli_fail(err);
	if (lv_watch_snapshot_take(&s, w, &e) < 0)
		return lvcli_fail(&e);
	uint64_t missed = lv_watch_snapshot_total(s)->missed;
	lv_watch_snapshot_free(s);
	return missed ? LVCLI_EXIT_MISSED : 0;
}

static int run(const lvcli_args *a, const char **targets, int n)
{
	lv_watch_options o;
	logctx lc = { 0 };
	int st = options(a, &o, &lc);
	if (st)
		return st;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	lv_error err = { 0 };
	lv_storage_options *so = NULL;
	int rc = lvcli_storage_options(&so, &err);
	o.storage = so;
	lv_watcher *w = NULL;
	if (rc == 0)
		rc = lv_watch_open(&w, targets, (size_t)n, &o, &err);
	lv_storage_options_free(so);
	if (rc < 0)
		return lvcli_fail(&err);
	lvcli_metrics *m = NULL;
	if (a->metrics && (st = lvcli_metrics_start(&m, w, a->metrics)) != 0) {
		lv_watch_free(w);
		return st;
	}
	running = w;
	if (stop_asked)
		lv_watch_stop(w);
	if (a->once) {
		rc = lv_watch_run_once(w, &err);
		st = once_status(w, rc, &err);
	} else {
		rc = lv_watch_run(w, &err);
		st = rc < 0 ? lvcli_fail(&err) : 0;
	}
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	running = NULL;
	lvcli_metrics_stop(m);
	lv_watch_free(w);
	return st;
}

static int cmd_watch(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_watch, &a);
	if (rc)
		return rc;
	const char **targets = calloc((size_t)argc, sizeof *targets);
	if (!targets) {
		fputs("lancever: out of memory\n", stderr);
		return 1;
	}
	int n = targets_of(argc, argv, targets);
	rc = run(&a, targets, n);
	free(targets);
	return rc;
}

const lvcli_cmd lvcli_cmd_watch = {
	"watch", "TARGET...", "record every new version of every dataset under the targets",
	"Records every new version of every dataset under each TARGET within a bounded lag, so no "
	"version is lost to a cleanup that lancever did not run (LanceDB optimize(), pylance "
	"cleanup_old_versions, Lance auto-cleanup). TARGET is a dataset, or a folder or prefix "
	"holding datasets (a LanceDB database folder, s3://bucket/prefix/, az://container/prefix/): "
	"every directory with _versions/ under it is a table, each branch (tree/NAME/) too, and new "
	"ones are found every --discover-interval. Local tables are watched with inotify on their "
	"_versions/ (polled where that does not work, said by a \"fallback\" line); others are "
	"polled on an interval that halves down to --min-interval after a poll that found "
	"something and doubles up to --max-interval while the table is idle. What is read is made "
	"durable as ordinary checkpoints within --flush; a version whose manifest was deleted "
	"before it was read is recorded as a gap with that reason and counted as missed. Runs "
	"until SIGTERM or SIGINT, which flush and exit 0. --once makes one pass (discover, poll "
	"every table, flush) and exits 0 when nothing was missed, 3 when versions were missed "
	"(recorded as gaps), 1 when a table failed. Log lines on stderr (start, discovered, "
	"captured, missed, flush, error, fallback, lost, warning, stop); --quiet keeps only "
	"warnings and errors. --shard I/N keeps the tables whose path relative to the target "
	"hashes (FNV-1a 64) to I modulo N, so N watchers divide a fleet without coordination.",
	watch_opts, cmd_watch, false,
};
