/*
 * AWS credential sources (sources.h): credential_process, STS web identity,
 * container credentials, EC2 IMDSv2, and the parsers of their answers.
 */
#include "aws/sources.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "objstore/xml.h"
#include "aws/sigv4.h"
#include "util/util.h"

#define ANSWER_MAX (64u << 10)

extern char **environ;

lv__aws_creds *lv__aws_creds_new(const char *akid, const char *secret, const char *token,
				int64_t expires_ms)
{
	lv__aws_creds *c = lv__calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->akid = lv__strdup(akid);
	c->secret = lv__strdup(secret);
	c->token = token && *token ? lv__strdup(token) : NULL;
	c->expires_ms = expires_ms;
	c->refs = 1;
	if (!c->akid || !c->secret || (token && *token && !c->token)) {
		c->refs = 1;
		lv__aws_creds_release(c);
		return NULL;
	}
	return c;
}

void lv__aws_creds_release(lv__aws_creds *c)
{
	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	lv__free(c->akid);
	lv__free_secret(c->secret);
	lv__free_secret(c->token);
	lv__free(c);
}

/* An Expiration time ("2026-12-04T12:00:00Z"); absent = 0 (does not expire). */
static int expiry(const char *v, const char *what, int64_t *out, lv_error *err)
{
	*out = 0;
	if (!v)
		return 0;
	if (lv_parse_time(v, out, NULL) < 0 || *out <= 0)
		return lv__err(err, LV_ECORRUPT, "%s: the Expiration of the credentials is not a valid time",
			       what);
	return 0;
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int lv__aws_parse_json_creds(const char *body, size_t len, bool process, const char *what,
			     lv__aws_creds **out, lv_error *err)
{
	*out = NULL;
	json_error_t je;
	json_t *o = json_loadb(body ? body : "", body ? len : 0, JSON_REJECT_DUPLICATES, &je);
	int rc = 0;
	if (!json_is_object(o)) {
		rc = lv__err(err, LV_ECORRUPT, "%s: the answer is not a JSON object", what);
		goto out;
	}
	const char *code = jstr(o, "Code");
	if (code && strcmp(code, "Success")) {
		char c[64];
		lv__printable(c, sizeof c, code);
		rc = lv__err(err, LV_EIO, "%s: the answer says Code %s", what, c);
		goto out;
	}
	if (process) {
		json_t *ver = json_object_get(o, "Version");
		if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
			rc = lv__err(err, LV_ECORRUPT, "%s: the output has no \"Version\": 1", what);
			goto out;
		}
	}
	const char *akid = jstr(o, "AccessKeyId"), *secret = jstr(o, "SecretAccessKey");
	const char *token = jstr(o, process ? "SessionToken" : "Token");
	if (!akid || !*akid || !secret || !*secret) {
		rc = lv__err(err, LV_ECORRUPT, "%s: the answer has no AccessKeyId and SecretAccessKey", what);
		goto out;
	}
	int64_t exp;
	if ((rc = expiry(jstr(o, "Expiration"), what, &exp, err)) < 0)
		goto out;
	if (!(*out = lv__aws_creds_new(akid, secret, token, exp)))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
out:
	json_decref(o);
	return rc;
}

int lv__aws_parse_sts_creds(const char *body, size_t len, const char *what, lv__aws_creds **out,
			    lv_error *err)
{
	*out = NULL;
	static const char *const names[] = { "AccessKeyId", "SecretAccessKey", "SessionToken",
					     "Expiration" };
	char *v[4];
	LV_TRY(lv__xml_texts(body, len, "AssumeRoleWithWebIdentityResponse", names, v, 4, what, err));
	int64_t exp = 0;
	int rc = 0;
	if (!v[0] || !*v[0] || !v[1] || !*v[1] || !v[2] || !*v[2])
		rc = lv__err(err, LV_ECORRUPT, "%s: the answer has no AccessKeyId, SecretAccessKey and SessionToken",
			     what);
	else if ((rc = expiry(v[3], what, &exp, err)) == 0 &&
		 !(*out = lv__aws_creds_new(v[0], v[1], v[2], exp)))
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	for (int i = 0; i < 4; i++) {
		if (v[i])
			memset(v[i], 0, strlen(v[i]));
		lv__free(v[i]);
	}
	return rc;
}

