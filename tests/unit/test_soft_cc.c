// SPDX-License-Identifier: MIT
/*
 * The soft engine beyond delivery, over the in-process link of sim_pair.h:
 * DCQCN's arithmetic and parameters, ECN marks answered by CNPs, IPv4 IDs
 * the ICRC covers, identifiers no peer can guess, responses in PSN order,
 * and ring positions that never alias.
 */
#include "icrc.h"
#include "sim_pair.h"

/* The reaction point's arithmetic: a CNP cuts by alpha/2, recovery is staged. */
static void test_dcqcn_math(struct unit *u)
{
	struct soft_dcqcn c;
	uint64_t t = 1000000;

	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ 0 });
	CHECK(u, !c.limited);
	CHECK(u, soft_dcqcn_may_send(&c, t, 1 << 20));	/* unpaced before a CNP */
	soft_dcqcn_on_cnp(&c, t);
	CHECK(u, c.limited);
	CHECK(u, c.rc_gbps > 49.9 && c.rc_gbps < 50.1);	/* alpha starts at 1 */
	soft_dcqcn_on_cnp(&c, t);
	CHECK(u, c.rc_gbps > 24.9 && c.rc_gbps < 25.1);
	/* 55 us later: one timer stage of fast recovery, halfway to the target. */
	soft_dcqcn_tick(&c, t + 55000);
	CHECK(u, c.rc_gbps > 37.4 && c.rc_gbps < 37.6);
	CHECK(u, c.alpha < 1.0);
	/* The pacer lets about rate x time through. */
	{
		uint64_t sent = 0, now = t + 55000;

		c.tokens = 0;
		c.last_token_ns = now;
		for (int i = 0; i < 1000; i++) {
			now += 1000;	/* 1 ms in 1 us steps */
			while (soft_dcqcn_may_send(&c, now, 1000))
				sent += 1000;
		}
		CHECK(u, sent * 8 / 1e6 > c.rc_gbps * 0.9 && sent * 8 / 1e6 < c.rc_gbps * 1.1 + 1);
	}
	/* Without CNPs the rate climbs back to line rate and pacing stops. */
	soft_dcqcn_tick(&c, t + 1000000000ull);
	CHECK(u, !c.limited);
	CHECK(u, c.rc_gbps > 99.8);
}

/* The --dcqcn* parameters: each one changes what it names, and off means
 * CNPs change nothing. */
static void test_dcqcn_params(struct unit *u)
{
	struct soft_dcqcn c;
	uint64_t t = 1000000;

	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ .off = true });
	soft_dcqcn_on_cnp(&c, t);
	CHECK(u, !c.limited && c.rc_gbps == 100 && c.cuts == 0);
	CHECK(u, soft_dcqcn_may_send(&c, t, 1 << 20));

	/* g = 1/2: alpha falls fast without CNPs (one K period halves it). */
	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ .g = 0.5, .k_us = 10 });
	soft_dcqcn_on_cnp(&c, t);
	CHECK(u, c.alpha == 1.0);
	soft_dcqcn_tick(&c, t + 10000);
	CHECK(u, c.alpha > 0.49 && c.alpha < 0.51);

	/* The floor holds: many CNPs never push the rate below min. */
	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ .min_mbps = 500 });
	for (int i = 0; i < 50; i++)
		soft_dcqcn_on_cnp(&c, t);
	CHECK(u, c.rc_gbps > 0.499 && c.rc_gbps < 0.501);

	/* R_AI = 1 Gb/s and a 100 us timer: with the default F = 5 the first
	 * stage is fast recovery (target unchanged); with F = 1 it is already
	 * additive increase (target + 1 Gb/s). */
	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ .rai_mbps = 1000, .t_us = 100 });
	soft_dcqcn_on_cnp(&c, t);		/* rc 50, rt 100 */
	soft_dcqcn_on_cnp(&c, t);		/* rc 25, rt 50 */
	soft_dcqcn_tick(&c, t + 99999);		/* not yet a stage */
	CHECK_EQ(u, c.timer_stage, 0);
	soft_dcqcn_tick(&c, t + 100000);
	CHECK(u, c.rt_gbps > 49.9 && c.rt_gbps < 50.1);
	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ .f = 1, .rai_mbps = 1000, .t_us = 100 });
	soft_dcqcn_on_cnp(&c, t);
	soft_dcqcn_on_cnp(&c, t);
	soft_dcqcn_tick(&c, t + 100000);
	CHECK(u, c.rt_gbps > 50.9 && c.rt_gbps < 51.1);

	/* A 1 MiB byte counter: 1 MiB sent is one byte stage. */
	soft_dcqcn_init(&c, 100, &(struct xport_dcqcn){ .b_bytes = 1 << 20 });
	soft_dcqcn_on_cnp(&c, t);
	soft_dcqcn_sent(&c, (1 << 20) - 1);
	CHECK_EQ(u, c.byte_stage, 0);
	soft_dcqcn_sent(&c, 1);
	CHECK_EQ(u, c.byte_stage, 1);
}

