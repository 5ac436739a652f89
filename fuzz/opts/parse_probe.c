// SPDX-License-Identifier: MIT
/* probe's option parsing alone; see parse.h. */
#include "probe.c"
#include "parse.h"

int fuzz_parse_probe(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct probe_cli p = PROBE_CLI_DEFAULTS;
	int first, rc;

	rc = opts_parse(&probe_usage, argc, argv, &g, probe_opt, &p, &first);
	if (rc || (p.list && argc == first && !p.serve))
		return rc < 0 ? 0 : rc;
	return probe_checks(&p, argc - first);
}
