// SPDX-License-Identifier: MIT
/*
 * The soft engine's RC state machines over a deterministic in-process
 * link that drops, duplicates and reorders packets on a seed: every
 * operation of many sizes completes with bit-exact data under impairment,
 * the counters show the repair work, protection faults leave memory
 * untouched and fail with the right status, and a vanished peer ends in
 * retry-exceeded instead of a hang.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "icrc.h"
#include "soft.h"
#include "unit.h"

#include "sim_pair.h"

/* Up to 4096 packets of 1 KiB: far past the window a connection starts
 * with (SOFT_CWND_INIT packets). */
static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4096, 65536, 1 << 20, 4 << 20 };

/* WRITE, READ and SEND of every size, data checked byte for byte. */
static void data_ops(struct unit *u, int drop, int dup, int reorder, uint64_t seed)
{
	struct pair pr;
	struct xport_wc wc[4];
	char err[XPORT_ERR_LEN];

	pair_open(&pr, 8 << 20, seed, drop, dup, reorder, 0xFFFFF0);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t len = sizes[k];
		struct side *a = &pr.s[0], *b = &pr.s[1];
		struct xport_send_wr wr;
		struct xport_recv_wr rr = { 7, { (uint64_t)(uintptr_t)b->buf + (4 << 20), 4 << 20,
						 b->mr.lkey } };

		/* WRITE a -> b */
		fill(a->buf, len, seed + k);
		memset(b->buf, 0, len);
		wr = wr_of(a, b, XPORT_WR_RDMA_WRITE_WITH_IMM, 0, len);
		CHECK_EQ(u, soft_engine_ops.post_recv(b->qp, &rr, err), 0);
		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
		CHECK_EQ(u, wc[0].opcode, XPORT_WC_RECV_RDMA_WITH_IMM);
		CHECK_EQ(u, wc[0].imm, 0xC0FFEE);
		CHECK(u, memcmp(a->buf, b->buf, len) == 0);

		/* READ b -> a */
		fill(b->buf, len, seed * 3 + k);
		memset(a->buf, 0, len);
		wr = wr_of(a, b, XPORT_WR_RDMA_READ, 0, len);
		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK_EQ(u, wc[0].opcode, XPORT_WC_RDMA_READ);
		CHECK(u, memcmp(a->buf, b->buf, len) == 0);

		/* SEND a -> b */
		fill(a->buf, len, seed * 7 + k);
		memset(b->buf + (4 << 20), 0, len);
		wr = wr_of(a, b, XPORT_WR_SEND, 0, len);
		CHECK_EQ(u, soft_engine_ops.post_recv(b->qp, &rr, err), 0);
		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
		CHECK_EQ(u, wc[0].opcode, XPORT_WC_RECV);
		CHECK_EQ(u, wc[0].byte_len, len);
		CHECK(u, memcmp(a->buf, b->buf + (4 << 20), len) == 0);
	}
	if (drop || dup || reorder) {
		struct xport_counters c;

		soft_engine_ops.qp_counters(pr.s[0].qp, &c);
		printf("#   drop %d%% dup %d%% reorder %d%%: %llu retransmits, %llu timeouts, "
		       "wire dropped %llu dup %llu reordered %llu\n", drop, dup, reorder,
		       (unsigned long long)c.retransmits, (unsigned long long)c.timeouts,
		       (unsigned long long)pr.wire.dropped, (unsigned long long)pr.wire.duplicated,
		       (unsigned long long)pr.wire.reordered);
		if (drop)
			CHECK(u, c.retransmits > 0);
	}
	pair_close(&pr);
}

static void test_clean(struct unit *u) { data_ops(u, 0, 0, 0, 1); }
static void test_loss_1pct(struct unit *u) { data_ops(u, 1, 0, 0, 2); }
static void test_loss_5pct(struct unit *u) { data_ops(u, 5, 0, 0, 3); }
static void test_dup_5pct(struct unit *u) { data_ops(u, 0, 5, 0, 4); }
static void test_reorder_5pct(struct unit *u) { data_ops(u, 0, 0, 5, 5); }
static void test_all_impairments(struct unit *u) { data_ops(u, 3, 3, 3, 6); }

