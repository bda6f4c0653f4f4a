/*
 * Unit tests: symbolic links and other hostile filesystem objects in a dataset
 * on local disk.  Whatever the links point at, `cleanup` (with
 * delete_unverified) and checkpoint writes must never delete or modify
 * anything outside the dataset root; every outside tree is compared byte for
 * byte before and after.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lancever/lancever.h>

#include "storage/subdirs.h"
#include "support/synth.h"
#include "support/testutil.h"
#include "util/util.h"

static lv_error err;
#define CHECK(expr) TU_CHECK(err, expr)

#define DAY (86400000LL)
#define T_LATEST_MS 1796232069996LL /* newest commit of fixtures/lance8/t.lance */

/* ---- on-disk helpers ---- */

static char base[4096]; /* per-test scratch: base/ds (the dataset), base/outside */

/* base/ds = a copy of the LanceDB-written fixture; base/outside = an empty directory. */
static void setup_tree(void)
{
	snprintf(base, sizeof base, "%s", tu_tmpdir());
	tu_sh(tu_fmt("cp -r '%s' '%s/ds' && mkdir '%s/outside'", tu_fixture("lance8/t.lance"), base, base));
}

/* Moves base/ds/<sub> to base/outside/<sub> and leaves a symlink to it in its place. */
static void move_out(const char *sub)
{
	tu_sh(tu_fmt("mv '%s/ds/%s' '%s/outside/%s' && ln -s '%s/outside/%s' '%s/ds/%s'", base, sub, base, sub,
		 base, sub, base, sub));
}

/* Every object under a tree (no symlink followed): "path type size fnv1a" lines. */
static lv__dbuf snapbuf;
static size_t snap_skip;

static int snap_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	uint64_t h = 1469598103934665603ull;
	char kind = S_ISDIR(sb->st_mode) ? 'd' : S_ISLNK(sb->st_mode) ? 'l' : S_ISREG(sb->st_mode) ? 'f' : '?';
	if (kind == 'f') {
		size_t n = 0;
		uint8_t *b = tu_read_file(p, &n);
		for (size_t i = 0; i < n; i++)
			h = (h ^ b[i]) * 1099511628211ull;
		free(b);
	} else if (kind == 'l') {
		char t[4096];
		ssize_t n = readlink(p, t, sizeof t);
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ (uint8_t)t[i]) * 1099511628211ull;
	}
	lv__dbuf_printf(&snapbuf, "%s %c %lld %016llx\n", p + snap_skip, kind, (long long)sb->st_size,
		       (unsigned long long)h);
	return 0;
}

static char *snapshot(const char *dir)
{
	lv__dbuf_init(&snapbuf, 0);
	snap_skip = strlen(dir);
	if (nftw(dir, snap_cb, 16, FTW_PHYS) != 0)
		fail_msg("snapshot %s failed", dir);
	char *s = lv__dbuf_take_str(&snapbuf);
	assert_non_null(s);
	return s;
}

/* Fails the test unless the tree under base/<rel> is as `before` (its snapshot()). */
static void assert_same_tree(const char *rel, const char *before)
{
	char *after = snapshot(tu_fmt("%s/%s", base, rel));
	assert_string_equal(before, after);
	free(after);
}

static lv_dataset *open_path(const char *p)
{
	lv_dataset *ds = NULL;
	CHECK(lv_dataset_open(&ds, p, NULL, &err));
	return ds;
}

static int cleanup_all(lv_dataset *ds, lv_cleanup_stats *stats)
{
	lv_cleanup_policy p = LV_CLEANUP_POLICY_INIT;
	p.older_than_ms = 0;
	p.error_if_tagged_old_versions = false;
	p.delete_unverified = true;
	p.now_ms = T_LATEST_MS + 30 * DAY;
	return lv_cleanup(ds, &p, stats, &err);
}

/*
 * A directory of the dataset replaced by a symlink to the real one outside:
 * cleanup refuses, naming the link, before it changes anything; the outside
 * tree and the dataset are byte-identical afterwards.
 */
