/* SPDX-License-Identifier: MIT */
/*
 * The transport core: one small verbs-like API, several engines behind a
 * const ops table (as rdma-core providers are).  Commands include only
 * this header to move data; they never know which engine runs.
 *
 *   engine "soft":  a userspace RoCEv2 RC implementation over UDP/4791
 *   engine "verbs": libibverbs/librdmacm on an RDMA device (when built)
 *
 * Nothing here prints or exits: failures return -1 with a one-line
 * explanation in the caller's error buffer (XPORT_ERR_LEN bytes).
 */
#ifndef RDMAKIT_TRANSPORT_H
#define RDMAKIT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XPORT_ERR_LEN 512

/* Access flags of a memory region (the ibv_access_flags bits). */
enum xport_access {
	XPORT_ACCESS_LOCAL_WRITE = 1 << 0,
	XPORT_ACCESS_REMOTE_WRITE = 1 << 1,
	XPORT_ACCESS_REMOTE_READ = 1 << 2,
	XPORT_ACCESS_REMOTE_ATOMIC = 1 << 3,
};

/* Work request opcodes (ibv_wr_opcode's meaning). */
enum xport_wr_opcode {
	XPORT_WR_SEND,
	XPORT_WR_SEND_WITH_IMM,
	XPORT_WR_RDMA_WRITE,
	XPORT_WR_RDMA_WRITE_WITH_IMM,
	XPORT_WR_RDMA_READ,
	XPORT_WR_ATOMIC_CMP_AND_SWP,
	XPORT_WR_ATOMIC_FETCH_AND_ADD,
};

/* Completion statuses: the values of enum ibv_wc_status. */
enum xport_wc_status {
	XPORT_WC_SUCCESS = 0,
	XPORT_WC_LOC_LEN_ERR = 1,
	XPORT_WC_LOC_QP_OP_ERR = 2,
	XPORT_WC_LOC_PROT_ERR = 4,
	XPORT_WC_WR_FLUSH_ERR = 5,
	XPORT_WC_BAD_RESP_ERR = 7,
	XPORT_WC_LOC_ACCESS_ERR = 8,
	XPORT_WC_REM_INV_REQ_ERR = 9,
	XPORT_WC_REM_ACCESS_ERR = 10,
	XPORT_WC_REM_OP_ERR = 11,
	XPORT_WC_RETRY_EXC_ERR = 12,
	XPORT_WC_RNR_RETRY_EXC_ERR = 13,
	XPORT_WC_FATAL_ERR = 19,
	XPORT_WC_GENERAL_ERR = 21,
};

/* Completion opcodes (ibv_wc_opcode's meaning). */
enum xport_wc_opcode {
	XPORT_WC_SEND,
	XPORT_WC_RDMA_WRITE,
	XPORT_WC_RDMA_READ,
	XPORT_WC_COMP_SWAP,
	XPORT_WC_FETCH_ADD,
	XPORT_WC_RECV,
	XPORT_WC_RECV_RDMA_WITH_IMM,
};

struct xport_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct xport_send_wr {
	const struct xport_send_wr *next;	/* a list posted at once (ibv_send_wr.next) */
	uint64_t wr_id;
	enum xport_wr_opcode opcode;
	struct xport_sge sge;
	bool signaled;		/* a completion on success; an unsignaled WR's
				 * send-queue slot is freed when a later
				 * signaled completion is polled (verbs) */
	bool inline_data;	/* SEND/WRITE: the payload is copied at post time
				 * (IBV_SEND_INLINE); at most max_inline_data */
	uint32_t imm;		/* *_WITH_IMM, host order */
	uint64_t remote_addr;	/* RDMA and atomics */
	uint32_t rkey;
	uint64_t compare_add;	/* CMP_AND_SWP: compare; FETCH_AND_ADD: add */
	uint64_t swap;
};

struct xport_recv_wr {
	uint64_t wr_id;
	struct xport_sge sge;
};

struct xport_wc {
	uint64_t wr_id;
	enum xport_wc_status status;
	enum xport_wc_opcode opcode;
	uint32_t byte_len;		/* UD receives: the 40-byte GRH area included */
	uint32_t imm;
	bool has_imm;
	uint32_t qp_num;
	bool grh;			/* UD receive: the buffer starts with the GRH area
					 * (IBV_WC_GRH; always so on RoCE; rxe sets it on
					 * UC receives too, where it means nothing) */
	uint32_t src_qp;		/* UD receive: the sender's QPN (from its DETH) */
};

/* UD receive buffers begin with this much room for the GRH, as verbs has it. */
#define XPORT_GRH_LEN 40

/* The transport service of a QP (perftest's -c). */
enum xport_qp_type {
	XPORT_QPT_RC,	/* reliable connected */
	XPORT_QPT_UC,	/* unreliable connected: no ACKs, a gap loses the message */
	XPORT_QPT_UD,	/* unreliable datagram: one packet per message, Q_Key checked */
};

/* perftest's Q_Key for UD (and what a UD QP uses unless told otherwise). */
#define XPORT_DEFAULT_QKEY 0x11111111u

