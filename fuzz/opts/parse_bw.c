// SPDX-License-Identifier: MIT
/* bw's option parsing alone; see parse.h. */
#include "bw.c"
#include "parse.h"

int fuzz_parse_bw(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct bw_cli b = { 0 };
	enum perf_role role;
	int first, rc;

	perf_cli_init(&b.c, "bw", false);
	rc = opts_parse(&bw_usage, argc, argv, &g, bw_opt, &b, &first);
	if (rc)
		return rc;
	return perf_cli_finish(&b.c, argc, argv, first, &role);
}
