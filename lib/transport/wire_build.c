// SPDX-License-Identifier: MIT
/*
 * Encoding: BTH and extended headers from a struct wire_pkt, and whole
 * RoCEv2 / RoCEv1 / IB frames with their lengths, checksums and CRCs.
 */
#include <string.h>

#include "icrc.h"
#include "wire.h"

#define DEFAULT_TTL 64

void wire_put_bth(uint8_t *h, const struct wire_bth *b)
{
	h[0] = b->opcode;
	h[1] = (uint8_t)(b->se << 7 | b->mig << 6 | (b->padcnt & 3) << 4 | (b->tver & 0xF));
	wire_put16(h + 2, b->pkey);
	h[4] = (uint8_t)(b->fecn << 7 | b->becn << 6 | (b->resv6 & 0x3F));
	wire_put24(h + 5, b->dqpn);
	h[8] = (uint8_t)(b->ackreq << 7 | (b->resv7 & 0x7F));
	wire_put24(h + 9, b->psn);
}

static void put_ext(uint8_t *h, unsigned bit, const struct wire_pkt *p)
{
	memset(h, 0, wire_ext_len((uint16_t)bit));
	switch (bit) {
	case WIRE_X_RDETH:
		wire_put24(h + 1, p->rdeth.eecnxt);
		break;
	case WIRE_X_DETH:
		wire_put32(h, p->deth.qkey);
		wire_put24(h + 5, p->deth.srcqp);
		break;
	case WIRE_X_XRCETH:
		wire_put24(h + 1, p->xrceth.xrcsrq);
		break;
	case WIRE_X_FETH:
		h[3] = (uint8_t)((p->feth.sel & 3) << 4 | (p->feth.placement & 0xF));
		break;
	case WIRE_X_RETH:
		wire_put64(h, p->reth.va);
		wire_put32(h + 8, p->reth.rkey);
		wire_put32(h + 12, p->reth.dmalen);
		break;
	case WIRE_X_ATOMICETH:
		wire_put64(h, p->atomiceth.va);
		wire_put32(h + 8, p->atomiceth.rkey);
		wire_put64(h + 12, p->atomiceth.swap_add);
		wire_put64(h + 20, p->atomiceth.compare);
		break;
	case WIRE_X_AETH:
		h[0] = p->aeth.syndrome;
		wire_put24(h + 1, p->aeth.msn);
		break;
	case WIRE_X_ATOMICACKETH:
		wire_put64(h, p->atomicacketh.orig);
		break;
	case WIRE_X_IMMDT:
		wire_put32(h, p->immdt);
		break;
	case WIRE_X_IETH:
		wire_put32(h, p->ieth);
		break;
	default:	/* CNP: 16 reserved zero bytes */
		break;
	}
}

size_t wire_put_transport(uint8_t *buf, size_t cap, const struct wire_pkt *p)
{
	const struct wire_opcode_info *op = wire_opcode_info(p->bth.opcode);
	size_t off = WIRE_BTH_LEN;

	if (!op || cap < WIRE_BTH_LEN + wire_ext_len(op->ext))
		return 0;
	wire_put_bth(buf, &p->bth);
	for (unsigned left = op->ext; left; left &= left - 1) {
		unsigned bit = left & -left;	/* in wire order: lowest first */

		put_ext(buf + off, bit, p);
		off += wire_ext_len((uint16_t)bit);
	}
	return off;
}

static size_t put_eth(uint8_t *h, const struct wire_pkt *p, uint16_t type)
{
	size_t off = WIRE_ETH_LEN;

	memcpy(h, p->eth.dst, 6);
	memcpy(h + 6, p->eth.src, 6);
	for (unsigned i = 0; i < p->nvlan && i < WIRE_MAX_VLAN; i++) {
		const struct wire_vlan *v = &p->vlan[i];

		wire_put16(h + off - 2, v->tpid ? v->tpid : ETHERTYPE_VLAN);
		wire_put16(h + off, (uint16_t)((v->pcp & 7) << 13 | v->dei << 12 | (v->vid & 0xFFF)));
		off += WIRE_VLAN_LEN;
	}
	wire_put16(h + off - 2, type);
	return off;
}

