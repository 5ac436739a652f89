// SPDX-License-Identifier: MIT
/*
 * rdmakit bw: bandwidth, perftest's ib_*_bw in one command.  The client
 * sets the test; the server adopts it; --loopback runs both ends here.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "perf_cli.h"

enum {
	OPT_INTERVAL = OPT_PERF_CMD,
	OPT_UNIT,
	OPT_EXPECT_GBPS,
	OPT_EXPECT_MPPS,
	OPT_RATE_LIMIT,
	OPT_RATE_UNITS,
	OPT_RATE_LIMIT_TYPE,
	OPT_POST_LIST_ALIAS,
};

static const struct opt_spec bw_opts[] = {
	PERF_OPTS_COMMON("write"),
	{ "interval", OPT_INTERVAL, "SECONDS", "report every SECONDS, like iperf3 -i" },
	{ "unit", OPT_UNIT, "UNIT", "Gb (Gb/sec, default) or MiB (MiB/sec, perftest's default)" },
	{ "expect-gbps", OPT_EXPECT_GBPS, "GBPS", "exit 1 if the average is below GBPS" },
	{ "limit_bw", 'w', "BW", "perftest's: exit 1 if the average is below BW, in --unit" },
	{ "expect-mpps", OPT_EXPECT_MPPS, "MPPS", "exit 1 if the message rate is below MPPS" },
	{ "limit_msgrate", 'y', "MPPS", "perftest's name for --expect-mpps" },
	{ "report-counters", 'W', "LIST", "verbs: the deltas of these port counters over each run "
					  "(perftest's syntax: counters/NAME,hw_counters/NAME)" },
	{ "noPeak", 'N', NULL, "do not compute the peak bandwidth (the column shows 0, as "
			       "perftest's)" },
	{ "bidirectional", 'b', NULL, "both sides send at once; BW is the sum of both "
				      "directions" },
	{ "cq-mod", 'Q', "N", "one work request in N asks for a completion (default 100 up "
			       "to 8 KiB, 1 above; at most the TX depth)" },
	{ "post_list", 'l', "N", "post work requests N at a time, the last signaled (sets "
				 "-Q to N; -n a multiple of N)" },
	{ "post-list", OPT_POST_LIST_ALIAS, "N", "the same as --post_list" },
	{ "rate_limit", OPT_RATE_LIMIT, "RATE", "pace each sender to RATE (in --rate_units)" },
	{ "rate_units", OPT_RATE_UNITS, "UNIT", "g (Gb/sec, default), M (MiB/sec) or p "
						"(messages/sec)" },
	{ "rate_limit_type", OPT_RATE_LIMIT_TYPE, "TYPE", "SW: software pacing (the only kind "
							  "here; HW and PP are refused)" },
	PERF_OPTS_PLOT,
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
	.refused = perftest_refused,
};

struct bw_cli {
	struct perf_cli c;
	bool mib;
	double expect_gbps, expect_mpps;
	bool limit_in_unit;		/* -w: the value is in --unit, as perftest's is in its report's */
	bool units_set;
	const char *limit_type;
	/* Server, UC and UD: the table of what arrived, begun at the first run. */
	struct report_col served_cols[8];
	bool served_table;
};

