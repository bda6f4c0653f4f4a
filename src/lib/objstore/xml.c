/* Object-store XML bodies: S3 ListObjectsV2 and DeleteObjects, Azure List Blobs, STS, error codes (xml.h). */
#include "objstore/xml.h"

#include <expat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/path.h"
#include "util/util.h"

void lv__printable(char *out, size_t cap, const char *s)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	if (cap)
		out[i] = 0;
}

/*
 * What every parser shares: the expat handle, the text of the current
 * element (capped), the depth, the expected root and the first problem seen.
 * A problem stops the parser at once.
 */
typedef struct xstate {
	XML_Parser xp;
	const char *root; /* expected root element */
	int depth;
	lv_dbuf text;
	int rc;           /* first problem (< 0) */
	char why[160];    /* its description */
} xstate;

static void xfail(xstate *x, int rc, const char *fmt, ...) LV_PRINTF(3, 4);
static void xfail(xstate *x, int rc, const char *fmt, ...)
{
	if (x->rc < 0)
		return;
	x->rc = rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->why, sizeof x->why, fmt, ap);
	va_end(ap);
	XML_StopParser(x->xp, XML_FALSE);
}

/* Called for every start tag: depth, text reset, root check.  False once stopped. */
static bool xstart(xstate *x, const XML_Char *name)
{
	if (x->rc < 0)
		return false;
	x->depth++;
	x->text.len = 0;
	if (x->depth == 1 && strcmp(name, x->root)) {
		char n[64];
		lv__printable(n, sizeof n, name);
		xfail(x, LV_ECORRUPT, "root element <%s>, expected <%s>", n, x->root);
		return false;
	}
	return true;
}

static void XMLCALL xtext(void *u, const XML_Char *s, int n)
{
	xstate *x = u; /* every state struct starts with its xstate */
	if (x->rc < 0)
		return;
	int rc = lv_dbuf_add(&x->text, s, (size_t)n);
	if (rc == LV_ELIMIT)
		xfail(x, LV_ELIMIT, "an element's text is longer than %d bytes", LV_S3XML_TEXT_MAX);
	else if (rc < 0)
		xfail(x, LV_ENOMEM, "out of memory");
}

