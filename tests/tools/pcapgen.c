// SPDX-License-Identifier: MIT
/*
 * pcapgen OUTDIR: writes deterministic capture fixtures for the capture
 * tests, every frame built by the wire codec (wire_build), and a manifest
 * of what each one holds.
 *
 *   OUTDIR/NAME.pcap        the fixtures listed in fixtures[] below
 *   OUTDIR/manifest.jsonl   one JSON object per RDMA packet: the values
 *                           pcapgen put in (not what a decoder read back):
 *                           {"file", "frame", ["gso_segment", "gso_segments"],
 *                            "encap", "src", "dst", "src_port", "dst_port",
 *                            "slid", "dlid", "vlan", "ecn", "opcode",
 *                            "dest_qp", "psn", "ack_req", "becn",
 *                            "payload_len", "icrc", "vcrc", "status",
 *                            "reth", "atomic", "aeth", "atomic_ack",
 *                            "immdt", "ieth", "deth"}
 *                           with the key names of `rdmakit capture --json`;
 *                           a key is left out when the frame does not
 *                           determine it.
 *
 * Timestamps start at 2026-01-01T00:00:00Z (+1 s per file) and advance by
 * 1500 ns per frame, written with nanosecond precision.  Addresses are
 * 198.18.0.0/15 (IPv4), 2001:2::/48 (IPv6, RFC 5180) and fe80:: GIDs.
 * Exit status 0, or 1 with a message when something could not be built.
 */
#include "pcapgen.h"

/* ------------------------------------------------------------------------ */
/* The fixtures                                                               */

/* Every defined opcode: over IPv4 with ECT(0), or over IPv6 with a VLAN tag. */
static void gen_opcodes(struct gen *g, const char *name, bool ipv6)
{
	struct out o;

	out_open(g, &o, name, DLT_EN10MB, 65535);
	for (int op = 0; op < 256; op++) {
		const struct wire_opcode_info *info = wire_opcode_info((uint8_t)op);
		struct wire_pkt p;
		size_t len;

		if (!info)
			continue;
		if (ipv6)
			v6vlan(&p, HOST_A, HOST_B, WIRE_ECT1);
		else
			v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.ip4.id = (uint16_t)(o.frame + 1);
		p.bth.opcode = (uint8_t)op;
		p.bth.dqpn = 0x000100u + (unsigned)op;
		p.bth.psn = 0x010000u + (unsigned)op * 3;
		p.bth.ackreq = op & 1;
		p.bth.se = (op >> 1) & 1;
		p.bth.becn = op == OP_CNP;
		fill_ext(&p, (uint8_t)op, ipv6 ? 0x80 : 0);
		/* Payloads of 8..11 bytes: pad counts 0, 3, 2, 1. */
		len = info->payload ? 8 + (size_t)(op % 4) : 0;
		emit(&o, &p, len);
	}
	out_close(&o);
}

static void gen_rocev1(struct gen *g)
{
	static const uint8_t ops[] = { OP_RC_SEND_ONLY, OP_RC_WRITE_ONLY, OP_RC_READ_REQUEST,
				       OP_RC_ACK };
	struct out o;

	out_open(g, &o, "rocev1.pcap", DLT_EN10MB, 65535);
	for (size_t i = 0; i < sizeof(ops); i++) {
		struct wire_pkt p;
		bool resp = ops[i] == OP_RC_ACK;

		rocev1(&p, resp ? HOST_B : HOST_A, resp ? HOST_A : HOST_B, i == 1);
		p.bth.opcode = ops[i];
		p.bth.dqpn = resp ? QP_A : QP_B;
		p.bth.psn = 0x20 + (uint32_t)i;
		p.bth.ackreq = !resp;
		fill_ext(&p, ops[i], 0);
		p.aeth.syndrome = 0x1F;
		emit(&o, &p, ops[i] == OP_RC_READ_REQUEST || resp ? 0 : 64 + i);
	}
	out_close(&o);
}

/* An ERF record (type 21, InfiniBand) around an IB packet, as ibdump
 * and DAG cards write native InfiniBand. */
static void out_write_erf(struct out *o, const uint8_t *pkt, size_t len)
{
	uint8_t rec[MAXFRAME + 16];
	uint64_t ts;

	if (len + 16 > sizeof(rec))
		die("%s: ERF record too big", o->name);
	memset(rec, 0, 16);
	ts = o->ts_ns + FRAME_GAP_NS;	/* what out_write will stamp */
	ts = (ts / 1000000000ULL) << 32 | ((ts % 1000000000ULL) << 32) / 1000000000ULL;
	for (int i = 0; i < 8; i++)
		rec[i] = (uint8_t)(ts >> (8 * i));	/* little-endian fixed point */
	rec[8] = 21;				/* ERF_TYPE_INFINIBAND */
	rec[9] = 0x04;				/* varying record length */
	wire_put16(rec + 10, (uint16_t)((16 + len + 7) & ~(size_t)7));
	wire_put16(rec + 14, (uint16_t)len);	/* wlen */
	memcpy(rec + 16, pkt, len);
	out_write(o, rec, 16 + len, 16 + len);
}

/* Native InfiniBand, LRH only and LRH + GRH alternately: as LINKTYPE_INFINIBAND
 * (247; tshark 4.0 cannot read it) and the same packets in ERF records. */