struct xport_mr {
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	int access;
	void *impl;		/* the engine's handle (verbs: struct ibv_mr) */
};

/* What the two sides of a connection exchange over the control channel. */
struct xport_qp_info {
	uint32_t qpn;
	uint32_t psn;			/* first PSN this side will send */
	uint8_t gid[16];		/* IPv4-mapped or IPv6 address / GID */
	uint16_t udp_port;		/* soft engine: where it listens (4791) */
	uint16_t lid;
	uint32_t mtu;			/* bytes: 256..4096 */
	uint8_t max_rd_atomic;		/* outstanding READs/atomics it accepts */
};

struct xport_qp_attr {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t mtu;			/* path MTU wanted, bytes (0: engine default) */
	uint8_t max_rd_atomic;		/* outstanding READs/atomics we accept */
	uint8_t timeout;		/* local ACK timeout: 4.096 us * 2^timeout (0: 14) */
	bool no_ack_timer;		/* no local ACK timer at all (IBTA timeout 0) */
	uint8_t retry_cnt;		/* 0..7 */
	uint8_t rnr_retry;		/* 0..7, 7 = infinite */
	uint8_t min_rnr_timer;		/* RNR NAK timer code we send (IBTA table) */
	uint8_t tos;			/* DSCP<<2; ECN bits are the engine's */
	uint32_t max_inline_data;	/* largest inline payload posted (0: none) */
	enum xport_qp_type type;	/* RC unless set */
	uint32_t qkey;			/* UD: the Q_Key it accepts and its sends carry
					 * (0: XPORT_DEFAULT_QKEY) */
	uint8_t sl;			/* verbs: the service level of the path (-S) */
	uint32_t flow_label;		/* verbs: the GRH flow label (--flow_label) */
	bool fixed_psn;			/* start sending at first_psn, not a random PSN
					 * (a test of PSN wrap-around: never for traffic) */
	uint32_t first_psn;
};

/*
 * DCQCN reaction-point parameters (soft engine): how the side that sends
 * data reacts to CNPs.  A zero field takes the default, which comes from
 * the DCQCN paper (Zhu et al., SIGCOMM 2015) unless marked otherwise; the
 * mlx5 roce_rp knob of the same role is named for orientation.
 */
struct xport_dcqcn {
	bool off;			/* no reaction: CNPs are counted, never acted on */
	double g;			/* alpha gain: 1/256 */
	uint32_t k_us;			/* alpha decay period without CNPs: 55 us */
	uint32_t t_us;			/* rate-increase timer: 55 us (rpg_time_reset) */
	uint64_t b_bytes;		/* rate-increase byte counter: 10 MiB (rpg_byte_reset) */
	unsigned f;			/* fast-recovery stages: 5 (rpg_threshold) */
	double rai_mbps;		/* additive increase: 40 Mb/s (rpg_ai_rate) */
	double rhai_mbps;		/* hyper increase: 400 Mb/s, ours (rpg_hai_rate) */
	double min_mbps;		/* rate floor: 10 Mb/s, ours (rpg_min_rate) */
};

/* The parameters in force: p's non-zero fields over the defaults. */
struct xport_dcqcn xport_dcqcn_resolve(const struct xport_dcqcn *p);

struct xport_dev_attr {
	const char *engine;		/* "auto", "soft", "verbs" */
	const char *bind;		/* soft: local address to bind */
	uint16_t udp_port;		/* soft: 0 = 4791 */
	const char *ib_dev;		/* verbs: device name */
	int ib_port;			/* verbs: port (1-based) */
	int gid_index;			/* verbs: -1 = pick */
	struct xport_dcqcn dcqcn;	/* soft: congestion reaction (zeros: defaults) */
};

struct xport_dev;
struct xport_cq;
struct xport_qp;

/* Per-engine and per-QP counters (the soft engine publishes them for top). */
struct xport_counters {
	uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes;
	uint64_t retransmits, timeouts, rnr_naks_rx, rnr_naks_tx;
	uint64_t naks_rx, naks_tx, seq_naks_rx, seq_naks_tx;
	uint64_t duplicates, out_of_sequence, icrc_errors, drops;
	uint64_t rcvbuf_drops;		/* lost in the host: our receive buffer was full
					 * (the socket's share of UdpRcvbufErrors) */
	uint64_t wrong_peer_drops;	/* for a connected QP, but not from its peer's
					 * address or not under its P_Key */
	uint64_t cnps_tx, cnps_rx, ce_rx;
	uint64_t cnps_handled;		/* CNPs that cut the rate (mlx5: rp_cnp_handled) */
	/* UC and UD, which nothing retransmits: what the receiver dropped. */
	uint64_t no_recv_drops;		/* a SEND with no receive posted (RC: an RNR NAK) */
	uint64_t qkey_drops;		/* UD: a datagram under another Q_Key */
	uint64_t uc_msgs_cut;		/* UC: messages abandoned at a PSN gap */
	uint64_t tx_drops;		/* packets the host refused to send (its socket
					 * buffer full): lost before the wire */
};

