/* SPDX-License-Identifier: MIT */
/*
 * rdmakit probe: a scripted RoCEv2 peer that tests a remote stack's
 * transport behaviour against the IBTA specification.
 *
 * The remote runs `rdmakit probe --serve` (probe_serve): over the control
 * channel it sets up one RC QP and memory region at a time with the
 * attributes a test asks for, connects it to this side, and reports its
 * completions and whether its memory changed.  This side (probe_run) is
 * no RC state machine: each test builds the packets it needs with the
 * wire codec, sends them from its own UDP endpoint, records every packet
 * both ways with kernel timestamps, and an analysis (probe_analyze.c, pure
 * and unit-tested) turns that record into a verdict.  Nothing here prints.
 */
#ifndef RDMAKIT_PROBE_H
#define RDMAKIT_PROBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oob.h"
#include "transport.h"

enum probe_verdict {
	PROBE_PASS,		/* as the specification requires */
	PROBE_INFO,		/* the specification leaves it open: the figure is reported */
	PROBE_DEVIATION,	/* forbidden or required-but-missing, and the QP survived */
	PROBE_NOT_IMPL,		/* the remote does not implement the feature */
	PROBE_FAIL,		/* no verdict: a setup step failed or the remote went silent */
	PROBE_SKIPPED,		/* not run: the remote's engine cannot, or --test left it out */
	PROBE_VERDICTS
};

const char *probe_verdict_name(enum probe_verdict v);

/* One packet of a test's exchange, as this side sent or received it. */
struct probe_event {
	unsigned frame;		/* 1-based within the test */
	bool rx;		/* received from the remote (else sent to it) */
	uint64_t t_ns;		/* kernel receive time, or the time it was handed to the kernel */
	uint8_t opcode;
	uint32_t dqpn;
	uint32_t psn;
	bool ackreq;
	bool has_aeth;
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint32_t payload_len;
	uint64_t va;		/* RETH, for the opcodes that carry one */
	uint32_t dmalen;
	uint64_t orig;		/* an atomic ACK's original value */
	uint64_t swap_add;	/* rx: an atomic request's AtomicETH add or swap (its VA in va) */
	uint64_t data;		/* rx: the payload's first 8 bytes, big-endian */
	/* rx: the IPv4 header a UDP socket hides, solved from the ICRC: the ID
	 * and DF bit that make it hold (icrc_ok false: none does). */
	bool icrc_ok, df;
	uint16_t ip_id;
	uint8_t tos;		/* rx: the IP header's ToS (DSCP and ECN) */
	uint16_t sport;		/* rx: the UDP source port */
	bool icrc_corrupt;	/* tx: sent with a wrong ICRC on purpose */
};

/* What the remote reports after a test's packets: its memory and its CQ. */
#define PROBE_MAX_WC 32
struct probe_remote_state {
	uint64_t changed_bytes;		/* bytes of its region that no longer hold the fill */
	uint64_t first_changed;		/* offset of the first such byte */
	uint8_t head[8];		/* the region's first 8 bytes: where a FETCH_ADD
					 * it posted put the original value */
	unsigned n_wc;
	struct xport_wc wc[PROBE_MAX_WC];
	bool qp_error;			/* a completion with an error status was seen */
};

/* A test's record: the exchange and the remote's state after it. */
#define PROBE_MAX_EVENTS 64
struct probe_trace {
	unsigned n;
	struct probe_event ev[PROBE_MAX_EVENTS];
	bool truncated;			/* more packets came than fit: the rest were not kept */
	/* With no answer to a request, a zero-length WRITE at the same PSN
	 * tells a remote that stays silent on purpose (its QP still answers)
	 * from one that stopped answering: its frame (0: none was sent) and
	 * whether it was answered.  It is no part of the test's exchange. */
	unsigned liveness_frame;
	bool alive;
	struct probe_remote_state remote;
	bool remote_known;
	uint64_t end_ns;		/* when this side stopped listening (the state was asked for) */
};

#define PROBE_TEXT_LEN 256
#define PROBE_MAX_EVIDENCE 8

struct probe_result {
	const struct probe_test *test;
	enum probe_verdict verdict;
	bool accepted;			/* a deviation listed in --accept */
	char observed[PROBE_TEXT_LEN];	/* what happened, or why it failed or was skipped */
	unsigned n_evidence;
	unsigned evidence[PROBE_MAX_EVIDENCE];	/* frames (probe_event.frame) that show it */
	/* Frames recorded by the tests before this one: frame_base + frame
	 * numbers a packet across the run, as in the -w capture. */
	unsigned frame_base;
	struct probe_trace trace;
};

