// SPDX-License-Identifier: MIT
/*
 * The soft engine's objects (device, memory regions, CQs, QPs), its ops
 * table, and the progress loop that receives, checks and dispatches
 * packets.  Received ICRCs are verified against the IP/UDP headers the
 * packet came with; the IPv4 ID is not visible on a UDP socket, so the
 * ICRC is tried with ID 0 (senders with DF set, such as rxe and this
 * engine) and then with the small IDs a kernel-segmented GSO send writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "icrc.h"
#include "soft.h"

#define GSO_IDS_TRIED 64

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
	d->key_gen = 0x5A;
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
	uint32_t idx = key >> 8;

	if (idx >= SOFT_MAX_MRS || !d->mrs[idx].used || d->mrs[idx].pub.rkey != key)
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

void soft_cq_push(struct soft_cq *cq, const struct xport_wc *wc)
{
	if (cq->count == cq->depth) {
		cq->overflow = true;	/* an overrun CQ is a fatal error on RNICs too */
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->depth] = *wc;
	cq->count++;
}

/* A received packet's ICRC, with the IPv4 IDs a sender could have used. */
static bool rx_icrc_ok(const struct soft_pkt *pk)
{
	uint32_t want;

	if (pk->len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return false;
	want = (uint32_t)pk->buf[pk->len - 4] | (uint32_t)pk->buf[pk->len - 3] << 8 |
	       (uint32_t)pk->buf[pk->len - 2] << 16 | (uint32_t)pk->buf[pk->len - 1] << 24;
	/* The hint first: segment k of a GRO aggregate was sealed with ID k. */
	if (soft_icrc(&pk->src, &pk->dst, pk->ecn, pk->ip_id, pk->buf, pk->len) == want)
		return true;
	for (uint16_t id = 0; id < (pk->src.v6 ? 1 : GSO_IDS_TRIED); id++)
		if (id != pk->ip_id &&
		    soft_icrc(&pk->src, &pk->dst, pk->ecn, id, pk->buf, pk->len) == want)
			return true;
	return false;
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

static void dispatch(struct soft_dev *d, struct soft_pkt *pk)
{
	struct wire_pkt p;
	struct soft_qp *qp;
	uint32_t slot;

	d->ctr.rx_packets++;
	d->ctr.rx_bytes += pk->len;
	if (wire_decode_bth(&p, pk->buf, pk->len) != WIRE_OK || !p.op ||
	    p.op->transport == WIRE_TR_UD) {
		d->ctr.drops++;
		return;
	}
	if (!rx_icrc_ok(pk)) {
		d->ctr.icrc_errors++;
		return;
	}
	slot = p.bth.dqpn - SOFT_QPN_BASE;
	qp = slot < SOFT_MAX_QPS ? d->qps[slot] : NULL;
	if (!qp || qp->state == SOFT_QP_RESET || (p.op->transport != WIRE_TR_RC &&
						  p.op->transport != WIRE_TR_CNP)) {
		d->ctr.drops++;
		return;
	}
	qp->ctr.rx_packets++;
	qp->ctr.rx_bytes += pk->len;
	if (pk->ecn == WIRE_CE) {
		qp->ctr.ce_rx++;
		d->ctr.ce_rx++;
		send_cnp(qp);
	}
	if (p.bth.opcode == OP_CNP) {
		qp->ctr.cnps_rx++;
		d->ctr.cnps_rx++;
		soft_dcqcn_on_cnp(&qp->cc, d->now_ns);
		return;
	}
	if (flow_is_response_op(p.bth.opcode))
		soft_req_rx(qp, &p, pk->buf);
	else
		soft_resp_rx(qp, &p, pk->buf);
}

#define SHM_PERIOD_NS 10000000ull	/* publish counters every 10 ms */

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
	a->dev = d->ctr;
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
	int n;

	d->now_ns = soft_now_ns();
	do {
		n = d->link->ops->recv(d->link, d->rx, SOFT_BATCH);
		for (int i = 0; i < n; i++)
			dispatch(d, &d->rx[i]);
	} while (n == SOFT_BATCH);
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
