/*
 * AWS credentials: the provider chain in the order the AWS SDKs use, and a
 * cache that refreshes temporary credentials before they expire.
 *
 *   1. storage options aws_access_key_id / aws_secret_access_key [/ aws_session_token]
 *   2. the environment: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY [/ AWS_SESSION_TOKEN]
 *   3. the shared files' profile (aws/profile.h): static keys, then role_arn +
 *      web_identity_token_file, then credential_process
 *   4. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (or the options
 *      aws_web_identity_token_file + aws_role_arn) -> STS AssumeRoleWithWebIdentity
 *   5. container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI / _RELATIVE_URI
 *      with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE)
 *   6. EC2 instance metadata, IMDSv2 (unless AWS_EC2_METADATA_DISABLED=true)
 *
 * The first source that is configured is used; if it fails, opening fails (a
 * configured source is never silently skipped), except IMDS, which is tried
 * last and only says "not found" when nothing answers within its short timeout.
 *
 * Refresh: credentials with an expiry are replaced when less than
 * min(60 s, half their lifetime) is left (Lance refreshes 60 s ahead), by the
 * first request that needs them, so a long cleanup keeps working.  If a refresh
 * fails while the old credentials are still valid, they are used and the
 * failure is logged; once expired, requests fail with the refresh's error.
 *
 * Nothing here puts a key, secret, token or command line into a message.
 */
#ifndef LV_AWS_CREDS_H
#define LV_AWS_CREDS_H

#include <stdbool.h>
#include <stdint.h>

#include "aws/profile.h"
#include "objstore/http.h"

/* One set of credentials: immutable once made, shared by reference count. */
typedef struct lv__aws_creds {
	char *akid, *secret, *token; /* token NULL for long-term keys */
	int64_t expires_ms;          /* 0 = does not expire */
	int refs;
} lv__aws_creds;

/* Where the chain looks, gathered by the S3 backend from options and the environment. */
typedef struct lv__aws_chain_cfg {
	const char *akid, *secret, *token;                 /* storage options (1) */
	const char *web_token_file, *role_arn, *role_session_name; /* options (4) */
	const char *sts_endpoint;                          /* option/env AWS_ENDPOINT_URL_STS */
	const char *container_full, *container_rel, *container_token_file; /* options (5) */
	const char *imds_endpoint;                         /* option/env (6) */
	bool imdsv1_fallback;
	bool skip_signature;                               /* aws_skip_signature: no credentials */
	bool allow_http;                                   /* plain-HTTP STS endpoint allowed */
	const char *region;                                /* for STS */
	const lv__aws_profile *profile;                     /* borrowed during open */
	const lv__http_limits *lim;                         /* timeouts of the HTTP sources */
} lv__aws_chain_cfg;

typedef struct lv__aws_chain lv__aws_chain;

/*
 * Picks the first configured source and fetches credentials from it.  Errors:
 * LV_EINVALID (no source found: the message lists what was looked at; a
 * misconfigured source), LV_EIO (a source failed or timed out), LV_ECORRUPT (a
 * source answered garbage), LV_EUNSUPPORTED (a profile using SSO or
 * role_arn + source_profile), LV_ENOMEM.
 */
int lv__aws_chain_open(lv__aws_chain **out, const lv__aws_chain_cfg *cfg, lv_error *err);
void lv__aws_chain_free(lv__aws_chain *c);

/*
 * Current credentials (a reference: release with lv__aws_creds_release), refreshed
 * first if stale or if `force` (the store said the token expired).  *out is NULL
 * with 0 for skip_signature.
 */
int lv__aws_chain_get(lv__aws_chain *c, bool force, lv__aws_creds **out, lv_error *err);
void lv__aws_creds_release(lv__aws_creds *cr);

/* Which source, and when its credentials expire; never a secret. */
void lv__aws_chain_describe(lv__aws_chain *c, char *buf, size_t cap);

/* ---- sources (aws/sources.c), also used by tests ---- */

/* Parses a JSON credentials document: IMDS / container ("Token") or credential_process
 * ("Version": 1, "SessionToken").  `what` names the source in messages. */
int lv__aws_parse_json_creds(const char *body, size_t len, bool process, const char *what,
			     lv__aws_creds **out, lv_error *err);
/* Parses an STS AssumeRoleWithWebIdentity response body. */
int lv__aws_parse_sts_creds(const char *body, size_t len, const char *what, lv__aws_creds **out,
			    lv_error *err);
lv__aws_creds *lv__aws_creds_new(const char *akid, const char *secret, const char *token,
				int64_t expires_ms);

#endif
