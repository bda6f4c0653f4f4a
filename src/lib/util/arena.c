#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct lv_arena_block {
	lv_arena_block *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

void lv_arena_init(lv_arena *a, size_t block_size)
{
	a->head = NULL;
	a->block_size = block_size ? block_size : 16384;
}

void lv_arena_dispose(lv_arena *a)
{
	lv_arena_block *b = a->head;
	while (b) {
		lv_arena_block *n = b->next;
		free(b);
		b = n;
	}
	a->head = NULL;
}

void *lv_arena_alloc(lv_arena *a, size_t n)
{
	size_t need = (n + 7) & ~(size_t)7;
	if (need < n)
		return NULL;
	lv_arena_block *b = a->head;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > a->block_size ? need : a->block_size;
		if (cap > SIZE_MAX - sizeof *b)
			return NULL;
		b = malloc(sizeof *b + cap);
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

char *lv_arena_strndup(lv_arena *a, const char *s, size_t n)
{
	return lv__copyz(lv_arena_alloc(a, n + 1), s, n);
}

char *lv_arena_strdup(lv_arena *a, const char *s)
{
	return s ? lv_arena_strndup(a, s, strlen(s)) : NULL;
}