/* Atomics: each original value returned, never executed twice. */
static void atomics(struct unit *u, int drop, int dup)
{
	struct pair pr;
	struct xport_wc wc[1];
	char err[XPORT_ERR_LEN];
	uint64_t *target, expect = 100;

	pair_open(&pr, 4096, 11, drop, dup, 0, 0xFFFFFE);
	target = (uint64_t *)(void *)(pr.s[1].buf + 64);
	*target = 100;
	for (int i = 0; i < 200; i++) {
		struct xport_send_wr wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_ATOMIC_FETCH_AND_ADD,
						64, 8);
		uint64_t got;

		wr.sge.addr = (uint64_t)(uintptr_t)pr.s[0].buf + 128;
		wr.compare_add = 3;
		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		memcpy(&got, pr.s[0].buf + 128, 8);
		CHECK(u, got == expect);
		expect += 3;
	}
	CHECK(u, *target == expect);
	/* Compare and swap: succeeds once, then fails and returns the new value. */
	for (int i = 0; i < 2; i++) {
		struct xport_send_wr wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_ATOMIC_CMP_AND_SWP, 64, 8);
		uint64_t got;

		wr.sge.addr = (uint64_t)(uintptr_t)pr.s[0].buf + 128;
		wr.compare_add = 700;
		wr.swap = 42;
		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		memcpy(&got, pr.s[0].buf + 128, 8);
		CHECK(u, got == (i == 0 ? 700 : 42));
	}
	CHECK(u, *target == 42);
	pair_close(&pr);
}

static void test_atomics(struct unit *u) { atomics(u, 0, 0); }
static void test_atomics_lossy(struct unit *u) { atomics(u, 5, 5); }

/* Protection: the target is untouched and the requester sees the status. */
static void access_case(struct unit *u, int which)
{
	struct pair pr;
	struct xport_wc wc[4];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr;
	uint8_t before[4096];
	int expect = XPORT_WC_REM_ACCESS_ERR;

	pair_open(&pr, 4096, 21, 0, 0, 0, 5);
	fill(pr.s[0].buf, 4096, 9);
	fill(pr.s[1].buf, 4096, 10);
	memcpy(before, pr.s[1].buf, sizeof(before));
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 512);
	switch (which) {
	case 0: wr.rkey ^= 0x100; break;				/* wrong rkey */
	case 1: wr.remote_addr += 3800; break;				/* past the end */
	case 2: wr.remote_addr = (uint64_t)-256; break;			/* wraps */
	case 3:								/* no remote write */
		pr.s[1].dev->mrs[pr.s[1].mr.rkey & SOFT_INDEX_MASK].pub.access = XPORT_ACCESS_LOCAL_WRITE;
		break;
	case 4:								/* unaligned atomic */
		wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_ATOMIC_FETCH_AND_ADD, 4, 8);
		expect = XPORT_WC_REM_INV_REQ_ERR;
		break;
	case 5:								/* READ, no remote read */
		pr.s[1].dev->mrs[pr.s[1].mr.rkey & SOFT_INDEX_MASK].pub.access = XPORT_ACCESS_REMOTE_WRITE;
		wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_READ, 0, 512);
		memcpy(pr.s[0].buf, before, 0);
		break;
	}
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, expect);
	CHECK(u, memcmp(before, pr.s[1].buf, sizeof(before)) == 0);
	CHECK_EQ(u, pr.s[0].qp->state, SOFT_QP_ERROR);
	pair_close(&pr);
}

static void test_access_errors(struct unit *u)
{
	for (int i = 0; i < 6; i++)
		access_case(u, i);
}