/* ---- credential_process ---- */

/* Reads the child's stdout until EOF, ANSWER_MAX or the deadline. */
static int read_child(int fd, uint64_t deadline, lv__dbuf *out, const char *what, lv_error *err)
{
	for (;;) {
		uint64_t now = lv__mono_ns();
		if (now >= deadline)
			return lv__err(err, LV_EIO, "%s: no answer within the deadline (the command was stopped)",
				       what);
		struct pollfd p = { fd, POLLIN, 0 };
		int ms = (int)((deadline - now) / 1000000u) + 1;
		int k = poll(&p, 1, ms);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			continue;
		char buf[4096];
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		if (out->len + (size_t)r > ANSWER_MAX)
			return lv__err(err, LV_ELIMIT, "%s: more than %u bytes of output", what, ANSWER_MAX);
		if (lv__dbuf_add(out, buf, (size_t)r) < 0)
			return lv__err(err, LV_ENOMEM, "out of memory");
	}
}

static int spawn_sh(const char *cmd, int *outfd, pid_t *pid, const char *what, lv_error *err)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return lv__err(err, LV_EIO, "%s: pipe: %s", what, strerror(errno));
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_setpgroup(&at, 0); /* its own group: a timeout stops it and its children */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	int e = posix_spawn(pid, "/bin/sh", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfd[1]);
	if (e) {
		close(pfd[0]);
		return lv__err(err, LV_EIO, "%s: cannot start /bin/sh: %s", what, strerror(e));
	}
	*outfd = pfd[0];
	return 0;
}

static int run_process(lv__aws_source *s, lv__aws_creds **out, lv_error *err)
{
	int fd = -1;
	pid_t pid = 0;
	LV_TRY(spawn_sh(s->command, &fd, &pid, s->label, err));
	lv__dbuf b;
	lv__dbuf_init(&b, ANSWER_MAX + 1);
	uint64_t deadline = lv__mono_ns() + (uint64_t)s->timeout_ms * 1000000u;
	int rc = read_child(fd, deadline, &b, s->label, err);
	close(fd);
	if (rc < 0)
		kill(-pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		rc = WIFEXITED(st) ? lv__err(err, LV_EIO, "%s: the command exited with status %d", s->label,
					     WEXITSTATUS(st))
				   : lv__err(err, LV_EIO, "%s: the command was killed by signal %d", s->label,
					     WTERMSIG(st));
	if (rc == 0)
		rc = lv__aws_parse_json_creds((const char *)b.ptr, b.len, true, s->label, out, err);
	if (b.ptr)
		memset(b.ptr, 0, b.len);
	lv__dbuf_dispose(&b);
	return rc;
}

/* ---- HTTP sources ---- */

static void no_code(const lv__http_resp *r, char *out, size_t cap)
{
	(void)r;
	out[0] = 0;
}

static void sts_code(const lv__http_resp *r, char *out, size_t cap)
{
	lv__s3xml_error_code((const char *)r->body.ptr, r->body.len, out, cap);
}

/* One request of a source; 0 with a 2xx answer in *r (caller disposes), else an error. */
static int source_get(lv__aws_source *s, const char *method, const char *url, const char *name,
		      const char *const *hdrs, const char *body, lv__http_resp *r, lv_error *err)
{
	lv__http_req q = { 0 };
	q.method = method;
	q.what = method;
	q.name = name;
	q.url = url;
	q.body = (const uint8_t *)body;
	q.body_len = body ? strlen(body) : 0;
	q.headers = hdrs;
	q.max_ok = ANSWER_MAX;
	q.code_of = s->kind == LV_AWS_SRC_WEBID ? sts_code : no_code;
	q.service_name = s->label;
	int rc = lv__http_perform(s->http, &q, r, err);
	if (rc == 0 && (r->status < 200 || r->status > 299)) {
		char code[64] = "";
		q.code_of(r, code, sizeof code);
		rc = lv__err(err, r->status == 404 ? LV_ENOTFOUND : LV_EIO, "%s: %s %s: HTTP %ld%s%s",
			     s->label, method, name, r->status, code[0] ? " " : "", code);
	}
	return rc;
}

/* The first line of a small file (a token), trimmed; NULL with an error otherwise. */
static char *read_token_file(const char *path, const char *what, lv_error *err)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		lv__err(err, LV_EIO, "%s: cannot read the token file %.300s: %s", what, path, strerror(errno));
		return NULL;
	}
	char *buf = lv__malloc(ANSWER_MAX + 1);
	size_t n = buf ? fread(buf, 1, ANSWER_MAX, f) : 0;
	fclose(f);
	if (!buf) {
		lv__err(err, LV_ENOMEM, "out of memory");
		return NULL;
	}
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = 0;
	if (!n || strpbrk(buf, "\r\n")) {
		lv__free(buf);
		lv__err(err, LV_EINVALID, "%s: the token file %.300s is empty or has several lines", what,
			path);
		return NULL;
	}
	return buf;
}

