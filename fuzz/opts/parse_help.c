// SPDX-License-Identifier: MIT
/*
 * help's and version's option parsing alone; see parse.h.  help.c needs
 * the command table, so rdmakit.c comes along (its main renamed).
 */
#define main rdmakit_main
#include "rdmakit.c"
#undef main
#include "help.c"
#include "version.c"
#include "parse.h"

int rdmakit_main(int argc, char **argv);

int fuzz_parse_help(int argc, char **argv)
{
	struct global_opts g = { 0 };
	int first, rc;

	rc = opts_parse(&help_usage, argc, argv, &g, NULL, NULL, &first);
	if (rc)
		return rc;
	if (argc - first > 1)
		return EXIT_USAGE;
	/* `help CMD` is CMD --help: the command must exist. */
	return argc - first == 1 && !cmd_find(argv[first]) ? EXIT_USAGE : 0;
}

int fuzz_parse_version(int argc, char **argv)
{
	struct global_opts g = { 0 };
	int first;

	return opts_parse(&version_usage, argc, argv, &g, NULL, NULL, &first);
}
