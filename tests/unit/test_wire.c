// SPDX-License-Identifier: MIT
/*
 * Wire codec and ICRC tests: round trips for every opcode and every
 * encapsulation, a hand-checked ICRC vector, masking rules, bounds on
 * truncated input, AETH tables, and ground truth from real captures
 * (Linux Soft-RoCE and a public RoCEv2 capture, plus native IB in ERF).
 */
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "erf.h"
#include "gso.h"
#include "icrc.h"
#include "unit.h"
#include "wire.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_fields(struct wire_pkt *p, uint8_t opcode)
{
	p->bth.opcode = opcode;
	p->bth.se = rnd() & 1;
	p->bth.mig = rnd() & 1;
	p->bth.tver = 0;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
	p->bth.becn = opcode == OP_CNP;
	p->bth.dqpn = (uint32_t)rnd() & 0xFFFFFF;
	p->bth.ackreq = rnd() & 1;
	p->bth.psn = (uint32_t)rnd() & 0xFFFFFF;
	p->rdeth.eecnxt = (uint32_t)rnd() & 0xFFFFFF;
	p->deth.qkey = (uint32_t)rnd();
	p->deth.srcqp = (uint32_t)rnd() & 0xFFFFFF;
	p->xrceth.xrcsrq = (uint32_t)rnd() & 0xFFFFFF;
	p->feth.sel = 1;
	p->feth.placement = 2;
	p->reth.va = rnd();
	p->reth.rkey = (uint32_t)rnd();
	p->reth.dmalen = (uint32_t)rnd();
	p->atomiceth.va = rnd() & ~7ULL;
	p->atomiceth.rkey = (uint32_t)rnd();
	p->atomiceth.swap_add = rnd();
	p->atomiceth.compare = rnd();
	p->aeth.syndrome = (uint8_t)rnd() & 0x7F;
	p->aeth.msn = (uint32_t)rnd() & 0xFFFFFF;
	p->atomicacketh.orig = rnd();
	p->immdt = (uint32_t)rnd();
	p->ieth = (uint32_t)rnd();
}

static void setup_encap(struct wire_pkt *p, int which)
{
	static const uint8_t a4[4] = { 198, 18, 0, 1 }, b4[4] = { 198, 18, 0, 2 };
	static const uint8_t gid_a[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 1 };
	static const uint8_t gid_b[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 2 };

	switch (which) {
	case 0:		/* RoCEv2 over IPv4 with Ethernet */
		p->encap = WIRE_ENCAP_ROCEV2;
		p->layers = WIRE_L_ETH;
		memcpy(p->ip4.src, a4, 4);
		memcpy(p->ip4.dst, b4, 4);
		p->ip4.ecn = WIRE_ECT0;
		p->ip4.dscp = 26;
		p->ip4.frag = 0x4000;
		p->udp.sport = 0xC123;
		break;
	case 1:		/* RoCEv2 over IPv6, two VLAN tags */
		p->encap = WIRE_ENCAP_ROCEV2;
		p->layers = WIRE_L_ETH | WIRE_L_VLAN | WIRE_L_IPV6;
		p->nvlan = 2;
		p->vlan[0] = (struct wire_vlan){ ETHERTYPE_QINQ, 3, false, 100 };
		p->vlan[1] = (struct wire_vlan){ ETHERTYPE_VLAN, 5, true, 4094 };
		memcpy(p->ip6.src, gid_a, 16);
		memcpy(p->ip6.dst, gid_b, 16);
		p->ip6.flow_label = 0xABCDE;
		p->ip6.ecn = WIRE_CE;
		p->udp.sport = 0xD000;
		break;
	case 2:		/* RoCEv1 */
		p->encap = WIRE_ENCAP_ROCEV1;
		p->layers = WIRE_L_ETH;
		memcpy(p->grh.sgid, gid_a, 16);
		memcpy(p->grh.dgid, gid_b, 16);
		p->grh.tclass = 0x68;
		p->grh.hoplmt = 1;
		p->grh.flow_label = 7;
		break;
	case 3:		/* native IB, LRH only */
		p->encap = WIRE_ENCAP_IB;
		p->lrh = (struct wire_lrh){ .vl = 2, .sl = 3, .lnh = 2, .dlid = 5, .slid = 9 };
		break;
	default:	/* native IB with a GRH */
		p->encap = WIRE_ENCAP_IB;
		p->lrh = (struct wire_lrh){ .vl = 0, .sl = 1, .lnh = 3, .dlid = 0x1234, .slid = 1 };
		memcpy(p->grh.sgid, gid_a, 16);
		memcpy(p->grh.dgid, gid_b, 16);
		p->grh.hoplmt = 64;
		break;
	}
}

