// SPDX-License-Identifier: MIT
/* Splitting UDP GSO aggregates of RoCEv2 packets; see gso.h. */
#include <string.h>

#include "bytes_le.h"
#include "gso.h"
#include "icrc.h"

/* ICRC check of one segment with the headers it travels with after
 * segmentation.  The IPv4 ID of segment k is tried as first + k (what the
 * kernel's UDP segmentation writes) and as the first ID unchanged. */
static bool segment_ok(const uint8_t *frame, const struct wire_pkt *p, size_t k,
		       size_t bth, size_t seg_len, size_t *icrc_bytes)
{
	const uint8_t *ip = frame + p->icrc_start;
	bool v6 = p->layers & WIRE_L_IPV6;
	size_t hlen = v6 ? WIRE_IPV6_LEN : p->ip4.ihl;
	uint8_t hdr[60], udp[WIRE_UDP_LEN];
	uint32_t want;

	if (hlen > sizeof(hdr) || seg_len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return false;
	want = get_le32(frame + bth + seg_len - WIRE_ICRC_LEN);
	memcpy(hdr, ip, hlen);
	memcpy(udp, ip + hlen, WIRE_UDP_LEN);
	wire_put16(udp + 4, (uint16_t)(WIRE_UDP_LEN + seg_len));
	if (v6) {
		wire_put16(hdr + 4, (uint16_t)(WIRE_UDP_LEN + seg_len));
		*icrc_bytes += seg_len;
		return icrc_rocev2(hdr, hlen, udp, frame + bth, seg_len - WIRE_ICRC_LEN) == want;
	}
	wire_put16(hdr + 2, (uint16_t)(hlen + WIRE_UDP_LEN + seg_len));
	for (int attempt = 0; attempt < 2; attempt++) {
		wire_put16(hdr + 4, (uint16_t)(p->ip4.id + (attempt ? 0 : k)));
		*icrc_bytes += seg_len;
		if (icrc_rocev2(hdr, hlen, udp, frame + bth, seg_len - WIRE_ICRC_LEN) == want)
			return true;
	}
	return false;
}

/* Acknowledgements and CNPs: a responder batches them, and their PSNs do
 * not count up by one (ACKs coalesce, a NAK names the PSN it expected, a
 * CNP carries none). */
static bool is_ack_like(uint8_t op)
{
	return op == 0x11 || op == 0x12 || op == 0x81;
}

/* Could a BTH at h continue the stream of the first packet?  Requests and
 * READ responses: the next PSN; acknowledgements: another of their kind. */
static bool plausible_next(const uint8_t *h, const struct wire_bth *first)
{
	if (!wire_opcode_info(h[0]) || wire_get24(h + 5) != first->dqpn ||
	    wire_get16(h + 2) != first->pkey)
		return false;
	if (is_ack_like(first->opcode))
		return is_ack_like(h[0]);
	return wire_get24(h + 9) == wire_psn_add(first->psn, 1);
}

bool gso_split(const uint8_t *frame, const struct wire_pkt *p, struct gso_split *s)
{
	size_t start = p->bth_off, total, len;

	if (p->encap != WIRE_ENCAP_ROCEV2 || !(p->layers & WIRE_L_UDP) || p->cut)
		return false;
	total = p->icrc_off + WIRE_ICRC_LEN - start;
	memset(s, 0, sizeof(*s));
	/* Packets are whole 4-byte words (the pad makes them so).  Only the
	 * first GSO_MAX_CANDIDATES places where a plausible next BTH sits get
	 * an ICRC check: a crafted frame with one every few bytes would
	 * otherwise cost ICRCs quadratic in its length. */
	for (len = WIRE_BTH_LEN + WIRE_ICRC_LEN; len + WIRE_BTH_LEN <= total; len += 4) {
		if (!plausible_next(frame + start + len, &p->bth))
			continue;
		if (segment_ok(frame, p, 0, start, len, &s->icrc_bytes))
			break;
		if (++s->candidates == GSO_MAX_CANDIDATES)
			return false;
	}
	if (len + WIRE_BTH_LEN > total)
		return false;
	s->seg_len = len;
	for (size_t off = 0; off < total; off += len) {
		size_t this_len = total - off < len ? total - off : len;

		if (s->nseg == GSO_MAX_SEGS ||
		    !segment_ok(frame, p, s->nseg, start + off, this_len, &s->icrc_bytes))
			return false;
		s->off[s->nseg] = start + off;
		s->len[s->nseg] = this_len;
		s->nseg++;
	}
	return s->nseg > 1;
}

enum wire_status gso_segment(const uint8_t *frame, const struct wire_pkt *agg,
			     const struct gso_split *s, size_t i, struct wire_pkt *out)
{
	struct wire_pkt t;
	enum wire_status st = wire_decode_bth(&t, frame + s->off[i], s->len[i]);
	size_t base = s->off[i];

	*out = *agg;
	out->bth = t.bth;
	out->op = t.op;
	out->ext = t.ext;
	out->rdeth = t.rdeth;
	out->deth = t.deth;
	out->xrceth = t.xrceth;
	out->feth = t.feth;
	out->reth = t.reth;
	out->atomiceth = t.atomiceth;
	out->aeth = t.aeth;
	out->atomicacketh = t.atomicacketh;
	out->immdt = t.immdt;
	out->ieth = t.ieth;
	out->bth_off = base;
	out->payload_off = base + t.payload_off;
	out->payload_len = t.payload_len;
	out->icrc_off = base + t.icrc_off;
	out->icrc = t.icrc;
	out->udp.len = (uint16_t)(WIRE_UDP_LEN + s->len[i]);
	return st;
}
