#include "support/testutil.h"

#include <dirent.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <ftw.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

uint8_t *tu_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return b;
}

void tu_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fail_msg("cannot create %s", path);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

char *tu_fmt(const char *fmt, ...)
{
	static char bufs[8][13000];
	static int k;
	char *b = bufs[k++ & 7];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof bufs[0], fmt, ap);
	va_end(ap);
	return b;
}

void tu_sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

const char *tu_fixture(const char *rel)
{
	static char bufs[4][4096];
	static int k;
	char *b = bufs[k++ & 3];
	snprintf(b, 4096, "%s/%s", LV_FIXTURES_DIR, rel);
	return b;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open dir %s", dir);
	size_t n = 0, cap = 16;
	char **v = malloc(cap * sizeof *v);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n + 1 >= cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof *v, cmpstr);
	v[n] = NULL;
	return v;
}

void tu_free_list(char **l)
{
	for (char **p = l; p && *p; p++)
		free(*p);
	free(l);
}

size_t tu_list_len(char *const *l)
{
	size_t n = 0;
	while (l[n])
		n++;
	return n;
}

const char *tu_tmpdir(void)
{
	static char b[256];
	snprintf(b, sizeof b, "/tmp/lv-test-XXXXXX");
	if (!mkdtemp(b))
		fail_msg("mkdtemp failed");
	return b;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

void tu_rmrf(const char *path)
{
	nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

lv_storage *tu_mem(void)
{
	lv_error err = { 0 };
	lv_storage *st = NULL;
	TU_CHECK(err, lv_storage_mem_new(&st, &err));
	return st;
}

typedef struct path_list {
	char **v;
	size_t n, cap;
} path_list;

static int add_path(const lv_list_entry *e, void *p)
{
	path_list *l = p;
	if (l->n + 1 >= l->cap) {
		l->v = realloc(l->v, (l->cap *= 2) * sizeof *l->v);
		assert_non_null(l->v);
	}
	l->v[l->n] = strdup(e->path);
	assert_non_null(l->v[l->n]);
	l->v[++l->n] = NULL;
	return 0;
}

char **tu_list_paths(lv_storage *st, const char *dir, bool recursive)
{
	lv_error err = { 0 };
	path_list l = { calloc(16, sizeof(char *)), 0, 16 };
	assert_non_null(l.v);
	TU_CHECK(err, lv_storage_list(st, dir, recursive, add_path, &l, &err));
	qsort(l.v, l.n, sizeof *l.v, cmpstr);
	return l.v;
}

lv_dataset *tu_open(lv_storage *st)
{
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	TU_CHECK(err, lv_dataset_open_storage(&ds, st, NULL, &err));
	return ds;
}

lv_checkpoint_result tu_checkpoint(lv_storage *st)
{
	lv_error err = { 0 };
	lv_dataset *ds = tu_open(st);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	TU_CHECK(err, lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err));
	lv_dataset_free(ds);
	return r;
}

void *tu_checkpoint_job_run(void *job)
{
	tu_checkpoint_job *j = job;
	lv_dataset *ds = NULL;
	j->rc = lv_dataset_open_storage(&ds, j->st, NULL, &j->err);
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	if (j->rc == 0)
		j->rc = lv_checkpoint_write(ds, j->cfg, NULL, 0, &r, &j->err);
	lv_dataset_free(ds);
	return NULL;
}

lv_cleanup_policy tu_retain_policy(int64_t n, int64_t now_ms, const lv_checkpoint_config *cfg)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.retain_versions = n;
	p.error_if_tagged_old_versions = false;
	p.now_ms = now_ms;
	p.checkpoint = cfg; /* the caller's: it outlives the policy's use */
	return p;
}

lv_cleanup_stats tu_cleanup_retain(lv_dataset *ds, int64_t n, int64_t now_ms, const lv_checkpoint_config *cfg)
{
	lv_error err = { 0 };
	lv_cleanup_policy p = tu_retain_policy(n, now_ms, cfg);
	lv_cleanup_stats s = LV_CLEANUP_STATS_INIT;
	TU_CHECK(err, lv_cleanup(ds, &p, &s, &err));
	return s;
}

lv_version_list *tu_versions(lv_dataset *ds, lv_history_report *report)
{
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	TU_CHECK(err, lv_versions(&l, ds, report, &err));
	return l;
}

lv_version_list *tu_history(lv_dataset *ds, lv_history_report *report)
{
	lv_error err = { 0 };
	lv_version_list *l = NULL;
	TU_CHECK(err, lv_history(&l, ds, report, &err));
	return l;
}

size_t tu_count_versions(lv_dataset *ds)
{
	lv_version_list *l = tu_versions(ds, NULL);
	size_t n = lv_version_list_count(l);
	lv_version_list_free(l);
	return n;
}

void tu_expect_history(lv_dataset *ds, uint64_t n, const bool *cleaned)
{
	lv_version_list *l = tu_history(ds, NULL);
	assert_int_equal(lv_version_list_count(l), n);
	for (size_t i = 0; i < n; i++) {
		const lv_version_info *v = lv_version_list_get(l, i);
		assert_int_equal(v->version, i + 1);
		assert_int_equal(v->is_cleaned_up, cleaned[v->version]);
	}
	lv_version_list_free(l);
}

void tu_expect_history_rung(lv_storage *st, int rung, size_t n)
{
	lv_dataset *ds = tu_open(st);
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	lv_version_list *l = tu_history(ds, &rep);
	assert_int_equal(rep.rung, rung);
	assert_int_equal(lv_version_list_count(l), n);
	lv_version_list_free(l);
	lv_dataset_free(ds);
}

lv_buf tu_read(lv_storage *st, const char *path)
{
	lv_error err = { 0 };
	lv_buf b = { 0 };
	TU_CHECK(err, lv_storage_read(st, path, &b, &err));
	return b;
}

uint64_t tu_rng(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

uint8_t *tu_nth(lv_buf *b, const void *needle, size_t n, int k)
{
	uint8_t *p = b->ptr, *end = b->ptr + b->size;
	for (;;) {
		p = memmem(p, (size_t)(end - p), needle, n);
		if (!p || k-- == 0)
			return p;
		p++;
	}
}

int tu_leak_check(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __lsan_do_recoverable_leak_check();
#else
	return 0;
#endif
}
