/*
 * lancever/common.h - status codes, the caller-owned error struct, buffers.
 *
 * Every fallible function in lancever returns an int: 0 (LV_OK) on success or
 * one of the negative LV_E* codes below.  Functions also take a trailing
 * `lv_error *err` that may be NULL; on failure it receives the same code and a
 * human readable message that names the file or object involved.  No
 * allocation happens on the error path and no global or thread-local state is
 * used, so an lv_error can live on the caller's stack.  (The one process-wide
 * setting is the optional log handler, lv_set_log_handler below.)
 *
 * Conventions of every public header (each function's comment adds what differs):
 *  - "Errors:" lists the codes a function returns and when.  Everywhere, a NULL
 *    required argument is LV_EINVALID and a failed allocation LV_ENOMEM.  "Storage
 *    errors" are the codes of the storage calls the function makes (lancever/storage.h:
 *    LV_EINVALID for a bad path, LV_EIO when the backend fails, LV_ENOTFOUND, ...).
 *  - An object returned through `**out` is the caller's, released with its own
 *    lv_*_free() (all accept NULL); on error *out is NULL (after LV_EINVALID for a NULL
 *    argument it may be left as it was).  An lv_buf output is the caller's
 *    (lv_buf_dispose()) and empty on error.  Pointers returned by getters are
 *    borrowed from the object passed in and live as long as it does.  Functions that
 *    take no lv_error cannot fail ("Errors: none"), beyond what they say.
 */
#ifndef LANCEVER_COMMON_H
#define LANCEVER_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "lancever/version.h" /* LV_VERSION_MAJOR/MINOR/PATCH: generated from CMake's project() */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(LV_BUILDING_LIBRARY)
#define LV_EXTERN __attribute__((visibility("default")))
#else
#define LV_EXTERN
#endif

#if defined(__GNUC__)
#define LV_WARN_UNUSED __attribute__((warn_unused_result))
#define LV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LV_WARN_UNUSED
#define LV_PRINTF(a, b)
#endif

/** Status codes.  The list is short and stable: one code per *expected* outcome. */
enum lv_status {
	LV_OK = 0,
	LV_ENOTFOUND = -1,    /**< object, file or version does not exist */
	LV_ECORRUPT = -2,     /**< bytes do not parse as what they claim to be */
	LV_EEXISTS = -3,      /**< create-if-absent found the object already there */
	LV_EIO = -4,          /**< the storage backend failed */
	LV_ENOMEM = -5,       /**< allocation failed */
	LV_EINVALID = -6,     /**< bad argument or configuration value */
	LV_EUNSUPPORTED = -7, /**< a feature (flag, encoding, scheme) we do not implement */
	LV_ELIMIT = -8,       /**< an input exceeds a hard safety limit */
	LV_ECONFLICT = -9,    /**< a concurrent writer produced different content */
	LV_ETAGGED = -10      /**< cleanup refused: tagged versions would be removed */
};

#define LV_ERROR_MESSAGE_MAX 512

/** Caller-owned error detail.  Zero-initialise it (`lv_error e = {0};`). */
typedef struct lv_error {
	int code;                           /**< same value the call returned */
	char message[LV_ERROR_MESSAGE_MAX]; /**< NUL-terminated, never contains credentials */
} lv_error;

/** Static name of a status code ("LV_ECORRUPT", ...; "LV_EUNKNOWN" for others).  Errors: none. */
LV_EXTERN const char *lv_strerror(int code);

/** A byte buffer owned by the caller once returned; release with lv_buf_dispose(). */
typedef struct lv_buf {
	uint8_t *ptr;
	size_t size;
} lv_buf;

/** Frees the bytes of `b` and zeroes it.  Accepts NULL and empty buffers.  Errors: none. */
LV_EXTERN void lv_buf_dispose(lv_buf *b);

/**
 * Parses a point in time, the one TIME syntax of the library and the CLI (docs/cli.md, "Time
 * and duration"): decimal milliseconds since the Unix epoch, "@" and milliseconds
 * ("@1796169600000"), ISO 8601 "YYYY-MM-DD[(T| )HH:MM[:SS[.fraction]]][Z|+HH:MM|-HH:MM]" (no
 * zone = UTC), "now", or a duration (lv_parse_duration) and " ago" ("3 days ago", "1h 30min
 * ago": now minus it).  *ms_out is written only on success.  Errors: LV_EINVALID (NULL
 * argument, text that is not such a time, a field out of range, an overflow).
 */
LV_EXTERN int lv_parse_time(const char *s, int64_t *ms_out, lv_error *err) LV_WARN_UNUSED;

/**
 * Parses a duration in humantime's syntax, as Lance's config values spell it: spans of an
 * integer and a unit, optionally separated by spaces ("14days", "2weeks", "1h 30min", "7d",
 * "1d12h", "500ms"); units ns, us, ms, s/sec/secs/second(s), m/min/mins/minute(s),
 * h/hr/hrs/hour(s), d/day(s), w/week(s), M/month(s) (30.44 days), y/year(s) (365.25 days).
 * *ms_out is written only on success (truncated to ms).  Errors: LV_EINVALID (NULL
 * argument, bad text, a span without a unit, overflow).
 */
LV_EXTERN int lv_parse_duration(const char *s, int64_t *ms_out, lv_error *err) LV_WARN_UNUSED;

/** Levels of the messages given to an lv_log_fn. */
enum lv_log_level {
	LV_LOG_WARN = 1, /**< something went wrong and is being handled (e.g. an S3 request is retried) */
	LV_LOG_INFO = 2  /**< progress worth knowing about, not a problem */
};

