/*
 * Does a checkpoint belong to the dataset's present history?  The newest
 * covered version that is still live must carry the same transaction as its
 * manifest: confirmed from a small ranged read of the manifest's head when
 * possible, else from the whole manifest.
 */
#include "core/checkpoint/identity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/manifests.h"
#include "core/vlist.h"
#include "format/manifest.h"
#include "util/util.h"
#define HEAD_PROBE_BYTES 65536

/* Scans up to three "u32 len + message" sections of a manifest head for the
 * row's transaction.  1 found, 0 not found, -1 a section runs past the head. */
static int head_scan(const lv_buf *h, const char *path, const lv_version_info *row)
{
	size_t off = 0;
	for (int k = 0; k < 3 && h->size - off >= 4; k++) {
		uint32_t len = lv__le32(h->ptr + off);
		if (len > h->size - off - 4)
			return -1;
		lv__txn t;
		lv_error ignored = { 0 };
		if (lv__txn_parse(h->ptr + off + 4, len, path, &t, &ignored) == 0 &&
		    t.uuid.n == strlen(row->transaction_uuid) &&
		    !memcmp(t.uuid.p, row->transaction_uuid, t.uuid.n) &&
		    t.read_version == row->read_version)
			return 1;
		off += 4 + (size_t)len;
	}
	return 0;
}

static int head_confirms(lv_storage *st, const char *path, const lv_version_info *row,
			 const lv__head_pre *pre, uint64_t *bytes, lv_error *err)
{
	if (!row->transaction_uuid || !row->has_read_version)
		return 0;
	int found = -1;
	for (uint64_t probe = LV__HEAD_PROBE_SMALL; found < 0 && probe <= HEAD_PROBE_BYTES; probe *= 16) {
		lv_buf h = { 0 };
		bool mine = !(probe == LV__HEAD_PROBE_SMALL && pre && pre->path && !strcmp(pre->path, path));
		if (!mine) { /* the read-ahead copy of this head */
			if (pre->rc < 0) {
				if (err)
					*err = pre->err;
				return pre->rc;
			}
			h = pre->buf;
		} else {
			int rc = lv_storage_read_range(st, path, 0, probe, &h, err);
			if (rc < 0)
				return rc;
		}
		*bytes += h.size;
		found = head_scan(&h, path, row);
		bool whole = h.size < probe; /* the file ends inside the probe */
		if (mine)
			lv_buf_dispose(&h);
		if (found < 0 && whole)
			found = 0;
	}
	return found < 0 ? 0 : found;
}

int lv__cp_confirm_row(lv_dataset *ds, const lv__manifest_entry *e, const lv_version_info *row,
		       const lv__head_pre *pre, const char *cp_path, uint64_t *bytes, lv_error *err)
{
	char path[LV__MPATH];
	lv__mpath(e, path);
	int hc = head_confirms(ds->st, path, row, pre, bytes, err);
	if (hc < 0)
		return hc; /* LV_ENOTFOUND: vanished meanwhile */
	if (hc == 1)
		return 0;
	lv__arena a;
	lv__arena_init(&a, 1024);
	lv_version_info info;
	int rc = lv__read_version_info(ds->st, path, &a, &info, err);
	if (rc == 0)
		*bytes += info.manifest_size;
	bool same = rc == 0 && info.timestamp_millis == row->timestamp_millis &&
		    ((!info.transaction_uuid && !row->transaction_uuid) ||
		     (info.transaction_uuid && row->transaction_uuid &&
		      !strcmp(info.transaction_uuid, row->transaction_uuid)));
	lv__arena_dispose(&a);
	if (rc < 0)
		return rc;
	if (!same)
		return lv__err(err, LV_ECONFLICT,
			       "checkpoint %s: version %" PRIu64
			       " differs from its manifest (dataset recreated? different history)",
			       cp_path, e->version);
	return 0;
}

/*
 * Does this checkpoint belong to the dataset's present history?  It must not
 * cover versions beyond the latest live one, and the newest covered version
 * that is still live must carry the same transaction: confirmed from the
 * head of its manifest when possible (uuid and read_version), else from the
 * whole manifest (uuid and timestamp).
 */
int lv__cp_verify_identity(lv_dataset *ds, const lv__cp_file *f, const lv__manifest_entry *live,
			      size_t nlive, const lv__head_pre *pre, uint64_t *bytes, lv_error *err)
{
	if (nlive && f->latest > live[nlive - 1].version)
		return lv__err(err, LV_ECONFLICT,
			       "checkpoint %s covers version %" PRIu64 " but the dataset's latest is %" PRIu64
			       " (different history)",
			       f->path, f->latest, live[nlive - 1].version);
	for (size_t k = nlive; k-- > 0;) {
		if (live[k].version > f->latest)
			continue;
		const lv_version_info *row = lv__vlist_find(f->rows, live[k].version);
		if (!row)
			continue;
		int rc = lv__cp_confirm_row(ds, &live[k], row, pre, f->path, bytes, err);
		if (rc == LV_ENOTFOUND) /* vanished meanwhile: try an older one */
			continue;
		return rc;
	}
	return 0;
}
