// SPDX-License-Identifier: MIT
/*
 * Text and JSON renderings of captured packets and flow summaries.
 *
 * The per-packet renderings are on the hot path of `rdmakit capture`: they
 * are built with small appenders (constant strings by memcpy, decimal and
 * hex by hand, dotted quads and IPv6 text by hand) instead of printf, and
 * the NDJSON line is written directly rather than through a jansson tree.
 * render_packet_json() keeps the tree form; the unit tests check that both
 * JSON forms agree byte for byte.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "render.h"
#include "render_int.h"
#include "sbuf.h"

const char *render_ecn_name(uint8_t ecn)
{
	static const char *const names[] = { "not-ect", "ect1", "ect0", "ce" };

	return names[ecn & 3];
}


static size_t fmt_ipv4(char *out, const uint8_t a[4])
{
	size_t n = 0;

	for (int i = 0; i < 4; i++) {
		unsigned b = a[i];

		if (i)
			out[n++] = '.';
		if (b >= 100) {
			out[n++] = (char)('0' + b / 100);
			b %= 100;
			memcpy(out + n, digits2 + b * 2, 2);
			n += 2;
		} else if (b >= 10) {
			memcpy(out + n, digits2 + b * 2, 2);
			n += 2;
		} else {
			out[n++] = (char)('0' + b);
		}
	}
	return n;
}

/*
 * IPv6 text exactly as glibc's inet_ntop() writes it (the BIND algorithm):
 * the first longest run of two or more zero groups becomes "::", and
 * ::a.b.c.d and ::ffff:a.b.c.d end in a dotted quad.  out: 46 bytes.
 */
size_t render_ipv6(char *out, const uint8_t a[16])
{
	unsigned w[8];
	int best = -1, best_len = 0, cur = -1, cur_len = 0;
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
		if (w[i] == 0) {
			if (cur < 0)
				cur = i, cur_len = 0;
			cur_len++;
		} else if (cur >= 0) {
			if (best < 0 || cur_len > best_len)
				best = cur, best_len = cur_len;
			cur = -1;
		}
	}
	if (cur >= 0 && (best < 0 || cur_len > best_len))
		best = cur, best_len = cur_len;
	if (best >= 0 && best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				out[n++] = ':';
			continue;
		}
		if (i)
			out[n++] = ':';
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
			n += fmt_ipv4(out + n, a + 12);
			break;
		}
		for (int sh = 12; sh >= 0; sh -= 4)
			if (w[i] >> sh || sh == 0)
				out[n++] = hexdigits[(w[i] >> sh) & 15];
	}
	if (best >= 0 && best + best_len == 8)
		out[n++] = ':';
	out[n] = '\0';
	return n;
}

/*
 * A packet's source or destination address as flow_addr_str() writes it for
 * flow_key_of()'s key: "198.18.0.2", "fe80::1" or "lid 0x0005"; *family
 * gets the key's family (4, 6, or 0 for LIDs).  out: 64 bytes, NUL-terminated.
 */
size_t render_addr_text(const struct wire_pkt *p, bool dst, char *out, int *family)
{
	static const uint8_t v4mapped[12] = { [10] = 0xFF, [11] = 0xFF };
	const uint8_t *a;
	size_t n;

	if (p->layers & WIRE_L_IPV4) {
		*family = 4;
		n = fmt_ipv4(out, dst ? p->ip4.dst : p->ip4.src);
	} else if (p->layers & (WIRE_L_IPV6 | WIRE_L_GRH)) {
		*family = 6;
		if (p->layers & WIRE_L_IPV6)
			a = dst ? p->ip6.dst : p->ip6.src;
		else
			a = dst ? p->grh.dgid : p->grh.sgid;
		if (memcmp(a, v4mapped, sizeof(v4mapped)) == 0)
			n = fmt_ipv4(out, a + 12);
		else
			n = render_ipv6(out, a);
	} else {
		struct sbuf s = { out, 64, 0, false };

		*family = 0;
		SB_X(&s, "lid 0x", dst ? p->lrh.dlid : p->lrh.slid, 4);
		n = s.len;
	}
	out[n] = '\0';
	return n;
}

