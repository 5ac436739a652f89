/* SPDX-License-Identifier: MIT */
/*
 * The soft engine's internals: a userspace InfiniBand RC transport over
 * RoCEv2.  Every packet is a real RoCEv2 packet made by the wire codec,
 * with its ICRC; the requester and responder follow IBTA vol. 1 ch. 9.
 *
 * One thread drives everything: xport_poll_cq() runs soft_progress(),
 * which receives a batch, runs the responder and requester on it, fires
 * timers and sends what is due.  No allocation on the data path: packets
 * are built in preallocated slots.
 *
 * Packets reach the network through a link (struct soft_link): UDP sockets
 * normally, or an in-process link in tests that drops, duplicates and
 * reorders on a seed.
 */
#ifndef RDMAKIT_SOFT_H
#define RDMAKIT_SOFT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "icrc.h"
#include "shm_counters.h"
#include "transport.h"
#include "wire.h"

/* QPNs and keys are random bits beside a slot index (getrandom), so a
 * host that is not the peer cannot guess them; the index finds the object,
 * the whole value must match. */
#define SOFT_INDEX_BITS 10
#define SOFT_MAX_QPS (1 << SOFT_INDEX_BITS)
#define SOFT_MAX_MRS (1 << SOFT_INDEX_BITS)
#define SOFT_INDEX_MASK ((1u << SOFT_INDEX_BITS) - 1)
#define SOFT_PKT_MAX (WIRE_IPV6_LEN + WIRE_UDP_LEN + WIRE_BTH_LEN + \
		      WIRE_ATOMICETH_LEN + WIRE_RETH_LEN + 4096 + 4 + WIRE_ICRC_LEN)
#define SOFT_HOST_BACKLOG (256 << 10)	/* bytes of a QP the host may queue unsent */
#define SOFT_BACKLOG_CHECK_PKTS 64	/* in flight before the backlog is asked */
#define SOFT_BACKLOG_CHECK_NS 50000	/* and then at most this often (a syscall) */
#define SOFT_BATCH 256			/* packets per send/receive syscall */
#define SOFT_REPLAY 32			/* READ/atomic requests remembered for duplicates */
#define SOFT_READ_JOBS 32		/* READ responses being sent, per QP */
#define SOFT_ACK_EVERY 32		/* request an ACK at least every N packets */
/* Unacknowledged packets in flight per QP, at most: 8 MiB of packets of
 * the path MTU (2048 at 4096, 8192 at 1024), and never more than 8192 (at
 * small MTUs the kernel's per-packet overhead, not the bytes, fills the
 * receive buffer).  Enough to ride out a receiver that stops for a
 * scheduler tick or a descheduled vCPU (4 ms at 16 Gb/s) rather than stall
 * on ACKs; as much as perftest's default 128 WRITEs of 64 KiB keep posted. */
#define SOFT_WINDOW_BYTES (8u << 20)
#define SOFT_WINDOW_PKTS 8192u
#define SOFT_CWND_INIT 64		/* the loss window a new connection starts with */
#define SOFT_CWND_MIN 8			/* ... and never goes below */
#define SOFT_TIMER_BACKOFF_MAX 3	/* the ACK timeout doubles up to 2^3 times */
#define SOFT_RX_ROUNDS 8		/* receive calls per progress before timers and ACKs */
#define SOFT_CNP_GAP_NS 50000		/* at most one CNP per QP per 50 us */
#define SOFT_LINE_GBPS 100.0		/* the rate DCQCN recovers to */
#define SOFT_MAX_INLINE 912		/* bytes copied at post time; perftest's maximum */

/* Where a packet goes or came from: address (IPv4-mapped or IPv6) and port. */
struct soft_addr {
	uint8_t ip[16];
	uint16_t port;
	bool v6;
};

/* The ICRC's masked pseudo-header: 8 bytes for the LRH, the IP and the
 * UDP header. */
#define SOFT_ICRC_ROOM (8 + WIRE_IPV6_LEN + WIRE_UDP_LEN)

/* A packet in a slot: the UDP payload (BTH .. ICRC) and its addressing
 * (a received one's bytes may lie in the link's buffer: soft_pkt_bytes).
 * The room before buf takes the ICRC's pseudo-header, so that a lone
 * packet's ICRC is one CRC pass over contiguous bytes (soft_pkt_icrc). */