struct probe_ctx;

struct probe_test {
	const char *name;		/* "write_invalid_rkey" */
	const char *group;		/* "responder": what the remote is tested as */
	const char *reference;		/* where the IBTA says it */
	const char *expected;		/* what the specification expects, in a line */
	int (*run)(struct probe_ctx *c, struct probe_result *r);
	const void *script;		/* what a shared run function is to do */
	unsigned needs;			/* PROBE_NEEDS_*: what the remote must have, else skipped */
};

enum { PROBE_NEEDS_ATOMICS = 1u << 0 };

/* The tests, in the order they run. */
const struct probe_test *probe_tests(size_t *n);
const struct probe_test *probe_test_find(const char *name);

struct probe_opts {
	const char *host;
	uint16_t port;			/* control (TCP) port */
	const char *bind_source;	/* local address for the control connection, or NULL */
	int timeout_s;			/* control channel and a silent remote */
	const struct oob_key *auth_key;
	const volatile sig_atomic_t *stop;
	const char *write_file;		/* -w: the exchange as a pcap file, or NULL */
};

struct probe_peer_info {
	char version[OOB_VERSION_LEN];
	char engine[16];
	char device[64];		/* verbs: "rxe0/1"; soft: "ADDR:PORT" */
	int timeout_s;			/* how long it lets the control channel be silent (0: unsaid) */
	bool atomics;			/* its device executes RC atomics */
};

struct probe_report {
	struct probe_peer_info peer;
	char local[64];			/* this side's address:port for RoCEv2 */
	size_t n;
	struct probe_result *results;	/* n of them, in the order asked */
	unsigned count[PROBE_VERDICTS];
	char write_error[XPORT_ERR_LEN];	/* -w: why the file could not be written, or "" */
};

/* Runs the tests (n of them, or every one when n is 0) against HOST.
 * Returns 0 with *out filled (free with probe_report_free), or -1 when the
 * remote could not be reached or is not `probe --serve` (err says why). */
int probe_run(const struct probe_opts *o, const struct probe_test *const *tests, size_t n,
	      struct probe_report *out, char *err);
void probe_report_free(struct probe_report *r);

/* --accept: the tests whose deviations are known.  One test name a line;
 * '#' starts a comment.  Returns 0, or -1 naming the line at fault. */
struct probe_accept {
	size_t n;
	char **names;
};
int probe_accept_load(const char *path, struct probe_accept *a, char *err);
bool probe_accept_has(const struct probe_accept *a, const char *name);
void probe_accept_free(struct probe_accept *a);

struct probe_serve_opts {
	struct xport_dev_attr dev;
	uint16_t port;
	int timeout_s;
	bool persistent;
	const struct oob_key *auth_key;
	const volatile sig_atomic_t *stop;
	void (*on_client)(void *ctx, const char *peer, const char *outcome);
	void *ctx;
};

/* Serves probes until one has been served (or, persistent, until stop).
 * Returns 0, or -1 on a failure of this server's own (err says why). */
int probe_serve(const struct probe_serve_opts *o, char *err);

/* --- the analyses (probe_analyze.c): pure, one per kind of expectation --- */

/* The first received packet acknowledging or answering `psn` (an AETH
 * whose PSN is psn), from index `from`; -1 if none. */
int probe_find_answer(const struct probe_trace *t, uint32_t psn, unsigned from);

/* A request at `psn` that must be refused with NAK `code` (enum
 * wire_nak_code) and leave the remote's memory as it was. */
void probe_expect_nak(struct probe_result *r, uint32_t psn, uint8_t code, bool memory_untouched);
/* A request at `psn` that must be acknowledged (ACK), with `recvs` receive
 * completions at the remote and `changed` bytes of its memory written. */
void probe_expect_ack(struct probe_result *r, uint32_t psn, unsigned recvs, uint64_t changed);
/* A SEND at `psn` with no receive posted: an RNR NAK. */
void probe_expect_rnr(struct probe_result *r, uint32_t psn);
/* Requests ahead of the expected PSN `epsn`, sent at frames after the
 * first: exactly one NAK PSN sequence error for epsn per episode. */
