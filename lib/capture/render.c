// SPDX-License-Identifier: MIT
/* Text and JSON renderings of captured packets and flow summaries. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "render.h"

const char *render_ecn_name(uint8_t ecn)
{
	static const char *const names[] = { "not-ect", "ect1", "ect0", "ce" };

	return names[ecn & 3];
}

/* A bounded appender: never overflows, remembers the length. */
struct sbuf {
	char *buf;
	size_t cap, len;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= s->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len = s->len + (size_t)n < s->cap ? s->len + (size_t)n : s->cap - 1;
}

static uint8_t pkt_ecn(const struct wire_pkt *p)
{
	if (p->layers & WIRE_L_IPV4)
		return p->ip4.ecn;
	if (p->layers & WIRE_L_IPV6)
		return p->ip6.ecn;
	return WIRE_NOT_ECT;
}

static void endpoint(const struct wire_pkt *p, bool dst, char *out, size_t cap)
{
	struct flow_key k;
	char addr[64];

	flow_key_of(p, &k);
	flow_addr_str(&k, dst, addr, sizeof(addr));
	if (p->layers & WIRE_L_UDP) {
		if (k.family == 6)
			snprintf(out, cap, "[%s]:%u", addr, dst ? p->udp.dport : p->udp.sport);
		else
			snprintf(out, cap, "%s:%u", addr, dst ? p->udp.dport : p->udp.sport);
	} else {
		snprintf(out, cap, "%s", addr);
	}
}

static void time_of_day(struct sbuf *s, uint64_t ts_ns, struct time_cache *tc)
{
	int64_t sec = (int64_t)(ts_ns / 1000000000u);

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
	sb_printf(s, "%s.%09" PRIu64, tc->text, ts_ns % 1000000000u);
}

static void aeth_text(struct sbuf *s, const struct wire_pkt *p)
{
	char d[64];

	wire_aeth_describe(d, sizeof(d), p->aeth.syndrome);
	sb_printf(s, " aeth %s msn %u", d, p->aeth.msn);
}

static void ext_text(struct sbuf *s, const struct wire_pkt *p)
{
	if (p->ext & WIRE_X_RDETH)
		sb_printf(s, " rdeth eecnxt 0x%06x", p->rdeth.eecnxt);
	if (p->ext & WIRE_X_DETH)
		sb_printf(s, " deth qkey 0x%08x src_qp 0x%06x", p->deth.qkey, p->deth.srcqp);
	if (p->ext & WIRE_X_XRCETH)
		sb_printf(s, " xrceth srq 0x%06x", p->xrceth.xrcsrq);
	if (p->ext & WIRE_X_FETH)
		sb_printf(s, " feth sel %u placement %u", p->feth.sel, p->feth.placement);
	if (p->ext & WIRE_X_RETH)
		sb_printf(s, " reth va 0x%" PRIx64 " rkey 0x%08x len %u", p->reth.va, p->reth.rkey,
			  p->reth.dmalen);
	if (p->ext & WIRE_X_ATOMICETH)
		sb_printf(s, " atomic va 0x%" PRIx64 " rkey 0x%08x swap_add 0x%" PRIx64
			  " compare 0x%" PRIx64, p->atomiceth.va, p->atomiceth.rkey,
			  p->atomiceth.swap_add, p->atomiceth.compare);
	if (p->ext & WIRE_X_AETH)
		aeth_text(s, p);
	if (p->ext & WIRE_X_ATOMICACKETH)
		sb_printf(s, " orig 0x%" PRIx64, p->atomicacketh.orig);
	if (p->ext & WIRE_X_IMMDT)
		sb_printf(s, " imm 0x%08x", p->immdt);
	if (p->ext & WIRE_X_IETH)
		sb_printf(s, " inv_rkey 0x%08x", p->ieth);
}

