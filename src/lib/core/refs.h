/*
 * The tag and branch loader (core/refs.c): every ref file of a dataset, listed and read
 * through its storage handle and parsed by format/refs.h.
 */
#ifndef LV_CORE_REFS_H
#define LV_CORE_REFS_H

#include "format/refs.h"
#include "lancever/dataset.h"
#include "lancever/storage.h"

/*
 * Reads every tag and branch file of the dataset rooted at `st`; tags and
 * branches are sorted by name.  A file that vanishes between listing and
 * reading is skipped; any other bad file fails the load with a message naming it.
 */
int lv__refs_load_storage(lv_refs **out, lv_storage *st, lv_error *err);
/* The same with up to `threads` reads in flight (for object stores). */
int lv__refs_load_storage_conc(lv_refs **out, lv_storage *st, int threads, lv_error *err);
/*
 * For readers: a tag or branch file that cannot be read or parsed is skipped
 * and recorded (lv_refs_unreadable), so one bad file does not hide the others.
 * Listing failures and out of memory still fail.  Writers that must know every
 * tag (cleanup) use the strict loaders above.
 */
int lv__refs_load_lenient(lv_refs **out, lv_storage *st, int threads, lv_error *err);
/*
 * A load in two steps, for a reader whose other requests go out in two rounds: the two
 * directories listed (lv__refs_list, with the first round), then their files read and
 * parsed (lv__refs_read_listed, with the second).  The two together are the loaders above
 * (`lenient` as lv__refs_load_lenient).  The listing is freed by lv__refs_listing_free,
 * after the read (which consumes its names).
 */
typedef struct lv__refs_listing lv__refs_listing;
int lv__refs_list(lv__refs_listing **out, lv_storage *st, int threads, lv_error *err);
int lv__refs_read_listed(lv_refs **out, lv__refs_listing *l, bool lenient, lv_error *err);
void lv__refs_listing_free(lv__refs_listing *l);
/* The digest of the tags directory as listed (lv__refs_tags_sig of the load it makes). */
uint64_t lv__refs_listing_sig(const lv__refs_listing *l);
/* A digest of one listed entry (path, size, mtime); a directory's digest is the sum over its
 * entries, so it does not depend on listing order. */
uint64_t lv__refs_entry_digest(const lv_list_entry *e);
/* The digest of the tags directory as this load listed it (0 for an empty or missing one). */
uint64_t lv__refs_tags_sig(const lv_refs *r);

#endif
