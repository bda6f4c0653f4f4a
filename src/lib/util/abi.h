/*
 * util/abi.h - the one check of a public struct's version field.
 *
 * The rule (CONTRIBUTING.md, "The struct rule"): every public options, policy,
 * config or caller-allocated result struct starts with `int version`, set by its
 * lv_X_init().  The library accepts the versions it knows, [floor, current]:
 * 0 (a struct nobody initialised), anything below the floor (a layout from before
 * lancever 1.0) and anything above current (a newer header than this library)
 * are LV_EINVALID, never read.  Fields are only appended; a field a known older
 * version lacks takes its default.  Every entry point checks with this helper.
 */
#ifndef LV_UTIL_ABI_H
#define LV_UTIL_ABI_H

#include "lancever/common.h"

/* 0 when floor <= version <= current; otherwise LV_EINVALID naming `what`
 * ("lv_cleanup_policy") and the versions this library accepts. */
int lv__struct_version(const char *what, int version, int floor, int current, lv_error *err);

/* The body of every lv_X_init: for a version in [floor, current], copies `defaults` (NULL:
 * zeroes) over the `size` bytes of x and writes `version` into its first field (the rule's
 * `int version`); else LV_EINVALID, nothing written (also for a NULL x).  `size` is the
 * layout of that version (today every struct has one version, so sizeof). */
int lv__struct_init(const char *what, void *x, size_t size, const void *defaults, int version,
		    int floor, int current);

#endif
