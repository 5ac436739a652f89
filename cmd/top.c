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
	OPT_LISTEN,
	OPT_TEXTFILE,
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
	{ "listen", OPT_LISTEN, "[ADDR][:PORT]",
	  "serve Prometheus /metrics (default 127.0.0.1:18525)" },
	{ "textfile", OPT_TEXTFILE, "PATH.prom",
	  "write the metrics to PATH.prom every interval" },
	OPTS_END,
};

static const struct cmd_usage top_usage = {
	.cmd = "top",
	.synopsis = "[-b] [-n N] [-d SECONDS] [-i IFACE] [-t] [-v] [--json]\n"
		    "[--listen [ADDR][:PORT]] [--textfile PATH.prom]\n"
		    "[--sysfs-root DIR] [--proc-root DIR] [DEVICE[/PORT] ...]",
	.description = "Monitor RDMA ports live: rx/tx Gb/s and Mpps, PFC pause frames, ECN marks,\n"
		       "CNPs sent and handled, out-of-sequence packets, NAK sequence errors and\n"
		       "timeouts, as rates (or totals), from every counter in sysfs counters/ and\n"
		       "hw_counters/, the netdev's ethtool statistics and the host's ECN counters in\n"
		       "/proc/net/netstat.  Keys on the live screen: q quit, arrows/j/k select,\n"
		       "Enter details, s sort, d rates/totals, p pause, +/- interval, h help.\n"
		       "With --listen or --textfile it runs headless as a Prometheus exporter.",
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
		for (size_t i = 0; i < o->nifaces; i++)
			if (!strcmp(o->ifaces[i], arg))
				return usage_error("top", "-i %s given twice: give each interface once",
						   arg);
		o->ifaces[o->nifaces++] = arg;
		break;
	case 't': o->totals = true; break;
	case 'v': o->verbose = true; break;
	case OPT_SYSFS_ROOT: o->ctr.sysfs_root = arg; break;
	case OPT_PROC_ROOT: o->ctr.proc_root = arg; break;
	case OPT_LISTEN: o->listen = arg; break;
	case OPT_TEXTFILE: o->textfile = arg; break;
	default: return EXIT_USAGE;
	}
	return 0;
}

/* --- one snapshot, as text or as one JSON object ------------------------------ */

/*
 * One counter: {value, rate[, reset][, saturated]} under key in JSON, and
 * with -v one line "name source value rate/s" in text.  `to` is PRINT_FP
 * where the JSON has no place for it (a section the port lacks).
 */
static void counter(struct printer *pr, enum print_to to, const char *key,
		    const struct ctr_counter *c, bool totals)
{
	char rate[16] = "";

	if ((to & PRINT_FP) && !pr->json && !totals)	/* formatting costs: JSON skips it */
		top_rate_text(c, rate, sizeof(rate));
	if (to & PRINT_JSON)
		print_open_object(pr, key);
	print_string(pr, to & PRINT_FP, NULL, "  %-40s", c->name);
	print_string(pr, to & PRINT_FP, NULL, " %-18s", ctr_src_name((enum ctr_src)c->src));
	print_uint(pr, to, "value", " %20llu", c->value);
	print_float(pr, to & PRINT_JSON, "rate", NULL, c->rate);
	print_string(pr, to & PRINT_FP, NULL, " %10s", rate);
	if (c->flags & CTR_F_RESET)
		print_bool(pr, to, "reset", "%s", true, " (reset)", "");
	if (c->flags & CTR_F_SATURATED)
		print_bool(pr, to & PRINT_JSON, "saturated", NULL, true, NULL, NULL);
	if (c->src == CTR_SRC_NLDEV_OPT)
		print_bool(pr, to & PRINT_JSON, "optional", NULL, true, NULL, NULL);
	if (to & PRINT_FP)
		print_fp(pr, "\n");
	if (to & PRINT_JSON)
		print_close(pr);
}

/* A set's counters as JSON members named after them (netstat, engines). */
static void counter_members(struct printer *pr, const struct ctr_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		counter(pr, PRINT_JSON, set->c[i].name, &set->c[i], false);
}

