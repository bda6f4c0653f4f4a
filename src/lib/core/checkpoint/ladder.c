/*
 * The degradation ladder: the newest usable checkpoint, newest first, each
 * file classified when it is rejected (vanished, ahead of the manifests,
 * damaged, of another history, unreadable) and recorded as a warning.
 */
#include "core/checkpoint/ladder.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/checkpoint/archive.h"
#include "core/checkpoint/identity.h"
#include "core/fetch.h"
#include "core/warnings.h"
#include "util/util.h"

/* A checkpoint file whole, footer-first, refused beyond LV__CP_MAX_FILE_BYTES before it is
 * read; and its size and time as the read saw them (0: not known; what versions()'s cache
 * keys on, vcache.h). */
static int read_cp(lv_storage *st, const char *path, lv_buf *out, uint64_t *size,
		   int64_t *mtime_ms, lv_error *err)
{
	return lv__fetch_footered_stamped(st, path, LV__CP_MAX_FILE_BYTES, out, size, mtime_ms, err);
}

/* Job 0 reads a checkpoint file, job 1 the small head of a manifest (into pre). */
typedef struct pre_read {
	lv_storage *st;
	const char *cp_path, *head_path;
	lv_buf *cp_buf;
	int rc;
	lv_error *cp_err;
	lv__head_pre *pre;
} pre_read;

static void pre_read_job(size_t i, void *arg)
{
	pre_read *p = arg;
	uint64_t size; /* an object store's reads come unstamped */
	int64_t mtime_ms;
	if (i == 0)
		p->rc = read_cp(p->st, p->cp_path, p->cp_buf, &size, &mtime_ms, p->cp_err);
	else
		p->pre->rc = lv_storage_read_range(p->st, p->head_path, 0, LV__HEAD_PROBE_SMALL, &p->pre->buf,
						   &p->pre->err);
}


static int classify_read_error(int rc)
{
	return rc == LV_ENOTFOUND ? LV__CP_VANISHED : LV__CP_UNREADABLE;
}

static int classify_decode_error(int rc)
{
	return rc == LV_ECORRUPT || rc == LV_ELIMIT || rc == LV_EUNSUPPORTED || rc == LV_EINVALID
		       ? LV__CP_DAMAGED
		       : LV__CP_UNREADABLE;
}

/*
 * Reads and validates one checkpoint file.  Returns 0 (usable: *f filled) or
 * the error that rejected it (e names the file), with *cls saying which kind
 * of rejection; LV_ENOMEM is returned as itself.  With `keep`, the bytes read
 * are handed back there (a writer moves damaged files aside byte for byte).
 * `pre` (may be NULL) is a manifest head read ahead of need.
 */
int lv__cp_try(lv_dataset *ds, const lv__cp_name *name, const lv__manifest_entry *live, size_t nlive,
		  bool all_rows, const lv__head_pre *pre, lv_buf *keep, lv__cp_file *f, int *cls,
		  uint64_t *id_bytes, lv_buf *pre_read_cp, lv_error *e)
{
	lv_buf b = { 0 };
	int rc = 0;
	uint64_t fsize = 0;
	int64_t fmtime = 0;
	memset(f, 0, sizeof *f);
	_Static_assert(sizeof f->path == sizeof name->path, "a name's path fits the file's");
	memcpy(f->path, name->path, sizeof f->path); /* both NUL-terminated in the same size */
	if (pre_read_cp) { /* read already, with the manifest head (see lv__cp_load_ladder) */
		b = *pre_read_cp;
		memset(pre_read_cp, 0, sizeof *pre_read_cp);
	} else {
		rc = read_cp(ds->st, name->path, &b, &fsize, &fmtime, e);
	}
	*cls = LV__CP_USABLE;
	if (rc < 0) {
		*cls = classify_read_error(rc);
		return rc;
	}
	rc = lv__cp_decode(b.ptr, b.size, name->path, true, all_rows ? NULL : live,
			       all_rows ? 0 : nlive, f, e);
	if (rc == 0 && f->latest != name->version)
		rc = lv__err(e, LV_ECORRUPT, "checkpoint %s: covers version %" PRIu64
			     " but is named for %" PRIu64, name->path, f->latest, name->version);
	if (rc == 0 && f->is_segment)
		rc = lv__err(e, LV_ECORRUPT, "checkpoint %s: is an archive segment (%" PRIu64 "-%" PRIu64
			     "), not a head", name->path, f->seg_first, f->seg_last);
	if (rc == 0 && f->archive) { /* a head's index of the archive must parse */
		lv__arc_index ix;
		rc = lv__arc_index_parse(f->archive, name->path, &ix, e);
		lv__arc_index_dispose(&ix);
	}
	if (rc < 0 && rc != LV_ENOMEM)
		*cls = classify_decode_error(rc);
	if (rc == 0 && nlive && f->latest > live[nlive - 1].version) {
		*cls = LV__CP_AHEAD;
		rc = lv__err(e, LV_ECONFLICT,
			     "checkpoint %s covers version %" PRIu64 " but the dataset's latest is %" PRIu64
			     " (written after the manifests were listed, or another history)",
			     name->path, f->latest, live[nlive - 1].version);
	}
	if (rc == 0) {
		rc = lv__cp_verify_identity(ds, f, live, nlive, pre, id_bytes, e);
		if (rc < 0 && rc != LV_ENOMEM)
			*cls = rc == LV_ECONFLICT ? LV__CP_FOREIGN : LV__CP_UNREADABLE;
	}
	if (rc == 0) {
		f->file_size = fsize;
		f->file_mtime_ms = fmtime;
	}
	return lv__cp_file_read_end(rc, f, &b, keep);
}