static void verbose_text(struct sbuf *s, const struct wire_pkt *p)
{
	const struct wire_bth *b = &p->bth;

	if (p->layers & WIRE_L_ETH)
		sb_printf(s, " eth %02x:%02x:%02x:%02x:%02x:%02x > %02x:%02x:%02x:%02x:%02x:%02x",
			  p->eth.src[0], p->eth.src[1], p->eth.src[2], p->eth.src[3],
			  p->eth.src[4], p->eth.src[5], p->eth.dst[0], p->eth.dst[1],
			  p->eth.dst[2], p->eth.dst[3], p->eth.dst[4], p->eth.dst[5]);
	for (unsigned i = 0; i < p->nvlan; i++)
		sb_printf(s, " vlan %u pcp %u%s", p->vlan[i].vid, p->vlan[i].pcp,
			  p->vlan[i].dei ? " dei" : "");
	if (p->layers & WIRE_L_IPV4)
		sb_printf(s, " ip dscp %u ttl %u id 0x%04x%s len %u", p->ip4.dscp, p->ip4.ttl,
			  p->ip4.id, p->ip4.frag & 0x4000 ? " DF" : "", p->ip4.total_len);
	if (p->layers & WIRE_L_IPV6)
		sb_printf(s, " ip6 dscp %u flow 0x%05x hlim %u len %u", p->ip6.dscp,
			  p->ip6.flow_label, p->ip6.hop_limit, p->ip6.payload_len);
	if (p->layers & WIRE_L_UDP)
		sb_printf(s, " udp len %u csum 0x%04x", p->udp.len, p->udp.csum);
	if (p->layers & WIRE_L_LRH)
		sb_printf(s, " lrh vl %u sl %u lnh %u pktlen %u", p->lrh.vl, p->lrh.sl, p->lrh.lnh,
			  p->lrh.pkt_len);
	if (p->layers & WIRE_L_GRH)
		sb_printf(s, " grh tclass 0x%02x flow 0x%05x paylen %u hoplmt %u", p->grh.tclass,
			  p->grh.flow_label, p->grh.paylen, p->grh.hoplmt);
	sb_printf(s, " pkey 0x%04x se %u m %u pad %u tver %u fecn %u becn %u", b->pkey, b->se,
		  b->mig, b->padcnt, b->tver, b->fecn, b->becn);
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

size_t render_packet_line(char *buf, size_t cap, const struct pkt_view *v, bool verbose,
			  struct time_cache *tc)
{
	const struct wire_pkt *p = v->p;
	struct sbuf s = { buf, cap, 0 };
	char src[80], dst[80];
	uint8_t ecn = pkt_ecn(p);

	buf[0] = '\0';
	time_of_day(&s, v->ts_ns, tc);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6 | WIRE_L_LRH | WIRE_L_GRH)) {
		endpoint(p, false, src, sizeof(src));
		endpoint(p, true, dst, sizeof(dst));
		sb_printf(&s, " %s > %s", src, dst);
	}
	if (p->encap == WIRE_ENCAP_ROCEV1)
		sb_printf(&s, " RoCEv1");
	for (unsigned i = 0; i < p->nvlan; i++)
		if (!verbose)
			sb_printf(&s, " vlan %u", p->vlan[i].vid);
	if (ecn != WIRE_NOT_ECT)
		sb_printf(&s, ecn == WIRE_CE ? " CE!" : " %s", ecn == WIRE_ECT0 ? "ECT0" : "ECT1");
	if (!(p->layers & WIRE_L_BTH)) {
		sb_printf(&s, " [%s]", wire_status_str(v->status));
		return s.len;
	}
	if (p->op)
		sb_printf(&s, " %s", p->op->name);
	else
		sb_printf(&s, " [unknown opcode 0x%02x]", p->bth.opcode);
	sb_printf(&s, " qp 0x%06x psn %u%s%s", p->bth.dqpn, p->bth.psn,
		  p->bth.ackreq ? " A" : "", p->bth.becn && !verbose ? " BECN" : "");
	if (verbose)
		verbose_text(&s, p);
	ext_text(&s, p);
	if (p->op && p->op->payload)
		sb_printf(&s, " payload %zu", p->payload_len);
	if (v->gso_count)
		sb_printf(&s, " [GSO %zu/%zu]", v->gso_index + 1, v->gso_count);
	if (v->status != WIRE_OK)
		sb_printf(&s, " [%s]", wire_status_str(v->status));
	if (crc_word(v->icrc))
		sb_printf(&s, " ICRC %s", crc_word(v->icrc));
	if (crc_word(v->vcrc))
		sb_printf(&s, " VCRC %s", crc_word(v->vcrc));
	return s.len;
}

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v));
}