static void pfc(struct printer *pr, const struct ctr_port *p)
{
	static const char *const keys[] = { "rx_pause", "tx_pause", "rx_pause_rate", "tx_pause_rate" };
	struct ctr_pfc f;

	if (!ctr_port_pfc(p, &f)) {
		print_null(pr, PRINT_JSON, "pfc", NULL, NULL);
		return;
	}
	print_open_object(pr, "pfc");
	print_string(pr, PRINT_JSON, "source", NULL, f.source);
	for (int k = 0; k < 4; k++) {
		print_open_array(pr, keys[k]);
		for (int i = 0; i < CTR_PFC_PRIOS; i++) {
			bool known = (k & 1 ? f.tx_known : f.rx_known) & (1u << i);
			const uint64_t *v = k & 1 ? f.tx : f.rx;
			const double *r = k & 1 ? f.tx_rate : f.rx_rate;

			if (!known)
				print_null(pr, PRINT_JSON, NULL, NULL, NULL);
			else if (k < 2)
				print_uint(pr, PRINT_JSON, NULL, NULL, v[i]);
			else
				print_float(pr, PRINT_JSON, NULL, NULL, r[i]);
		}
		print_close(pr);
	}
	print_close(pr);
}

/* rx_gbps etc. from the port's traffic meanings: rates first, then totals,
 * the order the man page lists them. */
static void traffic(struct printer *pr, const struct ctr_port *p)
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

	for (size_t i = 0; i < 4; i++) {
		ok[i] = ctr_port_meaning(p, t[i].m, &v[i], &r[i], NULL);
		print_float(pr, PRINT_JSON, t[i].rate, NULL, ok[i] ? r[i] * t[i].scale : NAN);
	}
	for (size_t i = 0; i < 4; i++)
		if (ok[i])
			print_uint(pr, PRINT_JSON, t[i].total, NULL, v[i]);
		else
			print_null(pr, PRINT_JSON, t[i].total, NULL, NULL);
}

/* Where a counter of this source goes in the port's JSON, if anywhere. */
static bool open_section(struct printer *pr, const struct ctr_port *p, enum ctr_src src)
{
	switch (src) {
	case CTR_SRC_ETHTOOL:
		print_open_object(pr, "ethtool");
		return true;
	case CTR_SRC_DCB:
	case CTR_SRC_PAUSE:
		if (!(src == CTR_SRC_DCB ? p->dcb_known : p->pause_known))
			return false;
		print_open_object(pr, src == CTR_SRC_DCB ? "dcb" : "pause");
		print_open_object(pr, "counters");
		return true;
	default:
		print_open_object(pr, "counters");
		return true;
	}
}

static void close_section(struct printer *pr, enum ctr_src src)
{
	print_close(pr);
	if (src == CTR_SRC_DCB || src == CTR_SRC_PAUSE)
		print_close(pr);
}

/* The port's QP counters (RDMA netlink): what each holds, its QPs and
 * its values, which are part of the port's, never added to them. */
static void qp_counters_json(struct printer *pr, const struct ctr_port *p)
{
	if (!p->nldev_known) {
		print_null(pr, PRINT_JSON, "qp_counters", NULL, NULL);
		return;
	}
	print_open_array(pr, "qp_counters");
	for (size_t i = 0; i < p->nqpc; i++) {
		const struct ctr_qp_counter *q = &p->qpc[i];
		char prefix[16];
		size_t plen = (size_t)snprintf(prefix, sizeof(prefix), "%u/", q->id);

		print_open_object(pr, NULL);
		print_uint(pr, PRINT_JSON, "id", NULL, q->id);
		print_string(pr, PRINT_JSON, "mode", NULL, ctr_qp_counter_mode(q->mode));
		print_uint(pr, PRINT_JSON, "qps_bound", NULL, q->nqps);
		print_open_array(pr, "qpns");
		for (uint32_t k = 0; k < q->nqps && k < CTR_QPC_QPNS; k++)
			print_uint(pr, PRINT_JSON, NULL, NULL, q->qpn[k]);
		print_close(pr);
		print_open_object(pr, "counters");
		for (size_t k = 0; k < p->set.n; k++) {
			const struct ctr_counter *c = &p->set.c[k];

			if (c->src == CTR_SRC_NLDEV_QP && !strncmp(c->name, prefix, plen))
				counter(pr, PRINT_JSON, c->name + plen, c, false);
		}
		print_close(pr);
		print_close(pr);
	}
	print_close(pr);
	if (p->qpc_left_out)
		print_uint(pr, PRINT_JSON, "qp_counters_left_out", NULL, p->qpc_left_out);
	if (p->qpc_error[0])
		print_string(pr, PRINT_JSON, "qp_counters_error", NULL, p->qpc_error);
}

