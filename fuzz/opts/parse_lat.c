// SPDX-License-Identifier: MIT
/* lat's option parsing alone; see parse.h. */
#include "lat.c"
#include "parse.h"

int fuzz_parse_lat(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct lat_cli l = { 0 };
	enum perf_role role;
	int first, rc;

	perf_cli_init(&l.c, "lat", true);
	rc = opts_parse(&lat_usage, argc, argv, &g, lat_opt, &l, &first);
	if (rc)
		return rc;
	rc = perf_cli_finish(&l.c, argc, argv, first, &role);
	if (rc)
		return rc;
	return l.c.o.qps != 1 ? EXIT_USAGE : 0;
}
