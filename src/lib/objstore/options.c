/* Storage options: the public bag (lv_storage_options) and the per-open view of it
 * (options.h).  Values never reach a message: only keys do. */
#include "objstore/options.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

/* The public bag (lancever/storage.h): owned copies of the caller's pairs, in order. */
struct lv_storage_options {
	size_t n, cap;
	char **keys, **vals;
};

#define MAX_PAIRS 100000

int lv_storage_options_new(lv_storage_options **out, lv_error *err)
{
	if (!out)
		return lv__err(err, LV_EINVALID, "lv_storage_options_new: NULL output");
	*out = lv__calloc(1, sizeof **out);
	return *out ? 0 : lv__err(err, LV_ENOMEM, "storage options: out of memory");
}

int lv_storage_options_set(lv_storage_options *o, const char *key, const char *value, lv_error *err)
{
	if (!o || !key || !*key || !value)
		return lv__err(err, LV_EINVALID, "storage option: %s",
			       !o ? "NULL bag" : !key || !*key ? "NULL or empty key" : "NULL value");
	if (o->n == MAX_PAIRS)
		return lv__err(err, LV_ELIMIT, "more than %d storage options", MAX_PAIRS);
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 8;
		char **k = lv__realloc(o->keys, cap * sizeof *k);
		if (k)
			o->keys = k;
		char **v = k ? lv__realloc(o->vals, cap * sizeof *v) : NULL;
		if (!v)
			return lv__err(err, LV_ENOMEM, "storage options: out of memory");
		o->vals = v;
		o->cap = cap;
	}
	char *k = lv__strdup(key), *v = lv__strdup(value);
	if (!k || !v) {
		lv__free(k);
		lv__free_secret(v);
		return lv__err(err, LV_ENOMEM, "storage options: out of memory");
	}
	o->keys[o->n] = k;
	o->vals[o->n++] = v;
	return 0;
}

void lv_storage_options_free(lv_storage_options *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++) {
		lv__free(o->keys[i]);
		lv__free_secret(o->vals[i]);
	}
	lv__free(o->keys);
	lv__free(o->vals);
	lv__free(o);
}

int lv__optbag_init(lv__optbag *b, const lv_storage_options *o, lv_error *err)
{
	memset(b, 0, sizeof *b);
	if (!o || !o->n)
		return 0;
	b->keys = lv__calloc(o->n, sizeof *b->keys);
	b->vals = lv__calloc(o->n, sizeof *b->vals);
	b->used = lv__calloc(o->n, sizeof *b->used);
	if (!b->keys || !b->vals || !b->used) {
		lv__optbag_dispose(b);
		return lv__err(err, LV_ENOMEM, "open: out of memory");
	}
	for (size_t i = 0; i < o->n; i++) {
		b->keys[i] = o->keys[i];
		b->vals[i] = o->vals[i];
	}
	b->n = o->n;
	return 0;
}

void lv__optbag_dispose(lv__optbag *b)
{
	lv__free(b->keys);
	lv__free(b->vals);
	lv__free(b->used);
	memset(b, 0, sizeof *b);
}

static bool named(const char *key, const char *const *names)
{
	for (; names && *names; names++)
		if (!strcasecmp(key, *names))
			return true;
	return false;
}

const char *lv__opt_get(lv__optbag *b, const char *const *names)
{
	const char *v = NULL;
	for (size_t i = 0; i < b->n; i++)
		if (named(b->keys[i], names)) {
			if (!v)
				v = b->vals[i];
			b->used[i] = true;
		}
	return v;
}

const char *lv__opt_get_env(lv__optbag *b, const char *const *names, const char *const *env)
{
	const char *v = lv__opt_get(b, names);
	for (; !v && env && *env; env++) {
		const char *e = getenv(*env);
		if (e && *e)
			v = e;
	}
	return v;
}

/* The name to show for an option: the key as the caller spelt it, else its first alias. */
static const char *shown(lv__optbag *b, const char *const *names)
{
	for (size_t i = 0; i < b->n; i++)
		if (named(b->keys[i], names))
			return b->keys[i];
	return names[0];
}