struct soft_pkt {
	union {
		uint8_t frame[SOFT_ICRC_ROOM + SOFT_PKT_MAX];
		struct {
			uint8_t icrc_room[SOFT_ICRC_ROOM];
			uint8_t buf[SOFT_PKT_MAX];
		};
	};
	size_t len;
	struct soft_addr src, dst;
	uint8_t ecn;			/* as sent, or as received */
	uint8_t tos, ttl;		/* rx: the IP header's (UD's GRH), when the link says */
	uint32_t flow_label;		/* rx, IPv6: the header's flow label */
	uint16_t ip_id;			/* tx: IPv4 ID the ICRC was computed with;
					 * rx: the ID to try first (GRO segment k),
					 * and once the ICRC held, the ID it held with */
	int qp_slot;			/* tx: the sending QP (its source port) */
	/* tx: the payload still in its registered region (or the WQE's inline
	 * copy), bytes hdr_len.. of the packet; NULL once it is in buf.  The
	 * link copies it once, straight to where it is sent from, within the
	 * same soft_progress() that checked the region. */
	const uint8_t *payload;
	uint32_t payload_len;
	uint16_t hdr_len;
	/* rx: where the link left the packet's len bytes when not in buf: its
	 * receive buffer, valid until its next recv call (soft_progress
	 * handles every packet before that).  NULL: in buf. */
	uint8_t *rx_bytes;
};

/* A received packet's bytes. */
static inline uint8_t *soft_pkt_bytes(struct soft_pkt *pk)
{
	return pk->rx_bytes ? pk->rx_bytes : pk->buf;
}

struct soft_link;

struct soft_link_ops {
	/* Per-QP sending endpoint: returns its UDP source port, or -1. */
	int (*qp_open)(struct soft_link *l, int qp_slot, uint8_t tos, char *err);
	void (*qp_close)(struct soft_link *l, int qp_slot);
	/* Seals (soft_pkt_seal) and sends n packets; returns how many were taken. */
	int (*send)(struct soft_link *l, struct soft_pkt *pkts, int n);
	/* Receives up to n packets without blocking; returns how many. */
	int (*recv)(struct soft_link *l, struct soft_pkt *pkts, int n);
	/* Bytes a QP has handed to the host but the host has not yet put on
	 * the wire (socket and qdisc); optional. */
	uint32_t (*qp_backlog)(struct soft_link *l, int qp_slot);
	/* Packets the host dropped for us since the link opened because our
	 * receive buffer was full: the kernel's count; optional. */
	uint64_t (*rx_overflows)(struct soft_link *l);
	/* Blocks until a packet can be received or timeout_ns passes. */
	void (*wait)(struct soft_link *l, uint64_t timeout_ns);
	void (*close)(struct soft_link *l);
};

struct soft_link {
	const struct soft_link_ops *ops;
	struct soft_addr local;		/* bound address and port (4791) */
	uint32_t max_mtu;		/* largest RoCE MTU the interface carries; 0: any */
};

/* The UDP link: binds addr:port for receiving, one socket per QP to send.
 * Unless port_fixed, a port in use falls back to a free one. */
struct soft_link *soft_udp_open(const char *bind_addr, uint16_t port, bool port_fixed,
				char *err);

/* DCQCN reaction point state (soft_dcqcn.c). */
struct soft_dcqcn {
	struct xport_dcqcn p;		/* resolved parameters */
	bool limited;			/* pacing since a CNP, until back at line rate */
	double line_gbps, rc_gbps, rt_gbps, alpha;
	uint64_t last_cnp_ns, last_alpha_ns, last_timer_ns, last_token_ns;
	uint64_t bytes;			/* since the last byte-counter stage */
	unsigned timer_stage, byte_stage;
	double tokens;			/* pacer bucket, bytes */
	uint64_t cuts;			/* rate cuts (CNPs acted on) */
};

void soft_dcqcn_init(struct soft_dcqcn *c, double line_gbps, const struct xport_dcqcn *p);
/* A CNP arrived: cuts the rate; false when DCQCN is off (nothing done). */
bool soft_dcqcn_on_cnp(struct soft_dcqcn *c, uint64_t now);
void soft_dcqcn_tick(struct soft_dcqcn *c, uint64_t now);
void soft_dcqcn_sent(struct soft_dcqcn *c, size_t bytes);
bool soft_dcqcn_may_send(struct soft_dcqcn *c, uint64_t now, size_t bytes);

