// SPDX-License-Identifier: MIT
/*
 * rdmakit top: RDMA port, PFC, ECN/CNP and retransmission counters as
 * rates, live on one screen (cmd/top_tui.c), as a text table every
 * interval (-b) or as one JSON object per interval (--json).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counters_nl.h"
#include "report.h"
#include "top.h"

enum {
	OPT_SYSFS_ROOT = OPT_LONG_ONLY + 1,
	OPT_PROC_ROOT,
};

static const struct opt_spec top_opt_specs[] = {
	{ "batch", 'b', NULL, "print a text table every interval instead of the live screen" },
	{ "iterations", 'n', "N", "stop after N intervals (default: until stopped)" },
	{ "delay", 'd', "SECONDS", "seconds between samples (default 1; fractions allowed)" },
	{ "interface", 'i', "IFACE", "also show network interface IFACE (repeatable)" },
	{ "totals", 't', NULL, "show counter totals instead of rates" },
	{ "verbose", 'v', NULL, "with -b: also list every counter of every port" },
	{ "sysfs-root", OPT_SYSFS_ROOT, "DIR", "read DIR/class/infiniband and DIR/class/net, not /sys" },
	{ "proc-root", OPT_PROC_ROOT, "DIR", "read DIR/net/netstat, not /proc/net/netstat" },
	OPTS_END,
};

static const struct cmd_usage top_usage = {
	.cmd = "top",
	.synopsis = "[-b] [-n N] [-d SECONDS] [-i IFACE] [-t] [-v] [--json]\n"
		    "[--sysfs-root DIR] [--proc-root DIR] [DEVICE[/PORT] ...]",
	.description = "Monitor RDMA ports live: rx/tx Gb/s and Mpps, PFC pause frames, ECN marks,\n"
		       "CNPs sent and handled, out-of-sequence packets, NAK sequence errors and\n"
		       "timeouts, as rates (or totals), from every counter in sysfs counters/ and\n"
		       "hw_counters/, the netdev's ethtool statistics and the host's ECN counters in\n"
		       "/proc/net/netstat.  Keys on the live screen: q quit, arrows/j/k select,\n"
		       "Enter details, s sort, d rates/totals, p pause, +/- interval, h help.",
	.opts = top_opt_specs,
};

static int top_opt(void *ctx, int key, const char *arg)
{
	struct top_opts *o = ctx;

	switch (key) {
	case 'b': o->batch = true; break;
	case 'n': return parse_u64("top", "-n/--iterations", arg, 1, UINT32_MAX, false, &o->iterations);
	case 'd': return parse_double("top", "-d/--delay", arg, 0.01, 3600, &o->delay_s);
	case 'i':
		if (o->nifaces == TOP_MAX_NAMES)
			return usage_error("top", "too many -i/--interface options (at most %d)",
					   TOP_MAX_NAMES);
		if (!*arg || strlen(arg) >= IF_NAMESIZE || strchr(arg, '/'))
			return usage_error("top", "invalid interface name '%s' for -i/--interface: "
					   "expected a name such as eth0 ('ip link' lists them)", arg);
		o->ifaces[o->nifaces++] = arg;
		break;
	case 't': o->totals = true; break;
	case 'v': o->verbose = true; break;
	case OPT_SYSFS_ROOT: o->ctr.sysfs_root = arg; break;
	case OPT_PROC_ROOT: o->ctr.proc_root = arg; break;
	default: return EXIT_USAGE;
	}
	return 0;
}

/* --- JSON ---------------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *u64_json(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *counter_json(const struct ctr_counter *c)
{
	json_t *o = json_object();	/* not json_pack: this runs for every counter */

	json_object_set_new(o, "value", u64_json(c->value));
	json_object_set_new(o, "rate", num_or_null(c->rate));

	if (c->flags & CTR_F_RESET)
		json_object_set_new(o, "reset", json_true());
	if (c->flags & CTR_F_SATURATED)
		json_object_set_new(o, "saturated", json_true());
	return o;
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *pfc_json(const struct ctr_port *p)
{
	json_t *rx = json_array(), *tx = json_array(), *rxr = json_array(), *txr = json_array();
	struct ctr_pfc pfc;

	if (!ctr_port_pfc(p, &pfc)) {
		json_decref(rx), json_decref(tx), json_decref(rxr), json_decref(txr);
		return json_null();
	}
	for (int i = 0; i < CTR_PFC_PRIOS; i++) {
		bool r = pfc.rx_known & (1u << i), t = pfc.tx_known & (1u << i);

		json_array_append_new(rx, r ? u64_json(pfc.rx[i]) : json_null());
		json_array_append_new(tx, t ? u64_json(pfc.tx[i]) : json_null());
		json_array_append_new(rxr, r ? num_or_null(pfc.rx_rate[i]) : json_null());
		json_array_append_new(txr, t ? num_or_null(pfc.tx_rate[i]) : json_null());
	}
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "source", pfc.source, "rx_pause", rx,
			 "tx_pause", tx, "rx_pause_rate", rxr, "tx_pause_rate", txr);
}

