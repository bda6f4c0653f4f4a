/*
 * `lancever completion bash|zsh|fish`: shell completion scripts written from the command and
 * option tables (main.c's commands and global options, each command's lvcli_opt table), so a
 * new command or option completes without touching a script.  Installed by `cmake --install`
 * (CMakeLists.txt renders the three files from the built lancever).
 *
 * What completes: the commands (and help's COMMAND, completion's SHELL), every option of the
 * command typed and the global options, the fixed values of --format, --color and --progress,
 * DATASET and FILE as paths (the shell's own file completion), and tag names where a VERSION is
 * taken (show, diff, --since, --until, --before-version): listed by `lancever tags DATASET
 * --format csv` of the DATASET typed, only when one is there.
 *
 * Invariants: every text from a table is quoted for the shell it is written into (single
 * quotes, a quote written as '\''; zsh descriptions also escape ':'); the scripts run no
 * command but lancever itself, and that only for tag names.
 */
#include <string.h>

#include "cli.h"

/* Prints s inside single quotes ('...'), a quote as '\''; also `extra` escaped by a backslash. */
static void sq(FILE *f, const char *s, const char *extra)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else if (extra && strchr(extra, *s))
			fprintf(f, "\\%c", *s);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* The fixed values an option takes, or NULL. */
static const char *values_of(const char *opt)
{
	if (!strcmp(opt, "--format"))
		return "table json csv arrow";
	if (!strcmp(opt, "--color"))
		return "auto always never";
	if (!strcmp(opt, "--progress"))
		return "auto json never";
	return NULL;
}

/* Does an option's value name a version (tag names complete there)? */
static bool takes_version(const char *opt)
{
	return !strcmp(opt, "--since") || !strcmp(opt, "--until") || !strcmp(opt, "--before-version");
}

/* The kind of positional argument `name`: 'd' a path, 'v' a version, 'c' a command, 's' a
 * shell, 0 anything else. */
static char arg_kind(const char *name, size_t n)
{
	static const struct { const char *name; char kind; } kinds[] = {
		{ "DATASET", 'd' }, { "FILE", 'd' },  { "VERSION", 'v' }, { "A", 'v' },
		{ "B", 'v' },       { "COMMAND", 'c' }, { "SHELL", 's' },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strlen(kinds[i].name) == n && !strncmp(kinds[i].name, name, n))
			return kinds[i].kind;
	return 0;
}

/* The kinds of c's positional arguments, "dv" for "DATASET VERSION". */
static void arg_kinds(const lvcli_cmd *c, char *out, size_t cap)
{
	size_t k = 0;
	for (const char *p = c->args; p && *p && k + 1 < cap;) {
		size_t n = strcspn(p, " ");
		char kind = arg_kind(p, n);
		out[k++] = kind ? kind : '-';
		p += n;
		p += strspn(p, " ");
	}
	out[k] = 0;
}

/* ---- bash ---- */

static void bash_value_opts(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g)
{
	/* every option that takes a value (its value is the next word) */
	fputs("    local valued=' ", f);
	for (; g->name; g++)
		if (g->value)
			fprintf(f, "%s ", g->name);
	for (size_t i = 0; i < n; i++)
		for (const lvcli_opt *o = cmds[i]->opts; o && o->name; o++)
			if (o->value)
				fprintf(f, "%s ", o->name);
	fputs("'\n", f);
}