static void symlinked_dir_refused(const char *sub, bool versions_fail)
{
	setup_tree();
	move_out(sub);
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	char *ds0 = snapshot(tu_fmt("%s/ds", base));
	lv_dataset *ds = open_path(tu_fmt("%s/ds", base));

	lv_version_list *l = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	int rc = lv_versions(&l, ds, &rep, &err);
	if (versions_fail) {
		assert_int_equal(rc, LV_EINVALID);
		assert_non_null(strstr(err.message, "symbolic link"));
		assert_non_null(strstr(err.message, sub));
	} else {
		CHECK(rc);
		assert_int_equal(lv_version_list_count(l), 6);
	}
	lv_version_list_free(l);

	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	rc = cleanup_all(ds, &stats);
	assert_int_equal(rc, LV_EINVALID);
	assert_non_null(strstr(err.message, "symbolic link"));
	assert_non_null(strstr(err.message, sub));

	assert_same_tree("outside", out0);
	assert_same_tree("ds", ds0);
	free(out0);
	free(ds0);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/* The directories symlinked_dir_refused() checks: one cmocka test each (main). */
typedef struct symlinked_dir {
	const char *sub;
	bool versions_fail;
} symlinked_dir;

static symlinked_dir dirs[] = {
	{ "data", false },
	{ "_deletions", false },
	{ "_indices", false },
	/* Lance 8.0.0 manifests carry their transaction inline: versions() never opens _transactions/ */
	{ "_transactions", false },
	{ "_versions", true },
};

static void test_symlinked_dir(void **state)
{
	const symlinked_dir *d = *state;
	symlinked_dir_refused(d->sub, d->versions_fail);
}

/* _checkpoints/ as a symlink to an outside directory: nothing is ever written there. */
static void test_symlinked_checkpoints_dir(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("mkdir '%s/outside/ck' && ln -s '%s/outside/ck' '%s/ds/_checkpoints'", base, base, base));
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	lv_dataset *ds = open_path(tu_fmt("%s/ds", base));
	lv_checkpoint_result r = LV_CHECKPOINT_RESULT_INIT;
	int rc = lv_checkpoint_write(ds, NULL, NULL, 0, &r, &err);
	assert_int_equal(rc, LV_EINVALID);
	assert_non_null(strstr(err.message, "_checkpoints"));
	assert_non_null(strstr(err.message, "symbolic link"));
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	assert_int_equal(cleanup_all(ds, &stats), LV_EINVALID);
	assert_same_tree("outside", out0);
	/* every manifest is still there: the cleanup stopped at its checkpoint */
	char **names = tu_list_dir(tu_fmt("%s/ds/_versions", base));
	assert_int_equal(tu_list_len(names), 7); /* 6 manifests + latest_version_hint.json */
	tu_free_list(names);
	free(out0);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/*
 * Data files that are symlinks to outside files (one in place of a file an old
 * version used, one stray): cleanup runs, removes what it should, and never
 * touches the targets; a symlink is not an object, so it is not deleted either.
 */
static void test_symlinked_data_files(void **state)
{
	(void)state;
	setup_tree();
	char **names = tu_list_dir(tu_fmt("%s/ds/data", base));
	assert_non_null(names[0]);
	/* the first data file (sorted) is replaced by a link to an outside copy */
	tu_sh(tu_fmt("mv '%s/ds/data/%s' '%s/outside/victim.lance' && ln -s '%s/outside/victim.lance' '%s/ds/data/%s'",
		 base, names[0], base, base, base, names[0]));
	tu_sh(tu_fmt("echo precious > '%s/outside/stray.lance' && ln -s '%s/outside/stray.lance' '%s/ds/data/stray.lance'",
		 base, base, base));
	tu_sh(tu_fmt("echo precious > '%s/outside/del.arrow' && ln -s '%s/outside/del.arrow' '%s/ds/_deletions/9-9-9.arrow'",
		 base, base, base));
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	lv_dataset *ds = open_path(tu_fmt("%s/ds", base));
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	CHECK(cleanup_all(ds, &stats));
	assert_true(stats.versions_removed >= 4);
	assert_same_tree("outside", out0);
	struct stat sb;
	assert_int_equal(lstat(tu_fmt("%s/ds/data/%s", base, names[0]), &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(lstat(tu_fmt("%s/ds/data/stray.lance", base), &sb), 0);
	assert_int_equal(lstat(tu_fmt("%s/ds/_deletions/9-9-9.arrow", base), &sb), 0);
	tu_free_list(names);
	free(out0);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/* Symlink loops: a directory that links to itself, and links back up inside data/. */
static void test_symlink_loops(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("ln -s ../data '%s/ds/data/up' && ln -s '%s/ds' '%s/ds/_indices/root' && "
		 "ln -s loop '%s/ds/loop' && rm -rf '%s/ds/_deletions' && ln -s _deletions '%s/ds/_deletions'",
		 base, base, base, base, base, base));
	lv_dataset *ds = open_path(tu_fmt("%s/ds", base));
	assert_int_equal(tu_count_versions(ds), 6);
	char *ds0 = snapshot(tu_fmt("%s/ds", base));
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	assert_int_equal(cleanup_all(ds, &stats), LV_EINVALID);
	assert_non_null(strstr(err.message, "_deletions"));
	assert_same_tree("ds", ds0);
	/* without the self-loop, the links inside data/ and _indices/ are just skipped */
	tu_sh(tu_fmt("rm '%s/ds/_deletions'", base));
	CHECK(cleanup_all(ds, &stats));
	struct stat sb;
	assert_int_equal(lstat(tu_fmt("%s/ds/data/up", base), &sb), 0);
	assert_int_equal(lstat(tu_fmt("%s/ds/_indices/root", base), &sb), 0);
	free(ds0);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/*
 * tree/<branch> as a symlink to a dataset outside: the branch cannot be read
 * through it, and a cleanup of the root leaves the outside dataset alone.
 */
static void test_symlinked_branch(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("cp -r '%s' '%s/outside/other' && mkdir '%s/ds/tree' && ln -s '%s/outside/other' '%s/ds/tree/feat'",
		 tu_fixture("lance8/t.lance"), base, base, base, base));
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	lv_dataset *br = NULL;
	lv_open_options o = LV_OPEN_OPTIONS_INIT;
	o.branch = "feat";
	CHECK(lv_dataset_open(&br, tu_fmt("%s/ds", base), &o, &err));
	lv_version_list *l = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	assert_int_equal(lv_versions(&l, br, &rep, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "tree/feat"));
	lv_dataset_free(br);
	lv_dataset *ds = open_path(tu_fmt("%s/ds", base));
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	/* an unregistered directory under tree/ is not a branch: skipped, the cleanup runs */
	CHECK(cleanup_all(ds, &stats));
	assert_same_tree("outside", out0);
	/* a registered branch whose directory is a symlink: its manifests (which may use our
	 * files) cannot be read, so the cleanup refuses before deleting anything */
	tu_sh(tu_fmt("mkdir -p '%s/ds/_refs/branches' && printf '{\"parentBranch\": null, \"parentVersion\": 6, "
		 "\"createAt\": 1, \"manifestSize\": 1}' > '%s/ds/_refs/branches/feat.json'", base, base));
	char *ds0 = snapshot(tu_fmt("%s/ds", base));
	assert_int_equal(cleanup_all(ds, &stats), LV_EINVALID);
	assert_non_null(strstr(err.message, "branch feat"));
	assert_non_null(strstr(err.message, "symbolic link"));
	assert_same_tree("ds", ds0);
	free(ds0);
	assert_same_tree("outside", out0);
	free(out0);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/* The dataset root itself may be reached through a symlink (resolved once, at open). */
static void test_symlinked_root_is_fine(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("ln -s '%s/ds' '%s/link.lance'", base, base));
	lv_dataset *ds = open_path(tu_fmt("%s/link.lance", base));
	assert_int_equal(tu_count_versions(ds), 6);
	lv_dataset_free(ds);
	/* the root is the link's target, resolved as realpath does (through a link in the middle
	 * of the path too, and with "." and ".." in it) */
	tu_sh(tu_fmt("mkdir -p '%s/x/y' && ln -s '%s' '%s/x/y/up'", base, base, base));
	char *real = realpath(tu_fmt("%s/ds", base), NULL);
	assert_non_null(real);
	/* and without any link, where the path is its own name once "//", "." and ".." are gone;
	 * but a ".." after a link is the link target's parent, not the lexical one */
	const char *b = strrchr(base, '/') + 1;
	const char *ways[] = { "%s/link.lance", "%s/x/y/up/link.lance", "%s/x/../x/y/./up/ds/",
			       "%s/x/y/../../ds", "/%s//./ds/", "%s/x/y/up/../%s/ds" };
	for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
		lv_storage *st = NULL;
		CHECK(lv_storage_open(&st, tu_fmt(ways[i], base, b), NULL, &err));
		char *want = tu_fmt("file://%s", real);
		assert_string_equal(lv_storage_describe(st), want);
		lv_storage_free(st);
	}
	free(real);
	tu_rmrf(base);
}

/* Storage-level: every operation refuses a path through a symlinked directory. */
static void test_storage_ops_refuse_links(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("mkdir -p '%s/outside/d' && echo secret > '%s/outside/d/f' && ln -s '%s/outside/d' '%s/ds/lnk' && "
		 "ln -s '%s/outside/d/f' '%s/ds/flink'", base, base, base, base, base, base));
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	lv_buf b = { 0 };
	uint64_t sz;
	assert_int_equal(lv_storage_read(st, "lnk/f", &b, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "'lnk' is a symbolic link"));
	assert_int_equal(lv_storage_head(st, "lnk/f", &sz, NULL, &err), LV_EINVALID);
	assert_int_equal(lv_storage_write(st, "lnk/f", "x", 1, &err), LV_EINVALID);
	assert_int_equal(lv_storage_write(st, "lnk/new", "x", 1, &err), LV_EINVALID);
	assert_int_equal(lv_storage_create(st, "lnk/new", "x", 1, &err), LV_EINVALID);
	assert_int_equal(lv_storage_delete(st, "lnk/f", &err), LV_EINVALID);
	const char *one[] = { "lnk/f" };
	int rcs[1];
	if (lv_storage_delete_many(st, one, 1, rcs, &err) == 0)
		assert_true(rcs[0] < 0);
	assert_true(rcs[0] < 0);
	assert_int_equal(lv_storage_read(st, "flink", &b, &err), LV_EINVALID);
	assert_int_equal(lv_storage_head(st, "flink", &sz, NULL, &err), LV_EINVALID);
	/* overwriting or deleting the link itself touches only the link */
	CHECK(lv_storage_write(st, "flink", "mine", 4, &err));
	CHECK(lv_storage_delete(st, "flink", &err));
	assert_same_tree("outside", out0);
	free(out0);
	lv_storage_free(st);
	tu_rmrf(base);
}

/*
 * The local backend keeps the directory of a read or head open for the next ones (at most
 * 4,096 operations or 50 ms after its walk): a directory swapped for a symlink after it was
 * cached is never read through, a file only the link's target has is refused, and the swap
 * is seen once the entry's uses run out.
 */
static void test_dircache_swap_to_symlink(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("mkdir -p '%s/ds/d' && echo mine > '%s/ds/d/f'", base, base));
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	lv_buf b = { 0 };
	uint64_t sz;
	int64_t mt;
	CHECK(lv_storage_read(st, "d/f", &b, &err)); /* d/ is cached now */
	assert_memory_equal(b.ptr, "mine\n", 5);
	lv_buf_dispose(&b);
	tu_sh(tu_fmt("mv '%s/ds/d' '%s/ds/d.old' && mkdir '%s/outside/d' && echo secret > '%s/outside/d/f' && "
		 "echo secret > '%s/outside/d/only' && ln -s '%s/outside/d' '%s/ds/d'",
		 base, base, base, base, base, base, base));
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	/* a file only the target holds: not found in the cached directory, then the fresh walk
	 * meets the link */
	assert_int_equal(lv_storage_read(st, "d/only", &b, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "'d' is a symbolic link"));
	assert_int_equal(lv_storage_head(st, "d/only", &sz, &mt, &err), LV_EINVALID);
	/* the cached directory is the real one (now d.old, inside the root): never the target's
	 * bytes; within its bound of uses the link is met */
	int refused = 0;
	for (int i = 0; i < 4097 && !refused; i++) {
		int rc = lv_storage_read(st, "d/f", &b, &err);
		if (rc == 0) {
			assert_memory_equal(b.ptr, "mine\n", 5);
			lv_buf_dispose(&b);
		} else {
			assert_int_equal(rc, LV_EINVALID);
			refused = 1;
		}
	}
	assert_true(refused);
	assert_int_equal(lv_storage_head(st, "d/f", &sz, &mt, &err), LV_EINVALID);
	assert_same_tree("outside", out0);
	free(out0);
	lv_storage_free(st);
	tu_rmrf(base);
}