struct soft_mr {
	struct xport_mr pub;
	bool used;
};

enum soft_qp_state { SOFT_QP_RESET, SOFT_QP_RTS, SOFT_QP_ERROR };

struct soft_swqe {
	struct xport_send_wr wr;
	uint32_t first_psn;
	uint32_t npkts;			/* PSNs the operation takes */
	uint32_t resp_pkts;		/* READ: response packets received */
	bool assigned;			/* PSNs given */
	bool done;
	enum xport_wc_status status;
};

struct soft_rwqe {
	struct xport_recv_wr wr;
};

struct soft_replay {
	bool valid;
	uint8_t opcode;			/* OP_RC_READ_REQUEST or an atomic */
	uint32_t psn;
	uint32_t npkts;
	uint64_t orig;			/* atomic: the value returned */
};

/* A response waiting its turn: READ responses, and the ACKs, NAKs and
 * atomic ACKs of later PSNs, which must not overtake them. */
enum soft_job_kind { SOFT_JOB_READ, SOFT_JOB_ACK, SOFT_JOB_ATOMIC_ACK };

struct soft_read_job {
	uint8_t kind;			/* enum soft_job_kind */
	uint8_t syndrome;		/* ACK: the AETH syndrome */
	uint32_t msn;			/* ACK, atomic ACK: the MSN when it was due */
	uint64_t orig;			/* atomic ACK: the original value */
	uint32_t psn;			/* PSN of the next response packet */
	uint32_t last_psn;
	uint64_t va;			/* next byte to send */
	uint32_t rkey;			/* re-checked before each packet: a region
					 * deregistered mid-response is not read */
	uint32_t left;
	bool first;			/* next packet is the first of the response */
};

/* A completion as the CQ holds it: a send completion also says up to which
 * send-queue entry its QP's slots are free once it is polled (verbs frees
 * an unsignaled WR's slot with the next signaled completion). */
struct soft_cqe {
	struct xport_wc wc;
	int qp_slot;			/* -1: a receive completion */
	uint64_t sq_free;		/* send: entries before it are free */
};

struct soft_cq {
	struct soft_dev *dev;
	struct soft_cqe *ring;
	int depth, head, count;
	bool overflow;
};

/* The IPv4 IDs a QP's peer, or a peer host, has been sending (soft_rx_icrc.c). */
struct soft_id_track {
	uint8_t addr[16];		/* a peer host's tracker: its address, */
	bool used;			/* when this slot holds one */
	bool known, pending_valid;
	uint16_t last;			/* the last accepted solved ID */
	uint16_t pending;		/* a refused one the next may follow on from */
	uint64_t last_ns;
};

struct soft_qp {
	struct soft_dev *dev;
	int slot;
	uint32_t qpn;
	enum soft_qp_state state;
	struct xport_qp_attr attr;
	struct soft_cq *scq, *rcq;
	struct soft_addr peer;		/* peer's address and UDP port */
	uint32_t peer_qpn;
	uint32_t pmtu;
	uint8_t peer_max_rd_atomic;
	uint16_t sport;			/* our UDP source port (entropy) */
	struct xport_counters ctr;
	struct soft_dcqcn cc;		/* we are the reaction point for our data */

	/* Requester. */
	struct soft_swqe *sq;
	/* Ring positions count work requests ever posted: 64 bits, so that
	 * position % size never aliases (32 bits wrapped after an hour at
	 * 1 Mpps, and sizes need not be powers of two). */
	uint32_t sq_size;
	uint64_t sq_head, sq_tail;	/* head: oldest not completed */
	uint64_t sq_free;		/* entries before it may be posted over */
	uint8_t *inline_buf;		/* attr.max_inline_data bytes per SQ entry */
	uint64_t sq_cur;		/* next WQE to transmit from */
	uint32_t cur_pkt;		/* packet index within sq_cur */
	uint32_t next_psn;		/* PSN of the next new packet */
	uint32_t una;			/* oldest unacknowledged PSN */
	/* Loss reaction (no lossless fabric under us): packets allowed in
	 * flight, halved on a loss and cut to SOFT_CWND_MIN on a timeout,
	 * regrown by slow start below ssthresh and by one packet per window
	 * above it; and the ACK timeout doubled per timeout in a row. */
	uint32_t cwnd, ssthresh;
	uint32_t cwnd_max;		/* soft_cwnd_max(pmtu) */
	uint32_t cwnd_acked;		/* packets acknowledged towards cwnd + 1 */
	uint32_t recover_psn;		/* losses before it belong to the last cut */
	bool recovering;
	unsigned timer_backoff;
	uint32_t rd_atomic_out;		/* outstanding READs/atomics */
	uint64_t deadline_ns;		/* local ACK timeout; 0 = not armed */
	uint64_t rnr_until_ns;		/* waiting out an RNR NAK */
	bool backlogged;		/* the host still queues too much of ours */
	uint64_t backlog_asked_ns;	/* when the host was last asked */
	int retries_left, rnr_left;
	bool read_resent;		/* a missing READ response was re-requested */
	uint32_t max_sent_psn;		/* to tell retransmissions from first sends */
	bool sent_any;

