/* SPDX-License-Identifier: MIT */
/*
 * rdmakit probe's analyses of the remote as requester (its timers,
 * retries and recovery, its rate under CNPs) and of its own packets, on
 * exchanges laid out by hand so that every verdict comes out both ways.
 */
#include <stdlib.h>

#include "probe_fx.h"
#include "unit.h"

/* The rounds as probe_stream.c lays them out, from 10 ms into a stream
 * that starts at 1 s: decoys for 5 ms, CNPs for 10 ms, 5 ms of neither. */
#define ROUND_US(k) (10000u + 20000u * (k))

static uint64_t at_us(uint64_t us)
{
	return (1000000ull + us) * 1000;
}

static void set_rounds(struct probe_stream *st)
{
	st->rounds = PROBE_CNP_ROUNDS;
	st->rounds_done = true;
	st->complete = false;
	for (unsigned k = 0; k < PROBE_CNP_ROUNDS; k++)
		st->round[k] = (struct probe_cnp_round){
			.decoy_from_ns = at_us(ROUND_US(k)), .decoy_to_ns = at_us(ROUND_US(k) + 4900),
			.decoys = 50, .cnp_from_ns = at_us(ROUND_US(k) + 5000),
			.cnp_to_ns = at_us(ROUND_US(k) + 14900), .cnps = 100 };
}

/* A packet every `gap_us`; under round k's decoys every `decoy_us[k]`,
 * under its CNPs every `cnp_us[k]`; up to `end_us`. */
static unsigned make_stream(uint64_t *t, unsigned cap, unsigned gap_us, const unsigned decoy_us[3],
			    const unsigned cnp_us[3], unsigned end_us)
{
	unsigned n = 0;

	for (unsigned i = 0, us = 0; i < cap && us <= end_us; i++) {
		unsigned step = gap_us;

		t[i] = at_us(us);
		n = i + 1;
		for (unsigned k = 0; k < PROBE_CNP_ROUNDS; k++)
			if (us >= ROUND_US(k) && us < ROUND_US(k) + 5000)
				step = decoy_us[k];
			else if (us >= ROUND_US(k) + 5000 && us < ROUND_US(k) + 15000)
				step = cnp_us[k];
		us += step;
	}
	return n;
}

/* The stream of n packets with none in [from_us, to_us): a stall. */
static unsigned stall(uint64_t *t, unsigned n, unsigned from_us, unsigned to_us)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		if (t[i] < at_us(from_us) || t[i] >= at_us(to_us))
			t[k++] = t[i];
	return k;
}

