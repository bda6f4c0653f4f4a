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
 * Parses a point in time: decimal milliseconds since the Unix epoch, or ISO 8601
 * "YYYY-MM-DD[(T| )HH:MM[:SS[.fraction]]][Z|+HH:MM|-HH:MM]" (no zone = UTC).
 * *ms_out is written only on success.  Errors: LV_EINVALID (NULL argument, text that
 * is not such a time, a field out of range).
 */
LV_EXTERN int lv_parse_time(const char *s, int64_t *ms_out, lv_error *err) LV_WARN_UNUSED;

/**
 * Parses a duration such as "7d", "36h", "90m", "45s", "500ms", "1w" (sums allowed: "1d12h").
 * *ms_out is written only on success.  Errors: LV_EINVALID (NULL argument, bad text, overflow).
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

/** Library version string, e.g. "1.2.3": CMakeLists.txt's project(VERSION) (static).  Errors: none. */
LV_EXTERN const char *lv_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
