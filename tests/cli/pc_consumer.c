/*
 * A program outside the tree, built against an installed lancever with nothing but
 * `pkg-config --cflags --libs lancever` (tests/cli/test_install.sh): prints the library
 * version and the number of live versions of DATASET.  The installed headers' version
 * (lancever/version.h, generated) must be the library's, and a report is set up with its
 * init function (the struct rule).
 */
#include <stdio.h>
#include <string.h>

#include <lancever/lancever.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pc_consumer DATASET\n");
		return 2;
	}
	lv_error err = { 0 };
	lv_dataset *ds = NULL;
	lv_version_list *l = NULL;
	lv_history_report rep;
	if (strcmp(lv_version(), LV_VERSION_TEXT) != 0 || lv_version_number() != LV_VERSION_NUMBER) {
		fprintf(stderr, "pc_consumer: headers %s, library %s\n", LV_VERSION_TEXT, lv_version());
		return 1;
	}
	if (lv_history_report_init(&rep, LV_HISTORY_REPORT_VERSION) < 0 ||
	    lv_dataset_open(&ds, argv[1], NULL, &err) < 0 || lv_versions(&l, ds, &rep, &err) < 0) {
		fprintf(stderr, "pc_consumer: %s\n", err.message);
		lv_dataset_free(ds);
		return 1;
	}
	printf("lancever %s: %zu live versions\n", lv_version(), lv_version_list_count(l));
	lv_version_list_free(l);
	lv_dataset_free(ds);
	return 0;
}
