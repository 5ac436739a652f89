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

/* What a placement's failure means on RC: the answer the requester gets. */
static bool placed(struct soft_qp *qp, const struct wire_pkt *p, enum soft_place r)
{
	switch (r) {
	case SOFT_PLACED:
		return true;
	case SOFT_NO_RECV:
		/* Nothing posted: RNR NAK; the requester retries after the timer. */
		respond(qp, wire_aeth_make(WIRE_AETH_RNR_NAK, qp->attr.min_rnr_timer),
			p->bth.psn);
		return false;
	case SOFT_PROT_ERR:
		nak_fatal(qp, WIRE_NAK_REMOTE_OP_ERR);
		return false;
	case SOFT_ACCESS_ERR:
		nak_fatal(qp, WIRE_NAK_REMOTE_ACCESS_ERR);
		return false;
	default:	/* SOFT_LEN_ERR, SOFT_INVALID */
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);
		return false;
	}
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
	if (p->reth.dmalen > SOFT_MAX_MESSAGE)
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
	if (soft_op_is_send(op) || soft_op_is_write(op)) {
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
	if (!soft_op_in_order(qp, op, p)) {
		nak_fatal(qp, WIRE_NAK_INVALID_REQ);
		return;
	}
	if (soft_op_is_send(op)) {
		ok = placed(qp, p, soft_place_send(qp, op, p, buf));
	} else if (soft_op_is_write(op)) {
		ok = placed(qp, p, soft_place_write(qp, op, p, buf));
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
	if (soft_op_ends(op))
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
	if (op == OP_RC_READ_RESPONSE_MIDDLE) {	/* no AETH */
		soft_bth_set(&p.bth, qp, op, j->psn);
		soft_tx_commit_bth(qp, slot, &p.bth, (const void *)(uintptr_t)j->va, len,
				   WIRE_ECT0);
	} else {
		soft_bth(qp, &p, op, j->psn);
		p.aeth.syndrome = ack_syndrome();
		p.aeth.msn = qp->msn & WIRE_PSN_MASK;
		soft_tx_commit(qp, slot, &p, (const void *)(uintptr_t)j->va, len, WIRE_ECT0);
	}
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