static void test_cnp_reaction(struct unit *u)
{
	static uint64_t t[20000];
	static const unsigned even[3] = { 10, 10, 10 }, slow[3] = { 100, 100, 100 },
			      slow_once[3] = { 100, 10, 10 }, slow_later[3] = { 10, 100, 100 },
			      half[3] = { 20, 20, 20 };
	struct probe_result r = fresh();
	struct probe_stream st = { .t_ns = t, .pkt_bytes = 1024 };

	/* 10 us a packet (0.82 Gb/s) throughout but where a case says. */
	static const struct {
		const char *why;
		const unsigned *decoy_us, *cnp_us;
		unsigned end_us;
		enum probe_verdict verdict;
		const char *says;
	} cases[] = {
		{ "100 us under every round's CNPs, back after: a reaction point",
		  even, slow, 100000, PROBE_PASS, "rate fell from 0.819 Gb/s to 0.08" },
		{ "the same, the recovery window's rate named",
		  even, slow, 100000, PROBE_PASS, "300 CNPs in all; 0.8" },
		{ "no change under the CNPs", even, even, 100000, PROBE_NOT_IMPL, "no reaction" },
		{ "as slow under the decoys as under the CNPs, every round: taking packets in "
		  "slowed it, the CNPs did not (the first round's decoys tell)",
		  slow, slow, 100000, PROBE_NOT_IMPL, "no reaction" },
		{ "a reaction point still recovering under the later rounds' decoys",
		  slow_later, slow, 100000, PROBE_PASS, "rate fell from" },
		{ "down under the first round's CNPs only (an emulated host's stall then): a "
		  "reaction point reacts every time",
		  even, slow_once, 100000, PROBE_NOT_IMPL, "down in 1 of 3 rounds only" },
		{ "half the rate from the first decoys on, CNPs or not: a stream that slowed "
		  "down on its own after the baseline",
		  half, half, 100000, PROBE_NOT_IMPL, "no reaction" },
		{ "the stream ended before the recovery window: still a reaction",
		  even, slow, 70000, PROBE_PASS, "ended before a recovery" },
	};

	set_rounds(&st);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st.n = make_stream(t, 20000, 10, cases[i].decoy_us, cases[i].cnp_us, cases[i].end_us);
		probe_expect_cnp_reaction(&r, &st);
		CHECK_EQ(u, r.verdict, cases[i].verdict);
		CHECK_HAS(u, r.observed, cases[i].says);
		if (r.verdict != cases[i].verdict)
			printf("#   case: %s\n", cases[i].why);
	}

	/* A 2 ms stall in the second half of each round's CNPs, full rate
	 * around it: the average there falls to 0.6x, but a quarter ran at
	 * full rate, so it was the stream, not a reaction. */
	st.n = make_stream(t, 20000, 10, even, even, 100000);
	for (unsigned k = 0; k < PROBE_CNP_ROUNDS; k++)
		st.n = stall(t, st.n, ROUND_US(k) + 10500, ROUND_US(k) + 12500);
	probe_expect_cnp_reaction(&r, &st);
	CHECK_EQ(u, r.verdict, PROBE_NOT_IMPL);
	CHECK_HAS(u, r.observed, "no reaction");

	/* This side fell behind and sent round 3 one CNP: no phase to judge a
	 * rate in. */
	st.n = make_stream(t, 20000, 10, even, even, 100000);
	st.round[2].cnps = 1;
	st.round[2].cnp_to_ns = st.round[2].cnp_from_ns;
	probe_expect_cnp_reaction(&r, &st);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "round 3: 50 decoys went over 4.9 ms and 1 CNPs");
	set_rounds(&st);

	/* The stream stopped in round 2 (it stalled for good), or was over in
	 * round 3 (a sender faster than the stream is long): nothing to judge. */
	st.rounds = 2;
	st.rounds_done = false;
	probe_expect_cnp_reaction(&r, &st);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "stopped after 10001 packets, in round 2 of 3");
	st.rounds = 3;
	st.complete = true;
	st.n = make_stream(t, 20000, 10, even, even, 45000);
	probe_expect_cnp_reaction(&r, &st);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "ended after 4501 packets, in round 3 of 3");
	set_rounds(&st);

	/* The rounds ran their course but the stream went quiet in the last
	 * CNPs (this side waits 500 ms for it). */
	st.n = make_stream(t, 20000, 10, even, even, 45000);
	probe_expect_cnp_reaction(&r, &st);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "stopped during the CNPs");

	/* No packet before the decoys but the first: no rate to hold the
	 * rounds to. */
	st.n = make_stream(t, 20000, 15000, even, slow, 100000);
	probe_expect_cnp_reaction(&r, &st);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
	CHECK_HAS(u, r.observed, "no rate before the decoys");
}

/* The remote's WRITE at 0 and its retransmission gap_us later (0: none),
 * judged for timeout 14 (67.1 ms nominal, up to 268.4 ms allowed). */
static enum probe_verdict ack_gap(struct probe_result *r, uint64_t gap_us)
{
	*r = fresh();
	req_in(r, PSN, 0);
	if (gap_us)
		req_in(r, PSN, gap_us);
	probe_expect_ack_timer(r, PSN, 14, 4000);
	return r->verdict;
}

