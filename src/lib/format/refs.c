/*
 * Tag and branch reference files: pure parsers over bytes (no I/O, no threads; the
 * loader that lists and reads them is core/refs.c).  Parsing is strict about the types of
 * the fields we use (a version that is a string, a float or negative is corruption,
 * not zero) and lenient about everything else (unknown keys are ignored, so
 * newer Lance releases that add fields keep working).
 */
#include "format/refs.h"
#include "util/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ---- */

/* Loads a top-level JSON object; LV_ECORRUPT with jansson's position otherwise. */
static int load_object(const uint8_t *data, size_t size, const char *what, const char *name,
		       json_t **out, lv_error *err)
{
	*out = NULL;
	if (size > LV_REFS_FILE_MAX)
		return lv__err(err, LV_ELIMIT, "%s %s: %zu bytes exceed the %zu byte limit", what,
			       name, size, LV_REFS_FILE_MAX);
	json_error_t je;
	/* Duplicate keys would make the file mean different things to different readers. */
	json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return lv__err(err, LV_ECORRUPT, "%s %s: invalid JSON at line %d column %d: %s",
			       what, name, je.line, je.column, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return lv__err(err, LV_ECORRUPT, "%s %s: not a JSON object", what, name);
	}
	*out = root;
	return 0;
}

/*
 * A non-negative integer field.  Absent or null gives `dflt` unless required.
 * jansson refuses integers beyond INT64_MAX at parse time, so those are corrupt too.
 */
static int get_u64(json_t *obj, const char *key, bool required, uint64_t dflt, uint64_t *out,
		   const char *what, const char *name, lv_error *err)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v)) {
		if (required)
			return lv__err(err, LV_ECORRUPT, "%s %s: missing \"%s\"", what, name, key);
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return lv__err(err, LV_ECORRUPT, "%s %s: \"%s\" must be a non-negative integer",
			       what, name, key);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int lv__version_hint_parse(const uint8_t *data, size_t size, const char *name, uint64_t *version,
			   lv_error *err)
{
	json_t *root;
	LV_TRY(load_object(data, size, "version hint", name, &root, err));
	int rc = get_u64(root, "version", true, 0, version, "version hint", name, err);
	json_decref(root);
	return rc;
}

/* An optional string field: absent or null gives NULL, else a malloc'ed copy. */
static int get_str(json_t *obj, const char *key, char **out, const char *what, const char *name,
		   lv_error *err)
{
	*out = NULL;
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return lv__err(err, LV_ECORRUPT, "%s %s: \"%s\" must be a string or null", what,
			       name, key);
	/* jansson rejects \u0000 by default, so the value is a proper C string. */
	*out = lv__strndup(json_string_value(v), json_string_length(v));
	if (!*out)
		return lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, name);
	return 0;
}

void lv__tag_dispose(lv_tag *t)
{
	if (!t)
		return;
	lv__free((char *)t->name);
	lv__free((char *)t->branch);
	lv__free((char *)t->created_at);
	lv__free((char *)t->updated_at);
	lv__free((char *)t->metadata);
	memset(t, 0, sizeof *t);
}

void lv__branch_dispose(lv_branch *b)
{
	if (!b)
		return;
	lv__free((char *)b->name);
	lv__free((char *)b->parent_branch);
	memset(b, 0, sizeof *b);
}

/* A copy of the ref's name in *out: 0, or LV_ENOMEM naming the `what` (tag, branch). */
static int dup_name(const char *what, const char *name, char **out, lv_error *err)
{
	if (!(*out = lv__strdup(name)))
		return lv__err(err, LV_ENOMEM, "%s %s: out of memory", what, name);
	return 0;
}

/* The tag's "metadata": absent or null gives "{}", an object its compact JSON text (keys
 * sorted), anything else LV_ECORRUPT (the tag is then skipped with a warning, as a tag that does
 * not parse). */
static int get_metadata(json_t *obj, char **out, const char *name, lv_error *err)
{
	json_t *v = json_object_get(obj, "metadata");
	if (v && !json_is_null(v) && !json_is_object(v))
		return lv__err(err, LV_ECORRUPT, "tag %s: \"metadata\" must be an object", name);
	*out = (v && json_is_object(v)) ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS)
					 : lv__strdup("{}");
	if (!*out)
		return lv__err(err, LV_ENOMEM, "tag %s: out of memory", name);
	return 0;
}

int lv__tag_parse(const uint8_t *data, size_t size, const char *name, lv_tag *out,
		  lv_error *err)
{
	memset(out, 0, sizeof *out);
	if (!name)
		name = "";
	json_t *root = NULL;
	char *branch = NULL, *created = NULL, *updated = NULL, *nm = NULL, *meta = NULL;
	int rc = load_object(data, size, "tag", name, &root, err);
	if (rc < 0)
		goto out;
	uint64_t version = 0, msize = 0;
	if ((rc = get_u64(root, "version", true, 0, &version, "tag", name, err)) < 0 ||
	    (rc = get_u64(root, "manifestSize", false, 0, &msize, "tag", name, err)) < 0 ||
	    (rc = get_str(root, "branch", &branch, "tag", name, err)) < 0 ||
	    (rc = get_str(root, "createdAt", &created, "tag", name, err)) < 0 ||
	    (rc = get_str(root, "updatedAt", &updated, "tag", name, err)) < 0 ||
	    (rc = get_metadata(root, &meta, name, err)) < 0 ||
	    (rc = dup_name("tag", name, &nm, err)) < 0)
		goto out;
	out->name = nm;
	out->branch = branch;
	out->version = version;
	out->manifest_size = msize;
	out->created_at = created;
	out->updated_at = updated;
	out->metadata = meta;
	nm = branch = created = updated = meta = NULL;
out:
	lv__free(meta);
	lv__free(nm);
	lv__free(branch);
	lv__free(created);
	lv__free(updated);
	json_decref(root);
	return rc;
}

