/*
 * Opening an s3:// store: the address (storage/address.h: the bucket, and the key
 * prefix as Lance derives it: objstore/uri.h), LanceDB's storage options, the AWS_* environment and the shared
 * config files (region, endpoint_url), then the credential chain (aws/creds.h).
 * Every storage option is taken here or refused by name before any request is
 * made.  Nothing that may be a secret is echoed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws/profile.h"
#include "objstore/options.h"
#include "objstore/uri.h"
#include "objstore/xml.h"
#include "s3/s3_int.h"
#include "storage/backends.h"
#include "storage/storage_int.h"
#include "util/util.h"

/* Bucket names: [a-z0-9.-] plus legacy A-Z and '_', 1..255 bytes. */
static int check_bucket(const char *b, size_t n, bool at, lv_error *err)
{
	if (n == 0 || n > 255)
		return lv__err(err, LV_EINVALID, "open s3://: missing bucket name");
	bool sep = at || memchr(b, ':', n);
	for (size_t i = 0; i < n + at; i++) {
		char c = i < n ? b[i] : '@';
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_')
			continue;
		/* "key:secret@bucket" is refused without echoing it: it may hold credentials. */
		if (sep)
			return lv__err(err, LV_EINVALID,
				       "open s3://: invalid bucket name (it contains '@' or ':'; credentials "
				       "belong in AWS_* variables or storage options, not the URI)");
		char shown[80];
		lv__printable(shown, sizeof shown, b);
		if (strlen(shown) > n)
			shown[n] = 0;
		return lv__err(err, LV_EINVALID,
			       "open s3://%s: invalid bucket name '%s' (bucket names are made of a-z, "
			       "0-9, '.' and '-')",
			       shown, shown);
	}
	return 0;
}

/* Options LanceDB knows that need nothing from lancever, and those it does not implement. */
static int accept_and_refuse(lv__optbag *o, const char *bucket, lv_error *err)
{
	const char *b = lv__opt_get(o, LV_OPT("aws_bucket", "aws_bucket_name", "bucket_name", "bucket"));
	if (b && strcmp(b, bucket))
		return lv__err(err, LV_EINVALID, "storage option aws_bucket names another bucket than the URI");
	/* lancever never tags, copies or renames objects; create-if-absent is If-None-Match */
	lv__opt_accept(o, LV_OPT("aws_disable_tagging", "disable_tagging", "aws_copy_if_not_exists",
				 "copy_if_not_exists"));
	const char *cp = lv__opt_get(o, LV_OPT("aws_conditional_put", "conditional_put"));
	if (cp && strcasecmp(cp, "etag") && strcasecmp(cp, "disabled"))
		return lv__err(err, LV_EUNSUPPORTED,
			       "storage option aws_conditional_put: only 'etag' is supported by lancever");
	return lv__opt_refuse(o, LV_OPT("aws_s3_express", "s3_express", "aws_request_payer",
					"request_payer", "aws_server_side_encryption",
					"server_side_encryption", "aws_sse_kms_key_id", "sse_kms_key_id",
					"aws_sse_bucket_key_enabled", "sse_bucket_key_enabled",
					"aws_sse_customer_key_base64", "sse_customer_key_base64",
					"aws_checksum_algorithm", "checksum_algorithm", "expires_at_millis"),
			      "s3://", err);
}

