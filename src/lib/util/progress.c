/*
 * util/progress.c - the rate limit of progress callbacks (util/progress.h has the rule).
 */
#include "util/progress.h"

#include <string.h>

#include "util/util.h"

void lv__progress_report(lv__progress *p, const char *phase, uint64_t done, uint64_t total)
{
	if (!p || !p->cb || !phase)
		return;
	uint64_t now = lv__mono_ns();
	bool same = p->phase && (p->phase == phase || !strcmp(p->phase, phase)) && p->total == total;
	if (same) {
		if (done < p->done)
			done = p->done;
		bool last = done >= total && p->done < total;
		if (!last && (done == p->done || now - p->last_ns < (uint64_t)LV__PROGRESS_MS * 1000000u))
			return;
	}
	p->phase = phase;
	p->done = done;
	p->total = total;
	p->last_ns = now;
	p->cb(phase, done, total, p->payload);
}
