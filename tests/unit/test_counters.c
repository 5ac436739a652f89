// SPDX-License-Identifier: MIT
/*
 * lib/stats/counters*.c: every reader on the fixture trees of
 * tests/fixtures/top (mlx5 with PMA and hw_counters, mlx5 switchdev with
 * device-level hw_counters, rxe, irdma with names containing spaces and
 * "N/A (no PMA)" values, mlx4 InfiniBand with 32-bit PMA counters, and
 * /proc/net/netstat), rates between the two samples (including saturated
 * and reset counters, and devices that appear and disappear), the
 * semantic map, PFC names and ethtool.  The file cache between samples:
 * test_counters_cache.c.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "counters_fx.h"
#include "unit.h"

static char fixture[PATH_MAX];	/* .../tests/fixtures/top */

static bool find_fixture(void)
{
	return unit_repo_path("tests/fixtures/top", fixture, sizeof(fixture));
}

static char sys1[PATH_MAX + 32], proc1[PATH_MAX + 32], sys2[PATH_MAX + 32], proc2[PATH_MAX + 32];

/* A fixture tree alone: its root stands in for /dev/shm too, so soft
 * engines running on this host (another test suite) do not show up. */
static int sample(const char *sys, const char *proc, struct ctr_snapshot *s)
{
	struct ctr_opts o = { .sysfs_root = sys, .proc_root = proc, .shm_dir = sys };
	char err[256];

	return ctr_sample(&o, s, err, sizeof(err));
}

/* --- value parsing ------------------------------------------------------------- */

static void parse_values(struct unit *u)
{
	uint64_t v = 0;

	CHECK(u, ctr_parse_value("123\n", &v) && v == 123);
	CHECK(u, ctr_parse_value("0", &v) && v == 0);
	CHECK(u, ctr_parse_value("18446744073709551615\n", &v) && v == UINT64_MAX);
	CHECK(u, !ctr_parse_value("18446744073709551616\n", &v));
	CHECK(u, !ctr_parse_value("N/A (no PMA)\n", &v));
	CHECK(u, !ctr_parse_value("", &v));
	CHECK(u, !ctr_parse_value("-1\n", &v));
	CHECK(u, !ctr_parse_value("12 34\n", &v));
	CHECK(u, !ctr_parse_value("0x10\n", &v));
}

/* --- the fixture, sample 1 ------------------------------------------------------- */

static void reads_every_device_and_port(struct unit *u)
{
	struct ctr_snapshot s;

	CHECK_EQ(u, sample(sys1, proc1, &s), 0);
	CHECK(u, s.ib_class);
	CHECK_EQ(u, s.rdma_devices, 6);
	CHECK_EQ(u, s.nports, 6);
	/* Sorted by device name. */
	CHECK_STR(u, s.ports[0].device, "irdma0");
	CHECK_STR(u, s.ports[5].device, "rxe1");
	CHECK_EQ(u, s.nengines, 0);
	for (size_t i = 0; i < s.nports; i++)
		for (size_t k = 0; k < s.ports[i].set.n; k++)
			CHECK(u, strcmp(s.ports[i].set.c[k].name, "lifespan") != 0);
	ctr_snapshot_free(&s);
}

