/*
 * Internals shared by the files of lv_cleanup (core/cleanup/): what each
 * manifest references, the plan, the file listing and the deleter.
 */
#ifndef LV_CORE_CLEANUP_INT_H
#define LV_CORE_CLEANUP_INT_H

#include "core/cleanup/strset.h"
#include "core/dataset.h"
#include "core/manifests.h"
#include "lancever/cleanup.h"
#include "util/arena.h"
#include "util/util.h"

/* ---- what a manifest references (mrefs.c) ---- */

/* A referenced path longer than this is refused; a key adds at most a directory prefix. */
#define LV__REF_PATH_MAX 4000
#define LV__CLEANUP_KEY_MAX (LV__REF_PATH_MAX + 64)

/* Writer flags whose meaning cleanup knows (every file they imply is one cleanup sees):
 * 1, 2, 4, 8, 16, 32, 128 and 256 (format/manifest.h names them; 128, covering-index metadata,
 * adds no file: pylance 14.0.2 sets it and cleans such a dataset).  Any other bit (64: data
 * overlay files, which Lance 14's release build cannot even read; 512 and higher) stops a
 * cleanup before anything changes, as Lance's ensure_can_write_manifest does. */
#define LV_WRITER_FLAGS_KNOWN 447u

/* A transaction file's name in Lance's form "{read_version}-{uuid}.txn" (txnname.c): 24
 * bytes where the string takes ~55.  rv == UINT64_MAX: none. */
typedef struct lv__txn_name {
	uint64_t rv;
	uint8_t uuid[16];
} lv__txn_name;
/* "_transactions/" + the longest such name + NUL */
#define LV__TXN_PATH_MAX 80
/* Parses a name in that form (and only one that formats back to the same bytes). */
bool lv__txn_name_parse(const char *p, size_t n, lv__txn_name *out);
/* Writes "_transactions/<name>" into buf (LV__TXN_PATH_MAX bytes); returns its length. */
size_t lv__txn_name_path(const lv__txn_name *t, char *buf);

/* A transaction file's name and the digest of its path "_transactions/<name>". */
typedef struct lv__txn_ref {
	lv__txn_name name;
	lv__digest key;
} lv__txn_ref;

/* How a manifest names its transaction file (lv__mref.txn_form). */
enum { LV__TXN_NONE, LV__TXN_LANCE, LV__TXN_OTHER };

/* A version's history row built from the manifest bytes cleanup reads anyway. */
typedef struct lv__mrow {
	lv_version_info info;
	lv__arena arena; /* info's strings */
} lv__mrow;

typedef struct lv__mref {
	const char *path;   /* manifest path (the caller's: it outlives the read) */
	bool branch;        /* a branch's manifest: only its base_id files concern the root */
	uint64_t version;
	int64_t ts_ms;
	uint64_t size;
	uint64_t writer_flags; /* the manifest's writer_feature_flags */
	lv__dbuf refs;       /* lv__digest of each root-relative path referenced ("_indices/<uuid>"
			      * for indices), taken on the reading thread */
	lv_error *err;      /* while its manifest is parsed: where a refusal is written */
	bool want_info;     /* a version of main: also build its history row (for the checkpoint) */
	lv__mrow *row;      /* that row, when built (not for a transaction in _transactions/) */
	lv__txn_ref txn;    /* its transaction file (the digest taken for refs anyway), when
			     * txn_form is LV__TXN_LANCE */
	uint8_t txn_form;   /* LV__TXN_*: OTHER also when any other reference enters _transactions/ */
} lv__mref;

typedef struct lv__mrefs_job {
	lv_storage *st;
	lv__mref *m;
} lv__mrefs_job;

/* Reads the manifests of m[0..n) (paths relative to st) concurrently; fails with the first
 * error (lowest index). */
int lv__mrefs_read(lv_dataset *ds, lv_storage *st, lv__mref *m, size_t n, lv_error *err);
/* Adds every path m references to s.  0 or LV_ENOMEM. */
int lv__mrefs_add_to(lv__strset *s, const lv__mref *m);
/* Frees what m[0..n) hold (refs, rows not taken), then m itself; not the paths. */
void lv__mrefs_dispose(lv__mref *m, size_t n);
void lv__mrow_free(lv__mrow *r);
/* References of other lineages' manifests, added to `referenced`. */
int lv__mrefs_of_others(lv_dataset *ds, lv__strset *referenced, lv_error *err);
/* References of manifests committed after `latest` (concurrent writers) and of the lineage's
 * detached versions, from one listing of _versions/, added to `referenced`.  That listing's
 * temporary files (_versions/.tmp*, what the sweep judges there) are added to `temps` (may
 * be NULL), so the sweep need not list _versions/ again.  `listed` (may be NULL) gets the
 * listing's versions (lv__manifests_list's; the caller frees them), so the checkpoint writer
 * need not list again either. */
