/*
 * Tag and branch reference files (_refs/tags/{name}.json and
 * _refs/branches/{name with '/' as %2F}.json): pure parsers over bytes (the loader
 * that lists and reads them through a storage handle is core/refs.h).
 */
#ifndef LV_FORMAT_REFS_H
#define LV_FORMAT_REFS_H

#include "lancever/refs.h"

/* A ref file larger than this is refused (LV_ELIMIT): real ones are a few hundred bytes. */
#define LV_REFS_FILE_MAX ((size_t)1 << 20)

#define LV_REFS_TAGS_DIR "_refs/tags"
#define LV_REFS_BRANCHES_DIR "_refs/branches"

/*
 * Parses one tag file.  `name` (the file name without ".json") is copied into
 * out->name.  Accepts the older {"branch","version","manifestSize"} shape and
 * the Lance 8 one with createdAt/updatedAt/metadata; unknown keys are ignored.
 * LV_ECORRUPT on malformed JSON or wrong types, LV_ELIMIT if size > LV_REFS_FILE_MAX.
 * On success release with lv__tag_dispose(); on failure *out is zeroed.
 */
int lv__tag_parse(const uint8_t *data, size_t size, const char *name, lv_tag *out,
		  lv_error *err);
void lv__tag_dispose(lv_tag *t);

/* Lance's version hint, _versions/latest_version_hint.json: a JSON object {"version": N} (pylance
 * 14.0.2 writes exactly that on a local file system).  LV_ECORRUPT on anything else. */
#define LV_VERSION_HINT_PATH "_versions/latest_version_hint.json"
int lv__version_hint_parse(const uint8_t *data, size_t size, const char *name, uint64_t *version,
			   lv_error *err);

/* Parses one branch file; `name` is the decoded branch name ("feat/x").  As lv__tag_parse. */
int lv__branch_parse(const uint8_t *data, size_t size, const char *name, lv_branch *out,
		     lv_error *err);
void lv__branch_dispose(lv_branch *b);

/*
 * The tag or branch name a ref file stem stands for: Lance names the file through
 * object_store's path encoding, which percent-encodes '/', '%', controls, every byte of a
 * non-ASCII character and a few more ("feat%2Fx" -> "feat/x", "%C3%BCn%C3%AFcode" ->
 * "ünïcode").  Exactly those escapes are decoded (hex in either case); any other '%' is
 * kept as it is.  malloc'ed, NULL on OOM.
 */
char *lv__ref_name_decode(const char *stem, size_t n);

/*
 * The inverse of lv__ref_name_decode: the file stem Lance writes for a tag or branch name
 * (every byte lv__ref_name_decode decodes written as %XX, upper-case hex: "feat/x" ->
 * "feat%2Fx", "ünï" -> "%C3%BCn%C3%AF").  malloc'ed, NULL on OOM.
 */
char *lv__ref_name_encode(const char *name, size_t n);

/* lancever's own bound on a branch name, in bytes (Lance has none; file systems do). */
#define LV_BRANCH_NAME_MAX 1024
/*
 * Is name[0, n) a branch name Lance accepts?  Lance's rules: not empty, no leading or trailing
 * '/', no "//", no "..", no '\', not ending in ".lock"; each '/'-separated segment made of
 * Unicode alphanumerics (as Rust's char::is_alphanumeric: lv__unicode_alnum) and '.', '-',
 * '_'.  Also refused: a segment "." (Lance's path parser refuses it), bytes that are not
 * UTF-8 (so a NUL or any control character is refused too), more than LV_BRANCH_NAME_MAX
 * bytes.  0, or LV_EINVALID with a message saying which rule.
 */
int lv__branch_name_check(const char *name, size_t n, lv_error *err);

#endif
