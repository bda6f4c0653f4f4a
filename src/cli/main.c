/*
 * lancever - command-line front end: the command table, the global options (stripped
 * wherever they appear), help and version, dispatch, and the final check that stdout
 * was written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const lvcli_cmd *const commands[] = {
	&lvcli_cmd_versions, &lvcli_cmd_history, &lvcli_cmd_checkpoint, &lvcli_cmd_asof,
	&lvcli_cmd_show,     &lvcli_cmd_diff,    &lvcli_cmd_cleanup,    &lvcli_cmd_expire,
	&lvcli_cmd_info,     &lvcli_cmd_check,   &lvcli_cmd_tags,       &lvcli_cmd_inspect,
	&lvcli_cmd_watch,
	&lvcli_cmd_completion,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const lvcli_global globals[] = {
	{ "--branch", NULL, "NAME", "the branch to open (a path <root>/tree/NAME opens that branch too)" },
	{ "--s3-endpoint", NULL, "URL", "S3-compatible endpoint (overrides AWS_ENDPOINT_URL)" },
	{ "--s3-region", NULL, "R", "S3 region (overrides AWS_REGION)" },
	{ "--s3-allow-http", NULL, NULL, "allow a plain-HTTP S3 endpoint" },
	{ "--storage-option", NULL, "K=V",
	  "a LanceDB storage option for s3:// and az:// (repeatable; docs/operations.md \"Cloud\")" },
	{ "--quiet", "-q", NULL, "silence warnings on stderr (and retry notices)" },
	{ "--verbose", NULL, NULL, "say on stderr which store and credential source a command uses" },
	{ "--no-pager", NULL, NULL, "never page (on a terminal, listings go through $LANCEVER_PAGER, "
	  "$PAGER or less -FRX)" },
	{ "--color", NULL, "WHEN", "auto (a terminal without NO_COLOR), always or never" },
	{ "--bytes", NULL, NULL, "sizes as raw byte counts in text output (JSON always is)" },
	{ "--progress", NULL, "MODE", "auto (one redrawn line on a terminal), json (lines on stderr) "
	  "or never" },
	{ "--help", "-h", NULL, "this help; after a command, that command's help" },
	{ "--version", NULL, NULL, "the version and the Lance formats read and written" },
	{ NULL, NULL, NULL, NULL },
};

const lvcli_cmd *const *lvcli_commands(size_t *n)
{
	*n = NCOMMANDS;
	return commands;
}

const lvcli_global *lvcli_global_table(void)
{
	return globals;
}

static const lvcli_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i]->name))
			return commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[NCOMMANDS + 1];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i]->name;
	names[NCOMMANDS] = "help";
	const char *hint = lvcli_did_you_mean(name, names, NCOMMANDS + 1);
	if (name[0] == '-')
		return lvcli_usage_error("unknown option '%s' (a command's options go after the "
					 "command; lancever help lists them)", lvcli_esc(name));
	if (hint)
		return lvcli_usage_error("unknown command '%s' (did you mean %s?)", lvcli_esc(name), hint);
	return lvcli_usage_error("unknown command '%s' (lancever help lists the commands)",
				 lvcli_esc(name));
}

/* lancever --version: this build, and the Lance formats it reads and writes. */
static int version(void)
{
	printf("lancever %s\n"
	       "reads:  Lance table format manifests (V1 and V2 file names, reader feature flags "
	       "as Lance 14.0.2 reads them), tags, branches; Lance file format %s, %s and %s\n"
	       "writes: checkpoints (_checkpoints/*.lance) in Lance file format %s; never a table version\n"
	       "tested: against Lance 8.0.0 (LanceDB 0.31.0), Lance 12.0.0 (LanceDB 0.39.0) and "
	       "Lance 14 (pylance 14.0.2)\n",
	       lv_version_string(), "2.0", "2.1", "2.2", "2.1");
	return 0;
}

/* lancever help [COMMAND | --man] */
static int help(int argc, char **argv)
{
	if (argc < 2) {
		lvcli_help_all(stdout, commands, NCOMMANDS, globals);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--man")) {
		lvcli_man(stdout, commands, NCOMMANDS, globals);
		return 0;
	}
	const lvcli_cmd *c = find_command(argv[1]);
	if (argc > 2 || !c)
		return argc > 2 ? lvcli_usage_error("usage: lancever help [COMMAND]") : unknown_command(argv[1]);
	lvcli_help_cmd(stdout, c, globals);
	return 0;
}