static void mlx5_port_attrs_and_counters(struct unit *u)
{
	struct ctr_snapshot s;
	const struct ctr_port *p;
	const struct ctr_counter *c;
	uint64_t v;
	double r;

	CHECK_EQ(u, sample(sys1, proc1, &s), 0);
	p = port(&s, "mlx5_0", 1);
	CHECK(u, p != NULL);
	if (!p)
		return;
	CHECK_STR(u, p->state, "ACTIVE");
	CHECK_STR(u, p->phys_state, "LinkUp");
	CHECK_STR(u, p->link_layer, "Ethernet");
	CHECK(u, p->rate_gbps == 100);
	CHECK_STR(u, p->netdev, "ens1f0np0");
	CHECK_EQ(u, value(p, CTR_SRC_PMA, "port_xmit_data"), 1234567890123ULL);
	CHECK_EQ(u, value(p, CTR_SRC_PMA, "symbol_error"), 0);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "np_cnp_sent"), 45617);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "rp_cnp_handled"), 48213);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "np_ecn_marked_roce_packets"), 91234);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "out_of_sequence"), 210);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "packet_seq_err"), 37);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "local_ack_timeout_err"), 2);
	/* 21 PMA (extended) + 31 mlx5 hw_counters; lifespan skipped. */
	CHECK_EQ(u, p->set.n, 21 + 31);
	c = ctr_find(&p->set, CTR_SRC_PMA, "port_xmit_data");
	CHECK(u, c && c->scale == 4 && c->width == 64);
	c = ctr_find(&p->set, CTR_SRC_PMA, "symbol_error");
	CHECK(u, c && c->width == 16 && c->scale == 1);
	/* Bytes are 4-byte words x 4. */
	CHECK(u, ctr_port_meaning(p, CTR_M_TX_BYTES, &v, &r, NULL));
	CHECK_EQ(u, v, 4 * 1234567890123ULL);
	CHECK(u, ctr_port_meaning(p, CTR_M_SEQ_ERR, &v, &r, NULL));
	CHECK_EQ(u, v, 37 + 5);	/* packet_seq_err + implied_nak_seq_err */
	CHECK(u, ctr_port_meaning(p, CTR_M_CNP_SENT, &v, &r, NULL) && v == 45617);
	CHECK(u, !ctr_port_meaning(p, CTR_M_RNR + 100, &v, &r, NULL));
	ctr_snapshot_free(&s);
}

static void rxe_irdma_mlx4_switchdev(struct unit *u)
{
	struct ctr_snapshot s;
	const struct ctr_port *p;
	const struct ctr_counter *c;
	uint64_t v;
	double r;

	CHECK_EQ(u, sample(sys1, proc1, &s), 0);
	/* rxe: hw_counters only. */
	p = port(&s, "rxe0", 1);
	CHECK(u, p && p->set.n == 15);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "sent_pkts"), 1200345);
	CHECK_EQ(u, value(p, CTR_SRC_PMA, "port_xmit_data"), UINT64_MAX);
	CHECK(u, p && !ctr_port_meaning(p, CTR_M_TX_BYTES, &v, &r, NULL));
	CHECK(u, p && ctr_port_meaning(p, CTR_M_TX_PACKETS, &v, &r, NULL) && v == 1200345);
	CHECK_STR(u, p ? p->netdev : NULL, "enp0s8");
	/* irdma: names with spaces; "N/A (no PMA)" files skipped. */
	p = port(&s, "irdma0", 1);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "Nak Sequence Error"), 11);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "RNR received"), 9);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "ord limit count"), 1);
	CHECK_EQ(u, value(p, CTR_SRC_PMA, "port_xmit_data"), UINT64_MAX);
	CHECK(u, p && ctr_port_meaning(p, CTR_M_ECN_MARKED, &v, &r, NULL) && v == 400);
	CHECK(u, p && ctr_port_meaning(p, CTR_M_RX_BYTES, &v, &r, NULL) && v == 500000001000ULL);
	CHECK(u, p && ctr_port_meaning(p, CTR_M_RNR, &v, &r, NULL) && v == 9);
	/* mlx4: 32-bit PMA (no unicast_*), an InfiniBand port without netdev. */
	p = port(&s, "mlx4_0", 1);
	c = p ? ctr_find(&p->set, CTR_SRC_PMA, "port_xmit_data") : NULL;
	CHECK(u, c && c->width == 32 && c->value == UINT32_MAX);
	CHECK_STR(u, p ? p->link_layer : NULL, "InfiniBand");
	CHECK_STR(u, p ? p->netdev : NULL, "");
	/* mlx5 in switchdev: the device's hw_counters on its port. */
	p = port(&s, "mlx5_1", 1);
	CHECK_EQ(u, value(p, CTR_SRC_HW_DEV, "out_of_buffer"), 1200);
	CHECK(u, p && ctr_port_meaning(p, CTR_M_OUT_OF_BUFFER, &v, &r, NULL) && v == 1200);
	CHECK_STR(u, p ? p->state : NULL, "DOWN");
	CHECK_STR(u, p ? p->phys_state : NULL, "Disabled");
	ctr_snapshot_free(&s);
}

