// SPDX-License-Identifier: MIT
/*
 * rdmakit incast: N senders hit one receiver at once (or everyone sends
 * to everyone), started together; one report with per-flow goodput,
 * Jain's fairness, flow completion times, per-message latency under load
 * and the counters that explain them.  Ranks come from --serve/HOST, or
 * from the launcher (Open MPI, PMI, Slurm) with --coordinator.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "incast.h"
#include "perf_cli.h"
#include "print.h"

enum {
	OPT_SERVE = OPT_PERF_CMD,
	OPT_SENDERS,
	OPT_WAIT_TIMEOUT,
	OPT_LOCAL,
	OPT_PATTERN,
	OPT_BYTES,
	OPT_COORDINATOR,
	OPT_RANK,
	OPT_SIZE,
	OPT_LINK_GBPS,
	OPT_EXPECT_GBPS,
	OPT_EXPECT_FAIRNESS,
	OPT_INTERVAL,
};

static const struct opt_spec incast_opts_spec[] = {
	{ "serve", OPT_SERVE, NULL, "be the receiver and coordinator (rank 0)" },
	{ "senders", OPT_SENDERS, "N", "coordinator: the senders to wait for" },
	{ "wait-timeout", OPT_WAIT_TIMEOUT, "SECONDS", "how long to wait for them (default 60)" },
	{ "local", OPT_LOCAL, "N", "sender: N senders from this process, each its own QPs" },
	{ "pattern", OPT_PATTERN, "PATTERN", "incast (many to one, default) or all-to-all" },
	{ "op", OPT_OP, "OP", "write (default) or send" },
	{ "connection", 'c', "TYPE", "transport: RC (default), UC or UD (UD: send, -s at most "
				     "the MTU)" },
	{ "size", 's', "BYTES", "message size, k/m/g suffixes allowed (default 65536)" },
	{ "duration", 'D', "SECONDS", "run every flow this long (default 5)" },
	{ "bytes", OPT_BYTES, "BYTES", "move BYTES per flow instead, and time each flow" },
	{ "interval", OPT_INTERVAL, "SECONDS", "sample each flow's goodput every SECONDS, like "
					      "iperf3 -i" },
	{ "qps", 'q', "N", "QPs per flow (default 1)" },
	{ "coordinator", OPT_COORDINATOR, "HOST:PORT", "launcher mode: rank 0 serves at HOST:PORT" },
	{ "rank", OPT_RANK, "N", "launcher mode: this process's rank (default: from the launcher)" },
	{ "world-size", OPT_SIZE, "N", "launcher mode: the number of ranks (default: from the "
					 "launcher)" },
	{ "link-gbps", OPT_LINK_GBPS, "GBPS", "the receiver's link rate (default: its interface's)" },
	{ "expect-gbps", OPT_EXPECT_GBPS, "GBPS", "exit 1 if the aggregate goodput is below GBPS" },
	{ "expect-fairness", OPT_EXPECT_FAIRNESS, "JAIN", "exit 1 if Jain's index is below JAIN" },
	{ "max-memory", OPT_MAX_MEMORY, "BYTES", "refuse a run whose buffers on this host need "
						 "more (default: 1 GiB or a quarter of RAM)" },
	PERF_OPTS_ENDPOINT,
	{ "tx-depth", 't', "N", "messages in flight per QP (default 128)" },
	{ "rx-depth", 'r', "N", "receives posted per QP (send; default 512)" },
	PERF_OPTS_TRANSPORT,
	PERF_OPTS_DCQCN,
	PERF_OPTS_PLOT,
	OPTS_END,
};

static const struct cmd_usage incast_usage = {
	.cmd = "incast",
	.synopsis = "--serve --senders N [OPTIONS]   (receiver and coordinator)\n"
		    "[OPTIONS] HOST                  (one sender joining HOST's run)\n"
		    "--local N [OPTIONS] HOST        (N senders from this host)\n"
		    "--coordinator HOST:PORT [OPTIONS] (under mpirun, srun or pdsh)",
	.description = "Many-to-one (incast) and all-to-all stress: every flow starts at once; "
		       "one report\nwith per-flow goodput, Jain's fairness index, flow completion "
		       "times, per-message\nlatency under load, and the retransmission, ECN/CNP "
		       "and PFC counter deltas.",
	.opts = incast_opts_spec,
};

struct incast_cli {
	struct perf_cli c;
	struct incast_opts o;
	bool serve, senders_set, bytes_set, local_set;
	const char *coordinator;
	int rank, size;
	double link_gbps, expect_gbps, expect_fairness;
};

/* incast's defaults: bw's, run by time (-D 5), one participant per process. */
static void incast_cli_init(struct incast_cli *x)
{
	perf_cli_init(&x->c, "incast", false);
	x->c.o.duration = 5;
	x->c.o.iters = 0;
	x->o.local = 1;
	x->o.listen_fd = -1;
	x->o.wait_timeout_s = 60;
	x->rank = x->size = -1;
}

