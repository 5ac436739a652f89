// SPDX-License-Identifier: MIT
/*
 * JSON renderings of captured packets: the NDJSON line written directly
 * (capture's hot path), and the jansson tree it must equal (the unit tests
 * compare them byte for byte).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "render_int.h"
#include "sbuf.h"

static const char hexupper[17] = "0123456789ABCDEF";

/* --- NDJSON, written directly ------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t len;

	if (s[0] < 0xC2 || s[0] > 0xF4)
		return 0;
	len = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
	if (n < len)
		return 0;
	c = s[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3F);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	return len;
}

static void sb_jstr_slow(struct sbuf *s, const char *str);

/* Bytes a JSON string cannot hold as they are, and the NUL that ends it. */
static const uint8_t json_special[256] = {
	[0x00 ... 0x1F] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xFF] = 1,
};

/*
 * A JSON string as jansson's compact dump writes it: '"' and '\\' and
 * control characters escaped (\b \f \n \r \t, else \u00XX), '/' and
 * non-ASCII UTF-8 as they are.  Bytes that are not UTF-8 become '?', so
 * the line stays valid JSON whatever the input.  Plain ASCII, the usual
 * case, is one scan and one copy.
 */
static void sb_jstr(struct sbuf *s, const char *str)
{
	const unsigned char *c = (const unsigned char *)str;
	size_t n = 0;

	while (!json_special[c[n]])
		n++;
	if (c[n]) {
		sb_jstr_slow(s, str);
		return;
	}
	if (s->len + n + 2 < s->cap) {
		char *d = s->buf + s->len;

		d[0] = '"';
		memcpy(d + 1, str, n);
		d[n + 1] = '"';
		s->len += n + 2;
	} else {
		SB_LIT(s, "\"");
		sb_put(s, str, n);
		SB_LIT(s, "\"");
	}
}

static void sb_jstr_slow(struct sbuf *s, const char *str)
{
	const unsigned char *c = (const unsigned char *)str;
	char esc[6] = { '\\', 'u', '0', '0' };
	size_t run = 0;

	SB_LIT(s, "\"");
	for (;;) {
		unsigned char ch = c[run];

		if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
			run++;
			continue;
		}
		sb_put(s, (const char *)c, run);
		c += run;
		run = 0;
		if (!ch)
			break;
		if (ch >= 0x80) {
			size_t n = utf8_seq(c, strlen((const char *)c));

			if (n)
				sb_put(s, (const char *)c, n);
			else
				SB_LIT(s, "?");
			c += n ? n : 1;
			continue;
		}
		switch (ch) {
		case '"': SB_LIT(s, "\\\""); break;
		case '\\': SB_LIT(s, "\\\\"); break;
		case '\b': SB_LIT(s, "\\b"); break;
		case '\f': SB_LIT(s, "\\f"); break;
		case '\n': SB_LIT(s, "\\n"); break;
		case '\r': SB_LIT(s, "\\r"); break;
		case '\t': SB_LIT(s, "\\t"); break;
		default:
			esc[4] = hexupper[ch >> 4];
			esc[5] = hexupper[ch & 15];
			sb_put(s, esc, sizeof(esc));
			break;
		}
		c++;
	}
	SB_LIT(s, "\"");
}

/* jansson's real formatting: "%.17g", then a ".0" when it looks like an integer,
 * and no '+' or leading zeros in the exponent. */
static size_t real_slow(char *out, size_t cap, double d)
{
	int r = snprintf(out, cap, "%.17g", d);
	size_t len, i;
	char *e;

	if (r < 0 || (size_t)r + 3 >= cap)
		return 0;
	len = (size_t)r;
	for (i = 0; i < len; i++)	/* the locale's decimal point */
		if (!(out[i] >= '0' && out[i] <= '9') && out[i] != '-' && out[i] != '+' &&
		    out[i] != 'e')
			out[i] = '.';
	if (!memchr(out, '.', len) && !memchr(out, 'e', len)) {
		memcpy(out + len, ".0", 3);
		len += 2;
	}
	e = memchr(out, 'e', len);
	if (e) {
		char *start = e + 1, *end = e + 2;

		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, len - (size_t)(end - out) + 1);
			len -= (size_t)(end - start);
		}
	}
	return len;
}

/*
 * The same text for the common case, 1 <= d < 1e16 (every capture time
 * after 1970-01-01 00:00:01), in exact integer arithmetic: d = m * 2^e2
 * scaled by 10^F and rounded half to even, as glibc's printf rounds.
 */