static void netstat_ecn(struct unit *u)
{
	struct ctr_snapshot s;

	CHECK_EQ(u, sample(sys1, proc1, &s), 0);
	CHECK(u, s.have_netstat);
	CHECK_EQ(u, s.netstat.n, 4);
	CHECK_EQ(u, value(&(struct ctr_port){ .set = s.netstat }, CTR_SRC_NETSTAT, "InCEPkts"), 1234);
	CHECK_EQ(u, value(&(struct ctr_port){ .set = s.netstat }, CTR_SRC_NETSTAT, "InECT0Pkts"),
		 5412062);
	CHECK_EQ(u, value(&(struct ctr_port){ .set = s.netstat }, CTR_SRC_NETSTAT, "InNoECTPkts"),
		 448364);
	ctr_snapshot_free(&s);
}

/* --- rates between sample 1 and sample 2 ------------------------------------------- */

static void rates_between_samples(struct unit *u)
{
	struct ctr_snapshot a, b;
	const struct ctr_port *p;
	const struct ctr_counter *c;
	struct ctr_set ns;
	uint64_t v;
	double r;

	CHECK_EQ(u, sample(sys1, proc1, &a), 0);
	CHECK_EQ(u, sample(sys2, proc2, &b), 0);
	ctr_rates(&a, NULL);
	a.mono_ns = 1000000000ULL;
	b.mono_ns = 3000000000ULL;	/* two seconds later */
	ctr_rates(&b, &a);
	CHECK(u, near(b.interval_s, 2.0));
	p = port(&b, "mlx5_0", 1);
	c = p ? ctr_find(&p->set, CTR_SRC_PMA, "port_xmit_data") : NULL;
	CHECK(u, c && near(c->rate, 2500000000.0 / 2) && c->flags == 0);
	CHECK(u, p && ctr_port_meaning(p, CTR_M_TX_BYTES, &v, &r, NULL) && near(r, 5e9));
	CHECK(u, p && ctr_port_meaning(p, CTR_M_RX_BYTES, &v, &r, NULL) && near(r, 2.5e9));
	CHECK(u, p && ctr_port_meaning(p, CTR_M_CNP_HANDLED, &v, &r, NULL) && near(r, 160));
	CHECK(u, p && ctr_port_meaning(p, CTR_M_ECN_MARKED, &v, &r, NULL) && near(r, 750));
	CHECK(u, p && ctr_port_meaning(p, CTR_M_SEQ_ERR, &v, &r, NULL) && near(r, 1.5));
	CHECK(u, p && !p->is_new);
	/* mlx4: a saturated 32-bit counter has no rate; a reset one rate 0. */
	p = port(&b, "mlx4_0", 1);
	c = p ? ctr_find(&p->set, CTR_SRC_PMA, "port_xmit_data") : NULL;
	CHECK(u, c && isnan(c->rate) && (c->flags & CTR_F_SATURATED));
	CHECK(u, p && ctr_port_meaning(p, CTR_M_TX_BYTES, &v, &r, NULL) && isnan(r));
	c = p ? ctr_find(&p->set, CTR_SRC_PMA, "symbol_error") : NULL;
	CHECK(u, c && c->value == 3 && c->rate == 0 && (c->flags & CTR_F_RESET));
	c = p ? ctr_find(&p->set, CTR_SRC_PMA, "port_rcv_data") : NULL;
	CHECK(u, c && near(c->rate, 5e7));
	/* Device-level counters and irdma names with spaces have rates too. */
	p = port(&b, "mlx5_1", 1);
	c = p ? ctr_find(&p->set, CTR_SRC_HW_DEV, "out_of_buffer") : NULL;
	CHECK(u, c && near(c->rate, 20));
	p = port(&b, "irdma0", 1);
	c = p ? ctr_find(&p->set, CTR_SRC_HW_PORT, "Nak Sequence Error") : NULL;
	CHECK(u, c && near(c->rate, 2));
	/* bnxt_re0 appeared: no rates yet; rxe1 went away. */
	p = port(&b, "bnxt_re0", 1);
	CHECK(u, p && p->is_new);
	c = p ? ctr_find(&p->set, CTR_SRC_HW_PORT, "tx_bytes") : NULL;
	CHECK(u, c && isnan(c->rate) && (c->flags & CTR_F_NEW));
	CHECK(u, port(&b, "rxe1", 1) == NULL);
	CHECK_EQ(u, b.ngone, 1);
	CHECK_STR(u, b.ngone ? b.gone[0] : NULL, "rxe1/1");
	/* Host ECN. */
	ns = b.netstat;
	c = ctr_find(&ns, CTR_SRC_NETSTAT, "InCEPkts");
	CHECK(u, c && c->value == 1734 && near(c->rate, 250));
	c = ctr_find(&ns, CTR_SRC_NETSTAT, "InECT1Pkts");
	CHECK(u, c && c->rate == 0);
	ctr_snapshot_free(&a);
	ctr_snapshot_free(&b);
}

