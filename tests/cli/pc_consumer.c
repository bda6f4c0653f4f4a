/*
 * A program outside the tree, built against an installed lancever with nothing but
 * `pkg-config --cflags --libs lancever` (tests/cli/test_install.sh): prints the library
 * version and the number of live versions of DATASET.
 */
#include <stdio.h>

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
	if (lv_dataset_open(&ds, argv[1], NULL, &err) < 0 || lv_versions(&l, ds, NULL, &err) < 0) {
		fprintf(stderr, "pc_consumer: %s\n", err.message);
		lv_dataset_free(ds);
		return 1;
	}
	printf("lancever %s: %zu live versions\n", lv_version_string(), lv_version_list_count(l));
	lv_version_list_free(l);
	lv_dataset_free(ds);
	return 0;
}
