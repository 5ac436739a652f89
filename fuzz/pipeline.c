// SPDX-License-Identifier: MIT
/* The capture pipeline for the fuzz targets; see pipeline.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pipeline.h"
#include "record.h"

void pipeline_init(struct fuzz_pipeline *fp)
{
	static FILE *devnull;

	memset(fp, 0, sizeof(*fp));
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fp->sink = devnull;
	flows_init(&fp->flows);
}

/* jansson integers are signed: the tree form clamps 64-bit values above
 * INT64_MAX (render.h), so the two JSON writers agree only below that. */
static bool fits_json_integer(const struct pkt_view *v)
{
	const struct wire_pkt *p = v->p;
	const uint64_t vals[] = { v->frame, v->ts_ns, v->wire_len, p->reth.va, p->atomiceth.va,
				  p->atomiceth.swap_add, p->atomiceth.compare,
				  p->atomicacketh.orig };

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		if (vals[i] > INT64_MAX)
			return false;
	return true;
}

/* Renders one packet every way capture can, and compares the two JSON writers. */
static void render_all(struct fuzz_pipeline *fp, const struct pkt_view *v)
{
	for (int verbose = 0; verbose < 2; verbose++) {
		size_t n = render_packet_line(fp->line, sizeof(fp->line), v, verbose, &fp->tc);
		json_t *o = render_packet_json(v, verbose);
		char *ref = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

		fwrite(fp->line, 1, n, fp->sink);
		n = render_packet_ndjson(fp->line, sizeof(fp->line), v, verbose);
		if (n && ref && fits_json_integer(v) && (strlen(ref) != n || memcmp(ref, fp->line, n))) {
			fprintf(stderr, "render_packet_ndjson differs from json_dumps:\n  %.*s\n  %s\n",
				(int)n, fp->line, ref);
			abort();
		}
		free(ref);
		json_decref(o);
	}
}

static void emit_cb(void *ctx, const struct pkt_view *v)
{
	render_all(ctx, v);
}

void pipeline_record(struct fuzz_pipeline *fp, int dlt, const uint8_t *data, size_t caplen,
		     size_t wire_len, uint64_t ts_ns)
{
	struct capture_pipe cp = { .flows = &fp->flows, .dlt = dlt, .port = ROCEV2_UDP_PORT,
				   .no_icrc = fp->no_icrc, .emit = emit_cb, .ctx = fp };

	capture_record(&cp, ++fp->frame, ts_ns, data, caplen, wire_len);
}

void pipeline_finish(struct fuzz_pipeline *fp)
{
	for (int json = 0; json < 2; json++) {
		struct printer pr;
		json_t *s;
		char *text;

		printer_init(&pr, fp->sink, json);
		render_summary(&pr, &fp->flows);
		s = printer_take(&pr);
		text = s ? json_dumps(s, JSON_COMPACT) : NULL;
		free(text);
		json_decref(s);
	}
	flows_free(&fp->flows);
}