	/* Responder. */
	struct soft_rwqe *rq;
	uint32_t rq_size;
	uint64_t rq_head, rq_tail;
	uint32_t epsn;			/* expected PSN */
	uint32_t msn;
	bool nak_sent;			/* one NAK(PSN sequence error) per episode */
	bool in_send, in_write;		/* inside a multi-packet SEND / WRITE */
	uint32_t send_off;
	uint64_t write_va;
	uint32_t write_left;
	uint32_t write_rkey;		/* the WRITE in progress: re-checked per packet */
	bool ack_due;
	uint32_t ack_psn;
	struct soft_replay replay[SOFT_REPLAY];
	uint32_t replay_next;
	struct soft_read_job reads[SOFT_READ_JOBS];
	uint32_t reads_head, reads_count;
	uint64_t last_cnp_ns;
	struct soft_id_track rx_ids;
};

/* What solving an IPv4 ID from the ICRC needs for one message length. */
#define SOFT_PEER_IDS 64			/* peer hosts whose IPv4 IDs are tracked */

struct soft_dev {
	struct soft_link *link;
	struct xport_dcqcn dcqcn;	/* every QP's reaction point (resolved) */
	struct soft_mr mrs[SOFT_MAX_MRS];
	struct soft_qp *qps[SOFT_MAX_QPS];
	int qp_slots;			/* highest used slot + 1 */
	struct xport_counters ctr;
	struct soft_pkt *tx;		/* SOFT_BATCH slots being filled */
	int tx_count;
	struct soft_pkt *rx;		/* SOFT_BATCH slots */
	uint64_t now_ns;
	struct shm_publisher *shm;	/* counters for `rdmakit top` (may be NULL) */
	uint64_t shm_next_ns;
	struct icrc_id_basis id_basis;
	struct soft_id_track peer_ids[SOFT_PEER_IDS];	/* per peer host */
	struct {			/* the last received packet's pseudo-header */
		struct soft_addr src, dst;
		size_t len;
		uint32_t crc;		/* soft_pkt_pseudo_crc() */
		bool valid;
	} rx_pseudo;
};

/* RC responses travel to the requester; everything else to the responder. */
static inline bool flow_is_response_op(uint8_t opcode)
{
	return opcode >= OP_RC_READ_RESPONSE_FIRST && opcode <= OP_RC_ATOMIC_ACK;
}

/* Counts an event on its QP and in the device's totals (what `top`, bw and
 * incast report for the engine). */
#define SOFT_COUNT(qp, field) ((void)((qp)->ctr.field++, (qp)->dev->ctr.field++))

/* soft_dev.c */
struct soft_dev *soft_dev_open(struct soft_link *link, char *err);
void soft_dev_close(struct soft_dev *d);
void soft_progress(struct soft_dev *d);
const struct xport_counters *soft_dev_ctr(struct soft_dev *d);
struct soft_mr *soft_mr_lookup(struct soft_dev *d, uint32_t key);
/* Checks [va, va+len) against an MR's bounds and access; NULL if violated. */
struct soft_mr *soft_mr_check(struct soft_dev *d, uint32_t rkey, uint64_t va, uint64_t len,
			      int access);
void soft_cq_push(struct soft_cq *cq, const struct xport_wc *wc);
/* A send completion of qp's entry sq_index. */
void soft_cq_push_send(struct soft_qp *qp, const struct xport_wc *wc, uint64_t sq_index);
uint64_t soft_now_ns(void);

