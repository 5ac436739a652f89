// SPDX-License-Identifier: MIT
/* incast's option parsing alone; see parse.h. */
#include "incast.c"
#include "parse.h"

int fuzz_parse_incast(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct incast_cli *x = calloc(1, sizeof(*x));
	char host[256];
	int first, rc;

	if (!x)
		return EXIT_RUNTIME;
	incast_cli_init(x);
	rc = opts_parse(&incast_usage, argc, argv, &g, incast_opt, x, &first);
	if (!rc)
		rc = finish(x, argc, argv, first, host, sizeof(host));
	free(x);
	return rc;
}
