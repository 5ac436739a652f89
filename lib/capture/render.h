/* SPDX-License-Identifier: MIT */
/*
 * Rendering of decoded packets and flow summaries: one text line per
 * packet (tcpdump style), one JSON object per packet, and the summary as
 * a table or a JSON object.  Formatting only: callers decide where it goes.
 */
#ifndef RDMAKIT_RENDER_H
#define RDMAKIT_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "flows.h"
#include "icrc.h"
#include "wire.h"

struct pkt_view {
	uint64_t frame;		/* 1-based record number, as tshark counts */
	uint64_t ts_ns;		/* capture time, ns since the epoch */
	const struct wire_pkt *p;
	enum wire_status status;
	enum crc_verdict icrc, vcrc;
	size_t gso_index, gso_count;	/* segment i of n, when split */
	size_t wire_len;	/* original frame length */
};

/* Caches the time-of-day prefix between packets of the same second. */
struct time_cache {
	int64_t sec;
	char text[16];
	bool utc;
};

/* One line (no newline); returns its length. verbose: every field. */
size_t render_packet_line(char *buf, size_t cap, const struct pkt_view *v, bool verbose,
			  struct time_cache *tc);
/* The JSON object of one packet (keys in man rdmakit-capture). */
json_t *render_packet_json(const struct pkt_view *v, bool verbose);

/* The summary: an object with totals, "flows" and "problems". */
json_t *render_summary_json(const struct flow_table *t);
/* The same as a table plus plain-words findings, to out. */
void render_summary_text(FILE *out, const struct flow_table *t);

const char *render_ecn_name(uint8_t ecn);

#endif
