/*
 * Output: messages on stderr (errors, usage errors), and what happens when stdout
 * could not be written (a reader that went away ends the process as SIGPIPE would).
 *
 * Invariants: lvcli_fail returns exit status 1 and lvcli_usage_error 2; every message
 * starts with "lancever: " and ends with a newline.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"

/* ---- messages ---- */

int lvcli_fail(const lv_error *err)
{
	fprintf(stderr, "%slancever: %s (%s)%s\n", lvcli_color(stderr, LVCLI_RED),
		err->message[0] ? lvcli_esc(err->message) : "error", lv_strerror(err->code),
		lvcli_color(stderr, LVCLI_RESET));
	if (err->code == LV_ENOTFOUND)
		lvcli_hint_dataset(); /* "did you mean db/t.lance?" (hint.c) */
	return 1;
}

int lvcli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = lvcli_vusage_error(fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- output that could not be written ---- */

/* Is fd the write end of a pipe or socket whose reader has gone (POLLERR / POLLHUP)? */
static bool reader_gone(int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		return false;
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

static int stdout_errno; /* the first failed write's, noted by the JSON writer (jbuf.c) */

void lvcli_note_write_error(FILE *f, int e)
{
	if (f == stdout && !stdout_errno)
		stdout_errno = e;
}

int lvcli_stdout_error(void)
{
	if (!ferror(stdout))
		return 0;
	if (stdout_errno) /* a 64 KiB piece of versions --json, written past the buffer */
		return stdout_errno;
	/* glibc keeps unwritten bytes buffered after a failed write: flushing retries them and
	 * leaves the write's errno; a failed write that bypassed the buffer left none */
	errno = 0;
	if (fflush(stdout) != 0 && errno)
		return errno;
	return reader_gone(STDOUT_FILENO) ? EPIPE : EIO;
}

void lvcli_check_pipe(int e)
{
	if (e != EPIPE)
		return;
	lvcli_pager_gone(); /* the user quit the pager: status 0 (term.c) */
	/* as git does: the reader went away, so end as SIGPIPE's default action would, silently,
	 * even when the signal was ignored (killed by SIGPIPE: status 141 in a shell) */
	signal(SIGPIPE, SIG_DFL);
	raise(SIGPIPE);
	_exit(LVCLI_EXIT_PIPE); /* SIGPIPE blocked: it stays pending; the status says the same */
}

