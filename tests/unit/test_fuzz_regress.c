// SPDX-License-Identifier: MIT
/*
 * Regression tests for defects the fuzz targets found (docs/hardening.md).
 *
 * fuzz_oob, PARAMS: a server adopted test parameters outside the ranges
 * its own command line accepts (MTU 4097, queue depths of 0 or 2^32 - 1,
 * NaN durations...), values that size its queues, CQs and buffers.  The
 * test is JSON since control protocol 2 and checked by perf_opts_check(),
 * the command line's own check.
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

/* The default test a client sends. */
static json_t *default_test(void)
{
	struct perf_opts o = { .op = PERF_WRITE, .size = 65536, .iters = 1000, .qps = 1,
			       .tx_depth = 128, .rx_depth = 512, .outs = 16 };

	return ctl_test_json(&o, 65536);
}

static int adopt_json(json_t *m)
{
	char *text = json_dumps(m, JSON_COMPACT);
	int rc = text ? adopt(text) : -2;

	free(text);
	json_decref(m);
	return rc;
}

/* The default test with one field set to a JSON value. */
static int adopt_with(const char *key, const char *value)
{
	json_t *m = default_test();
	json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);

	json_object_set_new(json_object_get(m, "test"), key, v);
	return adopt_json(m);
}

/* What a client writes for its command line's defaults is adopted. */
static void client_defaults_adopted(struct unit *u)
{
	struct perf_opts o = { .op = PERF_SEND, .size = 2, .iters = 0, .duration = 2.5,
			       .qps = 1, .tx_depth = 1, .rx_depth = 512, .outs = 16,
			       .mtu = 4096, .interval = 0.5, .latency = true };

	CHECK_EQ(u, adopt_json(ctl_test_json(&o, 2)), 0);
	CHECK_EQ(u, adopt_with("tx_depth", "8192"), 0);
	CHECK_EQ(u, adopt_with("rx_depth", "1"), 0);
	CHECK_EQ(u, adopt_with("mtu", "256"), 0);
	CHECK_EQ(u, adopt_with("outs", "255"), 0);
	CHECK_EQ(u, adopt_with("interval_s", "0.01"), 0);
}

/* fuzz/regress/oob/params-mtu-4097 and its siblings, found by reading the
 * oracle's fields; then what JSON adds: wrong types, unknown and missing keys. */
static void out_of_range_refused(struct unit *u)
{
	static const char *const bad[][2] = {
		{ "mtu", "4097" },	 { "mtu", "255" },	  { "mtu", "1000" },
		{ "tx_depth", "0" },	 { "tx_depth", "8193" },  { "rx_depth", "0" },
		{ "rx_depth", "4294967295" }, { "outs", "256" }, { "size", "0" },
		{ "size", "65537" },	 { "max_size", "16777216" }, { "interval_s", "0.001" },
		{ "interval_s", "1e9" }, { "qps", "65" },	  { "op", "\"erase\"" },
		{ "iters", "4" },	 { "qps", "\"1\"" },	  { "verify", "1" },
		{ "rate_unit", "\"x\"" }, { "inline_size", "2000000" }, { "bogus", "1" },
		{ "qps", "4294967297" }, { "tx_depth", "4294967424" }, { "mtu", "4294967552" },
	};
	json_t *m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = adopt_with(bad[i][0], bad[i][1]);

		if (rc != -1)
			printf("#   %s=%s adopted\n", bad[i][0], bad[i][1]);
		CHECK_EQ(u, rc, -1);
	}
	/* A duration test (iters 0) needs a duration the command line allows;
	 * JSON cannot carry NaN at all. */
	m = default_test();
	json_object_set_new(json_object_get(m, "test"), "iters", json_integer(0));
	json_object_set_new(json_object_get(m, "test"), "duration_s", json_real(0));
	CHECK_EQ(u, adopt_json(json_deep_copy(m)), -1);
	json_object_set_new(json_object_get(m, "test"), "duration_s", json_real(86400));
	CHECK_EQ(u, adopt_json(json_deep_copy(m)), 0);
	json_object_set_new(json_object_get(m, "test"), "duration_s", json_real(86401));
	CHECK_EQ(u, adopt_json(json_deep_copy(m)), -1);
	json_object_del(json_object_get(m, "test"), "qps");
	CHECK_EQ(u, adopt_json(m), -1);
	CHECK_EQ(u, adopt("op=0 cas=0 size=8 max_size=8 iters=1000"), -1);	/* protocol 1 */
	CHECK_EQ(u, adopt("[]"), -1);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, client_defaults_adopted);
	RUN(&u, out_of_range_refused);
	return unit_done(&u);
}
