// SPDX-License-Identifier: MIT
/*
 * The PARAMS payload of the control channel (the test a client asks a
 * server to run) through the server's parser, adopt_params(), which is
 * static in lib/perf/session.c: this file compiles session.c into itself.
 *
 * Oracle: whatever a server adopts from a peer stays inside the ranges its
 * own command line accepts (cmd/perf_cli.c), since those values size its
 * queues, CQs and buffers; anything else aborts.
 */
#include <math.h>

#include "session.c"
#include "oob_params.h"

static void out_of_range(const char *what, const char *text)
{
	fprintf(stderr, "adopt_params took %s outside the command line's range from \"%s\"\n",
		what, text);
	abort();
}

void fuzz_adopt_params(const char *text, unsigned explicit_set)
{
	static struct perf_session s;
	char err[XPORT_ERR_LEN];
	const struct perf_opts *o = &s.o;

	memset(&s, 0, sizeof(s));
	s.o = (struct perf_opts){ .op = PERF_WRITE, .size = 65536, .iters = 1000, .qps = 1,
				  .tx_depth = 128, .rx_depth = 512, .outs = 16,
				  .explicit_set = explicit_set };
	if (adopt_params(&s, text, err) < 0)
		return;
	if (o->qps < 1 || o->qps > PERF_MAX_QPS)
		out_of_range("qps", text);
	if (o->tx_depth < 1 || o->tx_depth > 8192)
		out_of_range("tx_depth", text);
	if (o->rx_depth < 1 || o->rx_depth > 8192)
		out_of_range("rx_depth", text);
	if (o->outs > 255)
		out_of_range("outs", text);
	if (o->mtu && (o->mtu < 256 || o->mtu > 4096))
		out_of_range("mtu", text);
	if (o->size < 1 || o->size > s.max_size || s.max_size > (1ULL << 31))
		out_of_range("size", text);
	if (!o->iters && !(o->duration >= 0.001 && o->duration <= 86400))
		out_of_range("duration", text);
	if (!(o->interval == 0 || (o->interval >= 0.01 && o->interval <= 3600)))
		out_of_range("interval", text);
}
