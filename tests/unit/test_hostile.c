// SPDX-License-Identifier: MIT
/*
 * Hostile peers: one soft device whose QP talks to a scripted peer.  The
 * peer builds raw RoCEv2 packets with the wire codec (wire_build, ICRC
 * included) and reads what the engine sends back, so every reply is
 * checked byte for byte against IBTA vol. 1 ch. 9 and what Linux rxe does:
 *   - NAK remote access error: bad rkey, out of bounds, wrapping va+len,
 *     a missing access right (WRITE, READ, atomic);
 *   - NAK invalid request: opcode sequences that cannot happen (MIDDLE or
 *     LAST without FIRST, a READ inside a WRITE), unaligned atomics,
 *     payloads that disagree with the RETH or the MTU, DMA lengths over
 *     2^31, opcodes the responder does not serve;
 *   - one NAK(PSN sequence error) per episode for PSNs ahead, duplicates
 *     re-ACKed and never executed again;
 *   - ACKs and NAKs for PSNs never sent (or long acknowledged) ignored and
 *     counted, forged CNPs only lowering the rate, truncated and bad-ICRC
 *     packets counted and dropped.
 * The registered memory sits between PROT_NONE guard pages, with canary
 * bytes between it and them: a stray write outside the region either
 * faults or changes a canary, and every case compares the whole mapping
 * with what it should hold.  The device stays open across all cases; a
 * case that is fatal for the QP (as the spec wants) gets a fresh QP after.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "soft.h"
#include "unit.h"

#define PEER_QPN 0x4242
#define PEER_PSN0 0xFFFFF0		/* the peer's PSNs wrap early */
#define PMTU 1024
#define CANARY_LEN 512			/* canary bytes on each side of the region */
#define CANARY 0xA5
#define QUEUE_CAP 1024

/* ---- the arena: guard page, canary, region, canary, guard page ---------- */

struct arena {
	uint8_t *map;			/* the whole mapping, guards included */
	size_t page, inner_len;		/* inner: the readable part */
	uint8_t *inner, *region;
	size_t region_len;
	uint8_t *expect;		/* what inner should hold */
};

static int arena_open(struct arena *a, size_t pages)
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

static void arena_close(struct arena *a)
{
	munmap(a->map, a->inner_len + 2 * a->page);
	free(a->expect);
}

/* Records a write the engine is allowed to make. */
static void arena_allow(struct arena *a, uint64_t va, const void *data, size_t len)
{
	memcpy(a->expect + (va - (uint64_t)(uintptr_t)a->inner), data, len);
}

/* Every byte of the mapping as it should be: canaries and region. */
static bool arena_intact(const struct arena *a)
{
	return memcmp(a->inner, a->expect, a->inner_len) == 0;
}

/* ---- the link between the engine and the scripted peer ---------------- */

struct queue {
	struct soft_pkt *pkts;
	int len;
};

struct peer_link {
	struct soft_link pub;
	struct queue to_engine, from_engine;
};

static int pl_qp_open(struct soft_link *l, int slot, uint8_t tos, char *err)
{
	(void)l, (void)tos, (void)err;
	return 0xD000 + slot;
}

static void pl_qp_close(struct soft_link *l, int slot)
{
	(void)l, (void)slot;
}

static int pl_send(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct queue *q = &((struct peer_link *)l)->from_engine;

	for (int i = 0; i < n && q->len < QUEUE_CAP; i++) {
		soft_pkt_seal(&pkts[i], 0);
		q->pkts[q->len++] = pkts[i];
	}
	return n;
}

static int pl_recv(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct queue *q = &((struct peer_link *)l)->to_engine;
	int got = n < q->len ? n : q->len;

	memcpy(pkts, q->pkts, (size_t)got * sizeof(*pkts));
	memmove(q->pkts, q->pkts + got, (size_t)(q->len - got) * sizeof(*pkts));
	q->len -= got;
	return got;
}

static void pl_close(struct soft_link *l)
{
	struct peer_link *pl = (struct peer_link *)l;

	free(pl->to_engine.pkts);
	free(pl->from_engine.pkts);
	free(pl);
}

static const struct soft_link_ops peer_link_ops = {
	.qp_open = pl_qp_open, .qp_close = pl_qp_close, .send = pl_send, .recv = pl_recv,
	.close = pl_close,
};

static void v4_addr(struct soft_addr *s, uint8_t host, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->ip[10] = s->ip[11] = 0xFF;
	s->ip[12] = 198;
	s->ip[13] = 18;
	s->ip[15] = host;
	s->port = port;
}

/* ---- the session: device, QP, MRs, peer state --------------------------- */

struct hostile {
	struct arena a;
	struct peer_link *link;
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
static void qp_fresh(struct hostile *h)
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
	h->link->from_engine.len = 0;
}

static int reg(struct hostile *h, struct xport_mr *mr, int access)
{
	char err[XPORT_ERR_LEN];

	*mr = (struct xport_mr){ .addr = h->a.region, .length = h->a.region_len,
				 .access = XPORT_ACCESS_LOCAL_WRITE | access };
	return soft_engine_ops.reg_mr(h->dev, mr, err);
}

