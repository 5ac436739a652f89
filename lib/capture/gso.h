/* SPDX-License-Identifier: MIT */
/*
 * UDP GSO/GRO aggregates.  Captured on `lo`, or on the sending side of a
 * veth before segmentation, one UDP datagram holds several complete
 * BTH..ICRC packets: all but the last exactly gso_size bytes.  Each was
 * checksummed with the IP/UDP header it will carry once segmented (its own
 * lengths, IPv4 ID = first ID + k), so the ICRCs show the boundaries.
 */
#ifndef RDMAKIT_GSO_H
#define RDMAKIT_GSO_H

#include <stddef.h>

#include "wire.h"

#define GSO_MAX_SEGS 128
/* Segment lengths tried: the ICRC work on any frame is then at most
 * 2 x (GSO_MAX_CANDIDATES + 1) x its length (two IPv4 IDs per try). */
#define GSO_MAX_CANDIDATES 8

struct gso_split {
	size_t candidates;		/* segment lengths that did not verify */
	size_t icrc_bytes;		/* bytes run through the ICRC */
	size_t nseg;
	size_t seg_len;			/* gso_size: every segment but the last */
	size_t off[GSO_MAX_SEGS];	/* BTH offset of each segment in the frame */
	size_t len[GSO_MAX_SEGS];	/* BTH..ICRC length of each */
};

/*
 * p is a decoded RoCEv2 frame (not cut) whose ICRC did not verify.
 * Returns true and fills s when the UDP payload is an aggregate whose
 * every segment's ICRC verifies.
 */
bool gso_split(const uint8_t *frame, const struct wire_pkt *p, struct gso_split *s);

/* Decodes segment i of an aggregate as a packet of its own (outer layers
 * from the aggregate, offsets relative to the frame). */
enum wire_status gso_segment(const uint8_t *frame, const struct wire_pkt *agg,
			     const struct gso_split *s, size_t i, struct wire_pkt *out);

#endif