static int incast_opt(void *ctx, int key, const char *arg)
{
	static const char *const patterns[] = { "incast", "all-to-all", NULL };
	static const char *const ops[] = { "write", "send", NULL };
	struct incast_cli *x = ctx;
	uint64_t v;
	int rc, idx;

	switch (key) {
	case OPT_SERVE: x->serve = true; return 0;
	case OPT_SENDERS:
		rc = parse_u64("incast", "--senders", arg, 1, INCAST_MAX_RANKS - 1, false, &v);
		x->o.senders = (unsigned)v;
		x->senders_set = true;
		return rc;
	case OPT_WAIT_TIMEOUT:
		return parse_double("incast", "--wait-timeout", arg, 0.1, 86400, &x->o.wait_timeout_s);
	case OPT_LOCAL:
		rc = parse_u64("incast", "--local", arg, 1, INCAST_MAX_RANKS - 1, false, &v);
		x->o.local = (unsigned)v;
		x->local_set = true;
		return rc;
	case OPT_PATTERN:
		rc = parse_choice("incast", "--pattern", arg, patterns, &idx);
		x->o.pattern = (enum incast_pattern)idx;
		x->c.o.explicit_set |= INCAST_SET_PATTERN;
		return rc;
	case OPT_OP:	/* incast moves data one way: write or send */
		rc = parse_choice("incast", "--op", arg, ops, &idx);
		x->c.o.op = idx ? PERF_SEND : PERF_WRITE;
		x->c.o.explicit_set |= PERF_SET_OP;
		return rc;
	case OPT_BYTES:
		rc = parse_u64("incast", "--bytes", arg, 1, 1ULL << 50, true, &x->o.flow_bytes);
		x->bytes_set = true;
		x->c.o.explicit_set |= INCAST_SET_BYTES;
		return rc;
	case 'q':	/* incast spells it --qps: per flow */
		rc = parse_u64("incast", "-q/--qps", arg, 1, PERF_MAX_QPS, false, &v);
		x->c.o.qps = (unsigned)v;
		x->c.o.explicit_set |= PERF_SET_QPS;
		return rc;
	case OPT_COORDINATOR: x->coordinator = arg; return 0;
	case OPT_RANK:
		rc = parse_u64("incast", "--rank", arg, 0, INCAST_MAX_RANKS - 1, false, &v);
		x->rank = (int)v;
		return rc;
	case OPT_SIZE:
		rc = parse_u64("incast", "--world-size", arg, 2, INCAST_MAX_RANKS, false, &v);
		x->size = (int)v;
		return rc;
	case OPT_LINK_GBPS:
		return parse_double("incast", "--link-gbps", arg, 0.001, 1e6, &x->link_gbps);
	case OPT_EXPECT_GBPS:
		return parse_double("incast", "--expect-gbps", arg, 0, 1e6, &x->expect_gbps);
	case OPT_EXPECT_FAIRNESS:
		return parse_double("incast", "--expect-fairness", arg, 0, 1, &x->expect_fairness);
	case OPT_INTERVAL:
		return parse_double("incast", "--interval", arg, PERF_MIN_INTERVAL, PERF_MAX_INTERVAL,
				    &x->c.o.interval);
	}
	rc = perf_cli_option(&x->c, key, arg);
	return rc == 1 ? EXIT_USAGE : rc;
}

