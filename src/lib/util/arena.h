/* A bump allocator for many small strings that share one lifetime. */
#ifndef LV_ARENA_H
#define LV_ARENA_H

#include <stddef.h>

typedef struct lv_arena_block lv_arena_block;
typedef struct lv_arena {
	lv_arena_block *head;
	size_t block_size;
} lv_arena;

void lv_arena_init(lv_arena *a, size_t block_size);
void lv_arena_dispose(lv_arena *a);
void *lv_arena_alloc(lv_arena *a, size_t n);           /* 8-byte aligned, NULL on OOM */
char *lv_arena_strndup(lv_arena *a, const char *s, size_t n); /* NUL-terminated copy */
char *lv_arena_strdup(lv_arena *a, const char *s);     /* NULL in -> NULL out */

#endif