/* No RECV posted: RNR NAKs until one is, then the SEND completes. */
static void test_rnr(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[2];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr;
	struct xport_recv_wr rr;
	struct xport_counters c;

	pair_open(&pr, 4096, 31, 0, 0, 0, 100);
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_SEND, 0, 100);
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
	for (int i = 0; i < 50; i++) {
		soft_progress(pr.s[0].dev);
		soft_progress(pr.s[1].dev);
	}
	rr = (struct xport_recv_wr){ 1, { (uint64_t)(uintptr_t)pr.s[1].buf, 4096, pr.s[1].mr.lkey } };
	CHECK_EQ(u, soft_engine_ops.post_recv(pr.s[1].qp, &rr, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	soft_engine_ops.qp_counters(pr.s[0].qp, &c);
	CHECK(u, c.rnr_naks_rx > 0);
	pair_close(&pr);
}

/* Inline WRITE and SEND: the payload is copied at post time, so the
 * buffer may change at once, and retransmissions (5% loss) resend the copy. */
static void test_inline(struct unit *u)
{
	struct xport_qp_attr big = { .max_send_wr = 8, .max_recv_wr = 8,
				     .max_inline_data = SOFT_MAX_INLINE + 1 };
	enum xport_wr_opcode ops[] = { XPORT_WR_RDMA_WRITE, XPORT_WR_SEND };
	uint8_t want[SOFT_MAX_INLINE];
	char err[XPORT_ERR_LEN] = "";
	struct xport_wc wc[2];
	struct pair pr;

	pair_open_inline(&pr, 1 << 16, 41, 5, 0, 0, 0xFFFFFA, SOFT_MAX_INLINE);
	CHECK(u, soft_engine_ops.create_qp(pr.s[0].dev, pr.s[0].cq, pr.s[0].cq, &big, err) == NULL);
	CHECK(u, strstr(err, "maximum of 912") != NULL);
	for (int round = 0; round < 40; round++) {
		struct side *a = &pr.s[0], *b = &pr.s[1];
		uint32_t len = round % 2 ? SOFT_MAX_INLINE : 1 + (uint32_t)round * 7;
		struct xport_send_wr wr = wr_of(a, b, ops[round % 2], 0, len);
		struct xport_recv_wr rr = { 9, { (uint64_t)(uintptr_t)b->buf + 4096, 4096,
						 b->mr.lkey } };
		uint8_t *got = b->buf + (wr.opcode == XPORT_WR_SEND ? 4096 : 0);

		fill(a->buf, len, (uint64_t)round);
		memcpy(want, a->buf, len);
		memset(got, 0, len);
		wr.inline_data = true;
		if (wr.opcode == XPORT_WR_SEND)
			CHECK_EQ(u, soft_engine_ops.post_recv(b->qp, &rr, err), 0);
		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
		memset(a->buf, 0xEE, len);	/* reused before anything was sent */
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK(u, memcmp(got, want, len) == 0);
		if (wr.opcode == XPORT_WR_SEND)
			CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
	}
	{
		struct xport_send_wr rd = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_READ, 0, 8);
		struct xport_send_wr too_big = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0,
						     SOFT_MAX_INLINE + 1);

		rd.inline_data = too_big.inline_data = true;
		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &rd, NULL, err), -1);
		CHECK(u, strstr(err, "SEND and WRITE") != NULL);
		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &too_big, NULL, err), -1);
		CHECK(u, strstr(err, "max_inline_data") != NULL);
	}
	pair_close(&pr);
}

/* The peer vanishes: retry-exceeded, promptly, and the rest flushed. */
static void test_retry_exceeded(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[3];
	char err[XPORT_ERR_LEN];
	uint64_t t0, t_ns = 4096ull << 8;	/* the pair's timeout: 2^8 */

	pair_open(&pr, 65536, 41, 0, 0, 0, 1);
	pr.s[0].qp->attr.retry_cnt = 3;
	pr.s[0].qp->retries_left = 3;
	pr.wire.cut = true;
	for (int i = 0; i < 3; i++) {
		struct xport_send_wr wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 4096);

		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
	}
	t0 = soft_now_ns();
	CHECK_EQ(u, run_until(&pr, 0, 3, wc), 3);
	CHECK_EQ(u, wc[0].status, XPORT_WC_RETRY_EXC_ERR);
	CHECK_EQ(u, wc[1].status, XPORT_WC_WR_FLUSH_ERR);
	CHECK_EQ(u, wc[2].status, XPORT_WC_WR_FLUSH_ERR);
	/* retry_cnt 3: four timeouts in a row, each twice the last (the man
	 * page's formula: T x (1 + 2 + 4 + 8)), never sooner; well within 1 s. */
	CHECK_EQ(u, pr.s[0].qp->ctr.timeouts, 4);
	CHECK(u, soft_now_ns() - t0 >= 15 * t_ns);
	CHECK(u, soft_now_ns() - t0 < 1000000000ull);
	pair_close(&pr);
}

/* Steps the requester (side 0) alone, so what it sends stays on the wire. */
/*
 * Go-back-N into a message that began before the PSN wrapped: 4 KiB from
 * PSN 0xfffffe (0xfffffe, 0xffffff, 0, 1), the packet at PSN 0 lost.  The
 * resend must carry the third packet's opcode and bytes, then the fourth.
 */
