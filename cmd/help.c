// SPDX-License-Identifier: MIT
/* rdmakit help [COMMAND]: the overview, generated from the command table. */
#include <jansson.h>

#include "cmd.h"
#include "report.h"

static const struct opt_spec help_opts[] = { OPTS_END };

static const struct cmd_usage help_usage = {
	.cmd = "help",
	.synopsis = "[COMMAND]",
	.description = "Show the list of commands, or the options of one command\n"
		       "(the same text as 'rdmakit COMMAND --help').",
	.opts = help_opts,
};

static void print_overview(FILE *out)
{
	fprintf(out,
		"Usage: rdmakit [-j|--json] [--pretty] COMMAND [OPTIONS] [ARGS]\n"
		"       rdmakit help [COMMAND]\n"
		"       rdmakit -V|--version\n\n"
		"RDMA bandwidth, latency and incast tests, RoCEv2/InfiniBand capture and live\n"
		"counters, on RDMA NICs (verbs) or a built-in userspace RoCEv2 engine.\n\n"
		"Commands:\n");
	for (const struct cmd_info *c = cmd_table(); c->name; c++)
		fprintf(out, "  %-9s %s%s\n", c->name, c->summary,
			c->fn ? "" : " (not available yet)");
	fprintf(out,
		"\nGlobal options:\n"
		"  -j, --json      print JSON (one document, or one object per line when streaming)\n"
		"      --pretty    indent JSON output (implies --json)\n"
		"  -h, --help      show this help\n"
		"  -V, --version   show the version\n\n"
		"Run 'rdmakit help COMMAND' or 'rdmakit COMMAND --help' for a command's options.\n"
		"Exit status: 0 ok, 1 check failed, 2 usage error, 3 runtime error.\n");
}

int cmd_help(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct report r;
	int first, rc;

	rc = opts_parse(&help_usage, argc, argv, &g, NULL, NULL, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (argc - first > 1)
		return usage_error("help", "too many arguments; usage: rdmakit help [COMMAND]");
	if (argc - first == 1)
		return cmd_help_for(argv[first], &g);
	if (!g.json) {
		print_overview(stdout);
		return EXIT_OK;
	}
	/* JSON: the command table, for scripts and completions. */
	report_init(&r, "help", RDMAKIT_VERSION, true, g.pretty, stdout, stderr);
	for (const struct cmd_info *c = cmd_table(); c->name; c++)
		report_result(&r, json_pack("{s:s, s:s, s:b}", "name", c->name, "summary",
					    c->summary, "available", c->fn != NULL));
	report_finish(&r);
	return EXIT_OK;
}