static enum wire_link link_of(int which)
{
	return which >= 3 ? WIRE_LINK_IB : WIRE_LINK_ETH;
}

/* Compares the fields the opcode's headers carry. */
static void check_same(struct unit *u, const struct wire_pkt *a, const struct wire_pkt *b)
{
	CHECK_EQ(u, b->bth.opcode, a->bth.opcode);
	CHECK_EQ(u, b->bth.se, a->bth.se);
	CHECK_EQ(u, b->bth.mig, a->bth.mig);
	CHECK_EQ(u, b->bth.padcnt, a->bth.padcnt);
	CHECK_EQ(u, b->bth.pkey, a->bth.pkey);
	CHECK_EQ(u, b->bth.becn, a->bth.becn);
	CHECK_EQ(u, b->bth.dqpn, a->bth.dqpn);
	CHECK_EQ(u, b->bth.ackreq, a->bth.ackreq);
	CHECK_EQ(u, b->bth.psn, a->bth.psn);
	CHECK_EQ(u, b->ext, a->op->ext);
	if (b->ext & WIRE_X_RDETH)
		CHECK_EQ(u, b->rdeth.eecnxt, a->rdeth.eecnxt);
	if (b->ext & WIRE_X_DETH) {
		CHECK_EQ(u, b->deth.qkey, a->deth.qkey);
		CHECK_EQ(u, b->deth.srcqp, a->deth.srcqp);
	}
	if (b->ext & WIRE_X_XRCETH)
		CHECK_EQ(u, b->xrceth.xrcsrq, a->xrceth.xrcsrq);
	if (b->ext & WIRE_X_FETH) {
		CHECK_EQ(u, b->feth.sel, a->feth.sel);
		CHECK_EQ(u, b->feth.placement, a->feth.placement);
	}
	if (b->ext & WIRE_X_RETH) {
		CHECK(u, b->reth.va == a->reth.va);
		CHECK_EQ(u, b->reth.rkey, a->reth.rkey);
		CHECK_EQ(u, b->reth.dmalen, a->reth.dmalen);
	}
	if (b->ext & WIRE_X_ATOMICETH) {
		CHECK(u, b->atomiceth.va == a->atomiceth.va);
		CHECK_EQ(u, b->atomiceth.rkey, a->atomiceth.rkey);
		CHECK(u, b->atomiceth.swap_add == a->atomiceth.swap_add);
		CHECK(u, b->atomiceth.compare == a->atomiceth.compare);
	}
	if (b->ext & WIRE_X_AETH) {
		CHECK_EQ(u, b->aeth.syndrome, a->aeth.syndrome);
		CHECK_EQ(u, b->aeth.msn, a->aeth.msn);
	}
	if (b->ext & WIRE_X_ATOMICACKETH)
		CHECK(u, b->atomicacketh.orig == a->atomicacketh.orig);
	if (b->ext & WIRE_X_IMMDT)
		CHECK_EQ(u, b->immdt, a->immdt);
	if (b->ext & WIRE_X_IETH)
		CHECK_EQ(u, b->ieth, a->ieth);
	CHECK_EQ(u, b->payload_off, a->payload_off);
	CHECK_EQ(u, b->payload_len, a->payload_len);
	CHECK_EQ(u, b->icrc_off, a->icrc_off);
	CHECK_EQ(u, b->frame_len, a->frame_len);
	CHECK_EQ(u, b->icrc, a->icrc);
	CHECK_EQ(u, b->encap, a->encap);
}