static void put_ipv6_like(uint8_t *h, uint8_t ver, uint8_t tclass, uint32_t flow,
			  uint16_t paylen, uint8_t next, uint8_t hops,
			  const uint8_t *src, const uint8_t *dst)
{
	wire_put32(h, (uint32_t)ver << 28 | (uint32_t)tclass << 20 | (flow & 0xFFFFF));
	wire_put16(h + 4, paylen);
	h[6] = next;
	h[7] = hops;
	memcpy(h + 8, src, 16);
	memcpy(h + 24, dst, 16);
}

void wire_put_ipv4(uint8_t *h, const struct wire_ipv4 *ip, uint16_t total)
{
	h[0] = 0x45;
	h[1] = (uint8_t)(ip->dscp << 2 | (ip->ecn & 3));
	wire_put16(h + 2, total);
	wire_put16(h + 4, ip->id);
	wire_put16(h + 6, ip->frag);
	h[8] = ip->ttl ? ip->ttl : DEFAULT_TTL;
	h[9] = 17;
	wire_put16(h + 10, 0);
	memcpy(h + 12, ip->src, 4);
	memcpy(h + 16, ip->dst, 4);
	wire_put16(h + 10, wire_ipv4_csum(h, WIRE_IPV4_LEN));
}

void wire_put_ipv6(uint8_t *h, const struct wire_ipv6 *ip, uint16_t paylen)
{
	put_ipv6_like(h, 6, (uint8_t)(ip->dscp << 2 | ip->ecn), ip->flow_label, paylen, 17,
		      ip->hop_limit ? ip->hop_limit : DEFAULT_TTL, ip->src, ip->dst);
}

/* Bytes in front of the BTH for this encapsulation. */
static size_t outer_len(const struct wire_pkt *p)
{
	size_t l2 = (p->layers & WIRE_L_ETH) ? WIRE_ETH_LEN + WIRE_VLAN_LEN * p->nvlan : 0;

	switch (p->encap) {
	case WIRE_ENCAP_ROCEV2:
		return l2 + (p->layers & WIRE_L_IPV6 ? WIRE_IPV6_LEN : WIRE_IPV4_LEN) +
		       WIRE_UDP_LEN;
	case WIRE_ENCAP_ROCEV1:
		return WIRE_ETH_LEN + WIRE_VLAN_LEN * p->nvlan + WIRE_GRH_LEN;
	case WIRE_ENCAP_IB:
		return WIRE_LRH_LEN + (p->lrh.lnh == 3 ? WIRE_GRH_LEN : 0);
	default:
		return 0;
	}
}