static int hostile_open(struct hostile *h)
{
	char err[XPORT_ERR_LEN];

	memset(h, 0, sizeof(*h));
	if (arena_open(&h->a, 8))
		return -1;
	h->link = calloc(1, sizeof(*h->link));
	h->link->pub.ops = &peer_link_ops;
	v4_addr(&h->link->pub.local, 1, ROCEV2_UDP_PORT);
	h->link->to_engine.pkts = calloc(QUEUE_CAP, sizeof(struct soft_pkt));
	h->link->from_engine.pkts = calloc(QUEUE_CAP, sizeof(struct soft_pkt));
	v4_addr(&h->peer, 2, 49152);
	h->dev = soft_dev_open(&h->link->pub, err);
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

static void hostile_close(struct hostile *h)
{
	soft_engine_ops.destroy_qp(h->qp);
	soft_engine_ops.destroy_cq(h->cq);
	soft_dev_close(h->dev);
	arena_close(&h->a);
}

/* ---- the scripted peer: building, injecting, reading replies ------------ */

/* Builds p (BTH fields and extension headers set by the caller) as an IPv4
 * frame from src with the codec and hands its UDP payload to the engine. */
static void inject_from(struct hostile *h, const struct soft_addr *src, struct wire_pkt *p,
			const void *payload, size_t len, uint8_t ecn)
{
	uint8_t frame[SOFT_PKT_MAX + 64];
	struct queue *q = &h->link->to_engine;
	struct soft_pkt *pk = &q->pkts[q->len];
	size_t n, hdr = WIRE_IPV4_LEN + WIRE_UDP_LEN;

	p->encap = WIRE_ENCAP_ROCEV2;
	p->layers = WIRE_L_IPV4;
	p->ip4.frag = 0x4000;	/* DF, ID 0: as RoCEv2 senders do */
	p->ip4.ecn = ecn;
	memcpy(p->ip4.src, src->ip + 12, 4);
	memcpy(p->ip4.dst, h->link->pub.local.ip + 12, 4);
	p->udp.sport = src->port;
	p->udp.dport = ROCEV2_UDP_PORT;
	n = wire_build(frame, sizeof(frame), p, payload, len);
	if (!n || q->len == QUEUE_CAP)
		return;
	memset(pk, 0, sizeof(*pk));
	memcpy(pk->buf, frame + hdr, n - hdr);
	pk->len = n - hdr;
	pk->src = *src;
	pk->dst = h->link->pub.local;
	pk->ecn = ecn;
	q->len++;
}

/* The same from the connected peer. */
static void inject(struct hostile *h, struct wire_pkt *p, const void *payload, size_t len,
		   uint8_t ecn)
{
	inject_from(h, &h->peer, p, payload, len, ecn);
}

/* Hands raw UDP payload bytes to the engine as they are. */
static void inject_raw(struct hostile *h, const uint8_t *buf, size_t len)
{
	struct queue *q = &h->link->to_engine;
	struct soft_pkt *pk = &q->pkts[q->len++];

	memset(pk, 0, sizeof(*pk));
	memcpy(pk->buf, buf, len);
	pk->len = len;
	pk->src = h->peer;
	pk->dst = h->link->pub.local;
}

static void bth(struct hostile *h, struct wire_pkt *p, uint8_t op, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->bth.opcode = op;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
	p->bth.dqpn = h->qp->qpn;
	p->bth.psn = psn & WIRE_PSN_MASK;
	p->bth.ackreq = true;
}

/* A WRITE or SEND packet; RETH fields are used when the opcode has one. */
static void put_data(struct hostile *h, uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey,
		     uint32_t dmalen, const void *data, size_t len)
{
	struct wire_pkt p;

	bth(h, &p, op, psn);
	p.reth = (struct wire_reth){ va, rkey, dmalen };
	inject(h, &p, data, len, WIRE_ECT0);
}

static void put_read(struct hostile *h, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct wire_pkt p;

	bth(h, &p, OP_RC_READ_REQUEST, psn);
	p.reth = (struct wire_reth){ va, rkey, len };
	inject(h, &p, NULL, 0, WIRE_ECT0);
}

static void put_atomic(struct hostile *h, uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey,
		       uint64_t add)
{
	struct wire_pkt p;

	bth(h, &p, op, psn);
	p.atomiceth = (struct wire_atomiceth){ va, rkey, add, 0 };
	inject(h, &p, NULL, 0, WIRE_ECT0);
}

/* A response (ACK, NAK, atomic ACK, READ response) towards the engine's requester. */
static void put_ack(struct hostile *h, uint8_t op, uint32_t psn, uint8_t syndrome,
		    const void *data, size_t len)
{
	struct wire_pkt p;

	bth(h, &p, op, psn);
	p.bth.ackreq = false;
	p.aeth.syndrome = syndrome;
	inject(h, &p, data, len, WIRE_NOT_ECT);
}

/* Lets the engine run, then decodes what it sent (at most cap packets). */
static int replies(struct hostile *h, struct wire_pkt *out, int cap)
{
	struct queue *q = &h->link->from_engine;
	int n = 0;

	for (int i = 0; i < 4; i++)
		soft_progress(h->dev);
	for (int i = 0; i < q->len && n < cap; i++)
		if (wire_decode_bth(&out[n], q->pkts[i].buf, q->pkts[i].len) == WIRE_OK)
			n++;
	return n;
}

/* The engine's packets after running it, then forgets them (the decoded
 * copies keep no pointer into the queue). */
static int take(struct hostile *h, struct wire_pkt *out, int cap)
{
	int n = replies(h, out, cap);

	h->link->from_engine.len = 0;
	return n;
}

static uint8_t nak(uint8_t code)
{
	return wire_aeth_make(WIRE_AETH_NAK, code);
}

static const uint8_t ACK_SYN = (WIRE_AETH_ACK << 5) | WIRE_AETH_CREDITS_INVALID;

/* Exactly one reply, an ACK packet with this syndrome at this PSN. */
static bool one_ack(struct hostile *h, uint8_t syndrome, uint32_t psn)
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

static bool silent(struct hostile *h)
{
	struct wire_pkt r[8];

	return take(h, r, 8) == 0;
}

static void tally(struct unit *u, struct hostile *h, int failures_before, const char *what)
{
	h->cases++;
	if (u->failures == failures_before)
		h->passed++;
	else
		printf("#   case failed: %s\n", what);
}

/* A correct WRITE lands after whatever came before (on a fresh QP if the
 * last case was fatal for this one). */
static void write_lands(struct unit *u, struct hostile *h, size_t off)
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
static void hostile_finish(struct unit *u, struct hostile *h, const char *label)
{
	write_lands(u, h, 2048);
	CHECK(u, arena_intact(&h->a));
	printf("#   %s: %d of %d cases as expected\n", label, h->passed, h->cases);
	hostile_close(h);
}

/* ---- responder: requests that must be refused -------------------------- */

enum req_kind { K_WRITE, K_READ, K_ATOMIC };

struct refusal {
	const char *what;
	enum req_kind kind;
	int mr;				/* 0 full, 1 read-only, 2 write-only, 3 bad rkey */
	int64_t off;			/* from the region start; see end_rel */
	bool end_rel;			/* off counts from the region end */
	uint64_t abs_va;		/* nonzero: this VA instead */
	uint32_t len;			/* DMA length (atomics: ignored) */
	uint8_t code;			/* NAK code expected */
};

static const struct refusal refusals[] = {
	{ "WRITE wrong rkey", K_WRITE, 3, 0, false, 0, 256, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "WRITE past the end", K_WRITE, 0, -100, true, 0, 256, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "WRITE before the start", K_WRITE, 0, -8, false, 0, 64, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "WRITE va+len wraps", K_WRITE, 0, 0, false, (uint64_t)-128, 256,
	  WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "WRITE without remote write", K_WRITE, 1, 0, false, 0, 64, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "READ wrong rkey", K_READ, 3, 0, false, 0, 256, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "READ past the end", K_READ, 0, -4, true, 0, 8, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "READ va+len wraps", K_READ, 0, 0, false, (uint64_t)-16, 4096,
	  WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "READ 2 GiB + 1 (over the IBTA maximum)", K_READ, 0, 0, false, 0, 0x80000001u,
	  WIRE_NAK_INVALID_REQ },
	{ "READ 4 GiB - 1", K_READ, 0, 0, false, 0, 0xFFFFFFFFu, WIRE_NAK_INVALID_REQ },
	{ "READ a whole region + 1", K_READ, 0, 0, false, 0, 0, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "READ without remote read", K_READ, 2, 0, false, 0, 64, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "atomic unaligned", K_ATOMIC, 0, 4, false, 0, 0, WIRE_NAK_INVALID_REQ },
	{ "atomic at the end", K_ATOMIC, 0, 0, true, 0, 0, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "atomic before the start", K_ATOMIC, 0, -8, false, 0, 0, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "atomic wrong rkey", K_ATOMIC, 3, 0, false, 0, 0, WIRE_NAK_REMOTE_ACCESS_ERR },
	{ "atomic without remote atomic", K_ATOMIC, 1, 0, false, 0, 0,
	  WIRE_NAK_REMOTE_ACCESS_ERR },
};

static uint32_t rkey_of(struct hostile *h, int which)
{
	switch (which) {
	case 1: return h->ro_mr.rkey;
	case 2: return h->wo_mr.rkey;
	case 3: return h->mr.rkey ^ 0x5500;
	default: return h->mr.rkey;
	}
}

/* Each refusal: the NAK named, at the request's PSN, memory untouched, the
 * QP in the error state (a class C error, as in rxe), later requests
 * ignored, and the device still serving a fresh QP. */
static void test_refusals(struct unit *u)
{
	struct hostile h;
	uint8_t data[4096];

	CHECK_EQ(u, hostile_open(&h), 0);
	memset(data, 0x3C, sizeof(data));
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		int before = u->failures;
		uint64_t va = r->abs_va ? r->abs_va :
			      va_of(&h, r->end_rel ? h.a.region_len : 0) + (uint64_t)r->off;
		uint32_t len = r->len ? r->len : (uint32_t)h.a.region_len + 1;
		uint32_t rkey = rkey_of(&h, r->mr);

		if (r->kind == K_WRITE)
			put_data(&h, OP_RC_WRITE_ONLY, h.psn, va, rkey, len, data, len);
		else if (r->kind == K_READ)
			put_read(&h, h.psn, va, rkey, len);
		else
			put_atomic(&h, OP_RC_FETCH_ADD, h.psn, va, rkey, 1);
		CHECK(u, one_ack(&h, nak(r->code), h.psn));
		CHECK_EQ(u, h.qp->state, SOFT_QP_ERROR);
		CHECK_EQ(u, h.qp->ctr.naks_tx, 1);
		/* A dead QP answers nothing, whatever comes next. */
		put_data(&h, OP_RC_WRITE_ONLY, h.psn + 1, va_of(&h, 0), h.mr.rkey, 8, data, 8);
		CHECK(u, silent(&h));
		CHECK(u, arena_intact(&h.a));
		write_lands(u, &h, 64 * i);
		tally(u, &h, before, r->what);
	}
	hostile_finish(u, &h, "refusals");
}