/* A cached directory replaced by a new one: a file only the new one holds is found (the
 * cache never answers "not found" without a fresh walk). */
static void test_dircache_dir_replaced(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("mkdir -p '%s/ds/d' && echo a > '%s/ds/d/a'", base, base));
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	lv_buf b = { 0 };
	uint64_t sz;
	int64_t mt;
	CHECK(lv_storage_read(st, "d/a", &b, &err));
	lv_buf_dispose(&b);
	tu_sh(tu_fmt("mv '%s/ds/d' '%s/ds/d.old' && mkdir '%s/ds/d' && echo bb > '%s/ds/d/b'", base, base,
		 base, base));
	CHECK(lv_storage_read(st, "d/b", &b, &err));
	assert_int_equal(b.size, 3);
	assert_memory_equal(b.ptr, "bb\n", 3);
	lv_buf_dispose(&b);
	CHECK(lv_storage_head(st, "d/b", &sz, &mt, &err));
	assert_int_equal(sz, 3);
	/* and the old directory's file is gone from d/ once the new one is walked */
	assert_int_equal(lv_storage_read(st, "d/a", &b, &err), LV_ENOTFOUND);
	lv_storage_free(st);
	tu_rmrf(base);
}

/* Counts the entries a listing gives. */
static int count_cb(const lv_list_entry *e, void *payload)
{
	(void)e;
	(*(int *)payload)++;
	return 0;
}

