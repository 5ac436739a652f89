/* SPDX-License-Identifier: MIT */
/*
 * The soft-engine unit tests' wire (test_soft.c, test_soft_cc.c): two
 * devices joined by a deterministic in-process link that can drop,
 * duplicate, reorder, CE-mark and corrupt packets on a seed, or pass them
 * as the UDP link batches them (GSO runs out, GRO runs in); and a connected
 * pair of QPs over it with helpers to run operations to completion.
 */
/* (Functions are static and marked unused: each test file uses a part.) */
#ifndef RDMAKIT_TEST_SIM_PAIR_H
#define RDMAKIT_TEST_SIM_PAIR_H

#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "icrc.h"
#include "soft.h"
#include "unit.h"

/* ---- the in-process link ------------------------------------------------ */

#define SIM_QUEUE 65536

struct sim_wire {
	struct soft_pkt *q[2];		/* packets in flight towards side 0 / 1 */
	int len[2];
	uint64_t rng;
	int drop_pct, dup_pct, reorder_pct;
	int ce_pct;			/* CE-mark this share of ECT packets */
	uint16_t next_id;		/* nonzero: IPv4 IDs counting up, as rxe sends */
	bool corrupt_next;		/* flip a byte of the next packet delivered */
	bool cut;			/* the cable is pulled */
	int drop_after;			/* > 0: the packet sent after this many more is lost */
	uint64_t delivered, dropped, duplicated, reordered;
	/* batching: sends leave as the UDP link sends them (soft_plan_send),
	 * and receives take GRO runs as recvmmsg does; the calls are counted
	 * (no impairments then). */
	bool batching;
	uint32_t *run_of[2];		/* each queued packet's send message */
	uint32_t run_seq;
	int unread[2];			/* packets a receive call took, not yet handed out */
	uint64_t send_calls, send_msgs, recv_calls;
};

struct sim_link {
	struct soft_link pub;
	struct sim_wire *w;
	int side;
};

static uint32_t sim_rand(struct sim_wire *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (uint32_t)(w->rng >> 11);
}

static __attribute__((unused)) int sim_qp_open(struct soft_link *l, int slot, uint8_t tos, char *err)
{
	(void)tos;
	(void)err;
	return 0xC000 + slot + ((struct sim_link *)l)->side * 0x100;
}

static __attribute__((unused)) void sim_qp_close(struct soft_link *l, int slot)
{
	(void)l;
	(void)slot;
}

static __attribute__((unused)) void sim_enqueue(struct sim_wire *w, int to, const struct soft_pkt *pk)
{
	if (w->len[to] == SIM_QUEUE)
		return;
	w->q[to][w->len[to]++] = *pk;
}

/* One sendmmsg of the UDP link: one QP's packets, as GSO runs. */
static __attribute__((unused)) int sim_send_batched(struct sim_wire *w, int to, struct soft_pkt *pkts, int n)
{
	struct soft_send_msg msgs[SOFT_BATCH];
	int taken, nmsg = soft_plan_send(pkts, n < SOFT_BATCH ? n : SOFT_BATCH, true, msgs, &taken);

	w->send_calls++;
	w->send_msgs += (uint64_t)nmsg;
	for (int m = 0; m < nmsg; m++) {
		w->run_seq++;
		for (int k = 0; k < msgs[m].count; k++) {
			struct soft_pkt *pk = &pkts[msgs[m].first + k];

			soft_pkt_seal(pk, msgs[m].count > 1 ? (uint16_t)k : 0);
			if (w->len[to] == SIM_QUEUE)
				continue;
			w->run_of[to][w->len[to]] = w->run_seq;
			w->q[to][w->len[to]++] = *pk;
		}
	}
	return taken;
}

