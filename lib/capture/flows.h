/* SPDX-License-Identifier: MIT */
/*
 * Per-flow diagnosis of captured RDMA traffic.  A flow is one direction of
 * one connection: source address, destination address and destination QP.
 * State is per flow only, so memory stays flat however long the capture.
 */
#ifndef RDMAKIT_FLOWS_H
#define RDMAKIT_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "icrc.h"
#include "wire.h"

struct flow_key {
	uint8_t src[16];	/* IPv4-mapped, IPv6/GID, or LID in the last 2 bytes */
	uint8_t dst[16];	/* UD: zero (the flow is the sender's QP, to anyone) */
	uint32_t dqpn;		/* UD: the source QP (its DETH), not the destination */
	uint8_t family;		/* 4, 6, or 0 for IB LIDs */
	uint8_t service;	/* enum wire_transport of a UC or UD request; else RC (0) */
};

/* A UD flow's dqpn when the snap length cut its packets before the DETH's
 * source QP: they are kept together, out of every sender's PSN sequence. */
#define FLOW_SRC_QP_UNKNOWN 0xFFFFFFFFu

#define FLOW_PSN_WINDOW 4096	/* PSNs remembered behind the highest seen */
/* A jump this large (either way) is a new connection on a reused QP number
 * (another run, a new random first PSN), not loss nor reordering. */
#define FLOW_RESTART_JUMP 65536
#define FLOW_PENDING 1024	/* requests awaiting a response, for delays */
#define FLOW_NAK_CODES 5

struct flow_pending {
	uint32_t psn;
	uint64_t ts_ns;
};

struct flow {
	struct flow_key key;
	uint64_t packets, bytes, payload_bytes;
	uint64_t first_ns, last_ns;
	uint64_t opcodes[256];
	uint64_t retransmits;	/* a PSN seen again (UC, UD: duplicated on the way) */
	uint64_t psn_gaps;	/* PSNs skipped (lost before the capture point) */
	uint64_t out_of_order;	/* a PSN older than the newest, not seen before */
	uint64_t restarts;	/* a PSN jump no requester makes: a new connection reused the QPN */
	uint64_t naks[FLOW_NAK_CODES], naks_other, rnr_naks, dup_acks;
	uint64_t cnps, ce_marked, icrc_bad, gso_aggregates;
	struct hist ack_delay;	/* request -> its response, ns */
	uint32_t qkey;		/* UD: the last Q_Key its datagrams carried */

	/* PSN tracking of requests (or of read responses). */
	bool psn_valid;
	bool jump_ok;		/* last request was a READ: its responses take PSNs */
	uint32_t max_psn;
	uint8_t seen[FLOW_PSN_WINDOW / 8];
	bool ack_valid;
	uint32_t last_ack_psn;
	uint8_t last_ack_syndrome;
	uint32_t last_ack_msn;

	struct flow_pending pending[FLOW_PENDING];
	size_t pending_head, pending_len;
	struct flow *peer;	/* the opposite direction of the connection */
};

/* capture --max-flows: flows diagnosed at most (about 50 KB each). */
#define FLOWS_DEFAULT_MAX 10000

struct flow_table {
	struct flow **slots;	/* open addressing */
	size_t cap;
	struct flow **order;	/* in order of first packet */
	size_t n, order_cap;
	size_t max_flows;	/* 0: FLOWS_DEFAULT_MAX */
	uint64_t packets, bytes, non_rdma, malformed, icrc_bad, icrc_unchecked;
	uint64_t untracked_packets;	/* in flows beyond max_flows: counted, not diagnosed */
	uint64_t first_ns, last_ns;
	/* SipHash key, random per table: a capture crafted to collide in the
	 * table would have to know it. */
	uint8_t hash_key[16];
};

void flows_init(struct flow_table *t);
void flows_free(struct flow_table *t);
/* Accounts one decoded packet; returns false only when out of memory. */
bool flows_add(struct flow_table *t, const struct wire_pkt *p, uint64_t ts_ns,
	       size_t wire_len, enum crc_verdict icrc, bool from_gso);
/* Fills the flow key of a packet. */
void flow_key_of(const struct wire_pkt *p, struct flow_key *k);
/* A UC or UD flow: nothing is acknowledged or resent on it. */
bool flow_unreliable(const struct flow_key *k);
/* A UD flow of packets cut before their DETH (FLOW_SRC_QP_UNKNOWN). */
bool flow_src_qp_unknown(const struct flow_key *k);
/* "198.18.0.2", "fe80::1" or "lid 0x0005". */
void flow_addr_str(const struct flow_key *k, bool dst, char *out, size_t cap);
/* Whether an opcode is a response (read response, ACK, atomic ACK). */
bool flow_is_response(uint8_t opcode);

#endif
