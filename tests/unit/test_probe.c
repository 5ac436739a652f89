/* SPDX-License-Identifier: MIT */
/*
 * rdmakit probe's analyses (probe_analyze.c) on exchanges laid out by
 * hand, so that every verdict comes out both ways: pass, and each way a
 * stack can deviate (no answer, the wrong answer, memory written, a
 * receive consumed, an answer where silence is required).  And its
 * control messages: a server takes only requests within its limits.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "probe_fx.h"
#include "probe_msg.h"
#include "unit.h"
#include "wire.h"

static void test_nak(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, nak(WIRE_NAK_REMOTE_ACCESS_ERR), PSN, 250);
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "NAK remote access error");
	CHECK_HAS(u, r.observed, "0.250 ms");
	CHECK_EQ(u, r.n_evidence, 2);
	CHECK_EQ(u, r.evidence[0], 1);
	CHECK_EQ(u, r.evidence[1], 2);

	/* NAKed, but the bytes landed anyway. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, nak(WIRE_NAK_REMOTE_ACCESS_ERR), PSN, 250);
	r.trace.remote.changed_bytes = 64;
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "64 bytes of the region changed");

	/* ACKed: the access check is missing. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 100);
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "required: NAK remote access error");

	/* Another NAK code is a deviation too. */
	r = fresh();
	tx(&r, OP_RC_WRITE_MIDDLE, PSN, 0);
	rx(&r, nak(WIRE_NAK_REMOTE_OP_ERR), PSN, 100);
	probe_expect_nak(&r, PSN, WIRE_NAK_INVALID_REQ, true);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "required: NAK invalid request");

	/* Silence, and answers for other PSNs, are no answer. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, nak(WIRE_NAK_REMOTE_ACCESS_ERR), PSN - 1, 100);
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no answer to the request at PSN 0x001000");

	/* Silence, then a zero-length WRITE at the same PSN to see whether the
	 * QP still answers.  Unanswered: the remote went silent, no verdict. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	tx(&r, OP_RC_WRITE_ONLY, PSN, 2000);
	r.trace.liveness_frame = 2;
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "stopped answering");
	CHECK_EQ(u, r.n_evidence, 2);	/* the request, and the check unanswered */
	CHECK_EQ(u, r.evidence[0], 1);
	CHECK_EQ(u, r.evidence[1], 2);
	/* Frames named across the run, as in the -w capture. */
	r.frame_base = 100;
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_HAS(u, r.observed, "(frame 102)");
	r.frame_base = 0;
	r.n_evidence = 0;

	/* Answered: a deviation, and the check's ACK is not the answer. */
	rx(&r, ACK, PSN, 2100);
	r.trace.alive = true;
	r.n_evidence = 0;
	probe_expect_nak(&r, PSN, WIRE_NAK_REMOTE_ACCESS_ERR, true);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no answer to the request at PSN 0x001000");
	CHECK_HAS(u, r.observed, "still answers");
}

