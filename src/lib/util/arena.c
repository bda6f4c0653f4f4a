#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct lv__arena_block {
	lv__arena_block *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

void lv__arena_init(lv__arena *a, size_t block_size)
{
	a->head = NULL;
	a->block_size = block_size ? block_size : 16384;
}

void lv__arena_dispose(lv__arena *a)
{
	lv__arena_block *b = a->head;
	while (b) {
		lv__arena_block *n = b->next;
		lv__free(b);
		b = n;
	}
	a->head = NULL;
}

void *lv__arena_alloc(lv__arena *a, size_t n)
{
	size_t need = (n + 7) & ~(size_t)7;
	if (need < n)
		return NULL;
	lv__arena_block *b = a->head;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > a->block_size ? need : a->block_size;
		if (cap > SIZE_MAX - sizeof *b)
			return NULL;
		b = lv__malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += need;
	return p;
}

char *lv__arena_strndup(lv__arena *a, const char *s, size_t n)
{
	return lv__copyz(lv__arena_alloc(a, n + 1), s, n);
}

char *lv__arena_strdup(lv__arena *a, const char *s)
{
	return s ? lv__arena_strndup(a, s, strlen(s)) : NULL;
}
