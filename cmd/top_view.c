// SPDX-License-Identifier: MIT
/*
 * rdmakit top: the cells of the ports table (shared by the batch table and
 * the screen), sampling with rates, and the messages both print.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

/* Headings are short enough for an 80-column screen; "help" spells them out. */
static const struct top_col_info cols[TOP_COL_COUNT] = {
	[TOP_COL_PORT] = { "port", "port", 10, 0, true },
	[TOP_COL_NETDEV] = { "netdev", "netdev", 10, 13, true },
	[TOP_COL_STATE] = { "state", "state", 6, 1, true },
	[TOP_COL_SPEED] = { "link", "link", 5, 14, false },
	[TOP_COL_RX] = { "rxGb/s", "rx_B", 6, 2, false },
	[TOP_COL_TX] = { "txGb/s", "tx_B", 6, 3, false },
	[TOP_COL_RX_PKTS] = { "rx_Mpps", "rx_pkts", 7, 11, false },
	[TOP_COL_TX_PKTS] = { "tx_Mpps", "tx_pkts", 7, 12, false },
	[TOP_COL_PAUSE] = { "pause r/t", "pause r/t", 9, 9, false },
	[TOP_COL_ECN] = { "ecn", "ecn", 5, 4, false },
	[TOP_COL_CNP_SENT] = { "cnp_tx", "cnp_tx", 6, 5, false },
	[TOP_COL_CNP_HANDLED] = { "cnp_rx", "cnp_rx", 6, 6, false },
	[TOP_COL_OOS] = { "oos", "oos", 5, 7, false },
	[TOP_COL_SEQ_ERR] = { "seqerr", "seqerr", 6, 8, false },
	[TOP_COL_TIMEOUT] = { "tmo", "tmo", 5, 10, false },
	[TOP_COL_RNR] = { "rnr", "rnr", 5, 15, false },
};

const struct top_col_info *top_col(enum top_col c)
{
	return &cols[c];
}

void top_si(double v, char *buf, size_t cap)
{
	static const char units[] = "kMGTPE";
	int u = -1;

	if (isnan(v)) {
		snprintf(buf, cap, "-");
		return;
	}
	if (v < 0)
		v = 0;
	if (v < 999.5) {	/* three significant digits: 0.25, 12.5, 750 */
		snprintf(buf, cap, "%.3g", v);
		return;
	}
	while (v >= 999.5 && u < 5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, cap, "%.3g%c", v, units[u]);
}

void top_rate_text(const struct ctr_counter *c, char *buf, size_t cap)
{
	if (c->flags & CTR_F_SATURATED)
		snprintf(buf, cap, "sat");
	else
		top_si(c->rate, buf, cap);
}

void top_port_name(const struct ctr_port *p, char *buf, size_t cap)
{
	if (p->device[0])
		snprintf(buf, cap, "%s/%d", p->device, p->port);
	else
		snprintf(buf, cap, "%s", p->netdev);
}

static enum ctr_meaning col_meaning(enum top_col c)
{
	switch (c) {
	case TOP_COL_RX: return CTR_M_RX_BYTES;
	case TOP_COL_TX: return CTR_M_TX_BYTES;
	case TOP_COL_RX_PKTS: return CTR_M_RX_PACKETS;
	case TOP_COL_TX_PKTS: return CTR_M_TX_PACKETS;
	case TOP_COL_ECN: return CTR_M_ECN_MARKED;
	case TOP_COL_CNP_SENT: return CTR_M_CNP_SENT;
	case TOP_COL_CNP_HANDLED: return CTR_M_CNP_HANDLED;
	case TOP_COL_OOS: return CTR_M_OUT_OF_SEQUENCE;
	case TOP_COL_SEQ_ERR: return CTR_M_SEQ_ERR;
	case TOP_COL_TIMEOUT: return CTR_M_TIMEOUT;
	case TOP_COL_RNR: return CTR_M_RNR;
	default: return CTR_M_NONE;
	}
}

