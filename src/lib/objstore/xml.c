/* Object-store XML bodies: S3 ListObjectsV2 and DeleteObjects, Azure List Blobs, STS, error codes (xml.h). */
#include "objstore/xml.h"

#include <expat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/path.h"
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
 * element (capped), the depth, the expected root, the parser's own start and
 * end callbacks and the first problem seen.  A problem stops the parser at once.
 */
typedef struct xstate xstate;
struct xstate {
	XML_Parser xp;
	const char *root; /* expected root element */
	int depth;
	lv__dbuf text;
	/* Called at every start tag past the root check (depth already counts it), and at
	 * every end tag with the element's text (the depth still counts it). */
	void (*on_start)(xstate *x, const XML_Char *name);
	void (*on_end)(xstate *x, const XML_Char *name, const char *t, size_t tl);
	int rc;           /* first problem (< 0) */
	char why[160];    /* its description */
};

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

/* *dst = a copy of the current element's text (the old value freed). */
static void xkeep(xstate *x, char **dst, const char *t, size_t tl)
{
	lv__free(*dst);
	if (!(*dst = lv__strndup(t, tl)))
		xfail(x, LV_ENOMEM, "out of memory");
}

/* Every start tag: depth, text reset, root check, then the parser's own callback. */
static void XMLCALL xstart(void *u, const XML_Char *name, const XML_Char **attrs)
{
	xstate *x = u; /* every state struct starts with its xstate */
	(void)attrs;
	if (x->rc < 0)
		return;
	x->depth++;
	x->text.len = 0;
	if (x->depth == 1 && strcmp(name, x->root)) {
		char n[64];
		lv__printable(n, sizeof n, name);
		xfail(x, LV_ECORRUPT, "root element <%s>, expected <%s>", n, x->root);
		return;
	}
	if (x->on_start)
		x->on_start(x, name);
}

static void XMLCALL xend(void *u, const XML_Char *name)
{
	xstate *x = u;
	if (x->rc < 0)
		return;
	x->on_end(x, name, x->text.ptr ? (const char *)x->text.ptr : "", x->text.len);
	x->text.len = 0;
	x->depth--;
}

