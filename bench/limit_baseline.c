/*
 * The physical limit of versions() from a checkpoint: only the unavoidable I/O (list
 * _versions/ and _checkpoints/, read the newest checkpoint whole, read 4 KiB of the newest
 * manifest, and list _refs/tags/ and read its tag files: a version's is_tagged comes from the
 * tags as they are now, which a checkpoint cannot know), nothing decoded.  Prints
 * {"median_ms":M,"min_ms":m} over R runs after a warm-up.  (Before issue 30's fifth round the
 * tags were left out: a dataset without tags costs one more failed open here now.)
 *   limit_baseline DATASET [--repeat R]
 *
 * The limit of a whole `lancever versions --json` process (issue 30 section 4), to be timed
 * from outside (bench/rusage) like lancever itself:
 *   limit_baseline DATASET --write BYTES
 * does that I/O once and writes BYTES bytes to stdout (in 64 KiB writes, as stdio would),
 * then exits.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Lists dir; returns the entries seen and the greatest (or, lowest, the smallest) name ending in
 * `suffix` (or ""). */
static size_t list(const char *dir, const char *suffix, int lowest, char *best, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0, sl = strlen(suffix);
	best[0] = 0;
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		n++;
		int c = best[0] ? strcmp(e->d_name, best) : lowest ? -1 : 1;
		if (l > sl && !strcmp(e->d_name + l - sl, suffix) && (lowest ? c < 0 : c > 0) && l < cap)
			memcpy(best, e->d_name, l + 1);
	}
	if (d)
		closedir(d);
	return n;
}

static size_t slurp(const char *path, size_t max, char *buf)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	ssize_t r;
	while (fd >= 0 && got < max && (r = read(fd, buf + got, max - got)) > 0)
		got += (size_t)r;
	if (fd >= 0)
		close(fd);
	return got;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static char buf[256 << 20];

/* Reads every *.json of the tags directory (none: one failed open); returns the bytes. */
static size_t tags(const char *tdir, char *to, size_t cap)
{
	DIR *d = opendir(tdir);
	struct dirent *e;
	size_t bytes = 0;
	char path[8192];
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".json")) {
			snprintf(path, sizeof path, "%s/%s", tdir, e->d_name);
			bytes += slurp(path, cap - bytes, to + bytes);
		}
	}
	if (d)
		closedir(d);
	return bytes;
}

/* The unavoidable I/O of versions() from a checkpoint; returns the bytes read. */
static size_t io(const char *vdir, const char *cdir, const char *tdir)
{
	char path[8192], cp[256], man[256];
	list(vdir, ".manifest", 1, man, sizeof man); /* V2 names: the smallest is the newest */
	list(cdir, ".lance", 0, cp, sizeof cp);
	size_t bytes = tags(tdir, buf, 1 << 20);
	snprintf(path, sizeof path, "%s/%s", cdir, cp);
	bytes += slurp(path, sizeof buf - bytes - 4096, buf + bytes);
	snprintf(path, sizeof path, "%s/%s", vdir, man);
	return bytes + slurp(path, 4096, buf + bytes);
}

/* Writes n bytes to stdout in 64 KiB writes. */
static int write_out(unsigned long long n)
{
	static char chunk[64 << 10];
	memset(chunk, 'x', sizeof chunk);
	while (n) {
		size_t k = n < sizeof chunk ? (size_t)n : sizeof chunk;
		ssize_t w = write(1, chunk, k);
		if (w <= 0)
			return 1;
		n -= (unsigned long long)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int repeat = argc > 3 && !strcmp(argv[2], "--repeat") ? atoi(argv[3]) : 101;
	if (argc < 2 || repeat < 1) {
		fprintf(stderr, "usage: limit_baseline DATASET [--repeat R | --write BYTES]\n");
		return 2;
	}
	char vdir[4096], cdir[4096], tdir[4096];
	snprintf(vdir, sizeof vdir, "%s/_versions", argv[1]);
	snprintf(cdir, sizeof cdir, "%s/_checkpoints", argv[1]);
	snprintf(tdir, sizeof tdir, "%s/_refs/tags", argv[1]);
	if (argc > 3 && !strcmp(argv[2], "--write")) {
		io(vdir, cdir, tdir);
		return write_out(strtoull(argv[3], NULL, 10));
	}
	double *t = calloc((size_t)repeat, sizeof *t);
	size_t bytes = 0;
	for (int r = -1; r < repeat; r++) {
		double t0 = now_ms();
		bytes = io(vdir, cdir, tdir);
		if (r >= 0)
			t[r] = now_ms() - t0;
	}
	qsort(t, (size_t)repeat, sizeof *t, cmp);
	printf("{\"median_ms\":%.4f,\"min_ms\":%.4f,\"bytes\":%zu}\n", t[repeat / 2], t[0], bytes);
	free(t);
	return 0;
}
