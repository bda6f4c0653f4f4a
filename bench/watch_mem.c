/*
 * The watcher's memory per table (issue 28: "state per table in kilobytes"):
 *
 *   watch_mem FOLDER [--no-notify]
 *
 * Opens a watcher on FOLDER (a folder of datasets, e.g. made by gen_dataset), makes one pass
 * (lv_watch_run_once: discovery, the first poll of every table, a flush), then prints the
 * heap in use (mallinfo2) before and after, per table, and sizeof of the watcher's per-table
 * record.  What stays is the state of an idle table: its record, name, storage sub-handle,
 * dataset handle, capture and inotify watch.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "core/watch_int.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: watch_mem FOLDER [--no-notify]\n");
		return 2;
	}
	lv_watch_options o;
	lv_watch_options_init(&o, LV_WATCH_OPTIONS_VERSION);
	o.no_notify = argc > 2 && !strcmp(argv[2], "--no-notify");
	const char *t[] = { argv[1] };
	lv_error e = { 0 };
	lv_watcher *w = NULL;
	if (lv_watch_open(&w, t, 1, &o, &e) < 0) {
		fprintf(stderr, "watch_mem: %s\n", e.message);
		return 1;
	}
	size_t before = mallinfo2().uordblks;
	if (lv_watch_run_once(w, &e) < 0) {
		fprintf(stderr, "watch_mem: %s\n", e.message);
		return 1;
	}
	size_t after = mallinfo2().uordblks;
	lv_watch_snapshot *s = NULL;
	if (lv_watch_snapshot_take(&s, w, &e) < 0)
		return 1;
	size_t n = lv_watch_snapshot_count(s);
	printf("tables %zu, heap before %zu B, after one pass %zu B, per table %.0f B "
	       "(sizeof wtable %zu B, lv_watch_table_stats %zu B)\n",
	       n, before, after, n ? (double)(after - before) / (double)n : 0.0, sizeof(wtable),
	       sizeof(lv_watch_table_stats));
	lv_watch_snapshot_free(s);
	lv_watch_free(w);
	return 0;
}
