/*
 * Local filesystem backend.
 *
 * The handle holds only its (absolute) root, so every operation is
 * independent and the backend is thread-safe without locks.
 *
 * Symbolic links.  The root itself is resolved once, when the handle is opened
 * (realpath), so a dataset path may be or go through a symlink.  Below the
 * root, no operation ever follows one:
 * - every directory component of a path is opened one at a time from the
 *   root with openat(O_DIRECTORY | O_NOFOLLOW), and the final step (open,
 *   fstatat, create, rename, link, unlinkat) is done relative to the last
 *   directory's descriptor, so a component swapped for a symlink between two
 *   steps is refused too, not followed;
 * - a component that is a symlink ("data" -> /elsewhere, "tree/b" -> ..,
 *   "_versions" -> a loop) makes the operation fail with LV_EINVALID and a
 *   message naming the link: lists, reads and heads as well as writes and
 *   deletes, so that a cleanup fails while listing, before it deletes anything;
 * - a final component that is a symlink is not an object: listings skip it,
 *   reads and heads refuse it, a delete removes the link itself (which is
 *   inside the root), never its target;
 * - reads open with O_NONBLOCK, so a FIFO put where a file is expected is
 *   refused by the regular-file check instead of blocking forever.
 * Nothing outside the root can therefore be read, written or removed through
 * a path the front end passed (those never contain "..", a leading "/", a
 * backslash or a control character: lv__storage_check_path).
 *
 * - Writes are atomic and leave nothing behind if the process dies: the bytes
 *   go to an unnamed file in the target directory (O_TMPFILE), are fsync'ed,
 *   and the file is then given its name.  Create-if-absent links it to the
 *   target (link fails with EEXIST instead of replacing, and the target only
 *   ever appears complete); a replacing write links it to a temporary name
 *   ".tmp-lancever-<random>" and renames that over the target.
 * - Where O_TMPFILE or linking an unnamed file is not available, the bytes go
 *   to a named temporary file first (filesystems without hard links: then
 *   renameat2(RENAME_NOREPLACE) for create-if-absent).
 * - A process killed while it holds a temporary name leaves that file behind;
 *   a create in the same directory removes temporary files older than an hour
 *   (a live writer holds its name for one write + fsync at most).
 * - Listings skip symbolic links entirely (files and directories, found with
 *   lstat semantics) so a recursive walk can never leave the root or loop, and
 *   hide our own in-flight temporary files.
 * - Directories are created on demand by writes and never removed by deletes.
 */
#include "storage/backends.h"
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

typedef struct local {
	char *root; /* absolute, no trailing '/' unless it is "/" itself */
} local;

/* ---- helpers ---- */

static const char *errstr(int e, char *buf, size_t n)
{
	/* GNU strerror_r (the library is built with _GNU_SOURCE): thread-safe, never NULL. */
	return strerror_r(e, buf, n);
}

