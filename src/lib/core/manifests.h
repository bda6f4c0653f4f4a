/*
 * Manifests of _versions/: the listing, one manifest's version record, and
 * the concurrent reader.
 */
#ifndef LV_CORE_MANIFESTS_H
#define LV_CORE_MANIFESTS_H

#include "lancever/dataset.h"
#include "util/arena.h"

/* A listed manifest of _versions/: 16 bytes (a million of them are 16 MB); the name is
 * written out from (version, scheme) when it is needed (lv__mpath). */
typedef struct lv__manifest_entry {
	uint64_t version;
	int scheme;      /* LV_NAME_V1 / LV_NAME_V2 */
} lv__manifest_entry;

/* Room for "_versions/<name>" of any entry (V2: 10 + 20 + 9 characters). */
#define LV__MPATH 48
/* Writes "_versions/<name>" of e into buf (LV__MPATH bytes); returns buf. */
const char *lv__mpath(const lv__manifest_entry *e, char *buf);
/* A V2 manifest's path: "_versions/" + 20 digits + ".manifest" + NUL. */
#define LV__MPATH_V2 40
/* The path of e into buf (LV__MPATH_V2 bytes for a V2 name, else LV__MPATH), from `prev`, the
 * path of the entry before it (`pe`), when both have V2 names and e's version is pe's + 1: V2
 * counts down from UINT64_MAX, so prev is copied and its last digits decremented instead of
 * writing all 20 again.  Else as lv__mpath.  Returns buf. */
const char *lv__mpath_after(const lv__manifest_entry *e, const lv__manifest_entry *pe,
			    const char *prev, char *buf);
/* The paths of entries [0, n): one block of n * LV__MPATH bytes holds them (free *block). */
int lv__mpaths(const lv__manifest_entry *e, size_t n, const char ***paths, char **block);

/* Lists _versions/, sorted by version ascending, duplicates (V1+V2 of one version) folded. */
int lv__manifests_list(lv_storage *st, lv__manifest_entry **out, size_t *n, lv_error *err);
/* The same listing, handing every other name in _versions/ to `other` (payload) as it goes
 * (one listing where a caller also wants those); a non-zero value from it stops the listing. */
int lv__manifests_list_with(lv_storage *st, lv_list_cb other, void *payload,
			    lv__manifest_entry **out, size_t *n, lv_error *err);
/* Sorts entries by version and folds a version listed under both schemes (V2 kept); returns
 * how many are left. */
size_t lv__entries_sort_fold(lv__manifest_entry *v, size_t n);
/* Is `version` among the sorted entries? */
bool lv__entries_has(const lv__manifest_entry *e, size_t n, uint64_t version);

/*
 * Reads and parses one manifest (and its transaction) into `info`, strings in `arena`.
 * LV_ENOTFOUND means the manifest vanished.
 */
int lv__read_version_info(lv_storage *st, const char *path, lv__arena *arena,
			  lv_version_info *info, lv_error *err);
/*
 * The newest manifest of st read into `info` (strings in `arena`): *version is its version,
 * 0 when _versions/ lists none (then `info` is untouched and 0 returned).  Errors: the
 * listing's, and the read's (LV_ENOTFOUND with *version set: it vanished after the listing).
 */
int lv__read_newest_info(lv_storage *st, lv__arena *arena, lv_version_info *info,
			 uint64_t *version, lv_error *err);
/*
 * The same from a manifest's bytes already read (`path` names it in errors
 * and in info->manifest_path).  A transaction kept in _transactions/ is read
 * only if `read_txn_file`; otherwise such a manifest returns 1 and `info` is
 * not to be used.
 */
int lv__version_info_from_bytes(lv_storage *st, const char *path, const uint8_t *data, size_t size,
				bool read_txn_file, lv__arena *arena, lv_version_info *info,
				lv_error *err);

/* Builds the transaction_properties JSON object (sorted keys) from a parsed transaction. */
struct lv__txn;
int lv__txn_properties_json(const struct lv__txn *t, lv__arena *arena, const char **out);

/*
 * The one concurrent manifest reader.  paths[0..n) are read footer-first
 * (core/fetch.h) by `threads` workers, in chunks of `per` consecutive items,
 * with a cap on bytes of large manifests in flight; each is handed to `fn`
 * (on a worker thread; `data` valid during the call) with its chunk index.
 * rcs[i] gets each item's result: 0, LV_ENOTFOUND (the manifest vanished:
 * the caller decides) or an error.  Returns 0, or the error of the lowest
 * failed item (its message in *err).
 */
typedef int (*lv__manifest_fn)(void *ctx, size_t chunk, size_t i, const char *path,
			       const uint8_t *data, size_t size, lv_error *err);
int lv__manifests_each(lv_storage *st, int threads, const char *const *paths, size_t n, size_t per,
		       lv__manifest_fn fn, void *ctx, int *rcs, lv_error *err);
/* The chunk size lv__read_into_list uses for n manifests. */
size_t lv__manifests_per_chunk(size_t n, int threads);

/* Reads manifests into l (room for n items and n arenas must exist); vanished ones are recorded. */
int lv__read_into_list(lv_version_list *l, lv_storage *st, int threads, const char *const *paths,
		       size_t n, lv_error *err);

#endif
