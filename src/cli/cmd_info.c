/*
 * lancever info / tags: what a dataset is configured with, and its tags and branches.
 * Tag and branch names are shown as Lance means them (the file names percent-decoded
 * by the library), escaped for the terminal.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "cli.h"

static const lvcli_opt info_opts[] = {
	{ "--json", NULL, "print a JSON object: latest_version, live_versions, oldest_live_version, total_rows, "
	  "writer_version, data_format, checkpoint, auto_cleanup, warnings", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, json) },
	{ "--max-entries", "N", "show the history a checkpoint with --max-entries N would keep",
	  LVCLI_NUMBER, 1, INT64_MAX, offsetof(lvcli_args, max_entries) },
	LVCLI_OPT_NO_ARCHIVE,
	LVCLI_OPT_SEGMENT_ROWS,
	{ 0 },
};
static const lvcli_opt tags_opts[] = {
	{ "--json", NULL, "print a JSON object: tags, branches, warnings", LVCLI_FLAG, 0, 0,
	  offsetof(lvcli_args, json) },
	LVCLI_OPT_FORMAT,
	{ 0 },
};

#define AUTO_CLEANUP "lance.auto_cleanup."

/* The next lance.auto_cleanup.* config key of v at or after *i, without that prefix (*i its
 * index), or NULL when there is none. */
static const char *next_auto_cleanup(const lv_version_info *v, size_t *i)
{
	for (; *i < v->num_config; ++*i)
		if (!strncmp(v->config_keys[*i], AUTO_CLEANUP, strlen(AUTO_CLEANUP)))
			return v->config_keys[*i] + strlen(AUTO_CLEANUP);
	return NULL;
}

/* For --verbose: the store's description, and its credential source in creds (never a secret). */
static const char *store_and_creds(const lv_dataset *ds, char *creds, size_t size)
{
	lv_storage *st = lv_dataset_storage((lv_dataset *)ds);
	(void)lv_storage_credential_source(st, creds, size);
	return lv_storage_describe(st);
}

static void info_json(const lv_version_info *v, const lv_version_list *l, const lv_checkpoint_config *cfg,
		      const lv_history_report *rep, const lv_dataset *ds)
{
	printf("{\"latest_version\":%" PRIu64 ",\"live_versions\":%zu,\"oldest_live_version\":%" PRIu64
	       ",\"total_rows\":%" PRIu64 ",\"writer_version\":",
	       v->version, lv_version_list_count(l), lv_version_list_get(l, 0)->version, v->total_rows);
	lvcli_json_str(stdout, v->writer_version);
	fputs(",\"data_format\":", stdout);
	lvcli_json_str(stdout, v->data_format);
	printf(",\"checkpoint\":{\"enabled\":%s,\"max_entries\":%lld,\"max_checkpoint_files\":%lld,"
	       "\"latest_checkpoint_version\":%" PRIu64 ",\"archive\":%s,\"archive_segment_rows\":%lld},"
	       "\"auto_cleanup\":{",
	       cfg->enabled ? "true" : "false", (long long)cfg->max_entries,
	       (long long)cfg->max_checkpoint_files, rep->checkpoint_version,
	       cfg->archive ? "true" : "false", (long long)cfg->archive_segment_rows);
	int k = 0;
	size_t i = 0;
	for (const char *key; (key = next_auto_cleanup(v, &i)); i++) {
		fputs(k++ ? "," : "", stdout);
		lvcli_json_str(stdout, key);
		fputc(':', stdout);
		lvcli_json_str(stdout, v->config_values[i]);
	}
	fputc('}', stdout);
	if (lvcli_g.verbose) {
		char creds[512];
		const char *store = store_and_creds(ds, creds, sizeof creds);
		fputs(",\"storage\":", stdout);
		lvcli_json_str(stdout, store);
		fputs(",\"credentials\":", stdout);
		lvcli_json_str(stdout, creds);
	}
	lvcli_json_warnings(stdout, ds);
	fputs("}\n", stdout);
}

