// SPDX-License-Identifier: MIT
/*
 * Packet rendering tests: hand-checked text lines for each encapsulation,
 * every opcode and extended header in every encapsulation (fields checked
 * against printf-built text), the direct NDJSON writer against jansson's
 * dump of the tree form (byte for byte), the documented JSON keys and
 * types, IPv6 text against inet_ntop(), AETH text against
 * wire_aeth_describe(), JSON reals against jansson, time of day, and
 * truncation at every buffer size.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render.h"
#include "unit.h"
#include "wire.h"

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* 2026-12-02 10:04:07 UTC, as in the Soft-RoCE captures. */
#define TS0 1796205847597646000ULL

static void fill_fields(struct wire_pkt *p, uint8_t opcode)
{
	p->bth.opcode = opcode;
	p->bth.se = rnd() & 1;
	p->bth.mig = rnd() & 1;
	p->bth.pkey = (uint16_t)rnd();
	p->bth.becn = opcode == OP_CNP || (rnd() & 7) == 0;
	p->bth.fecn = (rnd() & 7) == 0;
	p->bth.dqpn = (uint32_t)rnd() & 0xFFFFFF;
	p->bth.ackreq = rnd() & 1;
	p->bth.psn = (uint32_t)rnd() & 0xFFFFFF;
	p->rdeth.eecnxt = (uint32_t)rnd() & 0xFFFFFF;
	p->deth.qkey = (uint32_t)rnd();
	p->deth.srcqp = (uint32_t)rnd() & 0xFFFFFF;
	p->xrceth.xrcsrq = (uint32_t)rnd() & 0xFFFFFF;
	p->feth.sel = (uint8_t)(rnd() & 3);
	p->feth.placement = (uint8_t)(rnd() & 3);
	/* Small and huge values: leading zeros, and the JSON clamp at INT64_MAX. */
	p->reth.va = rnd() >> (rnd() & 63);
	p->reth.rkey = (uint32_t)rnd() >> (rnd() & 31);
	p->reth.dmalen = (uint32_t)rnd();
	p->atomiceth.va = rnd() & ~7ULL;
	p->atomiceth.rkey = (uint32_t)rnd();
	p->atomiceth.swap_add = rnd() >> (rnd() & 63);
	p->atomiceth.compare = rnd();
	p->aeth.syndrome = (uint8_t)rnd() & 0x7F;
	p->aeth.msn = (uint32_t)rnd() & 0xFFFFFF;
	p->atomicacketh.orig = rnd();
	p->immdt = (uint32_t)rnd();
	p->ieth = (uint32_t)rnd() >> (rnd() & 31);
}

enum { ENC_V4, ENC_V6_VLAN, ENC_V6_MAPPED, ENC_V1, ENC_V1_V6, ENC_IB, ENC_IB_GRH, ENC_COUNT };

static void setup_encap(struct wire_pkt *p, int which)
{
	static const uint8_t a4[4] = { 198, 18, 0, 1 }, b4[4] = { 10, 0, 100, 255 };
	static const uint8_t gid_a[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 1 };
	static const uint8_t gid_b[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 2 };
	static const uint8_t v6_a[16] = { 0xfe, 0x80, [15] = 1 };
	static const uint8_t v6_b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0xab, 0xcd };

	switch (which) {
	case ENC_V4:		/* RoCEv2 over IPv4 with Ethernet, ECN by random */
		p->encap = WIRE_ENCAP_ROCEV2;
		p->layers = WIRE_L_ETH;
		memcpy(p->ip4.src, a4, 4);
		memcpy(p->ip4.dst, b4, 4);
		p->ip4.ecn = (uint8_t)(rnd() & 3);
		p->ip4.dscp = 26;
		p->ip4.ttl = 64;
		p->ip4.id = (uint16_t)rnd();
		p->ip4.frag = rnd() & 1 ? 0x4000 : 0;
		p->udp.sport = (uint16_t)rnd();
		break;
	case ENC_V6_VLAN:	/* RoCEv2 over IPv6, two VLAN tags */
		p->encap = WIRE_ENCAP_ROCEV2;
		p->layers = WIRE_L_ETH | WIRE_L_VLAN | WIRE_L_IPV6;
		p->nvlan = 2;
		p->vlan[0] = (struct wire_vlan){ ETHERTYPE_QINQ, 3, false, 100 };
		p->vlan[1] = (struct wire_vlan){ ETHERTYPE_VLAN, 5, true, 4094 };
		memcpy(p->ip6.src, v6_a, 16);
		memcpy(p->ip6.dst, v6_b, 16);
		p->ip6.flow_label = (uint32_t)rnd() & 0xFFFFF;
		p->ip6.ecn = (uint8_t)(rnd() & 3);
		p->ip6.hop_limit = 255;
		p->udp.sport = 0xD000;
		break;
	case ENC_V6_MAPPED:	/* RoCEv2 over IPv6 with IPv4-mapped addresses */
		p->encap = WIRE_ENCAP_ROCEV2;
		p->layers = WIRE_L_ETH | WIRE_L_IPV6;
		memcpy(p->ip6.src, gid_a, 16);
		memcpy(p->ip6.dst, gid_b, 16);
		p->udp.sport = 1;
		break;
	case ENC_V1:		/* RoCEv1, IPv4-mapped GIDs, one VLAN */
		p->encap = WIRE_ENCAP_ROCEV1;
		p->layers = WIRE_L_ETH | WIRE_L_VLAN;
		p->nvlan = 1;
		p->vlan[0] = (struct wire_vlan){ ETHERTYPE_VLAN, 0, false, 7 };
		memcpy(p->grh.sgid, gid_a, 16);
		memcpy(p->grh.dgid, gid_b, 16);
		p->grh.tclass = 0x68;
		p->grh.hoplmt = 1;
		p->grh.flow_label = 7;
		break;
	case ENC_V1_V6:		/* RoCEv1 with link-local GIDs */
		p->encap = WIRE_ENCAP_ROCEV1;
		p->layers = WIRE_L_ETH;
		memcpy(p->grh.sgid, v6_a, 16);
		memcpy(p->grh.dgid, v6_b, 16);
		break;
	case ENC_IB:		/* native IB, LRH only */
		p->encap = WIRE_ENCAP_IB;
		p->lrh = (struct wire_lrh){ .vl = 2, .sl = 3, .lnh = 2, .dlid = 5, .slid = 0xBEEF };
		break;
	default:		/* native IB with a GRH */
		p->encap = WIRE_ENCAP_IB;
		p->lrh = (struct wire_lrh){ .vl = 0, .sl = 1, .lnh = 3, .dlid = 0x1234, .slid = 1 };
		memcpy(p->grh.sgid, v6_b, 16);
		memcpy(p->grh.dgid, gid_b, 16);
		p->grh.hoplmt = 64;
		break;
	}
}