static int count_listed(lv_storage *st, const char *dir, bool names_only)
{
	int n = 0;
	if (names_only)
		CHECK(lv_storage_list_names(st, dir, count_cb, &n, &err));
	else
		CHECK(lv_storage_list(st, dir, false, count_cb, &n, &err));
	return n;
}

/* Paths a listing gives, "a|b|" in order. */
static int join_cb(const lv_list_entry *e, void *payload)
{
	lv__dbuf *b = payload;
	lv__dbuf_adds(b, e->path);
	lv__dbuf_adds(b, "|");
	return 0;
}

/* The listing's text, NUL-terminated. */
static const char *text(lv__dbuf *b)
{
	assert_int_equal(lv__dbuf_addc(b, 0), 0);
	b->len--;
	return (const char *)b->ptr;
}

/* lv__storage_list_subdirs(st, "_refs", {tags, branches}) into two strings (rcs, errs kept). */
static void list_refs(lv_storage *st, lv__dbuf *out, int *rcs, lv_error *errs)
{
	static const char *const subs[2] = { "tags", "branches" };
	for (int i = 0; i < 2; i++)
		lv__dbuf_init(&out[i], 0);
	void *const payloads[2] = { &out[0], &out[1] };
	CHECK(lv__storage_list_subdirs(st, "_refs", subs, 2, 1, join_cb, payloads, rcs, errs, &err));
}

