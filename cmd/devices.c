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

/* --- human tables: report.c tables whose columns fit their widest cell ------ */

#define TBL_MAX_COLS 10

struct tbl {
	size_t ncols, nrows, cap;
	const char *heads[TBL_MAX_COLS];
	char **cells;			/* nrows * ncols strings */
	bool oom;
};

static void tbl_init(struct tbl *t, size_t ncols, const char *const *heads)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	for (size_t i = 0; i < ncols; i++)
		t->heads[i] = heads[i];
}

/* Adds a row of ncols strings (copied). */
static void tbl_row(struct tbl *t, const char *const *vals)
{
	if (t->oom)
		return;
	if (t->nrows == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 8;
		char **p = realloc(t->cells, ncap * t->ncols * sizeof(*p));

		if (!p) {
			t->oom = true;
			return;
		}
		t->cells = p;
		t->cap = ncap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		char **cell = &t->cells[t->nrows * t->ncols + i];

		*cell = strdup(vals[i] ? vals[i] : "-");
		if (!*cell)
			t->oom = true;
	}
	t->nrows++;
}

static void tbl_print(struct report *r, struct tbl *t)
{
	struct report_col cols[TBL_MAX_COLS];
	struct report_value vals[TBL_MAX_COLS];
	int widths[TBL_MAX_COLS];

	/* Each column as wide as its widest cell: report.c pads to these. */
	for (size_t i = 0; i < t->ncols; i++) {
		size_t w = strlen(t->heads[i]);

		for (size_t row = 0; row < t->nrows; row++) {
			const char *c = t->cells[row * t->ncols + i];
			size_t l = c ? strlen(c) : 0;

			if (l > w)
				w = l;
		}
		widths[i] = (int)w;
		cols[i] = (struct report_col){ t->heads[i], t->heads[i], REPORT_STR, 0 };
	}
	report_table_begin_widths(r, cols, t->ncols, widths);
	for (size_t row = 0; row < t->nrows; row++) {
		for (size_t i = 0; i < t->ncols; i++)
			vals[i] = RV_STR(t->cells[row * t->ncols + i]);
		report_table_row(r, vals);
	}
	report_table_end(r);
}

