// SPDX-License-Identifier: MIT
/*
 * The RC responder: executes requests in PSN order and answers them.
 *   - a PSN ahead of the expected one: one NAK(PSN sequence error) per
 *     episode, the packet dropped;
 *   - a PSN behind it: a duplicate.  SEND/WRITE are re-ACKed without
 *     touching a RECV; a READ is executed again from its own PSN and RETH
 *     (checked like a new one); an atomic returns its saved original value
 *     (it never runs twice); a duplicate READ or atomic older than the
 *     saved state, or a replayed READ that fails its checks, is dropped
 *     (a class D error, as rxe does).
 * Every RETH/AtomicETH is checked against the MR's rkey, bounds and access
 * before a byte is touched; a violation is answered with NAK(remote access
 * error) and moves the QP to the error state, as RNICs do.  Lengths the
 * spec rules out (payload over the MTU, FIRST/MIDDLE not a full MTU, a
 * DMA length over 2^31) get NAK(invalid request), as in rxe.
 */
#include <string.h>

#include "soft.h"

#define MAX_MESSAGE (1u << 31)	/* IBTA: the longest message, in bytes */

static bool is_send(uint8_t op)
{
	return op <= OP_RC_SEND_ONLY_IMM || op == OP_RC_SEND_LAST_INV || op == OP_RC_SEND_ONLY_INV;
}

static bool is_write(uint8_t op)
{
	return op >= OP_RC_WRITE_FIRST && op <= OP_RC_WRITE_ONLY_IMM;
}

static bool starts_message(uint8_t op)
{
	return op == OP_RC_SEND_FIRST || op == OP_RC_SEND_ONLY || op == OP_RC_SEND_ONLY_IMM ||
	       op == OP_RC_SEND_ONLY_INV || op == OP_RC_WRITE_FIRST || op == OP_RC_WRITE_ONLY ||
	       op == OP_RC_WRITE_ONLY_IMM;
}

static bool ends_message(uint8_t op)
{
	return op != OP_RC_SEND_FIRST && op != OP_RC_SEND_MIDDLE && op != OP_RC_WRITE_FIRST &&
	       op != OP_RC_WRITE_MIDDLE;
}

static bool has_imm(uint8_t op)
{
	return op == OP_RC_SEND_LAST_IMM || op == OP_RC_SEND_ONLY_IMM ||
	       op == OP_RC_WRITE_LAST_IMM || op == OP_RC_WRITE_ONLY_IMM;
}

static void send_ack_msn(struct soft_qp *qp, uint8_t syndrome, uint32_t psn, uint32_t msn)
{
	struct soft_pkt *slot = soft_tx_slot(qp->dev);
	struct wire_pkt p;

	soft_bth(qp, &p, OP_RC_ACK, psn);
	p.aeth.syndrome = syndrome;
	p.aeth.msn = msn & WIRE_PSN_MASK;
	soft_tx_commit(qp, slot, &p, NULL, 0, WIRE_NOT_ECT);
	if (wire_aeth_kind(syndrome) == WIRE_AETH_NAK) {
		SOFT_COUNT(qp, naks_tx);
		if (wire_aeth_value(syndrome) == WIRE_NAK_PSN_SEQ_ERR)
			SOFT_COUNT(qp, seq_naks_tx);
	} else if (wire_aeth_kind(syndrome) == WIRE_AETH_RNR_NAK) {
		SOFT_COUNT(qp, rnr_naks_tx);
	}
}

void soft_send_ack(struct soft_qp *qp, uint8_t syndrome, uint32_t psn)
{
	send_ack_msn(qp, syndrome, psn, qp->msn);
}

/* Queues a job behind the READ responses already queued (PSN order). */
static bool defer(struct soft_qp *qp, struct soft_read_job job)
{
	if (!qp->reads_count || qp->reads_count == SOFT_READ_JOBS)
		return false;		/* nothing to wait for (or no room): now */
	qp->reads[(qp->reads_head + qp->reads_count++) % SOFT_READ_JOBS] = job;
	return true;
}

/* An ACK or NAK (not fatal) at psn, after any READ responses before it. */
static void respond(struct soft_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct soft_read_job j = { .kind = SOFT_JOB_ACK, .syndrome = syndrome, .psn = psn,
				   .msn = qp->msn };

	if (!defer(qp, j))
		soft_send_ack(qp, syndrome, psn);
}

