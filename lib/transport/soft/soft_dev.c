// SPDX-License-Identifier: MIT
/*
 * The soft engine's objects (device, memory regions, CQs, QPs), its ops
 * table, and the progress loop that receives, checks and dispatches
 * packets (the ICRC check, and the IPv4 ID it must guess, are in
 * soft_rx_icrc.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "soft.h"

struct soft_dev *soft_dev_open(struct soft_link *link, char *err)
{
	struct soft_dev *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	d->tx = calloc(SOFT_BATCH, sizeof(*d->tx));
	d->rx = calloc(SOFT_BATCH, sizeof(*d->rx));
	if (!d->tx || !d->rx) {
		free(d->tx);
		free(d->rx);
		free(d);
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	d->link = link;
	d->now_ns = soft_now_ns();
	d->shm = shm_publish_open(link->local.ip, link->local.port);
	return d;
}

void soft_dev_close(struct soft_dev *d)
{
	if (!d)
		return;
	soft_tx_flush(d);
	shm_publish_close(d->shm);
	if (d->link)
		d->link->ops->close(d->link);
	free(d->tx);
	free(d->rx);
	free(d);
}

struct soft_mr *soft_mr_lookup(struct soft_dev *d, uint32_t key)
{
	uint32_t idx = key & SOFT_INDEX_MASK;

	if (!d->mrs[idx].used || d->mrs[idx].pub.rkey != key)
		return NULL;
	return &d->mrs[idx];
}

struct soft_mr *soft_mr_check(struct soft_dev *d, uint32_t rkey, uint64_t va, uint64_t len,
			      int access)
{
	struct soft_mr *mr = soft_mr_lookup(d, rkey);
	uint64_t start, end;

	if (!mr || (mr->pub.access & access) != access)
		return NULL;
	start = (uint64_t)(uintptr_t)mr->pub.addr;
	end = start + mr->pub.length;
	/* va + len must not wrap, and must stay inside the region. */
	if (va < start || len > end - start || va - start > end - start - len)
		return NULL;
	return mr;
}

static void cq_push(struct soft_cq *cq, const struct xport_wc *wc, int qp_slot, uint64_t sq_free)
{
	if (cq->count == cq->depth) {
		cq->overflow = true;	/* an overrun CQ is a fatal error on RNICs too */
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->depth] =
		(struct soft_cqe){ .wc = *wc, .qp_slot = qp_slot, .sq_free = sq_free };
	cq->count++;
}

void soft_cq_push(struct soft_cq *cq, const struct xport_wc *wc)
{
	cq_push(cq, wc, -1, 0);
}

void soft_cq_push_send(struct soft_qp *qp, const struct xport_wc *wc, uint64_t sq_index)
{
	cq_push(qp->scq, wc, qp->slot, sq_index + 1);
}

static void send_cnp(struct soft_qp *qp)
{
	struct soft_pkt *slot;
	struct wire_pkt p;

	if (qp->dev->now_ns - qp->last_cnp_ns < SOFT_CNP_GAP_NS && qp->last_cnp_ns)
		return;
	qp->last_cnp_ns = qp->dev->now_ns;
	slot = soft_tx_slot(qp->dev);
	soft_bth(qp, &p, OP_CNP, 0);
	p.bth.becn = true;
	soft_tx_commit(qp, slot, &p, NULL, 0, WIRE_NOT_ECT);
	qp->ctr.cnps_tx++;
	qp->dev->ctr.cnps_tx++;
}

/* A QP takes its own transport's packets, and CNPs on a connection. */
static bool takes_transport(const struct soft_qp *qp, uint8_t transport)
{
	switch (qp->attr.type) {
	case XPORT_QPT_UC: return transport == WIRE_TR_UC || transport == WIRE_TR_CNP;
	case XPORT_QPT_UD: return transport == WIRE_TR_UD || transport == WIRE_TR_CNP;
	default: return transport == WIRE_TR_RC || transport == WIRE_TR_CNP;
	}
}