static void bash(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g)
{
	fputs("# bash completion for lancever (written by `lancever completion bash`)\n"
	      "_lancever_tags() {\n"
	      "    [ -n \"$1\" ] || return\n"
	      "    lancever tags \"$1\" --format csv 2>/dev/null | awk -F, '$1 == \"tag\" { print $2 }'\n"
	      "}\n"
	      "_lancever() {\n"
	      "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "    local cmd='' kinds='' opts='' ds='' i w npos=0 after_dashdash=0\n", f);
	bash_value_opts(f, cmds, n, g);
	fputs("    local globals=", f);
	char buf[2048];
	size_t k = 0;
	buf[0] = 0;
	for (const lvcli_global *x = g; x->name && k < sizeof buf - 64; x++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s%s%s", k ? " " : "", x->name,
				      x->alias ? " " : "", x->alias ? x->alias : "");
	sq(f, buf, NULL);
	fputs("\n    local commands=", f);
	k = 0;
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, sizeof buf - k, "%s ", cmds[i]->name);
	snprintf(buf + k, sizeof buf - k, "help");
	sq(f, buf, NULL);
	fputs("\n    for ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "        w=${COMP_WORDS[i]}\n"
	      "        if [ $after_dashdash = 0 ] && [ \"$w\" = -- ]; then after_dashdash=1; continue; fi\n"
	      "        if [ $after_dashdash = 0 ]; then\n"
	      "            case \"$w\" in\n"
	      "            --*=*) continue ;;\n"
	      "            -*) [[ $valued == *\" $w \"* ]] && ((i++)); continue ;;\n"
	      "            esac\n"
	      "        fi\n"
	      "        if [ -z \"$cmd\" ]; then cmd=$w; continue; fi\n"
	      "        [ $npos = 0 ] && ds=$w\n"
	      "        npos=$((npos + 1))\n"
	      "    done\n"
	      "    case \"$cmd\" in\n", f);
	for (size_t i = 0; i < n; i++) {
		const lvcli_cmd *c = cmds[i];
		char kinds[8];
		arg_kinds(c, kinds, sizeof kinds);
		fprintf(f, "    %s) kinds=%s; opts=", c->name, kinds);
		k = 0;
		buf[0] = 0;
		for (const lvcli_opt *o = c->opts; o && o->name && k < sizeof buf - 64; o++)
			k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? " " : "", o->name);
		sq(f, buf, NULL);
		fputs(" ;;\n", f);
	}
	fputs("    help) kinds=c ;;\n"
	      "    esac\n"
	      "    COMPREPLY=()\n"
	      "    if [ $after_dashdash = 0 ]; then\n"
	      "        case \"$prev\" in\n", f);
	static const char *const fixed[] = { "--format", "--color", "--progress" };
	for (int i = 0; i < 3; i++)
		fprintf(f, "        %s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", fixed[i],
			values_of(fixed[i]));
	fputs("        --since | --until | --before-version)\n"
	      "            COMPREPLY=($(compgen -W \"latest $(_lancever_tags \"$ds\")\" -- \"$cur\")); return ;;\n"
	      "        esac\n"
	      "        [[ $valued == *\" $prev \"* ]] && return\n"
	      "        if [[ $cur == -* ]]; then\n"
	      "            COMPREPLY=($(compgen -W \"$opts $globals --help\" -- \"$cur\")); return\n"
	      "        fi\n"
	      "    fi\n"
	      "    if [ -z \"$cmd\" ]; then COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")); return; fi\n"
	      "    case \"${kinds:npos:1}\" in\n"
	      "    c) COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")) ;;\n"
	      "    s) COMPREPLY=($(compgen -W 'bash zsh fish' -- \"$cur\")) ;;\n"
	      "    v) COMPREPLY=($(compgen -W \"latest $(_lancever_tags \"$ds\")\" -- \"$cur\")) ;;\n"
	      "    esac\n"
	      "}\n"
	      "complete -o bashdefault -o default -F _lancever lancever\n", f);
}

/* ---- zsh ---- */

static void zsh_item(FILE *f, const char *name, const char *help)
{
	/* "name:description", the description's colons escaped (names have none) */
	fprintf(f, "    '%s:", name);
	for (const char *s = help; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else if (*s == ':')
			fputs("\\:", f);
		else
			fputc(*s, f);
	}
	fputs("'\n", f);
}

