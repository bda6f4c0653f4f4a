#include "objstore/dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

#ifndef LV_CURL_SONAME
#define LV_CURL_SONAME "libcurl.so.4"
#endif
#ifndef LV_CRYPTO_SONAME
#define LV_CRYPTO_SONAME "libcrypto.so.3"
#endif

typedef struct sym {
	const char *name;
	void **slot;
} sym;

/* Opens `soname` and resolves every symbol, or leaves a message in `why`. */
static void *load(const char *soname, const sym *syms, size_t n, char *why, size_t cap)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, cap, "object-store support (s3://, az://) needs %s, which could not be loaded (%.200s)", soname,
			 e ? e : "not found");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(h, syms[i].name);
		if (!p) {
			snprintf(why, cap, "object-store support (s3://, az://) needs %s with %s, which it lacks", soname, syms[i].name);
			dlclose(h);
			return NULL;
		}
		memcpy(syms[i].slot, &p, sizeof p); /* object pointer -> function pointer slot */
	}
	return h;
}

static lv__curl_fns curl_tab;
static lv__crypto_fns crypto_tab;
static bool curl_ok, crypto_ok;
static char curl_why[320], crypto_why[320];
static pthread_once_t curl_once = PTHREAD_ONCE_INIT, crypto_once = PTHREAD_ONCE_INIT;

static void load_curl(void)
{
	const sym syms[] = {
		{ "curl_global_init", (void **)&curl_tab.global_init },
		{ "curl_easy_init", (void **)&curl_tab.easy_init },
		{ "curl_easy_cleanup", (void **)&curl_tab.easy_cleanup },
		{ "curl_easy_reset", (void **)&curl_tab.easy_reset },
		{ "curl_easy_setopt", (void **)&curl_tab.easy_setopt },
		{ "curl_easy_getinfo", (void **)&curl_tab.easy_getinfo },
		{ "curl_easy_perform", (void **)&curl_tab.easy_perform },
		{ "curl_easy_strerror", (void **)&curl_tab.easy_strerror },
		{ "curl_slist_append", (void **)&curl_tab.slist_append },
		{ "curl_slist_free_all", (void **)&curl_tab.slist_free_all },
	};
	if (!load(LV_CURL_SONAME, syms, sizeof syms / sizeof syms[0], curl_why, sizeof curl_why))
		return;
	if (curl_tab.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(curl_why, sizeof curl_why, "object-store support: curl_global_init failed");
		return;
	}
	curl_ok = true;
}

static void load_crypto(void)
{
	const sym syms[] = {
		{ "EVP_Digest", (void **)&crypto_tab.digest },
		{ "EVP_sha256", (void **)&crypto_tab.sha256 },
		{ "EVP_md5", (void **)&crypto_tab.md5 },
		{ "EVP_EncodeBlock", (void **)&crypto_tab.encode_block },
		{ "HMAC", (void **)&crypto_tab.hmac },
		{ "EVP_DecodeBlock", (void **)&crypto_tab.decode_block },
	};
	if (load(LV_CRYPTO_SONAME, syms, sizeof syms / sizeof syms[0], crypto_why, sizeof crypto_why))
		crypto_ok = true;
}

const lv__curl_fns *lv__curl_api(lv_error *err)
{
	pthread_once(&curl_once, load_curl);
	if (!curl_ok) {
		lv__err(err, LV_EUNSUPPORTED, "%s", curl_why);
		return NULL;
	}
	return &curl_tab;
}

const lv__crypto_fns *lv__crypto_api(lv_error *err)
{
	pthread_once(&crypto_once, load_crypto);
	if (!crypto_ok) {
		lv__err(err, LV_EUNSUPPORTED, "%s", crypto_why);
		return NULL;
	}
	return &crypto_tab;
}