/* CE marks on the path: the receiver sends CNPs (at most one per 50 us),
 * the sender cuts its rate, and the data still arrives intact. */
static void test_ecn_cnp(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[1];
	char err[XPORT_ERR_LEN];
	struct xport_counters tx, rx;
	struct xport_send_wr wr;
	uint64_t t0, elapsed;

	pair_open(&pr, 2 << 20, 71, 0, 0, 0, 77);
	pr.wire.ce_pct = 20;
	fill(pr.s[0].buf, 2 << 20, 5);
	t0 = soft_now_ns();
	for (int i = 0; i < 4; i++) {
		wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 2 << 20);
		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
		CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
		CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	}
	elapsed = soft_now_ns() - t0;
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 2 << 20) == 0);
	soft_engine_ops.qp_counters(pr.s[0].qp, &tx);
	soft_engine_ops.qp_counters(pr.s[1].qp, &rx);
	printf("#   %llu CE seen, %llu CNPs sent, %llu received, %llu rate cuts in %.1f ms; "
	       "rate now %.2f Gb/s\n", (unsigned long long)rx.ce_rx,
	       (unsigned long long)rx.cnps_tx, (unsigned long long)tx.cnps_rx,
	       (unsigned long long)pr.s[0].qp->cc.cuts, elapsed / 1e6, pr.s[0].qp->cc.rc_gbps);
	CHECK(u, rx.ce_rx > 0);
	CHECK(u, rx.cnps_tx > 0);
	CHECK(u, rx.cnps_tx <= elapsed / SOFT_CNP_GAP_NS + 1);
	CHECK_EQ(u, tx.cnps_rx, rx.cnps_tx);
	CHECK_EQ(u, pr.s[0].qp->cc.cuts, tx.cnps_rx);
	CHECK(u, pr.s[0].qp->cc.limited);
	pair_close(&pr);
}

/* Packets sealed with an IPv4 ID the receiver cannot see (rxe counts its
 * IDs up): the receiver solves the ID from the ICRC and accepts them. */
static void test_ip_id_solved(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[1];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr;
	struct xport_counters c;

	pair_open(&pr, 65536, 81, 0, 0, 0, 3);
	pr.wire.next_id = 0x822e;
	fill(pr.s[0].buf, 65536, 8);
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 65536);
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 65536) == 0);
	soft_engine_ops.qp_counters(pr.s[0].qp, &c);
	CHECK_EQ(u, c.retransmits, 0);
	CHECK_EQ(u, pr.s[1].dev->ctr.icrc_errors, 0);
	/* A corrupted byte is still refused, whatever the ID: counted, dropped,
	 * and the data arrives intact through a retransmission. */
	pr.wire.corrupt_next = true;
	fill(pr.s[0].buf, 65536, 9);
	CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr, NULL, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 65536) == 0);
	CHECK_EQ(u, pr.s[1].dev->ctr.icrc_errors, 1);
	pair_close(&pr);
}

/* One WRITE of 64 KiB from side 0 to side 1 with fill pattern seed: done,
 * every byte there. */