static void test_ack_timer(struct unit *u)
{
	struct probe_result r;

	CHECK_EQ(u, ack_gap(&r, 67500), PROBE_PASS);
	CHECK_HAS(u, r.observed, "67.500 ms = 1.01 x");
	/* Within two ticks short of nominal still passes (the timer's tick,
	 * the first packet's delay: 60.5 ms was seen on rxe under TCG);
	 * 10 ms short does not. */
	CHECK_EQ(u, ack_gap(&r, 64000), PROBE_PASS);
	CHECK_EQ(u, ack_gap(&r, 60500), PROBE_PASS);
	CHECK_HAS(u, r.observed, "8 ms early");
	CHECK_EQ(u, ack_gap(&r, 57000), PROBE_DEVIATION);
	/* Too late: past 4 x. */
	CHECK_EQ(u, ack_gap(&r, 300000), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "allows 67.109 to 268.435 ms");
	/* Never retransmitted; never sent at all. */
	CHECK_EQ(u, ack_gap(&r, 0), PROBE_DEVIATION);
	r = fresh();
	probe_expect_ack_timer(&r, PSN, 14, 4000);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

static void test_no_timer(struct unit *u)
{
	struct probe_result r = fresh();

	req_in(&r, PSN, 0);
	r.trace.end_ns = 1500000 * 1000ull;
	probe_expect_no_timer(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "not sent again in 1.5 s");

	req_in(&r, PSN, 1000);
	probe_expect_no_timer(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "sent again 1.000 ms later");

	r = fresh();
	probe_expect_no_timer(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

static void test_rnr_forever(struct unit *u)
{
	struct probe_result r = fresh();

	for (unsigned k = 0; k < 3; k++) {
		req_in(&r, PSN, 100 * k);
		answer_out(&r, wire_aeth_make(WIRE_AETH_RNR_NAK, 1), PSN, 100 * k + 10);
	}
	req_in(&r, PSN, 300);
	answer_out(&r, ACK, PSN, 310);
	send_wc(&r, XPORT_WC_SUCCESS);
	probe_expect_rnr_forever(&r, PSN, 3);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "each of 3 RNR NAKs");

	/* It completed with an error instead. */
	r.trace.remote.wc[0].status = XPORT_WC_RNR_RETRY_EXC_ERR;
	probe_expect_rnr_forever(&r, PSN, 3);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);

	/* It gave up: not sent after the third. */
	r.trace.n = 6;
	probe_expect_rnr_forever(&r, PSN, 3);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "gave up after 3 RNR NAKs (sent 3 times)");
}

static void test_retries(struct unit *u)
{
	struct probe_result r = fresh();

	for (int i = 0; i < 4; i++)
		req_in(&r, PSN, (uint64_t)i * 20000);
	send_wc(&r, XPORT_WC_RETRY_EXC_ERR);
	probe_expect_retries(&r, PSN, 3);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_EQ(u, r.evidence[0], 1);
	CHECK_EQ(u, r.evidence[1], 4);
	/* retry_cnt 7 taken as forever (rxe). */
	r = fresh();
	for (int i = 0; i < 11; i++)
		req_in(&r, PSN, (uint64_t)i * 20000);
	probe_expect_retries(&r, PSN, 7);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "10 retransmissions over 0.2 s for retry_cnt 7");
	/* Gave up early. */
	r = fresh();
	req_in(&r, PSN, 0);
	req_in(&r, PSN, 20000);
	send_wc(&r, XPORT_WC_RETRY_EXC_ERR);
	probe_expect_retries(&r, PSN, 3);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "gave up after 1 retransmissions");
	/* The right count, but the work request did not fail. */
	r = fresh();
	for (int i = 0; i < 4; i++)
		req_in(&r, PSN, (uint64_t)i * 20000);
	send_wc(&r, XPORT_WC_SUCCESS);
	probe_expect_retries(&r, PSN, 3);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

