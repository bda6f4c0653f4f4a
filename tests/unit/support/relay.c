/* A store relaying to another one, with hooks (relay.h). */
#include "support/relay.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <lancever/sys/storage.h>

typedef struct relay {
	lv_storage *inner;
	tu_relay_hooks h;
} relay;

/* A listing's callback and payload, behind the `listed` hook. */
typedef struct lister {
	const relay *r;
	lv_list_cb cb;
	void *payload;
} lister;

static int r_entry(const lv_list_entry *e, void *payload)
{
	lister *l = payload;
	l->r->h.listed(l->r->h.arg, e);
	return l->cb(e, l->payload);
}

static int r_list(void *impl, const char *dir, bool rec, lv_list_cb cb, void *payload, lv_error *e)
{
	relay *r = impl;
	if (r->h.before_list)
		r->h.before_list(r->h.arg, dir);
	if (!r->h.listed)
		return lv_storage_list(r->inner, dir, rec, cb, payload, e);
	lister l = { r, cb, payload };
	return lv_storage_list(r->inner, dir, rec, r_entry, &l, e);
}
static int r_read(void *impl, const char *p, lv_buf *out, lv_error *e)
{
	relay *r = impl;
	if (r->h.before_read)
		r->h.before_read(r->h.arg, p);
	return lv_storage_read(r->inner, p, out, e);
}
static int r_range(void *impl, const char *p, uint64_t off, uint64_t len, lv_buf *out, lv_error *e)
{
	relay *r = impl;
	if (r->h.before_read)
		r->h.before_read(r->h.arg, p);
	return lv_storage_read_range(r->inner, p, off, len, out, e);
}
static int r_head(void *impl, const char *p, uint64_t *size, int64_t *mtime, lv_error *e)
{
	relay *r = impl;
	if (r->h.before_head)
		r->h.before_head(r->h.arg, p);
	return lv_storage_head(r->inner, p, size, mtime, e);
}
static int r_write(void *impl, const char *p, const void *d, size_t n, lv_error *e)
{
	relay *r = impl;
	if (r->h.before_write)
		r->h.before_write(r->h.arg, p);
	return lv_storage_write(r->inner, p, d, n, e);
}
static int r_create(void *impl, const char *p, const void *d, size_t n, lv_error *e)
{
	relay *r = impl;
	if (r->h.before_create)
		r->h.before_create(r->h.arg, p);
	return lv_storage_create(r->inner, p, d, n, e);
}
static int r_del(void *impl, const char *p, lv_error *e)
{
	relay *r = impl;
	int rc = lv_storage_delete(r->inner, p, e);
	if (r->h.after_delete)
		r->h.after_delete(r->h.arg, p, rc);
	return rc;
}
static void r_close(void *impl)
{
	relay *r = impl;
	if (r->h.closed)
		r->h.closed(r->h.arg);
	free(r);
}

lv_storage *tu_relay(lv_storage *inner, const tu_relay_hooks *hooks, unsigned flags)
{
	relay *r = calloc(1, sizeof *r);
	assert_non_null(r);
	r->inner = inner;
	if (hooks)
		r->h = *hooks;
	lv_storage_ops ops;
	lv_error e = { 0 };
	assert_int_equal(lv_storage_ops_init(&ops, LV_STORAGE_OPS_VERSION), 0);
	ops.list = r_list, ops.read = r_read, ops.read_range = r_range, ops.head = r_head;
	ops.write = r_write, ops.create = r_create, ops.del = r_del, ops.close = r_close;
	ops.flags = flags;
	lv_storage *st = NULL;
	if (lv_storage_new(&st, &ops, r, "relay://", &e) != 0)
		fail_msg("tu_relay: %s", e.message);
	return st;
}