static void write_through(struct unit *u, struct pair *pr, int seed)
{
	struct xport_wc wc[1];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr = wr_of(&pr->s[0], &pr->s[1], XPORT_WR_RDMA_WRITE, 0, 65536);

	fill(pr->s[0].buf, 65536, seed);
	CHECK_EQ(u, soft_engine_ops.post_send(pr->s[0].qp, &wr, NULL, err), 0);
	CHECK_EQ(u, run_until(pr, 0, 1, wc), 1);
	CHECK_EQ(u, wc[0].status, XPORT_WC_SUCCESS);
	CHECK(u, memcmp(pr->s[0].buf, pr->s[1].buf, 65536) == 0);
}

/* A corruption whose ICRC happens to hold for some other IPv4 ID (one in
 * 2^16 do) is refused when that ID is nowhere near what the peer has been
 * sending, twice in a row too; a peer whose IDs really jumped is followed
 * from its second packet on. */
static void test_ip_id_implausible(struct unit *u)
{
	static const struct {
		int forge, copies, jump;	/* ID offsets from the peer's next */
		uint64_t icrc_errors;		/* at the end of the step */
	} steps[] = {
		{ 0, 0, 0, 0 },			/* IDs counting up: all taken */
		{ 30000, 1, 0, 1 },		/* a corruption solving far ahead */
		{ -20000, 2, 0, 3 },		/* far behind, delivered twice */
		{ 0, 0, 25000, 4 },		/* the peer jumps: its first refused, */
		{ 0, 0, 0, 4 },			/* then followed */
	};
	struct pair pr;

	pair_open(&pr, 65536, 83, 0, 0, 0, 3);
	pr.wire.next_id = 0x822e;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		pr.wire.next_id = (uint16_t)(pr.wire.next_id + steps[i].jump);
		pr.wire.forge_id = steps[i].forge ? (uint16_t)(pr.wire.next_id + steps[i].forge) : 0;
		pr.wire.forge_copies = steps[i].copies;
		write_through(u, &pr, 10 + (int)i);
		CHECK_EQ(u, pr.s[1].dev->ctr.icrc_errors, steps[i].icrc_errors);
	}
	pair_close(&pr);
}

/* One packet from 198.18.0.2 sealed with IPv4 ID id, as the receiver of
 * d gets it (no ID to see): whether its ICRC check takes it for QP qp (the
 * host's tracker is d's). */
static bool take_id(struct soft_dev *d, struct soft_id_track *qp, uint16_t id)
{
	static const uint8_t src[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 2 };
	static const uint8_t dst[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 1 };
	struct soft_pkt pk;

	memset(&pk, 0, sizeof(pk));
	memcpy(pk.src.ip, src, 16);
	memcpy(pk.dst.ip, dst, 16);
	pk.src.port = 49152;
	pk.dst.port = 4791;
	pk.len = 200;
	for (int i = 0; i < 196; i++)
		pk.buf[i] = (uint8_t)(i * 7 + id);
	soft_pkt_seal(&pk, id);
	pk.ip_id = 0;
	return soft_rx_icrc_ok(d, qp, &pk);
}

/* The engine's one-pass ICRC (pseudo-header in the packet's room) against
 * the reference icrc_rocev2() that capture uses, for IPv4 with several IDs
 * and ToS values and for IPv6, over lengths of every remainder mod 16; the
 * packet's bytes are as they were afterwards. */
