// SPDX-License-Identifier: MIT
/*
 * The receive side's ICRC check.  The ICRC covers the IPv4 ID, which a UDP
 * socket does not show, so the check must guess it, and every guess it
 * accepts spends some of the CRC's strength:
 *
 *  - the ID the link suggests (segment k of a GRO aggregate carries k:
 *    this engine's GSO sends), and ID 0 (DF senders that leave it zero):
 *    two guesses, as strong as a plain CRC-32;
 *  - any other ID is solved from the ICRC (CRC-32 is affine in the
 *    message bits, 16 unknowns in 32 equations).  A random corruption
 *    solves to *some* ID once in 2^16, so a solved ID is accepted only
 *    where a real sender's would be: below SOFT_GSO_MAX_SEGS (this
 *    engine's GSO segments when nobody aggregated them), or close after
 *    the last ID this QP, or any QP of the same peer host, accepted (rxe
 *    and the kernel count IDs up per destination, and after an idle spell
 *    jump ahead by up to one per jiffy: __ip_select_ident).  A corruption
 *    then also has to land in one of those windows, about 2^-21 in all.
 *    A peer whose IDs jumped elsewhere is believed at its second packet
 *    that follows on from the first.
 */
#include <string.h>

#include "bytes_le.h"
#include "icrc.h"
#include "soft.h"

/* How far a peer's IDs may run ahead between two accepted packets (its
 * other QPs' packets and our losses in between), plus one per elapsed
 * millisecond (HZ <= 1000), and how far a reordered packet's may lag. */
#define ID_AHEAD 1024
#define ID_BEHIND 256

/* Whether a solved ID follows on from what tracker t has seen. */
static bool id_follows(struct soft_id_track *t, uint16_t id, uint64_t now_ns)
{
	uint64_t ahead;

	if (!t->known) {
		t->known = true;
		t->last = id;
		t->last_ns = now_ns;
		return true;
	}
	ahead = ID_AHEAD + (now_ns - t->last_ns) / 1000000;
	if ((uint16_t)(id - t->last) <= ahead ||
	    (t->pending_valid && (uint16_t)(id - t->pending) - 1u < ID_AHEAD)) {
		t->last = id;
		t->last_ns = now_ns;
		t->pending_valid = false;
		return true;
	}
	if ((uint16_t)(t->last - id) <= ID_BEHIND)
		return true;	/* reordered: the window stays where it is */
	/* Refused, but remembered: if the next one follows on, the peer moved. */
	t->pending = id;
	t->pending_valid = true;
	return false;
}

/* The tracker of the peer host at addr: found, else the least recently
 * used slot taken over. */
static struct soft_id_track *peer_ids(struct soft_dev *d, const struct soft_addr *addr)
{
	struct soft_id_track *oldest = &d->peer_ids[0];

	for (int i = 0; i < SOFT_PEER_IDS; i++) {
		struct soft_id_track *t = &d->peer_ids[i];

		if (t->used && !memcmp(t->addr, addr->ip, 16))
			return t;
		if (!t->used || (oldest->used && t->last_ns < oldest->last_ns))
			oldest = t;
	}
	memset(oldest, 0, sizeof(*oldest));
	memcpy(oldest->addr, addr->ip, 16);
	oldest->used = true;
	oldest->last_ns = d->now_ns;
	return oldest;
}

/*
 * Whether a solved ID is one the sender could have used now.  Kernels
 * count IDs per destination host (rxe: every QP of the host draws from one
 * counter), a NIC may count per QP: an ID that follows on from either the
 * QP's or the peer host's is taken, and both trackers learn from every
 * packet.  Without the QP's tracker (a packet no QP will take) any ID is.
 * Only solved IDs come here: the host is looked up for them alone.
 */
static bool id_plausible(struct soft_dev *d, struct soft_id_track *qp,
			 const struct soft_addr *from, uint16_t id)
{
	bool by_qp, by_host;

	if (id < SOFT_GSO_MAX_SEGS || !qp)
		return true;
	by_qp = id_follows(qp, id, d->now_ns);
	by_host = id_follows(peer_ids(d, from), id, d->now_ns);
	return by_qp || by_host;
}

static bool same_addr(const struct soft_addr *a, const struct soft_addr *b)
{
	return a->port == b->port && a->v6 == b->v6 && memcmp(a->ip, b->ip, sizeof(a->ip)) == 0;
}

/* The CRC state after pk's pseudo-header: the segments of an aggregate
 * share it, so it is computed once for them. */
static uint32_t pseudo_crc(struct soft_dev *d, const struct soft_pkt *pk)
{
	if (!d->rx_pseudo.valid || d->rx_pseudo.len != pk->len ||
	    !same_addr(&d->rx_pseudo.src, &pk->src) || !same_addr(&d->rx_pseudo.dst, &pk->dst)) {
		d->rx_pseudo.src = pk->src;
		d->rx_pseudo.dst = pk->dst;
		d->rx_pseudo.len = pk->len;
		d->rx_pseudo.crc = soft_pkt_pseudo_crc(pk);
		d->rx_pseudo.valid = true;
	}
	return d->rx_pseudo.crc;
}

bool soft_rx_icrc_ok(struct soft_dev *d, struct soft_id_track *qp, struct soft_pkt *pk)
{
	uint8_t *bytes = soft_pkt_bytes(pk);
	uint32_t want, crc0, pseudo;
	uint16_t id;

	if (pk->len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return false;
	want = get_le32(bytes + pk->len - 4);
	pseudo = pseudo_crc(d, pk);
	if (soft_pkt_icrc_from(pk, bytes, pseudo, pk->ip_id) == want)
		return true;
	if (pk->src.v6)
		return false;	/* no ID in an IPv6 header */
	crc0 = soft_pkt_icrc_from(pk, bytes, pseudo, 0);
	if (crc0 == want) {
		pk->ip_id = 0;
		return true;
	}
	if (!icrc_solve_ipv4_id(&d->id_basis, pk->len, crc0, want, &id) ||
	    soft_pkt_icrc_from(pk, bytes, pseudo, id) != want ||
	    !id_plausible(d, qp, &pk->src, id))
		return false;
	pk->ip_id = id;		/* what a UD receive's GRH shows */
	return true;
}
