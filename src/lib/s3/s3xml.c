/* S3 response bodies: ListObjectsV2, DeleteObjects results, error codes (see s3xml.h). */
#include "s3/s3xml.h"

#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- ListObjectsV2 ---- */

typedef struct lst {
	lv_s3_list_page *page;
	int depth;
	bool in_contents;
	lv_dbuf text;
	char *key;
	uint64_t size;
	int64_t mtime;
	int rc;
} lst;

static int64_t parse_iso_ms(const char *v)
{
	int64_t ms;
	lv_error e = { 0 };
	return lv_parse_time(v, &ms, &e) == 0 ? ms : 0;
}

static void XMLCALL x_start(void *u, const XML_Char *name, const XML_Char **attrs)
{
	lst *l = u;
	(void)attrs;
	l->depth++;
	l->text.len = 0;
	if (l->depth == 2 && !strcmp(name, "Contents")) {
		l->in_contents = true;
		free(l->key);
		l->key = NULL;
		l->size = 0;
		l->mtime = 0;
	}
}

static void XMLCALL x_text(void *u, const XML_Char *s, int n)
{
	lst *l = u;
	if (lv_dbuf_add(&l->text, s, (size_t)n) < 0)
		l->rc = LV_ELIMIT;
}

static void add_obj(lst *l)
{
	if (!l->key || l->rc < 0)
		return;
	lv_s3_list_page *p = l->page;
	lv_s3_obj *nv = lv__grow(p->objs, &p->cap, p->n, sizeof *nv, 64);
	if (!nv) {
		l->rc = LV_ENOMEM;
		return;
	}
	p->objs = nv;
	nv[p->n].key = l->key;
	nv[p->n].size = l->size;
	nv[p->n].mtime_ms = l->mtime;
	p->n++;
	l->key = NULL;
}

static void XMLCALL x_end(void *u, const XML_Char *name)
{
	lst *l = u;
	const char *t = l->text.ptr ? (const char *)l->text.ptr : "";
	if (l->in_contents && l->depth == 3) {
		if (!strcmp(name, "Key")) {
			free(l->key);
			l->key = lv__strndup(t, l->text.len);
			if (!l->key)
				l->rc = LV_ENOMEM;
		} else if (!strcmp(name, "Size")) {
			lv_parse_u64(t, l->text.len, &l->size);
		} else if (!strcmp(name, "LastModified")) {
			l->mtime = parse_iso_ms(t);
		}
	} else if (l->depth == 2 && !strcmp(name, "Contents")) {
		l->in_contents = false;
		add_obj(l);
	} else if (l->depth == 2 && !strcmp(name, "IsTruncated")) {
		l->page->truncated = l->text.len == 4 && !memcmp(t, "true", 4);
	} else if (l->depth == 2 && !strcmp(name, "NextContinuationToken")) {
		free(l->page->next_token);
		l->page->next_token = lv__strndup(t, l->text.len);
		if (!l->page->next_token)
			l->rc = LV_ENOMEM;
	}
	l->text.len = 0;
	l->depth--;
}

void lv__s3xml_list_page_dispose(lv_s3_list_page *page)
{
	for (size_t i = 0; i < page->n; i++)
		free(page->objs[i].key);
	free(page->objs);
	free(page->next_token);
	memset(page, 0, sizeof *page);
}

int lv__s3xml_parse_list(const char *body, size_t len, const char *what, lv_s3_list_page *page,
			 lv_error *err)
{
	memset(page, 0, sizeof *page);
	lst l;
	memset(&l, 0, sizeof l);
	l.page = page;
	lv_dbuf_init(&l.text, LV_S3XML_TEXT_MAX);
	int rc = 0;
	XML_Parser xp = XML_ParserCreate("UTF-8");
	if (!xp) {
		rc = lv__err(err, LV_ENOMEM, "out of memory");
		goto out;
	}
	XML_SetUserData(xp, &l);
	XML_SetElementHandler(xp, x_start, x_end);
	XML_SetCharacterDataHandler(xp, x_text);
	if (XML_Parse(xp, body ? body : "", (int)len, 1) == XML_STATUS_ERROR)
		rc = lv__err(err, LV_ECORRUPT, "%s: malformed XML (%s)", what,
			     XML_ErrorString(XML_GetErrorCode(xp)));
	else if (l.rc < 0)
		rc = lv__err(err, l.rc, "%s: %s", what,
			     l.rc == LV_ENOMEM ? "out of memory" : "element too large");
	XML_ParserFree(xp);
out:
	free(l.key);
	lv_dbuf_dispose(&l.text);
	if (rc < 0)
		lv__s3xml_list_page_dispose(page);
	return rc;
}

