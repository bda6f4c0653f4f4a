/*
 * The terminal: the pager (--no-pager, $LANCEVER_PAGER, $PAGER, less -FRX), colour
 * (--color=auto|always|never, NO_COLOR), --bytes and --progress=MODE: the global options of
 * the user interface, parsed here for main.c.
 *
 * Invariants: whether stdout and stderr are terminals is decided once, before the pager
 * replaces stdout with a pipe (lvcli_stdout_tty answers for the original stdout); a pager is
 * started only when the original stdout is a terminal, never for a pipe or a file, and only
 * for the commands and forms that list (lvcli_pager_start says which); once started, a
 * reader that quits early ends lancever silently with status 0 (SIGPIPE's handler and
 * lvcli_check_pipe wait for the pager, then _exit(0)), and lancever waits for the pager
 * before it exits, so the shell prompt comes back after the pager's last line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cli.h"

lvcli_ui_state lvcli_ui = { .color = LVCLI_COLOR_AUTO };
static int tty_out = -1, tty_err = -1; /* the original stdout and stderr: terminals? */
static pid_t pager_pid = -1;

static void decide_ttys(void)
{
	if (tty_out < 0)
		tty_out = isatty(STDOUT_FILENO);
	if (tty_err < 0)
		tty_err = isatty(STDERR_FILENO);
}

bool lvcli_stdout_tty(void)
{
	decide_ttys();
	return tty_out == 1;
}

bool lvcli_stderr_tty(void)
{
	decide_ttys();
	return tty_err == 1;
}

/* ---- the global options of the interface ---- */

int lvcli_vusage_error(const char *fmt, va_list ap)
{
	fprintf(stderr, "%slancever: ", lvcli_color(stderr, LVCLI_RED));
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s\n", lvcli_color(stderr, LVCLI_RESET));
	return 2;
}

/* lvcli_usage_error, from here (term.c calls nothing above it: output.c uses its colours). */
__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lvcli_vusage_error(fmt, ap);
	va_end(ap);
	return rc;
}

static int set_color(const char *v)
{
	static const char *const names[] = { [LVCLI_COLOR_AUTO] = "auto", [LVCLI_COLOR_ALWAYS] = "always",
					     [LVCLI_COLOR_NEVER] = "never" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(v, names[i])) {
			lvcli_ui.color = i;
			return 0;
		}
	return usage("--color wants auto, always or never, got '%s'", lvcli_esc(v));
}

static int set_progress(const char *v)
{
	if (!strcmp(v, "auto"))
		lvcli_ui.progress = LVCLI_PROGRESS_AUTO;
	else if (!strcmp(v, "json"))
		lvcli_ui.progress = LVCLI_PROGRESS_JSON;
	else if (!strcmp(v, "never"))
		lvcli_ui.progress = LVCLI_PROGRESS_NEVER;
	else
		return usage("--progress wants auto, json or never, got '%s'", lvcli_esc(v));
	return 0;
}

int lvcli_ui_option(int argc, char **argv, int i)
{
	const char *s = argv[i];
	if (!strcmp(s, "--no-pager")) {
		lvcli_ui.no_pager = true;
		return 1;
	}
	if (!strcmp(s, "--bytes")) {
		lvcli_ui.bytes = true;
		return 1;
	}
	static const char *const with_value[] = { "--color", "--progress" };
	for (int k = 0; k < 2; k++) {
		size_t n = strlen(with_value[k]);
		if (strncmp(s, with_value[k], n) || (s[n] && s[n] != '='))
			continue;
		const char *v = s[n] == '=' ? s + n + 1 : NULL;
		if (!v && i + 1 >= argc)
			return -usage("missing value for %s", with_value[k]);
		int rc = k == 0 ? set_color(v ? v : argv[i + 1]) : set_progress(v ? v : argv[i + 1]);
		return rc ? -rc : v ? 1 : 2;
	}
	return 0;
}

/* ---- colour ---- */

static bool color_on(int fd)
{
	if (lvcli_ui.color != LVCLI_COLOR_AUTO)
		return lvcli_ui.color == LVCLI_COLOR_ALWAYS;
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
	if ((no && *no) || (term && !strcmp(term, "dumb")))
		return false;
	return fd == STDERR_FILENO ? lvcli_stderr_tty() : lvcli_stdout_tty();
}

const char *lvcli_color(FILE *f, int what)
{
	static const char *const sgr[] = { [LVCLI_RESET] = "\033[0m", [LVCLI_DIM] = "\033[2m",
					   [LVCLI_YELLOW] = "\033[33m", [LVCLI_RED] = "\033[31m" };
	int fd = f == stderr ? STDERR_FILENO : f == stdout ? STDOUT_FILENO : -1;
	if (fd < 0 || what < LVCLI_RESET || what > LVCLI_RED || !color_on(fd))
		return "";
	return sgr[what];
}

/* ---- the pager ---- */

/* Which invocations list enough to page: the listing commands, and cleanup's listings
 * (--dry-run, --explain) but not a cleanup that deletes. */
static bool pages(const char *cmd, int argc, char **argv)
{
	static const char *const listing[] = { "versions", "history", "show", "diff", "tags", "asof" };
	for (size_t i = 0; i < sizeof listing / sizeof listing[0]; i++)
		if (!strcmp(cmd, listing[i]))
			return true;
	if (strcmp(cmd, "cleanup") && strcmp(cmd, "expire"))
		return false;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--dry-run") || !strcmp(argv[i], "--explain"))
			return true;
	return false;
}

/* The pager command: $LANCEVER_PAGER, else $PAGER, else less -FRX; NULL for none ("" or cat). */
static const char *pager_command(void)
{
	const char *p = getenv("LANCEVER_PAGER");
	if (!p)
		p = getenv("PAGER");
	if (!p)
		p = "less -FRX";
	p += strspn(p, " \t");
	return !*p || !strcmp(p, "cat") ? NULL : p;
}

/* The reader went away: wait for the pager (the user quit it), end quietly with status 0.  A
 * SIGPIPE from anything else (a socket of the library's) while the pager still reads is not
 * the user quitting: it is ignored, and that write fails with EPIPE as it would without us. */
static void pager_gone(int sig)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	if (sig == SIGPIPE && !(poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP))))
		return;
	if (pager_pid > 0)
		while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
			;
	_exit(0);
}

void lvcli_pager_start(const char *cmd, int argc, char **argv)
{
	decide_ttys();
	const char *pager = pager_command();
	if (lvcli_ui.no_pager || !lvcli_stdout_tty() || !pager || !pages(cmd, argc, argv))
		return;
	int fd[2];
	if (pipe(fd) != 0)
		return; /* no pager: the output goes to the terminal as it is */
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		setenv("LESS", "FRX", 0); /* as git does: only when the user has not set them */
		setenv("LV", "-c", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	dup2(fd[1], STDOUT_FILENO);
	close(fd[0]);
	close(fd[1]);
	pager_pid = pid;
	signal(SIGPIPE, pager_gone);
}

bool lvcli_pager_active(void)
{
	return pager_pid > 0;
}

void lvcli_pager_wait(void)
{
	if (pager_pid <= 0)
		return;
	close(STDOUT_FILENO); /* the pager's end of input (main.c has closed stdout already) */
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = -1;
}

void lvcli_pager_gone(void)
{
	if (pager_pid > 0)
		pager_gone(0); /* EPIPE on stdout: known */
}