/* The launcher's rank and size: Open MPI, then PMI, then Slurm. */
static void launcher_env(int *rank, int *size)
{
	static const char *const vars[][2] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *r = getenv(vars[i][0]), *s = getenv(vars[i][1]);

		if (r && s && *r && *s) {
			if (*rank < 0)
				*rank = atoi(r);
			if (*size < 0)
				*size = atoi(s);
			return;
		}
	}
}

/* HOST:PORT, [V6]:PORT; the host part is copied to host (cap bytes). */
static int split_host_port(const char *arg, char *host, size_t cap, uint16_t *port)
{
	const char *colon = arg[0] == '[' ? strstr(arg, "]:") : strrchr(arg, ':');
	size_t hl;
	uint64_t v;

	if (!colon)
		return usage_error("incast", "invalid value '%s' for --coordinator: expected "
				   "HOST:PORT", arg);
	hl = arg[0] == '[' ? (size_t)(colon - arg - 1) : (size_t)(colon - arg);
	if (hl == 0 || hl >= cap)
		return usage_error("incast", "invalid value '%s' for --coordinator: expected "
				   "HOST:PORT", arg);
	memcpy(host, arg[0] == '[' ? arg + 1 : arg, hl);
	host[hl] = '\0';
	if (parse_u64("incast", "--coordinator port", colon + (arg[0] == '[' ? 2 : 1), 1, 65535,
		      false, &v))
		return EXIT_USAGE;
	*port = (uint16_t)v;
	return 0;
}

/* Which role: coordinator or member, from the operands and the launcher. */
static int finish(struct incast_cli *x, int argc, char **argv, int first, char *host,
		  size_t cap)
{
	struct incast_opts *o = &x->o;
	int operands = argc - first;

	if (x->c.iters_set || x->c.all)
		return usage_error("incast", "incast runs by time (-D) or bytes per flow (--bytes)");
	if (x->bytes_set && x->c.duration_set)
		return usage_error("incast", "-D/--duration and --bytes exclude each other: give one");
	if (perf_cli_check_engine(&x->c))
		return EXIT_USAGE;
	if (x->c.o.size < 1)
		return usage_error("incast", "-s/--size must be at least 1 byte");
	perf_conn_default_op(&x->c.o);
	{
		char why[XPORT_ERR_LEN];

		if (perf_conn_check(&x->c.o, why) < 0)
			return usage_error("incast", "%s", why);
	}
	if (x->coordinator) {
		if (operands || x->serve || x->local_set)
			return usage_error("incast", "--coordinator takes the role from the launcher: "
					   "drop --serve, --local and HOST");
		if (split_host_port(x->coordinator, host, cap, &x->c.o.port))
			return EXIT_USAGE;
		launcher_env(&x->rank, &x->size);
		if (x->size < 2)
			return usage_error("incast", "--coordinator: the number of ranks is unknown; run "
					   "under mpirun/srun, or give --world-size N (and --rank)");
		if (x->rank >= x->size)
			return usage_error("incast", "--rank %d is not below the %d ranks", x->rank,
					   x->size);
		x->serve = x->rank == 0;
		o->senders = (unsigned)x->size - 1;
		o->rank = x->rank;
		if (x->serve)
			o->listen = NULL;	/* every address: HOST may name this one */
		else
			x->c.o.host = host;
		return 0;
	}
	if (x->serve) {
		if (operands)
			return usage_error("incast", "--serve waits for senders: drop HOST '%s'",
					   argv[first]);
		if (!x->senders_set)
			return usage_error("incast", "--serve needs --senders N: how many senders to "
					   "wait for");
		if (x->local_set)
			return usage_error("incast", "--local is for senders: drop it, or drop --serve");
		return 0;
	}
	if (operands != 1)
		return usage_error("incast", operands ? "unexpected argument '%s'; give one HOST "
				   "(the coordinator)" : "give the coordinator's HOST, or --serve to be "
				   "it%s", operands ? argv[first + 1] : "");
	if (x->senders_set)
		return usage_error("incast", "--senders is for the coordinator: drop it, or use "
				   "--serve");
	if (!*argv[first])
		return usage_error("incast", "empty HOST: give the coordinator's name or address");
	x->c.o.host = argv[first];
	o->rank = -1;
	return 0;
}

