// SPDX-License-Identifier: MIT
/*
 * rdmakit lat: latency, perftest's ib_*_lat in one command, with
 * percentiles from a fixed-memory histogram (so also with -D), an aligned
 * text histogram, and HdrHistogram's .hgrm output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist_fmt.h"
#include "perf_cli.h"

enum {
	OPT_HISTOGRAM = OPT_PERF_CMD,
	OPT_HGRM,
	OPT_EXPECT_P99,
	OPT_LATENCY_GAP,
	OPT_HISTOGRM_ALIAS,
};

static const struct opt_spec lat_opts[] = {
	PERF_OPTS_COMMON("send"),
	{ "histogram", OPT_HISTOGRAM, NULL, "print an aligned text histogram of the latencies" },
	{ "hgrm", OPT_HGRM, "FILE", "write HdrHistogram's percentile distribution to FILE" },
	{ "expect-p99-us", OPT_EXPECT_P99, "USEC", "exit 1 if the 99th percentile exceeds USEC" },
	{ "report-histogram", 'H', NULL, "print every sample, sorted, as perftest's -H (\"#, usec\" "
					 "lines; JSON samples_us)" },
	{ "report-histogrm", OPT_HISTOGRM_ALIAS, NULL, "perftest 6.29's spelling of --report-histogram" },
	{ "report-unsorted", 'U', NULL, "print every sample in the order taken, as perftest's -U" },
	{ "latency_gap", OPT_LATENCY_GAP, "USEC", "wait USEC before each message (perftest's "
						  "--latency_gap)" },
	PERF_OPTS_PLOT,
	OPTS_END,
};

static const struct cmd_usage lat_usage = {
	.cmd = "lat",
	.synopsis = "[OPTIONS]              (server: waits for a client)\n"
		    "[OPTIONS] HOST         (client)\n"
		    "--loopback [OPTIONS]   (both ends here)",
	.description = "Measure RDMA latency (SEND, WRITE, READ or atomics) with perftest's "
		       "options and table.\nSEND and WRITE report half the round trip, READ and "
		       "atomics the full one, as\nperftest does; percentiles come from a "
		       "fixed-memory histogram, also with -D.",
	.opts = lat_opts,
	.refused = perftest_refused,
};

struct lat_cli {
	struct perf_cli c;
	bool histogram;
	bool raw_sorted, raw_unsorted;	/* -H, -U: every sample */
	const char *hgrm;
	double expect_p99;
};

