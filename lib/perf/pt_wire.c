// SPDX-License-Identifier: MIT
/* perftest's exchange, message by message; see pt_wire.h. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_wire.h"
#include "transport.h"

/* Offsets of struct ibv_device_attr's fields inside the negotiation
 * struct (§7: 80 + the field's offset, gcc on x86_64). */
#define NEG_ATTR_VENDOR_ID 176
#define NEG_ATTR_MAX_QP_RD_ATOM 224

void pt_put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

uint32_t pt_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void pt_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

uint64_t pt_get_be64(const uint8_t *p)
{
	return (uint64_t)pt_get_be32(p) << 32 | pt_get_be32(p + 4);
}

/* Digits with at most one dot, as "6.06": what perftest's VERSION is. */
static bool version_text_ok(const char *t)
{
	size_t i = 0, digits = 0, dots = 0;

	for (; t[i]; i++) {
		if (t[i] >= '0' && t[i] <= '9')
			digits++;
		else if (t[i] == '.' && digits && !dots++)
			continue;
		else
			return false;
	}
	return digits && t[i - 1] != '.';
}

int pt_version_parse(const uint8_t b[PT_VERSION_LEN], double *version, char text[PT_VERSION_LEN],
		     char *err)
{
	const uint8_t *nul = memchr(b, 0, PT_VERSION_LEN);

	if (!nul || nul == b) {
		snprintf(err, XPORT_ERR_LEN, "the peer's version message is not a NUL-terminated "
			 "version string");
		return -1;
	}
	memcpy(text, b, (size_t)(nul - b) + 1);
	if (!version_text_ok(text)) {
		snprintf(err, XPORT_ERR_LEN, "the peer's version message is not a version number");
		return -1;
	}
	*version = strtod(text, NULL);
	return 0;
}

int pt_version_build(const char *text, uint8_t out[PT_VERSION_LEN], char *err)
{
	size_t len = strlen(text);

	if (len == 0 || len >= PT_VERSION_LEN || !version_text_ok(text) ||
	    strtod(text, NULL) < PT_VERSION_MIN) {
		snprintf(err, XPORT_ERR_LEN, "invalid perftest version '%s': give a number such as "
			 "6.06 or 6.29 (perftest refuses peers older than 5.70)", text);
		return -1;
	}
	memset(out, 0, PT_VERSION_LEN);
	memcpy(out, text, len);
	return 0;
}

unsigned pt_mtu_enum(uint32_t bytes)
{
	for (unsigned e = 1; e <= 5; e++)
		if (bytes == 128u << e)
			return e;
	return 0;
}

uint32_t pt_mtu_bytes(unsigned e)
{
	return e >= 1 && e <= 5 ? 128u << e : 0;
}

void pt_mtu_build(uint32_t bytes, uint8_t out[PT_MTU_LEN])
{
	out[0] = (uint8_t)('0' + pt_mtu_enum(bytes));
	out[1] = 0;
}

uint32_t pt_mtu_parse(const uint8_t b[PT_MTU_LEN])
{
	/* perftest reads it with strtol; anything but one digit 1..5 and a
	 * NUL makes it keep its own value. */
	if (b[1] != 0 || b[0] < '1' || b[0] > '5')
		return 0;
	return pt_mtu_bytes((unsigned)(b[0] - '0'));
}

