/*
 * Progress on long work (stderr): cleanup, expire, checkpoint and check report steps through
 * the library's lv_progress_cb (lvcli_progress_cb); the redrawn line on a terminal
 * ("removing old manifests 82000/199900  41% 12.3k/s ETA 9s"), machine-readable JSON lines
 * with --progress=json, and a ticker (phase and elapsed time) for work the library reports
 * no steps of (versions, history to a pipe).
 *
 * Invariants: nothing is drawn unless lvcli_progress_on() (--progress=json, or auto with stderr
 * a terminal and no --quiet; never with --progress=never), so a pipe or a file never gets a
 * progress line; a new phase and a phase's last step are always drawn, the steps between at
 * most LVCLI_PROGRESS_HZ times a second, so a run of a million manifests costs a few hundred
 * writes, not a million; on a terminal nothing is drawn before the work has taken
 * LVCLI_PROGRESS_DELAY_MS (quick work stays silent), JSON lines come from the start; the
 * terminal line is cleared at "done", by lvcli_progress_end (a failed run) and by the
 * ticker's stop, so the command's own output or error never follows a half line; a JSON
 * line is one object {"phase","done","total","percent","rate","eta_s","elapsed_ms"}
 * (total, percent, eta_s null when the phase has no total; rate null before 200 ms).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool lvcli_progress_on(void)
{
	if (lvcli_ui.progress == LVCLI_PROGRESS_JSON)
		return true;
	return lvcli_ui.progress == LVCLI_PROGRESS_AUTO && !lvcli_g.quiet && lvcli_stderr_tty();
}

/* "12.3k" for a rate, "9s", "2m05s", "1h02m" for a time. */
static void human_rate(char *b, size_t cap, double r)
{
	if (r >= 1e6)
		snprintf(b, cap, "%.1fM", r / 1e6);
	else if (r >= 1e4)
		snprintf(b, cap, "%.0fk", r / 1e3);
	else if (r >= 1e3)
		snprintf(b, cap, "%.1fk", r / 1e3);
	else
		snprintf(b, cap, "%.0f", r);
}

static void human_secs(char *b, size_t cap, double s)
{
	uint64_t t = s < 0 ? 0 : (uint64_t)(s + 0.5);
	if (t < 60)
		snprintf(b, cap, "%" PRIu64 "s", t);
	else if (t < 3600)
		snprintf(b, cap, "%" PRIu64 "m%02" PRIu64 "s", t / 60, t % 60);
	else
		snprintf(b, cap, "%" PRIu64 "h%02" PRIu64 "m", t / 3600, t / 60 % 60);
}

static void draw_json(const char *phase, uint64_t done, uint64_t total, int64_t elapsed, double rate)
{
	fputs("{\"phase\":", stderr);
	lvcli_json_str(stderr, phase);
	fprintf(stderr, ",\"done\":%" PRIu64 ",\"total\":", done);
	if (total)
		fprintf(stderr, "%" PRIu64 ",\"percent\":%.1f", total, 100.0 * (double)done / (double)total);
	else
		fputs("null,\"percent\":null", stderr);
	if (rate >= 0)
		fprintf(stderr, ",\"rate\":%.1f", rate);
	else
		fputs(",\"rate\":null", stderr);
	if (total && rate > 0)
		fprintf(stderr, ",\"eta_s\":%.1f", (double)(total - (done < total ? done : total)) / rate);
	else
		fputs(",\"eta_s\":null", stderr);
	fprintf(stderr, ",\"elapsed_ms\":%" PRId64 "}\n", elapsed);
}

static void draw_line(const char *phase, uint64_t done, uint64_t total, double rate)
{
	char r[24] = "", eta[24] = "";
	fprintf(stderr, "\r\033[K%s", phase);
	if (total)
		fprintf(stderr, " %" PRIu64 "/%" PRIu64 " %3.0f%%", done, total, 100.0 * (double)done / (double)total);
	else if (done)
		fprintf(stderr, " %" PRIu64, done);
	if (rate >= 0 && total != 1) { /* a one-step phase ("verifying 1/1") has no rate worth showing */
		human_rate(r, sizeof r, rate);
		fprintf(stderr, " %s/s", r);
		if (total && rate > 0 && done < total) {
			human_secs(eta, sizeof eta, (double)(total - done) / rate);
			fprintf(stderr, " ETA %s", eta);
		}
	}
	fflush(stderr);
}

/* Quick work draws nothing on a terminal: the first line once the work has taken this long
 * (LANCEVER_PROGRESS_DELAY_MS, a test knob, sets another delay; 0 draws at once). */
static int64_t delay_ms(void)
{
	uint64_t d = LVCLI_PROGRESS_DELAY_MS;
	const char *e = getenv("LANCEVER_PROGRESS_DELAY_MS");
	return e && lvcli_parse_u64_strict(e, 3600000, &d) ? (int64_t)d : LVCLI_PROGRESS_DELAY_MS;
}

