// SPDX-License-Identifier: MIT
/*
 * rdmakit: main(), the global options and the command table that drives
 * dispatch, `rdmakit help` and the completions' command list.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"

static const struct cmd_info commands[] = {
	{ "bw", cmd_bw, "RDMA bandwidth test (perftest ib_*_bw vocabulary)" },
	{ "lat", cmd_lat, "RDMA latency test with percentiles and histograms" },
	{ "incast", cmd_incast, "many-to-one and all-to-all fabric stress with PFC/ECN deltas" },
	{ "capture", cmd_capture, "capture and decode RoCEv2/InfiniBand traffic, per-QP diagnosis" },
	{ "top", cmd_top, "live monitor of RDMA port, PFC, ECN/CNP and retransmit counters" },
	{ "plot", cmd_plot, "draw bw sweeps, latency distributions and QP sequence graphs" },
	{ "probe", cmd_probe, "test a remote RoCE stack against the IBTA transport specification" },
	{ "devices", cmd_devices, "list RDMA devices, ports and GIDs, and soft-engine addresses" },
	{ "help", cmd_help, "show help for rdmakit or one command" },
	{ "version", cmd_version, "show the version and build features" },
	{ NULL, NULL, NULL },
};

const struct cmd_info *cmd_table(void)
{
	return commands;
}

const struct cmd_info *cmd_find(const char *name)
{
	for (const struct cmd_info *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static int not_available(const struct cmd_info *c)
{
	return runtime_error(c->name, "not available yet in this build of rdmakit %s; "
			     "'rdmakit help' lists the commands that are", RDMAKIT_VERSION);
}

/* Runs a command, or explains that it does not exist or is not built. */
static int dispatch(int argc, char **argv, const struct global_opts *g)
{
	const struct cmd_info *c = cmd_find(argv[0]);

	if (!c)
		return usage_error(NULL, "'%s' is not a command; see 'rdmakit help'", argv[0]);
	if (!c->fn)
		return not_available(c);
	return c->fn(argc, argv, g);
}

/* `rdmakit help CMD` is `rdmakit CMD --help`, so both say the same. */
int cmd_help_for(const char *name, const struct global_opts *g)
{
	char *argv[] = { (char *)name, (char *)"--help", NULL };
	const struct cmd_info *c = cmd_find(name);

	if (!c)
		return usage_error("help", "'%s' is not a command; see 'rdmakit help'", name);
	if (!c->fn)
		return not_available(c);
	return c->fn(2, argv, g);
}

static int no_command_json(const struct global_opts *g)
{
	struct report r;

	report_init(&r, "help", RDMAKIT_VERSION, true, g->pretty, stdout, stderr);
	report_error(&r, "no command given; 'rdmakit help' lists them");
	report_finish(&r);
	return EXIT_USAGE;
}

static const struct option global_longs[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct global_opts g = { 0 };
	char *help_argv[] = { (char *)"help", NULL };
	char *version_argv[] = { (char *)"version", NULL };
	int c;

	opterr = 0;
	/* '+': stop at the command word; what follows belongs to it. */
	while ((c = getopt_long(argc, argv, "+jhV", global_longs, NULL)) != -1) {
		switch (c) {
		case 'j':
			g.json = true;
			break;
		case 'P':
			g.json = g.pretty = true;
			break;
		case 'h':
			/* `rdmakit -h CMD` is `rdmakit help CMD`. */
			if (optind < argc)
				return cmd_help_for(argv[optind], &g);
			return cmd_help(1, help_argv, &g);
		case 'V':
			if (optind < argc)
				return usage_error(NULL, "unexpected argument '%s' after --version",
						   argv[optind]);
			return cmd_version(1, version_argv, &g);
		default:
			return usage_error(NULL, "unknown option '%s'; global options are "
					   "-j/--json, --pretty, -h/--help, -V/--version",
					   argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		/* A command is required.  In JSON mode say so in a document. */
		if (g.json)
			return no_command_json(&g);
		cmd_help(1, help_argv, &g);
		return EXIT_USAGE;
	}
	return dispatch(argc - optind, argv + optind, &g);
}
