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
#include "print.h"
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
/*
 * The same object as one compact JSON text (no newline), byte for byte what
 * json_dumps(render_packet_json(v, verbose), JSON_COMPACT | JSON_PRESERVE_ORDER)
 * gives, written directly; returns its length, or 0 when it did not fit in
 * cap - 1 bytes.  One exception: 64-bit values above INT64_MAX (VAs, atomic
 * operands) are exact here, while the jansson tree (signed integers only)
 * holds INT64_MAX for them.
 */
size_t render_packet_ndjson(char *buf, size_t cap, const struct pkt_view *v, bool verbose);

/* Helpers of the renderings, exposed for the tests. */
/* IPv6 text as inet_ntop() writes it; out: INET6_ADDRSTRLEN (46) bytes. */
size_t render_ipv6(char *out, const uint8_t a[16]);
/* wire_aeth_describe()'s text. */
size_t render_aeth_text(char *buf, size_t cap, uint8_t syndrome);
/* A JSON real as jansson dumps it by default ("%.17g", ".0" when integral);
 * 0 when it does not fit in cap. */
size_t render_json_real(char *out, size_t cap, double d);

/* The summary: totals, "flows" and "problems" in JSON; in text a table of
 * flows and the findings in plain words. */
void render_summary(struct printer *pr, const struct flow_table *t);

const char *render_ecn_name(uint8_t ecn);

#endif
