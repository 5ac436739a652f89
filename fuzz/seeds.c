// SPDX-License-Identifier: MIT
/*
 * mkseeds OUTDIR CAPTURE...: writes the seed corpora of the fuzz targets,
 * one file per input, under OUTDIR/{decode,pcap,soft,oob,opts}/.
 *
 *   decode  every record (up to MAX_RECORDS a file) of the captures, with
 *           its link-type byte; raw-IP records also as BSD/OpenBSD
 *           loopback and raw IPv4/IPv6 records
 *   pcap    each capture cut to MAX_RECORDS records, as pcap and pcapng
 *   soft    request and response sequences for the fixture's QPs, built
 *           with the wire codec (PSNs, VAs and rkeys from the fixture)
 *   oob     control-channel sessions and messages, well-formed and not
 *   opts    command lines of every command
 *
 * Exit status 0, or 1 with a message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include "dlts.h"
#include "ctl.h"
#include "oob.h"
#include "probe_msg.h"
#include "soft_fixture.h"

#define MAX_RECORDS 24

static const char *outdir;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "seeds: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void mkdirs(void)
{
	static const char *const subs[] = { "", "/decode", "/pcap", "/soft", "/oob", "/opts" };
	char path[4096];

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", outdir, subs[i]);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			die("cannot create %s: %s", path, strerror(errno));
	}
}

/* Writes OUTDIR/TARGET/NAME (prefix byte first when prefix >= 0). */
static void seed(const char *target, const char *name, int prefix, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	if (prefix >= 0)
		fputc(prefix, f);
	if (len)
		fwrite(data, 1, len, f);
	if (fclose(f))
		die("cannot write %s: %s", path, strerror(errno));
}

static int dlt_index(int dlt)
{
	for (int i = 0; i < FUZZ_NDLTS; i++)
		if (fuzz_dlts[i] == dlt)
			return i;
	return -1;
}

/* ---- captures: decode and pcap seeds ---------------------------------------- */

struct pcapng {
	FILE *f;
};

static void le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	fwrite(b, 1, 4, f);
}

static void le16(FILE *f, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	fwrite(b, 1, 2, f);
}

/* Section header, and one interface with nanosecond timestamps. */
static void pcapng_begin(FILE *f, int dlt, uint32_t snaplen)
{
	le32(f, 0x0A0D0D0A); le32(f, 28); le32(f, 0x1A2B3C4D);
	le16(f, 1); le16(f, 0); le32(f, 0xFFFFFFFF); le32(f, 0xFFFFFFFF); le32(f, 28);
	le32(f, 1); le32(f, 32); le16(f, (uint16_t)dlt); le16(f, 0); le32(f, snaplen);
	le16(f, 9); le16(f, 1); le32(f, 9);	/* if_tsresol: 10^-9, padded */
	le16(f, 0); le16(f, 0);			/* opt_endofopt */
	le32(f, 32);
}

static void pcapng_packet(FILE *f, const struct pcap_pkthdr *h, const uint8_t *d, uint64_t ts_ns)
{
	uint32_t pad = (4 - h->caplen % 4) % 4, len = 32 + h->caplen + pad;
	static const uint8_t zero[4];

	le32(f, 6); le32(f, len); le32(f, 0);
	le32(f, (uint32_t)(ts_ns >> 32)); le32(f, (uint32_t)ts_ns);
	le32(f, h->caplen); le32(f, h->len);
	fwrite(d, 1, h->caplen, f);
	fwrite(zero, 1, pad, f);
	le32(f, len);
}

static void decode_seed(const char *base, unsigned k, int dlt, const uint8_t *d, size_t n)
{
	static const uint8_t af_le[4] = { 2, 0, 0, 0 }, af_be[4] = { 0, 0, 0, 24 };
	uint8_t buf[65536 + 4];
	char name[512];
	int idx = dlt_index(dlt);

	if (idx < 0 || n > 65536)
		return;
	snprintf(name, sizeof(name), "%s-%03u", base, k);
	seed("decode", name, idx, d, n);
	if (dlt != 12 || !n)
		return;
	/* The same IP packet under the other IP-first link types. */
	snprintf(name, sizeof(name), "%s-%03u-null", base, k);
	memcpy(buf, af_le, 4);
	memcpy(buf + 4, d, n);
	seed("decode", name, dlt_index(0), buf, n + 4);
	snprintf(name, sizeof(name), "%s-%03u-loop", base, k);
	memcpy(buf, af_be, 4);
	seed("decode", name, dlt_index(108), buf, n + 4);
	snprintf(name, sizeof(name), "%s-%03u-ipv%d", base, k, d[0] >> 4 == 6 ? 6 : 4);
	seed("decode", name, dlt_index(d[0] >> 4 == 6 ? 229 : 228), d, n);
}