size_t render_json_real(char *out, size_t cap, double d)
{
	__extension__ typedef unsigned __int128 u128;
	static const uint64_t pow10[17] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
		1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL, 10000000000000000ULL,
	};
	uint64_t bits, m, ip, n17;
	int e2, x = 0, f;
	u128 num, q;
	char dig[20];
	size_t len;

	if (!(d >= 1.0 && d < 1e16) || cap < 32)
		return real_slow(out, cap, d);
	memcpy(&bits, &d, sizeof(bits));
	e2 = (int)((bits >> 52) & 0x7FF) - 1075;
	m = (bits & ((1ULL << 52) - 1)) | 1ULL << 52;
	ip = (uint64_t)d;
	while (x < 16 && ip >= pow10[x + 1])
		x++;
	f = 16 - x;			/* digits after the point */
	num = (u128)m * pow10[f];
	if (e2 >= 0) {
		q = num << e2;
	} else {
		u128 rem, half;

		q = num >> -e2;
		rem = num & (((u128)1 << -e2) - 1);
		half = (u128)1 << (-e2 - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
	}
	if (q >= (u128)pow10[16] * 10)	/* rounded up to one digit more */
		return real_slow(out, cap, d);
	n17 = (uint64_t)q;
	fmt_u64(dig + 17, n17);		/* exactly 17 digits */
	memcpy(out, dig, (size_t)x + 1);
	len = (size_t)x + 1;
	out[len++] = '.';
	{
		int last = 16;

		while (last > x + 1 && dig[last] == '0')
			last--;
		/* all zeros: "%g" drops the point, jansson adds ".0" back */
		memcpy(out + len, dig + x + 1, (size_t)(last - x));
		len += (size_t)(last - x);
	}
	out[len] = '\0';
	return len;
}

static void sb_jreal(struct sbuf *s, double d)
{
	char tmp[40];
	size_t n = render_json_real(tmp, sizeof(tmp), d);

	if (n)
		sb_put(s, tmp, n);
	else
		SB_LIT(s, "null");
}

static void sb_jbool(struct sbuf *s, bool b)
{
	if (b)
		SB_LIT(s, "true");
	else
		SB_LIT(s, "false");
}

#define SB_J(s, lit, v) (SB_LIT(s, lit), sb_jint((s), (v)))
#define SB_B(s, lit, b) (SB_LIT(s, lit), sb_jbool((s), (b)))

/* 64-bit wire values (addresses, atomic operands) print exactly, as JSON
 * numbers of any size may: readers that use doubles lose the low bits, as
 * with tshark's JSON. */
static void ext_ndjson(struct sbuf *s, const struct wire_pkt *p)
{
	static const char *const kinds[] = { "ack", "rnr_nak", "reserved", "nak" };
	uint16_t x = p->ext;

	if (x & WIRE_X_RDETH) {
		SB_U(s, ",\"rdeth\":{\"eecnxt\":", p->rdeth.eecnxt);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_DETH) {
		SB_U(s, ",\"deth\":{\"qkey\":", p->deth.qkey);
		SB_U(s, ",\"src_qp\":", p->deth.srcqp);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_XRCETH) {
		SB_U(s, ",\"xrceth\":{\"srq\":", p->xrceth.xrcsrq);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_FETH) {
		SB_U(s, ",\"feth\":{\"selectivity\":", p->feth.sel);
		SB_U(s, ",\"placement\":", p->feth.placement);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_RETH) {
		SB_U(s, ",\"reth\":{\"va\":", p->reth.va);
		SB_U(s, ",\"rkey\":", p->reth.rkey);
		SB_U(s, ",\"dma_len\":", p->reth.dmalen);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_ATOMICETH) {
		SB_U(s, ",\"atomic\":{\"va\":", p->atomiceth.va);
		SB_U(s, ",\"rkey\":", p->atomiceth.rkey);
		SB_U(s, ",\"swap_add\":", p->atomiceth.swap_add);
		SB_U(s, ",\"compare\":", p->atomiceth.compare);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_AETH) {
		char text[64];

		render_aeth_text(text, sizeof(text), p->aeth.syndrome);
		SB_U(s, ",\"aeth\":{\"syndrome\":", p->aeth.syndrome);
		SB_LIT(s, ",\"kind\":");
		sb_jstr(s, kinds[wire_aeth_kind(p->aeth.syndrome)]);
		SB_U(s, ",\"code\":", wire_aeth_value(p->aeth.syndrome));
		SB_U(s, ",\"msn\":", p->aeth.msn);
		SB_LIT(s, ",\"text\":");
		sb_jstr(s, text);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_ATOMICACKETH) {
		SB_U(s, ",\"atomic_ack\":{\"orig\":", p->atomicacketh.orig);
		SB_LIT(s, "}");
	}
	if (x & WIRE_X_IMMDT)
		SB_U(s, ",\"immdt\":", p->immdt);
	if (x & WIRE_X_IETH)
		SB_U(s, ",\"ieth\":", p->ieth);
}

static const char *crc_json(enum crc_verdict v);