/* ---- responder: illegal opcode sequences and lengths ------------------- */

/* Sends the packets of one script; the last one must draw NAK(code) at its
 * PSN, the ones before it ACKs only where they asked for one. */
struct step {
	uint8_t op;
	uint32_t dmalen;		/* RETH length, when the opcode has a RETH */
	uint32_t len;			/* payload bytes */
};

struct script {
	const char *what;
	struct step steps[4];
	int nsteps;
	uint8_t code;
	size_t landed;			/* bytes of the earlier steps that may land */
};

static const struct script scripts[] = {
	{ "WRITE MIDDLE without FIRST", { { OP_RC_WRITE_MIDDLE, 0, PMTU } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE LAST without FIRST", { { OP_RC_WRITE_LAST, 0, 16 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "SEND LAST without FIRST", { { OP_RC_SEND_LAST, 0, 16 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "SEND MIDDLE without FIRST", { { OP_RC_SEND_MIDDLE, 0, PMTU } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE FIRST then SEND ONLY", { { OP_RC_WRITE_FIRST, 3000, PMTU },
					  { OP_RC_SEND_ONLY, 0, 16 } }, 2,
	  WIRE_NAK_INVALID_REQ, PMTU },
	{ "WRITE FIRST then READ", { { OP_RC_WRITE_FIRST, 3000, PMTU },
				     { OP_RC_READ_REQUEST, 64, 0 } }, 2,
	  WIRE_NAK_INVALID_REQ, PMTU },
	{ "WRITE FIRST then WRITE FIRST", { { OP_RC_WRITE_FIRST, 3000, PMTU },
					    { OP_RC_WRITE_FIRST, 3000, PMTU } }, 2,
	  WIRE_NAK_INVALID_REQ, PMTU },
	{ "SEND FIRST then WRITE ONLY", { { OP_RC_SEND_FIRST, 0, PMTU },
					  { OP_RC_WRITE_ONLY, 16, 16 } }, 2,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE ONLY payload over the RETH length", { { OP_RC_WRITE_ONLY, 100, 600 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE ONLY payload under the RETH length", { { OP_RC_WRITE_ONLY, 600, 100 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE ONLY payload over the MTU", { { OP_RC_WRITE_ONLY, 2000, 2000 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE FIRST shorter than the MTU", { { OP_RC_WRITE_FIRST, 3000, 500 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE FIRST payload over the RETH length", { { OP_RC_WRITE_FIRST, 512, PMTU } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "WRITE MIDDLE past the RETH length", { { OP_RC_WRITE_FIRST, 3000, PMTU },
						 { OP_RC_WRITE_MIDDLE, 0, PMTU },
						 { OP_RC_WRITE_MIDDLE, 0, PMTU } }, 3,
	  WIRE_NAK_INVALID_REQ, 2 * PMTU },
	{ "WRITE LAST longer than what is left", { { OP_RC_WRITE_FIRST, 1500, PMTU },
						   { OP_RC_WRITE_LAST, 0, 600 } }, 2,
	  WIRE_NAK_INVALID_REQ, PMTU },
	{ "WRITE DMA length over 2^31", { { OP_RC_WRITE_FIRST, 0x80000400u, PMTU } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
	{ "RC FLUSH (not served)", { { OP_RC_FLUSH, 8, 0 } }, 1, WIRE_NAK_INVALID_REQ, 0 },
	{ "RC ATOMIC WRITE (not served)", { { OP_RC_ATOMIC_WRITE, 8, 8 } }, 1,
	  WIRE_NAK_INVALID_REQ, 0 },
};

static void test_sequences(struct unit *u)
{
	struct hostile h;
	uint8_t data[2048];

	CHECK_EQ(u, hostile_open(&h), 0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13);
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		const struct script *s = &scripts[i];
		int before = u->failures;
		uint64_t va = va_of(&h, 4096);
		struct xport_recv_wr rr = { 1, { va_of(&h, 8192), 4096, h.mr.lkey } };
		char err[XPORT_ERR_LEN];

		/* SENDs need a RECV; it is flushed when the QP fails. */
		CHECK_EQ(u, soft_engine_ops.post_recv(h.qp, &rr, err), 0);
		for (int k = 0; k < s->nsteps; k++) {
			const struct step *st = &s->steps[k];
			struct wire_pkt p;

			bth(&h, &p, st->op, h.psn + (uint32_t)k);
			p.bth.ackreq = k == s->nsteps - 1;
			p.reth = (struct wire_reth){ va, h.mr.rkey, st->dmalen };
			p.atomiceth = (struct wire_atomiceth){ va, h.mr.rkey, 1, 0 };
			inject(&h, &p, data, st->len, WIRE_ECT0);
		}
		/* What the earlier steps wrote is allowed: they were legal. */
		arena_allow(&h.a, va, data, s->landed);
		if (s->steps[0].op == OP_RC_SEND_FIRST)
			arena_allow(&h.a, va_of(&h, 8192), data, PMTU);
		CHECK(u, one_ack(&h, nak(s->code), h.psn + (uint32_t)s->nsteps - 1));
		CHECK_EQ(u, h.qp->state, SOFT_QP_ERROR);
		CHECK(u, arena_intact(&h.a));
		write_lands(u, &h, 64 * i);
		tally(u, &h, before, s->what);
	}
	hostile_finish(u, &h, "sequences and lengths");
}

/* ---- responder: zero-length operations with a bad rkey (allowed) -------- */

static void test_zero_length(struct unit *u)
{
	struct hostile h;
	struct wire_pkt r[4];
	int before;

	CHECK_EQ(u, hostile_open(&h), 0);
	/* WRITE of 0 bytes: no address or rkey to check (as rxe); ACKed. */
	before = u->failures;
	put_data(&h, OP_RC_WRITE_ONLY, h.psn, 0xDEAD0000, 0x12345678, 0, NULL, 0);
	CHECK(u, one_ack(&h, ACK_SYN, h.psn));
	h.psn++;
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	tally(u, &h, before, "zero-length WRITE, bad rkey");
	/* READ of 0 bytes: one empty READ response. */
	before = u->failures;
	put_read(&h, h.psn, 0xDEAD0000, 0x12345678, 0);
	CHECK_EQ(u, take(&h, r, 4), 1);
	CHECK_EQ(u, r[0].bth.opcode, OP_RC_READ_RESPONSE_ONLY);
	CHECK_EQ(u, r[0].payload_len, 0);
	CHECK_EQ(u, r[0].bth.psn, h.psn & WIRE_PSN_MASK);
	h.psn++;
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	tally(u, &h, before, "zero-length READ, bad rkey");
	CHECK(u, arena_intact(&h.a));
	hostile_finish(u, &h, "zero-length");
}

/* ---- responder: PSNs out of the window, duplicates --------------------- */

static void test_psn_window(struct unit *u)
{
	struct hostile h;
	uint8_t data[256], other[256];
	struct wire_pkt r[8];
	int before;
	uint32_t dup_psn;

	CHECK_EQ(u, hostile_open(&h), 0);
	memset(data, 0x11, sizeof(data));
	memset(other, 0xEE, sizeof(other));
	/* Ahead of the window, three times (the last at the edge of the half circle):
	 * one NAK(PSN sequence error) at the expected PSN, nothing written. */
	before = u->failures;
	put_data(&h, OP_RC_WRITE_ONLY, h.psn + 5, va_of(&h, 0), h.mr.rkey, 256, other, 256);
	put_data(&h, OP_RC_WRITE_ONLY, h.psn + 0x400000, va_of(&h, 0), h.mr.rkey, 256, other, 256);
	put_data(&h, OP_RC_WRITE_ONLY, h.psn + 0x7FFFFF, va_of(&h, 0), h.mr.rkey, 256, other, 256);
	CHECK(u, one_ack(&h, nak(WIRE_NAK_PSN_SEQ_ERR), h.psn));
	CHECK_EQ(u, h.qp->ctr.out_of_sequence, 3);
	CHECK_EQ(u, h.qp->ctr.seq_naks_tx, 1);
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "PSNs ahead: one NAK per episode");
	/* The expected PSN ends the episode; the next gap NAKs again. */
	before = u->failures;
	write_lands(u, &h, 0);
	put_read(&h, h.psn + 2, va_of(&h, 0), h.mr.rkey, 64);
	CHECK(u, one_ack(&h, nak(WIRE_NAK_PSN_SEQ_ERR), h.psn));
	CHECK_EQ(u, h.qp->ctr.seq_naks_tx, 2);
	tally(u, &h, before, "a new episode NAKs again");
	/* A duplicate WRITE with other bytes: re-ACKed, not executed again. */
	before = u->failures;
	dup_psn = h.psn - 1;
	put_data(&h, OP_RC_WRITE_ONLY, dup_psn, va_of(&h, 0), h.mr.rkey, 256, other, 256);
	CHECK(u, one_ack(&h, ACK_SYN, dup_psn));
	CHECK_EQ(u, h.qp->ctr.duplicates, 1);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "duplicate WRITE re-ACKed, not executed");
	/* A duplicate as far behind as can be: the same. */
	before = u->failures;
	put_data(&h, OP_RC_SEND_ONLY, h.psn - 0x7FFFFF, 0, 0, 0, other, 64);
	CHECK(u, one_ack(&h, ACK_SYN, dup_psn));
	CHECK_EQ(u, h.qp->ctr.duplicates, 2);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "duplicate SEND far behind re-ACKed");
	/* A duplicate READ or atomic the responder keeps no state for: dropped
	 * (a class D error, as rxe does), counted, the QP still up. */
	before = u->failures;
	put_read(&h, h.psn - 1000, va_of(&h, 0), h.mr.rkey, 64);
	put_atomic(&h, OP_RC_FETCH_ADD, h.psn - 999, va_of(&h, 0), h.mr.rkey, 5);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.qp->ctr.duplicates, 4);
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "unknown duplicate READ/atomic dropped");
	/* A real READ, then its duplicate pointing out of bounds: the replay is
	 * checked like a new request and, being a duplicate, dropped. */
	before = u->failures;
	put_read(&h, h.psn, va_of(&h, 0), h.mr.rkey, 64);
	CHECK_EQ(u, take(&h, r, 8), 1);
	CHECK_EQ(u, r[0].bth.opcode, OP_RC_READ_RESPONSE_ONLY);
	CHECK_EQ(u, r[0].payload_len, 64);
	put_read(&h, h.psn, va_of(&h, h.a.region_len - 8), h.mr.rkey, 64);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	h.psn++;
	tally(u, &h, before, "duplicate READ out of bounds dropped");
	/* A real atomic, then its duplicate: the saved value, not run twice. */
	before = u->failures;
	{
		uint64_t v0, v1;

		memcpy(&v0, h.a.region + 64, 8);
		put_atomic(&h, OP_RC_FETCH_ADD, h.psn, va_of(&h, 64), h.mr.rkey, 5);
		put_atomic(&h, OP_RC_FETCH_ADD, h.psn, va_of(&h, 64), h.mr.rkey, 5);
		CHECK_EQ(u, take(&h, r, 8), 2);
		CHECK_EQ(u, r[0].bth.opcode, OP_RC_ATOMIC_ACK);
		CHECK_EQ(u, r[1].bth.opcode, OP_RC_ATOMIC_ACK);
		CHECK(u, r[0].atomicacketh.orig == v0 && r[1].atomicacketh.orig == v0);
		memcpy(&v1, h.a.region + 64, 8);
		CHECK(u, v1 == v0 + 5);
		v1 = v0 + 5;
		arena_allow(&h.a, va_of(&h, 64), &v1, 8);
		h.psn++;
	}
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "duplicate atomic answered from saved state");
	hostile_finish(u, &h, "PSN window and duplicates");
}

