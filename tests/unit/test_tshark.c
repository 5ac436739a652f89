// SPDX-License-Identifier: MIT
/*
 * Ground truth from outside the project: every opcode in the opcode table
 * is built by wire_build() as a RoCEv2 frame (Ethernet + IPv4 + UDP 4791,
 * then again over IPv6) with pseudo-random field values from a fixed
 * seed, written to a temporary pcap, and decoded by tshark.  Every field
 * tshark decodes is compared with what the codec put in: the Ethernet,
 * IP and UDP headers, the BTH, each extended header, the payload with its
 * pad bytes and the stored ICRC; a header the opcode does not carry must
 * be absent from tshark's decode too.
 *
 * What tshark 4.0.17 (Debian 12) does not decode, observed by running it
 * on these very frames, and therefore compared on the BTH (and the outer
 * headers) only:
 *   - CNP (0x81): "Unknown OpCode"; nothing after the BTH is dissected.
 *   - XRC (0xA0-0xBD): every XRC opcode is "Unknown OpCode"; neither the
 *     XRCETH nor anything behind it is dissected.
 *   - FLUSH (0x1C) and ATOMIC WRITE (0x1D): "Unknown OpCode", as above.
 *   - RD (0x40-0x55): the Info column calls them "DC ...", the
 *     infiniband.bth item spans 20 bytes instead of 12, and RDETH, DETH,
 *     RETH, AETH, ... are read 8 bytes too late (e.g. rdeth.eecnxt shows
 *     the DETH source QP).  RD Read Request, Atomic Acknowledge, Compare
 *     Swap and Fetch Add run off the end and are "Malformed"; RD
 *     Acknowledge shows no RDETH at all; RESYNC (0x55) is "DC Unknown
 *     Opcode".  For RD only the first 12 bytes of infiniband.bth count.
 *   - The ICRC is shown (infiniband.invariant.crc) only where tshark
 *     dissects up to it, i.e. not for the opcodes above; it is displayed
 *     as a big-endian number while the wire stores it little-endian.
 *   - AtomicETH's VA and R_Key are shown in the RETH fields
 *     (infiniband.reth.va, infiniband.reth.r_key); tshark has only
 *     atomiceth.swapdt and atomiceth.cmpdt of its own.
 * Settings that keep tshark honest on random payloads: the payload
 * heuristics (RPC-over-RDMA, SMB Direct, SMC-R, NVMe-RDMA, LNet, iSER,
 * SDP, FCoIB, EoIB, DRBD) are disabled, and so is the "eth_over_ib"
 * heuristic, which otherwise reads a UD payload starting 08 00 00 00 as
 * IPv4 and marks the frame malformed (observed on UD Send Only).  Without
 * this, RC Send Last/Only (+Invalidate) frames came out as
 * "[Malformed Packet: RPCoRDMA]" with no payload or ICRC fields.
 * WIRESHARK_CONFIG_DIR points at a directory that does not exist, so a
 * user's own Wireshark profile cannot change the decode.
 *
 * Without tshark the test is skipped, except under CI=true, where a
 * missing install step must fail rather than hide.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "wire.h"

#define MAX_FRAMES 512
#define MAX_PAYLOAD 24

/* tshark's columns, in -e order. */
enum col {
	C_FRAME, C_ETH_SRC, C_ETH_DST, C_ETH_TYPE,
	C_IP_SRC, C_IP_DST, C_IP_DSCP, C_IP_ECN, C_IP_LEN, C_IP_ID, C_IP_DF, C_IP_MF,
	C_IP_FRAG, C_IP_TTL, C_IP_PROTO, C_IP_CSUM_STATUS,
	C_IP6_DSCP, C_IP6_ECN, C_IP6_FLOW, C_IP6_PLEN, C_IP6_NXT, C_IP6_HLIM,
	C_IP6_SRC, C_IP6_DST,
	C_UDP_SPORT, C_UDP_DPORT, C_UDP_LEN, C_UDP_CSUM,
	C_BTH, C_BTH_OPCODE, C_BTH_SE, C_BTH_M, C_BTH_PAD, C_BTH_TVER, C_BTH_PKEY,
	C_BTH_BYTE4, C_BTH_DQP, C_BTH_A, C_BTH_RESV7, C_BTH_PSN,
	C_RDETH_EECNXT, C_DETH_QKEY, C_DETH_SRCQP,
	C_RETH_VA, C_RETH_RKEY, C_RETH_DMALEN,
	C_ATOMIC_SWAP, C_ATOMIC_CMP, C_AETH_SYNDROME, C_AETH_MSN, C_ATOMICACK_ORIG,
	C_IMMDT, C_IETH, C_DATA, C_IB_PAYLOAD, C_ICRC,
	C_COUNT
};

