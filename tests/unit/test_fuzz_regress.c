// SPDX-License-Identifier: MIT
/*
 * Regression tests for defects the fuzz targets found (docs/hardening.md).
 *
 * fuzz_oob, PARAMS: a server adopted test parameters outside the ranges
 * its own command line accepts (MTU 4097, queue depths of 0 or 2^32 - 1,
 * NaN durations...), values that size its queues, CQs and buffers.
 * adopt_params() is static in lib/perf/session.c, so this file compiles
 * session.c into itself, as the fuzz target does.
 */
#include "session.c"
#include "unit.h"

/* The server side of the default test the client sends, plus one change. */
static int adopt(const char *text)
{
	static struct perf_session s;
	char err[XPORT_ERR_LEN];

	memset(&s, 0, sizeof(s));
	s.o = (struct perf_opts){ .op = PERF_WRITE, .size = 65536, .iters = 1000, .qps = 1,
				  .tx_depth = 128, .rx_depth = 512, .outs = 16 };
	return adopt_params(&s, text, err);
}

/* The default test with key=value instead of its default. */
static int adopt_with(const char *key, const char *value)
{
	static const char *const keys[] = { "op", "cas", "size", "max_size", "iters", "duration",
					    "qps", "tx_depth", "rx_depth", "outs", "mtu", "verify",
					    "interval", "engine", "lat" };
	static const char *const vals[] = { "0", "0", "65536", "65536", "1000", "0", "1", "128",
					    "512", "16", "0", "0", "0", "auto", "0" };
	char text[512];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s=%s", i ? " " : "", keys[i],
				      strcmp(keys[i], key) ? vals[i] : value);
	return adopt(text);
}

/* What a client writes for its command line's defaults is adopted. */
static void client_defaults_adopted(struct unit *u)
{
	static struct perf_session c;
	char text[512];

	memset(&c, 0, sizeof(c));
	c.o = (struct perf_opts){ .op = PERF_SEND, .size = 2, .iters = 0, .duration = 2.5,
				  .qps = 1, .tx_depth = 1, .rx_depth = 512, .outs = 16,
				  .mtu = 4096, .interval = 0.5, .latency = true };
	c.max_size = 2;
	params_text(&c, text, sizeof(text));
	CHECK_EQ(u, adopt(text), 0);
	CHECK_EQ(u, adopt_with("tx_depth", "8192"), 0);
	CHECK_EQ(u, adopt_with("rx_depth", "1"), 0);
	CHECK_EQ(u, adopt_with("mtu", "256"), 0);
	CHECK_EQ(u, adopt_with("outs", "255"), 0);
	CHECK_EQ(u, adopt_with("interval", "0.01"), 0);
}

/* fuzz/regress/oob/params-mtu-4097 and its siblings, found by reading the oracle's fields. */
static void out_of_range_refused(struct unit *u)
{
	static const char *const bad[][2] = {
		{ "mtu", "4097" },	{ "mtu", "255" },	   { "tx_depth", "0" },
		{ "tx_depth", "8193" },	{ "rx_depth", "0" },	   { "rx_depth", "4294967295" },
		{ "outs", "256" },	{ "size", "0" },	   { "interval", "nan" },
		{ "interval", "0.001" }, { "interval", "1e9" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = adopt_with(bad[i][0], bad[i][1]);

		if (rc != -1)
			printf("#   %s=%s adopted\n", bad[i][0], bad[i][1]);
		CHECK_EQ(u, rc, -1);
	}
	/* A duration test (iters=0) needs a duration the command line allows. */
	CHECK_EQ(u, adopt("op=0 cas=0 size=8 max_size=8 iters=0 duration=nan qps=1 tx_depth=1 "
			  "rx_depth=1 outs=1 mtu=0 verify=0 interval=0 engine=auto lat=0"), -1);
	CHECK_EQ(u, adopt("op=0 cas=0 size=8 max_size=8 iters=0 duration=0 qps=1 tx_depth=1 "
			  "rx_depth=1 outs=1 mtu=0 verify=0 interval=0 engine=auto lat=0"), -1);
	CHECK_EQ(u, adopt("op=0 cas=0 size=8 max_size=8 iters=0 duration=86400 qps=1 tx_depth=1 "
			  "rx_depth=1 outs=1 mtu=0 verify=0 interval=0 engine=auto lat=0"), 0);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, client_defaults_adopted);
	RUN(&u, out_of_range_refused);
	return unit_done(&u);
}
