/*
 * libFuzzer target: the checkpoint loader, through the exact path versions(),
 * history() and the timeline use (list _checkpoints/, read, decode, validate
 * schema / checksum / name / identity, merge with the live manifests).
 *
 * The store is an in-memory copy of a real LanceDB dataset (6 versions, a tag
 * on version 3; checkpoint_dataset.inc) plus the input as a checkpoint file.
 * Input: one control byte, then the file's bytes.
 *   bits 0-5  manifest of version (bit + 1) removed (cleaned up)
 *   bit 6     name the file for the version its rows say it covers (else 6),
 *             so the name check passes and the identity check is reached
 *   bit 7     deep mode: decode the rows without the checksum and store them
 *             re-encoded (valid checksum), then also run lv_checkpoint_write
 *
 * Properties asserted (abort on violation):
 *   - nothing crashes or leaks;
 *   - a rejected checkpoint gives exactly the manifests-only answer;
 *   - versions() lists exactly the live manifests, none cleaned up; history()
 *     is strictly increasing, has every live version with is_cleaned_up ==
 *     false and every other with true; is_tagged is set on version 3 alone;
 *     versions newer than the checkpoint equal their manifests-only rows;
 *   - the timeline's as-of answers equal a brute-force scan of history();
 *   - after lv_checkpoint_write, history() still has every version it had.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint/checkpoint_internal.h"
#include "core/checkpoint/codec.h"
#include "lancever/checkpoint.h"
#include "lancever/storage.h"
#include "util/util.h"

#include "../tests/unit/support/rowcmp.h"
#include "checkpoint_dataset.inc"

#define NVERSIONS 6
#define TAGGED_VERSION 3

#define FUZZ_NAME "checkpoint_fuzz"
#include "fuzz.h"

static uint64_t manifest_version(const char *path)
{
	/* "_versions/<u64::MAX - v:020>.manifest" */
	uint64_t inv = strtoull(path + strlen("_versions/"), NULL, 10);
	return UINT64_MAX - inv;
}

static lv_storage *make_store(unsigned removed)
{
	lv_storage *st = NULL;
	lv_error err = { 0 };
	CHECK(lv_storage_mem_new(&st, &err) == 0);
	for (size_t i = 0; i < sizeof ds_files / sizeof ds_files[0]; i++) {
		const struct ds_file *f = &ds_files[i];
		if (!strncmp(f->path, "_versions/", 10)) {
			uint64_t v = manifest_version(f->path);
			if (v >= 1 && v <= NVERSIONS && (removed >> (v - 1)) & 1)
				continue;
		}
		CHECK(lv_storage_write(st, f->path, f->data, f->len, &err) == 0);
	}
	return st;
}

static lv_dataset *open_ds(lv_storage *st)
{
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.threads = 1;
	lv_dataset *ds = NULL;
	lv_error err = { 0 };
	CHECK(lv_dataset_open_storage(&ds, st, &o, &err) == 0);
	return ds;
}

/* The 15 checkpoint columns and the manifest details of two rows agree. */
static bool same_row(const lv_version_info *a, const lv_version_info *b)
{
	return tu_same_checkpoint_row(a, b) && a->is_cleaned_up == b->is_cleaned_up &&
	       a->has_manifest_details == b->has_manifest_details &&
	       tu_str_eq(a->manifest_path, b->manifest_path) && a->manifest_size == b->manifest_size;
}

static bool same_list(const lv_version_list *a, const lv_version_list *b)
{
	if (lv_version_list_count(a) != lv_version_list_count(b))
		return false;
	for (size_t i = 0; i < lv_version_list_count(a); i++)
		if (!same_row(lv_version_list_get(a, i), lv_version_list_get(b, i)))
			return false;
	return true;
}

/* Manifests-only answers, one per removal mask, computed once. */
static struct baseline {
	bool done;
	int rc;
	lv_version_list *list; /* versions() == history() without a checkpoint */
} base[1 << NVERSIONS];

static const struct baseline *baseline(unsigned removed)
{
	struct baseline *b = &base[removed];
	if (b->done)
		return b;
	lv_storage *st = make_store(removed);
	lv_dataset *ds = open_ds(st);
	lv_error err = { 0 };
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	b->rc = lv_versions(&b->list, ds, &rep, &err);
	CHECK(b->rc < 0 || rep.rung == LV_RUNG_MANIFESTS);
	lv_dataset_free(ds);
	lv_storage_free(st);
	b->done = true;
	return b;
}

