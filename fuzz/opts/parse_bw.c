// SPDX-License-Identifier: MIT
/* bw's option parsing alone; see parse.h. */
#include "bw.c"
#include "parse.h"

int fuzz_parse_bw(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct bw_cli b = { 0 };
	enum perf_role role;

	return bw_parse(argc, argv, &g, &b, &role);
}