uint8_t render_pkt_ecn(const struct wire_pkt *p)
{
	if (p->layers & WIRE_L_IPV4)
		return p->ip4.ecn;
	if (p->layers & WIRE_L_IPV6)
		return p->ip6.ecn;
	return WIRE_NOT_ECT;
}

/* "198.18.0.2:4791", "[fe80::1]:4791", or the bare address without UDP. */
static void endpoint(struct sbuf *s, const struct wire_pkt *p, bool dst)
{
	char addr[64];
	int family;
	size_t n = render_addr_text(p, dst, addr, &family);

	if (!(p->layers & WIRE_L_UDP)) {
		sb_put(s, addr, n);
		return;
	}
	if (family == 6)
		SB_LIT(s, "[");
	sb_put(s, addr, n);
	sb_put(s, family == 6 ? "]:" : ":", family == 6 ? 2 : 1);
	sb_u64(s, dst ? p->udp.dport : p->udp.sport);
}

static void time_of_day(struct sbuf *s, uint64_t ts_ns, struct time_cache *tc)
{
	int64_t sec = (int64_t)(ts_ns / 1000000000u);
	uint32_t ns = (uint32_t)(ts_ns % 1000000000u);
	char frac[10];

	if (!tc->text[0] || sec != tc->sec) {
		time_t t = (time_t)sec;
		struct tm tm;

		if (tc->utc)
			gmtime_r(&t, &tm);
		else
			localtime_r(&t, &tm);
		strftime(tc->text, sizeof(tc->text), "%H:%M:%S", &tm);
		tc->sec = sec;
	}
	frac[0] = '.';
	for (int i = 9; i > 0; i--) {
		frac[i] = (char)('0' + ns % 10);
		ns /= 10;
	}
	sb_str(s, tc->text);
	sb_put(s, frac, sizeof(frac));
}

/* wire_aeth_describe()'s text, without snprintf: "ACK credits 31", ... */
static void aeth_describe(struct sbuf *s, uint8_t syndrome)
{
	uint8_t v = wire_aeth_value(syndrome);
	const char *nak;
	uint32_t us;

	switch (wire_aeth_kind(syndrome)) {
	case WIRE_AETH_ACK:
		if (v == WIRE_AETH_CREDITS_INVALID)
			SB_LIT(s, "ACK credits invalid");
		else
			SB_U(s, "ACK credits ", (uint64_t)wire_aeth_credits(v));
		break;
	case WIRE_AETH_RNR_NAK:
		us = wire_rnr_timer_us(v);
		SB_U(s, "RNR NAK ", us / 1000);
		SB_LIT(s, ".");
		sb_put(s, digits2 + us % 1000 / 10 * 2, 2);
		SB_LIT(s, " ms");
		break;
	case WIRE_AETH_NAK:
		nak = wire_nak_name(v);
		if (nak) {
			SB_LIT(s, "NAK ");
			sb_str(s, nak);
		} else {
			SB_U(s, "NAK reserved code ", v);
		}
		break;
	default:
		SB_X(s, "reserved syndrome 0x", syndrome, 2);
		break;
	}
}

size_t render_aeth_text(char *buf, size_t cap, uint8_t syndrome)
{
	struct sbuf s = { buf, cap, 0, false };

	if (!cap)
		return 0;
	aeth_describe(&s, syndrome);
	buf[s.len] = '\0';
	return s.len;
}