static json_t *ext_json(const struct wire_pkt *p, json_t *o)
{
	if (p->ext & WIRE_X_RDETH)
		json_object_set_new(o, "rdeth", json_pack("{s:I}", "eecnxt", (json_int_t)p->rdeth.eecnxt));
	if (p->ext & WIRE_X_DETH)
		json_object_set_new(o, "deth", json_pack("{s:I, s:I}", "qkey", (json_int_t)p->deth.qkey,
							  "src_qp", (json_int_t)p->deth.srcqp));
	if (p->ext & WIRE_X_XRCETH)
		json_object_set_new(o, "xrceth", json_pack("{s:I}", "srq", (json_int_t)p->xrceth.xrcsrq));
	if (p->ext & WIRE_X_FETH)
		json_object_set_new(o, "feth", json_pack("{s:i, s:i}", "selectivity", p->feth.sel,
							  "placement", p->feth.placement));
	if (p->ext & WIRE_X_RETH) {
		json_t *r = json_object();

		set_u64(r, "va", p->reth.va);
		set_u64(r, "rkey", p->reth.rkey);
		set_u64(r, "dma_len", p->reth.dmalen);
		json_object_set_new(o, "reth", r);
	}
	if (p->ext & WIRE_X_ATOMICETH) {
		json_t *a = json_object();

		set_u64(a, "va", p->atomiceth.va);
		set_u64(a, "rkey", p->atomiceth.rkey);
		set_u64(a, "swap_add", p->atomiceth.swap_add);
		set_u64(a, "compare", p->atomiceth.compare);
		json_object_set_new(o, "atomic", a);
	}
	if (p->ext & WIRE_X_AETH) {
		static const char *const kinds[] = { "ack", "rnr_nak", "reserved", "nak" };
		char d[64];

		wire_aeth_describe(d, sizeof(d), p->aeth.syndrome);
		json_object_set_new(o, "aeth", json_pack("{s:i, s:s, s:i, s:I, s:s}", "syndrome",
			p->aeth.syndrome, "kind", kinds[wire_aeth_kind(p->aeth.syndrome)],
			"code", wire_aeth_value(p->aeth.syndrome), "msn", (json_int_t)p->aeth.msn,
			"text", d));
	}
	if (p->ext & WIRE_X_ATOMICACKETH) {
		json_t *a = json_object();

		set_u64(a, "orig", p->atomicacketh.orig);
		json_object_set_new(o, "atomic_ack", a);
	}
	if (p->ext & WIRE_X_IMMDT)
		set_u64(o, "immdt", p->immdt);
	if (p->ext & WIRE_X_IETH)
		set_u64(o, "ieth", p->ieth);
	return o;
}

static const char *crc_json(enum crc_verdict v)
{
	switch (v) {
	case CRC_OK: return "ok";
	case CRC_BAD: return "bad";
	case CRC_UNCHECKED: return "unchecked";
	default: return NULL;
	}
}

