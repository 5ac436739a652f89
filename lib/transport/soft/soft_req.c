// SPDX-License-Identifier: MIT
/*
 * The RC requester: segments work requests into packets by path MTU,
 * numbers them with 24-bit PSNs, and completes them as ACKs and responses
 * arrive.  Loss is repaired go-back-N: on NAK(PSN sequence error), on a
 * missing READ response, and on the local ACK timeout (4.096 us *
 * 2^timeout), within retry_cnt; RNR NAKs wait their timer within rnr_retry
 * (7 = forever).  Other NAKs fail the work request and the QP.
 *
 * Under us there is no lossless fabric, so loss is also a signal to slow
 * down (as TCP and IRN read it): a loss window (cwnd) bounds the packets
 * in flight, AIMD with slow start, and each timeout in a row doubles the
 * ACK timeout (up to 2^SOFT_TIMER_BACKOFF_MAX).  Without that, overload
 * collapses: go-back-N resends whole windows into the overflow that lost
 * them, or into receivers that are merely slow to run, until the retries
 * run out.  Both are sender-local; the wire stays as the IBTA has it.
 */
#include <string.h>

#include "soft.h"

static bool is_rd_atomic(enum xport_wr_opcode op)
{
	return op == XPORT_WR_RDMA_READ || op == XPORT_WR_ATOMIC_CMP_AND_SWP ||
	       op == XPORT_WR_ATOMIC_FETCH_AND_ADD;
}

static bool is_atomic(enum xport_wr_opcode op)
{
	return op == XPORT_WR_ATOMIC_CMP_AND_SWP || op == XPORT_WR_ATOMIC_FETCH_AND_ADD;
}

static bool reliable(const struct soft_qp *qp)
{
	return qp->attr.type == XPORT_QPT_RC;
}

static uint32_t packets_for(const struct soft_qp *qp, const struct xport_send_wr *wr)
{
	/* A UD message over the path MTU goes nowhere and succeeds (IBTA
	 * C10-93.1.1; rxe completes it too). */
	if (qp->attr.type == XPORT_QPT_UD)
		return wr->sge.length <= qp->pmtu;
	if (is_atomic(wr->opcode) || !wr->sge.length)
		return 1;
	return (wr->sge.length + qp->pmtu - 1) / qp->pmtu;
}

/* The local ACK timeout, doubled for each timeout in a row; with no ACK
 * timer (IBTA timeout 0), a deadline that never comes (no overflow: now
 * is below 2^63). */
static uint64_t timeout_ns(const struct soft_qp *qp)
{
	if (qp->attr.no_ack_timer)
		return UINT64_MAX / 2;
	return 4096ull << qp->attr.timeout << qp->timer_backoff;
}

uint32_t soft_cwnd_max(uint32_t pmtu)
{
	uint32_t pkts = SOFT_WINDOW_BYTES / pmtu;

	return pkts < SOFT_WINDOW_PKTS ? pkts : SOFT_WINDOW_PKTS;
}

void soft_req_start(struct soft_qp *qp)
{
	qp->cwnd_max = soft_cwnd_max(qp->pmtu);
	qp->cwnd = SOFT_CWND_INIT;
	qp->ssthresh = qp->cwnd_max;
	qp->cwnd_acked = 0;
	qp->recovering = false;
	qp->timer_backoff = 0;
}

/* One past the highest PSN sent (next_psn runs ahead: it covers a whole
 * message once its first packet is assigned). */
static uint32_t sent_end(const struct soft_qp *qp)
{
	return qp->sent_any ? (qp->max_sent_psn + 1) & WIRE_PSN_MASK : qp->una;
}