static int fetch_webid(lv__aws_source *s, lv__aws_creds **out, lv_error *err)
{
	char *tok = read_token_file(s->token_file, s->label, err);
	if (!tok)
		return err ? err->code : LV_EIO;
	char *et = lv__aws_uri_encode(tok, strlen(tok), 0);
	char *er = lv__aws_uri_encode(s->role_arn, strlen(s->role_arn), 0);
	char *es = lv__aws_uri_encode(s->session_name, strlen(s->session_name), 0);
	char *body = et && er && es ? lv__sprintf("Action=AssumeRoleWithWebIdentity&RoleArn=%s&"
						  "RoleSessionName=%s&Version=2011-06-15&WebIdentityToken=%s",
						  er, es, et)
				    : NULL;
	lv__free_secret(tok);
	lv__free_secret(et);
	lv__free(er);
	lv__free(es);
	if (!body)
		return lv__err(err, LV_ENOMEM, "out of memory");
	static const char *const hdrs[] = { "Content-Type: application/x-www-form-urlencoded",
					    "Accept: application/xml", NULL };
	lv__http_resp r;
	int rc = source_get(s, "POST", s->sts_url, "AssumeRoleWithWebIdentity", hdrs, body, &r, err);
	lv__free_secret(body);
	if (rc == 0)
		rc = lv__aws_parse_sts_creds((const char *)r.body.ptr, r.body.len, s->label, out, err);
	lv__http_resp_dispose(&r);
	return rc;
}

bool lv__aws_container_host_ok(const char *url)
{
	if (!strncasecmp(url, "https://", 8))
		return true;
	if (strncasecmp(url, "http://", 7))
		return false;
	const char *h = url + 7;
	static const char *ok[] = { "127.", "localhost:", "localhost/", "[::1]", "169.254.170.2:",
				    "169.254.170.2/", "169.254.170.23:", "169.254.170.23/",
				    "[fd00:ec2::23]" };
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		if (!strncasecmp(h, ok[i], strlen(ok[i])))
			return true;
	return !strcasecmp(h, "localhost") || !strcmp(h, "169.254.170.2") || !strcmp(h, "169.254.170.23");
}

