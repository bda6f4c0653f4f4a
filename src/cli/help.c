/*
 * Help, rendered from the command and option tables: `lancever help` (every command with
 * every option: docs/cli.md's generated block is this text verbatim, tests/cli/test_docs.sh checks
 * it), `lancever help CMD` / `lancever CMD --help`, and the man page (`lancever help --man`,
 * built into lancever.1 and installed).  One source, so the three cannot drift.
 */
#include <string.h>

#include "cli.h"

#define WIDTH 96 /* the command list's lines */

/* Text shared by the help and the man page. */
static const char dataset_note[] =
	"DATASET is a path, file:///path, s3://bucket/path or az://container/path. Credentials "
	"come from --storage-option K=V, then the environment (AWS_*, AZURE_STORAGE_*), then the "
	"AWS shared files, web identity, container and instance credentials (docs/operations.md: Cloud).";
static const char numbers_note[] =
	"Numbers are plain decimal digits (no sign, spaces, 0x or exponent) within the option's "
	"range. \"--\" ends the options of any command: every later word is an argument (a "
	"DATASET or FILE whose name starts with -).";
static const char json_note[] =
	"With --json, stdout holds one JSON value, or nothing when the command fails; every JSON "
	"object reports the dataset's warnings in \"warnings\".";
static const char exit_note[] =
	"Exit status: 0 success, 1 error, 2 usage error. When the reader of stdout goes away (a "
	"closed pipe: lancever history DS | head), lancever ends silently as SIGPIPE ends it, "
	"even when SIGPIPE is ignored, as git does: a shell shows status 141 (128 + SIGPIPE), "
	"which is also the exit status when SIGPIPE is blocked.";

/* Writes `text` wrapped at `width`, continuation lines indented by `indent`; the first
 * line continues at column `col` (0: a fresh line). */
static void wrap_from(FILE *f, const char *text, int indent, int col, int width)
{
	bool line_empty = true;
	if (col == 0)
		col = fprintf(f, "%*s", indent, "");
	for (const char *p = text; *p;) {
		size_t w = strcspn(p, " ");
		if (!line_empty && col + 1 + (int)w > width) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
			line_empty = true;
		}
		if (!line_empty)
			col += fprintf(f, " ");
		col += fprintf(f, "%.*s", (int)w, p);
		line_empty = false;
		p += w;
		p += strspn(p, " ");
	}
	fputc('\n', f);
}

static void wrap(FILE *f, const char *text, int indent, int width)
{
	wrap_from(f, text, indent, 0, width);
}

/* "[--name VALUE]" for each option. */
static void synopsis_opts(FILE *f, const lvcli_cmd *c, int indent, int col, int width)
{
	for (const lvcli_opt *o = c->opts; o && o->name; o++) {
		int w = (int)strlen(o->name) + 2 + (o->value ? (int)strlen(o->value) + 1 : 0);
		if (col + 1 + w > width) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
		}
		col += o->value ? fprintf(f, " [%s %s]", o->name, o->value) : fprintf(f, " [%s]", o->name);
	}
	fputc('\n', f);
}

void lvcli_synopsis(FILE *f, const lvcli_cmd *c)
{
	/* continuation lines line up after "usage: lancever NAME " */
	int col = 16 + fprintf(f, "%s %s", c->name, c->args);
	synopsis_opts(f, c, 17 + (int)strlen(c->name), col, 80);
}

/* The global options, "  --branch NAME   help" (all, or those a command takes). */
static void globals_list(FILE *f, const lvcli_global *g, bool all)
{
	for (; g->name; g++) {
		if (!all && (!strcmp(g->name, "--help") || !strcmp(g->name, "--version")))
			continue;
		char head[48];
		if (g->alias)
			snprintf(head, sizeof head, "%s, %s%s%s", g->alias, g->name, g->value ? " " : "",
				 g->value ? g->value : "");
		else
			snprintf(head, sizeof head, "%s%s%s", g->name, g->value ? " " : "",
				 g->value ? g->value : "");
		fprintf(f, "  %-20s %s\n", head, g->help);
	}
}

void lvcli_help_all(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g)
{
	fputs("usage: lancever COMMAND ARGS [OPTIONS]\n"
	      "       lancever help [COMMAND]\n"
	      "       lancever --version\n\ncommands:\n", f);
	for (size_t i = 0; i < n; i++) {
		const lvcli_cmd *c = cmds[i];
		int col = fprintf(f, "  %s %s", c->name, c->args);
		synopsis_opts(f, c, 3 + (int)strlen(c->name), col, WIDTH);
		fprintf(f, "      %s\n", c->summary);
	}
	fputs("\nglobal options (anywhere on the command line before a --):\n", f);
	globals_list(f, g, true);
	fputc('\n', f);
	wrap(f, dataset_note, 0, WIDTH);
	wrap(f, numbers_note, 0, WIDTH);
	wrap(f, json_note, 0, WIDTH);
	wrap(f, exit_note, 0, WIDTH);
}