/* Endpoint, host and addressing style. */
static int set_endpoint(s3 *s, const char *endpoint, bool vhost_set, bool vhost, bool allow_http,
			lv_error *err)
{
	if (endpoint) {
		size_t el = strlen(endpoint);
		while (el && endpoint[el - 1] == '/')
			el--;
		s->endpoint = lv__strndup(endpoint, el);
		s->path_style = !(vhost_set && vhost); /* virtual-hosted: the endpoint names the bucket */
	} else if ((vhost_set && !vhost) || strchr(s->bucket, '.')) {
		s->endpoint = lv__sprintf("https://s3.%s.amazonaws.com", s->region);
		s->path_style = true;
	} else {
		s->endpoint = lv__sprintf("https://%s.s3.%s.amazonaws.com", s->bucket, s->region);
		s->path_style = false;
	}
	if (!s->endpoint)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (!strncasecmp(s->endpoint, "http://", 7) && !allow_http)
		return lv__err(err, LV_EINVALID,
			       "open s3://%s: the endpoint is plain HTTP; set allow_http (storage option), "
			       "AWS_ALLOW_HTTP=true or --s3-allow-http", s->bucket);
	const char *hs = strstr(s->endpoint, "://");
	if (!hs || !hs[3] || (strncasecmp(s->endpoint, "http://", 7) && strncasecmp(s->endpoint, "https://", 8)))
		return lv__err(err, LV_EINVALID, "open s3://%s: invalid endpoint URL", s->bucket);
	const char *he = strchr(hs + 3, '/');
	s->host = he ? lv__strndup(hs + 3, (size_t)(he - hs - 3)) : lv__strdup(hs + 3);
	if (!s->host)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (strchr(s->host, '@'))
		return lv__err(err, LV_EINVALID, "open s3://%s: the endpoint URL must not carry credentials",
			       s->bucket);
	return 0;
}

/* Region, endpoint and the chain's configuration from options, environment and profile. */
static int configure(s3 *s, lv__optbag *o, const lv__aws_profile *prof, lv__aws_chain_cfg *cc,
		     lv_error *err)
{
	const char *region = lv__opt_get_env(o, LV_OPT("aws_region", "region"), LV_OPT("AWS_REGION"));
	if (!region)
		region = lv__opt_get_env(o, LV_OPT("aws_default_region", "default_region"),
					 LV_OPT("AWS_DEFAULT_REGION"));
	if (!region)
		region = lv__aws_profile_get(prof, "region", NULL);
	s->region = lv__strdup(region ? region : "us-east-1");
	const char *ep = lv__opt_get_env(o, LV_OPT("aws_endpoint_url_s3"), LV_OPT("AWS_ENDPOINT_URL_S3"));
	if (!ep)
		ep = lv__opt_get_env(o, LV_OPT("aws_endpoint", "aws_endpoint_url", "endpoint_url", "endpoint"),
				     LV_OPT("AWS_ENDPOINT_URL", "AWS_ENDPOINT"));
	if (!ep)
		ep = lv__aws_profile_get(prof, "endpoint_url", NULL);
	bool allow_http, vhost, vhost_set;
	LV_TRY(lv__opt_bool(o, LV_OPT("allow_http", "aws_allow_http"), LV_OPT("AWS_ALLOW_HTTP"), false,
			    &allow_http, err));
	vhost_set = lv__opt_get_env(o, LV_OPT("aws_virtual_hosted_style_request",
					      "virtual_hosted_style_request"),
				    LV_OPT("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")) != NULL;
	LV_TRY(lv__opt_bool(o, LV_OPT("aws_virtual_hosted_style_request", "virtual_hosted_style_request"),
			    LV_OPT("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"), false, &vhost, err));
	LV_TRY(lv__opt_bool(o, LV_OPT("aws_unsigned_payload", "unsigned_payload"), NULL, false,
			    &s->unsigned_payload, err));
	bool no_bulk;
	LV_TRY(lv__opt_bool(o, LV_OPT("aws_disable_bulk_delete", "disable_bulk_delete"), NULL, false,
			    &no_bulk, err));
	s->bulk_delete = !no_bulk;
	if (!s->region)
		return lv__err(err, LV_ENOMEM, "out of memory");
	LV_TRY(set_endpoint(s, ep, vhost_set, vhost, allow_http, err));

	memset(cc, 0, sizeof *cc);
	cc->akid = lv__opt_get(o, LV_OPT("aws_access_key_id", "access_key_id"));
	cc->secret = lv__opt_get(o, LV_OPT("aws_secret_access_key", "secret_access_key"));
	cc->token = lv__opt_get(o, LV_OPT("aws_session_token", "aws_token", "session_token", "token"));
	cc->web_token_file = lv__opt_get(o, LV_OPT("aws_web_identity_token_file", "web_identity_token_file"));
	cc->role_arn = lv__opt_get(o, LV_OPT("aws_role_arn", "role_arn"));
	cc->role_session_name = lv__opt_get(o, LV_OPT("aws_role_session_name", "role_session_name"));
	cc->sts_endpoint = lv__opt_get_env(o, LV_OPT("aws_endpoint_url_sts", "endpoint_url_sts"),
					   LV_OPT("AWS_ENDPOINT_URL_STS"));
	cc->container_full = lv__opt_get(o, LV_OPT("aws_container_credentials_full_uri",
						    "container_credentials_full_uri"));
	cc->container_rel = lv__opt_get(o, LV_OPT("aws_container_credentials_relative_uri",
						   "container_credentials_relative_uri"));
	cc->container_token_file = lv__opt_get(o, LV_OPT("aws_container_authorization_token_file",
							  "container_authorization_token_file"));
	cc->imds_endpoint = lv__opt_get(o, LV_OPT("aws_metadata_endpoint", "metadata_endpoint"));
	LV_TRY(lv__opt_bool(o, LV_OPT("aws_imdsv1_fallback", "imdsv1_fallback"), NULL, false,
			    &cc->imdsv1_fallback, err));
	LV_TRY(lv__opt_bool(o, LV_OPT("aws_skip_signature", "skip_signature"), NULL, false,
			    &cc->skip_signature, err));
	cc->allow_http = allow_http;
	cc->region = s->region;
	cc->profile = prof;
	return 0;
}

