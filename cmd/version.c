// SPDX-License-Identifier: MIT
/* rdmakit version: the version and what this build can do. */
#include <jansson.h>
#include <pcap/pcap.h>

#include "cmd.h"
#include "crc32.h"
#include "transport.h"
#include "report.h"

static const struct opt_spec version_opts[] = { OPTS_END };

/* Whether the verbs engine can run here (an RDMA device exists). */
static bool verbs_here(void)
{
	return xport_engine_available("verbs");
}

static const struct cmd_usage version_usage = {
	.cmd = "version",
	.synopsis = "[--json] [--pretty]",
	.description = "Show rdmakit's version, the CRC-32 implementation in use and\n"
		       "the library versions it was built with.",
	.opts = version_opts,
};

int cmd_version(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct report r;
	int first, rc;

	rc = opts_parse(&version_usage, argc, argv, &g, NULL, NULL, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (first < argc)
		return usage_error("version", "unexpected argument '%s'; usage: rdmakit version [--json] [--pretty]",
				   argv[first]);
	if (!g.json) {
		printf("rdmakit %s\n", RDMAKIT_VERSION);
		printf("crc32: %s\n", crc32_impl_name());
		printf("engines: soft%s\n", verbs_here() ? ", verbs" : " (verbs: no RDMA devices here)");
		printf("libpcap: %s\n", pcap_lib_version());
		printf("jansson: %s\n", JANSSON_VERSION);
		return EXIT_OK;
	}
	report_init(&r, "version", RDMAKIT_VERSION, true, g.pretty, stdout, stderr);
	report_result(&r, json_pack("{s:s, s:s, s:s, s:s, s:{s:b, s:b}}", "version",
				    RDMAKIT_VERSION, "crc32", crc32_impl_name(), "libpcap",
				    pcap_lib_version(), "jansson", JANSSON_VERSION, "engines", "soft",
				    1, "verbs", verbs_here()));
	report_finish(&r);
	return EXIT_OK;
}