/* The same two listed one by one (what every other store does). */
static void list_each(lv_storage *st, const char *dir, lv__dbuf *out)
{
	lv__dbuf_init(out, 0);
	CHECK(lv_storage_list(st, dir, false, join_cb, out, &err));
}

/*
 * Local disk lists _refs/tags and _refs/branches from one walk of _refs: the same paths in
 * the same order as two listings, through a sub-handle too; a missing _refs (even one missing
 * only in a root replaced since it was cached: the root's path is asked) lists both as
 * empty; a symlinked _refs, or a symlinked _refs/tags, is refused as a listing refuses it;
 * a file named _refs/branches lists as empty.
 */
static void test_list_subdirs(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("rm -r '%s/ds/_refs'", base)); /* the fixture's tag */
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	lv__dbuf got[2], want;
	int rcs[2];
	lv_error errs[2];
	list_refs(st, got, rcs, errs); /* none: the root is cached from here on */
	assert_int_equal(rcs[0], 0);
	assert_int_equal(rcs[1], 0);
	assert_int_equal(got[0].len + got[1].len, 0);
	lv__dbuf_dispose(&got[0]);
	lv__dbuf_dispose(&got[1]);
	tu_sh(tu_fmt("mv '%s/ds' '%s/ds.old' && cp -r '%s/ds.old' '%s/ds' && mkdir -p '%s/ds/_refs/tags' "
		 "'%s/ds/_refs/branches' && for t in b a c; do echo '{}' > \"%s/ds/_refs/tags/$t.json\"; "
		 "done && echo '{}' > '%s/ds/_refs/branches/f.json'",
		 base, base, base, base, base, base, base, base));
	list_refs(st, got, rcs, errs);
	assert_int_equal(rcs[0], 0);
	assert_int_equal(rcs[1], 0);
	assert_string_equal(text(&got[0]), "_refs/tags/a.json|_refs/tags/b.json|_refs/tags/c.json|");
	assert_string_equal(text(&got[1]), "_refs/branches/f.json|");
	list_each(st, "_refs/tags", &want);
	assert_string_equal(text(&got[0]), text(&want));
	lv__dbuf_dispose(&want);
	for (int i = 0; i < 2; i++)
		lv__dbuf_dispose(&got[i]);
	lv_storage *up = NULL, *sub = NULL; /* through a sub-handle: paths relative to it */
	CHECK(lv_storage_open(&up, base, NULL, &err));
	CHECK(lv_storage_sub(&sub, up, "ds", &err));
	list_refs(sub, got, rcs, errs);
	assert_string_equal(text(&got[0]), "_refs/tags/a.json|_refs/tags/b.json|_refs/tags/c.json|");
	for (int i = 0; i < 2; i++)
		lv__dbuf_dispose(&got[i]);
	lv_storage_free(sub);
	/* a sub-handle whose prefix leaves no room for "_refs/tags": each is refused as
	 * lv_storage_list refuses it (not answered "empty" by the one walk) */
	char deep[4100];
	size_t dl = 0;
	while (dl + 201 < 4088) {
		memset(deep + dl, 'd', 200);
		deep[dl + 200] = '/';
		dl += 201;
	}
	memset(deep + dl, 'd', 4088 - dl);
	deep[4088] = 0; /* + "/_refs" fits in 4,096 bytes, + "/_refs/tags" does not */
	CHECK(lv_storage_sub(&sub, up, deep, &err));
	list_refs(sub, got, rcs, errs);
	int each = lv_storage_list(sub, "_refs/tags", false, join_cb, &want, &errs[1]);
	assert_int_equal(each, LV_EINVALID);
	assert_int_equal(rcs[0], each);
	for (int i = 0; i < 2; i++)
		lv__dbuf_dispose(&got[i]);
	lv_storage_free(sub);
	lv_storage_free(up);
	tu_sh(tu_fmt("rm -r '%s/ds/_refs/branches' && echo x > '%s/ds/_refs/branches' && "
		 "mv '%s/ds/_refs/tags' '%s/outside/tags' && ln -s '%s/outside/tags' '%s/ds/_refs/tags'",
		 base, base, base, base, base, base));
	list_refs(st, got, rcs, errs);
	assert_int_equal(rcs[0], LV_EINVALID);
	assert_non_null(strstr(errs[0].message, "symbolic link"));
	assert_int_equal(rcs[1], 0);
	assert_int_equal(got[0].len + got[1].len, 0);
	for (int i = 0; i < 2; i++)
		lv__dbuf_dispose(&got[i]);
	tu_sh(tu_fmt("mv '%s/ds/_refs' '%s/outside/refs' && ln -s '%s/outside/refs' '%s/ds/_refs'", base,
		 base, base, base));
	list_refs(st, got, rcs, errs);
	assert_int_equal(rcs[0], LV_EINVALID);
	assert_int_equal(rcs[1], LV_EINVALID);
	assert_non_null(strstr(errs[1].message, "symbolic link"));
	for (int i = 0; i < 2; i++)
		lv__dbuf_dispose(&got[i]);
	lv_storage_free(st);
	tu_rmrf(tu_fmt("%s/ds.old", base));
	tu_rmrf(base);
}