static uint8_t ack_syndrome(void)
{
	/* Credit code 31: this responder does no end-to-end flow control. */
	return wire_aeth_make(WIRE_AETH_ACK, WIRE_AETH_CREDITS_INVALID);
}

/* A fatal request: NAK it (at its own PSN) and stop the responder. */
static void nak_fatal_at(struct soft_qp *qp, uint8_t code, uint32_t psn)
{
	soft_send_ack(qp, wire_aeth_make(WIRE_AETH_NAK, code), psn);
	soft_req_flush(qp, XPORT_WC_WR_FLUSH_ERR);
}

static void nak_fatal(struct soft_qp *qp, uint8_t code)
{
	nak_fatal_at(qp, code, qp->epsn);
}

static struct soft_rwqe *rq_head(struct soft_qp *qp)
{
	return qp->rq_head == qp->rq_tail ? NULL : &qp->rq[qp->rq_head % qp->rq_size];
}

static void complete_recv(struct soft_qp *qp, enum xport_wc_opcode op, uint32_t len,
			  bool imm, uint32_t imm_data, enum xport_wc_status st)
{
	struct soft_rwqe *r = rq_head(qp);
	struct xport_wc wc = { .wr_id = r->wr.wr_id, .status = st, .opcode = op, .byte_len = len,
			       .imm = imm_data, .has_imm = imm, .qp_num = qp->qpn };

	soft_cq_push(qp->rcq, &wc);
	qp->rq_head++;
}

/* SEND packets: payload into the RECV at the head of the receive queue. */
static bool do_send(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf)
{
	uint8_t op = p->bth.opcode;
	struct soft_rwqe *r = rq_head(qp);

	if (!r) {
		/* Nothing posted: RNR NAK; the requester retries after the timer. */
		respond(qp, wire_aeth_make(WIRE_AETH_RNR_NAK, qp->attr.min_rnr_timer),
			      p->bth.psn);
		return false;
	}
	if (starts_message(op))
		qp->send_off = 0;
	if (p->payload_len > r->wr.sge.length - qp->send_off) {
		complete_recv(qp, XPORT_WC_RECV, 0, false, 0, XPORT_WC_LOC_LEN_ERR);
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);
		return false;
	}
	/* The receive's region is checked at every packet, like a WRITE's:
	 * deregistered since the post, it takes no byte (the receive fails
	 * with a local protection error, the requester gets a NAK). */
	if (p->payload_len && !soft_mr_check(qp->dev, r->wr.sge.lkey,
					     r->wr.sge.addr + qp->send_off, p->payload_len,
					     XPORT_ACCESS_LOCAL_WRITE)) {
		complete_recv(qp, XPORT_WC_RECV, 0, false, 0, XPORT_WC_LOC_PROT_ERR);
		nak_fatal(qp, WIRE_NAK_REMOTE_OP_ERR);
		return false;
	}
	memcpy((uint8_t *)(uintptr_t)r->wr.sge.addr + qp->send_off, buf + p->payload_off,
	       p->payload_len);
	qp->send_off += (uint32_t)p->payload_len;
	qp->in_send = !ends_message(op);
	if (!qp->in_send)
		complete_recv(qp, XPORT_WC_RECV, qp->send_off, has_imm(op), p->immdt,
			      XPORT_WC_SUCCESS);
	return true;
}

