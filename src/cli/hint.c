/*
 * "Did you mean db/t.lance?": after a DATASET was not found, a hint when the path given is a
 * LanceDB database folder (a folder holding NAME.lance tables) or a table's name without its
 * ".lance" (LanceDB's `t` of db/ is db/t.lance).
 *
 * Invariants: local paths only (a plain path or file://; object stores are never listed for a
 * hint); only folders that hold a _versions/ folder count as tables; at most LVCLI_HINT_MAX
 * tables are named, sorted, the rest counted; the hint is one line on stderr after the error,
 * and never replaces it (the exit status stays the error's).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define LVCLI_HINT_MAX 8

static const char *last_uri;

void lvcli_hint_uri(const char *uri)
{
	last_uri = uri;
}

static bool is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Is dir/name a Lance table (a folder with _versions/)? */
static bool is_table(const char *dir, const char *name)
{
	size_t n = strlen(name);
	if (n <= 6 || strcmp(name + n - 6, ".lance"))
		return false;
	char p[4096];
	int k = snprintf(p, sizeof p, "%s/%s/_versions", dir, name);
	return k > 0 && (size_t)k < sizeof p && is_dir(p);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tables in dir, sorted (the caller frees each and the array); their count in *n. */
static char **tables_in(const char *dir, size_t *n)
{
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **names = NULL;
	size_t cap = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!is_table(dir, e->d_name))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			char **t = realloc(names, cap * sizeof *t);
			if (!t)
				break;
			names = t;
		}
		if (!(names[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof *names, by_name);
	return names;
}

/* "lancever: did you mean DIR/T.lance? (tables in DIR: a.lance, b.lance)" */
static void say(const char *dir, const char *mean, char **names, size_t n)
{
	bool here = !strcmp(dir, "."); /* a bare name: the current folder */
	const char *sep = here ? "" : dir[strlen(dir) - 1] == '/' ? "" : "/";
	fprintf(stderr, "lancever: did you mean %s%s%s? (", here ? "" : lvcli_esc(dir), sep,
		lvcli_esc(mean));
	fprintf(stderr, "%s holds %zu table%s: ", here ? "this folder" : lvcli_esc(dir), n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < LVCLI_HINT_MAX; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", lvcli_esc(names[i]));
	if (n > LVCLI_HINT_MAX)
		fprintf(stderr, ", ... %zu more", n - LVCLI_HINT_MAX);
	fputs(")\n", stderr);
}

void lvcli_hint_dataset(void)
{
	const char *uri = last_uri;
	if (!uri || !*uri)
		return;
	if (!strncmp(uri, "file://", 7))
		uri += 7;
	else if (strstr(uri, "://"))
		return; /* an object store: not listed for a hint */
	char path[4096];
	size_t len = strlen(uri);
	if (len >= sizeof path - 8)
		return;
	memcpy(path, uri, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = 0;
	char **names = NULL;
	size_t n = 0;
	char sub[4096];
	if (is_dir(path)) {
		int k = snprintf(sub, sizeof sub, "%s/_versions", path);
		if (k < 0 || (size_t)k >= sizeof sub || is_dir(sub))
			return; /* a table: not this hint's business */
		names = tables_in(path, &n); /* a database folder? */
		if (n) {
			fprintf(stderr, "lancever: %s is a LanceDB database folder, not a table\n",
				lvcli_esc(path));
			say(path, names[0], names, n);
		}
	} else {
		/* db/t: is db/t.lance a table? */
		char *slash = strrchr(path, '/');
		const char *base = slash ? slash + 1 : path;
		char dir[4096], want[512];
		int kd = snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
				  slash ? path : ".");
		int kw = snprintf(want, sizeof want, "%s.lance", base);
		if (kd > 0 && (size_t)kd < sizeof dir && kw > 0 && (size_t)kw < sizeof want && *base &&
		    is_table(dir, want)) {
			names = tables_in(dir, &n);
			if (n)
				say(dir, want, names, n);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