static void test_resend_from(struct unit *u)
{
	struct probe_result r = fresh();

	for (uint32_t i = 0; i < 4; i++)
		req_in(&r, PSN + i, i);
	answer_out(&r, nak(WIRE_NAK_PSN_SEQ_ERR), PSN + 2, 10);
	req_in(&r, PSN + 2, 900);
	req_in(&r, PSN + 3, 901);
	probe_expect_resend_from(&r, PSN + 2);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_EQ(u, r.evidence[0], 5);
	CHECK_EQ(u, r.evidence[1], 6);
	/* Back to the first packet of the message: not what the NAK said. */
	r = fresh();
	for (uint32_t i = 0; i < 4; i++)
		req_in(&r, PSN + i, i);
	answer_out(&r, nak(WIRE_NAK_PSN_SEQ_ERR), PSN + 2, 10);
	req_in(&r, PSN, 900);
	probe_expect_resend_from(&r, PSN + 2);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "resent from PSN 0x001000 after a NAK naming 0x001002");
	/* Nothing after the NAK. */
	r = fresh();
	req_in(&r, PSN, 0);
	answer_out(&r, nak(WIRE_NAK_PSN_SEQ_ERR), PSN, 10);
	probe_expect_resend_from(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

static void test_rnr_wait(struct unit *u)
{
	uint8_t code = wire_rnr_timer_code(10240);
	struct probe_result r = fresh();

	req_in(&r, PSN, 0);
	answer_out(&r, wire_aeth_make(WIRE_AETH_RNR_NAK, code), PSN, 100);
	req_in(&r, PSN, 100 + 10500);
	probe_expect_rnr_wait(&r, PSN, 4000);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "for an RNR NAK timer of 10.24 ms");
	/* Resent at once: the timer ignored. */
	r = fresh();
	req_in(&r, PSN, 0);
	answer_out(&r, wire_aeth_make(WIRE_AETH_RNR_NAK, code), PSN, 100);
	req_in(&r, PSN, 100 + 500);
	probe_expect_rnr_wait(&r, PSN, 4000);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	/* Never resent. */
	r = fresh();
	req_in(&r, PSN, 0);
	answer_out(&r, wire_aeth_make(WIRE_AETH_RNR_NAK, code), PSN, 100);
	probe_expect_rnr_wait(&r, PSN, 4000);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

/* A packet of the remote's to this side's QP qpn, from UDP port sport, with ToS tos. */
static void pkt_in(struct probe_result *r, uint32_t qpn, uint16_t sport, uint8_t tos)
{
	struct probe_event *e = &r->trace.ev[r->trace.n++];

	*e = (struct probe_event){ .frame = r->trace.n, .rx = true, .opcode = OP_RC_WRITE_MIDDLE,
				   .dqpn = qpn, .sport = sport, .tos = tos };
}

/* The remote's READ request: PSN, VA and length. */
static void read_in(struct probe_result *r, uint32_t psn, uint64_t va, uint32_t len, uint64_t t_us)
{
	req_in(r, psn, t_us);
	r->trace.ev[r->trace.n - 1].opcode = OP_RC_READ_REQUEST;
	r->trace.ev[r->trace.n - 1].va = va;
	r->trace.ev[r->trace.n - 1].dmalen = len;
}

static void read_wc(struct probe_result *r, enum xport_wc_status st, uint64_t bytes)
{
	r->trace.remote.wc[r->trace.remote.n_wc++] =
		(struct xport_wc){ .opcode = XPORT_WC_RDMA_READ, .status = st };
	r->trace.remote.changed_bytes = bytes;
}

static void test_read_resume(struct unit *u)
{
	struct probe_result r = fresh();

	/* First, (Middle lost), Middle, Last; then the READ from the lost one. */
	read_in(&r, PSN, 0x10000, 4096, 0);
	answer_out(&r, ACK, PSN, 100);
	tx(&r, OP_RC_READ_RESPONSE_MIDDLE, PSN + 2, 101);
	answer_out(&r, ACK, PSN + 3, 102);
	read_in(&r, PSN + 1, 0x10400, 3072, 400);
	answer_out(&r, ACK, PSN + 1, 500);
	read_wc(&r, XPORT_WC_SUCCESS, 4096);
	probe_expect_read_resume(&r, PSN, PSN + 1, 1024, 14);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "1024 bytes on, 0.299 ms after the out-of-sequence response (at once");
	CHECK_EQ(u, r.n_evidence, 5);

	/* By the ACK timer (67.1 ms at 14): still a pass, said so. */
	r.trace.ev[4].t_ns = 70000 * 1000ull;
	probe_expect_read_resume(&r, PSN, PSN + 1, 1024, 14);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "by the timer");
	r.trace.ev[4].t_ns = 400 * 1000ull;

	/* Asked again, but it never completed. */
	r.trace.remote.n_wc = 0;
	r.n_evidence = 0;
	probe_expect_read_resume(&r, PSN, PSN + 1, 1024, 14);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "did not complete");

	/* The whole READ again: informational. */
	r.trace.ev[4].psn = PSN;
	r.trace.ev[4].va = 0x10000;
	r.trace.ev[4].dmalen = 4096;
	read_wc(&r, XPORT_WC_SUCCESS, 4096);
	probe_expect_read_resume(&r, PSN, PSN + 1, 1024, 14);
	CHECK_EQ(u, r.verdict, PROBE_INFO);

	/* From the right PSN, but the VA not moved on. */
	r.trace.ev[4].psn = PSN + 1;
	r.trace.ev[4].dmalen = 3072;
	probe_expect_read_resume(&r, PSN, PSN + 1, 1024, 14);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "required: PSN 0x001001, 3072 bytes at +1024");

	/* Never asked again, and completed anyway: data missing. */
	r = fresh();
	read_in(&r, PSN, 0x10000, 4096, 0);
	answer_out(&r, ACK, PSN, 100);
	answer_out(&r, ACK, PSN + 3, 102);
	read_wc(&r, XPORT_WC_SUCCESS, 4096);
	probe_expect_read_resume(&r, PSN, PSN + 1, 1024, 14);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "completed successfully with the response");
}