static enum wire_link link_of(int which)
{
	return which >= ENC_IB ? WIRE_LINK_IB : WIRE_LINK_ETH;
}

/* Builds and decodes one packet; its view, with the CRCs verified. */
static bool make_pkt(struct wire_pkt *b, uint8_t *frame, size_t cap, uint8_t op, int enc,
		     size_t len, struct pkt_view *v)
{
	static uint8_t payload[2048];
	struct wire_pkt a = { 0 };
	size_t n;

	fill_fields(&a, op);
	setup_encap(&a, enc);
	n = wire_build(frame, cap, &a, payload, len);
	if (!n || wire_decode(b, frame, n, link_of(enc), ROCEV2_UDP_PORT) != WIRE_OK)
		return false;
	*v = (struct pkt_view){ .frame = 1 + (rnd() & 0xFFFF), .ts_ns = TS0 + (rnd() % 4000000000ULL),
				.p = b, .status = WIRE_OK, .icrc = icrc_verify(frame, b),
				.vcrc = vcrc_verify(frame, b), .wire_len = n };
	return true;
}

static char *tree_dump(const struct pkt_view *v, bool verbose)
{
	json_t *o = render_packet_json(v, verbose);
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(o);
	return s;
}

/* jansson's integers stop at INT64_MAX; the NDJSON writer prints 64-bit
 * wire values exactly.  Put the exact value where the tree clamped it. */
static char *unclamp(char *json, const char *key, uint64_t v)
{
	static const char clamp[] = "9223372036854775807";
	char *at = strstr(json, key), *out;
	char num[32];

	if (v <= INT64_MAX || !at || strncmp(at + strlen(key), clamp, strlen(clamp)))
		return json;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	out = malloc(strlen(json) + sizeof(num));
	memcpy(out, json, (size_t)(at - json) + strlen(key));
	strcpy(out + (at - json) + strlen(key), num);
	strcat(out, at + strlen(key) + strlen(clamp));
	free(json);
	return out;
}

/* The NDJSON line is exactly jansson's dump of the tree (64-bit values unclamped). */
static void check_ndjson(struct unit *u, const struct pkt_view *v, bool verbose)
{
	char buf[4096];
	size_t n = render_packet_ndjson(buf, sizeof(buf), v, verbose);
	char *want = tree_dump(v, verbose);
	const struct wire_pkt *p = v->p;

	want = unclamp(want, "\"reth\":{\"va\":", p->reth.va);
	want = unclamp(want, "\"atomic\":{\"va\":", p->atomiceth.va);
	want = unclamp(want, "\"swap_add\":", p->atomiceth.swap_add);
	want = unclamp(want, "\"compare\":", p->atomiceth.compare);
	want = unclamp(want, "\"orig\":", p->atomicacketh.orig);

	CHECK(u, n > 0);
	CHECK_EQ(u, n, strlen(buf));
	if (strcmp(buf, want) != 0) {
		u->failures++;
		printf("#   ndjson: %s\n#   jansson: %s\n", buf, want);
	}
	free(want);
}

static size_t line_of(char *buf, size_t cap, const struct pkt_view *v, bool verbose)
{
	struct time_cache tc = { .utc = true };

	return render_packet_line(buf, cap, v, verbose, &tc);
}