static void test_go_back_across_wrap(struct unit *u)
{
	static const enum xport_wr_opcode ops[] = { XPORT_WR_RDMA_WRITE, XPORT_WR_SEND };
	struct pair pr;
	struct xport_wc wc[2];
	char err[XPORT_ERR_LEN];

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		struct side *a, *b;
		struct xport_send_wr wr;
		struct xport_recv_wr rr;

		pair_open(&pr, 16384, 51 + k, 0, 0, 0, 0xFFFFFE);
		a = &pr.s[0];
		b = &pr.s[1];
		rr = (struct xport_recv_wr){ 9, { (uint64_t)(uintptr_t)b->buf + 8192, 8192,
						  b->mr.lkey } };
		fill(a->buf, 4096, 77 + k);
		wr = wr_of(a, b, ops[k], 0, 4096);
		if (ops[k] == XPORT_WR_SEND)
			CHECK_EQ(u, soft_engine_ops.post_recv(b->qp, &rr, err), 0);
		pr.wire.drop_after = 3;
		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK_EQ(u, pr.wire.dropped, 1);
		CHECK(u, a->qp->ctr.retransmits > 0);
		if (ops[k] == XPORT_WR_SEND) {
			CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
			CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
			CHECK_EQ(u, wc[0].byte_len, 4096);
			CHECK(u, memcmp(a->buf, b->buf + 8192, 4096) == 0);
		} else {
			CHECK(u, memcmp(a->buf, b->buf, 4096) == 0);
		}
		pair_close(&pr);
	}
}

/*
 * Two READs of two response packets each; the first READ's last response
 * packet is lost.  The second READ's First response carries an AETH that
 * passes the first READ: its response is out of sequence (an implied NAK),
 * so the first READ is asked again from the missing packet, at once (no
 * timeout), and counted as out_of_sequence like any response that skipped.
 */
static void test_read_implied_nak(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[2];
	struct side *a, *b;
	uint32_t log[4];

	pair_open(&pr, 16384, 61, 0, 0, 0, 0x100);
	a = &pr.s[0];
	b = &pr.s[1];
	fill(b->buf, 4096, 91);
	pr.wire.drop_log = log;
	pr.wire.drop_log_cap = 4;
	pr.wire.drop_after = 4;	/* READ, READ, then the first READ's two responses */
	for (int k = 0; k < 2; k++) {
		struct xport_send_wr wr = wr_of(a, b, XPORT_WR_RDMA_READ, (size_t)k * 2048, 2048);
		char err[XPORT_ERR_LEN];

		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
	}
	CHECK_EQ(u, run_until(&pr, 0, 2, wc), 2);
	CHECK(u, wc[0].status == XPORT_WC_SUCCESS && wc[1].status == XPORT_WC_SUCCESS);
	CHECK_EQ(u, pr.wire.dropped, 1);
	CHECK_EQ(u, pr.wire.drop_log_len, 1);
	CHECK_EQ(u, log[0], 0x101);	/* the first READ's Response Last */
	CHECK_EQ(u, a->qp->ctr.out_of_sequence, 1);
	CHECK_EQ(u, a->qp->ctr.timeouts, 0);
	CHECK(u, a->qp->ctr.retransmits > 0);
	CHECK(u, memcmp(a->buf, b->buf, 4096) == 0);
	pair_close(&pr);
}

static void step_sender(struct pair *pr, int times)
{
	for (int i = 0; i < times; i++)
		soft_progress(pr->s[0].dev);
}

/*
 * The loss window: a new connection has SOFT_CWND_INIT packets in flight at
 * most, grows by slow start as ACKs come, halves once on a sequence NAK,
 * falls to SOFT_CWND_MIN on a timeout (which also doubles the next
 * timeout), and progress ends the backoff.
 */