static void test_one_pass_icrc(struct unit *u)
{
	static const uint8_t v4a[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 2 };
	static const uint8_t v4b[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 7, 1 };
	static const uint8_t v6a[16] = { 0xfd, 0, [15] = 2 };
	static const uint8_t v6b[16] = { 0xfd, 0, [14] = 0x12, [15] = 1 };
	static struct soft_pkt pk;
	uint8_t before[SOFT_PKT_MAX];

	for (int v6 = 0; v6 < 2; v6++)
		for (size_t len = WIRE_BTH_LEN + WIRE_ICRC_LEN; len < 1200; len += 37) {
			uint16_t id = (uint16_t)(len * 251);
			uint8_t ip[WIRE_IPV6_LEN] = { 0 }, udp[WIRE_UDP_LEN];
			size_t hlen = v6 ? WIRE_IPV6_LEN : WIRE_IPV4_LEN;

			memset(&pk, 0, sizeof(pk));
			pk.src.v6 = pk.dst.v6 = v6;
			memcpy(pk.src.ip, v6 ? v6a : v4a, 16);
			memcpy(pk.dst.ip, v6 ? v6b : v4b, 16);
			pk.src.port = (uint16_t)(49152 + len);
			pk.dst.port = 4791;
			pk.len = len;
			for (size_t i = 0; i < len; i++)
				pk.buf[i] = (uint8_t)(i * 13 + len);
			memcpy(before, pk.buf, len);
			/* The header as it travels: TTL, ToS and checksums set,
			 * all of which the ICRC masks. */
			if (v6) {
				ip[0] = 0x6A;
				ip[1] = 0xB0;
				ip[3] = 0x42;
				wire_put16(ip + 4, (uint16_t)(WIRE_UDP_LEN + len));
				ip[6] = 17;
				ip[7] = 64;
				memcpy(ip + 8, v6a, 16);
				memcpy(ip + 24, v6b, 16);
			} else {
				ip[0] = 0x45;
				ip[1] = 0x6A;
				wire_put16(ip + 2, (uint16_t)(hlen + WIRE_UDP_LEN + len));
				wire_put16(ip + 4, id);
				wire_put16(ip + 6, 0x4000);
				ip[8] = 63;
				ip[9] = 17;
				ip[10] = 0x12;
				memcpy(ip + 12, v4a + 12, 4);
				memcpy(ip + 16, v4b + 12, 4);
			}
			wire_put16(udp, pk.src.port);
			wire_put16(udp + 2, 4791);
			wire_put16(udp + 4, (uint16_t)(WIRE_UDP_LEN + len));
			wire_put16(udp + 6, 0xBEEF);
			CHECK_EQ(u, soft_pkt_icrc(&pk, v6 ? 0 : id),
				 icrc_rocev2(ip, hlen, udp, pk.buf, len - WIRE_ICRC_LEN));
			CHECK(u, memcmp(before, pk.buf, len) == 0);
		}
}

/* pk: hdr bytes of headers (1, 2, ...) and a payload of plen bytes still
 * at `payload` in its region, from 198.18.0.2:49200 to 198.18.7.1:4791
 * (or the same as v4-mapped IPv6 addresses). */
static void deferred_packet(struct soft_pkt *pk, bool v6, uint16_t hdr, const uint8_t *payload,
			    uint32_t plen)
{
	static const uint8_t v4a[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 2 };
	static const uint8_t v4b[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 7, 1 };
	uint32_t pad = (4 - plen % 4) % 4;

	memset(pk, 0, sizeof(*pk));
	pk->src.v6 = pk->dst.v6 = v6;
	memcpy(pk->src.ip, v4a, 16);
	memcpy(pk->dst.ip, v4b, 16);
	pk->src.port = 49200;
	pk->dst.port = 4791;
	for (int i = 0; i < hdr; i++)
		pk->buf[i] = (uint8_t)(i + 1);
	pk->hdr_len = hdr;
	pk->payload = plen ? payload : NULL;
	pk->payload_len = plen;
	pk->len = hdr + plen + pad + WIRE_ICRC_LEN;
	if (!plen)
		memset(pk->buf + hdr, 0, pad);
}

/* A packet whose payload is still in its region, staged right after
 * another as the UDP link lays out a GSO run: the staged bytes are the
 * packet sealed in its own slot, byte for byte (headers, payload, pad and
 * ICRC), and the packet staged before it is as it was. */
static void test_stage_deferred(struct unit *u)
{
	static struct soft_pkt pk, ref;
	static uint8_t region[4096], stage[SOFT_ICRC_ROOM + 2 * SOFT_PKT_MAX];

	for (size_t i = 0; i < sizeof(region); i++)
		region[i] = (uint8_t)(i * 29 + 5);
	for (int v6 = 0; v6 < 2; v6++)
		for (uint32_t plen = 0; plen < 1100; plen += 97) {
			uint16_t id = (uint16_t)(plen + 3);
			uint8_t *prev = stage + SOFT_ICRC_ROOM, *to;
			uint8_t prev_copy[SOFT_PKT_MAX];
			/* First in the buffer, or right after another packet. */
			size_t prev_len = plen % 2 ? 0 : 300, got;

			deferred_packet(&pk, v6, WIRE_BTH_LEN + WIRE_RETH_LEN, region + 17, plen);
			ref = pk;
			soft_pkt_seal(&ref, v6 ? 0 : id);
			for (size_t i = 0; i < prev_len; i++)
				prev[i] = (uint8_t)(0xA0 ^ i);
			memcpy(prev_copy, prev, prev_len);
			to = prev + prev_len;
			got = soft_pkt_stage(&pk, to, v6 ? 0 : id, soft_pkt_pseudo_crc(&pk));
			CHECK_EQ(u, got, ref.len);
			CHECK(u, memcmp(to, ref.buf, ref.len) == 0);
			CHECK(u, memcmp(prev, prev_copy, prev_len) == 0);
			CHECK(u, !plen || pk.payload == region + 17);	/* staging can repeat */
		}
}

