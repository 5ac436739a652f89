/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's folding of a node's --interval samples (incast_plan.c):
 * what a participant sends is bounded and checked (at most
 * INCAST_MAX_INTERVALS samples, non-negative, in bins the asked-for
 * interval doubled k times), and flows from nodes that widened their bins
 * differently are brought to the widest, bytes preserved.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "incast_int.h"
#include "unit.h"

/* A result with flows 1 and 2, --interval 0.1. */
static void result_open(struct incast_result *r)
{
	memset(r, 0, sizeof(*r));
	hist_init(&r->latency);
	r->nflows = 2;
	r->flows = calloc(2, sizeof(*r->flows));
	r->flows[0].id = 1;
	r->flows[1].id = 2;
	r->test.interval = 0.1;
}

/* A node's result message for one flow with the given samples (JSON text),
 * its last completion ns from the start. */
static int fold_at(struct incast_result *r, int flow, long long width_ns, const char *bytes,
		   long long ns)
{
	char text[8192], err[XPORT_ERR_LEN];
	json_t *m;
	int rc;

	snprintf(text, sizeof(text), "{\"host_id\": \"h\", \"flows\": [{\"flow\": %d, \"bytes\": 1, "
		 "\"messages\": 1, \"ns\": %lld, \"failed\": false, \"error\": \"\", \"interval_ns\": %lld, "
		 "\"interval_bytes\": %s}], \"received\": [], \"latency\": {\"buckets\": []}, "
		 "\"counters\": []}", flow, ns, width_ns, bytes);
	m = json_loads(text, 0, NULL);
	if (!m)
		return -2;
	rc = incast_fold(r, m, NULL, err);
	json_decref(m);
	return rc;
}

/* The same, for a flow that ran until its last sample's interval ended. */
static int fold_one(struct incast_result *r, int flow, long long width_ns, const char *bytes)
{
	json_t *b = json_loads(bytes, JSON_DECODE_ANY, NULL);
	long long n = json_is_array(b) ? (long long)json_array_size(b) : 1;

	json_decref(b);
	return fold_at(r, flow, width_ns, bytes, n * width_ns);
}

static void test_refused(struct unit *u)
{
	struct incast_result r;
	char many[4 * (INCAST_MAX_INTERVALS + 2) + 4] = "[";

	for (int i = 0; i <= INCAST_MAX_INTERVALS; i++)
		strcat(many, i ? ",1" : "1");
	strcat(many, "]");
	result_open(&r);
	CHECK_EQ(u, fold_one(&r, 1, 100000000, many), -1);		/* one too many */
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[1, -5]"), -1);	/* negative */
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[1, \"x\"]"), -1);
	CHECK_EQ(u, fold_one(&r, 1, 300000000, "[1]"), -1);		/* not 0.1 s x 2^k */
	CHECK_EQ(u, fold_one(&r, 1, 0, "[1]"), -1);
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "{}"), -1);
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[]"), 0);		/* nothing yet: fine */
	incast_result_free(&r);
}

static void test_widest_wins(struct unit *u)
{
	struct incast_result r;

	result_open(&r);
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[1, 2, 3, 4, 5]"), 0);
	CHECK_EQ(u, fold_one(&r, 2, 400000000, "[7, 8]"), 0);
	incast_finish_result(&r);
	CHECK_EQ(u, r.interval_ns, 400000000);
	CHECK_EQ(u, r.flows[0].nintervals, 2);
	CHECK_EQ(u, r.flows[0].interval_bytes[0], 10);	/* 1 + 2 + 3 + 4 */
	CHECK_EQ(u, r.flows[0].interval_bytes[1], 5);
	CHECK_EQ(u, r.flows[1].interval_bytes[0], 7);
	incast_result_free(&r);
	/* Without --interval the samples are not taken. */
	result_open(&r);
	r.test.interval = 0;
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[1, 2]"), 0);
	incast_finish_result(&r);
	CHECK(u, !r.flows[0].interval_bytes && !r.interval_ns);
	incast_result_free(&r);
}

/* A bad message for a flow that has samples leaves them as they were, and
 * the result still finishes (no half-taken samples to widen forever). */
static void test_bad_after_good(struct unit *u)
{
	struct incast_result r;

	result_open(&r);
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[1, 2, 3, 4]"), 0);
	CHECK_EQ(u, fold_one(&r, 1, 100000000, "[1, -1]"), -1);
	CHECK_EQ(u, r.flows[0].nintervals, 4);
	CHECK_EQ(u, fold_one(&r, 2, 200000000, "[5, 6]"), 0);
	incast_finish_result(&r);
	CHECK_EQ(u, r.flows[0].nintervals, 2);
	CHECK_EQ(u, r.flows[0].interval_bytes[1], 7);
	incast_result_free(&r);
}

/* -D's drain: completions just after the last whole interval join it. */
static void test_sliver_joins(struct unit *u)
{
	struct incast_result r;

	result_open(&r);
	/* 0.3 s of 0.1 s intervals, then 2 ms more: 4 bins become 3. */
	CHECK_EQ(u, fold_at(&r, 1, 100000000, "[10, 10, 10, 4]", 302000000), 0);
	CHECK_EQ(u, fold_at(&r, 2, 100000000, "[10, 10, 10]", 300000000), 0);
	incast_finish_result(&r);
	CHECK_EQ(u, r.flows[0].nintervals, 3);
	CHECK_EQ(u, r.flows[0].interval_bytes[2], 14);
	CHECK_EQ(u, r.flows[1].nintervals, 3);
	incast_result_free(&r);
	/* 20 ms more is a fifth of an interval: it stays. */
	result_open(&r);
	CHECK_EQ(u, fold_at(&r, 1, 100000000, "[10, 10, 10, 4]", 320000000), 0);
	incast_finish_result(&r);
	CHECK_EQ(u, r.flows[0].nintervals, 4);
	incast_result_free(&r);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_refused);
	RUN(&u, test_widest_wins);
	RUN(&u, test_bad_after_good);
	RUN(&u, test_sliver_joins);
	return unit_done(&u);
}
