/*
 * The S3 backend's handle, shared by s3.c (operations, signing) and s3open.c
 * (URI, options, environment and profile resolution).
 */
#ifndef LV_S3_INT_H
#define LV_S3_INT_H

#include <stdbool.h>

#include "aws/creds.h"
#include "lancever/sys/storage.h"
#include "objstore/objstore.h"

typedef struct s3 {
	lv__objstore o;         /* first: prefix, root ("s3://bucket/prefix"), HTTP client */
	char *bucket;
	char *endpoint;        /* scheme://host[:port][/path], no trailing '/' */
	char *host;            /* Host header value */
	bool path_style;
	bool unsigned_payload; /* aws_unsigned_payload: x-amz-content-sha256: UNSIGNED-PAYLOAD */
	bool bulk_delete;      /* false with aws_disable_bulk_delete: DELETE per key */
	char *region;
	lv__aws_chain *creds;
} s3;

/* s3.c: the ops table, the service the shared ops call (objstore.h) and the handle's destructor. */
extern const lv_storage_ops lv__s3_ops;
extern const lv__objsvc lv__s3_svc;
void lv__s3_close(void *impl);

#endif