void lvcli_help_cmd(FILE *f, const lvcli_cmd *c, const lvcli_global *g)
{
	fputs("usage: lancever ", f);
	lvcli_synopsis(f, c);
	fputc('\n', f);
	wrap(f, c->description, 0, 80);
	fputs("\noptions:\n", f);
	for (const lvcli_opt *o = c->opts; o && o->name; o++) {
		char head[48];
		snprintf(head, sizeof head, "%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
		int col = fprintf(f, "  %-26s", head);
		if (col > 28)
			col = fprintf(f, "\n%28s", "") - 1;
		wrap_from(f, o->help, 28, col, 80);
	}
	fprintf(f, "  %-26s%s\n", "-h, --help", "this help");
	if (c->dataset) {
		fputs("\nglobal options:\n", f);
		globals_list(f, g, false);
		fputc('\n', f);
		wrap(f, dataset_note, 0, 80);
	}
	lvcli_examples_text(f, c->name); /* examples.c's table, as the man page */
}

/* ---- the man page ---- */

static void man_opt(FILE *f, const char *alias, const char *name, const char *value, const char *help)
{
	fputs(".TP\n.B ", f);
	if (alias) {
		lvcli_roff(f, alias);
		fputs(", ", f);
	}
	lvcli_roff(f, name);
	if (value) {
		fputs(" \\fI", f);
		lvcli_roff(f, value);
		fputs("\\fR", f);
	}
	fputc('\n', f);
	lvcli_roff(f, help);
	fputc('\n', f);
}

static void man_cmd(FILE *f, const lvcli_cmd *c)
{
	fputs(".SS \"", f);
	lvcli_roff(f, c->name);
	fputc(' ', f);
	lvcli_roff(f, c->args);
	fputs("\"\n", f);
	fputs("\\fI", f);
	lvcli_roff(f, c->summary);
	fputs("\\fR\n.br\n", f);
	lvcli_roff(f, c->description);
	fputc('\n', f);
	for (const lvcli_opt *o = c->opts; o && o->name; o++)
		man_opt(f, NULL, o->name, o->value, o->help);
	lvcli_examples_man(f, c->name);
}

void lvcli_man(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g)
{
	fprintf(f, ".TH LANCEVER 1 \"\" \"lancever %s\" \"User Commands\"\n", lv_version_string());
	fputs(".SH NAME\nlancever \\- fast, durable version history for Lance datasets\n"
	      ".SH SYNOPSIS\n.B lancever\n.I COMMAND ARGS\n.RI [ OPTIONS ]\n.br\n"
	      ".B lancever help\n.RI [ COMMAND ]\n.br\n.B lancever \\-\\-version\n"
	      ".SH DESCRIPTION\n"
	      "lancever reads the version history of a Lance dataset (the format behind LanceDB) "
	      "exactly as Lance reports it, keeps it in checkpoints under _checkpoints/ so that it "
	      "survives cleanup, and cleans up old versions by Lance's rules.\n"
	      ".SH COMMANDS\n", f);
	for (size_t i = 0; i < n; i++)
		man_cmd(f, cmds[i]);
	fputs(".SH GLOBAL OPTIONS\nThese may appear anywhere on the command line before a \"\\-\\-\".\n", f);
	for (; g->name; g++)
		man_opt(f, g->alias, g->name, g->value, g->help);
	fputs(".SH NOTES\n", f);
	lvcli_roff(f, dataset_note);
	fputs("\n.PP\n", f);
	lvcli_roff(f, numbers_note);
	fputs("\n.PP\n", f);
	lvcli_roff(f, json_note);
	fputs("\n.SH ENVIRONMENT\n", f);
	static const char *const env[][2] = {
		{ "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN", "S3 credentials." },
		{ "AWS_REGION, AWS_DEFAULT_REGION", "S3 region (default us-east-1)." },
		{ "AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3", "an S3-compatible endpoint (path-style requests)." },
		{ "AWS_ALLOW_HTTP", "true allows a plain-HTTP endpoint." },
	};
	for (size_t i = 0; i < sizeof env / sizeof env[0]; i++)
		man_opt(f, NULL, env[i][0], NULL, env[i][1]);
	fputs(".SH EXIT STATUS\n", f);
	lvcli_roff(f, exit_note);
	fputs("\n.SH SEE ALSO\nThe docs/ folder of the lancever source tree (docs/cli.md: every command).\n", f);
}