static void test_loss_window(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[2];
	char err[XPORT_ERR_LEN];
	struct soft_qp *qp;
	struct xport_send_wr wr;
	uint32_t before;

	pair_open(&pr, 4 << 20, 43, 0, 0, 0, 0xFFFF00);
	qp = pr.s[0].qp;
	/* A timeout of 268 ms: none fires by accident, even under sanitizers. */
	qp->attr.timeout = 16;
	CHECK_EQ(u, qp->cwnd, SOFT_CWND_INIT);
	/* 1 MiB = 1024 packets: only the window leaves before any ACK. */
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 1 << 20);
	CHECK_EQ(u, soft_engine_ops.post_send(qp, &wr, NULL, err), 0);
	step_sender(&pr, 4);
	CHECK_EQ(u, pr.wire.len[1], SOFT_CWND_INIT);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK(u, qp->cwnd > 4 * SOFT_CWND_INIT);	/* slow start */
	CHECK_EQ(u, qp->ctr.retransmits, 0);

	/* One packet lost: one sequence NAK, the window halved once (slow
	 * start goes on over the ACKs of the 100 packets before the loss). */
	before = qp->cwnd;
	pr.wire.drop_after = 100;
	CHECK_EQ(u, soft_engine_ops.post_send(qp, &wr, NULL, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, qp->ctr.seq_naks_rx, 1);
	CHECK_EQ(u, qp->ctr.timeouts, 0);
	CHECK(u, qp->ssthresh >= before / 2 && qp->ssthresh <= (before + 100) / 2);
	CHECK(u, qp->cwnd >= qp->ssthresh && qp->cwnd <= qp->ssthresh + 2);

	/* Nothing comes back: a timeout cuts the window to the minimum and
	 * doubles the timer; the first ACK after it ends the backoff. */
	pr.wire.cut = true;
	CHECK_EQ(u, soft_engine_ops.post_send(qp, &wr, NULL, err), 0);
	while (qp->ctr.timeouts == 0)
		step_sender(&pr, 1);
	CHECK_EQ(u, qp->cwnd, SOFT_CWND_MIN);
	CHECK_EQ(u, qp->timer_backoff, 1);
	pr.wire.cut = false;
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, qp->timer_backoff, 0);
	CHECK(u, qp->cwnd > SOFT_CWND_MIN);
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 1 << 20) == 0);
	pair_close(&pr);
}

/*
 * The window's cap: 8 MiB of packets of the path MTU, at most 8192 of them;
 * a connection at its cap has exactly that many packets out before an ACK.
 */
static void test_window_cap(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[2];
	char err[XPORT_ERR_LEN];
	struct soft_qp *qp;
	struct xport_send_wr wr;

	CHECK_EQ(u, soft_cwnd_max(4096), 2048);
	CHECK_EQ(u, soft_cwnd_max(2048), 4096);
	CHECK_EQ(u, soft_cwnd_max(1024), 8192);
	CHECK_EQ(u, soft_cwnd_max(256), 8192);

	pair_open(&pr, 4 << 20, 47, 0, 0, 0, 0xFFFF00);
	qp = pr.s[0].qp;
	CHECK_EQ(u, qp->cwnd_max, 8192);	/* the pair's MTU is 1024 */
	qp->attr.timeout = 16;			/* 268 ms: none fires by accident */
	/* A small cap, already reached: 1 MiB (1024 packets) leaves 100 at a time. */
	qp->cwnd_max = qp->cwnd = qp->ssthresh = 100;
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 1 << 20);
	CHECK_EQ(u, soft_engine_ops.post_send(qp, &wr, NULL, err), 0);
	step_sender(&pr, 4);
	CHECK_EQ(u, pr.wire.len[1], 100);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, qp->cwnd, 100);		/* ACKs do not grow it past the cap */
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 1 << 20) == 0);
	pair_close(&pr);
}

/*
 * Selective signaling with verbs semantics: a list of WRITEs, one in four
 * signaled, gives only the signaled completions; the send queue stays full
 * of retired unsignaled WRs until a signaled completion is polled; on a
 * failure the failing WR completes (though unsignaled) and the WRs after
 * it are flushed, signaled or not.
 */
