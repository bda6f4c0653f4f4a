/* lancever - command-line front end. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{ "versions", lvcli_versions, "versions DATASET [--json] [--threads N] [--stats]   list live versions" },
	{ "history", lvcli_history, "history DATASET [--json] [--stats]                 every version ever recorded, cleaned-up ones flagged" },
	{ "checkpoint", lvcli_checkpoint, "checkpoint DATASET [--max-entries N] [--max-files N] [--json]  write a checkpoint (no cleanup)" },
	{ "asof", lvcli_asof, "asof DATASET TIME [--strict] [--json]              newest version committed at or before TIME" },
	{ "show", lvcli_show, "show DATASET VERSION [--json]                      one version's full record" },
	{ "diff", lvcli_diff, "diff DATASET A B [--json]                          what changed between two versions" },
	{ "cleanup", lvcli_cleanup, "cleanup DATASET [--older-than 7d] [--retain-versions N] [--before-version V]\n"
	  "                 [--delete-unverified] [--no-error-if-tagged-old-versions] [--dry-run] [--list] [--json]\n"
	  "                 [--max-entries N] [--max-files N] [--no-checkpoint]\n"
	  "                                                     remove old versions, keeping their history" },
	{ "info", lvcli_info, "info DATASET [--json]                              latest version, checkpoint and auto-cleanup config" },
	{ "check", lvcli_check, "check DATASET [--salvage] [--json]                 verify every history record; --salvage recovers rows" },
	{ "tags", lvcli_tags, "tags DATASET [--json]                              list tags and branches" },
	{ "inspect", lvcli_inspect, "inspect FILE.lance [--json|--csv]                  show a Lance data file" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: lancever COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %s\n", commands[i].help);
	fprintf(f, "\nDATASET is a path, file:///path or s3://bucket/path.  Every dataset command takes\n"
		   "--branch NAME (a path <root>/tree/<branch> is opened as that branch) and, for S3,\n"
		   "--s3-endpoint URL, --s3-region R, --s3-allow-http; credentials come from AWS_ACCESS_KEY_ID,\n"
		   "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (also AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP).\n"
		   "--quiet (-q), also anywhere: silence warnings on stderr.\n"
		   "Numbers are plain decimal digits (no sign, spaces, 0x or exponent) within the option's range.\n"
		   "Exit status: 0 success, 1 error, 2 usage error.  lancever --version prints the version.\n");
}

int lvcli_fail(const lv_error *err)
{
	fprintf(stderr, "lancever: %s (%s)\n", err->message[0] ? err->message : "error",
		lv_strerror(err->code));
	return 1;
}

int lvcli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lancever: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	return 2;
}

void lvcli_json_strn(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void lvcli_json_str(FILE *f, const char *s)
{
	if (!s)
		fputs("null", f);
	else
		lvcli_json_strn(f, s, strlen(s));
}

bool lvcli_quiet; /* set by a global --quiet / -q option */

/* Parses the global options and runs the command; returns the exit status. */
static int run(int argc, char **argv)
{
	/* Global options (--branch, --s3-*, --quiet) may appear anywhere, before or after the
	 * command: strip them first. */
	int w = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--branch") || !strcmp(argv[i], "--s3-endpoint") ||
		    !strcmp(argv[i], "--s3-region")) {
			if (i + 1 >= argc)
				return lvcli_missing_value(argv[i]);
			if (!strcmp(argv[i], "--branch"))
				lvcli_branch = argv[++i];
			else if (!strcmp(argv[i], "--s3-endpoint"))
				lvcli_s3_endpoint = argv[++i];
			else
				lvcli_s3_region = argv[++i];
		} else if (!strcmp(argv[i], "--s3-allow-http")) {
			lvcli_s3_allow_http = true;
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			lvcli_quiet = true;
		} else {
			argv[w++] = argv[i];
		}
	}
	argc = w;
	argv[argc] = NULL;
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("lancever %s\n", lv_version_string());
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "lancever: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	int rc = run(argc, argv);
	/* Output that did not reach its destination (a full disk, /dev/full, a closed pipe
	 * reported as EPIPE) is an error, not a success.  glibc keeps unwritten bytes buffered
	 * after a failed write, so the fflush retries them and leaves the real errno. */
	int had_error = ferror(stdout);
	errno = 0;
	int bad = fflush(stdout) != 0;
	int e = errno;
	if (fclose(stdout) != 0) {
		bad = 1;
		if (!e)
			e = errno;
	}
	if ((bad || had_error) && rc == 0) {
		fprintf(stderr, "lancever: error writing output: %s\n", strerror(e ? e : EIO));
		rc = 1;
	}
	return rc;
}
