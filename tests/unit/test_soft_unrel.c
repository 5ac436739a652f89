// SPDX-License-Identifier: MIT
/*
 * The soft engine's UC and UD services over the deterministic in-process
 * link: nothing is resent, so what the tests check is what the IBTA says a
 * receiver does with what arrives.  UC: a message with a PSN gap is not
 * delivered (what it placed stays placed, a SEND's receive takes the next
 * message), the next one is.  UD: one packet per message, the GRH area as
 * verbs fills it on RoCEv2, the Q_Key checked, a datagram over the MTU
 * sent nowhere and completed.  Both: work requests the service cannot
 * carry are refused at post.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "soft.h"
#include "unit.h"

#include "sim_pair.h"

#define RECV_OFF (4u << 20)	/* receive buffers: the upper half of each side's buffer */

/* A pair of QPs of the service type; *a sends to *b. */
static void open_type(struct pair *pr, enum xport_qp_type type, uint64_t seed, struct side **a,
		      struct side **b)
{
	struct xport_qp_attr attr = pair_attr();

	attr.type = type;
	pair_open_attr(pr, 8 << 20, seed, &attr, 0xFFFFF0);	/* PSNs wrap */
	*a = &pr->s[0];
	*b = &pr->s[1];
}

static void post_recv_at(struct unit *u, struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct xport_recv_wr rr = { id, { (uint64_t)(uintptr_t)s->buf + off, len, s->mr.lkey } };
	char err[XPORT_ERR_LEN];

	CHECK_EQ(u, soft_engine_ops.post_recv(s->qp, &rr, err), 0);
}

static void post(struct unit *u, struct side *s, const struct xport_send_wr *wr)
{
	char err[XPORT_ERR_LEN];

	CHECK_EQ(u, soft_engine_ops.post_send(s->qp, wr, NULL, err), 0);
}

/* Runs both sides until side i has nothing more to say for a while. */
static int drain(struct pair *pr, int i, struct xport_wc *out, int max)
{
	int got = 0;

	for (int round = 0; round < 200 && got < max; round++) {
		int n = soft_engine_ops.poll_cq(pr->s[i].cq, out + got, max - got);

		got += n > 0 ? n : 0;
		soft_engine_ops.poll_cq(pr->s[!i].cq, NULL, 0);
		soft_progress(pr->s[!i].dev);
	}
	return got;
}

/* UC, clean: SEND and WRITE with immediate of every size arrive whole. */
static void test_uc_clean(struct unit *u)
{
	static const uint32_t sizes[] = { 0, 1, 1024, 1025, 4096, 65536, 1 << 20 };
	struct pair pr;
	struct side *a, *b;
	struct xport_wc wc[4];

	open_type(&pr, XPORT_QPT_UC, 11, &a, &b);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t len = sizes[k];
		struct xport_send_wr wr;

		fill(a->buf, len, 100 + k);
		memset(b->buf, 0, len);
		post_recv_at(u, b, 1, RECV_OFF, RECV_OFF);
		wr = wr_of(a, b, XPORT_WR_RDMA_WRITE_WITH_IMM, 0, len);
		post(u, a, &wr);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
		CHECK_EQ(u, wc[0].opcode, XPORT_WC_RECV_RDMA_WITH_IMM);
		CHECK(u, memcmp(a->buf, b->buf, len) == 0);

		fill(a->buf, len, 200 + k);
		post_recv_at(u, b, 2, RECV_OFF, RECV_OFF);
		wr = wr_of(a, b, XPORT_WR_SEND, 0, len);
		post(u, a, &wr);
		CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
		CHECK_EQ(u, wc[0].byte_len, len);
		CHECK(u, memcmp(a->buf, b->buf + RECV_OFF, len) == 0);
	}
	/* No ACKs on UC: the receiver sent nothing back. */
	CHECK_EQ(u, pr.s[1].qp->ctr.tx_packets, 0);
	pair_close(&pr);
}

/*
 * UC with a gap: the third packet of a 4-packet SEND is lost.  That message
 * is given up, its receive is used by the next message, which arrives
 * whole; a WRITE that loses its third packet keeps the two placed before.
 */
