// SPDX-License-Identifier: MIT
/*
 * rdmakit devices: what this host can test with — RDMA devices with their
 * ports and GIDs (and the GID index --engine verbs picks), and the
 * addresses the soft engine can bind, with its RoCE MTU and whether UDP
 * port 4791 is free there.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "devinfo.h"
#include "report.h"

enum {
	OPT_SOFT = OPT_LONG_ONLY + 1,
	OPT_VERBS,
};

static const struct opt_spec devices_opts[] = {
	{ "ib-dev", 'd', "NAME", "list only the RDMA device NAME (implies --verbs)" },
	{ "verbs", OPT_VERBS, NULL, "list only RDMA devices (--engine verbs)" },
	{ "soft", OPT_SOFT, NULL, "list only the soft engine's addresses (--engine soft)" },
	OPTS_END,
};

static const struct cmd_usage devices_usage = {
	.cmd = "devices",
	.synopsis = "[-d NAME] [--verbs | --soft] [--json]",
	.description = "List what this host can test with: RDMA devices (ports, state, link layer,\n"
		       "active MTU and rate, every GID with its type and netdev, and the GID index\n"
		       "--engine verbs picks), and the addresses the soft engine can bind (with the\n"
		       "RoCE MTU it would use and whether UDP port 4791 is free there).",
	.opts = devices_opts,
};

struct devices_opts {
	const char *ib_dev;
	bool verbs, soft;
};

static int devices_opt(void *ctx, int key, const char *arg)
{
	struct devices_opts *o = ctx;

	switch (key) {
	case 'd':
		if (!*arg)
			return usage_error("devices", "empty device name for -d/--ib-dev: "
					   "'rdmakit devices' lists them");
		o->ib_dev = arg;
		break;
	case OPT_VERBS: o->verbs = true; break;
	case OPT_SOFT: o->soft = true; break;
	default: return EXIT_USAGE;
	}
	return 0;
}

/* --- verbs -------------------------------------------------------------------- */

/* A string cell: JSON null and text "-" when empty. */
static struct report_value str_or_none(const char *s)
{
	return s && *s ? RV_STR(s) : RV_NONE;
}

/* The GIDs of a port under its JSON row; text lists them in tables of
 * their own (gid_tables). */
static void gids(struct report *r, const struct devinfo_port *p)
{
	struct printer *pr = report_row_more(r);

	print_open_array(pr, "gids");
	for (size_t i = 0; i < p->ngids; i++) {
		const struct devinfo_gid *g = &p->gids[i];

		print_open_object(pr, NULL);
		print_int(pr, PRINT_JSON, "index", NULL, g->index);
		print_string(pr, PRINT_JSON, "gid", NULL, g->gid);
		print_string(pr, PRINT_JSON, "type", NULL, g->type);
		print_string(pr, PRINT_JSON, "netdev", NULL, g->netdev);
		print_close(pr);
	}
	print_close(pr);
	report_row_done(r);
}

/* Reports device and port errors; returns how many there were. */
static int verbs_errors(struct report *r, const struct devinfo_list *l)
{
	int n = 0;

	for (size_t i = 0; i < l->ndevs; i++) {
		const struct devinfo_dev *d = &l->devs[i];

		if (d->error[0]) {
			report_error(r, "%s", d->error);
			n++;
		}
		for (size_t p = 0; p < d->nports; p++) {
			if (d->ports[p].error[0]) {
				report_error(r, "%s: %s", d->name, d->ports[p].error);
				n++;
			}
		}
	}
	return n;
}