/* DCB PFC settings of the port's netdev; its counters are added later. */
static json_t *dcb_json(const struct ctr_port *p)
{
	json_t *en;

	if (!p->dcb_known)
		return NULL;
	en = json_array();
	for (int i = 0; i < CTR_PFC_PRIOS; i++)
		if (p->pfc_en & (1u << i))
			json_array_append_new(en, json_integer(i));
	return json_pack("{s:i, s:o, s:o}", "pfc_cap", p->pfc_cap, "pfc_enabled", en,
			 "counters", json_object());
}

static json_t *pause_json(const struct ctr_port *p)
{
	if (!p->pause_known)
		return NULL;
	return json_pack("{s:b, s:b, s:b, s:o}", "autoneg", p->pause_autoneg, "rx", p->pause_rx,
			 "tx", p->pause_tx, "counters", json_object());
}

/* The object a counter of this source belongs in. */
static json_t *counters_of(enum ctr_src src, json_t *ctrs, json_t *eth, json_t *dcb, json_t *pause)
{
	switch (src) {
	case CTR_SRC_ETHTOOL: return eth;
	case CTR_SRC_DCB: return dcb ? json_object_get(dcb, "counters") : NULL;
	case CTR_SRC_PAUSE: return pause ? json_object_get(pause, "counters") : NULL;
	default: return ctrs;
	}
}

/* rx_gbps etc. from the port's traffic meanings. */
static void traffic_json(json_t *o, const struct ctr_port *p)
{
	static const struct {
		enum ctr_meaning m;
		const char *total, *rate;
		double scale;
	} t[] = {
		{ CTR_M_RX_BYTES, "rx_bytes", "rx_gbps", 8 / 1e9 },
		{ CTR_M_TX_BYTES, "tx_bytes", "tx_gbps", 8 / 1e9 },
		{ CTR_M_RX_PACKETS, "rx_packets", "rx_mpps", 1 / 1e6 },
		{ CTR_M_TX_PACKETS, "tx_packets", "tx_mpps", 1 / 1e6 },
	};

	uint64_t v[4];
	double r[4];
	bool ok[4];

	for (size_t i = 0; i < 4; i++)
		ok[i] = ctr_port_meaning(p, t[i].m, &v[i], &r[i], NULL);
	/* Rates first, then totals: the order the man page lists them. */
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(o, t[i].rate, ok[i] ? num_or_null(r[i] * t[i].scale) : json_null());
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(o, t[i].total, ok[i] ? u64_json(v[i]) : json_null());
}

