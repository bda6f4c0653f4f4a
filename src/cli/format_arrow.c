/* --format arrow: the library's IPC writer, to a stdio stream. */
#include <errno.h>
#include <string.h>

#include "cli.h"

static int write_errno; /* errno of the write that failed */

static int write_cb(const void *data, size_t size, void *payload)
{
	if (fwrite(data, 1, size, payload) == size)
		return 0;
	write_errno = errno;
	if (payload == stdout) /* a reader that went away: stop now, quietly */
		lvcli_check_pipe(write_errno);
	return LV_EIO;
}

int lvcli_write_arrow(struct ArrowArrayStream *s, FILE *f, lv_error *err)
{
	int rc = lv_arrow_ipc_write(s, write_cb, f, err);
	if (rc == LV_EIO && ferror(f)) /* the one message main() prints for unwritten output */
		snprintf(err->message, sizeof err->message, "error writing output: %s",
			 strerror(write_errno ? write_errno : EIO));
	return rc;
}
