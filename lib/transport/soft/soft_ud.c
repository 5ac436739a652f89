// SPDX-License-Identifier: MIT
/*
 * UD receives (IBTA 9.8; verbs on RoCEv2): one packet is one message, from
 * anyone who knows the QPN and the Q_Key.  A datagram under another Q_Key,
 * or one that finds no receive posted, is counted and dropped.  The receive
 * buffer begins with the 40-byte GRH area as verbs fills it on RoCEv2: for
 * IPv4, twenty zero bytes and then the IPv4 header the packet came with,
 * rebuilt from what the socket tells (addresses, ToS, TTL) and the ID its
 * ICRC held with; for IPv6 the IPv6 header.  The completion counts the 40
 * bytes and says a GRH is there.
 */
#include <string.h>

#include "soft.h"

static void put_grh(uint8_t grh[XPORT_GRH_LEN], const struct soft_pkt *pk)
{
	uint16_t udp_len = (uint16_t)(WIRE_UDP_LEN + pk->len);

	memset(grh, 0, XPORT_GRH_LEN);
	if (pk->src.v6) {
		struct wire_ipv6 ip = { .dscp = pk->tos >> 2, .ecn = pk->tos & 3,
					.flow_label = pk->flow_label, .hop_limit = pk->ttl };

		memcpy(ip.src, pk->src.ip, 16);
		memcpy(ip.dst, pk->dst.ip, 16);
		wire_put_ipv6(grh, &ip, udp_len);
	} else {
		struct wire_ipv4 ip = { .dscp = pk->tos >> 2, .ecn = pk->tos & 3, .id = pk->ip_id,
					.frag = 0x4000, .ttl = pk->ttl };

		memcpy(ip.src, pk->src.ip + 12, 4);
		memcpy(ip.dst, pk->dst.ip + 12, 4);
		wire_put_ipv4(grh + XPORT_GRH_LEN - WIRE_IPV4_LEN, &ip,
			      (uint16_t)(WIRE_IPV4_LEN + udp_len));
	}
}

void soft_ud_rx(struct soft_qp *qp, const struct wire_pkt *p, struct soft_pkt *pk)
{
	struct xport_wc wc = { .opcode = XPORT_WC_RECV, .grh = true, .src_qp = p->deth.srcqp,
			       .has_imm = p->bth.opcode == OP_UD_SEND_ONLY_IMM, .imm = p->immdt };
	struct soft_rwqe *r;
	uint8_t *dst;

	if (qp->state != SOFT_QP_RTS)
		return;
	if (p->deth.qkey != qp->attr.qkey) {
		SOFT_COUNT(qp, qkey_drops);
		return;
	}
	if (p->payload_len > qp->attr.mtu) {
		SOFT_COUNT(qp, drops);		/* no sender makes one; a forgery */
		return;
	}
	r = soft_rq_head(qp);
	if (!r) {
		SOFT_COUNT(qp, no_recv_drops);
		return;
	}
	wc.byte_len = XPORT_GRH_LEN + (uint32_t)p->payload_len;
	/* Too long for the receive at the head: the datagram is dropped, the
	 * receive stays for the next one and the QP goes on (the IBTA's class
	 * D error for UD without an SRQ, as rxe_resp.c handles it). */
	if (wc.byte_len > r->wr.sge.length) {
		SOFT_COUNT(qp, drops);
		return;
	}
	if (!soft_mr_check(qp->dev, r->wr.sge.lkey, r->wr.sge.addr, wc.byte_len,
			   XPORT_ACCESS_LOCAL_WRITE)) {
		wc.status = XPORT_WC_LOC_PROT_ERR;
		wc.byte_len = 0;
		soft_complete_recv(qp, &wc);
		return;
	}
	dst = (uint8_t *)(uintptr_t)r->wr.sge.addr;
	put_grh(dst, pk);
	memcpy(dst + XPORT_GRH_LEN, soft_pkt_bytes(pk) + p->payload_off, p->payload_len);
	qp->msn++;
	soft_complete_recv(qp, &wc);
}