/*
 * Listings open their directory from the cached root (local_dircache.c).  The dataset root
 * replaced by a new directory that has _refs/tags: a listing that finds _refs missing in the
 * cached (old) root confirms it from the root's path, finds it there, and walks afresh, so
 * it never answers "no tags" that the new root holds.  Fails if a "missing" met through the
 * cache is trusted without that check.
 */
static void test_dircache_list_root_replaced(void **state)
{
	(void)state;
	snprintf(base, sizeof base, "%s", tu_tmpdir());
	tu_sh(tu_fmt("mkdir -p '%s/ds/d' && echo a > '%s/ds/d/a'", base, base));
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	for (int names = 0; names < 2; names++) {
		assert_int_equal(count_listed(st, "d", names), 1); /* the root is cached now */
		assert_int_equal(count_listed(st, "_refs/tags", names), 0);
	}
	tu_sh(tu_fmt("mv '%s/ds' '%s/ds.old' && mkdir -p '%s/ds/_refs/tags' && echo '{}' > "
		 "'%s/ds/_refs/tags/v1.json' && echo '{}' > '%s/ds/_refs/tags/v2.json'",
		 base, base, base, base, base));
	assert_int_equal(count_listed(st, "_refs/tags", false), 2);
	assert_int_equal(count_listed(st, "_refs/tags", true), 2);
	lv_storage_free(st);
	tu_rmrf(tu_fmt("%s/ds.old", base));
	tu_rmrf(base);
}

