/*
 * Storage options as key/value pairs (LanceDB's `storage_options`): a bag that
 * backends take keys from, so that a key nobody took can be reported by name.
 *
 * The public form is lv_storage_options (lancever/storage.h), an opaque bag of
 * owned copies, defined in options.c; lv__optbag is one open's view of it with a
 * "taken" mark per pair, living for one open.  Keys compare case-insensitively
 * (Lance's rule).  Values may be secrets: no function here ever puts a value into
 * a message, only keys.
 */
#ifndef LV_OBJSTORE_OPTIONS_H
#define LV_OBJSTORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lancever/storage.h"

typedef struct lv__optbag {
	size_t n;
	const char **keys, **vals; /* n each: the caller's pairs, borrowed from its lv_storage_options */
	bool *used;
} lv__optbag;

/* A NULL-terminated list of the aliases of one option: LV_OPT("aws_region", "region"). */
#define LV_OPT(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Fills the bag with the pairs of `o` (may be NULL: none), borrowed; `o` must outlive the
 * bag.  LV_ENOMEM. */
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
 * and that need nothing from it (docs/operations.md, "Cloud" says why for each). */
void lv__opt_accept(lv__optbag *b, const char *const *names);
/* LV_EUNSUPPORTED naming the first pair whose key is in `names`: options LanceDB knows that
 * lancever does not implement. */
int lv__opt_refuse(const lv__optbag *b, const char *const *names, const char *where, lv_error *err);
/* For stores that take no options: LV_EINVALID naming the first pair, except the keys that
 * say where an object store is (aws_region, region, aws_endpoint, endpoint, allow_http,
 * aws_allow_http), which are ignored as Lance ignores them for a local path. */
int lv__opt_none(lv__optbag *b, const char *what, lv_error *err);
/* LV_EINVALID naming the first pair nobody took ("unknown storage option 'k' for <where>"). */
int lv__opt_leftover(const lv__optbag *b, const char *where, lv_error *err);

#endif
