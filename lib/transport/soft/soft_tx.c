// SPDX-License-Identifier: MIT
/*
 * Building and sending RoCEv2 packets.  The ICRC covers the IP and UDP
 * headers the packet will travel with, so it is computed here from the
 * addresses, ports and lengths, with the IPv4 ID the kernel will write:
 * 0, because the sending sockets set DF (IP_PMTUDISC_DO).
 */
#include <string.h>
#include <time.h>

#include "icrc.h"
#include "soft.h"

uint64_t soft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t soft_icrc(const struct soft_addr *src, const struct soft_addr *dst, uint8_t ecn,
		   uint16_t ip_id, const uint8_t *udp_payload, size_t len)
{
	uint8_t ip[WIRE_IPV6_LEN], udp[WIRE_UDP_LEN];
	size_t hlen;

	if (src->v6) {
		hlen = WIRE_IPV6_LEN;
		memset(ip, 0, hlen);
		ip[0] = 0x60;	/* traffic class, flow label, hop limit: masked */
		wire_put16(ip + 4, (uint16_t)(WIRE_UDP_LEN + len));
		ip[6] = 17;
		memcpy(ip + 8, src->ip, 16);
		memcpy(ip + 24, dst->ip, 16);
	} else {
		hlen = WIRE_IPV4_LEN;
		memset(ip, 0, hlen);
		ip[0] = 0x45;
		ip[1] = ecn;	/* masked */
		wire_put16(ip + 2, (uint16_t)(WIRE_IPV4_LEN + WIRE_UDP_LEN + len));
		wire_put16(ip + 4, ip_id);
		wire_put16(ip + 6, 0x4000);	/* DF */
		ip[9] = 17;
		memcpy(ip + 12, src->ip + 12, 4);
		memcpy(ip + 16, dst->ip + 12, 4);
	}
	wire_put16(udp, src->port);
	wire_put16(udp + 2, dst->port);
	wire_put16(udp + 4, (uint16_t)(WIRE_UDP_LEN + len));
	wire_put16(udp + 6, 0);
	return icrc_rocev2(ip, hlen, udp, udp_payload, len - WIRE_ICRC_LEN);
}

void soft_pkt_seal(struct soft_pkt *pk, uint16_t ip_id)
{
	pk->ip_id = ip_id;
	icrc_store(pk->buf + pk->len - WIRE_ICRC_LEN,
		   soft_icrc(&pk->src, &pk->dst, pk->ecn, ip_id, pk->buf, pk->len));
}

void soft_tx_flush(struct soft_dev *d)
{
	int sent = 0;

	while (sent < d->tx_count) {
		int n = d->link->ops->send(d->link, d->tx + sent, d->tx_count - sent);

		if (n <= 0)
			break;	/* socket full: the packets are lost, as on a wire */
		sent += n;
	}
	if (sent < d->tx_count)
		d->ctr.drops += (uint64_t)(d->tx_count - sent);
	d->tx_count = 0;
}

struct soft_pkt *soft_tx_slot(struct soft_dev *d)
{
	if (d->tx_count == SOFT_BATCH)
		soft_tx_flush(d);
	return &d->tx[d->tx_count];
}

void soft_bth(struct soft_qp *qp, struct wire_pkt *p, uint8_t opcode, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = opcode;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
	p->bth.dqpn = qp->peer_qpn;
	p->bth.psn = psn & WIRE_PSN_MASK;
}

void soft_tx_commit(struct soft_qp *qp, struct soft_pkt *slot, struct wire_pkt *p,
		    const void *payload, uint32_t len, uint8_t ecn)
{
	struct soft_dev *d = qp->dev;
	size_t hl, pad = (4 - len % 4) % 4;

	p->bth.padcnt = (uint8_t)pad;
	hl = wire_put_transport(slot->buf, sizeof(slot->buf), p);
	if (!hl || hl + len + pad + WIRE_ICRC_LEN > sizeof(slot->buf))
		return;	/* cannot happen with the engine's own opcodes and MTU */
	if (len)
		memcpy(slot->buf + hl, payload, len);
	memset(slot->buf + hl + len, 0, pad);
	slot->len = hl + len + pad + WIRE_ICRC_LEN;
	slot->src = d->link->local;
	slot->src.port = qp->sport;
	slot->dst = qp->peer;
	slot->ecn = ecn;
	slot->ip_id = 0;
	slot->qp_slot = qp->slot;
	/* The link seals it (ICRC) once it knows the IPv4 ID it will carry. */
	d->tx_count++;
	qp->ctr.tx_packets++;
	qp->ctr.tx_bytes += slot->len;
	d->ctr.tx_packets++;
	d->ctr.tx_bytes += slot->len;
}
