// SPDX-License-Identifier: MIT
/*
 * Deregistration as verbs specifies it, on the soft engine: it succeeds,
 * and from its return no packet touches the region.  The rest of a WRITE
 * or READ in flight on it is NAKed remote-access-error (the responder's
 * side), and local work that still needs it (a WRITE's retransmission, a
 * READ response or an atomic's result landing) completes with a local
 * protection error (the requester's side).  The scripted peer of
 * hostile.h drives each case; the arena's guard pages and canaries show
 * that nothing was touched.
 */
#include "hostile.h"

/* A fresh full-access region (new rkey) and QP for the next case. */
static void renew(struct unit *u, struct hostile *h)
{
	CHECK_EQ(u, reg(h, &h->mr, XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_READ |
			XPORT_ACCESS_REMOTE_ATOMIC), 0);
	qp_fresh(h);
}

/* A WRITE of three packets: the first lands, then the region goes; the
 * Middle is NAKed and neither it nor the Last touches a byte. */
static void write_cut(struct unit *u, struct hostile *h)
{
	uint8_t data[PMTU];
	uint32_t psn = h->psn;
	int before = u->failures;

	memset(data, 0x3C, sizeof(data));
	put_data(h, OP_RC_WRITE_FIRST, psn, va_of(h, 0), h->mr.rkey, 3 * PMTU, data, PMTU);
	CHECK(u, one_ack(h, ACK_SYN, psn));
	arena_allow(&h->a, va_of(h, 0), data, PMTU);
	soft_engine_ops.dereg_mr(h->dev, &h->mr);
	put_data(h, OP_RC_WRITE_MIDDLE, psn + 1, 0, 0, 0, data, PMTU);
	put_data(h, OP_RC_WRITE_LAST, psn + 2, 0, 0, 0, data, PMTU);
	CHECK(u, one_ack(h, nak(WIRE_NAK_REMOTE_ACCESS_ERR), psn + 1));
	CHECK_EQ(u, h->qp->state, SOFT_QP_ERROR);
	CHECK(u, arena_intact(&h->a));
	h->psn = psn + 3;
	tally(u, h, before, "WRITE: region deregistered after its first packet");
	renew(u, h);
}

/* Three READs of L, S and L packets (112, 80 and 112 at a batch of 256): one
 * progress sends SOFT_BATCH responses (the first two READs and the start of
 * the third); after deregistration the rest of the third is one NAK at the
 * first PSN not sent, and no more data leaves. */
static void read_cut(struct unit *u, struct hostile *h)
{
	enum { L = HOSTILE_READ_LONG, S = HOSTILE_READ_SHORT };
	static struct wire_pkt r[2 * SOFT_BATCH];
	uint32_t psn = h->psn;
	int before = u->failures, n, data = 0;
	bool nak_seen = false;

	for (size_t i = 0; i < h->a.region_len; i++)
		h->a.region[i] = (uint8_t)(i * 3);
	arena_allow(&h->a, va_of(h, 0), h->a.region, h->a.region_len);
	put_read(h, psn, va_of(h, 0), h->mr.rkey, L * PMTU);
	put_read(h, psn + L, va_of(h, 0), h->mr.rkey, S * PMTU);
	put_read(h, psn + L + S, va_of(h, 0), h->mr.rkey, L * PMTU);
	n = one_round(h, r, 2 * SOFT_BATCH);
	CHECK_EQ(u, n, SOFT_BATCH);
	CHECK_EQ(u, r[n - 1].bth.psn, (psn + SOFT_BATCH - 1) & WIRE_PSN_MASK);
	soft_engine_ops.dereg_mr(h->dev, &h->mr);
	for (int round = 0; round < 4; round++) {
		n = one_round(h, r, 2 * SOFT_BATCH);
		for (int i = 0; i < n; i++) {
			if (r[i].bth.opcode == OP_RC_ACK &&
			    r[i].aeth.syndrome == nak(WIRE_NAK_REMOTE_ACCESS_ERR) &&
			    r[i].bth.psn == ((psn + SOFT_BATCH) & WIRE_PSN_MASK))
				nak_seen = true;
			else
				data++;
		}
	}
	CHECK(u, nak_seen);
	CHECK_EQ(u, data, 0);
	CHECK_EQ(u, h->qp->state, SOFT_QP_ERROR);
	CHECK(u, arena_intact(&h->a));
	h->psn = psn + 2 * L + S;
	tally(u, h, before, "READ: region deregistered in the middle of the responses");
	renew(u, h);
}

/* This side's WRITE of 16 packets went out; the region goes; the peer
 * NAKs a sequence error at the fifth packet: the resend would read the
 * region, so the WRITE completes with a local protection error and
 * nothing is sent. */
static void resend_cut(struct unit *u, struct hostile *h)
{
	struct xport_wc wc[4];
	uint32_t psn;
	int before = u->failures;

	psn = post(u, h, XPORT_WR_RDMA_WRITE, 0, 16 * PMTU, 11);
	soft_engine_ops.dereg_mr(h->dev, &h->mr);
	put_ack(h, OP_RC_ACK, psn + 4, nak(WIRE_NAK_PSN_SEQ_ERR), NULL, 0);
	CHECK(u, silent(h));
	CHECK_EQ(u, completions(h, wc, 4), 1);
	CHECK_EQ(u, wc[0].wr_id, 11);
	CHECK_EQ(u, wc[0].status, XPORT_WC_LOC_PROT_ERR);
	CHECK_EQ(u, h->qp->state, SOFT_QP_ERROR);
	tally(u, h, before, "WRITE resend from a deregistered region");
	renew(u, h);
}

