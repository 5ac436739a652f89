// SPDX-License-Identifier: MIT
/* pcapgen's frame and file helpers; see pcapgen.h. */
#include "pcapgen.h"

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pcapgen: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ------------------------------------------------------------------------ */
/* Output files                                                               */

void out_open(struct gen *g, struct out *o, const char *name, int dlt, int snaplen)
{
	memset(o, 0, sizeof(*o));
	o->g = g;
	o->name = name;
	snprintf(o->path, sizeof(o->path), "%s/%s", g->outdir, name);
	o->pd = pcap_open_dead_with_tstamp_precision(dlt, snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (!o->pd)
		die("pcap_open_dead(%d) failed", dlt);
	o->d = pcap_dump_open(o->pd, o->path);
	if (!o->d)
		die("cannot write %s: %s", o->path, pcap_geterr(o->pd));
	o->ts_ns = (T0_SEC + g->file_index++) * 1000000000ULL;
}

/* Writes one record: caplen bytes captured of a frame of len bytes. */
void out_write(struct out *o, const uint8_t *buf, size_t caplen, size_t len)
{
	struct pcap_pkthdr h;

	memset(&h, 0, sizeof(h));
	o->ts_ns += FRAME_GAP_NS;
	h.ts.tv_sec = (time_t)(o->ts_ns / 1000000000ULL);
	h.ts.tv_usec = (suseconds_t)(o->ts_ns % 1000000000ULL);	/* ns: nano precision */
	h.caplen = (bpf_u_int32)caplen;
	h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)o->d, &h, buf);
	o->frame++;
}

void out_close(struct out *o)
{
	pcap_dump_close(o->d);
	pcap_close(o->pd);
}

/* ------------------------------------------------------------------------ */
/* Packet templates                                                           */

void mac_of(uint8_t mac[6], unsigned host)
{
	static const uint8_t base[6] = { 0x02, 0x00, 198, 18, 0, 0 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)host;
}

void ip4_of(uint8_t ip[4], unsigned host)
{
	ip[0] = 198;
	ip[1] = 18;
	ip[2] = 0;
	ip[3] = (uint8_t)host;
}

void ip6_of(uint8_t ip[16], unsigned host)
{
	memset(ip, 0, 16);
	ip[0] = 0x20;
	ip[1] = 0x01;
	ip[3] = 0x02;	/* 2001:2::host */
	ip[15] = (uint8_t)host;
}

void gid_of(uint8_t gid[16], unsigned host)
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;	/* fe80::2:c903:0:host */
	gid[9] = 0x02;
	gid[10] = 0xc9;
	gid[11] = 0x03;
	gid[15] = (uint8_t)host;
}

/* RoCEv2 over Ethernet + IPv4 from host src to host dst. */
void v4(struct wire_pkt *p, unsigned src, unsigned dst, uint8_t ecn)
{
	memset(p, 0, sizeof(*p));
	p->encap = WIRE_ENCAP_ROCEV2;
	p->layers = WIRE_L_ETH;
	mac_of(p->eth.src, src);
	mac_of(p->eth.dst, dst);
	ip4_of(p->ip4.src, src);
	ip4_of(p->ip4.dst, dst);
	p->ip4.dscp = 26;
	p->ip4.ecn = ecn;
	p->ip4.frag = 0x4000;	/* DF */
	p->ip4.ttl = 64;
	p->udp.sport = (uint16_t)(0xC000 | src);
	p->udp.dport = ROCEV2_UDP_PORT;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
}