static void test_opcode_table(struct unit *u)
{
	int defined = 0;

	for (int op = 0; op < 256; op++) {
		const struct wire_opcode_info *i = wire_opcode_info((uint8_t)op);

		if (!i)
			continue;
		defined++;
		CHECK_EQ(u, i->opcode, op);
		CHECK(u, i->transport == (op == OP_CNP ? WIRE_TR_CNP : op >> 5));
	}
	/* RC 25, UC 12, RD 22, UD 2, CNP 1, XRC 25. */
	CHECK_EQ(u, defined, 87);
	CHECK_STR(u, wire_opcode_name(0x00), "RC Send First");
	CHECK_STR(u, wire_opcode_name(0x0B), "RC RDMA Write Only Immediate");
	CHECK_STR(u, wire_opcode_name(0x11), "RC Acknowledge");
	CHECK_STR(u, wire_opcode_name(0x64), "UD Send Only");
	CHECK_STR(u, wire_opcode_name(0x81), "CNP");
	CHECK_STR(u, wire_opcode_name(0xA4), "XRC Send Only");
	CHECK(u, wire_opcode_name(0x15) == NULL);	/* RESYNC is RD only */
	CHECK(u, wire_opcode_name(0x80) == NULL);
	CHECK_EQ(u, wire_opcode_info(0x0B)->ext, WIRE_X_RETH | WIRE_X_IMMDT);
	CHECK_EQ(u, wire_opcode_info(0x12)->ext, WIRE_X_AETH | WIRE_X_ATOMICACKETH);
	CHECK_EQ(u, wire_opcode_info(0x4C)->ext, WIRE_X_RDETH | WIRE_X_DETH | WIRE_X_RETH);
	CHECK_EQ(u, wire_opcode_info(0xB3)->ext, WIRE_X_XRCETH | WIRE_X_ATOMICETH);
	CHECK_EQ(u, wire_ext_len(WIRE_X_ATOMICETH), 28);
}

/* Every opcode, every encapsulation, several payload sizes (pad 0..3). */
static void test_roundtrip_all(struct unit *u)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 255, 1024 };
	uint8_t payload[1024], frame[2048];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)rnd();
	for (int op = 0; op < 256; op++) {
		const struct wire_opcode_info *info = wire_opcode_info((uint8_t)op);

		if (!info)
			continue;
		for (int enc = 0; enc < 5; enc++) {
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				size_t len = info->payload ? sizes[s] : 0;
				struct wire_pkt a = { 0 }, b;
				size_t n;

				fill_fields(&a, (uint8_t)op);
				setup_encap(&a, enc);
				n = wire_build(frame, sizeof(frame), &a, payload, len);
				CHECK(u, n > 0);
				if (!n)
					continue;
				CHECK_EQ(u, wire_decode(&b, frame, n, link_of(enc), ROCEV2_UDP_PORT), WIRE_OK);
				check_same(u, &a, &b);
				CHECK(u, memcmp(frame + b.payload_off, payload, len) == 0);
				CHECK_EQ(u, icrc_verify(frame, &b), CRC_OK);
				CHECK_EQ(u, vcrc_verify(frame, &b), enc >= 3 ? CRC_OK : CRC_NONE);
				CHECK_EQ(u, b.frame_len, n);
			}
		}
	}
}

static void test_outer_fields(struct unit *u)
{
	uint8_t frame[512];
	struct wire_pkt a = { 0 }, b;
	size_t n;

	fill_fields(&a, OP_RC_WRITE_ONLY);
	setup_encap(&a, 1);
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"abc", 3);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	CHECK_EQ(u, b.nvlan, 2);
	CHECK_EQ(u, b.vlan[0].tpid, ETHERTYPE_QINQ);
	CHECK_EQ(u, b.vlan[0].vid, 100);
	CHECK_EQ(u, b.vlan[0].pcp, 3);
	CHECK_EQ(u, b.vlan[1].vid, 4094);
	CHECK_EQ(u, b.vlan[1].dei, 1);
	CHECK_EQ(u, b.eth.ethertype, ETHERTYPE_IPV6);
	CHECK_EQ(u, b.ip6.flow_label, 0xABCDE);
	CHECK_EQ(u, b.ip6.ecn, WIRE_CE);
	CHECK_EQ(u, b.udp.sport, 0xD000);
	CHECK_EQ(u, b.udp.dport, ROCEV2_UDP_PORT);
	CHECK_EQ(u, b.bth.padcnt, 1);
	CHECK_EQ(u, b.payload_len, 3);

	memset(&a, 0, sizeof(a));
	fill_fields(&a, OP_RC_SEND_ONLY);
	setup_encap(&a, 0);
	n = wire_build(frame, sizeof(frame), &a, NULL, 0);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	CHECK_EQ(u, b.ip4.dscp, 26);
	CHECK_EQ(u, b.ip4.ecn, WIRE_ECT0);
	CHECK_EQ(u, wire_ipv4_csum(frame + WIRE_ETH_LEN, WIRE_IPV4_LEN), 0);
	/* The same frame read from the IP header on (raw IP link type). */
	CHECK_EQ(u, wire_decode(&b, frame + WIRE_ETH_LEN, n - WIRE_ETH_LEN, WIRE_LINK_IP,
				ROCEV2_UDP_PORT), WIRE_OK);
	CHECK_EQ(u, icrc_verify(frame + WIRE_ETH_LEN, &b), CRC_OK);
	/* A UDP payload alone: BTH first. */
	CHECK_EQ(u, wire_decode(&b, frame + b.bth_off + WIRE_ETH_LEN,
				n - WIRE_ETH_LEN - b.bth_off, WIRE_LINK_BTH, 0), WIRE_OK);
	CHECK_EQ(u, b.bth.opcode, OP_RC_SEND_ONLY);
	CHECK_EQ(u, icrc_verify(frame, &b), CRC_NONE);
}