/* Reports errno `e` for operation `what` on relative path `rel`. */
static int sys_err(lv_error *err, int e, bool missing_is_notfound, const char *what,
		   const char *rel)
{
	char buf[128];
	int code = LV_EIO;
	if (missing_is_notfound && (e == ENOENT || e == ENOTDIR))
		code = LV_ENOTFOUND;
	else if (e == ENOMEM)
		code = LV_ENOMEM;
	return lv__err(err, code, "%s %s: %s", what, rel[0] ? rel : ".", errstr(e, buf, sizeof buf));
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
static int symlink_err(lv_error *err, const char *what, const char *rel, size_t end)
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
		free(r);
		if (me != 0)
			return sys_err(err, me, false, what, rel);
		fd = open(l->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return sys_err(err, errno, true, what, rel);
	*out = fd;
	return 0;
}

/*
 * Opens the directory rel[0, upto) (upto = 0: the root) by walking its
 * components from the root with O_NOFOLLOW; missing components are created
 * when `create`.  A missing component is LV_ENOTFOUND, a symlinked one
 * LV_EINVALID naming it.
 */
static int open_dirs(const local *l, const char *rel, size_t upto, bool create, const char *what,
		     int *out, lv_error *err)
{
	int fd = -1;
	LV_TRY(open_root(l, create, what, rel, &fd, err));
	char seg[NAME_MAX + 1];
	size_t s = 0;
	while (s < upto) {
		const char *slash = memchr(rel + s, '/', upto - s);
		size_t e = slash ? (size_t)(slash - rel) : upto;
		size_t n = e - s;
		if (n > NAME_MAX) {
			close(fd);
			return sys_err(err, ENAMETOOLONG, false, what, rel);
		}
		memcpy(seg, rel + s, n);
		seg[n] = 0;
		int nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, seg, 0777) != 0 && errno != EEXIST) {
				int me = errno;
				close(fd);
				return sys_err(err, me, false, what, rel);
			}
			nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int oe = errno;
			struct stat sb;
			bool link = (oe == ELOOP || oe == ENOTDIR) &&
				    fstatat(fd, seg, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode);
			close(fd);
			if (link)
				return symlink_err(err, what, rel, e);
			/* Reading a path under a file is "not found"; writing there is an error. */
			return sys_err(err, oe, !create, what, rel);
		}
		close(fd);
		fd = nfd;
		s = e + 1;
	}
	*out = fd;
	return 0;
}

/* Opens the directory that holds rel's last component; *leaf points into rel. */
static int open_parent(const local *l, const char *rel, bool create, const char *what, int *dfd,
		       const char **leaf, lv_error *err)
{
	const char *slash = strrchr(rel, '/');
	*leaf = slash ? slash + 1 : rel;
	return open_dirs(l, rel, slash ? (size_t)(slash - rel) : 0, create, what, dfd, err);
}

/* Opens directory `dir` for listing: a missing one is *fd = -1 (lists as empty). */
static int open_list_dir(const local *l, const char *dir, int *fd, lv_error *err)
{
	lv_error tmp = { 0 };
	int rc = open_dirs(l, dir, strlen(dir), false, "list", fd, &tmp);
	if (rc == LV_ENOTFOUND) {
		*fd = -1;
		return 0;
	}
	if (rc < 0 && err)
		*err = tmp;
	return rc;
}

static int64_t stat_mtime_ms(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000;
}

/* ---- list ---- */

typedef struct ent {
	char *path;
	uint64_t size;
	int64_t mtime_ms;
} ent;

typedef struct entvec {
	ent *v;
	size_t n, cap;
} entvec;

static void entvec_free(entvec *ev)
{
	for (size_t i = 0; i < ev->n; i++)
		free(ev->v[i].path);
	free(ev->v);
}

static int entvec_add(entvec *ev, char *path, const struct stat *sb)
{
	if (ev->n == ev->cap) {
		size_t nc = ev->cap ? ev->cap * 2 : 64;
		ent *nv = lv__reallocarray(ev->v, nc, sizeof *nv);
		if (!nv) {
			free(path);
			return LV_ENOMEM;
		}
		ev->v = nv;
		ev->cap = nc;
	}
	ev->v[ev->n].path = path;
	ev->v[ev->n].size = (uint64_t)sb->st_size;
	ev->v[ev->n].mtime_ms = stat_mtime_ms(sb);
	ev->n++;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const ent *)a)->path, ((const ent *)b)->path);
}

/* Deep enough for any real dataset; stops pathological trees from exhausting the stack. */
#define LOCAL_MAX_DEPTH 64

/*
 * Collects the regular files of the open directory `fd` (relative path `rel`),
 * descending into real (non-symlink) subdirectories when `recursive`.  Takes
 * ownership of fd.
 */
