// SPDX-License-Identifier: MIT
/*
 * rdmakit bw: bandwidth, perftest's ib_*_bw in one command.  The client
 * sets the test; the server adopts it; --loopback runs both ends here.
 */
#include <stdlib.h>
#include <string.h>

#include "perf_cli.h"

enum {
	OPT_INTERVAL = OPT_PERF_CMD,
	OPT_UNIT,
	OPT_EXPECT_GBPS,
	OPT_EXPECT_MPPS,
};

static const struct opt_spec bw_opts[] = {
	PERF_OPTS_COMMON("write"),
	{ "interval", OPT_INTERVAL, "SECONDS", "report every SECONDS, like iperf3 -i" },
	{ "unit", OPT_UNIT, "UNIT", "Gb (Gb/sec, default) or MiB (MiB/sec, perftest's default)" },
	{ "expect-gbps", OPT_EXPECT_GBPS, "GBPS", "exit 1 if the average is below GBPS" },
	{ "limit_bw", 'w', "GBPS", "perftest's name for --expect-gbps" },
	{ "expect-mpps", OPT_EXPECT_MPPS, "MPPS", "exit 1 if the message rate is below MPPS" },
	{ "limit_msgrate", 'y', "MPPS", "perftest's name for --expect-mpps" },
	OPTS_END,
};

static const struct cmd_usage bw_usage = {
	.cmd = "bw",
	.synopsis = "[OPTIONS]              (server: waits for a client)\n"
		    "[OPTIONS] HOST         (client)\n"
		    "--loopback [OPTIONS]   (both ends here)",
	.description = "Measure RDMA bandwidth (WRITE, READ, SEND or atomics) with perftest's "
		       "options and\ntable, on an RDMA NIC (--engine verbs) or the built-in "
		       "userspace RoCEv2\nengine (--engine soft).",
	.opts = bw_opts,
};

struct bw_cli {
	struct perf_cli c;
	bool mib;
	double expect_gbps, expect_mpps;
};

static int bw_opt(void *ctx, int key, const char *arg)
{
	struct bw_cli *b = ctx;
	int rc = perf_cli_option(&b->c, key, arg);
	static const char *const units[] = { "Gb", "MiB", NULL };
	int idx;

	if (rc != 1)
		return rc;
	switch (key) {
	case OPT_INTERVAL:
		return parse_double("bw", "--interval", arg, 0.01, 3600, &b->c.o.interval);
	case OPT_UNIT:
		rc = parse_choice("bw", "--unit", arg, units, &idx);
		b->mib = idx == 1;
		return rc;
	case OPT_EXPECT_GBPS:
	case 'w':
		return parse_double("bw", key == 'w' ? "-w/--limit_bw" : "--expect-gbps", arg, 0,
				    1e6, &b->expect_gbps);
	case OPT_EXPECT_MPPS:
	case 'y':
		return parse_double("bw", key == 'y' ? "-y/--limit_msgrate" : "--expect-mpps", arg,
				    0, 1e6, &b->expect_mpps);
	}
	return EXIT_USAGE;
}

/* perftest: MiB = 2^20 bytes, Gb = 10^9 bits. */
static double in_unit(const struct bw_cli *b, double gbps)
{
	return b->mib ? gbps * 1e9 / 8 / (1 << 20) : gbps;
}

static void report_row(struct report *r, const struct bw_cli *b, const struct perf_bw_result *res)
{
	struct report_value v[] = {
		RV_U64(res->bytes_per_msg), RV_U64(res->iterations),
		RV_DBL(in_unit(b, res->bw_peak_gbps)), RV_DBL(in_unit(b, res->bw_avg_gbps)),
		RV_DBL(res->msg_rate_mpps), RV_DBL(res->seconds),
	};
	json_t *iv = json_array();

	/* Interval lines first, then the whole run's row, as iperf3 does. */
	for (unsigned i = 0; i < res->nintervals; i++) {
		const struct perf_interval *x = &res->intervals[i];
		double secs = x->end_s - x->start_s;
		double gbps = secs > 0 ? (double)x->bytes * 8 / secs / 1e9 : 0;

		if (!r->json)
			fprintf(r->out, " [%7.2f-%7.2f sec] %12.2f %s %12.6f Mpps\n", x->start_s,
				x->end_s, in_unit(b, gbps), b->mib ? "MiB/sec" : "Gb/sec",
				secs > 0 ? (double)x->msgs / secs / 1e6 : 0);
		json_array_append_new(iv, json_pack("{s:f, s:f, s:I, s:f, s:f}", "start_s",
			x->start_s, "end_s", x->end_s, "bytes", (json_int_t)x->bytes, "bw_gbps", gbps,
			"msg_rate_mpps", secs > 0 ? (double)x->msgs / secs / 1e6 : 0));
	}
	report_table_row(r, v);
	if (res->nintervals)
		report_row_attach(r, "intervals", iv);
	else
		json_decref(iv);
	report_row_attach(r, "retransmits", json_integer((json_int_t)res->counters.retransmits));
}