size_t render_packet_ndjson(char *buf, size_t cap, const struct pkt_view *v, bool verbose)
{
	const struct wire_pkt *p = v->p;
	struct sbuf s = { buf, cap, 0, false };
	const char *w;

	if (!cap)
		return 0;
	SB_J(&s, "{\"frame\":", v->frame);
	SB_LIT(&s, ",\"time\":");
	sb_jreal(&s, (double)v->ts_ns / 1e9);
	SB_J(&s, ",\"time_ns\":", v->ts_ns);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6 | WIRE_L_LRH | WIRE_L_GRH)) {
		char addr[64];
		int family;
		size_t n;

		/* Digits, hex, ':', '.' and "lid 0x": nothing to escape. */
		n = render_addr_text(p, false, addr, &family);
		SB_LIT(&s, ",\"src\":\"");
		sb_put(&s, addr, n);
		n = render_addr_text(p, true, addr, &family);
		SB_LIT(&s, "\",\"dst\":\"");
		sb_put(&s, addr, n);
		SB_LIT(&s, "\"");
	}
	if (p->layers & WIRE_L_UDP) {
		SB_U(&s, ",\"src_port\":", p->udp.sport);
		SB_U(&s, ",\"dst_port\":", p->udp.dport);
	}
	if (p->layers & WIRE_L_LRH) {
		SB_U(&s, ",\"slid\":", p->lrh.slid);
		SB_U(&s, ",\"dlid\":", p->lrh.dlid);
	}
	switch (p->encap) {
	case WIRE_ENCAP_ROCEV1: SB_LIT(&s, ",\"encap\":\"rocev1\""); break;
	case WIRE_ENCAP_IB: SB_LIT(&s, ",\"encap\":\"ib\""); break;
	case WIRE_ENCAP_ROCEV2: SB_LIT(&s, ",\"encap\":\"rocev2\""); break;
	default: SB_LIT(&s, ",\"encap\":\"none\""); break;
	}
	if (p->nvlan)
		SB_U(&s, ",\"vlan\":", p->vlan[0].vid);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6)) {
		switch (render_pkt_ecn(p)) {
		case WIRE_NOT_ECT: SB_LIT(&s, ",\"ecn\":\"not-ect\""); break;
		case WIRE_ECT1: SB_LIT(&s, ",\"ecn\":\"ect1\""); break;
		case WIRE_ECT0: SB_LIT(&s, ",\"ecn\":\"ect0\""); break;
		default: SB_LIT(&s, ",\"ecn\":\"ce\""); break;
		}
	}
	if (v->status != WIRE_OK) {
		SB_LIT(&s, ",\"status\":");
		sb_jstr(&s, wire_status_str(v->status));
	}
	if (!(p->layers & WIRE_L_BTH))
		goto done;
	SB_U(&s, ",\"opcode\":", p->bth.opcode);
	SB_LIT(&s, ",\"opcode_name\":");
	if (p->op)
		sb_jstr(&s, p->op->name);
	else
		SB_LIT(&s, "null");
	SB_U(&s, ",\"dest_qp\":", p->bth.dqpn);
	SB_U(&s, ",\"psn\":", p->bth.psn);
	SB_B(&s, ",\"ack_req\":", p->bth.ackreq);
	if (verbose || p->bth.becn)
		SB_B(&s, ",\"becn\":", p->bth.becn);
	if (verbose) {
		SB_B(&s, ",\"se\":", p->bth.se);
		SB_B(&s, ",\"mig_req\":", p->bth.mig);
		SB_U(&s, ",\"pad_count\":", p->bth.padcnt);
		SB_U(&s, ",\"tver\":", p->bth.tver);
		SB_U(&s, ",\"pkey\":", p->bth.pkey);
		SB_B(&s, ",\"fecn\":", p->bth.fecn);
		if (p->layers & WIRE_L_IPV4) {
			SB_U(&s, ",\"dscp\":", p->ip4.dscp);
			SB_U(&s, ",\"ttl\":", p->ip4.ttl);
			SB_U(&s, ",\"ip_id\":", p->ip4.id);
		}
		if (p->layers & WIRE_L_IPV6) {
			SB_U(&s, ",\"dscp\":", p->ip6.dscp);
			SB_U(&s, ",\"flow_label\":", p->ip6.flow_label);
			SB_U(&s, ",\"hop_limit\":", p->ip6.hop_limit);
		}
		SB_J(&s, ",\"frame_len\":", v->wire_len);
	}
	ext_ndjson(&s, p);
	SB_J(&s, ",\"payload_len\":", p->payload_len);
	if (v->gso_count) {
		SB_J(&s, ",\"gso\":{\"segment\":", v->gso_index + 1);
		SB_J(&s, ",\"segments\":", v->gso_count);
		SB_LIT(&s, "}");
	}
	if (v->icrc == CRC_OK) {
		SB_LIT(&s, ",\"icrc\":\"ok\"");
	} else if ((w = crc_json(v->icrc))) {
		SB_LIT(&s, ",\"icrc\":");
		sb_jstr(&s, w);
	}
	if ((w = crc_json(v->vcrc))) {
		SB_LIT(&s, ",\"vcrc\":");
		sb_jstr(&s, w);
	}
done:
	SB_LIT(&s, "}");
	buf[s.len] = '\0';
	return s.cut ? 0 : s.len;
}

/* --- the jansson tree form ----------------------------------------------- */

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
		json_object_set_new(o, "ecn", json_string(render_ecn_name(render_pkt_ecn(p))));
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

