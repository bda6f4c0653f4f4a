/* Object path rules (path.h): pure string checks, no I/O, no storage handle. */
#include "util/path.h"

#include <string.h>

#include "util/util.h"

int lv__path_check(const char *path, bool allow_empty, const char *what, lv_error *err)
{
	if (!path)
		return lv__err(err, LV_EINVALID, "%s: path is NULL", what);
	size_t n = strlen(path);
	if (n == 0) {
		if (allow_empty)
			return 0;
		return lv__err(err, LV_EINVALID, "%s: empty path", what);
	}
	if (n > LV__PATH_MAX)
		return lv__err(err, LV_EINVALID, "%s: path longer than %d bytes", what,
			       LV__PATH_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		/* Control characters are refused (and not echoed) so messages stay printable. */
		if (c < 0x20 || c == 0x7f)
			return lv__err(err, LV_EINVALID, "%s: path contains a control character",
				       what);
		/* A backslash is a separator on some hosts and in some object-store gateways. */
		if (c == '\\')
			return lv__err(err, LV_EINVALID, "%s %.256s: path contains a backslash",
				       what, path);
	}
	if (path[0] == '/')
		return lv__err(err, LV_EINVALID, "%s %.256s: path must be relative", what, path);
	const char *seg = path;
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);
		if (len == 0)
			return lv__err(err, LV_EINVALID, "%s %.256s: path has an empty segment",
				       what, path);
		if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return lv__err(err, LV_EINVALID,
				       "%s %.256s: path has a \".\" or \"..\" segment", what, path);
		if (!end)
			break;
		seg = end + 1;
	}
	return 0;
}

int lv__path_join(char *buf, const char *prefix, const char *path, const char *what,
		     lv_error *err)
{
	size_t pl = prefix ? strlen(prefix) : 0;
	size_t n = strlen(path);
	size_t total = pl + (pl && n ? 1 : 0) + n;
	if (total > LV__PATH_MAX)
		return lv__err(err, LV_EINVALID, "%s: path longer than %d bytes", what,
			       LV__PATH_MAX);
	if (pl)
		memcpy(buf, prefix, pl);
	if (pl && n)
		buf[pl++] = '/';
	memcpy(buf + pl, path, n);
	buf[total] = 0;
	return 0;
}
