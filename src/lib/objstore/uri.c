/* Object keys from dataset URIs, as Lance derives them (uri.h). */
#include "objstore/uri.h"

#include "util/util.h"

static bool encoded_in_path(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' ||
	       c == '}';
}

int lv__uri_key_prefix(const char *path, size_t n, const char *scheme, char **out, lv_error *err)
{
	*out = NULL;
	while (n && path[n - 1] == '/')
		n--;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '?' || path[i] == '#')
			return lv__err(err, LV_EINVALID,
				       "open %s: the URI has a '%c' (a URL %s, which Lance ignores); "
				       "percent-encode it as %%%02X if it is part of a name",
				       scheme, path[i], path[i] == '?' ? "query" : "fragment",
				       (unsigned)(unsigned char)path[i]);
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