/* soft_batch.c: how a batch of packets leaves in one send call. */
#define SOFT_GSO_MAX_SEGS 64		/* what every kernel with UDP GSO accepts */
#define SOFT_GSO_MAX_BYTES 65000	/* below the 64 KiB UDP/IP limit */
#define SOFT_RX_MSGS 64			/* messages (packets or GRO runs) per receive call */

/* One message of a send call: packets [first, first + count), one packet
 * or a GSO run (every segment gso_size bytes but the last, which may be
 * shorter; same QP, destination and ECN). */
struct soft_send_msg {
	int first, count;
};

/* Plans the send call for the packets of the QP that starts pkts[0..n):
 * fills msgs (at most n) and returns how many; *taken is the packets they
 * cover.  With gso false every message is one packet. */
int soft_plan_send(const struct soft_pkt *pkts, int n, bool gso, struct soft_send_msg *msgs,
		   int *taken);

/* soft_rx_icrc.c: whether a received packet's ICRC holds, for an IPv4 ID
 * its sender could have used (tracked per QP in qp, and per peer host in
 * d->peer_ids; qp NULL: any ID). */
bool soft_rx_icrc_ok(struct soft_dev *d, struct soft_id_track *qp, struct soft_pkt *pk);

/* soft_tx.c: building and sending packets. */
/* A free slot to build a packet in (flushes the batch when full). */
struct soft_pkt *soft_tx_slot(struct soft_dev *d);
/* Finishes the packet in slot: headers from p, payload, pad, ICRC; queues it. */
void soft_tx_commit(struct soft_qp *qp, struct soft_pkt *slot, struct wire_pkt *p,
		    const void *payload, uint32_t len, uint8_t ecn);
/* The same for an opcode whose transport headers are the BTH alone
 * (SEND First/Middle/Last, WRITE Middle/Last, READ Response Middle): most
 * packets of a long message, so it skips the general encoder. */
void soft_tx_commit_bth(struct soft_qp *qp, struct soft_pkt *slot, struct wire_bth *bth,
			const void *payload, uint32_t len, uint8_t ecn);
void soft_tx_flush(struct soft_dev *d);
/* Computes and stores a packet's ICRC for the IPv4 ID it will carry
 * (copying a deferred payload into pk->buf first). */
void soft_pkt_seal(struct soft_pkt *pk, uint16_t ip_id);
/* The ICRC pass's state after the masked pseudo-header that pk (its
 * addresses, ports and length) travels with under IPv4 ID 0. */
uint32_t soft_pkt_pseudo_crc(const struct soft_pkt *pk);
/* Writes the whole packet, sealed for ip_id, to `to` and returns its
 * length.  pseudo_crc: soft_pkt_pseudo_crc() of pk or of any packet with
 * the same addresses, ports and length (a GSO run's segments share it;
 * the ID is folded in here). */
size_t soft_pkt_stage(struct soft_pkt *pk, uint8_t *to, uint16_t ip_id, uint32_t pseudo_crc);
/* The ICRC of pk's len bytes at `bytes` (BTH .. ICRC) under IPv4 ID
 * ip_id, from pseudo_crc as above; the bytes are as they were after. */
uint32_t soft_pkt_icrc_from(const struct soft_pkt *pk, uint8_t *bytes, uint32_t pseudo_crc,
			    uint16_t ip_id);
/* ICRC of pk->buf's pk->len bytes (BTH .. ICRC; no deferred payload) as
 * they travel from pk->src to pk->dst with IPv4 ID ip_id.  Writes the
 * pseudo-header into pk's room and masks the BTH's reserved byte for the
 * pass: the bytes are as they were when it returns. */
uint32_t soft_pkt_icrc(struct soft_pkt *pk, uint16_t ip_id);
/* The BTH of a packet from qp to its peer (soft_bth: in p, its extended
 * headers cleared too). */
static inline void soft_bth_set(struct wire_bth *b, const struct soft_qp *qp, uint8_t opcode,
				uint32_t psn)
{
	/* Field by field, where it goes: a struct built aside and copied in
	 * stalls the copy's wide loads on the narrow stores (2% of a
	 * streaming sender). */
	memset(b, 0, sizeof(*b));
	b->opcode = opcode;
	b->pkey = WIRE_DEFAULT_PKEY;
	b->dqpn = qp->peer_qpn;
	b->psn = psn & WIRE_PSN_MASK;
}
void soft_bth(struct soft_qp *qp, struct wire_pkt *p, uint8_t opcode, uint32_t psn);

