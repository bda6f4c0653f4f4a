/*
 * The deletion limit (issue 30 §3): the time one process takes to unlinkat a
 * list of files on the same disk, with nothing else to do.  A cleanup is
 * compared with it on a twin copy of the same dataset, removing the same files.
 *
 *   unlink_limit ROOT LIST
 *
 * LIST holds paths relative to ROOT, one a line (the files a cleanup removed).
 * The list is read and sorted by directory first (untimed); then, timed, each
 * directory is opened once (O_DIRECTORY | O_NOFOLLOW, from ROOT) and every
 * file in it is removed with unlinkat relative to it.  Prints one JSON line:
 *   {"files":N,"failed":F,"ms":WALL,"user_ms":U,"sys_ms":S,"maxrss_kb":K}
 * Exits 1 on a usage error or when a file could not be removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Opens directory rel[0, len) below rootfd one component at a time, never following a link. */
static int open_dir(int rootfd, const char *rel, size_t len)
{
	int fd = dup(rootfd);
	size_t s = 0;
	while (fd >= 0 && s < len) {
		const char *slash = memchr(rel + s, '/', len - s);
		size_t e = slash ? (size_t)(slash - rel) : len;
		char seg[256];
		if (e - s >= sizeof seg) {
			close(fd);
			return -1;
		}
		memcpy(seg, rel + s, e - s);
		seg[e - s] = 0;
		int nfd = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
		s = e + 1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: unlink_limit ROOT LIST\n");
		return 1;
	}
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		fprintf(stderr, "unlink_limit: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	size_t n = 0, cap = 1024;
	char **paths = malloc(cap * sizeof *paths), *line = NULL;
	size_t lcap = 0;
	ssize_t got;
	while (paths && (got = getline(&line, &lcap, f)) > 0) {
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = 0;
		if (!got)
			continue;
		if (n == cap && !(paths = realloc(paths, (cap *= 2) * sizeof *paths)))
			break;
		if (!(paths[n++] = strdup(line)))
			paths = NULL;
	}
	free(line);
	fclose(f);
	if (!paths) {
		fprintf(stderr, "unlink_limit: out of memory\n");
		return 1;
	}
	qsort(paths, n, sizeof *paths, cmp_str);
	int rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "unlink_limit: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	size_t failed = 0;
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	double t0 = now_ms();
	int dfd = -1;
	size_t dlen = 0;
	const char *dir = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *slash = strrchr(paths[i], '/');
		size_t len = slash ? (size_t)(slash - paths[i]) : 0;
		if (!dir || len != dlen || memcmp(paths[i], dir, len)) {
			if (dfd >= 0)
				close(dfd);
			dfd = open_dir(rootfd, paths[i], len);
			dir = paths[i];
			dlen = len;
		}
		if (dfd < 0 || unlinkat(dfd, slash ? slash + 1 : paths[i], 0) != 0)
			failed++;
	}
	if (dfd >= 0)
		close(dfd);
	double ms = now_ms() - t0;
	getrusage(RUSAGE_SELF, &r1);
	close(rootfd);
	printf("{\"files\":%zu,\"failed\":%zu,\"ms\":%.3f,\"user_ms\":%.3f,\"sys_ms\":%.3f,\"maxrss_kb\":%ld}\n",
	       n, failed, ms, tv_ms(r1.ru_utime) - tv_ms(r0.ru_utime),
	       tv_ms(r1.ru_stime) - tv_ms(r0.ru_stime), r1.ru_maxrss);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return failed ? 1 : 0;
}
