// SPDX-License-Identifier: MIT
/*
 * Decoding of RoCEv2, RoCEv1 and native InfiniBand frames.  Every read is
 * preceded by a bounds check against the captured length; the length
 * fields of the packet decide where the ICRC sits, and a capture cut short
 * by its snap length is reported as `cut`, never as a bad packet.
 */
#include <stddef.h>
#include <string.h>

#include "bytes_le.h"
#include "wire.h"

const char *wire_status_str(enum wire_status s)
{
	switch (s) {
	case WIRE_OK: return "ok";
	case WIRE_NOT_RDMA: return "not RDMA";
	case WIRE_TRUNCATED: return "truncated";
	case WIRE_MALFORMED: return "malformed";
	}
	return "?";
}

static void decode_bth(struct wire_bth *b, const uint8_t *h)
{
	b->opcode = h[0];
	b->se = h[1] >> 7;
	b->mig = (h[1] >> 6) & 1;
	b->padcnt = (h[1] >> 4) & 3;
	b->tver = h[1] & 0xF;
	b->pkey = wire_get16(h + 2);
	b->fecn = h[4] >> 7;
	b->becn = (h[4] >> 6) & 1;
	b->resv6 = h[4] & 0x3F;
	b->dqpn = wire_get24(h + 5);
	b->ackreq = h[8] >> 7;
	b->resv7 = h[8] & 0x7F;
	b->psn = wire_get24(h + 9);
}

/* Decodes one extended header at h (length already checked). */
static void decode_ext(struct wire_pkt *p, unsigned bit, const uint8_t *h)
{
	switch (bit) {
	case WIRE_X_RDETH:
		p->rdeth.eecnxt = wire_get24(h + 1);
		break;
	case WIRE_X_DETH:
		p->deth.qkey = wire_get32(h);
		p->deth.srcqp = wire_get24(h + 5);
		break;
	case WIRE_X_XRCETH:
		p->xrceth.xrcsrq = wire_get24(h + 1);
		break;
	case WIRE_X_FETH:
		p->feth.sel = (h[3] >> 4) & 3;
		p->feth.placement = h[3] & 0xF;
		break;
	case WIRE_X_RETH:
		p->reth.va = wire_get64(h);
		p->reth.rkey = wire_get32(h + 8);
		p->reth.dmalen = wire_get32(h + 12);
		break;
	case WIRE_X_ATOMICETH:
		p->atomiceth.va = wire_get64(h);
		p->atomiceth.rkey = wire_get32(h + 8);
		p->atomiceth.swap_add = wire_get64(h + 12);
		p->atomiceth.compare = wire_get64(h + 20);
		break;
	case WIRE_X_AETH:
		p->aeth.syndrome = h[0];
		p->aeth.msn = wire_get24(h + 1);
		break;
	case WIRE_X_ATOMICACKETH:
		p->atomicacketh.orig = wire_get64(h);
		break;
	case WIRE_X_IMMDT:
		p->immdt = wire_get32(h);
		break;
	case WIRE_X_IETH:
		p->ieth = wire_get32(h);
		break;
	default:	/* CNP reserved bytes: nothing to keep */
		break;
	}
}

/*
 * BTH and what follows, up to the ICRC at icrc_off (from length fields).
 * trailer is the VCRC's length for native IB, 0 otherwise.
 */