static json_t *port_json(const struct ctr_port *p)
{
	json_t *o = json_object(), *sem = json_object(), *ctrs = json_object(), *eth = json_object();
	json_t *dcb = dcb_json(p), *pause = pause_json(p);

	json_object_set_new(o, "device", str_or_null(p->device));
	json_object_set_new(o, "port", p->device[0] ? json_integer(p->port) : json_null());
	json_object_set_new(o, "netdev", str_or_null(p->netdev));
	json_object_set_new(o, "state", str_or_null(p->state));
	json_object_set_new(o, "phys_state", str_or_null(p->phys_state));
	json_object_set_new(o, "link_layer", str_or_null(p->link_layer));
	json_object_set_new(o, "rate_gbps", p->rate_gbps > 0 ? json_real(p->rate_gbps) : json_null());
	traffic_json(o, p);
	for (int m = CTR_M_ECN_MARKED; m < CTR_M_COUNT; m++) {
		uint64_t v;
		double r;

		if (ctr_port_meaning(p, (enum ctr_meaning)m, &v, &r, NULL))
			json_object_set_new(sem, ctr_meaning_key((enum ctr_meaning)m),
					    json_pack("{s:o, s:o}", "value", u64_json(v),
						      "rate", num_or_null(r)));
	}
	json_object_set_new(o, "semantic", sem);
	for (size_t i = 0; i < p->set.n; i++) {
		const struct ctr_counter *c = &p->set.c[i];
		json_t *dst = counters_of((enum ctr_src)c->src, ctrs, eth, dcb, pause);
		char key[160];

		if (!dst)
			continue;
		snprintf(key, sizeof(key), "%s", c->name);
		/* A device-level counter named like one of the port's. */
		if (json_object_get(dst, key))
			snprintf(key, sizeof(key), "device/%s", c->name);
		json_object_set_new(dst, key, counter_json(c));
	}
	json_object_set_new(o, "counters", ctrs);
	json_object_set_new(o, "ethtool", eth);
	if (p->ethtool_error[0])
		json_object_set_new(o, "ethtool_error", json_string(p->ethtool_error));
	json_object_set_new(o, "dcb", dcb ? dcb : json_null());
	if (p->dcb_error[0])
		json_object_set_new(o, "dcb_error", json_string(p->dcb_error));
	json_object_set_new(o, "pause", pause ? pause : json_null());
	if (p->pause_error[0])
		json_object_set_new(o, "pause_error", json_string(p->pause_error));
	json_object_set_new(o, "pfc", pfc_json(p));
	json_object_set_new(o, "new", json_boolean(p->is_new));
	return o;
}

static void iso_time(const struct timespec *ts, char *buf, size_t cap)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03ldZ", base, ts->tv_nsec / 1000000);
}

/* Soft-engine processes: totals and per-QP counters, as {value, rate}. */
static json_t *engines_json(const struct ctr_snapshot *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->nengines; i++) {
		const struct ctr_engine *e = &s->engines[i];
		json_t *c = json_object();

		for (size_t k = 0; k < e->set.n; k++)
			json_object_set_new(c, e->set.c[k].name, counter_json(&e->set.c[k]));
		json_array_append_new(a, json_pack("{s:i, s:s, s:o}", "pid", e->pid, "name",
						   e->name, "counters", c));
	}
	return a;
}