struct lv__file_vec;
int lv__mrefs_of_newer(lv_dataset *ds, uint64_t latest, lv__strset *referenced,
		       struct lv__file_vec *temps, lv__manifest_entry **listed, size_t *nlisted,
		       lv_error *err);

/* ---- policies (policy.c) ---- */

/* Checks the caller's arguments: versions of policy and stats (stats may be NULL), then the
 * policy's values.  0, or LV_EINVALID (NULL argument, unknown version, invalid values, an
 * empty list). */
int lv__cleanup_policy_read(const lv_dataset *ds, const lv_cleanup_policy *pol,
			    const lv_cleanup_stats *stats, lv_error *err);
/* 0 when the caller's stats (may be NULL) are of a version this library writes, else
 * LV_EINVALID. */
int lv__stats_check(const lv_cleanup_stats *s, lv_error *err);

/* The clock of a run: the policy's now_ms, or the wall clock when it is 0. */
int64_t lv__policy_now(int64_t now_ms);
/* The age condition in force: older_than_ms as given, or, when no condition at all is set
 * (no age, retain count, version bound or version list), LV_CLEANUP_DEFAULT_OLDER_THAN_MS. */
int64_t lv__policy_older(int64_t older_than_ms, int64_t retain_versions, uint64_t before_version,
			 bool listed);

/* ---- clean_referenced_branches (cascade.c) ---- */

/* Whether branch `branch` (opened as bds) is due for the cascade (*due), and with which policy
 * (*out, when due): its latest manifest's lance.auto_cleanup.* keys over the parent's clock,
 * dry run and rate limit.  LV_EINVALID for a key that does not parse; reading errors. */
int lv__cascade_policy(lv_dataset *bds, const char *branch, const lv_cleanup_policy *parent,
		       lv_cleanup_policy *out, bool *due, lv_error *err);
/* Where a cascaded branch's reports go: the parent's policy (callbacks, payload). */
typedef struct lv__relay {
	const lv_cleanup_policy *pol;
	const char *branch;
} lv__relay;
/* Points bp's on_file / on_candidate at r (paths prefixed tree/NAME/); r outlives the run. */
void lv__cascade_relay(lv_cleanup_policy *bp, const lv__relay *r);
/* Copies bds's warnings onto ds, each prefixed with the branch's name. */
void lv__cascade_keep_warnings(lv_dataset *ds, lv_dataset *bds, const char *name);
/* to += b: removed versions, files and bytes. */
void lv__cleanup_stats_add(lv_cleanup_stats *to, const lv_cleanup_stats *b);

/* ---- listing (files.c) ---- */

typedef struct lv__file_ent {
	char *path;
	uint64_t size;
	int64_t mtime_ms;
} lv__file_ent;

typedef struct lv__file_vec {
	lv__file_ent *v;
	size_t n, cap;
	int rc;
} lv__file_vec;

/* A listing callback appending to an lv__file_vec (payload). */
int lv__collect_file(const lv_list_entry *e, void *payload);
void lv__file_vec_dispose(lv__file_vec *fv);
bool lv__ends_with(const char *s, const char *suf);

/*
 * The version floor of Lance's version hint (files.c): readers that trust
 * _versions/latest_version_hint.json look for manifest N, N+1, ... and stop at the first one
 * missing, so no manifest at or above the hint's N may go (a hole there would show them a
 * rolled-back table).  *floor = N, or UINT64_MAX when the lineage has no hint.  A hint that
 * cannot be read or parsed fails (LV_ECORRUPT, storage errors): nothing is deleted on a guess.
 */
int lv__hint_floor(lv_dataset *ds, uint64_t *floor, lv_error *err);

/* Copies a run's stats into the caller's checked struct (policy.c), only the fields of its
 * version, which it keeps.  `to` may be NULL. */
void lv__stats_out(lv_cleanup_stats *to, const lv_cleanup_stats *s);

/* ---- deleting (sweep.c) ---- */

/* Deletions are queued and sent in batches (one DeleteObjects request per 1000 on S3). */
#define LV__DEL_BATCH 1000

typedef struct lv__deleter {
	lv_dataset *ds;
	const lv_cleanup_policy *p;
	lv_cleanup_stats *s;
	const char *path[LV__DEL_BATCH];
	const char *reason[LV__DEL_BATCH];
	int kind[LV__DEL_BATCH];
	uint64_t size[LV__DEL_BATCH];
	bool unverified[LV__DEL_BATCH]; /* Lance's flag, for on_candidate */
	uint64_t version[LV__DEL_BATCH]; /* an old manifest's version, for on_candidate */
	int rcs[LV__DEL_BATCH];
	size_t n;
	uint64_t manifests_deleted; /* old manifests this process deleted */
	char *held[LV__DEL_BATCH];  /* paths the deleter owns until the batch is sent */
	size_t nheld;
	double rate;                /* deletes per second (0 = no limit) */
	uint64_t sent;              /* deletes sent so far (for the rate) */
	uint64_t start_ns;          /* when the first was sent */
} lv__deleter;