/* --storage-option KEY=VALUE: split in place (argv is ours). */
static int storage_option(char *kv)
{
	char *eq = strchr(kv, '=');
	if (!eq || eq == kv)
		return lvcli_usage_error("--storage-option wants KEY=VALUE, got '%s'",
					 eq ? "=..." : lvcli_esc(kv));
	if (lvcli_g.noptions == LVCLI_MAX_STORAGE_OPTIONS)
		return lvcli_usage_error("more than %d --storage-option", LVCLI_MAX_STORAGE_OPTIONS);
	*eq = 0;
	lvcli_g.option_keys[lvcli_g.noptions] = kv;
	lvcli_g.option_values[lvcli_g.noptions++] = eq + 1;
	return 0;
}

/* The library's notices (S3/Azure retries, credential refresh problems) go to stderr. */
static void log_to_stderr(int level, const char *message, void *ctx)
{
	(void)ctx;
	if (!lvcli_g.quiet)
		fprintf(stderr, "lancever: %s%s\n", level == LV_LOG_WARN ? "" : "note: ", message);
}

/* Strips the global options (anywhere before a "--") into lvcli_g; 0 or a usage error. */
static int strip_globals(int *argcp, char **argv)
{
	int argc = *argcp, w = 1;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--")) { /* the end of the options: the rest is kept as it is */
			while (i < argc)
				argv[w++] = argv[i++];
			break;
		}
		const char **dst = !strcmp(s, "--branch")        ? &lvcli_g.branch
				   : !strcmp(s, "--s3-endpoint") ? &lvcli_g.s3_endpoint
				   : !strcmp(s, "--s3-region")   ? &lvcli_g.s3_region
								 : NULL;
		if (dst) {
			if (i + 1 >= argc)
				return lvcli_missing_value(s);
			*dst = argv[++i];
		} else if (!strcmp(s, "--storage-option")) {
			if (i + 1 >= argc)
				return lvcli_missing_value(s);
			int rc = storage_option(argv[++i]);
			if (rc)
				return rc;
		} else if (!strcmp(s, "--verbose")) {
			lvcli_g.verbose = true;
		} else if (!strcmp(s, "--s3-allow-http")) {
			lvcli_g.s3_allow_http = true;
		} else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
			lvcli_g.quiet = true;
		} else {
			int k = lvcli_ui_option(argc, argv, i); /* term.c: --no-pager, --color, ... */
			if (k < 0)
				return -k;
			if (k == 0)
				argv[w++] = argv[i];
			else
				i += k - 1;
		}
	}
	argv[w] = NULL;
	*argcp = w;
	return 0;
}

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) /* "--": the rest are arguments */
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

/* Parses the global options and runs the command; returns the exit status. */
static int run(int argc, char **argv)
{
	int rc = strip_globals(&argc, argv);
	if (rc)
		return rc;
	if (argc < 2) {
		lvcli_help_all(stderr, commands, NCOMMANDS, globals);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h"))
		return help(argc - 1, argv + 1);
	if (!strcmp(name, "--version"))
		return argc == 2 ? version() : lvcli_usage_error("--version takes no arguments");
	const lvcli_cmd *c = find_command(name);
	if (!c)
		return unknown_command(name);
	if (wants_help(argc - 1, argv + 1)) {
		lvcli_help_cmd(stdout, c, globals);
		return 0;
	}
	lvcli_pager_start(c->name, argc - 1, argv + 1);
	return c->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	lv_set_log_handler(log_to_stderr, NULL);
	int rc = run(argc, argv);
	lvcli_esc_free();
	/* Output that did not reach its destination (a full disk, /dev/full) is an error, not a
	 * success; a reader that went away (EPIPE) ends the process as SIGPIPE would. */
	int e = lvcli_stdout_error();
	errno = 0;
	if (!e && fflush(stdout) != 0)
		e = errno ? errno : EIO;
	errno = 0;
	if (fclose(stdout) != 0 && !e)
		e = errno ? errno : EIO;
	lvcli_check_pipe(e);
	lvcli_pager_wait();
	if (e && rc == 0) {
		fprintf(stderr, "lancever: error writing output: %s\n", strerror(e));
		rc = 1;
	}
	return rc;
}
