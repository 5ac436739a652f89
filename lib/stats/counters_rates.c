// SPDX-License-Identifier: MIT
/*
 * Rates between two counter snapshots, the semantic map from driver
 * counter names to meanings, and PFC pause counters by priority.
 *
 * Rate rules (ctr_rate), chosen so a rate is never negative or absurd:
 *   grew            (cur - prev) / interval
 *   went backwards  0, flagged reset: the counter was cleared or its device
 *                   re-created; what it counted since is not knowable
 *   PMA saturated   unknown (NAN), flagged: IB PMA counters narrower than
 *                   64 bits stop at 2^width-1 instead of wrapping
 *   new             unknown (NAN) until a second sample exists
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "counters.h"

/* --- the semantic map -------------------------------------------------------- */

/*
 * Counter names per driver and what they count, read in Debian's kernel
 * sources (linux-source-6.1 6.1.192, Debian 12; linux-source-6.12 6.12.117,
 * Debian 13) under drivers/infiniband/: core/sysfs.c (PMA),
 * hw/mlx5/counters.c (firmware Q and congestion counters: meanings from
 * NVIDIA's counter descriptions), sw/rxe/ (rxe_hw_counters.c names; rxe_comp.c,
 * rxe_resp.c, rxe_recv.c, rxe_net.c increment them), hw/bnxt_re/hw_counters.c
 * (firmware fields: meanings from their names), hw/irdma/verbs.c.  A name
 * shared by two drivers appears once, under the first.  Left unmapped on
 * purpose (shown raw, under their own names):
 *   rxe retry_exceeded_err: rxe_comp.c rxe_completer counts it only when
 *     retry_cnt is used up (the QP fails), not per ACK timeout; rxe has no
 *     per-timeout counter (completer_retry_err mixes timeouts and NAKs).
 *   rxe send_rnr_err: RNR NAKs this responder sent (rxe_resp.c), not ones
 *     received, which rcvd_rnr_err counts (rxe_comp.c check_ack).
 * Partial: rxe out_of_seq_request counts the first packet of each gap
 * only, rcvd_seq_err only NAKs that move the completer's PSN forward.
 */