static void copy_seed(const char *path, const char *name)
{
	static uint8_t buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		die("cannot read %s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	seed("pcap", name, -1, buf, n);
}

static void capture_seeds(const char *path)
{
	char perr[PCAP_ERRBUF_SIZE], base[256], out[4096];
	const char *slash = strrchr(path, '/');
	struct pcap_pkthdr *h;
	pcap_dumper_t *dump;
	const u_char *d;
	FILE *ng;
	pcap_t *pc;
	unsigned k = 0;

	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : path);
	if (strrchr(base, '.'))
		*strrchr(base, '.') = '\0';
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!pc) {	/* a fixture that is not a capture: a pcap seed as it is */
		copy_seed(path, base);
		return;
	}
	snprintf(out, sizeof(out), "%s/pcap/%s.pcap", outdir, base);
	dump = pcap_dump_open(pc, out);
	snprintf(out, sizeof(out), "%s/pcap/%s.pcapng", outdir, base);
	ng = fopen(out, "wb");
	if (!dump || !ng)
		die("cannot write the pcap seeds of %s", path);
	pcapng_begin(ng, pcap_datalink(pc), (uint32_t)pcap_snapshot(pc));
	while (k < MAX_RECORDS && pcap_next_ex(pc, &h, &d) == 1) {
		uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;

		pcap_dump((u_char *)dump, h, d);
		pcapng_packet(ng, h, d, ts);
		decode_seed(base, k++, pcap_datalink(pc), d, h->caplen);
	}
	pcap_dump_close(dump);
	fclose(ng);
	pcap_close(pc);
}

/* ---- soft: frames for the fixture --------------------------------------------- */

struct frames {
	uint8_t buf[65536];
	size_t len;
};

/* Appends one frame: flags, length, BTH + extension headers, payload, pad, ICRC. */
static void frame(struct frames *s, unsigned flags, struct wire_pkt *p, size_t payload)
{
	uint8_t *f = s->buf + s->len + 3;
	size_t hl, pad = (4 - payload % 4) % 4, n;

	p->bth.padcnt = (uint8_t)pad;
	p->bth.pkey = WIRE_DEFAULT_PKEY;
	hl = wire_put_transport(f, sizeof(s->buf) - s->len - 3, p);
	n = hl + payload + pad + WIRE_ICRC_LEN;
	if (!hl || s->len + 3 + n > sizeof(s->buf))
		die("soft seed frame does not fit");
	for (size_t i = 0; i < payload; i++)
		f[hl + i] = (uint8_t)(0x30 + i % 64);
	memset(f + hl + payload, 0, pad + WIRE_ICRC_LEN);
	s->buf[s->len] = (uint8_t)flags;
	wire_put16(s->buf + s->len + 1, (uint16_t)n);
	s->len += 3 + n;
}

static struct wire_pkt op(uint8_t opcode, uint32_t psn)
{
	struct wire_pkt p;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = opcode;
	p.bth.psn = psn & WIRE_PSN_MASK;
	p.bth.ackreq = true;
	return p;
}

static struct wire_pkt reth(uint8_t opcode, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct wire_pkt p = op(opcode, psn);

	p.reth = (struct wire_reth){ .va = va, .rkey = rkey, .dmalen = len };
	return p;
}

static struct wire_pkt aeth(uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	struct wire_pkt p = op(opcode, psn);

	p.aeth = (struct wire_aeth){ .syndrome = syndrome, .msn = msn };
	return p;
}

static void soft_seed(const char *name, struct frames *s)
{
	seed("soft", name, -1, s->buf, s->len);
	s->len = 0;
}