static void test_ack(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 80);
	probe_expect_ack(&r, PSN, 0, 0);
	CHECK_EQ(u, r.verdict, PROBE_PASS);

	/* A zero-length WRITE refused for its rkey. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, nak(WIRE_NAK_REMOTE_ACCESS_ERR), PSN, 80);
	probe_expect_ack(&r, PSN, 0, 0);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "required: an ACK");

	/* ACKed, but memory changed. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 80);
	r.trace.remote.changed_bytes = 3;
	probe_expect_ack(&r, PSN, 0, 0);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

static void test_rnr(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_SEND_ONLY, PSN, 0);
	rx(&r, wire_aeth_make(WIRE_AETH_RNR_NAK, 12), PSN, 80);
	probe_expect_rnr(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "RNR NAK 0.64 ms");

	/* An ACK for a SEND that had nowhere to go. */
	r = fresh();
	tx(&r, OP_RC_SEND_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 80);
	probe_expect_rnr(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);

	/* The RNR NAK came, but a receive completed (with an error). */
	r = fresh();
	tx(&r, OP_RC_SEND_ONLY, PSN, 0);
	rx(&r, wire_aeth_make(WIRE_AETH_RNR_NAK, 12), PSN, 80);
	recv_wc(&r, XPORT_WC_LOC_LEN_ERR);
	probe_expect_rnr(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

static void test_seq_nak(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_WRITE_ONLY, PSN + 3, 0);
	tx(&r, OP_RC_WRITE_ONLY, PSN + 4, 1);
	rx(&r, nak(WIRE_NAK_PSN_SEQ_ERR), PSN, 90);
	probe_expect_one_seq_nak(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "for 2 requests ahead");

	/* One NAK, but the WRITEs ahead were carried out. */
	r.trace.remote.changed_bytes = 64;
	r.n_evidence = 0;
	probe_expect_one_seq_nak(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "were executed");

	/* A NAK for each request ahead: one episode, two NAKs. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN + 3, 0);
	rx(&r, nak(WIRE_NAK_PSN_SEQ_ERR), PSN, 90);
	tx(&r, OP_RC_WRITE_ONLY, PSN + 4, 100);
	rx(&r, nak(WIRE_NAK_PSN_SEQ_ERR), PSN, 190);
	probe_expect_one_seq_nak(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "2 NAKs PSN sequence error for one episode");

	/* None at all. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN + 3, 0);
	probe_expect_one_seq_nak(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no answer to 1 requests ahead of PSN 0x001000");

	/* None, and the QP then answered nothing either: no verdict. */
	tx(&r, OP_RC_WRITE_ONLY, PSN, 2000);
	r.trace.liveness_frame = r.trace.n;
	probe_expect_one_seq_nak(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "stopped answering");

	/* The QP answered the check: the ACK to it is no NAK for the episode. */
	rx(&r, ACK, PSN, 2100);
	r.trace.alive = true;
	probe_expect_one_seq_nak(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "still answers");

	/* Across the 2^24 wrap: ahead of 0xFFFFFF is 0x000002. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, 0x000002, 0);
	rx(&r, nak(WIRE_NAK_PSN_SEQ_ERR), 0xFFFFFF, 90);
	probe_expect_one_seq_nak(&r, 0xFFFFFF);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "for 1 requests ahead");
}

/* A request and its duplicate, op at PSN, the duplicate ACKed or not. */
static struct probe_result dup_pair(uint8_t op, bool second_acked)
{
	struct probe_result r = fresh();

	tx(&r, op, PSN, 0);
	rx(&r, ACK, PSN, 100);
	tx(&r, op, PSN, 200);
	if (second_acked)
		rx(&r, ACK, PSN, 300);
	return r;
}

static void test_dup(struct unit *u)
{
	struct probe_result r = dup_pair(OP_RC_SEND_ONLY, true);

	recv_wc(&r, XPORT_WC_SUCCESS);
	probe_expect_dup_ack(&r, PSN, 2);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_EQ(u, r.n_evidence, 4);

	/* Delivered twice. */
	recv_wc(&r, XPORT_WC_SUCCESS);
	r.n_evidence = 0;
	probe_expect_dup_ack(&r, PSN, 2);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "completed 2 of its 2 receives");

	/* Nothing answered, the zero-length WRITE after them neither: the
	 * remote stopped answering (no verdict); it answered that: deviation. */
	r = fresh();
	tx(&r, OP_RC_SEND_ONLY, PSN, 0);
	tx(&r, OP_RC_SEND_ONLY, PSN, 2000);
	tx(&r, OP_RC_WRITE_ONLY, PSN, 4000);
	r.trace.liveness_frame = 3;
	probe_expect_dup_ack(&r, PSN, 2);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "stopped answering");
	r.trace.alive = true;
	rx(&r, ACK, PSN, 4100);
	probe_expect_dup_ack(&r, PSN, 2);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no answer to a SEND and its duplicate");

	/* The duplicate not acknowledged. */
	r = dup_pair(OP_RC_SEND_ONLY, false);
	recv_wc(&r, XPORT_WC_SUCCESS);
	probe_expect_dup_ack(&r, PSN, 2);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "1 ACK for the request and its duplicate");
}

