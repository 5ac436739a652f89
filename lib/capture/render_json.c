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

/* --- one field walk, two writers ---------------------------------------- */

/*
 * A packet's JSON fields are listed once (packet_fields) and written either
 * straight into a buffer (the NDJSON line, capture's hot path) or through
 * print_* into a jansson tree (tests and the fuzzer compare the two byte for
 * byte).  Keys are string literals, so their lengths are compile-time.
 */
struct jw {
	struct sbuf *s;		/* NDJSON; NULL: the tree */
	struct printer *pr;
	bool first;		/* NDJSON: no comma before the next member */
};

/* ,"key": as one literal of known length (stores, not a memcpy call); no
 * comma after an opening brace. */
#define JW_KEY(w, key)                                                          \
	do {                                                                    \
		if ((w)->first) {                                               \
			(w)->first = false;                                     \
			SB_LIT((w)->s, "\"" key "\":");                         \
		} else {                                                        \
			SB_LIT((w)->s, ",\"" key "\":");                        \
		}                                                               \
	} while (0)

/* 64-bit wire values (addresses, atomic operands) print exactly in NDJSON,
 * as JSON numbers of any size may; jansson's signed integers clamp them. */
#define JW_U(w, key, v)                                                         \
	do {                                                                    \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			sb_u64((w)->s, (v));                                    \
		} else {                                                        \
			print_uint((w)->pr, PRINT_JSON, key, NULL, (v));        \
		}                                                               \
	} while (0)

/* Values jansson writes as signed integers in both forms. */
#define JW_J(w, key, v)                                                         \
	do {                                                                    \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			sb_jint((w)->s, (v));                                   \
		} else {                                                        \
			print_uint((w)->pr, PRINT_JSON, key, NULL, (v));        \
		}                                                               \
	} while (0)

#define JW_B(w, key, b)                                                         \
	do {                                                                    \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			sb_jbool((w)->s, (b));                                  \
		} else {                                                        \
			print_bool((w)->pr, PRINT_JSON, key, NULL, (b), NULL, NULL); \
		}                                                               \
	} while (0)

#define JW_REAL(w, key, d)                                                      \
	do {                                                                    \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			sb_jreal((w)->s, (d));                                  \
		} else {                                                        \
			print_float((w)->pr, PRINT_JSON, key, NULL, (d));       \
		}                                                               \
	} while (0)

/* A string, escaped as jansson escapes it; NULL is null. */
#define JW_STR(w, key, str)                                                     \
	do {                                                                    \
		const char *str_ = (str);                                       \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			if (str_)                                               \
				sb_jstr((w)->s, str_);                          \
			else                                                    \
				SB_LIT((w)->s, "null");                         \
		} else if (str_) {                                              \
			print_json((w)->pr, key, json_string(str_));            \
		} else {                                                        \
			print_null((w)->pr, PRINT_JSON, key, NULL, NULL);       \
		}                                                               \
	} while (0)

/* A string of our own making that needs no escaping (an address, a name
 * from a fixed table): NDJSON copies it without scanning. */
#define JW_PLAIN(w, key, str)                                                   \
	do {                                                                    \
		const char *str_ = (str);                                       \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			SB_LIT((w)->s, "\"");                                   \
			sb_str((w)->s, str_);                                   \
			SB_LIT((w)->s, "\"");                                   \
		} else {                                                        \
			print_string((w)->pr, PRINT_JSON, key, NULL, str_);     \
		}                                                               \
	} while (0)

#define JW_OPEN(w, key)                                                         \
	do {                                                                    \
		if ((w)->s) {                                                   \
			JW_KEY(w, key);                                         \
			SB_LIT((w)->s, "{");                                    \
			(w)->first = true;                                      \
		} else {                                                        \
			print_open_object((w)->pr, key);                        \
		}                                                               \
	} while (0)

static inline void jw_close(struct jw *w)
{
	if (w->s) {
		SB_LIT(w->s, "}");
		w->first = false;
	} else {
		print_close(w->pr);
	}
}

/* Inlined into each writer, so the NDJSON copy (capture's hot path) has the
 * choice of writer folded away: 12% fewer instructions per packet. */
#define JW_INLINE static inline __attribute__((always_inline))