static int open_address(lv_storage **out, lv__address *a, lv_error *err)
{
	*out = NULL;
	lv__optbag *o = &a->opts;
	LV_TRY(check_bucket(a->container, strlen(a->container), a->host != NULL, err));
	s3 *s = lv__calloc(1, sizeof *s);
	if (!s)
		return lv__err(err, LV_ENOMEM, "out of memory");
	s->o.svc = &lv__s3_svc;
	s->bucket = lv__strdup(a->container);
	lv__aws_profile prof;
	memset(&prof, 0, sizeof prof);
	lv__http_limits lim;
	lv__aws_chain_cfg cc;
	char *alt = NULL;
	int rc = s->bucket ? lv__uri_key_prefix(a->root, a->root_raw, o, &s->o.prefix, &alt, err)
			   : lv__err(err, LV_ENOMEM, "out of memory");
	if (rc == 0 && s->o.prefix[0] && (rc = lv__path_check(s->o.prefix, false, "open s3://", err)) < 0)
		lv__err_prefix(err, rc, "open s3://%s: the key prefix is not a valid object path", s->bucket);
	if (rc == 0)
		rc = lv__http_limits_read(&lim, o, err);
	if (rc == 0)
		rc = accept_and_refuse(o, s->bucket, err);
	if (rc == 0)
		rc = lv__aws_profile_load(&prof, NULL, err);
	if (rc == 0)
		rc = configure(s, o, &prof, &cc, err);
	if (rc == 0)
		rc = lv__opt_leftover(o, "s3://", err);
	if (rc == 0)
		rc = lv__http_new(&s->o.http, &lim, "s3", err);
	if (rc == 0) {
		cc.lim = &lim;
		rc = lv__aws_chain_open(&s->creds, &cc, err);
	}
	lv__aws_profile_dispose(&prof);
	if (rc == 0) {
		lv__obj_pick_prefix(&s->o, alt, a->probe);
		alt = NULL;
		lv__obj_set_root(&s->o, "s3://", s->bucket);
		rc = lv__storage_new_kind(out, &lv__s3_ops, s, s->o.root, LV__STORAGE_S3, err);
	}
	lv__free(alt);
	if (rc < 0)
		lv__s3_close(s);
	return rc;
}

const lv__backend lv__backend_s3 = { "s3", LV__ADDR_BUCKET, "s3://", open_address };