static void preamble(struct report *r, const struct incast_result *res, bool coordinator)
{
	const struct perf_opts *t = &res->test;
	char who[64];

	report_start_time(r);
	report_param(r, "Pattern", "pattern", REPORT_STR, RV_STR(incast_pattern_name(res->pattern)));
	report_param(r, "Role", "role", REPORT_STR, RV_STR(coordinator ? "coordinator" : "sender"));
	snprintf(who, sizeof(who), "%u", res->participants);
	report_param(r, "Participants", "participants", REPORT_U64, RV_U64(res->participants));
	report_param(r, "Engine", "engine", REPORT_STR, RV_STR(res->engine));
	report_param(r, "Local address", "local_address", REPORT_STR, RV_STR(res->local_addr));
	report_param(r, "Operation", "op", REPORT_STR, RV_STR(perf_op_name(t->op)));
	report_param(r, "Connection type", "connection", REPORT_STR, RV_STR(perf_conn_name(t->conn)));
	if (res->ud_asked_size)
		perf_cli_ud_note(r, res->ud_asked_size, t->size);
	report_param(r, "Message size", "size_bytes", REPORT_U64, RV_U64(t->size));
	if (res->flow_bytes)
		report_param(r, "Bytes per flow", "flow_bytes", REPORT_U64, RV_U64(res->flow_bytes));
	else
		report_param(r, "Duration", "duration_s", REPORT_DOUBLE, RV_DBL(t->duration));
	if (t->interval > 0)
		report_param(r, "Interval", "interval_s", REPORT_DOUBLE, RV_DBL(t->interval));
	report_param(r, "QPs per flow", "qps", REPORT_U64, RV_U64(t->qps));
	report_param(r, "TX depth", "tx_depth", REPORT_U64, RV_U64(t->tx_depth));
	report_param(r, "Mtu", "mtu_bytes", REPORT_U64, RV_U64(res->mtu));
	report_param(r, "Verify", "verify", REPORT_BOOL, RV_BOOL(t->verify));
}