/* What a UDP socket hides, solved from the ICRC: the IPv4 ID and DF bit
 * of packets built with each, over sizes from an ACK to an MTU-4096 WRITE. */
static void test_icrc_solve(struct unit *u)
{
	static uint8_t frame[WIRE_IPV4_LEN + WIRE_UDP_LEN + 64 + 4096 + 8], payload[4096];
	static const uint16_t ids[] = { 0, 1, 0x1234, 0xFFFF };
	static const size_t lens[] = { 0, 3, 1024, 4096 };
	struct icrc_id_basis basis = { 0 };
	unsigned solved = 0, refused = 0;

	memset(payload, 0x5A, sizeof(payload));
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			for (int df = 0; df < 2; df++) {
				struct wire_pkt p = { .encap = WIRE_ENCAP_ROCEV2 };
				const uint8_t src[4] = { 198, 18, 0, 2 }, dst[4] = { 198, 18, 0, 1 };
				uint16_t id = 0;
				bool got_df = false;
				size_t n;

				p.ip4.id = ids[i];
				p.ip4.frag = df ? 0x4000 : 0;
				p.ip4.ttl = 64;
				memcpy(p.ip4.src, src, 4);
				memcpy(p.ip4.dst, dst, 4);
				p.udp.sport = 0xC123;
				p.udp.dport = ROCEV2_UDP_PORT;
				p.bth.opcode = lens[k] ? OP_RC_WRITE_ONLY : OP_RC_ACK;
				p.bth.dqpn = 0x11;
				p.bth.psn = 0x123456;
				p.reth.dmalen = (uint32_t)lens[k];
				n = wire_build(frame, sizeof(frame), &p, payload, lens[k]);
				CHECK(u, n > 0);
				if (icrc_solve_udp_rocev2(&basis, frame + p.bth_off, n - p.bth_off, src,
							  dst, 0xC123, ROCEV2_UDP_PORT, &id, &got_df) &&
				    id == ids[i] && got_df == (bool)df)
					solved++;
				/* One bit flipped: no ID makes this ICRC hold. */
				frame[p.bth_off + 5] ^= 0x01;
				if (!icrc_solve_udp_rocev2(&basis, frame + p.bth_off, n - p.bth_off,
							   src, dst, 0xC123, ROCEV2_UDP_PORT, &id,
							   &got_df))
					refused++;
			}
	CHECK_EQ(u, solved, 32);
	/* A corruption solves to some ID once in 2^16 a DF setting. */
	CHECK(u, refused >= 31);
}