/* Sample N of the fixtures with its recorded netlink answers. */
static int sample_nl(int n, struct ctr_snapshot *s)
{
	char nl[PATH_MAX + 32], err[256];
	struct ctr_opts o = { .sysfs_root = n == 1 ? sys1 : sys2, .proc_root = n == 1 ? proc1 : proc2,
			      .netlink_replay = nl };

	o.shm_dir = o.sysfs_root;
	snprintf(nl, sizeof(nl), "%s/sample%d/netlink", fixture, n);
	return ctr_sample(&o, s, err, sizeof(err));
}

struct delta_seen {
	uint64_t rx_write_requests, cc_rx_ce_pkts;
	int qp, calls;
};

static void note_delta(const struct ctr_port *p, const struct ctr_counter *c, uint64_t delta,
		       void *ctx)
{
	struct delta_seen *d = ctx;

	(void)p;
	d->calls++;
	if (!strcmp(c->name, "rx_write_requests"))
		d->rx_write_requests = delta;
	else if (!strcmp(c->name, "cc_rx_ce_pkts"))
		d->cc_rx_ce_pkts = delta;
	if (c->src == CTR_SRC_NLDEV_QP)
		d->qp++;
}

/*
 * Where the RDMA netlink answers, a port's driver counters come from it
 * and not from sysfs (the fixture's netlink values run ahead of its
 * hw_counters); optional counters are marked and feed no meaning; QP
 * counters are kept apart; a port with nothing recorded reads sysfs.
 */
static void netlink_wins_over_sysfs(struct unit *u)
{
	struct ctr_snapshot a, b;
	const struct ctr_port *p;
	struct delta_seen d = { 0 };
	uint64_t v;
	double r;

	CHECK_EQ(u, sample_nl(1, &a), 0);
	CHECK_EQ(u, sample_nl(2, &b), 0);
	ctr_rates(&a, NULL);
	a.mono_ns = 1000000000ULL;
	b.mono_ns = 3000000000ULL;
	ctr_rates(&b, &a);
	p = port(&b, "mlx5_0", 1);
	CHECK(u, p && p->nldev_known && !p->nldev_error[0]);
	CHECK_EQ(u, value(p, CTR_SRC_NLDEV, "rx_write_requests"), 88123456 + 1220000 + 1000);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "rx_write_requests"), UINT64_MAX);
	for (size_t i = 0; p && i < p->set.n; i++)
		CHECK(u, p->set.c[i].src != CTR_SRC_HW_PORT);
	CHECK_EQ(u, value(p, CTR_SRC_NLDEV_OPT, "cc_rx_ce_pkts"), 91000 + 1500);
	/* ECN marked: np_ecn_marked_roce_packets alone, not its optional twin. */
	CHECK(u, p && ctr_port_meaning(p, CTR_M_ECN_MARKED, &v, &r, NULL) && v == 91234 + 1500 &&
		 near(r, 750));
	CHECK_EQ(u, p ? p->nqpc : 0, 2);
	if (p && p->nqpc == 2) {
		CHECK(u, p->qpc[0].id == 3 && p->qpc[0].nqps == 2 && p->qpc[0].qpn[0] == 0x11a);
		CHECK(u, p->qpc[1].id == 4 && p->qpc[1].nqps == 1 && p->qpc[1].qpn[0] == 0x2c0);
	}
	CHECK_EQ(u, value(p, CTR_SRC_NLDEV_QP, "3/rx_write_requests"), 60900000);
	CHECK(u, p && near(ctr_find(&p->set, CTR_SRC_NLDEV_QP, "3/rx_write_requests")->rate, 450000));
	p = port(&b, "rxe0", 1);
	CHECK(u, p && p->nldev_known && p->nqpc == 0 && !p->qpc_error[0]);
	CHECK_EQ(u, value(p, CTR_SRC_NLDEV, "sent_pkts"), 1200345 + 50000 + 30);
	/* Nothing recorded for irdma0: sysfs, and no complaint. */
	p = port(&b, "irdma0", 1);
	CHECK(u, p && !p->nldev_known && !p->nldev_error[0]);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "Nak Sequence Error"), 15);
	/* Deltas over the two samples: the port's, never its QP counters'. */
	ctr_port_deltas(&a, &b, "mlx5_0", 1, note_delta, &d);
	CHECK_EQ(u, d.rx_write_requests, 1220000);
	CHECK_EQ(u, d.cc_rx_ce_pkts, 1500);
	CHECK_EQ(u, d.qp, 0);
	CHECK(u, d.calls > 5);
	memset(&d, 0, sizeof(d));
	ctr_port_deltas(&a, &b, "mlx5_0", 2, note_delta, &d);
	CHECK_EQ(u, d.calls, 0);
	ctr_snapshot_free(&a);
	ctr_snapshot_free(&b);
}