static void test_implied_nak(struct unit *u)
{
	struct probe_result r = fresh();

	read_in(&r, PSN, 0x10000, 64, 0);
	req_in(&r, PSN + 1, 10);		/* the WRITE */
	answer_out(&r, ACK, PSN + 1, 1000);
	read_in(&r, PSN, 0x10000, 64, 1100);
	answer_out(&r, ACK, PSN, 1200);
	read_wc(&r, XPORT_WC_SUCCESS, 64);
	probe_expect_implied_nak(&r, PSN, 18, 4000);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "0.100 ms after the ACK");

	/* Resent only when the ACK timer (1073.7 ms at 18) ran out. */
	r.trace.ev[3].t_ns = (1000 + 1074000) * 1000ull;
	probe_expect_implied_nak(&r, PSN, 18, 4000);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "by its ACK timer");

	/* Not resent, and completed without its data. */
	r.trace.n = 3;
	probe_expect_implied_nak(&r, PSN, 18, 4000);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "completed successfully, unanswered");

	/* Not resent at all. */
	r.trace.remote.n_wc = 0;
	probe_expect_implied_nak(&r, PSN, 18, 4000);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "not sent again");
}

/* The remote's FETCH_ADD at t_us: of `add`, at va. */
static void fetch_add_in(struct probe_result *r, uint64_t va, uint64_t add, uint64_t t_us)
{
	req_in(r, PSN, t_us);
	r->trace.ev[r->trace.n - 1].opcode = OP_RC_FETCH_ADD;
	r->trace.ev[r->trace.n - 1].va = va;
	r->trace.ev[r->trace.n - 1].swap_add = add;
}

/* Its first transmission unanswered, the second answered with ORIG; the
 * remote's completion and the first bytes of its buffer. */
#define FA_VA 0x10000
#define FA_ADD 0x0102030405060708ull
#define FA_ORIG 0x1122334455667788ull
static struct probe_result lost_atomic(uint64_t resent_add, bool resent, enum xport_wc_status st,
				       const uint8_t head[8])
{
	struct probe_result r = fresh();

	fetch_add_in(&r, FA_VA, FA_ADD, 0);
	if (resent) {
		fetch_add_in(&r, FA_VA, resent_add, 67000);
		answer_out(&r, ACK, PSN, 67050);
		r.trace.ev[r.trace.n - 1].opcode = OP_RC_ATOMIC_ACK;
		r.trace.ev[r.trace.n - 1].orig = FA_ORIG;
	}
	r.trace.remote.wc[r.trace.remote.n_wc++] =
		(struct xport_wc){ .opcode = XPORT_WC_FETCH_ADD, .status = st, .byte_len = 8 };
	memcpy(r.trace.remote.head, head, 8);
	return r;
}