/* ICRC computed by hand with Python's zlib.crc32 over the masked bytes. */
static void test_icrc_vector(struct unit *u)
{
	static const uint8_t ip[] = {
		0x45, 0x02, 0x00, 0x34, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x9c, 0x5b,
		198, 18, 0, 1, 198, 18, 0, 2,
	};
	static const uint8_t udp[] = { 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00 };
	uint8_t pkt[12 + 8] = { 0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
				0x80, 0x00, 0x00, 0x05 };
	uint8_t frame[128];
	struct wire_pkt a = { 0 };
	size_t n;

	memcpy(pkt + 12, "rdmakit!", 8);
	CHECK_EQ(u, icrc_rocev2(ip, sizeof(ip), udp, pkt, sizeof(pkt)), 0x2e13aac4);
	CHECK_EQ(u, wire_ipv4_csum(ip, sizeof(ip)), 0);

	/* The builder makes the very same bytes. */
	a.encap = WIRE_ENCAP_ROCEV2;
	memcpy(a.ip4.src, ip + 12, 4);
	memcpy(a.ip4.dst, ip + 16, 4);
	a.ip4.id = 0x1234;
	a.ip4.frag = 0x4000;
	a.ip4.ecn = WIRE_ECT0;
	a.udp.sport = 0xC000;
	a.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY, .pkey = 0xFFFF, .dqpn = 0x11,
				   .ackreq = true, .psn = 5 };
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"rdmakit!", 8);
	CHECK_EQ(u, n, 20 + 8 + 12 + 8 + 4);
	CHECK(u, memcmp(frame, ip, 20) == 0);
	CHECK(u, memcmp(frame + 20, udp, 8) == 0);
	CHECK(u, memcmp(frame + 28, pkt, sizeof(pkt)) == 0);
	CHECK_EQ(u, frame[n - 4], 0xc4);	/* stored little-endian */
	CHECK_EQ(u, frame[n - 1], 0x2e);
}

/* Corrupting any covered byte breaks the ICRC; masked fields do not. */
static void test_icrc_masking(struct unit *u)
{
	uint8_t frame[256];
	struct wire_pkt a = { 0 }, b;
	size_t n, ip, bth;

	for (int enc = 0; enc < 5; enc++) {
		memset(&a, 0, sizeof(a));
		fill_fields(&a, OP_RC_WRITE_FIRST);
		setup_encap(&a, enc);
		n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"0123456789abcdef", 16);
		ip = a.icrc_start;
		bth = a.bth_off;
		for (size_t i = ip; i < a.icrc_off; i++) {
			bool masked = false;

			if (enc == 0)	/* IPv4: ToS, TTL, checksum, UDP checksum */
				masked = i == ip + 1 || i == ip + 8 || i == ip + 10 ||
					 i == ip + 11 || i == ip + 26 || i == ip + 27;
			else if (enc == 1)	/* IPv6: TC, flow label, hop limit, UDP csum */
				masked = (i >= ip + 1 && i <= ip + 3) || i == ip + 7 ||
					 i == ip + 46 || i == ip + 47;
			else if (enc == 2 || enc == 4) {	/* GRH */
				size_t g = enc == 4 ? ip + 8 : ip;

				masked = (i >= g + 1 && i <= g + 3) || i == g + 7 || (enc == 4 && i < g);
			} else if (enc == 3)	/* LRH VL nibble */
				masked = false;
			masked = masked || i == bth + 4;
			for (int bit = 0; bit < 8; bit++) {
				/* byte 0 of a v6/GRH header: only the TC nibble is masked */
				if ((enc == 1 && i == ip) || ((enc == 2) && i == ip) ||
				    (enc == 4 && i == ip + 8)) {
					if (bit >= 4)
						continue;
					masked = true;
				}
				if (enc >= 3 && i == ip + 1 && bit < 2)
					continue;	/* LNH: changes what the packet is */
				if (enc == 3 && i == ip)
					masked = bit >= 4;	/* VL */
				if (enc == 4 && i == ip && bit < 4)
					masked = true;	/* LRH is all masked with a GRH */
				frame[i] ^= (uint8_t)(1u << bit);
				if (wire_decode(&b, frame, n, link_of(enc), ROCEV2_UDP_PORT) == WIRE_OK &&
				    b.icrc_off == a.icrc_off) {
					bool ok = icrc_of(frame, &b) == a.icrc;

					if (ok != masked)
						printf("#   enc %d byte %zu bit %d: masked=%d ok=%d\n",
						       enc, i - ip, bit, masked, ok);
					CHECK(u, ok == masked);
				}
				frame[i] ^= (uint8_t)(1u << bit);
			}
		}
	}
}