/* RoCEv2 over Ethernet + 802.1Q (VID 100, PCP 3) + IPv6. */
void v6vlan(struct wire_pkt *p, unsigned src, unsigned dst, uint8_t ecn)
{
	memset(p, 0, sizeof(*p));
	p->encap = WIRE_ENCAP_ROCEV2;
	p->layers = WIRE_L_ETH | WIRE_L_VLAN | WIRE_L_IPV6;
	mac_of(p->eth.src, src);
	mac_of(p->eth.dst, dst);
	p->nvlan = 1;
	p->vlan[0] = (struct wire_vlan){ ETHERTYPE_VLAN, 3, false, 100 };
	ip6_of(p->ip6.src, src);
	ip6_of(p->ip6.dst, dst);
	p->ip6.dscp = 26;
	p->ip6.ecn = ecn;
	p->ip6.flow_label = 0x12345;
	p->ip6.hop_limit = 64;
	p->udp.sport = (uint16_t)(0xD000 | src);
	p->udp.dport = ROCEV2_UDP_PORT;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
}

void rocev1(struct wire_pkt *p, unsigned src, unsigned dst, unsigned nvlan)
{
	memset(p, 0, sizeof(*p));
	p->encap = WIRE_ENCAP_ROCEV1;
	p->layers = WIRE_L_ETH;
	mac_of(p->eth.src, src);
	mac_of(p->eth.dst, dst);
	if (nvlan) {
		p->nvlan = 1;
		p->layers |= WIRE_L_VLAN;
		p->vlan[0] = (struct wire_vlan){ ETHERTYPE_VLAN, 5, false, 200 };
	}
	gid_of(p->grh.sgid, src);
	gid_of(p->grh.dgid, dst);
	p->grh.hoplmt = 1;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
}

/* Native InfiniBand: LRH, and a GRH when grh is set. */
void ib(struct wire_pkt *p, uint16_t slid, uint16_t dlid, bool grh)
{
	memset(p, 0, sizeof(*p));
	p->encap = WIRE_ENCAP_IB;
	p->lrh = (struct wire_lrh){ .vl = 0, .lver = 0, .sl = 0, .lnh = grh ? 3 : 2,
				    .dlid = dlid, .slid = slid };
	if (grh) {
		gid_of(p->grh.sgid, slid);
		gid_of(p->grh.dgid, dlid);
		p->grh.hoplmt = 255;
	}
	p->bth.pkey = WIRE_DEFAULT_PKEY;
}

/* Every field an opcode might carry, from the opcode and a salt. */
void fill_ext(struct wire_pkt *p, uint8_t op, unsigned salt)
{
	p->rdeth.eecnxt = 0x300 + op;
	p->deth.qkey = 0x11110000u | op;
	p->deth.srcqp = 0x200 + op;
	p->xrceth.xrcsrq = 0x400 + op;
	p->feth.sel = 1;
	p->feth.placement = 2;
	p->reth.va = 0x7f0000000000ULL + ((uint64_t)op << 12) + salt;
	p->reth.rkey = 0x00abc000u | op;
	p->reth.dmalen = 4096u + op;
	p->atomiceth.va = 0x7f1000000000ULL + ((uint64_t)op << 3);
	p->atomiceth.rkey = 0x00a70000u | op;
	p->atomiceth.swap_add = 0x0123456789abcdefULL + op;
	p->atomiceth.compare = 0x0fedcba987654321ULL + op;
	p->aeth.syndrome = 0x1F;	/* ACK, credits invalid */
	p->aeth.msn = 0x10 + op;
	p->atomicacketh.orig = 0x0000feedfacecafeULL + op;
	p->immdt = 0xdead0000u | op;
	p->ieth = 0x1e700000u | op;
}

void pattern(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + seed);
}

/* ------------------------------------------------------------------------ */
/* Manifest                                                                   */

const char *ecn_name(uint8_t ecn)
{
	static const char *const names[] = { "not-ect", "ect1", "ect0", "ce" };

	return names[ecn & 3];
}