/* npkts more packets acknowledged: the window grows. */
static void cwnd_grow(struct soft_qp *qp, uint32_t npkts)
{
	if (qp->recovering && wire_psn_diff(qp->una, qp->recover_psn) >= 0)
		qp->recovering = false;
	if (qp->cwnd < qp->ssthresh) {
		qp->cwnd += npkts;		/* slow start: doubles per round trip */
	} else {
		qp->cwnd_acked += npkts;	/* congestion avoidance: +1 per window */
		while (qp->cwnd_acked >= qp->cwnd) {
			qp->cwnd_acked -= qp->cwnd;
			qp->cwnd++;
		}
	}
	if (qp->cwnd > qp->cwnd_max)
		qp->cwnd = qp->cwnd_max;
}

/* A loss (a sequence NAK, a missing READ response) halves the window; a
 * timeout, with nothing back for a whole timeout, cuts it to the minimum
 * and doubles the next timeout.  Either way the threshold becomes half the
 * window, and what is in flight now belongs to the same event: a later
 * loss in it does not cut again. */
static void cwnd_cut(struct soft_qp *qp, bool timeout)
{
	uint32_t half = qp->cwnd / 2;

	if (qp->recovering && !timeout)
		return;
	qp->ssthresh = half > SOFT_CWND_MIN ? half : SOFT_CWND_MIN;
	qp->cwnd = timeout ? SOFT_CWND_MIN : qp->ssthresh;
	qp->cwnd_acked = 0;
	qp->recover_psn = sent_end(qp);
	qp->recovering = true;
	if (timeout && qp->timer_backoff < SOFT_TIMER_BACKOFF_MAX)
		qp->timer_backoff++;
}

/* The oldest unacknowledged PSN moved forward to una. */
static void advance_una(struct soft_qp *qp, uint32_t una)
{
	int32_t d = wire_psn_diff(una, qp->una);

	if (d <= 0)
		return;
	qp->una = una;
	cwnd_grow(qp, (uint32_t)d);
}

/* How often a request asks for an ACK: every SOFT_ACK_EVERY packets, and at
 * least twice per window, so that a small window is never left waiting for
 * the timeout (a power of two, for the PSN test). */
static uint32_t ack_every(const struct soft_qp *qp)
{
	uint32_t n = SOFT_ACK_EVERY;

	while (n > 1 && n > qp->cwnd / 2)
		n /= 2;
	return n;
}

static enum xport_wc_opcode wc_opcode(enum xport_wr_opcode op)
{
	switch (op) {
	case XPORT_WR_RDMA_WRITE:
	case XPORT_WR_RDMA_WRITE_WITH_IMM: return XPORT_WC_RDMA_WRITE;
	case XPORT_WR_RDMA_READ: return XPORT_WC_RDMA_READ;
	case XPORT_WR_ATOMIC_CMP_AND_SWP: return XPORT_WC_COMP_SWAP;
	case XPORT_WR_ATOMIC_FETCH_AND_ADD: return XPORT_WC_FETCH_ADD;
	default: return XPORT_WC_SEND;
	}
}

static struct soft_swqe *wqe(struct soft_qp *qp, uint64_t i)
{
	return &qp->sq[i % qp->sq_size];
}

/* Retires finished work requests in order, completing the signaled ones. */
static void complete_in_order(struct soft_qp *qp)
{
	while (qp->sq_head != qp->sq_tail && wqe(qp, qp->sq_head)->done) {
		struct soft_swqe *w = wqe(qp, qp->sq_head);

		if (w->wr.signaled || w->status != XPORT_WC_SUCCESS) {
			struct xport_wc wc = {
				.wr_id = w->wr.wr_id, .status = w->status,
				.opcode = wc_opcode(w->wr.opcode), .byte_len = w->wr.sge.length,
				.qp_num = qp->qpn,
			};

			soft_cq_push_send(qp, &wc, qp->sq_head);
		}
		if (qp->sq_cur == qp->sq_head) {
			qp->sq_cur++;
			qp->cur_pkt = 0;
		}
		qp->sq_head++;
	}
}