static void test_unsignaled(struct unit *u)
{
	struct xport_qp_attr a = { .max_send_wr = 8, .max_recv_wr = 8, .mtu = 1024, .timeout = 8,
				   .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 16 };
	struct xport_send_wr wrs[8];
	struct xport_wc wc[8];
	char err[XPORT_ERR_LEN];
	unsigned posted = 99;
	struct pair pr;
	struct xport_qp_info info[2];

	pair_open(&pr, 65536, 61, 0, 0, 0, 0xFFFFFE);
	/* A QP with room for 8 WRs, on the first pair's devices. */
	soft_engine_ops.destroy_qp(pr.s[0].qp);
	soft_engine_ops.destroy_qp(pr.s[1].qp);
	for (int i = 0; i < 2; i++)
		pr.s[i].qp = soft_engine_ops.create_qp(pr.s[i].dev, pr.s[i].cq, pr.s[i].cq, &a, err);
	for (int i = 0; i < 2; i++)
		soft_engine_ops.qp_info(pr.s[i].qp, &info[i]);
	for (int i = 0; i < 2; i++)
		soft_engine_ops.connect(pr.s[i].qp, &info[!i], err);
	fill(pr.s[0].buf, 65536, 62);
	for (int i = 0; i < 8; i++) {
		wrs[i] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, (size_t)i * 2048, 2000);
		wrs[i].wr_id = (uint64_t)i;
		wrs[i].signaled = i % 4 == 3;
		wrs[i].next = i < 7 ? &wrs[i + 1] : NULL;
	}
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, wrs, &posted, err), 0);
	CHECK_EQ(u, posted, 8);
	/* Full: 8 posted, none polled. */
	wrs[0].next = NULL;
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, wrs, &posted, err), -1);
	CHECK_EQ(u, posted, 0);
	/* Let every WR finish without polling the requester's CQ: still full. */
	for (int i = 0; i < 2000; i++) {
		soft_progress(pr.s[0].dev);
		soft_progress(pr.s[1].dev);
	}
	CHECK_EQ(u, pr.s[0].qp->sq_head, pr.s[0].qp->sq_tail);
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, wrs, &posted, err), -1);
	/* Two completions only: WRs 3 and 7; polling the first frees 4 slots. */
	CHECK_EQ(u, soft_engine_ops.poll_cq(pr.s[0].cq, wc, 1), 1);
	CHECK_EQ(u, wc[0].wr_id, 3);
	for (int i = 0; i < 4; i++) {
		wrs[i] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, (size_t)i * 2048, 2000);
		wrs[i].wr_id = (uint64_t)(10 + i);
		wrs[i].signaled = false;
		wrs[i].next = i < 3 ? &wrs[i + 1] : NULL;
	}
	/* The fifth of a list of five finds no room: four are posted. */
	wrs[3].next = &wrs[4];
	wrs[4] = wrs[3];
	wrs[4].next = NULL;
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, wrs, &posted, err), -1);
	CHECK_EQ(u, posted, 4);
	CHECK_EQ(u, soft_engine_ops.poll_cq(pr.s[0].cq, wc, 8), 1);
	CHECK_EQ(u, wc[0].wr_id, 7);
	for (int i = 0; i < 8; i++)
		CHECK(u, memcmp(pr.s[0].buf + i * 2048, pr.s[1].buf + i * 2048, 2000) == 0);
	/* 10..13 are unsignaled and succeed: no completion.  Four more fill
	 * the queue; once all eight are done it is still full, as no signaled
	 * completion was polled. */
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 0);
	for (int i = 0; i < 4; i++)
		wrs[i].wr_id = (uint64_t)(14 + i);
	wrs[3].next = NULL;
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, wrs, &posted, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 0);
	CHECK_EQ(u, pr.s[0].qp->sq_head, pr.s[0].qp->sq_tail);
	wrs[0].next = NULL;
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, wrs, &posted, err), -1);
	CHECK_EQ(u, posted, 0);
	pair_close(&pr);

	/* Again with room: the failure and the flush complete unsignaled WRs. */
	pair_open(&pr, 65536, 63, 0, 0, 0, 5);
	wrs[2] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 100);
	wrs[2].signaled = false;
	wrs[2].wr_id = 19;
	wrs[0] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 100);
	wrs[0].rkey ^= 0x80;
	wrs[0].signaled = false;
	wrs[0].wr_id = 20;
	wrs[1] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 100);
	wrs[1].signaled = false;
	wrs[1].wr_id = 21;
	wrs[2].next = &wrs[0];
	wrs[0].next = &wrs[1];
	wrs[1].next = NULL;
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wrs[2], &posted, err), 0);
	CHECK_EQ(u, posted, 3);
	CHECK_EQ(u, run_until(&pr, 0, 2, wc), 2);
	CHECK_EQ(u, wc[0].wr_id, 20);
	CHECK_EQ(u, wc[0].status, XPORT_WC_REM_ACCESS_ERR);
	CHECK_EQ(u, wc[1].wr_id, 21);
	CHECK_EQ(u, wc[1].status, XPORT_WC_WR_FLUSH_ERR);
	CHECK_EQ(u, soft_engine_ops.poll_cq(pr.s[0].cq, wc, 8), 0);	/* 19: none */
	pair_close(&pr);
}