/* One manifest line for packet p (as given to wire_build), in frame `frame`. */
void man_pkt(const struct out *o, const struct wire_pkt *p, size_t payload_len,
		    const struct man_extra *x)
{
	const struct wire_opcode_info *op = wire_opcode_info(p->bth.opcode);
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	FILE *m = o->g->manifest;

	fprintf(m, "{\"file\":\"%s\",\"frame\":%u", o->name, o->frame);
	if (x && x->gso_segments)
		fprintf(m, ",\"gso_segment\":%u,\"gso_segments\":%u", x->gso_segment,
			x->gso_segments);
	switch (p->encap) {
	case WIRE_ENCAP_ROCEV2:
		fprintf(m, ",\"encap\":\"rocev2\"");
		if (p->layers & WIRE_L_IPV6) {
			inet_ntop(AF_INET6, p->ip6.src, a, sizeof(a));
			inet_ntop(AF_INET6, p->ip6.dst, b, sizeof(b));
			fprintf(m, ",\"ecn\":\"%s\"", ecn_name(p->ip6.ecn));
		} else {
			inet_ntop(AF_INET, p->ip4.src, a, sizeof(a));
			inet_ntop(AF_INET, p->ip4.dst, b, sizeof(b));
			fprintf(m, ",\"ecn\":\"%s\"", ecn_name(p->ip4.ecn));
		}
		fprintf(m, ",\"src\":\"%s\",\"dst\":\"%s\",\"src_port\":%u,\"dst_port\":%u", a, b,
			p->udp.sport, p->udp.dport ? p->udp.dport : ROCEV2_UDP_PORT);
		break;
	case WIRE_ENCAP_ROCEV1:
		inet_ntop(AF_INET6, p->grh.sgid, a, sizeof(a));
		inet_ntop(AF_INET6, p->grh.dgid, b, sizeof(b));
		fprintf(m, ",\"encap\":\"rocev1\",\"src\":\"%s\",\"dst\":\"%s\"", a, b);
		break;
	case WIRE_ENCAP_IB:
		fprintf(m, ",\"encap\":\"ib\",\"slid\":%u,\"dlid\":%u", p->lrh.slid, p->lrh.dlid);
		if (p->lrh.lnh == 3) {
			inet_ntop(AF_INET6, p->grh.sgid, a, sizeof(a));
			inet_ntop(AF_INET6, p->grh.dgid, b, sizeof(b));
			fprintf(m, ",\"src\":\"%s\",\"dst\":\"%s\"", a, b);
		} else {
			fprintf(m, ",\"src\":\"lid 0x%04x\",\"dst\":\"lid 0x%04x\"", p->lrh.slid,
				p->lrh.dlid);
		}
		break;
	default:
		break;
	}
	if (p->nvlan)
		fprintf(m, ",\"vlan\":%u", p->vlan[0].vid);
	if (x && x->status)
		fprintf(m, ",\"status\":\"%s\"", x->status);
	if (x && x->no_bth) {
		fprintf(m, "}\n");
		return;
	}
	fprintf(m, ",\"opcode\":%u,\"dest_qp\":%u,\"psn\":%u,\"ack_req\":%s", p->bth.opcode,
		p->bth.dqpn, p->bth.psn, p->bth.ackreq ? "true" : "false");
	if (p->bth.becn)
		fprintf(m, ",\"becn\":true");
	if (x && x->unknown) {
		fprintf(m, ",\"opcode_name\":null,\"payload_len\":%zu", x->payload_len);
	} else {
		uint16_t ext = op->ext;

		fprintf(m, ",\"payload_len\":%zu", op->payload ? payload_len : (size_t)0);
		if (ext & WIRE_X_DETH)
			fprintf(m, ",\"deth\":{\"qkey\":%u,\"src_qp\":%u}", p->deth.qkey,
				p->deth.srcqp);
		if (ext & WIRE_X_RETH)
			fprintf(m, ",\"reth\":{\"va\":%llu,\"rkey\":%u,\"dma_len\":%u}",
				(unsigned long long)p->reth.va, p->reth.rkey, p->reth.dmalen);
		if (ext & WIRE_X_ATOMICETH)
			fprintf(m, ",\"atomic\":{\"va\":%llu,\"rkey\":%u,\"swap_add\":%llu,"
				"\"compare\":%llu}", (unsigned long long)p->atomiceth.va,
				p->atomiceth.rkey, (unsigned long long)p->atomiceth.swap_add,
				(unsigned long long)p->atomiceth.compare);
		if (ext & WIRE_X_AETH) {
			static const char *const kinds[] = { "ack", "rnr_nak", "reserved", "nak" };

			fprintf(m, ",\"aeth\":{\"syndrome\":%u,\"kind\":\"%s\",\"code\":%u,\"msn\":%u}",
				p->aeth.syndrome, kinds[(p->aeth.syndrome >> 5) & 3],
				p->aeth.syndrome & 0x1F, p->aeth.msn);
		}
		if (ext & WIRE_X_ATOMICACKETH)
			fprintf(m, ",\"atomic_ack\":{\"orig\":%llu}",
				(unsigned long long)p->atomicacketh.orig);
		if (ext & WIRE_X_IMMDT)
			fprintf(m, ",\"immdt\":%u", p->immdt);
		if (ext & WIRE_X_IETH)
			fprintf(m, ",\"ieth\":%u", p->ieth);
	}
	if (x && x->icrc)
		fprintf(m, ",\"icrc\":\"%s\"", x->icrc);
	if (p->encap == WIRE_ENCAP_IB && x && x->icrc && strcmp(x->icrc, "unchecked") != 0)
		fprintf(m, ",\"vcrc\":\"ok\"");
	fprintf(m, "}\n");
}