static void ext_text(struct sbuf *s, const struct wire_pkt *p)
{
	uint16_t x = p->ext;

	if (x & WIRE_X_RDETH)
		SB_X(s, " rdeth eecnxt 0x", p->rdeth.eecnxt, 6);
	if (x & WIRE_X_DETH) {
		SB_X(s, " deth qkey 0x", p->deth.qkey, 8);
		SB_X(s, " src_qp 0x", p->deth.srcqp, 6);
	}
	if (x & WIRE_X_XRCETH)
		SB_X(s, " xrceth srq 0x", p->xrceth.xrcsrq, 6);
	if (x & WIRE_X_FETH) {
		SB_U(s, " feth sel ", p->feth.sel);
		SB_U(s, " placement ", p->feth.placement);
	}
	if (x & WIRE_X_RETH) {
		SB_X(s, " reth va 0x", p->reth.va, 0);
		SB_X(s, " rkey 0x", p->reth.rkey, 8);
		SB_U(s, " len ", p->reth.dmalen);
	}
	if (x & WIRE_X_ATOMICETH) {
		SB_X(s, " atomic va 0x", p->atomiceth.va, 0);
		SB_X(s, " rkey 0x", p->atomiceth.rkey, 8);
		SB_X(s, " swap_add 0x", p->atomiceth.swap_add, 0);
		SB_X(s, " compare 0x", p->atomiceth.compare, 0);
	}
	if (x & WIRE_X_AETH) {
		SB_LIT(s, " aeth ");
		aeth_describe(s, p->aeth.syndrome);
		SB_U(s, " msn ", p->aeth.msn);
	}
	if (x & WIRE_X_ATOMICACKETH)
		SB_X(s, " orig 0x", p->atomicacketh.orig, 0);
	if (x & WIRE_X_IMMDT)
		SB_X(s, " imm 0x", p->immdt, 8);
	if (x & WIRE_X_IETH)
		SB_X(s, " inv_rkey 0x", p->ieth, 8);
}

static void verbose_text(struct sbuf *s, const struct wire_pkt *p)
{
	const struct wire_bth *b = &p->bth;

	if (p->layers & WIRE_L_ETH) {
		char mac[6 * 3 * 2 + 3];
		size_t n = 0;

		for (int side = 0; side < 2; side++) {
			const uint8_t *m = side ? p->eth.dst : p->eth.src;

			for (int i = 0; i < 6; i++) {
				mac[n++] = hexdigits[m[i] >> 4];
				mac[n++] = hexdigits[m[i] & 15];
				mac[n++] = ':';
			}
			n--;	/* the last ':' */
			if (!side) {
				memcpy(mac + n, " > ", 3);
				n += 3;
			}
		}
		SB_LIT(s, " eth ");
		sb_put(s, mac, n);
	}
	for (unsigned i = 0; i < p->nvlan; i++) {
		SB_U(s, " vlan ", p->vlan[i].vid);
		SB_U(s, " pcp ", p->vlan[i].pcp);
		if (p->vlan[i].dei)
			SB_LIT(s, " dei");
	}
	if (p->layers & WIRE_L_IPV4) {
		SB_U(s, " ip dscp ", p->ip4.dscp);
		SB_U(s, " ttl ", p->ip4.ttl);
		SB_X(s, " id 0x", p->ip4.id, 4);
		if (p->ip4.frag & 0x4000)
			SB_LIT(s, " DF");
		SB_U(s, " len ", p->ip4.total_len);
	}
	if (p->layers & WIRE_L_IPV6) {
		SB_U(s, " ip6 dscp ", p->ip6.dscp);
		SB_X(s, " flow 0x", p->ip6.flow_label, 5);
		SB_U(s, " hlim ", p->ip6.hop_limit);
		SB_U(s, " len ", p->ip6.payload_len);
	}
	if (p->layers & WIRE_L_UDP) {
		SB_U(s, " udp len ", p->udp.len);
		SB_X(s, " csum 0x", p->udp.csum, 4);
	}
	if (p->layers & WIRE_L_LRH) {
		SB_U(s, " lrh vl ", p->lrh.vl);
		SB_U(s, " sl ", p->lrh.sl);
		SB_U(s, " lnh ", p->lrh.lnh);
		SB_U(s, " pktlen ", p->lrh.pkt_len);
	}
	if (p->layers & WIRE_L_GRH) {
		SB_X(s, " grh tclass 0x", p->grh.tclass, 2);
		SB_X(s, " flow 0x", p->grh.flow_label, 5);
		SB_U(s, " paylen ", p->grh.paylen);
		SB_U(s, " hoplmt ", p->grh.hoplmt);
	}
	SB_X(s, " pkey 0x", b->pkey, 4);
	SB_01(s, " se ", b->se);
	SB_01(s, " m ", b->mig);
	SB_U(s, " pad ", b->padcnt);
	SB_U(s, " tver ", b->tver);
	SB_01(s, " fecn ", b->fecn);
	SB_01(s, " becn ", b->becn);
}