/* Send and receive calls, and GSO runs, per packet of n WRITEs of len
 * bytes at MTU 1024 through links that batch as the UDP link does. */
struct call_cost {
	double calls_per_pkt, runs_per_pkt;
};

static struct call_cost write_calls(struct unit *u, uint32_t len, enum xport_wr_opcode op, int n)
{
	struct pair pr;
	struct xport_wc wc[64];
	char err[XPORT_ERR_LEN];
	struct call_cost cost;
	uint64_t pkts;
	int posted = 0, done = 0;

	pair_open(&pr, 1 << 20, 71, 0, 0, 0, 0xFFFF00);
	pr.wire.batching = true;
	pr.wire.run_of[0] = calloc(SIM_QUEUE, sizeof(uint32_t));
	pr.wire.run_of[1] = calloc(SIM_QUEUE, sizeof(uint32_t));
	while (done < n) {
		int got;

		while (posted < n && posted - done < 128) {
			struct xport_send_wr wr = wr_of(&pr.s[0], &pr.s[1], op, 0, len);
			struct xport_recv_wr rr = { 1, { (uint64_t)(uintptr_t)pr.s[1].buf, len,
							 pr.s[1].mr.lkey } };

			if (op == XPORT_WR_SEND)
				soft_engine_ops.post_recv(pr.s[1].qp, &rr, err);
			CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
			posted++;
		}
		got = soft_engine_ops.poll_cq(pr.s[0].cq, wc, 64);
		for (int i = 0; i < got; i++)
			done += wc[i].opcode != XPORT_WC_RECV;
		soft_engine_ops.poll_cq(pr.s[1].cq, wc, 64);
	}
	pkts = pr.wire.delivered;
	cost = (struct call_cost){ (double)(pr.wire.send_calls + pr.wire.recv_calls) / (double)pkts,
				   (double)pr.wire.send_msgs / (double)pkts };
	pair_close(&pr);
	return cost;
}

/*
 * The cliff at two packets per message: whatever the packet sizes, a send
 * call carries one QP's whole batch and a receive call up to SOFT_RX_MSGS
 * runs, so multi-packet WRITEs need at most twice the calls per packet of
 * one-packet ones.  (GSO runs per packet do differ: a WRITE's FIRST packet
 * carries a RETH and ends its run; printed, not held.)
 */
static void test_calls_per_packet(struct unit *u)
{
	struct call_cost one = write_calls(u, 1024, XPORT_WR_RDMA_WRITE, 20000);
	struct call_cost two = write_calls(u, 2048, XPORT_WR_RDMA_WRITE, 10000);
	struct call_cost four = write_calls(u, 4096, XPORT_WR_RDMA_WRITE, 5000);
	struct call_cost send2 = write_calls(u, 2048, XPORT_WR_SEND, 10000);

	printf("#   calls per packet: WRITE 1 KiB %.4f, 2 KiB %.4f, 4 KiB %.4f, SEND 2 KiB %.4f\n",
	       one.calls_per_pkt, two.calls_per_pkt, four.calls_per_pkt, send2.calls_per_pkt);
	printf("#   GSO runs per packet: WRITE 1 KiB %.4f, 2 KiB %.4f, 4 KiB %.4f, SEND 2 KiB %.4f\n",
	       one.runs_per_pkt, two.runs_per_pkt, four.runs_per_pkt, send2.runs_per_pkt);
	CHECK(u, one.calls_per_pkt > 0);
	CHECK(u, two.calls_per_pkt <= 2 * one.calls_per_pkt);
	CHECK(u, four.calls_per_pkt <= 2 * one.calls_per_pkt);
	CHECK(u, send2.calls_per_pkt <= 2 * one.calls_per_pkt);
}