static const struct ctr_map_row map[] = {
	{ "ib", CTR_SRC_PMA, "port_rcv_data", CTR_M_RX_BYTES },
	{ "ib", CTR_SRC_PMA, "port_xmit_data", CTR_M_TX_BYTES },
	{ "ib", CTR_SRC_PMA, "port_rcv_packets", CTR_M_RX_PACKETS },
	{ "ib", CTR_SRC_PMA, "port_xmit_packets", CTR_M_TX_PACKETS },

	{ "mlx5", CTR_SRC_HW_PORT, "np_ecn_marked_roce_packets", CTR_M_ECN_MARKED },
	{ "mlx5", CTR_SRC_HW_PORT, "np_cnp_sent", CTR_M_CNP_SENT },
	{ "mlx5", CTR_SRC_HW_PORT, "rp_cnp_handled", CTR_M_CNP_HANDLED },
	{ "mlx5", CTR_SRC_HW_PORT, "rp_cnp_ignored", CTR_M_CNP_IGNORED },
	{ "mlx5", CTR_SRC_HW_PORT, "out_of_sequence", CTR_M_OUT_OF_SEQUENCE },
	{ "mlx5", CTR_SRC_HW_PORT, "packet_seq_err", CTR_M_SEQ_ERR },
	{ "mlx5", CTR_SRC_HW_PORT, "implied_nak_seq_err", CTR_M_SEQ_ERR },
	{ "mlx5", CTR_SRC_HW_PORT, "local_ack_timeout_err", CTR_M_TIMEOUT },
	{ "mlx5", CTR_SRC_HW_PORT, "rnr_nak_retry_err", CTR_M_RNR },
	{ "mlx5", CTR_SRC_HW_PORT, "duplicate_request", CTR_M_DUP_REQ },
	{ "mlx5", CTR_SRC_HW_PORT, "out_of_buffer", CTR_M_OUT_OF_BUFFER },

	{ "rxe", CTR_SRC_HW_PORT, "rcvd_pkts", CTR_M_RX_PACKETS },
	{ "rxe", CTR_SRC_HW_PORT, "sent_pkts", CTR_M_TX_PACKETS },
	{ "rxe", CTR_SRC_HW_PORT, "out_of_seq_request", CTR_M_OUT_OF_SEQUENCE },
	{ "rxe", CTR_SRC_HW_PORT, "rcvd_seq_err", CTR_M_SEQ_ERR },
	{ "rxe", CTR_SRC_HW_PORT, "rcvd_rnr_err", CTR_M_RNR },
	/* duplicate_request: as mlx5 */

	{ "bnxt_re", CTR_SRC_HW_PORT, "rx_bytes", CTR_M_RX_BYTES },
	{ "bnxt_re", CTR_SRC_HW_PORT, "tx_bytes", CTR_M_TX_BYTES },
	{ "bnxt_re", CTR_SRC_HW_PORT, "rx_pkts", CTR_M_RX_PACKETS },
	{ "bnxt_re", CTR_SRC_HW_PORT, "tx_pkts", CTR_M_TX_PACKETS },
	{ "bnxt_re", CTR_SRC_HW_PORT, "oos_drop_count", CTR_M_OUT_OF_SEQUENCE },
	{ "bnxt_re", CTR_SRC_HW_PORT, "seq_err_naks_rcvd", CTR_M_SEQ_ERR },
	{ "bnxt_re", CTR_SRC_HW_PORT, "to_retransmits", CTR_M_TIMEOUT },
	{ "bnxt_re", CTR_SRC_HW_PORT, "rnr_naks_rcvd", CTR_M_RNR },
	{ "bnxt_re", CTR_SRC_HW_PORT, "dup_req", CTR_M_DUP_REQ },
	{ "bnxt_re", CTR_SRC_HW_PORT, "rx_out_of_buffer", CTR_M_OUT_OF_BUFFER },

	{ "irdma", CTR_SRC_HW_PORT, "ip4InOctets", CTR_M_RX_BYTES },
	{ "irdma", CTR_SRC_HW_PORT, "ip6InOctets", CTR_M_RX_BYTES },
	{ "irdma", CTR_SRC_HW_PORT, "ip4OutOctets", CTR_M_TX_BYTES },
	{ "irdma", CTR_SRC_HW_PORT, "ip6OutOctets", CTR_M_TX_BYTES },
	{ "irdma", CTR_SRC_HW_PORT, "ip4InPkts", CTR_M_RX_PACKETS },
	{ "irdma", CTR_SRC_HW_PORT, "ip6InPkts", CTR_M_RX_PACKETS },
	{ "irdma", CTR_SRC_HW_PORT, "ip4OutPkts", CTR_M_TX_PACKETS },
	{ "irdma", CTR_SRC_HW_PORT, "ip6OutPkts", CTR_M_TX_PACKETS },
	{ "irdma", CTR_SRC_HW_PORT, "RxECNMrkd", CTR_M_ECN_MARKED },
	{ "irdma", CTR_SRC_HW_PORT, "cnpSent", CTR_M_CNP_SENT },
	{ "irdma", CTR_SRC_HW_PORT, "cnpHandled", CTR_M_CNP_HANDLED },
	{ "irdma", CTR_SRC_HW_PORT, "cnpIgnored", CTR_M_CNP_IGNORED },
	/* GEN3 (IPU E2000) names, from a 2025 patch after 6.12. */
	{ "irdma", CTR_SRC_HW_PORT, "Nak Sequence Error", CTR_M_SEQ_ERR },
	{ "irdma", CTR_SRC_HW_PORT, "RNR received", CTR_M_RNR },

	/* Interface rows (-i): class/net/IF/statistics. */
	{ "netdev", CTR_SRC_NETDEV, "rx_bytes", CTR_M_RX_BYTES },
	{ "netdev", CTR_SRC_NETDEV, "tx_bytes", CTR_M_TX_BYTES },
	{ "netdev", CTR_SRC_NETDEV, "rx_packets", CTR_M_RX_PACKETS },
	{ "netdev", CTR_SRC_NETDEV, "tx_packets", CTR_M_TX_PACKETS },
};

const struct ctr_map_row *ctr_map(size_t *n)
{
	*n = sizeof(map) / sizeof(map[0]);
	return map;
}

enum ctr_meaning ctr_meaning_of(enum ctr_src src, const char *name)
{
	/* Device-level hw_counters carry the same names as per-port ones, and
	 * the RDMA netlink the same as sysfs.  Optional and QP counters mean
	 * nothing here: mlx5's cc_rx_ce_pkts counts what np_ecn_marked_roce_packets
	 * does, and a QP counter is part of the port's value. */
	if (src == CTR_SRC_HW_DEV || src == CTR_SRC_NLDEV)
		src = CTR_SRC_HW_PORT;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].src == src && map[i].name[0] == name[0] && !strcmp(map[i].name, name))
			return map[i].meaning;
	return CTR_M_NONE;
}