static void gen_ib(struct gen *g)
{
	static const uint8_t ops[] = { OP_RC_SEND_ONLY, OP_RC_WRITE_FIRST, OP_RC_ACK,
				       OP_UD_SEND_ONLY, OP_RC_READ_RESPONSE_ONLY, OP_RC_FETCH_ADD,
				       OP_RC_ATOMIC_ACK, OP_RC_SEND_ONLY_IMM };
	struct out o, e;

	out_open(g, &o, "ib.pcap", 247 /* DLT_INFINIBAND */, 65535);
	out_open(g, &e, "ib-erf.pcap", DLT_ERF, 65535);
	for (size_t i = 0; i < sizeof(ops); i++) {
		const struct wire_opcode_info *info = wire_opcode_info(ops[i]);
		uint8_t frame[2048], payload[64];
		struct wire_pkt p, in;
		size_t n, len;

		ib(&p, (uint16_t)(1 + (i & 1)), (uint16_t)(4 - (i & 1)), i % 2 == 1);
		p.bth.opcode = ops[i];
		p.bth.dqpn = 0x870400u + (unsigned)i;
		p.bth.psn = 0x500 + (uint32_t)i;
		p.bth.ackreq = i % 3 == 0;
		fill_ext(&p, ops[i], 0);
		p.aeth.syndrome = i == 2 ? 0x0A : 0x1F;	/* "ACK credits 32" on the ACK */
		in = p;
		len = info->payload ? 32 + i : 0;
		pattern(payload, len, (unsigned)i);
		n = wire_build(frame, sizeof(frame), &p, payload, len);
		if (!n)
			die("ib: wire_build failed");
		out_write(&o, frame, n, n);
		man_pkt(&o, &in, len, &OK);
		out_write_erf(&e, frame, n);
		man_pkt(&e, &in, len, &OK);
	}
	out_close(&o);
	out_close(&e);
}

/* The same RoCEv2 packets behind a Linux cooked header (SLL or SLL2). */
static void gen_cooked(struct gen *g, const char *name, bool v2)
{
	struct out o;

	out_open(g, &o, name, v2 ? DLT_LINUX_SLL2 : DLT_LINUX_SLL, 65535);
	for (int i = 0; i < 3; i++) {
		uint8_t frame[2048], rec[2100];
		struct wire_pkt p, in;
		size_t n, hl, iphdr_off;
		bool six = i == 2;

		memset(&p, 0, sizeof(p));
		if (six)
			v6vlan(&p, HOST_A, HOST_B, WIRE_ECT0);
		else
			v4(&p, i ? HOST_B : HOST_A, i ? HOST_A : HOST_B, WIRE_ECT0);
		/* No Ethernet header: the cooked header replaces it. */
		p.layers &= ~(uint32_t)(WIRE_L_ETH | WIRE_L_VLAN);
		p.nvlan = 0;
		p.bth.opcode = i == 1 ? OP_RC_ACK : OP_RC_SEND_ONLY;
		p.bth.dqpn = i == 1 ? QP_A : QP_B;
		p.bth.psn = 0x40 + (uint32_t)i;
		p.bth.ackreq = i != 1;
		fill_ext(&p, p.bth.opcode, 0);
		in = p;
		{
			uint8_t payload[100];

			pattern(payload, sizeof(payload), (unsigned)i);
			n = wire_build(frame, sizeof(frame), &p, payload, i == 1 ? 0 : 100);
		}
		if (!n)
			die("%s: wire_build failed", name);
		iphdr_off = 0;
		memset(rec, 0, sizeof(rec));
		if (v2) {
			hl = 20;
			wire_put16(rec, six ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4);
			wire_put32(rec + 4, 7);		/* ifindex */
			wire_put16(rec + 8, 1);		/* ARPHRD_ETHER */
			rec[10] = i == 1 ? 4 : 0;	/* outgoing / to us */
			rec[11] = 6;
			mac_of(rec + 12, HOST_A);
		} else {
			hl = 16;
			wire_put16(rec, i == 1 ? 4 : 0);
			wire_put16(rec + 2, 1);
			wire_put16(rec + 4, 6);
			mac_of(rec + 6, HOST_A);
			wire_put16(rec + 14, six ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4);
		}
		memcpy(rec + hl, frame + iphdr_off, n);
		out_write(&o, rec, hl + n, hl + n);
		in.nvlan = 0;
		man_pkt(&o, &in, i == 1 ? 0 : 100, &OK);
	}
	out_close(&o);
}

/* Raw IP link type (no link-layer header): an IPv4 and an IPv6 packet. */
static void gen_raw_ip(struct gen *g)
{
	struct out o;

	out_open(g, &o, "raw-ip.pcap", DLT_RAW, 65535);
	for (int i = 0; i < 2; i++) {
		uint8_t frame[2048], payload[40];
		struct wire_pkt p, in;
		size_t n;

		if (i)
			v6vlan(&p, HOST_A, HOST_B, WIRE_ECT0);
		else
			v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.layers &= ~(uint32_t)(WIRE_L_ETH | WIRE_L_VLAN);
		p.nvlan = 0;
		p.bth.opcode = OP_RC_WRITE_ONLY_IMM;
		p.bth.dqpn = QP_B;
		p.bth.psn = 0x60 + (uint32_t)i;
		p.bth.ackreq = true;
		fill_ext(&p, p.bth.opcode, (unsigned)i);
		in = p;
		pattern(payload, sizeof(payload), 9);
		n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
		if (!n)
			die("raw-ip: wire_build failed");
		out_write(&o, frame, n, n);
		man_pkt(&o, &in, sizeof(payload), &OK);
	}
	out_close(&o);
}

