/* SPDX-License-Identifier: MIT */
/*
 * The hostile-peer harness (test_hostile.c, test_dereg.c): one soft device
 * on side 0 of the in-memory wire (sim_link.h) whose QP talks to a
 * scripted peer writing side 1's packets, the registered
 * memory between guard pages and canaries, and helpers that build, inject
 * and read back raw RoCEv2 packets with the wire codec.
 */
#ifndef RDMAKIT_TEST_HOSTILE_H
#define RDMAKIT_TEST_HOSTILE_H

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "sim_link.h"
#include "soft.h"
#include "unit.h"

#define PEER_QPN 0x4242
#define PEER_PSN0 0xFFFFF0		/* the peer's PSNs wrap early */
#define PMTU 1024
#define CANARY_LEN 512			/* canary bytes on each side of the region */
#define CANARY 0xA5
#define QUEUE_CAP 1024
/* READ lengths in packets that make a round of responses (SOFT_BATCH) end
 * inside the third of three READs long, short, long: 112, 80, 112 at 256. */
#define HOSTILE_READ_LONG (SOFT_BATCH * 7 / 16)
#define HOSTILE_READ_SHORT (SOFT_BATCH * 5 / 16)

/* ---- the arena: guard page, canary, region, canary, guard page ---------- */

struct arena {
	uint8_t *map;			/* the whole mapping, guards included */
	size_t page, inner_len;		/* inner: the readable part */
	uint8_t *inner, *region;
	size_t region_len;
	uint8_t *expect;		/* what inner should hold */
};