/* A GSO run as the UDP link stages it: a WRITE's FIRST (with its RETH),
 * MIDDLEs, a shorter LAST, the pseudo-header's CRC computed once per
 * length along the run and segment k's IPv4 ID folded in: each staged
 * packet is the packet sealed alone with ID k. */
static void test_stage_run_shared_pseudo(struct unit *u)
{
	static struct soft_pkt pk, ref;
	static uint8_t region[64 * 1024], stage[SOFT_GSO_MAX_SEGS * SOFT_PKT_MAX];

	for (size_t i = 0; i < sizeof(region); i++)
		region[i] = (uint8_t)(i * 13 + 1);
	for (int v6 = 0; v6 < 2; v6++) {
		size_t off = 0, prev_len = 0;
		uint32_t pseudo = 0;

		for (uint16_t k = 0; k < SOFT_GSO_MAX_SEGS; k++) {
			uint32_t plen = k == SOFT_GSO_MAX_SEGS - 1 ? 301 : 1024;
			uint16_t hdr = WIRE_BTH_LEN + (k ? 0 : WIRE_RETH_LEN);

			deferred_packet(&pk, v6, hdr, region + (size_t)k * 1024, plen);
			if (pk.len != prev_len)
				pseudo = soft_pkt_pseudo_crc(&pk);
			prev_len = pk.len;
			ref = pk;
			soft_pkt_seal(&ref, v6 ? 0 : k);
			CHECK_EQ(u, soft_pkt_stage(&pk, stage + off, v6 ? 0 : k, pseudo), ref.len);
			CHECK(u, memcmp(stage + off, ref.buf, ref.len) == 0);
			off += ref.len;
		}
	}
}

/* A received packet whose bytes lie outside its slot, as the UDP link
 * leaves them in its receive buffer: the ICRC check reads them there, for
 * the ID the link suggests, for ID 0 and for an ID it must solve, leaves
 * them as they were, and refuses them with one bit flipped.  The
 * pseudo-header state it keeps for the last source and length is not
 * taken for another source port. */
static void test_rx_bytes_elsewhere(struct unit *u)
{
	static struct soft_pkt pk;
	static uint8_t region[256], outside[SOFT_PKT_MAX], copy[SOFT_PKT_MAX];
	struct pair pr;
	struct soft_dev *d;

	for (size_t i = 0; i < sizeof(region); i++)
		region[i] = (uint8_t)(i * 7 + 3);
	pair_open(&pr, 4096, 85, 0, 0, 0, 3);
	d = pr.s[1].dev;
	for (uint16_t id = 0; id < 70; id += 3) {
		deferred_packet(&pk, false, WIRE_BTH_LEN, region, 184);
		pk.src.port = (uint16_t)(49200 + id % 2);
		soft_pkt_seal(&pk, id);
		memcpy(outside, pk.buf, pk.len);
		memcpy(copy, outside, pk.len);
		memset(pk.buf, 0xEE, pk.len);	/* the slot's own bytes are not the packet */
		pk.rx_bytes = outside;
		pk.ip_id = id % 2 ? id : 0;	/* suggested right, or ID 0 and solved */
		CHECK(u, soft_rx_icrc_ok(d, NULL, &pk));
		CHECK_EQ(u, pk.ip_id, id);
		CHECK(u, memcmp(outside, copy, pk.len) == 0);
		outside[100] ^= 0x10;
		CHECK(u, !soft_rx_icrc_ok(d, NULL, &pk));
	}
	pair_close(&pr);
}