/* A frame cut by the snap length (payload cut: ICRC unchecked), then a
 * whole ACK that fits. */
static void gen_snaplen(struct gen *g)
{
	uint8_t frame[2048], payload[1024];
	struct wire_pkt p, in;
	struct man_extra x = { .icrc = "unchecked" };
	struct out o;
	size_t n;

	out_open(g, &o, "snaplen.pcap", DLT_EN10MB, 128);
	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.bth = (struct wire_bth){ .opcode = OP_RC_WRITE_ONLY, .pkey = 0xFFFF, .dqpn = QP_B,
				   .ackreq = true, .psn = 0x70 };
	fill_ext(&p, p.bth.opcode, 0);
	in = p;
	pattern(payload, sizeof(payload), 3);
	n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
	out_write(&o, frame, 128, n);
	man_pkt(&o, &in, sizeof(payload), &x);

	v4(&p, HOST_B, HOST_A, WIRE_NOT_ECT);
	p.bth = (struct wire_bth){ .opcode = OP_RC_ACK, .pkey = 0xFFFF, .dqpn = QP_A, .psn = 0x70 };
	p.aeth = (struct wire_aeth){ 0x1F, 1 };
	emit(&o, &p, 0);
	out_close(&o);
}

/* A frame the snap length cuts inside its RETH: the BTH is readable, the
 * packet is cut short, so its ICRC cannot be checked ("unchecked"). */
static void gen_cut_in_reth(struct gen *g)
{
	uint8_t frame[2048], payload[512];
	struct wire_pkt p, in;
	struct man_extra x = { .icrc = "unchecked", .status = "truncated" };
	struct out o;
	size_t n, cut;

	out_open(g, &o, "cut-in-reth.pcap", DLT_EN10MB, 62);
	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.bth = (struct wire_bth){ .opcode = OP_RC_WRITE_ONLY, .pkey = 0xFFFF, .dqpn = QP_B,
				   .ackreq = true, .psn = 0x78 };
	fill_ext(&p, p.bth.opcode, 0);
	in = p;
	pattern(payload, sizeof(payload), 3);
	n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
	cut = p.bth_off + WIRE_BTH_LEN + 8;	/* half of the RETH */
	out_write(&o, frame, cut, n);
	/* Only the BTH is known: no reth, no payload_len in the manifest. */
	fprintf(g->manifest, "{\"file\":\"%s\",\"frame\":%u,\"encap\":\"rocev2\",\"src\":\"198.18.0.%u\","
		"\"dst\":\"198.18.0.%u\",\"status\":\"truncated\",\"opcode\":%u,\"dest_qp\":%u,"
		"\"psn\":%u,\"ack_req\":true,\"icrc\":\"%s\"}\n", o.name, o.frame, HOST_A, HOST_B,
		in.bth.opcode, in.bth.dqpn, in.bth.psn, x.icrc);
	out_close(&o);
}

/* A good SEND, then the same SEND with one payload byte flipped. */
static void gen_icrc_bad(struct gen *g)
{
	uint8_t frame[2048], payload[64];
	struct wire_pkt p, in;
	struct man_extra bad = { .icrc = "bad" };
	struct out o;
	size_t n;

	out_open(g, &o, "icrc-bad.pcap", DLT_EN10MB, 65535);
	for (int i = 0; i < 2; i++) {
		v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY, .pkey = 0xFFFF, .dqpn = QP_B,
					   .ackreq = true, .psn = 0x80 + (uint32_t)i };
		in = p;
		pattern(payload, sizeof(payload), 5);
		n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
		if (i)
			frame[p.payload_off + 10] ^= 0x20;
		out_write(&o, frame, n, n);
		man_pkt(&o, &in, sizeof(payload), i ? &bad : &OK);
	}
	out_close(&o);
}

/* A frame whose capture stops inside the BTH, and one whose UDP length
 * leaves no room for a BTH: decoded as far as they go, and flagged. */
static void gen_truncated_header(struct gen *g)
{
	uint8_t frame[2048], payload[64];
	struct wire_pkt p, in;
	struct man_extra x = { .status = "truncated", .no_bth = true };
	struct man_extra y = { .status = "malformed", .no_bth = true };
	struct out o;
	size_t n;

	out_open(g, &o, "truncated-header.pcap", DLT_EN10MB, 65535);
	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY, .pkey = 0xFFFF, .dqpn = QP_B,
				   .psn = 0x90 };
	in = p;
	pattern(payload, sizeof(payload), 6);
	n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
	/* Captured up to 6 bytes into the BTH, e.g. by a 48-byte snap length. */
	out_write(&o, frame, p.bth_off + 6, n);
	man_pkt(&o, &in, 0, &x);

	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY, .pkey = 0xFFFF, .dqpn = QP_B,
				   .psn = 0x91 };
	in = p;
	n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
	wire_put16(frame + p.bth_off - 4, 8 + 4);	/* UDP length: header + 4 bytes */
	out_write(&o, frame, n, n);
	man_pkt(&o, &in, 0, &y);
	out_close(&o);
}