static int fetch_container(lv__aws_source *s, lv__aws_creds **out, lv_error *err)
{
	char *tok = NULL, *line = NULL;
	if (s->auth_token_file && !(tok = read_token_file(s->auth_token_file, s->label, err)))
		return err ? err->code : LV_EIO;
	const char *t = tok ? tok : s->auth_token;
	if (t && strpbrk(t, "\r\n")) {
		lv__free(tok);
		return lv__err(err, LV_EINVALID, "%s: the authorization token has a line break", s->label);
	}
	if (t && !(line = lv__sprintf("Authorization: %s", t))) {
		lv__free(tok);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	const char *hdrs[] = { line, NULL };
	lv__http_resp r;
	int rc = source_get(s, "GET", s->url, "credentials", line ? hdrs : NULL, NULL, &r, err);
	if (rc == 0)
		rc = lv__aws_parse_json_creds((const char *)r.body.ptr, r.body.len, false, s->label, out, err);
	lv__http_resp_dispose(&r);
	lv__free_secret(tok);
	lv__free_secret(line);
	return rc;
}

/* IMDSv2: a session token, the role name, then the role's credentials. */
static int fetch_imds(lv__aws_source *s, lv__aws_creds **out, lv_error *err)
{
	char *url = lv__sprintf("%s/latest/api/token", s->imds_base);
	if (!url)
		return lv__err(err, LV_ENOMEM, "out of memory");
	static const char *const ttl[] = { "X-aws-ec2-metadata-token-ttl-seconds: 21600", NULL };
	lv__http_resp r;
	char *tokhdr = NULL;
	int rc = source_get(s, "PUT", url, "token", ttl, "", &r, err);
	lv__free(url);
	if (rc == 0) {
		size_t n = r.body.len;
		const char *b = (const char *)r.body.ptr;
		if (!n || n > 1000 || memchr(b, '\n', n) || memchr(b, '\r', n))
			rc = lv__err(err, LV_ECORRUPT, "%s: the session token answer is not a token", s->label);
		else if (!(tokhdr = lv__sprintf("X-aws-ec2-metadata-token: %.*s", (int)n, b)))
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	} else if (s->v1_fallback && (r.status == 403 || r.status == 404 || r.status == 405)) {
		rc = 0; /* IMDSv1: no token */
	}
	lv__http_resp_dispose(&r);
	if (rc < 0)
		return rc;
	const char *hdrs[] = { tokhdr, NULL };
	char *base = lv__sprintf("%s/latest/meta-data/iam/security-credentials/", s->imds_base);
	rc = base ? source_get(s, "GET", base, "security-credentials/", hdrs, NULL, &r, err)
		  : lv__err(err, LV_ENOMEM, "out of memory");
	char role[256] = "";
	if (rc == 0) {
		size_t n = 0;
		const char *b = (const char *)r.body.ptr;
		while (n < r.body.len && n < sizeof role - 1 && b[n] != '\n' && b[n] != '\r')
			role[n] = b[n], n++;
		role[n] = 0;
		if (!n || strspn(role, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+=,.@_-") != n)
			rc = lv__err(err, LV_ECORRUPT, "%s: the instance profile's role name is not valid", s->label);
	}
	lv__http_resp_dispose(&r);
	char *curl = rc == 0 ? lv__sprintf("%s%s", base, role) : NULL;
	if (rc == 0 && !curl)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	if (rc == 0)
		rc = source_get(s, "GET", curl, "security-credentials/<role>", hdrs, NULL, &r, err);
	if (rc == 0)
		rc = lv__aws_parse_json_creds((const char *)r.body.ptr, r.body.len, false, s->label, out, err);
	if (curl)
		lv__http_resp_dispose(&r);
	lv__free(curl);
	lv__free(base);
	lv__free_secret(tokhdr);
	return rc;
}

int lv__aws_source_fetch(lv__aws_source *s, lv__aws_creds **out, lv_error *err)
{
	*out = NULL;
	switch (s->kind) {
	case LV_AWS_SRC_STATIC:
		__atomic_add_fetch(&s->fixed->refs, 1, __ATOMIC_ACQ_REL);
		*out = s->fixed;
		return 0;
	case LV_AWS_SRC_PROCESS:
		return run_process(s, out, err);
	case LV_AWS_SRC_WEBID:
		return fetch_webid(s, out, err);
	case LV_AWS_SRC_CONTAINER:
		return fetch_container(s, out, err);
	case LV_AWS_SRC_IMDS:
		return fetch_imds(s, out, err);
	default:
		return 0;
	}
}

void lv__aws_source_dispose(lv__aws_source *s)
{
	lv__aws_creds_release(s->fixed);
	lv__free_secret(s->command);
	lv__free_secret(s->auth_token);
	lv__free(s->label);
	lv__free(s->token_file);
	lv__free(s->role_arn);
	lv__free(s->session_name);
	lv__free(s->sts_url);
	lv__free(s->url);
	lv__free(s->auth_token_file);
	lv__free(s->imds_base);
	lv__http_free(s->http);
	memset(s, 0, sizeof *s);
}