/* A recorded answer that is broken: the port says why and reads sysfs. */
static void netlink_broken_answer(struct unit *u)
{
	char dir[] = "/tmp/rdmakit-nl-XXXXXX", path[PATH_MAX], err[256];
	struct ctr_opts o = { .sysfs_root = sys1, .proc_root = proc1, .shm_dir = sys1,
			      .netlink_replay = dir };
	struct ctr_snapshot s;
	const struct ctr_port *p;

	CHECK(u, mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/rxe0.1.nldev", dir);
	put_file(path, "not a netlink reply at all");
	CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), 0);
	p = port(&s, "rxe0", 1);
	CHECK(u, p && !p->nldev_known);
	CHECK_STR(u, p ? p->nldev_error : "", "rxe0/1: RDMA netlink statistics: malformed netlink reply");
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "sent_pkts"), 1200345);
	ctr_snapshot_free(&s);
	unlink(path);
	rmdir(dir);
}

static void rate_rules(struct unit *u)
{
	uint8_t f = 0;

	CHECK(u, near(ctr_rate(100, 300, 2.0, 64, &f), 100) && f == 0);
	/* IB PMA counters stop at 2^width-1. */
	f = 0;
	CHECK(u, isnan(ctr_rate(4000000000ULL, UINT32_MAX, 1.0, 32, &f)) && f == CTR_F_SATURATED);
	f = 0;
	CHECK(u, isnan(ctr_rate(UINT32_MAX, UINT32_MAX, 1.0, 32, &f)) && f == CTR_F_SATURATED);
	f = 0;
	CHECK(u, isnan(ctr_rate(1, 65535, 1.0, 16, &f)) && f == CTR_F_SATURATED);
	f = 0;
	CHECK(u, isnan(ctr_rate(1, 255, 1.0, 8, &f)) && f == CTR_F_SATURATED);
	/* A 64-bit counter passing 2^32-1 is just a number. */
	f = 0;
	CHECK(u, near(ctr_rate(UINT32_MAX - 1, UINT32_MAX, 1.0, 64, &f), 1) && f == 0);
	/* Backwards: reset, never negative or huge. */
	f = 0;
	CHECK(u, ctr_rate(1000000, 5, 1.0, 64, &f) == 0 && f == CTR_F_RESET);
	f = 0;
	CHECK(u, ctr_rate(UINT64_MAX, 0, 1.0, 64, &f) == 0 && f == CTR_F_RESET);
	f = 0;
	CHECK(u, ctr_rate(UINT32_MAX, 10, 1.0, 32, &f) == 0 && f == CTR_F_RESET);
	/* No time passed: unknown. */
	f = 0;
	CHECK(u, isnan(ctr_rate(1, 2, 0, 64, &f)) && (f & CTR_F_NEW));
}