/* Opcodes the IBTA does not define (0x1F: RC reserved, 0xC0: a reserved
 * transport), with valid ICRCs. */
static void gen_unknown_opcode(struct gen *g)
{
	static const uint8_t ops[] = { 0x1F, 0xC0 };
	uint8_t frame[2048], payload[8];
	struct out o;

	out_open(g, &o, "unknown-opcode.pcap", DLT_EN10MB, 65535);
	for (size_t i = 0; i < sizeof(ops); i++) {
		struct wire_pkt p, in, d;
		struct man_extra x = { .icrc = "ok", .unknown = true, .payload_len = 8 };
		size_t n;

		v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY, .pkey = 0xFFFF,
					   .dqpn = QP_B, .ackreq = true, .psn = 0xA0 + (uint32_t)i };
		pattern(payload, sizeof(payload), 7);
		n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
		frame[p.bth_off] = ops[i];
		if (wire_decode(&d, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT) != WIRE_OK)
			die("unknown-opcode: does not decode");
		icrc_store(frame + d.icrc_off, icrc_of(frame, &d));
		out_write(&o, frame, n, n);
		in = p;
		in.bth.opcode = ops[i];
		man_pkt(&o, &in, 0, &x);
	}
	out_close(&o);
}

/* One packet of a connection between A (QP_A) and B (QP_B). */
static void rc(struct out *o, bool from_a, uint8_t op, uint32_t psn, bool ackreq,
	       size_t len, uint8_t syndrome, uint32_t msn, uint8_t ecn)
{
	struct wire_pkt p;

	v4(&p, from_a ? HOST_A : HOST_B, from_a ? HOST_B : HOST_A, ecn);
	p.ip4.id = 0;
	p.bth.opcode = op;
	p.bth.dqpn = from_a ? QP_B : QP_A;
	p.bth.psn = psn;
	p.bth.ackreq = ackreq;
	p.bth.becn = op == OP_CNP;
	p.reth = (struct wire_reth){ 0x7f0000100000ULL, 0x1234, 4 * 1024 };
	p.aeth = (struct wire_aeth){ syndrome, msn };
	emit(o, &p, len);
}

#define ACK_OK 0x1F
#define NAK_SEQ 0x60
#define NAK_ACCESS 0x62
#define RNR_NAK 0x2E	/* RNR NAK, timer code 14: 1.28 ms */

/*
 * go-back-N: a 4-packet WRITE (PSN 100..103) loses PSN 101 before the
 * capture point; B answers 102 with NAK(PSN sequence error) for PSN 101;
 * A resends 101, 102, 103; B ACKs 103; then one more WRITE ONLY, ACKed.
 *   A > B: 9 packets, PSN gap 1, out of order 1 (101 first seen late),
 *          retransmits 2 (102 and 103 seen again)
 *   B > A: 3 packets, NAK(PSN sequence error) 1
 */
static void gen_retransmit(struct gen *g)
{
	struct out o;

	out_open(g, &o, "retransmit.pcap", DLT_EN10MB, 65535);
	rc(&o, true, OP_RC_WRITE_FIRST, 100, false, 1024, 0, 0, WIRE_ECT0);
	/* PSN 101 is lost here. */
	rc(&o, true, OP_RC_WRITE_MIDDLE, 102, false, 1024, 0, 0, WIRE_ECT0);
	rc(&o, true, OP_RC_WRITE_LAST, 103, true, 1024, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 101, false, 0, NAK_SEQ, 0, WIRE_NOT_ECT);
	rc(&o, true, OP_RC_WRITE_MIDDLE, 101, false, 1024, 0, 0, WIRE_ECT0);
	rc(&o, true, OP_RC_WRITE_MIDDLE, 102, false, 1024, 0, 0, WIRE_ECT0);
	rc(&o, true, OP_RC_WRITE_LAST, 103, true, 1024, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 103, false, 0, ACK_OK, 1, WIRE_NOT_ECT);
	rc(&o, true, OP_RC_WRITE_ONLY, 104, true, 256, 0, 0, WIRE_ECT0);
	rc(&o, true, OP_RC_WRITE_ONLY, 105, true, 256, 0, 0, WIRE_ECT0);
	rc(&o, true, OP_RC_WRITE_ONLY, 106, true, 256, 0, 0, WIRE_ECT0);
	rc(&o, true, OP_RC_WRITE_ONLY, 107, true, 256, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 107, false, 0, ACK_OK, 5, WIRE_NOT_ECT);
	out_close(&o);
}

/* RNR: SEND 200, RNR NAK, SEND 200 again after the timer, ACK. */
static void gen_rnr(struct gen *g)
{
	struct out o;

	out_open(g, &o, "rnr-nak.pcap", DLT_EN10MB, 65535);
	rc(&o, true, OP_RC_SEND_ONLY, 200, true, 64, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 200, false, 0, RNR_NAK, 0, WIRE_NOT_ECT);
	rc(&o, true, OP_RC_SEND_ONLY, 200, true, 64, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 200, false, 0, ACK_OK, 1, WIRE_NOT_ECT);
	out_close(&o);
}