static void tbl_free(struct tbl *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* --- verbs -------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *port_json(const struct devinfo_dev *d, const struct devinfo_port *p)
{
	json_t *o = json_object(), *gids = json_array();

	json_object_set_new(o, "engine", json_string("verbs"));
	json_object_set_new(o, "device", json_string(d->name));
	json_object_set_new(o, "node_guid", json_string(d->node_guid));
	json_object_set_new(o, "transport", json_string(d->transport));
	json_object_set_new(o, "port", json_integer(p->port));
	json_object_set_new(o, "state", str_or_null(p->state));
	json_object_set_new(o, "link_layer", str_or_null(p->link_layer));
	json_object_set_new(o, "mtu_bytes", p->mtu_bytes ? json_integer(p->mtu_bytes) : json_null());
	json_object_set_new(o, "rate_gbps", p->rate_gbps > 0 ? json_real(p->rate_gbps) : json_null());
	json_object_set_new(o, "netdev", str_or_null(p->netdev));
	for (size_t i = 0; i < p->ngids; i++) {
		const struct devinfo_gid *g = &p->gids[i];

		json_array_append_new(gids, json_pack("{s:i, s:s, s:o, s:o}", "index", g->index,
						      "gid", g->gid, "type", str_or_null(g->type),
						      "netdev", str_or_null(g->netdev)));
	}
	json_object_set_new(o, "gids", gids);
	json_object_set_new(o, "default_gid_index", json_integer(p->default_gid_index));
	return o;
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

static void verbs_json(struct report *r, const struct devinfo_list *l)
{
	for (size_t i = 0; i < l->ndevs; i++)
		for (size_t p = 0; p < l->devs[i].nports; p++)
			if (!l->devs[i].ports[p].error[0])
				report_result(r, port_json(&l->devs[i], &l->devs[i].ports[p]));
}

static void verbs_text(struct report *r, const struct devinfo_list *l)
{
	static const char *const port_heads[] = {
		"device", "port", "state", "link", "MTU", "rate[Gb/s]", "netdev", "GIDs",
		"GID index", "node GUID",
	};
	static const char *const gid_heads[] = { "index", "GID", "type", "netdev", "IPv4", "default" };
	struct tbl t;

	fprintf(r->out, "RDMA devices (--engine verbs):\n");
	tbl_init(&t, 10, port_heads);
	for (size_t i = 0; i < l->ndevs; i++) {
		const struct devinfo_dev *d = &l->devs[i];

		for (size_t pi = 0; pi < d->nports; pi++) {
			const struct devinfo_port *p = &d->ports[pi];
			char port[16], mtu[16], rate[32], ngids[16], def[16];

			if (p->error[0])
				continue;
			snprintf(port, sizeof(port), "%d", p->port);
			snprintf(mtu, sizeof(mtu), "%u", p->mtu_bytes);
			snprintf(rate, sizeof(rate), "%g", p->rate_gbps);
			snprintf(ngids, sizeof(ngids), "%zu", p->ngids);
			snprintf(def, sizeof(def), "%d", p->default_gid_index);
			tbl_row(&t, (const char *const[]){
				d->name, port, p->state, p->link_layer, p->mtu_bytes ? mtu : NULL,
				p->rate_gbps > 0 ? rate : NULL, p->netdev[0] ? p->netdev : NULL,
				ngids, def, d->node_guid });
		}
	}
	tbl_print(r, &t);
	tbl_free(&t);
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
			tbl_init(&t, 6, gid_heads);
			for (size_t gi = 0; gi < p->ngids; gi++) {
				const struct devinfo_gid *g = &p->gids[gi];
				char idx[16], v4[16];

				snprintf(idx, sizeof(idx), "%d", g->index);
				snprintf(v4, sizeof(v4), "%u.%u.%u.%u", g->raw[12], g->raw[13],
					 g->raw[14], g->raw[15]);
				tbl_row(&t, (const char *const[]){
					idx, g->gid, g->type[0] ? g->type : NULL,
					g->netdev[0] ? g->netdev : NULL,
					devinfo_gid_is_ipv4(g->raw) ? v4 : NULL,
					g->index == p->default_gid_index ? "yes" : "" });
			}
			tbl_print(r, &t);
			tbl_free(&t);
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

static json_t *addr_json(const struct devinfo_addr *a)
{
	json_t *o = json_object();

	json_object_set_new(o, "engine", json_string("soft"));
	json_object_set_new(o, "interface", json_string(a->ifname));
	json_object_set_new(o, "address", json_string(a->address));
	json_object_set_new(o, "family", json_string(a->family == AF_INET ? "ipv4" : "ipv6"));
	json_object_set_new(o, "loopback", json_boolean(a->loopback));
	json_object_set_new(o, "if_mtu", a->if_mtu ? json_integer(a->if_mtu) : json_null());
	json_object_set_new(o, "roce_mtu", a->roce_mtu ? json_integer(a->roce_mtu) : json_null());
	json_object_set_new(o, "port_4791", json_string(devinfo_port_state_str(a->port_4791)));
	return o;
}

static void soft_text(struct report *r, const struct devinfo_addr *a, size_t n)
{
	static const char *const heads[] = {
		"interface", "address", "family", "loopback", "MTU", "RoCE MTU", "UDP 4791",
	};
	struct tbl t;

	if (!n) {
		fprintf(r->out, " (no UP interface has an address; bring one up, e.g. "
			"'ip link set lo up')\n");
		return;
	}
	tbl_init(&t, 7, heads);
	for (size_t i = 0; i < n; i++) {
		char mtu[16], roce[16], port[64];

		snprintf(mtu, sizeof(mtu), "%u", a[i].if_mtu);
		snprintf(roce, sizeof(roce), "%u", a[i].roce_mtu);
		if (a[i].port_4791 == DEVINFO_PORT_UNAVAILABLE)
			snprintf(port, sizeof(port), "unavailable (%s)", strerror(a[i].port_errno));
		else
			snprintf(port, sizeof(port), "%s", devinfo_port_state_str(a[i].port_4791));
		tbl_row(&t, (const char *const[]){
			a[i].ifname, a[i].address, a[i].family == AF_INET ? "IPv4" : "IPv6",
			a[i].loopback ? "yes" : "no", a[i].if_mtu ? mtu : NULL,
			a[i].roce_mtu ? roce : "too small", port });
	}
	tbl_print(r, &t);
	tbl_free(&t);
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
		if (show_verbs)
			verbs_json(&r, &l);
		for (size_t i = 0; show_soft && i < naddrs; i++)
			report_result(&r, addr_json(&addrs[i]));
	} else {
		if (show_verbs && l.ndevs) {
			verbs_text(&r, &l);
		} else if (show_verbs) {
			no_devices_reason(&l, why, sizeof(why));
			if (show_soft)
				fprintf(r.out, "%s; the soft engine can use:\n", why);
			else
				fprintf(r.out, "%s; 'rdmakit devices --soft' lists what the soft "
					"engine can use\n", why);
		}
		if (show_soft) {
			if (show_verbs && l.ndevs)
				fprintf(r.out, "Soft engine addresses (--engine soft):\n");
			else if (!show_verbs)
				fprintf(r.out, "The soft engine (--engine soft) can use:\n");
			soft_text(&r, addrs, naddrs);
		}
	}
	if (show_verbs)
		errors = verbs_errors(&r, &l);
	report_finish(&r);
	devinfo_list_free(&l);
	free(addrs);
	return errors ? EXIT_RUNTIME : EXIT_OK;
}