static const lv_version_info *find(const lv_version_list *l, uint64_t v)
{
	for (size_t i = 0; l && i < lv_version_list_count(l); i++)
		if (lv_version_list_get(l, i)->version == v)
			return lv_version_list_get(l, i);
	return NULL;
}

/* Checks versions() / history() answers against the live set and the baseline. */
static void check_lists(const lv_version_list *vers, const lv_history_report *vrep,
			const lv_version_list *hist, const lv_history_report *hrep,
			const struct baseline *b, unsigned removed)
{
	if (vrep->rung == LV_RUNG_MANIFESTS)
		CHECK(same_list(vers, b->list));
	if (hrep->rung == LV_RUNG_MANIFESTS)
		CHECK(same_list(hist, b->list));
	/* versions(): exactly the live manifests */
	size_t nlive = 0;
	for (uint64_t v = 1; v <= NVERSIONS; v++)
		nlive += !((removed >> (v - 1)) & 1);
	CHECK(lv_version_list_count(vers) == nlive);
	for (size_t i = 0; i < lv_version_list_count(vers); i++) {
		const lv_version_info *x = lv_version_list_get(vers, i);
		CHECK(x->version >= 1 && x->version <= NVERSIONS && !((removed >> (x->version - 1)) & 1));
		CHECK(!x->is_cleaned_up);
		CHECK(x->is_tagged == (x->version == TAGGED_VERSION));
		CHECK(i == 0 || x->version > lv_version_list_get(vers, i - 1)->version);
		/* newer than the checkpoint: read from its manifest */
		if (x->version > vrep->checkpoint_version)
			CHECK(same_row(x, find(b->list, x->version)));
	}
	/* history(): every live version, flags right, strictly increasing */
	for (size_t i = 0; i < lv_version_list_count(hist); i++) {
		const lv_version_info *x = lv_version_list_get(hist, i);
		bool live = x->version >= 1 && x->version <= NVERSIONS &&
			    !((removed >> (x->version - 1)) & 1);
		CHECK(x->is_cleaned_up == !live);
		CHECK(x->is_tagged == (x->version == TAGGED_VERSION));
		CHECK(i == 0 || x->version > lv_version_list_get(hist, i - 1)->version);
		if (x->version > hrep->checkpoint_version)
			CHECK(live && same_row(x, find(b->list, x->version)));
	}
	for (size_t i = 0; i < lv_version_list_count(vers); i++)
		CHECK(find(hist, lv_version_list_get(vers, i)->version));
}

/* as-of against a brute-force scan of the history list. */
static void check_timeline(const lv_timeline *tl, const lv_version_list *hist)
{
	size_t n = lv_version_list_count(hist);
	int64_t probes[3 * 8 + 2];
	size_t np = 0;
	probes[np++] = INT64_MIN;
	probes[np++] = INT64_MAX;
	for (size_t i = 0; i < n && np + 3 <= sizeof probes / sizeof probes[0]; i++) {
		int64_t t = lv_version_list_get(hist, i)->timestamp_millis;
		probes[np++] = t;
		probes[np++] = t == INT64_MIN ? t : t - 1;
		probes[np++] = t == INT64_MAX ? t : t + 1;
	}
	for (size_t k = 0; k < np; k++)
		for (int strict = 0; strict < 2; strict++) {
			const lv_version_info *want = NULL;
			for (size_t i = 0; i < n; i++) {
				const lv_version_info *x = lv_version_list_get(hist, i);
				int64_t t = x->timestamp_millis;
				if (strict ? t < probes[k] : t <= probes[k])
					want = x;
			}
			const lv_version_info *got = lv_timeline_as_of(tl, probes[k], strict);
			CHECK((!want && !got) || (want && got && want->version == got->version));
		}
}