static void flows_table(struct report *r, const struct incast_result *res)
{
	/* UC and UD add what was sent and lost; #bytes and #messages are then
	 * what arrived, where the receiver counted. */
	static const struct report_col cols[] = {
		{ "flow", "flow", REPORT_U64, 0 },
		{ "src", "src_rank", REPORT_U64, 0 },
		{ "dst", "dst_rank", REPORT_U64, 0 },
		{ "sender", "sender", REPORT_STR, 0 },
		{ "receiver", "receiver", REPORT_STR, 0 },
		{ "#bytes", "bytes", REPORT_U64, 0 },
		{ "#messages", "messages", REPORT_U64, 0 },
		{ "#sent", "sent_msgs", REPORT_U64, 0 },
		{ "#lost", "lost_msgs", REPORT_U64, 0 },
		{ "loss[%]", "loss_percent", REPORT_DOUBLE, 3 },
		{ "goodput[Gb/sec]", "goodput_gbps", REPORT_DOUBLE, 3 },
		{ "fct[usec]", "fct_us", REPORT_DOUBLE, 1 },
		{ "status", "status", REPORT_STR, 0 },
		{ NULL, "seconds", REPORT_DOUBLE, 6 },
		{ NULL, "sent_bytes", REPORT_U64, 0 },
	};
	enum { NCOLS = sizeof(cols) / sizeof(cols[0]) };
	/* #sent, #lost, loss[%] and sent_bytes: UC and UD only. */
	bool shown[NCOLS];
	struct report_col used[NCOLS];
	int widths[NCOLS] = { 0 };
	unsigned n = 0;

	for (unsigned c = 0; c < NCOLS; c++)
		shown[c] = res->unreliable || ((c < 7 || c > 9) && c != NCOLS - 1);

	for (unsigned c = 0; c < NCOLS; c++)
		if (shown[c])
			used[n++] = cols[c];
	/* Sender and receiver as wide as the longest name, so both read alike. */
	for (unsigned i = 0; i < res->participants && i < INCAST_MAX_RANKS; i++)
		if ((int)strlen(res->names[i]) > widths[3])
			widths[3] = widths[4] = (int)strlen(res->names[i]);
	report_table_begin_widths(r, used, n, widths);
	for (unsigned i = 0; i < res->nflows; i++) {
		const struct incast_flow *f = &res->flows[i];
		const char *status = f->failed ? "failed" :
				     (res->test.verify && !f->verified) ? "corrupt" : "ok";
		bool lost_known = f->loss.received_known;
		struct report_value all[NCOLS] = {
			RV_U64(f->id), RV_U64(f->src), RV_U64(f->dst),
			RV_STR(res->names[f->src % INCAST_MAX_RANKS]),
			RV_STR(res->names[f->dst % INCAST_MAX_RANKS]),
			RV_U64(incast_flow_delivered_bytes(f)), RV_U64(incast_flow_delivered_msgs(f)),
			RV_U64(f->messages), lost_known ? RV_U64(f->loss.lost_msgs) : RV_NONE,
			lost_known ? RV_DBL(f->loss.loss_percent) : RV_NONE,
			RV_DBL(f->goodput_gbps), f->fct_us >= 0 ? RV_DBL(f->fct_us) : RV_NONE,
			RV_STR(status), RV_DBL(f->seconds), RV_U64(f->bytes),
		};
		struct report_value v[NCOLS];

		n = 0;
		for (unsigned c = 0; c < NCOLS; c++)
			if (shown[c])
				v[n++] = all[c];
		report_table_row(r, v);
		if (f->failed) {
			print_string(report_row_more(r), PRINT_JSON, "error", NULL, f->error);
			report_row_done(r);
		}
	}
	report_table_end(r);
}

/* Post-to-completion latency in microseconds; JSON null when none was timed. */
static void latency(struct printer *pr, const struct hist *h)
{
	if (!hist_count(h)) {
		print_null(pr, PRINT_JSON, "latency_us", NULL, NULL);
		return;
	}
	print_open_object(pr, "latency_us");
	print_uint(pr, PRINT_JSON, "count", NULL, hist_count(h));
	print_float(pr, PRINT_ANY, "p50", " Latency[usec] p50/p90/p99/p99.9/max : %.2f",
		    hist_percentile(h, 50) / 1e3);
	print_float(pr, PRINT_ANY, "p90", " / %.2f", hist_percentile(h, 90) / 1e3);
	print_float(pr, PRINT_ANY, "p99", " / %.2f", hist_percentile(h, 99) / 1e3);
	print_float(pr, PRINT_ANY, "p99_9", " / %.2f", hist_percentile(h, 99.9) / 1e3);
	print_float(pr, PRINT_ANY, "max", " / %.2f", hist_max(h) / 1e3);
	print_uint(pr, PRINT_FP, NULL, " (post to completion, %llu messages)\n", hist_count(h));
	print_float(pr, PRINT_JSON, "avg", NULL, hist_mean(h) / 1e3);
	print_close(pr);
}

