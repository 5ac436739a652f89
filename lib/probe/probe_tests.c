// SPDX-License-Identifier: MIT
/*
 * The tests: each sets up a fresh remote QP, sends what the test is about,
 * records the answer and the remote's state, and leaves the verdict to an
 * analysis in probe_analyze.c.  A test returns -1 when it could not run to
 * a verdict (the result already says why).
 */
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"

/* How long an answer may take (rxe in a guest without KVM answers in
 * milliseconds), how long to keep listening after it for more (a second
 * NAK, a repeated ACK), and how long silence must last to count. */
#define ANSWER_MS 2000
#define SETTLE_MS 200
#define SILENT_MS 300

#define REGION_BYTES 4096u

/* A request, placed in the region the remote set up for the test. */
struct shape {
	uint8_t opcode;
	int32_t psn_ahead;		/* PSN: this many past the one the remote expects */
	uint64_t offset;		/* into the region */
	uint32_t dmalen;		/* RETH length */
	uint32_t len;			/* payload bytes */
	uint8_t byte;
	bool bad_rkey;			/* an rkey the remote did not hand out */
	bool corrupt_icrc;
	uint64_t swap_add, compare;	/* atomics */
	bool ce;			/* marked Congestion Experienced */
};

/* The remote's own rkey with the index bits changed (rxe and RNICs keep
 * an index above an 8-bit key): one it did not hand out. */
static struct probe_req place(const struct probe_ctx *c, const struct shape *s)
{
	return (struct probe_req){
		.opcode = s->opcode, .psn = wire_psn_add(c->psn, (uint32_t)s->psn_ahead),
		.ackreq = true, .va = c->mr.va + s->offset,
		.rkey = s->bad_rkey ? c->mr.rkey ^ 0x005A5A00u : c->mr.rkey, .dmalen = s->dmalen,
		.len = s->len, .byte = s->byte, .corrupt_icrc = s->corrupt_icrc,
		.swap_add = s->swap_add, .compare = s->compare, .ce = s->ce,
	};
}

/* Sends the request and records what comes back for it. */
static int ask(struct probe_ctx *c, const struct shape *s)
{
	struct probe_req q = place(c, s);

	if (!probe_send(c, &q))
		return -1;
	probe_collect(c, q.psn, ANSWER_MS, SETTLE_MS);
	return 0;
}

/* One request to a fresh QP, its answer (or whether the QP still answers
 * at all) and the remote's state after. */
static int exchange(struct probe_ctx *c, int access, uint32_t mtu, const struct shape *s)
{
	struct probe_setup setup = probe_setup_defaults(access, 0);

	setup.mtu = mtu ? mtu : setup.mtu;
	if (probe_setup(c, &setup) < 0 || ask(c, s) < 0)
		return -1;
	probe_check_alive(c, place(c, s).psn, ANSWER_MS);
	return probe_fetch_state(c);
}

/* A test of one request to a fresh QP and the one answer it must draw. */
enum single_expect { EXPECT_NAK, EXPECT_ACK, EXPECT_RNR };
struct single {
	struct shape request;
	int access;			/* the region's remote access */
	enum single_expect expect;
	uint8_t nak_code;		/* EXPECT_NAK: enum wire_nak_code */
	uint32_t mtu;			/* the path MTU (0: 1024) */
};

static int single_request(struct probe_ctx *c, struct probe_result *r)
{
	const struct single *t = r->test->script;

	if (exchange(c, t->access, t->mtu, &t->request) < 0)
		return -1;
	switch (t->expect) {
	case EXPECT_NAK:
		probe_expect_nak(r, c->psn, t->nak_code, true);
		break;
	case EXPECT_ACK:
		probe_expect_ack(r, c->psn, 0, 0);
		break;
	case EXPECT_RNR:
		probe_expect_rnr(r, c->psn);
		break;
	}
	return 0;
}

/* 64 bytes of 0x11: WRITEs with an rkey the remote did not hand out, past
 * the region's end (by 32 bytes), and to a region without remote write. */
static const struct single write_invalid_rkey = {
	{ .opcode = OP_RC_WRITE_ONLY, .dmalen = 64, .len = 64, .byte = 0x11, .bad_rkey = true },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};
static const struct single write_out_of_bounds = {
	{ .opcode = OP_RC_WRITE_ONLY, .offset = REGION_BYTES - 32, .dmalen = 64, .len = 64,
	  .byte = 0x11 },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};
static const struct single write_no_access = {
	{ .opcode = OP_RC_WRITE_ONLY, .dmalen = 64, .len = 64, .byte = 0x11 },
	XPORT_ACCESS_REMOTE_READ, EXPECT_NAK, WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};
static const struct single read_invalid_rkey = {
	{ .opcode = OP_RC_READ_REQUEST, .dmalen = 64, .bad_rkey = true },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};
/* A READ from a region without remote read, an atomic on one without
 * remote atomic access. */