static bool do_write(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf)
{
	uint8_t op = p->bth.opcode;

	/* WRITE with immediate consumes a RECV: make sure one is there first,
	 * so a retried packet after an RNR NAK writes the same bytes again. */
	if (has_imm(op) && !rq_head(qp)) {
		respond(qp, wire_aeth_make(WIRE_AETH_RNR_NAK, qp->attr.min_rnr_timer),
			      p->bth.psn);
		return false;
	}
	if (starts_message(op)) {
		if (p->reth.dmalen > MAX_MESSAGE) {
			nak_fatal(qp, WIRE_NAK_INVALID_REQ);
			return false;
		}
		qp->write_va = p->reth.va;
		qp->write_left = p->reth.dmalen;
		qp->write_rkey = p->reth.rkey;
		/* Zero-length writes carry no address worth checking (as rxe). */
		if (p->reth.dmalen &&
		    !soft_mr_check(qp->dev, p->reth.rkey, p->reth.va, p->reth.dmalen,
				   XPORT_ACCESS_REMOTE_WRITE)) {
			nak_fatal(qp, WIRE_NAK_REMOTE_ACCESS_ERR);
			return false;
		}
	}
	if (p->payload_len > qp->write_left ||
	    (ends_message(op) && p->payload_len != qp->write_left)) {
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);
		return false;
	}
	/* Every packet, not just the first: from the moment a region is
	 * deregistered no packet touches it (the rest is NAKed). */
	if (p->payload_len && !soft_mr_check(qp->dev, qp->write_rkey, qp->write_va, p->payload_len,
					     XPORT_ACCESS_REMOTE_WRITE)) {
		nak_fatal(qp, WIRE_NAK_REMOTE_ACCESS_ERR);
		return false;
	}
	if (p->payload_len)
		memcpy((uint8_t *)(uintptr_t)qp->write_va, buf + p->payload_off, p->payload_len);
	qp->write_va += p->payload_len;
	qp->write_left -= (uint32_t)p->payload_len;
	qp->in_write = !ends_message(op);
	if (!qp->in_write && has_imm(op))
		complete_recv(qp, XPORT_WC_RECV_RDMA_WITH_IMM, 0, true, p->immdt,
			      XPORT_WC_SUCCESS);
	return true;
}

static struct soft_replay *replay_find(struct soft_qp *qp, uint32_t psn)
{
	for (int i = 0; i < SOFT_REPLAY; i++) {
		struct soft_replay *r = &qp->replay[i];

		if (r->valid && wire_psn_diff(psn, r->psn) >= 0 &&
		    wire_psn_diff(psn, r->psn + r->npkts) < 0)
			return r;
	}
	return NULL;
}

static void replay_save(struct soft_qp *qp, uint8_t op, uint32_t psn, uint32_t npkts,
			uint64_t orig)
{
	qp->replay[qp->replay_next++ % SOFT_REPLAY] =
		(struct soft_replay){ true, op, psn, npkts, orig };
}

static uint32_t read_packets(const struct soft_qp *qp, uint32_t len)
{
	return len ? (len + qp->pmtu - 1) / qp->pmtu : 1;
}

/* The NAK code a READ request must be refused with, or -1 to serve it.
 * Zero bytes need no valid address or rkey (as rxe). */
static int read_refusal(struct soft_qp *qp, const struct wire_pkt *p)
{
	if (p->reth.dmalen > MAX_MESSAGE)
		return WIRE_NAK_INVALID_REQ;
	if (p->reth.dmalen && !soft_mr_check(qp->dev, p->reth.rkey, p->reth.va, p->reth.dmalen,
					     XPORT_ACCESS_REMOTE_READ))
		return WIRE_NAK_REMOTE_ACCESS_ERR;
	return -1;
}

/* Queues the responses of a READ (new, or a duplicate being re-executed). */
static bool queue_read(struct soft_qp *qp, const struct wire_pkt *p)
{
	uint32_t n = read_packets(qp, p->reth.dmalen);
	struct soft_read_job *j;
	int refusal = read_refusal(qp, p);

	if (refusal >= 0) {
		nak_fatal_at(qp, (uint8_t)refusal, p->bth.psn);
		return false;
	}
	if (qp->reads_count == SOFT_READ_JOBS) {
		/* More outstanding READs than we advertised. */
		nak_fatal_at(qp, WIRE_NAK_INVALID_REQ, p->bth.psn);
		return false;
	}
	j = &qp->reads[(qp->reads_head + qp->reads_count++) % SOFT_READ_JOBS];
	*j = (struct soft_read_job){ .kind = SOFT_JOB_READ, .psn = p->bth.psn,
				     .last_psn = p->bth.psn + n - 1,
				     .va = p->reth.va, .rkey = p->reth.rkey, .left = p->reth.dmalen,
				     .first = true };
	return true;
}

static void send_atomic_ack_msn(struct soft_qp *qp, uint32_t psn, uint64_t orig, uint32_t msn)
{
	struct soft_pkt *slot = soft_tx_slot(qp->dev);
	struct wire_pkt p;

	soft_bth(qp, &p, OP_RC_ATOMIC_ACK, psn);
	p.aeth.syndrome = ack_syndrome();
	p.aeth.msn = msn & WIRE_PSN_MASK;
	p.atomicacketh.orig = orig;
	soft_tx_commit(qp, slot, &p, NULL, 0, WIRE_NOT_ECT);
}

