/* Object keys from dataset URIs, as Lance derives them (uri.h). */
#include "objstore/uri.h"

#include <string.h>

#include "util/util.h"

static bool encoded_in_path(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' ||
	       c == '}';
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Lance 12: the URL path percent-decoded (a '%' not followed by two hex digits stays). */
static char *decoded(const char *path, size_t n)
{
	char *s = lv__malloc(n + 1);
	if (!s)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		bool esc = path[i] == '%' && i + 2 < n;
		int a = esc ? hexval(path[i + 1]) : -1;
		int b = esc ? hexval(path[i + 2]) : -1;
		if (a >= 0 && b >= 0 && (a || b)) {
			s[j++] = (char)(a * 16 + b);
			i += 2;
		} else {
			s[j++] = path[i];
		}
	}
	s[j] = 0;
	return s;
}

int lv__uri_key_prefix(const char *path, size_t n, const char *scheme, lv__optbag *o, char **out,
		       lv_error *err)
{
	*out = NULL;
	const char *enc = o ? lv__opt_get(o, LV_OPT("object_key_encoding")) : NULL;
	if (enc && strcmp(enc, "encoded") && strcmp(enc, "decoded"))
		return lv__err(err, LV_EINVALID,
			       "storage option object_key_encoding: 'encoded' (Lance 8) or 'decoded' "
			       "(Lance 12, the default)");
	bool lance8 = enc && !strcmp(enc, "encoded");
	while (n && path[n - 1] == '/')
		n--;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '?' || path[i] == '#')
			return lv__err(err, LV_EINVALID,
				       "open %s: the URI has a '%c' (a URL %s, which Lance ignores); "
				       "percent-encode it as %%%02X if it is part of a name",
				       scheme, path[i], path[i] == '?' ? "query" : "fragment",
				       (unsigned)(unsigned char)path[i]);
	if (!lance8) {
		if (!(*out = decoded(path, n)))
			return lv__err(err, LV_ENOMEM, "out of memory");
		return 0;
	}
	static const char hex[] = "0123456789ABCDEF";
	char *s = lv__malloc(n * 3 + 1);
	if (!s)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if (encoded_in_path(c)) {
			s[j++] = '%';
			s[j++] = hex[c >> 4];
			s[j++] = hex[c & 15];
		} else {
			s[j++] = (char)c;
		}
	}
	s[j] = 0;
	*out = s;
	return 0;
}