static void device_filter(struct unit *u)
{
	const char *one[] = { "mlx5_0" }, *port1[] = { "rxe0/1" }, *port2[] = { "rxe0/2" };
	struct ctr_opts o = { .sysfs_root = sys1, .proc_root = proc1, .shm_dir = sys1 };
	struct ctr_snapshot s;
	char err[256];

	o.devices = one;
	o.ndevices = 1;
	CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), 0);
	CHECK(u, s.nports == 1 && !strcmp(s.ports[0].device, "mlx5_0"));
	CHECK_EQ(u, s.rdma_devices, 1);
	ctr_snapshot_free(&s);
	o.devices = port1;
	CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), 0);
	CHECK(u, s.nports == 1 && !strcmp(s.ports[0].device, "rxe0"));
	ctr_snapshot_free(&s);
	o.devices = port2;
	CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), 0);
	CHECK_EQ(u, s.nports, 0);
	ctr_snapshot_free(&s);
	/* A sysfs root that is not there is an error; no infiniband class is not. */
	o.devices = NULL;
	o.ndevices = 0;
	o.sysfs_root = "/nonexistent/rdmakit";
	CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), -1);
	CHECK(u, strstr(err, "/nonexistent/rdmakit") != NULL);
	o.sysfs_root = proc1;	/* a directory without class/infiniband */
	CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), 0);
	CHECK(u, !s.ib_class && s.nports == 0);
	ctr_snapshot_free(&s);
}

/* --- a scratch tree: files replaced, devices appearing and disappearing ---------- */

static void netstat_by_name(struct unit *u)
{
	char root[] = "/tmp/rdmakit-netstat-XXXXXX", path[PATH_MAX], cmd[PATH_MAX + 16];
	struct ctr_set set = { 0 };

	if (!mkdtemp(root)) {
		CHECK(u, false);
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/net'", root);
	CHECK_EQ(u, system(cmd), 0);
	/* Columns in another order, and a kernel without ECN counters. */
	snprintf(path, sizeof(path), "%s/net/netstat", root);
	put_file(path, "TcpExt: A B\nTcpExt: 1 2\n"
		 "IpExt: InCEPkts InOctets InECT0Pkts\nIpExt: 77 1000 66\n");
	CHECK_EQ(u, ctr_read_netstat(root, &set), 0);
	CHECK_EQ(u, set.n, 2);
	CHECK_EQ(u, value(&(struct ctr_port){ .set = set }, CTR_SRC_NETSTAT, "InCEPkts"), 77);
	CHECK_EQ(u, value(&(struct ctr_port){ .set = set }, CTR_SRC_NETSTAT, "InECT0Pkts"), 66);
	ctr_set_free(&set);
	put_file(path, "TcpExt: A B\nTcpExt: 1 2\n");
	CHECK_EQ(u, ctr_read_netstat(root, &set), -1);
	CHECK_EQ(u, set.n, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_EQ(u, system(cmd), 0);
	CHECK_EQ(u, ctr_read_netstat(root, &set), -1);
}

/* --- the semantic map, PFC names ---------------------------------------------------- */

static void semantic_map(struct unit *u)
{
	size_t n, per_driver[5] = { 0 };
	const struct ctr_map_row *m = ctr_map(&n);
	const char *drivers[] = { "mlx5", "rxe", "bnxt_re", "irdma", "ib" };

	for (size_t i = 0; i < n; i++) {
		/* One meaning per (source, name): a second row would be dead. */
		for (size_t j = 0; j < i; j++)
			CHECK(u, m[j].src != m[i].src || strcmp(m[j].name, m[i].name) != 0);
		for (size_t d = 0; d < 5; d++)
			per_driver[d] += !strcmp(m[i].driver, drivers[d]);
	}
	CHECK(u, per_driver[0] >= 11 && per_driver[1] >= 5 && per_driver[2] >= 10 &&
		 per_driver[3] >= 10 && per_driver[4] == 4);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "np_ecn_marked_roce_packets"), CTR_M_ECN_MARKED);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "np_cnp_sent"), CTR_M_CNP_SENT);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_DEV, "rp_cnp_handled"), CTR_M_CNP_HANDLED);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "duplicate_request"), CTR_M_DUP_REQ);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "out_of_seq_request"), CTR_M_OUT_OF_SEQUENCE);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "to_retransmits"), CTR_M_TIMEOUT);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "RNR received"), CTR_M_RNR);
	/* rxe, from its sources: RNR NAKs received, not sent; no per-timeout
	 * counter (retry_exceeded_err counts exhausted retries only). */
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "rcvd_rnr_err"), CTR_M_RNR);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "send_rnr_err"), CTR_M_NONE);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "retry_exceeded_err"), CTR_M_NONE);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "local_ack_timeout_err"), CTR_M_TIMEOUT);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "cnpSent"), CTR_M_CNP_SENT);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "rx_out_of_buffer"), CTR_M_OUT_OF_BUFFER);
	/* By source: ethtool's rx_bytes is not bnxt_re's hw rx_bytes. */
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_ETHTOOL, "rx_bytes"), CTR_M_NONE);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "port_xmit_data"), CTR_M_NONE);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_HW_PORT, "lifespan"), CTR_M_NONE);
	CHECK_STR(u, ctr_meaning_key(CTR_M_ECN_MARKED), "ecn_marked");
	CHECK_STR(u, ctr_meaning_key(CTR_M_SEQ_ERR), "seq_err");
	CHECK(u, ctr_meaning_is_error(CTR_M_TIMEOUT) && !ctr_meaning_is_error(CTR_M_CNP_SENT));
	CHECK(u, ctr_name_is_error("req_cqe_error") && ctr_name_is_error("rx_discards_phy"));
	CHECK(u, ctr_name_is_error("Nak Sequence Error") && !ctr_name_is_error("rx_pkts"));
}

