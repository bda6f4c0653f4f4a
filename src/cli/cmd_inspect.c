/* Placeholder until the Lance file module lands: inspect is not available yet. */
#include "cli.h"

int lvcli_inspect(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "lancever: inspect is not implemented yet\n");
	return 1;
}