static void soft_seeds(void)
{
	const unsigned R = FIX_F_PROGRESS, Q = FIX_F_TO_REQ | FIX_F_PROGRESS;
	const unsigned U = FIX_F_TO_UC, D = FIX_F_TO_UD;
	const uint32_t e = FIX_RESP_PSN;
	static struct frames s;
	struct wire_pkt p;
	uint32_t full, ro, *w;
	struct fix f;

	if (!fix_open(&f))
		die("cannot set up the soft fixture");
	full = f.full.rkey;
	ro = f.ro.rkey;
	w = f.req_first_psn;

	/* Responder: SENDs. */
	p = op(OP_RC_SEND_ONLY, e); frame(&s, R, &p, 100);
	soft_seed("resp-send-only", &s);
	p = op(OP_RC_SEND_FIRST, e); frame(&s, 0, &p, 1024);
	p = op(OP_RC_SEND_LAST_IMM, e + 1); p.immdt = 42; frame(&s, R, &p, 500);
	soft_seed("resp-send-too-long", &s);
	p = op(OP_RC_SEND_ONLY_IMM, e); p.immdt = 1; frame(&s, 0, &p, 1024);
	p = op(OP_RC_SEND_ONLY_INV, e + 1); p.ieth = full; frame(&s, 0, &p, 3);
	p = op(OP_RC_SEND_FIRST, e + 2); frame(&s, 0, &p, 1024);
	p = op(OP_RC_SEND_LAST_INV, e + 3); p.ieth = 7; frame(&s, R, &p, 0);
	soft_seed("resp-sends", &s);
	/* WRITEs: into MR full up to its last byte, into MR ro (refused). */
	p = reth(OP_RC_WRITE_ONLY, e, FIX_FULL_VA + 100, full, 200); frame(&s, R, &p, 200);
	soft_seed("resp-write-only", &s);
	p = reth(OP_RC_WRITE_FIRST, e, FIX_FULL_VA + FIX_FULL_LEN - 2500, full, 2500);
	frame(&s, 0, &p, 1024);
	p = op(OP_RC_WRITE_MIDDLE, e + 1); frame(&s, 0, &p, 1024);
	p = op(OP_RC_WRITE_LAST_IMM, e + 2); p.immdt = 5; frame(&s, R, &p, 452);
	soft_seed("resp-write-to-end", &s);
	p = reth(OP_RC_WRITE_ONLY_IMM, e, FIX_RO_VA, ro, 16); p.immdt = 3; frame(&s, R, &p, 16);
	soft_seed("resp-write-ro", &s);
	p = reth(OP_RC_WRITE_ONLY, e, FIX_FULL_VA + FIX_FULL_LEN - 8, full, 64); frame(&s, R, &p, 64);
	soft_seed("resp-write-past-end", &s);
	/* READs and atomics, duplicates and out-of-sequence. */
	p = reth(OP_RC_READ_REQUEST, e, FIX_RO_VA, ro, FIX_RO_LEN); frame(&s, R, &p, 0);
	p = reth(OP_RC_READ_REQUEST, e, FIX_RO_VA, ro, FIX_RO_LEN); frame(&s, R, &p, 0);
	soft_seed("resp-read-ro-dup", &s);
	p = reth(OP_RC_READ_REQUEST, e, FIX_FULL_VA + FIX_FULL_LEN - 3000, full, 3000);
	frame(&s, R, &p, 0);
	soft_seed("resp-read-to-end", &s);
	p = op(OP_RC_CMP_SWAP, e);
	p.atomiceth = (struct wire_atomiceth){ FIX_FULL_VA + FIX_FULL_LEN - 8, full, 9, 0 };
	frame(&s, 0, &p, 0);
	p = op(OP_RC_FETCH_ADD, e + 1);
	p.atomiceth = (struct wire_atomiceth){ FIX_FULL_VA, full, 1, 0 };
	frame(&s, 0, &p, 0);
	p = op(OP_RC_FETCH_ADD, e + 1);
	p.atomiceth = (struct wire_atomiceth){ FIX_FULL_VA, full, 1, 0 };
	frame(&s, R, &p, 0);
	soft_seed("resp-atomics-dup", &s);
	p = op(OP_RC_CMP_SWAP, e);
	p.atomiceth = (struct wire_atomiceth){ FIX_RO_VA, ro, 1, 2 };
	frame(&s, R, &p, 0);
	soft_seed("resp-atomic-ro", &s);
	p = op(OP_RC_SEND_ONLY, e + 5); frame(&s, 0, &p, 10);
	p = op(OP_RC_SEND_ONLY, e); frame(&s, 0, &p, 10);
	p = op(OP_RC_SEND_ONLY, e - 1); frame(&s, R, &p, 10);
	soft_seed("resp-out-of-sequence", &s);
	/* UC: a SEND with a gap, then one whole; WRITEs to the end of MR full
	 * and into MR ro (dropped, no answer).  UC opcodes are RC's | 0x20. */
	p = op(0x20 | OP_RC_SEND_FIRST, e); frame(&s, U, &p, 1024);
	p = op(0x20 | OP_RC_SEND_LAST, e + 2); frame(&s, U, &p, 100);
	p = op(0x20 | OP_RC_SEND_ONLY_IMM, e + 3); p.immdt = 4; frame(&s, U | R, &p, 1000);
	soft_seed("uc-send-gap", &s);
	p = reth(0x20 | OP_RC_WRITE_FIRST, e, FIX_FULL_VA + FIX_FULL_LEN - 1500, full, 1500);
	frame(&s, U, &p, 1024);
	p = op(0x20 | OP_RC_WRITE_LAST_IMM, e + 1); p.immdt = 6; frame(&s, U, &p, 476);
	p = reth(0x20 | OP_RC_WRITE_ONLY, e + 2, FIX_RO_VA, ro, 16); frame(&s, U | R, &p, 16);
	soft_seed("uc-writes", &s);
	/* UD: a datagram, one under another Q_Key, one too long for the
	 * second receive. */
	p = op(OP_UD_SEND_ONLY, e); p.deth = (struct wire_deth){ XPORT_DEFAULT_QKEY, 0x42 };
	frame(&s, D, &p, 1000);
	p = op(OP_UD_SEND_ONLY, e + 1); p.deth = (struct wire_deth){ 0x1234, 0x42 };
	frame(&s, D, &p, 10);
	p = op(OP_UD_SEND_ONLY_IMM, e + 2); p.deth = (struct wire_deth){ XPORT_DEFAULT_QKEY, 0x42 };
	p.immdt = 8; frame(&s, D | R, &p, 1024);
	soft_seed("ud-sends", &s);
	p = reth(OP_RC_FLUSH, e, FIX_FULL_VA, full, 8); p.feth.sel = 1; frame(&s, 0, &p, 0);
	p = reth(OP_RC_ATOMIC_WRITE, e + 1, FIX_FULL_VA + 8, full, 8); frame(&s, R, &p, 8);
	soft_seed("resp-flush-atomic-write", &s);
	p = op(OP_CNP, 0); p.bth.becn = true; frame(&s, R | WIRE_CE, &p, 0);
	soft_seed("resp-cnp", &s);

	/* Requester: WR0 SEND (3 packets), WR1 WRITE (2), WR2 READ (2 responses),
	 * WR3 CMP_SWAP, WR4 FETCH_ADD, WR5 SEND (1). */
	p = aeth(OP_RC_ACK, w[1] + 1, 0x1F, 2); frame(&s, Q, &p, 0);
	p = aeth(OP_RC_READ_RESPONSE_FIRST, w[2], 0x1F, 3); frame(&s, Q, &p, 1024);
	p = op(OP_RC_READ_RESPONSE_LAST, w[2] + 1);
	p.aeth = (struct wire_aeth){ 0x1F, 3 };
	frame(&s, Q, &p, 476);
	p = aeth(OP_RC_ATOMIC_ACK, w[3], 0x1F, 4); p.atomicacketh.orig = 5; frame(&s, Q, &p, 0);
	p = aeth(OP_RC_ATOMIC_ACK, w[4], 0x1F, 5); p.atomicacketh.orig = 77; frame(&s, Q, &p, 0);
	p = aeth(OP_RC_ACK, w[5], 0x1F, 6); frame(&s, Q, &p, 0);
	soft_seed("req-all-complete", &s);
	p = aeth(OP_RC_READ_RESPONSE_ONLY, w[2], 0x1F, 3); frame(&s, Q, &p, 1500);
	soft_seed("req-read-response-too-long", &s);
	p = aeth(OP_RC_READ_RESPONSE_FIRST, w[2], 0x1F, 3); frame(&s, Q, &p, 1024);
	p = op(OP_RC_READ_RESPONSE_MIDDLE, w[2] + 1); frame(&s, Q, &p, 1024);
	p = aeth(OP_RC_READ_RESPONSE_LAST, w[2] + 2, 0x1F, 3); frame(&s, Q, &p, 1024);
	soft_seed("req-read-response-extra", &s);
	p = aeth(OP_RC_ACK, w[0] + 1, wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR), 0);
	frame(&s, Q, &p, 0);
	soft_seed("req-nak-seq", &s);
	p = aeth(OP_RC_ACK, w[0], wire_aeth_make(WIRE_AETH_RNR_NAK, 1), 0); frame(&s, Q, &p, 0);
	soft_seed("req-rnr-nak", &s);
	p = aeth(OP_RC_ACK, w[1], wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_REMOTE_ACCESS_ERR), 1);
	frame(&s, Q, &p, 0);
	soft_seed("req-nak-access", &s);
	p = aeth(OP_RC_ACK, w[3], wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_INVALID_REQ), 1);
	frame(&s, Q, &p, 0);
	soft_seed("req-nak-invalid", &s);
	p = aeth(OP_RC_ACK, w[5] + 100, 0x1F, 9); frame(&s, Q, &p, 0);
	p = aeth(OP_RC_ACK, w[0] - 1, 0x1F, 9); frame(&s, Q, &p, 0);
	soft_seed("req-ack-out-of-window", &s);
	p = aeth(OP_RC_ATOMIC_ACK, w[2], 0x1F, 4); p.atomicacketh.orig = 1; frame(&s, Q, &p, 0);
	soft_seed("req-atomic-ack-for-read", &s);
	fix_close(&f);
}