/* One row per port: the text table's columns and the JSON results. */
static void verbs_ports(struct report *r, const struct devinfo_list *l)
{
	static const struct report_col cols[] = {
		{ NULL, "engine", REPORT_STR, 0 },
		{ "device", "device", REPORT_STR, 0 },
		{ NULL, "node_guid", REPORT_STR, 0 },
		{ NULL, "transport", REPORT_STR, 0 },
		{ "port", "port", REPORT_I64, 0 },
		{ "state", "state", REPORT_STR, 0 },
		{ "link", "link_layer", REPORT_STR, 0 },
		{ "MTU", "mtu_bytes", REPORT_U64, 0 },
		{ "rate[Gb/s]", "rate_gbps", REPORT_DOUBLE, 0 },
		{ "netdev", "netdev", REPORT_STR, 0 },
		{ "GIDs", NULL, REPORT_U64, 0 },
		{ "GID index", "default_gid_index", REPORT_I64, 0 },
		{ "node GUID", NULL, REPORT_STR, 0 },
	};

	report_table_fit(r, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < l->ndevs; i++) {
		const struct devinfo_dev *d = &l->devs[i];

		for (size_t pi = 0; pi < d->nports; pi++) {
			const struct devinfo_port *p = &d->ports[pi];
			char rate[32];

			if (p->error[0])
				continue;
			snprintf(rate, sizeof(rate), "%g", p->rate_gbps);
			report_table_row(r, (const struct report_value[]){
				RV_STR("verbs"), RV_STR(d->name), RV_STR(d->node_guid),
				RV_STR(d->transport), RV_I64(p->port), str_or_none(p->state),
				str_or_none(p->link_layer),
				p->mtu_bytes ? RV_U64(p->mtu_bytes) : RV_NONE,
				p->rate_gbps > 0 ? (struct report_value){ .d = p->rate_gbps,
									  .text = rate } : RV_NONE,
				str_or_none(p->netdev), RV_U64(p->ngids),
				RV_I64(p->default_gid_index), RV_STR(d->node_guid) });
			gids(r, p);
		}
	}
	report_table_end(r);
}

/* Text: each port's GIDs, with the one --engine verbs picks marked. */
static void gid_tables(struct report *r, const struct devinfo_list *l)
{
	static const struct report_col cols[] = {
		{ "index", "index", REPORT_I64, 0 },
		{ "GID", "gid", REPORT_STR, 0 },
		{ "type", "type", REPORT_STR, 0 },
		{ "netdev", "netdev", REPORT_STR, 0 },
		{ "IPv4", "ipv4", REPORT_STR, 0 },
		{ "default", "default", REPORT_STR, 0 },
	};

	for (size_t i = 0; i < l->ndevs; i++) {
		const struct devinfo_dev *d = &l->devs[i];

		for (size_t pi = 0; pi < d->nports; pi++) {
			const struct devinfo_port *p = &d->ports[pi];

			if (p->error[0])
				continue;
			fprintf(r->out, "GIDs of %s port %d (--engine verbs picks index %d):\n",
				d->name, p->port, p->default_gid_index);
			if (!p->ngids) {
				fprintf(r->out, " (none)\n");
				continue;
			}
			report_table_fit(r, cols, sizeof(cols) / sizeof(cols[0]));
			for (size_t gi = 0; gi < p->ngids; gi++) {
				const struct devinfo_gid *g = &p->gids[gi];
				char v4[16];

				snprintf(v4, sizeof(v4), "%u.%u.%u.%u", g->raw[12], g->raw[13],
					 g->raw[14], g->raw[15]);
				report_table_row(r, (const struct report_value[]){
					RV_I64(g->index), RV_STR(g->gid), str_or_none(g->type),
					str_or_none(g->netdev),
					devinfo_gid_is_ipv4(g->raw) ? RV_STR(v4) : RV_NONE,
					RV_STR(g->index == p->default_gid_index ? "yes" : "") });
			}
			report_table_end(r);
		}
	}
}

/* Why libibverbs found nothing, in words. */
static void no_devices_reason(const struct devinfo_list *l, char *buf, size_t cap)
{
	if (l->kernel_devs)
		snprintf(buf, cap, "no RDMA devices found (the kernel has %zu, but libibverbs has "
			 "no provider for them: install ibverbs-providers)", l->kernel_devs);
	else
		snprintf(buf, cap, "no RDMA devices found (the kernel has no RDMA driver loaded)");
}

/* --- soft --------------------------------------------------------------------- */

