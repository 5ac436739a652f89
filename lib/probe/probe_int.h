/* SPDX-License-Identifier: MIT */
/* lib/probe internals: the probe's UDP endpoint and a test's context. */
#ifndef RDMAKIT_PROBE_INT_H
#define RDMAKIT_PROBE_INT_H

#include <netinet/in.h>

#include "probe.h"
#include "icrc.h"
#include "probe_msg.h"
#include "wire.h"

/* The probe's RoCEv2 endpoint: one UDP socket on this host's address, port
 * 4791 when free (a verbs remote sends nowhere else), with DF set so that
 * the kernel writes IPv4 ID 0 on every packet (the ID the ICRC covers), no
 * GRO (one packet per datagram) and a kernel timestamp on each receive. */
struct probe_link {
	int fd;
	struct sockaddr_in local;
};

int probe_link_open(struct probe_link *l, const char *addr, char *err);
void probe_link_close(struct probe_link *l);
/* The clock of the record's times (the kernel's receive timestamps are
 * CLOCK_REALTIME); deadlines and waits run on CLOCK_MONOTONIC instead, so
 * that a clock step cannot stretch or cut a wait: its microseconds, a
 * deadline ms from now, and what is left of one (0 once passed). */
uint64_t probe_link_now_ns(void);
uint64_t probe_mono_us(void);
uint64_t probe_deadline_ms(uint64_t ms);
int probe_ms_left(uint64_t deadline);
/* One datagram to `to` with these ECN bits (the DSCP is 0): 0, or -1
 * with errno. */
int probe_link_send(struct probe_link *l, const void *buf, size_t len,
		    const struct sockaddr_in *to, uint8_t ecn);
/* One received datagram within wait_us (0: one already there): 1, 0 on
 * timeout, -1 on error. */
int probe_link_recv(struct probe_link *l, uint8_t *buf, size_t cap, size_t *len,
		    struct sockaddr_in *from, uint64_t *t_ns, uint8_t *tos, uint64_t wait_us);

/* -w FILE: every recorded packet, in the order recorded (probe_pcap.c).
 * Writes to a NULL writer do nothing. */
struct probe_pcap;
int probe_pcap_open(struct probe_pcap **out, const char *path, char *err);
/* A packet as sent, from its IPv4 header on. */
void probe_pcap_write(struct probe_pcap *w, uint64_t t_ns, const uint8_t *frame, size_t len);
/* A packet received (its UDP payload), its IPv4 and UDP headers rebuilt. */
void probe_pcap_write_rx(struct probe_pcap *w, const struct probe_event *e,
			 const struct sockaddr_in *from, const struct sockaddr_in *to,
			 const uint8_t *payload, size_t len);
/* Flushes and closes it: 0, or -1 with err when the file could not be written. */
int probe_pcap_close(struct probe_pcap *w, char *err);

/* A test's context: the control channel, the endpoint, the remote QP
 * being tested, this side's QP number and next PSN, and the record. */
struct probe_ctx {
	const struct probe_opts *o;
	struct oob c;
	struct probe_link link;
	struct probe_peer_info peer;
	struct sockaddr_in remote;	/* the remote QP's address and UDP port */
	struct xport_qp_info rqp;
	struct probe_mr_info mr;
	uint32_t qpn;			/* this side's (made up) QP number */
	uint32_t psn;			/* the next PSN this side sends */
	uint32_t mtu;
	bool control_lost;		/* the control channel failed: the rest cannot run */
	struct icrc_id_basis basis;	/* for solving received packets' IPv4 IDs */
	struct probe_pcap *pcap;	/* -w, or NULL */
	struct probe_result *r;
};

/* Every remote access a region can grant. */
#define ALL_ACCESS (XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_READ | XPORT_ACCESS_REMOTE_ATOMIC)
/* Where the remote's WRITEs and READs go: this side keeps no memory; it
 * answers as a responder would. */