static void XMLCALL xdoctype(void *u, const XML_Char *name, const XML_Char *sysid,
			     const XML_Char *pubid, int has_internal_subset)
{
	(void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
	xfail(u, LV_ECORRUPT, "a document type declaration (S3 never sends one)");
}

/* Runs the parser over the whole body (in int-sized pieces).  Returns 0 or x->rc / LV_ECORRUPT. */
static int xrun(xstate *x, const char *body, size_t len, char *msg, size_t cap)
{
	static const char empty[1] = "";
	const char *p = body ? body : empty;
	size_t left = body ? len : 0;
	XML_SetStartDoctypeDeclHandler(x->xp, xdoctype);
	XML_SetCharacterDataHandler(x->xp, xtext);
	do {
		int piece = left > (size_t)INT_MAX / 2 ? INT_MAX / 2 : (int)left;
		left -= (size_t)piece;
		if (XML_Parse(x->xp, p, piece, left == 0) == XML_STATUS_ERROR) {
			if (x->rc < 0) {
				snprintf(msg, cap, "%s", x->why);
				return x->rc;
			}
			snprintf(msg, cap, "malformed XML (%s at line %lu)",
				 XML_ErrorString(XML_GetErrorCode(x->xp)),
				 (unsigned long)XML_GetCurrentLineNumber(x->xp));
			return LV_ECORRUPT;
		}
		p += piece;
	} while (left);
	if (x->rc < 0) {
		snprintf(msg, cap, "%s", x->why);
		return x->rc;
	}
	return 0;
}

static int xinit(xstate *x, const char *root, void *state)
{
	memset(x, 0, sizeof *x);
	x->root = root;
	lv_dbuf_init(&x->text, LV_S3XML_TEXT_MAX + 1);
	x->xp = XML_ParserCreate("UTF-8");
	if (!x->xp)
		return LV_ENOMEM;
	XML_SetUserData(x->xp, state);
	return 0;
}

static void xdispose(xstate *x)
{
	if (x->xp)
		XML_ParserFree(x->xp);
	lv_dbuf_dispose(&x->text);
}

/* ---- ListObjectsV2 ---- */

typedef struct lst {
	xstate x; /* first */
	lv_list_page *page;
	bool in_contents;
	char *key;
	uint64_t size;
	bool has_mtime;
	int64_t mtime;
} lst;

static void XMLCALL l_start(void *u, const XML_Char *name, const XML_Char **attrs)
{
	lst *l = u;
	(void)attrs;
	if (!xstart(&l->x, name))
		return;
	if (l->x.depth == 2 && !strcmp(name, "Contents")) {
		l->in_contents = true;
		free(l->key);
		l->key = NULL;
		l->size = 0;
		l->mtime = 0;
		l->has_mtime = false;
	}
}

static void add_obj(lst *l)
{
	if (!l->key)
		return;
	if (!l->has_mtime) {
		/* Age rules (cleanup) must never take an unknown age for an old one. */
		char k[128];
		lv__printable(k, sizeof k, l->key);
		xfail(&l->x, LV_ECORRUPT, "key '%s' has no valid <LastModified>", k);
		return;
	}
	lv_list_page *p = l->page;
	lv_list_obj *nv = lv__grow(p->objs, &p->cap, p->n, sizeof *nv, 64);
	if (!nv) {
		xfail(&l->x, LV_ENOMEM, "out of memory");
		return;
	}
	p->objs = nv;
	nv[p->n].key = l->key;
	nv[p->n].size = l->size;
	nv[p->n].mtime_ms = l->mtime;
	p->n++;
	l->key = NULL;
}

static void XMLCALL l_end(void *u, const XML_Char *name)
{
	lst *l = u;
	if (l->x.rc < 0)
		return;
	const char *t = l->x.text.ptr ? (const char *)l->x.text.ptr : "";
	size_t tl = l->x.text.len;
	if (l->in_contents && l->x.depth == 3) {
		if (!strcmp(name, "Key")) {
			free(l->key);
			if (!(l->key = lv__strndup(t, tl)))
				xfail(&l->x, LV_ENOMEM, "out of memory");
		} else if (!strcmp(name, "Size")) {
			if (!lv_parse_u64(t, tl, &l->size))
				xfail(&l->x, LV_ECORRUPT, "<Size> is not a number");
		} else if (!strcmp(name, "LastModified")) {
			lv_error e = { 0 };
			l->has_mtime = lv_parse_time(t, &l->mtime, &e) == 0;
		}
	} else if (l->x.depth == 2 && !strcmp(name, "Contents")) {
		l->in_contents = false;
		add_obj(l);
	} else if (l->x.depth == 2 && !strcmp(name, "IsTruncated")) {
		l->page->truncated = tl == 4 && !memcmp(t, "true", 4);
	} else if (l->x.depth == 2 && !strcmp(name, "NextContinuationToken")) {
		free(l->page->next_token);
		if (!(l->page->next_token = lv__strndup(t, tl)))
			xfail(&l->x, LV_ENOMEM, "out of memory");
	}
	l->x.text.len = 0;
	l->x.depth--;
}

void lv__list_page_dispose(lv_list_page *page)
{
	for (size_t i = 0; i < page->n; i++)
		free(page->objs[i].key);
	free(page->objs);
	free(page->next_token);
	memset(page, 0, sizeof *page);
}

int lv__s3xml_parse_list(const char *body, size_t len, const char *what, lv_list_page *page,
			 lv_error *err)
{
	memset(page, 0, sizeof *page);
	lst l;
	memset(&l, 0, sizeof l);
	l.page = page;
	int rc = xinit(&l.x, "ListBucketResult", &l);
	char msg[200];
	if (rc < 0) {
		snprintf(msg, sizeof msg, "out of memory");
	} else {
		XML_SetElementHandler(l.x.xp, l_start, l_end);
		rc = xrun(&l.x, body, len, msg, sizeof msg);
	}
	free(l.key);
	xdispose(&l.x);
	if (rc < 0) {
		lv__list_page_dispose(page);
		return lv__err(err, rc, "%s: %s", what, msg);
	}
	return 0;
}

int lv__list_rel(const char *key, const char *kprefix, size_t strip, bool recursive,
		       const char *what, const char **rel, lv_error *err)
{
	size_t kl = strlen(kprefix);
	char shown[160];
	if (strncmp(key, kprefix, kl)) {
		lv__printable(shown, sizeof shown, key);
		return lv__err(err, LV_ECORRUPT,
			       "%s: the server listed key '%s', which is outside the requested prefix",
			       what, shown);
	}
	const char *rest = key + kl; /* below the listed directory */
	size_t n = strlen(rest);
	if (!n)
		return 0; /* the directory's own marker */
	if (strip > kl)
		return lv__err(err, LV_EINVALID, "%s: listing prefix shorter than the store prefix", what);
	/* Every key is checked, also those skipped below: a server that lists such keys is not
	 * to be trusted with the rest of the listing either.  A trailing '/' (a "directory"
	 * marker) is allowed. */
	size_t pl = strlen(key + strip);
	char *path = lv__strndup(key + strip, rest[n - 1] == '/' ? pl - 1 : pl);
	if (!path)
		return lv__err(err, LV_ENOMEM, "%s: out of memory", what);
	lv_error e = { 0 };
	int ok = lv__storage_check_path(path, false, "key", &e);
	free(path);
	if (ok < 0) {
		char why[200];
		lv__printable(shown, sizeof shown, key);
		lv__printable(why, sizeof why, e.message);
		return lv__err(err, LV_ECORRUPT,
			       "%s: the server listed key '%s', which is not a valid object path (%s)",
			       what, shown, why);
	}
	if (rest[n - 1] == '/')
		return 0; /* "directory" markers */
	if (!recursive && strchr(rest, '/'))
		return 0; /* below a sub-directory: not a direct child */
	*rel = key + strip;
	return 1;
}

/* ---- DeleteObjects ---- */

typedef struct delres {
	xstate x; /* first */
	bool in_error;
	char *key;
	char code[64];
	const char *const *keys;
	const size_t *order; /* indices of keys, sorted by key */
	size_t n;
	int *rcs;
	size_t failed;
} delres;

static void XMLCALL d_start(void *u, const XML_Char *name, const XML_Char **a)
{
	delres *d = u;
	(void)a;
	if (!xstart(&d->x, name))
		return;
	if (d->x.depth == 2 && !strcmp(name, "Error")) {
		d->in_error = true;
		free(d->key);
		d->key = NULL;
		d->code[0] = 0;
	}
}

/* Sets the result of every key of the batch equal to d->key (binary search over d->order). */
static void d_apply(delres *d)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(d->keys[d->order[mid]], d->key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < d->n && !strcmp(d->keys[d->order[i]], d->key); i++) {
		size_t k = d->order[i];
		if (d->rcs[k] == 0)
			d->failed++;
		d->rcs[k] = !strcmp(d->code, "NoSuchKey") ? LV_ENOTFOUND : LV_EIO;
	}
}

