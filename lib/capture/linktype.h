/* SPDX-License-Identifier: MIT */
/*
 * From a capture record to a decoded packet: strips the link-layer
 * framing a pcap link type adds (Ethernet, Linux cooked SLL/SLL2, BSD
 * loopback, raw IP, native InfiniBand, ERF) and runs the wire decoder.
 */
#ifndef RDMAKIT_LINKTYPE_H
#define RDMAKIT_LINKTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* pcap DLT values we understand (numbers as libpcap defines them). */
bool cap_dlt_supported(int dlt);
const char *cap_dlt_name(int dlt);

struct cap_decoded {
	enum wire_status status;
	size_t frame_off;	/* where the decoded frame starts in the record */
	struct wire_pkt pkt;	/* offsets relative to record + frame_off */
	bool link_ok;		/* the link-layer framing itself was readable */
};

/* Decodes one record of link type dlt.  Never reads past caplen. */
void cap_decode(int dlt, const uint8_t *rec, size_t caplen, uint16_t roce_port,
		struct cap_decoded *out);

#endif