int lv__opt_bool(lv__optbag *b, const char *const *names, const char *const *env, bool dflt,
		 bool *out, lv_error *err)
{
	const char *v = lv__opt_get_env(b, names, env);
	*out = dflt;
	if (!v)
		return 0;
	static const char *yes[] = { "true", "1", "yes", "on", "y" };
	static const char *no[] = { "false", "0", "no", "off", "n" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		if (!strcasecmp(v, yes[i]))
			return (*out = true), 0;
		if (!strcasecmp(v, no[i]))
			return (*out = false), 0;
	}
	return lv__err(err, LV_EINVALID, "storage option %.64s: expected true or false",
		       shown(b, names));
}

int lv__opt_ms(lv__optbag *b, const char *const *names, const char *const *env,
	       int64_t bare_unit_ms, int64_t max_ms, int64_t *out, lv_error *err)
{
	const char *v = lv__opt_get_env(b, names, env);
	if (!v)
		return 0;
	uint64_t n;
	int64_t ms = 0;
	if (lv__parse_u64(v, strlen(v), &n)) {
		if (n > (uint64_t)(max_ms / bare_unit_ms) + 1)
			ms = max_ms + 1;
		else
			ms = (int64_t)n * bare_unit_ms;
	} else if (lv_parse_duration(v, &ms, NULL) < 0) {
		return lv__err(err, LV_EINVALID,
			       "storage option %.64s: expected a duration such as 30s or 500ms",
			       shown(b, names));
	}
	if (ms < 1 || ms > max_ms)
		return lv__err(err, LV_EINVALID, "storage option %.64s: out of range (1 ms to %lld s)",
			       shown(b, names), (long long)(max_ms / 1000));
	*out = ms;
	return 0;
}

int lv__opt_u64(lv__optbag *b, const char *const *names, const char *const *env, uint64_t lo,
		uint64_t hi, uint64_t *out, lv_error *err)
{
	const char *v = lv__opt_get_env(b, names, env);
	if (!v)
		return 0;
	uint64_t n;
	if (!lv__parse_u64(v, strlen(v), &n) || n < lo || n > hi)
		return lv__err(err, LV_EINVALID, "storage option %.64s: expected an integer from %llu to %llu",
			       shown(b, names), (unsigned long long)lo, (unsigned long long)hi);
	*out = n;
	return 0;
}

void lv__opt_accept(lv__optbag *b, const char *const *names)
{
	(void)lv__opt_get(b, names);
}

int lv__opt_refuse(const lv__optbag *b, const char *const *names, const char *where, lv_error *err)
{
	for (size_t i = 0; i < b->n; i++)
		if (named(b->keys[i], names)) /* a known name: printable by construction */
			return lv__err(err, LV_EUNSUPPORTED,
				       "storage option '%.64s' is not supported by lancever for %s",
				       b->keys[i], where);
	return 0;
}

int lv__opt_leftover(const lv__optbag *b, const char *where, lv_error *err)
{
	for (size_t i = 0; i < b->n; i++)
		if (!b->used[i]) {
			char k[80];
			size_t j = 0;
			for (const char *p = b->keys[i]; *p && j < sizeof k - 1; p++)
				k[j++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
			k[j] = 0;
			return lv__err(err, LV_EINVALID, "unknown storage option '%s' for %s", k, where);
		}
	return 0;
}

/* Keys a store without options ignores, as Lance does for local paths: where an object store
 * is (the old typed fields s3_region, s3_endpoint, s3_allow_http carried these). */
static const char *const WHERE_KEYS[] = { "aws_region", "region", "aws_endpoint", "endpoint",
					  "allow_http", "aws_allow_http", NULL };

int lv__opt_none(lv__optbag *b, const char *what, lv_error *err)
{
	for (size_t i = 0; i < b->n; i++) {
		b->used[i] = true;
		if (named(b->keys[i], WHERE_KEYS))
			continue;
		char k[80];
		size_t j = 0;
		for (const char *p = b->keys[i]; *p && j < sizeof k - 1; p++)
			k[j++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
		k[j] = 0;
		return lv__err(err, LV_EINVALID,
			       "storage option '%s' given for %s, which takes no storage options", k, what);
	}
	return 0;
}
