/*
 * Local filesystem backend.
 *
 * The handle holds its (absolute) root and a cache of directory descriptors
 * (local_dircache.c, under its own lock), so every operation is independent
 * and the backend is thread-safe.
 *
 * Symbolic links.  The root itself is resolved once, when the handle is opened
 * (an absolute path through no link is its own name, checked by openat2 with
 * RESOLVE_NO_SYMLINKS; else the kernel's name for the opened root, /proc/self/fd;
 * else realpath), so a
 * dataset path may be or go through a symlink.  Below the root, no operation
 * ever follows one:
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
 *   refused by the regular-file check instead of blocking forever;
 * - reads open with O_NOATIME where the kernel allows it (the file's owner, or
 *   CAP_FOWNER; after the first EPERM the handle stops asking): reading a
 *   million manifests must not dirty and journal a million inodes (relatime
 *   still updates an atime older than a day, or older than the last change);
 * - reads and heads take the last directory from a small cache of such walks
 *   (local_dircache.c): an entry serves at most 4,096 operations within 50 ms
 *   of its walk, so a component swapped for a symlink is met within that
 *   bound, and "not found" through a cached directory is checked again (a
 *   fresh walk, or the root's path).  Listings take only the root from it and
 *   walk the rest; writes, creates and deletes always walk.
 * - listings read entries with getdents64 (local_dirent.c), not a DIR.
 * Nothing outside the root can therefore be read, written or removed through
 * a path the front end passed (those never contain "..", a leading "/", a
 * backslash or a control character: lv__path_check).
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
 *
 * This file: opening, listings, reads and heads, and the ops table; the path
 * walk is local_fs.c's, the directory cache local_dircache.c's, writes and
 * deletes are local_write.c's (local_int.h).
 */
#include "storage/backends.h"
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
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>


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
		lv__free(ev->v[i].path);
	lv__free(ev->v);
}

static int entvec_add(entvec *ev, char *path, const struct stat *sb)
{
	if (ev->n == ev->cap) {
		size_t nc = ev->cap ? ev->cap * 2 : 8;
		ent *nv = lv__reallocarray(ev->v, nc, sizeof *nv);
		if (!nv) {
			lv__free(path);
			return LV_ENOMEM;
		}
		ev->v = nv;
		ev->cap = nc;
	}
	ev->v[ev->n].path = path;
	ev->v[ev->n].size = (uint64_t)sb->st_size;
	ev->v[ev->n].mtime_ms = lv__local_mtime_ms(sb);
	ev->n++;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const ent *)a)->path, ((const ent *)b)->path);
}

/* "." and "..", and our own in-flight temporary files: never listed. */
static bool hidden(const char *name)
{
	return (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) ||
	       !strncmp(name, LV__TMP_PREFIX, strlen(LV__TMP_PREFIX));
}

/* Deep enough for any real dataset; stops pathological trees from exhausting the stack. */
#define LOCAL_MAX_DEPTH 64

/*
 * Collects the regular files of the open directory `fd` (relative path `rel`),
 * descending into real (non-symlink) subdirectories when `recursive`.  Leaves fd
 * open (the caller's); closes the subdirectories it opens.
 */
static int walk(int fd, const char *rel, bool recursive, int depth, entvec *ev, lv_error *err)
{
	lv__dents it;
	lv__dents_open(&it, fd);
	int rc = 0;
	for (;;) {
		const char *name;
		unsigned char type;
		int r = lv__dents_next(&it, &name, &type);
		if (r <= 0) {
			if (r < 0)
				rc = lv__local_sys_err(err, -r, false, "list", rel);
			break;
		}
		if (hidden(name))
			continue;
		struct stat sb;
		if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				continue; /* removed while we were listing */
			char *p = lv__join2(rel, name);
			rc = lv__local_sys_err(err, errno, false, "list", p ? p : rel);
			lv__free(p);
			break;
		}
		if (!S_ISREG(sb.st_mode) && !(recursive && S_ISDIR(sb.st_mode)))
			continue; /* symlinks, devices, sockets, and directories when flat */
		char *child = lv__join2(rel, name);
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
			lv__free(child);
			break;
		}
		/* O_NOFOLLOW: a directory swapped for a symlink after the lstat is not entered. */
		int cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			int e = errno;
			if (e == ENOENT || e == ENOTDIR || e == ELOOP) {
				lv__free(child);
				continue;
			}
			rc = lv__local_sys_err(err, e, false, "list", child);
			lv__free(child);
			break;
		}
		rc = walk(cfd, child, true, depth + 1, ev, err);
		close(cfd);
		lv__free(child);
		if (rc < 0)
			break;
	}
	lv__dents_close(&it);
	return rc;
}