/* soft_req.c: the requester. */
/* The requester's state for a connection that starts now (at RTS). */
void soft_req_start(struct soft_qp *qp);
/* The most packets a QP of path MTU pmtu keeps in flight (SOFT_WINDOW_*). */
uint32_t soft_cwnd_max(uint32_t pmtu);
void soft_req_transmit(struct soft_qp *qp);
void soft_req_timers(struct soft_qp *qp);
uint64_t soft_req_next_event_ns(struct soft_qp *qp);
void soft_req_rx(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf);
void soft_req_flush(struct soft_qp *qp, enum xport_wc_status first_status);

/* SEND and WRITE opcodes, as RC spells them (UC's less 0x20). */
static inline bool soft_op_is_send(uint8_t op)
{
	return op <= OP_RC_SEND_ONLY_IMM || op == OP_RC_SEND_LAST_INV || op == OP_RC_SEND_ONLY_INV;
}

static inline bool soft_op_is_write(uint8_t op)
{
	return op >= OP_RC_WRITE_FIRST && op <= OP_RC_WRITE_ONLY_IMM;
}

static inline bool soft_op_starts(uint8_t op)
{
	return op == OP_RC_SEND_FIRST || op == OP_RC_SEND_ONLY || op == OP_RC_SEND_ONLY_IMM ||
	       op == OP_RC_SEND_ONLY_INV || op == OP_RC_WRITE_FIRST || op == OP_RC_WRITE_ONLY ||
	       op == OP_RC_WRITE_ONLY_IMM;
}

static inline bool soft_op_ends(uint8_t op)
{
	return op != OP_RC_SEND_FIRST && op != OP_RC_SEND_MIDDLE && op != OP_RC_WRITE_FIRST &&
	       op != OP_RC_WRITE_MIDDLE;
}

static inline bool soft_op_has_imm(uint8_t op)
{
	return op == OP_RC_SEND_LAST_IMM || op == OP_RC_SEND_ONLY_IMM ||
	       op == OP_RC_WRITE_LAST_IMM || op == OP_RC_WRITE_ONLY_IMM;
}

#define SOFT_MAX_MESSAGE (1u << 31)	/* IBTA: the longest message, in bytes */

/* soft_place.c: SEND and WRITE payloads into place, for RC and UC. */
enum soft_place {
	SOFT_PLACED,		/* the packet's bytes are in place */
	SOFT_NO_RECV,		/* a SEND or WRITE with immediate found no receive posted */
	SOFT_LEN_ERR,		/* more than the receive holds: it completed in error */
	SOFT_PROT_ERR,		/* the receive's region is gone: it completed in error */
	SOFT_ACCESS_ERR,	/* a WRITE outside a region, or a wrong rkey or access */
	SOFT_INVALID,		/* lengths the IBTA rules out */
};

/* Whether a request may come now: inside a SEND or WRITE only its next
 * packet, else anything but a MIDDLE or LAST; at most the path MTU, a
 * FIRST or MIDDLE exactly that. */
bool soft_op_in_order(const struct soft_qp *qp, uint8_t op, const struct wire_pkt *p);
struct soft_rwqe *soft_rq_head(struct soft_qp *qp);
/* Completes the receive at the head with wc (its wr_id and QPN filled in). */
void soft_complete_recv(struct soft_qp *qp, const struct xport_wc *wc);
enum soft_place soft_place_send(struct soft_qp *qp, uint8_t op, const struct wire_pkt *p,
				const uint8_t *buf);
enum soft_place soft_place_write(struct soft_qp *qp, uint8_t op, const struct wire_pkt *p,
				 const uint8_t *buf);

/* soft_uc.c: the UC responder. */
void soft_uc_rx(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf);

/* soft_ud.c: UD receives. */
void soft_ud_rx(struct soft_qp *qp, const struct wire_pkt *p, struct soft_pkt *pk);

/* soft_resp.c: the responder. */
void soft_resp_rx(struct soft_qp *qp, const struct wire_pkt *p, const uint8_t *buf);
void soft_resp_transmit(struct soft_qp *qp);
void soft_send_ack(struct soft_qp *qp, uint8_t syndrome, uint32_t psn);

#endif
