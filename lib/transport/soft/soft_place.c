// SPDX-License-Identifier: MIT
/*
 * Placing SEND and WRITE payloads: the checks and the copy both connected
 * responders share.  RC (soft_resp.c) turns a refusal into a NAK; UC
 * (soft_uc.c), which has no answer to give, into a dropped message.
 * Opcodes are RC's (a UC opcode less its 0x20).
 */
#include <string.h>

#include "soft.h"

struct soft_rwqe *soft_rq_head(struct soft_qp *qp)
{
	return qp->rq_head == qp->rq_tail ? NULL : &qp->rq[qp->rq_head % qp->rq_size];
}

void soft_complete_recv(struct soft_qp *qp, const struct xport_wc *wc_in)
{
	struct soft_rwqe *r = soft_rq_head(qp);
	struct xport_wc wc = *wc_in;

	wc.wr_id = r->wr.wr_id;
	wc.qp_num = qp->qpn;
	soft_cq_push(qp->rcq, &wc);
	qp->rq_head++;
}

static void complete_status(struct soft_qp *qp, enum xport_wc_opcode op, uint32_t len,
			    bool imm, uint32_t imm_data, enum xport_wc_status st)
{
	struct xport_wc wc = { .status = st, .opcode = op, .byte_len = len, .imm = imm_data,
			       .has_imm = imm };

	soft_complete_recv(qp, &wc);
}

bool soft_op_in_order(const struct soft_qp *qp, uint8_t op, const struct wire_pkt *p)
{
	bool send = soft_op_is_send(op), write = soft_op_is_write(op);
	bool starts = soft_op_starts(op), ok;

	if (qp->in_send)
		ok = send && !starts;
	else if (qp->in_write)
		ok = write && !starts;
	else
		ok = starts || (!send && !write);
	return ok && p->payload_len <= qp->pmtu &&
	       (!(send || write) || soft_op_ends(op) || p->payload_len == qp->pmtu);
}

/* SEND packets: payload into the RECV at the head of the receive queue. */
enum soft_place soft_place_send(struct soft_qp *qp, uint8_t op, const struct wire_pkt *p,
				const uint8_t *buf)
{
	struct soft_rwqe *r = soft_rq_head(qp);

	if (!r)
		return SOFT_NO_RECV;
	if (soft_op_starts(op))
		qp->send_off = 0;
	if (p->payload_len > r->wr.sge.length - qp->send_off) {
		complete_status(qp, XPORT_WC_RECV, 0, false, 0, XPORT_WC_LOC_LEN_ERR);
		return SOFT_LEN_ERR;
	}
	/* The receive's region is checked at every packet, like a WRITE's:
	 * deregistered since the post, it takes no byte (the receive fails
	 * with a local protection error). */
	if (p->payload_len && !soft_mr_check(qp->dev, r->wr.sge.lkey,
					     r->wr.sge.addr + qp->send_off, p->payload_len,
					     XPORT_ACCESS_LOCAL_WRITE)) {
		complete_status(qp, XPORT_WC_RECV, 0, false, 0, XPORT_WC_LOC_PROT_ERR);
		return SOFT_PROT_ERR;
	}
	memcpy((uint8_t *)(uintptr_t)r->wr.sge.addr + qp->send_off, buf + p->payload_off,
	       p->payload_len);
	qp->send_off += (uint32_t)p->payload_len;
	qp->in_send = !soft_op_ends(op);
	if (!qp->in_send)
		complete_status(qp, XPORT_WC_RECV, qp->send_off, soft_op_has_imm(op), p->immdt,
				XPORT_WC_SUCCESS);
	return SOFT_PLACED;
}

enum soft_place soft_place_write(struct soft_qp *qp, uint8_t op, const struct wire_pkt *p,
				 const uint8_t *buf)
{
	/* WRITE with immediate consumes a RECV: make sure one is there first,
	 * so a retried packet after an RNR NAK writes the same bytes again. */
	if (soft_op_has_imm(op) && !soft_rq_head(qp))
		return SOFT_NO_RECV;
	if (soft_op_starts(op)) {
		if (p->reth.dmalen > SOFT_MAX_MESSAGE)
			return SOFT_INVALID;
		qp->write_va = p->reth.va;
		qp->write_left = p->reth.dmalen;
		qp->write_rkey = p->reth.rkey;
		/* Zero-length writes carry no address worth checking (as rxe). */
		if (p->reth.dmalen &&
		    !soft_mr_check(qp->dev, p->reth.rkey, p->reth.va, p->reth.dmalen,
				   XPORT_ACCESS_REMOTE_WRITE))
			return SOFT_ACCESS_ERR;
	}
	if (p->payload_len > qp->write_left ||
	    (soft_op_ends(op) && p->payload_len != qp->write_left))
		return SOFT_INVALID;
	/* Every packet, not just the first: from the moment a region is
	 * deregistered no packet touches it. */
	if (p->payload_len && !soft_mr_check(qp->dev, qp->write_rkey, qp->write_va, p->payload_len,
					     XPORT_ACCESS_REMOTE_WRITE))
		return SOFT_ACCESS_ERR;
	if (p->payload_len)
		memcpy((uint8_t *)(uintptr_t)qp->write_va, buf + p->payload_off, p->payload_len);
	qp->write_va += p->payload_len;
	qp->write_left -= (uint32_t)p->payload_len;
	qp->in_write = !soft_op_ends(op);
	if (!qp->in_write && soft_op_has_imm(op))
		complete_status(qp, XPORT_WC_RECV_RDMA_WITH_IMM, 0, true, p->immdt,
				XPORT_WC_SUCCESS);
	return SOFT_PLACED;
}
