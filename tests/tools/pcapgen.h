/* SPDX-License-Identifier: MIT */
/*
 * pcapgen's frame and file helpers (pcapgen_frames.c), shared with the
 * fixtures (pcapgen.c): pcap files with nanosecond times, the hosts'
 * addresses, packet templates built by the wire codec, and the manifest of
 * what each packet holds.
 */
#ifndef RDMAKIT_PCAPGEN_H
#define RDMAKIT_PCAPGEN_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include "icrc.h"
#include "wire.h"

#define T0_SEC 1767225600ULL	/* 2026-01-01T00:00:00Z */
#define FRAME_GAP_NS 1500
#define MAXFRAME 65536

/* Requester and responder of every scenario. */
#define HOST_A 2		/* 198.18.0.2, QP 0x000011 */
#define HOST_B 3		/* 198.18.0.3, QP 0x000012 */
#define QP_A 0x000011
#define QP_B 0x000012

/* The run: where the files go, the manifest, files written so far. */
struct gen {
	const char *outdir;
	FILE *manifest;
	unsigned file_index;
};

struct out {
	struct gen *g;
	const char *name;
	pcap_t *pd;
	pcap_dumper_t *d;
	uint64_t ts_ns;
	unsigned frame;
	char path[4096];
};

struct man_extra {
	const char *icrc;	/* "ok", "bad", "unchecked", or NULL: leave out */
	const char *status;	/* "truncated", "malformed", or NULL */
	bool no_bth;		/* the frame stops before the BTH */
	bool unknown;		/* opcode undefined: only BTH fields */
	size_t payload_len;	/* for unknown opcodes: bytes between BTH and ICRC */
	unsigned gso_segment, gso_segments;
};

/* The manifest's verdict for a frame written whole: ICRC ok. */
extern const struct man_extra OK;

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void out_open(struct gen *g, struct out *o, const char *name, int dlt, int snaplen);
void out_write(struct out *o, const uint8_t *buf, size_t caplen, size_t len);
void out_close(struct out *o);
void mac_of(uint8_t mac[6], unsigned host);
void ip4_of(uint8_t ip[4], unsigned host);
void ip6_of(uint8_t ip[16], unsigned host);
void gid_of(uint8_t gid[16], unsigned host);
void v4(struct wire_pkt *p, unsigned src, unsigned dst, uint8_t ecn);
void v6vlan(struct wire_pkt *p, unsigned src, unsigned dst, uint8_t ecn);
void rocev1(struct wire_pkt *p, unsigned src, unsigned dst, unsigned nvlan);
void ib(struct wire_pkt *p, uint16_t slid, uint16_t dlid, bool grh);
void fill_ext(struct wire_pkt *p, uint8_t op, unsigned salt);
void pattern(uint8_t *buf, size_t len, unsigned seed);
const char *ecn_name(uint8_t ecn);
void man_pkt(const struct out *o, const struct wire_pkt *p, size_t payload_len, const struct man_extra *x);
size_t emit(struct out *o, struct wire_pkt *p, size_t len);
void emit_other_udp(struct out *o, unsigned src, unsigned dst, size_t len);
void emit_arp(struct out *o, unsigned src, unsigned dst);

#endif
