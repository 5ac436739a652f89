// SPDX-License-Identifier: MIT
/*
 * The UC responder: SEND and RDMA WRITE with no ACKs and nothing resent
 * (IBTA 9.7.5.1, 9.9.2; rxe behaves the same).  Packets must come in PSN
 * order.  At a gap, any PSN but the expected one, the message in progress
 * is given up: what it placed stays placed, and a SEND's receive is used
 * again for the next message.  Packets are then dropped until a FIRST or
 * ONLY starts a message at its own PSN.  Where RC would NAK (no receive
 * posted, a WRITE outside its region, lengths the IBTA rules out), UC drops
 * the message; a receive that completed in error (length, protection)
 * moves the QP to the error state, as a local error does on RC.
 */
#include "soft.h"

/* Gives up the message in progress: with none in progress, a MIDDLE or
 * LAST is out of order, so packets drop until the next FIRST/ONLY. */
static void cut(struct soft_qp *qp)
{
	if (qp->in_send || qp->in_write)
		SOFT_COUNT(qp, uc_msgs_cut);
	qp->in_send = qp->in_write = false;
}

void soft_uc_rx(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf)
{
	uint8_t op = p->bth.opcode & 0x1F;	/* as RC spells it */
	enum soft_place r;

	if (qp->state != SOFT_QP_RTS)
		return;
	if (!soft_op_is_send(op) && !soft_op_is_write(op)) {
		SOFT_COUNT(qp, drops);		/* nothing else exists on UC */
		return;
	}
	if (p->bth.psn != qp->epsn) {
		SOFT_COUNT(qp, out_of_sequence);
		cut(qp);
	}
	qp->epsn = (p->bth.psn + 1) & WIRE_PSN_MASK;
	if (!soft_op_in_order(qp, op, p)) {
		cut(qp);	/* a FIRST/ONLY here ends the message before it */
		if (!soft_op_in_order(qp, op, p)) {
			SOFT_COUNT(qp, drops);
			return;
		}
	}
	r = soft_op_is_send(op) ? soft_place_send(qp, op, p, buf) :
				  soft_place_write(qp, op, p, buf);
	switch (r) {
	case SOFT_PLACED:
		if (soft_op_ends(op))
			qp->msn++;
		return;
	case SOFT_NO_RECV:
		SOFT_COUNT(qp, no_recv_drops);
		cut(qp);
		return;
	case SOFT_LEN_ERR:
	case SOFT_PROT_ERR:
		soft_req_flush(qp, XPORT_WC_WR_FLUSH_ERR);
		return;
	default:
		SOFT_COUNT(qp, drops);
		cut(qp);
		return;
	}
}