/*
 * Sum of the PFC pause counters of all priorities; without any, the
 * link-level pause frames (ethtool netlink); false when neither is known.
 */
static bool pause_sums(const struct ctr_port *p, double rx_tx[2], bool totals)
{
	const struct ctr_counter *rx, *tx;
	struct ctr_pfc pfc;

	if (!ctr_port_pfc(p, &pfc)) {
		rx = ctr_find(&p->set, CTR_SRC_PAUSE, "rx_pause_frames");
		tx = ctr_find(&p->set, CTR_SRC_PAUSE, "tx_pause_frames");
		if (!rx && !tx)
			return false;
		rx_tx[0] = !rx ? NAN : totals ? (double)rx->value : rx->rate;
		rx_tx[1] = !tx ? NAN : totals ? (double)tx->value : tx->rate;
		return true;
	}
	rx_tx[0] = rx_tx[1] = 0;
	for (int i = 0; i < CTR_PFC_PRIOS; i++) {
		if (pfc.rx_known & (1u << i))
			rx_tx[0] += totals ? (double)pfc.rx[i] : pfc.rx_rate[i];
		if (pfc.tx_known & (1u << i))
			rx_tx[1] += totals ? (double)pfc.tx[i] : pfc.tx_rate[i];
	}
	return true;
}

double top_sort_value(const struct ctr_port *p, enum top_col c, bool totals)
{
	enum ctr_meaning m = col_meaning(c);
	double rate, rt[2];
	uint64_t v;

	if (c == TOP_COL_SPEED)
		return p->rate_gbps;
	if (c == TOP_COL_PAUSE)
		return pause_sums(p, rt, totals) && !isnan(rt[0] + rt[1]) ? rt[0] + rt[1] : -1;
	if (m == CTR_M_NONE || !ctr_port_meaning(p, m, &v, &rate, NULL))
		return -1;
	if (totals)
		return (double)v;
	return isnan(rate) ? -1 : rate;
}

void top_cell(const struct ctr_port *p, enum top_col c, bool totals, char *buf, size_t cap,
	      bool *hot)
{
	enum ctr_meaning m = col_meaning(c);
	char a[16], b[16];
	double rate, rt[2];
	uint8_t flags;
	uint64_t v;

	*hot = false;
	switch (c) {
	case TOP_COL_PORT:
		top_port_name(p, buf, cap);
		return;
	case TOP_COL_NETDEV:
		snprintf(buf, cap, "%s", p->netdev[0] ? p->netdev : "-");
		return;
	case TOP_COL_STATE:
		snprintf(buf, cap, "%s", p->state[0] ? p->state : "-");
		return;
	case TOP_COL_SPEED:
		if (p->rate_gbps > 0)
			snprintf(buf, cap, "%gG", p->rate_gbps);
		else
			snprintf(buf, cap, "-");
		return;
	case TOP_COL_PAUSE:
		if (!pause_sums(p, rt, totals)) {
			snprintf(buf, cap, "-");
			return;
		}
		top_si(rt[0], a, sizeof(a));
		top_si(rt[1], b, sizeof(b));
		snprintf(buf, cap, "%s/%s", a, b);
		return;
	default:
		break;
	}
	if (!ctr_port_meaning(p, m, &v, &rate, &flags)) {
		snprintf(buf, cap, "-");
		return;
	}
	if (totals) {
		top_si((double)v, buf, cap);
		*hot = ctr_meaning_is_error(m) && v > 0;
		return;
	}
	*hot = ctr_meaning_is_error(m) && rate > 0;
	if (flags & CTR_F_SATURATED)
		snprintf(buf, cap, "sat");
	else if (isnan(rate))
		snprintf(buf, cap, "-");
	else if (c == TOP_COL_RX || c == TOP_COL_TX)
		snprintf(buf, cap, "%.2f", rate * 8 / 1e9);
	else if (c == TOP_COL_RX_PKTS || c == TOP_COL_TX_PKTS)
		snprintf(buf, cap, "%.3f", rate / 1e6);
	else
		top_si(rate, buf, cap);
}