static int bw_opt(void *ctx, int key, const char *arg)
{
	struct bw_cli *b = ctx;
	int rc = perf_cli_option(&b->c, key, arg);
	static const char *const units[] = { "Gb", "MiB", NULL };
	static const char *const rate_units[] = { "g", "M", "p", NULL };	/* perf_rate_unit */
	uint64_t v;
	int idx;

	if (rc != 1)
		return rc;
	switch (key) {
	case OPT_INTERVAL:
		return parse_double("bw", "--interval", arg, PERF_MIN_INTERVAL, PERF_MAX_INTERVAL, &b->c.o.interval);
	case OPT_UNIT:
		rc = parse_choice("bw", "--unit", arg, units, &idx);
		b->mib = idx == 1;
		return rc;
	case OPT_EXPECT_GBPS:
	case 'w':
		b->limit_in_unit = key == 'w';
		return parse_double("bw", key == 'w' ? "-w/--limit_bw" : "--expect-gbps", arg, 0,
				    1e6, &b->expect_gbps);
	case OPT_EXPECT_MPPS:
	case 'y':
		return parse_double("bw", key == 'y' ? "-y/--limit_msgrate" : "--expect-mpps", arg,
				    0, 1e6, &b->expect_mpps);
	case 'N':
		b->c.o.no_peak = true;
		return 0;
	case 'W': {
		char err[XPORT_ERR_LEN];

		if (perf_listed_check(arg, err) < 0)
			return usage_error("bw", "%s", err);
		b->c.o.report_counters = arg;
		return 0;
	}
	case 'b':
		b->c.o.bidirectional = true;
		b->c.o.explicit_set |= PERF_SET_BIDIR;
		return 0;
	case 'Q':
		rc = parse_u64("bw", "-Q/--cq-mod", arg, 1, 8192, false, &v);
		b->c.o.cq_mod = (unsigned)v;
		return rc;
	case 'l':
	case OPT_POST_LIST_ALIAS:
		rc = parse_u64("bw", "-l/--post_list", arg, 1, PERF_MAX_POST_LIST, false, &v);
		b->c.o.post_list = (unsigned)v;
		return rc;
	case OPT_RATE_LIMIT:
		return parse_double("bw", "--rate_limit", arg, PERF_MIN_RATE, PERF_MAX_RATE, &b->c.o.rate_limit);
	case OPT_RATE_UNITS:
		rc = parse_choice("bw", "--rate_units", arg, rate_units, &idx);
		b->c.o.rate_unit = (enum perf_rate_unit)idx;
		b->units_set = true;
		return rc;
	case OPT_RATE_LIMIT_TYPE:
		b->limit_type = arg;
		return 0;
	}
	return EXIT_USAGE;
}

/* perftest: MiB = 2^20 bytes, Gb = 10^9 bits. */
static double in_unit(const struct bw_cli *b, double gbps)
{
	return b->mib ? gbps * 1e9 / 8 / (1 << 20) : gbps;
}

/* perftest's columns; --cpu_util adds CPU_Util[%] after MsgRate. */
static size_t table_cols(const struct bw_cli *b, struct report_col *cols)
{
	static const struct report_col gb[] = {
		{ "BW peak[Gb/sec]", "bw_peak_gbps", REPORT_DOUBLE, 2 },
		{ "BW average[Gb/sec]", "bw_avg_gbps", REPORT_DOUBLE, 2 },
	};
	static const struct report_col mib[] = {
		{ "BW peak[MiB/sec]", "bw_peak_mibps", REPORT_DOUBLE, 2 },
		{ "BW average[MiB/sec]", "bw_avg_mibps", REPORT_DOUBLE, 2 },
	};
	size_t n = 0;

	cols[n++] = (struct report_col){ "#bytes", "bytes", REPORT_U64, 0 };
	cols[n++] = (struct report_col){ "#iterations", "iterations", REPORT_U64, 0 };
	cols[n++] = b->mib ? mib[0] : gb[0];
	cols[n++] = b->mib ? mib[1] : gb[1];
	cols[n++] = (struct report_col){ "MsgRate[Mpps]", "msg_rate_mpps", REPORT_DOUBLE, 6 };
	if (b->c.cpu_util)
		cols[n++] = (struct report_col){ "CPU_Util[%]", "cpu_util_percent", REPORT_DOUBLE, 2 };
	cols[n++] = (struct report_col){ NULL, "seconds", REPORT_DOUBLE, 6 };
	return n;
}

/* Interval lines (text, before the row, as iperf3 prints them) and the
 * row's "intervals" (JSON). */