/* The counters by name, in a fixed order: i < xport_counter_count(). */
size_t xport_counter_count(void);
const char *xport_counter_name(size_t i);
uint64_t xport_counter_value(const struct xport_counters *c, size_t i);

/* out = now - then, counter by counter (the movement over a run). */
void xport_counters_delta(struct xport_counters *out, const struct xport_counters *now,
			  const struct xport_counters *then);

int xport_open(const struct xport_dev_attr *a, struct xport_dev **out, char *err);
/* Whether engine `name` can run on this host ("verbs": an RDMA device exists). */
bool xport_engine_available(const char *name);
void xport_close(struct xport_dev *d);
const char *xport_engine_name(const struct xport_dev *d);
/* The host's RDMA device and port this device runs on, whose counters the
 * kernel keeps (rdmakit top's ports): true with name and *port set; false
 * for the soft engine, which keeps its own (xport_dev_counters). */
bool xport_host_port(const struct xport_dev *d, char *name, size_t cap, int *port);
/* The device executes RC atomics (compare-and-swap, fetch-and-add) as a
 * responder and requester: the soft engine does; an RNIC may not. */
bool xport_has_atomics(const struct xport_dev *d);
/* The device progresses without the caller polling (verbs); the soft
 * engine only moves when polled. */
bool xport_self_driven(const struct xport_dev *d);

struct xport_mr *xport_reg_mr(struct xport_dev *d, void *addr, size_t len, int access,
			      char *err);
void xport_dereg_mr(struct xport_dev *d, struct xport_mr *mr);

struct xport_cq *xport_create_cq(struct xport_dev *d, int depth, char *err);
void xport_destroy_cq(struct xport_dev *d, struct xport_cq *cq);

struct xport_qp *xport_create_qp(struct xport_dev *d, struct xport_cq *send_cq,
				 struct xport_cq *recv_cq, const struct xport_qp_attr *a,
				 char *err);
void xport_destroy_qp(struct xport_dev *d, struct xport_qp *qp);
/* This side's half of the connection info, to send to the peer. */
void xport_qp_info(struct xport_qp *qp, struct xport_qp_info *info);
/* Moves the QP to RTS with the peer's info.  UD: the peer becomes the
 * destination of its sends (perftest's one address handle per QP); it
 * receives from anyone who knows its QPN and Q_Key. */
int xport_connect(struct xport_qp *qp, const struct xport_qp_info *peer, char *err);

/*
 * --rdma-cm: the RDMA connection manager connects the QPs (address and
 * route resolution, CM REQ/REP/RTU) in place of xport_connect.  The server
 * listens on ADDR:PORT (the CM's own port space, apart from TCP's) and
 * accepts its QPs in order; the client connects QP `index` = 0, 1, ...
 * The token, agreed over the control channel, keeps strangers' requests
 * out.  Engines without a connection manager (soft) fail with a sentence.
 */
struct xport_cm;
int xport_cm_listen(struct xport_dev *d, const char *addr, uint16_t port, struct xport_cm **out,
		    char *err);
int xport_cm_accept(struct xport_cm *l, struct xport_qp *qp, uint32_t token, int timeout_ms,
		    char *err);
int xport_cm_connect(struct xport_qp *qp, const char *addr, const char *src, uint16_t port,
		     uint32_t token, uint32_t index, int timeout_ms, char *err);
void xport_cm_close(struct xport_cm *l);

/* Posts wr and the list that follows it through ->next, in order (one
 * doorbell on an RNIC).  On failure the WRs before the one that failed are
 * posted and the rest are not, as with ibv_post_send's bad_wr; *posted
 * (when not NULL) says how many went. */
int xport_post_send_list(struct xport_qp *qp, const struct xport_send_wr *wr, unsigned *posted,
			 char *err);
/* One WR (its ->next is ignored). */
int xport_post_send(struct xport_qp *qp, const struct xport_send_wr *wr, char *err);
int xport_post_recv(struct xport_qp *qp, const struct xport_recv_wr *wr, char *err);
/* Up to n completions; drives the engine's progress (soft). */
int xport_poll_cq(struct xport_cq *cq, struct xport_wc *wc, int n);
/*
 * For callers that would rather sleep than busy-poll when a poll found
 * nothing: blocks for at most timeout_us until the engine may have work
 * (a packet arrived, a timer or the pacer is due), returning at once when
 * it has some now.  Polling stays the only way to make progress.  Engines
 * with nothing to sleep on (verbs) return at once: they are busy-polled.
 */
void xport_wait(struct xport_dev *d, int timeout_us);

void xport_dev_counters(struct xport_dev *d, struct xport_counters *c);
void xport_qp_counters(struct xport_qp *qp, struct xport_counters *c);

const char *xport_wc_status_str(enum xport_wc_status s);
/* A sentence naming the likely cause of a failed completion and the fix. */
const char *xport_wc_status_hint(enum xport_wc_status s);

#endif
