/*
 * Warnings: how an answer says it may be incomplete.
 *
 * Invariants:
 *  - A warning names the input it is about (a path relative to the dataset
 *    root) or the version range it cannot account for; its message is one
 *    line with no control characters (they are written as \xNN).
 *  - The dataset's log holds each (kind, path, first, last) once.
 *  - The log is guarded by its dataset's own mutex (no process-wide lock: a
 *    fork() in another thread cannot leave one held).
 */
#include "core/warnings.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataset.h"
#include "util/util.h"

static void warning_free(lv_warning *w)
{
	lv__free((char *)w->path);
	lv__free((char *)w->message);
}

void lv__warn(lv__warnlog *wl, int kind, const char *path, uint64_t first, uint64_t last,
	      const char *fmt, ...)
{
	if (!wl)
		return;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* One line: a file name may hold anything, so controls are written as \xNN (named,
	 * not hidden). */
	char line[sizeof msg * 4];
	size_t j = 0;
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			j += (size_t)snprintf(line + j, sizeof line - j, "\\x%02x", *c);
		else
			line[j++] = (char)*c;
	line[j] = 0;
	lv_warning *nv = lv__grow(wl->v, &wl->cap, wl->n, sizeof *nv, 4);
	if (!nv) {
		wl->lost = true;
		return;
	}
	wl->v = nv;
	lv_warning w = { .kind = kind, .path = path ? lv__strdup(path) : NULL, .first = first,
			 .last = last, .message = lv__strdup(line) };
	if ((path && !w.path) || !w.message) {
		warning_free(&w);
		wl->lost = true;
		return;
	}
	wl->v[wl->n++] = w;
}

static bool same_warning(const lv_warning *a, const lv_warning *b)
{
	return a->kind == b->kind && a->first == b->first && a->last == b->last &&
	       (a->path == b->path || (a->path && b->path && !strcmp(a->path, b->path)));
}

size_t lv__warn_commit(lv_dataset *ds, lv__warnlog *wl)
{
	size_t added = 0;
	pthread_mutex_lock(&ds->warn_mu);
	for (size_t i = 0; i < wl->n; i++) {
		bool dup = false;
		for (size_t j = 0; j < ds->warnings.n && !dup; j++)
			dup = same_warning(&ds->warnings.v[j], &wl->v[i]);
		lv_warning *nv = dup ? NULL : lv__grow(ds->warnings.v, &ds->warnings.cap, ds->warnings.n,
						       sizeof *nv, 4);
		if (nv) {
			ds->warnings.v = nv;
			ds->warnings.v[ds->warnings.n++] = wl->v[i];
			added++;
		} else {
			wl->lost = wl->lost || !dup;
			warning_free(&wl->v[i]);
		}
	}
	pthread_mutex_unlock(&ds->warn_mu);
	lv__free(wl->v);
	bool lost = wl->lost;
	memset(wl, 0, sizeof *wl);
	wl->lost = lost;
	return added;
}

int lv__warn_commit_all(lv_dataset *ds, lv__warnlog *wl, uint64_t *added, lv_error *err)
{
	size_t n = lv__warn_commit(ds, wl);
	if (added)
		*added = n;
	return wl->lost ? lv__err(err, LV_ENOMEM, "out of memory recording a warning") : 0;
}

void lv__warnlog_dispose(lv__warnlog *wl)
{
	if (!wl)
		return;
	for (size_t i = 0; i < wl->n; i++)
		warning_free(&wl->v[i]);
	lv__free(wl->v);
	memset(wl, 0, sizeof *wl);
}

size_t lv_dataset_warning_count(const lv_dataset *ds) { return ds ? ds->warnings.n : 0; }

const lv_warning *lv_dataset_warning(const lv_dataset *ds, size_t i)
{
	return ds && i < ds->warnings.n ? &ds->warnings.v[i] : NULL;
}

void lv_dataset_clear_warnings(lv_dataset *ds)
{
	if (ds) {
		pthread_mutex_lock(&ds->warn_mu);
		lv__warnlog_dispose(&ds->warnings);
		pthread_mutex_unlock(&ds->warn_mu);
	}
}

void lv__format_range(char *buf, size_t cap, uint64_t first, uint64_t last)
{
	if (first == last)
		snprintf(buf, cap, "version %llu", (unsigned long long)first);
	else
		snprintf(buf, cap, "versions %llu-%llu", (unsigned long long)first,
			 (unsigned long long)last);
}

void lv__warn_refs(lv__warnlog *wl, const lv_refs *refs)
{
	for (size_t i = 0; i < lv_refs_unreadable_count(refs); i++) {
		const lv_refs_bad *b = lv_refs_unreadable(refs, i);
		bool tag = b->kind == LV_WARN_TAG_UNREADABLE;
		lv__warn(wl, b->kind, b->path, 0, 0, "%s %s skipped: %s%s", tag ? "tag" : "branch",
			 b->path, b->message,
			 tag ? " (the version it names is not marked tagged; other tags still count)" : "");
	}
}