static void intervals(struct printer *pr, const struct bw_cli *b,
		      const struct perf_bw_result *res)
{
	if (!res->nintervals)
		return;
	print_open_array(pr, "intervals");
	for (unsigned i = 0; i < res->nintervals; i++) {
		const struct perf_interval *x = &res->intervals[i];
		double secs = x->end_s - x->start_s;
		double gbps = secs > 0 ? (double)x->bytes * 8 / secs / 1e9 : 0;

		print_open_object(pr, NULL);
		print_float(pr, PRINT_ANY, "start_s", " [%7.2f", x->start_s);
		print_float(pr, PRINT_ANY, "end_s", "-%7.2f sec]", x->end_s);
		print_uint(pr, PRINT_JSON, "bytes", NULL, x->bytes);
		print_float(pr, PRINT_JSON, "bw_gbps", NULL, gbps);
		print_float(pr, PRINT_FP, NULL, " %12.2f", in_unit(b, gbps));
		print_string(pr, PRINT_FP, NULL, " %s", b->mib ? "MiB/sec" : "Gb/sec");
		print_float(pr, PRINT_ANY, "msg_rate_mpps", " %12.6f Mpps\n",
			    secs > 0 ? (double)x->msgs / secs / 1e6 : 0);
		print_close(pr);
	}
	print_close(pr);
}

/* The RDMA port's counters that moved over the run (verbs): in text one
 * block after the row, wrapped past column 70, as incast prints its own. */
static void port_counters(struct printer *pr, const struct perf_port_deltas *pd)
{
	int col;

	print_open_object(pr, "port_counters");
	print_string(pr, PRINT_JSON, "device", NULL, pd->device);
	print_int(pr, PRINT_JSON, "port", NULL, pd->port);
	print_string(pr, PRINT_ANY, "source", NULL, pd->source);
	col = print_string(pr, PRINT_FP, NULL, " %s", pd->device);
	col += print_int(pr, PRINT_FP, NULL, "/%d counters over the run", pd->port);
	col += print_string(pr, PRINT_FP, NULL, " (%s):", pd->source);
	print_open_object(pr, "deltas");
	for (unsigned i = 0; i < pd->n; i++) {
		if (col > 70) {
			print_fp(pr, "\n");
			col = print_fp(pr, "  ");
		}
		col += print_string(pr, PRINT_FP, NULL, " %s", pd->d[i].name);
		col += print_uint(pr, PRINT_ANY, pd->d[i].name, " %llu", pd->d[i].delta);
	}
	if (!pd->n)
		print_fp(pr, " none moved");
	print_close(pr);
	if (pd->left_out)
		print_uint(pr, PRINT_ANY, "left_out", " (and %llu more)", pd->left_out);
	print_fp(pr, "\n");
	print_close(pr);
}

/* What follows the row: counters (JSON) and the two directions of -b. */
static void row_details(struct printer *pr, const struct bw_cli *b,
			const struct perf_bw_result *res, bool soft)
{
	print_uint(pr, PRINT_JSON, "cq_mod", NULL, res->cq_mod);
	print_uint(pr, PRINT_JSON, "retransmits", NULL, res->counters.retransmits);
	if (soft) {
		/* This side's soft-engine counters (the verbs engine reports none). */
		print_open_object(pr, "counters");
		for (size_t i = 0; i < xport_counter_count(); i++)
			print_uint(pr, PRINT_JSON, xport_counter_name(i), NULL,
				   xport_counter_value(&res->counters, i));
		print_close(pr);
	}
	if (res->bidirectional) {
		/* The two directions that make up the sum (intervals: this side's). */
		print_float(pr, PRINT_JSON, "local_bw_avg_gbps", NULL, res->local_bw_avg_gbps);
		print_float(pr, PRINT_JSON, "peer_bw_avg_gbps", NULL, res->peer_bw_avg_gbps);
		print_float(pr, PRINT_FP, NULL, " (this side %.2f", in_unit(b, res->local_bw_avg_gbps));
		print_float(pr, PRINT_FP, NULL, " + the peer %.2f", in_unit(b, res->peer_bw_avg_gbps));
		print_string(pr, PRINT_FP, NULL, " %s)\n", b->mib ? "MiB/sec" : "Gb/sec");
		print_uint(pr, PRINT_JSON, "peer_iterations", NULL, res->peer_iterations);
	}
	if (res->unreliable)
		perf_cli_loss(pr, "", &res->loss, res->loss.peer_silent ?
			      "the perftest server does not say what it received (its own "
			      "report does)" : "a WRITE gives the receiver nothing to count: "
			      "--verify checks the data");
	if (res->atomic_added_known)
		print_uint(pr, PRINT_ANY, "atomic_added", " fetch-and-adds that landed here: %llu\n",
			   res->atomic_added);
	if (res->port.known)
		port_counters(pr, &res->port);
	if (res->listed.n) {	/* -W: perftest prints them after the row */
		print_open_object(pr, "report_counters");
		for (unsigned i = 0; i < res->listed.n; i++) {
			print_string(pr, PRINT_FP, NULL, " %s", res->listed.c[i].name);
			print_uint(pr, PRINT_ANY, res->listed.c[i].name, ": %llu\n",
				   res->listed.c[i].value);
		}
		print_close(pr);
	}
}