/* Lists the open directory fd (dir) into cb, sorted; fd goes to the cache (or is closed). */
static int list_open(const local *l, int fd, const char *dir, bool recursive, lv_list_cb cb,
		     void *payload, lv_error *err)
{
	entvec ev = { 0 };
	int rc = walk(fd, dir, recursive, 0, &ev, err);
	lv__local_dir_keep(l, dir, fd); /* the walk of dir serves the reads that follow */
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

static int local_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		      lv_error *err)
{
	local *l = impl;
	int fd;
	/* A missing directory (or a file where one was expected) lists as empty. */
	int rc = lv__local_open_list_dir(l, dir, &fd, err);
	if (rc < 0 || fd < 0)
		return rc;
	return list_open(l, fd, dir, recursive, cb, payload, err);
}

/*
 * parent/subs[i] for each i, as local_list lists each: parent is walked from the root once
 * (missing there, and confirmed so, every one lists as empty: two system calls for _refs/tags
 * and _refs/branches of a dataset without refs instead of four), then each subdirectory is
 * walked from it as any directory is (just walked: a missing one is missing; a symlinked one
 * is refused).
 */
static int local_list_subdirs(void *impl, const char *parent, const char *const *subs, size_t n,
			      lv_list_cb cb, void *const *payloads, int *rcs, lv_error *errs)
{
	local *l = impl;
	int pfd;
	int rc = lv__local_open_list_dir(l, parent, &pfd, &errs[0]);
	for (size_t i = 0; i < n; i++) {
		rcs[i] = rc < 0 ? rc : 0;
		if (rc < 0 && i)
			errs[i] = errs[0];
	}
	if (rc < 0 || pfd < 0)
		return 0;
	size_t pl = strlen(parent);
	for (size_t i = 0; i < n; i++) {
		char *dir = lv__join2(parent, subs[i]);
		if (!dir) {
			rcs[i] = lv__err(&errs[i], LV_ENOMEM, "list %s: out of memory", parent);
			continue;
		}
		int fd;
		rcs[i] = lv__local_walk_at(l, pfd, dir, pl + 1, strlen(dir), "list", &fd, &errs[i]);
		if (rcs[i] == 0)
			rcs[i] = list_open(l, fd, dir, false, cb, payloads[i], &errs[i]);
		else if (rcs[i] == LV_ENOTFOUND) /* a missing directory (or a file there): empty */
			rcs[i] = 0;
		lv__free(dir);
	}
	close(pfd);
	return 0;
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
	int rc, fd;
	if ((rc = lv__local_open_list_dir(l, dir, &fd, err)) < 0 || fd < 0)
		return rc;
	lv__dents it;
	lv__dents_open(&it, fd);
	size_t dl = strlen(dir), off = dl ? dl + 1 : 0;
	char path[LV__PATH_MAX + 1];
	if (dl > LV__PATH_MAX - 1) {
		lv__dents_close(&it);
		close(fd);
		return 0; /* no valid storage path can be below it */
	}
	memcpy(path, dir, dl);
	path[dl] = '/';
	for (;;) {
		const char *name;
		unsigned char type;
		int r = lv__dents_next(&it, &name, &type);
		if (r <= 0) {
			if (r < 0)
				rc = lv__local_sys_err(err, -r, false, "list", dir);
			break;
		}
		if (hidden(name))
			continue;
		if (type == DT_UNKNOWN) {
			struct stat sb;
			if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
				continue;
		} else if (type != DT_REG) {
			continue;
		}
		size_t nl = strlen(name);
		if (off + nl > LV__PATH_MAX)
			continue; /* cannot be a valid storage path */
		lv__copy_bytes(path + off, name, nl + 1);
		lv_list_entry e = { path, 0, 0 };
		if ((rc = cb(&e, payload)) != 0)
			break;
	}
	lv__dents_close(&it);
	lv__local_dir_keep(l, dir, fd); /* the walk of dir serves the reads that follow */
	return rc;
}