/* A WRITE with a wrong rkey, answered by NAK(remote access error). */
static void gen_access_error(struct gen *g)
{
	struct out o;

	out_open(g, &o, "access-error.pcap", DLT_EN10MB, 65535);
	rc(&o, true, OP_RC_WRITE_ONLY, 300, true, 128, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 300, false, 0, NAK_ACCESS, 0, WIRE_NOT_ECT);
	out_close(&o);
}

/*
 * The unreliable services, which nothing acknowledges or resends:
 *   UC A > B qp QP_B: SEND First/Middle/Last 600..602, SEND First 603,
 *     604 lost, SEND Last 605, WRITE Only 606 twice (a duplicate on the
 *     way): 7 packets, 1 PSN missing, 1 seen twice.
 *   UD from A's QP 0x000077 to two QPs of B, its PSNs interleaved across
 *     them (700 to 0x21, 701 to 0x22, 702 to 0x21, 703 lost, 704 to 0x22),
 *     Q_Key 0x11111111: one flow by source QP, 4 packets, 1 PSN missing.
 */
static void gen_unreliable(struct gen *g)
{
	static const struct { uint8_t op; uint32_t psn; } uc[] = {
		{ 0x20, 600 }, { 0x21, 601 }, { 0x22, 602 }, { 0x20, 603 }, { 0x22, 605 },
		{ 0x2A, 606 }, { 0x2A, 606 },
	};
	static const struct { uint32_t dqpn, psn; } ud[] = {
		{ 0x21, 700 }, { 0x22, 701 }, { 0x21, 702 }, { 0x22, 704 },
	};
	struct out o;

	out_open(g, &o, "unreliable.pcap", DLT_EN10MB, 65535);
	for (size_t i = 0; i < sizeof(uc) / sizeof(uc[0]); i++)
		rc(&o, true, uc[i].op, uc[i].psn, false, uc[i].op == 0x20 ? 1024 : 512, 0, 0,
		   WIRE_ECT0);
	for (size_t i = 0; i < sizeof(ud) / sizeof(ud[0]); i++) {
		struct wire_pkt p;

		v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.ip4.id = 0;
		p.bth.opcode = OP_UD_SEND_ONLY;
		p.bth.dqpn = ud[i].dqpn;
		p.bth.psn = ud[i].psn;
		p.deth = (struct wire_deth){ 0x11111111, 0x77 };
		emit(&o, &p, 256);
	}
	out_close(&o);
}

/*
 * UD SEND Onlys from A's QP 0x000077 to B's QP 0x21: PSN 800 whole, 801 cut
 * by the snap length inside its DETH (the BTH readable, the source QP and
 * Q_Key not), 802 whole.  The cut one cannot be keyed on its source QP.
 */
static void gen_cut_in_deth(struct gen *g)
{
	uint8_t frame[2048], payload[256];
	struct out o;

	out_open(g, &o, "cut-in-deth.pcap", DLT_EN10MB, 65535);
	pattern(payload, sizeof(payload), 5);
	for (uint32_t psn = 800; psn <= 802; psn++) {
		struct wire_pkt p;
		size_t n;

		v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.ip4.id = 0;
		p.bth = (struct wire_bth){ .opcode = OP_UD_SEND_ONLY, .pkey = 0xFFFF, .dqpn = 0x21,
					   .psn = psn };
		p.deth = (struct wire_deth){ 0x11111111, 0x77 };
		n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
		/* Half of the DETH: its Q_Key, not its source QP. */
		out_write(&o, frame, psn == 801 ? p.bth_off + WIRE_BTH_LEN + 4 : n, n);
	}
	out_close(&o);
}

/* Two SENDs, each ACKed twice (same PSN, MSN and syndrome): 2 duplicate ACKs. */
static void gen_dup_ack(struct gen *g)
{
	struct out o;

	out_open(g, &o, "dup-ack.pcap", DLT_EN10MB, 65535);
	rc(&o, true, OP_RC_SEND_ONLY, 400, true, 32, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 400, false, 0, ACK_OK, 1, WIRE_NOT_ECT);
	rc(&o, false, OP_RC_ACK, 400, false, 0, ACK_OK, 1, WIRE_NOT_ECT);
	rc(&o, true, OP_RC_SEND_ONLY, 401, true, 32, 0, 0, WIRE_ECT0);
	rc(&o, false, OP_RC_ACK, 401, false, 0, ACK_OK, 2, WIRE_NOT_ECT);
	rc(&o, false, OP_RC_ACK, 401, false, 0, ACK_OK, 2, WIRE_NOT_ECT);
	out_close(&o);
}

/* Ten WRITE ONLYs A > B, three of them CE-marked (PSN 502, 505, 508); B
 * sends two CNPs to A's QP (BECN set); B ACKs 509.
 *   A > B qp QP_B: 10 packets, 3 CE-marked
 *   B > A qp QP_A: 2 CNPs and 1 ACK */
