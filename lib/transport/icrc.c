// SPDX-License-Identifier: MIT
/*
 * ICRC/VCRC per IBTA vol. 1 7.8 and Annex A17.  The variant fields are
 * masked in a small stack copy of the headers; the payload is checksummed
 * in place, chaining the CRC-32 across the pieces.
 */
#include <string.h>

#include "crc32.h"
#include "icrc.h"

static const uint8_t lrh_stand_in[8] = {
	0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

/* CRC over the BTH with byte 4 masked, then the rest of the transport. */
static uint32_t crc_transport(uint32_t crc, const uint8_t *bth, size_t tlen)
{
	uint8_t b[WIRE_BTH_LEN];

	if (tlen < WIRE_BTH_LEN)
		return crc32_eth(crc, bth, tlen);	/* not a valid packet anyway */
	memcpy(b, bth, sizeof(b));
	b[4] = 0xFF;
	crc = crc32_eth(crc, b, sizeof(b));
	return crc32_eth(crc, bth + WIRE_BTH_LEN, tlen - WIRE_BTH_LEN);
}

/* A GRH and an IPv6 header share the layout of their masked fields. */
static void mask_ipv6_like(uint8_t *h)
{
	h[0] |= 0x0F;			/* traffic class, high nibble */
	h[1] = h[2] = h[3] = 0xFF;	/* traffic class low nibble, flow label */
	h[7] = 0xFF;			/* hop limit */
}

/* Bytes of the transport copied after the masked headers: a packet's ICRC
 * is then two CRC passes, not four short ones, each of which costs the
 * CRC library a call's fixed price.  (The soft engine, which pays this per
 * packet on both ends, makes it one pass: soft_pkt_icrc.) */
#define ICRC_HEAD_EXTRA 64

size_t icrc_mask_rocev2_headers(uint8_t *h, size_t ip_hlen)
{
	uint8_t *iph = h + sizeof(lrh_stand_in);

	memcpy(h, lrh_stand_in, sizeof(lrh_stand_in));
	if (ip_hlen && iph[0] >> 4 == 6) {
		mask_ipv6_like(iph);
	} else if (ip_hlen >= WIRE_IPV4_LEN) {
		iph[1] = 0xFF;			/* ToS: DSCP and ECN */
		iph[8] = 0xFF;			/* TTL */
		iph[10] = iph[11] = 0xFF;	/* header checksum */
	}
	iph[ip_hlen + 6] = iph[ip_hlen + 7] = 0xFF;	/* UDP checksum */
	return sizeof(lrh_stand_in) + ip_hlen + WIRE_UDP_LEN;
}

uint32_t icrc_rocev2(const uint8_t *ip, size_t ip_hlen, const uint8_t *udp,
		     const uint8_t *bth, size_t tlen)
{
	/* LRH stand-in, the largest IPv4 header (or IPv6), UDP, then the
	 * start of the transport with the BTH's reserved byte masked. */
	uint8_t h[sizeof(lrh_stand_in) + 60 + WIRE_UDP_LEN + ICRC_HEAD_EXTRA];
	uint8_t *t;
	size_t head;

	if (ip_hlen > 60)
		ip_hlen = 60;
	memcpy(h + sizeof(lrh_stand_in), ip, ip_hlen);
	memcpy(h + sizeof(lrh_stand_in) + ip_hlen, udp, WIRE_UDP_LEN);
	t = h + icrc_mask_rocev2_headers(h, ip_hlen);
	if (tlen < WIRE_BTH_LEN)	/* not a valid packet anyway */
		return crc_transport(crc32_eth(0, h, (size_t)(t - h)), bth, tlen);
	head = tlen < ICRC_HEAD_EXTRA ? tlen : ICRC_HEAD_EXTRA;
	memcpy(t, bth, head);
	t[4] = 0xFF;	/* BTH reserved byte */
	return crc32_eth(crc32_eth(0, h, (size_t)(t - h) + head), bth + head, tlen - head);
}

uint32_t icrc_grh(const uint8_t *grh, const uint8_t *bth, size_t tlen)
{
	uint8_t g[WIRE_GRH_LEN];
	uint32_t crc;

	memcpy(g, grh, sizeof(g));
	mask_ipv6_like(g);
	crc = crc32_eth(0, lrh_stand_in, sizeof(lrh_stand_in));
	crc = crc32_eth(crc, g, sizeof(g));
	return crc_transport(crc, bth, tlen);
}

uint32_t icrc_lrh(const uint8_t *lrh, const uint8_t *bth, size_t tlen)
{
	uint8_t l[WIRE_LRH_LEN];

	memcpy(l, lrh, sizeof(l));
	l[0] |= 0xF0;	/* VL may change hop by hop */
	return crc_transport(crc32_eth(0, l, sizeof(l)), bth, tlen);
}

uint32_t icrc_of(const uint8_t *frame, const struct wire_pkt *p)
{
	const uint8_t *start = frame + p->icrc_start;
	const uint8_t *bth = frame + p->bth_off;
	size_t tlen = p->icrc_off - p->bth_off;
	size_t l3_len;

	switch (p->encap) {
	case WIRE_ENCAP_ROCEV2:
		l3_len = p->layers & WIRE_L_IPV6 ? WIRE_IPV6_LEN : p->ip4.ihl;
		return icrc_rocev2(start, l3_len, start + l3_len, bth, tlen);
	case WIRE_ENCAP_ROCEV1:
		return icrc_grh(start, bth, tlen);
	case WIRE_ENCAP_IB:
		if (p->layers & WIRE_L_GRH)
			return icrc_grh(start + WIRE_LRH_LEN, bth, tlen);
		return icrc_lrh(start, bth, tlen);
	default:
		return 0;
	}
}

uint16_t vcrc_of(const uint8_t *frame, const struct wire_pkt *p)
{
	return crc16_ib_vcrc(frame + p->icrc_start,
			     p->icrc_off + WIRE_ICRC_LEN - p->icrc_start);
}

static bool has_icrc(const struct wire_pkt *p)
{
	/* A UDP payload alone (no IP header) cannot be checked here. */
	return (p->layers & WIRE_L_BTH) &&
	       (p->encap == WIRE_ENCAP_IB || p->encap == WIRE_ENCAP_ROCEV1 ||
		(p->encap == WIRE_ENCAP_ROCEV2 && (p->layers & WIRE_L_UDP)));
}

enum crc_verdict icrc_verify(const uint8_t *frame, const struct wire_pkt *p)
{
	if (!has_icrc(p))
		return CRC_NONE;
	if (p->cut)
		return CRC_UNCHECKED;
	return icrc_of(frame, p) == p->icrc ? CRC_OK : CRC_BAD;
}

enum crc_verdict vcrc_verify(const uint8_t *frame, const struct wire_pkt *p)
{
	if (p->encap != WIRE_ENCAP_IB || !(p->layers & WIRE_L_BTH))
		return CRC_NONE;
	if (p->cut)
		return CRC_UNCHECKED;
	return vcrc_of(frame, p) == p->vcrc ? CRC_OK : CRC_BAD;
}

const char *crc_verdict_str(enum crc_verdict v)
{
	switch (v) {
	case CRC_OK: return "ok";
	case CRC_BAD: return "BAD";
	case CRC_UNCHECKED: return "unchecked";
	case CRC_NONE: return "none";
	}
	return "?";
}