static void emit_json(const struct top_state *st)
{
	const struct ctr_snapshot *s = &st->cur;
	json_t *o = json_object(), *ports = json_array(), *gone = json_array(), *ns;
	char when[48];

	iso_time(&s->wall, when, sizeof(when));
	json_object_set_new(o, "time", json_string(when));
	json_object_set_new(o, "host", json_string(st->host));
	json_object_set_new(o, "interval_s", json_real(s->interval_s));
	json_object_set_new(o, "sysfs_root", json_string(st->o->ctr.sysfs_root ?
							  st->o->ctr.sysfs_root : CTR_SYSFS_ROOT));
	json_object_set_new(o, "proc_root", json_string(st->o->ctr.proc_root ?
							 st->o->ctr.proc_root : CTR_PROC_ROOT));
	json_object_set_new(o, "rdma_devices", json_integer((json_int_t)s->rdma_devices));
	for (size_t i = 0; i < s->nports; i++)
		json_array_append_new(ports, port_json(&s->ports[i]));
	json_object_set_new(o, "ports", ports);
	ns = s->have_netstat ? json_object() : json_null();
	for (size_t i = 0; s->have_netstat && i < s->netstat.n; i++)
		json_object_set_new(ns, s->netstat.c[i].name, counter_json(&s->netstat.c[i]));
	json_object_set_new(o, "netstat", ns);
	json_object_set_new(o, "engines", engines_json(s));
	for (size_t i = 0; i < s->ngone; i++)
		json_array_append_new(gone, json_string(s->gone[i]));
	json_object_set_new(o, "gone", gone);
	report_emit(stdout, o);
}

/* --- batch text ---------------------------------------------------------------- */

static void print_counters(FILE *out, const struct ctr_port *p, bool totals)
{
	char name[80];

	top_port_name(p, name, sizeof(name));
	fprintf(out, " %s: every counter (source, value, rate/s)\n", name);
	for (size_t i = 0; i < p->set.n; i++) {
		const struct ctr_counter *c = &p->set.c[i];
		char rate[16];

		top_rate_text(c, rate, sizeof(rate));
		fprintf(out, "  %-40s %-18s %20llu %10s%s\n", c->name,
			ctr_src_name((enum ctr_src)c->src), (unsigned long long)c->value,
			totals ? "" : rate,
			c->flags & CTR_F_RESET ? " (reset)" : "");
	}
	if (p->ethtool_error[0])
		fprintf(out, "  (no ethtool statistics: %s)\n", p->ethtool_error);
	if (p->dcb_known)
		fprintf(out, "  (DCB: pfc_cap %u, PFC enabled on priorities 0x%02x)\n", p->pfc_cap,
			p->pfc_en);
	else if (p->dcb_error[0])
		fprintf(out, "  (no DCB PFC: %s)\n", p->dcb_error);
	if (p->pause_known)
		fprintf(out, "  (pause: autoneg %s, rx %s, tx %s)\n", p->pause_autoneg ? "on" : "off",
			p->pause_rx ? "on" : "off", p->pause_tx ? "on" : "off");
	else if (p->pause_error[0])
		fprintf(out, "  (no pause statistics: %s)\n", p->pause_error);
}

static void print_table(struct report *r, const struct top_state *st)
{
	const struct ctr_snapshot *s = &st->cur;
	bool totals = st->o->totals;
	struct report_col rcols[TOP_COL_COUNT];
	struct report_value vals[TOP_COL_COUNT];
	char heads[TOP_COL_COUNT][32];
	char (*cells)[TOP_COL_COUNT][32] = calloc(s->nports ? s->nports : 1, sizeof(*cells));
	int widths[TOP_COL_COUNT];

	if (!cells)
		return;
	for (int c = 0; c < TOP_COL_COUNT; c++) {
		const struct top_col_info *ci = top_col((enum top_col)c);
		const char *h = totals ? ci->total_head : ci->rate_head;

		widths[c] = (int)strlen(h);
		for (size_t i = 0; i < s->nports; i++) {
			bool hot;

			top_cell(&s->ports[i], (enum top_col)c, totals, cells[i][c], sizeof(cells[i][c]),
				 &hot);
			if ((int)strlen(cells[i][c]) > widths[c])
				widths[c] = (int)strlen(cells[i][c]);
		}
		snprintf(heads[c], sizeof(heads[c]), "%-*s", widths[c], h);
		rcols[c] = (struct report_col){ heads[c], h, REPORT_STR, 0 };
	}
	report_table_begin(r, rcols, TOP_COL_COUNT);
	for (size_t i = 0; i < s->nports; i++) {
		for (int c = 0; c < TOP_COL_COUNT; c++)
			vals[c] = RV_STR(cells[i][c]);
		report_table_row(r, vals);
	}
	report_table_end(r);
	free(cells);
}