/* The addresses the soft engine can bind, one row each. */
static void soft_addrs(struct report *r, const struct devinfo_addr *a, size_t n)
{
	static const struct report_col cols[] = {
		{ NULL, "engine", REPORT_STR, 0 },
		{ "interface", "interface", REPORT_STR, 0 },
		{ "address", "address", REPORT_STR, 0 },
		{ "family", "family", REPORT_STR, 0 },
		{ "loopback", "loopback", REPORT_BOOL, 0 },
		{ "MTU", "if_mtu", REPORT_U64, 0 },
		{ "RoCE MTU", "roce_mtu", REPORT_U64, 0 },
		{ "UDP 4791", "port_4791", REPORT_STR, 0 },
	};

	if (!n) {
		if (!r->json)
			fprintf(r->out, " (no UP interface has an address; bring one up, e.g. "
				"'ip link set lo up')\n");
		return;
	}
	report_table_fit(r, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < n; i++) {
		bool v4 = a[i].family == AF_INET;
		const char *port = devinfo_port_state_str(a[i].port_4791);
		char why[64];

		snprintf(why, sizeof(why), "%s (%s)", port, strerror(a[i].port_errno));
		report_table_row(r, (const struct report_value[]){
			RV_STR("soft"), RV_STR(a[i].ifname), RV_STR(a[i].address),
			(struct report_value){ .s = v4 ? "ipv4" : "ipv6", .text = v4 ? "IPv4" : "IPv6" },
			RV_BOOL(a[i].loopback), a[i].if_mtu ? RV_U64(a[i].if_mtu) : RV_NONE,
			a[i].roce_mtu ? RV_U64(a[i].roce_mtu) :
					(struct report_value){ .none = true, .text = "too small" },
			(struct report_value){ .s = port, .text = a[i].port_4791 ==
					       DEVINFO_PORT_UNAVAILABLE ? why : NULL } });
	}
	report_table_end(r);
}

/* --- the command ----------------------------------------------------------------- */

int cmd_devices(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct devices_opts o = { 0 };
	struct devinfo_list l = { 0 };
	struct devinfo_addr *addrs = NULL;
	size_t naddrs = 0;
	char err[DEVINFO_ERR_LEN], why[160];
	struct report r;
	bool show_verbs, show_soft;
	int first, rc, errors = 0;

	rc = opts_parse(&devices_usage, argc, argv, &g, devices_opt, &o, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (first < argc)
		return usage_error("devices", "unexpected argument '%s'; to select a device use "
				   "-d NAME", argv[first]);
	if (o.ib_dev && o.soft)
		return usage_error("devices", "-d/--ib-dev selects an RDMA device and --soft lists "
				   "only soft-engine addresses: give one of them");
	/* Neither or both: everything.  -d: that device only. */
	show_verbs = o.verbs || o.ib_dev || !o.soft;
	show_soft = !o.ib_dev && (o.soft || !o.verbs);

	if (show_verbs) {
		if (devinfo_verbs(NULL, o.ib_dev, &l, err) < 0)
			return runtime_error("devices", "%s", err);
		if (o.ib_dev && !l.ndevs) {
			devinfo_list_free(&l);
			return runtime_error("devices", "no RDMA device '%s'; 'rdmakit devices' lists "
					     "them", o.ib_dev);
		}
	}
	if (show_soft && devinfo_soft(NULL, &addrs, &naddrs, err) < 0) {
		devinfo_list_free(&l);
		return runtime_error("devices", "%s", err);
	}

	report_init(&r, "devices", RDMAKIT_VERSION, g.json, g.pretty, stdout, stderr);
	if (r.json) {
		report_param(&r, "RDMA device", "ib_dev", REPORT_STR, RV_STR(o.ib_dev));
		report_param(&r, "Verbs", "verbs", REPORT_BOOL, RV_BOOL(show_verbs));
		report_param(&r, "Soft", "soft", REPORT_BOOL, RV_BOOL(show_soft));
		report_param(&r, "RDMA devices", "verbs_devices", REPORT_U64, RV_U64(l.ndevs));
	}
	if (show_verbs && l.ndevs) {
		if (!r.json)
			fprintf(r.out, "RDMA devices (--engine verbs):\n");
		verbs_ports(&r, &l);
		if (!r.json)
			gid_tables(&r, &l);
	} else if (show_verbs && !r.json) {
		no_devices_reason(&l, why, sizeof(why));
		if (show_soft)
			fprintf(r.out, "%s; the soft engine can use:\n", why);
		else
			fprintf(r.out, "%s; 'rdmakit devices --soft' lists what the soft "
				"engine can use\n", why);
	}
	if (show_soft) {
		if (!r.json && show_verbs && l.ndevs)
			fprintf(r.out, "Soft engine addresses (--engine soft):\n");
		else if (!r.json && !show_verbs)
			fprintf(r.out, "The soft engine (--engine soft) can use:\n");
		soft_addrs(&r, addrs, naddrs);
	}
	if (show_verbs)
		errors = verbs_errors(&r, &l);
	report_finish(&r);
	devinfo_list_free(&l);
	free(addrs);
	return errors ? EXIT_RUNTIME : EXIT_OK;
}