#define PROBE_VA 0x10000
#define PROBE_RKEY 0x1234

/* The longest this side may leave the control channel silent: 10 s, and
 * a second less than the server's --timeout, after which it drops us. */
int probe_quiet_limit_ms(const struct probe_ctx *c);
/* The test cnp_reaction (probe_stream.c). */
int probe_cnp_reaction(struct probe_ctx *c, struct probe_result *r);

/* Asks the remote for a QP and region as s says (s->peer is filled
 * here); -1 after setting the result to fail. */
int probe_setup(struct probe_ctx *c, struct probe_setup *s);
/* The defaults: a 4 KiB region of 0xA5 with this remote access, `recvs`
 * receives of 1 KiB, path MTU 1024, timeout 14, retry_cnt and rnr_retry 7;
 * and a setup with them. */
struct probe_setup probe_setup_defaults(int access, unsigned recvs);
int probe_setup_default(struct probe_ctx *c, int access, unsigned recvs);
/* The remote's memory and completions into the record. */
int probe_fetch_state(struct probe_ctx *c);

/* A request this side sends. */
struct probe_req {
	uint8_t opcode;
	uint32_t psn;
	bool ackreq;
	uint64_t va;			/* RETH, for the opcodes that carry one */
	uint32_t rkey;
	uint32_t dmalen;
	uint64_t swap_add, compare;	/* AtomicETH, for the atomics */
	uint32_t len;			/* payload bytes */
	uint8_t byte;			/* the payload's every byte */
	bool corrupt_icrc;
	bool ce;			/* marked Congestion Experienced (else ECT(0)) */
	uint8_t syndrome;		/* OP_RC_ACK and OP_RC_ATOMIC_ACK: the AETH */
	uint32_t msn;
	uint64_t orig;			/* OP_RC_ATOMIC_ACK: the original value */
};

/* Builds and sends it, and records it; the frame number, or 0 on failure
 * (the result is set to fail). */
unsigned probe_send(struct probe_ctx *c, const struct probe_req *q);
/* For streams too long for the record: sends without recording; true
 * once sent (else the result is set to fail). */
bool probe_send_quiet(struct probe_ctx *c, const struct probe_req *q);
/* A datagram as received, for probe_next_quiet and probe_keep. */
struct probe_raw {
	uint8_t buf[4096 + 256];
	size_t len;
	struct sockaddr_in from;
	uint64_t t_ns;
	uint8_t tos;
};
/* The next packet from the remote to this side's QP within wait_us (0:
 * one that has arrived), decoded into *p but not recorded: 1, 0 on
 * timeout, -1 on error. */
int probe_next_quiet(struct probe_ctx *c, struct probe_raw *raw, struct wire_pkt *p,
		     uint64_t wait_us);
/* Records a packet probe_next_quiet returned after all (evidence). */
void probe_keep(struct probe_ctx *c, const struct probe_raw *raw);
/* The work the remote's QP is to post (it is then the requester). */
int probe_post(struct probe_ctx *c, const struct probe_post *w);
/* An ACK, NAK or RNR NAK for psn, sent and recorded: its frame, or 0. */
unsigned probe_answer(struct probe_ctx *c, uint32_t psn, uint8_t syndrome, uint32_t msn);
/* The next packet from the remote within timeout_ms, recorded: its index
 * in the record, or -1 when none came (or the record is full). */
int probe_next(struct probe_ctx *c, int timeout_ms);

/* When nothing in the record answers psn: a zero-length WRITE at psn, to
 * see whether the remote's QP still answers (probe_trace.liveness_frame). */
void probe_check_alive(struct probe_ctx *c, uint32_t psn, int wait_ms);

/* Records what arrives: until an answer (AETH) for psn has come and then
 * settle_ms passed, or wait_ms in all (psn < 0: just wait_ms). */
void probe_collect(struct probe_ctx *c, int64_t psn, int wait_ms, int settle_ms);

#endif