static int walk(int fd, const char *rel, bool recursive, int depth, entvec *ev, lv_error *err)
{
	char ebuf[128];
	int rc = 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return sys_err(err, e, false, "list", rel);
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno) {
				int e = errno;
				rc = lv__err(err, LV_EIO, "list %s: %s", rel[0] ? rel : ".",
					     errstr(e, ebuf, sizeof ebuf));
			}
			break;
		}
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
		    strncmp(name, LV__TMP_PREFIX, strlen(LV__TMP_PREFIX)) == 0)
			continue;
		struct stat sb;
		if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue; /* removed while we were listing */
			char *p = rel[0] ? lv__sprintf("%s/%s", rel, name) : lv__strdup(name);
			rc = sys_err(err, errno, false, "list", p ? p : rel);
			free(p);
			break;
		}
		if (!S_ISREG(sb.st_mode) && !(recursive && S_ISDIR(sb.st_mode)))
			continue; /* symlinks, devices, sockets, and directories when flat */
		char *child = rel[0] ? lv__sprintf("%s/%s", rel, name) : lv__strdup(name);
		if (!child) {
			rc = lv__err(err, LV_ENOMEM, "list %s: out of memory", rel[0] ? rel : ".");
			break;
		}
		if (S_ISREG(sb.st_mode)) {
			if (entvec_add(ev, child, &sb) < 0) {
				rc = lv__err(err, LV_ENOMEM, "list %s: out of memory",
					     rel[0] ? rel : ".");
				break;
			}
			continue;
		}
		if (depth >= LOCAL_MAX_DEPTH) {
			rc = lv__err(err, LV_ELIMIT, "list %s: directories nested deeper than %d",
				     child, LOCAL_MAX_DEPTH);
			free(child);
			break;
		}
		/* O_NOFOLLOW: a directory swapped for a symlink after the lstat is not entered. */
		int cfd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			int e = errno;
			if (e == ENOENT || e == ENOTDIR || e == ELOOP) {
				free(child);
				continue;
			}
			rc = sys_err(err, e, false, "list", child);
			free(child);
			break;
		}
		rc = walk(cfd, child, true, depth + 1, ev, err);
		free(child);
		if (rc < 0)
			break;
	}
	closedir(d);
	return rc;
}

static int local_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		      lv_error *err)
{
	local *l = impl;
	entvec ev = { 0 };
	int fd;
	/* A missing directory (or a file where one was expected) lists as empty. */
	int rc = open_list_dir(l, dir, &fd, err);
	if (rc < 0 || fd < 0)
		return rc;
	rc = walk(fd, dir, recursive, 0, &ev, err);
	if (rc < 0)
		goto out;
	if (ev.n > 1)
		qsort(ev.v, ev.n, sizeof *ev.v, ent_cmp);
	for (size_t i = 0; i < ev.n; i++) {
		lv_list_entry e = { ev.v[i].path, ev.v[i].size, ev.v[i].mtime_ms };
		rc = cb(&e, payload);
		if (rc != 0)
			break;
	}
out:
	entvec_free(&ev);
	return rc;
}

/*
 * Names of the regular files directly in `dir`, unsorted, without a stat per
 * entry: d_type says what an entry is (a stat only when the filesystem does
 * not say).  Same rules as local_list otherwise: symlinks and temp files are
 * skipped, a missing directory lists as empty.
 */
static int local_list_names(void *impl, const char *dir, lv_list_cb cb, void *payload,
			    lv_error *err)
{
	local *l = impl;
	char ebuf[128];
	int rc, fd;
	if ((rc = open_list_dir(l, dir, &fd, err)) < 0 || fd < 0)
		return rc;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return sys_err(err, e, false, "list", dir);
	}
	size_t dl = strlen(dir);
	char path[LV__PATH_MAX + 1];
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				rc = lv__err(err, LV_EIO, "list %s: %s", dir[0] ? dir : ".",
					     errstr(errno, ebuf, sizeof ebuf));
			break;
		}
		const char *name = de->d_name;
		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
			continue;
		if (!strncmp(name, LV__TMP_PREFIX, strlen(LV__TMP_PREFIX)))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			struct stat sb;
			if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
				continue;
		} else if (de->d_type != DT_REG) {
			continue;
		}
		size_t nl = strlen(name);
		if (dl + 1 + nl > LV__PATH_MAX)
			continue; /* cannot be a valid storage path */
		if (dl) {
			memcpy(path, dir, dl);
			path[dl] = '/';
		}
		memcpy(path + (dl ? dl + 1 : 0), name, nl + 1);
		lv_list_entry e = { path, 0, 0 };
		if ((rc = cb(&e, payload)) != 0)
			break;
	}
	closedir(d);
	return rc;
}

