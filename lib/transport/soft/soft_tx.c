// SPDX-License-Identifier: MIT
/*
 * Building and sending RoCEv2 packets.  The ICRC covers the IP and UDP
 * headers the packet will travel with, so it is computed here from the
 * addresses, ports and lengths, with the IPv4 ID the kernel will write
 * (the sending sockets set DF: 0 on a plain send, k on GSO segment k).
 * It is one CRC pass per packet: CRC libraries pay per call and for
 * short or odd-length calls, so two or four passes per packet cost twice
 * as much.  A lone packet gets the masked pseudo-header written just
 * before it; a GSO run's packets (and a received aggregate's) share one
 * CRC state after the pseudo-header, the IPv4 ID folded in
 * (icrc_ipv4_id_delta), and each makes one pass over its own bytes.
 */
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "crc32.h"
#include "icrc.h"
#include "soft.h"

uint64_t soft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Writes the masked pseudo-header (LRH stand-in, IP, UDP) a packet of
 * len bytes (BTH .. ICRC) from pk's addresses carries under IPv4 ID ip_id,
 * ending at `end`; returns its length. */
static size_t put_pseudo(const struct soft_pkt *pk, uint8_t *end, size_t len, uint16_t ip_id)
{
	size_t hlen = pk->src.v6 ? WIRE_IPV6_LEN : WIRE_IPV4_LEN;
	size_t udp_len = WIRE_UDP_LEN + len;
	uint8_t *lrh = end - (8 + hlen + WIRE_UDP_LEN), *ip = lrh + 8, *udp = ip + hlen;

	/* The headers the packet travels with; what may change on the way
	 * (ToS, TTL, checksums, ...) is masked below, so it is left zero. */
	memset(ip, 0, hlen);
	if (pk->src.v6) {
		ip[0] = 0x60;
		wire_put16(ip + 4, (uint16_t)udp_len);
		ip[6] = 17;
		memcpy(ip + 8, pk->src.ip, 16);
		memcpy(ip + 24, pk->dst.ip, 16);
	} else {
		ip[0] = 0x45;
		wire_put16(ip + 2, (uint16_t)(WIRE_IPV4_LEN + udp_len));
		wire_put16(ip + 4, ip_id);
		wire_put16(ip + 6, 0x4000);	/* DF */
		ip[9] = 17;
		memcpy(ip + 12, pk->src.ip + 12, 4);
		memcpy(ip + 16, pk->dst.ip + 12, 4);
	}
	wire_put16(udp, pk->src.port);
	wire_put16(udp + 2, pk->dst.port);
	wire_put16(udp + 4, (uint16_t)udp_len);
	return icrc_mask_rocev2_headers(lrh, hlen);
}

/* One CRC pass from `crc` over from .. the end of the len bytes at bth
 * (BTH .. ICRC, the ICRC left out), the BTH's reserved byte masked: in the
 * state when the pass starts at the BTH (no store for the CRC's loads to
 * stall on), else in place for the pass. */
static uint32_t crc_masked(uint32_t crc, uint8_t *from, uint8_t *bth, size_t len)
{
	uint8_t reserved = bth[4];

	if (from == bth)
		return crc32_eth(crc ^ icrc_bth_resv_delta(reserved), bth, len - WIRE_ICRC_LEN);
	bth[4] = 0xFF;
	crc = crc32_eth(crc, from, (size_t)(bth - from) + len - WIRE_ICRC_LEN);
	bth[4] = reserved;
	return crc;
}

/* The ICRC of the len bytes at bth (BTH .. ICRC) of pk's addresses, in one
 * pass with the pseudo-header written into the SOFT_ICRC_ROOM bytes before
 * bth. */
