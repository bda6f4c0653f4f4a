/*
 * What lancever/common.h declares besides buffers (buf.c) and time parsing
 * (timeparse.c): error codes and the error setters, the version string, and the log
 * hook.
 *
 * Invariants: lv__err fills a caller's lv_error (may be NULL) and returns the code it
 * was given; the log handler is the one piece of process-wide state, read and replaced
 * under one mutex that a fork() child re-initialises, and called outside it.
 */
#include "util/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int lv__err(lv_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

int lv__err_prefix(lv_error *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	char prefix[LV_ERROR_MESSAGE_MAX];
	char old[LV_ERROR_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof old);
	old[sizeof old - 1] = 0;
	snprintf(err->message, sizeof err->message, "%.200s: %.300s", prefix, old);
	if (err->code == 0)
		err->code = code;
	return err->code;
}

const char *lv_strerror(int code)
{
	switch (code) {
	case LV_OK: return "LV_OK";
	case LV_ENOTFOUND: return "LV_ENOTFOUND";
	case LV_ECORRUPT: return "LV_ECORRUPT";
	case LV_EEXISTS: return "LV_EEXISTS";
	case LV_EIO: return "LV_EIO";
	case LV_ENOMEM: return "LV_ENOMEM";
	case LV_EINVALID: return "LV_EINVALID";
	case LV_EUNSUPPORTED: return "LV_EUNSUPPORTED";
	case LV_ELIMIT: return "LV_ELIMIT";
	case LV_ECONFLICT: return "LV_ECONFLICT";
	case LV_ETAGGED: return "LV_ETAGGED";
	default: return "LV_EUNKNOWN";
	}
}

/* LV_VERSION_STRING comes from project(VERSION) in CMakeLists.txt, the one place it is written. */
const char *lv_version_string(void) { return LV_VERSION_STRING; }
const char *lv_version(void) { return LV_VERSION_STRING; }
int lv_version_number(void) { return LV_VERSION_NUMBER; }

/* ---- log hook (lancever/common.h): the one piece of process-wide state ---- */

static pthread_mutex_t lv_log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t lv_log_once = PTHREAD_ONCE_INIT;

/* A fork() while another thread holds the lock must not leave it held in the child. */
static void log_child_reinit(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lv_log_mu = fresh;
}

static void log_register_atfork(void)
{
	if (pthread_atfork(NULL, NULL, log_child_reinit) != 0) {
		/* without the handler only a fork racing a log call is affected */
	}
}
static lv_log_fn lv_log_handler;
static void *lv_log_ctx;

void lv_set_log_handler(lv_log_fn fn, void *ctx)
{
	pthread_once(&lv_log_once, log_register_atfork);
	pthread_mutex_lock(&lv_log_mu);
	lv_log_handler = fn;
	lv_log_ctx = fn ? ctx : NULL;
	pthread_mutex_unlock(&lv_log_mu);
}

void lv__log(int level, const char *fmt, ...)
{
	pthread_once(&lv_log_once, log_register_atfork);
	pthread_mutex_lock(&lv_log_mu);
	lv_log_fn fn = lv_log_handler;
	void *ctx = lv_log_ctx;
	pthread_mutex_unlock(&lv_log_mu);
	if (!fn)
		return;
	char msg[LV_ERROR_MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fn(level, msg, ctx); /* outside the lock: a handler may log or replace itself */
}
