/* The storage ops shared by the object-store backends (objstore.h). */
#include "objstore/objstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objstore/lister.h"
#include "util/util.h"

void lv__obj_http_req(const lv__objstore *o, const lv__objreq *q, const char *url, lv__http_req *hq)
{
	memset(hq, 0, sizeof *hq);
	hq->method = q->method;
	hq->what = q->what;
	hq->name = q->path;
	hq->url = url;
	hq->body = q->data;
	hq->body_len = q->n;
	hq->max_ok = q->max_ok;
	hq->ranged = q->ranged;
	hq->range_off = q->range_off;
	hq->range_len = q->range_len;
	hq->code_of = o->svc->code_of;
	hq->service_name = o->svc->name;
	hq->root = o->root;
}

char *lv__obj_key(const lv__objstore *o, const char *path)
{
	if (!o->prefix[0])
		return lv__strdup(path);
	return path[0] ? lv__sprintf("%s/%s", o->prefix, path) : lv__strdup(o->prefix);
}

int lv__obj_status_error(const lv__objstore *o, const char *what, const char *name,
			 const lv__http_resp *r, lv_error *err)
{
	char code[64];
	o->svc->code_of(r, code, sizeof code);
	int lv = r->status == 404 ? LV_ENOTFOUND
		 : r->status == 412 && o->svc->exists_on_412 ? LV_EEXISTS
							     : LV_EIO;
	return lv__err(err, lv, "%s %s %s: HTTP %ld%s%s", o->svc->name, what, name, r->status,
		       code[0] ? " " : "", code);
}

/* One request for the object at `path`; the answer is left in *r (disposed by the caller,
 * also on failure). */
static int object(lv__objstore *o, lv__objreq *q, lv__http_resp *r, lv_error *err)
{
	memset(r, 0, sizeof *r);
	char *key = lv__obj_key(o, q->path);
	if (!key)
		return lv__err(err, LV_ENOMEM, "out of memory");
	q->key = key;
	int rc = o->svc->object(o, q, r, err);
	lv__free(key);
	return rc;
}

/* ---- GET ---- */

/* The body of a GET's answer into *out (see objstore.h for the rules). */
static int get_answer(lv__objstore *o, lv__http_resp *r, const lv__objreq *q, lv_buf *out,
		      lv_error *err)
{
	if (r->status == 206 && q->ranged) {
		if (r->has_range && r->range_start != q->range_off)
			return lv__err(err, LV_ECORRUPT,
				       "%s GET %s: asked for bytes from %llu, the server sent bytes from %llu",
				       o->svc->name, q->path, (unsigned long long)q->range_off,
				       (unsigned long long)r->range_start);
		int rc = lv__dbuf_take(&r->body, out);
		if (rc == 0 && out->size > q->range_len)
			out->size = q->range_len;
		return rc;
	}
	if (r->status == 200) {
		if (q->ranged) { /* Range ignored: the body starts at byte 0 */
			size_t skip = r->body.len < q->range_off ? r->body.len : (size_t)q->range_off;
			if (skip)
				memmove(r->body.ptr, r->body.ptr + skip, r->body.len - skip);
			r->body.len -= skip;
			if (r->body.len > q->range_len)
				r->body.len = (size_t)q->range_len;
		}
		return lv__dbuf_take(&r->body, out);
	}
	if (r->status == 416 && q->ranged) { /* the range starts past the end */
		lv__dbuf_dispose(&r->body);
		lv__dbuf_init(&r->body, 0);
		return lv__dbuf_take(&r->body, out);
	}
	return lv__obj_status_error(o, "GET", q->path, r, err);
}

/* A whole GET (ranged == false) or a ranged GET of [offset, offset + len). */
static int get(lv__objstore *o, const char *path, bool ranged, uint64_t offset, uint64_t len,
	       lv_buf *out, lv_error *err)
{
	char range[64] = "";
	if (ranged) {
		uint64_t last;
		if (__builtin_add_overflow(offset, len - 1, &last))
			snprintf(range, sizeof range, "bytes=%llu-", (unsigned long long)offset);
		else
			snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)offset,
				 (unsigned long long)last);
	}
	lv__objreq q = { .method = "GET", .what = "GET", .path = path, .range = ranged ? range : NULL,
			.max_ok = lv__http_get_limits(o->http)->max_object, .ranged = ranged,
			.range_off = offset, .range_len = len };
	lv__http_resp r;
	int rc = object(o, &q, &r, err);
	if (rc == 0) {
		rc = get_answer(o, &r, &q, out, err);
		if (rc == LV_ENOMEM)
			rc = lv__err(err, rc, "%s GET %s: out of memory", o->svc->name, path);
	}
	lv__http_resp_dispose(&r);
	return rc;
}

int lv__obj_read(void *impl, const char *path, lv_buf *out, lv_error *err)
{
	return get(impl, path, false, 0, 0, out, err);
}

int lv__obj_read_range(void *impl, const char *path, uint64_t offset, uint64_t len, lv_buf *out,
		       lv_error *err)
{
	if (len == 0) {
		out->ptr = lv__malloc(1);
		out->size = 0;
		return out->ptr ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	}
	return get(impl, path, true, offset, len, out, err);
}

/* ---- HEAD, PUT, DELETE ---- */