/* Every prefix of a valid frame decodes without reading past it. */
static void test_truncation(struct unit *u)
{
	uint8_t frame[512];
	struct wire_pkt a = { 0 }, b;

	for (int enc = 0; enc < 5; enc++) {
		size_t n;

		memset(&a, 0, sizeof(a));
		fill_fields(&a, OP_RC_CMP_SWAP);
		setup_encap(&a, enc);
		n = wire_build(frame, sizeof(frame), &a, NULL, 0);
		for (size_t cap = 0; cap <= n; cap++) {
			uint8_t *copy = malloc(cap ? cap : 1);	/* ASan sees overreads */
			enum wire_status st;

			memcpy(copy, frame, cap);
			st = wire_decode(&b, copy, cap, link_of(enc), ROCEV2_UDP_PORT);
			if (cap < a.payload_off)
				CHECK(u, st == WIRE_TRUNCATED);
			else
				CHECK(u, st == WIRE_OK);
			if (st == WIRE_OK && cap < n) {
				CHECK(u, b.cut);
				CHECK_EQ(u, icrc_verify(copy, &b), CRC_UNCHECKED);
			}
			free(copy);
		}
	}
}

static void test_malformed(struct unit *u)
{
	uint8_t frame[256];
	struct wire_pkt a = { 0 }, b;
	size_t n;

	fill_fields(&a, OP_RC_SEND_ONLY);
	setup_encap(&a, 0);
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"x", 1);
	/* UDP length beyond the IP packet. */
	frame[WIRE_ETH_LEN + 20 + 4] = 0x7F;
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_MALFORMED);
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"x", 1);
	/* UDP length too small for a BTH and ICRC. */
	wire_put16(frame + WIRE_ETH_LEN + 20 + 4, 8 + 12);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_MALFORMED);
	/* An ACK frame whose length leaves no room for its AETH. */
	memset(&a, 0, sizeof(a));
	fill_fields(&a, OP_RC_ACK);
	setup_encap(&a, 0);
	n = wire_build(frame, sizeof(frame), &a, NULL, 0);
	wire_put16(frame + WIRE_ETH_LEN + 20 + 4, 8 + 12 + 4);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_MALFORMED);
	/* Other UDP ports are not RoCE unless asked for. */
	n = wire_build(frame, sizeof(frame), &a, NULL, 0);
	wire_put16(frame + WIRE_ETH_LEN + 20 + 2, 9999);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_NOT_RDMA);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, 9999), WIRE_OK);
	/* Source port 69 (TFTP to a dissector that tries the low port) is still RoCE. */
	n = wire_build(frame, sizeof(frame), &a, NULL, 0);
	wire_put16(frame + WIRE_ETH_LEN + 20, 69);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	/* Unknown opcode: BTH decoded, rest opaque. */
	frame[WIRE_ETH_LEN + 28] = 0x1F;
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	CHECK(u, b.op == NULL);
	CHECK_EQ(u, wire_decode(&b, frame, 0, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_TRUNCATED);
}

static void test_aeth(struct unit *u)
{
	char text[64];

	CHECK_EQ(u, wire_aeth_credits(0), 0);
	CHECK_EQ(u, wire_aeth_credits(5), 6);
	CHECK_EQ(u, wire_aeth_credits(30), 32768);
	CHECK_EQ(u, wire_aeth_credits(31), -1);
	CHECK_EQ(u, wire_rnr_timer_us(0), 655360);
	CHECK_EQ(u, wire_rnr_timer_us(1), 10);
	CHECK_EQ(u, wire_rnr_timer_us(14), 1280);
	CHECK_EQ(u, wire_rnr_timer_us(31), 491520);
	CHECK_EQ(u, wire_rnr_timer_code(10), 1);
	CHECK_EQ(u, wire_rnr_timer_code(11), 2);
	CHECK_EQ(u, wire_rnr_timer_code(500000), 0);
	CHECK_EQ(u, wire_aeth_kind(0x1F), WIRE_AETH_ACK);
	CHECK_EQ(u, wire_aeth_kind(0x2E), WIRE_AETH_RNR_NAK);
	CHECK_EQ(u, wire_aeth_kind(0x62), WIRE_AETH_NAK);
	CHECK_EQ(u, wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_REMOTE_ACCESS_ERR), 0x62);
	wire_aeth_describe(text, sizeof(text), 0x1F);
	CHECK_STR(u, text, "ACK credits invalid");
	wire_aeth_describe(text, sizeof(text), 0x0A);
	CHECK_STR(u, text, "ACK credits 32");
	wire_aeth_describe(text, sizeof(text), 0x2C);
	CHECK_STR(u, text, "RNR NAK 0.64 ms");
	wire_aeth_describe(text, sizeof(text), 0x20);
	CHECK_STR(u, text, "RNR NAK 655.36 ms");
	wire_aeth_describe(text, sizeof(text), 0x60);
	CHECK_STR(u, text, "NAK PSN sequence error");
	wire_aeth_describe(text, sizeof(text), 0x63);
	CHECK_STR(u, text, "NAK remote operational error");
	wire_aeth_describe(text, sizeof(text), 0x69);
	CHECK_STR(u, text, "NAK reserved code 9");
}