/* The remote's WRITE from PSN 0xfffffe, its packets at these PSNs, the
 * ACK for the last; a retransmission after it if `again`. */
static struct probe_result send_wrap(const uint32_t *psns, unsigned n, bool again,
				     enum xport_wc_status st)
{
	static const uint8_t ops[] = { OP_RC_WRITE_FIRST, OP_RC_WRITE_MIDDLE, OP_RC_WRITE_MIDDLE,
				       OP_RC_WRITE_LAST };
	struct probe_result r = fresh();

	for (unsigned k = 0; k < n; k++) {
		req_in(&r, psns[k], 10 * k);
		r.trace.ev[r.trace.n - 1].opcode = ops[k];
		r.trace.ev[r.trace.n - 1].payload_len = 1024;
	}
	answer_out(&r, ACK, psns[n - 1], 100);
	if (again) {
		req_in(&r, psns[0], 67000);
		r.trace.ev[r.trace.n - 1].opcode = OP_RC_WRITE_FIRST;
	}
	send_wc(&r, st);
	return r;
}

/* The analysis of send_psn_wrap on r, the QP having started at first. */
static enum probe_verdict judge_wrap(struct probe_result *r, uint32_t first)
{
	probe_expect_send_wrap(r, 0xfffffe, first, 4, 1024);
	return r->verdict;
}

static void test_send_wrap(struct unit *u)
{
	static const uint32_t wraps[] = { 0xfffffe, 0xffffff, 0, 1 };
	static const uint32_t skips_0[] = { 0xfffffe, 0xffffff, 1, 2 };
	struct probe_result r = send_wrap(wraps, 4, false, XPORT_WC_SUCCESS);

	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_PASS);
	CHECK_EQ(u, r.n_evidence, 5);
	CHECK_HAS(u, r.observed, "PSNs 0xfffffe to 0x000001 in order");
	/* PSNs that do not run on modulo 2^24: 0 skipped. */
	r = send_wrap(skips_0, 4, false, XPORT_WC_SUCCESS);
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "packet 3 of the WRITE came with PSN 0x000001");
	/* The ACK for PSN 1 not taken to cover 0xfffffe: sent again. */
	r = send_wrap(wraps, 4, true, XPORT_WC_SUCCESS);
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "sent again after the ACK");
	/* A resend that left before the ACK reached it is no fault. */
	r = send_wrap(wraps, 4, true, XPORT_WC_SUCCESS);
	r.trace.ev[r.trace.n - 1].t_ns = 101000;
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_PASS);
	/* The packets of one message, in order: FIRST, MIDDLE, MIDDLE, LAST. */
	r = send_wrap(wraps, 4, false, XPORT_WC_SUCCESS);
	r.trace.ev[2].opcode = OP_RC_WRITE_FIRST;
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "packet 3 of the WRITE (PSN 0x000000) is opcode 0x06");
	/* A smaller path MTU than asked: no verdict. */
	r = send_wrap(wraps, 4, false, XPORT_WC_SUCCESS);
	r.trace.ev[0].payload_len = 512;
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_FAIL);
	r = send_wrap(wraps, 4, false, XPORT_WC_RETRY_EXC_ERR);
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_DEVIATION);
	/* No verdict: the QP did not start where asked, or sent too little. */
	r = send_wrap(wraps, 4, false, XPORT_WC_SUCCESS);
	CHECK_EQ(u, judge_wrap(&r, 0x123456), PROBE_FAIL);
	r = send_wrap(wraps, 2, false, XPORT_WC_SUCCESS);
	CHECK_EQ(u, judge_wrap(&r, 0xfffffe), PROBE_FAIL);
}