void top_nothing_message(const struct top_state *st, char *buf, size_t cap)
{
	const struct top_opts *o = st->o;
	const char *root = o->ctr.sysfs_root ? o->ctr.sysfs_root : CTR_SYSFS_ROOT;

	buf[0] = '\0';
	for (size_t i = 0; i < st->cur.nports; i++)
		if (st->cur.ports[i].device[0])
			return;
	if (st->cur.nengines)
		return;
	snprintf(buf, cap, "no RDMA devices under %s/class/infiniband%s; no soft-engine processes "
		 "(no rdmakit-* segments in /dev/shm)", root,
		 st->cur.ib_class ? "" : " (no RDMA driver loaded)");
}

void top_ecn_line(const struct ctr_snapshot *s, bool totals, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	if (!s->have_netstat)
		return;
	/* The order a reader looks for: CE first. */
	static const char *const names[] = { "InCEPkts", "InECT0Pkts", "InECT1Pkts", "InNoECTPkts" };
	for (size_t i = 0; i < 4 && len < cap; i++) {
		const struct ctr_counter *c = ctr_find(&s->netstat, CTR_SRC_NETSTAT, names[i]);
		char r[16];

		if (!c)
			continue;
		top_si(c->rate, r, sizeof(r));
		if (totals)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s %llu", len ? "  " : "",
						names[i], (unsigned long long)c->value);
		else
			len += (size_t)snprintf(buf + len, cap - len, "%s%s %s/s", len ? "  " : "",
						names[i], r);
	}
}

/* --- sampling ------------------------------------------------------------------ */

uint64_t top_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void top_sleep_until(uint64_t deadline_ns)
{
	/* In steps of at most 100 ms: a stop signal may reach another thread
	 * (the exporter's HTTP server), so the flag is looked at. */
	for (uint64_t now = top_now_ns(); now < deadline_ns && !cmd_stop; now = top_now_ns()) {
		uint64_t step = deadline_ns - now < 100000000u ? deadline_ns - now : 100000000u;
		struct timespec ts = { (time_t)(step / 1000000000u), (long)(step % 1000000000u) };

		nanosleep(&ts, NULL);
	}
}

int top_sample(struct top_state *st)
{
	struct ctr_snapshot next;

	if (ctr_sample(&st->o->ctr, &next, st->err, sizeof(st->err)) < 0)
		return -1;
	/* Rates against the previous sample, whose history moves over. */
	ctr_rates(&next, st->sampled ? &st->cur : NULL);
	if (st->sampled)
		ctr_snapshot_free(&st->cur);
	st->cur = next;
	st->sampled = true;
	st->samples++;
	return 0;
}

void top_state_free(struct top_state *st)
{
	if (st->sampled)
		ctr_snapshot_free(&st->cur);
	st->sampled = false;
}

void top_engine_line(const struct ctr_engine *e, bool totals, char *buf, size_t cap)
{
	static const char *const names[] = {
		"tx_packets", "rx_packets", "retransmits", "timeouts", "naks_rx", "rnr_naks_rx",
		"cnps_tx", "cnps_rx", "ce_rx", "icrc_errors",
	};
	size_t len = (size_t)snprintf(buf, cap, "%s (pid %d):", e->name, e->pid);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && len < cap; i++) {
		const struct ctr_counter *c = ctr_find(&e->set, CTR_SRC_ENGINE, names[i]);

		if (!c)
			continue;
		if (totals || isnan(c->rate))
			len += (size_t)snprintf(buf + len, cap - len, " %s %llu", names[i],
						(unsigned long long)c->value);
		else
			len += (size_t)snprintf(buf + len, cap - len, " %s %.0f/s", names[i], c->rate);
	}
}
