/*
 * Object path rules, shared by the storage front end and by backends that check what a
 * server lists (a leaf: it knows no storage handle).
 *
 * A valid path is relative to a storage root, uses '/' as the separator, and has no
 * empty, "." or ".." segment, no leading '/', no backslash, no control character and at
 * most LV__PATH_MAX bytes.  Nothing that passes can name anything outside the root.
 */
#ifndef LV_UTIL_PATH_H
#define LV_UTIL_PATH_H

#include <stdbool.h>

#include "lancever/common.h"

/* Longest path (after a sub-handle prefix is applied) the front end accepts. */
#define LV__PATH_MAX 4096

/*
 * Validates a relative object path.  `allow_empty` admits "" (a listing of the root).
 * `what` names the operation in the message.  Returns 0 or LV_EINVALID.
 */
int lv__path_check(const char *path, bool allow_empty, const char *what, lv_error *err);

/* Joins a sub-handle prefix (may be NULL) and a checked path into buf[LV__PATH_MAX + 1]. */
int lv__path_join(char *buf, const char *prefix, const char *path, const char *what,
		     lv_error *err);

#endif
