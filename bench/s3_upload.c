/* Copies every object of one storage root to another (e.g. a local dataset to s3://), 16 at a time. */
#include <lancever/lancever.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

typedef struct job {
	lv_storage *src, *dst;
	char **paths;
	size_t n;
	int failed;
} job;

static int collect(const lv_list_entry *e, void *p)
{
	job *j = p;
	char **v = realloc(j->paths, (j->n + 1) * sizeof *v);
	if (!v)
		return 1;
	j->paths = v;
	j->paths[j->n++] = strdup(e->path);
	return 0;
}

static void copy_one(size_t i, void *p)
{
	job *j = p;
	lv_error err = { 0 };
	lv_buf b = { 0 };
	if (lv_storage_read(j->src, j->paths[i], &b, &err) ||
	    lv_storage_write(j->dst, j->paths[i], b.ptr, b.size, &err)) {
		fprintf(stderr, "s3_upload: %s: %s\n", j->paths[i], err.message);
		__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
	}
	lv_buf_dispose(&b);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: s3_upload SRC DST\n");
		return 2;
	}
	job j = { 0 };
	lv_error err = { 0 };
	if (lv_storage_open(&j.src, argv[1], NULL, &err) || lv_storage_open(&j.dst, argv[2], NULL, &err) ||
	    lv_storage_list(j.src, "", true, collect, &j, &err)) {
		fprintf(stderr, "s3_upload: %s\n", err.message);
		return 1;
	}
	(void)lv__parallel_for(j.n, 16, copy_one, &j);
	for (size_t i = 0; i < j.n; i++)
		free(j.paths[i]);
	free(j.paths);
	lv_storage_free(j.src);
	lv_storage_free(j.dst);
	printf("%zu objects\n", j.n);
	return j.failed;
}