bool pt_gid_v4mapped(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

size_t pt_key_build(const struct pt_key *k, bool gid, char *out)
{
	size_t len = gid ? PT_KEY_LEN_GID : PT_KEY_LEN;
	int n = snprintf(out, len, "%04x:%04x:%06x:%06x:%08x:%016" PRIx64 ":", k->lid,
			 k->out_reads, k->qpn & 0xffffff, k->psn & 0xffffff, k->rkey, k->vaddr);

	if (gid) {
		for (unsigned i = 0; i < 16; i++)
			n += snprintf(out + n, len - (size_t)n, "%02x:", k->gid[i]);
		snprintf(out + n, len - (size_t)n, "%08x:", k->srqn);
	} else {
		snprintf(out + n, len - (size_t)n, "%08x", k->srqn);
	}
	return len;
}

/* One lowercase or uppercase hex field of exactly `width` digits at *p,
 * followed by `sep` (or the end, sep 0); advances *p. */
static int hex_field(const char **p, const char *end, unsigned width, char sep, uint64_t *v)
{
	uint64_t x = 0;

	if ((size_t)(end - *p) < width + (sep ? 1 : 0))
		return -1;
	for (unsigned i = 0; i < width; i++) {
		char c = (*p)[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;

		if (d > 15)
			return -1;
		x = x << 4 | d;
	}
	*p += width;
	if (sep) {
		if (**p != sep)
			return -1;
		(*p)++;
	}
	*v = x;
	return 0;
}

int pt_key_parse(const char *b, size_t len, bool gid, struct pt_key *k, char *err)
{
	static const unsigned widths[] = { 4, 4, 6, 6, 8, 16 };
	size_t want = gid ? PT_KEY_LEN_GID : PT_KEY_LEN;
	const char *p = b, *end = b + want - 1;	/* the NUL is the last byte */
	uint64_t v[6], x;

	memset(k, 0, sizeof(*k));
	/* perftest prints minimum widths; every value it sends fits them. */
	if (len != want || b[want - 1] != '\0')
		goto bad;
	for (unsigned i = 0; i < 6; i++)
		if (hex_field(&p, end, widths[i], ':', &v[i]) < 0)
			goto bad;
	if (gid) {
		for (unsigned i = 0; i < 16; i++) {
			if (hex_field(&p, end, 2, ':', &x) < 0)
				goto bad;
			k->gid[i] = (uint8_t)x;
		}
		if (hex_field(&p, end, 8, ':', &x) < 0)
			goto bad;
	} else if (hex_field(&p, end, 8, 0, &x) < 0) {
		goto bad;
	}
	if (p != end)
		goto bad;
	k->srqn = (uint32_t)x;
	k->lid = (uint16_t)v[0];
	k->out_reads = (uint16_t)v[1];
	k->qpn = (uint32_t)v[2];
	k->psn = (uint32_t)v[3];
	k->rkey = (uint32_t)v[4];
	k->vaddr = v[5];
	return 0;
bad:
	snprintf(err, XPORT_ERR_LEN, "the peer's QP key message is not perftest's %s format "
		 "(%zu bytes): both sides must run a RoCE/GID exchange; check -x on each side",
		 gid ? "GID" : "LID", want);
	return -1;
}

static uint64_t dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double bits_dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

void pt_report_field(const struct pt_report *r, unsigned i, uint8_t out[8])
{
	switch (i) {
	case 0: pt_put_be64(out, r->size); break;
	case 1: pt_put_be64(out, r->iters); break;
	case 2: pt_put_be64(out, dbl_bits(r->bw_peak)); break;
	case 3: pt_put_be64(out, dbl_bits(r->bw_avg)); break;
	default: pt_put_be64(out, dbl_bits(r->msg_rate)); break;
	}
}

void pt_report_set(struct pt_report *r, unsigned i, const uint8_t in[8])
{
	uint64_t v = pt_get_be64(in);

	switch (i) {
	case 0: r->size = v; break;
	case 1: r->iters = v; break;
	case 2: r->bw_peak = bits_dbl(v); break;
	case 3: r->bw_avg = bits_dbl(v); break;
	default: r->msg_rate = bits_dbl(v); break;
	}
}

/* The scalars in wire order: offset and value pointers of one struct. */
struct neg_field {
	const char *name;	/* as perftest's compare() prints it */
	unsigned off, size;
	size_t member;
};

#define NEG32(name, off, m) { name, off, 4, offsetof(struct pt_negotiate, m) }
#define NEG64(name, off, m) { name, off, 8, offsetof(struct pt_negotiate, m) }
static const struct neg_field neg_fields[] = {
	NEG32("test_method", 0, test_method), NEG32("connection_type", 4, connection_type),
	NEG32("verb", 8, verb), NEG32("tst", 12, tst), NEG32("atomicType", 16, atomic_type),
	NEG32("test_type", 20, test_type), NEG32("report_fmt", 24, report_fmt),
	NEG64("size", 32, size), NEG64("iters", 40, iters), NEG32("aes_xts", 48, aes_xts),
	NEG32("num_of_qps", 52, num_of_qps), NEG32("duration", 56, duration),
	NEG32("use_rdma_cm", 60, use_rdma_cm), NEG32("use_write_with_imm", 64, use_write_with_imm),
	NEG32("no_enhanced_reorder", 68, no_enhanced_reorder),
	NEG32("sig_offload", 72, sig_offload), NEG32("data_validation", 76, data_validation),
};

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

void pt_negotiate_build(const struct pt_negotiate *n, size_t len, uint8_t *out)
{
	memset(out, 0, len);
	for (size_t i = 0; i < sizeof(neg_fields) / sizeof(neg_fields[0]); i++) {
		const struct neg_field *f = &neg_fields[i];
		const uint8_t *m = (const uint8_t *)n + f->member;

		if (f->size == 8) {
			uint64_t v;

			memcpy(&v, m, 8);
			pt_put_be64(out + f->off, v);
		} else {
			uint32_t v;

			memcpy(&v, m, 4);
			pt_put_be32(out + f->off, v);
		}
	}
	/* ibv_device_attr goes raw, in host order (x86_64: little-endian). */
	put_le32(out + NEG_ATTR_VENDOR_ID, n->vendor_id);
	put_le32(out + NEG_ATTR_MAX_QP_RD_ATOM, (uint32_t)n->max_qp_rd_atom);
}

void pt_negotiate_parse(const uint8_t *b, struct pt_negotiate *n)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < sizeof(neg_fields) / sizeof(neg_fields[0]); i++) {
		const struct neg_field *f = &neg_fields[i];
		uint8_t *m = (uint8_t *)n + f->member;

		if (f->size == 8) {
			uint64_t v = pt_get_be64(b + f->off);

			memcpy(m, &v, 8);
		} else {
			uint32_t v = pt_get_be32(b + f->off);

			memcpy(m, &v, 4);
		}
	}
	n->vendor_id = get_le32(b + NEG_ATTR_VENDOR_ID);
	n->max_qp_rd_atom = (int32_t)get_le32(b + NEG_ATTR_MAX_QP_RD_ATOM);
}

const char *pt_negotiate_mismatch(const struct pt_negotiate *a, const struct pt_negotiate *b,
				  char *why, size_t cap)
{
	for (size_t i = 0; i < sizeof(neg_fields) / sizeof(neg_fields[0]); i++) {
		const struct neg_field *f = &neg_fields[i];
		uint64_t va, vb;

		if (f->size == 8) {
			memcpy(&va, (const uint8_t *)a + f->member, 8);
			memcpy(&vb, (const uint8_t *)b + f->member, 8);
		} else {
			uint32_t x, y;

			memcpy(&x, (const uint8_t *)a + f->member, 4);
			memcpy(&y, (const uint8_t *)b + f->member, 4);
			va = x;
			vb = y;
		}
		if (va != vb) {
			if (f->size == 4)
				snprintf(why, cap, "%s: this side %d, the peer %d", f->name,
					 (int32_t)(uint32_t)va, (int32_t)(uint32_t)vb);
			else
				snprintf(why, cap, "%s: this side %" PRIu64 ", the peer %" PRIu64,
					 f->name, va, vb);
			return f->name;
		}
	}
	return NULL;
}
