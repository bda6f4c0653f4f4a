/* Copies every object of one storage root to another (e.g. a local dataset to s3://), 16 at a time. */
#include <lancever/lancever.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
	lv_storage *src, *dst;
	char **paths;
	size_t n, next;
	int failed;
	pthread_mutex_t mu;
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

static void *worker(void *p)
{
	job *j = p;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t i = j->next < j->n ? j->next++ : j->n;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n)
			return NULL;
		lv_error err = { 0 };
		lv_buf b = { 0 };
		if (lv_storage_read(j->src, j->paths[i], &b, &err) ||
		    lv_storage_write(j->dst, j->paths[i], b.ptr, b.size, &err)) {
			fprintf(stderr, "s3_upload: %s: %s\n", j->paths[i], err.message);
			j->failed = 1;
		}
		lv_buf_dispose(&b);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: s3_upload SRC DST\n");
		return 2;
	}
	job j = { 0 };
	pthread_mutex_init(&j.mu, NULL);
	lv_error err = { 0 };
	if (lv_storage_open(&j.src, argv[1], NULL, &err) || lv_storage_open(&j.dst, argv[2], NULL, &err) ||
	    lv_storage_list(j.src, "", true, collect, &j, &err)) {
		fprintf(stderr, "s3_upload: %s\n", err.message);
		return 1;
	}
	pthread_t t[16];
	for (int i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, worker, &j);
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i < j.n; i++)
		free(j.paths[i]);
	free(j.paths);
	lv_storage_free(j.src);
	lv_storage_free(j.dst);
	printf("%zu objects\n", j.n);
	return j.failed;
}