/* ---- DeleteObjects ---- */

typedef struct delres {
	int depth;
	bool in_error;
	lv_dbuf text;
	char *key;
	char code[64];
	const char *const *keys;
	size_t n;
	int *rcs;
	size_t failed;
} delres;

static void XMLCALL d_start(void *u, const XML_Char *name, const XML_Char **a)
{
	delres *d = u;
	(void)a;
	d->depth++;
	d->text.len = 0;
	if (d->depth == 2 && !strcmp(name, "Error")) {
		d->in_error = true;
		free(d->key);
		d->key = NULL;
		d->code[0] = 0;
	}
}

static void XMLCALL d_text(void *u, const XML_Char *s, int n)
{
	lv_dbuf_add(&((delres *)u)->text, s, (size_t)n);
}

static void XMLCALL d_end(void *u, const XML_Char *name)
{
	delres *d = u;
	const char *t = d->text.ptr ? (const char *)d->text.ptr : "";
	if (d->in_error && d->depth == 3) {
		if (!strcmp(name, "Key")) {
			free(d->key);
			d->key = lv__strndup(t, d->text.len);
		} else if (!strcmp(name, "Code")) {
			snprintf(d->code, sizeof d->code, "%.*s", (int)d->text.len, t);
		}
	} else if (d->depth == 2 && !strcmp(name, "Error")) {
		d->in_error = false;
		for (size_t i = 0; d->key && i < d->n; i++)
			if (!strcmp(d->keys[i], d->key)) {
				d->rcs[i] = !strcmp(d->code, "NoSuchKey") ? LV_ENOTFOUND : LV_EIO;
				d->failed++;
			}
	}
	d->text.len = 0;
	d->depth--;
}

int lv__s3xml_parse_delete(const char *body, size_t len, const char *const *keys, size_t n,
			   int *rcs, size_t *failed, lv_error *err)
{
	delres d;
	memset(&d, 0, sizeof d);
	lv_dbuf_init(&d.text, LV_S3XML_TEXT_MAX);
	d.keys = keys;
	d.n = n;
	d.rcs = rcs;
	int rc = 0;
	XML_Parser xp = XML_ParserCreate("UTF-8");
	if (!xp)
		return lv__err(err, LV_ENOMEM, "out of memory");
	XML_SetUserData(xp, &d);
	XML_SetElementHandler(xp, d_start, d_end);
	XML_SetCharacterDataHandler(xp, d_text);
	if (XML_Parse(xp, body ? body : "", (int)len, 1) == XML_STATUS_ERROR)
		rc = lv__err(err, LV_ECORRUPT, "S3 DELETE (batch of %zu): malformed response", n);
	XML_ParserFree(xp);
	free(d.key);
	lv_dbuf_dispose(&d.text);
	if (failed)
		*failed = d.failed;
	return rc;
}

/* ---- error bodies ---- */

void lv__s3xml_error_code(const char *body, size_t len, char *out, size_t cap)
{
	out[0] = 0;
	if (!body)
		return;
	const char *s = memmem(body, len, "<Code>", 6);
	const char *e = s ? memmem(s, len - (size_t)(s - body), "</Code>", 7) : NULL;
	if (s && e && e - s - 6 < (long)cap)
		snprintf(out, cap, "%.*s", (int)(e - s - 6), s + 6);
}