static void test_dup_write_read(struct unit *u)
{
	struct probe_result r = dup_pair(OP_RC_WRITE_ONLY, true);

	r.trace.remote.changed_bytes = 64;
	probe_expect_dup_write(&r, PSN, 64);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_EQ(u, r.n_evidence, 4);

	/* The duplicate's bytes landed too: executed twice. */
	r.trace.remote.changed_bytes = 128;
	probe_expect_dup_write(&r, PSN, 64);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "the duplicate was executed");

	/* The duplicate unanswered. */
	r = dup_pair(OP_RC_WRITE_ONLY, false);
	r.trace.remote.changed_bytes = 64;
	probe_expect_dup_write(&r, PSN, 64);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "1 ACK for the WRITE and its duplicate");

	/* READ, duplicate READ: two responses with the data. */
	r = fresh();
	tx(&r, OP_RC_READ_REQUEST, PSN, 0);
	rx_read(&r, PSN, 64, 100);
	tx(&r, OP_RC_READ_REQUEST, PSN, 200);
	rx_read(&r, PSN, 64, 300);
	probe_expect_dup_read(&r, PSN, 64);
	CHECK_EQ(u, r.verdict, PROBE_PASS);

	/* The duplicate drew an ACK, not the data again. */
	r.trace.ev[3].opcode = OP_RC_ACK;
	r.trace.ev[3].payload_len = 0;
	probe_expect_dup_read(&r, PSN, 64);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "another kind of answer");

	/* A response with the wrong length is no answer with the data. */
	r.trace.n = 3;
	r.trace.ev[1].payload_len = 32;
	probe_expect_dup_read(&r, PSN, 64);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no READ response of 64 bytes");
}

/* The remote's atomic ACK at psn with its original value. */
static void rx_atomic(struct probe_result *r, uint32_t psn, uint64_t orig, uint64_t t_us)
{
	rx(r, ACK, psn, t_us);
	r->trace.ev[r->trace.n - 1].opcode = OP_RC_ATOMIC_ACK;
	r->trace.ev[r->trace.n - 1].orig = orig;
}

#define FILL 0xA5A5A5A5A5A5A5A5ull

static void test_dup_atomic(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_FETCH_ADD, PSN, 0);
	rx_atomic(&r, PSN, FILL, 100);
	tx(&r, OP_RC_FETCH_ADD, PSN, 200);
	rx_atomic(&r, PSN, FILL, 300);
	tx(&r, OP_RC_READ_REQUEST, PSN + 1, 400);
	rx_read(&r, PSN + 1, 8, 500);
	/* Each case changes the exchange above: the 8 bytes read back (in
	 * memory order), the duplicate's ACK value and opcode. */
	static const struct {
		uint64_t data, orig2;
		uint8_t op2;
		enum probe_verdict v;
		const char *says;
	} cases[] = {
		{ 0xA6A5A5A5A5A5A5A5ull, FILL, OP_RC_ATOMIC_ACK, PROBE_PASS, "one add" }, /* LE */
		{ FILL + 1, FILL, OP_RC_ATOMIC_ACK, PROBE_PASS, "one add" },		  /* BE */
		/* Added twice, though the ACK replayed the value. */
		{ 0xA7A5A5A5A5A5A5A5ull, FILL, OP_RC_ATOMIC_ACK, PROBE_DEVIATION, "added once" },
		/* Executed again: the duplicate's ACK has the value after the first. */
		{ FILL + 1, FILL + 1, OP_RC_ATOMIC_ACK, PROBE_DEVIATION, "executed again" },
		/* The duplicate unanswered. */
		{ FILL + 1, FILL, OP_RC_ACK, PROBE_DEVIATION, "1 atomic ACK" },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		r.trace.ev[5].data = cases[k].data;
		r.trace.ev[3].orig = cases[k].orig2;
		r.trace.ev[3].opcode = cases[k].op2;
		probe_expect_dup_atomic(&r, PSN, FILL, 1);
		CHECK_EQ(u, r.verdict, cases[k].v);
		CHECK_HAS(u, r.observed, cases[k].says);
	}
}

