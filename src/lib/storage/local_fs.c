/*
 * Local filesystem backend, the path walk: every directory below the root is
 * opened one component at a time with O_NOFOLLOW, so no symbolic link below
 * the root is ever followed (local.c's header states the rules), and errno is
 * turned into LV_* codes.  Used by local.c (lists, reads) and local_write.c.
 */
#include "storage/local_int.h"
#include "storage/storage_int.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---- */

const char *lv__local_errstr(int e, char *buf, size_t n)
{
	/* GNU strerror_r (the library is built with _GNU_SOURCE): thread-safe, never NULL. */
	return strerror_r(e, buf, n);
}

/* Reports errno `e` for operation `what` on relative path `rel`. */
int lv__local_sys_err(lv_error *err, int e, bool missing_is_notfound, const char *what,
		   const char *rel)
{
	char buf[128];
	int code = LV_EIO;
	if (missing_is_notfound && (e == ENOENT || e == ENOTDIR))
		code = LV_ENOTFOUND;
	else if (e == ENOMEM)
		code = LV_ENOMEM;
	if (!err)
		return code; /* the caller wants the code only: no strerror, no formatting */
	return lv__err(err, code, "%s %s: %s", what, rel[0] ? rel : ".", lv__local_errstr(e, buf, sizeof buf));
}

/* mkdir -p of an absolute path. */
static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0777);
		int e = errno;
		*p = '/';
		if (r != 0 && e != EEXIST)
			return e;
	}
	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		return errno;
	return 0;
}

/* ---- path walking: no symlink below the root is followed (see the top) ---- */

/* The component rel[0, end) ends in a symbolic link. */
int lv__local_symlink_err(lv_error *err, const char *what, const char *rel, size_t end)
{
	return lv__err(err, LV_EINVALID,
		       "%s %.512s: '%.*s' is a symbolic link; lancever never follows symbolic links "
		       "below the dataset root", what, rel, (int)(end > 512 ? 512 : end), rel);
}

/* Opens the root directory, creating it (mkdir -p) first when `create`. */
static int open_root(const local *l, bool create, const char *what, const char *rel, int *out,
		     lv_error *err)
{
	int fd = open(l->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		char *r = lv__strdup(l->root);
		if (!r)
			return lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, rel);
		int me = mkdirs(r);
		lv__free(r);
		if (me != 0)
			return lv__local_sys_err(err, me, false, what, rel);
		fd = open(l->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return lv__local_sys_err(err, errno, true, what, rel);
	*out = fd;
	return 0;
}

/*
 * Walks rel[from, upto) from the open directory `fd` (which is rel[0, from)) with O_NOFOLLOW,
 * one component at a time, creating missing ones when `create`; *out is the last directory.
 * `fd` is closed unless it is `borrowed` (then it is left open, and from < upto so *out is a
 * new descriptor).  A missing component is LV_ENOTFOUND, a symlinked one LV_EINVALID naming
 * it (messages name rel whole).
 */
static int walk_dirs(int fd, int borrowed, const char *rel, size_t from, size_t upto, bool create,
		     const char *what, int *out, lv_error *err)
{
	char seg[NAME_MAX + 1];
	size_t s = from;
	while (s < upto) {
		const char *slash = memchr(rel + s, '/', upto - s);
		size_t e = slash ? (size_t)(slash - rel) : upto;
		size_t n = e - s;
		if (n > NAME_MAX) {
			if (fd != borrowed)
				close(fd);
			return lv__local_sys_err(err, ENAMETOOLONG, false, what, rel);
		}
		memcpy(seg, rel + s, n);
		seg[n] = 0;
		int nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, seg, 0777) != 0 && errno != EEXIST) {
				int me = errno;
				if (fd != borrowed)
					close(fd);
				return lv__local_sys_err(err, me, false, what, rel);
			}
			nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int oe = errno;
			struct stat sb;
			bool link = (oe == ELOOP || oe == ENOTDIR) &&
				    fstatat(fd, seg, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode);
			if (fd != borrowed)
				close(fd);
			if (link)
				return lv__local_symlink_err(err, what, rel, e);
			/* Reading a path under a file is "not found"; writing there is an error. */
			return lv__local_sys_err(err, oe, !create, what, rel);
		}
		if (fd != borrowed)
			close(fd);
		fd = nfd;
		s = e + 1;
	}
	*out = fd;
	return 0;
}

/* Opens the directory rel[0, upto) (upto = 0: the root) by walking its components from the
 * root (walk_dirs). */
static int open_dirs(const local *l, const char *rel, size_t upto, bool create, const char *what,
		     int *out, lv_error *err)
{
	int fd = -1;
	LV_TRY(open_root(l, create, what, rel, &fd, err));
	return walk_dirs(fd, -1, rel, 0, upto, create, what, out, err);
}

int lv__local_open_dir(const local *l, const char *rel, size_t upto, const char *what, int *out,
		       lv_error *err)
{
	return open_dirs(l, rel, upto, false, what, out, err);
}

int lv__local_walk_at(const local *l, int base, const char *rel, size_t from, size_t upto,
		      const char *what, int *out, lv_error *err)
{
	return walk_dirs(base, base, rel, from, upto, false, what, out, err);
}

bool lv__local_confirm_missing(const local *l, const char *rel, size_t len)
{
	size_t rl = strlen(l->root);
	char path[PATH_MAX + 1];
	if (rl + 1 + len > PATH_MAX)
		return false; /* cannot tell: the caller walks afresh */
	memcpy(path, l->root, rl);
	path[rl] = '/';
	memcpy(path + rl + 1, rel, len);
	path[rl + 1 + len] = 0;
	struct stat sb;
	return fstatat(AT_FDCWD, path, &sb, AT_SYMLINK_NOFOLLOW) != 0 &&
	       (errno == ENOENT || errno == ENOTDIR);
}

/* Opens the directory that holds rel's last component; *leaf points into rel. */
int lv__local_open_parent(const local *l, const char *rel, bool create, const char *what, int *dfd,
		       const char **leaf, lv_error *err)
{
	const char *slash = strrchr(rel, '/');
	*leaf = slash ? slash + 1 : rel;
	return open_dirs(l, rel, slash ? (size_t)(slash - rel) : 0, create, what, dfd, err);
}

void lv__local_proc_fd_path(char *buf, int fd)
{
	static const char pre[] = "/proc/self/fd/";
	char digits[12];
	size_t nd = 0, len = sizeof pre - 1;
	for (unsigned v = (unsigned)fd; nd == 0 || v; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	memcpy(buf, pre, len);
	while (nd)
		buf[len++] = digits[--nd];
	buf[len] = 0;
}

int64_t lv__local_mtime_ms(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000;
}