static const char *crc_word(enum crc_verdict v)
{
	switch (v) {
	case CRC_OK: return "ok";
	case CRC_BAD: return "BAD";
	case CRC_UNCHECKED: return "unchecked";
	default: return NULL;
	}
}

static void status_text(struct sbuf *s, enum wire_status st)
{
	SB_LIT(s, " [");
	sb_str(s, wire_status_str(st));
	SB_LIT(s, "]");
}

size_t render_packet_line(char *buf, size_t cap, const struct pkt_view *v, bool verbose,
			  struct time_cache *tc)
{
	const struct wire_pkt *p = v->p;
	struct sbuf s = { buf, cap, 0, false };
	uint8_t ecn = render_pkt_ecn(p);
	const char *w;

	if (!cap)
		return 0;
	time_of_day(&s, v->ts_ns, tc);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6 | WIRE_L_LRH | WIRE_L_GRH)) {
		SB_LIT(&s, " ");
		endpoint(&s, p, false);
		SB_LIT(&s, " > ");
		endpoint(&s, p, true);
	}
	if (p->encap == WIRE_ENCAP_ROCEV1)
		SB_LIT(&s, " RoCEv1");
	for (unsigned i = 0; i < p->nvlan && !verbose; i++)
		SB_U(&s, " vlan ", p->vlan[i].vid);
	if (ecn == WIRE_CE)
		SB_LIT(&s, " CE!");
	else if (ecn == WIRE_ECT0)
		SB_LIT(&s, " ECT0");
	else if (ecn == WIRE_ECT1)
		SB_LIT(&s, " ECT1");
	if (!(p->layers & WIRE_L_BTH)) {
		status_text(&s, v->status);
		goto done;
	}
	if (p->op) {
		SB_LIT(&s, " ");
		sb_str(&s, p->op->name);
	} else {
		SB_X(&s, " [unknown opcode 0x", p->bth.opcode, 2);
		SB_LIT(&s, "]");
	}
	SB_X(&s, " qp 0x", p->bth.dqpn, 6);
	SB_U(&s, " psn ", p->bth.psn);
	if (p->bth.ackreq)
		SB_LIT(&s, " A");
	if (p->bth.becn && !verbose)
		SB_LIT(&s, " BECN");
	if (verbose)
		verbose_text(&s, p);
	ext_text(&s, p);
	if (p->op && p->op->payload)
		SB_U(&s, " payload ", p->payload_len);
	if (v->gso_count) {
		SB_U(&s, " [GSO ", v->gso_index + 1);
		SB_U(&s, "/", v->gso_count);
		SB_LIT(&s, "]");
	}
	if (v->status != WIRE_OK)
		status_text(&s, v->status);
	if ((w = crc_word(v->icrc))) {
		SB_LIT(&s, " ICRC ");
		sb_str(&s, w);
	}
	if ((w = crc_word(v->vcrc))) {
		SB_LIT(&s, " VCRC ");
		sb_str(&s, w);
	}
done:
	buf[s.len] = '\0';
	return s.len;
}