/* recvmmsg: one call takes up to SOFT_RX_MSGS messages (GRO runs). */
static __attribute__((unused)) int sim_recv_batched(struct sim_wire *w, int side, struct soft_pkt *pkts, int n)
{
	int got;

	if (!w->unread[side] && w->len[side]) {
		int msgs = 0, i = 0;

		while (i < w->len[side] && msgs < SOFT_RX_MSGS) {
			uint32_t run = w->run_of[side][i];

			while (i < w->len[side] && w->run_of[side][i] == run)
				i++;
			msgs++;
		}
		w->unread[side] = i;
		w->recv_calls++;
	}
	got = n < w->unread[side] ? n : w->unread[side];
	memcpy(pkts, w->q[side], (size_t)got * sizeof(*pkts));
	for (int i = 0; i < got; i++)
		pkts[i].ip_id = 0;
	memmove(w->q[side], w->q[side] + got, (size_t)(w->len[side] - got) * sizeof(*pkts));
	memmove(w->run_of[side], w->run_of[side] + got,
		(size_t)(w->len[side] - got) * sizeof(*w->run_of[side]));
	w->len[side] -= got;
	w->unread[side] -= got;
	w->delivered += (uint64_t)got;
	return got;
}

static __attribute__((unused)) int sim_send(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct sim_link *s = (struct sim_link *)l;
	struct sim_wire *w = s->w;
	int to = !s->side;

	if (w->batching)
		return sim_send_batched(w, to, pkts, n);

	for (int i = 0; i < n; i++) {
		soft_pkt_seal(&pkts[i], w->next_id ? w->next_id++ : 0);
		if (w->cut || (int)(sim_rand(w) % 100) < w->drop_pct ||
		    (w->drop_after > 0 && --w->drop_after == 0)) {
			w->dropped++;
			continue;
		}
		sim_enqueue(w, to, &pkts[i]);
		if (w->corrupt_next && pkts[i].len > 40) {
			w->q[to][w->len[to] - 1].buf[30] ^= 0x40;
			w->corrupt_next = false;
		}
		if (pkts[i].ecn == WIRE_ECT0 && (int)(sim_rand(w) % 100) < w->ce_pct)
			w->q[to][w->len[to] - 1].ecn = WIRE_CE;
		if ((int)(sim_rand(w) % 100) < w->dup_pct) {
			w->duplicated++;
			sim_enqueue(w, to, &pkts[i]);
		}
		/* Reorder: swap the new packet with an earlier one in flight. */
		if (w->len[to] > 1 && (int)(sim_rand(w) % 100) < w->reorder_pct) {
			struct soft_pkt tmp = w->q[to][w->len[to] - 1];
			int j = w->len[to] - 2;

			w->q[to][w->len[to] - 1] = w->q[to][j];
			w->q[to][j] = tmp;
			w->reordered++;
		}
	}
	return n;
}

static __attribute__((unused)) int sim_recv(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct sim_link *s = (struct sim_link *)l;
	struct sim_wire *w = s->w;
	int side = s->side, got = n < w->len[side] ? n : w->len[side];

	if (w->batching)
		return sim_recv_batched(w, side, pkts, n);
	memcpy(pkts, w->q[side], (size_t)got * sizeof(*pkts));
	for (int i = 0; i < got; i++)
		pkts[i].ip_id = 0;
	memmove(w->q[side], w->q[side] + got, (size_t)(w->len[side] - got) * sizeof(*pkts));
	w->len[side] -= got;
	w->delivered += (uint64_t)got;
	return got;
}

static __attribute__((unused)) void sim_close(struct soft_link *l)
{
	free(l);
}

static const struct soft_link_ops sim_ops = {
	.qp_open = sim_qp_open, .qp_close = sim_qp_close, .send = sim_send,
	.recv = sim_recv, .close = sim_close,
};

static __attribute__((unused)) struct soft_link *sim_link(struct sim_wire *w, int side)
{
	struct sim_link *s = calloc(1, sizeof(*s));

	s->pub.ops = &sim_ops;
	s->pub.local.ip[10] = s->pub.local.ip[11] = 0xFF;
	s->pub.local.ip[12] = 198;
	s->pub.local.ip[13] = 18;
	s->pub.local.ip[15] = (uint8_t)(1 + side);
	s->pub.local.port = ROCEV2_UDP_PORT;
	s->w = w;
	s->side = side;
	return &s->pub;
}

/* ---- a connected pair --------------------------------------------------- */

struct side {
	struct soft_dev *dev;
	void *cq;
	struct soft_qp *qp;
	uint8_t *buf;
	size_t len;
	struct xport_mr mr;
};

struct pair {
	struct sim_wire wire;
	struct side s[2];
};