/* The version the file's rows say it covers (for naming it), or 6. */
static uint64_t covered_version(const uint8_t *data, size_t size)
{
	lv_version_list *rows = NULL;
	lv_error err = { 0 };
	uint64_t v = NVERSIONS;
	if (lv__cp_decode_rows(data, size, "fuzz.lance", false, &rows, NULL, &err) == 0) {
		size_t n = lv_version_list_count(rows);
		v = n ? lv_version_list_get(rows, n - 1)->version : 0;
	}
	lv_version_list_free(rows);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned ctl = data[0];
	unsigned removed = ctl & ((1u << NVERSIONS) - 1);
	const uint8_t *file = data + 1;
	size_t fsize = size - 1;
	const struct baseline *b = baseline(removed);

	lv_buf reenc = { 0 };
	if (ctl & 0x80) {
		lv_version_list *rows = NULL;
		int64_t created = 0;
		lv_error err = { 0 };
		if (lv__cp_decode_rows(file, fsize, "fuzz.lance", false, &rows, &created, &err) < 0)
			return 0;
		size_t n = lv_version_list_count(rows);
		int rc = lv__cp_encode(rows ? lv_version_list_get(rows, 0) : NULL, n, created,
					       &reenc, &err);
		/* a re-encoded file decodes, with its checksum, to the same rows */
		if (rc == 0) {
			lv_version_list *again = NULL;
			CHECK(lv__cp_decode_rows(reenc.ptr, reenc.size, "fuzz.lance", true, &again,
						    NULL, &err) == 0);
			CHECK(same_list(rows, again));
			lv_version_list_free(again);
		}
		lv_version_list_free(rows);
		if (rc < 0)
			return 0;
		file = reenc.ptr;
		fsize = reenc.size;
	}
	uint64_t name_v = (ctl & 0x40) ? covered_version(file, fsize) : NVERSIONS;
	char name[64];
	snprintf(name, sizeof name, "_checkpoints/%020llu.lance", (unsigned long long)name_v);

	lv_storage *st = make_store(removed);
	lv_error err = { 0 };
	CHECK(lv_storage_write(st, name, file, fsize, &err) == 0);
	lv_dataset *ds = open_ds(st);

	lv_version_list *vers = NULL, *hist = NULL;
	lv_history_report vrep = LV_HISTORY_REPORT_INIT, hrep = LV_HISTORY_REPORT_INIT;
	int vrc = lv_versions(&vers, ds, &vrep, &err);
	int hrc = lv_history(&hist, ds, &hrep, &err);
	if (b->rc < 0) {
		/* no manifests at all: only a checkpoint can answer */
		CHECK(vrc == hrc);
		CHECK(vrc == 0 || vrc == b->rc);
		if (vrc == 0)
			CHECK(vrep.rung != LV_RUNG_MANIFESTS && hrep.rung != LV_RUNG_MANIFESTS);
	} else {
		CHECK(vrc == 0 && hrc == 0);
	}
	if (getenv("CHECKPOINT_FUZZ_VERBOSE")) /* for looking at what a corpus file reaches */
		fprintf(stderr, "ctl 0x%02x: versions rc %d rung %d (cp %llu), history rc %d rung %d; %s\n",
			ctl, vrc, vrep.rung, (unsigned long long)vrep.checkpoint_version, hrc, hrep.rung,
			vrc == 0 ? vrep.note : err.message);
	if (vrc == 0 && hrc == 0) {
		CHECK(vrep.rung == hrep.rung && vrep.checkpoint_version == hrep.checkpoint_version);
		check_lists(vers, &vrep, hist, &hrep, b, removed);
		lv_timeline *tl = NULL;
		lv_history_report trep = LV_HISTORY_REPORT_INIT;
		CHECK(lv_timeline_load(&tl, ds, &trep, &err) == 0);
		CHECK(trep.rung == hrep.rung);
		check_timeline(tl, hist);
		lv_timeline_free(tl);
	}
	if ((ctl & 0x80) && hrc == 0 && lv_version_list_count(hist) <= 10000) {
		lv_checkpoint_result res = LV_CHECKPOINT_RESULT_INIT;
		if (lv_checkpoint_write(ds, NULL, NULL, 0, &res, &err) == 0) {
			lv_version_list *after = NULL;
			lv_history_report arep = LV_HISTORY_REPORT_INIT;
			CHECK(lv_history(&after, ds, &arep, &err) == 0);
			if (getenv("CHECKPOINT_FUZZ_VERBOSE"))
				fprintf(stderr, "after write (%s, already_present %d): rung %d; %s\n",
					res.path, res.already_present, arep.rung, arep.note);
			/* what a writer reports written, a reader uses */
			CHECK(arep.rung != LV_RUNG_MANIFESTS);
			for (size_t i = 0; i < lv_version_list_count(hist); i++) {
				const lv_version_info *x = lv_version_list_get(hist, i);
				const lv_version_info *y = find(after, x->version);
				CHECK(y && y->is_cleaned_up == x->is_cleaned_up);
			}
			lv_version_list_free(after);
		}
	}
	lv_version_list_free(vers);
	lv_version_list_free(hist);
	lv_dataset_free(ds);
	lv_storage_free(st);
	lv_buf_dispose(&reenc);
	return 0;
}