/* A READ and an atomic whose local buffers go before the answers come:
 * nothing lands; local protection errors. */
static void landing_cut(struct unit *u, struct hostile *h)
{
	uint8_t junk[PMTU];
	uint64_t orig = 0x1122334455667788ull;
	struct xport_wc wc[4];
	uint32_t psn;
	int before = u->failures;

	memset(junk, 0xE7, sizeof(junk));
	psn = post(u, h, XPORT_WR_RDMA_READ, 4096, 2 * PMTU, 21);
	soft_engine_ops.dereg_mr(h->dev, &h->mr);
	put_ack(h, OP_RC_READ_RESPONSE_FIRST, psn, ACK_SYN, junk, PMTU);
	put_ack(h, OP_RC_READ_RESPONSE_LAST, psn + 1, ACK_SYN, junk, PMTU);
	CHECK(u, silent(h));
	CHECK_EQ(u, completions(h, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_LOC_PROT_ERR);
	CHECK(u, arena_intact(&h->a));
	tally(u, h, before, "READ response into a deregistered region");
	renew(u, h);

	before = u->failures;
	psn = post(u, h, XPORT_WR_ATOMIC_FETCH_AND_ADD, 8192, 8, 22);
	soft_engine_ops.dereg_mr(h->dev, &h->mr);
	{
		struct wire_pkt p;

		bth(h, &p, OP_RC_ATOMIC_ACK, psn);
		p.bth.ackreq = false;
		p.aeth.syndrome = ACK_SYN;
		p.atomicacketh.orig = orig;
		inject(h, &p, NULL, 0, WIRE_NOT_ECT);
	}
	CHECK(u, silent(h));
	CHECK_EQ(u, completions(h, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_LOC_PROT_ERR);
	CHECK(u, arena_intact(&h->a));
	tally(u, h, before, "atomic result into a deregistered region");
	renew(u, h);
}

/* A SEND into a RECV whose region went after the post: no byte lands; the
 * receive fails with a local protection error, the peer gets a NAK. */
static void send_cut(struct unit *u, struct hostile *h)
{
	struct xport_recv_wr rr = { 41, { va_of(h, 4096), 2048, h->mr.lkey } };
	uint8_t data[512];
	struct xport_wc wc[4];
	char err[XPORT_ERR_LEN];
	int before = u->failures;

	memset(data, 0x5E, sizeof(data));
	CHECK_EQ(u, soft_engine_ops.post_recv(h->qp, &rr, err), 0);
	soft_engine_ops.dereg_mr(h->dev, &h->mr);
	put_data(h, OP_RC_SEND_ONLY, h->psn, 0, 0, 0, data, sizeof(data));
	CHECK(u, one_ack(h, nak(WIRE_NAK_REMOTE_OP_ERR), h->psn));
	CHECK_EQ(u, completions(h, wc, 4), 1);
	CHECK_EQ(u, wc[0].wr_id, 41);
	CHECK_EQ(u, wc[0].status, XPORT_WC_LOC_PROT_ERR);
	CHECK(u, arena_intact(&h->a));
	h->psn++;
	tally(u, h, before, "SEND into a deregistered receive buffer");
	renew(u, h);
}

/* WRITE A is out and not ACKed; WRITE B's region goes before it is sent:
 * B fails with a local protection error and A is flushed, never taken for
 * done (nothing acknowledged it). */
static void earlier_not_acked(struct unit *u, struct hostile *h)
{
	struct xport_send_wr b = { .wr_id = 32, .opcode = XPORT_WR_RDMA_WRITE, .signaled = true,
				   .sge = { va_of(h, 1024), 100, h->ro_mr.lkey },
				   .remote_addr = 0x10000, .rkey = 0x77 };
	struct xport_wc wc[4];
	char err[XPORT_ERR_LEN];
	int before = u->failures;

	post(u, h, XPORT_WR_RDMA_WRITE, 0, 100, 31);
	CHECK_EQ(u, soft_engine_ops.post_send(h->qp, &b, NULL, err), 0);
	soft_engine_ops.dereg_mr(h->dev, &h->ro_mr);
	CHECK(u, silent(h));
	CHECK_EQ(u, completions(h, wc, 4), 2);
	CHECK_EQ(u, wc[0].wr_id, 31);
	CHECK_EQ(u, wc[0].status, XPORT_WC_WR_FLUSH_ERR);
	CHECK_EQ(u, wc[1].wr_id, 32);
	CHECK_EQ(u, wc[1].status, XPORT_WC_LOC_PROT_ERR);
	tally(u, h, before, "a local error acknowledges nothing");
	renew(u, h);
}

static void test_dereg_fences(struct unit *u)
{
	struct hostile h;

	CHECK_EQ(u, hostile_open(&h), 0);
	write_cut(u, &h);
	read_cut(u, &h);
	resend_cut(u, &h);
	landing_cut(u, &h);
	send_cut(u, &h);
	earlier_not_acked(u, &h);
	hostile_finish(u, &h, "deregistration");
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_dereg_fences);
	return unit_done(&u);
}