static inline int arena_open(struct arena *a, size_t pages)
{
	a->page = (size_t)sysconf(_SC_PAGESIZE);
	a->inner_len = pages * a->page;
	a->map = mmap(NULL, a->inner_len + 2 * a->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (a->map == MAP_FAILED)
		return -1;
	a->inner = a->map + a->page;
	if (mprotect(a->inner, a->inner_len, PROT_READ | PROT_WRITE))
		return -1;
	a->region = a->inner + CANARY_LEN;
	a->region_len = a->inner_len - 2 * CANARY_LEN;
	memset(a->inner, CANARY, a->inner_len);
	for (size_t i = 0; i < a->region_len; i++)
		a->region[i] = (uint8_t)(i * 7 + 3);
	a->expect = malloc(a->inner_len);
	if (!a->expect)
		return -1;
	memcpy(a->expect, a->inner, a->inner_len);
	return 0;
}

static inline void arena_close(struct arena *a)
{
	munmap(a->map, a->inner_len + 2 * a->page);
	free(a->expect);
}

/* Records a write the engine is allowed to make. */
static inline void arena_allow(struct arena *a, uint64_t va, const void *data, size_t len)
{
	memcpy(a->expect + (va - (uint64_t)(uintptr_t)a->inner), data, len);
}

/* Every byte of the mapping as it should be: canaries and region. */
static inline bool arena_intact(const struct arena *a)
{
	return memcmp(a->inner, a->expect, a->inner_len) == 0;
}

/* ---- the session: device, QP, MRs, peer state --------------------------- */

struct hostile {
	struct arena a;
	struct sim_wire wire;			/* q[0]: to the engine, q[1]: from it */
	struct soft_addr local;			/* the engine's address */
	struct soft_dev *dev;
	void *cq;
	struct soft_qp *qp;
	struct xport_mr mr, ro_mr, wo_mr;	/* full access, remote read only, remote write only */
	struct soft_addr peer;
	uint32_t psn;				/* the peer's next request PSN */
	int cases, passed;			/* figures */
};

static uint64_t va_of(struct hostile *h, size_t off)
{
	return (uint64_t)(uintptr_t)h->a.region + off;
}

/* A fresh QP on the same device, connected to the peer. */
static inline void qp_fresh(struct hostile *h)
{
	struct xport_qp_attr attr = { .max_send_wr = 64, .max_recv_wr = 64, .mtu = PMTU,
				      .timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
				      .min_rnr_timer = 1, .max_rd_atomic = 16 };
	struct xport_qp_info info = { .qpn = PEER_QPN, .psn = PEER_PSN0, .udp_port = 4791,
				      .mtu = PMTU, .max_rd_atomic = 16 };
	char err[XPORT_ERR_LEN];

	if (h->qp)
		soft_engine_ops.destroy_qp(h->qp);
	h->qp = soft_engine_ops.create_qp(h->dev, h->cq, h->cq, &attr, err);
	memcpy(info.gid, h->peer.ip, 16);
	soft_engine_ops.connect(h->qp, &info, err);
	h->psn = PEER_PSN0;
	h->wire.len[1] = 0;
}

static inline int reg(struct hostile *h, struct xport_mr *mr, int access)
{
	char err[XPORT_ERR_LEN];

	*mr = (struct xport_mr){ .addr = h->a.region, .length = h->a.region_len,
				 .access = XPORT_ACCESS_LOCAL_WRITE | access };
	return soft_engine_ops.reg_mr(h->dev, mr, err);
}

static inline int hostile_open(struct hostile *h)
{
	char err[XPORT_ERR_LEN];

	memset(h, 0, sizeof(*h));
	if (arena_open(&h->a, SOFT_BATCH / 8))	/* room for READs of HOSTILE_READ_LONG */
		return -1;
	if (!sim_wire_init(&h->wire, QUEUE_CAP, 1))
		return -1;
	sim_addr(&h->local, 1, ROCEV2_UDP_PORT);	/* side 0's, as sim_link gives it */
	sim_addr(&h->peer, 2, 49152);
	h->dev = soft_dev_open(sim_link(&h->wire, 0), err);
	h->cq = soft_engine_ops.create_cq(h->dev, 256, err);
	if (!h->dev || !h->cq ||
	    reg(h, &h->mr, XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_READ |
		XPORT_ACCESS_REMOTE_ATOMIC) ||
	    reg(h, &h->ro_mr, XPORT_ACCESS_REMOTE_READ) ||
	    reg(h, &h->wo_mr, XPORT_ACCESS_REMOTE_WRITE))
		return -1;
	qp_fresh(h);
	return 0;
}

static inline void hostile_close(struct hostile *h)
{
	soft_engine_ops.destroy_qp(h->qp);
	soft_engine_ops.destroy_cq(h->cq);
	soft_dev_close(h->dev);
	sim_wire_free(&h->wire);
	arena_close(&h->a);
}

/* ---- the scripted peer: building, injecting, reading replies ------------ */

/* Builds p (BTH fields and extension headers set by the caller) as an IPv4
 * frame from src with the codec and hands its UDP payload to the engine. */
static inline void inject_from(struct hostile *h, const struct soft_addr *src, struct wire_pkt *p,
			const void *payload, size_t len, uint8_t ecn)
{
	uint8_t frame[SOFT_PKT_MAX + 64];
	struct soft_pkt *pk;
	size_t n, hdr = WIRE_IPV4_LEN + WIRE_UDP_LEN;

	p->encap = WIRE_ENCAP_ROCEV2;
	p->layers = WIRE_L_IPV4;
	p->ip4.frag = 0x4000;	/* DF, ID 0: as RoCEv2 senders do */
	p->ip4.ecn = ecn;
	memcpy(p->ip4.src, src->ip + 12, 4);
	memcpy(p->ip4.dst, h->local.ip + 12, 4);
	p->udp.sport = src->port;
	p->udp.dport = ROCEV2_UDP_PORT;
	n = wire_build(frame, sizeof(frame), p, payload, len);
	if (!n || !(pk = sim_inject_slot(&h->wire, 0)))
		return;
	memcpy(pk->buf, frame + hdr, n - hdr);
	pk->len = n - hdr;
	pk->src = *src;
	pk->dst = h->local;
	pk->ecn = ecn;
}

/* The same from the connected peer. */
static inline void inject(struct hostile *h, struct wire_pkt *p, const void *payload, size_t len,
		   uint8_t ecn)
{
	inject_from(h, &h->peer, p, payload, len, ecn);
}

/* Hands raw UDP payload bytes to the engine as they are. */
static inline void inject_raw(struct hostile *h, const uint8_t *buf, size_t len)
{
	struct soft_pkt *pk = sim_inject_slot(&h->wire, 0);

	if (!pk)
		return;
	memcpy(pk->buf, buf, len);
	pk->len = len;
	pk->src = h->peer;
	pk->dst = h->local;
}

static inline void bth(struct hostile *h, struct wire_pkt *p, uint8_t op, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = op;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
	p->bth.dqpn = h->qp->qpn;
	p->bth.psn = psn & WIRE_PSN_MASK;
	p->bth.ackreq = true;
}

/* A WRITE or SEND packet; RETH fields are used when the opcode has one. */
static inline void put_data(struct hostile *h, uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey,
		     uint32_t dmalen, const void *data, size_t len)
{
	struct wire_pkt p;

	bth(h, &p, op, psn);
	p.reth = (struct wire_reth){ va, rkey, dmalen };
	inject(h, &p, data, len, WIRE_ECT0);
}

static inline void put_read(struct hostile *h, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct wire_pkt p;

	bth(h, &p, OP_RC_READ_REQUEST, psn);
	p.reth = (struct wire_reth){ va, rkey, len };
	inject(h, &p, NULL, 0, WIRE_ECT0);
}

static inline void put_atomic(struct hostile *h, uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey,
		       uint64_t add)
{
	struct wire_pkt p;

	bth(h, &p, op, psn);
	p.atomiceth = (struct wire_atomiceth){ va, rkey, add, 0 };
	inject(h, &p, NULL, 0, WIRE_ECT0);
}

/* A response (ACK, NAK, atomic ACK, READ response) towards the engine's requester. */
static inline void put_ack(struct hostile *h, uint8_t op, uint32_t psn, uint8_t syndrome,
		    const void *data, size_t len)
{
	struct wire_pkt p;

	bth(h, &p, op, psn);
	p.bth.ackreq = false;
	p.aeth.syndrome = syndrome;
	inject(h, &p, data, len, WIRE_NOT_ECT);
}

/* Lets the engine run, then decodes what it sent (at most cap packets). */
static inline int replies(struct hostile *h, struct wire_pkt *out, int cap)
{
	const struct soft_pkt *q = h->wire.q[1];
	int n = 0;

	for (int i = 0; i < 4; i++)
		soft_progress(h->dev);
	for (int i = 0; i < h->wire.len[1] && n < cap; i++)
		if (wire_decode_bth(&out[n], q[i].buf, q[i].len) == WIRE_OK)
			n++;
	return n;
}

/* The engine's packets from one progress call (no more), decoded. */
static inline int one_round(struct hostile *h, struct wire_pkt *out, int cap)
{
	const struct soft_pkt *q = h->wire.q[1];
	int n = 0;

	soft_progress(h->dev);
	for (int i = 0; i < h->wire.len[1] && n < cap; i++)
		if (wire_decode_bth(&out[n], q[i].buf, q[i].len) == WIRE_OK)
			n++;
	h->wire.len[1] = 0;
	return n;
}

/* The engine's packets after running it, then forgets them (the decoded
 * copies keep no pointer into the queue). */
static inline int take(struct hostile *h, struct wire_pkt *out, int cap)
{
	int n = replies(h, out, cap);

	h->wire.len[1] = 0;
	return n;
}

static uint8_t nak(uint8_t code)
{
	return wire_aeth_make(WIRE_AETH_NAK, code);
}

static const uint8_t ACK_SYN = (WIRE_AETH_ACK << 5) | WIRE_AETH_CREDITS_INVALID;

/* Exactly one reply, an ACK packet with this syndrome at this PSN. */
static inline bool one_ack(struct hostile *h, uint8_t syndrome, uint32_t psn)
{
	struct wire_pkt r[8];
	int n = take(h, r, 8);

	if (n != 1 || r[0].bth.opcode != OP_RC_ACK || r[0].aeth.syndrome != syndrome ||
	    r[0].bth.psn != (psn & WIRE_PSN_MASK) || r[0].bth.dqpn != PEER_QPN) {
		printf("#   want one ACK syndrome 0x%02x PSN 0x%06x; got %d packet(s)", syndrome,
		       psn & WIRE_PSN_MASK, n);
		if (n)
			printf(", first opcode 0x%02x syndrome 0x%02x PSN 0x%06x", r[0].bth.opcode,
			       r[0].aeth.syndrome, r[0].bth.psn);
		printf("\n");
		return false;
	}
	return true;
}

static inline bool silent(struct hostile *h)
{
	struct wire_pkt r[8];

	return take(h, r, 8) == 0;
}

static inline void tally(struct unit *u, struct hostile *h, int failures_before, const char *what)
{
	h->cases++;
	if (u->failures == failures_before)
		h->passed++;
	else
		printf("#   case failed: %s\n", what);
}

/* A correct WRITE lands after whatever came before (on a fresh QP if the
 * last case was fatal for this one). */
static inline void write_lands(struct unit *u, struct hostile *h, size_t off)
{
	uint8_t data[300];

	if (h->qp->state != SOFT_QP_RTS)
		qp_fresh(h);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ off ^ h->psn);
	put_data(h, OP_RC_WRITE_ONLY, h->psn, va_of(h, off), h->mr.rkey, sizeof(data), data,
		 sizeof(data));
	arena_allow(&h->a, va_of(h, off), data, sizeof(data));
	CHECK(u, one_ack(h, ACK_SYN, h->psn));
	h->psn++;
	CHECK(u, arena_intact(&h->a));
}