static const char *const col_field[C_COUNT] = {
	[C_FRAME] = "frame.number",
	[C_ETH_SRC] = "eth.src",
	[C_ETH_DST] = "eth.dst",
	[C_ETH_TYPE] = "eth.type",
	[C_IP_SRC] = "ip.src",
	[C_IP_DST] = "ip.dst",
	[C_IP_DSCP] = "ip.dsfield.dscp",
	[C_IP_ECN] = "ip.dsfield.ecn",
	[C_IP_LEN] = "ip.len",
	[C_IP_ID] = "ip.id",
	[C_IP_DF] = "ip.flags.df",
	[C_IP_MF] = "ip.flags.mf",
	[C_IP_FRAG] = "ip.frag_offset",
	[C_IP_TTL] = "ip.ttl",
	[C_IP_PROTO] = "ip.proto",
	[C_IP_CSUM_STATUS] = "ip.checksum.status",
	[C_IP6_DSCP] = "ipv6.tclass.dscp",
	[C_IP6_ECN] = "ipv6.tclass.ecn",
	[C_IP6_FLOW] = "ipv6.flow",
	[C_IP6_PLEN] = "ipv6.plen",
	[C_IP6_NXT] = "ipv6.nxt",
	[C_IP6_HLIM] = "ipv6.hlim",
	[C_IP6_SRC] = "ipv6.src",
	[C_IP6_DST] = "ipv6.dst",
	[C_UDP_SPORT] = "udp.srcport",
	[C_UDP_DPORT] = "udp.dstport",
	[C_UDP_LEN] = "udp.length",
	[C_UDP_CSUM] = "udp.checksum",
	[C_BTH] = "infiniband.bth",
	[C_BTH_OPCODE] = "infiniband.bth.opcode",
	[C_BTH_SE] = "infiniband.bth.se",
	[C_BTH_M] = "infiniband.bth.m",
	[C_BTH_PAD] = "infiniband.bth.padcnt",
	[C_BTH_TVER] = "infiniband.bth.tver",
	[C_BTH_PKEY] = "infiniband.bth.p_key",
	/* The first "Reserved" item of the packet is BTH byte 4 (FECN, BECN, resv6). */
	[C_BTH_BYTE4] = "infiniband.reserved",
	[C_BTH_DQP] = "infiniband.bth.destqp",
	[C_BTH_A] = "infiniband.bth.a",
	[C_BTH_RESV7] = "infiniband.bth.reserved7",
	[C_BTH_PSN] = "infiniband.bth.psn",
	[C_RDETH_EECNXT] = "infiniband.rdeth.eecnxt",
	[C_DETH_QKEY] = "infiniband.deth.q_key",
	[C_DETH_SRCQP] = "infiniband.deth.srcqp",
	[C_RETH_VA] = "infiniband.reth.va",
	[C_RETH_RKEY] = "infiniband.reth.r_key",
	[C_RETH_DMALEN] = "infiniband.reth.dmalen",
	[C_ATOMIC_SWAP] = "infiniband.atomiceth.swapdt",
	[C_ATOMIC_CMP] = "infiniband.atomiceth.cmpdt",
	[C_AETH_SYNDROME] = "infiniband.aeth.syndrome",
	[C_AETH_MSN] = "infiniband.aeth.msn",
	[C_ATOMICACK_ORIG] = "infiniband.atomicacketh.origremdt",
	[C_IMMDT] = "infiniband.immdt",
	[C_IETH] = "infiniband.ieth",
	[C_DATA] = "data.data",
	[C_IB_PAYLOAD] = "infiniband.payload",
	[C_ICRC] = "infiniband.invariant.crc",
};