static void XMLCALL xtext(void *u, const XML_Char *s, int n)
{
	xstate *x = u;
	if (x->rc < 0)
		return;
	int rc = lv__dbuf_add(&x->text, s, (size_t)n);
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
	XML_SetElementHandler(x->xp, xstart, xend);
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

/* Parses `body` with the state `x` (the first member of the parser's state, whose other
 * members the caller has set); 0, or the problem with its description in msg. */
static int xparse(xstate *x, const char *root, const char *body, size_t len, char *msg,
		  size_t cap)
{
	x->root = root;
	lv__dbuf_init(&x->text, LV_S3XML_TEXT_MAX + 1);
	int rc;
	/* expat takes its allocator per parser: the library's (util.h) */
	static const XML_Memory_Handling_Suite mem = { lv__malloc, lv__realloc, lv__free };
	if (!(x->xp = XML_ParserCreate_MM("UTF-8", &mem, NULL))) {
		snprintf(msg, cap, "out of memory");
		rc = LV_ENOMEM;
	} else {
		XML_SetUserData(x->xp, x);
		rc = xrun(x, body, len, msg, cap);
		XML_ParserFree(x->xp);
	}
	lv__dbuf_dispose(&x->text);
	return rc;
}

/* ---- listings: S3 ListObjectsV2 and Azure List Blobs ---- */

/* The state of either listing parser. */
typedef struct lst {
	xstate x; /* first */
	lv__list_page *page;
	bool in_obj; /* inside <Contents> (S3) or <Blob> (Azure) */
	char *key;
	uint64_t size;
	bool has_size, has_mtime;
	int64_t mtime;
} lst;

static void obj_begin(lst *l)
{
	l->in_obj = true;
	lv__free(l->key);
	l->key = NULL;
	l->size = 0;
	l->mtime = 0;
	l->has_size = l->has_mtime = false;
}

/* The end of one listed object: it joins the page, or (`missing` names what it lacks, in a
 * message about the `noun`) the parse stops. */
static void obj_end(lst *l, const char *noun, const char *missing)
{
	l->in_obj = false;
	if (!l->key)
		return;
	if (missing) {
		/* Age rules (cleanup) must never take an unknown age for an old one. */
		char k[128];
		lv__printable(k, sizeof k, l->key);
		xfail(&l->x, LV_ECORRUPT, "%s '%s' has no valid %s", noun, k, missing);
		return;
	}
	lv__list_page *p = l->page;
	lv__list_obj *nv = lv__grow(p->objs, &p->cap, p->n, sizeof *nv, 64);
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

static int parse_list(const char *body, size_t len, const char *what, lv__list_page *page,
		      const char *root, void (*on_start)(xstate *, const XML_Char *),
		      void (*on_end)(xstate *, const XML_Char *, const char *, size_t), lv_error *err)
{
	memset(page, 0, sizeof *page);
	lst l;
	memset(&l, 0, sizeof l);
	l.page = page;
	l.x.on_start = on_start;
	l.x.on_end = on_end;
	char msg[200];
	int rc = xparse(&l.x, root, body, len, msg, sizeof msg);
	lv__free(l.key);
	if (rc < 0) {
		lv__list_page_dispose(page);
		return lv__err(err, rc, "%s: %s", what, msg);
	}
	return 0;
}

void lv__list_page_dispose(lv__list_page *page)
{
	for (size_t i = 0; i < page->n; i++)
		lv__free(page->objs[i].key);
	lv__free(page->objs);
	lv__free(page->next_token);
	memset(page, 0, sizeof *page);
}

static void s3_start(xstate *x, const XML_Char *name)
{
	if (x->depth == 2 && !strcmp(name, "Contents"))
		obj_begin((lst *)x);
}

static void s3_end(xstate *x, const XML_Char *name, const char *t, size_t tl)
{
	lst *l = (lst *)x;
	if (l->in_obj && x->depth == 3) {
		if (!strcmp(name, "Key")) {
			xkeep(x, &l->key, t, tl);
		} else if (!strcmp(name, "Size")) {
			if (!lv__parse_u64(t, tl, &l->size))
				xfail(x, LV_ECORRUPT, "<Size> is not a number");
		} else if (!strcmp(name, "LastModified")) {
			lv_error e = { 0 };
			l->has_mtime = lv_parse_time(t, &l->mtime, &e) == 0;
		}
	} else if (x->depth == 2 && !strcmp(name, "Contents")) {
		obj_end(l, "key", l->has_mtime ? NULL : "<LastModified>");
	} else if (x->depth == 2 && !strcmp(name, "IsTruncated")) {
		l->page->truncated = tl == 4 && !memcmp(t, "true", 4);
	} else if (x->depth == 2 && !strcmp(name, "NextContinuationToken")) {
		xkeep(x, &l->page->next_token, t, tl);
	}
}

int lv__s3xml_parse_list(const char *body, size_t len, const char *what, lv__list_page *page,
			 lv_error *err)
{
	return parse_list(body, len, what, page, "ListBucketResult", s3_start, s3_end, err);
}

static void az_start(xstate *x, const XML_Char *name)
{
	if (x->depth == 3 && !strcmp(name, "Blob"))
		obj_begin((lst *)x);
}

static void az_end(xstate *x, const XML_Char *name, const char *t, size_t tl)
{
	lst *l = (lst *)x;
	if (l->in_obj && x->depth == 4 && !strcmp(name, "Name")) {
		xkeep(x, &l->key, t, tl);
	} else if (l->in_obj && x->depth == 5 && !strcmp(name, "Content-Length")) {
		l->has_size = lv__parse_u64(t, tl, &l->size);
		if (!l->has_size)
			xfail(x, LV_ECORRUPT, "<Content-Length> is not a number");
	} else if (l->in_obj && x->depth == 5 && !strcmp(name, "Last-Modified")) {
		char d[64];
		size_t n = tl < sizeof d - 1 ? tl : sizeof d - 1;
		memcpy(d, t, n);
		d[n] = 0;
		l->mtime = lv__rfc1123_ms(d);
		l->has_mtime = l->mtime > 0;
	} else if (x->depth == 3 && !strcmp(name, "Blob")) {
		obj_end(l, "blob", !l->has_size ? "<Content-Length>" : !l->has_mtime ? "<Last-Modified>" : NULL);
	} else if (x->depth == 2 && !strcmp(name, "NextMarker")) {
		lv__free(l->page->next_token);
		l->page->next_token = NULL;
		if (tl)
			xkeep(x, &l->page->next_token, t, tl);
		l->page->truncated = tl > 0;
	}
}

int lv__azxml_parse_list(const char *body, size_t len, const char *what, lv__list_page *page,
			 lv_error *err)
{
	return parse_list(body, len, what, page, "EnumerationResults", az_start, az_end, err);
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
	int ok = lv__path_check(path, false, "key", &e);
	lv__free(path);
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

static void d_start(xstate *x, const XML_Char *name)
{
	delres *d = (delres *)x;
	if (x->depth == 2 && !strcmp(name, "Error")) {
		d->in_error = true;
		lv__free(d->key);
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

static void d_end(xstate *x, const XML_Char *name, const char *t, size_t tl)
{
	delres *d = (delres *)x;
	if (d->in_error && x->depth == 3) {
		if (!strcmp(name, "Key"))
			xkeep(x, &d->key, t, tl);
		else if (!strcmp(name, "Code"))
			snprintf(d->code, sizeof d->code, "%.*s", (int)(tl < 63 ? tl : 63), t);
	} else if (x->depth == 2 && !strcmp(name, "Error")) {
		d->in_error = false;
		if (d->key)
			d_apply(d);
	}
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
	d.x.on_start = d_start;
	d.x.on_end = d_end;
	char msg[200];
	int rc = xparse(&d.x, "DeleteResult", body, len, msg, sizeof msg);
	lv__free(d.key);
	lv__free(order);
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

static void t_end(xstate *x, const XML_Char *name, const char *s, size_t len)
{
	texts *t = (texts *)x;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(name, t->names[i]) && !t->vals[i])
			xkeep(x, &t->vals[i], s, len);
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
	t.x.on_end = t_end;
	char msg[200];
	int rc = xparse(&t.x, root, body, len, msg, sizeof msg);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++) {
			lv__free(vals[i]);
			vals[i] = NULL;
		}
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