void probe_expect_one_seq_nak(struct probe_result *r, uint32_t epsn);
/* A duplicate of an executed request at `psn`: acknowledged again, and
 * the remote saw one receive completion, not two. */
void probe_expect_dup_ack(struct probe_result *r, uint32_t psn, unsigned recvs_posted);
/* A WRITE at `psn`, then a duplicate (same PSN) aimed elsewhere in the
 * region: both acknowledged, and only the first's `first_bytes` written. */
void probe_expect_dup_write(struct probe_result *r, uint32_t psn, uint64_t first_bytes);
/* A READ of `len` bytes at `psn` and its duplicate: each answered with
 * the data (a duplicate READ is executed again). */
void probe_expect_dup_read(struct probe_result *r, uint32_t psn, uint32_t len);
/* An atomic at `psn` on 8 bytes that held `fill`, adding `add`, its
 * duplicate, and a READ of those bytes at psn + 1: both atomic ACKs carry
 * `fill` (the duplicate replays it) and the bytes read hold fill + add. */
void probe_expect_dup_atomic(struct probe_result *r, uint32_t psn, uint64_t fill, uint64_t add);
/* `n` requests from `psn` on (modulo 2^24), each acknowledged, with
 * `changed` bytes of the region written in all. */
void probe_expect_acks(struct probe_result *r, uint32_t psn, unsigned n, uint64_t changed);
/* `n` requests from `psn` on, marked CE: the remote, a notification
 * point, sends CNPs to this side's QP.  How many and the smallest gap
 * between two are reported; none is "not implemented" (no DCQCN). */
void probe_expect_cnp(struct probe_result *r, uint32_t psn, unsigned n);
/* `n` READs from `psn` on, back to back, to a QP that announced it takes
 * `limit` outstanding: the first must be answered; what it does with the
 * rest (answers them, NAKs them, drops them) is informational. */
void probe_expect_read_limit(struct probe_result *r, uint32_t psn, unsigned n, unsigned limit);
/* A SEND at `psn` to a QP with `recvs` receives posted: it must be ACKed;
 * the credits the ACK carries (or "invalid": no end-to-end credits) are
 * informational. */
void probe_expect_credits(struct probe_result *r, uint32_t psn, unsigned recvs);
/* A packet the remote must drop silently (frames up to `silent_until`
 * sent), then a good one at `psn` that must be acknowledged. */
void probe_expect_silent_drop(struct probe_result *r, unsigned silent_until, uint32_t psn);


/* The remote as requester.  Its transmissions of a request are the
 * received packets with that PSN and no AETH. */

/* ACKs withheld: the first retransmission of the request at psn must come
 * between 4.096 us x 2^timeout and four times that (IBTA: the timer's
 * range), give or take res_us, the remote's timer resolution. */
void probe_expect_ack_timer(struct probe_result *r, uint32_t psn, uint8_t timeout,
			    uint32_t res_us);
/* ACKs withheld from a QP with timeout 0 (no timer): the request at psn
 * is never sent again. */
void probe_expect_no_timer(struct probe_result *r, uint32_t psn);
/* ACKs withheld: exactly retry_cnt retransmissions, then the work request
 * completes with "transport retry counter exceeded". */
void probe_expect_retries(struct probe_result *r, uint32_t psn, unsigned retry_cnt);
/* After this side's NAK PSN sequence error naming nak_psn, the remote
 * resends from nak_psn (go-back-N from the PSN the NAK names). */
void probe_expect_resend_from(struct probe_result *r, uint32_t nak_psn);
/* After this side's RNR NAK for psn, the remote waits at least the timer
 * the NAK carried (give or take res_us) before it sends psn again. */
void probe_expect_rnr_wait(struct probe_result *r, uint32_t psn, uint32_t res_us);

/* rnr_retry 7: after each of `naks` RNR NAKs for psn the remote sends it
 * again, and once ACKed the SEND completes successfully. */
void probe_expect_rnr_forever(struct probe_result *r, uint32_t psn, unsigned naks);
/* The remote's READ of `len` bytes (from PSN psn) answered with the
 * response at `lost` left out: it must ask again for what is missing, from
 * `lost` on with the VA and length moved on by `mtu` a response (a READ
 * of the whole again is informational), and complete once answered.
 * Whether it asks at once or when its ACK timer (`timeout`) runs out is
 * reported, not judged. */
void probe_expect_read_resume(struct probe_result *r, uint32_t psn, uint32_t lost, uint32_t mtu,
			      uint8_t timeout);