static void dispatch(struct soft_dev *d, struct soft_pkt *pk)
{
	uint8_t *bytes = soft_pkt_bytes(pk);
	struct wire_pkt p;
	struct soft_qp *qp;
	uint32_t slot;

	d->ctr.rx_packets++;
	d->ctr.rx_bytes += pk->len;
	if (wire_decode_bth(&p, bytes, pk->len) != WIRE_OK || !p.op) {
		d->ctr.drops++;
		return;
	}
	slot = p.bth.dqpn & SOFT_INDEX_MASK;
	qp = d->qps[slot];
	/* The QP first, as rxe: its peer's IPv4 IDs help check the ICRC. */
	if (!qp || qp->qpn != p.bth.dqpn || qp->state == SOFT_QP_RESET ||
	    !takes_transport(qp, p.op->transport)) {
		/* A corrupted QPN is corruption, not a stray packet. */
		if (!soft_rx_icrc_ok(d, NULL, pk))
			d->ctr.icrc_errors++;
		else
			d->ctr.drops++;
		return;
	}
	/* RC and UC are connections: only the peer's address may speak on
	 * one (not its UDP source port, which carries entropy), under its
	 * P_Key.  UD takes anyone's datagram under its P_Key and Q_Key, but
	 * a CNP only from the destination it sends to. */
	if (((qp->attr.type != XPORT_QPT_UD || p.bth.opcode == OP_CNP) &&
	     (pk->src.v6 != qp->peer.v6 || memcmp(pk->src.ip, qp->peer.ip, 16) != 0)) ||
	    (p.bth.pkey & 0x7FFF) != (WIRE_DEFAULT_PKEY & 0x7FFF)) {
		if (!soft_rx_icrc_ok(d, NULL, pk)) {
			d->ctr.icrc_errors++;
			return;
		}
		qp->ctr.wrong_peer_drops++;
		d->ctr.wrong_peer_drops++;
		return;
	}
	/* Only then the ICRC with the IDs expected: a stranger's packets
	 * must not move them.  (UD's senders are many: its QP's tracker
	 * wanders, the sending host's holds.) */
	if (!soft_rx_icrc_ok(d, &qp->rx_ids, pk)) {
		d->ctr.icrc_errors++;
		return;
	}
	qp->ctr.rx_packets++;
	qp->ctr.rx_bytes += pk->len;
	if (pk->ecn == WIRE_CE) {
		qp->ctr.ce_rx++;
		d->ctr.ce_rx++;
		/* A CNP goes to the sender's QP: on UD only when that is the
		 * destination this QP sends to (it has no address for others). */
		if (qp->attr.type != XPORT_QPT_UD ||
		    (p.deth.srcqp == qp->peer_qpn && memcmp(pk->src.ip, qp->peer.ip, 16) == 0))
			send_cnp(qp);
	}
	if (p.bth.opcode == OP_CNP) {
		qp->ctr.cnps_rx++;
		d->ctr.cnps_rx++;
		if (soft_dcqcn_on_cnp(&qp->cc, d->now_ns)) {
			qp->ctr.cnps_handled++;
			d->ctr.cnps_handled++;
		}
		return;
	}
	if (qp->attr.type == XPORT_QPT_UD)
		soft_ud_rx(qp, &p, pk);
	else if (qp->attr.type == XPORT_QPT_UC)
		soft_uc_rx(qp, &p, bytes);
	else if (flow_is_response_op(p.bth.opcode))
		soft_req_rx(qp, &p, bytes);
	else
		soft_resp_rx(qp, &p, bytes);
}

#define SHM_PERIOD_NS 10000000ull	/* publish counters every 10 ms */

/* The device's counters, with what only the link knows brought up to date
 * (not per QP: the host cannot say whose packets it dropped). */
const struct xport_counters *soft_dev_ctr(struct soft_dev *d)
{
	if (d->link->ops->rx_overflows)
		d->ctr.rcvbuf_drops = d->link->ops->rx_overflows(d->link);
	return &d->ctr;
}

static void publish(struct soft_dev *d)
{
	struct shm_counters *a;
	struct timespec ts;

	if (!d->shm || d->now_ns < d->shm_next_ns)
		return;
	d->shm_next_ns = d->now_ns + SHM_PERIOD_NS;
	a = shm_publish_begin(d->shm);
	clock_gettime(CLOCK_REALTIME, &ts);
	a->updated_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	a->dev = *soft_dev_ctr(d);
	a->nqps = (uint32_t)d->qp_slots;
	for (int i = 0; i < d->qp_slots && i < SHM_MAX_QPS; i++) {
		struct soft_qp *qp = d->qps[i];
		struct shm_qp *s = &a->qps[i];

		s->used = qp != NULL;
		if (!qp)
			continue;
		s->qpn = qp->qpn;
		s->peer_qpn = qp->peer_qpn;
		memcpy(s->peer_ip, qp->peer.ip, 16);
		s->peer_port = qp->peer.port;
		s->rate_gbps = qp->cc.limited ? qp->cc.rc_gbps : 0;
		s->c = qp->ctr;
	}
	shm_publish_end(d->shm);
}

void soft_progress(struct soft_dev *d)
{
	int n, rounds = 0;

	d->now_ns = soft_now_ns();
	/* A budget: under a flood, timers, ACKs and our own data still run
	 * every SOFT_RX_ROUNDS receive calls (late ACKs make peers time out).
	 * A call that read as many messages as one receive call takes (or
	 * filled the batch from GRO aggregates) may have left more behind. */
	do {
		n = d->link->ops->recv(d->link, d->rx, SOFT_BATCH);
		for (int i = 0; i < n; i++)
			dispatch(d, &d->rx[i]);
	} while (n >= SOFT_RX_MSGS && ++rounds < SOFT_RX_ROUNDS);
	for (int i = 0; i < d->qp_slots; i++) {
		struct soft_qp *qp = d->qps[i];

		if (!qp || qp->state == SOFT_QP_RESET)
			continue;
		soft_dcqcn_tick(&qp->cc, d->now_ns);
		soft_resp_transmit(qp);
		soft_req_timers(qp);
		soft_req_transmit(qp);
	}
	soft_tx_flush(d);
	publish(d);
}
