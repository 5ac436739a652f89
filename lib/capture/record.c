// SPDX-License-Identifier: MIT
/* The per-record capture pipeline; see record.h. */
#include "gso.h"
#include "icrc.h"
#include "linktype.h"
#include "record.h"

/* A UDP GSO aggregate: each segment is a packet of its own. */
static void emit_segments(struct capture_pipe *cp, const uint8_t *frame, struct pkt_view *v,
			  const struct gso_split *s)
{
	const struct wire_pkt *agg = v->p;

	for (size_t i = 0; i < s->nseg; i++) {
		struct wire_pkt seg;

		v->status = gso_segment(frame, agg, s, i, &seg);
		v->p = &seg;
		v->icrc = CRC_OK;
		v->gso_index = i;
		v->gso_count = s->nseg;
		flows_add(cp->flows, &seg, v->ts_ns, s->len[i], CRC_OK, true);
		cp->emit(cp->ctx, v);
	}
	cp->rdma_packets += s->nseg;
}

bool capture_record(struct capture_pipe *cp, uint64_t frame_no, uint64_t ts_ns,
		    const uint8_t *data, size_t caplen, size_t wire_len)
{
	struct pkt_view v = { .frame = frame_no, .ts_ns = ts_ns, .wire_len = wire_len,
			      .icrc = CRC_NONE, .vcrc = CRC_NONE };
	struct gso_split split;
	struct cap_decoded d;
	const uint8_t *frame;

	cap_decode(cp->dlt, data, caplen, cp->port, &d);
	if (d.status == WIRE_NOT_RDMA) {
		cp->flows->non_rdma++;
		return false;
	}
	frame = data + d.frame_off;
	v.p = &d.pkt;
	v.status = d.status;
	if (d.status != WIRE_OK)
		cp->flows->malformed++;
	if (!(d.pkt.layers & WIRE_L_BTH)) {
		cp->emit(cp->ctx, &v);
		return true;
	}
	/* A frame cut inside its headers still gets a verdict: unchecked. */
	if (!cp->no_icrc && (d.status == WIRE_OK || d.status == WIRE_TRUNCATED)) {
		v.icrc = icrc_verify(frame, &d.pkt);
		v.vcrc = vcrc_verify(frame, &d.pkt);
		if (v.icrc == CRC_BAD && gso_split(frame, &d.pkt, &split)) {
			emit_segments(cp, frame, &v, &split);
			return true;
		}
	}
	cp->rdma_packets++;
	flows_add(cp->flows, &d.pkt, ts_ns, wire_len, v.icrc, false);
	cp->emit(cp->ctx, &v);
	return true;
}
