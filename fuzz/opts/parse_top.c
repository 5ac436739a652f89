// SPDX-License-Identifier: MIT
/* top's option parsing alone; see parse.h. */
#include "top.c"
#include "parse.h"

int fuzz_parse_top(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct top_opts o = { .delay_s = 1.0 };
	int first, rc;

	rc = opts_parse(&top_usage, argc, argv, &g, top_opt, &o, &first);
	if (rc)
		return rc;
	for (int i = first; i < argc; i++) {
		if (o.ndevices == TOP_MAX_NAMES || !argv[i][0] || argv[i][0] == '/')
			return EXIT_USAGE;
		o.devices[o.ndevices++] = argv[i];
	}
	return 0;
}
