/*
 * lv_diff_versions (lancever/diff.h): two recorded versions and their counters' changes.
 *
 * Invariants: a diff holds the history list its two records borrow from; the counter
 * table below is the one place that names the counters and their order (the checkpoint
 * columns' order, enum lv_diff_counter_index); deltas are computed modulo 2^64, never
 * overflowing.
 */
#include "lancever/diff.h"

#include <inttypes.h>
#include <stddef.h>

#include "lancever/checkpoint.h"
#include "core/vlist.h"
#include "util/util.h"

struct lv_diff {
	lv_version_list *history;
	const lv_version_info *from, *to;
};

static const struct {
	const char *name;
	size_t offset;
} counters[] = {
	[LV_DIFF_FRAGMENTS] = { "total_fragments", offsetof(lv_version_info, total_fragments) },
	[LV_DIFF_DATA_FILES] = { "total_data_files", offsetof(lv_version_info, total_data_files) },
	[LV_DIFF_FILES_SIZE] = { "total_files_size", offsetof(lv_version_info, total_files_size) },
	[LV_DIFF_DELETION_FILES] = { "total_deletion_files",
				     offsetof(lv_version_info, total_deletion_files) },
	[LV_DIFF_DATA_FILE_ROWS] = { "total_data_file_rows",
				     offsetof(lv_version_info, total_data_file_rows) },
	[LV_DIFF_DELETION_FILE_ROWS] = { "total_deletion_file_rows",
					 offsetof(lv_version_info, total_deletion_file_rows) },
	[LV_DIFF_ROWS] = { "total_rows", offsetof(lv_version_info, total_rows) },
};
#define NCOUNTERS (sizeof counters / sizeof counters[0])

int lv_diff_versions(lv_diff **out, lv_dataset *ds, uint64_t from, uint64_t to, lv_error *err)
{
	if (!out || !ds)
		return lv__err(err, LV_EINVALID, "lv_diff_versions: NULL argument");
	*out = NULL;
	lv_version_list *l = NULL;
	LV_TRY(lv_history(&l, ds, NULL, err));
	const lv_version_info *x = lv__vlist_find(l, from), *y = lv__vlist_find(l, to);
	lv_diff *d = x && y ? lv__malloc(sizeof *d) : NULL;
	if (!d) {
		lv_version_list_free(l);
		if (x && y)
			return lv__err(err, LV_ENOMEM, "out of memory");
		return lv__err(err, LV_ENOTFOUND, "version %" PRIu64 " not recorded", !x ? from : to);
	}
	*d = (lv_diff){ l, x, y };
	*out = d;
	return 0;
}

const lv_version_info *lv_diff_from(const lv_diff *d) { return d ? d->from : NULL; }
const lv_version_info *lv_diff_to(const lv_diff *d) { return d ? d->to : NULL; }

int64_t lv_diff_ms_between(const lv_diff *d)
{
	return d ? (int64_t)((uint64_t)d->to->timestamp_millis - (uint64_t)d->from->timestamp_millis)
		 : 0;
}

size_t lv_diff_count(const lv_diff *d) { return d ? NCOUNTERS : 0; }

static uint64_t counter_of(const lv_version_info *v, size_t i)
{
	return *(const uint64_t *)((const char *)v + counters[i].offset);
}

bool lv_diff_counter(const lv_diff *d, size_t i, const char **name, uint64_t *from, uint64_t *to,
		     int64_t *delta)
{
	if (!d || i >= NCOUNTERS)
		return false;
	uint64_t a = counter_of(d->from, i), b = counter_of(d->to, i);
	if (name)
		*name = counters[i].name;
	if (from)
		*from = a;
	if (to)
		*to = b;
	if (delta)
		*delta = (int64_t)(b - a);
	return true;
}

void lv_diff_free(lv_diff *d)
{
	if (!d)
		return;
	lv_version_list_free(d->history);
	lv__free(d);
}