int lv__obj_head(void *impl, const char *path, uint64_t *size, int64_t *mtime, lv_error *err)
{
	lv__objstore *o = impl;
	lv__objreq q = { .method = "HEAD", .what = "HEAD", .path = path };
	lv__http_resp r;
	int rc = object(o, &q, &r, err);
	if (rc == 0 && r.status != 200)
		rc = lv__obj_status_error(o, "HEAD", path, &r, err);
	if (rc == 0 && !r.has_length)
		rc = lv__err(err, LV_ECORRUPT, "%s HEAD %s: no Content-Length in the answer",
			     o->svc->name, path);
	if (rc == 0) {
		if (size)
			*size = r.content_length;
		if (mtime)
			*mtime = r.last_modified_ms;
	}
	lv__http_resp_dispose(&r);
	return rc;
}

static int put(lv__objstore *o, const char *path, const void *data, size_t n, bool create,
	       lv_error *err)
{
	/* a zero-length object still sends a (non-NULL) body and its content type */
	lv__objreq q = { .method = "PUT", .what = "PUT", .path = path, .data = data ? data : "", .n = n,
			.create = create };
	lv__http_resp r;
	int rc = object(o, &q, &r, err);
	if (rc == 0 && r.status != 200 && r.status != o->svc->put_ok)
		rc = create && (r.status == 409 || r.status == 412)
			     ? lv__err(err, LV_EEXISTS, "%s PUT %s: already exists", o->svc->name, path)
			     : lv__obj_status_error(o, "PUT", path, &r, err);
	lv__http_resp_dispose(&r);
	return rc;
}

int lv__obj_write(void *impl, const char *path, const void *data, size_t n, lv_error *err)
{
	return put(impl, path, data, n, false, err);
}

int lv__obj_create(void *impl, const char *path, const void *data, size_t n, lv_error *err)
{
	return put(impl, path, data, n, true, err);
}

int lv__obj_delete(void *impl, const char *path, lv_error *err)
{
	lv__objstore *o = impl;
	lv__objreq q = { .method = "DELETE", .what = "DELETE", .path = path };
	lv__http_resp r;
	int rc = object(o, &q, &r, err);
	if (rc == 0 && r.status != 200 && r.status != o->svc->del_ok)
		rc = lv__obj_status_error(o, "DELETE", path, &r, err);
	lv__http_resp_dispose(&r);
	return rc;
}

/* ---- listing ---- */

int lv__obj_list(void *impl, const char *dir, bool recursive, lv_list_cb cb, void *payload,
		 lv_error *err)
{
	lv__objstore *o = impl;
	char *kprefix; /* key prefix to list: "<prefix>/<dir>/" */
	if (o->prefix[0])
		kprefix = dir[0] ? lv__sprintf("%s/%s/", o->prefix, dir) : lv__sprintf("%s/", o->prefix);
	else
		kprefix = dir[0] ? lv__sprintf("%s/", dir) : lv__strdup("");
	if (!kprefix)
		return lv__err(err, LV_ENOMEM, "out of memory");
	lv__lister l;
	lv__lister_init(&l, kprefix, o->prefix[0] ? strlen(o->prefix) + 1 : 0, recursive);
	const char *dname = dir[0] ? dir : "/";
	char what[300];
	snprintf(what, sizeof what, "%s LIST %.256s", o->svc->name, dname);
	long max_pages = lv__http_get_limits(o->http)->list_max_pages;
	char *token = NULL;
	int rc = 0;
	for (long page = 0;; page++) {
		if (page >= max_pages) {
			rc = lv__err(err, LV_ELIMIT,
				     "%s: more than %ld pages (LANCEVER_S3_LIST_MAX_PAGES raises the limit)",
				     what, max_pages);
			break;
		}
		lv__list_page pg;
		memset(&pg, 0, sizeof pg);
		rc = o->svc->list_page(o, kprefix, recursive, token, dname, what, &pg, err);
		if (rc == 0)
			rc = lv__lister_page(&l, &pg, what, err);
		bool more = pg.truncated;
		lv__free(token);
		token = pg.next_token;
		pg.next_token = NULL;
		lv__list_page_dispose(&pg);
		if (rc < 0 || !more)
			break;
		if (!token || !token[0]) {
			rc = lv__err(err, LV_ECORRUPT, "%s: truncated listing without a token", what);
			break;
		}
		if ((rc = lv__lister_token(&l, token, what, err)) < 0)
			break;
	}
	if (rc == 0)
		rc = lv__lister_emit(&l, cb, payload);
	lv__lister_dispose(&l);
	lv__free(token);
	lv__free(kprefix);
	return rc;
}

void lv__obj_set_root(lv__objstore *o, const char *scheme, const char *top)
{
	snprintf(o->root, sizeof o->root, "%s%s%s%s", scheme, top, o->prefix[0] ? "/" : "", o->prefix);
}

/* ---- the prefix's spelling ---- */

static int any(const lv_list_entry *e, void *payload)
{
	(void)e;
	*(bool *)payload = true;
	return 1;
}

/* Does anything lie under `dir`?  (A failed listing: no.) */
static bool holds(lv__objstore *o, const char *dir)
{
	bool found = false;
	lv_error e = { 0 };
	return lv__obj_list(o, dir, false, any, &found, &e) >= 0 && found;
}

void lv__obj_pick_prefix(lv__objstore *o, char *alt, const char *probe)
{
	if (alt && probe && !holds(o, probe)) {
		char *dflt = o->prefix;
		o->prefix = alt;
		if (holds(o, probe))
			alt = dflt;
		else
			o->prefix = dflt;
	}
	lv__free(alt);
}
