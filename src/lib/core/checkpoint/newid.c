/*
 * A new history identity only on a dataset with no recorded history (issue 24): the check a
 * checkpoint writer makes before it writes a head of a new dataset_created.
 *
 * Invariants:
 *  - It is asked only when the writer has no usable head and no identity from the archive.
 *  - It refuses (LV_ECONFLICT, naming what it found) on any sign of recorded history: a
 *    listed segment, lancever's files in _checkpoints/ without a head, a listed head that
 *    cannot be read, or a head (of the newest PROBE_HEADS live versions) or first segment a
 *    HEAD finds that the listing did not show; a HEAD that fails refuses too (unknown).
 *  - A file found by HEAD that a second listing shows is a concurrent writer's: the write
 *    gathers again (w->fresh_vanished), it is not refused.
 *  - The oldest live manifest's read_version is not a sign (see guard's comment).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/ladder.h"
#include "core/checkpoint/writer.h"
#include "util/util.h"

/* How many of the newest live versions have their head checkpoint name probed. */
#define PROBE_HEADS 64

typedef struct probe {
	lv_storage *st;
	char (*paths)[96];
	int *rc;
	lv_error *errs;
} probe;

static void probe_job(size_t i, void *arg)
{
	probe *p = arg;
	uint64_t size;
	p->rc[i] = lv_storage_head(p->st, p->paths[i], &size, NULL, &p->errs[i]);
}

static bool listed(const lv__cp_names *names, const char *path)
{
	for (size_t i = 0; i < names->n; i++)
		if (!strcmp(names->v[i].path, path))
			return true;
	return false;
}

/*
 * A file a HEAD found: does a new listing show it (1: written by a concurrent writer after our
 * listing; w->fresh_vanished is set so the write gathers again)?  0 if not (the listing omits
 * it), LV_ENOMEM; a listing that fails counts as not showing it.
 */
static int listed_now(lv__writer *w, const char *path)
{
	lv_error e = { 0 };
	bool seg = !strncmp(path, LV__ARCHIVE_DIR "/", sizeof LV__ARCHIVE_DIR);
	bool found = false;
	int rc;
	if (seg) {
		lv__seg_names segs;
		if ((rc = lv__seg_list(w->ds->st, &segs, &e)) == 0)
			for (size_t i = 0; i < segs.n && !found; i++)
				found = !strcmp(segs.v[i].path, path);
		lv__seg_names_free(&segs);
	} else {
		lv__cp_names names;
		if ((rc = lv__cp_list(w->ds->st, &names, &e)) == 0)
			found = listed(&names, path);
		lv__cp_names_free(&names);
	}
	if (rc == LV_ENOMEM)
		return rc;
	w->fresh_vanished += found;
	return found;
}

/*
 * HEADs of the names a head checkpoint of the newest live versions would have, and of the
 * archive's first cell: one that exists although the listing did not show it means the
 * listing is incomplete -- unless a new listing shows it (a concurrent writer's: the write
 * gathers again).  0 if none exists; LV_ECONFLICT naming it; a storage error if a HEAD failed
 * (nothing can be concluded: nothing is written).
 */
static int probe_expected(lv__writer *w, lv__seen *s, lv_error *err)
{
	size_t n = 0, want = (s->nlive < PROBE_HEADS ? s->nlive : PROBE_HEADS) + 1;
	probe p = { w->ds->st, lv__calloc(want, sizeof *p.paths), lv__calloc(want, sizeof *p.rc),
		    lv__calloc(want, sizeof *p.errs) };
	int rc = p.paths && p.rc && p.errs ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	for (size_t k = s->nlive; rc == 0 && k-- > 0 && n + 1 < want;) {
		snprintf(p.paths[n], sizeof p.paths[n], LV__CP_DIR "/%020" PRIu64 ".lance", s->live[k].version);
		n += !listed(&s->names, p.paths[n]);
	}
	uint64_t S = (uint64_t)(w->cfg.archive_segment_rows < w->cfg.max_entries ? w->cfg.archive_segment_rows
										  : w->cfg.max_entries);
	if (rc == 0 && S > 0 && !s->segs.n)
		lv__seg_path(p.paths[n++], sizeof p.paths[0], 1, S);
	if (rc == 0)
		lv__parallel_for(n, w->ds->remote ? w->ds->threads : 1, probe_job, &p);
	for (size_t i = 0; rc == 0 && i < n && !w->fresh_vanished; i++) {
		if (p.rc[i] == 0 && (rc = listed_now(w, p.paths[i])) == 0)
			rc = lv__err(err, LV_ECONFLICT, "checkpoint: %s exists but the listing of " LV__CP_DIR
				     "/ did not show it (an incomplete or stale listing?)", p.paths[i]);
		else if (p.rc[i] == 0)
			rc = rc == LV_ENOMEM ? lv__err(err, rc, "out of memory") : 0;
		else if (p.rc[i] != LV_ENOTFOUND)
			rc = lv__err(err, p.rc[i], "checkpoint: cannot tell whether %s exists: %s", p.paths[i],
				     p.errs[i].message);
	}
	lv__free(p.paths);
	lv__free(p.rc);
	lv__free(p.errs);
	return rc;
}

/*
 * With no usable head and no identity from the archive, the head written next would start a
 * new history identity (a new dataset_created), and every reader would take the earlier
 * history for another dataset's.  That is refused while the dataset shows signs of recorded
 * history: segments in _checkpoints/archive/, lancever's files in _checkpoints/ (kept-aside
 * checkpoints, locks) without a head among them, a head that could not be read (I/O), or a
 * head or first segment that a HEAD finds though the listing did not show it.  Heads that
 * were listed and rejected (damaged, another history) are not such a sign: the writer keeps
 * them aside and starts again, as before.  The oldest live manifest's read_version is not used: a dataset Lance cleaned up
 * before lancever first ran looks the same, and must still be checkpointable.
 */
int lv__cp_guard_new_identity(lv__writer *w, lv__seen *s, lv_error *err)
{
	const char *what = NULL;
	char path[96] = "";
	if (s->segs.n || s->segs.nstray) {
		what = "segments in " LV__ARCHIVE_DIR "/ none of which could be read as this history's";
		snprintf(path, sizeof path, "%s", s->segs.n ? s->segs.v[0].path : s->segs.stray[0].name.path);
	} else if (!s->names.n && (s->names.ndamaged || s->names.nother)) {
		what = "lancever files but no head checkpoint in " LV__CP_DIR "/";
		snprintf(path, sizeof path, "%s", s->names.ndamaged ? s->names.damaged[0].path : "a lock file");
	} else {
		for (size_t i = 0; i < s->names.n && !what; i++)
			if (s->cls[i] == LV__CP_UNREADABLE) {
				what = "a head checkpoint that could not be read";
				snprintf(path, sizeof path, "%s", s->names.v[i].path);
			}
	}
	lv_error e = { 0 };
	int rc = what ? lv__err(&e, LV_ECONFLICT, "checkpoint: the dataset shows %s (%s)", what, path)
		      : probe_expected(w, s, &e);
	if (rc == 0 || rc == LV_ENOMEM)
		return rc == 0 ? 0 : lv__err(err, rc, "out of memory");
	return lv__err(err, rc, "%s; with no usable head checkpoint, writing one would start a new "
		       "history identity that hides the recorded history from every reader: nothing "
		       "written (retry once the store lists " LV__CP_DIR "/ fully; `lancever check` "
		       "shows what is there; to start a new history on purpose, move " LV__CP_DIR
		       "/ aside first)", e.message);
}