static int lat_opt(void *ctx, int key, const char *arg)
{
	struct lat_cli *l = ctx;
	int rc = perf_cli_option(&l->c, key, arg);

	if (rc != 1)
		return rc;
	switch (key) {
	case OPT_HISTOGRAM: l->histogram = true; return 0;
	case OPT_HGRM: l->hgrm = arg; return 0;
	case 'H':
	case OPT_HISTOGRM_ALIAS:
		l->raw_sorted = l->c.o.raw_samples = true;
		return 0;
	case 'U':
		l->raw_unsorted = l->c.o.raw_samples = true;
		return 0;
	case OPT_LATENCY_GAP: {
		uint64_t v;
		int rc = parse_u64("lat", "--latency_gap", arg, 0, 1000000, false, &v);

		l->c.o.latency_gap_us = (uint32_t)v;
		return rc;
	}
	case OPT_EXPECT_P99:
		return parse_double("lat", "--expect-p99-us", arg, 0, 1e9, &l->expect_p99);
	}
	return EXIT_USAGE;
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * -U and -H, as perftest prints them: a "#, usec" heading, then "N, VALUE"
 * lines, in the order taken (-U) or sorted (-H); after the row in text, as
 * samples_us (in the order taken) in JSON.
 */
static void samples(struct printer *pr, const struct lat_cli *l, const struct perf_lat_result *res,
		    bool json, FILE *out)
{
	uint64_t *sorted;

	if (!l->c.o.raw_samples)
		return;
	if (json) {
		print_open_array(pr, "samples_us");
		for (uint64_t i = 0; i < res->nsamples; i++)
			print_float(pr, PRINT_JSON, NULL, NULL, us(res->samples[i]));
		print_close(pr);
		print_bool(pr, PRINT_JSON, "samples_truncated", NULL, res->samples_truncated, "yes", "no");
		return;
	}
	if (l->raw_unsorted) {
		fprintf(out, "#, usec\n");
		for (uint64_t i = 0; i < res->nsamples; i++)
			fprintf(out, "%llu, %g\n", (unsigned long long)i + 1, us(res->samples[i]));
	}
	if (!l->raw_sorted || !res->nsamples ||
	    !(sorted = malloc(res->nsamples * sizeof(*sorted))))
		return;
	memcpy(sorted, res->samples, res->nsamples * sizeof(*sorted));
	qsort(sorted, res->nsamples, sizeof(*sorted), cmp_u64);
	fprintf(out, "#, usec\n");
	for (uint64_t i = 0; i < res->nsamples; i++)
		fprintf(out, "%llu, %g\n", (unsigned long long)i + 1, us(sorted[i]));
	free(sorted);
}

/* The whole histogram under the row (JSON only): its non-empty buckets. */
static void histogram(struct printer *pr, const struct hist *h)
{
	struct hist_iter it;
	uint64_t lo, hi, n;

	print_open_array(pr, "histogram");
	hist_iter_init(&it, h);
	while (hist_iter_next(&it, &lo, &hi, &n)) {
		print_open_object(pr, NULL);
		print_float(pr, PRINT_JSON, "from_us", NULL, us(lo));
		print_float(pr, PRINT_JSON, "to_us", NULL, us(hi));
		print_uint(pr, PRINT_JSON, "count", NULL, n);
		print_close(pr);
	}
	print_close(pr);
}

/* The columns after perftest's nine, JSON only; --cpu_util's comes first. */
#define LAT_VISIBLE_COLS 9

static void report_row(struct report *r, const struct lat_cli *l,
		       const struct perf_lat_result *res)
{
	const struct hist *h = &res->h;
	struct printer *pr;
	struct report_value v[LAT_VISIBLE_COLS + 4] = {
		RV_U64(res->bytes), RV_U64(res->iterations), RV_DBL(us(hist_min(h))),
		RV_DBL(us(hist_max(h))), RV_DBL(us(hist_percentile(h, 50))),
		RV_DBL(hist_mean(h) / 1e3), RV_DBL(hist_stdev(h) / 1e3),
		RV_DBL(us(hist_percentile(h, 99))), RV_DBL(us(hist_percentile(h, 99.9))),
	};
	size_t n = LAT_VISIBLE_COLS;

	if (l->c.cpu_util)
		v[n++] = RV_DBL(res->cpu_util_percent);
	v[n++] = RV_DBL(us(hist_percentile(h, 50)));
	v[n++] = RV_DBL(us(hist_percentile(h, 90)));
	v[n++] = RV_DBL(us(hist_percentile(h, 99.99)));
	report_table_row(r, v);
	pr = report_row_more(r);
	if (res->unreliable) {
		/* UC/UD: the pings with no answer within the wait are not in
		 * the figures; answers that came later were told by their tag. */
		print_uint(pr, PRINT_ANY, "lost_msgs", " %llu pings had no answer", res->lost);
		print_uint(pr, PRINT_ANY, "wait_us", " within %llu us (lost)", res->wait_us);
		print_uint(pr, PRINT_ANY, "late_replies", "; %llu answers came late\n", res->late);
	}
	histogram(pr, h);
	samples(pr, l, res, true, NULL);
	report_row_done(r);
}

static int write_hgrm(const char *path, const struct hist *h, struct report *r)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		report_error(r, "cannot write --hgrm file '%s': %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	hist_write_hgrm(f, h);
	if (fclose(f)) {
		report_error(r, "cannot write --hgrm file '%s': %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int run_client(void *ctx, struct perf_session *s, struct report *r)
{
	static const struct report_col all_cols[] = {
		{ "#bytes", "bytes", REPORT_U64, 0 },
		{ "#iterations", "iterations", REPORT_U64, 0 },
		{ "t_min[usec]", "t_min_us", REPORT_DOUBLE, 2 },
		{ "t_max[usec]", "t_max_us", REPORT_DOUBLE, 2 },
		{ "t_typical[usec]", "t_typical_us", REPORT_DOUBLE, 2 },
		{ "t_avg[usec]", "t_avg_us", REPORT_DOUBLE, 2 },
		{ "t_stdev[usec]", "t_stdev_us", REPORT_DOUBLE, 2 },
		{ "99% percentile[usec]", "p99_us", REPORT_DOUBLE, 2 },
		{ "99.9% percentile[usec]", "p99_9_us", REPORT_DOUBLE, 2 },
		{ "CPU_Util[%]", "cpu_util_percent", REPORT_DOUBLE, 2 },
		{ NULL, "p50_us", REPORT_DOUBLE, 3 },
		{ NULL, "p90_us", REPORT_DOUBLE, 3 },
		{ NULL, "p99_99_us", REPORT_DOUBLE, 3 },
	};
	struct lat_cli *l = ctx;
	struct report_col cols[sizeof(all_cols) / sizeof(all_cols[0])];
	size_t ncols = 0;
	struct perf_lat_result *res = calloc(1, sizeof(*res));
	uint64_t sizes[32];
	unsigned n = perf_cli_sizes(&l->c, sizes, 32);
	char err[XPORT_ERR_LEN];
	int rc = EXIT_OK;

	if (!res)
		return runtime_error("lat", "out of memory");
	if (perf_runs_once(s)) {	/* perftest's READ/atomic latency: the client measures */
		rc = perf_run_lat(s, res, err) < 0 ? EXIT_RUNTIME : EXIT_OK;
		if (rc)
			report_error(r, "%s", err);
		else
			report_param(r, "Measured", "measured", REPORT_STR,
				     RV_STR("nothing here: a READ/atomic latency server is a passive "
					    "target, and its perftest client measures"));
		free(res);
		return rc;
	}
	for (size_t i = 0; i < sizeof(all_cols) / sizeof(all_cols[0]); i++)
		if (i != LAT_VISIBLE_COLS || l->c.cpu_util)
			cols[ncols++] = all_cols[i];
	report_table_begin(r, cols, ncols);
	for (unsigned i = 0; i < n && !cmd_stop; i++) {
		if (perf_set_size(s, sizes[i], err) < 0 || perf_run_lat(s, res, err) < 0) {
			report_error(r, "%s", err);
			rc = EXIT_RUNTIME;
			break;
		}
		report_row(r, l, res);
		if (l->c.output == PERF_OUTPUT_LATENCY)	/* perftest's --output: the average */
			printf("%.2f\n", hist_mean(&res->h) / 1000.0);
		if (l->histogram && !r->json)
			hist_write_bars(r->out, &res->h, 16);
		if (!r->json)
			samples(NULL, l, res, false, r->out);
		if (l->c.o.verify && !res->verified) {
			report_error(r, "--verify: data mismatch at offset %llu of a %llu-byte message",
				     (unsigned long long)res->bad_offset,
				     (unsigned long long)res->bytes);
			rc = EXIT_CHECK_FAILED;
		}
		if (l->expect_p99 > 0 && us(hist_percentile(&res->h, 99)) > l->expect_p99 &&
		    rc == EXIT_OK) {
			report_error(r, "99th percentile %.2f us exceeds --expect-p99-us %g",
				     us(hist_percentile(&res->h, 99)), l->expect_p99);
			rc = EXIT_CHECK_FAILED;
		}
		if (l->hgrm && i + 1 == n && rc != EXIT_RUNTIME) {
			int wrc = write_hgrm(l->hgrm, &res->h, r);

			if (wrc)
				rc = wrc;
		}
	}
	report_table_end(r);
	free(res);
	return rc;
}

/* The command line into l and role: 0, a usage error's exit code, or < 0
 * when --help or --version was answered.  The fuzzer calls it too. */
static int lat_parse(int argc, char **argv, struct global_opts *g, struct lat_cli *l,
		     enum perf_role *role)
{
	int first, rc;

	perf_cli_init(&l->c, "lat", true);
	rc = opts_parse(&lat_usage, argc, argv, g, lat_opt, l, &first);
	if (!rc)
		rc = perf_cli_finish(&l->c, argc, argv, first, role);
	if (!rc && l->c.o.qps != 1)
		rc = usage_error("lat", "latency is measured on one QP: drop -q/--qp");
	return rc;
}

int cmd_lat(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct lat_cli l = { 0 };
	enum perf_role role;
	int rc;

	rc = lat_parse(argc, argv, &g, &l, &role);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	l.c.o.tx_depth = 1;
	return perf_cli_run(&l.c, &g, role, run_client, NULL, &l);
}
