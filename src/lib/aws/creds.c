/*
 * The AWS credential chain and its cache (creds.h): picks the first configured
 * source in the SDK order, holds the current credentials, and refreshes them
 * under a lock when they are stale.
 */
#include "aws/creds.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "aws/sources.h"
#include "objstore/xml.h"
#include "util/util.h"

#define REFRESH_AHEAD_MS 60000 /* as Lance (ObjectStoreParams.s3_credentials_refresh_offset) */

struct lv__aws_chain {
	lv__aws_source src;
	pthread_mutex_t mu;
	lv__aws_creds *cur;  /* NULL only for LV_AWS_SRC_NONE */
	int64_t fetched_ms;
	int64_t quiet_until_ms; /* after a failed refresh, no new try before this */
};

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static bool truthy(const char *v)
{
	return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

static int set_static(lv__aws_source *s, const char *akid, const char *secret, const char *token,
		      char *label, lv_error *err)
{
	s->kind = LV_AWS_SRC_STATIC;
	s->label = label;
	s->fixed = label ? lv__aws_creds_new(akid, secret, token, 0) : NULL;
	return s->fixed ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
}

/* An HTTP client for a source, with the store's limits or IMDS's short ones. */
static int source_http(lv__aws_source *s, const lv__http_limits *base, bool imds, lv_error *err)
{
	lv__http_limits l;
	if (base)
		l = *base;
	else
		lv__http_limits_default(&l);
	if (imds) { /* the AWS SDKs: 1 s, one attempt, so a laptop is not kept waiting */
		l.connect_ms = 1000;
		l.deadline_ms = 1000;
		l.attempt_ms = 2000;
		l.attempts = 1;
		l.proxy = NULL; /* link-local: never through a proxy */
	}
	return lv__http_new(&s->http, &l, "aws-credentials", err);
}

static int set_webid(lv__aws_source *s, const lv__aws_chain_cfg *cfg, const char *file,
		     const char *role, const char *session, const char *where, lv_error *err)
{
	s->kind = LV_AWS_SRC_WEBID;
	const char *sts = cfg->sts_endpoint;
	s->sts_url = sts ? lv__strdup(sts)
			 : lv__sprintf("https://sts.%s.amazonaws.com/", cfg->region ? cfg->region : "us-east-1");
	s->token_file = lv__strdup(file);
	s->role_arn = lv__strdup(role);
	char sname[64];
	snprintf(sname, sizeof sname, "lancever-%lld", (long long)time(NULL));
	s->session_name = lv__strdup(session ? session : sname);
	if (!s->sts_url || !s->token_file || !s->role_arn || !s->session_name)
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (!strncasecmp(s->sts_url, "http://", 7) && !cfg->allow_http)
		return lv__err(err, LV_EINVALID,
			       "web identity (%s): the STS endpoint is plain HTTP; set allow_http", where);
	s->label = lv__sprintf("web identity (%s): STS AssumeRoleWithWebIdentity at %.200s, role %.200s",
			       where, s->sts_url, s->role_arn);
	s->timeout_ms = cfg->lim ? cfg->lim->deadline_ms : 30000;
	return s->label ? source_http(s, cfg->lim, false, err) : lv__err(err, LV_ENOMEM, "out of memory");
}

/* 3. The profile's static keys, web identity, or credential_process; 0 with kind 0 if none. */
static int from_profile(lv__aws_source *s, const lv__aws_chain_cfg *cfg, lv_error *err)
{
	const lv__aws_profile *p = cfg->profile;
	if (!p)
		return 0;
	if (p->named && !p->found)
		return lv__err(err, LV_EINVALID, "AWS profile '%.100s' not found in %.300s or %.300s",
			       p->name, p->cred_path ? p->cred_path : "(no credentials file)",
			       p->config_path ? p->config_path : "(no config file)");
	const char *file = NULL, *f2 = NULL;
	const char *akid = lv__aws_profile_get(p, "aws_access_key_id", &file);
	const char *secret = lv__aws_profile_get(p, "aws_secret_access_key", &f2);
	if (akid && secret) {
		char *label = lv__sprintf("shared %s file %.300s, profile %.100s",
					  file == p->cred_path ? "credentials" : "config", file, p->name);
		return set_static(s, akid, secret, lv__aws_profile_get(p, "aws_session_token", NULL),
				  label, err);
	}
	const char *role = lv__aws_profile_get(p, "role_arn", NULL);
	const char *wtf = lv__aws_profile_get(p, "web_identity_token_file", NULL);
	if (role && lv__aws_profile_get(p, "source_profile", NULL))
		return lv__err(err, LV_EUNSUPPORTED,
			       "AWS profile '%.100s' assumes a role from another profile (role_arn + "
			       "source_profile), which lancever does not support; use credential_process",
			       p->name);
	if (role && wtf) {
		char where[200];
		snprintf(where, sizeof where, "profile %.100s", p->name);
		return set_webid(s, cfg, wtf, role, lv__aws_profile_get(p, "role_session_name", NULL),
				 where, err);
	}
	const char *proc = lv__aws_profile_get(p, "credential_process", &file);
	if (proc) {
		s->kind = LV_AWS_SRC_PROCESS;
		s->command = lv__strdup(proc);
		s->label = lv__sprintf("credential_process of profile %.100s (%.300s)", p->name, file);
		s->timeout_ms = cfg->lim ? cfg->lim->deadline_ms : 30000;
		return s->command && s->label ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (lv__aws_profile_get(p, "sso_session", NULL) || lv__aws_profile_get(p, "sso_start_url", NULL))
		return lv__err(err, LV_EUNSUPPORTED,
			       "AWS profile '%.100s' uses IAM Identity Center (SSO), which lancever does "
			       "not support; set credential_process = aws configure export-credentials "
			       "--profile %.100s --format process",
			       p->name, p->name);
	if (p->named && (akid || secret))
		return lv__err(err, LV_EINVALID, "AWS profile '%.100s' has only one of aws_access_key_id "
			       "and aws_secret_access_key", p->name);
	return 0;
}

/* 5. Container credentials; 0 with kind 0 if not configured. */
static int from_container(lv__aws_source *s, const lv__aws_chain_cfg *cfg, lv_error *err)
{
	const char *full = cfg->container_full ? cfg->container_full
					       : env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *rel = cfg->container_rel ? cfg->container_rel
					     : env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	if (!full && !rel)
		return 0;
	s->kind = LV_AWS_SRC_CONTAINER;
	s->url = rel ? lv__sprintf("http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel)
		     : lv__strdup(full);
	const char *tf = cfg->container_token_file ? cfg->container_token_file
						   : env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	s->auth_token_file = tf ? lv__strdup(tf) : NULL;
	s->auth_token = !tf && tok ? lv__strdup(tok) : NULL;
	if (!s->url || (tf && !s->auth_token_file) || (!tf && tok && !s->auth_token))
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (!rel && !lv__aws_container_host_ok(s->url))
		return lv__err(err, LV_EINVALID,
			       "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or "
			       "http to a loopback or the ECS/EKS link-local address");
	char shown[200];
	lv__printable(shown, sizeof shown, s->url);
	s->label = lv__sprintf("container credentials at %s", shown);
	return s->label ? source_http(s, cfg->lim, false, err) : lv__err(err, LV_ENOMEM, "out of memory");
}

/* Picks the source (see creds.h for the order).  kind 0: nothing configured before IMDS. */
static int pick(lv__aws_source *s, const lv__aws_chain_cfg *cfg, lv_error *err)
{
	if (cfg->skip_signature) {
		s->kind = LV_AWS_SRC_NONE;
		s->label = lv__strdup("none (aws_skip_signature: unsigned requests)");
		return s->label ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (cfg->akid || cfg->secret) {
		if (!cfg->akid || !cfg->secret)
			return lv__err(err, LV_EINVALID, "storage options: aws_access_key_id and "
				       "aws_secret_access_key must be given together");
		return set_static(s, cfg->akid, cfg->secret, cfg->token,
				  lv__strdup("storage options (aws_access_key_id)"), err);
	}
	const char *ea = env("AWS_ACCESS_KEY_ID"), *es = env("AWS_SECRET_ACCESS_KEY");
	if (ea && es)
		return set_static(s, ea, es, env("AWS_SESSION_TOKEN"),
				  lv__strdup("environment (AWS_ACCESS_KEY_ID)"), err);
	LV_TRY(from_profile(s, cfg, err));
	if (s->kind)
		return 0;
	const char *wtf = cfg->web_token_file ? cfg->web_token_file : env("AWS_WEB_IDENTITY_TOKEN_FILE");
	const char *role = cfg->role_arn ? cfg->role_arn : env("AWS_ROLE_ARN");
	if (wtf || role) {
		if (!wtf || !role)
			return lv__err(err, LV_EINVALID, "web identity: AWS_WEB_IDENTITY_TOKEN_FILE and "
				       "AWS_ROLE_ARN must be set together");
		const char *sn = cfg->role_session_name ? cfg->role_session_name : env("AWS_ROLE_SESSION_NAME");
		return set_webid(s, cfg, wtf, role, sn, "AWS_WEB_IDENTITY_TOKEN_FILE", err);
	}
	return from_container(s, cfg, err);
}

static int set_imds(lv__aws_source *s, const lv__aws_chain_cfg *cfg, lv_error *err)
{
	const char *ep = cfg->imds_endpoint ? cfg->imds_endpoint : env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	if (!ep)
		ep = mode && !strcasecmp(mode, "IPv6") ? "http://[fd00:ec2::254]" : "http://169.254.169.254";
	size_t n = strlen(ep);
	while (n && ep[n - 1] == '/')
		n--;
	s->kind = LV_AWS_SRC_IMDS;
	s->imds_base = lv__strndup(ep, n);
	s->v1_fallback = cfg->imdsv1_fallback;
	char shown[200];
	lv__printable(shown, sizeof shown, s->imds_base ? s->imds_base : "");
	s->label = lv__sprintf("EC2 instance metadata (IMDSv2) at %s", shown);
	if (!s->imds_base || !s->label)
		return lv__err(err, LV_ENOMEM, "out of memory");
	return source_http(s, cfg->lim, true, err);
}

int lv__aws_chain_open(lv__aws_chain **out, const lv__aws_chain_cfg *cfg, lv_error *err)
{
	*out = NULL;
	lv__aws_chain *c = lv__calloc(1, sizeof *c);
	if (!c)
		return lv__err(err, LV_ENOMEM, "out of memory");
	pthread_mutex_init(&c->mu, NULL);
	int rc = pick(&c->src, cfg, err);
	bool imds = false;
	if (rc == 0 && !c->src.kind) {
		if (truthy(env("AWS_EC2_METADATA_DISABLED"))) {
			const lv__aws_profile *p = cfg->profile;
			rc = lv__err(err, LV_EINVALID,
				     "no AWS credentials: none in the storage options, the environment "
				     "(AWS_ACCESS_KEY_ID), %s%s%s (profile %s), web identity or container "
				     "variables, and EC2 instance metadata is disabled "
				     "(AWS_EC2_METADATA_DISABLED)",
				     p && p->cred_path ? p->cred_path : "~/.aws/credentials",
				     p && p->config_path ? " or " : "", p && p->config_path ? p->config_path : "",
				     p ? p->name : "default");
		} else {
			imds = true;
			rc = set_imds(&c->src, cfg, err);
		}
	}
	if (rc == 0 && c->src.kind != LV_AWS_SRC_NONE) {
		lv__aws_creds *cr = NULL;
		rc = lv__aws_chain_get(c, true, &cr, err);
		lv__aws_creds_release(cr);
		if (rc < 0 && imds)
			lv__err_prefix(err, rc, "no AWS credentials: none in the storage options, the "
				       "environment, the shared files, web identity or container "
				       "variables; EC2 instance metadata did not provide them");
	}
	if (rc < 0) {
		lv__aws_chain_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void lv__aws_chain_free(lv__aws_chain *c)
{
	if (!c)
		return;
	lv__aws_creds_release(c->cur);
	lv__aws_source_dispose(&c->src);
	pthread_mutex_destroy(&c->mu);
	lv__free(c);
}

/* When the credentials should be replaced: min(60 s, half their lifetime) before expiry. */
static bool stale(const lv__aws_chain *c, int64_t now)
{
	if (!c->cur)
		return true;
	if (!c->cur->expires_ms)
		return false;
	int64_t life = c->cur->expires_ms - c->fetched_ms;
	int64_t ahead = life / 2 < REFRESH_AHEAD_MS ? life / 2 : REFRESH_AHEAD_MS;
	return now >= c->cur->expires_ms - (ahead > 0 ? ahead : 0);
}

int lv__aws_chain_get(lv__aws_chain *c, bool force, lv__aws_creds **out, lv_error *err)
{
	*out = NULL;
	if (c->src.kind == LV_AWS_SRC_NONE)
		return 0;
	int rc = 0;
	pthread_mutex_lock(&c->mu);
	int64_t now = lv__now_ms();
	if (force || (stale(c, now) && now >= c->quiet_until_ms)) {
		lv__aws_creds *fresh = NULL;
		lv_error e = { 0 };
		rc = lv__aws_source_fetch(&c->src, &fresh, &e);
		if (rc == 0) {
			lv__aws_creds_release(c->cur);
			c->cur = fresh;
			c->fetched_ms = now;
		} else if (c->cur && (!c->cur->expires_ms || c->cur->expires_ms > now + 5000)) {
			c->quiet_until_ms = now + 5000;
			lv__log(LV_LOG_WARN, "aws credentials: refresh failed, the current ones are still "
				"valid for %.0f s: %s", (double)(c->cur->expires_ms - now) / 1000, e.message);
			rc = 0;
		} else if (err) {
			*err = e;
		}
	}
	if (rc == 0) {
		__atomic_add_fetch(&c->cur->refs, 1, __ATOMIC_ACQ_REL);
		*out = c->cur;
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void lv__aws_chain_describe(lv__aws_chain *c, char *buf, size_t cap)
{
	pthread_mutex_lock(&c->mu);
	int64_t exp = c->cur ? c->cur->expires_ms : 0;
	pthread_mutex_unlock(&c->mu);
	if (!exp) {
		snprintf(buf, cap, "%s", c->src.label ? c->src.label : "?");
		return;
	}
	time_t t = (time_t)(exp / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char when[32];
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(buf, cap, "%s, temporary credentials expiring %s", c->src.label, when);
}