/* Hand-checked lines, one per encapsulation and kind of header. */
static void test_lines_hand_checked(struct unit *u)
{
	uint8_t frame[2048];
	struct wire_pkt a, b;
	struct pkt_view v;
	char line[4096];
	size_t n;

	/* RoCEv2/IPv4, ECT0, RDMA WRITE Only with a RETH. */
	memset(&a, 0, sizeof(a));
	setup_encap(&a, ENC_V4);
	a.ip4.ecn = WIRE_ECT0;
	a.ip4.id = 0x1234;
	a.ip4.frag = 0x4000;
	a.udp.sport = 49441;
	memcpy(a.eth.src, (uint8_t[]){ 0x52, 0x54, 0, 0x12, 0x34, 0x56 }, 6);
	memcpy(a.eth.dst, (uint8_t[]){ 0x52, 0x54, 0, 0xab, 0xcd, 0xef }, 6);
	a.bth = (struct wire_bth){ .opcode = OP_RC_WRITE_ONLY, .pkey = 0xFFFF, .dqpn = 0x11,
				   .ackreq = true, .psn = 8663699 };
	a.reth = (struct wire_reth){ .va = 0x55f6e2696000ULL, .rkey = 0x243, .dmalen = 3 };
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"abc", 3);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	v = (struct pkt_view){ .frame = 1, .ts_ns = TS0, .p = &b, .icrc = icrc_verify(frame, &b),
			       .vcrc = CRC_NONE, .wire_len = n };
	n = line_of(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "10:04:07.597646000 198.18.0.1:49441 > 10.0.100.255:4791 ECT0 "
		  "RC RDMA Write Only qp 0x000011 psn 8663699 A reth va 0x55f6e2696000 "
		  "rkey 0x00000243 len 3 payload 3 ICRC ok");
	CHECK_EQ(u, n, strlen(line));
	line_of(line, sizeof(line), &v, true);
	CHECK_STR(u, line, "10:04:07.597646000 198.18.0.1:49441 > 10.0.100.255:4791 ECT0 "
		  "RC RDMA Write Only qp 0x000011 psn 8663699 A "
		  "eth 52:54:00:12:34:56 > 52:54:00:ab:cd:ef ip dscp 26 ttl 64 id 0x1234 DF len 64 "
		  "udp len 44 csum 0x0000 pkey 0xffff se 0 m 0 pad 1 tver 0 fecn 0 becn 0 "
		  "reth va 0x55f6e2696000 rkey 0x00000243 len 3 payload 3 ICRC ok");
	render_packet_ndjson(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "{\"frame\":1,\"time\":1796205847.597646,\"time_ns\":1796205847597646000,"
		  "\"src\":\"198.18.0.1\",\"dst\":\"10.0.100.255\",\"src_port\":49441,"
		  "\"dst_port\":4791,\"encap\":\"rocev2\",\"ecn\":\"ect0\",\"opcode\":10,"
		  "\"opcode_name\":\"RC RDMA Write Only\",\"dest_qp\":17,\"psn\":8663699,"
		  "\"ack_req\":true,\"reth\":{\"va\":94518848872448,\"rkey\":579,\"dma_len\":3},"
		  "\"payload_len\":3,\"icrc\":\"ok\"}");
	check_ndjson(u, &v, false);
	check_ndjson(u, &v, true);

	/* The same as segment 2 of 4 of a GSO aggregate, BAD ICRC, CE, BECN, unknown opcode. */
	b.ip4.ecn = WIRE_CE;
	b.bth.becn = true;
	v.gso_index = 1;
	v.gso_count = 4;
	v.icrc = CRC_BAD;
	line_of(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "10:04:07.597646000 198.18.0.1:49441 > 10.0.100.255:4791 CE! "
		  "RC RDMA Write Only qp 0x000011 psn 8663699 A BECN reth va 0x55f6e2696000 "
		  "rkey 0x00000243 len 3 payload 3 [GSO 2/4] ICRC BAD");
	check_ndjson(u, &v, false);
	b.op = NULL;
	b.bth.opcode = 0x1E;
	b.ext = 0;
	v.status = WIRE_MALFORMED;
	v.gso_count = 0;
	v.icrc = CRC_UNCHECKED;
	b.ip4.ecn = WIRE_ECT1;
	line_of(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "10:04:07.597646000 198.18.0.1:49441 > 10.0.100.255:4791 ECT1 "
		  "[unknown opcode 0x1e] qp 0x000011 psn 8663699 A BECN [malformed] ICRC unchecked");
	check_ndjson(u, &v, false);
	check_ndjson(u, &v, true);

	/* RoCEv2/IPv6 with two VLAN tags, CE, an ACK carrying a NAK. */
	memset(&a, 0, sizeof(a));
	setup_encap(&a, ENC_V6_VLAN);
	a.ip6.ecn = WIRE_CE;
	a.ip6.flow_label = 0xABCDE;
	a.bth = (struct wire_bth){ .opcode = OP_RC_ACK, .pkey = 0xFFFF, .dqpn = 0xABCDEF, .psn = 7 };
	a.aeth = (struct wire_aeth){ .syndrome = wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR),
				     .msn = 5 };
	n = wire_build(frame, sizeof(frame), &a, NULL, 0);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	v = (struct pkt_view){ .frame = 2, .ts_ns = TS0 + 5, .p = &b, .icrc = icrc_verify(frame, &b),
			       .vcrc = CRC_NONE, .wire_len = n };
	line_of(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "10:04:07.597646005 [fe80::1]:53248 > [2001:db8::1:0:0:abcd]:4791 "
		  "vlan 100 vlan 4094 CE! RC Acknowledge qp 0xabcdef psn 7 "
		  "aeth NAK PSN sequence error msn 5 ICRC ok");
	line_of(line, sizeof(line), &v, true);
	CHECK(u, strstr(line, " vlan 100 pcp 3 vlan 4094 pcp 5 dei ip6 dscp 0 flow 0xabcde "
			"hlim 255 len 28 udp len 28 csum 0x0000 pkey 0xffff") != NULL);
	CHECK(u, strstr(line, "CE!") != NULL);
	CHECK(u, strstr(line, " vlan 100 vlan") == NULL);	/* -v: the VLANs once */
	render_packet_ndjson(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "{\"frame\":2,\"time\":1796205847.597646,\"time_ns\":1796205847597646005,"
		  "\"src\":\"fe80::1\",\"dst\":\"2001:db8::1:0:0:abcd\",\"src_port\":53248,"
		  "\"dst_port\":4791,\"encap\":\"rocev2\",\"vlan\":100,\"ecn\":\"ce\",\"opcode\":17,"
		  "\"opcode_name\":\"RC Acknowledge\",\"dest_qp\":11259375,\"psn\":7,"
		  "\"ack_req\":false,\"aeth\":{\"syndrome\":96,\"kind\":\"nak\",\"code\":0,"
		  "\"msn\":5,\"text\":\"NAK PSN sequence error\"},\"payload_len\":0,\"icrc\":\"ok\"}");
	check_ndjson(u, &v, true);

	/* RoCEv1 with IPv4-mapped GIDs: addresses without ports, no ECN. */
	memset(&a, 0, sizeof(a));
	setup_encap(&a, ENC_V1);
	a.bth = (struct wire_bth){ .opcode = OP_RC_SEND_ONLY_IMM, .pkey = 0x8001, .dqpn = 1, .psn = 0 };
	a.immdt = 0xDEADBEEF;
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"hello", 5);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_ETH, ROCEV2_UDP_PORT), WIRE_OK);
	v = (struct pkt_view){ .frame = 3, .ts_ns = TS0 + 1000000000ULL, .p = &b,
			       .icrc = icrc_verify(frame, &b), .vcrc = CRC_NONE, .wire_len = n };
	line_of(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "10:04:08.597646000 198.18.0.1 > 198.18.0.2 RoCEv1 vlan 7 "
		  "RC Send Only Immediate qp 0x000001 psn 0 imm 0xdeadbeef payload 5 ICRC ok");
	line_of(line, sizeof(line), &v, true);
	CHECK(u, strstr(line, " grh tclass 0x68 flow 0x00007 paylen 28 hoplmt 1 pkey 0x8001 ") != NULL);
	check_ndjson(u, &v, false);

	/* Native IB without a GRH: LIDs, a VCRC, UD with a DETH. */
	memset(&a, 0, sizeof(a));
	setup_encap(&a, ENC_IB);
	a.bth = (struct wire_bth){ .opcode = OP_UD_SEND_ONLY, .pkey = 0xFFFF, .dqpn = 1, .psn = 42,
				   .se = true };
	a.deth = (struct wire_deth){ .qkey = 0x80010000, .srcqp = 0x123 };
	n = wire_build(frame, sizeof(frame), &a, (const uint8_t *)"0123456789", 10);
	CHECK_EQ(u, wire_decode(&b, frame, n, WIRE_LINK_IB, ROCEV2_UDP_PORT), WIRE_OK);
	v = (struct pkt_view){ .frame = 4, .ts_ns = TS0, .p = &b, .icrc = icrc_verify(frame, &b),
			       .vcrc = vcrc_verify(frame, &b), .wire_len = n };
	line_of(line, sizeof(line), &v, false);
	CHECK_STR(u, line, "10:04:07.597646000 lid 0xbeef > lid 0x0005 UD Send Only qp 0x000001 "
		  "psn 42 deth qkey 0x80010000 src_qp 0x000123 payload 10 ICRC ok VCRC ok");
	line_of(line, sizeof(line), &v, true);
	CHECK(u, strstr(line, " psn 42 lrh vl 2 sl 3 lnh 2 pktlen 11 pkey 0xffff se 1 m 0 pad 2 ") != NULL);
	render_packet_ndjson(line, sizeof(line), &v, false);
	CHECK(u, strstr(line, "\"src\":\"lid 0xbeef\",\"dst\":\"lid 0x0005\",\"slid\":48879,"
			"\"dlid\":5,\"encap\":\"ib\",\"opcode\":100,") != NULL);
	CHECK(u, strstr(line, ",\"icrc\":\"ok\",\"vcrc\":\"ok\"}") != NULL);
	check_ndjson(u, &v, true);
}

