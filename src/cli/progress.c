/*
 * The progress line cleanup and expire draw on stderr when it is a terminal.
 * Invariants: a new phase and a phase's last step are always drawn; the steps
 * between at most LVCLI_PROGRESS_HZ times a second, so a run of a million
 * manifests costs a few hundred writes, not a million; "done" clears the line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void lvcli_progress_draw(lvcli_progress *p, const char *phase, uint64_t done, uint64_t total)
{
	int64_t t = monotonic_ms();
	bool same = !strncmp(p->phase, phase, sizeof p->phase - 1);
	if (same && done != total && t - p->last_ms < 1000 / LVCLI_PROGRESS_HZ)
		return;
	snprintf(p->phase, sizeof p->phase, "%s", phase);
	p->last_ms = t;
	if (!strcmp(phase, "done"))
		fputs("\r\033[K", stderr);
	else if (total)
		fprintf(stderr, "\r\033[K%s %" PRIu64 "/%" PRIu64, phase, done, total);
	else
		fprintf(stderr, "\r\033[K%s", phase);
}