/* The same in text (-v): one line per QP counter after its values. */
static void qp_counters_text(struct printer *pr, const struct ctr_port *p)
{
	char qps[CTR_QPC_QPNS * 11 + 8];

	for (size_t i = 0; i < p->nqpc; i++) {
		const struct ctr_qp_counter *q = &p->qpc[i];
		size_t at = 0;

		qps[0] = '\0';
		for (uint32_t k = 0; k < q->nqps && k < CTR_QPC_QPNS; k++)
			at += (size_t)snprintf(qps + at, sizeof(qps) - at, " 0x%x", q->qpn[k]);
		if (q->nqps > CTR_QPC_QPNS)
			snprintf(qps + at, sizeof(qps) - at, " ...");
		print_fp(pr, "  (QP counter %u, %s mode: %u QP%s%s)\n", q->id,
			 ctr_qp_counter_mode(q->mode), q->nqps, q->nqps == 1 ? "" : "s", qps);
	}
	if (p->qpc_left_out)
		print_fp(pr, "  (%zu more QP counters not read: at most %d per port)\n",
			 p->qpc_left_out, CTR_MAX_QP_COUNTERS);
	if (p->qpc_error[0])
		print_string(pr, PRINT_FP, NULL, "  (no QP counters: %s)\n", p->qpc_error);
}

/*
 * Every counter of a port and what its netdev said about DCB and pause:
 * in JSON the port's sections, in text (-v) one line per counter then the
 * settings.  JSON sections come first, in a fixed order, so counters can
 * join them as they come.
 */
static void port_details(struct printer *pr, const struct ctr_port *p, bool totals)
{
	char name[80];

	top_port_name(p, name, sizeof(name));
	print_string(pr, PRINT_FP, NULL, " %s: every counter (source, value, rate/s)\n", name);
	print_open_object(pr, "counters");
	print_close(pr);
	print_open_object(pr, "ethtool");
	print_close(pr);
	if (p->ethtool_error[0])
		print_string(pr, PRINT_JSON, "ethtool_error", NULL, p->ethtool_error);
	if (p->dcb_known) {
		print_open_object(pr, "dcb");
		print_uint(pr, PRINT_JSON, "pfc_cap", NULL, p->pfc_cap);
		print_open_array(pr, "pfc_enabled");
		for (int i = 0; i < CTR_PFC_PRIOS; i++)
			if (p->pfc_en & (1u << i))
				print_uint(pr, PRINT_JSON, NULL, NULL, (uint64_t)i);
		print_close(pr);
		print_open_object(pr, "counters");
		print_close(pr);
		print_close(pr);
	} else {
		print_null(pr, PRINT_JSON, "dcb", NULL, NULL);
	}
	if (p->dcb_error[0])
		print_string(pr, PRINT_JSON, "dcb_error", NULL, p->dcb_error);
	if (p->pause_known) {
		print_open_object(pr, "pause");
		print_bool(pr, PRINT_JSON, "autoneg", NULL, p->pause_autoneg, NULL, NULL);
		print_bool(pr, PRINT_JSON, "rx", NULL, p->pause_rx, NULL, NULL);
		print_bool(pr, PRINT_JSON, "tx", NULL, p->pause_tx, NULL, NULL);
		print_open_object(pr, "counters");
		print_close(pr);
		print_close(pr);
	} else {
		print_null(pr, PRINT_JSON, "pause", NULL, NULL);
	}
	if (p->pause_error[0])
		print_string(pr, PRINT_JSON, "pause_error", NULL, p->pause_error);
	if (p->device[0]) {
		print_string(pr, PRINT_JSON, "hw_counters_source", NULL,
			     p->nldev_known ? "netlink" : "sysfs");
		if (p->nldev_error[0])
			print_string(pr, PRINT_JSON, "netlink_error", NULL, p->nldev_error);
		qp_counters_json(pr, p);
	}

	for (size_t i = 0; i < p->set.n; i++) {
		const struct ctr_counter *c = &p->set.c[i];
		enum ctr_src src = (enum ctr_src)c->src;
		bool in_json;
		char key[160];

		if (src == CTR_SRC_NLDEV_QP && pr->json)
			continue;	/* under qp_counters */
		in_json = pr->json && open_section(pr, p, src);
		snprintf(key, sizeof(key), "%s", c->name);
		/* A device-level counter named like one of the port's. */
		if (in_json && print_has(pr, key))
			snprintf(key, sizeof(key), "device/%s", c->name);
		counter(pr, in_json ? PRINT_JSON : PRINT_FP, key, c, totals);
		if (in_json)
			close_section(pr, src);
	}

	qp_counters_text(pr, p);
	if (p->nldev_error[0])
		print_string(pr, PRINT_FP, NULL, "  (no RDMA netlink statistics, sysfs read: %s)\n",
			     p->nldev_error);
	if (p->ethtool_error[0])
		print_string(pr, PRINT_FP, NULL, "  (no ethtool statistics: %s)\n", p->ethtool_error);
	if (p->dcb_known)
		print_fp(pr, "  (DCB: pfc_cap %u, PFC enabled on priorities 0x%02x)\n", p->pfc_cap,
			 p->pfc_en);
	else if (p->dcb_error[0])
		print_string(pr, PRINT_FP, NULL, "  (no DCB PFC: %s)\n", p->dcb_error);
	if (p->pause_known)
		print_fp(pr, "  (pause: autoneg %s, rx %s, tx %s)\n", p->pause_autoneg ? "on" : "off",
			 p->pause_rx ? "on" : "off", p->pause_tx ? "on" : "off");
	else if (p->pause_error[0])
		print_string(pr, PRINT_FP, NULL, "  (no pause statistics: %s)\n", p->pause_error);
}