/* An atomic's ACK, after any READ responses before it. */
static void send_atomic_ack(struct soft_qp *qp, uint32_t psn, uint64_t orig)
{
	struct soft_read_job j = { .kind = SOFT_JOB_ATOMIC_ACK, .psn = psn, .orig = orig,
				   .msn = qp->msn };

	if (!defer(qp, j))
		send_atomic_ack_msn(qp, psn, orig, qp->msn);
}

static bool do_atomic(struct soft_qp *qp, const struct wire_pkt *p)
{
	const struct wire_atomiceth *a = &p->atomiceth;
	uint64_t *target, orig;

	if (a->va & 7) {
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);
		return false;
	}
	if (!soft_mr_check(qp->dev, a->rkey, a->va, 8, XPORT_ACCESS_REMOTE_ATOMIC)) {
		nak_fatal(qp, WIRE_NAK_REMOTE_ACCESS_ERR);
		return false;
	}
	target = (uint64_t *)(uintptr_t)a->va;
	orig = *target;
	if (p->bth.opcode == OP_RC_CMP_SWAP) {
		if (orig == a->compare)
			*target = a->swap_add;
	} else {
		*target = orig + a->swap_add;
	}
	replay_save(qp, p->bth.opcode, p->bth.psn, 1, orig);
	qp->msn++;
	send_atomic_ack(qp, p->bth.psn, orig);
	return true;
}

static void duplicate(struct soft_qp *qp, const struct wire_pkt *p)
{
	uint8_t op = p->bth.opcode;
	struct soft_replay *r;

	SOFT_COUNT(qp, duplicates);
	if (is_send(op) || is_write(op)) {
		/* Already done: say so again, without consuming a RECV.  One ACK
		 * per receive batch, however many duplicates came in it: after a
		 * go-back-N a whole window arrives again. */
		qp->ack_due = true;
		qp->ack_psn = (qp->epsn - 1) & WIRE_PSN_MASK;
		return;
	}
	/* Nothing saved for it, or a replayed READ that could not be served:
	 * dropped.  A NAK would be fatal, and a late copy of an old request
	 * must not end a healthy connection. */
	r = replay_find(qp, p->bth.psn);
	if (!r || r->opcode != op || (op == OP_RC_READ_REQUEST && read_refusal(qp, p) >= 0))
		return;
	/* Responses queued from this PSN on (READ data, deferred ACKs) are
	 * stale: the requester asks again from here (go-back-N), so drop them
	 * and answer anew, in PSN order. */
	while (qp->reads_count &&
	       wire_psn_diff(qp->reads[(qp->reads_head + qp->reads_count - 1) % SOFT_READ_JOBS].psn,
			     p->bth.psn) >= 0)
		qp->reads_count--;
	if (op == OP_RC_READ_REQUEST) {
		/* If the queue is still full, the oldest job gives way: the
		 * requester will ask for it again. */
		if (qp->reads_count == SOFT_READ_JOBS) {
			qp->reads_head = (qp->reads_head + 1) % SOFT_READ_JOBS;
			qp->reads_count--;
		}
		queue_read(qp, p);
	} else
		send_atomic_ack(qp, r->psn, r->orig);
}

void soft_resp_rx(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf)
{
	uint8_t op = p->bth.opcode;
	int32_t d = wire_psn_diff(p->bth.psn, qp->epsn);
	bool ok;

	if (qp->state != SOFT_QP_RTS)
		return;
	if (d > 0) {
		SOFT_COUNT(qp, out_of_sequence);
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			respond(qp, wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR), qp->epsn);
		}
		return;
	}
	if (d < 0) {
		duplicate(qp, p);
		return;
	}
	qp->nak_sent = false;
	/* A packet must continue the message in progress, or start a new one;
	 * it carries at most the path MTU, and FIRST/MIDDLE exactly that. */
	if ((qp->in_send && !(is_send(op) && !starts_message(op))) ||
	    (qp->in_write && !(is_write(op) && !starts_message(op))) ||
	    (!qp->in_send && !qp->in_write && (is_send(op) || is_write(op)) &&
	     !starts_message(op)) ||
	    p->payload_len > qp->pmtu ||
	    ((is_send(op) || is_write(op)) && !ends_message(op) && p->payload_len != qp->pmtu)) {
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);
		return;
	}
	if (is_send(op)) {
		ok = do_send(qp, p, buf);
	} else if (is_write(op)) {
		ok = do_write(qp, p, buf);
	} else if (op == OP_RC_READ_REQUEST) {
		ok = queue_read(qp, p);
		if (ok) {
			replay_save(qp, op, p->bth.psn, read_packets(qp, p->reth.dmalen), 0);
			qp->epsn = (qp->epsn + read_packets(qp, p->reth.dmalen)) & WIRE_PSN_MASK;
			qp->msn++;
		}
		return;
	} else if (op == OP_RC_CMP_SWAP || op == OP_RC_FETCH_ADD) {
		if (do_atomic(qp, p))
			qp->epsn = (qp->epsn + 1) & WIRE_PSN_MASK;
		return;
	} else {
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);	/* not an RC request we serve */
		return;
	}
	if (!ok)
		return;
	qp->epsn = (qp->epsn + 1) & WIRE_PSN_MASK;
	if (ends_message(op))
		qp->msn++;
	if (p->bth.ackreq) {
		qp->ack_due = true;
		qp->ack_psn = p->bth.psn;
	}
}

