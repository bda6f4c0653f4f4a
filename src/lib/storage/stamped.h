/*
 * A ranged read that also says which file it read: the size and modification time the opened
 * file had (storage.c).  What core's versions() cache keys on, so that a first call on a fresh
 * handle need not stat the checkpoint it reads.  Invariants: the bytes, checks, errors and
 * counts are those of lv_storage_read_range; the stamp is the descriptor's own (the fstat the
 * read made), never a second look at the path; a store that cannot stamp (object stores,
 * shims) reads as lv_storage_read_range does and says so with *mtime_ms = 0.
 */
#ifndef LV_STORAGE_STAMPED_H
#define LV_STORAGE_STAMPED_H

#include <stdbool.h>
#include <stdint.h>

#include "lancever/storage.h"

/* Whether reads of `st` come with a stamp (local disk). */
bool lv__storage_reads_stamped(const lv_storage *st);
/* lv_storage_read_range, and the file's *size and *mtime_ms (0 and 0 when not known, or on
 * failure). */
int lv__storage_read_range_stamped(lv_storage *st, const char *path, uint64_t offset, uint64_t len,
				   lv_buf *out, uint64_t *size, int64_t *mtime_ms, lv_error *err);

#endif
