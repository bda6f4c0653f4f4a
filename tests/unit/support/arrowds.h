/*
 * Shared by the Arrow export tests (test_arrow.c, test_arrow_ipc.c): a
 * synthetic dataset whose history has every kind of row the export tells
 * apart, and the expected Arrow value of each of the 22 version columns,
 * written from lancever/arrow.h's documentation (not from the exporter).
 */
#ifndef LV_ARROWDS_H
#define LV_ARROWDS_H

#include <lancever/arrow.h>
#include <lancever/checkpoint.h>

/*
 * An in-memory dataset: versions 1..15 (transaction properties with quotes and
 * non-ASCII text on v3, a 3000-byte property on v7, operations Append, Delete,
 * Overwrite), tag "keep" on v4, a cleanup after v12 that recorded v1..v3 as
 * cleaned up, then a cleanup without checkpoint that removed v5..v13 (v13 never
 * recorded: a gap).  History: v1..v12 and v14, v15 (14 rows), gap [13, 13].
 */
lv_storage *ads_dataset(void);

/* ads_dataset() opened with default options and its history read (lv_history, no
 * report): where most export tests start.  Fails the test on error. */
typedef struct ads_fixture {
	lv_storage *st;
	lv_dataset *ds;
	lv_version_list *l;
} ads_fixture;
ads_fixture ads_open(void);
/* Frees the history, the dataset and the store of an ads_open(). */
void ads_close(ads_fixture *f);

typedef struct ads_column {
	const char *name, *format;
	bool nullable;
} ads_column;
extern const ads_column ads_columns[LV_ARROW_VERSION_COLUMNS];

typedef struct ads_cell {
	bool null;
	uint64_t u;    /* "L" */
	int64_t i;     /* "tsm:UTC" (milliseconds) */
	bool b;        /* "b" */
	const char *s; /* "u" */
} ads_cell;
/* What column `col` must hold for version record `v`. */
ads_cell ads_expect(const lv_version_info *v, size_t col);

/* The value of `key` in a C Data Interface metadata blob (malloc'ed), or NULL. */
char *ads_metadata_get(const char *md, const char *key);

#endif
