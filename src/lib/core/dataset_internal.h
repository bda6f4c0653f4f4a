#ifndef LV_CORE_DATASET_INTERNAL_H
#define LV_CORE_DATASET_INTERNAL_H

#include "lancever/dataset.h"
#include "util/arena.h"

struct lv_dataset {
	lv_storage *st;
	bool owns_storage;
	int threads;
};

/* A listed manifest of _versions/. */
typedef struct lv_manifest_entry {
	uint64_t version;
	int scheme;      /* LV_NAME_V1 / LV_NAME_V2 */
	uint64_t size;
	int64_t mtime_ms;
	char path[64];   /* "_versions/<name>" */
} lv_manifest_entry;

/* Lists _versions/, sorted by version ascending, duplicates (V1+V2 of one version) folded. */
int lv__list_manifests(lv_storage *st, lv_manifest_entry **out, size_t *n, lv_error *err);

/*
 * Reads and parses one manifest (and its transaction) into `info`, strings in `arena`.
 * LV_ENOTFOUND means the manifest vanished.
 */
int lv__read_version_info(lv_storage *st, const char *path, lv_arena *arena,
			  lv_version_info *info, lv_error *err);

/* Builds the transaction_properties JSON object (sorted keys) from a parsed transaction. */
struct lv_txn;
int lv__txn_properties_json(const struct lv_txn *t, lv_arena *arena, const char **out);

#endif