static void report_row(struct report *r, const struct bw_cli *b, const struct perf_bw_result *res,
		       bool soft)
{
	struct report_value v[8];
	struct printer *pr;
	unsigned saved;
	size_t n = 0;

	v[n++] = RV_U64(res->bytes_per_msg);
	v[n++] = RV_U64(res->iterations);
	v[n++] = RV_DBL(in_unit(b, res->bw_peak_gbps));
	v[n++] = RV_DBL(in_unit(b, res->bw_avg_gbps));
	v[n++] = RV_DBL(res->msg_rate_mpps);
	if (b->c.cpu_util)
		v[n++] = RV_DBL(res->cpu_util_percent);
	v[n++] = RV_DBL(res->seconds);
	/* Text: the interval lines, then the row; JSON: the row holds them. */
	saved = printer_restrict(&r->pr, PRINT_FP);
	intervals(&r->pr, b, res);
	printer_restore(&r->pr, saved);
	report_table_row(r, v);
	pr = report_row_more(r);
	saved = printer_restrict(pr, PRINT_JSON);
	intervals(pr, b, res);
	printer_restore(pr, saved);
	row_details(pr, b, res, soft);
	report_row_done(r);
}

static int run_client(void *ctx, struct perf_session *s, struct report *r)
{
	struct bw_cli *b = ctx;
	struct report_col cols[8];
	struct perf_bw_result *res = calloc(1, sizeof(*res));
	uint64_t sizes[32];
	unsigned n = perf_cli_sizes(&b->c, sizes, 32);
	char err[XPORT_ERR_LEN];
	int rc = EXIT_OK;

	if (!res)
		return runtime_error("bw", "out of memory");
	report_table_begin(r, cols, table_cols(b, cols));
	/* One run may cover the sweep (a perftest client's passive target). */
	if (perf_runs_once(s))
		n = 1;
	for (unsigned i = 0; i < n && !cmd_stop; i++) {
		if (perf_set_size(s, sizes[i], err) < 0 || perf_run_bw(s, res, err) < 0) {
			report_error(r, "%s", err);
			rc = EXIT_RUNTIME;
			break;
		}
		report_row(r, b, res, strcmp(perf_engine(s), "soft") == 0);
		if (b->c.output == PERF_OUTPUT_BANDWIDTH)	/* perftest's --output */
			printf("%.2f\n", in_unit(b, res->bw_avg_gbps));
		else if (b->c.output == PERF_OUTPUT_MSG_RATE)
			printf("%.6f\n", res->msg_rate_mpps);
		if (b->c.o.verify && !res->verified) {
			report_error(r, "--verify: data mismatch at offset %llu of a %llu-byte message",
				     (unsigned long long)res->bad_offset,
				     (unsigned long long)res->bytes_per_msg);
			rc = EXIT_CHECK_FAILED;
		}
		if (b->expect_gbps > 0 && res->bw_avg_gbps < b->expect_gbps && rc == EXIT_OK &&
		    b->limit_in_unit && b->mib) {
			report_error(r, "average %.2f MiB/sec is below -w/--limit_bw %.2f",
				     in_unit(b, res->bw_avg_gbps), in_unit(b, b->expect_gbps));
			rc = EXIT_CHECK_FAILED;
		} else if (b->expect_gbps > 0 && res->bw_avg_gbps < b->expect_gbps && rc == EXIT_OK) {
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

/* Server, UC and UD: each run as it arrived here, in the client's table. */
static void served_row(void *ctx, struct perf_session *s, struct report *r,
		       const struct perf_bw_result *res)
{
	struct bw_cli *b = ctx;

	if (!res) {
		if (b->served_table)
			report_table_end(r);
		b->served_table = false;
		return;
	}
	if (!b->served_table)
		report_table_begin(r, b->served_cols, table_cols(b, b->served_cols));
	b->served_table = true;
	report_row(r, b, res, strcmp(perf_engine(s), "soft") == 0);
}

/* -b with atomics, and perftest's --rate_limit family (only software
 * pacing exists here). */
static int check_bw_options(const struct bw_cli *b, enum perf_role role)
{
	const char *t = b->limit_type;

	if (t && strcasecmp(t, "SW") && strcasecmp(t, "HW") && strcasecmp(t, "PP"))
		return usage_error("bw", "invalid value '%s' for --rate_limit_type: expected SW, HW "
				   "or PP", t);
	if (t && strcasecmp(t, "SW"))
		return usage_error("bw", "--rate_limit_type %s: rdmakit paces in software only (the "
				   "soft engine has no hardware pacer, and the verbs engine's is not "
				   "used): give --rate_limit_type SW", t);
	if ((t || b->units_set) && b->c.o.rate_limit <= 0)
		return usage_error("bw", "--rate_units and --rate_limit_type qualify --rate_limit: "
				   "give --rate_limit RATE too");
	if (b->c.o.bidirectional && b->c.o.op == PERF_ATOMIC)
		return usage_error("bw", "-b/--bidirectional is for write, read and send: drop it "
				   "with atomics");
	if (b->c.o.post_list > 1 && b->c.o.cq_mod && b->c.o.cq_mod != b->c.o.post_list)
		return usage_error("bw", "-l/--post_list %u signals the last work request of each "
				   "list (cq_mod %u): drop -Q/--cq-mod", b->c.o.post_list,
				   b->c.o.post_list);
	if (b->c.o.post_list > b->c.o.tx_depth)
		return usage_error("bw", "-l/--post_list %u exceeds the TX depth %u: lower -l or "
				   "raise -t/--tx-depth", b->c.o.post_list, b->c.o.tx_depth);
	if (b->c.o.post_list > 1 && b->c.o.op == PERF_ATOMIC && b->c.o.post_list > 8)
		return usage_error("bw", "-l/--post_list %u: atomics keep at most 8 in flight here "
				   "(one result buffer each): give -l 8 or less", b->c.o.post_list);
	if (b->c.o.post_list > 1 && b->c.o.iters % b->c.o.post_list)
		return usage_error("bw", "-n/--iters %llu is not a multiple of -l/--post_list %u: "
				   "give a multiple", (unsigned long long)b->c.o.iters,
				   b->c.o.post_list);
	if (b->c.o.rate_limit > 0 && role == PERF_SERVER)
		return usage_error("bw", "--rate_limit is set by the client (with -b it paces both "
				   "sides): drop it on the server");
	return 0;
}

/* The command line into b and role: 0, a usage error's exit code, or < 0
 * when --help or --version was answered.  The fuzzer calls it too. */
static int bw_parse(int argc, char **argv, struct global_opts *g, struct bw_cli *b,
		    enum perf_role *role)
{
	int first, rc;

	perf_cli_init(&b->c, "bw", false);
	rc = opts_parse(&bw_usage, argc, argv, g, bw_opt, b, &first);
	if (!rc)
		rc = perf_cli_finish(&b->c, argc, argv, first, role);
	return rc;
}

int cmd_bw(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct bw_cli b = { 0 };
	enum perf_role role;
	int rc;

	rc = bw_parse(argc, argv, &g, &b, &role);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	rc = check_bw_options(&b, role);
	if (rc)
		return rc;
	/* -w is in the report's unit, as perftest's: MiB/s with --unit MiB. */
	if (b.limit_in_unit && b.mib)
		b.expect_gbps = b.expect_gbps * 1048576 * 8 / 1e9;
	/* perftest's default: 5000 WRITEs, 1000 of everything else. */
	if (!b.c.iters_set && !b.c.duration_set && b.c.o.op == PERF_WRITE)
		b.c.o.iters = 5000;
	return perf_cli_run(&b.c, &g, role, run_client, served_row, &b);
}
