/*
 * Local filesystem backend (see local.c's header for its rules on symbolic
 * links, atomic writes and temporary files), in five files: local_fs.c (the
 * path walk without following links, errno to LV_*), local_dircache.c (the
 * walked directories kept for reads, heads and listings), local_dirent.c
 * (directory entries by getdents64), local.c (opening, lists, reads, the ops
 * table) and local_write.c (writes, creates, deletes).
 */
#ifndef LV_STORAGE_LOCAL_INT_H
#define LV_STORAGE_LOCAL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "lancever/common.h"

typedef struct lv__dircache lv__dircache;

typedef struct local {
	char *root; /* absolute, no trailing '/' unless it is "/" itself */
	lv__dircache *dc; /* directory fds for reads and heads (local_dircache.c); NULL = none */
	int noatime;      /* reads still try O_NOATIME (atomic; cleared at the first EPERM) */
} local;

/* local_dircache.c: directory descriptors kept for reads and heads. */
lv__dircache *lv__dircache_new(void);
void lv__dircache_free(lv__dircache *c);
/* The directory holding a path's last component, opened for one operation. */
typedef struct lv__dirref {
	int fd;           /* the directory */
	const char *leaf; /* points into the path */
	void *ent;        /* the cache entry, or NULL: fd is the caller's to close */
	bool cached;      /* fd came from the cache (not walked for this operation) */
} lv__dirref;
/* Opens (from the cache unless `fresh`, else by the O_NOFOLLOW walk, then kept) the parent
 * directory of rel.  Errors as lv__local_open_parent. */
int lv__local_dir_get(const local *l, const char *rel, bool fresh, const char *what, lv__dirref *out,
		      lv_error *err);
/* Ends the operation lv__local_dir_get began. */
void lv__local_dir_put(const local *l, lv__dirref *d);

/* strerror_r into buf (GNU: thread-safe, never NULL). */
const char *lv__local_errstr(int e, char *buf, size_t n);
/* Reports errno `e` for operation `what` on relative path `rel` (ENOENT/ENOTDIR as
 * LV_ENOTFOUND when missing_is_notfound). */
int lv__local_sys_err(lv_error *err, int e, bool missing_is_notfound, const char *what,
		      const char *rel);
/* Opens the parent directory of `rel` without following symbolic links (creating it when
 * `create`); *dfd and *leaf (pointer into rel) on success. */
int lv__local_open_parent(const local *l, const char *rel, bool create, const char *what, int *dfd,
			  const char **leaf, lv_error *err);
/* Opens directory `dir` (relative) for listing, walked from the cached root
 * (local_dircache.c); a missing directory is *fd = -1 (lists as empty). */
int lv__local_open_list_dir(const local *l, const char *dir, int *fd, lv_error *err);
/* Hands the descriptor of directory `dir` (relative; just walked, e.g. for a listing) to the
 * cache, or closes it when the cache keeps no more. */
void lv__local_dir_keep(const local *l, const char *dir, int fd);
/* Opens the directory rel[0, upto) (0: the root) by the O_NOFOLLOW walk from the root's path. */
int lv__local_open_dir(const local *l, const char *rel, size_t upto, const char *what, int *out,
		       lv_error *err);
/* Walks rel[from, upto) (from < upto) with O_NOFOLLOW from the open directory `base`, which
 * is rel[0, from) and is left open; *out is a new descriptor.  Errors as
 * lv__local_open_parent (their messages name rel). */
int lv__local_walk_at(const local *l, int base, const char *rel, size_t from, size_t upto,
		      const char *what, int *out, lv_error *err);
/* Is rel[0, len) missing below the root now (one fstatat of the root's path + rel)?  Confirms a
 * "not found" met through a cached directory without a fresh walk; false when it exists or
 * cannot be told (the caller then walks afresh). */
bool lv__local_confirm_missing(const local *l, const char *rel, size_t len);

/* local_dirent.c: a directory's entries with getdents64 (no DIR, no fstat or fcntl), into a
 * small buffer inside the reader first (a small directory allocates nothing), then, once a
 * read fills more than half of it, into a heap buffer as large as readdir's. */
#define LV__DENTS_SMALL 1024u
typedef struct lv__dents {
	int fd;
	size_t len, pos, cap;
	unsigned char *buf; /* small, or the heap buffer */
	_Alignas(8) unsigned char small[LV__DENTS_SMALL];
} lv__dents;
/* Starts reading the entries of directory fd (which the reader does not own); allocates
 * nothing. */
void lv__dents_open(lv__dents *it, int fd);
/* The next entry: 1 with *name and *type (a DT_* value), 0 at the end, or -errno (-ENOMEM when
 * the larger buffer could not be had). */
int lv__dents_next(lv__dents *it, const char **name, unsigned char *type);
void lv__dents_close(lv__dents *it);
/* The kernel's name for descriptor fd (>= 0) of this process, "/proc/self/fd/<fd>", into
 * buf[LV__PROC_FD_PATH]. */
#define LV__PROC_FD_PATH 32
void lv__local_proc_fd_path(char *buf, int fd);
/* "what rel: 'rel[0, end)' is a symbolic link; lancever never follows ..." (LV_EINVALID). */
int lv__local_symlink_err(lv_error *err, const char *what, const char *rel, size_t end);
/* st_mtim in ms. */
int64_t lv__local_mtime_ms(const struct stat *sb);

/* local_write.c: the write, create and delete ops. */
int lv__local_write(void *impl, const char *path, const void *data, size_t size, lv_error *err);
int lv__local_create(void *impl, const char *path, const void *data, size_t size, lv_error *err);
int lv__local_del(void *impl, const char *path, lv_error *err);
/* Deletes each path (rcs[i] per path); returns the first failure other than LV_ENOTFOUND. */
int lv__local_del_many(void *impl, const char *const *paths, size_t n, int *rcs, lv_error *err);

/* local_notify.c: inotify, the backend's notification capability. */
struct lv__notify_ops;
extern const struct lv__notify_ops lv__local_notify_ops;

#endif