void soft_req_flush(struct soft_qp *qp, enum xport_wc_status first_status)
{
	enum xport_wc_status st = first_status;

	qp->state = SOFT_QP_ERROR;
	for (uint64_t i = qp->sq_head; i != qp->sq_tail; i++) {
		struct soft_swqe *w = wqe(qp, i);

		if (w->done)
			continue;
		w->done = true;
		w->status = st;
		st = XPORT_WC_WR_FLUSH_ERR;
	}
	complete_in_order(qp);
	while (qp->rq_head != qp->rq_tail) {
		struct xport_wc wc = { .wr_id = qp->rq[qp->rq_head % qp->rq_size].wr.wr_id,
				       .status = XPORT_WC_WR_FLUSH_ERR, .opcode = XPORT_WC_RECV,
				       .qp_num = qp->qpn };

		soft_cq_push(qp->rcq, &wc);
		qp->rq_head++;
	}
	qp->deadline_ns = 0;
}

/* Restarts transmission at PSN psn (go-back-N). */
static void go_back(struct soft_qp *qp, uint32_t psn)
{
	for (uint64_t i = qp->sq_head; i != qp->sq_tail; i++) {
		struct soft_swqe *w = wqe(qp, i);

		if (!w->assigned)
			break;
		if (w->done || wire_psn_diff(psn, w->first_psn) < 0 ||
		    wire_psn_diff(psn, w->first_psn + w->npkts) >= 0)
			continue;
		qp->sq_cur = i;
		/* READs resume from the first missing response packet, which the
		 * request itself encodes; atomics are one packet. */
		qp->cur_pkt = is_rd_atomic(w->wr.opcode) ? 0 : (uint32_t)wire_psn_diff(psn, w->first_psn);
		return;
	}
}

static bool outstanding(struct soft_qp *qp)
{
	return qp->sq_head != qp->sq_tail && wqe(qp, qp->sq_head)->assigned;
}

static void progress_made(struct soft_qp *qp)
{
	qp->retries_left = qp->attr.retry_cnt;
	qp->rnr_left = qp->attr.rnr_retry;
	qp->read_resent = false;
	qp->timer_backoff = 0;
	qp->deadline_ns = outstanding(qp) ? qp->dev->now_ns + timeout_ns(qp) : 0;
}

/*
 * An ACK (or response) at psn acknowledges every SEND/WRITE up to psn.  A
 * READ or atomic in that range is done only when its own response came:
 * if the ACK passed it, that response was lost, so it is asked for again,
 * and nothing after it counts as acknowledged yet.
 */
static void ack_upto(struct soft_qp *qp, uint32_t psn)
{
	uint32_t una = (psn + 1) & WIRE_PSN_MASK;
	bool advanced = false;

	for (uint64_t i = qp->sq_head; i != qp->sq_tail; i++) {
		struct soft_swqe *w = wqe(qp, i);

		if (!w->assigned || wire_psn_diff(w->first_psn + w->npkts - 1, psn) > 0)
			break;
		if (w->done)
			continue;
		if (is_rd_atomic(w->wr.opcode)) {
			una = (w->first_psn + w->resp_pkts) & WIRE_PSN_MASK;
			if (!qp->read_resent) {
				/* Its response is out of sequence: counted as a
				 * READ response that skipped ahead is. */
				SOFT_COUNT(qp, out_of_sequence);
				qp->read_resent = true;
				go_back(qp, una);
			}
			break;
		}
		w->done = true;
		advanced = true;
	}
	if (wire_psn_diff(una, qp->una) > 0) {
		advance_una(qp, una);
		advanced = true;
	}
	complete_in_order(qp);
	if (advanced)
		progress_made(qp);
}

/*
 * This side cannot go on with WQE w (its local region is gone): w fails
 * with st and the QP with it.  Nothing is acknowledged by it: earlier
 * WQEs the responder has not ACKed are flushed, not taken for done.
 */