static void XMLCALL d_end(void *u, const XML_Char *name)
{
	delres *d = u;
	if (d->x.rc < 0)
		return;
	const char *t = d->x.text.ptr ? (const char *)d->x.text.ptr : "";
	size_t tl = d->x.text.len;
	if (d->in_error && d->x.depth == 3) {
		if (!strcmp(name, "Key")) {
			free(d->key);
			if (!(d->key = lv__strndup(t, tl)))
				xfail(&d->x, LV_ENOMEM, "out of memory");
		} else if (!strcmp(name, "Code")) {
			snprintf(d->code, sizeof d->code, "%.*s", (int)(tl < 63 ? tl : 63), t);
		}
	} else if (d->x.depth == 2 && !strcmp(name, "Error")) {
		d->in_error = false;
		if (d->key)
			d_apply(d);
	}
	d->x.text.len = 0;
	d->x.depth--;
}

/* order[] = indices of keys sorted by key (insertion sort: a batch has at most 1000 keys). */
static void sort_indices(const char *const *keys, size_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		while (j > 0 && strcmp(keys[order[j - 1]], keys[i]) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}

int lv__s3xml_parse_delete(const char *body, size_t len, const char *const *keys, size_t n,
			   int *rcs, size_t *failed, lv_error *err)
{
	if (failed)
		*failed = 0;
	delres d;
	memset(&d, 0, sizeof d);
	size_t *order = lv__calloc(n, sizeof *order);
	if (!order)
		return lv__err(err, LV_ENOMEM, "out of memory");
	sort_indices(keys, order, n);
	d.keys = keys;
	d.order = order;
	d.n = n;
	d.rcs = rcs;
	int rc = xinit(&d.x, "DeleteResult", &d);
	char msg[200];
	if (rc < 0) {
		snprintf(msg, sizeof msg, "out of memory");
	} else {
		XML_SetElementHandler(d.x.xp, d_start, d_end);
		rc = xrun(&d.x, body, len, msg, sizeof msg);
	}
	free(d.key);
	xdispose(&d.x);
	free(order);
	if (failed)
		*failed = d.failed;
	if (rc < 0)
		return lv__err(err, rc, "S3 DELETE (batch of %zu): malformed response: %s", n, msg);
	return 0;
}

/* ---- error bodies ---- */

void lv__s3xml_error_code(const char *body, size_t len, char *out, size_t cap)
{
	if (!cap)
		return;
	out[0] = 0;
	if (!body)
		return;
	const char *s = memmem(body, len, "<Code>", 6);
	if (!s)
		return;
	s += 6;
	const char *e = memmem(s, len - (size_t)(s - body), "</Code>", 7);
	if (!e || (size_t)(e - s) >= cap)
		return;
	for (const char *p = s; p < e; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '_' || *p == '-'))
			return;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = 0;
}

