/* A bump allocator for many small strings that share one lifetime. */
#ifndef LV_ARENA_H
#define LV_ARENA_H

#include <stddef.h>

typedef struct lv__arena_block lv__arena_block;
typedef struct lv__arena {
	lv__arena_block *head;
	size_t block_size;
} lv__arena;

void lv__arena_init(lv__arena *a, size_t block_size);
void lv__arena_dispose(lv__arena *a);
void *lv__arena_alloc(lv__arena *a, size_t n);           /* 8-byte aligned, NULL on OOM */
char *lv__arena_strndup(lv__arena *a, const char *s, size_t n); /* NUL-terminated copy */
char *lv__arena_strdup(lv__arena *a, const char *s);     /* NULL in -> NULL out */

#endif
