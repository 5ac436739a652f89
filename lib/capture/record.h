/* SPDX-License-Identifier: MIT */
/*
 * The per-record capture pipeline, once: link layer and wire decode,
 * ICRC/VCRC verdicts, a UDP GSO aggregate split into its segments, flow
 * accounting, and each resulting packet handed to the caller's emit
 * function.  `rdmakit capture` and the fuzz targets both run it, so the
 * fuzzer exercises what users run.  It prints nothing itself.
 */
#ifndef RDMAKIT_RECORD_H
#define RDMAKIT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flows.h"
#include "render.h"

struct capture_pipe {
	struct flow_table *flows;	/* also counts non-RDMA and malformed records */
	int dlt;			/* the file's or interface's link type */
	uint16_t port;			/* RoCEv2 UDP port */
	bool no_icrc;			/* --no-icrc: no CRC verdicts, no GSO split */
	/* Each packet as it is decoded; v and what it points to live for the call. */
	void (*emit)(void *ctx, const struct pkt_view *v);
	void *ctx;
	uint64_t rdma_packets;		/* packets emitted with a BTH, segments counted */
};

/* One record (frame_no counts every record read, 1-based); false when it
 * was not RDMA (counted in flows->non_rdma, nothing emitted). */
bool capture_record(struct capture_pipe *cp, uint64_t frame_no, uint64_t ts_ns,
		    const uint8_t *data, size_t caplen, size_t wire_len);

#endif
