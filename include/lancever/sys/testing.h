/*
 * lancever/sys/testing.h - test hooks: a fault-injecting storage shim and the
 * mtimes of the in-memory store.  For tests and fuzzers, not for applications.
 */
#ifndef LANCEVER_SYS_TESTING_H
#define LANCEVER_SYS_TESTING_H

/* Test hooks exist only in the test library (lancever_test: liblancever_test.a/.so, built
 * with LV_TEST_HOOKS); the production liblancever has none of them (CONTRIBUTING "Tests"). */
#ifndef LV_TEST_HOOKS
#error "test hooks: link lancever_test (it defines LV_TEST_HOOKS); liblancever has none"
#endif

#include "../storage.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which calls a fault applies to (bit mask). */
enum lv_fault_op {
	LV_FAULT_LIST = 1 << 0,
	LV_FAULT_READ = 1 << 1, /* whole and ranged reads */
	LV_FAULT_HEAD = 1 << 2,
	LV_FAULT_WRITE = 1 << 3,
	LV_FAULT_CREATE = 1 << 4,
	LV_FAULT_DELETE = 1 << 5,
	LV_FAULT_ALL = 0x3f
};

/** What happens when a fault triggers. */
enum lv_fault_kind {
	LV_FAULT_FAIL = 1,    /**< the call fails with LV_EIO and has no effect */
	LV_FAULT_SHORT = 2,   /**< a read returns only the first half of the bytes */
	LV_FAULT_CORRUPT = 3, /**< a read returns bytes with one byte flipped */
	/* A store that acknowledges writes it does not keep (issue 24): */
	LV_FAULT_DROP = 4,     /**< a write or create answers 0 and stores nothing */
	LV_FAULT_TRUNCATE = 5, /**< a write or create answers 0 and stores the first half */
	LV_FAULT_HIDE = 6,     /**< read, ranged read and head answer LV_ENOTFOUND: on the
				    FIRST `nth` counted calls (a write shown late), or on every
				    one from the nth with `persistent` */
	LV_FAULT_UNLISTED = 7  /**< a list call (each is counted, whatever its directory) omits
				    every entry whose path contains path_substring */
};

typedef struct lv_fault_spec {
	unsigned ops;        /**< lv_fault_op mask of calls that are counted */
	uint64_t nth;        /**< 1-based: the Nth counted call triggers (0 = never) */
	bool persistent;     /**< keep triggering on every counted call after the Nth */
	int kind;            /**< lv_fault_kind */
	const char *path_substring; /**< only count calls whose path contains this (NULL = all) */
} lv_fault_spec;

/**
 * Wraps `inner` in a fault-injecting shim (the shim takes ownership of `inner`
 * on success; on failure the caller keeps it).  Works over any backend; the shim
 * reports what `inner` reports for lv_storage_is_remote() and
 * lv_storage_credential_source().  `spec` NULL = never trigger; its strings are copied.
 * *out is the caller's: lv_storage_free() (which frees `inner` too); NULL on error.
 * Errors: LV_EINVALID (NULL out or inner, bad spec), LV_ENOMEM.
 */
LV_EXTERN int lv_storage_fault_wrap(lv_storage **out, lv_storage *inner,
				    const lv_fault_spec *spec, lv_error *err) LV_WARN_UNUSED;

/**
 * Replaces the spec of a fault shim (NULL = never trigger) and resets its call counter.
 * Errors: LV_EINVALID (`shim` is not a fault shim, bad spec), LV_ENOMEM.
 */
LV_EXTERN int lv_storage_fault_set(lv_storage *shim, const lv_fault_spec *spec,
				   lv_error *err) LV_WARN_UNUSED;

/** Number of counted calls a fault shim has seen since the last set.  Errors: none (0 if
 *  `shim` is not a fault shim). */
LV_EXTERN uint64_t lv_storage_fault_calls(const lv_storage *shim);

/**
 * Sets an object's mtime in an in-memory store, also seen through shims and
 * sub-handles (for tests of age rules).  Errors: LV_EINVALID (the store is not
 * in-memory, a bad path), LV_ENOTFOUND (the object is absent).
 */
LV_EXTERN int lv_storage_mem_set_mtime(lv_storage *st, const char *path, int64_t mtime_ms,
				       lv_error *err) LV_WARN_UNUSED;

/**
 * Makes the next `n` directory watches the local backend's notifier adds (inotify) fail with
 * `code` (LV_ELIMIT as when fs.inotify.max_user_watches is reached, LV_EUNSUPPORTED as on a
 * network filesystem), so tests reach the watcher's fallback to polling (lancever/watch.h).
 * n = 0 clears it.  Errors: none.
 */
LV_EXTERN void lv_storage_notify_fail(int n, int code);

#ifdef __cplusplus
}
#endif
#endif
