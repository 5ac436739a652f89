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

#include "hostile.h"

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
	h.wire.q[0][h.wire.len[0] - 1].buf[WIRE_BTH_LEN + WIRE_RETH_LEN + 7] ^= 0x01;
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

/* ---- responder: responses leave in PSN order ---------------------------- */

/* A READ of n packets at h->psn, then `then` (injected by the caller at
 * the next PSN): every READ response leaves before the reply to `then`,
 * which is the last packet, with this opcode and syndrome. */
static void after_read(struct unit *u, struct hostile *h, uint32_t n, uint8_t want_op,
		       uint8_t want_syn, uint32_t want_psn, const char *what)
{
	static struct wire_pkt r[80];
	int before = u->failures, got = take(h, r, 80);

	CHECK_EQ(u, got, (int)n + 1);
	for (int i = 0; i + 1 < got && i < (int)n; i++)
		CHECK(u, r[i].bth.opcode >= OP_RC_READ_RESPONSE_FIRST &&
			 r[i].bth.opcode <= OP_RC_READ_RESPONSE_ONLY &&
			 r[i].bth.psn == ((h->psn + (uint32_t)i) & WIRE_PSN_MASK));
	if (got == (int)n + 1) {
		CHECK_EQ(u, r[n].bth.opcode, want_op);
		CHECK_EQ(u, r[n].aeth.syndrome, want_syn);
		CHECK_EQ(u, r[n].bth.psn, want_psn & WIRE_PSN_MASK);
	}
	tally(u, h, before, what);
}

static void test_response_order(struct unit *u)
{
	struct hostile h;
	uint32_t n = 20;
	uint8_t data[64] = { 0 };

	CHECK_EQ(u, hostile_open(&h), 0);
	/* An atomic right behind a READ: its ACK after the READ's responses. */
	put_read(&h, h.psn, va_of(&h, 0), h.mr.rkey, n * PMTU);
	put_atomic(&h, OP_RC_FETCH_ADD, h.psn + n, va_of(&h, 8192), h.mr.rkey, 1);
	{
		uint64_t v;

		memcpy(&v, h.a.expect + (va_of(&h, 8192) - (uint64_t)(uintptr_t)h.a.inner), 8);
		v++;
		arena_allow(&h.a, va_of(&h, 8192), &v, 8);
	}
	after_read(u, &h, n, OP_RC_ATOMIC_ACK, ACK_SYN, h.psn + n, "atomic ACK after READ");
	h.psn += n + 1;
	/* A PSN ahead: the sequence NAK (for the PSN expected) after them. */
	put_read(&h, h.psn, va_of(&h, 0), h.mr.rkey, n * PMTU);
	put_data(&h, OP_RC_WRITE_ONLY, h.psn + n + 3, va_of(&h, 0), h.mr.rkey, 64, data, 64);
	after_read(u, &h, n, OP_RC_ACK, nak(WIRE_NAK_PSN_SEQ_ERR), h.psn + n,
		   "sequence NAK after READ");
	h.psn += n;
	/* A SEND with no RECV posted: the RNR NAK after them. */
	put_read(&h, h.psn, va_of(&h, 0), h.mr.rkey, n * PMTU);
	put_data(&h, OP_RC_SEND_ONLY, h.psn + n, 0, 0, 0, data, 64);
	after_read(u, &h, n, OP_RC_ACK, wire_aeth_make(WIRE_AETH_RNR_NAK, 1), h.psn + n,
		   "RNR NAK after READ");
	h.psn += n;
	/* The requester goes back to an atomic while READ responses of later
	 * PSNs are still queued: they are stale and dropped, and the replayed
	 * atomic ACK leaves at once, alone. */
	{
		enum { L = HOSTILE_READ_LONG };
		static struct wire_pkt r[2 * SOFT_BATCH];
		uint32_t p0 = h.psn;
		uint64_t v;
		int before = u->failures, got;

		put_atomic(&h, OP_RC_FETCH_ADD, p0, va_of(&h, 8192), h.mr.rkey, 1);
		memcpy(&v, h.a.expect + (va_of(&h, 8192) - (uint64_t)(uintptr_t)h.a.inner), 8);
		v++;
		arena_allow(&h.a, va_of(&h, 8192), &v, 8);
		put_read(&h, p0 + 1, va_of(&h, 0), h.mr.rkey, L * PMTU);
		put_read(&h, p0 + 1 + L, va_of(&h, 0), h.mr.rkey, L * PMTU);
		put_read(&h, p0 + 1 + 2 * L, va_of(&h, 0), h.mr.rkey, L * PMTU);
		CHECK_EQ(u, one_round(&h, r, 2 * SOFT_BATCH), 1 + SOFT_BATCH);
		put_atomic(&h, OP_RC_FETCH_ADD, p0, va_of(&h, 8192), h.mr.rkey, 1);
		got = take(&h, r, 2 * SOFT_BATCH);
		CHECK_EQ(u, got, 1);
		CHECK(u, got >= 1 && r[0].bth.opcode == OP_RC_ATOMIC_ACK &&
			 r[0].bth.psn == (p0 & WIRE_PSN_MASK));
		h.psn = p0 + 1 + 3 * L;
		tally(u, &h, before, "a replayed atomic drops the stale READ responses after it");
	}
	CHECK_EQ(u, h.qp->state, SOFT_QP_RTS);
	CHECK(u, arena_intact(&h.a));
	hostile_finish(u, &h, "response order");
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
	RUN(&u, test_response_order);
	return unit_done(&u);
}