/* Many outstanding operations mixed, under loss: all complete in order. */
static void test_pipeline(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[256];
	char err[XPORT_ERR_LEN];
	int posted = 0;

	pair_open(&pr, 1 << 20, 51, 2, 1, 1, 0xFFFF00);
	fill(pr.s[0].buf, 1 << 19, 3);
	fill(pr.s[1].buf + (1 << 19), 1 << 19, 4);
	for (int i = 0; i < 128; i++) {
		size_t off = (size_t)i * 4096;
		struct xport_send_wr wr = wr_of(&pr.s[0], &pr.s[1], i % 2 ? XPORT_WR_RDMA_READ :
						XPORT_WR_RDMA_WRITE, off, 3000);

		if (i % 2)
			wr.sge.addr += 1 << 19, wr.remote_addr += 1 << 19;
		wr.wr_id = (uint64_t)i;
		if (soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err) == 0)
			posted++;
	}
	CHECK_EQ(u, posted, 128);
	CHECK_EQ(u, run_until(&pr, 0, 128, wc), 128);
	for (int i = 0; i < 128; i++) {
		CHECK_EQ(u, wc[i].wr_id, i);
		CHECK_EQ(u, wc[i].status, XPORT_WC_SUCCESS);
	}
	for (int i = 0; i < 128; i++) {
		size_t off = (size_t)i * 4096 + (i % 2 ? 1 << 19 : 0);
		/* WRITEs land in side 1's first half, READs in side 0's second
		 * half, both zero before: each op's 3000 bytes arrived, and
		 * nothing else of its 4 KiB block was touched. */
		const uint8_t *dst = (i % 2 ? pr.s[0].buf : pr.s[1].buf) + off;
		size_t untouched = 0;

		CHECK(u, memcmp(pr.s[0].buf + off, pr.s[1].buf + off, 3000) == 0);
		for (size_t k = 3000; k < 4096; k++)
			untouched += dst[k] == 0;
		CHECK_EQ(u, untouched, 4096 - 3000);
	}
	pair_close(&pr);
}

/* Every packet the engine sends carries an ICRC an independent check accepts. */
static void test_icrc_on_wire(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[1];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr;
	uint8_t frame[SOFT_PKT_MAX + 64];
	int checked = 0;

	pair_open(&pr, 8192, 61, 0, 0, 0, 9);
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 5000);
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
	soft_progress(pr.s[0].dev);
	/* Rebuild each queued packet as an IPv4 frame and verify with the codec. */
	for (int i = 0; i < pr.wire.len[1]; i++) {
		struct soft_pkt *pk = &pr.wire.q[1][i];
		struct wire_pkt p;
		size_t n = 20 + 8 + pk->len;

		memset(frame, 0, 28);
		frame[0] = 0x45;
		frame[1] = pk->ecn;
		wire_put16(frame + 2, (uint16_t)n);
		wire_put16(frame + 6, 0x4000);
		frame[8] = 64;
		frame[9] = 17;
		memcpy(frame + 12, pk->src.ip + 12, 4);
		memcpy(frame + 16, pk->dst.ip + 12, 4);
		wire_put16(frame + 20, pk->src.port);
		wire_put16(frame + 22, pk->dst.port);
		wire_put16(frame + 24, (uint16_t)(8 + pk->len));
		memcpy(frame + 28, pk->buf, pk->len);
		CHECK_EQ(u, wire_decode(&p, frame, n, WIRE_LINK_IP, ROCEV2_UDP_PORT), WIRE_OK);
		CHECK_EQ(u, icrc_verify(frame, &p), CRC_OK);
		CHECK_EQ(u, pk->dst.port, ROCEV2_UDP_PORT);
		CHECK_EQ(u, pk->ecn, WIRE_ECT0);
		checked++;
	}
	CHECK_EQ(u, checked, 5);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	pair_close(&pr);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_clean);
	RUN(&u, test_loss_1pct);
	RUN(&u, test_loss_5pct);
	RUN(&u, test_dup_5pct);
	RUN(&u, test_reorder_5pct);
	RUN(&u, test_all_impairments);
	RUN(&u, test_atomics);
	RUN(&u, test_atomics_lossy);
	RUN(&u, test_access_errors);
	RUN(&u, test_rnr);
	RUN(&u, test_inline);
	RUN(&u, test_retry_exceeded);
	RUN(&u, test_loss_window);
	RUN(&u, test_window_cap);
	RUN(&u, test_go_back_across_wrap);
	RUN(&u, test_read_implied_nak);
	RUN(&u, test_unsignaled);
	RUN(&u, test_calls_per_packet);
	RUN(&u, test_pipeline);
	RUN(&u, test_icrc_on_wire);
	return unit_done(&u);
}