/* Counter deltas grouped by source: text lines wrap past column 70. */
static void counters(struct printer *pr, const struct incast_result *res)
{
	print_fp(pr, " Counters over the run (deltas):\n");
	print_open_object(pr, "counters");
	for (unsigned i = 0; i < res->ncounters; i++) {
		const char *src = res->counters[i].source;
		bool seen = false;
		int col;

		for (unsigned j = 0; j < i && !seen; j++)
			seen = !strcmp(res->counters[j].source, src);
		if (seen)
			continue;	/* printed with its first counter */
		col = print_string(pr, PRINT_FP, NULL, "   %-10s", src);
		print_open_object(pr, src);
		for (unsigned j = i; j < res->ncounters; j++) {
			const struct incast_counter *k = &res->counters[j];

			if (strcmp(k->source, src))
				continue;
			if (col > 70) {
				print_fp(pr, "\n");
				col = print_string(pr, PRINT_FP, NULL, "   %-10s", "");
			}
			col += print_string(pr, PRINT_FP, NULL, " %s", k->name);
			col += print_uint(pr, PRINT_ANY, k->name, " %llu", k->delta);
		}
		print_close(pr);
		print_fp(pr, "\n");
	}
	print_close(pr);
}

/* Goodput per interval (--interval): text one line per interval with the
 * sum, the slowest and fastest flow and Jain's index over the flows that
 * moved data in it; JSON each flow's bytes and goodput too. */
static void intervals(struct printer *pr, const struct incast_result *res)
{
	unsigned n = 0;
	double w = (double)res->interval_ns / 1e9;
	double *good;

	for (unsigned i = 0; i < res->nflows; i++)
		if (res->flows[i].interval_bytes && res->flows[i].nintervals > n)
			n = res->flows[i].nintervals;
	if (!res->interval_ns || !(good = calloc(res->nflows ? res->nflows : 1, sizeof(*good))))
		return;
	print_fp(pr, " Intervals (goodput[Gb/sec]: sum, slowest .. fastest flow, Jain's index):\n");
	print_float(pr, PRINT_JSON, "interval_s", NULL, w);
	print_open_array(pr, "intervals");
	for (unsigned k = 0; k < n; k++) {
		/* The last ends with the longest flow (a sliver past it joined it). */
		double start = k * w, end = k + 1 < n ? (k + 1) * w : fmax(res->seconds, start);
		double secs = end - start, lo = INFINITY, hi = 0;
		uint64_t sum = 0;
		unsigned ng = 0;

		print_open_object(pr, NULL);
		print_float(pr, PRINT_ANY, "start_s", " [%7.2f", start);
		print_float(pr, PRINT_ANY, "end_s", "-%7.2f sec]", end);
		print_open_array(pr, "flows");
		for (unsigned i = 0; i < res->nflows; i++) {
			const struct incast_flow *f = &res->flows[i];
			uint64_t b = f->interval_bytes && k < f->nintervals ? f->interval_bytes[k] : 0;
			double g = secs > 0 ? (double)b * 8 / secs / 1e9 : 0;

			if (!f->interval_bytes)
				continue;
			print_open_object(pr, NULL);
			print_uint(pr, PRINT_JSON, "flow", NULL, f->id);
			print_uint(pr, PRINT_JSON, "bytes", NULL, b);
			print_float(pr, PRINT_JSON, "goodput_gbps", NULL, g);
			print_close(pr);
			sum += b;
			lo = fmin(lo, g);
			hi = fmax(hi, g);
			if (b)
				good[ng++] = g;
		}
		print_close(pr);
		print_uint(pr, PRINT_JSON, "bytes", NULL, sum);
		print_float(pr, PRINT_ANY, "goodput_gbps", " %10.3f",
			    secs > 0 ? (double)sum * 8 / secs / 1e9 : 0);
		print_float(pr, PRINT_ANY, "slowest_gbps", "  %8.3f", isfinite(lo) ? lo : 0);
		print_float(pr, PRINT_ANY, "fastest_gbps", " .. %-8.3f", hi);
		print_float(pr, PRINT_ANY, "fairness_jain", " %.4f\n", incast_jain(good, ng));
		print_close(pr);
	}
	print_close(pr);
	free(good);
}