static void print_engine(const struct ctr_engine *e, bool totals)
{
	char line[512];

	top_engine_line(e, totals, line, sizeof(line));
	printf(" %s\n", line);
}

static void print_text(const struct top_state *st)
{
	const struct ctr_snapshot *s = &st->cur;
	char when[32], ecn[256];
	struct report r;
	struct tm tm;

	localtime_r(&s->wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("rdmakit top - %s - %s - interval %.2f s - %s\n", st->host, when, s->interval_s,
	       st->o->totals ? "totals" : "rates per second");
	report_init(&r, "top", RDMAKIT_VERSION, false, false, stdout, stderr);
	if (s->nports)
		print_table(&r, st);
	top_ecn_line(s, st->o->totals, ecn, sizeof(ecn));
	if (ecn[0])
		printf(" host ECN (%s/net/netstat IpExt): %s\n",
		       st->o->ctr.proc_root ? st->o->ctr.proc_root : CTR_PROC_ROOT, ecn);
	for (size_t i = 0; i < s->nengines; i++)
		print_engine(&s->engines[i], st->o->totals);
	for (size_t i = 0; i < s->ngone; i++)
		printf(" gone: %s\n", s->gone[i]);
	for (size_t i = 0; st->o->verbose && i < s->nports; i++)
		print_counters(stdout, &s->ports[i], st->o->totals);
	report_finish(&r);
}

/* --- the command ----------------------------------------------------------------- */

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* `deflt` names the usual mount point, the fix when DIR is wrong. */
static int check_dir(const char *opt, const char *dir, const char *deflt)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return runtime_error("top", "%s %s: %s; give the directory it is mounted on "
				     "(default %s)", opt, dir, strerror(errno), deflt);
	if (!S_ISDIR(st.st_mode))
		return runtime_error("top", "%s %s: not a directory; give the directory it is "
				     "mounted on (default %s)", opt, dir, deflt);
	return 0;
}

/* Every DEVICE[/PORT] and -i IFACE must exist at the start. */
static int check_names(const struct top_state *st)
{
	const struct top_opts *o = st->o;
	const char *root = o->ctr.sysfs_root ? o->ctr.sysfs_root : CTR_SYSFS_ROOT;

	for (size_t i = 0; i < o->ndevices; i++) {
		const char *f = o->devices[i], *slash = strchr(f, '/');
		size_t len = slash ? (size_t)(slash - f) : strlen(f);
		bool found = false;

		for (size_t k = 0; k < st->cur.nports && !found; k++) {
			const struct ctr_port *p = &st->cur.ports[k];

			found = p->device[0] && strlen(p->device) == len && !strncmp(p->device, f, len) &&
				(!slash || atoi(slash + 1) == p->port);
		}
		if (!found)
			return runtime_error("top", "no RDMA device %s'%s' under %s/class/infiniband; "
					     "'rdmakit devices' lists them", slash ? "port " : "", f,
					     root);
	}
	for (size_t i = 0; i < o->nifaces; i++) {
		bool found = false;

		for (size_t k = 0; k < st->cur.nports && !found; k++)
			found = !st->cur.ports[k].device[0] &&
				!strcmp(st->cur.ports[k].netdev, o->ifaces[i]);
		if (!found)
			return runtime_error("top", "no network interface '%s' under %s/class/net; "
					     "'ip link' lists them", o->ifaces[i], root);
	}
	return 0;
}

