// SPDX-License-Identifier: MIT
/* The soft engine's ops table: objects, posting and polling. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "soft.h"

#define DEFAULT_MTU 1024	/* the RoCE MTU of a 1500-byte Ethernet link */
#define DEFAULT_TIMEOUT 14	/* 4.096 us * 2^14 = 67 ms, perftest's default */
#define DEFAULT_RETRY 7

static bool soft_available(void)
{
	return true;
}

static void *soft_open(const struct xport_dev_attr *a, char *err)
{
	struct soft_link *link = soft_udp_open(a->bind ? a->bind : "127.0.0.1",
					       a->udp_port ? a->udp_port : ROCEV2_UDP_PORT,
					       a->udp_port != 0, err);
	struct soft_dev *d;

	if (!link)
		return NULL;
	d = soft_dev_open(link, err);
	if (!d)
		link->ops->close(link);
	else
		d->dcqcn = xport_dcqcn_resolve(&a->dcqcn);
	return d;
}

static void soft_close(void *dev)
{
	soft_dev_close(dev);
}

static int soft_reg_mr(void *dev, struct xport_mr *mr, char *err)
{
	struct soft_dev *d = dev;

	for (uint32_t i = 0; i < SOFT_MAX_MRS; i++) {
		if (d->mrs[i].used)
			continue;
		uint32_t r;

		/* Random bits beside the index: a peer cannot guess a key, and
		 * a stale key (the slot's previous region) is refused. */
		if (xport_random(&r, sizeof(r), err) < 0)
			return -1;
		r &= ~SOFT_INDEX_MASK;
		if (!r)
			r = 1u << SOFT_INDEX_BITS;
		mr->lkey = mr->rkey = r | i;
		d->mrs[i].pub = *mr;
		d->mrs[i].used = true;
		return 0;
	}
	snprintf(err, XPORT_ERR_LEN, "too many memory regions (the soft engine allows %d)",
		 SOFT_MAX_MRS);
	return -1;
}

static void soft_dereg_mr(void *dev, struct xport_mr *mr)
{
	struct soft_mr *m = soft_mr_lookup(dev, mr->lkey);

	if (m)
		memset(m, 0, sizeof(*m));
}

static void *soft_create_cq(void *dev, int depth, char *err)
{
	struct soft_cq *cq = calloc(1, sizeof(*cq));

	if (cq)
		cq->ring = calloc((size_t)(depth > 0 ? depth : 1), sizeof(*cq->ring));
	if (!cq || !cq->ring) {
		free(cq);
		snprintf(err, XPORT_ERR_LEN, "out of memory for a CQ of %d entries", depth);
		return NULL;
	}
	cq->dev = dev;
	cq->depth = depth > 0 ? depth : 1;
	return cq;
}

static void soft_destroy_cq(void *cq)
{
	struct soft_cq *c = cq;

	if (c)
		free(c->ring);
	free(c);
}

