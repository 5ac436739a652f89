// SPDX-License-Identifier: MIT
/* capture's option parsing alone; see parse.h. */
#include "capture.c"
#include "parse.h"

int fuzz_parse_capture(int argc, char **argv)
{
	struct global_opts g = { 0 };
	struct capture_opts o = { .port = ROCEV2_UDP_PORT };
	int first, rc;

	rc = opts_parse(&capture_usage, argc, argv, &g, capture_opt, &o, &first);
	if (rc)
		return rc;
	rc = validate(&o);
	if (rc)
		return rc;
	free(build_filter(argc - first, argv + first, &o));
	return 0;
}