static const struct single read_no_access = {
	{ .opcode = OP_RC_READ_REQUEST, .dmalen = 64 },
	XPORT_ACCESS_REMOTE_WRITE, EXPECT_NAK, WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};
static const struct single atomic_no_access = {
	{ .opcode = OP_RC_FETCH_ADD, .swap_add = 1 },
	XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_READ, EXPECT_NAK,
	WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};
/* A zero-length transfer carries no rkey worth checking. */
static const struct single write_zero_length_invalid_rkey = {
	{ .opcode = OP_RC_WRITE_ONLY, .bad_rkey = true },
	ALL_ACCESS, EXPECT_ACK, 0, 0,
};
/* The QP has no receive posted. */
static const struct single send_no_receive = {
	{ .opcode = OP_RC_SEND_ONLY, .len = 64, .byte = 0x11 },
	ALL_ACCESS, EXPECT_RNR, 0, 0,
};
/* A Middle carries exactly one path MTU (1024 here) and no RETH. */
static const struct single write_middle_without_first = {
	{ .opcode = OP_RC_WRITE_MIDDLE, .len = 1024, .byte = 0x11 },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_INVALID_REQ, 0,
};

/* A Last carries 1 to MTU bytes and no RETH. */
static const struct single write_last_without_first = {
	{ .opcode = OP_RC_WRITE_LAST, .len = 64, .byte = 0x11 },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_INVALID_REQ, 0,
};

/* 512 bytes in one WRITE Only on a path MTU of 256: a packet that small
 * links carry, so the kernel's DF never refuses it. */
static const struct single payload_beyond_mtu = {
	{ .opcode = OP_RC_WRITE_ONLY, .dmalen = 512, .len = 512, .byte = 0x11 },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_INVALID_REQ, 256,
};

/* Fetch-and-add of 1: at offset 4 (an atomic's VA must be 8-byte
 * aligned), and with an rkey the remote did not hand out. */
static const struct single atomic_misaligned = {
	{ .opcode = OP_RC_FETCH_ADD, .offset = 4, .swap_add = 1 },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_INVALID_REQ, 0,
};
static const struct single atomic_invalid_rkey = {
	{ .opcode = OP_RC_FETCH_ADD, .swap_add = 1, .bad_rkey = true },
	ALL_ACCESS, EXPECT_NAK, WIRE_NAK_REMOTE_ACCESS_ERR, 0,
};