/* Payload sub-dissectors tshark would otherwise try on random bytes. */
static const char *const disabled_protos[] = {
	"rpcordma", "smb_direct", "smc", "nvme-rdma", "lnet", "iser",
	"infiniband_sdp", "fcoib", "infiniband.eoib", "drbd",
};

struct frame {
	struct wire_pkt p;
	uint8_t bytes[256];
	size_t len;
	uint8_t payload[MAX_PAYLOAD];
	size_t payload_len;
	bool v6;
	char *cols[C_COUNT];	/* tshark's row, NULL until read */
};

static struct frame frames[MAX_FRAMES];
static int nframes;
static int nrows;		/* rows tshark returned */
static int tshark_status = -1;
static char pcap_path[512], err_path[512];
static int cur_op;		/* the opcode the running per-opcode test checks */

static uint64_t rng_state = 0x5DEECE66D2545F49ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[1024];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* tshark leaves RD opcodes mis-aligned and CNP, XRC, FLUSH and ATOMIC WRITE undecoded. */
static bool bth_only(uint8_t op)
{
	const struct wire_opcode_info *i = wire_opcode_info(op);

	return i->transport == WIRE_TR_RD || i->transport == WIRE_TR_XRC ||
	       i->transport == WIRE_TR_CNP || op == OP_RC_FLUSH || op == OP_RC_ATOMIC_WRITE;
}