static void test_psn(struct unit *u)
{
	CHECK_EQ(u, wire_psn_add(0xFFFFFF, 1), 0);
	CHECK_EQ(u, wire_psn_add(0xFFFFF0, 0x20), 0x10);
	CHECK_EQ(u, wire_psn_diff(0, 0xFFFFFF), 1);
	CHECK_EQ(u, wire_psn_diff(0xFFFFFF, 0), -1);
	CHECK_EQ(u, wire_psn_diff(5, 5), 0);
	CHECK_EQ(u, wire_psn_diff(0x800000, 0), -0x800000);
}

static const char *captures_dir(void)
{
	const char *d = getenv("RDMAKIT_CAPTURES");

	return d ? d : "../shared/captures";
}

struct capture_tally {
	int frames, rdma, icrc_ok, icrc_bad, vcrc_ok, vcrc_bad;
};

/* Decodes every frame of a capture file and checks its CRCs. */
static int tally_capture(const char *name, struct capture_tally *t)
{
	char path[512], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;
	int dlt;

	snprintf(path, sizeof(path), "%s/%s", captures_dir(), name);
	pc = pcap_open_offline(path, err);
	if (!pc)
		return -1;
	dlt = pcap_datalink(pc);
	memset(t, 0, sizeof(*t));
	while (pcap_next_ex(pc, &h, &data) == 1) {
		const uint8_t *frame = data;
		size_t len = h->caplen;
		enum wire_link link = WIRE_LINK_ETH;
		struct wire_pkt p;

		t->frames++;
		if (dlt == DLT_ERF) {
			struct erf_inner in;

			if (erf_unwrap(data, h->caplen, &in))
				continue;
			frame = data + in.off;
			len = in.len;
			link = in.link;
		}
		if (wire_decode(&p, frame, len, link, ROCEV2_UDP_PORT) != WIRE_OK)
			continue;
		t->rdma++;
		switch (icrc_verify(frame, &p)) {
		case CRC_OK: t->icrc_ok++; break;
		case CRC_BAD: t->icrc_bad++; break;
		default: break;
		}
		switch (vcrc_verify(frame, &p)) {
		case CRC_OK: t->vcrc_ok++; break;
		case CRC_BAD: t->vcrc_bad++; break;
		default: break;
		}
	}
	pcap_close(pc);
	return 0;
}

/* The third-party captures live in ../shared/captures (no licence to copy
 * them in): beside a CI clone always, beside a user's clone maybe. */
