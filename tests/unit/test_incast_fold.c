/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's folding of a node's --interval samples (incast_plan.c):
 * what a participant sends is bounded and checked (at most
 * INCAST_MAX_INTERVALS samples, non-negative, in bins the asked-for
 * interval doubled k times), and flows from nodes that widened their bins
 * differently are brought to the widest, bytes preserved.  On UC and UD
 * a flow's loss comes from its two ends (sender's messages, receiver's
 * count), and the run's from every flow and the engines' drop counters;
 * a participant whose transport or operation the run cannot carry is
 * refused without changing the run.
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

/* A sender's and a receiver's result (the order they come in must not
 * matter), on a UD SEND run. */
static void test_loss_from_both_ends(struct unit *u)
{
	static const char *const sender =
		"{\"host_id\": \"a\", \"drops_known\": true, \"flows\": ["
		"{\"flow\": 1, \"bytes\": 1024000, \"messages\": 1000, \"ns\": 1000000000, "
		"\"failed\": false, \"error\": \"\"}, "
		"{\"flow\": 2, \"bytes\": 512000, \"messages\": 500, \"ns\": 500000000, "
		"\"failed\": false, \"error\": \"\"}], \"received\": [], "
		"\"latency\": {\"buckets\": []}, \"counters\": ["
		"{\"source\": \"engine\", \"name\": \"tx_drops\", \"delta\": 2}]}";
	static const char *const receiver =
		"{\"host_id\": \"b\", \"drops_known\": true, \"flows\": [], \"received\": ["
		"{\"flow\": 1, \"messages\": 990, \"bytes\": 1013760, \"verified\": true, "
		"\"bad_offset\": 0}, "
		"{\"flow\": 2, \"messages\": 500, \"bytes\": 512000, \"verified\": true, "
		"\"bad_offset\": 0}], \"latency\": {\"buckets\": []}, \"counters\": ["
		"{\"source\": \"engine\", \"name\": \"rcvbuf_drops\", \"delta\": 3}, "
		"{\"source\": \"engine\", \"name\": \"no_recv_drops\", \"delta\": 5}]}";
	char err[XPORT_ERR_LEN];

	for (int order = 0; order < 2; order++) {
		struct incast_result r;
		json_t *seen = json_object();
		json_t *a = json_loads(order ? receiver : sender, 0, NULL);
		json_t *b = json_loads(order ? sender : receiver, 0, NULL);

		result_open(&r);
		r.test.interval = 0;
		r.test.conn = XPORT_QPT_UD;
		r.test.op = PERF_SEND;
		CHECK_EQ(u, incast_fold(&r, a, seen, err), 0);
		CHECK_EQ(u, incast_fold(&r, b, seen, err), 0);
		incast_finish_result(&r);
		CHECK(u, r.unreliable);
		CHECK(u, r.flows[0].loss.received_known);
		CHECK_EQ(u, r.flows[0].loss.sent_msgs, 1000);
		CHECK_EQ(u, r.flows[0].loss.lost_msgs, 10);
		CHECK(u, r.flows[0].loss.loss_percent > 0.99 && r.flows[0].loss.loss_percent < 1.01);
		CHECK_EQ(u, incast_flow_delivered_bytes(&r.flows[0]), 1013760);
		CHECK_EQ(u, incast_flow_delivered_msgs(&r.flows[0]), 990);
		/* Goodput is what arrived, over the sender's time. */
		CHECK(u, r.flows[0].goodput_gbps > 0.00810 && r.flows[0].goodput_gbps < 0.00812);
		CHECK_EQ(u, r.flows[1].loss.lost_msgs, 0);
		CHECK_EQ(u, r.loss.sent_msgs, 1500);
		CHECK_EQ(u, r.loss.received_msgs, 1490);
		CHECK_EQ(u, r.loss.lost_msgs, 10);
		CHECK(u, r.loss.where_known);
		CHECK_EQ(u, r.loss.host_tx_drops, 2);
		CHECK_EQ(u, r.loss.rcvbuf_drops, 3);
		CHECK_EQ(u, r.loss.no_recv_drops, 5);
		incast_result_free(&r);
		json_decref(a);
		json_decref(b);
		json_decref(seen);
	}
}

/* A flow whose sender never reported (it went away) has no loss of its
 * own, and the run's is unknown: what its receiver got must not hide
 * another flow's loss. */