static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000u),
			       (long)(deadline_ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int run_batch(struct top_state *st)
{
	const struct top_opts *o = st->o;
	uint64_t next = st->cur.mono_ns;
	char msg[512];

	top_nothing_message(st, msg, sizeof(msg));
	if (msg[0] && o->json)
		fprintf(stderr, "rdmakit top: %s\n", msg);
	else if (msg[0])
		printf("%s\n", msg);
	if (!st->cur.have_netstat)
		fprintf(stderr, "rdmakit top: no ECN counters in %s/net/netstat; host ECN not shown\n",
			o->ctr.proc_root ? o->ctr.proc_root : CTR_PROC_ROOT);
	if (st->cur.warning[0])
		fprintf(stderr, "rdmakit top: %s\n", st->cur.warning);
	fflush(stdout);
	for (uint64_t i = 0; !o->iterations || i < o->iterations; i++) {
		next += (uint64_t)(o->delay_s * 1e9);
		sleep_until(next);
		if (top_sample(st) < 0)
			return runtime_error("top", "%s", st->err);
		if (o->json)
			emit_json(st);
		else
			print_text(st);
		fflush(stdout);
	}
	return EXIT_OK;
}

/* Counter files stay open between samples (a host with 16 ports has
 * over 1,600): allow what the hard limit allows, as a soft limit. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_top(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct top_opts o = { .delay_s = 1.0 };
	struct top_state st = { .o = &o };
	int first, rc;

	rc = opts_parse(&top_usage, argc, argv, &g, top_opt, &o, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	for (int i = first; i < argc; i++) {
		if (o.ndevices == TOP_MAX_NAMES)
			return usage_error("top", "too many DEVICE operands (at most %d)", TOP_MAX_NAMES);
		if (!argv[i][0] || argv[i][0] == '/')
			return usage_error("top", "invalid DEVICE '%s': expected a name such as mlx5_0 "
					   "or mlx5_0/1", argv[i]);
		o.devices[o.ndevices++] = argv[i];
	}
	if (o.verbose && !o.batch && !g.json)
		o.batch = true;		/* -v lists counters: a batch thing */
	o.json = g.json;
	if (o.ctr.sysfs_root && (rc = check_dir("--sysfs-root", o.ctr.sysfs_root, CTR_SYSFS_ROOT)))
		return rc;
	if (o.ctr.proc_root && (rc = check_dir("--proc-root", o.ctr.proc_root, CTR_PROC_ROOT)))
		return rc;
	o.ctr.devices = o.devices;
	o.ctr.ndevices = o.ndevices;
	o.ctr.ifaces = o.ifaces;
	o.ctr.nifaces = o.nifaces;
	o.ctr.port_ethtool = ctr_opts_default_ethtool(o.ctr.sysfs_root);
	/* Tests: DCB and pause replies recorded in files (see the man page). */
	o.ctr.netlink_replay = getenv("RDMAKIT_NETLINK_REPLAY");
	if (o.ctr.netlink_replay && !*o.ctr.netlink_replay)
		o.ctr.netlink_replay = NULL;
	if (o.ctr.netlink_replay && !is_dir(o.ctr.netlink_replay))
		return runtime_error("top", "RDMAKIT_NETLINK_REPLAY=%s: not a directory; unset it to "
				     "ask the kernel", o.ctr.netlink_replay);
	if (gethostname(st.host, sizeof(st.host) - 1) < 0)
		snprintf(st.host, sizeof(st.host), "?");
	/* The live screen needs a terminal on both ends; otherwise batch. */
	if (!o.json && !o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		o.batch = true;
	o.ctr.history = !o.json && !o.batch;
	raise_fd_limit();
	/* Without the cache (no memory) every file is opened each sample. */
	o.ctr.cache = ctr_cache_new();
	o.ctr.nl = ctr_nl_open();
	if (top_sample(&st) < 0)
		rc = runtime_error("top", "%s", st.err);
	else if (!(rc = check_names(&st)))
		rc = o.json || o.batch ? run_batch(&st) : top_tui(&st);
	top_state_free(&st);
	ctr_cache_free(o.ctr.cache);
	ctr_nl_close(o.ctr.nl);
	return rc;
}