static const char *const meaning_keys[CTR_M_COUNT] = {
	[CTR_M_NONE] = "none",
	[CTR_M_RX_BYTES] = "rx_bytes",
	[CTR_M_TX_BYTES] = "tx_bytes",
	[CTR_M_RX_PACKETS] = "rx_packets",
	[CTR_M_TX_PACKETS] = "tx_packets",
	[CTR_M_ECN_MARKED] = "ecn_marked",
	[CTR_M_CNP_SENT] = "cnp_sent",
	[CTR_M_CNP_HANDLED] = "cnp_handled",
	[CTR_M_CNP_IGNORED] = "cnp_ignored",
	[CTR_M_OUT_OF_SEQUENCE] = "out_of_sequence",
	[CTR_M_SEQ_ERR] = "seq_err",
	[CTR_M_TIMEOUT] = "timeout",
	[CTR_M_RNR] = "rnr",
	[CTR_M_DUP_REQ] = "dup_req",
	[CTR_M_OUT_OF_BUFFER] = "out_of_buffer",
};

const char *ctr_meaning_key(enum ctr_meaning m)
{
	return m < CTR_M_COUNT ? meaning_keys[m] : "none";
}

bool ctr_meaning_is_error(enum ctr_meaning m)
{
	return m == CTR_M_OUT_OF_SEQUENCE || m == CTR_M_SEQ_ERR || m == CTR_M_TIMEOUT ||
	       m == CTR_M_RNR || m == CTR_M_DUP_REQ || m == CTR_M_OUT_OF_BUFFER;
}

bool ctr_name_is_error(const char *name)
{
	static const char *const words[] = {
		"err", "discard", "drop", "timeout", "retr", "nak", "out_of_seq",
		"out_of_buffer", "oos", "downed", "overrun", "invalid", "symbol",
	};
	char low[128];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
	low[i] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

static bool is_traffic(enum ctr_meaning m)
{
	return m >= CTR_M_RX_BYTES && m <= CTR_M_TX_PACKETS;
}

bool ctr_port_meaning(const struct ctr_port *p, enum ctr_meaning m, uint64_t *value,
		      double *rate, uint8_t *flags)
{
	bool found = false, pma = false;

	*value = 0;
	*rate = 0;
	if (flags)
		*flags = 0;
	/* A port with PMA traffic counters may also have driver ones for the
	 * same traffic: count it once, from the PMA. */
	if (is_traffic(m))
		for (size_t i = 0; i < p->set.n && !pma; i++)
			pma = p->set.c[i].meaning == m && p->set.c[i].src == CTR_SRC_PMA;
	for (size_t i = 0; i < p->set.n; i++) {
		const struct ctr_counter *c = &p->set.c[i];

		if (c->meaning != m || (pma && c->src != CTR_SRC_PMA))
			continue;
		found = true;
		*value += c->value * c->scale;
		*rate += c->rate * c->scale;	/* NAN stays NAN */
		if (flags)
			*flags |= c->flags;
	}
	return found;
}

/* --- PFC --------------------------------------------------------------------- */

/* prefix N suffix, N a priority 0..7 */
static const struct {
	const char *prefix, *suffix;
	bool tx;
} pfc_names[] = {
	{ "rx_prio", "_pause", false },			/* mlx5 */
	{ "tx_prio", "_pause", true },
	{ "rx_pfc_ena_frames_pri", "", false },		/* bnxt_en */
	{ "tx_pfc_ena_frames_pri", "", true },
	{ "rx_priority_", "_xoff.nic", false },		/* ice */
	{ "tx_priority_", "_xoff.nic", true },
	{ "port.rx_priority_", "_xoff_rx", false },	/* i40e */
	{ "port.tx_priority_", "_xoff_tx", true },
	{ "port.rx_priority_", "_xoff", false },	/* i40e, older */
	{ "port.tx_priority_", "_xoff", true },
};

int ctr_pfc_prio(const char *name, bool *tx)
{
	for (size_t i = 0; i < sizeof(pfc_names) / sizeof(pfc_names[0]); i++) {
		size_t pl = strlen(pfc_names[i].prefix);
		const char *d = name + pl;

		if (strncmp(name, pfc_names[i].prefix, pl) || *d < '0' || *d > '7' ||
		    strcmp(d + 1, pfc_names[i].suffix))
			continue;
		*tx = pfc_names[i].tx;
		return *d - '0';
	}
	return -1;
}

/* "requests[3]" -> 3, or -1. */
static int dcb_prio(const char *name, const char *field)
{
	size_t fl = strlen(field);

	if (strncmp(name, field, fl) || name[fl] != '[' || name[fl + 1] < '0' ||
	    name[fl + 1] > '7' || strcmp(name + fl + 2, "]"))
		return -1;
	return name[fl + 1] - '0';
}

/* DCB counts PFC frames sent (requests) and received (indications). */
static void dcb_pfc(const struct ctr_port *p, struct ctr_pfc *out)
{
	for (size_t i = 0; i < p->set.n; i++) {
		const struct ctr_counter *c = &p->set.c[i];
		int prio;

		if (c->src != CTR_SRC_DCB)
			continue;
		if ((prio = dcb_prio(c->name, "requests")) >= 0) {
			out->tx[prio] = c->value;
			out->tx_rate[prio] = c->rate;
			out->tx_known |= (uint8_t)(1u << prio);
		} else if ((prio = dcb_prio(c->name, "indications")) >= 0) {
			out->rx[prio] = c->value;
			out->rx_rate[prio] = c->rate;
			out->rx_known |= (uint8_t)(1u << prio);
		} else {
			continue;
		}
		out->source = "dcb";
	}
}

bool ctr_port_pfc(const struct ctr_port *p, struct ctr_pfc *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < CTR_PFC_PRIOS; i++)
		out->rx_rate[i] = out->tx_rate[i] = NAN;
	for (size_t i = 0; i < p->set.n; i++) {
		const struct ctr_counter *c = &p->set.c[i];
		bool tx;
		int prio;

		if (c->src != CTR_SRC_ETHTOOL || (prio = ctr_pfc_prio(c->name, &tx)) < 0)
			continue;
		out->source = "ethtool";
		if (tx) {
			out->tx[prio] = c->value;
			out->tx_rate[prio] = c->rate;
			out->tx_known |= (uint8_t)(1u << prio);
		} else {
			out->rx[prio] = c->value;
			out->rx_rate[prio] = c->rate;
			out->rx_known |= (uint8_t)(1u << prio);
		}
	}
	if (!out->rx_known && !out->tx_known)
		dcb_pfc(p, out);
	return out->rx_known || out->tx_known;
}