static void *soft_create_qp(void *dev, void *scq, void *rcq, const struct xport_qp_attr *a,
			    char *err)
{
	struct soft_dev *d = dev;
	struct soft_qp *qp;
	int slot, port;

	for (slot = 0; slot < SOFT_MAX_QPS && d->qps[slot]; slot++)
		;
	if (slot == SOFT_MAX_QPS) {
		snprintf(err, XPORT_ERR_LEN, "too many QPs (the soft engine allows %d)",
			 SOFT_MAX_QPS);
		return NULL;
	}
	if (a->max_inline_data > SOFT_MAX_INLINE) {
		snprintf(err, XPORT_ERR_LEN, "an inline size of %u bytes exceeds the soft engine's "
			 "maximum of %d: lower -I/--inline_size", a->max_inline_data, SOFT_MAX_INLINE);
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto oom;
	qp->attr = *a;
	qp->sq_size = a->max_send_wr ? a->max_send_wr : 128;
	qp->rq_size = a->max_recv_wr ? a->max_recv_wr : 128;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->rq = calloc(qp->rq_size, sizeof(*qp->rq));
	if (a->max_inline_data)
		qp->inline_buf = malloc((size_t)qp->sq_size * a->max_inline_data);
	if (!qp->sq || !qp->rq || (a->max_inline_data && !qp->inline_buf))
		goto oom;
	if (!qp->attr.mtu)
		qp->attr.mtu = DEFAULT_MTU;
	/* Like an RNIC's active MTU: no larger than the interface carries. */
	if (d->link->max_mtu && qp->attr.mtu > d->link->max_mtu)
		qp->attr.mtu = d->link->max_mtu;
	if (!qp->attr.timeout)
		qp->attr.timeout = DEFAULT_TIMEOUT;
	if (!qp->attr.max_rd_atomic)
		qp->attr.max_rd_atomic = 16;
	if (!qp->attr.qkey)
		qp->attr.qkey = XPORT_DEFAULT_QKEY;
	/* What the responder advertises it can hold, with room beside the
	 * READs for the replies that wait behind them (soft_resp.c defer()). */
	if (qp->attr.max_rd_atomic > SOFT_READ_JOBS - 8)
		qp->attr.max_rd_atomic = SOFT_READ_JOBS - 8;
	qp->dev = d;
	qp->slot = slot;
	/* The QPN: random bits above the slot, never 0 or 1 (their high bits
	 * are never all zero) nor 0xFFFFFF (multicast); the first PSN random
	 * too, as RNICs pick it, so an off-path host cannot aim at the window. */
	{
		uint32_t r[2];

		if (xport_random(r, sizeof(r), err) < 0)
			goto fail;
		r[0] = (r[0] << SOFT_INDEX_BITS) & WIRE_PSN_MASK;
		if (!r[0])
			r[0] = 1u << SOFT_INDEX_BITS;
		qp->qpn = r[0] | (uint32_t)slot;
		if (qp->qpn == WIRE_PSN_MASK)
			qp->qpn ^= 1u << SOFT_INDEX_BITS;
		qp->next_psn = qp->una = (a->fixed_psn ? a->first_psn : r[1]) & WIRE_PSN_MASK;
	}
	qp->scq = scq;
	qp->rcq = rcq;
	port = d->link->ops->qp_open(d->link, slot, a->tos, err);
	if (port < 0)
		goto fail;
	qp->sport = (uint16_t)port;
	soft_dcqcn_init(&qp->cc, SOFT_LINE_GBPS, &d->dcqcn);
	d->qps[slot] = qp;
	if (slot + 1 > d->qp_slots)
		d->qp_slots = slot + 1;
	return qp;
oom:
	snprintf(err, XPORT_ERR_LEN, "out of memory for a QP");
fail:
	if (qp) {
		free(qp->sq);
		free(qp->rq);
		free(qp->inline_buf);
	}
	free(qp);
	return NULL;
}

static void soft_destroy_qp(void *qpv)
{
	struct soft_qp *qp = qpv;

	if (!qp)
		return;
	soft_tx_flush(qp->dev);
	qp->dev->link->ops->qp_close(qp->dev->link, qp->slot);
	qp->dev->qps[qp->slot] = NULL;
	free(qp->sq);
	free(qp->rq);
	free(qp->inline_buf);
	free(qp);
}

static void soft_qp_info(void *qpv, struct xport_qp_info *info)
{
	struct soft_qp *qp = qpv;

	memset(info, 0, sizeof(*info));
	info->qpn = qp->qpn;
	info->psn = qp->next_psn;
	memcpy(info->gid, qp->dev->link->local.ip, 16);
	info->udp_port = qp->dev->link->local.port;
	info->mtu = qp->attr.mtu;
	info->max_rd_atomic = qp->attr.max_rd_atomic;
}

static bool valid_mtu(uint32_t mtu)
{
	return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

static int soft_connect(void *qpv, const struct xport_qp_info *peer, char *err)
{
	struct soft_qp *qp = qpv;
	static const uint8_t v4mapped[12] = { [10] = 0xFF, [11] = 0xFF };

	if (!valid_mtu(peer->mtu) || !valid_mtu(qp->attr.mtu)) {
		snprintf(err, XPORT_ERR_LEN, "invalid MTU %u: expected 256, 512, 1024, 2048 or 4096",
			 valid_mtu(peer->mtu) ? qp->attr.mtu : peer->mtu);
		return -1;
	}
	memcpy(qp->peer.ip, peer->gid, 16);
	qp->peer.v6 = memcmp(peer->gid, v4mapped, 12) != 0;
	if (qp->peer.v6 != qp->dev->link->local.v6) {
		snprintf(err, XPORT_ERR_LEN, "the peer's address family differs from ours: bind "
			 "both sides to IPv4 or both to IPv6 addresses");
		return -1;
	}
	qp->peer.port = peer->udp_port ? peer->udp_port : ROCEV2_UDP_PORT;
	qp->peer_qpn = peer->qpn & WIRE_PSN_MASK;
	qp->pmtu = peer->mtu < qp->attr.mtu ? peer->mtu : qp->attr.mtu;
	qp->peer_max_rd_atomic = peer->max_rd_atomic ? peer->max_rd_atomic : 1;
	qp->epsn = peer->psn & WIRE_PSN_MASK;
	qp->retries_left = qp->attr.retry_cnt;
	qp->rnr_left = qp->attr.rnr_retry;
	soft_req_start(qp);
	qp->state = SOFT_QP_RTS;
	return 0;
}

/* Inline: the payload is copied now, into the WQE's own bytes, so the
 * caller may reuse its buffer at once and retransmissions resend the copy.
 * As with IBV_SEND_INLINE, the lkey is not used. */
static int post_inline(struct soft_qp *qp, const struct xport_send_wr *wr, char *err)
{
	uint32_t idx = (uint32_t)(qp->sq_tail % qp->sq_size);
	uint8_t *copy = qp->inline_buf + (size_t)idx * qp->attr.max_inline_data;
	struct soft_swqe *w = &qp->sq[idx];

	if (wr->opcode != XPORT_WR_SEND && wr->opcode != XPORT_WR_SEND_WITH_IMM &&
	    wr->opcode != XPORT_WR_RDMA_WRITE && wr->opcode != XPORT_WR_RDMA_WRITE_WITH_IMM) {
		snprintf(err, XPORT_ERR_LEN, "inline data is for SEND and WRITE work requests only");
		return -1;
	}
	if (wr->sge.length > qp->attr.max_inline_data) {
		snprintf(err, XPORT_ERR_LEN, "an inline payload of %u bytes exceeds the QP's "
			 "max_inline_data (%u)", wr->sge.length, qp->attr.max_inline_data);
		return -1;
	}
	memcpy(copy, (const void *)(uintptr_t)wr->sge.addr, wr->sge.length);
	memset(w, 0, sizeof(*w));
	w->wr = *wr;
	w->wr.sge.addr = (uint64_t)(uintptr_t)copy;
	qp->sq_tail++;
	return 0;
}

/* What each transport service can send (IBTA 9.2, Table 38). */
static bool transport_carries(enum xport_qp_type t, enum xport_wr_opcode op)
{
	bool send = op == XPORT_WR_SEND || op == XPORT_WR_SEND_WITH_IMM;
	bool write = op == XPORT_WR_RDMA_WRITE || op == XPORT_WR_RDMA_WRITE_WITH_IMM;

	return t == XPORT_QPT_UD ? send : t == XPORT_QPT_UC ? send || write : true;
}

static int post_one(struct soft_qp *qp, const struct xport_send_wr *wr, char *err)
{
	struct soft_swqe *w;

	if (qp->state != SOFT_QP_RTS) {
		snprintf(err, XPORT_ERR_LEN, "the QP is not connected or is in the error state");
		return -1;
	}
	if (qp->sq_tail - qp->sq_free == qp->sq_size) {
		snprintf(err, XPORT_ERR_LEN, "send queue full (%u work requests)", qp->sq_size);
		return -1;
	}
	/* IBTA messages are at most 2^31 bytes (DMA length); beyond, the
	 * packet count would not fit the PSN space either. */
	if (wr->sge.length > 1u << 31) {
		snprintf(err, XPORT_ERR_LEN, "a work request of %u bytes exceeds the 2 GiB an RDMA "
			 "message can carry", wr->sge.length);
		return -1;
	}
	/* PSN comparisons hold within half the 24-bit space: a message may
	 * take at most a quarter of it, so others can be outstanding too. */
	if (wr->sge.length / qp->pmtu >= 1u << 22) {
		snprintf(err, XPORT_ERR_LEN, "a work request of %u bytes is over 2^22 packets at "
			 "MTU %u: use a larger MTU or a smaller message", wr->sge.length, qp->pmtu);
		return -1;
	}
	if (!transport_carries(qp->attr.type, wr->opcode)) {
		snprintf(err, XPORT_ERR_LEN, "%s", qp->attr.type == XPORT_QPT_UD ?
			 "a UD QP posts SEND and SEND with immediate only" :
			 "a UC QP posts SEND and RDMA WRITE (with or without immediate) only");
		return -1;
	}
	if ((wr->opcode == XPORT_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == XPORT_WR_ATOMIC_FETCH_AND_ADD) && wr->sge.length != 8) {
		snprintf(err, XPORT_ERR_LEN, "atomic operations need an 8-byte local buffer");
		return -1;
	}
	if (wr->inline_data)
		return post_inline(qp, wr, err);
	if (wr->sge.length && !soft_mr_check(qp->dev, wr->sge.lkey, wr->sge.addr, wr->sge.length,
					     wr->opcode == XPORT_WR_RDMA_READ ||
					     wr->opcode >= XPORT_WR_ATOMIC_CMP_AND_SWP ?
					     XPORT_ACCESS_LOCAL_WRITE : 0)) {
		snprintf(err, XPORT_ERR_LEN, "the local buffer is outside its memory region or the "
			 "lkey is wrong");
		return -1;
	}
	w = &qp->sq[qp->sq_tail % qp->sq_size];
	memset(w, 0, sizeof(*w));
	w->wr = *wr;
	qp->sq_tail++;
	return 0;
}

static int soft_post_send(void *qpv, const struct xport_send_wr *wr, unsigned *posted, char *err)
{
	unsigned n = 0;
	int rc = 0;

	for (; wr && rc == 0; wr = wr->next) {
		rc = post_one(qpv, wr, err);
		n += rc == 0;
	}
	if (posted)
		*posted = n;
	return rc;
}

static int soft_post_recv(void *qpv, const struct xport_recv_wr *wr, char *err)
{
	struct soft_qp *qp = qpv;

	if (qp->state == SOFT_QP_ERROR) {
		snprintf(err, XPORT_ERR_LEN, "the QP is in the error state");
		return -1;
	}
	if (qp->rq_tail - qp->rq_head == qp->rq_size) {
		snprintf(err, XPORT_ERR_LEN, "receive queue full (%u work requests)", qp->rq_size);
		return -1;
	}
	if (wr->sge.length && !soft_mr_check(qp->dev, wr->sge.lkey, wr->sge.addr, wr->sge.length,
					     XPORT_ACCESS_LOCAL_WRITE)) {
		snprintf(err, XPORT_ERR_LEN, "the receive buffer is outside its memory region, the "
			 "lkey is wrong, or the region lacks local write access");
		return -1;
	}
	qp->rq[qp->rq_tail % qp->rq_size].wr = *wr;
	qp->rq_tail++;
	return 0;
}

static int soft_poll_cq(void *cqv, struct xport_wc *wc, int n)
{
	struct soft_cq *cq = cqv;
	int got = 0;

	if (!cq->count)
		soft_progress(cq->dev);
	while (got < n && cq->count) {
		const struct soft_cqe *e = &cq->ring[cq->head];
		struct soft_qp *qp = e->qp_slot >= 0 ? cq->dev->qps[e->qp_slot] : NULL;

		/* Polled: its slot, and those of the unsignaled WRs before it,
		 * may be posted over (unless the QP was destroyed since). */
		if (qp && qp->qpn == e->wc.qp_num &&
		    e->sq_free - qp->sq_free <= qp->sq_tail - qp->sq_free)
			qp->sq_free = e->sq_free;
		wc[got++] = e->wc;
		cq->head = (cq->head + 1) % cq->depth;
		cq->count--;
	}
	return cq->overflow && !got ? -1 : got;
}

/* Sleeps on the link until a packet arrives or the earliest timer of any
 * QP is due; returns at once when some QP can send or owes a response. */
static void soft_wait(void *dev, int timeout_us)
{
	struct soft_dev *d = dev;
	uint64_t now = soft_now_ns(), until = now + (uint64_t)timeout_us * 1000;

	if (!d->link->ops->wait)
		return;
	d->now_ns = now;
	for (int i = 0; i < d->qp_slots; i++) {
		struct soft_qp *qp = d->qps[i];
		uint64_t t;

		if (!qp || qp->state != SOFT_QP_RTS)
			continue;
		if (qp->ack_due || qp->reads_count)
			return;		/* the responder owes packets now */
		t = soft_req_next_event_ns(qp);
		if (t <= now)
			return;
		if (t < until)
			until = t;
	}
	d->link->ops->wait(d->link, until - now);
}

static void soft_dev_counters(void *dev, struct xport_counters *c)
{
	*c = *soft_dev_ctr(dev);
}

static void soft_qp_counters(void *qp, struct xport_counters *c)
{
	*c = ((struct soft_qp *)qp)->ctr;
}

const struct xport_engine_ops soft_engine_ops = {
	.name = "soft",
	.available = soft_available,
	.open = soft_open,
	.close = soft_close,
	.reg_mr = soft_reg_mr,
	.dereg_mr = soft_dereg_mr,
	.create_cq = soft_create_cq,
	.destroy_cq = soft_destroy_cq,
	.create_qp = soft_create_qp,
	.destroy_qp = soft_destroy_qp,
	.qp_info = soft_qp_info,
	.connect = soft_connect,
	.post_send = soft_post_send,
	.post_recv = soft_post_recv,
	.poll_cq = soft_poll_cq,
	.wait = soft_wait,
	.dev_counters = soft_dev_counters,
	.qp_counters = soft_qp_counters,
};