/* Writes the headers in front of the BTH; tail = BTH..ICRC inclusive. */
static void put_outer(uint8_t *buf, struct wire_pkt *p, size_t tail)
{
	size_t off = 0;

	switch (p->encap) {
	case WIRE_ENCAP_ROCEV2: {
		bool v6 = p->layers & WIRE_L_IPV6;
		size_t udp_len = WIRE_UDP_LEN + tail;

		if (p->layers & WIRE_L_ETH)
			off = put_eth(buf, p, v6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4);
		p->icrc_start = off;
		if (v6) {
			wire_put_ipv6(buf + off, &p->ip6, (uint16_t)udp_len);
			off += WIRE_IPV6_LEN;
		} else {
			p->ip4.ihl = WIRE_IPV4_LEN;
			wire_put_ipv4(buf + off, &p->ip4, (uint16_t)(WIRE_IPV4_LEN + udp_len));
			off += WIRE_IPV4_LEN;
		}
		wire_put16(buf + off, p->udp.sport);
		wire_put16(buf + off + 2, p->udp.dport ? p->udp.dport : ROCEV2_UDP_PORT);
		wire_put16(buf + off + 4, (uint16_t)udp_len);
		wire_put16(buf + off + 6, 0);
		break;
	}
	case WIRE_ENCAP_ROCEV1:
		off = put_eth(buf, p, ETHERTYPE_ROCEV1);
		p->icrc_start = off;
		put_ipv6_like(buf + off, 6, p->grh.tclass, p->grh.flow_label, (uint16_t)tail,
			      0x1B, p->grh.hoplmt, p->grh.sgid, p->grh.dgid);
		break;
	case WIRE_ENCAP_IB: {
		size_t words = (outer_len(p) + tail) / 4;

		p->icrc_start = 0;
		buf[0] = (uint8_t)(p->lrh.vl << 4 | (p->lrh.lver & 0xF));
		buf[1] = (uint8_t)(p->lrh.sl << 4 | (p->lrh.lnh & 3));
		wire_put16(buf + 2, p->lrh.dlid);
		wire_put16(buf + 4, (uint16_t)(words & 0x7FF));
		wire_put16(buf + 6, p->lrh.slid);
		if (p->lrh.lnh == 3)
			put_ipv6_like(buf + WIRE_LRH_LEN, 6, p->grh.tclass, p->grh.flow_label,
				      (uint16_t)tail, 0x1B, p->grh.hoplmt, p->grh.sgid,
				      p->grh.dgid);
		break;
	}
	default:
		break;
	}
}

size_t wire_build(uint8_t *buf, size_t cap, struct wire_pkt *p,
		  const uint8_t *payload, size_t len)
{
	const struct wire_opcode_info *op = wire_opcode_info(p->bth.opcode);
	size_t hdr, tl, tail, total, trailer;
	uint8_t pad;

	if (!op || p->encap == WIRE_ENCAP_NONE)
		return 0;
	if (p->encap == WIRE_ENCAP_IB && p->lrh.lnh < 2)
		p->lrh.lnh = 2;
	pad = (uint8_t)((4 - len % 4) % 4);
	p->bth.padcnt = pad;
	tl = WIRE_BTH_LEN + wire_ext_len(op->ext);
	tail = tl + len + pad + WIRE_ICRC_LEN;
	hdr = outer_len(p);
	trailer = p->encap == WIRE_ENCAP_IB ? WIRE_VCRC_LEN : 0;
	total = hdr + tail + trailer;
	if (total > cap || tail > 0xFFFF - WIRE_IPV6_LEN ||
	    (p->encap == WIRE_ENCAP_IB && (hdr + tail) / 4 > 0x7FF))
		return 0;
	switch (p->encap) {
	case WIRE_ENCAP_ROCEV2:
		p->layers |= WIRE_L_UDP | (p->layers & WIRE_L_IPV6 ? 0 : WIRE_L_IPV4);
		break;
	case WIRE_ENCAP_ROCEV1:
		p->layers |= WIRE_L_ETH | WIRE_L_GRH;
		break;
	default:
		p->layers |= WIRE_L_LRH | (p->lrh.lnh == 3 ? WIRE_L_GRH : 0);
		break;
	}
	put_outer(buf, p, tail);
	wire_put_transport(buf + hdr, tl, p);
	if (len)
		memcpy(buf + hdr + tl, payload, len);
	memset(buf + hdr + tl + len, 0, pad);
	p->op = op;
	p->ext = op->ext;
	p->bth_off = hdr;
	p->payload_off = hdr + tl;
	p->payload_len = len;
	p->icrc_off = hdr + tail - WIRE_ICRC_LEN;
	p->frame_len = total;
	p->cut = false;
	p->layers |= WIRE_L_BTH;
	p->icrc = icrc_of(buf, p);
	icrc_store(buf + p->icrc_off, p->icrc);
	if (trailer) {
		p->vcrc = vcrc_of(buf, p);
		buf[p->icrc_off + 4] = (uint8_t)p->vcrc;
		buf[p->icrc_off + 5] = (uint8_t)(p->vcrc >> 8);
	}
	return total;
}