JW_INLINE void ext_fields(struct jw *w, const struct wire_pkt *p)
{
	static const char *const kinds[] = { "ack", "rnr_nak", "reserved", "nak" };
	uint16_t x = p->ext;

	if (x & WIRE_X_RDETH) {
		JW_OPEN(w, "rdeth");
		JW_U(w, "eecnxt", p->rdeth.eecnxt);
		jw_close(w);
	}
	if (x & WIRE_X_DETH) {
		JW_OPEN(w, "deth");
		JW_U(w, "qkey", p->deth.qkey);
		JW_U(w, "src_qp", p->deth.srcqp);
		jw_close(w);
	}
	if (x & WIRE_X_XRCETH) {
		JW_OPEN(w, "xrceth");
		JW_U(w, "srq", p->xrceth.xrcsrq);
		jw_close(w);
	}
	if (x & WIRE_X_FETH) {
		JW_OPEN(w, "feth");
		JW_U(w, "selectivity", p->feth.sel);
		JW_U(w, "placement", p->feth.placement);
		jw_close(w);
	}
	if (x & WIRE_X_RETH) {
		JW_OPEN(w, "reth");
		JW_U(w, "va", p->reth.va);
		JW_U(w, "rkey", p->reth.rkey);
		JW_U(w, "dma_len", p->reth.dmalen);
		jw_close(w);
	}
	if (x & WIRE_X_ATOMICETH) {
		JW_OPEN(w, "atomic");
		JW_U(w, "va", p->atomiceth.va);
		JW_U(w, "rkey", p->atomiceth.rkey);
		JW_U(w, "swap_add", p->atomiceth.swap_add);
		JW_U(w, "compare", p->atomiceth.compare);
		jw_close(w);
	}
	if (x & WIRE_X_AETH) {
		char text[64];

		render_aeth_text(text, sizeof(text), p->aeth.syndrome);
		JW_OPEN(w, "aeth");
		JW_U(w, "syndrome", p->aeth.syndrome);
		JW_PLAIN(w, "kind", kinds[wire_aeth_kind(p->aeth.syndrome)]);
		JW_U(w, "code", wire_aeth_value(p->aeth.syndrome));
		JW_U(w, "msn", p->aeth.msn);
		JW_STR(w, "text", text);
		jw_close(w);
	}
	if (x & WIRE_X_ATOMICACKETH) {
		JW_OPEN(w, "atomic_ack");
		JW_U(w, "orig", p->atomicacketh.orig);
		jw_close(w);
	}
	if (x & WIRE_X_IMMDT)
		JW_U(w, "immdt", p->immdt);
	if (x & WIRE_X_IETH)
		JW_U(w, "ieth", p->ieth);
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

static const char *encap_name(enum wire_encap e)
{
	switch (e) {
	case WIRE_ENCAP_ROCEV1: return "rocev1";
	case WIRE_ENCAP_IB: return "ib";
	case WIRE_ENCAP_ROCEV2: return "rocev2";
	default: return "none";
	}
}

/* Every field of a packet's JSON object, in order. */
JW_INLINE void packet_fields(struct jw *w, const struct pkt_view *v, bool verbose)
{
	const struct wire_pkt *p = v->p;
	const char *crc;

	JW_J(w, "frame", v->frame);
	JW_REAL(w, "time", (double)v->ts_ns / 1e9);
	JW_J(w, "time_ns", v->ts_ns);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6 | WIRE_L_LRH | WIRE_L_GRH)) {
		char addr[64];
		int family;

		render_addr_text(p, false, addr, &family);
		JW_PLAIN(w, "src", addr);
		render_addr_text(p, true, addr, &family);
		JW_PLAIN(w, "dst", addr);
	}
	if (p->layers & WIRE_L_UDP) {
		JW_U(w, "src_port", p->udp.sport);
		JW_U(w, "dst_port", p->udp.dport);
	}
	if (p->layers & WIRE_L_LRH) {
		JW_U(w, "slid", p->lrh.slid);
		JW_U(w, "dlid", p->lrh.dlid);
	}
	JW_PLAIN(w, "encap", encap_name(p->encap));
	if (p->nvlan)
		JW_U(w, "vlan", p->vlan[0].vid);
	if (p->layers & (WIRE_L_IPV4 | WIRE_L_IPV6))
		JW_PLAIN(w, "ecn", render_ecn_name(render_pkt_ecn(p)));
	if (v->status != WIRE_OK)
		JW_STR(w, "status", wire_status_str(v->status));
	if (!(p->layers & WIRE_L_BTH))
		return;
	JW_U(w, "opcode", p->bth.opcode);
	JW_STR(w, "opcode_name", p->op ? p->op->name : NULL);
	JW_U(w, "dest_qp", p->bth.dqpn);
	JW_U(w, "psn", p->bth.psn);
	JW_B(w, "ack_req", p->bth.ackreq);
	if (verbose || p->bth.becn)
		JW_B(w, "becn", p->bth.becn);
	if (verbose) {
		JW_B(w, "se", p->bth.se);
		JW_B(w, "mig_req", p->bth.mig);
		JW_U(w, "pad_count", p->bth.padcnt);
		JW_U(w, "tver", p->bth.tver);
		JW_U(w, "pkey", p->bth.pkey);
		JW_B(w, "fecn", p->bth.fecn);
		if (p->layers & WIRE_L_IPV4) {
			JW_U(w, "dscp", p->ip4.dscp);
			JW_U(w, "ttl", p->ip4.ttl);
			JW_U(w, "ip_id", p->ip4.id);
		}
		if (p->layers & WIRE_L_IPV6) {
			JW_U(w, "dscp", p->ip6.dscp);
			JW_U(w, "flow_label", p->ip6.flow_label);
			JW_U(w, "hop_limit", p->ip6.hop_limit);
		}
		JW_J(w, "frame_len", v->wire_len);
	}
	ext_fields(w, p);
	JW_J(w, "payload_len", p->payload_len);
	if (v->gso_count) {
		JW_OPEN(w, "gso");
		JW_J(w, "segment", (uint64_t)v->gso_index + 1);
		JW_J(w, "segments", v->gso_count);
		jw_close(w);
	}
	if ((crc = crc_json(v->icrc)))
		JW_PLAIN(w, "icrc", crc);
	if ((crc = crc_json(v->vcrc)))
		JW_PLAIN(w, "vcrc", crc);
}

size_t render_packet_ndjson(char *buf, size_t cap, const struct pkt_view *v, bool verbose)
{
	struct sbuf s = { buf, cap, 0, false };
	struct jw w = { .s = &s, .first = true };

	if (!cap)
		return 0;
	SB_LIT(&s, "{");
	packet_fields(&w, v, verbose);
	SB_LIT(&s, "}");
	buf[s.len] = '\0';
	return s.cut ? 0 : s.len;
}

json_t *render_packet_json(const struct pkt_view *v, bool verbose)
{
	struct printer pr;
	struct jw w = { .pr = &pr };

	printer_init(&pr, NULL, true);
	packet_fields(&w, v, verbose);
	return printer_take(&pr);
}