static void summary(struct report *r, const struct incast_result *res, double link_gbps,
		    bool coordinator)
{
	struct printer pr;

	report_printer_init(r, &pr);
	intervals(&pr, res);
	print_open_object(&pr, "aggregate");
	print_float(&pr, PRINT_ANY, "goodput_gbps", " Aggregate goodput[Gb/sec] : %.3f",
		    res->aggregate_gbps);
	print_float(&pr, PRINT_JSON, "seconds", NULL, res->seconds);
	if (link_gbps > 0 && res->pattern == INCAST_MANY_TO_ONE) {
		double share = res->aggregate_gbps / link_gbps;

		print_float(&pr, PRINT_JSON, "link_gbps", NULL, link_gbps);
		print_float(&pr, PRINT_JSON, "link_share", NULL, share);
		print_fp(&pr, " (%.1f%% of the receiver's %g Gb/s link)", 100 * share, link_gbps);
	} else {
		print_null(&pr, PRINT_JSON, "link_gbps", NULL, NULL);
		print_null(&pr, PRINT_JSON, "link_share", NULL, NULL);
	}
	print_close(&pr);
	print_float(&pr, PRINT_ANY, "fairness_jain", "\n Fairness (Jain's index)   : %.4f",
		    res->fairness_jain);
	print_uint(&pr, PRINT_FP, NULL, " over %llu flows\n", res->fair_flows);
	if (res->has_fct) {
		print_open_object(&pr, "fct_us");
		print_float(&pr, PRINT_ANY, "p50", " FCT[usec] p50/p99/max     : %.1f", res->fct_p50_us);
		print_float(&pr, PRINT_ANY, "p99", " / %.1f", res->fct_p99_us);
		print_float(&pr, PRINT_ANY, "max", " / %.1f\n", res->fct_max_us);
		print_close(&pr);
	} else {
		print_null(&pr, PRINT_ANY, "fct_us", " FCT[usec]                 : %s (every flow ran "
			   "-D seconds)\n", "-");
	}
	if (res->unreliable) {
		/* The receivers' counts; a sender alone knows only what it sent. */
		print_open_object(&pr, "loss");
		perf_cli_loss(&pr, " Loss (UC/UD)              :", &res->loss,
			      res->test.op != PERF_SEND ? "a WRITE gives the receiver nothing to count: "
			      "--verify checks the data" : coordinator ? "not every flow's two ends "
			      "reported (see the flows)" : "the coordinator's report counts what arrived");
		print_close(&pr);
	}
	latency(&pr, &res->latency);
	counters(&pr, res);
	print_uint(&pr, PRINT_JSON, "failed_participants", NULL, res->failed_participants);
	report_results_object(r, "flows", printer_take(&pr));
}