static void gen_congestion(struct gen *g)
{
	struct out o;

	out_open(g, &o, "congestion.pcap", DLT_EN10MB, 65535);
	for (uint32_t i = 0; i < 10; i++) {
		bool ce = i == 2 || i == 5 || i == 8;

		rc(&o, true, OP_RC_WRITE_ONLY, 500 + i, i == 9, 512, 0, 0, ce ? WIRE_CE : WIRE_ECT0);
		if (i == 3 || i == 6)
			rc(&o, false, OP_CNP, 0, false, 0, 0, 0, WIRE_ECT0);
	}
	rc(&o, false, OP_RC_ACK, 509, false, 0, ACK_OK, 10, WIRE_NOT_ECT);
	out_close(&o);
}

/*
 * A UDP GSO aggregate: one datagram whose payload is nseg complete
 * BTH..ICRC packets of a WRITE (First, Middle..., Last), all but the last
 * exactly seg bytes; or, with `acks`, of what a responder batches: ACKs
 * and a NAK(PSN sequence error) of one size, whose PSNs do not count up
 * by one (ACKs coalesce; the NAK names the PSN it expected).  Each packet's ICRC covers the IP/UDP headers it
 * carries after segmentation: its own IP total (or payload) length and UDP
 * length, and (IPv4) ID first_id + k.  Checked against wire_build of each
 * segment as a standalone packet.
 */
static void gen_gso(struct gen *g, const char *name, bool ipv6, unsigned nseg, uint16_t first_id,
		    bool acks)
{
	uint8_t agg[MAXFRAME], one[4096], payload[2048];
	struct wire_pkt p;
	struct out o;
	size_t hdr = 0, ip_off, udp_off, off, seglen[16], segoff[16], total = 0;
	size_t plen[16];
	const size_t middle = 1024, last = 500;
	struct wire_pkt segs[16];

	out_open(g, &o, name, DLT_EN10MB, 65535);
	/* Build each segment standalone, with the headers it will carry. */
	for (unsigned k = 0; k < nseg; k++) {
		struct wire_pkt *s = &segs[k];
		size_t n;

		if (ipv6)
			v6vlan(s, HOST_A, HOST_B, acks ? WIRE_NOT_ECT : WIRE_ECT0);
		else
			v4(s, HOST_A, HOST_B, acks ? WIRE_NOT_ECT : WIRE_ECT0);
		s->ip4.id = (uint16_t)(first_id + k);
		s->bth.dqpn = QP_B;
		if (acks) {
			s->bth.opcode = OP_RC_ACK;
			s->bth.psn = 0x700 + 3 * k;
			/* The second is a NAK(PSN sequence error), the others ACKs. */
			s->aeth = (struct wire_aeth){ k == 1 ? 0x60 : 0x1F, 7 + k };
			plen[k] = 0;
		} else {
			s->bth.opcode = k == 0 ? OP_RC_WRITE_FIRST :
					k == nseg - 1 ? OP_RC_WRITE_LAST : OP_RC_WRITE_MIDDLE;
			s->bth.psn = 0x600 + k;
			s->bth.ackreq = k == nseg - 1;
			/* The RETH takes 16 bytes of the first packet's share. */
			plen[k] = k == 0 ? middle - WIRE_RETH_LEN : k == nseg - 1 ? last : middle;
			s->reth = (struct wire_reth){ 0x7f0000200000ULL, 0x4321,
						      (uint32_t)(middle - WIRE_RETH_LEN +
								 (nseg - 2) * middle + last) };
		}
		pattern(payload, plen[k], k);
		n = wire_build(one, sizeof(one), s, payload, plen[k]);
		if (!n)
			die("%s: wire_build failed", name);
		seglen[k] = n - s->bth_off;
		if (k == 0)
			hdr = s->bth_off;
		segoff[k] = hdr + total;
		if (segoff[k] + seglen[k] > sizeof(agg))
			die("%s: too big", name);
		memcpy(agg + segoff[k], one + s->bth_off, seglen[k]);
		if (k == 0)
			memcpy(agg, one, hdr);	/* Ethernet, IP, UDP of segment 0 */
		total += seglen[k];
	}
	for (unsigned k = 0; k + 1 < nseg; k++)
		if (seglen[k] != seglen[0])
			die("%s: segment %u is %zu bytes, not %zu", name, k, seglen[k], seglen[0]);
	/* The aggregate's own headers: the lengths of the whole datagram. */
	udp_off = hdr - WIRE_UDP_LEN;
	ip_off = udp_off - (ipv6 ? WIRE_IPV6_LEN : WIRE_IPV4_LEN);
	wire_put16(agg + udp_off + 4, (uint16_t)(WIRE_UDP_LEN + total));
	if (ipv6) {
		wire_put16(agg + ip_off + 4, (uint16_t)(WIRE_UDP_LEN + total));
	} else {
		wire_put16(agg + ip_off + 2, (uint16_t)(WIRE_IPV4_LEN + WIRE_UDP_LEN + total));
		wire_put16(agg + ip_off + 4, first_id);
		wire_put16(agg + ip_off + 10, 0);
		wire_put16(agg + ip_off + 10, wire_ipv4_csum(agg + ip_off, WIRE_IPV4_LEN));
	}
	/* Each ICRC again, from a modified copy of the aggregate's headers. */
	for (unsigned k = 0; k < nseg; k++) {
		uint8_t iph[WIRE_IPV6_LEN], udph[WIRE_UDP_LEN];
		size_t hl = ipv6 ? WIRE_IPV6_LEN : WIRE_IPV4_LEN;
		const uint8_t *at = agg + segoff[k] + seglen[k] - WIRE_ICRC_LEN;
		uint32_t want, stored;

		memcpy(iph, agg + ip_off, hl);
		memcpy(udph, agg + udp_off, WIRE_UDP_LEN);
		wire_put16(udph + 4, (uint16_t)(WIRE_UDP_LEN + seglen[k]));
		if (ipv6) {
			wire_put16(iph + 4, (uint16_t)(WIRE_UDP_LEN + seglen[k]));
		} else {
			wire_put16(iph + 2, (uint16_t)(hl + WIRE_UDP_LEN + seglen[k]));
			wire_put16(iph + 4, (uint16_t)(first_id + k));
		}
		want = icrc_rocev2(iph, hl, udph, agg + segoff[k], seglen[k] - WIRE_ICRC_LEN);
		stored = (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 |
			 (uint32_t)at[3] << 24;
		if (want != stored)
			die("%s: segment %u ICRC 0x%08x, wire_build made 0x%08x", name, k, want,
			    stored);
	}
	/* And the aggregate as a whole must not pass as one packet. */
	memset(&p, 0, sizeof(p));
	if (wire_decode(&p, agg, segoff[nseg - 1] + seglen[nseg - 1], WIRE_LINK_ETH,
			ROCEV2_UDP_PORT) != WIRE_OK ||
	    icrc_verify(agg, &p) != CRC_BAD)
		die("%s: the aggregate decodes as one good packet", name);
	off = segoff[nseg - 1] + seglen[nseg - 1];
	out_write(&o, agg, off, off);
	for (unsigned k = 0; k < nseg; k++) {
		struct man_extra x = { .icrc = "ok", .gso_segment = k + 1, .gso_segments = nseg };
		struct wire_pkt in = segs[k];

		man_pkt(&o, &in, plen[k], &x);
	}
	out_close(&o);
}

/* RoCEv2 to UDP port 9999: RDMA only with --udp-port 9999. */
static void gen_udp_port(struct gen *g)
{
	struct out o;
	struct wire_pkt p;

	out_open(g, &o, "udp-port-9999.pcap", DLT_EN10MB, 65535);
	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.udp.dport = 9999;
	p.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY, .pkey = 0xFFFF, .dqpn = QP_B,
				   .ackreq = true, .psn = 0x700 };
	emit(&o, &p, 48);
	v4(&p, HOST_B, HOST_A, WIRE_NOT_ECT);
	p.udp.dport = 9999;
	p.bth = (struct wire_bth){ .opcode = OP_RC_ACK, .pkey = 0xFFFF, .dqpn = QP_A, .psn = 0x700 };
	p.aeth = (struct wire_aeth){ ACK_OK, 1 };
	emit(&o, &p, 0);
	out_close(&o);
}