void lvcli_progress_draw(lvcli_progress *p, const char *phase, uint64_t done, uint64_t total)
{
	if (!lvcli_progress_on())
		return;
	int64_t t = monotonic_ms();
	if (!p->run_ms)
		p->run_ms = t ? t : 1;
	bool json = lvcli_ui.progress == LVCLI_PROGRESS_JSON;
	if (!json && !p->drawn && strcmp(phase, "done") && t - p->run_ms < delay_ms()) {
		/* not drawn yet, but the phase is followed so that its rate is right when it is */
		if (strncmp(p->phase, phase, sizeof p->phase - 1) || p->total != total) {
			snprintf(p->phase, sizeof p->phase, "%s", phase);
			p->total = total;
			p->start_ms = t;
		}
		return;
	}
	bool same = p->phase[0] && !strncmp(p->phase, phase, sizeof p->phase - 1) && p->total == total;
	if (same && done != total && t - p->last_ms < 1000 / LVCLI_PROGRESS_HZ)
		return;
	if (!same) {
		snprintf(p->phase, sizeof p->phase, "%s", phase);
		p->total = total;
		p->start_ms = t;
	}
	p->last_ms = t;
	int64_t el = t - p->start_ms;
	/* a rate once it means something: 200 ms in, or the phase's last step */
	double rate = el >= 200 || (el > 0 && done == total) ? (double)done * 1000.0 / (double)el : -1;
	if (!strcmp(phase, "done")) {
		if (json)
			draw_json(phase, done, total, el, -1);
		else if (p->drawn)
			fputs("\r\033[K", stderr);
		p->drawn = false;
		return;
	}
	if (json)
		draw_json(phase, done, total, el, rate);
	else
		draw_line(phase, done, total, rate);
	p->drawn = !json;
}

void lvcli_progress_end(lvcli_progress *p)
{
	if (p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = false;
}

void lvcli_progress_cb(const char *phase, uint64_t done, uint64_t total, void *payload)
{
	lvcli_progress_draw(payload, phase, done, total);
}

/* ---- the ticker: a phase with no steps, drawn from a thread after the first second ---- */

static struct {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool running, stop, drawn;
	char phase[64];
	int64_t start_ms, delay_ms;
	_Atomic uint64_t count; /* items done, when the work counts them (lvcli_ticker_count) */
} ticker = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

void lvcli_ticker_count(uint64_t n)
{
	ticker.count = n;
}

/* One ticker line: "phase 120000 ... 3s", or a JSON line. */
static void tick_draw(int64_t el)
{
	char s[24];
	uint64_t n = ticker.count;
	human_secs(s, sizeof s, (double)el / 1000.0);
	if (lvcli_ui.progress == LVCLI_PROGRESS_JSON) {
		draw_json(ticker.phase, n, 0, el, el >= 200 ? (double)n * 1000.0 / (double)el : -1);
	} else {
		fprintf(stderr, "\r\033[K%s", ticker.phase);
		if (n)
			fprintf(stderr, " %" PRIu64, n);
		fprintf(stderr, " ... %s", s);
		fflush(stderr);
	}
	ticker.drawn = true;
}

static void *tick(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ticker.mu);
	int64_t last_json = -1000;
	for (bool first = true; first || !ticker.stop; first = false) { /* delay 0: one line at least */
		int64_t el = monotonic_ms() - ticker.start_ms;
		bool json = lvcli_ui.progress == LVCLI_PROGRESS_JSON;
		if (el >= ticker.delay_ms && (!json || el - last_json >= 1000)) { /* JSON: once a second */
			tick_draw(el);
			last_json = el;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000000 / LVCLI_PROGRESS_HZ;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!ticker.stop)
			pthread_cond_timedwait(&ticker.cv, &ticker.mu, &ts);
	}
	pthread_mutex_unlock(&ticker.mu);
	return NULL;
}

void lvcli_ticker_start(const char *phase)
{
	if (!lvcli_progress_on() || ticker.running)
		return;
	snprintf(ticker.phase, sizeof ticker.phase, "%s", phase);
	ticker.start_ms = monotonic_ms();
	ticker.count = 0;
	ticker.delay_ms = delay_ms(); /* quick work draws nothing */
	ticker.stop = ticker.drawn = false;
	ticker.running = pthread_create(&ticker.thread, NULL, tick, NULL) == 0;
}

void lvcli_ticker_stop(void)
{
	if (!ticker.running)
		return;
	pthread_mutex_lock(&ticker.mu);
	ticker.stop = true;
	pthread_cond_signal(&ticker.cv);
	pthread_mutex_unlock(&ticker.mu);
	pthread_join(ticker.thread, NULL);
	ticker.running = false;
	if (!ticker.drawn)
		return;
	if (lvcli_ui.progress == LVCLI_PROGRESS_JSON)
		draw_json("done", ticker.count, 0, monotonic_ms() - ticker.start_ms, -1);
	else
		fputs("\r\033[K", stderr);
}