/* ---- element texts by name (STS responses and errors) ---- */

typedef struct texts {
	xstate x; /* first */
	const char *const *names;
	char **vals;
	size_t n;
} texts;

static void XMLCALL t_start(void *u, const XML_Char *name, const XML_Char **attrs)
{
	(void)attrs;
	xstart(&((texts *)u)->x, name);
}

static void XMLCALL t_end(void *u, const XML_Char *name)
{
	texts *t = u;
	if (t->x.rc < 0)
		return;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(name, t->names[i]) && !t->vals[i]) {
			const char *s = t->x.text.ptr ? (const char *)t->x.text.ptr : "";
			if (!(t->vals[i] = lv__strndup(s, t->x.text.len)))
				xfail(&t->x, LV_ENOMEM, "out of memory");
		}
	t->x.text.len = 0;
	t->x.depth--;
}

int lv__xml_texts(const char *body, size_t len, const char *root, const char *const *names,
		  char **vals, size_t n, const char *what, lv_error *err)
{
	texts t;
	memset(&t, 0, sizeof t);
	for (size_t i = 0; i < n; i++)
		vals[i] = NULL;
	t.names = names;
	t.vals = vals;
	t.n = n;
	int rc = xinit(&t.x, root, &t);
	char msg[200];
	if (rc < 0) {
		snprintf(msg, sizeof msg, "out of memory");
	} else {
		XML_SetElementHandler(t.x.xp, t_start, t_end);
		rc = xrun(&t.x, body, len, msg, sizeof msg);
	}
	xdispose(&t.x);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++) {
			free(vals[i]);
			vals[i] = NULL;
		}
		return lv__err(err, rc, "%s: %s", what, msg);
	}
	return 0;
}

/* ---- Azure List Blobs ---- */

typedef struct azl {
	xstate x; /* first */
	lv_list_page *page;
	bool in_blob;
	char *name;
	uint64_t size;
	bool has_size, has_mtime;
	int64_t mtime;
} azl;

