/*
 * Local filesystem backend, writes: atomic replace and create-if-absent through
 * an unnamed (O_TMPFILE) or temporary file, fsync'ed before it gets its name,
 * stale temporary files swept, and deletes.  The rules are in local.c's header.
 */
#include "storage/local_int.h"
#include "storage/storage_int.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- writes ---- */

/* 64 random bits for temporary names; getrandom, with a weaker fallback that is still unique. */
static uint64_t tmp_random(void)
{
	static uint64_t counter;
	uint64_t v;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
		return v;
	uint64_t c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	v = lv__mono_ns() ^ ((uint64_t)getpid() << 32) ^ (c * 0x9E3779B97F4A7C15ull);
	return v;
}

/*
 * Writes data to a new fsync'ed temporary file in the directory `dfd`.  On
 * success tmp[] holds its name (relative to dfd).
 */
/* Writes data to fd and fsyncs it. */
static int fill_fd(int fd, const char *rel, const char *what, const void *data, size_t size,
		   lv_error *err)
{
	char ebuf[128];
	const uint8_t *p = data;
	size_t done = 0;
	while (done < size) {
		size_t want = size - done;
		if (want > ((size_t)1 << 30))
			want = (size_t)1 << 30;
		ssize_t w = write(fd, p + done, want);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return lv__err(err, LV_EIO, "%s %s: %s", what, rel, lv__local_errstr(errno, ebuf, sizeof ebuf));
		}
		done += (size_t)w;
	}
	if (fsync(fd) != 0)
		return lv__err(err, LV_EIO, "%s %s: fsync: %s", what, rel, lv__local_errstr(errno, ebuf, sizeof ebuf));
	return 0;
}

/* A live writer holds a temporary name for one write + fsync at most; older ones are litter. */
#define TMP_STALE_MS (60 * 60 * 1000)