static void test_uc_gap(struct unit *u)
{
	struct pair pr;
	struct side *a, *b;
	struct xport_send_wr wr;
	struct xport_wc wc[8];
	int n;

	open_type(&pr, XPORT_QPT_UC, 12, &a, &b);
	fill(a->buf, 8192, 7);
	post_recv_at(u, b, 41, RECV_OFF, 8192);
	post_recv_at(u, b, 42, RECV_OFF + 8192, 8192);
	pr.wire.drop_after = 3;
	wr = wr_of(a, b, XPORT_WR_SEND, 0, 4096);
	post(u, a, &wr);
	wr = wr_of(a, b, XPORT_WR_SEND, 4096, 3000);
	post(u, a, &wr);
	n = drain(&pr, 0, wc, 8);
	CHECK_EQ(u, n, 2);	/* both sends complete at the sender */
	n = drain(&pr, 1, wc, 8);
	CHECK_EQ(u, n, 1);
	CHECK_EQ(u, wc[0].wr_id, 41);	/* the first receive took the second message */
	CHECK_EQ(u, wc[0].byte_len, 3000);
	CHECK(u, memcmp(b->buf + RECV_OFF, a->buf + 4096, 3000) == 0);
	CHECK_EQ(u, b->qp->ctr.uc_msgs_cut, 1);
	CHECK_EQ(u, b->qp->ctr.out_of_sequence, 1);
	CHECK_EQ(u, b->qp->ctr.drops, 1);		/* the LAST after the gap */
	CHECK_EQ(u, pr.wire.dropped, 1);

	/* WRITE: packets 1 and 2 of 4 stay placed, 4 is dropped. */
	memset(b->buf, 0, 4096);
	pr.wire.drop_after = 3;
	wr = wr_of(a, b, XPORT_WR_RDMA_WRITE, 0, 4096);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 0, wc, 8), 1);
	CHECK(u, memcmp(b->buf, a->buf, 2048) == 0);
	for (int i = 2048; i < 4096; i++)
		if (b->buf[i]) {
			CHECK(u, !"bytes after the gap were placed");
			break;
		}
	CHECK_EQ(u, b->qp->ctr.uc_msgs_cut, 2);
	/* A WRITE with immediate after it is whole and completes. */
	wr = wr_of(a, b, XPORT_WR_RDMA_WRITE_WITH_IMM, 0, 4096);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 8), 1);
	CHECK_EQ(u, wc[0].opcode, XPORT_WC_RECV_RDMA_WITH_IMM);
	CHECK(u, memcmp(b->buf, a->buf, 4096) == 0);
	pair_close(&pr);
}

/*
 * UC under loss: exactly the messages that lost a packet on the wire are
 * missing (each received whole and right, the receives they would have
 * used taken by later ones); with duplication and reordering too, every
 * message that arrives is still whole and right.
 */
static void uc_lossy(struct unit *u, int drop, int dup, int reorder, uint64_t seed)
{
	enum { MSGS = 300, PKTS = 3 };
	struct pair pr;
	struct side *a, *b;
	struct xport_wc wc[64];
	uint32_t dropped[MSGS * PKTS];
	bool lost[MSGS] = { false }, seen[MSGS] = { false };
	int delivered = 0, missing = 0;
	uint32_t psn0;

	open_type(&pr, XPORT_QPT_UC, seed, &a, &b);
	psn0 = a->qp->next_psn;
	pr.wire.drop_pct = drop;
	pr.wire.dup_pct = dup;
	pr.wire.reorder_pct = reorder;
	pr.wire.drop_log = dropped;
	pr.wire.drop_log_cap = MSGS * PKTS;
	for (int m = 0; m < MSGS; m++) {
		struct xport_send_wr wr = wr_of(a, b, XPORT_WR_SEND, (size_t)m * 4096, PKTS * 1024);

		wr.wr_id = (uint64_t)m;
		fill(a->buf + (size_t)m * 4096, PKTS * 1024, 1000 + (uint64_t)m);
		/* The message number in its first bytes: what arrived is known. */
		memcpy(a->buf + (size_t)m * 4096, &m, sizeof(m));
		post_recv_at(u, b, (uint64_t)m, RECV_OFF + (uint32_t)m * 4096, 4096);
		post(u, a, &wr);
		if (m % 32 == 31)
			drain(&pr, 0, wc, 64);
	}
	for (int n; (n = drain(&pr, 1, wc, 64)) > 0;) {
		for (int i = 0; i < n; i++) {
			const uint8_t *got = b->buf + RECV_OFF + wc[i].wr_id * 4096;
			int m;

			CHECK_EQ(u, wc[i].status, XPORT_WC_SUCCESS);
			CHECK_EQ(u, wc[i].byte_len, PKTS * 1024);
			memcpy(&m, got, sizeof(m));
			CHECK(u, m >= 0 && m < MSGS && !seen[m] &&
				 memcmp(got, a->buf + (size_t)m * 4096, PKTS * 1024) == 0);
			if (m >= 0 && m < MSGS)
				seen[m] = true;
			delivered++;
		}
	}
	for (int i = 0; i < pr.wire.drop_log_len; i++)
		lost[((dropped[i] - psn0) & WIRE_PSN_MASK) / PKTS] = true;
	for (int m = 0; m < MSGS; m++)
		missing += lost[m];
	printf("#   UC, %d%% loss %d%% dup %d%% reorder: %d of %d messages delivered, %d lost a "
	       "packet on the wire (%llu dropped), %llu cut, %llu out of sequence\n", drop, dup,
	       reorder, delivered, MSGS, missing, (unsigned long long)pr.wire.dropped,
	       (unsigned long long)b->qp->ctr.uc_msgs_cut,
	       (unsigned long long)b->qp->ctr.out_of_sequence);
	CHECK(u, pr.wire.dropped > 0 || !drop);
	if (!dup && !reorder) {
		for (int m = 0; m < MSGS; m++)
			if (seen[m] == lost[m]) {
				CHECK(u, !"a message was delivered though it lost a packet, or lost though whole");
				break;
			}
		CHECK_EQ(u, delivered, MSGS - missing);
	} else {
		CHECK(u, delivered > 0 && delivered < MSGS);
	}
	pair_close(&pr);
}