static enum wire_status decode_transport(struct wire_pkt *p, const uint8_t *buf,
					 size_t caplen, size_t bth_off,
					 size_t icrc_off, size_t trailer)
{
	size_t off = bth_off + WIRE_BTH_LEN, ext_len;

	p->bth_off = bth_off;
	p->icrc_off = icrc_off;
	p->frame_len = icrc_off + WIRE_ICRC_LEN + trailer;
	if (icrc_off < off)
		return WIRE_MALFORMED;
	if (caplen < off)
		return WIRE_TRUNCATED;
	decode_bth(&p->bth, buf + bth_off);
	p->layers |= WIRE_L_BTH;
	p->op = wire_opcode_info(p->bth.opcode);
	p->cut = caplen < p->frame_len;
	if (!p->cut) {
		p->icrc = get_le32(buf + icrc_off);
		if (trailer)
			p->vcrc = (uint16_t)(buf[icrc_off + 4] | buf[icrc_off + 5] << 8);
	}
	if (!p->op) {
		/* Undefined opcode: what follows the BTH is opaque. */
		p->payload_off = off;
		p->payload_len = icrc_off - off;
		return WIRE_OK;
	}
	ext_len = wire_ext_len(p->op->ext);
	if (off + ext_len > icrc_off)
		return WIRE_MALFORMED;
	/* Known from the length fields even if the capture cuts the headers. */
	if (icrc_off - off - ext_len < p->bth.padcnt)
		return WIRE_MALFORMED;
	p->payload_off = off + ext_len;
	p->payload_len = icrc_off - p->payload_off - p->bth.padcnt;
	for (unsigned left = p->op->ext; left; left &= left - 1) {
		unsigned bit = left & -left;	/* in wire order: lowest first */

		if (caplen < off + wire_ext_len((uint16_t)bit))
			return WIRE_TRUNCATED;
		decode_ext(p, bit, buf + off);
		p->ext |= (uint16_t)bit;
		off += wire_ext_len((uint16_t)bit);
	}
	return WIRE_OK;
}

static enum wire_status decode_grh(struct wire_grh *g, const uint8_t *buf,
				   size_t caplen, size_t off)
{
	const uint8_t *h = buf + off;

	if (caplen < off + WIRE_GRH_LEN)
		return WIRE_TRUNCATED;
	g->ipver = h[0] >> 4;
	g->tclass = (uint8_t)((h[0] & 0xF) << 4 | h[1] >> 4);
	g->flow_label = wire_get24(h + 1) & 0xFFFFF;
	g->paylen = wire_get16(h + 4);
	g->nxthdr = h[6];
	g->hoplmt = h[7];
	memcpy(g->sgid, h + 8, 16);
	memcpy(g->dgid, h + 24, 16);
	return WIRE_OK;
}

/* The IBA transport's "next header" value in a GRH. */
#define GRH_NXTHDR_IBA 0x1B