/* The analysis of lost_atomic_ack on r: its verdict. */
static enum probe_verdict judge(struct probe_result *r)
{
	probe_expect_atomic_resend(r, PSN, FA_VA, FA_ADD, FA_ORIG);
	return r->verdict;
}

static void test_lost_atomic_ack(struct unit *u)
{
	static const uint8_t orig_le[8] = { 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
	static const uint8_t orig_be[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	static const uint8_t fill[8] = { 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5 };
	struct probe_result r = lost_atomic(FA_ADD, true, XPORT_WC_SUCCESS, orig_le);

	CHECK_EQ(u, judge(&r), PROBE_PASS);
	CHECK_HAS(u, r.observed, "sent again unchanged 67.000 ms after");
	CHECK_HAS(u, r.observed, "little-endian");
	CHECK_EQ(u, r.n_evidence, 3);
	r = lost_atomic(FA_ADD, true, XPORT_WC_SUCCESS, orig_be);
	CHECK_EQ(u, judge(&r), PROBE_PASS);
	CHECK_HAS(u, r.observed, "big-endian");
	/* Completed, but the value answered never reached its buffer. */
	r = lost_atomic(FA_ADD, true, XPORT_WC_SUCCESS, fill);
	CHECK_EQ(u, judge(&r), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "holds 0xa5a5a5a5a5a5a5a5");
	/* The retry changed the request. */
	r = lost_atomic(FA_ADD + 1, true, XPORT_WC_SUCCESS, orig_le);
	CHECK_EQ(u, judge(&r), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "unchanged");
	/* Answered, yet an error completion. */
	r = lost_atomic(FA_ADD, true, XPORT_WC_BAD_RESP_ERR, orig_le);
	CHECK_EQ(u, judge(&r), PROBE_DEVIATION);
	/* Never sent again; or completed without any ATOMIC ACK. */
	r = lost_atomic(FA_ADD, false, XPORT_WC_RETRY_EXC_ERR, fill);
	r.trace.remote.n_wc = 0;
	CHECK_EQ(u, judge(&r), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "never sent again");
	r = lost_atomic(FA_ADD, false, XPORT_WC_SUCCESS, fill);
	CHECK_EQ(u, judge(&r), PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "no atomic ACK");
	/* Not the FETCH_ADD posted: another VA. */
	r = fresh();
	fetch_add_in(&r, FA_VA + 8, FA_ADD, 0);
	CHECK_EQ(u, judge(&r), PROBE_DEVIATION);
	/* Nothing came: no verdict. */
	r = fresh();
	CHECK_EQ(u, judge(&r), PROBE_FAIL);
	/* The remote's state unknown: no verdict either. */
	r = lost_atomic(FA_ADD, true, XPORT_WC_SUCCESS, orig_le);
	r.trace.remote_known = false;
	CHECK_EQ(u, judge(&r), PROBE_FAIL);
}

static void test_packets(struct unit *u)
{
	struct probe_result r = fresh();

	/* ECN: all ECT, none (rxe), some. */
	pkt_in(&r, 1, 5000, WIRE_ECT0);
	pkt_in(&r, 1, 5000, WIRE_ECT1);
	probe_expect_ect(&r);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	r = fresh();
	pkt_in(&r, 1, 5000, 0);
	pkt_in(&r, 1, 5000, 0);
	probe_expect_ect(&r);
	CHECK_EQ(u, r.verdict, PROBE_NOT_IMPL);
	r = fresh();
	pkt_in(&r, 1, 5000, WIRE_ECT0);
	pkt_in(&r, 1, 5000, 0);
	probe_expect_ect(&r);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "1 of its 2 data packets");
	/* CE-marked on the way: it left ECN-capable. */
	r = fresh();
	pkt_in(&r, 1, 5000, WIRE_CE);
	probe_expect_ect(&r);
	CHECK_EQ(u, r.verdict, PROBE_PASS);

	/* DSCP. */
	r = fresh();
	pkt_in(&r, 1, 5000, 26 << 2 | WIRE_ECT0);
	pkt_in(&r, 1, 5000, 26 << 2);
	probe_expect_dscp(&r, 26);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	r = fresh();
	pkt_in(&r, 1, 5000, 26 << 2);
	pkt_in(&r, 1, 5000, 0);
	probe_expect_dscp(&r, 26);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "1 of its 2 packets carry DSCP 0");

	/* Source ports: one per QP, one for both, several for one. */
	r = fresh();
	pkt_in(&r, 1, 5000, 0);
	pkt_in(&r, 2, 5001, 0);
	probe_expect_sports(&r, 1, 2);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	r = fresh();
	pkt_in(&r, 1, 4791, 0);
	pkt_in(&r, 2, 4791, 0);
	probe_expect_sports(&r, 1, 2);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	r = fresh();
	pkt_in(&r, 1, 5000, 0);
	pkt_in(&r, 1, 5002, 0);
	pkt_in(&r, 2, 5001, 0);
	probe_expect_sports(&r, 1, 2);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	r = fresh();
	pkt_in(&r, 1, 5000, 0);
	probe_expect_sports(&r, 1, 2);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

/* The remote's packet with its solved IPv4 ID and DF bit (ok: solvable). */
static void ip_in(struct probe_result *r, bool ok, bool df, uint16_t id)
{
	pkt_in(r, 0xD000, 50000, 0);
	r->trace.ev[r->trace.n - 1].icrc_ok = ok;
	r->trace.ev[r->trace.n - 1].df = df;
	r->trace.ev[r->trace.n - 1].ip_id = id;
}

static void test_ipv4(struct unit *u)
{
	struct probe_result r = fresh();

	for (int k = 0; k < 4; k++)
		ip_in(&r, true, true, 0);
	probe_expect_ipv4(&r);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	CHECK_HAS(u, r.observed, "DF set, IPv4 ID 0");

	/* IDs counting up, as rxe's: allowed under DF. */
	for (int k = 0; k < 4; k++)
		r.trace.ev[k].ip_id = (uint16_t)(0x2F10 + k);
	probe_expect_ipv4(&r);
	CHECK_EQ(u, r.verdict, PROBE_INFO);
	CHECK_HAS(u, r.observed, "0x2f10 to 0x2f13 (0 of them 0)");

	/* One without DF. */
	r.trace.ev[2].df = false;
	probe_expect_ipv4(&r);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "1 of its 4 packets have DF clear");

	/* One whose ICRC no ID makes hold. */
	r.trace.ev[1].icrc_ok = false;
	probe_expect_ipv4(&r);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "a bad ICRC");

	r = fresh();
	probe_expect_ipv4(&r);
	CHECK_EQ(u, r.verdict, PROBE_FAIL);
}