/* ---- oob: control-channel streams ----------------------------------------------- */

struct stream {
	uint8_t buf[8192];
	size_t len;
};

static void msg(struct stream *s, uint16_t version, uint16_t type, const void *payload, size_t len)
{
	uint8_t *h = s->buf + s->len;

	if (s->len + OOB_HDR_LEN + len > sizeof(s->buf))
		die("oob seed does not fit");
	memcpy(h, OOB_MAGIC, 4);
	wire_put16(h + 4, version);
	wire_put16(h + 6, type);
	wire_put32(h + 8, (uint32_t)len);
	if (len)
		memcpy(h + OOB_HDR_LEN, payload, len);
	s->len += OOB_HDR_LEN + len;
}

static void raw(struct stream *s, const void *data, size_t len)
{
	memcpy(s->buf + s->len, data, len);
	s->len += len;
}

static void oob_seed(const char *name, int mode, struct stream *s)
{
	seed("oob", name, mode, s->buf, s->len);
	s->len = 0;
}

/* A QP list message (lib/perf/ctl.c) of n QPs, the first with this MTU. */
#define QP_MSG_MAX 512

static size_t qp_info(uint8_t *out, size_t n, uint32_t mtu)
{
	struct xport_qp_info q[2] = {
		{ .qpn = 0x101, .psn = 0xABCDE, .udp_port = 4791, .mtu = 1024, .max_rd_atomic = 16 },
		{ .qpn = 0x102, .psn = 0x12345, .udp_port = 4791, .mtu = 4096, .max_rd_atomic = 1 },
	};
	json_t *m;
	char *text;
	size_t len;

	q[0].gid[10] = q[0].gid[11] = 0xFF;
	q[0].gid[12] = 198;
	q[0].gid[13] = 18;
	q[0].gid[15] = 2;
	q[0].mtu = mtu;		/* 1500: one the parser refuses */
	m = ctl_qps_json(q, n);
	text = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!text || strlen(text) >= QP_MSG_MAX)
		die("cannot build a QP list seed");
	len = strlen(text);
	memcpy(out, text, len);
	free(text);
	return len;
}