/* One READ response packet of job j. */
static void send_read_response(struct soft_qp *qp, struct soft_read_job *j)
{
	struct soft_pkt *slot = soft_tx_slot(qp->dev);
	uint32_t len = j->left < qp->pmtu ? j->left : qp->pmtu;
	bool last = j->psn == (j->last_psn & WIRE_PSN_MASK);
	struct wire_pkt p;
	uint8_t op;

	if (j->first)
		op = last ? OP_RC_READ_RESPONSE_ONLY : OP_RC_READ_RESPONSE_FIRST;
	else
		op = last ? OP_RC_READ_RESPONSE_LAST : OP_RC_READ_RESPONSE_MIDDLE;
	soft_bth(qp, &p, op, j->psn);
	p.aeth.syndrome = ack_syndrome();
	p.aeth.msn = qp->msn & WIRE_PSN_MASK;
	soft_tx_commit(qp, slot, &p, (const void *)(uintptr_t)j->va, len, WIRE_ECT0);
	j->va += len;
	j->left -= len;
	j->psn = (j->psn + 1) & WIRE_PSN_MASK;
	j->first = false;
}

void soft_resp_transmit(struct soft_qp *qp)
{
	int budget = SOFT_BATCH;

	while (budget > 0 && qp->reads_count && qp->state == SOFT_QP_RTS) {
		struct soft_read_job *j = &qp->reads[qp->reads_head];
		bool last = j->psn == (j->last_psn & WIRE_PSN_MASK);

		if (j->kind != SOFT_JOB_READ) {	/* its turn has come */
			if (j->kind == SOFT_JOB_ACK)
				send_ack_msn(qp, j->syndrome, j->psn, j->msn);
			else
				send_atomic_ack_msn(qp, j->psn, j->orig, j->msn);
			qp->reads_head = (qp->reads_head + 1) % SOFT_READ_JOBS;
			qp->reads_count--;
			budget--;
			continue;
		}
		/* READ responses are our data: DCQCN paces them. */
		if (!soft_dcqcn_may_send(&qp->cc, qp->dev->now_ns, qp->pmtu))
			break;
		/* The region may have been deregistered since the request: then
		 * the rest of the READ is NAKed, not read. */
		if (j->left && !soft_mr_check(qp->dev, j->rkey, j->va,
					      j->left < qp->pmtu ? j->left : qp->pmtu,
					      XPORT_ACCESS_REMOTE_READ)) {
			qp->reads_count = 0;
			nak_fatal_at(qp, WIRE_NAK_REMOTE_ACCESS_ERR, j->psn);
			break;
		}
		send_read_response(qp, j);
		soft_dcqcn_sent(&qp->cc, qp->pmtu);
		budget--;
		if (last) {
			qp->reads_head = (qp->reads_head + 1) % SOFT_READ_JOBS;
			qp->reads_count--;
		}
	}
	/* Responses leave in PSN order: the coalesced ACK waits for the READ
	 * responses of earlier PSNs (an ACK that overtook them would read, to
	 * the requester, as a lost response, and it would read again). */
	if (qp->ack_due && qp->state == SOFT_QP_RTS && qp->reads_count &&
	    wire_psn_diff(qp->reads[qp->reads_head].psn, qp->ack_psn) <= 0)
		return;
	if (qp->ack_due && qp->state == SOFT_QP_RTS)
		soft_send_ack(qp, ack_syndrome(), qp->ack_psn);
	qp->ack_due = false;
}