json_t *render_packet_json(const struct pkt_view *v, bool verbose)
{
	const struct wire_pkt *p = v->p;
	json_t *o = json_object();
	struct flow_key k;
	char addr[64];

	set_u64(o, "frame", v->frame);
	json_object_set_new(o, "time", json_real((double)v->ts_ns / 1e9));
	set_u64(o, "time_ns", v->ts_ns);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6 | WIRE_L_LRH | WIRE_L_GRH)) {
		flow_key_of(p, &k);
		flow_addr_str(&k, false, addr, sizeof(addr));
		json_object_set_new(o, "src", json_string(addr));
		flow_addr_str(&k, true, addr, sizeof(addr));
		json_object_set_new(o, "dst", json_string(addr));
	}
	if (p->layers & WIRE_L_UDP) {
		json_object_set_new(o, "src_port", json_integer(p->udp.sport));
		json_object_set_new(o, "dst_port", json_integer(p->udp.dport));
	}
	if (p->layers & WIRE_L_LRH) {
		json_object_set_new(o, "slid", json_integer(p->lrh.slid));
		json_object_set_new(o, "dlid", json_integer(p->lrh.dlid));
	}
	json_object_set_new(o, "encap", json_string(p->encap == WIRE_ENCAP_ROCEV1 ? "rocev1" :
		p->encap == WIRE_ENCAP_IB ? "ib" : p->encap == WIRE_ENCAP_ROCEV2 ? "rocev2" : "none"));
	if (p->nvlan)
		json_object_set_new(o, "vlan", json_integer(p->vlan[0].vid));
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6))
		json_object_set_new(o, "ecn", json_string(render_ecn_name(pkt_ecn(p))));
	if (v->status != WIRE_OK)
		json_object_set_new(o, "status", json_string(wire_status_str(v->status)));
	if (!(p->layers & WIRE_L_BTH))
		return o;
	json_object_set_new(o, "opcode", json_integer(p->bth.opcode));
	json_object_set_new(o, "opcode_name", p->op ? json_string(p->op->name) : json_null());
	json_object_set_new(o, "dest_qp", json_integer(p->bth.dqpn));
	json_object_set_new(o, "psn", json_integer(p->bth.psn));
	json_object_set_new(o, "ack_req", json_boolean(p->bth.ackreq));
	if (verbose || p->bth.becn)
		json_object_set_new(o, "becn", json_boolean(p->bth.becn));
	if (verbose) {
		json_object_set_new(o, "se", json_boolean(p->bth.se));
		json_object_set_new(o, "mig_req", json_boolean(p->bth.mig));
		json_object_set_new(o, "pad_count", json_integer(p->bth.padcnt));
		json_object_set_new(o, "tver", json_integer(p->bth.tver));
		json_object_set_new(o, "pkey", json_integer(p->bth.pkey));
		json_object_set_new(o, "fecn", json_boolean(p->bth.fecn));
		if (p->layers & WIRE_L_IPV4) {
			json_object_set_new(o, "dscp", json_integer(p->ip4.dscp));
			json_object_set_new(o, "ttl", json_integer(p->ip4.ttl));
			json_object_set_new(o, "ip_id", json_integer(p->ip4.id));
		}
		if (p->layers & WIRE_L_IPV6) {
			json_object_set_new(o, "dscp", json_integer(p->ip6.dscp));
			json_object_set_new(o, "flow_label", json_integer(p->ip6.flow_label));
			json_object_set_new(o, "hop_limit", json_integer(p->ip6.hop_limit));
		}
		set_u64(o, "frame_len", v->wire_len);
	}
	ext_json(p, o);
	json_object_set_new(o, "payload_len", json_integer((json_int_t)p->payload_len));
	if (v->gso_count)
		json_object_set_new(o, "gso", json_pack("{s:I, s:I}", "segment",
			(json_int_t)v->gso_index + 1, "segments", (json_int_t)v->gso_count));
	if (crc_json(v->icrc))
		json_object_set_new(o, "icrc", json_string(crc_json(v->icrc)));
	if (crc_json(v->vcrc))
		json_object_set_new(o, "vcrc", json_string(crc_json(v->vcrc)));
	return o;
}
