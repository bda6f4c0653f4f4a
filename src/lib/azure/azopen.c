/*
 * Opening an az:// (or abfs[s]://) store: the address (storage/address.h), LanceDB's Azure storage
 * options, the AZURE_STORAGE_* environment and connection strings, and the
 * credentials they name (Shared Key, SAS, the emulator's published key, or
 * none).  Every storage option is taken or refused by name before any
 * request.  No key, SAS or connection string is ever echoed.
 *
 * URIs (as object_store reads them): az://CONTAINER/PATH (the account from the
 * options or environment), az://CONTAINER@ACCOUNT.blob.core.windows.net/PATH,
 * abfs[s]://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH (served through the
 * Blob endpoint of the same account) and abfs[s]://CONTAINER/PATH.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure/az_int.h"
#include "objstore/options.h"
#include "objstore/uri.h"
#include "objstore/xml.h"
#include "storage/backends.h"
#include "storage/storage_int.h"
#include "util/util.h"

/* The storage emulator's published account and key (Azurite, the old Storage Emulator). */
#define EMULATOR_ACCOUNT "devstoreaccount1"
#define EMULATOR_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

typedef struct azcfg {
	const char *account, *key, *sas, *endpoint;
	const char *key_from, *sas_from; /* where each came from, for the credential source */
	bool emulator, allow_http, skip_signature;
	char *conn_account, *conn_key, *conn_sas, *conn_endpoint; /* owned: from a connection string */
} azcfg;

static bool name_ok(const char *s, size_t n, bool container)
{
	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (container && (c == '-' || c == '$'))))
			return false;
	}
	return true;
}

/* Container, account (if the address names one) and prefix; *alt: the prefix's other
 * spelling (objstore/uri.h). */
