/*
 * Storage options as key/value pairs (LanceDB's `storage_options`): a bag that
 * backends take keys from, so that a key nobody took can be reported by name.
 *
 * Keys compare case-insensitively (Lance's rule).  Values may be secrets: no
 * function here ever puts a value into a message, only keys.  The bag borrows
 * the caller's strings; it lives for one lv_storage_open() call.
 */
#ifndef LV_OBJSTORE_OPTIONS_H
#define LV_OBJSTORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/storage.h"

typedef struct lv__optbag {
	size_t n;
	size_t npairs;             /* how many of the n came as key/value pairs (the rest: v1 fields) */
	const char **keys, **vals; /* n each: the caller's pairs, then the v1 struct fields */
	bool *used;
} lv__optbag;

/* A NULL-terminated list of the aliases of one option: LV_OPT("aws_region", "region"). */
#define LV_OPT(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * Fills the bag from `o` (may be NULL): the key/value pairs of a version-2 struct,
 * then s3_endpoint/s3_region/s3_allow_http as "aws_endpoint"/"aws_region"/"allow_http"
 * (so an explicit pair wins).  LV_EINVALID for a NULL or empty key, a NULL value, or an
 * unknown struct version; LV_ENOMEM.
 */
int lv__optbag_init(lv__optbag *b, const lv_storage_options *o, lv_error *err);
void lv__optbag_dispose(lv__optbag *b);

/* The value of the first pair whose key is one of `names`, marking every such pair taken;
 * NULL if none. */
const char *lv__opt_get(lv__optbag *b, const char *const *names);
/* As lv__opt_get, falling back to the first set, non-empty environment variable of `env`
 * (a NULL-terminated list, may be NULL). */
const char *lv__opt_get_env(lv__optbag *b, const char *const *names, const char *const *env);

/* A boolean ("true"/"false", "1"/"0", "yes"/"no", "on"/"off", "y"/"n"); `dflt` if unset.
 * LV_EINVALID naming the key (not the value) if it is none of those. */
int lv__opt_bool(lv__optbag *b, const char *const *names, const char *const *env, bool dflt,
		 bool *out, lv_error *err);
/* A duration ("30s", "500ms", "2m", or a bare number of `bare_unit_ms`) in ms, within
 * [1, max_ms]; *out untouched if unset. */
int lv__opt_ms(lv__optbag *b, const char *const *names, const char *const *env,
	       int64_t bare_unit_ms, int64_t max_ms, int64_t *out, lv_error *err);
/* A decimal integer in [lo, hi]; *out untouched if unset. */
int lv__opt_u64(lv__optbag *b, const char *const *names, const char *const *env, uint64_t lo,
		uint64_t hi, uint64_t *out, lv_error *err);

/* Marks every pair whose key is in `names` (NULL-terminated) taken: options lancever accepts
 * and that need nothing from it (README, "Cloud" says why for each). */
void lv__opt_accept(lv__optbag *b, const char *const *names);
/* LV_EUNSUPPORTED naming the first pair whose key is in `names`: options LanceDB knows that
 * lancever does not implement. */
int lv__opt_refuse(const lv__optbag *b, const char *const *names, const char *where, lv_error *err);
/* LV_EINVALID naming the first key/value pair, if any: for stores that take no options.  The
 * version-1 fields (s3_endpoint, s3_region, s3_allow_http) are accepted and ignored there, as
 * they always were. */
int lv__opt_none(lv__optbag *b, const char *what, lv_error *err);
/* LV_EINVALID naming the first pair nobody took ("unknown storage option 'k' for <where>"). */
int lv__opt_leftover(const lv__optbag *b, const char *where, lv_error *err);

#endif