static void test_msn(struct unit *u)
{
	struct probe_result r = fresh();

	tx(&r, OP_RC_WRITE_ONLY, PSN, 0);
	rx(&r, ACK, PSN, 80);
	tx(&r, OP_RC_WRITE_ONLY, PSN + 1, 100);
	rx(&r, ACK, PSN + 1, 180);
	r.trace.ev[1].msn = 1;
	r.trace.ev[3].msn = 2;
	probe_expect_msn(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_PASS);
	r.trace.ev[3].msn = 1;
	probe_expect_msn(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
	CHECK_HAS(u, r.observed, "MSNs 1 and 1");
	r.trace.n = 3;
	probe_expect_msn(&r, PSN);
	CHECK_EQ(u, r.verdict, PROBE_DEVIATION);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_cnp_reaction);
	RUN(&u, test_ack_timer);
	RUN(&u, test_no_timer);
	RUN(&u, test_rnr_forever);
	RUN(&u, test_retries);
	RUN(&u, test_resend_from);
	RUN(&u, test_rnr_wait);
	RUN(&u, test_read_resume);
	RUN(&u, test_implied_nak);
	RUN(&u, test_lost_atomic_ack);
	RUN(&u, test_send_wrap);
	RUN(&u, test_packets);
	RUN(&u, test_ipv4);
	RUN(&u, test_msn);
	return unit_done(&u);
}