/* Removes temporary files older than TMP_STALE_MS from the open directory dfd (best effort). */
static void sweep_stale_temps(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	int64_t cutoff = lv__now_ms() - TMP_STALE_MS;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat sb;
		if (strncmp(de->d_name, LV__TMP_PREFIX, strlen(LV__TMP_PREFIX)) == 0 &&
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && lv__local_mtime_ms(&sb) < cutoff)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

/*
 * Writes data to a new fsync'ed unnamed file in dfd (O_TMPFILE): 0 and *fd_out,
 * 1 if the filesystem has no O_TMPFILE, or an error.
 */
static int write_unnamed(int dfd, const char *rel, const char *what, const void *data, size_t size,
			 int *fd_out, lv_error *err)
{
	char ebuf[128];
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0) {
		int e = errno;
		if (e == EOPNOTSUPP || e == EISDIR || e == EINVAL || e == ENOSYS)
			return 1;
		return lv__err(err, e == ENOMEM ? LV_ENOMEM : LV_EIO, "%s %s: %s", what, rel,
			       lv__local_errstr(e, ebuf, sizeof ebuf));
	}
	int rc = fill_fd(fd, rel, what, data, size, err);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

/*
 * Gives the unnamed file fd the name `leaf` in dfd: through /proc/self/fd (no
 * privilege needed), else AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).  0, or
 * -1 with errno (EEXIST: the name is taken).
 */
static int link_unnamed(int fd, int dfd, const char *leaf)
{
	char proc[LV__PROC_FD_PATH];
	lv__local_proc_fd_path(proc, fd);
	if (linkat(AT_FDCWD, proc, dfd, leaf, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
	return linkat(fd, "", dfd, leaf, AT_EMPTY_PATH);
}

/* Is errno from linking an unnamed file "this way does not work here" (use a named temporary)? */
static bool link_unavailable(int e)
{
	return e == ENOENT || e == EPERM || e == EACCES || e == EOPNOTSUPP || e == ENOSYS ||
	       e == EMLINK || e == EXDEV || e == EINVAL;
}

/*
 * Puts the unnamed file fd at `leaf` (create-if-absent, or replacing through
 * a temporary name).  0, 1 if linking unnamed files is unavailable here, or an
 * error.
 */
static int put_unnamed(int fd, int dfd, const char *leaf, const char *rel, const char *what,
		       bool create, lv_error *err)
{
	char ebuf[128];
	if (create) {
		if (link_unnamed(fd, dfd, leaf) == 0)
			return 0;
		int e = errno;
		if (e == EEXIST)
			return lv__err(err, LV_EEXISTS, "%s %s: already exists", what, rel);
		if (link_unavailable(e))
			return 1;
		return lv__err(err, LV_EIO, "%s %s: %s", what, rel, lv__local_errstr(e, ebuf, sizeof ebuf));
	}
	char tmp[64];
	for (int attempt = 0; attempt < 16; attempt++) {
		snprintf(tmp, sizeof tmp, "%s%016llx", LV__TMP_PREFIX, (unsigned long long)tmp_random());
		if (link_unnamed(fd, dfd, tmp) == 0) {
			/* A symlink at the target is replaced itself; its target is never written. */
			if (renameat(dfd, tmp, dfd, leaf) == 0)
				return 0;
			int e = errno;
			(void)unlinkat(dfd, tmp, 0);
			return lv__err(err, LV_EIO, "%s %s: %s", what, rel, lv__local_errstr(e, ebuf, sizeof ebuf));
		}
		int e = errno;
		if (e == EEXIST)
			continue;
		if (link_unavailable(e))
			return 1;
		return lv__err(err, LV_EIO, "%s %s: %s", what, rel, lv__local_errstr(e, ebuf, sizeof ebuf));
	}
	return lv__err(err, LV_EIO, "%s %s: could not create a temporary file", what, rel);
}

static int write_temp(int dfd, const char *rel, const char *what, const void *data, size_t size,
		      char tmp[static 64], lv_error *err)
{
	char ebuf[128];
	int rc = 0;
	int fd = -1;
	for (int attempt = 0; attempt < 16; attempt++) {
		snprintf(tmp, 64, "%s%016llx", LV__TMP_PREFIX, (unsigned long long)tmp_random());
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0)
			break;
		int e = errno;
		if (e == EEXIST)
			continue;
		return lv__err(err, e == ENOMEM ? LV_ENOMEM : LV_EIO, "%s %s: %s", what, rel,
			       lv__local_errstr(e, ebuf, sizeof ebuf));
	}
	if (fd < 0)
		return lv__err(err, LV_EIO, "%s %s: could not create a temporary file", what, rel);
	if ((rc = fill_fd(fd, rel, what, data, size, err)) < 0)
		goto out;
	int cr = close(fd);
	fd = -1;
	if (cr != 0)
		rc = lv__err(err, LV_EIO, "%s %s: close: %s", what, rel,
			     lv__local_errstr(errno, ebuf, sizeof ebuf));
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		(void)unlinkat(dfd, tmp, 0);
	return rc;
}

static int local_put(void *impl, const char *path, const void *data, size_t size, bool create,
		     lv_error *err)
{
	char ebuf[128];
	const char *what = create ? "create" : "write";
	char tmp[64];
	int dfd;
	const char *leaf;
	LV_TRY(lv__local_open_parent(impl, path, true, what, &dfd, &leaf, err));
	if (create)
		sweep_stale_temps(dfd);
	int ufd = -1;
	int rc = write_unnamed(dfd, path, what, data, size, &ufd, err);
	if (rc == 0) {
		rc = put_unnamed(ufd, dfd, leaf, path, what, create, err);
		close(ufd);
	}
	if (rc == 0)
		goto synced;
	if (rc < 0)
		goto out;
	/* No O_TMPFILE, or unnamed files cannot be linked here: a named temporary file. */
	rc = write_temp(dfd, path, what, data, size, tmp, err);
	if (rc < 0)
		goto out;
	if (!create) {
		/* A symlink at the target is replaced itself; its target is never written. */
		if (renameat(dfd, tmp, dfd, leaf) != 0) {
			int e = errno;
			(void)unlinkat(dfd, tmp, 0);
			rc = lv__err(err, LV_EIO, "%s %s: %s", what, path,
				     lv__local_errstr(e, ebuf, sizeof ebuf));
			goto out;
		}
	} else {
		int r = linkat(dfd, tmp, dfd, leaf, 0);
		int e = errno;
		if (r != 0 && (e == EPERM || e == EOPNOTSUPP || e == ENOSYS || e == EMLINK)) {
			/* No hard links here (some FUSE and network filesystems). */
			r = renameat2(dfd, tmp, dfd, leaf, RENAME_NOREPLACE);
			e = errno;
			if (r != 0 && (e == EINVAL || e == ENOSYS)) {
				(void)unlinkat(dfd, tmp, 0);
				rc = lv__err(err, LV_EUNSUPPORTED,
					     "%s %s: the filesystem supports neither link(2) nor "
					     "RENAME_NOREPLACE", what, path);
				goto out;
			}
		}
		(void)unlinkat(dfd, tmp, 0); /* after a successful rename this is a harmless ENOENT */
		if (r != 0) {
			if (e == EEXIST)
				rc = lv__err(err, LV_EEXISTS, "%s %s: already exists", what, path);
			else
				rc = lv__err(err, LV_EIO, "%s %s: %s", what, path,
					     lv__local_errstr(e, ebuf, sizeof ebuf));
			goto out;
		}
	}
synced:
	/* Some filesystems refuse fsync on directories; the rename is then as durable as it gets. */
	(void)fsync(dfd);
out:
	close(dfd);
	return rc;
}

int lv__local_write(void *impl, const char *path, const void *data, size_t size,
		       lv_error *err)
{
	return local_put(impl, path, data, size, false, err);
}

int lv__local_create(void *impl, const char *path, const void *data, size_t size,
			lv_error *err)
{
	return local_put(impl, path, data, size, true, err);
}

/* The unlink of one leaf in an open directory, as lv__local_del reports it. */
static int unlink_leaf(int dfd, const char *leaf, const char *path, lv_error *err)
{
	if (unlinkat(dfd, leaf, 0) == 0)
		return 0;
	int e = errno;
	if (e == EISDIR)
		return lv__err(err, LV_ENOTFOUND, "delete %s: is a directory", path);
	return lv__local_sys_err(err, e, true, "delete", path);
}

/* unlinkat relative to the parent directory: a symlink at `path` is removed itself, never
 * its target, and no directory on the way may be a symlink. */
int lv__local_del(void *impl, const char *path, lv_error *err)
{
	int dfd;
	const char *leaf;
	LV_TRY(lv__local_open_parent(impl, path, false, "delete", &dfd, &leaf, err));
	int rc = unlink_leaf(dfd, leaf, path, err);
	close(dfd);
	return rc;
}


/*
 * del_many: each run of paths in the same directory walks to that directory
 * once (the same O_NOFOLLOW walk as lv__local_del), then unlinks each leaf
 * relative to it.  A cleanup deletes a directory's files in listing order, so
 * a batch costs about one unlinkat per file instead of a walk each.
 */
int lv__local_del_many(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err)
{
	int dfd = -1, first = 0;
	size_t dirlen = 0;
	const char *dir = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *slash = strrchr(paths[i], '/');
		size_t len = slash ? (size_t)(slash - paths[i]) : 0;
		const char *leaf = slash ? slash + 1 : paths[i];
		lv_error e = { 0 };
		rcs[i] = 0;
		if (dfd < 0 || len != dirlen || memcmp(paths[i], dir, len)) {
			if (dfd >= 0)
				close(dfd);
			dfd = -1;
			if ((rcs[i] = lv__local_open_parent(impl, paths[i], false, "delete", &dfd, &leaf, &e)) < 0)
				dfd = -1;
			dir = paths[i];
			dirlen = len;
		}
		if (rcs[i] == 0)
			rcs[i] = unlink_leaf(dfd, leaf, paths[i], &e);
		if (rcs[i] < 0 && rcs[i] != LV_ENOTFOUND && first == 0) {
			first = rcs[i]; /* the first failure, with its own message */
			if (err)
				*err = e;
		}
	}
	if (dfd >= 0)
		close(dfd);
	return first;
}