int lv__branch_parse(const uint8_t *data, size_t size, const char *name, lv_branch *out,
		     lv_error *err)
{
	memset(out, 0, sizeof *out);
	if (!name)
		name = "";
	json_t *root = NULL;
	char *parent = NULL, *nm = NULL;
	int rc = load_object(data, size, "branch", name, &root, err);
	if (rc < 0)
		goto out;
	uint64_t pver = 0, created = 0, msize = 0;
	if ((rc = get_u64(root, "parentVersion", true, 0, &pver, "branch", name, err)) < 0 ||
	    (rc = get_u64(root, "createAt", false, 0, &created, "branch", name, err)) < 0 ||
	    (rc = get_u64(root, "manifestSize", false, 0, &msize, "branch", name, err)) < 0 ||
	    (rc = get_str(root, "parentBranch", &parent, "branch", name, err)) < 0 ||
	    (rc = dup_name("branch", name, &nm, err)) < 0)
		goto out;
	out->name = nm;
	out->parent_branch = parent;
	out->parent_version = pver;
	out->create_at = (int64_t)created; /* <= INT64_MAX: jansson integers are signed */
	out->manifest_size = msize;
	nm = parent = NULL;
out:
	lv__free(nm);
	lv__free(parent);
	json_decref(root);
	return rc;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Bytes object_store's PathPart percent-encodes (its INVALID set, plus non-ASCII). */
static bool encoded_byte(unsigned c)
{
	return c < 0x20 || c >= 0x7f || (c && strchr("/\\{^}%`]\">[~<#|*?", (int)c));
}

char *lv__ref_name_decode(const char *stem, size_t n)
{
	char *s = lv__malloc(n + 1);
	if (!s)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int hi = stem[i] == '%' && i + 2 < n ? hexval(stem[i + 1]) : -1;
		int lo = hi >= 0 ? hexval(stem[i + 2]) : -1;
		unsigned c = lo >= 0 ? (unsigned)(hi * 16 + lo) : 0;
		if (lo >= 0 && c != 0 && encoded_byte(c)) {
			s[j++] = (char)c;
			i += 2;
		} else {
			s[j++] = stem[i];
		}
	}
	s[j] = 0;
	return s;
}

char *lv__ref_name_encode(const char *name, size_t n)
{
	char *s = lv__malloc(3 * n + 1);
	if (!s)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = (unsigned char)name[i];
		if (c && encoded_byte(c)) {
			s[j++] = '%';
			s[j++] = "0123456789ABCDEF"[c >> 4];
			s[j++] = "0123456789ABCDEF"[c & 15];
		} else {
			s[j++] = (char)c;
		}
	}
	s[j] = 0;
	return s;
}

/* ---- branch names ---- */

/* "invalid branch name 'NAME': WHY" (LV_EINVALID); the name cut at 200 bytes. */
static int bad_name(const char *name, size_t n, const char *why, lv_error *err)
{
	return lv__err(err, LV_EINVALID, "invalid branch name '%.*s': %s", (int)(n < 200 ? n : 200),
		       name, why);
}

/* One segment (between '/'s): Unicode alphanumerics, '.', '-', '_'; not "." (a path step). */
static int check_segment(const char *name, size_t n, const char *seg, size_t len, lv_error *err)
{
	if (len == 1 && seg[0] == '.')
		return bad_name(name, n, "a segment is '.'", err);
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t l = lv__utf8_decode(seg + i, len - i, &cp);
		if (l == 0)
			return bad_name(name, n, "not valid UTF-8", err);
		if (!(cp == '.' || cp == '-' || cp == '_' || lv__unicode_alnum(cp))) {
			char why[96];
			snprintf(why, sizeof why, "U+%04X is not alphanumeric, '.', '-' or '_' (what "
				 "Lance allows in a segment)", (unsigned)cp);
			return bad_name(name, n, why, err);
		}
		i += l;
	}
	return 0;
}

int lv__branch_name_check(const char *name, size_t n, lv_error *err)
{
	static const char lock[] = ".lock";
	const size_t nlock = sizeof lock - 1;
	if (n == 0)
		return bad_name(name, n, "empty", err);
	if (n > LV_BRANCH_NAME_MAX)
		return bad_name(name, n, "longer than 1024 bytes (LV_BRANCH_NAME_MAX)", err);
	if (name[0] == '/' || name[n - 1] == '/')
		return bad_name(name, n, "starts or ends with '/'", err);
	if (memchr(name, '\\', n))
		return bad_name(name, n, "contains '\\'", err);
	if (n >= nlock && !memcmp(name + n - nlock, lock, nlock))
		return bad_name(name, n, "ends with '.lock'", err);
	for (size_t i = 0; i + 1 < n; i++) {
		if (name[i] == '/' && name[i + 1] == '/')
			return bad_name(name, n, "contains '//'", err);
		if (name[i] == '.' && name[i + 1] == '.')
			return bad_name(name, n, "contains '..'", err);
	}
	for (size_t start = 0; start < n;) {
		const char *slash = memchr(name + start, '/', n - start);
		size_t end = slash ? (size_t)(slash - name) : n;
		LV_TRY(check_segment(name, n, name + start, end - start, err));
		start = end + 1;
	}
	return 0;
}