static void fill_frame(struct frame *f, uint8_t opcode, bool v6)
{
	const struct wire_opcode_info *info = wire_opcode_info(opcode);
	struct wire_pkt *p = &f->p;

	memset(p, 0, sizeof(*p));
	f->v6 = v6;
	p->encap = WIRE_ENCAP_ROCEV2;
	p->layers = WIRE_L_ETH | (v6 ? WIRE_L_IPV6 : 0);
	for (int i = 0; i < 6; i++) {
		p->eth.src[i] = (uint8_t)rnd();
		p->eth.dst[i] = (uint8_t)rnd();
	}
	p->eth.src[0] &= 0xFE;	/* unicast */
	p->eth.dst[0] &= 0xFE;
	if (v6) {
		for (int i = 0; i < 16; i++) {
			p->ip6.src[i] = (uint8_t)rnd();
			p->ip6.dst[i] = (uint8_t)rnd();
		}
		p->ip6.src[0] = p->ip6.dst[0] = 0xFD;	/* unique local */
		p->ip6.dscp = (uint8_t)(rnd() & 0x3F);
		p->ip6.ecn = (uint8_t)(rnd() & 3);
		p->ip6.flow_label = (uint32_t)rnd() & 0xFFFFF;
		p->ip6.hop_limit = (uint8_t)(1 + rnd() % 255);
	} else {
		p->ip4.src[0] = p->ip4.dst[0] = 198;
		p->ip4.src[1] = p->ip4.dst[1] = 18;
		for (int i = 2; i < 4; i++) {
			p->ip4.src[i] = (uint8_t)(1 + rnd() % 254);
			p->ip4.dst[i] = (uint8_t)(1 + rnd() % 254);
		}
		p->ip4.dscp = (uint8_t)(rnd() & 0x3F);
		p->ip4.ecn = (uint8_t)(rnd() & 3);
		p->ip4.id = (uint16_t)rnd();
		p->ip4.frag = (rnd() & 1) ? 0x4000 : 0;	/* DF or nothing: no reassembly */
		p->ip4.ttl = (uint8_t)(1 + rnd() % 255);
	}
	p->udp.sport = (uint16_t)(0xC000 | (rnd() & 0x3FFF));
	p->udp.dport = ROCEV2_UDP_PORT;

	p->bth.opcode = opcode;
	p->bth.se = rnd() & 1;
	p->bth.mig = rnd() & 1;
	p->bth.tver = (uint8_t)(rnd() & 0xF);
	p->bth.pkey = (uint16_t)rnd();
	p->bth.fecn = rnd() & 1;
	p->bth.becn = opcode == OP_CNP ? true : rnd() & 1;
	p->bth.resv6 = (uint8_t)(rnd() & 0x3F);
	p->bth.dqpn = (uint32_t)rnd() & 0xFFFFFF;
	p->bth.ackreq = rnd() & 1;
	p->bth.resv7 = (uint8_t)(rnd() & 0x7F);
	p->bth.psn = (uint32_t)rnd() & 0xFFFFFF;
	p->rdeth.eecnxt = (uint32_t)rnd() & 0xFFFFFF;
	p->deth.qkey = (uint32_t)rnd();
	p->deth.srcqp = (uint32_t)rnd() & 0xFFFFFF;
	p->xrceth.xrcsrq = (uint32_t)rnd() & 0xFFFFFF;
	p->feth.sel = (uint8_t)(rnd() & 3);
	p->feth.placement = (uint8_t)(rnd() & 0xF);
	p->reth.va = rnd();
	p->reth.rkey = (uint32_t)rnd();
	p->reth.dmalen = (uint32_t)rnd();
	p->atomiceth.va = rnd() & ~7ULL;
	p->atomiceth.rkey = (uint32_t)rnd();
	p->atomiceth.swap_add = rnd();
	p->atomiceth.compare = rnd();
	p->aeth.syndrome = (uint8_t)(rnd() & 0x7F);
	p->aeth.msn = (uint32_t)rnd() & 0xFFFFFF;
	p->atomicacketh.orig = rnd();
	p->immdt = (uint32_t)rnd();
	p->ieth = (uint32_t)rnd();

	f->payload_len = info->payload ? 1 + rnd() % MAX_PAYLOAD : 0;
	for (size_t i = 0; i < f->payload_len; i++)
		f->payload[i] = (uint8_t)rnd();
	f->len = wire_build(f->bytes, sizeof(f->bytes), p, f->payload, f->payload_len);
}

static void test_build_pcap(struct unit *u)
{
	const char *tmp = getenv("TMPDIR");
	pcap_dumper_t *d;
	pcap_t *dead;
	FILE *fp;
	int fd;

	if (!tmp || !*tmp || strchr(tmp, '\''))
		tmp = "/tmp";
	nframes = 0;
	for (int v6 = 0; v6 < 2; v6++) {
		for (int op = 0; op < 256; op++) {
			struct frame *f;

			if (!wire_opcode_info((uint8_t)op))
				continue;
			f = &frames[nframes++];
			fill_frame(f, (uint8_t)op, v6);
			if (!f->len)
				printf("#   wire_build failed for opcode 0x%02x\n", op);
			CHECK(u, f->len > 0);
		}
	}
	CHECK(u, nframes > 0);

	snprintf(pcap_path, sizeof(pcap_path), "%s/rdmakit-tshark-XXXXXX", tmp);
	snprintf(err_path, sizeof(err_path), "%s/rdmakit-tshark-err-XXXXXX", tmp);
	fd = mkstemp(pcap_path);
	if (fd < 0) {
		printf("#   mkstemp %s: %s\n", pcap_path, strerror(errno));
		pcap_path[0] = 0;
		u->failures++;
		return;
	}
	fp = fdopen(fd, "wb");
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = fp && dead ? pcap_dump_fopen(dead, fp) : NULL;
	CHECK(u, d != NULL);
	if (!d) {
		if (dead)
			printf("#   pcap_dump_fopen: %s\n", pcap_geterr(dead));
		if (fp)
			fclose(fp);
		else
			close(fd);
		if (dead)
			pcap_close(dead);
		return;
	}
	for (int i = 0; i < nframes; i++) {
		struct pcap_pkthdr h = { 0 };

		h.ts.tv_sec = 1700000000 + i;
		h.caplen = h.len = (bpf_u_int32)frames[i].len;
		pcap_dump((u_char *)d, &h, frames[i].bytes);
	}
	pcap_dump_close(d);
	pcap_close(dead);
}

