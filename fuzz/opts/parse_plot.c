// SPDX-License-Identifier: MIT
/* plot's option parsing alone; see parse.h. */
#include "plot.c"
#include "parse.h"

int fuzz_parse_plot(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct plot_cli o = { .width = 1000, .height = 640, .po = { .qp = -1 } };
	int first, rc;

	rc = opts_parse(&plot_usage, argc, argv, &g, plot_opt, &o, &first);
	return rc ? rc : plot_checks(&o, &g, argc - first);
}