/* rdmakit probe's control messages, as lib/probe/probe_msg.c writes them. */
static void probe_seeds(struct stream *s)
{
	const struct probe_setup setup = {
		.mr_bytes = 4096, .fill = 0xA5, .access = XPORT_ACCESS_REMOTE_WRITE, .recvs = 2,
		.recv_bytes = 1024, .mtu = 1024, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 12, .first_psn = 0xFFFFFE,
		.peer = { .qpn = 0xD000, .psn = 0x1000, .udp_port = 4791, .mtu = 1024 },
	};
	const struct probe_post post = { PROBE_POST_WRITE, 4096, 1, 0x10000, 0x1234, 0 };
	const struct probe_post fetch_add = { PROBE_POST_FETCH_ADD, 8, 1, 0x10000, 0x1234,
					      0x0102030405060708ull };
	const struct xport_qp_info qp = { .qpn = 0x11, .psn = 0x2000, .udp_port = 4791,
					  .mtu = 1024 };
	const struct probe_mr_info mr = { 0x7f0000000000, 0x1234, 4096 };
	struct probe_remote_state st = { .changed_bytes = 64, .n_wc = 1 };
	struct { const char *name; json_t *m; } msgs[] = {
		{ "probe-hello", probe_msg_hello() },
		{ "probe-serve", probe_msg_serve("verbs", "rxe0/1", 10, true) },
		{ "probe-setup", probe_msg_setup(&setup) },
		{ "probe-post", probe_msg_post(&post) },
		{ "probe-post-fetch-add", probe_msg_post(&fetch_add) },
		{ "probe-state-req", probe_msg_state_req() },
		{ "probe-setup-reply", probe_msg_setup_reply(&qp, &mr) },
		{ "probe-state", NULL },
	};

	st.wc[0] = (struct xport_wc){ .opcode = XPORT_WC_RECV, .byte_len = 64 };
	msgs[7].m = probe_msg_state(&st);
	for (size_t k = 0; k < sizeof(msgs) / sizeof(msgs[0]); k++) {
		char *text = json_dumps(msgs[k].m, JSON_COMPACT);

		if (!text)
			die("probe seed %s", msgs[k].name);
		raw(s, text, strlen(text));
		oob_seed(msgs[k].name, 3, s);
		free(text);
		json_decref(msgs[k].m);
	}
}