/* The remote's READ at psn and a WRITE after it; this side ACKs the WRITE
 * and never answers the READ: an ACK past an outstanding READ is an
 * implied NAK, so the READ must be sent again at once, not when its ACK
 * timer (`timeout`) runs out, and complete once answered. */
void probe_expect_implied_nak(struct probe_result *r, uint32_t psn, uint8_t timeout,
			      uint32_t res_us);
/* The remote's WRITE of n MTU-sized packets from a QP asked to start
 * sending at PSN `asked` (its setup reply says `first`); this side ACKs
 * the last: the PSNs must run on modulo 2^24 with the opcodes of one
 * message, and the one ACK complete it, with nothing sent again. */
void probe_expect_send_wrap(struct probe_result *r, uint32_t asked, uint32_t first, unsigned n,
			    uint32_t mtu);
/* The remote's FETCH_ADD of `add` at va, sent at psn; this side leaves
 * its first transmission unanswered, as if the ATOMIC ACK were lost, and
 * answers the retry with the original value `orig`: the retry must repeat
 * the request unchanged, and the work complete with orig in its buffer
 * (in either byte order: devices differ; rxe writes host order). */
void probe_expect_atomic_resend(struct probe_result *r, uint32_t psn, uint64_t va, uint64_t add,
				uint64_t orig);

/* A stream of WRITEs from the remote, ACKed as it comes, with rounds of
 * decoy CNPs (a wrong ICRC) and then CNPs sent to its QP: the arrival
 * time of each new data packet, and when each round's decoys and CNPs
 * went.  Too long for the record, so the test keeps this. */
#define PROBE_CNP_ROUNDS 3
struct probe_cnp_round {
	uint64_t decoy_from_ns, decoy_to_ns;	/* the first and last decoy sent */
	unsigned decoys;
	uint64_t cnp_from_ns, cnp_to_ns;	/* the first and last CNP sent */
	unsigned cnps;
};
struct probe_stream {
	const uint64_t *t_ns;		/* each new (in-order) data packet's arrival */
	unsigned n;
	uint32_t pkt_bytes;		/* payload a packet: the path MTU */
	struct probe_cnp_round round[PROBE_CNP_ROUNDS];
	unsigned rounds;		/* rounds begun */
	bool rounds_done;		/* the last round's last CNP went */
	bool complete;			/* every packet of the stream arrived */
	unsigned gaps;			/* PSN gaps NAKed (packets lost on the way in) */
};
/* Its data rate before the first round, and in each round under the
 * decoys and in the second half of the CNPs: a round shows a
 * reaction when the rate under its CNPs is 3/4 or less, in every quarter
 * of that half (a stall is not a reaction), of the rate before or under
 * the first round's decoys, whichever is lower (taking packets in, or
 * slowing down on its own, is no reaction).
 * A reaction in every round passes (with the figures, and the rate 10 to
 * 30 ms after the last CNP); in none, or in some only (a stream's own
 * dips), is "not implemented" (no DCQCN reaction point).  A round whose
 * decoys or CNPs went over less than half their time, or a stream that
 * ended before the last round did, is too little to judge (fail). */
void probe_expect_cnp_reaction(struct probe_result *r, const struct probe_stream *s);

/* The remote's own packets. */

/* Its data packets (requests) carry ECT(0) or ECT(1): not ECN-capable is
 * "not implemented" (no ECN, so no DCQCN), a mix a deviation. */
void probe_expect_ect(struct probe_result *r);
/* Every packet it sent carries this DSCP, the QP's traffic class. */
void probe_expect_dscp(struct probe_result *r, uint8_t dscp);
/* Its packets to two QPs of this side (qpn_a, qpn_b) leave from one UDP
 * source port per QP: different ports pass (ECMP entropy), one port for
 * both is informational. */
void probe_expect_sports(struct probe_result *r, uint32_t qpn_a, uint32_t qpn_b);
/* Every packet it sent has DF set and a valid ICRC (solved over the IPv4
 * ID, which the ICRC covers); IDs of 0 pass, others are informational
 * (RFC 6864 allows any ID under DF). */
void probe_expect_ipv4(struct probe_result *r);
/* ACKs of two messages in a row (at psn and psn + 1) carry MSNs counting
 * completed messages: 1 and 2. */
void probe_expect_msn(struct probe_result *r, uint32_t psn);

#endif