/* A CNP from the remote, received at t_us. */
static void rx_cnp(struct probe_result *r, uint64_t t_us)
{
	rx(r, ACK, PSN, t_us);
	r->trace.ev[r->trace.n - 1].opcode = OP_CNP;
	r->trace.ev[r->trace.n - 1].has_aeth = false;
}

static void test_cnp(struct unit *u)
{
	struct probe_result r = fresh();

	for (uint32_t k = 0; k < 4; k++)
		tx(&r, OP_RC_WRITE_ONLY, PSN + k, k);
	for (uint32_t k = 0; k < 4; k++)
		rx(&r, ACK, PSN + k, 100 + 10 * k);
	probe_expect_cnp(&r, PSN, 4);
	CHECK_EQ(u, r.verdict, PROBE_NOT_IMPL);
	CHECK_HAS(u, r.observed, "no CNP for 4 CE-marked requests");
	CHECK_EQ(u, r.n_evidence, 2);	/* the first marked request, the first ACK */

	/* Two CNPs, 60 us apart. */
	rx_cnp(&r, 150);
	rx_cnp(&r, 210);
	probe_expect_cnp(&r, PSN, 4);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "2 CNPs for 4 CE-marked requests");
	CHECK_HAS(u, r.observed, "60.0 us");

	/* CNPs, but no ACK: the QP answered nothing else. */
	r.trace.n = 4;
	rx_cnp(&r, 150);
	probe_expect_cnp(&r, PSN, 4);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "none of the 4 CE-marked requests was acknowledged");

	/* Nothing at all, the QP silent after: no verdict. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	tx(&r, OP_RC_WRITE_ONLY, PSN, 2000);
	r.trace.liveness_frame = 2;
	probe_expect_cnp(&r, PSN, 1);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

static void test_read_limit(struct unit *u)
{
	struct probe_result r = fresh();

	for (uint32_t k = 0; k < 4; k++)
		tx(&r, OP_RC_READ_REQUEST, PSN + k, k);
	for (uint32_t k = 0; k < 4; k++)
		rx_read(&r, PSN + k, 64, 100 + k);
	probe_expect_read_limit(&r, PSN, 4, 1);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	CHECK_HAS(u, r.observed, "all 4 READs answered");
	CHECK_HAS(u, r.observed, "announced 1 outstanding");

	/* One answered, then a NAK invalid request for the second. */
	r.trace.ev[5].opcode = OP_RC_ACK;
	r.trace.ev[5].syndrome = nak(WIRE_NAK_INVALID_REQ);
	r.trace.n = 6;
	probe_expect_read_limit(&r, PSN, 4, 1);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	CHECK_HAS(u, r.observed, "1 of 4 READs answered, then NAK invalid request at PSN 0x001001");

	/* One answered, the rest dropped. */
	r.trace.n = 5;
	probe_expect_read_limit(&r, PSN, 4, 1);
	CHECK_HAS(u, r.observed, "the rest dropped silently");

	/* The first, within the limit, NAKed: a deviation. */
	r.trace.ev[4].opcode = OP_RC_ACK;
	r.trace.ev[4].syndrome = nak(WIRE_NAK_INVALID_REQ);
	probe_expect_read_limit(&r, PSN, 4, 1);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "the first READ (PSN 0x001000), within the limit, drew NAK invalid");

	/* Nothing, not even for the first, and the QP silent after. */
	tx(&r, OP_RC_WRITE_ONLY, PSN, 3000);
	r.trace.ev[4] = r.trace.ev[5];
	r.trace.ev[4].frame = 5;
	r.trace.n = 5;
	r.trace.liveness_frame = 5;
	probe_expect_read_limit(&r, PSN, 4, 1);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

static void test_credits(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_SEND_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 100);
	probe_expect_credits(&r, PSN, 4);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	CHECK_HAS(u, r.observed, "credits invalid");

	r.trace.ev[1].syndrome = wire_aeth_make(WIRE_AETH_ACK, 4);	/* code 4: 4 credits */
	probe_expect_credits(&r, PSN, 4);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	CHECK_HAS(u, r.observed, "credits 4 (code 4)");

	r.trace.ev[1].syndrome = wire_aeth_make(WIRE_AETH_RNR_NAK, 12);
	probe_expect_credits(&r, PSN, 4);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