/* Exit code from the result: failures, corruption, thresholds. */
static int verdict(struct report *r, const struct incast_cli *x, const struct incast_result *res)
{
	int rc = EXIT_OK;

	for (unsigned i = 0; i < res->nflows; i++) {
		const struct incast_flow *f = &res->flows[i];

		if (f->failed) {
			report_error(r, "flow %u (%s -> %s): %s", f->id, res->names[f->src],
				     res->names[f->dst], f->error);
			rc = EXIT_RUNTIME;
		} else if (res->test.verify && !f->verified && rc == EXIT_OK) {
			report_error(r, "--verify: flow %u (%s -> %s) delivered wrong data", f->id,
				     res->names[f->src], res->names[f->dst]);
			rc = EXIT_CHECK_FAILED;
		}
	}
	if (res->interrupted && rc == EXIT_OK)
		rc = EXIT_RUNTIME;
	if (rc == EXIT_OK && x->expect_gbps > 0 && res->aggregate_gbps < x->expect_gbps) {
		report_error(r, "aggregate goodput %.3f Gb/s is below --expect-gbps %g",
			     res->aggregate_gbps, x->expect_gbps);
		rc = EXIT_CHECK_FAILED;
	}
	if (rc == EXIT_OK && x->expect_fairness > 0 && res->fairness_jain < x->expect_fairness) {
		report_error(r, "Jain's fairness index %.4f is below --expect-fairness %g",
			     res->fairness_jain, x->expect_fairness);
		rc = EXIT_CHECK_FAILED;
	}
	return rc;
}

int cmd_incast(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct incast_cli *x = calloc(1, sizeof(*x));
	struct incast_result *res = calloc(1, sizeof(*res));
	char host[256], err[XPORT_ERR_LEN];
	const char *plot = NULL;
	FILE *quiet = NULL;
	struct report r;
	int first, rc;

	if (!x || !res) {
		free(x);
		free(res);
		return runtime_error("incast", "out of memory");
	}
	incast_cli_init(x);
	rc = opts_parse(&incast_usage, argc, argv, &g, incast_opt, x, &first);
	if (rc) {
		rc = rc < 0 ? EXIT_OK : rc;
		goto out;
	}
	rc = finish(x, argc, argv, first, host, sizeof(host));
	if (!rc)
		rc = perf_cli_load_key(&x->c);
	if (rc)
		goto out;
	if (x->coordinator && x->rank < 0) {
		/* No rank from anywhere (pdsh, ssh loops): whoever binds HOST:PORT
		 * first is rank 0 and serves; the rest join in order of arrival. */
		if (oob_listen(host, x->c.o.port, &x->o.listen_fd, err) == 0) {
			x->rank = 0;
			x->serve = true;
			x->o.listen = NULL;
		} else {
			x->c.o.host = host;
		}
	}
	x->o.p = x->c.o;
	x->o.p.on_refused = perf_cli_say_refused;
	x->o.p.refused_ctx = (void *)"incast";
	perf_cli_signals();
	/* Under a launcher only rank 0 reports; the others print only errors. */
	quiet = x->coordinator && !x->serve ? fopen("/dev/null", "w") : NULL;
	report_init(&r, "incast", RDMAKIT_VERSION, g.json, g.pretty, quiet ? quiet : stdout,
		    stderr);
	/* Under a launcher only rank 0 draws (one FILE, one writer). */
	plot = x->c.plot_path && !quiet ? x->c.plot_path : NULL;
	if (plot)
		report_keep_document(&r);
	if (x->serve) {
		if (!g.json && !x->coordinator) {
			printf("Waiting for %u senders on port %u...\n", x->o.senders, x->o.p.port);
			perf_cli_warn_open(&x->c, x->o.listen);
		}
		fflush(stdout);
		rc = incast_coordinate(&x->o, res, err);
	} else {
		rc = incast_join(&x->o, res, err);
	}
	if (rc < 0) {
		report_error(&r, "%s", err);
		report_finish(&r);
		json_decref(report_take_document(&r));	/* no run to draw */
		rc = EXIT_RUNTIME;
		goto out;
	}
	{
		double link = x->link_gbps > 0 ? x->link_gbps : incast_link_gbps(res->local_addr);

		preamble(&r, res, x->serve);
		flows_table(&r, res);
		summary(&r, res, x->serve ? link : 0, x->serve);
	}
	rc = verdict(&r, x, res);
	report_finish(&r);
	if (plot)
		rc = perf_cli_plot("incast", plot, &r, rc);
out:
	if (quiet)
		fclose(quiet);
	incast_result_free(res);
	free(res);
	free(x);
	return rc;
}