/* Splits one tab-separated row into its frame's columns. */
static void store_row(char *line)
{
	char *cols[C_COUNT] = { 0 };
	char *s = line, *tab;
	int n = 0;
	long num;

	line[strcspn(line, "\r\n")] = 0;
	while (n < C_COUNT) {
		tab = strchr(s, '\t');
		if (tab)
			*tab = 0;
		cols[n++] = s;
		if (!tab)
			break;
		s = tab + 1;
	}
	num = strtol(cols[C_FRAME] ? cols[C_FRAME] : "", NULL, 10);
	if (num < 1 || num > nframes || frames[num - 1].cols[0]) {
		printf("#   unexpected tshark row: %.120s\n", line);
		return;
	}
	for (int i = 0; i < C_COUNT; i++)
		frames[num - 1].cols[i] = strdup(cols[i] ? cols[i] : "");
}

static void print_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n++ < 20)
		printf("#   tshark: %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

static void test_tshark_rows(struct unit *u)
{
	char cmd[4096], *line = NULL;
	size_t cap = 0, off;
	FILE *out;
	int fd;

	if (!pcap_path[0]) {
		u->failures++;
		return;
	}
	fd = mkstemp(err_path);
	if (fd < 0) {
		printf("#   mkstemp %s: %s\n", err_path, strerror(errno));
		err_path[0] = 0;
		u->failures++;
		return;
	}
	close(fd);
	off = (size_t)snprintf(cmd, sizeof(cmd),
			       "WIRESHARK_CONFIG_DIR='%s.nocfg' tshark -n -r '%s' "
			       "-o ip.check_checksum:TRUE --disable-heuristic eth_over_ib",
			       pcap_path, pcap_path);
	for (size_t i = 0; i < sizeof(disabled_protos) / sizeof(disabled_protos[0]); i++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, " --disable-protocol %s",
					disabled_protos[i]);
	off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
				" -T fields -E separator=/t -E occurrence=f");
	for (int c = 0; c < C_COUNT; c++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, " -e %s", col_field[c]);
	off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, " 2>'%s'", err_path);
	CHECK(u, off < sizeof(cmd));

	out = popen(cmd, "r");
	CHECK(u, out != NULL);
	if (!out)
		return;
	nrows = 0;
	while (getline(&line, &cap, out) > 0) {
		nrows++;
		store_row(line);
	}
	free(line);
	tshark_status = pclose(out);
	if (tshark_status != 0) {
		printf("#   tshark exit status %d\n", WIFEXITED(tshark_status) ?
		       WEXITSTATUS(tshark_status) : tshark_status);
		print_file(err_path);
	}
	CHECK_EQ(u, tshark_status, 0);
	/* One row per frame written, and each row names its own frame. */
	CHECK_EQ(u, nrows, nframes);
	for (int i = 0; i < nframes; i++)
		CHECK(u, frames[i].cols[0] != NULL);
}

/* ---- comparisons ---------------------------------------------------- */

static const char *field(const struct frame *f, enum col c)
{
	return f->cols[c] ? f->cols[c] : "";
}

static void mismatch(struct unit *u, const struct frame *f, enum col c, const char *want)
{
	u->failures++;
	printf("#   opcode 0x%02x (%s) %s: %s: tshark \"%s\", codec %s\n", f->p.bth.opcode,
	       wire_opcode_name(f->p.bth.opcode), f->v6 ? "IPv6" : "IPv4", col_field[c],
	       field(f, c), want);
}

/* A number as tshark prints it: decimal, "0x" hex, or a boolean. */
static bool parse_num(const char *s, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "True") || !strcmp(s, "1")) {
		*v = 1;
		return true;
	}
	if (!strcmp(s, "False") || !strcmp(s, "0")) {
		*v = 0;
		return true;
	}
	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && *end == 0;
}

