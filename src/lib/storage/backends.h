/*
 * Constructors of the built-in backends, called by open.c (URI dispatch).  Each
 * backend file defines its own; nothing else calls them.
 */
#ifndef LV_STORAGE_BACKENDS_H
#define LV_STORAGE_BACKENDS_H

#include "lancever/storage.h"
#include "objstore/options.h"

/* storage/local.c: `root` is a plain path (absolute or relative to the cwd). */
int lv__storage_local_open(lv_storage **out, const char *root, lv_error *err);
/* storage/mem.c: a fresh, empty store described as `describe` ("mem://..."). */
int lv__storage_mem_open(lv_storage **out, const char *describe, lv_error *err);
/* s3/s3.c: `rest` is the URI after "s3://": bucket[/prefix]; takes its keys from `opts`. */
int lv__storage_s3_open(lv_storage **out, const char *rest, lv__optbag *opts, lv_error *err);
/* azure/azure.c: `uri` is the whole az:// or abfs[s]:// URI; takes its keys from `opts`. */
int lv__storage_azure_open(lv_storage **out, const char *uri, lv__optbag *opts, lv_error *err);

/* An error for a "<scheme>+<store>://" URI (external commit store), else 0 (commitstore.c). */
int lv__storage_refuse_commit_store(const char *uri, size_t scheme_len, lv_error *err);

#endif