/* A directory swapped for a symlink after the root was cached by a listing: the next listing
 * of it is refused (it is opened from the cached root with O_NOFOLLOW), nothing outside is
 * listed. */
static void test_dircache_list_swap_to_symlink(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("mkdir -p '%s/ds/d' && echo a > '%s/ds/d/a'", base, base));
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	assert_int_equal(count_listed(st, "d", false), 1);
	tu_sh(tu_fmt("mv '%s/ds/d' '%s/ds/d.old' && mkdir '%s/outside/d' && echo s > '%s/outside/d/x' && "
		 "echo s > '%s/outside/d/y' && ln -s '%s/outside/d' '%s/ds/d'",
		 base, base, base, base, base, base, base));
	int n = 0;
	assert_int_equal(lv_storage_list(st, "d", false, count_cb, &n, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "symbolic link"));
	assert_int_equal(lv_storage_list_names(st, "d", count_cb, &n, &err), LV_EINVALID);
	assert_int_equal(n, 0);
	lv_storage_free(st);
	tu_rmrf(base);
}

/* A directory cached by a read, then moved outside the root and replaced by a link to it: a
 * listing below it is refused (listings take only the root from the cache and walk the rest
 * with O_NOFOLLOW), never made through the cached descriptor of the moved directory. */
static void test_dircache_list_not_through_moved(void **state)
{
	(void)state;
	setup_tree();
	tu_sh(tu_fmt("mkdir -p '%s/ds/a/b/c' && echo f > '%s/ds/a/b/f' && echo g > '%s/ds/a/b/c/g'", base,
		 base, base));
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, tu_fmt("%s/ds", base), NULL, &err));
	lv_buf b = { 0 };
	CHECK(lv_storage_read(st, "a/b/f", &b, &err)); /* a/b is cached now */
	lv_buf_dispose(&b);
	tu_sh(tu_fmt("mv '%s/ds/a/b' '%s/outside/b' && echo s > '%s/outside/b/c/secret' && "
		 "ln -s '%s/outside/b' '%s/ds/a/b'", base, base, base, base, base));
	int n = 0;
	assert_int_equal(lv_storage_list(st, "a/b/c", false, count_cb, &n, &err), LV_EINVALID);
	assert_non_null(strstr(err.message, "symbolic link"));
	assert_int_equal(lv_storage_list_names(st, "a/b/c", count_cb, &n, &err), LV_EINVALID);
	assert_int_equal(n, 0);
	lv_storage_free(st);
	tu_rmrf(base);
}