/* --- rates ------------------------------------------------------------------- */

double ctr_rate(uint64_t prev, uint64_t cur, double interval_s, unsigned width,
		uint8_t *flags)
{
	if (width < 64 && cur == (UINT64_C(1) << width) - 1) {
		*flags |= CTR_F_SATURATED;
		return NAN;
	}
	if (cur < prev) {
		*flags |= CTR_F_RESET;
		return 0;
	}
	if (!(interval_s > 0)) {
		*flags |= CTR_F_NEW;
		return NAN;
	}
	return (double)(cur - prev) / interval_s;
}

static void hist_push(struct ctr_counter *c)
{
	struct ctr_hist *h = c->hist;

	if (!h) {
		h = c->hist = calloc(1, sizeof(*h));
		if (!h)
			return;	/* a missing sparkline is not worth failing for */
	}
	h->v[(h->head + h->len) % CTR_HIST_LEN] = (float)c->rate;
	if (h->len < CTR_HIST_LEN)
		h->len++;
	else
		h->head = (uint16_t)((h->head + 1) % CTR_HIST_LEN);
}

size_t ctr_hist_get(const struct ctr_hist *h, float *out, size_t n)
{
	size_t have = h ? h->len : 0, skip;

	if (n > have)
		n = have;
	skip = have - n;
	for (size_t i = 0; i < n; i++)
		out[i] = h->v[(h->head + skip + i) % CTR_HIST_LEN];
	return n;
}

static void mark_new(struct ctr_set *s, bool history)
{
	for (size_t i = 0; i < s->n; i++) {
		s->c[i].rate = NAN;
		s->c[i].flags = CTR_F_NEW;
		if (history)
			hist_push(&s->c[i]);
	}
}

