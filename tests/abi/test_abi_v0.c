/*
 * The ABI acceptance test (issue 26): a caller compiled against the previous release's
 * headers (tests/abi/v0/include, lancever 0.1 as it was before the struct rule) and linked
 * against today's liblancever.so calls the main entry points with its old structs.  Every
 * call either works or returns LV_EINVALID; none reads or writes past an old struct: each
 * one lives on the heap at exactly its old size, filled with a pattern (0, as `= {0}`
 * leaves it, and 0xA5, as uninitialised memory might be), so ASan (the sanitized build
 * runs this test too) reports any access beyond it, and the bytes of a refused output are
 * checked to be untouched.
 *
 * Invariants: this file includes only tests/abi/v0/include (CMake gives no other include
 * directory); it never includes src/lib; it changes only a scratch copy of the dataset.
 *   test_abi_v0 DATASET_DIR   (a Lance dataset to copy: demo/demo.lance)
 */
#include <lancever/lancever.h>
#include <lancever/sys/storage.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                                                    \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			failures++;                                                          \
		}                                                                            \
	} while (0)

/* A call's outcome must be 0 or LV_EINVALID; returns whether it worked. */
static int outcome(const char *what, int rc, const lv_error *e, int want)
{
	EXPECT(rc == 0 || rc == LV_EINVALID, "%s: %d %s (%s)", what, rc, lv_strerror(rc), e->message);
	EXPECT(rc == want, "%s: expected %s, got %s (%s)", what, lv_strerror(want), lv_strerror(rc),
	       e->message);
	printf("%-52s %s%s%s\n", what, rc == 0 ? "works" : lv_strerror(rc), rc ? ": " : "",
	       rc ? e->message : "");
	return rc == 0;
}

/* An old struct on the heap at its exact size, every byte `fill`. */
static void *old_struct(size_t size, int fill)
{
	unsigned char *p = malloc(size);
	if (!p) {
		perror("malloc");
		exit(2);
	}
	memset(p, fill, size);
	return p;
}

static int untouched(const void *p, size_t size, int fill)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < size; i++)
		if (b[i] != (unsigned char)fill)
			return 0;
	return 1;
}

/* Copies the dataset into a scratch directory (cleanup and checkpoint write to it). */
static char *scratch_copy(const char *src)
{
	static char dir[] = "/tmp/lv_abi_v0_XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "cp -R '%s' '%s/ds'", src, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot copy %s\n", src);
		exit(2);
	}
	static char path[4200];
	snprintf(path, sizeof path, "%s/ds", dir);
	return path;
}

static void remove_scratch(const char *ds_path)
{
	char cmd[4400];
	snprintf(cmd, sizeof cmd, "rm -rf '%.*s'", (int)(strlen(ds_path) - 3), ds_path);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", ds_path);
}

/* The history reads, each with an old report (refused, untouched) and with none (works). */
static void history_calls(lv_dataset *ds, int fill)
{
	lv_error e = { 0 };
	lv_history_report *rep = old_struct(sizeof *rep, fill);
	lv_version_list *l = NULL;
	outcome("lv_versions, old report", lv_versions(&l, ds, rep, &e), &e, LV_EINVALID);
	EXPECT(!l && untouched(rep, sizeof *rep, fill), "lv_versions wrote into a refused call");
	if (outcome("lv_versions, no report", lv_versions(&l, ds, NULL, &e), &e, 0))
		EXPECT(lv_version_list_count(l) > 0, "no versions");
	lv_version_list_free(l);
	l = NULL;
	outcome("lv_history, old report", lv_history(&l, ds, rep, &e), &e, LV_EINVALID);
	outcome("lv_history, no report", lv_history(&l, ds, NULL, &e), &e, 0);
	lv_version_list_free(l);
	l = NULL;
	outcome("lv_version_as_of, old report",
		lv_version_as_of(&l, ds, INT64_MAX, false, rep, &e), &e, LV_EINVALID);
	outcome("lv_version_as_of, no report", lv_version_as_of(&l, ds, INT64_MAX, false, NULL, &e),
		&e, 0);
	lv_version_list_free(l);
	lv_timeline *tl = NULL;
	outcome("lv_timeline_load, old report", lv_timeline_load(&tl, ds, rep, &e), &e, LV_EINVALID);
	lv_timeline_free(tl);
	/* lv_history_options kept its layout (version 1): read as it is */
	lv_history_options *ho = old_struct(sizeof *ho, 0);
	*ho = (lv_history_options)LV_HISTORY_OPTIONS_INIT;
	ho->limit = 2;
	l = NULL;
	if (outcome("lv_history_list, old options (v1)", lv_history_list(&l, ds, ho, NULL, &e), &e, 0))
		EXPECT(lv_version_list_count(l) == 2, "limit 2 gave %zu", lv_version_list_count(l));
	lv_version_list_free(l);
	outcome("lv_history_list, old options, old report", lv_history_list(&l, ds, ho, rep, &e), &e,
		LV_EINVALID);
	EXPECT(untouched(rep, sizeof *rep, fill), "a refused report was written");
	free(ho);
	free(rep);
}