/* Cut frames: no BTH, so the line ends in the status. */
static void test_truncated(struct unit *u)
{
	uint8_t frame[512];
	struct wire_pkt a = { 0 }, b;
	struct pkt_view v;
	char line[4096];
	size_t n;
	int seen = 0;

	setup_encap(&a, ENC_V4);
	a.ip4.ecn = WIRE_NOT_ECT;
	a.udp.sport = 1000;
	fill_fields(&a, OP_RC_READ_REQUEST);
	n = wire_build(frame, sizeof(frame), &a, NULL, 0);
	for (size_t cap = 0; cap < n; cap++) {
		enum wire_status st = wire_decode(&b, frame, cap, WIRE_LINK_ETH, ROCEV2_UDP_PORT);

		if (st == WIRE_NOT_RDMA)
			continue;
		v = (struct pkt_view){ .frame = 9, .ts_ns = TS0, .p = &b, .status = st,
				       .icrc = CRC_NONE, .vcrc = CRC_NONE, .wire_len = n };
		line_of(line, sizeof(line), &v, false);
		if (!(b.layers & WIRE_L_BTH)) {
			seen++;
			CHECK_EQ(u, st, WIRE_TRUNCATED);
			CHECK(u, strlen(line) > 11);
			CHECK_STR(u, line + strlen(line) - 12, " [truncated]");
		} else if (st != WIRE_OK) {
			CHECK(u, strstr(line, " [truncated]") != NULL);
		}
		check_ndjson(u, &v, false);
		check_ndjson(u, &v, true);
	}
	CHECK(u, seen > 0);

	/* Cut in the UDP header: the addresses are known, the BTH is not. */
	CHECK_EQ(u, wire_decode(&b, frame, 14 + 20 + 4, WIRE_LINK_ETH, ROCEV2_UDP_PORT),
		 WIRE_TRUNCATED);
	v = (struct pkt_view){ .frame = 9, .ts_ns = TS0, .p = &b, .status = WIRE_TRUNCATED,
			       .icrc = CRC_NONE, .vcrc = CRC_NONE };
	line_of(line, sizeof(line), &v, false);
	if (b.layers & WIRE_L_IPV4)
		CHECK_STR(u, line, "10:04:07.597646000 198.18.0.1 > 10.0.100.255 [truncated]");
	else
		CHECK_STR(u, line, "10:04:07.597646000 [truncated]");
	render_packet_ndjson(line, sizeof(line), &v, false);
	CHECK(u, strstr(line, ",\"status\":\"truncated\"}") != NULL);
	CHECK(u, strstr(line, "opcode") == NULL);
}