static void zsh(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g)
{
	fputs("#compdef lancever\n# zsh completion for lancever (written by `lancever completion zsh`)\n"
	      "_lancever_tags() {\n"
	      "  [[ -n $1 ]] || return\n"
	      "  local -a t\n"
	      "  t=(latest ${(f)\"$(lancever tags $1 --format csv 2>/dev/null | awk -F, '$1 == \"tag\" { print $2 }')\"})\n"
	      "  compadd -a t\n"
	      "}\n"
	      "_lancever() {\n"
	      "  local -a commands globals opts\n"
	      "  local cmd='' kinds='' ds='' w prev=${words[CURRENT-1]} cur=${words[CURRENT]}\n"
	      "  integer i npos=0\n"
	      "  commands=(\n", f);
	for (size_t i = 0; i < n; i++)
		zsh_item(f, cmds[i]->name, cmds[i]->summary);
	zsh_item(f, "help", "a command's help, or every command's");
	fputs("  )\n  globals=(\n", f);
	for (const lvcli_global *x = g; x->name; x++) {
		zsh_item(f, x->name, x->help);
		if (x->alias)
			zsh_item(f, x->alias, x->help);
	}
	fputs("  )\n  local valued=' ", f);
	for (const lvcli_global *x = g; x->name; x++)
		if (x->value)
			fprintf(f, "%s ", x->name);
	for (size_t i = 0; i < n; i++)
		for (const lvcli_opt *o = cmds[i]->opts; o && o->name; o++)
			if (o->value)
				fprintf(f, "%s ", o->name);
	fputs("'\n"
	      "  for ((i = 2; i < CURRENT; i++)); do\n"
	      "    w=${words[i]}\n"
	      "    case $w in\n"
	      "    (--*=*) continue ;;\n"
	      "    (-*) [[ $valued == *\" $w \"* ]] && ((i++)); continue ;;\n"
	      "    esac\n"
	      "    if [[ -z $cmd ]]; then cmd=$w; continue; fi\n"
	      "    (( npos == 0 )) && ds=$w\n"
	      "    ((npos++))\n"
	      "  done\n"
	      "  case $cmd in\n", f);
	for (size_t i = 0; i < n; i++) {
		const lvcli_cmd *c = cmds[i];
		char kinds[8];
		arg_kinds(c, kinds, sizeof kinds);
		fprintf(f, "  (%s) kinds=%s; opts=(\n", c->name, kinds);
		for (const lvcli_opt *o = c->opts; o && o->name; o++)
			zsh_item(f, o->name, o->help);
		fputs("  ) ;;\n", f);
	}
	fputs("  (help) kinds=c ;;\n"
	      "  esac\n"
	      "  case $prev in\n"
	      "  (--format) compadd table json csv arrow; return ;;\n"
	      "  (--color) compadd auto always never; return ;;\n"
	      "  (--progress) compadd auto json never; return ;;\n"
	      "  (--since|--until|--before-version) _lancever_tags $ds; return ;;\n"
	      "  esac\n"
	      "  [[ $valued == *\" $prev \"* ]] && return\n"
	      "  if [[ $cur == -* ]]; then\n"
	      "    _describe -t options 'option' opts -- globals; return\n"
	      "  fi\n"
	      "  if [[ -z $cmd ]]; then _describe -t commands 'command' commands; return; fi\n"
	      "  case ${kinds[npos+1]} in\n"
	      "  (c) _describe -t commands 'command' commands ;;\n"
	      "  (s) compadd bash zsh fish ;;\n"
	      "  (v) _lancever_tags $ds ;;\n"
	      "  (d) _files ;;\n"
	      "  esac\n"
	      "}\n"
	      "compdef _lancever lancever 2>/dev/null || true\n", f);
}

/* ---- fish ---- */