static uint32_t icrc_at(const struct soft_pkt *pk, uint8_t *bth, size_t len, uint16_t ip_id)
{
	if (len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return 0;	/* not a RoCEv2 packet: no ICRC holds */
	return crc_masked(0, bth - put_pseudo(pk, bth, len, ip_id), bth, len);
}

uint32_t soft_pkt_icrc(struct soft_pkt *pk, uint16_t ip_id)
{
	return icrc_at(pk, pk->frame + SOFT_ICRC_ROOM, pk->len, ip_id);	/* pk->buf */
}

/* The payload and pad after the headers at `to` (the packet's own buf, or
 * where it is staged). */
static void put_payload(const struct soft_pkt *pk, uint8_t *to)
{
	size_t end = pk->len - WIRE_ICRC_LEN;

	memcpy(to + pk->hdr_len, pk->payload, pk->payload_len);
	memset(to + pk->hdr_len + pk->payload_len, 0, end - pk->hdr_len - pk->payload_len);
}

void soft_pkt_seal(struct soft_pkt *pk, uint16_t ip_id)
{
	if (pk->payload) {
		put_payload(pk, pk->buf);
		pk->payload = NULL;
	}
	pk->ip_id = ip_id;
	icrc_store(pk->buf + pk->len - WIRE_ICRC_LEN, soft_pkt_icrc(pk, ip_id));
}

uint32_t soft_pkt_pseudo_crc(const struct soft_pkt *pk)
{
	uint8_t room[SOFT_ICRC_ROOM];
	size_t hl = put_pseudo(pk, room + sizeof(room), pk->len, 0);

	return crc32_eth(0, room + sizeof(room) - hl, hl);
}

uint32_t soft_pkt_icrc_from(const struct soft_pkt *pk, uint8_t *bytes, uint32_t pseudo_crc,
			    uint16_t ip_id)
{
	if (pk->len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return 0;	/* not a RoCEv2 packet: no ICRC holds */
	return crc_masked(pk->src.v6 ? pseudo_crc : pseudo_crc ^ icrc_ipv4_id_delta(ip_id),
			  bytes, bytes, pk->len);
}

size_t soft_pkt_stage(struct soft_pkt *pk, uint8_t *to, uint16_t ip_id, uint32_t pseudo_crc)
{
	if (pk->payload) {
		memcpy(to, pk->buf, pk->hdr_len);
		put_payload(pk, to);
	} else {
		memcpy(to, pk->buf, pk->len - WIRE_ICRC_LEN);
	}
	icrc_store(to + pk->len - WIRE_ICRC_LEN, soft_pkt_icrc_from(pk, to, pseudo_crc, ip_id));
	pk->ip_id = ip_id;
	return pk->len;
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
		d->ctr.tx_drops += (uint64_t)(d->tx_count - sent);
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
	/* Only what wire_put_transport reads: the BTH and the extended headers
	 * (the frame layers before them are the kernel's to write). */
	_Static_assert(offsetof(struct wire_pkt, bth) < offsetof(struct wire_pkt, ieth) &&
		       offsetof(struct wire_pkt, ieth) < offsetof(struct wire_pkt, icrc_start),
		       "the transport headers lie between bth and icrc_start");
	memset(&p->bth, 0, offsetof(struct wire_pkt, icrc_start) - offsetof(struct wire_pkt, bth));
	soft_bth_set(&p->bth, qp, opcode, psn);
}

/* Queues the packet in slot, its transport headers (hl bytes) written. */
static void queue_slot(struct soft_qp *qp, struct soft_pkt *slot, size_t hl,
		       const void *payload, uint32_t len, size_t pad, uint8_t ecn)
{
	struct soft_dev *d = qp->dev;

	if (!hl || hl + len + pad + WIRE_ICRC_LEN > sizeof(slot->buf))
		return;	/* cannot happen with the engine's own opcodes and MTU */
	/* The payload is copied once, by the link, where it leaves from. */
	slot->hdr_len = (uint16_t)hl;
	slot->payload = len ? payload : NULL;
	slot->payload_len = len;	/* pad: put with the payload (none without one) */
	slot->len = hl + len + pad + WIRE_ICRC_LEN;
	slot->src = d->link->local;
	slot->src.port = qp->sport;
	slot->dst = qp->peer;
	slot->ecn = ecn;
	/* What the IP header will say (the UDP link's kernel writes its own;
	 * the tests' in-process link hands these over as received). */
	slot->tos = (uint8_t)((qp->attr.tos & ~3u) | ecn);
	slot->ttl = 64;
	slot->flow_label = 0;
	slot->ip_id = 0;
	slot->qp_slot = qp->slot;
	slot->rx_bytes = NULL;
	/* The link seals it (ICRC) once it knows the IPv4 ID it will carry. */
	d->tx_count++;
	qp->ctr.tx_packets++;
	qp->ctr.tx_bytes += slot->len;
	d->ctr.tx_packets++;
	d->ctr.tx_bytes += slot->len;
}

static size_t pad_for(uint32_t len)
{
	return (4 - len % 4) % 4;
}

void soft_tx_commit(struct soft_qp *qp, struct soft_pkt *slot, struct wire_pkt *p,
		    const void *payload, uint32_t len, uint8_t ecn)
{
	p->bth.padcnt = (uint8_t)pad_for(len);
	queue_slot(qp, slot, wire_put_transport(slot->buf, sizeof(slot->buf), p), payload, len,
		   p->bth.padcnt, ecn);
}

void soft_tx_commit_bth(struct soft_qp *qp, struct soft_pkt *slot, struct wire_bth *bth,
			const void *payload, uint32_t len, uint8_t ecn)
{
	bth->padcnt = (uint8_t)pad_for(len);
	wire_put_bth(slot->buf, bth);
	queue_slot(qp, slot, WIRE_BTH_LEN, payload, len, bth->padcnt, ecn);
}
