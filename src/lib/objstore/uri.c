/* Object keys from dataset addresses, as Lance derives them (uri.h). */
#include "objstore/uri.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static bool encoded_in_path(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' ||
	       c == '}';
}

char *lv__uri_encode(const char *path, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *s = lv__malloc(n * 3 + 1);
	if (!s)
		return NULL;
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
	return s;
}

int lv__uri_key_prefix(const char *decoded, const char *raw, lv__optbag *o, char **out, char **alt,
		       lv_error *err)
{
	*out = NULL;
	if (alt)
		*alt = NULL;
	const char *enc = o ? lv__opt_get(o, LV_OPT("object_key_encoding")) : NULL;
	if (enc && strcmp(enc, "encoded") && strcmp(enc, "decoded"))
		return lv__err(err, LV_EINVALID,
			       "storage option object_key_encoding: 'encoded' (Lance 8) or 'decoded' "
			       "(Lance 12, the default)");
	bool lance8 = enc && !strcmp(enc, "encoded");
	char *lance8_key = lv__uri_encode(raw, strlen(raw));
	if (!lance8_key)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (lance8) {
		*out = lance8_key;
		return 0;
	}
	if (!(*out = lv__strdup(decoded))) {
		lv__free(lance8_key);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (alt && !enc && strcmp(lance8_key, decoded))
		*alt = lance8_key;
	else
		lv__free(lance8_key);
	return 0;
}