/* ---- garbage on the wire ----------------------------------------------- */

static void test_garbage(struct unit *u)
{
	struct hostile h;
	uint8_t data[256], raw[64];
	struct xport_counters c0;
	struct queue *q;
	int before;

	CHECK_EQ(u, hostile_open(&h), 0);
	memset(data, 0x77, sizeof(data));
	c0 = h.dev->ctr;
	/* Truncated: shorter than BTH + ICRC; a READ cut inside its RETH; an
	 * atomic cut inside its AtomicETH; a pad count larger than the packet. */
	before = u->failures;
	memset(raw, 0, sizeof(raw));
	raw[0] = OP_RC_WRITE_ONLY;
	inject_raw(&h, raw, 10);
	raw[0] = OP_RC_READ_REQUEST;
	wire_put24(raw + 5, h.qp->qpn);
	wire_put24(raw + 9, h.psn);
	inject_raw(&h, raw, WIRE_BTH_LEN + 8 + WIRE_ICRC_LEN);
	raw[0] = OP_RC_CMP_SWAP;
	inject_raw(&h, raw, WIRE_BTH_LEN + 20 + WIRE_ICRC_LEN);
	raw[0] = OP_RC_SEND_ONLY;
	raw[1] = 3 << 4;	/* pad count 3 with no payload */
	inject_raw(&h, raw, WIRE_BTH_LEN + WIRE_ICRC_LEN);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.dev->ctr.drops - c0.drops, 4);
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	tally(u, &h, before, "truncated headers dropped");
	/* A good WRITE with one payload byte flipped after the ICRC was made. */
	before = u->failures;
	put_data(&h, OP_RC_WRITE_ONLY, h.psn, va_of(&h, 0), h.mr.rkey, 256, data, 256);
	q = &h.link->to_engine;
	q->pkts[q->len - 1].buf[WIRE_BTH_LEN + WIRE_RETH_LEN + 7] ^= 0x01;
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.dev->ctr.icrc_errors - c0.icrc_errors, 1);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "bad ICRC dropped");
	/* Undefined opcode, a UD opcode, a UC opcode, a QP that does not exist. */
	before = u->failures;
	{
		struct wire_pkt p;

		bth(&h, &p, OP_UD_SEND_ONLY, h.psn);
		p.deth.qkey = 1;
		inject(&h, &p, data, 16, WIRE_ECT0);
		bth(&h, &p, 0x20 | OP_RC_WRITE_ONLY, h.psn);	/* UC WRITE ONLY */
		p.reth = (struct wire_reth){ va_of(&h, 0), h.mr.rkey, 16 };
		inject(&h, &p, data, 16, WIRE_ECT0);
		bth(&h, &p, OP_RC_WRITE_ONLY, h.psn);
		p.bth.dqpn ^= 0x40;				/* a QP that does not exist */
		p.reth = (struct wire_reth){ va_of(&h, 0), h.mr.rkey, 16 };
		inject(&h, &p, data, 16, WIRE_ECT0);
		memset(raw, 0, sizeof(raw));
		raw[0] = 0x1F;				/* undefined RC opcode */
		wire_put24(raw + 5, h.qp->qpn);
		inject_raw(&h, raw, WIRE_BTH_LEN + WIRE_ICRC_LEN);
	}
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.dev->ctr.drops - c0.drops, 4 + 4);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "foreign opcodes and QPNs dropped");
	/* A SEND longer than the RECV posted: the RECV fails with a length
	 * error, the peer gets NAK(invalid request), no byte past the RECV. */
	before = u->failures;
	{
		struct xport_recv_wr rr = { 9, { va_of(&h, 1024), 100, h.mr.lkey } };
		struct xport_wc wc[2];
		char err[XPORT_ERR_LEN];

		CHECK_EQ(u, soft_engine_ops.post_recv(h.qp, &rr, err), 0);
		put_data(&h, OP_RC_SEND_ONLY, h.psn, 0, 0, 0, data, 200);
		CHECK(u, one_ack(&h, nak(WIRE_NAK_INVALID_REQ), h.psn));
		CHECK_EQ(u, soft_engine_ops.poll_cq(h.cq, wc, 2), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_LOC_LEN_ERR);
		CHECK(u, arena_intact(&h.a));
	}
	tally(u, &h, before, "SEND longer than the RECV");
	hostile_finish(u, &h, "garbage");
}