static bool captures_missing(struct unit *u, const char *name)
{
	char path[512], reason[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", captures_dir(), name);
	f = fopen(path, "rb");
	if (f) {
		fclose(f);
		return false;
	}
	snprintf(reason, sizeof(reason), "%s not found (third-party captures beside the "
		 "clone; set RDMAKIT_CAPTURES)", path);
	unit_skip_running(u, reason);
	return true;
}

static void check_capture(struct unit *u, const char *name, int frames, int rdma)
{
	struct capture_tally t;

	if (captures_missing(u, name))
		return;
	CHECK_EQ(u, tally_capture(name, &t), 0);
	printf("#   %s: %d frames, %d RDMA, ICRC %d ok %d bad, VCRC %d ok %d bad\n", name,
	       t.frames, t.rdma, t.icrc_ok, t.icrc_bad, t.vcrc_ok, t.vcrc_bad);
	CHECK_EQ(u, t.frames, frames);
	CHECK_EQ(u, t.rdma, rdma);
	CHECK_EQ(u, t.icrc_ok, rdma);
	CHECK_EQ(u, t.icrc_bad, 0);
	CHECK_EQ(u, t.vcrc_bad, 0);
}

static void test_capture_oferby(struct unit *u)
{
	check_capture(u, "oferby-proxy_roce.pcap", 123, 105);
}

static void test_capture_rxe(struct unit *u)
{
	check_capture(u, "rxe/roce-write_bw.pcap", 100, 100);
	check_capture(u, "rxe/roce-send_lat.pcap", 80, 80);
	check_capture(u, "rxe/roce-read_lat.pcap", 40, 40);
	check_capture(u, "rxe/roce-atomic_fa.pcap", 40, 40);
	check_capture(u, "rxe/roce-rping.pcap", 41, 41);
}

static void test_capture_erf_ib(struct unit *u)
{
	const char *name = "srinivaskoritala-rdma-softroce-demo_infiniband.pcap";
	struct capture_tally t;

	if (captures_missing(u, name))
		return;
	CHECK_EQ(u, tally_capture(name, &t), 0);
	printf("#   ERF IB: %d frames, %d RDMA, ICRC %d ok %d bad, VCRC %d ok %d bad\n",
	       t.frames, t.rdma, t.icrc_ok, t.icrc_bad, t.vcrc_ok, t.vcrc_bad);
	CHECK_EQ(u, t.frames, 43);
	CHECK_EQ(u, t.rdma, 43);
	CHECK_EQ(u, t.icrc_ok, 43);
	CHECK_EQ(u, t.vcrc_ok, 43);
}

/*
 * A crafted 64 KB RoCEv2 frame whose payload repeats the BTH of a plausible
 * next packet every 12 bytes: splitting it as a GSO aggregate tries at most
 * GSO_MAX_CANDIDATES segment lengths, so its ICRC work stays within
 * 2 x (GSO_MAX_CANDIDATES + 1) x its length (it was about 5,000 tries and
 * hundreds of MB of CRC).  A real two-segment aggregate still splits.
 */
static void test_gso_split_bounded(struct unit *u)
{
	static uint8_t frame[70000], payload[64000];
	struct wire_pkt a, b, next;
	struct gso_split sp;
	size_t n, bth_len = 12;

	memset(&a, 0, sizeof(a));
	setup_encap(&a, 0);
	a.bth.opcode = OP_RC_SEND_MIDDLE;
	a.bth.pkey = WIRE_DEFAULT_PKEY;
	a.bth.dqpn = 0x123456;
	a.bth.psn = 77;
	next = a;
	next.bth.psn = 78;
	next.bth.opcode = OP_RC_SEND_MIDDLE;
	{
		uint8_t one[64];
		size_t m = wire_build(one, sizeof(one), &next, NULL, 0);
		const uint8_t *h = one + (m - WIRE_ICRC_LEN - bth_len);

		for (size_t off = 0; off + bth_len <= sizeof(payload); off += bth_len)
			memcpy(payload + off, h, bth_len);
	}
	n = wire_build(frame, sizeof(frame), &a, payload, sizeof(payload));
	CHECK(u, n > sizeof(payload));
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	CHECK(u, !gso_split(frame, &b, &sp));
	CHECK_EQ(u, sp.candidates, GSO_MAX_CANDIDATES);
	printf("#   crafted %zu-byte frame: %zu ICRC bytes (bound %zu)\n", n, sp.icrc_bytes,
	       2 * (GSO_MAX_CANDIDATES + 1) * n);
	CHECK(u, sp.icrc_bytes <= 2 * (GSO_MAX_CANDIDATES + 1) * n);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_opcode_table);
	RUN(&u, test_roundtrip_all);
	RUN(&u, test_outer_fields);
	RUN(&u, test_icrc_vector);
	RUN(&u, test_icrc_solve);
	RUN(&u, test_icrc_masking);
	RUN(&u, test_truncation);
	RUN(&u, test_malformed);
	RUN(&u, test_aeth);
	RUN(&u, test_psn);
	RUN(&u, test_gso_split_bounded);
	RUN(&u, test_capture_oferby);
	RUN(&u, test_capture_rxe);
	RUN(&u, test_capture_erf_ib);
	return unit_done(&u);
}