/* What happens to versions beyond max_entries, in one line (checkpoint/compose.c: with the
 * archive on, every complete cell of S versions is sealed into a segment and the head holds
 * the rest; with it off, the head keeps the newest max_entries rows and nothing else does). */
static void info_history_kept(const lv_checkpoint_config *cfg)
{
	long long cap = (long long)cfg->max_entries, S = (long long)cfg->archive_segment_rows;
	if (!cfg->enabled)
		printf("history kept          none by lancever: checkpoints are disabled, so versions a "
		       "cleanup removes leave the history (checkpoints already written are still read)\n");
	else if (cfg->archive)
		printf("history kept          every version (archive on): each complete run of %lld "
		       "versions is sealed into a segment in _checkpoints/archive/, the newer ones stay "
		       "in the head (at most max_entries rows); nothing is dropped\n", S < cap ? S : cap);
	else
		printf("history kept          the newest %lld versions (archive off): a checkpoint records "
		       "no more, so an older version leaves the history once its manifest is removed\n",
		       cap);
}

static void info_text(const lv_version_info *v, const lv_version_list *l, const lv_checkpoint_config *cfg,
		      const lv_history_report *rep, lv_dataset *ds)
{
	printf("latest version        %" PRIu64 " (%" PRIu64 " rows, %" PRIu64 " fragments)\n", v->version,
	       v->total_rows, v->total_fragments);
	printf("live versions         %zu (oldest %" PRIu64 ")\n", lv_version_list_count(l),
	       lv_version_list_get(l, 0)->version);
	printf("writer / data format  %s ", lvcli_esc(v->writer_library));
	printf("%s / ", lvcli_esc(v->writer_version));
	printf("%s\n", lvcli_esc(v->data_format));
	printf("checkpoints           %s, max_entries %lld, max_checkpoint_files %lld, newest covers "
	       "%" PRIu64 "\n", cfg->enabled ? "enabled" : "disabled", (long long)cfg->max_entries,
	       (long long)cfg->max_checkpoint_files, rep->checkpoint_version);
	info_history_kept(cfg);
	int k = 0;
	size_t i = 0;
	for (const char *key; (key = next_auto_cleanup(v, &i)); i++, k++) {
		printf("auto cleanup          %s = ", lvcli_esc(key));
		printf("%s\n", lvcli_esc(v->config_values[i]));
	}
	if (!k)
		printf("auto cleanup          (no lance.auto_cleanup.* keys: Lance's automatic cleanup is off)\n");
	if (lvcli_g.verbose) {
		char creds[512];
		printf("storage               %s\n", lvcli_esc(store_and_creds(ds, creds, sizeof creds)));
		printf("credentials           %s\n", lvcli_esc(creds));
	}
}

static int run_info(const lvcli_args *a, lv_dataset *ds)
{
	int rc = 0;
	lv_error err = { 0 };
	lv_version_list *l = NULL, *latest = NULL;
	lv_history_report rep;
	lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION);
	lv_checkpoint_config cfg, in; /* in: the options, as checkpoint takes them */
	lv_checkpoint_config_init(&cfg, LV_CHECKPOINT_CONFIG_VERSION);
	lv_checkpoint_config_init(&in, LV_CHECKPOINT_CONFIG_VERSION);
	lvcli_checkpoint_options(a, &in);
	rc = lv_versions(&l, ds, &rep, &err);
	if (rc == 0)
		rc = lv_checkpoint_config_resolve(&cfg, ds, &in, &err);
	if (rc == 0)
		rc = lv_version_get(&latest, ds, lv_version_list_get(l, lv_version_list_count(l) - 1)->version,
				    &err);
	if (rc < 0) {
		rc = lvcli_fail(&err);
	} else if (a->json) {
		info_json(lv_version_list_get(latest, 0), l, &cfg, &rep, ds);
	} else {
		info_text(lv_version_list_get(latest, 0), l, &cfg, &rep, ds);
	}
	lv_version_list_free(latest);
	lv_version_list_free(l);
	return rc;
}