static void test_loss_sender_gone(struct unit *u)
{
	static const char *const receiver =
		"{\"host_id\": \"b\", \"drops_known\": true, \"flows\": [], \"received\": ["
		"{\"flow\": 1, \"messages\": 900, \"bytes\": 921600, \"verified\": true, "
		"\"bad_offset\": 0}, "
		"{\"flow\": 2, \"messages\": 1000, \"bytes\": 1024000, \"verified\": true, "
		"\"bad_offset\": 0}], \"latency\": {\"buckets\": []}, \"counters\": []}";
	struct incast_result r;
	json_t *seen = json_object(), *m = json_loads(receiver, 0, NULL);
	char err[XPORT_ERR_LEN];

	result_open(&r);
	r.test.interval = 0;
	r.test.conn = XPORT_QPT_UD;
	r.test.op = PERF_SEND;
	CHECK_EQ(u, fold_at(&r, 1, 0, "[]", 1000000), 0);	/* flow 1's sender: 1 message */
	r.flows[0].messages = 1000;
	CHECK_EQ(u, incast_fold(&r, m, seen, err), 0);
	r.flows[1].src = 2;
	incast_fail_ranks(&r, 2, 1, "rank 2 went away");
	incast_finish_result(&r);
	CHECK(u, r.flows[1].failed);
	CHECK(u, r.flows[0].loss.received_known);
	CHECK_EQ(u, r.flows[0].loss.lost_msgs, 100);
	CHECK(u, !r.flows[1].loss.received_known);
	CHECK(u, !r.loss.received_known);
	CHECK(u, !r.loss.where_known && !r.loss.tx_known);
	incast_result_free(&r);
	json_decref(m);
	json_decref(seen);
}

/* A UC WRITE: the receiver has nothing to count; an RC run has no loss. */
static void test_loss_unknown(struct unit *u)
{
	struct incast_result r;

	for (int conn = 0; conn < 2; conn++) {
		result_open(&r);
		r.test.interval = 0;
		r.test.conn = conn ? XPORT_QPT_UC : XPORT_QPT_RC;
		r.test.op = PERF_WRITE;
		CHECK_EQ(u, fold_at(&r, 1, 0, "[]", 1000000), 0);
		incast_finish_result(&r);
		CHECK_EQ(u, r.unreliable, conn == 1);
		CHECK(u, !r.flows[0].loss.received_known && !r.loss.received_known);
		CHECK_EQ(u, incast_flow_delivered_bytes(&r.flows[0]), 1);
		incast_result_free(&r);
	}
}

/* The run stays as it was when a participant's test cannot be joined to it. */
static void test_adopt_whole_or_nothing(struct unit *u)
{
	struct incast_opts run = { 0 }, theirs = { 0 }, before;
	char err[XPORT_ERR_LEN];

	run.p.conn = XPORT_QPT_UD;
	run.p.op = PERF_SEND;
	run.p.size = 1024;
	run.p.explicit_set = PERF_SET_CONN;
	theirs.p.op = PERF_WRITE;
	theirs.p.size = 4096;
	theirs.p.explicit_set = PERF_SET_OP | PERF_SET_SIZE;
	before = run;
	CHECK_EQ(u, incast_adopt(&run, &theirs, "s1", true, err), -1);
	CHECK_HAS(u, err, "-c UD carries SEND only");
	CHECK(u, !memcmp(&run, &before, sizeof(run)));
	theirs.p.conn = XPORT_QPT_UC;
	theirs.p.op = PERF_SEND;
	theirs.p.explicit_set = PERF_SET_CONN;
	CHECK_EQ(u, incast_adopt(&run, &theirs, "s2", true, err), -1);
	CHECK_HAS(u, err, "asked for -c UC, but this run has -c UD");
	/* One who sets nothing takes the run's UD, and UD is SEND's. */
	theirs.p.conn = XPORT_QPT_RC;
	theirs.p.op = PERF_WRITE;
	theirs.p.explicit_set = 0;
	CHECK_EQ(u, incast_adopt(&run, &theirs, "s3", true, err), 0);
	CHECK_EQ(u, run.p.conn, XPORT_QPT_UD);
	CHECK_EQ(u, run.p.op, PERF_SEND);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_refused);
	RUN(&u, test_widest_wins);
	RUN(&u, test_bad_after_good);
	RUN(&u, test_sliver_joins);
	RUN(&u, test_loss_from_both_ends);
	RUN(&u, test_loss_sender_gone);
	RUN(&u, test_loss_unknown);
	RUN(&u, test_adopt_whole_or_nothing);
	return unit_done(&u);
}