static int run_client(void *ctx, struct perf_session *s, struct report *r)
{
	static const struct report_col cols_gb[] = {
		{ "#bytes", "bytes", REPORT_U64, 0 },
		{ "#iterations", "iterations", REPORT_U64, 0 },
		{ "BW peak[Gb/sec]", "bw_peak_gbps", REPORT_DOUBLE, 2 },
		{ "BW average[Gb/sec]", "bw_avg_gbps", REPORT_DOUBLE, 2 },
		{ "MsgRate[Mpps]", "msg_rate_mpps", REPORT_DOUBLE, 6 },
		{ NULL, "seconds", REPORT_DOUBLE, 6 },
	};
	static const struct report_col cols_mib[] = {
		{ "#bytes", "bytes", REPORT_U64, 0 },
		{ "#iterations", "iterations", REPORT_U64, 0 },
		{ "BW peak[MiB/sec]", "bw_peak_mibps", REPORT_DOUBLE, 2 },
		{ "BW average[MiB/sec]", "bw_avg_mibps", REPORT_DOUBLE, 2 },
		{ "MsgRate[Mpps]", "msg_rate_mpps", REPORT_DOUBLE, 6 },
		{ NULL, "seconds", REPORT_DOUBLE, 6 },
	};
	struct bw_cli *b = ctx;
	struct perf_bw_result *res = calloc(1, sizeof(*res));
	uint64_t sizes[32];
	unsigned n = perf_cli_sizes(&b->c, sizes, 32);
	char err[XPORT_ERR_LEN];
	int rc = EXIT_OK;

	if (!res)
		return runtime_error("bw", "out of memory");
	report_table_begin(r, b->mib ? cols_mib : cols_gb, 6);
	for (unsigned i = 0; i < n && !perf_stop; i++) {
		if (perf_set_size(s, sizes[i], err) < 0 || perf_run_bw(s, res, err) < 0) {
			report_error(r, "%s", err);
			rc = EXIT_RUNTIME;
			break;
		}
		report_row(r, b, res);
		if (b->c.o.verify && !res->verified) {
			report_error(r, "--verify: data mismatch at offset %llu of a %llu-byte message",
				     (unsigned long long)res->bad_offset,
				     (unsigned long long)res->bytes_per_msg);
			rc = EXIT_CHECK_FAILED;
		}
		if (b->expect_gbps > 0 && res->bw_avg_gbps < b->expect_gbps && rc == EXIT_OK) {
			report_error(r, "average %.2f Gb/s is below --expect-gbps %.2f",
				     res->bw_avg_gbps, b->expect_gbps);
			rc = EXIT_CHECK_FAILED;
		}
		if (b->expect_mpps > 0 && res->msg_rate_mpps < b->expect_mpps && rc == EXIT_OK) {
			report_error(r, "message rate %.6f Mpps is below --expect-mpps %.6f",
				     res->msg_rate_mpps, b->expect_mpps);
			rc = EXIT_CHECK_FAILED;
		}
	}
	report_table_end(r);
	free(res);
	return rc;
}

int cmd_bw(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct bw_cli b = { 0 };
	enum perf_role role;
	int first, rc;

	perf_cli_init(&b.c, "bw", false);
	rc = opts_parse(&bw_usage, argc, argv, &g, bw_opt, &b, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	rc = perf_cli_finish(&b.c, argc, argv, first, &role);
	if (rc)
		return rc;
	return perf_cli_run(&b.c, &g, role, run_client, &b);
}