static void fish(FILE *f, const lvcli_cmd *const *cmds, size_t n, const lvcli_global *g)
{
	fputs("# fish completion for lancever (written by `lancever completion fish`)\n"
	      "function __lancever_tags\n"
	      "    set -l ds (commandline -opc)[3]\n"
	      "    test -n \"$ds\"; or return\n"
	      "    echo latest\n"
	      "    lancever tags $ds --format csv 2>/dev/null | awk -F, '$1 == \"tag\" { print $2 }'\n"
	      "end\n"
	      "function __lancever_npos\n"
	      "    set -l n 0\n"
	      "    for w in (commandline -opc)[3..-1]\n"
	      "        string match -q -- '-*' $w; or set n (math $n + 1)\n"
	      "    end\n"
	      "    echo $n\n"
	      "end\n"
	      "complete -c lancever -f\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "complete -c lancever -n __fish_use_subcommand -a %s -d ", cmds[i]->name);
		sq(f, cmds[i]->summary, NULL);
		fputc('\n', f);
	}
	fputs("complete -c lancever -n __fish_use_subcommand -a help -d 'a command'\\''s help'\n", f);
	for (const lvcli_global *x = g; x->name; x++) {
		fprintf(f, "complete -c lancever -l %s", x->name + 2);
		if (x->alias && x->alias[1] != '-')
			fprintf(f, " -s %s", x->alias + 1);
		const char *v = values_of(x->name);
		if (v)
			fprintf(f, " -x -a '%s'", v);
		else if (x->value)
			fputs(" -r", f);
		fputs(" -d ", f);
		sq(f, x->help, NULL);
		fputc('\n', f);
	}
	for (size_t i = 0; i < n; i++) {
		const lvcli_cmd *c = cmds[i];
		char kinds[8];
		arg_kinds(c, kinds, sizeof kinds);
		if (kinds[0] == 'd') /* DATASET / FILE: paths, as the first argument */
			fprintf(f, "complete -c lancever -n '__fish_seen_subcommand_from %s; and test "
				"(__lancever_npos) -eq 0' -F\n", c->name);
		if (strchr(kinds, 'v')) /* VERSION, A, B: after the DATASET */
			fprintf(f, "complete -c lancever -n '__fish_seen_subcommand_from %s; and test "
				"(__lancever_npos) -ge 1' -a '(__lancever_tags)'\n", c->name);
		for (const lvcli_opt *o = c->opts; o && o->name; o++) {
			fprintf(f, "complete -c lancever -n '__fish_seen_subcommand_from %s' -l %s", c->name,
				o->name + 2);
			const char *v = values_of(o->name);
			if (v)
				fprintf(f, " -x -a '%s'", v);
			else if (takes_version(o->name))
				fputs(" -x -a '(__lancever_tags)'", f);
			else if (o->value)
				fputs(" -x", f);
			fputs(" -d ", f);
			sq(f, o->help, NULL);
			fputc('\n', f);
		}
	}
	fputs("complete -c lancever -n '__fish_seen_subcommand_from help' -a '", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", cmds[i]->name);
	fputs("'\ncomplete -c lancever -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n", f);
}

static const lvcli_opt completion_opts[] = { { 0 } };

static int cmd_completion(int argc, char **argv)
{
	lvcli_args a;
	int rc = lvcli_parse(argc, argv, &lvcli_cmd_completion, &a);
	if (rc)
		return rc;
	size_t n = 0;
	const lvcli_cmd *const *cmds = lvcli_commands(&n);
	const lvcli_global *g = lvcli_global_table();
	if (!strcmp(a.pos[0], "bash"))
		bash(stdout, cmds, n, g);
	else if (!strcmp(a.pos[0], "zsh"))
		zsh(stdout, cmds, n, g);
	else if (!strcmp(a.pos[0], "fish"))
		fish(stdout, cmds, n, g);
	else
		return lvcli_usage_error("completion: SHELL is bash, zsh or fish, got '%s'", lvcli_esc(a.pos[0]));
	return 0;
}

const lvcli_cmd lvcli_cmd_completion = {
	"completion", "SHELL", "a shell completion script (bash, zsh or fish)",
	"Prints a completion script for SHELL (bash, zsh or fish), written from the same tables as "
	"this help: the commands, their options and the global options, the values of --format, "
	"--color and --progress, paths for DATASET, and tag names (from lancever tags) where a "
	"VERSION is taken. cmake --install installs all three (bash-completion, zsh site-functions, "
	"fish vendor_completions.d); to try one: source <(lancever completion bash).",
	completion_opts, cmd_completion, false,
};