/* The end of every test: a correct WRITE still lands, the mapping is as it
 * should be, and the figures for the table in docs/hardening.md. */
static inline void hostile_finish(struct unit *u, struct hostile *h, const char *label)
{
	write_lands(u, h, 2048);
	CHECK(u, arena_intact(&h->a));
	printf("#   %s: %d of %d cases as expected\n", label, h->passed, h->cases);
	hostile_close(h);
}

/* Posts an RDMA operation from the region to the peer and returns the PSN
 * of its first packet, as seen on the wire. */
static uint32_t post(struct unit *u, struct hostile *h, enum xport_wr_opcode op, size_t off,
		     uint32_t len, uint64_t wr_id)
{
	struct xport_send_wr wr = { .wr_id = wr_id, .opcode = op, .signaled = true,
				    .sge = { va_of(h, off), len, h->mr.lkey },
				    .remote_addr = 0x10000, .rkey = 0x77 };
	char err[XPORT_ERR_LEN];
	struct wire_pkt r[8];

	uint64_t end = soft_now_ns() + 2000000000ull;
	int n = 0;

	CHECK_EQ(u, soft_engine_ops.post_send(h->qp, &wr, NULL, err), 0);
	/* A QP slowed by CNPs may wait a little for pacer tokens. */
	while (!n && soft_now_ns() < end)
		n = take(h, r, 8);
	CHECK(u, n >= 1);
	return n ? r[0].bth.psn : 0;
}

static inline int completions(struct hostile *h, struct xport_wc *wc, int cap)
{
	return soft_engine_ops.poll_cq(h->cq, wc, cap);
}

#endif