/* A field's text as printf writes it must appear in the line. */
#define WANT(u, line, ...)                                                   \
	do {                                                                 \
		char want_[256];                                             \
		snprintf(want_, sizeof(want_), __VA_ARGS__);                 \
		if (!strstr((line), want_)) {                                \
			(u)->failures++;                                     \
			printf("#   %s:%d: \"%s\" not in \"%s\"\n", __FILE__,    \
			       __LINE__, want_, (line));                     \
		}                                                            \
	} while (0)

static void check_line_fields(struct unit *u, const struct pkt_view *v, const char *line,
			      bool verbose)
{
	const struct wire_pkt *p = v->p;
	char d[64];

	WANT(u, line, " %s qp 0x%06x psn %u%s", p->op->name, p->bth.dqpn, p->bth.psn,
	     p->bth.ackreq ? " A" : "");
	if (p->ext & WIRE_X_RDETH)
		WANT(u, line, " rdeth eecnxt 0x%06x", p->rdeth.eecnxt);
	if (p->ext & WIRE_X_DETH)
		WANT(u, line, " deth qkey 0x%08x src_qp 0x%06x", p->deth.qkey, p->deth.srcqp);
	if (p->ext & WIRE_X_XRCETH)
		WANT(u, line, " xrceth srq 0x%06x", p->xrceth.xrcsrq);
	if (p->ext & WIRE_X_FETH)
		WANT(u, line, " feth sel %u placement %u", p->feth.sel, p->feth.placement);
	if (p->ext & WIRE_X_RETH)
		WANT(u, line, " reth va 0x%" PRIx64 " rkey 0x%08x len %u", p->reth.va,
		     p->reth.rkey, p->reth.dmalen);
	if (p->ext & WIRE_X_ATOMICETH)
		WANT(u, line, " atomic va 0x%" PRIx64 " rkey 0x%08x swap_add 0x%" PRIx64
		     " compare 0x%" PRIx64, p->atomiceth.va, p->atomiceth.rkey,
		     p->atomiceth.swap_add, p->atomiceth.compare);
	if (p->ext & WIRE_X_AETH) {
		wire_aeth_describe(d, sizeof(d), p->aeth.syndrome);
		WANT(u, line, " aeth %s msn %u", d, p->aeth.msn);
	}
	if (p->ext & WIRE_X_ATOMICACKETH)
		WANT(u, line, " orig 0x%" PRIx64, p->atomicacketh.orig);
	if (p->ext & WIRE_X_IMMDT)
		WANT(u, line, " imm 0x%08x", p->immdt);
	if (p->ext & WIRE_X_IETH)
		WANT(u, line, " inv_rkey 0x%08x", p->ieth);
	if (p->op->payload)
		WANT(u, line, " payload %zu ICRC ok", p->payload_len);
	if (verbose) {
		WANT(u, line, " pkey 0x%04x se %u m %u pad %u tver %u fecn %u becn %u",
		     p->bth.pkey, p->bth.se, p->bth.mig, p->bth.padcnt, p->bth.tver,
		     p->bth.fecn, p->bth.becn);
		if (p->layers & WIRE_L_IPV4)
			WANT(u, line, " ip dscp %u ttl %u id 0x%04x%s len %u", p->ip4.dscp,
			     p->ip4.ttl, p->ip4.id, p->ip4.frag & 0x4000 ? " DF" : "",
			     p->ip4.total_len);
		if (p->layers & WIRE_L_IPV6)
			WANT(u, line, " ip6 dscp %u flow 0x%05x hlim %u len %u", p->ip6.dscp,
			     p->ip6.flow_label, p->ip6.hop_limit, p->ip6.payload_len);
	} else if (p->bth.becn) {
		WANT(u, line, " psn %u%s BECN", p->bth.psn, p->bth.ackreq ? " A" : "");
	}
	CHECK(u, strlen(line) > 8 && strcmp(line + strlen(line) - (v->vcrc == CRC_OK ? 16 : 8),
					    v->vcrc == CRC_OK ? " ICRC ok VCRC ok" : " ICRC ok") == 0);
}