static int psn_ahead(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape a = {
		.opcode = OP_RC_WRITE_ONLY, .psn_ahead = 3, .dmalen = 64, .len = 64, .byte = 0x11,
	};
	const struct shape b = {
		.opcode = OP_RC_WRITE_ONLY, .psn_ahead = 4, .offset = 64, .dmalen = 64, .len = 64,
		.byte = 0x22,
	};

	if (probe_setup_default(c, ALL_ACCESS, 0) < 0)
		return -1;
	/* Two requests ahead, back to back: one episode.  The NAK names the
	 * PSN the remote expects, so that is the answer waited for. */
	struct probe_req qa = place(c, &a), qb = place(c, &b);

	if (!probe_send(c, &qa) || !probe_send(c, &qb))
		return -1;
	probe_collect(c, c->psn, ANSWER_MS, SILENT_MS);
	probe_check_alive(c, c->psn, ANSWER_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_one_seq_nak(r, c->psn);
	return 0;
}

/* Two requests to a fresh QP with `recvs` receives posted, each with
 * its answer, and the remote's state after. */
static int two_requests(struct probe_ctx *c, unsigned recvs, const struct shape *a,
			const struct shape *b)
{
	if (probe_setup_default(c, ALL_ACCESS, recvs) < 0 || ask(c, a) < 0 || ask(c, b) < 0)
		return -1;
	probe_check_alive(c, c->psn, ANSWER_MS);
	return probe_fetch_state(c);
}

static int duplicate_send(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape s = { .opcode = OP_RC_SEND_ONLY, .len = 64, .byte = 0x11 };

	if (two_requests(c, 2, &s, &s) < 0)
		return -1;
	probe_expect_dup_ack(r, c->psn, 2);
	return 0;
}

/* A WRITE, then a duplicate of it (its PSN) that would place its bytes
 * 64 further on: the region shows whether the duplicate was executed. */
static int duplicate_write(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape a = { .opcode = OP_RC_WRITE_ONLY, .dmalen = 64, .len = 64, .byte = 0x11 };
	const struct shape dup = { .opcode = OP_RC_WRITE_ONLY, .offset = 64, .dmalen = 64, .len = 64,
				   .byte = 0x22 };

	if (two_requests(c, 0, &a, &dup) < 0)
		return -1;
	probe_expect_dup_write(r, c->psn, 64);
	return 0;
}

static int duplicate_read(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape rd = { .opcode = OP_RC_READ_REQUEST, .dmalen = 64 };

	if (two_requests(c, 0, &rd, &rd) < 0)
		return -1;
	probe_expect_dup_read(r, c->psn, 64);
	return 0;
}

/* A fetch-and-add of 1 to the region's first 8 bytes (all 0xA5), its
 * duplicate, then a READ of those 8 bytes: the duplicate must replay the
 * original value and add nothing. */
#define FILL64 0xA5A5A5A5A5A5A5A5ull

static int duplicate_atomic(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape add = { .opcode = OP_RC_FETCH_ADD, .swap_add = 1 };
	const struct shape rd = { .opcode = OP_RC_READ_REQUEST, .psn_ahead = 1, .dmalen = 8 };

	if (probe_setup_default(c, ALL_ACCESS, 0) < 0 || ask(c, &add) < 0 || ask(c, &add) < 0 ||
	    ask(c, &rd) < 0)
		return -1;
	probe_check_alive(c, c->psn, ANSWER_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_dup_atomic(r, c->psn, FILL64, 1);
	return 0;
}

/* WRITEs marked CE on the way, back to back, each asking for an ACK. */
#define CE_WRITES 8

static int ce_cnp(struct probe_ctx *c, struct probe_result *r)
{
	if (probe_setup_default(c, ALL_ACCESS, 0) < 0)
		return -1;
	for (int32_t k = 0; k < CE_WRITES; k++) {
		const struct shape w = { .opcode = OP_RC_WRITE_ONLY, .psn_ahead = k,
					 .offset = 64u * (uint32_t)k, .dmalen = 64, .len = 64,
					 .byte = 0x11, .ce = true };
		struct probe_req q = place(c, &w);

		if (!probe_send(c, &q))
			return -1;
	}
	/* CNPs may trail the last ACK: listen on after it. */
	probe_collect(c, wire_psn_add(c->psn, CE_WRITES - 1), ANSWER_MS, SILENT_MS);
	probe_check_alive(c, wire_psn_add(c->psn, CE_WRITES - 1), ANSWER_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_cnp(r, c->psn, CE_WRITES);
	return 0;
}

/* READs of 64 bytes back to back, more than the QP takes outstanding. */
#define READS_AHEAD 4

static int outstanding_reads(struct probe_ctx *c, struct probe_result *r)
{
	struct probe_setup s = probe_setup_defaults(ALL_ACCESS, 0);

	s.rd_atomic = 1;
	if (probe_setup(c, &s) < 0)
		return -1;
	for (int32_t k = 0; k < READS_AHEAD; k++) {
		const struct shape rd = { .opcode = OP_RC_READ_REQUEST, .psn_ahead = k,
					  .offset = 64u * (uint32_t)k, .dmalen = 64 };
		struct probe_req q = place(c, &rd);

		if (!probe_send(c, &q))
			return -1;
	}
	probe_collect(c, wire_psn_add(c->psn, READS_AHEAD - 1), ANSWER_MS, SILENT_MS);
	probe_check_alive(c, c->psn, ANSWER_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_read_limit(r, c->psn, READS_AHEAD, c->rqp.max_rd_atomic);
	return 0;
}

/* A SEND to a QP with receives posted: what credits its ACK carries. */
#define CREDIT_RECVS 4

static int aeth_credits(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape s = { .opcode = OP_RC_SEND_ONLY, .len = 64, .byte = 0x11 };

	if (probe_setup_default(c, ALL_ACCESS, CREDIT_RECVS) < 0 || ask(c, &s) < 0)
		return -1;
	probe_check_alive(c, c->psn, ANSWER_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_credits(r, c->psn, CREDIT_RECVS);
	return 0;
}

/* Three WRITEs from PSN 0xFFFFFE: the third is PSN 0, past the wrap. */
static int psn_wrap(struct probe_ctx *c, struct probe_result *r)
{
	c->psn = WIRE_PSN_MASK - 1;
	if (probe_setup_default(c, ALL_ACCESS, 0) < 0)
		return -1;
	for (int32_t k = 0; k < 3; k++) {
		const struct shape w = { .opcode = OP_RC_WRITE_ONLY, .psn_ahead = k,
					 .offset = 64u * (uint32_t)k, .dmalen = 64, .len = 64,
					 .byte = (uint8_t)(0x11 * (k + 1)) };

		if (ask(c, &w) < 0)
			return -1;
	}
	probe_check_alive(c, wire_psn_add(c->psn, 2), ANSWER_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_acks(r, c->psn, 3, 3 * 64);
	return 0;
}

static int bad_icrc(struct probe_ctx *c, struct probe_result *r)
{
	/* The bad packet writes the first 64 bytes, the good one (same PSN)
	 * the next 64: the region then shows which of them was executed. */
	const struct shape bad = {
		.opcode = OP_RC_WRITE_ONLY, .dmalen = 64, .len = 64, .byte = 0x11,
		.corrupt_icrc = true,
	};
	const struct shape good = {
		.opcode = OP_RC_WRITE_ONLY, .offset = 64, .dmalen = 64, .len = 64, .byte = 0x22,
	};
	struct probe_req q;
	unsigned good_frame;

	if (probe_setup_default(c, ALL_ACCESS, 0) < 0)
		return -1;
	q = place(c, &bad);
	if (!probe_send(c, &q))
		return -1;
	probe_collect(c, -1, SILENT_MS, 0);
	q = place(c, &good);
	if (!(good_frame = probe_send(c, &q)))
		return -1;
	probe_collect(c, q.psn, ANSWER_MS, SETTLE_MS);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_silent_drop(r, good_frame - 1, q.psn);
	return 0;
}

/* --- the remote as requester ------------------------------------------------ */

/* A timer's resolution on the remote: rxe's timers run on jiffies, 4 ms at
 * Debian's HZ=250; an RNIC's are finer. */
#define TIMER_RES_US 4000

static int requester_setup(struct probe_ctx *c, uint8_t timeout, uint8_t retry_cnt,
			   uint8_t rnr_retry)
{
	struct probe_setup s = probe_setup_defaults(ALL_ACCESS, 0);

	s.timeout = timeout;
	s.retry_cnt = retry_cnt;
	s.rnr_retry = rnr_retry;
	return probe_setup(c, &s);
}

static int post_one(struct probe_ctx *c, enum probe_post_op op, uint32_t len)
{
	const struct probe_post w = { op, len, 1, PROBE_VA, PROBE_RKEY, 0 };

	return probe_post(c, &w);
}

/* A WRITE from the remote left unanswered: records its transmissions until
 * the remote has been silent for a while (16 timeouts, 1 s at least: an
 * engine may back its timer off) or has clearly retried more than
 * retry_cnt, within probe_quiet_limit_ms. */
static int withhold_acks(struct probe_ctx *c, uint8_t timeout, uint8_t retry_cnt)
{
	uint64_t nominal_ms = (4096ull << timeout) / 1000000u;
	int silence_ms = (int)(16 * nominal_ms > 1000 ? 16 * nominal_ms : 1000), left;
	uint64_t end = probe_deadline_ms((uint64_t)probe_quiet_limit_ms(c));
	unsigned sent = 0;
	int i;

	if (requester_setup(c, timeout, retry_cnt, 7) < 0 || post_one(c, PROBE_POST_WRITE, 64) < 0)
		return -1;
	while ((left = probe_ms_left(end)) > 0 && sent <= retry_cnt + 3u &&
	       (i = probe_next(c, silence_ms < left ? silence_ms : left)) >= 0)
		sent += !c->r->trace.ev[i].has_aeth;
	return probe_fetch_state(c);
}

static int ack_timeout(struct probe_ctx *c, struct probe_result *r)
{
	if (withhold_acks(c, 14, 3) < 0)
		return -1;
	probe_expect_ack_timer(r, c->rqp.psn, 14, TIMER_RES_US);
	return 0;
}

/* Timeout 0: no ACK timer, so never a retransmission. */
static int ack_timeout_0(struct probe_ctx *c, struct probe_result *r)
{
	if (withhold_acks(c, 0, 3) < 0)
		return -1;
	probe_expect_no_timer(r, c->rqp.psn);
	return 0;
}

static int retry_count(struct probe_ctx *c, struct probe_result *r)
{
	if (withhold_acks(c, 12, 3) < 0)
		return -1;
	probe_expect_retries(r, c->rqp.psn, 3);
	return 0;
}

static int retry_count_7(struct probe_ctx *c, struct probe_result *r)
{
	if (withhold_acks(c, 12, 7) < 0)
		return -1;
	probe_expect_retries(r, c->rqp.psn, 7);
	return 0;
}

/* Waits for the remote's request with this PSN: its index, or -1. */
static int await_request(struct probe_ctx *c, uint32_t psn)
{
	uint64_t end = probe_deadline_ms(ANSWER_MS);
	int i;

	while (probe_ms_left(end) > 0 && (i = probe_next(c, probe_ms_left(end))) >= 0)
		if (!c->r->trace.ev[i].has_aeth && c->r->trace.ev[i].psn == psn)
			return i;
	return -1;
}

/* Waits up to wait_ms for the remote's next READ request: its index, or -1. */
static int await_read(struct probe_ctx *c, int wait_ms)
{
	uint64_t end = probe_deadline_ms((uint64_t)wait_ms);
	int i;

	while (probe_ms_left(end) > 0 && (i = probe_next(c, probe_ms_left(end))) >= 0)
		if (c->r->trace.ev[i].opcode == OP_RC_READ_REQUEST)
			return i;
	return -1;
}

/* Answers the READ request at index i with its responses, as a responder
 * would: bytes of 0x33, MTU-sized, the AETH (an ACK) on First, Last and
 * Only.  False if a send failed. */
static bool respond_read(struct probe_ctx *c, int i, uint32_t msn)
{
	uint32_t len = c->r->trace.ev[i].dmalen, psn = c->r->trace.ev[i].psn;
	uint32_t n = len ? (len + c->mtu - 1) / c->mtu : 1;

	for (uint32_t k = 0; k < n; k++) {
		struct probe_req q = {
			.opcode = n == 1 ? OP_RC_READ_RESPONSE_ONLY : !k ? OP_RC_READ_RESPONSE_FIRST
				: k == n - 1 ? OP_RC_READ_RESPONSE_LAST : OP_RC_READ_RESPONSE_MIDDLE,
			.psn = wire_psn_add(psn, k), .byte = 0x33, .msn = msn,
			.len = k == n - 1 ? len - k * c->mtu : c->mtu,
			.syndrome = wire_aeth_make(WIRE_AETH_ACK, 31),
		};

		if (!probe_send(c, &q))
			return false;
	}
	return true;
}

static int lost_read_response(struct probe_ctx *c, struct probe_result *r)
{
	const uint8_t ops[] = { OP_RC_READ_RESPONSE_FIRST, 0, OP_RC_READ_RESPONSE_MIDDLE,
				OP_RC_READ_RESPONSE_LAST };
	uint32_t p;
	int i;

	/* 4 KiB at MTU 1024: four responses; the second is "lost". */
	if (requester_setup(c, 14, 7, 7) < 0 || post_one(c, PROBE_POST_READ, 4096) < 0)
		return -1;
	p = c->rqp.psn;
	if (await_read(c, ANSWER_MS) < 0)
		goto judge;
	for (uint32_t k = 0; k < 4; k++) {
		const struct probe_req q = {
			.opcode = ops[k], .psn = wire_psn_add(p, k), .len = 1024, .byte = 0x33,
			.syndrome = wire_aeth_make(WIRE_AETH_ACK, 31), .msn = k == 3,
		};

		if (ops[k] && !probe_send(c, &q))
			return -1;
	}
	if ((i = await_read(c, ANSWER_MS)) >= 0 && !respond_read(c, i, 1))
		return -1;
judge:
	probe_collect(c, -1, SETTLE_MS, 0);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_read_resume(r, p, wire_psn_add(p, 1), 1024, 14);
	return 0;
}

/* The remote's own PSNs across 2^24: a 4 KiB WRITE (four packets at MTU
 * 1024) from PSN 0xfffffe, one ACK for its last packet, PSN 1. */
#define SEND_WRAP_PSN 0xFFFFFEu

static int send_psn_wrap(struct probe_ctx *c, struct probe_result *r)
{
	struct probe_setup s = probe_setup_defaults(ALL_ACCESS, 0);
	uint32_t last = wire_psn_add(SEND_WRAP_PSN, 3);

	s.first_psn = SEND_WRAP_PSN;
	if (probe_setup(c, &s) < 0 || post_one(c, PROBE_POST_WRITE, 4096) < 0)
		return -1;
	if (await_request(c, last) >= 0 &&
	    !probe_answer(c, last, wire_aeth_make(WIRE_AETH_ACK, 31), 1))
		return -1;
	/* Long enough for a retransmission (QP timeout 14: 67 ms) to show
	 * if the ACK was not taken to cover the packets before the wrap. */
	probe_collect(c, -1, 400, 0);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_send_wrap(r, SEND_WRAP_PSN, c->rqp.psn, 4, s.mtu);
	return 0;
}

/* The remote's FETCH_ADD, its first ATOMIC ACK "lost": the add and the
 * original value this side answers, each with distinct bytes, so that a
 * value in the wrong byte order or from the wrong place shows. */
#define LOST_ATOMIC_ADD 0x0102030405060708ull
#define LOST_ATOMIC_ORIG 0x1122334455667788ull

static int lost_atomic_ack(struct probe_ctx *c, struct probe_result *r)
{
	const struct probe_post w = { PROBE_POST_FETCH_ADD, 8, 1, PROBE_VA, PROBE_RKEY,
				      LOST_ATOMIC_ADD };
	uint32_t p;

	if (requester_setup(c, 14, 7, 7) < 0 || probe_post(c, &w) < 0)
		return -1;
	p = c->rqp.psn;
	if (await_request(c, p) >= 0 && await_request(c, p) >= 0) {
		const struct probe_req ack = {
			.opcode = OP_RC_ATOMIC_ACK, .psn = p, .msn = 1, .orig = LOST_ATOMIC_ORIG,
			.syndrome = wire_aeth_make(WIRE_AETH_ACK, 31),
		};

		if (!probe_send(c, &ack))
			return -1;
	}
	probe_collect(c, -1, SETTLE_MS, 0);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_atomic_resend(r, p, PROBE_VA, LOST_ATOMIC_ADD, LOST_ATOMIC_ORIG);
	return 0;
}

/* QP timeout 18 (1.07 s): a READ sent again within that came from the
 * implied NAK, not from the timer. */
#define IMPLIED_NAK_TIMEOUT 18

static int implied_nak(struct probe_ctx *c, struct probe_result *r)
{
	const struct probe_post rd = { PROBE_POST_READ, 64, 1, PROBE_VA, PROBE_RKEY, 0 };
	const struct probe_post wr = { PROBE_POST_WRITE, 64, 1, PROBE_VA + 64, PROBE_RKEY, 0 };
	uint32_t p;
	int i;

	if (requester_setup(c, IMPLIED_NAK_TIMEOUT, 7, 7) < 0 || probe_post(c, &rd) < 0 ||
	    probe_post(c, &wr) < 0)
		return -1;
	p = c->rqp.psn;
	/* The READ goes unanswered; the WRITE after it is ACKed.  Long enough
	 * to see a resend by the timer: 4 x 1.07 s and a margin. */
	if (await_request(c, wire_psn_add(p, 1)) >= 0 &&
	    probe_answer(c, wire_psn_add(p, 1), wire_aeth_make(WIRE_AETH_ACK, 31), 2) &&
	    (i = await_read(c, probe_quiet_limit_ms(c) < 5000 ? probe_quiet_limit_ms(c) : 5000)) >= 0) {
		if (!respond_read(c, i, 1))
			return -1;
		/* Go-back-N sends the WRITE again after the READ: ACK it too. */
		if (await_request(c, wire_psn_add(p, 1)) >= 0)
			probe_answer(c, wire_psn_add(p, 1), wire_aeth_make(WIRE_AETH_ACK, 31), 2);
	}
	probe_collect(c, -1, SETTLE_MS, 0);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_implied_nak(r, p, IMPLIED_NAK_TIMEOUT, TIMER_RES_US);
	return 0;
}

static int seq_nak_resend(struct probe_ctx *c, struct probe_result *r)
{
	uint32_t p;

	/* 4 KiB at MTU 1024: First, Middle, Middle, Last.  The NAK names the
	 * third, as if it had been lost: the first two stand acknowledged. */
	if (requester_setup(c, 14, 7, 7) < 0 || post_one(c, PROBE_POST_WRITE, 4096) < 0)
		return -1;
	p = c->rqp.psn;
	if (await_request(c, wire_psn_add(p, 3)) >= 0 &&
	    probe_answer(c, wire_psn_add(p, 2), wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR), 0) &&
	    await_request(c, wire_psn_add(p, 3)) >= 0)
		probe_answer(c, wire_psn_add(p, 3), wire_aeth_make(WIRE_AETH_ACK, 31), 1);
	probe_collect(c, -1, SETTLE_MS, 0);
	if (probe_fetch_state(c) < 0)
		return -1;
	probe_expect_resend_from(r, wire_psn_add(p, 2));
	return 0;
}

/* The remote's SEND (rnr_retry 7) answered with `naks` RNR NAKs carrying
 * the timer for `us`, each once it comes again, then an ACK: its PSN, or
 * -1 when a step failed. */
static int64_t rnr_naks(struct probe_ctx *c, uint32_t us, unsigned naks)
{
	uint8_t code = wire_rnr_timer_code(us);
	uint32_t p;
	unsigned k;

	if (requester_setup(c, 14, 7, 7) < 0 || post_one(c, PROBE_POST_SEND, 64) < 0)
		return -1;
	p = c->rqp.psn;
	for (k = 0; k < naks && await_request(c, p) >= 0; k++)
		if (!probe_answer(c, p, wire_aeth_make(WIRE_AETH_RNR_NAK, code), 0))
			return -1;
	if (k == naks && await_request(c, p) >= 0)
		probe_answer(c, p, wire_aeth_make(WIRE_AETH_ACK, 31), 1);
	probe_collect(c, -1, SETTLE_MS, 0);
	return probe_fetch_state(c) < 0 ? -1 : (int64_t)p;
}

static int rnr_wait(struct probe_ctx *c, struct probe_result *r)
{
	/* 10.24 ms: well above a jiffy, well below the timeouts. */
	int64_t p = rnr_naks(c, 10240, 1);

	if (p < 0)
		return -1;
	probe_expect_rnr_wait(r, (uint32_t)p, TIMER_RES_US);
	return 0;
}

/* rnr_retry 7 means forever: ten RNR NAKs of the shortest timer, 0.01 ms. */
#define RNR_NAKS 10

static int rnr_retry_7(struct probe_ctx *c, struct probe_result *r)
{
	int64_t p = rnr_naks(c, 10, RNR_NAKS);

	if (p < 0)
		return -1;
	probe_expect_rnr_forever(r, (uint32_t)p, RNR_NAKS);
	return 0;
}

/* --- the remote's own packets ----------------------------------------------- */

/* A 4 KiB WRITE from the remote (four packets), ACKed. */
static int remote_write(struct probe_ctx *c, uint8_t tos)
{
	struct probe_setup s = probe_setup_defaults(ALL_ACCESS, 0);
	uint32_t last;

	s.tos = tos;
	if (probe_setup(c, &s) < 0 || post_one(c, PROBE_POST_WRITE, 4096) < 0)
		return -1;
	last = wire_psn_add(c->rqp.psn, 3);
	if (await_request(c, last) >= 0)
		probe_answer(c, last, wire_aeth_make(WIRE_AETH_ACK, 31), 1);
	probe_collect(c, -1, SETTLE_MS, 0);
	return probe_fetch_state(c);
}

static int ect_data(struct probe_ctx *c, struct probe_result *r)
{
	if (remote_write(c, 0) < 0)
		return -1;
	probe_expect_ect(r);
	return 0;
}

static int ipv4_header(struct probe_ctx *c, struct probe_result *r)
{
	if (remote_write(c, 0) < 0)
		return -1;
	probe_expect_ipv4(r);
	return 0;
}

/* DSCP 26 (AF31): a class no default maps to. */
#define PROBE_DSCP 26

static int dscp_tclass(struct probe_ctx *c, struct probe_result *r)
{
	if (remote_write(c, PROBE_DSCP << 2) < 0)
		return -1;
	probe_expect_dscp(r, PROBE_DSCP);
	return 0;
}

static int udp_source_port(struct probe_ctx *c, struct probe_result *r)
{
	uint32_t first = c->qpn;

	/* Two QPs one after the other (the remote holds one at a time); this
	 * side's QP number tells their packets apart. */
	if (remote_write(c, 0) < 0)
		return -1;
	c->qpn = wire_psn_add(c->qpn, 0x100);
	if (remote_write(c, 0) < 0)
		return -1;
	probe_expect_sports(r, first, c->qpn);
	return 0;
}

static int aeth_msn(struct probe_ctx *c, struct probe_result *r)
{
	const struct shape a = { .opcode = OP_RC_WRITE_ONLY, .dmalen = 64, .len = 64, .byte = 0x11 };
	const struct shape b = { .opcode = OP_RC_WRITE_ONLY, .psn_ahead = 1, .offset = 64,
				 .dmalen = 64, .len = 64, .byte = 0x22 };

	if (two_requests(c, 0, &a, &b) < 0)
		return -1;
	probe_expect_msn(r, c->psn);
	return 0;
}

static const struct probe_test tests[] = {
	{ "write_invalid_rkey", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error; memory untouched", single_request, &write_invalid_rkey, 0 },
	{ "write_out_of_bounds", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error; memory untouched", single_request, &write_out_of_bounds, 0 },
	{ "write_no_access", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error; memory untouched", single_request, &write_no_access, 0 },
	{ "read_invalid_rkey", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error", single_request, &read_invalid_rkey, 0 },
	{ "read_no_access", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error", single_request, &read_no_access, 0 },
	{ "write_zero_length_invalid_rkey", "responder", "IBTA C9-88",
	  "ACK: a zero-length RDMA WRITE checks no rkey", single_request, &write_zero_length_invalid_rkey, 0 },
	{ "send_no_receive", "responder", "IBTA ch. 9, RNR NAK",
	  "RNR NAK; no receive completed", single_request, &send_no_receive, 0 },
	{ "psn_ahead", "responder", "IBTA ch. 9, NAK PSN sequence error",
	  "one NAK PSN sequence error per episode", psn_ahead, NULL, 0 },
	{ "duplicate_send", "responder", "IBTA C9-105",
	  "ACKed again; no receive consumed", duplicate_send, NULL, 0 },
	{ "write_middle_without_first", "responder", "IBTA 9.9.3.1.3, Table 63",
	  "NAK invalid request; memory untouched", single_request, &write_middle_without_first, 0 },
	{ "write_last_without_first", "responder", "IBTA 9.9.3.1.3, Table 63",
	  "NAK invalid request; memory untouched", single_request, &write_last_without_first,
	  0 },
	{ "duplicate_write", "responder", "IBTA C9-105",
	  "ACKed again; not executed again", duplicate_write, NULL, 0 },
	{ "duplicate_read", "responder", "IBTA ch. 9, duplicate RDMA READ",
	  "executed again: a second READ response", duplicate_read, NULL, 0 },
	{ "atomic_misaligned", "responder", "IBTA ch. 9, atomic operations (8-byte aligned VA)",
	  "NAK invalid request; memory untouched", single_request, &atomic_misaligned,
	  PROBE_NEEDS_ATOMICS },
	{ "atomic_invalid_rkey", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error; memory untouched", single_request, &atomic_invalid_rkey,
	  PROBE_NEEDS_ATOMICS },
	{ "atomic_no_access", "responder", "IBTA 9.9.3.1.3, Table 63, C9-222.1.1",
	  "NAK remote access error; memory untouched", single_request, &atomic_no_access,
	  PROBE_NEEDS_ATOMICS },
	{ "duplicate_atomic", "responder", "IBTA ch. 9, duplicate atomic",
	  "the original value replayed; executed once", duplicate_atomic, NULL,
	  PROBE_NEEDS_ATOMICS },
	{ "payload_beyond_mtu", "responder", "IBTA ch. 9, responder length check",
	  "NAK invalid request; memory untouched", single_request, &payload_beyond_mtu, 0 },
	{ "psn_wrap", "responder", "IBTA ch. 9, PSN modulo 2^24",
	  "requests at PSN 0xfffffe, 0xffffff, 0 all ACKed", psn_wrap, NULL, 0 },
	{ "outstanding_reads", "responder", "IBTA ch. 9, responder resources",
	  "more READs outstanding than negotiated: what it does (informational)",
	  outstanding_reads, NULL, 0 },
	{ "ce_cnp", "responder", "IBTA Annex A17 (RoCEv2 CNP)",
	  "CE-marked requests draw CNPs to the sending QP", ce_cnp, NULL, 0 },
	{ "bad_icrc", "responder", "IBTA ch. 9, ICRC; Annex A17",
	  "dropped silently; the QP goes on", bad_icrc, NULL, 0 },
	{ "ack_timeout", "requester", "IBTA ch. 9, local ACK timeout",
	  "first retransmission within 1-4 x 4.096 us x 2^timeout", ack_timeout, NULL, 0 },
	{ "ack_timeout_0", "requester", "IBTA ch. 9, local ACK timeout (0: no timer)",
	  "timeout 0: no retransmission, however long no ACK comes", ack_timeout_0, NULL, 0 },
	{ "retry_count", "requester", "IBTA ch. 9, retry_cnt",
	  "retry_cnt 3: 3 retransmissions, then retry exceeded", retry_count, NULL, 0 },
	{ "retry_count_7", "requester", "IBTA ch. 9, retry_cnt (7 is not infinite)",
	  "retry_cnt 7: 7 retransmissions, then retry exceeded", retry_count_7, NULL, 0 },
	{ "seq_nak_resend", "requester", "IBTA ch. 9, NAK PSN sequence error",
	  "go-back-N from the PSN the NAK names", seq_nak_resend, NULL, 0 },
	{ "rnr_wait", "requester", "IBTA ch. 9, RNR NAK timer",
	  "resend no sooner than the RNR NAK's timer", rnr_wait, NULL, 0 },
	{ "rnr_retry_7", "requester", "IBTA ch. 9, rnr_retry (7 is forever)",
	  "rnr_retry 7: sent again after every RNR NAK; completes once ACKed", rnr_retry_7,
	  NULL, 0 },
	{ "lost_read_response", "requester", "IBTA ch. 9, READ response out of sequence",
	  "READ asked again from the lost response on; completes", lost_read_response, NULL, 0 },
	{ "send_psn_wrap", "requester", "IBTA ch. 9, PSN modulo 2^24",
	  "its PSNs run 0xfffffe, 0xffffff, 0, 1; one ACK for 1 completes them", send_psn_wrap,
	  NULL, 0 },
	{ "lost_atomic_ack", "requester", "IBTA ch. 9, atomic operations; ACK timeout",
	  "FETCH_ADD resent unchanged; completes with the value answered", lost_atomic_ack,
	  NULL, PROBE_NEEDS_ATOMICS },
	{ "implied_nak", "requester", "IBTA ch. 9, implied NAK",
	  "an ACK past an unanswered READ: READ resent at once", implied_nak, NULL, 0 },
	{ "cnp_reaction", "requester", "IBTA Annex A17 (RoCEv2 CNP); DCQCN",
	  "its rate falls under CNPs, not decoys, and recovers", probe_cnp_reaction, NULL, 0 },
	{ "ect_data", "packets", "IBTA Annex A17 (RoCEv2 ECN)",
	  "ECT on every data packet", ect_data, NULL, 0 },
	{ "ipv4_header", "packets", "IBTA Annex A17 (IPv4 encapsulation); RFC 6864",
	  "DF set, a valid ICRC; IPv4 ID 0 (others informational)", ipv4_header, NULL, 0 },
	{ "dscp_tclass", "packets", "IBTA Annex A17 (traffic class to DSCP)",
	  "the QP's traffic class as DSCP", dscp_tclass, NULL, 0 },
	{ "udp_source_port", "packets", "IBTA Annex A17 (UDP source port)",
	  "one UDP source port per QP, for ECMP", udp_source_port, NULL, 0 },
	{ "aeth_credits", "packets", "IBTA ch. 9, AETH credit count",
	  "the credits an ACK carries with receives posted (informational)", aeth_credits,
	  NULL, 0 },
	{ "aeth_msn", "packets", "IBTA ch. 9, AETH MSN",
	  "MSN 1, 2 in the ACKs of the first two messages", aeth_msn, NULL, 0 },
};

const struct probe_test *probe_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}

const struct probe_test *probe_test_find(const char *name)
{
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(tests[i].name, name))
			return &tests[i];
	return NULL;
}