static void fail_local(struct soft_qp *qp, struct soft_swqe *w, enum xport_wc_status st)
{
	for (uint64_t i = qp->sq_head; i != qp->sq_tail; i++) {
		struct soft_swqe *x = wqe(qp, i);

		if (x->done)
			continue;
		x->done = true;
		x->status = x == w ? st : XPORT_WC_WR_FLUSH_ERR;
	}
	soft_req_flush(qp, XPORT_WC_WR_FLUSH_ERR);
}

static void fail_at(struct soft_qp *qp, uint32_t psn, enum xport_wc_status st)
{
	ack_upto(qp, psn - 1);
	soft_req_flush(qp, st);
}

static void on_aeth(struct soft_qp *qp, const struct wire_pkt *p)
{
	uint8_t syn = p->aeth.syndrome, v = wire_aeth_value(syn);
	uint32_t psn = p->bth.psn;

	switch (wire_aeth_kind(syn)) {
	case WIRE_AETH_ACK:
		ack_upto(qp, psn);
		return;
	case WIRE_AETH_RNR_NAK:
		SOFT_COUNT(qp, rnr_naks_rx);
		ack_upto(qp, psn - 1);
		if (qp->attr.rnr_retry != 7 && qp->rnr_left-- <= 0) {
			soft_req_flush(qp, XPORT_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->rnr_until_ns = qp->dev->now_ns + (uint64_t)wire_rnr_timer_us(v) * 1000;
		go_back(qp, psn);
		return;
	case WIRE_AETH_NAK:
		SOFT_COUNT(qp, naks_rx);
		if (v == WIRE_NAK_PSN_SEQ_ERR) {
			SOFT_COUNT(qp, seq_naks_rx);
			ack_upto(qp, psn - 1);
			cwnd_cut(qp, false);
			go_back(qp, psn);
			return;
		}
		fail_at(qp, psn, v == WIRE_NAK_REMOTE_ACCESS_ERR ? XPORT_WC_REM_ACCESS_ERR :
				 v == WIRE_NAK_INVALID_REQ ? XPORT_WC_REM_INV_REQ_ERR :
				 XPORT_WC_REM_OP_ERR);
		return;
	default:
		qp->dev->ctr.drops++;
	}
}

/* Whether a READ response opcode ends a response message. */
static bool read_resp_ends(uint8_t op)
{
	return op == OP_RC_READ_RESPONSE_LAST || op == OP_RC_READ_RESPONSE_ONLY;
}

static void on_read_response(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf)
{
	struct soft_swqe *w;
	uint32_t expect, off, want_len;

	if (p->ext & WIRE_X_AETH)
		ack_upto(qp, p->bth.psn - 1);
	if (qp->state != SOFT_QP_RTS || qp->sq_head == qp->sq_tail)
		return;
	w = wqe(qp, qp->sq_head);
	if (!w->assigned || w->done || w->wr.opcode != XPORT_WR_RDMA_READ) {
		SOFT_COUNT(qp, duplicates);
		return;
	}
	expect = (w->first_psn + w->resp_pkts) & WIRE_PSN_MASK;
	if (p->bth.psn != expect) {
		if (wire_psn_diff(p->bth.psn, expect) > 0 && !qp->read_resent) {
			/* A response packet went missing: re-request from it. */
			SOFT_COUNT(qp, out_of_sequence);
			qp->read_resent = true;
			cwnd_cut(qp, false);
			go_back(qp, expect);
		} else {
			SOFT_COUNT(qp, duplicates);
		}
		return;
	}
	off = w->resp_pkts * qp->pmtu;
	want_len = w->wr.sge.length - off < qp->pmtu ? w->wr.sge.length - off : qp->pmtu;
	/* Only the last packet may end the response.  FIRST or MIDDLE are both
	 * right at a re-requested position: the new response starts with
	 * FIRST, while the tail of the first one, still in flight, says
	 * MIDDLE for the very same PSN and bytes. */
	if (read_resp_ends(p->bth.opcode) != (w->resp_pkts == w->npkts - 1) ||
	    p->payload_len != want_len) {
		fail_at(qp, p->bth.psn, XPORT_WC_BAD_RESP_ERR);
		return;
	}
	/* The local region is checked at every packet, as the responder
	 * checks its own: once deregistered, nothing lands in it. */
	if (want_len && !soft_mr_check(qp->dev, w->wr.sge.lkey, w->wr.sge.addr + off, want_len,
				       XPORT_ACCESS_LOCAL_WRITE)) {
		fail_at(qp, p->bth.psn, XPORT_WC_LOC_PROT_ERR);
		return;
	}
	if (want_len)
		memcpy((uint8_t *)(uintptr_t)w->wr.sge.addr + off, buf + p->payload_off, want_len);
	w->resp_pkts++;
	advance_una(qp, (p->bth.psn + 1) & WIRE_PSN_MASK);
	if (w->resp_pkts == w->npkts) {
		w->done = true;
		qp->rd_atomic_out--;
		complete_in_order(qp);
	}
	progress_made(qp);
}

static void on_atomic_ack(struct soft_qp *qp, const struct wire_pkt *p)
{
	struct soft_swqe *w;

	ack_upto(qp, p->bth.psn - 1);
	if (qp->state != SOFT_QP_RTS || qp->sq_head == qp->sq_tail)
		return;
	w = wqe(qp, qp->sq_head);
	if (!w->assigned || w->done || !is_atomic(w->wr.opcode) || w->first_psn != p->bth.psn) {
		SOFT_COUNT(qp, duplicates);
		return;
	}
	if (!soft_mr_check(qp->dev, w->wr.sge.lkey, w->wr.sge.addr, 8, XPORT_ACCESS_LOCAL_WRITE)) {
		fail_at(qp, p->bth.psn, XPORT_WC_LOC_PROT_ERR);
		return;
	}
	memcpy((void *)(uintptr_t)w->wr.sge.addr, &p->atomicacketh.orig, 8);
	w->done = true;
	qp->rd_atomic_out--;
	advance_una(qp, (p->bth.psn + 1) & WIRE_PSN_MASK);
	complete_in_order(qp);
	progress_made(qp);
}

void soft_req_rx(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf)
{
	if (qp->state != SOFT_QP_RTS)
		return;
	/* A response for a PSN never sent is forged or stale: ignore it.  So
	 * is a NAK for a PSN already acknowledged (rxe ignores it too): acting
	 * on it would fail or stall work that is done. */
	if (wire_psn_diff(p->bth.psn, qp->next_psn) >= 0 ||
	    ((p->ext & WIRE_X_AETH) && wire_aeth_kind(p->aeth.syndrome) != WIRE_AETH_ACK &&
	     wire_psn_diff(p->bth.psn, qp->una) < 0)) {
		qp->dev->ctr.drops++;
		return;
	}
	switch (p->bth.opcode) {
	case OP_RC_ACK:
		on_aeth(qp, p);
		break;
	case OP_RC_ATOMIC_ACK:
		if (wire_aeth_kind(p->aeth.syndrome) != WIRE_AETH_ACK)
			on_aeth(qp, p);
		else
			on_atomic_ack(qp, p);
		break;
	default:
		if ((p->ext & WIRE_X_AETH) && wire_aeth_kind(p->aeth.syndrome) != WIRE_AETH_ACK)
			on_aeth(qp, p);
		else
			on_read_response(qp, p, buf);
		break;
	}
}

/* Bytes of this QP the host has not put on the wire yet. */
static uint32_t host_backlog(struct soft_qp *qp)
{
	struct soft_link *l = qp->dev->link;

	return l->ops->qp_backlog ? l->ops->qp_backlog(l, qp->slot) : 0;
}

void soft_req_timers(struct soft_qp *qp)
{
	uint64_t now = qp->dev->now_ns;

	if (qp->state != SOFT_QP_RTS || !qp->deadline_ns || now < qp->deadline_ns)
		return;
	if (!outstanding(qp)) {
		qp->deadline_ns = 0;
		return;
	}
	/* The timer runs from when a packet goes on the wire, as on an RNIC:
	 * while the host still queues ours, the ACK cannot be late yet. */
	if (host_backlog(qp)) {
		qp->deadline_ns = now + timeout_ns(qp);
		return;
	}
	SOFT_COUNT(qp, timeouts);
	if (qp->retries_left-- <= 0) {
		soft_req_flush(qp, XPORT_WC_RETRY_EXC_ERR);
		return;
	}
	cwnd_cut(qp, true);
	go_back(qp, qp->una);
	qp->deadline_ns = now + timeout_ns(qp);
}

/* The opcode of packet i of n of a SEND or WRITE. */
static uint8_t req_opcode(enum xport_wr_opcode op, uint32_t i, uint32_t n)
{
	bool write = op == XPORT_WR_RDMA_WRITE || op == XPORT_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == XPORT_WR_SEND_WITH_IMM || op == XPORT_WR_RDMA_WRITE_WITH_IMM;
	uint8_t first = write ? OP_RC_WRITE_FIRST : OP_RC_SEND_FIRST;

	if (n == 1)
		return (uint8_t)(first + 4 + (imm ? 1 : 0));	/* ONLY(_IMM) */
	if (i == 0)
		return first;
	if (i < n - 1)
		return (uint8_t)(first + 1);
	return (uint8_t)(first + 2 + (imm ? 1 : 0));	/* LAST(_IMM) */
}

/* An RC opcode as the QP's transport spells it: UC's are RC's plus 0x20
 * (the same layouts); UD has SEND Only (with immediate) alone. */
static uint8_t on_transport(const struct soft_qp *qp, uint8_t rc_op)
{
	switch (qp->attr.type) {
	case XPORT_QPT_UC:
		return (uint8_t)(rc_op | 0x20);
	case XPORT_QPT_UD:
		return rc_op == OP_RC_SEND_ONLY_IMM ? OP_UD_SEND_ONLY_IMM : OP_UD_SEND_ONLY;
	default:
		return rc_op;
	}
}

/* Builds and queues packet cur_pkt of WQE w. */
static void send_packet(struct soft_qp *qp, struct soft_swqe *w)
{
	struct soft_pkt *slot = soft_tx_slot(qp->dev);
	uint32_t i = qp->cur_pkt, psn = (w->first_psn + i) & WIRE_PSN_MASK;
	const struct xport_send_wr *wr = &w->wr;
	struct wire_pkt p;
	const uint8_t *data = NULL;
	uint32_t len = 0;
	bool bth_only = false;

	if (wr->opcode == XPORT_WR_RDMA_READ) {
		uint32_t off = w->resp_pkts * qp->pmtu;

		psn = (w->first_psn + w->resp_pkts) & WIRE_PSN_MASK;
		soft_bth(qp, &p, OP_RC_READ_REQUEST, psn);
		p.reth.va = wr->remote_addr + off;
		p.reth.rkey = wr->rkey;
		p.reth.dmalen = wr->sge.length - off;
	} else if (is_atomic(wr->opcode)) {
		soft_bth(qp, &p, wr->opcode == XPORT_WR_ATOMIC_CMP_AND_SWP ? OP_RC_CMP_SWAP :
			 OP_RC_FETCH_ADD, psn);
		p.atomiceth.va = wr->remote_addr;
		p.atomiceth.rkey = wr->rkey;
		p.atomiceth.swap_add = wr->opcode == XPORT_WR_ATOMIC_CMP_AND_SWP ? wr->swap :
				       wr->compare_add;
		p.atomiceth.compare = wr->compare_add;
	} else {
		uint32_t off = i * qp->pmtu;

		len = wr->sge.length - off < qp->pmtu ? wr->sge.length - off : qp->pmtu;
		data = (const uint8_t *)(uintptr_t)wr->sge.addr + off;
		/* Inline data was copied at post; anything else is read from the
		 * region now, so it must still be registered. */
		if (len && !wr->inline_data &&
		    !soft_mr_check(qp->dev, wr->sge.lkey, wr->sge.addr + off, len, 0)) {
			fail_local(qp, w, XPORT_WC_LOC_PROT_ERR);
			return;
		}
		uint8_t op = on_transport(qp, req_opcode(wr->opcode, i, w->npkts));
		const struct wire_opcode_info *oi = wire_opcode_info(op);

		bth_only = oi && !oi->ext;	/* undefined: the encoder refuses it */
		if (bth_only) {
			soft_bth_set(&p.bth, qp, op, psn);
		} else {
			soft_bth(qp, &p, op, psn);
			p.reth.va = wr->remote_addr;
			p.reth.rkey = wr->rkey;
			p.reth.dmalen = wr->sge.length;
			p.immdt = wr->imm;
			p.deth.qkey = qp->attr.qkey;
			p.deth.srcqp = qp->qpn;
		}
		p.bth.se = i == w->npkts - 1 && (wr->opcode == XPORT_WR_SEND ||
						 wr->opcode == XPORT_WR_SEND_WITH_IMM);
		p.bth.ackreq = reliable(qp) &&
			       (i == w->npkts - 1 || (psn & (ack_every(qp) - 1)) == 0);
	}
	if (wire_psn_diff(psn, qp->max_sent_psn) <= 0 && qp->sent_any) {
		SOFT_COUNT(qp, retransmits);
	} else {
		qp->max_sent_psn = psn;
		qp->sent_any = true;
	}
	if (bth_only)
		soft_tx_commit_bth(qp, slot, &p.bth, data, len, WIRE_ECT0);
	else
		soft_tx_commit(qp, slot, &p, data, len, WIRE_ECT0);
	soft_dcqcn_sent(&qp->cc, len + WIRE_BTH_LEN + WIRE_ICRC_LEN);
	if (!qp->deadline_ns && reliable(qp))
		qp->deadline_ns = qp->dev->now_ns + timeout_ns(qp);
}

/* UC and UD: a message is done once its last packet is handed to the host
 * (nothing will be resent); the window does not apply, nothing is in
 * flight for it (una follows next_psn). */
static void sent_unreliable(struct soft_qp *qp, struct soft_swqe *w)
{
	qp->una = qp->next_psn;
	if (qp->cur_pkt < w->npkts)
		return;
	w->done = true;
	w->status = XPORT_WC_SUCCESS;
	qp->sq_cur++;
	qp->cur_pkt = 0;
	complete_in_order(qp);
}

void soft_req_transmit(struct soft_qp *qp)
{
	int budget = SOFT_BATCH;
	struct soft_swqe *w = NULL;
	uint64_t w_at = 0;

	if (qp->state != SOFT_QP_RTS)
		return;
	if (qp->rnr_until_ns) {
		if (qp->dev->now_ns < qp->rnr_until_ns)
			return;
		qp->rnr_until_ns = 0;
	}
	/* A slow link behind a deep host queue: stop feeding it while it holds
	 * more than SOFT_HOST_BACKLOG of ours, so what is queued goes out well
	 * within the ACK timeout.  Asked only with much in flight, and not on
	 * every turn: it is a syscall, and on a fast link a third of them. */
	if (qp->sq_cur == qp->sq_tail ||
	    (reliable(qp) && wire_psn_diff(qp->next_psn, qp->una) <= SOFT_BACKLOG_CHECK_PKTS)) {
		qp->backlogged = false;
	} else if (qp->dev->now_ns - qp->backlog_asked_ns >= SOFT_BACKLOG_CHECK_NS) {
		qp->backlog_asked_ns = qp->dev->now_ns;
		qp->backlogged = host_backlog(qp) > SOFT_HOST_BACKLOG;
	}
	if (qp->backlogged)
		return;
	while (budget > 0 && qp->sq_cur != qp->sq_tail) {
		/* Looked up once per WQE, not per packet (a 64-bit division). */
		if (!w || w_at != qp->sq_cur) {
			w = wqe(qp, qp->sq_cur);
			w_at = qp->sq_cur;
		}

		if (w->done) {
			qp->sq_cur++;
			qp->cur_pkt = 0;
			continue;
		}
		if (!w->assigned) {
			uint32_t n = packets_for(qp, &w->wr);

			if (is_rd_atomic(w->wr.opcode)) {
				if (qp->rd_atomic_out >= qp->peer_max_rd_atomic)
					break;
				qp->rd_atomic_out++;
			}
			w->first_psn = qp->next_psn;
			w->npkts = n;
			w->assigned = true;
			qp->next_psn = (qp->next_psn + n) & WIRE_PSN_MASK;
		}
		if (!reliable(qp)) {
			if (!soft_dcqcn_may_send(&qp->cc, qp->dev->now_ns, qp->pmtu))
				break;
			if (qp->cur_pkt < w->npkts) {
				send_packet(qp, w);
				if (qp->state != SOFT_QP_RTS)
					break;
				qp->cur_pkt++;
				budget--;
			}
			sent_unreliable(qp, w);
			continue;
		}
		/* At most cwnd packets in flight, counted per packet so that a
		 * message larger than the window still goes out. */
		if (wire_psn_diff(w->first_psn + (is_rd_atomic(w->wr.opcode) ? w->resp_pkts :
						  qp->cur_pkt), qp->una) >= (int32_t)qp->cwnd)
			break;
		/* DCQCN paces the data this side sends. */
		if (!soft_dcqcn_may_send(&qp->cc, qp->dev->now_ns, qp->pmtu))
			break;
		send_packet(qp, w);
		if (qp->state != SOFT_QP_RTS)	/* its local region was gone */
			break;
		budget--;
		if (is_rd_atomic(w->wr.opcode) || ++qp->cur_pkt >= w->npkts) {
			qp->sq_cur++;
			qp->cur_pkt = 0;
		}
	}
}

/*
 * When this QP's requester next has something to do without a packet
 * arriving: 0 (now), an absolute time (an RNR wait, the pacer, the ACK
 * timeout), or UINT64_MAX (only an incoming packet can move it).
 */
uint64_t soft_req_next_event_ns(struct soft_qp *qp)
{
	uint64_t next = qp->deadline_ns ? qp->deadline_ns : UINT64_MAX;

	if (qp->state != SOFT_QP_RTS || qp->sq_cur == qp->sq_tail)
		return next;
	if (qp->backlogged)	/* the host drains it: look again soon */
		return qp->dev->now_ns + 1000000 < next ? qp->dev->now_ns + 1000000 : next;
	if (qp->rnr_until_ns)
		return qp->rnr_until_ns < next ? qp->rnr_until_ns : next;
	{
		struct soft_swqe *w = wqe(qp, qp->sq_cur);
		uint32_t psn = w->assigned ? w->first_psn + (is_rd_atomic(w->wr.opcode) ?
							     w->resp_pkts : qp->cur_pkt) : qp->next_psn;

		if (!w->assigned && is_rd_atomic(w->wr.opcode) &&
		    qp->rd_atomic_out >= qp->peer_max_rd_atomic)
			return next;		/* a response frees a slot */
		if (wire_psn_diff(psn, qp->una) >= (int32_t)qp->cwnd)
			return next;		/* an ACK opens the window */
	}
	if (qp->cc.limited && qp->cc.rc_gbps > 0 && qp->cc.tokens < (double)qp->pmtu) {
		/* Gb/s = bits per ns: the pacer has a packet's worth then. */
		uint64_t t = qp->dev->now_ns +
			     (uint64_t)(((double)qp->pmtu - qp->cc.tokens) * 8 / qp->cc.rc_gbps) + 1;

		return t < next ? t : next;
	}
	return 0;
}
