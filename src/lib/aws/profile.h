/*
 * AWS shared configuration files: ~/.aws/credentials and ~/.aws/config
 * (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), one profile of them
 * (AWS_PROFILE, else "default"; "[profile NAME]" in the config file, "[NAME]"
 * in the credentials file).  A key found in the credentials file wins over the
 * same key in the config file, as in the AWS SDKs.  Indented sub-properties
 * ("s3 =\n  addressing_style = path") are skipped.  Values may be secrets:
 * they never reach a message.
 */
#ifndef LV_AWS_PROFILE_H
#define LV_AWS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "lancever/common.h"

typedef struct lv__aws_profile {
	char *name;          /* the profile asked for */
	bool named;          /* it was named (AWS_PROFILE or an option), not the default */
	char *cred_path, *config_path; /* the two files (NULL if no HOME and no variable) */
	bool found;          /* a section of that name exists in either file */
	size_t n, cap;
	char **keys, **vals;
	const char **files;  /* which file each key came from (cred_path or config_path) */
} lv__aws_profile;

/*
 * Loads profile `name` (NULL: AWS_PROFILE, else "default") from the two files.
 * Missing files are not an error; a file that is not a regular file, is over
 * 1 MiB or cannot be read is (LV_EINVALID/LV_EIO naming the file).
 */
int lv__aws_profile_load(lv__aws_profile *p, const char *name, lv_error *err);
void lv__aws_profile_dispose(lv__aws_profile *p);

/* The value of `key` in the profile (NULL if absent); *file (may be NULL) gets its file. */
const char *lv__aws_profile_get(const lv__aws_profile *p, const char *key, const char **file);

/*
 * Pure: adds the keys of section `section` of INI text[0, len) to p, keeping keys it
 * already has (so the file read first wins).  Sets p->found if the section exists.
 */
int lv__aws_ini_section(lv__aws_profile *p, const char *text, size_t len, const char *section,
			const char *file, lv_error *err);

#endif