/* Sends the queued deletes (and frees the paths it held for them). */
int lv__del_flush(lv__deleter *d, lv_error *err);
/* Hands the deleter a malloc'ed path to free once its batch is sent (call before queuing it). */
int lv__del_hold(lv__deleter *d, char *path);
void lv__del_release(lv__deleter *d);
/* Queues `path` and `reason` (which must stay valid until the next flush); the flush reports
 * it to on_file once it is gone (a dry run: every file). */
int lv__remove_file(lv__deleter *d, const char *path, int kind, uint64_t size, const char *reason,
		    lv_error *err);
/* The same, with Lance's unverified flag (reported to on_candidate). */
int lv__remove_file_u(lv__deleter *d, const char *path, int kind, uint64_t size, const char *reason,
		      bool unverified, uint64_t version, lv_error *err);
/*
 * Which rule a listed file falls under (an LV_KIND_*), or -1: never touched
 * by the listing pass.  `key` receives the name it is referenced by (an
 * index's directory for files under _indices/; a blob sidecar's parent data
 * file data/<key>.lance for data/<key>/<id>.blob).  *tmp (may be NULL) says
 * whether it is a writer's leftover temporary file (data/.tmp*,
 * data/<key>/.tmp*, _versions/.tmp*): removed only when unverified-old (older
 * than 7 days, or delete_unverified), never on a reference's say-so.  A staged
 * manifest _versions/<v>.manifest-<uuid> is never touched.
 */
int lv__classify(const char *path, char *key, size_t cap, bool *tmp);

/* ---- the sweep's scan (scan.c) ---- */

/* The directories a sweep judges, in order (_transactions/ last: the own pass gates the
 * manifests' removal, and every other directory is settled before it). */
#define LV__SWEEP_NDIRS 5
extern const char *const lv__sweep_dirs[LV__SWEEP_NDIRS];

/* Why a file may go, or NULL if it stays (cleanup.c's rule; only reads the plan). */
typedef const char *(*lv__scan_rule)(void *payload, const lv_list_entry *f, int kind,
				     lv__digest key, bool tmp, bool *unverified);
/* A file the scan judged to go: `path` (malloc'ed) is the caller's.  Or, with path NULL, a
 * mark: the own pass has settled the transaction files of manifests [0, mark). */
typedef struct lv__scan_item {
	char *path;
	int kind;
	uint64_t size;
	const char *reason;
	bool unverified;
	size_t mark;
} lv__scan_item;
/*
 * The own pass (scan.c): before _transactions/ is listed, the transaction files the old
 * manifests name are looked up and judged in version order, a mark queued after each batch,
 * so the caller can remove those manifests behind the marks while the scan goes on.  The
 * listing then skips every name in `settled` (the old manifests' references: the caller
 * guarantees each of them in _transactions/ is one path() gave).
 */
typedef struct lv__scan_own {
	size_t n;                 /* manifests, in version order */
	/* manifest i's transaction file ("_transactions/...", LV__TXN_PATH_MAX bytes) and the
	 * digest of that path, if the pass settles one for it */
	bool (*path)(void *payload, size_t i, char *buf, lv__digest *key);
	void *payload;
	const lv__strset *settled;
} lv__scan_own;
typedef struct lv__scan lv__scan;
/* Starts scanning lv__sweep_dirs on a thread of its own (scan.c's invariants): files
 * `referenced` names are skipped, the rest judged by `rule`; _versions/ is not listed, its
 * files are `vtemps` (the plan's listing); `own` (may be NULL) adds the own pass.  Everything
 * passed must outlive lv__scan_end. */
int lv__scan_start(lv__scan **out, lv_dataset *ds, const lv__strset *referenced,
		   const lv__file_vec *vtemps, const lv__scan_own *own, lv__scan_rule rule,
		   void *payload, lv_error *err);
/* The next file to go, in listing order (waits for it): 1 and *item; 0 at the end; < 0 when
 * the scan failed (err).  *dirs_done: directories scanned so far. */
int lv__scan_next(lv__scan *s, lv__scan_item *item, size_t *dirs_done, lv_error *err);
/* Stops a scan still running, waits for its thread, frees it (NULL: nothing). */
void lv__scan_end(lv__scan *s);

#endif
