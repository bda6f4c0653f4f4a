/*
 * A set of strings (open addressing, owned copies): the files kept manifests
 * reference, and the files old manifests reference.
 */
#include "core/cleanup/strset.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

bool lv__strset_has_n(const lv__strset *s, const char *k, size_t n)
{
	if (!s->cap)
		return false;
	for (size_t i = hash_str(k, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		const char *x = s->slot[i];
		if (!x)
			return false;
		if (strlen(x) == n && !memcmp(x, k, n))
			return true;
	}
}

bool lv__strset_has(const lv__strset *s, const char *k) { return lv__strset_has_n(s, k, strlen(k)); }

int lv__strset_add(lv__strset *s, const char *k)
{
	size_t n = strlen(k);
	if (lv__strset_has_n(s, k, n))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		char **ns = lv__calloc(nc, sizeof *ns);
		if (!ns)
			return LV_ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slot[i])
				continue;
			size_t j = hash_str(s->slot[i], strlen(s->slot[i])) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = s->slot[i];
		}
		free(s->slot);
		s->slot = ns;
		s->cap = nc;
	}
	size_t i = hash_str(k, n) & (s->cap - 1);
	while (s->slot[i])
		i = (i + 1) & (s->cap - 1);
	if (!(s->slot[i] = lv__strndup(k, n)))
		return LV_ENOMEM;
	s->n++;
	return 0;
}

void lv__strset_dispose(lv__strset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	memset(s, 0, sizeof *s);
}
