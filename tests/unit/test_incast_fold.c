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

/* A node's result message for one flow with the given samples (JSON text). */
static int fold_one(struct incast_result *r, int flow, long long width_ns, const char *bytes)
{
	char text[8192], err[XPORT_ERR_LEN];
	json_t *m;
	int rc;

	snprintf(text, sizeof(text), "{\"host_id\": \"h\", \"flows\": [{\"flow\": %d, \"bytes\": 1, "
		 "\"messages\": 1, \"ns\": 1, \"failed\": false, \"error\": \"\", \"interval_ns\": %lld, "
		 "\"interval_bytes\": %s}], \"received\": [], \"latency\": {\"buckets\": []}, "
		 "\"counters\": []}", flow, width_ns, bytes);
	m = json_loads(text, 0, NULL);
	if (!m)
		return -2;
	rc = incast_fold(r, m, NULL, err);
	json_decref(m);
	return rc;
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

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_refused);
	RUN(&u, test_widest_wins);
	return unit_done(&u);
}
