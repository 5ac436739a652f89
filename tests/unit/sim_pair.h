/* SPDX-License-Identifier: MIT */
/*
 * The soft-engine unit tests' pair (test_soft.c, test_soft_cc.c): two
 * devices on the in-memory wire of sim_link.h, a connected pair of QPs
 * over it, and helpers to run operations to completion.
 */
/* (Functions are static and marked unused: each test file uses a part.) */
#ifndef RDMAKIT_TEST_SIM_PAIR_H
#define RDMAKIT_TEST_SIM_PAIR_H

#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "icrc.h"
#include "sim_link.h"
#include "soft.h"
#include "unit.h"

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

/* The pair's QP attributes: tests change a field or two. */
static __attribute__((unused)) struct xport_qp_attr pair_attr(void)
{
	return (struct xport_qp_attr){ .max_send_wr = 256, .max_recv_wr = 256, .mtu = 1024,
				       .timeout = 8, .retry_cnt = 7, .rnr_retry = 7,
				       .min_rnr_timer = 1, .max_rd_atomic = 16 };
}

/* A connected pair with QP attributes a, both starting at PSN psn0. */
static __attribute__((unused)) void pair_open_attr(struct pair *pr, size_t len, uint64_t seed,
						   const struct xport_qp_attr *a, uint32_t psn0)
{
	struct xport_qp_info info[2];
	char err[XPORT_ERR_LEN];

	memset(pr, 0, sizeof(*pr));
	sim_wire_init(&pr->wire, SIM_QUEUE, seed);
	for (int i = 0; i < 2; i++) {
		side_open(pr, i, len, a);
		pr->s[i].qp->next_psn = pr->s[i].qp->una = psn0;	/* exercise wrap */
	}
	for (int i = 0; i < 2; i++)
		soft_engine_ops.qp_info(pr->s[i].qp, &info[i]);
	for (int i = 0; i < 2; i++)
		soft_engine_ops.connect(pr->s[i].qp, &info[!i], err);
}

static __attribute__((unused)) void pair_open_inline(struct pair *pr, size_t len, uint64_t seed, int drop, int dup,
			     int reorder, uint32_t psn0, uint32_t max_inline)
{
	struct xport_qp_attr a = pair_attr();

	a.max_inline_data = max_inline;
	pair_open_attr(pr, len, seed, &a, psn0);
	pr->wire.drop_pct = drop;
	pr->wire.dup_pct = dup;
	pr->wire.reorder_pct = reorder;
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
	sim_wire_free(&pr->wire);
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