/* The ladder's record of the files it rejected (for warnings and gap reasons). */
static void note_rejected(lv__warnlog *wl, lv_history_report *rep, const lv__cp_name *name, int cls,
			  const lv_error *e, uint64_t *max_rejected)
{
	rep->checkpoints_rejected++;
	if (rep->checkpoints_rejected == 1)
		snprintf(rep->note, sizeof rep->note, "rejected %.230s", e->message);
	if (cls != LV__CP_AHEAD && name->version > *max_rejected)
		*max_rejected = name->version;
	lv__warn(wl, LV_WARN_CHECKPOINT_REJECTED, name->path, 0, 0, "checkpoint %s rejected: %s",
		 name->path, e->message);
}

/*
 * Loads the newest usable checkpoint of `names` (newest first; not freed
 * here).  out->rows stays NULL when none is usable.  Each rejected file is a
 * warning in `wl`; *max_rejected is the newest version a rejected file (other
 * than one ahead of the manifests) may record.  !all_rows keeps only the
 * rows of live versions (what versions() needs).
 */
int lv__cp_load_ladder(lv_dataset *ds, const lv__cp_names *names, const lv__manifest_entry *live,
			  size_t nlive, bool all_rows, lv__cp_file *out, lv_history_report *rep,
			  int *races, lv__warnlog *wl, uint64_t *max_rejected, int *classes,
			  lv_error *err)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; classes && i < names->n; i++)
		classes[i] = -1;
	lv__head_pre pre;
	memset(&pre, 0, sizeof pre);
	char head_path[LV__MPATH]; /* pre.path, while pre lives */
	int rc = 0;
	for (size_t i = 0; i < names->n; i++) {
		lv_error e = { 0 };
		lv_buf first = { 0 };
		bool have_first = false;
		if (i == 0 && ds->remote) {
			/*
			 * On an object store the newest file and the head of the manifest
			 * that will confirm its identity (the newest live one it covers, by
			 * its name) are read at once: one round trip instead of two.
			 */
			size_t k = nlive;
			while (k > 0 && live[k - 1].version > names->v[0].version)
				k--;
			pre_read pr = { ds->st, names->v[0].path, k ? lv__mpath(&live[k - 1], head_path) : NULL,
					&first, 0, &e, &pre };
			pre.path = pr.head_path;
			lv__parallel_for(pre.path ? 2 : 1, 2, pre_read_job, &pr);
			if (pr.rc < 0) {
				int cls = classify_read_error(pr.rc);
				if (classes)
					classes[0] = cls;
				if (cls == LV__CP_VANISHED)
					*races |= LV__RACE_VANISHED;
				else
					note_rejected(wl, rep, &names->v[0], cls, &e, max_rejected);
				continue;
			}
			have_first = true;
		}
		lv__cp_file f;
		int cls;
		rc = lv__cp_try(ds, &names->v[i], live, nlive, all_rows, i == 0 ? &pre : NULL, NULL, &f, &cls,
			    &rep->identity_bytes, have_first ? &first : NULL, &e);
		lv_buf_dispose(&first);
		if (rc == LV_ENOMEM)
			break;
		if (classes)
			classes[i] = cls;
		if (rc == 0) {
			*out = f;
			rep->rung = i == 0 ? LV_RUNG_NEWEST_CHECKPOINT : LV_RUNG_OLDER_CHECKPOINT;
			rep->checkpoint_version = f.latest;
			break;
		}
		if (cls == LV__CP_VANISHED) {
			*races |= LV__RACE_VANISHED;
			continue;
		}
		if (cls == LV__CP_AHEAD)
			*races |= LV__RACE_AHEAD;
		note_rejected(wl, rep, &names->v[i], cls, &e, max_rejected);
	}
	lv_buf_dispose(&pre.buf);
	if (rc == LV_ENOMEM)
		return lv__err(err, rc, "out of memory");
	return 0;
}