static int parse_address(az *a, lv__address *ad, char **alt, lv_error *err)
{
	const char *scheme = ad->scheme;
	size_t clen = strlen(ad->container);
	if (clen < 3 || !name_ok(ad->container, clen, true))
		return lv__err(err, LV_EINVALID,
			       "open %s://: invalid container name (3 to 63 characters: a-z, 0-9, '-'%s)",
			       scheme, ad->host ? "" : "; an account goes after '@'");
	if (!(a->container = lv__strdup(ad->container)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	if (ad->host) {
		const char *host = ad->host, *dot = strchr(host, '.');
		size_t hl = strlen(host), nl = dot ? (size_t)(dot - host) : hl;
		if (!name_ok(host, nl, false) ||
		    (dot && strncmp(dot, ".blob.core.windows.net", hl - nl) &&
			 strncmp(dot, ".dfs.core.windows.net", hl - nl)))
			return lv__err(err, LV_EINVALID,
				       "open %s://%s@...: the account must be ACCOUNT, "
				       "ACCOUNT.blob.core.windows.net or ACCOUNT.dfs.core.windows.net",
				       scheme, a->container);
		if (!(a->account = lv__strndup(host, nl)))
			return lv__err(err, LV_ENOMEM, "out of memory");
	}
	LV_TRY(lv__uri_key_prefix(ad->root, ad->root_raw, &ad->opts, &a->o.prefix, alt, err));
	if (a->o.prefix[0]) {
		int rc = lv__path_check(a->o.prefix, false, "open az://", err);
		if (rc < 0)
			return lv__err_prefix(err, rc, "open az://%s: the path is not a valid blob path",
					      a->container);
	}
	return 0;
}

/* AZURE_STORAGE_CONNECTION_STRING: AccountName, AccountKey, SharedAccessSignature,
 * BlobEndpoint, DefaultEndpointsProtocol, EndpointSuffix, UseDevelopmentStorage. */
static int parse_connection_string(azcfg *c, const char *cs, lv_error *err)
{
	char *copy = lv__strdup(cs);
	if (!copy)
		return lv__err(err, LV_ENOMEM, "out of memory");
	char *proto = NULL, *suffix = NULL, *save = NULL;
	bool dev = false;
	int rc = 0;
	for (char *kv = strtok_r(copy, ";", &save); kv && rc == 0; kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		*eq = 0;
		char *k = kv, *v = eq + 1;
		char **dst = !strcasecmp(k, "AccountName") ? &c->conn_account
			   : !strcasecmp(k, "AccountKey") ? &c->conn_key
			   : !strcasecmp(k, "SharedAccessSignature") ? &c->conn_sas
			   : !strcasecmp(k, "BlobEndpoint") ? &c->conn_endpoint
			   : !strcasecmp(k, "DefaultEndpointsProtocol") ? &proto
			   : !strcasecmp(k, "EndpointSuffix") ? &suffix : NULL;
		if (!strcasecmp(k, "UseDevelopmentStorage"))
			dev = !strcasecmp(v, "true");
		if (dst && !*dst && !(*dst = lv__strdup(v)))
			rc = lv__err(err, LV_ENOMEM, "out of memory");
	}
	if (rc == 0 && dev)
		c->emulator = true;
	if (rc == 0 && !c->conn_endpoint && c->conn_account && (proto || suffix))
		c->conn_endpoint = lv__sprintf("%s://%s.blob.%s", proto ? proto : "https", c->conn_account,
					       suffix ? suffix : "core.windows.net");
	explicit_bzero(copy, strlen(cs)); /* copy was cut up: the original's length */
	lv__free(copy);
	lv__free(proto);
	lv__free(suffix);
	return rc;
}

static int take_options(lv__optbag *o, azcfg *c, lv_error *err)
{
	c->account = lv__opt_get_env(o, LV_OPT("azure_storage_account_name", "account_name"),
				     LV_OPT("AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"));
	static const char *const keyo[] = { "azure_storage_account_key", "azure_storage_access_key",
					    "azure_storage_master_key", "master_key", "account_key",
					    "access_key", NULL };
	if ((c->key = lv__opt_get(o, keyo)))
		c->key_from = "storage option azure_storage_account_key";
	static const char *const keye[] = { "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY",
					    "AZURE_STORAGE_MASTER_KEY", "AZURE_STORAGE_KEY", NULL };
	for (const char *const *e = keye; !c->key && *e; e++)
		if (getenv(*e) && *getenv(*e)) {
			c->key = getenv(*e);
			c->key_from = *e;
		}
	static const char *const saso[] = { "azure_storage_sas_key", "azure_storage_sas_token",
					    "sas_key", "sas_token", NULL };
	if ((c->sas = lv__opt_get(o, saso)))
		c->sas_from = "storage option azure_storage_sas_token";
	static const char *const sase[] = { "AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_SAS_TOKEN", NULL };
	for (const char *const *e = sase; !c->sas && *e; e++)
		if (getenv(*e) && *getenv(*e)) {
			c->sas = getenv(*e);
			c->sas_from = *e;
		}
	c->endpoint = lv__opt_get_env(o, LV_OPT("azure_storage_endpoint", "azure_endpoint", "endpoint"),
				      LV_OPT("AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"));
	LV_TRY(lv__opt_bool(o, LV_OPT("azure_storage_use_emulator", "use_emulator"),
			    LV_OPT("AZURE_STORAGE_USE_EMULATOR"), false, &c->emulator, err));
	LV_TRY(lv__opt_bool(o, LV_OPT("allow_http", "azure_allow_http"), LV_OPT("AZURE_ALLOW_HTTP"),
			    false, &c->allow_http, err));
	LV_TRY(lv__opt_bool(o, LV_OPT("azure_skip_signature", "skip_signature"), NULL, false,
			    &c->skip_signature, err));
	lv__opt_accept(o, LV_OPT("azure_disable_tagging", "disable_tagging", "azure_container_name",
				 "container_name"));
	return lv__opt_refuse(o, LV_OPT("azure_storage_client_id", "azure_client_id", "client_id",
					"azure_storage_client_secret", "azure_client_secret", "client_secret",
					"azure_storage_tenant_id", "azure_storage_authority_id",
					"azure_tenant_id", "azure_authority_id", "tenant_id", "authority_id",
					"azure_storage_authority_host", "azure_authority_host",
					"authority_host", "azure_storage_token", "bearer_token", "token",
					"azure_msi_endpoint", "azure_identity_endpoint", "identity_endpoint",
					"msi_endpoint", "azure_object_id", "object_id",
					"azure_msi_resource_id", "msi_resource_id",
					"azure_federated_token_file", "federated_token_file",
					"azure_use_fabric_endpoint", "use_fabric_endpoint",
					"azure_use_azure_cli", "use_azure_cli", "azure_credential_type",
					"credential_type", "azure_storage_encryption_key", "encryption_key",
					"azure_fabric_token_service_url", "fabric_token_service_url",
					"azure_fabric_workload_host", "fabric_workload_host",
					"azure_fabric_session_token", "fabric_session_token",
					"azure_fabric_cluster_identifier", "fabric_cluster_identifier"),
			      "az://", err);
}

static int set_key(az *a, const char *key, lv_error *err)
{
	size_t n = strlen(key);
	if (n == 0 || n > 88 || n % 4)
		return lv__err(err, LV_EINVALID, "Azure account key: not base64 of at most 64 bytes");
	uint8_t buf[72];
	int k = lv__http_crypto(a->o.http)->decode_block(buf, (const unsigned char *)key, (int)n);
	if (k < 0)
		return lv__err(err, LV_EINVALID, "Azure account key: not base64");
	size_t len = (size_t)k;
	if (n >= 1 && key[n - 1] == '=')
		len--;
	if (n >= 2 && key[n - 2] == '=')
		len--;
	if (len > sizeof a->key)
		return lv__err(err, LV_EINVALID, "Azure account key: longer than 64 bytes");
	memcpy(a->key, buf, len);
	a->keylen = len;
	memset(buf, 0, sizeof buf);
	return 0;
}

/* Account, service URL and credentials from the options, environment and connection string. */
static int resolve(az *a, azcfg *c, lv_error *err)
{
	const char *cs = getenv("AZURE_STORAGE_CONNECTION_STRING");
	bool use_cs = cs && *cs && !c->key && !c->sas && !c->emulator;
	if (use_cs)
		LV_TRY(parse_connection_string(c, cs, err));
	const char *account = a->account ? a->account : c->account ? c->account
			      : use_cs && c->conn_account ? c->conn_account
			      : c->emulator ? EMULATOR_ACCOUNT : NULL;
	if (!account)
		return lv__err(err, LV_EINVALID,
			       "open az://%s: no storage account (storage option azure_storage_account_name, "
			       "AZURE_STORAGE_ACCOUNT_NAME, a connection string, or az://%s@ACCOUNT/...)",
			       a->container, a->container);
	if (!name_ok(account, strlen(account), false))
		return lv__err(err, LV_EINVALID, "open az://%s: invalid storage account name", a->container);
	if (!a->account && !(a->account = lv__strdup(account)))
		return lv__err(err, LV_ENOMEM, "out of memory");
	const char *emu = getenv("AZURITE_BLOB_STORAGE_URL");
	const char *ep = c->endpoint ? c->endpoint : use_cs && c->conn_endpoint ? c->conn_endpoint : NULL;
	if (ep)
		a->service = lv__strdup(ep);
	else if (c->emulator)
		a->service = lv__sprintf("%s/%s", emu && *emu ? emu : "http://127.0.0.1:10000", a->account);
	else
		a->service = lv__sprintf("https://%s.blob.core.windows.net", a->account);
	if (!a->service)
		return lv__err(err, LV_ENOMEM, "out of memory");
	size_t sl = strlen(a->service);
	while (sl && a->service[sl - 1] == '/')
		a->service[--sl] = 0;
	bool http = !strncasecmp(a->service, "http://", 7);
	if (!http && strncasecmp(a->service, "https://", 8))
		return lv__err(err, LV_EINVALID, "open az://%s: the endpoint must be an http(s) URL", a->container);
	if (http && !c->allow_http && !c->emulator)
		return lv__err(err, LV_EINVALID,
			       "open az://%s: the endpoint is plain HTTP; set allow_http (storage option) "
			       "or AZURE_ALLOW_HTTP=true", a->container);
	const char *key = c->key ? c->key : use_cs ? c->conn_key : NULL;
	const char *sas = c->sas ? c->sas : use_cs ? c->conn_sas : NULL;
	const char *from;
	if (c->skip_signature) {
		from = "none (azure_skip_signature: unsigned requests)";
	} else if (key) {
		LV_TRY(set_key(a, key, err));
		from = c->key ? c->key_from : "AZURE_STORAGE_CONNECTION_STRING (AccountKey)";
	} else if (sas) {
		if (!(a->sas = lv__strdup(sas[0] == '?' ? sas + 1 : sas)))
			return lv__err(err, LV_ENOMEM, "out of memory");
		from = c->sas ? c->sas_from : "AZURE_STORAGE_CONNECTION_STRING (SharedAccessSignature)";
	} else if (c->emulator) {
		LV_TRY(set_key(a, EMULATOR_KEY, err));
		from = "the storage emulator's published key (azure_storage_use_emulator)";
	} else {
		return lv__err(err, LV_EINVALID,
			       "open az://%s: no Azure credentials: set an account key "
			       "(AZURE_STORAGE_ACCOUNT_KEY or storage option azure_storage_account_key), a SAS "
			       "token (AZURE_STORAGE_SAS_TOKEN, azure_storage_sas_token) or "
			       "AZURE_STORAGE_CONNECTION_STRING; Entra ID tokens, service principals, managed "
			       "identities and the Azure CLI are not supported by lancever",
			       a->container);
	}
	a->cred_source = lv__sprintf("%s%s, account %s", a->keylen ? "Shared Key from " : a->sas ? "SAS token from " : "",
				     from, a->account);
	return a->cred_source ? 0 : lv__err(err, LV_ENOMEM, "out of memory");
}

static int open_address(lv_storage **out, lv__address *ad, lv_error *err)
{
	*out = NULL;
	lv__optbag *o = &ad->opts;
	az *a = lv__calloc(1, sizeof *a);
	if (!a)
		return lv__err(err, LV_ENOMEM, "out of memory");
	a->o.svc = &lv__az_svc;
	azcfg c;
	memset(&c, 0, sizeof c);
	lv__http_limits lim;
	char *alt = NULL;
	int rc = parse_address(a, ad, &alt, err);
	if (rc == 0)
		rc = lv__http_limits_read(&lim, o, err);
	if (rc == 0)
		rc = take_options(o, &c, err);
	if (rc == 0)
		rc = lv__opt_leftover(o, "az://", err);
	if (rc == 0)
		rc = lv__http_new(&a->o.http, &lim, "az", err);
	if (rc == 0)
		rc = resolve(a, &c, err);
	lv__free(c.conn_account);
	lv__free_secret(c.conn_key);
	lv__free_secret(c.conn_sas);
	lv__free(c.conn_endpoint);
	if (rc == 0) {
		lv__obj_pick_prefix(&a->o, alt, ad->probe);
		alt = NULL;
		lv__obj_set_root(&a->o, "az://", a->container);
		rc = lv__storage_new_kind(out, &lv__az_ops, a, a->o.root, LV__STORAGE_AZURE, err);
	}
	lv__free(alt);
	if (rc < 0)
		lv__az_close(a);
	return rc;
}

const lv__backend lv__backend_az = { "az", LV__ADDR_BUCKET, "az://", open_address };
const lv__backend lv__backend_abfs = { "abfs", LV__ADDR_BUCKET, "abfs://", open_address };
const lv__backend lv__backend_abfss = { "abfss", LV__ADDR_BUCKET, "abfss://", open_address };