static void test_uc_loss(struct unit *u) { uc_lossy(u, 5, 0, 0, 13); }
static void test_uc_impaired(struct unit *u) { uc_lossy(u, 3, 3, 3, 17); }

/* UD: the GRH area as verbs fills it on RoCEv2 with IPv4, the Q_Key. */
static void test_ud_grh(struct unit *u)
{
	struct pair pr;
	struct side *a, *b;
	struct xport_send_wr wr;
	struct xport_wc wc[4];
	const uint8_t *grh, *ip;
	static const uint8_t zero[20];
	uint64_t icrc_errors;

	open_type(&pr, XPORT_QPT_UD, 14, &a, &b);
	pr.wire.next_id = 0x4321;	/* the receiver must solve the ID from the ICRC */
	fill(a->buf, 1000, 3);
	post_recv_at(u, b, 5, RECV_OFF, 1024 + XPORT_GRH_LEN);
	wr = wr_of(a, b, XPORT_WR_SEND_WITH_IMM, 0, 1000);
	post(u, a, &wr);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, run_until(&pr, 1, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, wc[0].byte_len, XPORT_GRH_LEN + 1000);
	CHECK(u, wc[0].grh);
	CHECK(u, wc[0].has_imm && wc[0].imm == 0xC0FFEE);
	CHECK_EQ(u, wc[0].src_qp, a->qp->qpn);
	grh = b->buf + RECV_OFF;
	ip = grh + 20;
	CHECK(u, memcmp(grh, zero, 20) == 0);
	CHECK_EQ(u, ip[0], 0x45);
	/* IP, UDP, BTH, DETH, ImmDt, the data, ICRC */
	CHECK_EQ(u, wire_get16(ip + 2), 20 + 8 + 12 + 8 + 4 + 1000 + 4);
	CHECK_EQ(u, wire_get16(ip + 4), 0x4321);
	CHECK_EQ(u, wire_get16(ip + 6), 0x4000);
	CHECK_EQ(u, ip[8], 64);
	CHECK_EQ(u, ip[9], 17);
	CHECK_EQ(u, wire_ipv4_csum(ip, 20), 0);		/* a valid checksum sums to 0 */
	CHECK(u, memcmp(ip + 12, a->dev->link->local.ip + 12, 4) == 0);
	CHECK(u, memcmp(ip + 16, b->dev->link->local.ip + 12, 4) == 0);
	CHECK(u, memcmp(grh + XPORT_GRH_LEN, a->buf, 1000) == 0);

	/* Another Q_Key: counted and dropped, no completion. */
	b->qp->attr.qkey = 0x22222222;
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 0);
	CHECK_EQ(u, b->qp->ctr.qkey_drops, 1);
	b->qp->attr.qkey = XPORT_DEFAULT_QKEY;

	/* No receive posted: counted and dropped. */
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 0);
	CHECK_EQ(u, b->qp->ctr.no_recv_drops, 1);
	/* A receive posted now takes the next datagram. */
	post_recv_at(u, b, 6, RECV_OFF, 1024 + XPORT_GRH_LEN);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);

	/* A corrupted datagram whose ICRC holds for an IPv4 ID far from the
	 * sender's counter (about 1 in 2^16 corruptions do): refused as an
	 * ICRC error, as on RC; the next genuine one is taken. */
	post_recv_at(u, b, 7, RECV_OFF, 1024 + XPORT_GRH_LEN);
	icrc_errors = b->dev->ctr.icrc_errors;
	pr.wire.forge_id = (uint16_t)(pr.wire.next_id + 30000);
	pr.wire.forge_copies = 1;
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 0);
	CHECK_EQ(u, b->dev->ctr.icrc_errors, icrc_errors + 1);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	pair_close(&pr);
}