/* jansson refuses integers above INT64_MAX, which the NDJSON carries
 * exactly (64-bit addresses): map such numbers to 0 before parsing. */
static char *small_ints(const char *text)
{
	char *out = strdup(text), *w = out;
	bool in_str = false;

	for (const char *r = text; *r;) {
		size_t n = 0;

		if (*r == '"' && (r == text || r[-1] != '\\'))
			in_str = !in_str;
		if (!in_str && *r >= '0' && *r <= '9' && (r == text || r[-1] == ':')) {
			while (r[n] >= '0' && r[n] <= '9')
				n++;
			if (n > 19 || (n == 19 && strncmp(r, "9223372036854775807", 19) > 0)) {
				*w++ = '0';
				r += n;
				continue;
			}
		}
		*w++ = *r++;
	}
	*w = '\0';
	return out;
}

/* The documented keys have the documented types. */
static void check_json_types(struct unit *u, const struct pkt_view *v, const char *text_in,
			     bool verbose)
{
	const struct wire_pkt *p = v->p;
	json_error_t err;
	char *text = small_ints(text_in);
	json_t *o = json_loads(text, 0, &err);

	free(text);
	static const char *const ints[] = { "frame", "time_ns", "opcode", "dest_qp", "psn",
					    "payload_len" };

	CHECK(u, json_is_object(o));
	if (!o)
		return;
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		CHECK(u, json_is_integer(json_object_get(o, ints[i])));
	CHECK(u, json_is_real(json_object_get(o, "time")));
	CHECK(u, json_real_value(json_object_get(o, "time")) == (double)v->ts_ns / 1e9);
	CHECK(u, (uint64_t)json_integer_value(json_object_get(o, "time_ns")) == v->ts_ns);
	CHECK(u, json_is_string(json_object_get(o, "src")));
	CHECK(u, json_is_string(json_object_get(o, "dst")));
	CHECK(u, json_is_string(json_object_get(o, "encap")));
	CHECK_STR(u, json_string_value(json_object_get(o, "opcode_name")), p->op->name);
	CHECK_EQ(u, json_integer_value(json_object_get(o, "psn")), p->bth.psn);
	CHECK(u, json_is_boolean(json_object_get(o, "ack_req")));
	CHECK_STR(u, json_string_value(json_object_get(o, "icrc")), "ok");
	CHECK(u, !json_object_get(o, "status"));
	CHECK_EQ(u, json_is_integer(json_object_get(o, "src_port")), !!(p->layers & WIRE_L_UDP));
	CHECK_EQ(u, json_is_integer(json_object_get(o, "slid")), !!(p->layers & WIRE_L_LRH));
	CHECK_EQ(u, json_is_string(json_object_get(o, "ecn")),
		 !!(p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6)));
	CHECK_EQ(u, json_is_integer(json_object_get(o, "vlan")), p->nvlan > 0);
	CHECK_EQ(u, json_is_boolean(json_object_get(o, "becn")), verbose || p->bth.becn);
	CHECK_EQ(u, json_is_integer(json_object_get(o, "frame_len")), verbose);
	CHECK_EQ(u, json_is_boolean(json_object_get(o, "se")), verbose);
	CHECK_EQ(u, json_is_object(json_object_get(o, "reth")), !!(p->ext & WIRE_X_RETH));
	CHECK_EQ(u, json_is_object(json_object_get(o, "deth")), !!(p->ext & WIRE_X_DETH));
	CHECK_EQ(u, json_is_object(json_object_get(o, "rdeth")), !!(p->ext & WIRE_X_RDETH));
	CHECK_EQ(u, json_is_object(json_object_get(o, "xrceth")), !!(p->ext & WIRE_X_XRCETH));
	CHECK_EQ(u, json_is_object(json_object_get(o, "feth")), !!(p->ext & WIRE_X_FETH));
	CHECK_EQ(u, json_is_object(json_object_get(o, "atomic")), !!(p->ext & WIRE_X_ATOMICETH));
	CHECK_EQ(u, json_is_object(json_object_get(o, "atomic_ack")),
		 !!(p->ext & WIRE_X_ATOMICACKETH));
	CHECK_EQ(u, json_is_integer(json_object_get(o, "immdt")), !!(p->ext & WIRE_X_IMMDT));
	CHECK_EQ(u, json_is_integer(json_object_get(o, "ieth")), !!(p->ext & WIRE_X_IETH));
	if (p->ext & WIRE_X_AETH) {
		json_t *a = json_object_get(o, "aeth");

		CHECK(u, json_is_integer(json_object_get(a, "syndrome")));
		CHECK(u, json_is_string(json_object_get(a, "kind")));
		CHECK(u, json_is_integer(json_object_get(a, "code")));
		CHECK(u, json_is_integer(json_object_get(a, "msn")));
		CHECK(u, json_is_string(json_object_get(a, "text")));
	}
	if (p->ext & WIRE_X_RETH) {
		json_t *r = json_object_get(o, "reth");
		/* Above INT64_MAX the exact digits are checked by check_ndjson;
		 * small_ints() read them as 0 here. */
		uint64_t va = p->reth.va > INT64_MAX ? 0 : p->reth.va;

		CHECK(u, (uint64_t)json_integer_value(json_object_get(r, "va")) == va);
		CHECK_EQ(u, json_integer_value(json_object_get(r, "dma_len")), p->reth.dmalen);
	}
	json_decref(o);
}

