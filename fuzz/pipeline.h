/* SPDX-License-Identifier: MIT */
/*
 * `rdmakit capture`'s per-record pipeline (lib/capture/record.c, the same
 * code) with every renderer behind it, text and JSON, for the decode and
 * pcap fuzz targets.  It also
 * checks one promise of render.h: the direct NDJSON writer gives byte for
 * byte what jansson dumps of the JSON object; a difference aborts.
 */
#ifndef RDMAKIT_FUZZ_PIPELINE_H
#define RDMAKIT_FUZZ_PIPELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flows.h"
#include "render.h"

struct fuzz_pipeline {
	struct flow_table flows;
	struct time_cache tc;
	FILE *sink;		/* /dev/null: rendering runs, output goes nowhere */
	uint64_t frame;
	bool no_icrc;		/* capture --no-icrc: set by the caller per input */
	char line[4096];
};

void pipeline_init(struct fuzz_pipeline *fp);
/* One capture record of link type dlt. */
void pipeline_record(struct fuzz_pipeline *fp, int dlt, const uint8_t *data, size_t caplen,
		     size_t wire_len, uint64_t ts_ns);
/* Renders the flow summary (text and JSON) and frees the flows. */
void pipeline_finish(struct fuzz_pipeline *fp);

#endif
