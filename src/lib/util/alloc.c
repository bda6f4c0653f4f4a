/*
 * The library's allocator: every allocation of src/lib goes through lv__malloc,
 * lv__calloc, lv__realloc (or a helper here built on them), so a test can fail the
 * Nth one.  Allocation-failure counters are test hooks: they are compiled only with
 * LV_TEST_HOOKS (the test library, CMakeLists.txt LV_HOOK_SOURCES) and cost the
 * production library nothing.
 *
 * Invariants: a size of 0 allocates 1 byte (never NULL for success); a product that
 * overflows size_t fails as out of memory; copies are NUL-terminated.
 */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *lv__malloc(size_t n) { return malloc(n ? n : 1); }
void *lv__calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }
void *lv__realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
void *lv__reallocarray(void *p, size_t n, size_t size)
{
	size_t t;
	if (lv__mul_overflow(n, size, &t))
		return NULL;
	return lv__realloc(p, t);
}

void *lv__memdupz(const void *s, size_t n)
{
	return n == SIZE_MAX ? NULL : lv__copyz(malloc(n + 1), s, n);
}

char *lv__strndup(const char *s, size_t n) { return lv__memdupz(s, n); }

char *lv__strdup(const char *s) { return s ? lv__strndup(s, strlen(s)) : NULL; }

void lv__free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s)); /* a plain memset before free() may be optimised away */
	free(s);
}

char *lv__sprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = NULL;
	if (n >= 0 && (s = malloc((size_t)n + 1)))
		vsnprintf(s, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return s;
}