/* Whose IDs a solved one must follow: a host counting for all its QPs (rxe:
 * a quiet QP's next ID is far past its last), a NIC counting per QP (two
 * QPs' IDs far apart, interleaved), across 65535 -> 0, and a packet
 * reordered behind its successors; anything else is refused. */
static void test_ip_id_whose(struct unit *u)
{
	struct soft_id_track a = { 0 }, b = { 0 };
	struct pair pr;
	struct soft_dev *d;
	bool all = true;

	pair_open(&pr, 4096, 85, 0, 0, 0, 3);
	d = pr.s[1].dev;
	d->now_ns = 1000000000;
	/* One host counter: B is quiet while A sends 5000 packets. */
	CHECK(u, take_id(d, &a, 1000));
	CHECK(u, take_id(d, &b, 1001));
	for (unsigned id = 1002; id < 6002; id++)
		all = all && take_id(d, &a, (uint16_t)id);
	CHECK(u, all);
	CHECK(u, take_id(d, &b, 6002));		/* follows the host's */
	CHECK(u, !take_id(d, &b, 30000));	/* follows nothing */
	/* Counters per QP, interleaved: each follows its own. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(d->peer_ids, 0, sizeof(d->peer_ids));
	for (unsigned k = 0; k < 200; k++)
		all = all && take_id(d, &a, (uint16_t)(10000 + k)) &&
		      take_id(d, &b, (uint16_t)(40000 + k));
	CHECK(u, all);
	/* Across the wrap: 65535, then 0..63 (always), then 64 follows on. */
	memset(&a, 0, sizeof(a));
	memset(d->peer_ids, 0, sizeof(d->peer_ids));
	for (unsigned id = 65400; id < 65536 + 70; id++)
		all = all && take_id(d, &a, (uint16_t)id);
	CHECK(u, all);
	CHECK(u, !take_id(d, &a, 20000));
	/* Reordered: a little behind is taken, far behind is not. */
	CHECK(u, take_id(d, &a, 66));
	CHECK(u, !take_id(d, &a, (uint16_t)(65536 + 69 - 1000)));
	/* Time lets a counter run ahead: 10 s idle, 5000 IDs later. */
	d->now_ns += 10000000000ull;
	CHECK(u, take_id(d, &a, 69 + 5000));
	pair_close(&pr);
}

/*
 * What an off-path host would have to guess: QPNs, keys and first PSNs are
 * random (getrandom), so two devices' first QP and first region differ;
 * QPNs are never 0, 1 or 0xFFFFFF and keep their slot in the low bits.
 */
static void test_unguessable_ids(struct unit *u)
{
	struct pair pr;
	struct xport_qp_attr a = { .max_send_wr = 4, .max_recv_wr = 4, .mtu = 1024 };
	char err[XPORT_ERR_LEN];
	uint32_t psns[8];
	int distinct = 0;

	pair_open(&pr, 4096, 61, 0, 0, 0, 1);
	CHECK(u, pr.s[0].qp->qpn != pr.s[1].qp->qpn);
	CHECK(u, pr.s[0].mr.rkey != pr.s[1].mr.rkey);
	for (int i = 0; i < 2; i++) {
		uint32_t q = pr.s[i].qp->qpn;

		CHECK(u, q > 1 && q < WIRE_PSN_MASK);
		CHECK_EQ(u, q & SOFT_INDEX_MASK, (uint32_t)pr.s[i].qp->slot);
		CHECK_EQ(u, pr.s[i].mr.rkey & SOFT_INDEX_MASK, 0);	/* the first region */
	}
	for (int i = 0; i < 8; i++) {
		struct soft_qp *qp = soft_engine_ops.create_qp(pr.s[0].dev, pr.s[0].cq, pr.s[0].cq,
							       &a, err);

		CHECK(u, qp != NULL);
		if (!qp)
			break;
		psns[i] = qp->next_psn;
		for (int j = 0; j < i; j++)
			distinct += psns[j] != psns[i];
		soft_engine_ops.destroy_qp(qp);
	}
	CHECK(u, distinct >= 27);	/* 28 pairs: random PSNs collide 1 in 2^24 */
	pair_close(&pr);
}