static void arrow_calls(lv_dataset *ds, int fill)
{
	lv_error e = { 0 };
	lv_arrow_options *ao = old_struct(sizeof *ao, 0);
	*ao = (lv_arrow_options)LV_ARROW_OPTIONS_INIT; /* layout kept (version 1) */
	struct ArrowArrayStream s = { 0 };
	if (outcome("lv_versions_arrow_stream, old options (v1)",
		    lv_versions_arrow_stream(&s, ds, ao, NULL, &e), &e, 0))
		s.release(&s);
	lv_history_report *rep = old_struct(sizeof *rep, fill);
	outcome("lv_history_arrow_stream, old report", lv_history_arrow_stream(&s, ds, ao, rep, &e),
		&e, LV_EINVALID);
	EXPECT(untouched(rep, sizeof *rep, fill), "a refused report was written");
	free(rep);
	/* old stats as input: zeroed, as a caller whose cleanup was refused still has them */
	lv_cleanup_stats *st = old_struct(sizeof *st, 0);
	lv_cleanup_file f = { "data/x.lance", LV_KIND_DATA, 10, "old" };
	outcome("lv_cleanup_files_arrow_stream, old stats",
		lv_cleanup_files_arrow_stream(&s, &f, 1, st, true, ao, &e), &e, LV_EINVALID);
	if (outcome("lv_cleanup_files_arrow_stream, no stats",
		    lv_cleanup_files_arrow_stream(&s, &f, 1, NULL, true, ao, &e), &e, 0))
		s.release(&s);
	free(st);
	free(ao);
}

static void checkpoint_calls(lv_dataset *ds, int fill)
{
	lv_error e = { 0 };
	lv_checkpoint_config *cfg = old_struct(sizeof *cfg, 0);
	*cfg = (lv_checkpoint_config)LV_CHECKPOINT_CONFIG_INIT; /* layout kept (version 2) */
	lv_checkpoint_config *out = old_struct(sizeof *out, fill);
	outcome("lv_checkpoint_config_resolve, uninitialised out",
		lv_checkpoint_config_resolve(out, ds, cfg, &e), &e, LV_EINVALID);
	EXPECT(untouched(out, sizeof *out, fill), "a refused config was written");
	*out = (lv_checkpoint_config)LV_CHECKPOINT_CONFIG_INIT;
	if (outcome("lv_checkpoint_config_resolve, old config (v2)",
		    lv_checkpoint_config_resolve(out, ds, cfg, &e), &e, 0))
		EXPECT(out->enabled == 1 && out->max_entries > 0, "resolved config");
	lv_checkpoint_result *res = old_struct(sizeof *res, fill);
	outcome("lv_checkpoint_write, old result", lv_checkpoint_write(ds, cfg, NULL, 0, res, &e), &e,
		LV_EINVALID);
	EXPECT(untouched(res, sizeof *res, fill), "a refused result was written");
	outcome("lv_checkpoint_write, old config, no result",
		lv_checkpoint_write(ds, cfg, NULL, 0, NULL, &e), &e, 0);
	free(res);
	free(out);
	free(cfg);
}