/* UD over the MTU: no packet, a successful completion (C10-93.1.1). */
static void test_ud_over_mtu(struct unit *u)
{
	struct pair pr;
	struct side *a, *b;
	struct xport_send_wr wr;
	struct xport_wc wc[4];
	uint64_t sent, drops;

	open_type(&pr, XPORT_QPT_UD, 15, &a, &b);
	post_recv_at(u, b, 1, RECV_OFF, 4096);
	sent = a->qp->ctr.tx_packets;
	wr = wr_of(a, b, XPORT_WR_SEND, 0, 1025);
	post(u, a, &wr);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, a->qp->ctr.tx_packets, sent);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 0);
	/* A datagram too long for the receive at the head (GRH and data) is
	 * dropped and counted, no completion, as rxe does (class D); the
	 * receive stays for the next datagram that fits, and the QP goes on. */
	post_recv_at(u, b, 2, RECV_OFF, 100);
	wr = wr_of(a, b, XPORT_WR_SEND, 0, 100);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 1);
	CHECK_EQ(u, wc[0].wr_id, 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	drops = b->qp->ctr.drops;
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 0);
	CHECK_EQ(u, b->qp->ctr.drops, drops + 1);
	CHECK_EQ(u, b->qp->state, SOFT_QP_RTS);
	wr = wr_of(a, b, XPORT_WR_SEND, 0, 100 - XPORT_GRH_LEN);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 1);
	CHECK_EQ(u, wc[0].wr_id, 2);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK_EQ(u, wc[0].byte_len, 100);
	pair_close(&pr);
}

/* A UC WRITE outside the region (or under a wrong rkey) touches nothing and
 * is dropped without an answer; the QP goes on and the next one lands. */
static void test_uc_bad_rkey(struct unit *u)
{
	struct pair pr;
	struct side *a, *b;
	struct xport_send_wr wr;
	struct xport_wc wc[4];
	uint8_t *shadow;

	open_type(&pr, XPORT_QPT_UC, 18, &a, &b);
	fill(a->buf, 8192, 9);
	shadow = malloc(b->len);
	memcpy(shadow, b->buf, b->len);
	wr = wr_of(a, b, XPORT_WR_RDMA_WRITE, 0, 4096);
	wr.rkey ^= 1u << SOFT_INDEX_BITS;		/* the right slot, a wrong key */
	post(u, a, &wr);
	wr = wr_of(a, b, XPORT_WR_RDMA_WRITE, 0, 4096);
	wr.remote_addr = (uint64_t)(uintptr_t)b->buf + b->len - 1024;	/* runs off the end */
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 0, wc, 4), 2);
	drain(&pr, 1, wc, 4);
	CHECK(u, memcmp(shadow, b->buf, b->len) == 0);
	CHECK_EQ(u, b->qp->state, SOFT_QP_RTS);
	CHECK_EQ(u, b->qp->ctr.tx_packets, 0);		/* no NAK: UC has none */
	wr = wr_of(a, b, XPORT_WR_RDMA_WRITE_WITH_IMM, 0, 4096);
	post_recv_at(u, b, 3, RECV_OFF, 64);
	post(u, a, &wr);
	CHECK_EQ(u, drain(&pr, 1, wc, 4), 1);
	CHECK(u, memcmp(a->buf, b->buf, 4096) == 0);
	free(shadow);
	pair_close(&pr);
}

/* What each service cannot carry is refused at post, in one sentence. */
static void test_refused_ops(struct unit *u)
{
	static const struct {
		enum xport_qp_type type;
		enum xport_wr_opcode op;
	} refused[] = {
		{ XPORT_QPT_UC, XPORT_WR_RDMA_READ }, { XPORT_QPT_UC, XPORT_WR_ATOMIC_FETCH_AND_ADD },
		{ XPORT_QPT_UC, XPORT_WR_ATOMIC_CMP_AND_SWP }, { XPORT_QPT_UD, XPORT_WR_RDMA_WRITE },
		{ XPORT_QPT_UD, XPORT_WR_RDMA_WRITE_WITH_IMM }, { XPORT_QPT_UD, XPORT_WR_RDMA_READ },
		{ XPORT_QPT_UD, XPORT_WR_ATOMIC_FETCH_AND_ADD },
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct pair pr;
		struct side *a, *b;
		struct xport_send_wr wr;
		char err[XPORT_ERR_LEN] = "";

		open_type(&pr, refused[i].type, 16, &a, &b);
		wr = wr_of(a, b, refused[i].op, 0, 8);
		CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), -1);
		CHECK(u, strstr(err, refused[i].type == XPORT_QPT_UD ? "UD QP posts SEND" :
						       "UC QP posts SEND and RDMA WRITE") != NULL);
		pair_close(&pr);
	}
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_uc_clean);
	RUN(&u, test_uc_gap);
	RUN(&u, test_uc_loss);
	RUN(&u, test_uc_impaired);
	RUN(&u, test_ud_grh);
	RUN(&u, test_ud_over_mtu);
	RUN(&u, test_uc_bad_rkey);
	RUN(&u, test_refused_ops);
	return unit_done(&u);
}
