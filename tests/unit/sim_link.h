/* SPDX-License-Identifier: MIT */
/*
 * The one in-memory soft link of the tests and the fuzzer: a wire with two
 * sides, each a soft_link a soft device opens.  Two devices on it are a
 * connected pair (sim_pair.h); one device with the test or the fuzzer
 * writing side 1's packets into q[0] and reading q[1] is a scripted peer
 * (hostile.h, fuzz/soft_fixture.c).  It can drop, duplicate, reorder,
 * CE-mark and corrupt on a seed, or pass packets as the UDP link batches
 * them (GSO runs out, GRO runs in).
 */
/* (Functions are static and marked unused: each user takes a part.) */
#ifndef RDMAKIT_TEST_SIM_LINK_H
#define RDMAKIT_TEST_SIM_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "soft.h"

/* ---- the in-process link ------------------------------------------------ */

#define SIM_QUEUE 65536		/* default capacity of each direction */

struct sim_wire {
	struct soft_pkt *q[2];		/* packets in flight towards side 0 / 1 */
	int len[2];
	int cap;			/* of each queue; more is dropped */
	uint64_t rng;
	int drop_pct, dup_pct, reorder_pct;
	int ce_pct;			/* CE-mark this share of ECT packets */
	uint16_t next_id;		/* nonzero: IPv4 IDs counting up, as rxe sends */
	bool corrupt_next;		/* flip a byte of the next packet delivered */
	/* nonzero: flip a byte of the next packet delivered and seal it with
	 * this IPv4 ID, as a corruption that solves to that ID; forge_copies
	 * of it are delivered (default 1) */
	uint16_t forge_id;
	int forge_copies;
	bool cut;			/* the cable is pulled */
	int drop_after;			/* > 0: the packet sent after this many more is lost */
	uint64_t delivered, dropped, duplicated, reordered;
	uint32_t *drop_log;		/* when set: the BTH PSNs of dropped packets */
	int drop_log_cap, drop_log_len;
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
	if (w->len[to] == w->cap)
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
			if (w->len[to] == w->cap)
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
			if (w->drop_log && w->drop_log_len < w->drop_log_cap)
				w->drop_log[w->drop_log_len++] = wire_get24(pkts[i].buf + 9);
			continue;
		}
		if (w->len[to] == w->cap) {
			w->dropped++;
			continue;
		}
		sim_enqueue(w, to, &pkts[i]);
		if (w->corrupt_next && pkts[i].len > 40) {
			w->q[to][w->len[to] - 1].buf[30] ^= 0x40;
			w->corrupt_next = false;
		}
		if (w->forge_id && pkts[i].len > 40) {
			struct soft_pkt *f = &w->q[to][w->len[to] - 1];

			f->buf[30] ^= 0x40;
			soft_pkt_seal(f, w->forge_id);
			for (int c = 1; c < w->forge_copies; c++)
				sim_enqueue(w, to, f);
			w->forge_id = 0;
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

/* 198.18.0.HOST (IPv4-mapped), UDP port PORT. */
static __attribute__((unused)) void sim_addr(struct soft_addr *a, uint8_t host, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->ip[10] = a->ip[11] = 0xFF;
	a->ip[12] = 198;
	a->ip[13] = 18;
	a->ip[15] = host;
	a->port = port;
}

/* Side `side` of the wire as a soft_link (address 198.18.0.1 + side);
 * soft_dev_close frees it. */
static __attribute__((unused)) struct soft_link *sim_link(struct sim_wire *w, int side)
{
	struct sim_link *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pub.ops = &sim_ops;
	sim_addr(&s->pub.local, (uint8_t)(1 + side), ROCEV2_UDP_PORT);
	s->w = w;
	s->side = side;
	return &s->pub;
}

/* An empty wire of cap packets each way (calloc: pages are touched only as
 * packets arrive); impairments off, the random sequence from seed. */
static __attribute__((unused)) bool sim_wire_init(struct sim_wire *w, int cap, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->cap = cap;
	w->rng = seed | 1;
	w->q[0] = calloc((size_t)cap, sizeof(struct soft_pkt));
	w->q[1] = calloc((size_t)cap, sizeof(struct soft_pkt));
	return w->q[0] && w->q[1];
}

static __attribute__((unused)) void sim_wire_free(struct sim_wire *w)
{
	free(w->q[0]);
	free(w->q[1]);
	free(w->run_of[0]);
	free(w->run_of[1]);
	memset(w, 0, sizeof(*w));
}

/* The packet queued towards side `to` next, for a test or fuzzer playing
 * the far side (NULL when the queue is full); the caller fills it. */
static __attribute__((unused)) struct soft_pkt *sim_inject_slot(struct sim_wire *w, int to)
{
	struct soft_pkt *pk;

	if (w->len[to] == w->cap)
		return NULL;
	pk = &w->q[to][w->len[to]++];
	/* All but the buffer, which the caller writes. */
	memset(&pk->len, 0, sizeof(*pk) - offsetof(struct soft_pkt, len));
	return pk;
}

#endif