/* One port object of the JSON "ports" array. */
static void port(struct printer *pr, const struct ctr_port *p)
{
	print_open_object(pr, NULL);
	print_string(pr, PRINT_JSON, "device", NULL, p->device);
	if (p->device[0])
		print_int(pr, PRINT_JSON, "port", NULL, p->port);
	else
		print_null(pr, PRINT_JSON, "port", NULL, NULL);
	print_string(pr, PRINT_JSON, "netdev", NULL, p->netdev);
	print_string(pr, PRINT_JSON, "state", NULL, p->state);
	print_string(pr, PRINT_JSON, "phys_state", NULL, p->phys_state);
	print_string(pr, PRINT_JSON, "link_layer", NULL, p->link_layer);
	print_float(pr, PRINT_JSON, "rate_gbps", NULL, p->rate_gbps > 0 ? p->rate_gbps : NAN);
	traffic(pr, p);
	print_open_object(pr, "semantic");
	for (int m = CTR_M_ECN_MARKED; m < CTR_M_COUNT; m++) {
		uint64_t v;
		double r;

		if (!ctr_port_meaning(p, (enum ctr_meaning)m, &v, &r, NULL))
			continue;
		print_open_object(pr, ctr_meaning_key((enum ctr_meaning)m));
		print_uint(pr, PRINT_JSON, "value", NULL, v);
		print_float(pr, PRINT_JSON, "rate", NULL, r);
		print_close(pr);
	}
	print_close(pr);
	port_details(pr, p, false);
	pfc(pr, p);
	print_bool(pr, PRINT_JSON, "new", NULL, p->is_new, NULL, NULL);
	print_close(pr);
}