/* ---- reads ---- */

/* Opens a regular file for reading; fills *sb. */
static int open_regular(const local *l, const char *rel, const char *what, int *fd_out,
			struct stat *sb, lv_error *err)
{
	int dfd;
	const char *leaf;
	LV_TRY(open_parent(l, rel, false, what, &dfd, &leaf, err));
	/* O_NONBLOCK: a FIFO must not block the open; it is refused as not regular below. */
	int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int e = errno;
	if (fd < 0) {
		struct stat lb;
		bool link = (e == ELOOP || e == ENOTDIR) &&
			    fstatat(dfd, leaf, &lb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lb.st_mode);
		close(dfd);
		if (link)
			return symlink_err(err, what, rel, strlen(rel));
		return sys_err(err, e, true, what, rel);
	}
	close(dfd);
	if (fstat(fd, sb) != 0) {
		e = errno;
		close(fd);
		return sys_err(err, e, true, what, rel);
	}
	if (!S_ISREG(sb->st_mode)) {
		close(fd);
		/* Object-store semantics: a directory is not an object. */
		if (S_ISDIR(sb->st_mode))
			return lv__err(err, LV_ENOTFOUND, "%s %s: is a directory", what, rel);
		return lv__err(err, LV_EIO, "%s %s: not a regular file", what, rel);
	}
	*fd_out = fd;
	return 0;
}

/* Reads up to n bytes at offset into a fresh NUL-terminated buffer; stops early at EOF. */
static int read_at(int fd, uint64_t offset, uint64_t n, const char *what, const char *rel,
		   lv_buf *out, lv_error *err)
{
	char ebuf[128];
	if (n > LV__READ_MAX)
		return lv__err(err, LV_ELIMIT, "%s %s: %llu bytes exceed the %llu byte read limit",
			       what, rel, (unsigned long long)n, (unsigned long long)LV__READ_MAX);
	uint8_t *p = lv__malloc((size_t)n + 1);
	if (!p)
		return lv__err(err, LV_ENOMEM, "%s %s: out of memory (%llu bytes)", what, rel,
			       (unsigned long long)n);
	size_t got = 0;
	while (got < n) {
		size_t want = (size_t)n - got;
		if (want > ((size_t)1 << 30))
			want = (size_t)1 << 30;
		ssize_t r = pread(fd, p + got, want, (off_t)(offset + got));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(p);
			return lv__err(err, LV_EIO, "%s %s: %s", what, rel,
				       errstr(e, ebuf, sizeof ebuf));
		}
		if (r == 0)
			break; /* the file shrank under us: return what is there */
		got += (size_t)r;
	}
	p[got] = 0;
	out->ptr = p;
	out->size = got;
	return 0;
}

static int local_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	int fd = -1; /* set by open_regular on success (initialised for -O3's flow analysis) */
	struct stat sb;
	LV_TRY(open_regular(impl, path, "read", &fd, &sb, err));
	int rc = read_at(fd, 0, (uint64_t)sb.st_size, "read", path, out, err);
	close(fd);
	return rc;
}