static void oob_seeds(void)
{
	static struct stream s;
	uint8_t hello[OOB_HELLO_LEN] = { 0, OOB_PROTO_VERSION, 0, 0, '0', '.', '2', '.', '0' };
	/* What a server answers a client's opening with (oob.h). */
	static const uint8_t opening[OOB_OPENING_LEN] = { '6', '.', '0', '6', 0, 0, 0, 0, 'R', 'D',
							  'M', 'K', 0, OOB_PROTO_VERSION, 0, 0 };
	uint8_t qi[QP_MSG_MAX], bar[4] = { 0, 0, 0, 1 }, bar2[4] = { 0, 0, 0, 2 };
	/* The test as a client sends it (lib/perf/ctl.c). */
	const char params[] = "{\"test\":{\"op\":\"write\",\"cas\":false,\"size\":65536,"
			      "\"max_size\":65536,\"iters\":1000,\"duration_s\":0.0,\"qps\":1,"
			      "\"tx_depth\":128,\"rx_depth\":512,\"outs\":16,\"mtu\":0,"
			      "\"verify\":false,\"interval_s\":0.0,\"latency\":false,"
			      "\"bidirectional\":false,\"inline_size\":0,\"rate_limit\":0.0,"
			      "\"rate_unit\":\"g\",\"rdma_cm\":false}}";
	const char params_lat[] = "{\"test\":{\"op\":\"send\",\"cas\":false,\"size\":2,"
				  "\"max_size\":2,\"iters\":0,\"duration_s\":2.5,\"qps\":1,"
				  "\"tx_depth\":1,\"rx_depth\":512,\"outs\":16,\"mtu\":4096,"
				  "\"verify\":true,\"interval_s\":0.5,\"latency\":true,"
				  "\"bidirectional\":false,\"inline_size\":236,\"rate_limit\":0.0,"
				  "\"rate_unit\":\"g\",\"rdma_cm\":false}}";
	static const char perftest[16] = "6.21";
	size_t n;

	for (int mode = 0; mode < 2; mode++) {
		const char *name = mode ? "client-session" : "server-session";

		if (mode)
			raw(&s, opening, sizeof(opening));
		msg(&s, OOB_PROTO_VERSION, OOB_HELLO, hello, sizeof(hello));
		msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, qi, qp_info(qi, 1, 1024));
		msg(&s, OOB_PROTO_VERSION, OOB_BARRIER, bar, 4);
		msg(&s, OOB_PROTO_VERSION, OOB_BYE, NULL, 0);
		oob_seed(name, mode, &s);
	}
	msg(&s, OOB_PROTO_VERSION, OOB_HELLO, hello, sizeof(hello));
	msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, qi, qp_info(qi, 2, 1024));
	oob_seed("server-two-qps", 0, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_HELLO, hello, sizeof(hello));
	msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, qi, qp_info(qi, 1, 1500));
	oob_seed("server-bad-mtu", 0, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_HELLO, hello, sizeof(hello));
	msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, qi, qp_info(qi, 1, 1024));
	msg(&s, OOB_PROTO_VERSION, OOB_BARRIER, bar2, 4);
	oob_seed("server-wrong-barrier", 0, &s);
	msg(&s, 99, OOB_HELLO, hello, sizeof(hello));
	oob_seed("hello-version-99", 0, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_HELLO, hello, 4);
	oob_seed("hello-short", 1, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_ERROR, "no such device", 14);
	oob_seed("hello-error", 0, &s);
	raw(&s, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
	oob_seed("http", 1, &s);
	raw(&s, "SSH-2.0-OpenSSH_9.2\r\n", 21);
	oob_seed("ssh", 0, &s);
	raw(&s, perftest, sizeof(perftest));
	oob_seed("perftest", 1, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, params, strlen(params));
	msg(&s, OOB_PROTO_VERSION, OOB_RESULT, "{\"gbps\":1.5}", 12);
	msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, qi, qp_info(qi, 2, 1024));
	msg(&s, OOB_PROTO_VERSION, OOB_BARRIER, bar, 4);
	msg(&s, OOB_PROTO_VERSION, 99, bar, 4);
	oob_seed("messages", 2, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_RESULT, params, strlen(params));
	msg(&s, OOB_PROTO_VERSION, OOB_ERROR, "peer gave up", 12);
	oob_seed("messages-big-then-error", 2, &s);
	msg(&s, OOB_PROTO_VERSION, OOB_PARAMS, qi, 0);
	wire_put32(s.buf + 8, OOB_MAX_PAYLOAD + 1);
	oob_seed("messages-over-limit", 2, &s);
	/* PARAMS through the server's parser: explicit-set bits, then the text. */
	raw(&s, "\0", 1);
	raw(&s, params, strlen(params));
	oob_seed("params", 4, &s);
	raw(&s, "\x1f", 1);
	raw(&s, params, strlen(params));
	oob_seed("params-all-set", 4, &s);
	raw(&s, "\0", 1);
	raw(&s, params_lat, strlen(params_lat));
	oob_seed("params-lat-duration", 4, &s);
	for (size_t k = 0; k < 3; k++) {
		char name[32];

		n = qp_info(qi, k, k == 2 ? 2048 : 1024);
		snprintf(name, sizeof(name), "decode-%zu", k);
		raw(&s, qi, n);
		oob_seed(name, 3, &s);
	}
	/* One of each other control message, as lib/perf/ctl.c writes them. */
	{
		static const char *const msgs[][2] = {
			{ "ctl-mem", "{\"mem\":{\"va\":140737488289792,\"rkey\":305419896,"
				     "\"slot\":131072,\"cm_port\":0,\"cm_token\":0}}" },
			{ "ctl-run", "{\"run\":{\"size\":65536}}" },
			{ "ctl-end", "{\"end\":true}" },
			{ "ctl-done", "{\"stop\":true}" },
			{ "ctl-verdict", "{\"verdict\":{\"verified\":true,\"bad_offset\":0,"
					 "\"status\":0,\"received\":{\"msgs\":990,\"bytes\":"
					 "1013760,\"drops_known\":true,\"rcvbuf_drops\":4,"
					 "\"no_recv_drops\":3,\"qkey_drops\":2,"
					 "\"uc_msgs_cut\":1}}}" },
			{ "ctl-sent", "{\"sent\":{\"msgs\":1000,\"host_tx_drops\":null}}" },
			{ "ctl-figures", "{\"figures\":{\"iterations\":5000,\"seconds\":1.5,"
					 "\"bw_avg_gbps\":9.5,\"bw_peak_gbps\":9.9,"
					 "\"msg_rate_mpps\":0.02}}" },
			/* incast: a joiner's test, and a node's result (incast_node.c). */
			{ "incast-test", "{\"pattern\":\"incast\",\"op\":\"send\",\"size\":1024,"
					 "\"duration_s\":0,\"flow_bytes\":1048576,\"qps\":1,"
					 "\"tx_depth\":128,\"rx_depth\":512,\"mtu\":0,"
					 "\"verify\":true,\"set\":129,\"interval_s\":0.1,"
					 "\"connection\":\"UD\"}" },
			{ "incast-result", "{\"host_id\":\"h/netns:1\",\"drops_known\":true,"
					   "\"flows\":[{\"flow\":1,\"bytes\":1048576,"
					   "\"messages\":1024,\"ns\":5000000,\"failed\":false,"
					   "\"error\":\"\",\"interval_ns\":100000000,"
					   "\"interval_bytes\":[1048576]}],\"received\":["
					   "{\"flow\":2,\"messages\":1000,\"bytes\":1024000,"
					   "\"verified\":true,\"bad_offset\":0}],\"latency\":"
					   "{\"min_ns\":1,\"max_ns\":9,\"buckets\":[[5,1024]]},"
					   "\"counters\":[{\"source\":\"engine\",\"name\":"
					   "\"rcvbuf_drops\",\"delta\":3}]}" },
		};

		for (size_t k = 0; k < sizeof(msgs) / sizeof(msgs[0]); k++) {
			raw(&s, msgs[k][1], strlen(msgs[k][1]));
			oob_seed(msgs[k][0], 3, &s);
		}
	}
	probe_seeds(&s);
}