/* RoCE between A and B, interleaved with plain UDP and ARP noise:
 * frames 1 ARP, 2 SEND A>B, 3 UDP, 4 ACK B>A, 5 SEND A>B, 6 UDP, 7 ACK,
 * 8 ARP, 9 SEND, 10 ACK, 11 UDP, 12 SEND, 13 ACK. */
static void gen_mixed(struct gen *g)
{
	struct out o;
	uint32_t psn = 0x800;

	out_open(g, &o, "mixed.pcap", DLT_EN10MB, 65535);
	emit_arp(&o, HOST_A, HOST_B);
	for (int i = 0; i < 4; i++, psn++) {
		rc(&o, true, OP_RC_SEND_ONLY, psn, true, 100, 0, 0, WIRE_ECT0);
		if (i < 2)
			emit_other_udp(&o, HOST_B, HOST_A, 40);
		rc(&o, false, OP_RC_ACK, psn, false, 0, ACK_OK, (uint32_t)i + 1, WIRE_NOT_ECT);
		if (i == 1)
			emit_arp(&o, HOST_B, HOST_A);
		if (i == 2)
			emit_other_udp(&o, HOST_A, HOST_B, 40);
	}
	out_close(&o);
}

/* 64-bit fields with the top bit set: kernel virtual addresses (as ULPs
 * register), and atomic operands such as compare = -1. */
static void gen_big_values(struct gen *g)
{
	struct out o;
	struct wire_pkt p;

	out_open(g, &o, "big-values.pcap", DLT_EN10MB, 65535);
	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.bth = (struct wire_bth){ .opcode = OP_RC_READ_REQUEST, .pkey = 0xFFFF, .dqpn = QP_B,
				   .ackreq = true, .psn = 0x900 };
	p.reth = (struct wire_reth){ 0xffff888012345000ULL, 0xfffffff0u, 0xffffffffu };
	emit(&o, &p, 0);
	v4(&p, HOST_A, HOST_B, WIRE_ECT0);
	p.bth = (struct wire_bth){ .opcode = OP_RC_CMP_SWAP, .pkey = 0xFFFF, .dqpn = QP_B,
				   .ackreq = true, .psn = 0x901 };
	p.atomiceth = (struct wire_atomiceth){ 0xffffc90000001000ULL, 0x80000001u,
					       0x8000000000000000ULL, 0xffffffffffffffffULL };
	emit(&o, &p, 0);
	v4(&p, HOST_B, HOST_A, WIRE_NOT_ECT);
	p.bth = (struct wire_bth){ .opcode = OP_RC_ATOMIC_ACK, .pkey = 0xFFFF, .dqpn = QP_A,
				   .psn = 0x901 };
	p.aeth = (struct wire_aeth){ ACK_OK, 2 };
	p.atomicacketh.orig = 0xfedcba9876543210ULL;
	emit(&o, &p, 0);
	out_close(&o);
}

