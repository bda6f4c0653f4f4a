/*
 * The local backend's notification capability (storage_int.h: lv__notify_ops): one
 * inotify instance for every watched directory, and an eventfd that wakes a wait.
 * Invariants: a directory on a filesystem whose changes inotify may not report (NFS, SMB,
 * FUSE, Ceph, 9p, ...) is refused with LV_EUNSUPPORTED so the caller polls it instead; the
 * system's watch limit is LV_ELIMIT; the path is opened under the backend's root only as
 * the front end joined it (already checked), never following a symbolic link at the end;
 * wake only writes to the eventfd (async-signal-safe).  With LV_TEST_HOOKS,
 * lv_storage_notify_fail (lancever/sys/testing.h) makes adds fail as the system would.
 */
#include "storage/local_int.h"
#include "storage/storage_int.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>

typedef struct notifier {
	int ifd; /* inotify */
	int efd; /* eventfd: wake */
} notifier;

/* Filesystems whose remote changes inotify does not see (statfs f_type). */
static const unsigned long remote_fs[] = {
	0x6969UL,     /* NFS */
	0x517BUL,     /* SMB */
	0xFF534D42UL, /* CIFS */
	0xFE534D42UL, /* SMB2 */
	0x65735546UL, /* FUSE */
	0x00C36400UL, /* Ceph */
	0x01021997UL, /* 9p (v9fs) */
	0x47504653UL, /* GPFS */
	0x0BD00BD0UL, /* Lustre */
	0x5346414FUL, /* AFS */
	0x013111A8UL, /* IBRIX */
};

static int nopen(void **out, lv_error *err)
{
	char eb[128];
	notifier *n = lv__calloc(1, sizeof *n);
	if (!n)
		return lv__err(err, LV_ENOMEM, "notify: out of memory");
	n->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	n->efd = n->ifd < 0 ? -1 : eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->ifd < 0 || n->efd < 0) {
		int e = errno;
		if (n->ifd >= 0)
			close(n->ifd);
		lv__free(n);
		return lv__err(err, e == EMFILE || e == ENFILE ? LV_ELIMIT : LV_EUNSUPPORTED,
			       "notify: inotify: %s", lv__local_errstr(e, eb, sizeof eb));
	}
	*out = n;
	return 0;
}

static bool is_remote_fs(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) != 0)
		return false; /* inotify_add_watch reports the error */
	for (size_t i = 0; i < sizeof remote_fs / sizeof remote_fs[0]; i++)
		if ((unsigned long)sf.f_type == remote_fs[i])
			return true;
	return false;
}

#ifdef LV_TEST_HOOKS
#include "lancever/sys/testing.h"
static int fail_n, fail_code;

void lv_storage_notify_fail(int n, int code)
{
	__atomic_store_n(&fail_code, code, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fail_n, n, __ATOMIC_SEQ_CST);
}

/* The hook's code for this add, or 0. */
static int hook_fail(void)
{
	int n = __atomic_load_n(&fail_n, __ATOMIC_SEQ_CST);
	while (n > 0 && !__atomic_compare_exchange_n(&fail_n, &n, n - 1, false, __ATOMIC_SEQ_CST,
						     __ATOMIC_SEQ_CST))
		;
	return n > 0 ? __atomic_load_n(&fail_code, __ATOMIC_SEQ_CST) : 0;
}
#else
static int hook_fail(void) { return 0; }
#endif

static int nadd(void *nimpl, void *impl, const char *dir, int64_t *wd, lv_error *err)
{
	int hook = hook_fail();
	if (hook)
		return lv__err(err, hook, "notify %s: failing as asked (test hook)", dir);
	notifier *n = nimpl;
	const local *l = impl;
	char eb[128];
	char *full = lv__sprintf("%s%s%s", l->root, dir[0] ? "/" : "", dir);
	if (!full)
		return lv__err(err, LV_ENOMEM, "notify %s: out of memory", dir);
	if (is_remote_fs(full)) {
		lv__free(full);
		return lv__err(err, LV_EUNSUPPORTED, "notify %s: a network filesystem (inotify "
			       "does not see other machines' changes)", dir);
	}
	int w = inotify_add_watch(n->ifd, full, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE |
							IN_ONLYDIR | IN_DONT_FOLLOW);
	int e = errno;
	lv__free(full);
	if (w < 0) {
		int code = e == ENOSPC ? LV_ELIMIT : e == ENOENT || e == ENOTDIR ? LV_ENOTFOUND
										     : LV_EIO;
		return lv__err(err, code, "notify %s: inotify_add_watch: %s%s", dir,
			       lv__local_errstr(e, eb, sizeof eb),
			       e == ENOSPC ? " (fs.inotify.max_user_watches reached)" : "");
	}
	*wd = w;
	return 0;
}

static void nremove(void *nimpl, int64_t wd)
{
	notifier *n = nimpl;
	if (wd >= 0 && wd <= INT_MAX)
		(void)inotify_rm_watch(n->ifd, (int)wd);
}

/* Hands every queued event's watch to fn; a full queue (IN_Q_OVERFLOW) is wd -1: "any". */
static int drain(notifier *n, void (*fn)(int64_t wd, void *arg), void *arg, lv_error *err)
{
	char eb[128];
	_Alignas(struct inotify_event) char buf[8192];
	for (int round = 0; round < 64; round++) {
		ssize_t got = read(n->ifd, buf, sizeof buf);
		if (got < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return lv__err(err, LV_EIO, "notify: read: %s",
				       lv__local_errstr(errno, eb, sizeof eb));
		}
		for (size_t off = 0; off + sizeof(struct inotify_event) <= (size_t)got;) {
			const struct inotify_event *ev = (const void *)(buf + off);
			fn(ev->mask & IN_Q_OVERFLOW ? -1 : ev->wd, arg);
			off += sizeof *ev + ev->len;
		}
	}
	return 0; /* more may be queued: the next wait takes them */
}

static int nwait(void *nimpl, int64_t timeout_ms, void (*fn)(int64_t wd, void *arg), void *arg,
		 lv_error *err)
{
	notifier *n = nimpl;
	struct pollfd p[2] = { { .fd = n->ifd, .events = POLLIN }, { .fd = n->efd, .events = POLLIN } };
	int t = timeout_ms < 0 ? 0 : timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;
	int r = poll(p, 2, t);
	if (r < 0)
		return errno == EINTR ? 0 : lv__err(err, LV_EIO, "notify: poll failed");
	if (p[1].revents & POLLIN) {
		uint64_t v;
		(void)!read(n->efd, &v, sizeof v);
	}
	if (p[0].revents & POLLIN)
		return drain(n, fn, arg, err);
	return 0;
}

static void nwake(void *nimpl)
{
	notifier *n = nimpl;
	uint64_t one = 1;
	(void)!write(n->efd, &one, sizeof one);
}

static void nclose(void *nimpl)
{
	notifier *n = nimpl;
	close(n->ifd);
	close(n->efd);
	lv__free(n);
}

const lv__notify_ops lv__local_notify_ops = { nopen, nadd, nremove, nwait, nwake, nclose };