/* Both sets sorted by (src, name): a merge. */
static void set_rates(struct ctr_set *cur, struct ctr_set *prev, double dt, bool history)
{
	size_t i = 0, j = 0;

	while (i < cur->n) {
		struct ctr_counter *c = &cur->c[i];
		int cmp = 1;

		while (j < prev->n) {
			const struct ctr_counter *p = &prev->c[j];

			cmp = c->src != p->src ? (c->src < p->src ? -1 : 1) : strcmp(c->name, p->name);
			if (cmp <= 0)
				break;
			j++;
		}
		c->flags = 0;
		if (j < prev->n && cmp == 0) {
			struct ctr_counter *p = &prev->c[j++];

			/* The width may be learnt late (a value past 2^32). */
			c->rate = ctr_rate(p->value, c->value, dt,
					   c->width > p->width ? c->width : p->width, &c->flags);
			if (history && !c->hist) {
				c->hist = p->hist;
				p->hist = NULL;
			}
		} else {
			c->rate = NAN;
			c->flags = CTR_F_NEW;
		}
		if (history)
			hist_push(c);
		i++;
	}
}

static char *port_key(const struct ctr_port *p)
{
	char *k = NULL;

	if (p->device[0]) {
		if (asprintf(&k, "%s/%d", p->device, p->port) < 0)
			return NULL;
	} else {
		k = strdup(p->netdev);
	}
	return k;
}

static void note_gone(struct ctr_snapshot *cur, const struct ctr_port *p)
{
	char **g = realloc(cur->gone, (cur->ngone + 1) * sizeof(*g));
	char *k;

	if (!g)
		return;
	cur->gone = g;
	k = port_key(p);
	if (k)
		cur->gone[cur->ngone++] = k;
}

void ctr_rates(struct ctr_snapshot *cur, struct ctr_snapshot *prev)
{
	size_t i = 0, j = 0;
	double dt;

	if (!prev) {
		cur->interval_s = 0;
		for (size_t k = 0; k < cur->nports; k++) {
			cur->ports[k].is_new = true;
			mark_new(&cur->ports[k].set, cur->history);
		}
		mark_new(&cur->netstat, cur->history);
		return;
	}
	dt = cur->mono_ns > prev->mono_ns ? (double)(cur->mono_ns - prev->mono_ns) / 1e9 : 0;
	cur->interval_s = dt;
	while (i < cur->nports || j < prev->nports) {
		int cmp;

		if (i == cur->nports)
			cmp = 1;
		else if (j == prev->nports)
			cmp = -1;
		else
			cmp = ctr_port_order(&cur->ports[i], &prev->ports[j]);
		if (cmp < 0) {
			cur->ports[i].is_new = true;
			mark_new(&cur->ports[i++].set, cur->history);
		} else if (cmp > 0) {
			note_gone(cur, &prev->ports[j++]);
		} else {
			set_rates(&cur->ports[i].set, &prev->ports[j].set, dt, cur->history);
			i++;
			j++;
		}
	}
	set_rates(&cur->netstat, &prev->netstat, dt, cur->history);
	/* Soft engines: the same process (pid and address) in both samples. */
	for (size_t k = 0; k < cur->nengines; k++) {
		struct ctr_engine *e = &cur->engines[k];
		size_t m;

		for (m = 0; m < prev->nengines; m++)
			if (prev->engines[m].pid == e->pid && !strcmp(prev->engines[m].name, e->name))
				break;
		if (m < prev->nengines)
			set_rates(&e->set, &prev->engines[m].set, dt, cur->history);
		else
			mark_new(&e->set, cur->history);
	}
}

const struct ctr_counter *ctr_find(const struct ctr_set *s, enum ctr_src src, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].src == src && !strcmp(s->c[i].name, name))
			return &s->c[i];
	return NULL;
}

void ctr_port_deltas(const struct ctr_snapshot *before, const struct ctr_snapshot *after,
		     const char *dev, int port, ctr_delta_fn fn, void *ctx)
{
	for (size_t i = 0; i < after->nports; i++) {
		const struct ctr_port *p = &after->ports[i], *p0 = NULL;

		if (!p->device[0] || (dev && (strcmp(p->device, dev) || p->port != port)))
			continue;
		for (size_t k = 0; k < before->nports && !p0; k++)
			if (!strcmp(before->ports[k].device, p->device) &&
			    before->ports[k].port == p->port)
				p0 = &before->ports[k];
		for (size_t k = 0; p0 && k < p->set.n; k++) {
			const struct ctr_counter *c = &p->set.c[k];
			const struct ctr_counter *c0;

			if (c->src == CTR_SRC_NLDEV_QP)
				continue;
			c0 = ctr_find(&p0->set, (enum ctr_src)c->src, c->name);
			if (c0 && c->value > c0->value)
				fn(p, c, c->value - c0->value, ctx);
		}
	}
}

const char *ctr_qp_counter_mode(uint32_t mode)
{
	return mode == 1 ? "auto" : mode == 2 ? "manual" : "none";
}