static void tags_json(const lv_refs *r, const lv_dataset *ds)
{
	fputs("{\"tags\":[", stdout);
	for (size_t i = 0; i < lv_refs_tag_count(r); i++) {
		const lv_tag *t = lv_refs_tag(r, i);
		fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
		lvcli_json_str(stdout, t->name);
		printf(",\"version\":%" PRIu64 ",\"branch\":", t->version);
		lvcli_json_str(stdout, t->branch);
		printf(",\"manifest_size\":%" PRIu64 ",\"created_at\":", t->manifest_size);
		lvcli_json_str(stdout, t->created_at);
		fputs(",\"updated_at\":", stdout);
		lvcli_json_str(stdout, t->updated_at);
		fputs("}", stdout);
	}
	fputs("],\"branches\":[", stdout);
	for (size_t i = 0; i < lv_refs_branch_count(r); i++) {
		const lv_branch *b = lv_refs_branch(r, i);
		fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
		lvcli_json_str(stdout, b->name);
		fputs(",\"parent_branch\":", stdout);
		lvcli_json_str(stdout, b->parent_branch);
		printf(",\"parent_version\":%" PRIu64 ",\"create_at\":%" PRId64 ",\"manifest_size\":%" PRIu64 "}",
		       b->parent_version, b->create_at, b->manifest_size);
	}
	fputc(']', stdout);
	lvcli_json_warnings(stdout, ds);
	fputs("}\n", stdout);
}

static void tags_text(const lv_refs *r)
{
	printf("%-24s %8s  %s\n", "TAG", "VERSION", "BRANCH");
	for (size_t i = 0; i < lv_refs_tag_count(r); i++) {
		const lv_tag *t = lv_refs_tag(r, i);
		lvcli_print_padded(stdout, t->name, 24);
		printf(" %8" PRIu64 "  %s\n", t->version, t->branch ? lvcli_esc(t->branch) : "main");
	}
	if (!lv_refs_branch_count(r))
		return;
	printf("\n%-24s %8s  %s\n", "BRANCH", "FROM", "PARENT");
	for (size_t i = 0; i < lv_refs_branch_count(r); i++) {
		const lv_branch *b = lv_refs_branch(r, i);
		lvcli_print_padded(stdout, b->name, 24);
		printf(" %8" PRIu64 "  %s\n", b->parent_version,
		       b->parent_branch ? lvcli_esc(b->parent_branch) : "main");
	}
}

static int run_tags(const lvcli_args *a, lv_dataset *ds)
{
	int rc = 0;
	lv_error err = { 0 };
	lv_refs *r = NULL;
	struct ArrowArrayStream s;
	if (lv_refs_load(&r, ds, &err) < 0)
		rc = lvcli_fail(&err);
	else if (lvcli_format_stream(a))
		rc = lv_refs_arrow_stream(&s, r, lvcli_arrow_options(), &err) < 0 ? lvcli_fail(&err)
										     : lvcli_emit_stream(a, &s);
	else if (a->json)
		tags_json(r, ds);
	else
		tags_text(r);
	lv_refs_free(r);
	return rc;
}

LVCLI_DATASET_CMD(info, NULL, run_info, "DATASET", "latest version, checkpoint and lance.auto_cleanup.* config",
	"Shows the latest version, how many versions are live, the writer, the effective "
	"checkpoint configuration (the options given, else the dataset's lance.version_checkpoint.* "
	"keys, else the defaults), what that keeps of the history (with the archive on, every "
	"version: complete runs of --segment-rows versions are sealed into _checkpoints/archive/ "
	"and stay readable; with it off, only the newest --max-entries versions are recorded) and "
	"the dataset's lance.auto_cleanup.* keys.");

LVCLI_DATASET_CMD(tags, NULL, run_tags, "DATASET", "tags and branches",
	"Lists the tags in _refs/tags/ (both the older and the Lance 8 file shapes) and the "
	"branches in _refs/branches/, by name as Lance means it: LanceDB stores a tag "
	"\"\xc3\xbc" "n\xc3\xaf" "code\" as _refs/tags/%C3%BCn%C3%AFcode.json. A tag file that cannot be "
	"read is skipped with a warning; the other tags still count.");