static int local_read_range(void *impl, const char *path, uint64_t offset, uint64_t len,
			    lv_buf *out, lv_error *err)
{
	int fd = -1; /* as in local_read */
	struct stat sb;
	LV_TRY(open_regular(impl, path, "read", &fd, &sb, err));
	uint64_t size = (uint64_t)sb.st_size;
	uint64_t n = offset >= size ? 0 : size - offset;
	if (n > len)
		n = len;
	int rc = read_at(fd, n ? offset : 0, n, "read", path, out, err);
	close(fd);
	return rc;
}

static int local_head(void *impl, const char *path, uint64_t *size, int64_t *mtime_ms,
		      lv_error *err)
{
	int dfd;
	const char *leaf;
	LV_TRY(open_parent(impl, path, false, "head", &dfd, &leaf, err));
	struct stat sb;
	int r = fstatat(dfd, leaf, &sb, AT_SYMLINK_NOFOLLOW);
	int e = errno;
	close(dfd);
	if (r != 0)
		return sys_err(err, e, true, "head", path);
	if (S_ISLNK(sb.st_mode))
		return symlink_err(err, "head", path, strlen(path));
	if (!S_ISREG(sb.st_mode))
		return lv__err(err, S_ISDIR(sb.st_mode) ? LV_ENOTFOUND : LV_EIO,
			       "head %s: not a regular file", path);
	*size = (uint64_t)sb.st_size;
	*mtime_ms = stat_mtime_ms(&sb);
	return 0;
}

/* ---- writes ---- */

/* 64 random bits for temporary names; getrandom, with a weaker fallback that is still unique. */
static uint64_t tmp_random(void)
{
	static uint64_t counter;
	uint64_t v;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
		return v;
	uint64_t c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	v = lv_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (c * 0x9E3779B97F4A7C15ull);
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
			return lv__err(err, LV_EIO, "%s %s: %s", what, rel, errstr(errno, ebuf, sizeof ebuf));
		}
		done += (size_t)w;
	}
	if (fsync(fd) != 0)
		return lv__err(err, LV_EIO, "%s %s: fsync: %s", what, rel, errstr(errno, ebuf, sizeof ebuf));
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
	int64_t cutoff = lv_now_ms() - TMP_STALE_MS;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat sb;
		if (strncmp(de->d_name, LV__TMP_PREFIX, strlen(LV__TMP_PREFIX)) == 0 &&
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && stat_mtime_ms(&sb) < cutoff)
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
			       errstr(e, ebuf, sizeof ebuf));
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
	char proc[48];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
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
		return lv__err(err, LV_EIO, "%s %s: %s", what, rel, errstr(e, ebuf, sizeof ebuf));
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
			return lv__err(err, LV_EIO, "%s %s: %s", what, rel, errstr(e, ebuf, sizeof ebuf));
		}
		int e = errno;
		if (e == EEXIST)
			continue;
		if (link_unavailable(e))
			return 1;
		return lv__err(err, LV_EIO, "%s %s: %s", what, rel, errstr(e, ebuf, sizeof ebuf));
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
			       errstr(e, ebuf, sizeof ebuf));
	}
	if (fd < 0)
		return lv__err(err, LV_EIO, "%s %s: could not create a temporary file", what, rel);
	if ((rc = fill_fd(fd, rel, what, data, size, err)) < 0)
		goto out;
	int cr = close(fd);
	fd = -1;
	if (cr != 0)
		rc = lv__err(err, LV_EIO, "%s %s: close: %s", what, rel,
			     errstr(errno, ebuf, sizeof ebuf));
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
	LV_TRY(open_parent(impl, path, true, what, &dfd, &leaf, err));
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
				     errstr(e, ebuf, sizeof ebuf));
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
					     errstr(e, ebuf, sizeof ebuf));
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

static int local_write(void *impl, const char *path, const void *data, size_t size,
		       lv_error *err)
{
	return local_put(impl, path, data, size, false, err);
}

static int local_create(void *impl, const char *path, const void *data, size_t size,
			lv_error *err)
{
	return local_put(impl, path, data, size, true, err);
}