/* ---- opts: command lines -------------------------------------------------------- */

static void opts_seeds(void)
{
	static const struct {
		int cmd;	/* index in fuzz_opts.c's table */
		const char *name;
		const char *args;	/* words separated by '|' */
	} lines[] = {
		{ 0, "bw-client", "-s|64k|-n|100|-q|4|--op|read|198.18.0.2" },
		{ 0, "bw-server", "--engine|soft|--bind|198.18.0.1|-p|18600|--udp-port|4792|--persistent" },
		{ 0, "bw-sweep", "-a|--unit|MiB|-w|10|-y|5|--interval|0.5|--verify|--loopback" },
		{ 0, "bw-verbs", "--engine|verbs|-d|mlx5_0|-i|1|-x|3|-m|4096|-T|106|-u|20" },
		{ 0, "bw-conflict", "-D|3|-n|5|--retry-cnt|3|--rnr-retry|7|--timeout|2.5|host|extra" },
		{ 0, "bw-atomic", "--op|atomic|-A|CMP_AND_SWAP|-t|64|-r|256|-o|8|--expect-gbps|1e3" },
		{ 1, "lat-hist", "--histogram|--hgrm|/tmp/lat.hgrm|--expect-p99-us|5.5|-s|2" },
		{ 1, "lat-qps", "-q|2|--op|write|--loopback|-D|1" },
		{ 3, "capture-read", "-r|x.pcap|-c|10|-v|--summary|--no-icrc|--utc|udp|port|4791" },
		{ 3, "capture-write", "-i|lo|-w|-|-C|1|-W|3|-s|128|-B|4096|-U|-l|--udp-port|4792" },
		{ 3, "capture-list", "-D|--json" },
		{ 4, "devices", "-d|mlx5_0|--verbs|--soft|--pretty" },
		{ 5, "top", "-b|-n|2|-d|0.5|-i|eth0|-t|-v|--sysfs-root|/sys|--proc-root|/proc|mlx5_0/1" },
		{ 7, "help", "bw" },
		{ 7, "help-many", "bw|lat" },
		{ 8, "version", "--json|--help" },
		{ 9, "probe", "--test|bad_icrc,psn_ahead|--accept|/tmp/known|--timeout|30|198.18.0.2" },
		{ 9, "probe-serve", "--serve|-d|rxe0|-x|1|--persistent|--auth-key|/tmp/k|-p|18600" },
		{ 9, "probe-list", "--list|--json" },
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char buf[512];
		size_t n = strlen(lines[i].args);

		memcpy(buf, lines[i].args, n);
		for (size_t k = 0; k < n; k++)
			if (buf[k] == '|')
				buf[k] = '\0';
		seed("opts", lines[i].name, lines[i].cmd, buf, n);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: mkseeds OUTDIR CAPTURE...");
	outdir = argv[1];
	mkdirs();
	for (int i = 2; i < argc; i++)
		capture_seeds(argv[i]);
	soft_seeds();
	oob_seeds();
	opts_seeds();
	return 0;
}
