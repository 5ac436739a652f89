// SPDX-License-Identifier: MIT
/* lat's option parsing alone; see parse.h. */
#include "lat.c"
#include "parse.h"

int fuzz_parse_lat(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct lat_cli l = { 0 };
	enum perf_role role;

	return lat_parse(argc, argv, &g, &l, &role);
}