/* unlinkat relative to the parent directory: a symlink at `path` is removed itself, never
 * its target, and no directory on the way may be a symlink. */
static int local_del(void *impl, const char *path, lv_error *err)
{
	int dfd;
	const char *leaf;
	LV_TRY(open_parent(impl, path, false, "delete", &dfd, &leaf, err));
	int r = unlinkat(dfd, leaf, 0);
	int e = errno;
	close(dfd);
	if (r == 0)
		return 0;
	if (e == EISDIR)
		return lv__err(err, LV_ENOTFOUND, "delete %s: is a directory", path);
	return sys_err(err, e, true, "delete", path);
}

static void local_close(void *impl)
{
	local *l = impl;
	if (!l)
		return;
	free(l->root);
	free(l);
}

static const lv_storage_ops local_ops = {
	.version = LV_STORAGE_OPS_VERSION,
	.list = local_list,
	.read = local_read,
	.read_range = local_read_range,
	.head = local_head,
	.write = local_write,
	.create = local_create,
	.del = local_del,
	.close = local_close,
	.list_names = local_list_names,
};

/* ---- open ---- */

/* Lexically normalises an absolute path: drops "", "." segments and resolves "..". */
static char *normalize_abs(const char *path)
{
	size_t n = strlen(path);
	char *out = lv__malloc(n + 2);
	if (!out)
		return NULL;
	size_t len = 0;
	const char *s = path;
	while (*s) {
		while (*s == '/')
			s++;
		const char *e = s;
		while (*e && *e != '/')
			e++;
		size_t sl = (size_t)(e - s);
		if (sl == 0 || (sl == 1 && s[0] == '.')) {
			/* skip */
		} else if (sl == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* drop the '/' too */
		} else {
			out[len++] = '/';
			memcpy(out + len, s, sl);
			len += sl;
		}
		s = e;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = 0;
	return out;
}

/* Absolute form of `path`: realpath when it exists, else cwd-joined and normalised. */
static int make_root(const char *path, char **out, lv_error *err)
{
	char ebuf[128];
	char *real = realpath(path, NULL);
	if (real) {
		struct stat sb;
		if (stat(real, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			free(real);
			return lv__err(err, LV_EINVALID, "open %s: not a directory", path);
		}
		*out = real;
		return 0;
	}
	int e = errno;
	if (e != ENOENT)
		return lv__err(err, e == ENOTDIR ? LV_EINVALID : LV_EIO, "open %s: %s", path,
			       errstr(e, ebuf, sizeof ebuf));
	char *abs = NULL;
	if (path[0] == '/') {
		abs = lv__strdup(path);
	} else {
		char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return lv__err(err, LV_EIO, "open %s: getcwd: %s", path,
				       errstr(errno, ebuf, sizeof ebuf));
		abs = lv__sprintf("%s/%s", cwd, path);
		free(cwd);
	}
	if (!abs)
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", path);
	*out = normalize_abs(abs);
	free(abs);
	if (!*out)
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", path);
	return 0;
}

int lv__storage_local_open(lv_storage **out, const char *root, lv_error *err)
{
	*out = NULL;
	if (!root || !root[0])
		return lv__err(err, LV_EINVALID, "open: empty path");
	if (strlen(root) > PATH_MAX)
		return lv__err(err, LV_EINVALID, "open: path longer than %d bytes", PATH_MAX);
	local *l = lv__calloc(1, sizeof *l);
	if (!l)
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", root);
	int rc = make_root(root, &l->root, err);
	if (rc < 0) {
		free(l);
		return rc;
	}
	char *desc = lv__sprintf("file://%s", l->root);
	if (!desc) {
		local_close(l);
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", root);
	}
	rc = lv__storage_new_kind(out, &local_ops, l, desc, LV__STORAGE_LOCAL, err);
	free(desc);
	if (rc < 0)
		local_close(l);
	return rc;
}