static void pfc_names(struct unit *u)
{
	struct ctr_port p = { 0 };
	struct ctr_pfc pfc;
	bool tx = false;

	CHECK(u, ctr_pfc_prio("rx_prio3_pause", &tx) == 3 && !tx);
	CHECK(u, ctr_pfc_prio("tx_prio7_pause", &tx) == 7 && tx);
	CHECK(u, ctr_pfc_prio("rx_prio3_pause_duration", &tx) == -1);
	CHECK(u, ctr_pfc_prio("rx_prio3_pause_transition", &tx) == -1);
	CHECK(u, ctr_pfc_prio("rx_prio8_pause", &tx) == -1);
	CHECK(u, ctr_pfc_prio("rx_global_pause", &tx) == -1);
	CHECK(u, ctr_pfc_prio("rx_prio3_packets", &tx) == -1);
	CHECK(u, ctr_pfc_prio("tx_pfc_ena_frames_pri2", &tx) == 2 && tx);
	CHECK(u, ctr_pfc_prio("rx_priority_5_xoff.nic", &tx) == 5 && !tx);
	CHECK(u, ctr_pfc_prio("port.tx_priority_1_xoff_tx", &tx) == 1 && tx);
	CHECK(u, ctr_pfc_prio("port.rx_priority_4_xoff", &tx) == 4 && !tx);
	CHECK(u, !ctr_port_pfc(&p, &pfc));
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "rx_prio3_pause", 120)->rate = 10;
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "tx_prio3_pause", 7)->rate = 1;
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "rx_prio3_pause_duration", 999);
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "rx_prio4_pause", 5)->rate = 0;
	/* Not from ethtool: not a pause counter. */
	ctr_set_add(&p.set, CTR_SRC_HW_PORT, "rx_prio5_pause", 5);
	ctr_set_sort(&p.set);
	CHECK(u, ctr_port_pfc(&p, &pfc));
	CHECK_EQ(u, pfc.rx_known, (1 << 3) | (1 << 4));
	CHECK_EQ(u, pfc.tx_known, 1 << 3);
	CHECK(u, pfc.rx[3] == 120 && pfc.tx[3] == 7 && pfc.rx[4] == 5);
	CHECK(u, pfc.rx_rate[3] == 10 && pfc.tx_rate[3] == 1 && isnan(pfc.tx_rate[4]));
	CHECK(u, !strcmp(pfc.source, "ethtool"));
	/* DCB's counts too: the driver's own per-priority names win. */
	ctr_set_add(&p.set, CTR_SRC_DCB, "requests[3]", 1000);
	ctr_set_sort(&p.set);
	CHECK(u, ctr_port_pfc(&p, &pfc) && !strcmp(pfc.source, "ethtool") && pfc.tx[3] == 7);
	ctr_set_free(&p.set);
	/* DCB alone: requests are sent (tx), indications received (rx). */
	ctr_set_add(&p.set, CTR_SRC_DCB, "requests[3]", 1000)->rate = 5;
	ctr_set_add(&p.set, CTR_SRC_DCB, "indications[3]", 400);
	ctr_set_add(&p.set, CTR_SRC_DCB, "indications[7]", 2);
	ctr_set_add(&p.set, CTR_SRC_DCB, "requests[8]", 9);	/* no priority 8 */
	ctr_set_add(&p.set, CTR_SRC_DCB, "requests[3]x", 9);
	ctr_set_add(&p.set, CTR_SRC_PAUSE, "tx_pause_frames", 77);
	ctr_set_sort(&p.set);
	CHECK(u, ctr_port_pfc(&p, &pfc) && !strcmp(pfc.source, "dcb"));
	CHECK_EQ(u, pfc.tx_known, 1 << 3);
	CHECK_EQ(u, pfc.rx_known, (1 << 3) | (1 << 7));
	CHECK(u, pfc.tx[3] == 1000 && pfc.tx_rate[3] == 5 && pfc.rx[3] == 400 && pfc.rx[7] == 2);
	ctr_set_free(&p.set);
	/* Link-level pause frames are not PFC. */
	ctr_set_add(&p.set, CTR_SRC_PAUSE, "rx_pause_frames", 77);
	CHECK(u, !ctr_port_pfc(&p, &pfc));
	ctr_set_free(&p.set);
}