/* A cleanup on a handle whose directories were cached by a read, then swapped for links:
 * refused before anything changes, nothing outside touched. */
static void test_dircache_then_cleanup(void **state)
{
	(void)state;
	setup_tree();
	lv_dataset *ds = open_path(tu_fmt("%s/ds", base));
	assert_int_equal(tu_count_versions(ds), 6); /* reads _versions/ and _transactions/ files */
	move_out("_transactions");
	move_out("_versions");
	char *out0 = snapshot(tu_fmt("%s/outside", base));
	char *ds0 = snapshot(tu_fmt("%s/ds", base));
	lv_cleanup_stats stats = LV_CLEANUP_STATS_INIT;
	assert_int_equal(cleanup_all(ds, &stats), LV_EINVALID);
	assert_non_null(strstr(err.message, "symbolic link"));
	assert_same_tree("outside", out0);
	assert_same_tree("ds", ds0);
	free(out0);
	free(ds0);
	lv_dataset_free(ds);
	tu_rmrf(base);
}

/* A FIFO where the transaction file should be: an error, not a hang. */
static void test_fifo_transaction_file(void **state)
{
	(void)state;
	snprintf(base, sizeof base, "%s", tu_tmpdir());
	lv_storage *st = NULL;
	CHECK(lv_storage_open(&st, base, NULL, &err));
	synth_commit c = { .version = 1, .ts_ms = 1700000001000, .txn_file_only = 1 };
	CHECK(synth_write(st, &c));
	char **names = tu_list_dir(tu_fmt("%s/_transactions", base));
	assert_non_null(names[0]);
	char *txn = tu_fmt("%s/_transactions/%s", base, names[0]);
	assert_int_equal(unlink(txn), 0);
	assert_int_equal(mkfifo(txn, 0600), 0);
	lv_dataset *ds = tu_open(st);
	lv_version_list *l = NULL;
	lv_history_report rep = LV_HISTORY_REPORT_INIT;
	assert_true(lv_versions(&l, ds, &rep, &err) < 0);
	assert_non_null(strstr(err.message, names[0]));
	lv_dataset_free(ds);
	lv_storage_free(st);
	tu_free_list(names);
	tu_rmrf(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "test_symlinked_data_dir", test_symlinked_dir, NULL, NULL, &dirs[0] },
		{ "test_symlinked_deletions_dir", test_symlinked_dir, NULL, NULL, &dirs[1] },
		{ "test_symlinked_indices_dir", test_symlinked_dir, NULL, NULL, &dirs[2] },
		{ "test_symlinked_transactions_dir", test_symlinked_dir, NULL, NULL, &dirs[3] },
		{ "test_symlinked_versions_dir", test_symlinked_dir, NULL, NULL, &dirs[4] },
		cmocka_unit_test(test_symlinked_checkpoints_dir),
		cmocka_unit_test(test_symlinked_data_files),
		cmocka_unit_test(test_symlink_loops),
		cmocka_unit_test(test_symlinked_branch),
		cmocka_unit_test(test_symlinked_root_is_fine),
		cmocka_unit_test(test_storage_ops_refuse_links),
		cmocka_unit_test(test_fifo_transaction_file),
		cmocka_unit_test(test_dircache_swap_to_symlink),
		cmocka_unit_test(test_dircache_dir_replaced),
		cmocka_unit_test(test_dircache_list_root_replaced),
		cmocka_unit_test(test_list_subdirs),
		cmocka_unit_test(test_dircache_list_swap_to_symlink),
		cmocka_unit_test(test_dircache_list_not_through_moved),
		cmocka_unit_test(test_dircache_then_cleanup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