static void iso_time(const struct timespec *ts, char *buf, size_t cap)
{
	struct tm tm;
	char base[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03ldZ", base, ts->tv_nsec / 1000000);
}

/* The text table of ports: the same cells as the live screen. */
static void ports_table(struct report *r, const struct top_state *st)
{
	const struct ctr_snapshot *s = &st->cur;
	bool totals = st->o->totals;
	struct report_col cols[TOP_COL_COUNT];
	struct report_value vals[TOP_COL_COUNT];
	char cells[TOP_COL_COUNT][32];

	for (int c = 0; c < TOP_COL_COUNT; c++) {
		const struct top_col_info *ci = top_col((enum top_col)c);
		const char *h = totals ? ci->total_head : ci->rate_head;

		cols[c] = (struct report_col){ h, h, REPORT_STR, 0 };
	}
	report_table_fit(r, cols, TOP_COL_COUNT);
	for (size_t i = 0; i < s->nports; i++) {
		for (int c = 0; c < TOP_COL_COUNT; c++) {
			bool hot;

			top_cell(&s->ports[i], (enum top_col)c, totals, cells[c], sizeof(cells[c]), &hot);
			vals[c] = RV_STR(cells[c]);
		}
		report_table_row(r, vals);
	}
	report_table_end(r);
}

/*
 * One interval: the JSON object (--json), or the batch text (-b): a
 * heading line, the ports table, the host's ECN counters, the soft
 * engines, ports gone, and with -v every counter of every port.
 */
static void render(struct printer *pr, const struct top_state *st)
{
	const struct ctr_snapshot *s = &st->cur;
	bool totals = st->o->totals;
	const char *proc = st->o->ctr.proc_root ? st->o->ctr.proc_root : CTR_PROC_ROOT;
	char when[48], ecn[256];
	struct tm tm;

	iso_time(&s->wall, when, sizeof(when));
	print_string(pr, PRINT_JSON, "time", NULL, when);
	print_string(pr, PRINT_ANY, "host", "rdmakit top - %s - ", st->host);
	localtime_r(&s->wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	print_string(pr, PRINT_FP, NULL, "%s - ", when);
	print_float(pr, PRINT_ANY, "interval_s", "interval %.2f s - ", s->interval_s);
	print_string(pr, PRINT_FP, NULL, "%s\n", totals ? "totals" : "rates per second");
	print_string(pr, PRINT_JSON, "sysfs_root", NULL,
		     st->o->ctr.sysfs_root ? st->o->ctr.sysfs_root : CTR_SYSFS_ROOT);
	print_string(pr, PRINT_JSON, "proc_root", NULL, proc);
	print_uint(pr, PRINT_JSON, "rdma_devices", NULL, s->rdma_devices);

	if (pr->json) {
		print_open_array(pr, "ports");
		for (size_t i = 0; i < s->nports; i++)
			port(pr, &s->ports[i]);
		print_close(pr);
	} else if (s->nports) {
		struct report r;

		report_init(&r, "top", RDMAKIT_VERSION, false, false, pr->out, stderr);
		ports_table(&r, st);
		report_finish(&r);
	}

	if (s->have_netstat) {
		print_open_object(pr, "netstat");
		counter_members(pr, &s->netstat);
		print_close(pr);
	} else {
		print_null(pr, PRINT_JSON, "netstat", NULL, NULL);
	}
	top_ecn_line(s, totals, ecn, sizeof(ecn));
	if (ecn[0])
		print_fp(pr, " host ECN (%s/net/netstat IpExt): %s\n", proc, ecn);

	print_open_array(pr, "engines");
	for (size_t i = 0; i < s->nengines; i++) {
		const struct ctr_engine *e = &s->engines[i];
		char line[512];

		top_engine_line(e, totals, line, sizeof(line));
		print_fp(pr, " %s\n", line);
		print_open_object(pr, NULL);
		print_int(pr, PRINT_JSON, "pid", NULL, e->pid);
		print_string(pr, PRINT_JSON, "name", NULL, e->name);
		print_open_object(pr, "counters");
		counter_members(pr, &e->set);
		print_close(pr);
		print_close(pr);
	}
	print_close(pr);

	print_open_array(pr, "gone");
	for (size_t i = 0; i < s->ngone; i++)
		print_string(pr, PRINT_ANY, NULL, " gone: %s\n", s->gone[i]);
	print_close(pr);

	for (size_t i = 0; !pr->json && st->o->verbose && i < s->nports; i++)
		port_details(pr, &s->ports[i], totals);
}

static void emit(const struct top_state *st)
{
	struct printer pr;
	json_t *o;

	printer_init(&pr, stdout, st->o->json);
	render(&pr, st);
	o = printer_take(&pr);
	if (o)
		report_emit(stdout, o);
	else if (st->o->json)
		fprintf(stderr, "rdmakit top: out of memory for this interval's JSON\n");
	fflush(stdout);
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
		top_sleep_until(next);
		if (top_sample(st) < 0)
			return runtime_error("top", "%s", st->err);
		emit(st);
		fflush(stdout);
	}
	return EXIT_OK;
}

/* --listen's address and --textfile's name, before anything is read. */
static int check_exporter(struct top_opts *o)
{
	size_t n;

	if (o->listen) {
		int rc = top_parse_listen(o);

		if (rc)
			return rc;
	}
	if (o->textfile) {
		n = strlen(o->textfile);
		if (n < 6 || strcmp(o->textfile + n - 5, ".prom") || o->textfile[n - 6] == '/')
			return usage_error("top", "--textfile '%s': the name must end in .prom, the "
					   "files node_exporter's textfile collector reads", o->textfile);
	}
	if ((o->listen || o->textfile) && (o->json || o->batch || o->verbose || o->totals))
		return usage_error("top", "--listen and --textfile run headless: drop -b, -v, -t "
				   "and --json");
	return 0;
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
	if ((rc = check_exporter(&o)))
		return rc;
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
	else if (!(rc = check_names(&st)) && (o.listen || o.textfile))
		rc = top_export(&st);
	else if (!rc)
		rc = o.json || o.batch ? run_batch(&st) : top_tui(&st);
	top_state_free(&st);
	ctr_cache_free(o.ctr.cache);
	ctr_nl_close(o.ctr.nl);
	return rc;
}
