/*
 * Times a command and reports its peak memory, without a shell or Node's
 * spawn overhead in the figure.
 *
 *   rusage [--repeat N] [--warmup W] [--stdout FILE] -- CMD [ARGS...]
 *
 * Runs CMD W times untimed (default 1), then N times (default 5), each with
 * stdin from /dev/null, stdout to FILE (default /dev/null) and stderr
 * inherited.  Wall time is taken from just before fork() to the return of
 * wait4(); peak resident set size is the child's ru_maxrss.  Prints one JSON
 * line on stdout:
 *   {"runs":N,"ms":[...],"median_ms":M,"min_ms":m,"maxrss_kb":K,"status":S}
 * plus "minflt":F, the largest count of minor page faults over the timed runs,
 * where maxrss_kb is the largest over the timed runs and status is the first
 * non-zero exit status (128+signal when killed), 0 if all succeeded.  Exits
 * with that status.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int positive(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > 1000000)
		return -1;
	*out = (int)v;
	return 0;
}

/* Runs argv once; returns the exit status (128+signal if killed), -1 if it could not start. */
static int run_once(char **argv, const char *out_path, double *ms, long *maxrss_kb, long *minflt)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
			_exit(127);
		close(in);
		close(out);
		execvp(argv[0], argv);
		fprintf(stderr, "rusage: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR)
			return -1;
	}
	*ms = now_ms() - t0;
	*maxrss_kb = ru.ru_maxrss;
	*minflt = ru.ru_minflt;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	int repeat = 5, warmup = 1, i = 1;
	const char *out_path = "/dev/null";
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc && !positive(argv[i + 1], &repeat))
			i++;
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc && !positive(argv[i + 1], &warmup))
			i++;
		else if (!strcmp(argv[i], "--stdout") && i + 1 < argc)
			out_path = argv[++i];
		else
			break;
	}
	if (i >= argc || strcmp(argv[i], "--") || i + 1 >= argc || repeat < 1) {
		fprintf(stderr, "usage: rusage [--repeat N] [--warmup W] [--stdout FILE] -- CMD [ARGS...]\n");
		return 2;
	}
	char **cmd = argv + i + 1;
	double *ms = calloc((size_t)repeat, sizeof *ms);
	if (!ms)
		return 1;
	long peak = 0, rss = 0, flt = 0, flt_peak = 0;
	int status = 0;
	double t;
	for (int w = 0; w < warmup && !status; w++)
		status = run_once(cmd, out_path, &t, &rss, &flt);
	for (int r = 0; r < repeat && !status; r++) {
		status = run_once(cmd, out_path, &ms[r], &rss, &flt);
		peak = rss > peak ? rss : peak;
		flt_peak = flt > flt_peak ? flt : flt_peak;
	}
	if (status < 0)
		status = 127;
	double *sorted = calloc((size_t)repeat, sizeof *sorted);
	if (!sorted)
		return 1;
	memcpy(sorted, ms, (size_t)repeat * sizeof *ms);
	qsort(sorted, (size_t)repeat, sizeof *sorted, cmp_double);
	double med = repeat % 2 ? sorted[repeat / 2] : (sorted[repeat / 2 - 1] + sorted[repeat / 2]) / 2;
	printf("{\"runs\":%d,\"ms\":[", repeat);
	for (int r = 0; r < repeat; r++)
		printf("%s%.4f", r ? "," : "", ms[r]);
	printf("],\"median_ms\":%.4f,\"min_ms\":%.4f,\"maxrss_kb\":%ld,\"minflt\":%ld,\"status\":%d}\n",
	       med, sorted[0], peak, flt_peak, status);
	free(ms);
	free(sorted);
	return status;
}