static enum wire_status decode_rocev1(struct wire_pkt *p, const uint8_t *buf,
				      size_t caplen, size_t off)
{
	enum wire_status st = decode_grh(&p->grh, buf, caplen, off);

	if (st != WIRE_OK)
		return st;
	p->layers |= WIRE_L_GRH;
	if (p->grh.nxthdr != GRH_NXTHDR_IBA)
		return WIRE_NOT_RDMA;
	p->encap = WIRE_ENCAP_ROCEV1;
	p->icrc_start = off;
	if (p->grh.paylen < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return WIRE_MALFORMED;
	return decode_transport(p, buf, caplen, off + WIRE_GRH_LEN,
				off + WIRE_GRH_LEN + p->grh.paylen - WIRE_ICRC_LEN, 0);
}

static enum wire_status decode_ib(struct wire_pkt *p, const uint8_t *buf,
				  size_t caplen)
{
	struct wire_lrh *l = &p->lrh;
	size_t bth_off = WIRE_LRH_LEN, end;
	enum wire_status st;

	if (caplen < WIRE_LRH_LEN)
		return WIRE_TRUNCATED;
	l->vl = buf[0] >> 4;
	l->lver = buf[0] & 0xF;
	l->sl = buf[1] >> 4;
	l->lnh = buf[1] & 3;
	l->dlid = wire_get16(buf + 2);
	l->pkt_len = wire_get16(buf + 4) & 0x7FF;
	l->slid = wire_get16(buf + 6);
	p->layers |= WIRE_L_LRH;
	p->icrc_start = 0;
	if (l->lnh < 2)
		return WIRE_NOT_RDMA;	/* raw or IPv6 over IB: no BTH */
	if (l->lnh == 3) {
		st = decode_grh(&p->grh, buf, caplen, WIRE_LRH_LEN);
		if (st != WIRE_OK)
			return st;
		p->layers |= WIRE_L_GRH;
		if (p->grh.nxthdr != GRH_NXTHDR_IBA)
			return WIRE_NOT_RDMA;
		bth_off += WIRE_GRH_LEN;
	}
	p->encap = WIRE_ENCAP_IB;
	end = (size_t)l->pkt_len * 4;	/* LRH through ICRC */
	if (end < bth_off + WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return WIRE_MALFORMED;
	return decode_transport(p, buf, caplen, bth_off, end - WIRE_ICRC_LEN,
				WIRE_VCRC_LEN);
}

static bool is_roce_udp(const struct wire_udp *u, uint16_t port)
{
	/* Destination first: real peers always send to 4791, while the
	 * source port carries flow entropy and can be anything (even 69,
	 * which fools dissectors that try the lower port first). */
	return u->dport == port || u->sport == port;
}

/* UDP at off with `avail` bytes of IP payload, then BTH. */
static enum wire_status decode_udp(struct wire_pkt *p, const uint8_t *buf,
				   size_t caplen, size_t off, size_t avail,
				   uint16_t port)
{
	const uint8_t *h = buf + off;

	if (caplen < off + WIRE_UDP_LEN)
		return WIRE_TRUNCATED;
	p->udp.sport = wire_get16(h);
	p->udp.dport = wire_get16(h + 2);
	p->udp.len = wire_get16(h + 4);
	p->udp.csum = wire_get16(h + 6);
	p->layers |= WIRE_L_UDP;
	if (!is_roce_udp(&p->udp, port))
		return WIRE_NOT_RDMA;
	p->encap = WIRE_ENCAP_ROCEV2;
	if (p->udp.len > avail ||
	    p->udp.len < WIRE_UDP_LEN + WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return WIRE_MALFORMED;
	return decode_transport(p, buf, caplen, off + WIRE_UDP_LEN,
				off + p->udp.len - WIRE_ICRC_LEN, 0);
}

#define IPPROTO_UDP_NUM 17

static enum wire_status decode_ipv4(struct wire_pkt *p, const uint8_t *buf,
				    size_t caplen, size_t off, uint16_t port)
{
	const uint8_t *h = buf + off;
	struct wire_ipv4 *ip = &p->ip4;

	if (caplen < off + WIRE_IPV4_LEN)
		return WIRE_TRUNCATED;
	if (h[0] >> 4 != 4)
		return WIRE_MALFORMED;
	ip->ihl = (uint8_t)((h[0] & 0xF) * 4);
	ip->dscp = h[1] >> 2;
	ip->ecn = h[1] & 3;
	ip->total_len = wire_get16(h + 2);
	ip->id = wire_get16(h + 4);
	ip->frag = wire_get16(h + 6);
	ip->ttl = h[8];
	ip->proto = h[9];
	ip->csum = wire_get16(h + 10);
	memcpy(ip->src, h + 12, 4);
	memcpy(ip->dst, h + 16, 4);
	p->layers |= WIRE_L_IPV4;
	p->icrc_start = off;
	if (ip->ihl < WIRE_IPV4_LEN || ip->total_len < ip->ihl)
		return WIRE_MALFORMED;
	/* Not UDP, or a fragment (RoCE is never fragmented). */
	if (ip->proto != IPPROTO_UDP_NUM || (ip->frag & 0x3FFF))
		return WIRE_NOT_RDMA;
	return decode_udp(p, buf, caplen, off + ip->ihl,
			  (size_t)ip->total_len - ip->ihl, port);
}

static enum wire_status decode_ipv6(struct wire_pkt *p, const uint8_t *buf,
				    size_t caplen, size_t off, uint16_t port)
{
	const uint8_t *h = buf + off;
	struct wire_ipv6 *ip = &p->ip6;
	uint8_t tclass;

	if (caplen < off + WIRE_IPV6_LEN)
		return WIRE_TRUNCATED;
	if (h[0] >> 4 != 6)
		return WIRE_MALFORMED;
	tclass = (uint8_t)((h[0] & 0xF) << 4 | h[1] >> 4);
	ip->dscp = tclass >> 2;
	ip->ecn = tclass & 3;
	ip->flow_label = wire_get24(h + 1) & 0xFFFFF;
	ip->payload_len = wire_get16(h + 4);
	ip->next_header = h[6];
	ip->hop_limit = h[7];
	memcpy(ip->src, h + 8, 16);
	memcpy(ip->dst, h + 24, 16);
	p->layers |= WIRE_L_IPV6;
	p->icrc_start = off;
	if (ip->next_header != IPPROTO_UDP_NUM)
		return WIRE_NOT_RDMA;	/* RoCEv2 uses no extension headers */
	return decode_udp(p, buf, caplen, off + WIRE_IPV6_LEN, ip->payload_len, port);
}

static enum wire_status decode_ip(struct wire_pkt *p, const uint8_t *buf,
				  size_t caplen, size_t off, uint16_t port)
{
	if (caplen < off + 1)
		return WIRE_TRUNCATED;
	switch (buf[off] >> 4) {
	case 4: return decode_ipv4(p, buf, caplen, off, port);
	case 6: return decode_ipv6(p, buf, caplen, off, port);
	}
	return WIRE_NOT_RDMA;
}

static enum wire_status decode_eth(struct wire_pkt *p, const uint8_t *buf,
				   size_t caplen, uint16_t port)
{
	size_t off = WIRE_ETH_LEN;
	uint16_t type;

	if (caplen < WIRE_ETH_LEN)
		return WIRE_TRUNCATED;
	memcpy(p->eth.dst, buf, 6);
	memcpy(p->eth.src, buf + 6, 6);
	type = wire_get16(buf + 12);
	p->layers |= WIRE_L_ETH;
	while (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) {
		struct wire_vlan *v;

		if (p->nvlan == WIRE_MAX_VLAN)
			return WIRE_NOT_RDMA;
		if (caplen < off + WIRE_VLAN_LEN)
			return WIRE_TRUNCATED;
		v = &p->vlan[p->nvlan++];
		v->tpid = type;
		v->pcp = buf[off] >> 5;
		v->dei = (buf[off] >> 4) & 1;
		v->vid = wire_get16(buf + off) & 0xFFF;
		type = wire_get16(buf + off + 2);
		off += WIRE_VLAN_LEN;
		p->layers |= WIRE_L_VLAN;
	}
	p->eth.ethertype = type;
	switch (type) {
	case ETHERTYPE_IPV4: return decode_ipv4(p, buf, caplen, off, port);
	case ETHERTYPE_IPV6: return decode_ipv6(p, buf, caplen, off, port);
	case ETHERTYPE_ROCEV1: return decode_rocev1(p, buf, caplen, off);
	}
	return WIRE_NOT_RDMA;
}

enum wire_status wire_decode_bth(struct wire_pkt *p, const uint8_t *buf,
				 size_t len)
{
	/* The transport fields alone: the soft engine decodes every packet it
	 * receives this way, and zeroing the frame layers too cost as much
	 * as the decoding. */
	memset(&p->bth, 0, sizeof(*p) - offsetof(struct wire_pkt, bth));
	p->layers = 0;
	p->encap = WIRE_ENCAP_ROCEV2;
	if (len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return WIRE_MALFORMED;
	return decode_transport(p, buf, len, 0, len - WIRE_ICRC_LEN, 0);
}

enum wire_status wire_decode(struct wire_pkt *p, const uint8_t *buf,
			     size_t caplen, enum wire_link link,
			     uint16_t roce_port)
{
	memset(p, 0, sizeof(*p));	/* every layer, whatever the link */
	if (link == WIRE_LINK_BTH)
		return wire_decode_bth(p, buf, caplen);
	switch (link) {
	case WIRE_LINK_ETH: return decode_eth(p, buf, caplen, roce_port);
	case WIRE_LINK_IP: return decode_ip(p, buf, caplen, 0, roce_port);
	case WIRE_LINK_IB: return decode_ib(p, buf, caplen);
	case WIRE_LINK_GRH: return decode_rocev1(p, buf, caplen, 0);
	default: break;
	}
	return WIRE_NOT_RDMA;
}

uint16_t wire_ipv4_csum(const uint8_t *hdr, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += wire_get16(hdr + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}