static void test_wrap(struct unit *u)
{
	struct probe_result r = fresh();

	for (uint32_t k = 0; k < 3; k++) {
		tx(&r, OP_RC_WRITE_ONLY, (0xFFFFFE + k) & 0xFFFFFF, 100 * k);
		rx(&r, ACK, (0xFFFFFE + k) & 0xFFFFFF, 100 * k + 50);
	}
	r.trace.remote.changed_bytes = 192;
	probe_expect_acks(&r, 0xFFFFFE, 3, 192);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "0xfffffe to 0x000000");

	/* PSN 0 drew a NAK PSN sequence error: the wrap was not followed. */
	r.trace.ev[5].syndrome = nak(WIRE_NAK_PSN_SEQ_ERR);
	r.trace.ev[5].psn = 0xFFFFFF;
	probe_expect_acks(&r, 0xFFFFFE, 3, 192);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no answer to the request at PSN 0x000000");

	/* ACKed, but the bytes of one are missing. */
	r.trace.ev[5].syndrome = ACK;
	r.trace.ev[5].psn = 0;
	r.trace.remote.changed_bytes = 128;
	probe_expect_acks(&r, 0xFFFFFE, 3, 192);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "128 bytes");
}

static void test_silent(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	r.trace.ev[0].icrc_corrupt = true;
	tx(&r, OP_RC_WRITE_ONLY, PSN, 300000);
	rx(&r, ACK, PSN, 300100);
	r.trace.remote.changed_bytes = 64;
	r.trace.remote.first_changed = 64;
	probe_expect_silent_drop(&r, 1, PSN);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_EQ(u, r.n_evidence, 3);

	/* ACKed, but the good WRITE's bytes are not there. */
	r.trace.remote.changed_bytes = 0;
	probe_expect_silent_drop(&r, 1, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "did not land");

	/* The bad packet answered. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 100);
	tx(&r, OP_RC_WRITE_ONLY, PSN, 300000);
	rx(&r, ACK, PSN, 300100);
	probe_expect_silent_drop(&r, 2, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "1 answer to a packet with a bad ICRC");

	/* Silent, but executed: its bytes are in the region. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	tx(&r, OP_RC_WRITE_ONLY, PSN, 300000);
	rx(&r, ACK, PSN, 300100);
	r.trace.remote.changed_bytes = 128;
	r.trace.remote.first_changed = 0;
	probe_expect_silent_drop(&r, 1, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "was executed");

	/* Silent, and then silent for the good packet too: no verdict. */
	r = fresh();
	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	tx(&r, OP_RC_WRITE_ONLY, PSN, 300000);
	probe_expect_silent_drop(&r, 1, PSN);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

static int parse_req(const char *text, enum probe_req_kind *k, struct probe_setup *s, char *err)
{
	json_t *j = json_loads(text, 0, NULL);
	struct probe_post w;
	int rc = j ? probe_msg_req_parse(j, k, s, &w, err) : -2;

	json_decref(j);
	return rc;
}

static void test_messages(struct unit *u)
{
	struct probe_setup s = { .mr_bytes = 4096, .fill = 0xA5, .access = XPORT_ACCESS_REMOTE_READ,
				 .recvs = 2, .recv_bytes = 1024, .mtu = 1024, .timeout = 14,
				 .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
				 .peer = { .qpn = 0xD000, .psn = 0x1000, .udp_port = 4791, .mtu = 1024 } };
	struct probe_setup back;
	struct probe_post w;
	enum probe_req_kind k;
	char err[XPORT_ERR_LEN];
	json_t *j = probe_msg_setup(&s);

	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
	CHECK_EQ(u, k, PROBE_REQ_SETUP);
	CHECK_EQ(u, back.mr_bytes, 4096);
	CHECK_EQ(u, back.access, XPORT_ACCESS_REMOTE_READ);
	CHECK_EQ(u, back.peer.qpn, 0xD000);
	/* Over the server's limits: a bigger region, more receives. */
	json_object_set_new(json_object_get(j, "setup"), "mr_bytes",
			    json_integer(PROBE_MAX_MR_BYTES + 1));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
	CHECK_HAS(u, err, "out of range");
	json_object_set_new(json_object_get(j, "setup"), "mr_bytes", json_integer(4096));
	json_object_set_new(json_object_get(j, "setup"), "recvs", json_integer(PROBE_MAX_RECVS + 1));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
	json_object_set_new(json_object_get(j, "setup"), "recvs", json_integer(2));
	/* Responder resources: 1..16, or absent (an older probe: 16). */
	json_object_set_new(json_object_get(j, "setup"), "rd_atomic", json_integer(17));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
	json_object_set_new(json_object_get(j, "setup"), "rd_atomic", json_integer(1));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
	CHECK_EQ(u, back.rd_atomic, 1);
	json_object_del(json_object_get(j, "setup"), "rd_atomic");
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
	CHECK_EQ(u, back.rd_atomic, 0);
	/* The first PSN it sends: 0..2^24-1, or -1 (or absent) for random. */
	CHECK_EQ(u, back.first_psn, 0);
	json_object_set_new(json_object_get(j, "setup"), "first_psn", json_integer(0xFFFFFE));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
	CHECK_EQ(u, back.first_psn, 0xFFFFFE);
	json_object_set_new(json_object_get(j, "setup"), "first_psn", json_integer(0x1000000));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
	json_object_del(json_object_get(j, "setup"), "first_psn");
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
	CHECK_EQ(u, back.first_psn, -1);
	json_object_set_new(json_object_get(j, "setup"), "access", json_integer(1));
	CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
	json_decref(j);

	/* The server's greeting: its silence limit and whether it has atomics
	 * (absent: an older server, taken to have them). */
	{
		struct probe_peer_info peer;

		j = probe_msg_serve("verbs", "irdma0/1", 12, false);
		CHECK_EQ(u, probe_msg_serve_parse(j, &peer, err), 0);
		CHECK_EQ(u, peer.timeout_s, 12);
		CHECK(u, !peer.atomics);
		json_object_del(json_object_get(j, "serve"), "atomics");
		json_object_del(json_object_get(j, "serve"), "timeout_s");
		CHECK_EQ(u, probe_msg_serve_parse(j, &peer, err), 0);
		CHECK(u, peer.atomics);
		CHECK_EQ(u, peer.timeout_s, 0);
		json_object_set_new(json_object_get(j, "serve"), "timeout_s", json_integer(-1));
		CHECK_EQ(u, probe_msg_serve_parse(j, &peer, err), -1);
		json_decref(j);
	}

	{
		struct probe_post post = { PROBE_POST_READ, 4096, 2, 0x10000, 0x1234, 0 };
		struct probe_post fa = { PROBE_POST_FETCH_ADD, 8, 1, 0x10000, 0x1234,
					 0x0102030405060708ull };

		j = probe_msg_post(&post);
		CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
		CHECK_EQ(u, k, PROBE_REQ_POST);
		CHECK_EQ(u, w.op, PROBE_POST_READ);
		CHECK_EQ(u, w.count, 2);
		json_object_set_new(json_object_get(j, "post"), "count",
				    json_integer(PROBE_MAX_POSTS + 1));
		CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
		json_decref(j);
		CHECK_EQ(u, parse_req("{\"post\": {\"op\": \"atomic\", \"len\": 8, \"count\": 1, "
				      "\"remote_va\": 0, \"rkey\": 0, \"add\": 0}}", &k, &back, err), -1);
		/* A FETCH_ADD carries its add, and is 8 bytes long or refused. */
		j = probe_msg_post(&fa);
		CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), 0);
		CHECK_EQ(u, w.op, PROBE_POST_FETCH_ADD);
		CHECK_EQ(u, w.add, 0x0102030405060708ull);
		json_object_set_new(json_object_get(j, "post"), "len", json_integer(16));
		CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
		json_object_set_new(json_object_get(j, "post"), "len", json_integer(8));
		json_object_set_new(json_object_get(j, "post"), "add", json_integer(-1));
		CHECK_EQ(u, probe_msg_req_parse(j, &k, &back, &w, err), -1);
		json_decref(j);
	}
	CHECK_EQ(u, parse_req("{\"state\": {}}", &k, &back, err), 0);
	CHECK_EQ(u, k, PROBE_REQ_STATE);
	CHECK_EQ(u, parse_req("{\"teardown\": {}}", &k, &back, err), 0);
	CHECK_EQ(u, k, PROBE_REQ_TEARDOWN);
	CHECK_EQ(u, parse_req("{\"state\": {\"x\": 1}}", &k, &back, err), -1);
	CHECK_EQ(u, parse_req("{\"reboot\": {}}", &k, &back, err), -1);
	CHECK_EQ(u, parse_req("{\"state\": {}, \"teardown\": {}}", &k, &back, err), -1);

	/* A bw client at a probe server is told where it is. */
	j = json_loads("{\"test\": {}}", 0, NULL);
	CHECK_EQ(u, probe_msg_hello_parse(j, err), -1);
	CHECK_HAS(u, err, "this is rdmakit probe --serve");
	json_decref(j);
	j = probe_msg_hello();
	CHECK_EQ(u, probe_msg_hello_parse(j, err), 0);
	json_decref(j);

	/* The state round-trips; a completion list past the bound is refused. */
	{
		struct probe_remote_state st = { .changed_bytes = 64, .first_changed = 8, .n_wc = 1,
						 .head = { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 } };
		struct probe_remote_state got;
		json_t *head;

		st.wc[0] = (struct xport_wc){ .wr_id = 1, .status = XPORT_WC_REM_ACCESS_ERR,
					      .opcode = XPORT_WC_RECV, .byte_len = 64 };
		j = probe_msg_state(&st);
		CHECK_EQ(u, probe_msg_state_parse(j, &got, err), 0);
		CHECK_EQ(u, got.changed_bytes, 64);
		CHECK_EQ(u, got.n_wc, 1);
		CHECK_EQ(u, got.wc[0].status, XPORT_WC_REM_ACCESS_ERR);
		CHECK(u, got.qp_error);
		CHECK(u, !memcmp(got.head, st.head, sizeof(st.head)));
		/* The region's first bytes: eight of 0..255, nothing else. */
		head = json_object_get(json_object_get(j, "state"), "head");
		json_array_set_new(head, 3, json_integer(256));
		CHECK_EQ(u, probe_msg_state_parse(j, &got, err), -1);
		json_array_set_new(head, 3, json_integer(0x55));
		json_array_append_new(head, json_integer(0));
		CHECK_EQ(u, probe_msg_state_parse(j, &got, err), -1);
		json_array_remove(head, 8);
		CHECK_EQ(u, probe_msg_state_parse(j, &got, err), 0);
		for (int i = 0; i < PROBE_MAX_WC; i++)
			json_array_append(json_object_get(json_object_get(j, "state"), "wc"),
					  json_array_get(json_object_get(json_object_get(j, "state"),
									 "wc"), 0));
		CHECK_EQ(u, probe_msg_state_parse(j, &got, err), -1);
		json_decref(j);
	}
}

static void test_table(struct unit *u)
{
	size_t n;
	const struct probe_test *t = probe_tests(&n);

	CHECK(u, n >= 10);
	for (size_t i = 0; i < n; i++) {
		CHECK(u, t[i].name && t[i].group && t[i].reference && t[i].expected && t[i].run);
		CHECK(u, probe_test_find(t[i].name) == &t[i]);
	}
	CHECK(u, probe_test_find("no_such_test") == NULL);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_nak);
	RUN(&u, test_ack);
	RUN(&u, test_rnr);
	RUN(&u, test_seq_nak);
	RUN(&u, test_dup);
	RUN(&u, test_dup_write_read);
	RUN(&u, test_dup_atomic);
	RUN(&u, test_cnp);
	RUN(&u, test_read_limit);
	RUN(&u, test_credits);
	RUN(&u, test_wrap);
	RUN(&u, test_silent);
	RUN(&u, test_messages);
	RUN(&u, test_table);
	return unit_done(&u);
}