static __attribute__((unused)) void side_open(struct pair *pr, int i, size_t len, const struct xport_qp_attr *a)
{
	struct side *s = &pr->s[i];
	char err[XPORT_ERR_LEN];

	s->dev = soft_dev_open(sim_link(&pr->wire, i), err);
	s->cq = soft_engine_ops.create_cq(s->dev, 4096, err);
	s->qp = soft_engine_ops.create_qp(s->dev, s->cq, s->cq, a, err);
	s->len = len;
	s->buf = calloc(1, len);
	s->mr = (struct xport_mr){ .addr = s->buf, .length = len,
				   .access = XPORT_ACCESS_LOCAL_WRITE | XPORT_ACCESS_REMOTE_WRITE |
					     XPORT_ACCESS_REMOTE_READ | XPORT_ACCESS_REMOTE_ATOMIC };
	soft_engine_ops.reg_mr(s->dev, &s->mr, err);
}

static __attribute__((unused)) void pair_open_inline(struct pair *pr, size_t len, uint64_t seed, int drop, int dup,
			     int reorder, uint32_t psn0, uint32_t max_inline)
{
	struct xport_qp_attr a = { .max_send_wr = 256, .max_recv_wr = 256, .mtu = 1024,
				   .timeout = 8, .retry_cnt = 7, .rnr_retry = 7,
				   .min_rnr_timer = 1, .max_rd_atomic = 16,
				   .max_inline_data = max_inline };
	struct xport_qp_info info[2];
	char err[XPORT_ERR_LEN];

	memset(pr, 0, sizeof(*pr));
	pr->wire.q[0] = calloc(SIM_QUEUE, sizeof(struct soft_pkt));
	pr->wire.q[1] = calloc(SIM_QUEUE, sizeof(struct soft_pkt));
	pr->wire.rng = seed | 1;
	pr->wire.drop_pct = drop;
	pr->wire.dup_pct = dup;
	pr->wire.reorder_pct = reorder;
	for (int i = 0; i < 2; i++) {
		side_open(pr, i, len, &a);
		pr->s[i].qp->next_psn = pr->s[i].qp->una = psn0;	/* exercise wrap */
	}
	for (int i = 0; i < 2; i++)
		soft_engine_ops.qp_info(pr->s[i].qp, &info[i]);
	for (int i = 0; i < 2; i++)
		soft_engine_ops.connect(pr->s[i].qp, &info[!i], err);
}

static __attribute__((unused)) void pair_open(struct pair *pr, size_t len, uint64_t seed, int drop, int dup, int reorder,
		      uint32_t psn0)
{
	pair_open_inline(pr, len, seed, drop, dup, reorder, psn0, 0);
}

static __attribute__((unused)) void pair_close(struct pair *pr)
{
	for (int i = 0; i < 2; i++) {
		soft_engine_ops.destroy_qp(pr->s[i].qp);
		soft_engine_ops.destroy_cq(pr->s[i].cq);
		soft_dev_close(pr->s[i].dev);
		free(pr->s[i].buf);
	}
	free(pr->wire.q[0]);
	free(pr->wire.q[1]);
	free(pr->wire.run_of[0]);
	free(pr->wire.run_of[1]);
}

/* Polls both sides until `want` completions arrived on side i (or 20 s). */
static __attribute__((unused)) int run_until(struct pair *pr, int i, int want, struct xport_wc *out)
{
	uint64_t end = soft_now_ns() + 20000000000ull;
	int got = 0;

	while (got < want && soft_now_ns() < end) {
		struct xport_wc wc[16];
		int n = soft_engine_ops.poll_cq(pr->s[i].cq, wc, 16);

		for (int k = 0; k < n && got < want; k++)
			out[got++] = wc[k];
		soft_engine_ops.poll_cq(pr->s[!i].cq, wc, 0);
		soft_progress(pr->s[!i].dev);
	}
	return got;
}

static __attribute__((unused)) void fill(uint8_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		p[i] = (uint8_t)(seed >> 56);
	}
}

static __attribute__((unused)) struct xport_send_wr wr_of(struct side *src, struct side *dst, enum xport_wr_opcode op,
				  size_t off, uint32_t len)
{
	return (struct xport_send_wr){
		.wr_id = len, .opcode = op, .signaled = true,
		.sge = { (uint64_t)(uintptr_t)src->buf + off, len, src->mr.lkey },
		.remote_addr = (uint64_t)(uintptr_t)dst->buf + off, .rkey = dst->mr.rkey,
		.imm = 0xC0FFEE,
	};
}

#endif