/* Every defined opcode in every encapsulation, several payload sizes. */
static void test_every_opcode(struct unit *u)
{
	static const size_t sizes[] = { 0, 1, 3, 4, 1024 };
	uint8_t frame[2048];
	char line[4096];
	int ops = 0;

	for (int op = 0; op < 256; op++) {
		const struct wire_opcode_info *info = wire_opcode_info((uint8_t)op);

		if (!info)
			continue;
		ops++;
		for (int enc = 0; enc < ENC_COUNT; enc++) {
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				struct wire_pkt b;
				struct pkt_view v;

				if (!make_pkt(&b, frame, sizeof(frame), (uint8_t)op, enc,
					      info->payload ? sizes[s] : 0, &v)) {
					CHECK(u, false);
					continue;
				}
				CHECK_EQ(u, v.icrc, CRC_OK);
				for (int verbose = 0; verbose < 2; verbose++) {
					size_t n = line_of(line, sizeof(line), &v, verbose);

					CHECK_EQ(u, n, strlen(line));
					check_line_fields(u, &v, line, verbose);
					check_ndjson(u, &v, verbose);
					n = render_packet_ndjson(line, sizeof(line), &v, verbose);
					CHECK(u, n > 0);
					check_json_types(u, &v, line, verbose);
				}
			}
		}
	}
	CHECK_EQ(u, ops, 87);
}

/* Any opcode name, even one that is not ASCII or not UTF-8: the line stays JSON. */
static void test_json_strings(struct unit *u)
{
	static const char *const names[] = {
		"plain", "quote \" backslash \\ slash /", "ctl \b\f\n\r\t \x01\x1f\x7f",
		"utf8 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "",
	};
	static const char *const bad[] = { "bad \xff end", "cut \xe2\x82", "overlong \xc0\xaf",
					   "surrogate \xed\xa0\x80" };
	uint8_t frame[2048];
	struct wire_pkt b;
	struct pkt_view v;
	char line[4096];

	CHECK(u, make_pkt(&b, frame, sizeof(frame), OP_RC_SEND_ONLY, ENC_V4, 8, &v));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct wire_opcode_info fake = *b.op;

		fake.name = names[i];
		b.op = &fake;
		check_ndjson(u, &v, false);
		b.op = wire_opcode_info(OP_RC_SEND_ONLY);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wire_opcode_info fake = *b.op;
		json_t *o;

		fake.name = bad[i];
		b.op = &fake;
		CHECK(u, render_packet_ndjson(line, sizeof(line), &v, false) > 0);
		o = json_loads(line, 0, NULL);
		CHECK(u, json_is_string(json_object_get(o, "opcode_name")));
		CHECK(u, strchr(json_string_value(json_object_get(o, "opcode_name")) ?: "", '?'));
		json_decref(o);
		b.op = wire_opcode_info(OP_RC_SEND_ONLY);
	}
}

/* IPv6 text: inet_ntop()'s, for every pattern of zero groups. */
static void test_ipv6_text(struct unit *u)
{
	static const char *const fixed[] = {
		"::", "::1", "1::", "::ffff:1.2.3.4", "::1.2.3.4", "::ffff:0:1.2.3.4",
		"fe80::1", "2001:db8::1:0:0:1", "2001:db8:0:0:1::1", "1:0:1:0:1:0:1:0",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::fffe:1.2.3.4", "0:0:0:0:0:1:0:0",
		"::0.0.0.2", "64:ff9b::1.2.3.4",
	};
	char mine[64], want[INET6_ADDRSTRLEN];
	uint8_t a[16];

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		CHECK(u, inet_pton(AF_INET6, fixed[i], a) == 1);
		render_ipv6(mine, a);
		inet_ntop(AF_INET6, a, want, sizeof(want));
		CHECK_STR(u, mine, want);
	}
	for (unsigned mask = 0; mask < 256; mask++) {
		for (int k = 0; k < 8; k++) {
			for (int g = 0; g < 8; g++) {
				uint16_t w = mask >> g & 1 ? (uint16_t)(rnd() >> (rnd() & 15)) : 0;

				if (mask >> g & 1 && !w)
					w = 1;
				if (g == 5 && k == 7)
					w = 0xFFFF;
				a[2 * g] = (uint8_t)(w >> 8);
				a[2 * g + 1] = (uint8_t)w;
			}
			render_ipv6(mine, a);
			inet_ntop(AF_INET6, a, want, sizeof(want));
			CHECK_STR(u, mine, want);
		}
	}
}

static void test_aeth_text(struct unit *u)
{
	for (int syn = 0; syn < 256; syn++) {
		char mine[64], want[64];

		CHECK_EQ(u, render_aeth_text(mine, sizeof(mine), (uint8_t)syn),
			 wire_aeth_describe(want, sizeof(want), (uint8_t)syn));
		CHECK_STR(u, mine, want);
	}
}

static void check_real(struct unit *u, double d)
{
	json_t *j = json_real(d);
	char *want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	char mine[64];

	render_json_real(mine, sizeof(mine), d);
	if (!want || strcmp(mine, want) != 0) {
		u->failures++;
		printf("#   real %.17g: \"%s\", jansson \"%s\"\n", d, mine, want ? want : "?");
	}
	free(want);
	json_decref(j);
}

