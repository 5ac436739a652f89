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
 * packet on both ends, makes it one pass per packet: soft_tx.c.) */
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

/* Entry i: the CRC-32 register (no pre- or post-inversion) over the ID's
 * two bytes holding bit i alone, then the 22 bytes that follow the ID in
 * the pseudo-header; generated from zlib's crc32() and checked against
 * crc32_eth() by tests/unit/test_crc32.c. */
static const uint32_t ipv4_id_bit_delta[16] = {
	0x9b73ead4, 0xed96d3e9, 0x005ca193, 0x00b94326,
	0x0172864c, 0x02e50c98, 0x05ca1930, 0x0b943260,
	0x81256527, 0xd93bcc0f, 0x69069e5f, 0xd20d3cbe,
	0x7f6b7f3d, 0xfed6fe7a, 0x26dcfab5, 0x4db9f56a,
};

uint32_t icrc_ipv4_id_delta(uint16_t ip_id)
{
	uint32_t d = 0;

	for (unsigned left = ip_id; left; left &= left - 1)
		d ^= ipv4_id_bit_delta[__builtin_ctz(left)];
	return d;
}

/* Entry i: the state change that equals flipping bit i of the byte four
 * bytes after the state (the BTH's reserved byte, for a pass from the
 * BTH); generated with zlib's crc32() by solving over GF(2), checked
 * against crc32_eth() by tests/unit/test_crc32.c. */
static const uint32_t bth_resv_bit_delta[8] = {
	0xdb710641, 0x6d930ac3, 0xdb261586, 0x6d3d2d4d,
	0xda7a5a9a, 0x6f85b375, 0xdf0b66ea, 0x6567cb95,
};

/* All eight bits flipped: the mask of a reserved byte that holds 0, as
 * senders write it (the XOR of the table's entries). */
#define BTH_RESV_ZERO_DELTA 0x0f6a70d9u

uint32_t icrc_bth_resv_delta(uint8_t resv)
{
	uint32_t d = BTH_RESV_ZERO_DELTA;

	/* Bits the byte already holds are not flipped by the mask. */
	for (unsigned held = resv; held; held &= held - 1)
		d ^= bth_resv_bit_delta[__builtin_ctz(held)];
	return d;
}

/* CRC-32 of `crc` followed by n zero bytes. */
static uint32_t crc32_zeros(uint32_t crc, size_t n)
{
	static const uint8_t zeros[4096];

	for (; n > sizeof(zeros); n -= sizeof(zeros))
		crc = crc32_eth(crc, zeros, sizeof(zeros));
	return crc32_eth(crc, zeros, n);
}

/* Each ID bit's change to the ICRC for messages of `after` bytes past the
 * ID, reduced to a basis (Gaussian elimination over GF(2)). */
static void id_basis(struct icrc_id_basis *b, size_t after)
{
	static const uint8_t zero2[2] = { 0, 0 };
	uint32_t c00;

	if (b->valid && b->after == after)
		return;
	memset(b, 0, sizeof(*b));
	c00 = crc32_zeros(crc32_eth(0, zero2, 2), after);
	for (int i = 0; i < 16; i++) {
		uint8_t bits[2] = { (uint8_t)((1u << i) >> 8), (uint8_t)(1u << i) };
		uint32_t v = crc32_zeros(crc32_eth(0, bits, 2), after) ^ c00;
		uint32_t m = 1u << i;

		for (int p = 31; p >= 0 && v; p--) {
			if (!(v >> p & 1))
				continue;
			if (!b->v[p]) {
				b->v[p] = v;
				b->m[p] = m;
				break;
			}
			v ^= b->v[p];
			m ^= b->m[p];
		}
	}
	b->after = after;
	b->valid = true;
}

bool icrc_solve_ipv4_id(struct icrc_id_basis *b, size_t udp_payload_len, uint32_t crc0,
			uint32_t want, uint16_t *id)
{
	/* The CRC'd message: 8 x 0xFF, the IPv4 header (the ID at its bytes
	 * 4..5, so at 12..13), the UDP header, the BTH .. before the ICRC. */
	size_t after;
	uint32_t t = crc0 ^ want, x = 0;

	if (udp_payload_len < WIRE_ICRC_LEN)
		return false;
	after = 8 + WIRE_IPV4_LEN + WIRE_UDP_LEN + udp_payload_len - WIRE_ICRC_LEN - 14;
	id_basis(b, after);
	for (int p = 31; p >= 0; p--) {
		if (!(t >> p & 1))
			continue;
		if (!b->v[p])
			return false;
		t ^= b->v[p];
		x ^= b->m[p];
	}
	*id = (uint16_t)x;
	return t == 0;
}

bool icrc_solve_udp_rocev2(struct icrc_id_basis *b, const uint8_t *payload, size_t len,
			   const uint8_t src[4], const uint8_t dst[4], uint16_t sport,
			   uint16_t dport, uint16_t *id, bool *df)
{
	uint8_t ip[WIRE_IPV4_LEN] = { 0x45 }, udp[WIRE_UDP_LEN] = { 0 };
	const uint8_t *icrc = payload + len - WIRE_ICRC_LEN;
	uint32_t want;

	if (len < WIRE_BTH_LEN + WIRE_ICRC_LEN || len > 0xFFFF - WIRE_IPV4_LEN - WIRE_UDP_LEN)
		return false;
	want = (uint32_t)icrc[0] | (uint32_t)icrc[1] << 8 | (uint32_t)icrc[2] << 16 |
	       (uint32_t)icrc[3] << 24;
	wire_put16(ip + 2, (uint16_t)(WIRE_IPV4_LEN + WIRE_UDP_LEN + len));
	ip[9] = 17;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	wire_put16(udp, sport);
	wire_put16(udp + 2, dport);
	wire_put16(udp + 4, (uint16_t)(WIRE_UDP_LEN + len));
	/* DF first: RoCEv2 senders set it. */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t crc0;

		wire_put16(ip + 6, pass ? 0 : 0x4000);
		crc0 = icrc_rocev2(ip, sizeof(ip), udp, payload, len - WIRE_ICRC_LEN);
		if (icrc_solve_ipv4_id(b, len, crc0, want, id)) {
			*df = !pass;
			return true;
		}
	}
	return false;
}