/*
 * Responses leave in PSN order: a 1 MiB READ and then WRITEs on one QP,
 * over a clean link, need no retransmission and no timeout (an ACK for the
 * WRITE sent before the READ's responses made the requester re-read).
 */
static void test_response_order(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[4];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr[3];

	pair_open(&pr, 4 << 20, 71, 0, 0, 0, 0x100);
	fill(pr.s[1].buf, 1 << 20, 12);
	fill(pr.s[0].buf + (2 << 20), 4096, 13);
	wr[0] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_READ, 0, 1 << 20);
	wr[1] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 2 << 20, 4096);
	wr[2] = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, (2 << 20) + 4096, 64);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(u, soft_engine_ops.post_send(pr.s[0].qp, &wr[i], NULL, err), 0);
	CHECK_EQ(u, run_until(&pr, 0, 3, wc), 3);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(u, wc[i].status, XPORT_WC_SUCCESS);
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 1 << 20) == 0);
	CHECK(u, memcmp(pr.s[0].buf + (2 << 20), pr.s[1].buf + (2 << 20), 4096) == 0);
	CHECK_EQ(u, pr.s[0].qp->ctr.retransmits, 0);
	CHECK_EQ(u, pr.s[0].qp->ctr.timeouts, 0);
	CHECK_EQ(u, pr.s[0].qp->ctr.out_of_sequence + pr.s[0].qp->ctr.duplicates, 0);
	CHECK_EQ(u, pr.s[1].qp->ctr.duplicates, 0);
	pair_close(&pr);
}

/*
 * Rings that never alias: ring positions are 64-bit, so a queue whose size
 * is not a power of two keeps working past 2^32 posts (as it would after an
 * hour at 1 Mpps); and a work request over 2^31 bytes is refused at post.
 */
static void test_ring_positions(struct unit *u)
{
	struct pair pr;
	struct xport_wc wc[8];
	char err[XPORT_ERR_LEN];
	struct xport_send_wr wr;
	struct soft_qp *qp;

	pair_open(&pr, 65536, 81, 0, 0, 0, 0x10);
	qp = pr.s[0].qp;
	/* 2^32 - 3 posts done, none outstanding; a size that does not divide 2^32. */
	qp->sq_size = 255;
	qp->sq_head = qp->sq_tail = qp->sq_cur = qp->sq_free = (1ull << 32) - 3;
	fill(pr.s[0].buf, 8192, 21);
	for (int i = 0; i < 6; i++) {
		wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, (size_t)i * 1024, 1024);
		wr.wr_id = (uint64_t)i;
		CHECK_EQ(u, soft_engine_ops.post_send(qp, &wr, NULL, err), 0);
	}
	CHECK_EQ(u, run_until(&pr, 0, 6, wc), 6);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(u, wc[i].wr_id, i);
		CHECK_EQ(u, wc[i].status, XPORT_WC_SUCCESS);
	}
	CHECK(u, memcmp(pr.s[0].buf, pr.s[1].buf, 6 * 1024) == 0);
	CHECK_EQ(u, qp->sq_tail, (1ull << 32) + 3);
	wr = wr_of(&pr.s[0], &pr.s[1], XPORT_WR_RDMA_WRITE, 0, 1024);
	wr.sge.length = (1u << 31) + 1;
	CHECK_EQ(u, soft_engine_ops.post_send(qp, &wr, NULL, err), -1);
	CHECK(u, strstr(err, "2 GiB") != NULL);
	pair_close(&pr);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_dcqcn_math);
	RUN(&u, test_dcqcn_params);
	RUN(&u, test_ecn_cnp);
	RUN(&u, test_ip_id_solved);
	RUN(&u, test_ip_id_implausible);
	RUN(&u, test_ip_id_whose);
	RUN(&u, test_one_pass_icrc);
	RUN(&u, test_stage_deferred);
	RUN(&u, test_stage_run_shared_pseudo);
	RUN(&u, test_rx_bytes_elsewhere);
	RUN(&u, test_unguessable_ids);
	RUN(&u, test_response_order);
	RUN(&u, test_ring_positions);
	return unit_done(&u);
}
