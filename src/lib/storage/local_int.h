/*
 * Local filesystem backend (see local.c's header for its rules on symbolic
 * links, atomic writes and temporary files), in four files: local_fs.c (the
 * path walk without following links, errno to LV_*), local_dircache.c (the
 * walked directories kept for reads and heads), local.c (opening, lists,
 * reads, the ops table) and local_write.c (writes, creates, deletes).
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
/* Opens directory `dir` (relative) for listing; LV_ENOTFOUND if it is missing. */
int lv__local_open_list_dir(const local *l, const char *dir, int *fd, lv_error *err);
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
