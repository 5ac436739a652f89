// SPDX-License-Identifier: MIT
/* devices' option parsing alone; see parse.h. */
#include "devices.c"
#include "parse.h"

int fuzz_parse_devices(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct devices_opts o = { 0 };
	int first, rc;

	rc = opts_parse(&devices_usage, argc, argv, &g, devices_opt, &o, &first);
	if (rc)
		return rc;
	if (first < argc)
		return EXIT_USAGE;
	return o.ib_dev && o.soft ? EXIT_USAGE : 0;
}
