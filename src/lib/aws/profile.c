/* AWS shared config and credentials files (profile.h). */
#include "aws/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#define FILE_MAX (1u << 20)

static const char *trim(char *s, size_t *len)
{
	size_t a = 0, b = *len;
	while (a < b && (s[a] == ' ' || s[a] == '\t'))
		a++;
	while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
		b--;
	*len = b - a;
	return s + a;
}

static int add_key(lv__aws_profile *p, const char *k, size_t kl, const char *v, size_t vl,
		   const char *file, lv_error *err)
{
	for (size_t i = 0; i < p->n; i++)
		if (strlen(p->keys[i]) == kl && !strncmp(p->keys[i], k, kl))
			return 0; /* the file read first wins */
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		char **nk = lv__reallocarray(p->keys, nc, sizeof *nk);
		if (nk)
			p->keys = nk;
		char **nv = nk ? lv__reallocarray(p->vals, nc, sizeof *nv) : NULL;
		if (nv)
			p->vals = nv;
		const char **nf = nv ? lv__reallocarray(p->files, nc, sizeof *nf) : NULL;
		if (!nf)
			return lv__err(err, LV_ENOMEM, "out of memory");
		p->files = nf;
		p->cap = nc;
	}
	p->keys[p->n] = lv__strndup(k, kl);
	p->vals[p->n] = lv__strndup(v, vl);
	p->files[p->n] = file;
	if (!p->keys[p->n] || !p->vals[p->n]) {
		lv__free(p->keys[p->n]);
		lv__free(p->vals[p->n]);
		return lv__err(err, LV_ENOMEM, "out of memory");
	}
	p->n++;
	return 0;
}

int lv__aws_ini_section(lv__aws_profile *p, const char *text, size_t len, const char *section,
			const char *file, lv_error *err)
{
	bool in = false;
	size_t i = 0;
	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		char line[4096];
		size_t ll = e - i < sizeof line - 1 ? e - i : sizeof line - 1;
		memcpy(line, text + i, ll);
		i = e + 1;
		bool indented = ll && (line[0] == ' ' || line[0] == '\t');
		const char *s = trim(line, &ll);
		if (!ll || s[0] == '#' || s[0] == ';')
			continue;
		if (s[0] == '[') {
			const char *close = memchr(s, ']', ll);
			size_t nl = close ? (size_t)(close - s - 1) : 0;
			char name[512];
			if (nl >= sizeof name)
				nl = sizeof name - 1;
			memcpy(name, s + 1, nl);
			const char *nm = trim(name, &nl);
			in = close && strlen(section) == nl && !strncmp(nm, section, nl);
			if (in)
				p->found = true;
			continue;
		}
		if (!in || indented)
			continue; /* another section, or a sub-property ("s3 =" block) */
		const char *eq = memchr(s, '=', ll);
		if (!eq)
			continue;
		char kb[256], vb[4096];
		size_t kl = (size_t)(eq - s), vl = ll - kl - 1;
		if (kl >= sizeof kb || vl >= sizeof vb)
			continue;
		memcpy(kb, s, kl);
		memcpy(vb, eq + 1, vl);
		const char *k = trim(kb, &kl), *v = trim(vb, &vl);
		if (kl)
			LV_TRY(add_key(p, k, kl, v, vl, file, err));
	}
	return 0;
}

/* Reads a whole small regular file; *text NULL (and 0) if it does not exist. */
static int read_small(const char *path, char **text, size_t *len, lv_error *err)
{
	*text = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0
			: lv__err(err, LV_EIO, "AWS config file %.300s: %s", path, strerror(errno));
	struct stat sb;
	int rc = 0;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > FILE_MAX)
		rc = lv__err(err, LV_EINVALID, "AWS config file %.300s: not a regular file of at most 1 MiB",
			     path);
	char *buf = rc ? NULL : lv__malloc((size_t)sb.st_size + 1);
	if (!rc && !buf)
		rc = lv__err(err, LV_ENOMEM, "out of memory");
	size_t got = 0;
	while (!rc && got < (size_t)sb.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)sb.st_size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (rc) {
		lv__free(buf);
		return rc;
	}
	buf[got] = 0;
	*text = buf;
	*len = got;
	return 0;
}

static char *file_path(const char *var, const char *leaf)
{
	const char *v = getenv(var);
	if (v && *v) {
		if (v[0] == '~' && v[1] == '/' && getenv("HOME"))
			return lv__sprintf("%s%s", getenv("HOME"), v + 1);
		return lv__strdup(v);
	}
	const char *home = getenv("HOME");
	return home && *home ? lv__sprintf("%s/.aws/%s", home, leaf) : NULL;
}

static int load_file(lv__aws_profile *p, const char *path, const char *section, lv_error *err)
{
	if (!path)
		return 0;
	char *text;
	size_t len;
	LV_TRY(read_small(path, &text, &len, err));
	int rc = text ? lv__aws_ini_section(p, text, len, section, path, err) : 0;
	if (text) {
		memset(text, 0, len); /* it may hold secrets */
		lv__free(text);
	}
	return rc;
}

int lv__aws_profile_load(lv__aws_profile *p, const char *name, lv_error *err)
{
	memset(p, 0, sizeof *p);
	const char *env = getenv("AWS_PROFILE");
	if (!name && env && *env)
		name = env;
	p->named = name != NULL;
	p->name = lv__strdup(name ? name : "default");
	p->cred_path = file_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
	p->config_path = file_path("AWS_CONFIG_FILE", "config");
	if (!p->name)
		return lv__err(err, LV_ENOMEM, "out of memory");
	char *csec = strcmp(p->name, "default") ? lv__sprintf("profile %s", p->name)
						 : lv__strdup("default");
	int rc = csec ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
	if (rc == 0)
		rc = load_file(p, p->cred_path, p->name, err);
	if (rc == 0)
		rc = load_file(p, p->config_path, csec, err);
	lv__free(csec);
	if (rc < 0)
		lv__aws_profile_dispose(p);
	return rc;
}

const char *lv__aws_profile_get(const lv__aws_profile *p, const char *key, const char **file)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->keys[i], key)) {
			if (file)
				*file = p->files[i];
			return p->vals[i][0] ? p->vals[i] : NULL;
		}
	return NULL;
}

void lv__aws_profile_dispose(lv__aws_profile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		memset(p->vals[i], 0, strlen(p->vals[i]));
		lv__free(p->keys[i]);
		lv__free(p->vals[i]);
	}
	lv__free(p->keys);
	lv__free(p->vals);
	lv__free(p->files);
	lv__free(p->name);
	lv__free(p->cred_path);
	lv__free(p->config_path);
	memset(p, 0, sizeof *p);
}