static void want_num(struct unit *u, const struct frame *f, enum col c, uint64_t want)
{
	uint64_t got;
	char w[64];

	if (parse_num(field(f, c), &got) && got == want)
		return;
	snprintf(w, sizeof(w), "%llu (0x%llx)", (unsigned long long)want,
		 (unsigned long long)want);
	mismatch(u, f, c, w);
}

/* A byte string (FT_BYTES) as lowercase hex, separators ignored. */
static void want_hex(struct unit *u, const struct frame *f, enum col c,
		     const uint8_t *bytes, size_t n, bool prefix_only)
{
	char w[2 * 256 + 1], got[2 * 256 + 1];
	const char *s = field(f, c);
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		snprintf(w + 2 * i, 3, "%02x", bytes[i]);
	w[2 * n] = 0;
	for (; *s && k + 1 < sizeof(got); s++)
		if (*s != ':')
			got[k++] = (char)(*s >= 'A' && *s <= 'F' ? *s + 32 : *s);
	got[k] = 0;
	if (prefix_only ? strncmp(got, w, 2 * n) == 0 : strcmp(got, w) == 0)
		return;
	mismatch(u, f, c, w);
}

static void want_hex32(struct unit *u, const struct frame *f, enum col c, uint32_t v)
{
	uint8_t b[4];

	wire_put32(b, v);
	want_hex(u, f, c, b, 4, false);
}

/* A header the codec did not put in must not show up in tshark's decode. */
static void want_absent(struct unit *u, const struct frame *f, enum col c)
{
	if (!*field(f, c))
		return;
	mismatch(u, f, c, "(absent)");
}

static void want_addr(struct unit *u, const struct frame *f, enum col c, int af,
		      const uint8_t *addr)
{
	uint8_t got[16];
	char w[64];

	if (inet_pton(af, field(f, c), got) == 1 && !memcmp(got, addr, af == AF_INET ? 4 : 16))
		return;
	inet_ntop(af, addr, w, sizeof(w));
	mismatch(u, f, c, w);
}