/* A long WRITE stream of 1082-byte frames, for -w rotation (-C/-W). */
#define BULK_FRAMES 2500
static void gen_bulk(struct gen *g)
{
	uint8_t frame[2048], payload[1024];
	struct out o;
	struct wire_pkt p;

	out_open(g, &o, "bulk.pcap", DLT_EN10MB, 65535);
	pattern(payload, sizeof(payload), 11);
	for (uint32_t i = 0; i < BULK_FRAMES; i++) {
		size_t n;

		v4(&p, HOST_A, HOST_B, WIRE_ECT0);
		p.bth = (struct wire_bth){ .opcode = OP_RC_WRITE_MIDDLE, .pkey = 0xFFFF,
					   .dqpn = QP_B, .psn = 0x1000 + i, .ackreq = i % 64 == 63 };
		n = wire_build(frame, sizeof(frame), &p, payload, sizeof(payload));
		out_write(&o, frame, n, n);	/* not in the manifest: too many */
	}
	out_close(&o);
}

/*
 * truncated-file.pcap: retransmit.pcap cut in the middle of its 4th
 * record's data (records 1-3 whole): a reader must print 3 packets and
 * then report the truncation.
 */
static void gen_truncated_file(struct gen *g)
{
	char a[4096], b[4096];
	uint8_t *buf;
	FILE *in, *out;
	size_t n, off = 24;

	snprintf(a, sizeof(a), "%s/retransmit.pcap", g->outdir);
	snprintf(b, sizeof(b), "%s/truncated-file.pcap", g->outdir);
	buf = malloc(1 << 20);
	in = fopen(a, "rb");
	out = fopen(b, "wb");
	if (!buf || !in || !out)
		die("cannot copy %s to %s: %s", a, b, strerror(errno));
	n = fread(buf, 1, 1 << 20, in);
	/* Walk 3 records (host-order headers, as pcap_dump wrote them). */
	for (int r = 0; r < 3; r++) {
		uint32_t caplen;

		if (off + 16 > n)
			die("retransmit.pcap is too short");
		memcpy(&caplen, buf + off + 8, 4);
		off += 16 + caplen;
	}
	off += 16 + 20;		/* the 4th record's header and 20 of its bytes */
	if (off > n || fwrite(buf, 1, off, out) != off)
		die("short copy %s", b);
	fclose(in);
	fclose(out);
	free(buf);
}

static void gen_not_a_capture(struct gen *g)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/not-a-capture.pcap", g->outdir);
	f = fopen(path, "w");
	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fputs("This is not a packet capture, just text with a .pcap name.\n", f);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct gen g = { 0 };
	char path[4096];

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: pcapgen OUTDIR\n");
		return 2;
	}
	g.outdir = argv[1];
	if (mkdir(g.outdir, 0755) < 0 && errno != EEXIST)
		die("cannot create %s: %s", g.outdir, strerror(errno));
	snprintf(path, sizeof(path), "%s/manifest.jsonl", g.outdir);
	g.manifest = fopen(path, "w");
	if (!g.manifest)
		die("cannot write %s: %s", path, strerror(errno));

	gen_opcodes(&g, "opcodes-ipv4.pcap", false);
	gen_opcodes(&g, "opcodes-ipv6-vlan.pcap", true);
	gen_rocev1(&g);
	gen_ib(&g);
	gen_cooked(&g, "sll.pcap", false);
	gen_cooked(&g, "sll2.pcap", true);
	gen_raw_ip(&g);
	gen_snaplen(&g);
	gen_cut_in_reth(&g);
	gen_icrc_bad(&g);
	gen_truncated_header(&g);
	gen_unknown_opcode(&g);
	gen_retransmit(&g);
	gen_rnr(&g);
	gen_access_error(&g);
	gen_dup_ack(&g);
	gen_congestion(&g);
	gen_gso(&g, "gso.pcap", false, 4, 0x1000, false);
	gen_gso(&g, "gso-ipv6.pcap", true, 3, 0, false);
	gen_udp_port(&g);
	gen_mixed(&g);
	gen_big_values(&g);
	gen_bulk(&g);
	gen_truncated_file(&g);
	gen_not_a_capture(&g);
	/* Last, so that the fixtures before them keep their times. */
	gen_gso(&g, "gso-acks.pcap", false, 3, 0, true);
	gen_unreliable(&g);
	gen_cut_in_deth(&g);

	if (fclose(g.manifest) != 0)
		die("cannot write the manifest: %s", strerror(errno));
	return 0;
}