static void cleanup_calls(lv_dataset *ds, int fill)
{
	lv_error e = { 0 };
	lv_cleanup_policy *p = old_struct(sizeof *p, 0);
	*p = (lv_cleanup_policy)LV_CLEANUP_POLICY_INIT; /* version 5, config by value */
	p->retain_versions = 1;
	p->error_if_tagged_old_versions = false;
	lv_cleanup_stats *st = old_struct(sizeof *st, fill);
	outcome("lv_cleanup, old policy (v5), old stats", lv_cleanup(ds, p, st, &e), &e, LV_EINVALID);
	outcome("lv_cleanup, old policy (v5), no stats", lv_cleanup(ds, p, NULL, &e), &e, LV_EINVALID);
	EXPECT(untouched(st, sizeof *st, fill), "refused stats were written");
	lv_expire_policy *x = old_struct(sizeof *x, 0);
	*x = (lv_expire_policy)LV_EXPIRE_POLICY_INIT; /* version 2 */
	x->retain_versions = 1;
	outcome("lv_expire, old policy (v2), old stats", lv_expire(ds, x, st, &e), &e, LV_EINVALID);
	EXPECT(untouched(st, sizeof *st, fill), "refused stats were written");
	lv_version_list *l = NULL;
	if (outcome("lv_versions after the refused cleanups", lv_versions(&l, ds, NULL, &e), &e, 0))
		EXPECT(lv_version_list_count(l) > 1, "a refused cleanup removed versions");
	lv_version_list_free(l);
	lv_check_options *co = old_struct(sizeof *co, 0);
	*co = (lv_check_options)LV_CHECK_OPTIONS_INIT; /* version 1, config by value */
	lv_check *c = NULL;
	outcome("lv_check_run, old options (v1)", lv_check_run(&c, ds, co, &e), &e, LV_EINVALID);
	if (outcome("lv_check_run, no options", lv_check_run(&c, ds, NULL, &e), &e, 0))
		EXPECT(lv_check_count(c) > 0, "check found nothing");
	lv_check_free(c);
	free(co);
	free(x);
	free(st);
	free(p);
}

static void open_calls(const char *path)
{
	lv_error e = { 0 };
	lv_open_options *o = old_struct(sizeof *o, 0);
	*o = (lv_open_options)LV_OPEN_OPTIONS_INIT; /* version 1, storage options by value */
	lv_dataset *ds = NULL;
	outcome("lv_dataset_open, old options (v1)", lv_dataset_open(&ds, path, o, &e), &e,
		LV_EINVALID);
	EXPECT(!ds, "a refused open returned a dataset");
	lv_storage *st = NULL;
	if (outcome("lv_storage_mem_new", lv_storage_mem_new(&st, &e), &e, 0)) {
		outcome("lv_dataset_open_storage, old options (v1)",
			lv_dataset_open_storage(&ds, st, o, &e), &e, LV_EINVALID);
		/* 0.1's lv_storage_get_stats returned void and its stats had no version: today's
		 * refuses them (returns LV_EINVALID, which this caller does not see) and writes nothing */
		for (int fill = 0; fill <= 0xA5; fill += 0xA5) {
			lv_storage_stats *ss = old_struct(sizeof *ss, fill);
			lv_storage_get_stats(st, ss);
			EXPECT(untouched(ss, sizeof *ss, fill), "old storage stats (0x%02x) were written", fill);
			printf("%-52s %s\n", "lv_storage_get_stats, old stats",
			       untouched(ss, sizeof *ss, fill) ? "nothing written" : "WRITTEN");
			free(ss);
		}
		lv_storage_free(st);
	}
	free(o);
	/* a version-1 storage ops table (the pre-1.0 layout has no flags) */
	lv_storage_ops *ops = old_struct(sizeof *ops, 0);
	ops->version = 1;
	outcome("lv_storage_new, ops table v1", lv_storage_new(&st, ops, NULL, "old://", &e), &e,
		LV_EINVALID);
	free(ops);
	lv_lancefile_write_options *lo = old_struct(sizeof *lo, 0);
	*lo = (lv_lancefile_write_options)LV_LANCEFILE_WRITE_OPTIONS_INIT; /* layout kept */
	uint64_t vals[2] = { 1, 2 };
	lv_column col = { .name = "x", .type = LV_COL_UINT64, .u64 = vals };
	lv_buf b = { 0 };
	outcome("lv_lancefile_write, old options (v1)", lv_lancefile_write(&b, &col, 1, 2, NULL, 0, lo, &e),
		&e, 0);
	lv_buf_dispose(&b);
	free(lo);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_abi_v0 DATASET_DIR\n");
		return 2;
	}
	printf("library %s, headers of 0.1 (tests/abi/v0/include)\n", lv_version_string());
	char *path = scratch_copy(argv[1]);
	open_calls(path);
	static const int fills[] = { 0, 0xA5 };
	for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++) {
		printf("-- old output structs filled with 0x%02x\n", fills[i]);
		lv_error e = { 0 };
		lv_dataset *ds = NULL;
		if (!outcome("lv_dataset_open, no options", lv_dataset_open(&ds, path, NULL, &e), &e, 0))
			break;
		history_calls(ds, fills[i]);
		arrow_calls(ds, fills[i]);
		checkpoint_calls(ds, fills[i]);
		cleanup_calls(ds, fills[i]);
		lv_dataset_free(ds);
	}
	remove_scratch(path);
	printf("%s\n", failures ? "FAILED" : "every call worked or returned LV_EINVALID");
	return failures ? 1 : 0;
}