/* ---- reads ---- */

/* Opens a regular file for reading relative to its directory (from the cache unless
 * `fresh`); fills *sb. */
static int open_regular_in(const local *l, const char *rel, bool *fresh, const char *what,
			   int *fd_out, struct stat *sb, lv_error *err)
{
	lv__dirref d;
	LV_TRY(lv__local_dir_get(l, rel, *fresh, what, &d, err));
	*fresh = !d.cached; /* walked now: a second try would find the same */
	/* O_NONBLOCK: a FIFO must not block the open; it is refused as not regular below. */
	int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	bool noatime = __atomic_load_n(&l->noatime, __ATOMIC_RELAXED);
	int fd = openat(d.fd, d.leaf, flags | (noatime ? O_NOATIME : 0));
	int e = errno;
	if (fd < 0 && e == EPERM && noatime) { /* not the file's owner: read as before */
		__atomic_store_n((int *)&l->noatime, 0, __ATOMIC_RELAXED);
		fd = openat(d.fd, d.leaf, flags);
		e = errno;
	}
	if (fd < 0) {
		struct stat lb;
		bool link = (e == ELOOP || e == ENOTDIR) &&
			    fstatat(d.fd, d.leaf, &lb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lb.st_mode);
		lv__local_dir_put(l, &d);
		if (link)
			return lv__local_symlink_err(err, what, rel, strlen(rel));
		return lv__local_sys_err(err, e, true, what, rel);
	}
	lv__local_dir_put(l, &d);
	if (fstat(fd, sb) != 0) {
		e = errno;
		close(fd);
		return lv__local_sys_err(err, e, true, what, rel);
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

/* The same; a file not found through a cached directory is looked for once more after a
 * fresh walk (the directory may have been replaced since it was cached). */
static int open_regular(const local *l, const char *rel, const char *what, int *fd_out,
			struct stat *sb, lv_error *err)
{
	bool fresh = false;
	lv_error first = { 0 };
	int rc = open_regular_in(l, rel, &fresh, what, fd_out, sb, &first);
	if (rc == LV_ENOTFOUND && !fresh) {
		fresh = true;
		return open_regular_in(l, rel, &fresh, what, fd_out, sb, err);
	}
	if (rc < 0 && err)
		*err = first;
	return rc;
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
			lv__free(p);
			return lv__err(err, LV_EIO, "%s %s: %s", what, rel,
				       lv__local_errstr(e, ebuf, sizeof ebuf));
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

/* A ranged read, and the opened file's size and time (storage/stamped.h). */
static int local_read_range_stamped(void *impl, const char *path, uint64_t offset, uint64_t len,
				    lv_buf *out, uint64_t *size, int64_t *mtime_ms, lv_error *err)
{
	int fd = -1; /* as in local_read */
	struct stat sb;
	LV_TRY(open_regular(impl, path, "read", &fd, &sb, err));
	uint64_t fsize = (uint64_t)sb.st_size;
	uint64_t n = offset >= fsize ? 0 : fsize - offset;
	if (n > len)
		n = len;
	int rc = read_at(fd, n ? offset : 0, n, "read", path, out, err);
	close(fd);
	if (rc == 0) {
		*size = fsize;
		*mtime_ms = lv__local_mtime_ms(&sb);
	}
	return rc;
}

static int local_read_range(void *impl, const char *path, uint64_t offset, uint64_t len,
			    lv_buf *out, lv_error *err)
{
	uint64_t size;
	int64_t mtime_ms;
	return local_read_range_stamped(impl, path, offset, len, out, &size, &mtime_ms, err);
}

static int head_in(const local *l, const char *path, bool *fresh, uint64_t *size,
		   int64_t *mtime_ms, lv_error *err)
{
	lv__dirref d;
	LV_TRY(lv__local_dir_get(l, path, *fresh, "head", &d, err));
	*fresh = !d.cached;
	struct stat sb;
	int r = fstatat(d.fd, d.leaf, &sb, AT_SYMLINK_NOFOLLOW);
	int e = errno;
	lv__local_dir_put(l, &d);
	if (r != 0)
		return lv__local_sys_err(err, e, true, "head", path);
	if (S_ISLNK(sb.st_mode))
		return lv__local_symlink_err(err, "head", path, strlen(path));
	if (!S_ISREG(sb.st_mode))
		return lv__err(err, S_ISDIR(sb.st_mode) ? LV_ENOTFOUND : LV_EIO,
			       "head %s: not a regular file", path);
	*size = (uint64_t)sb.st_size;
	*mtime_ms = lv__local_mtime_ms(&sb);
	return 0;
}

/* A head through the cached directory; "not found" is checked once more after a fresh walk. */
static int local_head(void *impl, const char *path, uint64_t *size, int64_t *mtime_ms,
		      lv_error *err)
{
	bool fresh = false;
	lv_error first = { 0 };
	int rc = head_in(impl, path, &fresh, size, mtime_ms, &first);
	if (rc == LV_ENOTFOUND && !fresh) {
		fresh = true;
		return head_in(impl, path, &fresh, size, mtime_ms, err);
	}
	if (rc < 0 && err)
		*err = first;
	return rc;
}

static void local_close(void *impl)
{
	local *l = impl;
	if (!l)
		return;
	lv__dircache_free(l->dc);
	lv__free(l->root);
	lv__free(l);
}

static const lv_storage_ops local_ops = {
	.version = LV_STORAGE_OPS_VERSION,
	.list = local_list,
	.read = local_read,
	.read_range = local_read_range,
	.head = local_head,
	.write = lv__local_write,
	.create = lv__local_create,
	.del = lv__local_del,
	.del_many = lv__local_del_many,
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

/*
 * The resolved path of an existing directory, opened once: the kernel's name for the open
 * descriptor (/proc/self/fd), which is realpath's answer in two system calls instead of one
 * readlink per component and a stat; the descriptor is kept as the cache's root entry.  0, or
 * -1 when it cannot tell (no /proc, not a directory, ...): the caller resolves as before.
 */
static int open_resolved(const char *path, char **out, int *fd_out)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char link[LV__PROC_FD_PATH], buf[PATH_MAX + 1];
	lv__local_proc_fd_path(link, fd);
	ssize_t n = readlink(link, buf, sizeof buf);
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof deleted - 1;
	if (n <= 0 || (size_t)n >= sizeof buf || buf[0] != '/' ||
	    ((size_t)n >= dl && !memcmp(buf + n - dl, deleted, dl)) || !(*out = lv__strndup(buf, (size_t)n))) {
		close(fd);
		return -1;
	}
	*fd_out = fd;
	return 0;
}

/*
 * An absolute path through no symbolic link at all is its own resolved path once "", "."
 * and ".." are taken out lexically (the kernel walked every component as a real directory):
 * one openat2(RESOLVE_NO_SYMLINKS) names the root with no /proc readlink.  -1 for a
 * relative path, a path through a link (ELOOP), a kernel without openat2 or any other
 * failure: the caller resolves as before.
 */
static int open_linkless(const char *path, char **out, int *fd_out)
{
#ifdef SYS_openat2
	if (path[0] != '/')
		return -1;
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd < 0)
		return -1;
	if (!(*out = normalize_abs(path))) {
		close((int)fd);
		return -1;
	}
	*fd_out = (int)fd;
	return 0;
#else
	(void)path, (void)out, (void)fd_out;
	return -1;
#endif
}

/* Absolute form of `path`: realpath when it exists, else cwd-joined and normalised.
 * `shown` (the address as given) set: the root must be an existing directory, and a missing
 * one or a file is named as such.  *root_fd: the root opened on the way (else -1). */
static int make_root(const char *path, const char *shown, char **out, int *root_fd, lv_error *err)
{
	char ebuf[128];
	*root_fd = -1;
	if (open_linkless(path, out, root_fd) == 0 || open_resolved(path, out, root_fd) == 0)
		return 0;
	char *real = realpath(path, NULL);
	if (real) {
		struct stat sb;
		if (stat(real, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			lv__free(real);
			if (shown)
				return lv__err(err, LV_EINVALID, "%s: is not a directory; a Lance dataset "
					       "is a directory)", shown);
			return lv__err(err, LV_EINVALID, "open %s: not a directory", path);
		}
		*out = real;
		return 0;
	}
	int e = errno;
	if (e == ENOENT && shown)
		return lv__err(err, LV_ENOTFOUND, "%s: does not exist", shown);
	if (e != ENOENT)
		return lv__err(err, e == ENOTDIR ? LV_EINVALID : LV_EIO, "open %s: %s", path,
			       lv__local_errstr(e, ebuf, sizeof ebuf));
	char *abs = NULL;
	if (path[0] == '/') {
		abs = lv__strdup(path);
	} else {
		char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return lv__err(err, LV_EIO, "open %s: getcwd: %s", path,
				       lv__local_errstr(errno, ebuf, sizeof ebuf));
		abs = lv__sprintf("%s/%s", cwd, path);
		lv__free(cwd);
	}
	if (!abs)
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", path);
	*out = normalize_abs(abs);
	lv__free(abs);
	if (!*out)
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", path);
	return 0;
}

static int local_open(lv_storage **out, const char *root, const char *shown, lv_error *err)
{
	*out = NULL;
	if (!root || !root[0])
		return lv__err(err, LV_EINVALID, "open: empty path");
	if (strlen(root) > PATH_MAX)
		return lv__err(err, LV_EINVALID, "open: path longer than %d bytes", PATH_MAX);
	local *l = lv__calloc(1, sizeof *l);
	if (!l)
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", root);
	int root_fd;
	int rc = make_root(root, shown, &l->root, &root_fd, err);
	if (rc < 0) {
		lv__free(l);
		return rc;
	}
	l->dc = lv__dircache_new(); /* none (out of memory): every operation walks */
	if (root_fd >= 0)
		lv__local_dir_keep(l, "", root_fd); /* the first operation need not open it again */
	l->noatime = 1;
	size_t rl = strlen(l->root);
	char *desc = lv__malloc(rl + 8);
	if (desc) {
		memcpy(desc, "file://", 7);
		memcpy(desc + 7, l->root, rl + 1);
	}
	if (!desc) {
		local_close(l);
		return lv__err(err, LV_ENOMEM, "open %s: out of memory", root);
	}
	rc = lv__storage_new_kind(out, &local_ops, l, desc, LV__STORAGE_LOCAL, err);
	lv__free(desc);
	if (rc < 0) {
		local_close(l);
	} else {
		lv__storage_set_notify(*out, &lv__local_notify_ops);
		lv__storage_set_list_subdirs(*out, local_list_subdirs);
		lv__storage_set_read_stamped(*out, local_read_range_stamped);
	}
	return rc;
}

static int open_address(lv_storage **out, lv__address *a, lv_error *err)
{
	LV_TRY(lv__opt_none(&a->opts, a->scheme[0] ? "a file:// URI" : "a local path", err));
	return local_open(out, a->root, a->must_exist ? a->uri : NULL, err);
}

const lv__backend lv__backend_local = { "", LV__ADDR_PATH, "a local path", open_address };
const lv__backend lv__backend_file = { "file", LV__ADDR_PATH, "file://", open_address };
