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

const char *render_ecn_name(uint8_t ecn)
{
	static const char *const names[] = { "not-ect", "ect1", "ect0", "ce" };

	return names[ecn & 3];
}

/*
 * A bounded appender: never overflows, keeps at most cap - 1 characters
 * (room for the NUL), and remembers whether anything was cut.
 */
struct sbuf {
	char *buf;
	size_t cap, len;
	bool cut;
};

static void sb_put_slow(struct sbuf *s, const char *p, size_t n)
{
	size_t room = s->cap - 1 - s->len;	/* len <= cap - 1 always */

	s->cut = true;
	memcpy(s->buf + s->len, p, room < n ? room : n);
	s->len += room < n ? room : n;
}

static inline void sb_put(struct sbuf *s, const char *p, size_t n)
{
	if (s->len + n < s->cap) {
		memcpy(s->buf + s->len, p, n);
		s->len += n;
	} else {
		sb_put_slow(s, p, n);
	}
}

static inline void sb_str(struct sbuf *s, const char *str)
{
	sb_put(s, str, strlen(str));
}

/* A string literal, its length known at compile time. */
#define SB_LIT(s, lit) sb_put((s), "" lit, sizeof(lit) - 1)

static const char digits2[201] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const char hexdigits[17] = "0123456789abcdef";
static const char hexupper[17] = "0123456789ABCDEF";

/* Writes v in decimal so that it ends just before end; returns its length. */
static size_t fmt_u64(char *end, uint64_t v)
{
	char *p = end;

	while (v >= 100) {
		size_t i = (size_t)(v % 100) * 2;

		v /= 100;
		p -= 2;
		memcpy(p, digits2 + i, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digits2 + v * 2, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return (size_t)(end - p);
}

/* printf's %u / %zu / %" PRIu64 ". */
static void sb_u64(struct sbuf *s, uint64_t v)
{
	char tmp[20];
	size_t n = fmt_u64(tmp + sizeof(tmp), v);

	sb_put(s, tmp + sizeof(tmp) - n, n);
}

/* JSON integers as jansson prints them: signed 64-bit, so clamped. */
static void sb_jint(struct sbuf *s, uint64_t v)
{
	sb_u64(s, v > INT64_MAX ? INT64_MAX : v);
}

/* printf's %0<width>x (width 0: %x), lower case. */
static void sb_hex(struct sbuf *s, uint64_t v, unsigned width)
{
	char tmp[16];
	unsigned n = 0;

	do {
		tmp[15 - n++] = hexdigits[v & 15];
		v >>= 4;
	} while (v);
	while (n < width && n < 16)
		tmp[15 - n++] = '0';
	sb_put(s, tmp + 16 - n, n);
}

static void sb_bool01(struct sbuf *s, bool b)
{
	sb_put(s, b ? "1" : "0", 1);
}

/* A literal, then a value: " psn " and 123, ",\"psn\":" and 123. */
#define SB_U(s, lit, v) (SB_LIT(s, lit), sb_u64((s), (v)))
#define SB_X(s, lit, v, width) (SB_LIT(s, lit), sb_hex((s), (v), (width)))
#define SB_01(s, lit, b) (SB_LIT(s, lit), sb_bool01((s), (b)))

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
static size_t addr_text(const struct wire_pkt *p, bool dst, char *out, int *family)
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

static uint8_t pkt_ecn(const struct wire_pkt *p)
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
	size_t n = addr_text(p, dst, addr, &family);

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
	uint8_t ecn = pkt_ecn(p);
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
		n = addr_text(p, false, addr, &family);
		SB_LIT(&s, ",\"src\":\"");
		sb_put(&s, addr, n);
		n = addr_text(p, true, addr, &family);
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
		switch (pkt_ecn(p)) {
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