const struct man_extra OK = { .icrc = "ok" };

/* Builds p with a payload of len pattern bytes, writes it whole, and
 * records it in the manifest with ICRC ok. */
size_t emit(struct out *o, struct wire_pkt *p, size_t len)
{
	uint8_t payload[MAXFRAME], frame[MAXFRAME];
	struct wire_pkt in = *p;
	size_t n;

	pattern(payload, len, p->bth.opcode + (unsigned)p->bth.psn);
	n = wire_build(frame, sizeof(frame), p, payload, len);
	if (!n)
		die("%s: wire_build failed for opcode 0x%02x", o->name, p->bth.opcode);
	out_write(o, frame, n, n);
	man_pkt(o, &in, len, &OK);
	return n;
}

/* A record that is not RoCE at all: UDP 198.18.0.x:5000 > :5000 over IPv4. */
void emit_other_udp(struct out *o, unsigned src, unsigned dst, size_t len)
{
	uint8_t f[1600];
	size_t n = 14 + 20 + 8 + len;

	memset(f, 0, sizeof(f));
	mac_of(f, dst);
	mac_of(f + 6, src);
	wire_put16(f + 12, ETHERTYPE_IPV4);
	f[14] = 0x45;
	wire_put16(f + 16, (uint16_t)(20 + 8 + len));
	f[22] = 64;
	f[23] = 17;
	ip4_of(f + 26, src);
	ip4_of(f + 30, dst);
	wire_put16(f + 24, wire_ipv4_csum(f + 14, 20));
	wire_put16(f + 34, 5000);
	wire_put16(f + 36, 5000);
	wire_put16(f + 38, (uint16_t)(8 + len));
	pattern(f + 42, len, 1);
	out_write(o, f, n, n);
}

/* An ARP request, for non-UDP noise. */
void emit_arp(struct out *o, unsigned src, unsigned dst)
{
	uint8_t f[42];

	memset(f, 0, sizeof(f));
	memset(f, 0xff, 6);
	mac_of(f + 6, src);
	wire_put16(f + 12, 0x0806);
	wire_put16(f + 14, 1);
	wire_put16(f + 16, ETHERTYPE_IPV4);
	f[18] = 6;
	f[19] = 4;
	wire_put16(f + 20, 1);
	mac_of(f + 22, src);
	ip4_of(f + 28, src);
	ip4_of(f + 38, dst);
	out_write(o, f, sizeof(f), sizeof(f));
}

