/*
 * Refusal of dataset URIs whose commits go through an external commit store.
 *
 * Lance can commit through DynamoDB ("s3+ddb://bucket/path?ddbTableName=T": the
 * manifest is written to S3 under a staged name and the version becomes committed
 * only by its DynamoDB entry) or through a namespace that manages versions.  There the
 * newest committed versions may exist only as staged objects
 * `_versions/{v}.manifest-{uuid}` until the store finalises them, so the object
 * store alone does not tell which versions are committed: listing it could miss
 * committed versions, and cleaning it could delete the only copy of one.  lancever
 * does not implement commit stores, so it refuses these URIs up front, naming the
 * store; any "<scheme>+<store>://" URI is taken as one.  Only the scheme is echoed
 * (the rest of a URI may hold secrets).
 */
#include <string.h>
#include <strings.h>

#include "storage/backends.h"
#include "util/util.h"

int lv__storage_refuse_commit_store(const char *uri, size_t scheme_len, lv_error *err)
{
	const char *plus = memchr(uri, '+', scheme_len);
	if (!plus)
		return 0;
	if (scheme_len == 6 && strncasecmp(uri, "s3+ddb", 6) == 0)
		return lv__err(err, LV_EUNSUPPORTED,
			       "open: \"s3+ddb://\" datasets commit through a DynamoDB commit store, "
			       "which lancever does not support (their newest versions may be known "
			       "only to DynamoDB); open the dataset with Lance, or use its s3:// URI only "
			       "if no writer commits through DynamoDB");
	return lv__err(err, LV_EUNSUPPORTED,
		       "open: \"%.*s://\" names an external commit store (\"%.*s\"), which lancever "
		       "does not support",
		       (int)(scheme_len > 32 ? 32 : scheme_len), uri,
		       (int)(scheme_len - (size_t)(plus + 1 - uri) > 24 ? 24
									 : scheme_len - (size_t)(plus + 1 - uri)),
		       plus + 1);
}