static void XMLCALL az_start(void *u, const XML_Char *name, const XML_Char **attrs)
{
	azl *l = u;
	(void)attrs;
	if (!xstart(&l->x, name))
		return;
	if (l->x.depth == 3 && !strcmp(name, "Blob")) {
		l->in_blob = true;
		free(l->name);
		l->name = NULL;
		l->size = 0;
		l->mtime = 0;
		l->has_size = l->has_mtime = false;
	}
}

static void az_add(azl *l)
{
	if (!l->name)
		return;
	char k[128];
	if (!l->has_mtime || !l->has_size) {
		lv__printable(k, sizeof k, l->name);
		xfail(&l->x, LV_ECORRUPT, "blob '%s' has no valid %s", k,
		      l->has_size ? "<Last-Modified>" : "<Content-Length>");
		return;
	}
	lv_list_page *p = l->page;
	lv_list_obj *nv = lv__grow(p->objs, &p->cap, p->n, sizeof *nv, 64);
	if (!nv) {
		xfail(&l->x, LV_ENOMEM, "out of memory");
		return;
	}
	p->objs = nv;
	nv[p->n].key = l->name;
	nv[p->n].size = l->size;
	nv[p->n].mtime_ms = l->mtime;
	p->n++;
	l->name = NULL;
}

static void XMLCALL az_end(void *u, const XML_Char *name)
{
	azl *l = u;
	if (l->x.rc < 0)
		return;
	const char *t = l->x.text.ptr ? (const char *)l->x.text.ptr : "";
	size_t tl = l->x.text.len;
	if (l->in_blob && l->x.depth == 4 && !strcmp(name, "Name")) {
		free(l->name);
		if (!(l->name = lv__strndup(t, tl)))
			xfail(&l->x, LV_ENOMEM, "out of memory");
	} else if (l->in_blob && l->x.depth == 5 && !strcmp(name, "Content-Length")) {
		l->has_size = lv_parse_u64(t, tl, &l->size);
		if (!l->has_size)
			xfail(&l->x, LV_ECORRUPT, "<Content-Length> is not a number");
	} else if (l->in_blob && l->x.depth == 5 && !strcmp(name, "Last-Modified")) {
		char d[64];
		size_t n = tl < sizeof d - 1 ? tl : sizeof d - 1;
		memcpy(d, t, n);
		d[n] = 0;
		l->mtime = lv__rfc1123_ms(d);
		l->has_mtime = l->mtime > 0;
	} else if (l->x.depth == 3 && !strcmp(name, "Blob")) {
		l->in_blob = false;
		az_add(l);
	} else if (l->x.depth == 2 && !strcmp(name, "NextMarker")) {
		free(l->page->next_token);
		l->page->next_token = NULL;
		if (tl && !(l->page->next_token = lv__strndup(t, tl)))
			xfail(&l->x, LV_ENOMEM, "out of memory");
		l->page->truncated = tl > 0;
	}
	l->x.text.len = 0;
	l->x.depth--;
}

int lv__azxml_parse_list(const char *body, size_t len, const char *what, lv_list_page *page,
			 lv_error *err)
{
	memset(page, 0, sizeof *page);
	azl l;
	memset(&l, 0, sizeof l);
	l.page = page;
	int rc = xinit(&l.x, "EnumerationResults", &l);
	char msg[200];
	if (rc < 0) {
		snprintf(msg, sizeof msg, "out of memory");
	} else {
		XML_SetElementHandler(l.x.xp, az_start, az_end);
		rc = xrun(&l.x, body, len, msg, sizeof msg);
	}
	free(l.name);
	xdispose(&l.x);
	if (rc < 0) {
		lv__list_page_dispose(page);
		return lv__err(err, rc, "%s: %s", what, msg);
	}
	return 0;
}

int64_t lv__rfc1123_ms(const char *v)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *end = strptime(v, "%a, %d %b %Y %H:%M:%S", &tm);
	if (!end || (*end && strcmp(end, " GMT")))
		return 0;
	return (int64_t)timegm(&tm) * 1000;
}