/**
 * Receives the library's notices: one line of text without a trailing newline
 * (never containing credentials) and the `ctx` given to lv_set_log_handler.  The
 * library prints nothing itself; without a handler the notices are dropped.  It may
 * be called from several library threads at once, so it must be thread-safe; the
 * message is only valid during the call.
 */
typedef void (*lv_log_fn)(int level, const char *message, void *ctx);

/**
 * Installs `fn` (NULL: none) as the process-wide log handler.  Thread-safe; a
 * notice already being delivered on another thread may still reach the previous
 * handler.  Example, S3 retries: "s3: GET s3://bucket/key: HTTP 503, retrying
 * (attempt 2 of 5, 27.4 s left of 30 s)".  Errors: none.
 */
LV_EXTERN void lv_set_log_handler(lv_log_fn fn, void *ctx);

/**
 * Progress of a long operation (lv_cleanup, lv_expire, lv_checkpoint_write, lv_check_run):
 * `phase` names the step ("reading manifests", "writing checkpoint", ...; static text,
 * valid during the call), `done` of `total` items of that phase are done (`total` 0: the
 * phase has no count).  The contract, for every operation that takes one:
 *  - it is called on the thread that called the operation, never on a worker thread, and
 *    never twice at once;
 *  - at a bounded rate: when a phase begins, after each batch of items (at most one call
 *    per 1,024 manifests, or per file for checkpoints and segments), and when a phase
 *    ends (done == total), never once per row; a run ends with phase "done" (1 of 1) on
 *    success;
 *  - within a phase, `done` never decreases and `total` does not change, so done/total
 *    only grows; a phase may come again (a race with a concurrent writer is met by
 *    looking again), starting from its own first count;
 *  - it cannot stop the work (it returns nothing) and must not call back into the same
 *    dataset handle; `payload` is the caller's pointer, passed as given.
 */
typedef void (*lv_progress_cb)(const char *phase, uint64_t done, uint64_t total, void *payload);

/** The library's version at run time, "MAJOR.MINOR.PATCH" (e.g. "1.2.3": CMakeLists.txt's
 *  project(VERSION); static), which may differ from the LV_VERSION_* of the header a caller
 *  was built with.  Errors: none. */
LV_EXTERN const char *lv_version(void);
/** The same as lv_version() (static), under its 0.1 name.  Errors: none. */
LV_EXTERN const char *lv_version_string(void);
/** The run-time version as one number, LV_VERSION_NUMBER's form (MAJOR * 10000 + MINOR * 100
 *  + PATCH).  Errors: none. */
LV_EXTERN int lv_version_number(void);

/*
 * The struct rule (CONTRIBUTING.md, "The struct rule").  Every public options, policy,
 * config or caller-allocated result struct starts with `int version` and has an
 * `int lv_X_init(lv_X *x, int version)` (libgit2's form): the caller passes the version
 * of the header it was built with (LV_X_VERSION); the function sets that version and
 * every default, and writes no byte beyond that version's layout.  Every entry point
 * accepts the versions it knows and returns LV_EINVALID for 0 (not initialised), for a
 * layout from before 1.0 and for a version newer than the library; it writes into a
 * result struct only the fields its version has.  Fields are only appended; no struct
 * holds another public struct by value (a pointer, NULL = defaults).  The *_INIT
 * macros are the C shorthand of the init functions and agree with them.  Structs the
 * library hands out (lv_version_info, lv_tag, ...) have no version: their fields are
 * only appended.  lv_error, lv_buf and the elements of arrays a caller passes in
 * (lv_column, lv_kv, lv_cleanup_file) never change: a change is a new function.
 *
 * For callers that cannot read C headers (FFI: the Python package), the library
 * describes its own structs: their size, current version and every field's name, type
 * and offset, so no layout needs to be copied.
 */

/** Types of struct fields, as lv_struct_field() reports them. */
enum lv_field_type {
	LV_FIELD_INT = 1,    /**< int */
	LV_FIELD_BOOL = 2,   /**< bool */
	LV_FIELD_I64 = 3,    /**< int64_t */
	LV_FIELD_U64 = 4,    /**< uint64_t */
	LV_FIELD_SIZE = 5,   /**< size_t */
	LV_FIELD_DOUBLE = 6, /**< double */
	LV_FIELD_STR = 7,    /**< const char * (NUL-terminated UTF-8 or NULL) */
	LV_FIELD_PTR = 8,    /**< any other data or function pointer */
	LV_FIELD_CHARS = 9,  /**< char[size]: NUL-terminated text inside the struct */
	LV_FIELD_U64S = 10,  /**< uint64_t[size / 8] */
	LV_FIELD_UNSIGNED = 11 /**< unsigned int */
};

/**
 * Describes the public struct `name` ("lv_cleanup_policy", "lv_version_info", ...): its
 * size in bytes (sizeof in this library), its current version (0 for a struct without a
 * version field: one the library hands out, whose fields are only appended) and its number
 * of fields.  Each out may be NULL.  Errors: LV_EINVALID (NULL name), LV_ENOTFOUND (no
 * public struct of that name).
 */
LV_EXTERN int lv_struct_info(const char *name, size_t *size, int *version, size_t *nfields);

/**
 * Field `i` (< nfields, in declaration order) of the public struct `name`: its name
 * (static), type (enum lv_field_type), offset and size in bytes.  Each out may be NULL.
 * Errors: LV_EINVALID (NULL name), LV_ENOTFOUND (no such struct, or i out of range).
 */
LV_EXTERN int lv_struct_field(const char *name, size_t i, const char **field, int *type,
			      size_t *offset, size_t *size);

#ifdef __cplusplus
}
#endif
#endif