/* ---- requester: forged responses and CNPs ------------------------------ */

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

static int completions(struct hostile *h, struct xport_wc *wc, int cap)
{
	return soft_engine_ops.poll_cq(h->cq, wc, cap);
}

static void test_forged_responses(struct unit *u)
{
	struct hostile h;
	struct xport_wc wc[4];
	struct xport_counters c0;
	uint32_t psn;
	int before;
	uint8_t junk[PMTU + 64];

	CHECK_EQ(u, hostile_open(&h), 0);
	memset(junk, 0xBD, sizeof(junk));
	psn = post(u, &h, XPORT_WR_RDMA_WRITE, 0, 100, 1);
	c0 = h.dev->ctr;
	/* ACK, NAKs, RNR NAK, atomic ACK and READ response for PSNs never sent:
	 * ignored and counted; the WRITE still waits for its ACK. */
	before = u->failures;
	put_ack(&h, OP_RC_ACK, psn + 1, ACK_SYN, NULL, 0);
	put_ack(&h, OP_RC_ACK, psn + 100, nak(WIRE_NAK_REMOTE_ACCESS_ERR), NULL, 0);
	put_ack(&h, OP_RC_ACK, psn + 0x400000, nak(WIRE_NAK_INVALID_REQ), NULL, 0);
	put_ack(&h, OP_RC_ACK, psn + 7, nak(WIRE_NAK_PSN_SEQ_ERR), NULL, 0);
	put_ack(&h, OP_RC_ACK, psn + 2, wire_aeth_make(WIRE_AETH_RNR_NAK, 1), NULL, 0);
	put_ack(&h, OP_RC_ATOMIC_ACK, psn + 3, ACK_SYN, NULL, 0);
	put_ack(&h, OP_RC_READ_RESPONSE_ONLY, psn + 4, ACK_SYN, junk, 64);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.dev->ctr.drops - c0.drops, 7);
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	CHECK_EQ(u, completions(&h, wc, 4), 0);
	CHECK_EQ(u, h.qp->una, psn);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "responses for PSNs never sent");
	/* The real ACK completes the WRITE. */
	before = u->failures;
	put_ack(&h, OP_RC_ACK, psn, ACK_SYN, NULL, 0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, completions(&h, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	tally(u, &h, before, "the real ACK still completes");
	/* Stale NAKs for a PSN long acknowledged: ignored, the QP stays up. */
	before = u->failures;
	c0 = h.dev->ctr;
	put_ack(&h, OP_RC_ACK, psn, nak(WIRE_NAK_REMOTE_ACCESS_ERR), NULL, 0);
	put_ack(&h, OP_RC_ACK, psn - 5000, nak(WIRE_NAK_INVALID_REQ), NULL, 0);
	put_ack(&h, OP_RC_ACK, psn, wire_aeth_make(WIRE_AETH_RNR_NAK, 31), NULL, 0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.dev->ctr.drops - c0.drops, 3);
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	CHECK_EQ(u, h.qp->rnr_until_ns, 0);
	psn = post(u, &h, XPORT_WR_RDMA_WRITE, 0, 100, 2);
	put_ack(&h, OP_RC_ACK, psn, ACK_SYN, NULL, 0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, completions(&h, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	tally(u, &h, before, "stale NAKs for acknowledged PSNs");
	/* A READ answered with more bytes than asked: a bad response, and not
	 * one byte past the READ's buffer. */
	before = u->failures;
	psn = post(u, &h, XPORT_WR_RDMA_READ, 256, 100, 3);
	put_ack(&h, OP_RC_READ_RESPONSE_ONLY, psn, ACK_SYN, junk, PMTU + 64);
	CHECK(u, silent(&h));
	CHECK_EQ(u, completions(&h, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_BAD_RESP_ERR);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "READ response longer than asked");
	/* An atomic ACK for a WRITE's PSN: ignored; the WRITE's ACK completes it. */
	before = u->failures;
	qp_fresh(&h);
	psn = post(u, &h, XPORT_WR_RDMA_WRITE, 0, 100, 4);
	put_ack(&h, OP_RC_ATOMIC_ACK, psn, ACK_SYN, NULL, 0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, completions(&h, wc, 4), 0);
	put_ack(&h, OP_RC_ACK, psn, ACK_SYN, NULL, 0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, completions(&h, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK(u, arena_intact(&h.a));
	tally(u, &h, before, "atomic ACK for a WRITE's PSN");
	hostile_finish(u, &h, "forged responses");
}

static void test_forged_cnps(struct unit *u)
{
	struct hostile h;
	struct xport_wc wc[2];
	uint32_t psn;
	int before;

	CHECK_EQ(u, hostile_open(&h), 0);
	before = u->failures;
	for (int i = 0; i < 200; i++) {
		struct wire_pkt p;

		bth(&h, &p, OP_CNP, 0);
		p.bth.ackreq = false;
		p.bth.becn = true;
		inject(&h, &p, NULL, 0, WIRE_NOT_ECT);
		if (i % 50 == 49)
			CHECK(u, silent(&h));
	}
	/* Each CNP cut the rate, down to the floor and no further; nothing else. */
	CHECK_EQ(u, h.qp->ctr.cnps_rx, 200);
	CHECK_EQ(u, h.qp->cc.cuts, 200);
	CHECK(u, h.qp->cc.limited);
	CHECK(u, h.qp->cc.rc_gbps >= 0.01 && h.qp->cc.rc_gbps < 1);
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	CHECK_EQ(u, h.qp->ctr.naks_tx + h.qp->ctr.naks_rx, 0);
	/* Data still flows at the reduced rate. */
	psn = post(u, &h, XPORT_WR_RDMA_WRITE, 0, 100, 1);
	put_ack(&h, OP_RC_ACK, psn, ACK_SYN, NULL, 0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, completions(&h, wc, 2), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	/* A CNP for a QP that does not exist is dropped. */
	{
		struct wire_pkt p;
		uint64_t drops = h.dev->ctr.drops;

		bth(&h, &p, OP_CNP, 0);
		p.bth.dqpn = 0x999;
		inject(&h, &p, NULL, 0, WIRE_NOT_ECT);
		CHECK(u, silent(&h));
		CHECK_EQ(u, h.dev->ctr.drops - drops, 1);
	}
	CHECK(u, arena_intact(&h.a));
	write_lands(u, &h, 0);
	tally(u, &h, before, "forged CNPs only lower the rate");
	hostile_finish(u, &h, "forged CNPs");
}

/*
 * An off-path host that knows the QPN, an rkey and the next PSN: a WRITE
 * from its own address (valid ICRC), and one from the peer's address under
 * another P_Key, change no byte and get no answer; each is counted as
 * wrong_peer_drops; the peer's own WRITE at that PSN still lands.  (A host
 * that spoofs the peer's address is not stopped here: only guessing QPN,
 * rkey and PSN stands in its way, see test_soft's test_unguessable_ids.)
 */
static void test_off_path(struct unit *u)
{
	struct hostile h;
	struct soft_addr other;
	uint8_t data[256];
	struct wire_pkt p;
	int before;

	CHECK_EQ(u, hostile_open(&h), 0);
	before = u->failures;
	other = h.peer;
	other.ip[15] ^= 0x40;
	memset(data, 0xEE, sizeof(data));
	bth(&h, &p, OP_RC_WRITE_ONLY, h.psn);
	p.reth = (struct wire_reth){ va_of(&h, 0), h.mr.rkey, sizeof(data) };
	inject_from(&h, &other, &p, data, sizeof(data), WIRE_ECT0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.qp->ctr.wrong_peer_drops, 1);
	CHECK_EQ(u, h.dev->ctr.icrc_errors, 0);
	CHECK(u, arena_intact(&h.a));
	bth(&h, &p, OP_RC_WRITE_ONLY, h.psn);
	p.bth.pkey = 0x8001;
	p.reth = (struct wire_reth){ va_of(&h, 0), h.mr.rkey, sizeof(data) };
	inject(&h, &p, data, sizeof(data), WIRE_ECT0);
	CHECK(u, silent(&h));
	CHECK_EQ(u, h.qp->ctr.wrong_peer_drops, 2);
	CHECK_EQ(u, h.dev->ctr.wrong_peer_drops, 2);
	CHECK(u, arena_intact(&h.a));
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	write_lands(u, &h, 0);
	tally(u, &h, before, "off-path WRITEs change nothing");
	hostile_finish(u, &h, "off-path peers");
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_refusals);
	RUN(&u, test_sequences);
	RUN(&u, test_zero_length);
	RUN(&u, test_psn_window);
	RUN(&u, test_garbage);
	RUN(&u, test_forged_responses);
	RUN(&u, test_forged_cnps);
	RUN(&u, test_off_path);
	return unit_done(&u);
}
