/* SPDX-License-Identifier: MIT */
/*
 * Invariant CRC (ICRC) of RoCEv2, RoCEv1 and InfiniBand packets, and the
 * InfiniBand variant CRC (VCRC).
 *
 * The ICRC is CRC-32 (IEEE, as zlib's crc32) over a masked copy of the
 * packet, stored little-endian in the 4 bytes before the end:
 *   RoCEv2: 8 x 0xFF (stands for the LRH), the IP header with IPv4
 *           ToS/TTL/checksum or IPv6 traffic class/flow label/hop limit set
 *           to 1s, the UDP header with its checksum set to 1s, the BTH with
 *           byte 4 (FECN/BECN/reserved) set to 1s, then the rest up to the
 *           ICRC.  The IPv4 ID is covered.
 *   RoCEv1 and IB with a GRH: 8 x 0xFF for the LRH, the GRH with traffic
 *           class, flow label and hop limit set to 1s, BTH byte 4 masked.
 *   IB, LRH only: the LRH with its VL nibble set to 1s, BTH byte 4 masked.
 * The VCRC is CRC-16 (poly 0x100B, reflected, init/xorout 0xFFFF) over the
 * LRH through the ICRC, stored little-endian.
 */
#ifndef RDMAKIT_ICRC_H
#define RDMAKIT_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/*
 * RoCEv2 ICRC from its parts: the IP header (ip_hlen bytes, v4 or v6 by
 * its version nibble), the 8-byte UDP header, and `tlen` bytes from the
 * BTH up to (not including) the ICRC.  The parts need not be contiguous,
 * so a sender can checksum a payload in place behind a header template.
 */
uint32_t icrc_rocev2(const uint8_t *ip, size_t ip_hlen, const uint8_t *udp,
		     const uint8_t *bth, size_t tlen);
/*
 * The RoCEv2 ICRC's masked pseudo-header in place: h holds 8 bytes for the
 * LRH, then an IP header of ip_hlen bytes (v4 or v6 by its version
 * nibble), then the UDP header.  Sets the LRH stand-in and every field that
 * may change on the way to 1s; returns the pseudo-header's length.  For a
 * sender that keeps room before its packets, so the ICRC is one CRC pass.
 */
size_t icrc_mask_rocev2_headers(uint8_t *h, size_t ip_hlen);
/* RoCEv1, or IB with a GRH: the 40-byte GRH, then tlen bytes from the BTH. */
uint32_t icrc_grh(const uint8_t *grh, const uint8_t *bth, size_t tlen);
/* IB with an LRH and no GRH: the 8-byte LRH, then tlen bytes from the BTH. */
uint32_t icrc_lrh(const uint8_t *lrh, const uint8_t *bth, size_t tlen);

/* The ICRC a decoded frame should carry; the frame must hold p->icrc_off bytes. */
uint32_t icrc_of(const uint8_t *frame, const struct wire_pkt *p);
/* VCRC over LRH..ICRC of a decoded IB frame (must hold p->icrc_off + 4 bytes). */
uint16_t vcrc_of(const uint8_t *frame, const struct wire_pkt *p);

enum crc_verdict {
	CRC_OK,
	CRC_BAD,
	CRC_UNCHECKED,	/* the capture cut the packet short */
	CRC_NONE,	/* this packet has no such CRC */
};

/* Verifies a decoded frame's stored ICRC (and VCRC) against the computed one. */
enum crc_verdict icrc_verify(const uint8_t *frame, const struct wire_pkt *p);
enum crc_verdict vcrc_verify(const uint8_t *frame, const struct wire_pkt *p);
const char *crc_verdict_str(enum crc_verdict v);

/*
 * How the CRC state after a RoCEv2 IPv4 pseudo-header (the 8 + 20 + 8
 * masked bytes an ICRC starts with) changes when the header's IPv4 ID is
 * ip_id rather than 0.  CRC-32 is affine, so packets alike but for the ID
 * (a GSO run's segments, each with the ID the kernel gives segment k)
 * share one pass over the pseudo-header.
 */
uint32_t icrc_ipv4_id_delta(uint16_t ip_id);

/*
 * A CRC state change that has the effect of the ICRC's mask on the BTH's
 * reserved byte (resv, as the packet holds it, read as 0xFF), for a CRC
 * pass that starts at the BTH: XOR it into the state passed to crc32_eth()
 * over the packet's own bytes.  A change to the four bytes after a state
 * is a change of the state, and the reserved byte's effect equals such a
 * change (the CRC register's step is invertible), so the mask needs no
 * store into the bytes the CRC's wide loads read next.
 */
uint32_t icrc_bth_resv_delta(uint8_t resv);

/*
 * The IPv4 ID of a RoCEv2 packet, solved from its ICRC.  The ICRC covers
 * the ID (and the DF bit), which a UDP socket does not show; CRC-32 is
 * affine in the message bits, so with crc0 the ICRC computed for ID 0,
 * the ID that yields the stored ICRC `want` follows by linear algebra over
 * 16 unknowns and 32 equations.  A random corruption also solves to some
 * ID once in 2^16.  udp_payload_len: the bytes from the BTH through the
 * ICRC.  True with *id when an ID does; b caches the basis for one length.
 */
struct icrc_id_basis {
	bool valid;
	size_t after;			/* bytes CRC'd after the ID */
	uint32_t v[32], m[32];		/* ICRC changes and the ID bits making them */
};
bool icrc_solve_ipv4_id(struct icrc_id_basis *b, size_t udp_payload_len, uint32_t crc0,
			uint32_t want, uint16_t *id);

/* A RoCEv2-over-IPv4 packet as a UDP socket shows it: its UDP payload
 * (BTH through ICRC), the addresses and ports.  Which IPv4 ID, with DF
 * set or clear, makes its ICRC hold: true with *id and *df; false when
 * none does (a bad ICRC, or headers not as the socket says). */
bool icrc_solve_udp_rocev2(struct icrc_id_basis *b, const uint8_t *payload, size_t len,
			   const uint8_t src[4], const uint8_t dst[4], uint16_t sport,
			   uint16_t dport, uint16_t *id, bool *df);

/* Writes v little-endian, as the ICRC/VCRC are stored. */
static inline void icrc_store(uint8_t *at, uint32_t v)
{
	at[0] = (uint8_t)v; at[1] = (uint8_t)(v >> 8);
	at[2] = (uint8_t)(v >> 16); at[3] = (uint8_t)(v >> 24);
}

#endif
