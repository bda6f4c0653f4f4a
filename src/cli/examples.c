/*
 * The EXAMPLES of each command: one table, rendered by `lancever help COMMAND` (text) and the
 * man page (roff), so the two cannot drift.  tests/cli/test_shell.sh runs every example
 * (db/t.lance replaced by a scratch copy of the demo dataset) and fails on a usage error.
 *
 * Invariants: an example is a whole command line starting "lancever " and its comment; the
 * dataset in every example is db/t.lance (the test's substitution relies on it); lines fit
 * 80 columns in the help.
 */
#include <string.h>

#include "cli.h"

typedef struct example {
	const char *cmd;  /* the command's name */
	const char *line; /* the command line */
	const char *what; /* what it does */
} example;

static const example EXAMPLES[] = {
	{ "versions", "lancever versions db/t.lance --limit 10 --reverse", "the 10 newest, newest first" },
	{ "versions", "lancever versions db/t.lance --since '3 days ago' --json",
	  "last 3 days, LanceDB's listVersions() records" },
	{ "history", "lancever history db/t.lance --since indexed --until latest",
	  "from tag indexed to the newest" },
	{ "history", "lancever history db/t.lance --format csv > history.csv", "all of it, as CSV" },
	{ "checkpoint", "lancever checkpoint db/t.lance", "record every version now" },
	{ "checkpoint", "lancever checkpoint db/t.lance --max-entries 5000 --json",
	  "a smaller head, a JSON report" },
	{ "asof", "lancever asof db/t.lance 2026-12-02T18:00:00Z", "the version live at that time (UTC)" },
	{ "asof", "lancever asof db/t.lance '3 days ago' --json", "the same, relative, as JSON" },
	{ "show", "lancever show db/t.lance indexed", "the version tag indexed points at" },
	{ "show", "lancever show db/t.lance latest~1 --json", "the one before the newest" },
	{ "diff", "lancever diff db/t.lance 1 latest", "what changed since version 1" },
	{ "diff", "lancever diff db/t.lance indexed compacted", "between two tags" },
	{ "cleanup", "lancever cleanup db/t.lance --older-than 14days --dry-run", "what would go" },
	{ "cleanup", "lancever cleanup db/t.lance --retain-versions 100 --explain",
	  "why each version stays or goes" },
	{ "expire", "lancever expire db/t.lance --retain-versions 100 --dry-run",
	  "manifests only, the newest 100 kept" },
	{ "info", "lancever info db/t.lance", "latest version, checkpoints, auto-cleanup" },
	{ "check", "lancever check db/t.lance --json", "verify every checkpoint and segment" },
	{ "tags", "lancever tags db/t.lance --format csv", "tags and branches as CSV" },
	{ "inspect", "lancever inspect db/t.lance/_checkpoints/00000000000000000012.lance",
	  "a checkpoint file's schema and rows" },
	{ "watch", "lancever watch db/t.lance --once", "record what is new, then exit (for cron)" },
	{ "watch", "lancever watch db/t.lance --once --log-format json", "the same, JSON log lines" },
	{ "completion", "source <(lancever completion bash)", "complete lancever in this bash" },
	{ "completion", "lancever completion fish > ~/.config/fish/completions/lancever.fish",
	  "for fish, once" },
};

static bool has(const char *cmd)
{
	for (size_t i = 0; i < sizeof EXAMPLES / sizeof EXAMPLES[0]; i++)
		if (!strcmp(EXAMPLES[i].cmd, cmd))
			return true;
	return false;
}

void lvcli_examples_text(FILE *f, const char *cmd)
{
	if (!has(cmd))
		return;
	fputs("\nexamples:\n", f);
	for (size_t i = 0; i < sizeof EXAMPLES / sizeof EXAMPLES[0]; i++)
		if (!strcmp(EXAMPLES[i].cmd, cmd))
			fprintf(f, "  %s\n      %s\n", EXAMPLES[i].line, EXAMPLES[i].what);
}

void lvcli_examples_man(FILE *f, const char *cmd)
{
	if (!has(cmd))
		return;
	fputs(".PP\nExamples:\n", f);
	for (size_t i = 0; i < sizeof EXAMPLES / sizeof EXAMPLES[0]; i++) {
		if (strcmp(EXAMPLES[i].cmd, cmd))
			continue;
		fputs(".RS\n.nf\n", f);
		lvcli_roff(f, EXAMPLES[i].line);
		fputs("\n.fi\n", f);
		lvcli_roff(f, EXAMPLES[i].what);
		fputs("\n.RE\n", f);
	}
}