static void names_verbatim(struct unit *u)
{
	struct ctr_set s = { 0 };

	/* Older mlx5 padded some ethtool names with a blank. */
	CHECK(u, ctr_set_add(&s, CTR_SRC_ETHTOOL, "tx_pause_storm_warning_events ", 1) != NULL);
	CHECK(u, ctr_set_add(&s, CTR_SRC_HW_PORT, "RNR sent", 2) != NULL);
	CHECK(u, ctr_set_add(&s, CTR_SRC_PMA, "link_downed", 3) != NULL);
	CHECK(u, ctr_set_add(&s, CTR_SRC_HW_PORT, "link_downed", 4) != NULL);
	ctr_set_sort(&s);
	CHECK(u, ctr_find(&s, CTR_SRC_ETHTOOL, "tx_pause_storm_warning_events") != NULL);
	CHECK(u, ctr_find(&s, CTR_SRC_HW_PORT, "RNR sent") != NULL);
	/* Same name, two sources: two counters. */
	CHECK(u, ctr_find(&s, CTR_SRC_PMA, "link_downed")->value == 3);
	CHECK(u, ctr_find(&s, CTR_SRC_HW_PORT, "link_downed")->value == 4);
	CHECK_EQ(u, s.c[0].src, CTR_SRC_PMA);
	ctr_set_free(&s);
}

static void ethtool_ioctl(struct unit *u)
{
	struct ctr_set s = { 0 };
	char err[128] = "";

	/* An interface that does not exist: an error naming it. */
	CHECK_EQ(u, ctr_read_ethtool("rdmakit-none0", &s, err, sizeof(err)), -1);
	CHECK(u, strstr(err, "rdmakit-none0") != NULL);
	CHECK_EQ(u, s.n, 0);
	/* The loopback has no ethtool statistics: nothing, and no error. */
	err[0] = '\0';
	CHECK_EQ(u, ctr_read_ethtool("lo", &s, err, sizeof(err)), 0);
	CHECK_EQ(u, s.n, 0);
	ctr_set_free(&s);
	CHECK(u, ctr_opts_default_ethtool(NULL) && ctr_opts_default_ethtool("/sys") &&
		 ctr_opts_default_ethtool("/sys/") && !ctr_opts_default_ethtool(sys1));
}

int main(void)
{
	struct unit u = { 0 };

	if (!find_fixture()) {
		printf("not ok 1 - tests/fixtures/top not found (set RDMAKIT_ROOT)\n1..1\n");
		return 1;
	}
	snprintf(sys1, sizeof(sys1), "%s/sample1/sys", fixture);
	snprintf(proc1, sizeof(proc1), "%s/sample1/proc", fixture);
	snprintf(sys2, sizeof(sys2), "%s/sample2/sys", fixture);
	snprintf(proc2, sizeof(proc2), "%s/sample2/proc", fixture);
	RUN(&u, parse_values);
	RUN(&u, reads_every_device_and_port);
	RUN(&u, mlx5_port_attrs_and_counters);
	RUN(&u, rxe_irdma_mlx4_switchdev);
	RUN(&u, netstat_ecn);
	RUN(&u, rates_between_samples);
	RUN(&u, netlink_wins_over_sysfs);
	RUN(&u, netlink_broken_answer);
	RUN(&u, rate_rules);
	RUN(&u, device_filter);
	RUN(&u, netstat_by_name);
	RUN(&u, semantic_map);
	RUN(&u, pfc_names);
	RUN(&u, names_verbatim);
	RUN(&u, ethtool_ioctl);
	return unit_done(&u);
}
