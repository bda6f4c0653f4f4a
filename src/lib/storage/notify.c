/*
 * Store notifications: the front end over a backend's lv__notify_ops (see notify.h).
 * Invariants: the notifier remembers the ops table it was made from and watches only
 * directories of stores with that same table; every directory is checked and joined with
 * the sub-handle prefix (util/path.c) before the backend sees it.
 */
#include "storage/notify.h"
#include "storage/storage_int.h"
#include "util/util.h"

#include <stdlib.h>

struct lv__notify {
	const lv__notify_ops *ops;
	void *nimpl;
};

int lv__notify_new(lv__notify **out, const lv_storage *st, lv_error *err)
{
	*out = NULL;
	void *impl;
	const char *prefix;
	const lv__notify_ops *ops = lv__storage_notify_ops(st, &impl, &prefix);
	if (!ops)
		return lv__err(err, LV_EUNSUPPORTED, "%s: the store cannot notify",
			       lv_storage_describe(st));
	lv__notify *n = lv__calloc(1, sizeof *n);
	if (!n)
		return lv__err(err, LV_ENOMEM, "notify: out of memory");
	int rc = ops->open(&n->nimpl, err);
	if (rc < 0) {
		lv__free(n);
		return rc;
	}
	n->ops = ops;
	*out = n;
	return 0;
}

bool lv__notify_can(const lv__notify *n, const lv_storage *st)
{
	void *impl;
	const char *prefix;
	return n && lv__storage_notify_ops(st, &impl, &prefix) == n->ops;
}

int lv__notify_add(lv__notify *n, lv_storage *st, const char *dir, int64_t *wd, lv_error *err)
{
	void *impl;
	const char *prefix;
	if (!n || lv__storage_notify_ops(st, &impl, &prefix) != n->ops)
		return lv__err(err, LV_EUNSUPPORTED, "%s: the store cannot notify",
			       lv_storage_describe(st));
	char full[LV__PATH_MAX + 1];
	LV_TRY(lv__path_check(dir, true, "notify", err));
	LV_TRY(lv__path_join(full, prefix, dir, "notify", err));
	return n->ops->add(n->nimpl, impl, full, wd, err);
}

void lv__notify_remove(lv__notify *n, int64_t wd)
{
	if (n)
		n->ops->remove(n->nimpl, wd);
}

int lv__notify_wait(lv__notify *n, int64_t timeout_ms, void (*fn)(int64_t wd, void *arg),
		    void *arg, lv_error *err)
{
	return n->ops->wait(n->nimpl, timeout_ms, fn, arg, err);
}

void lv__notify_wake(lv__notify *n)
{
	if (n)
		n->ops->wake(n->nimpl);
}

void lv__notify_free(lv__notify *n)
{
	if (!n)
		return;
	n->ops->close(n->nimpl);
	lv__free(n);
}
