#ifndef LV_CORE_DATASET_INTERNAL_H
#define LV_CORE_DATASET_INTERNAL_H

#include "lancever/dataset.h"
#include "util/arena.h"

/*
 * A list of warnings.  A call collects into its own log per attempt and
 * commits the final attempt's to the dataset (lv__warn_commit), so a race
 * that a retry resolved leaves no warning behind.
 */
typedef struct lv__warnlog {
	lv_warning *v;
	size_t n, cap;
} lv__warnlog;

/* Adds a warning (message formatted; path copied, may be NULL).  Out of memory drops it. */
void lv__warn(lv__warnlog *wl, int kind, const char *path, uint64_t first, uint64_t last,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Moves wl's warnings onto ds (folding duplicates); wl is left empty.  Returns how many were new. */
size_t lv__warn_commit(lv_dataset *ds, lv__warnlog *wl);
void lv__warnlog_dispose(lv__warnlog *wl);

/* Records l's gaps: versions in [start, newest row] that no row holds.  LV_ENOMEM or 0. */
struct lv_version_list;
int lv__list_find_gaps(struct lv_version_list *l, uint64_t start);
uint64_t lv__list_gap_versions(const struct lv_version_list *l);
/* One warning per tag or branch file a lenient refs load skipped. */
void lv__warn_refs(lv__warnlog *wl, const lv_refs *refs);
/* "version 7" or "versions 3-9". */
void lv__format_range(char *buf, size_t cap, uint64_t first, uint64_t last);

struct lv_dataset {
	lv_storage *st;      /* where _versions/ lives: the root, or tree/<branch> */
	lv_storage *root;    /* the root dataset (tags, branches); == st on main */
	lv_storage *owned_root; /* root handle owned by the dataset, if any */
	lv_storage *owned_sub;  /* branch sub-handle owned by the dataset, if any */
	char *branch;        /* NULL = main */
	int threads;
	bool remote;         /* an object store: each request is a round trip */
	lv__warnlog warnings; /* accumulated over calls; see lv_dataset_warning() */
};

struct lv_version_list {
	lv_version_info *items;
	size_t n;
	lv_arena *arenas; /* items are built concurrently, each into its own arena */
	size_t narenas;
	char **vanished;
	size_t nvanished;
	uint64_t (*gaps)[2]; /* history lists: unrecorded version ranges [first, last] */
	size_t ngaps;
};

/* Marks is_tagged from the main branch's tags (items sorted by version). */
void lv__mark_tags(lv_dataset *ds, lv_version_info *items, size_t n, lv_history_report *rep);
/* The same with refs already loaded (NULL = they could not be: load_err says why). */
void lv__mark_tags_with(lv_dataset *ds, const lv_refs *refs, const lv_error *load_err,
			lv_version_info *items, size_t n, lv_history_report *rep);

/* A listed manifest of _versions/. */
typedef struct lv_manifest_entry {
	uint64_t version;
	int scheme;      /* LV_NAME_V1 / LV_NAME_V2 */
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
/*
 * The same from a manifest's bytes already read (`path` names it in errors
 * and in info->manifest_path).  A transaction kept in _transactions/ is read
 * only if `read_txn_file`; otherwise such a manifest returns 1 and `info` is
 * not to be used.
 */
int lv__version_info_from_bytes(lv_storage *st, const char *path, const uint8_t *data, size_t size,
				bool read_txn_file, lv_arena *arena, lv_version_info *info,
				lv_error *err);

/* Builds the transaction_properties JSON object (sorted keys) from a parsed transaction. */
struct lv_txn;
int lv__txn_properties_json(const struct lv_txn *t, lv_arena *arena, const char **out);

/* List construction helpers shared by versions.c and checkpoint.c. */
lv_version_list *lv__version_list_new(size_t cap_items, size_t cap_arenas);
int lv__add_vanished(lv_version_list *l, const char *path);
/* Reads manifests into l (room for n items and n arenas must exist); vanished ones are recorded. */
int lv__read_into_list(lv_version_list *l, lv_storage *st, int threads, const char *const *paths,
		       size_t n, lv_error *err);
void lv__sort_infos(lv_version_info *v, size_t n);
/* `refs` may be NULL: they are then loaded here (refs_err is for refs that failed to load). */
int lv__versions_from_manifests(lv_version_list **out, lv_dataset *ds,
				const lv_manifest_entry *entries, size_t n, const lv_refs *refs,
				const lv_error *refs_err, lv_history_report *rep, lv_error *err);
int lv__versions_plain(lv_version_list **out, lv_dataset *ds, lv_history_report *report,
		       lv_error *err);
void lv__report_begin(lv_dataset *ds, lv_history_report *rep, lv_storage_stats *s0);
void lv__report_end(lv_dataset *ds, lv_history_report *rep, const lv_storage_stats *s0);

#endif