/* JSON reals: jansson's text for capture times and for any double. */
static void test_json_real(struct unit *u)
{
	static const double fixed[] = {
		0.0, 1e-9, 0.5, 1.0, 1.5, 9.999999999999998, 10.0, 123456789.0,
		1796205847.597646, 1796205847.0, 9999999999.9999999, 9999999999.999998,
		1e15, 9.999999999999998e15, 1e16, 1.8446744073709552e10, 4294967296.0,
		1e-5, 1e21, 123.456,
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_real(u, fixed[i]);
	for (int i = 0; i < 200000; i++) {
		uint64_t ns = i % 4 == 0 ? rnd() : i % 4 == 1 ? TS0 + rnd() % 100000000000ULL
			      : i % 4 == 2 ? rnd() >> (rnd() & 63) : rnd() % 1000000000000ULL;
		double d;

		check_real(u, (double)ns / 1e9);
		do {	/* any finite double, positive or not */
			uint64_t bits = rnd();

			memcpy(&d, &bits, sizeof(d));
		} while (d != d || d - d != 0);
		check_real(u, d);
	}
	for (uint64_t s = 1; s < 20000000000ULL; s = s * 3 + 1)
		for (uint64_t ns = 0; ns < 1000000000ULL; ns += 99999989)
			check_real(u, (double)(s * 1000000000ULL + ns) / 1e9);
}

/* Time of day: the zone, the cache across seconds, the 9-digit fraction. */
static void test_time_of_day(struct unit *u)
{
	uint8_t frame[2048];
	struct wire_pkt b;
	struct pkt_view v;
	struct time_cache tc = { 0 }, utc = { .utc = true };
	char line[4096];
	const char *old = getenv("TZ");
	char *saved = old ? strdup(old) : NULL;

	setenv("TZ", "EST5", 1);
	tzset();
	CHECK(u, make_pkt(&b, frame, sizeof(frame), OP_RC_SEND_ONLY, ENC_V4, 8, &v));
	v.ts_ns = TS0 - 597646000ULL;
	render_packet_line(line, sizeof(line), &v, false, &tc);
	CHECK(u, strncmp(line, "05:04:07.000000000 ", 19) == 0);
	render_packet_line(line, sizeof(line), &v, false, &utc);
	CHECK(u, strncmp(line, "10:04:07.000000000 ", 19) == 0);
	v.ts_ns += 999999999;
	render_packet_line(line, sizeof(line), &v, false, &tc);
	CHECK(u, strncmp(line, "05:04:07.999999999 ", 19) == 0);
	v.ts_ns += 1;
	render_packet_line(line, sizeof(line), &v, false, &tc);
	CHECK(u, strncmp(line, "05:04:08.000000000 ", 19) == 0);
	v.ts_ns += 3600ULL * 1000000000 + 42;
	render_packet_line(line, sizeof(line), &v, false, &tc);
	CHECK(u, strncmp(line, "06:04:08.000000042 ", 19) == 0);
	v.ts_ns = 5;	/* the epoch */
	render_packet_line(line, sizeof(line), &v, false, &utc);
	CHECK(u, strncmp(line, "00:00:00.000000005 ", 19) == 0);
	render_packet_ndjson(line, sizeof(line), &v, false);
	CHECK(u, strncmp(line, "{\"frame\":", 9) == 0 &&
		 strstr(line, ",\"time\":5.0000000000000001e-9,\"time_ns\":5,") != NULL);
	check_ndjson(u, &v, false);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
}

/* Every buffer size: a prefix of the whole line, never past cap. */
static void test_small_buffers(struct unit *u)
{
	uint8_t frame[2048];
	struct wire_pkt b;
	struct pkt_view v;
	char full[4096];
	size_t whole;

	CHECK(u, make_pkt(&b, frame, sizeof(frame), OP_RC_CMP_SWAP, ENC_V6_VLAN, 0, &v));
	v.gso_count = 3;
	whole = line_of(full, sizeof(full), &v, true);
	CHECK(u, whole > 200);
	for (size_t cap = 1; cap <= whole + 2; cap++) {
		char *buf = malloc(cap);	/* ASan sees overruns */
		size_t n = line_of(buf, cap, &v, true);

		CHECK_EQ(u, n, cap - 1 < whole ? cap - 1 : whole);
		CHECK_EQ(u, strlen(buf), n);
		CHECK(u, memcmp(buf, full, n) == 0);
		free(buf);
	}
	whole = render_packet_ndjson(full, sizeof(full), &v, true);
	CHECK(u, whole > 200);
	for (size_t cap = 1; cap <= whole + 2; cap++) {
		char *buf = malloc(cap);
		size_t n = render_packet_ndjson(buf, cap, &v, true);

		CHECK_EQ(u, n, cap > whole ? whole : 0);
		CHECK(u, strlen(buf) < cap);
		CHECK(u, strncmp(buf, full, strlen(buf)) == 0);
		free(buf);
	}
	CHECK_EQ(u, line_of(full, 0, &v, false), 0);
	CHECK_EQ(u, render_packet_ndjson(full, 0, &v, false), 0);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_lines_hand_checked);
	RUN(&u, test_truncated);
	RUN(&u, test_every_opcode);
	RUN(&u, test_json_strings);
	RUN(&u, test_ipv6_text);
	RUN(&u, test_aeth_text);
	RUN(&u, test_json_real);
	RUN(&u, test_time_of_day);
	RUN(&u, test_small_buffers);
	return unit_done(&u);
}