static void want_mac(struct unit *u, const struct frame *f, enum col c, const uint8_t *mac)
{
	unsigned m[6];
	char w[32];

	if (sscanf(field(f, c), "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) == 6) {
		int same = 1;

		for (int i = 0; i < 6; i++)
			same &= m[i] == mac[i];
		if (same)
			return;
	}
	snprintf(w, sizeof(w), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	mismatch(u, f, c, w);
}

static void check_outer(struct unit *u, const struct frame *f)
{
	const struct wire_pkt *p = &f->p;
	size_t udp_len = f->len - WIRE_ETH_LEN - (f->v6 ? WIRE_IPV6_LEN : WIRE_IPV4_LEN);

	want_mac(u, f, C_ETH_SRC, p->eth.src);
	want_mac(u, f, C_ETH_DST, p->eth.dst);
	if (f->v6) {
		want_num(u, f, C_ETH_TYPE, ETHERTYPE_IPV6);
		want_addr(u, f, C_IP6_SRC, AF_INET6, p->ip6.src);
		want_addr(u, f, C_IP6_DST, AF_INET6, p->ip6.dst);
		want_num(u, f, C_IP6_DSCP, p->ip6.dscp);
		want_num(u, f, C_IP6_ECN, p->ip6.ecn);
		want_num(u, f, C_IP6_FLOW, p->ip6.flow_label);
		want_num(u, f, C_IP6_PLEN, udp_len);
		want_num(u, f, C_IP6_NXT, 17);
		want_num(u, f, C_IP6_HLIM, p->ip6.hop_limit);
		want_absent(u, f, C_IP_SRC);
	} else {
		want_num(u, f, C_ETH_TYPE, ETHERTYPE_IPV4);
		want_addr(u, f, C_IP_SRC, AF_INET, p->ip4.src);
		want_addr(u, f, C_IP_DST, AF_INET, p->ip4.dst);
		want_num(u, f, C_IP_DSCP, p->ip4.dscp);
		want_num(u, f, C_IP_ECN, p->ip4.ecn);
		want_num(u, f, C_IP_LEN, f->len - WIRE_ETH_LEN);
		want_num(u, f, C_IP_ID, p->ip4.id);
		want_num(u, f, C_IP_DF, (p->ip4.frag >> 14) & 1);
		want_num(u, f, C_IP_MF, (p->ip4.frag >> 13) & 1);
		want_num(u, f, C_IP_FRAG, p->ip4.frag & 0x1FFF);
		want_num(u, f, C_IP_TTL, p->ip4.ttl);
		want_num(u, f, C_IP_PROTO, 17);
		want_num(u, f, C_IP_CSUM_STATUS, 1);	/* PROTO_CHECKSUM_E_GOOD */
		want_absent(u, f, C_IP6_SRC);
	}
	want_num(u, f, C_UDP_SPORT, p->udp.sport);
	want_num(u, f, C_UDP_DPORT, ROCEV2_UDP_PORT);
	want_num(u, f, C_UDP_LEN, udp_len);
	want_num(u, f, C_UDP_CSUM, 0);
}

static void check_bth(struct unit *u, const struct frame *f)
{
	const struct wire_bth *b = &f->p.bth;
	bool rd = wire_opcode_info(b->opcode)->transport == WIRE_TR_RD;

	/* tshark's BTH item covers 12 bytes; 20 for RD (see the top comment). */
	want_hex(u, f, C_BTH, f->bytes + f->p.bth_off, WIRE_BTH_LEN, rd);
	want_num(u, f, C_BTH_OPCODE, b->opcode);
	want_num(u, f, C_BTH_SE, b->se);
	want_num(u, f, C_BTH_M, b->mig);
	want_num(u, f, C_BTH_PAD, b->padcnt);
	want_num(u, f, C_BTH_TVER, b->tver);
	want_num(u, f, C_BTH_PKEY, b->pkey);
	want_hex(u, f, C_BTH_BYTE4,
		 &(uint8_t){ (uint8_t)(b->fecn << 7 | b->becn << 6 | b->resv6) }, 1, false);
	want_num(u, f, C_BTH_DQP, b->dqpn);
	want_num(u, f, C_BTH_A, b->ackreq);
	want_num(u, f, C_BTH_RESV7, b->resv7);
	want_num(u, f, C_BTH_PSN, b->psn);
}

static void check_ext(struct unit *u, const struct frame *f)
{
	const struct wire_pkt *p = &f->p;
	uint16_t ext = wire_opcode_info(p->bth.opcode)->ext;
	uint8_t data[MAX_PAYLOAD + 3] = { 0 };
	uint32_t icrc_be;

	/* RDETH only comes with RD, which tshark misreads; it must not appear elsewhere. */
	want_absent(u, f, C_RDETH_EECNXT);
	if (ext & WIRE_X_DETH) {
		want_num(u, f, C_DETH_QKEY, p->deth.qkey);
		want_num(u, f, C_DETH_SRCQP, p->deth.srcqp);
	} else {
		want_absent(u, f, C_DETH_QKEY);
	}
	if (ext & WIRE_X_RETH) {
		want_num(u, f, C_RETH_VA, p->reth.va);
		want_num(u, f, C_RETH_RKEY, p->reth.rkey);
		want_num(u, f, C_RETH_DMALEN, p->reth.dmalen);
	} else if (ext & WIRE_X_ATOMICETH) {
		/* tshark shows AtomicETH's VA and R_Key in the RETH fields. */
		want_num(u, f, C_RETH_VA, p->atomiceth.va);
		want_num(u, f, C_RETH_RKEY, p->atomiceth.rkey);
		want_absent(u, f, C_RETH_DMALEN);
	} else {
		want_absent(u, f, C_RETH_VA);
	}
	if (ext & WIRE_X_ATOMICETH) {
		want_num(u, f, C_ATOMIC_SWAP, p->atomiceth.swap_add);
		want_num(u, f, C_ATOMIC_CMP, p->atomiceth.compare);
	} else {
		want_absent(u, f, C_ATOMIC_SWAP);
	}
	if (ext & WIRE_X_AETH) {
		want_num(u, f, C_AETH_SYNDROME, p->aeth.syndrome);
		want_num(u, f, C_AETH_MSN, p->aeth.msn);
	} else {
		want_absent(u, f, C_AETH_SYNDROME);
	}
	if (ext & WIRE_X_ATOMICACKETH)
		want_num(u, f, C_ATOMICACK_ORIG, p->atomicacketh.orig);
	else
		want_absent(u, f, C_ATOMICACK_ORIG);
	if (ext & WIRE_X_IMMDT)
		want_hex32(u, f, C_IMMDT, p->immdt);
	else
		want_absent(u, f, C_IMMDT);
	if (ext & WIRE_X_IETH)
		want_hex32(u, f, C_IETH, p->ieth);
	else
		want_absent(u, f, C_IETH);

	/* tshark's payload is the data and the pad bytes that follow it. */
	if (f->payload_len) {
		enum col c = *field(f, C_DATA) ? C_DATA : C_IB_PAYLOAD;

		memcpy(data, f->payload, f->payload_len);
		want_hex(u, f, c, data, f->payload_len + p->bth.padcnt, false);
	} else {
		want_absent(u, f, C_DATA);
		want_absent(u, f, C_IB_PAYLOAD);
	}
	/* The ICRC is stored little-endian; tshark shows the 4 bytes big-endian. */
	icrc_be = __builtin_bswap32(p->icrc);
	want_num(u, f, C_ICRC, icrc_be);
	CHECK_EQ(u, wire_get32(f->bytes + p->icrc_off), icrc_be);
}

static void test_one_opcode(struct unit *u)
{
	for (int i = 0; i < nframes; i++) {
		const struct frame *f = &frames[i];

		if (f->p.bth.opcode != cur_op)
			continue;
		if (!f->cols[0]) {
			printf("#   opcode 0x%02x (%s) %s: no row from tshark for frame %d\n",
			       cur_op, wire_opcode_name((uint8_t)cur_op), f->v6 ? "IPv6" : "IPv4",
			       i + 1);
			u->failures++;
			continue;
		}
		check_outer(u, f);
		check_bth(u, f);
		if (!bth_only((uint8_t)cur_op))
			check_ext(u, f);
	}
}

int main(void)
{
	struct unit u = { 0 };
	const char *ci = getenv("CI");

	if (!in_path("tshark")) {
		if (ci && !strcmp(ci, "true")) {
			printf("#   tshark is not installed, and CI=true: run 'make deps'\n");
			u.number++;
			u.failed++;
			printf("not ok %d - tshark installed\n", u.number);
		} else {
			unit_skip(&u, "tshark ground truth", "tshark not installed (make deps installs it)");
		}
		return unit_done(&u);
	}
	RUN(&u, test_build_pcap);
	RUN(&u, test_tshark_rows);
	/* Without a single row the failure above says it all: no per-opcode noise. */
	for (int op = 0; op < 256 && nrows > 0; op++) {
		const struct wire_opcode_info *i = wire_opcode_info((uint8_t)op);
		char name[96];

		if (!i)
			continue;
		cur_op = op;
		snprintf(name, sizeof(name), "tshark agrees on 0x%02x %s%s", op, i->name,
			 bth_only((uint8_t)op) ? " (BTH only)" : "");
		unit_run(&u, name, test_one_opcode);
	}
	for (int i = 0; i < nframes; i++)
		for (int c = 0; c < C_COUNT; c++)
			free(frames[i].cols[c]);
	if (pcap_path[0])
		unlink(pcap_path);
	if (err_path[0] && strstr(err_path, "XXXXXX") == NULL)
		unlink(err_path);
	return unit_done(&u);
}
