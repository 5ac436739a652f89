/* SPDX-License-Identifier: MIT */
/*
 * A soft-engine device over an in-process link, for the soft fuzz target
 * and the seed builder: two connected RC QPs on one device, both talking
 * to a phantom peer whose packets the fuzzer writes.
 *
 *   QP "resp" (slot 0): the responder side; receive WRs posted, its peer
 *     sends it requests.
 *   QP "req"  (slot 1): the requester side; a SEND, a WRITE, a READ and
 *     two atomics posted and transmitted, so responses, ACKs and NAKs from
 *     the peer act on outstanding work.
 *   QP "uc"   (slot 2): a UC QP, two 1 KiB receives posted (page 2).
 *   QP "ud"   (slot 3): a UD QP (Q_Key XPORT_DEFAULT_QKEY), a receive of
 *     GRH + 1 KiB and a shorter one after it, up to the end of MR full.
 *
 * Memory, at a fixed address so seeds can name VAs (guard = PROT_NONE):
 *
 *   page 0      guard
 *   pages 1-2   MR "full": every access right; ends at a guard page
 *   page 3      guard
 *   page 4      canary bytes, then MR "ro" (remote read only) up to the end
 *   page 5      guard
 *
 * An access past either MR faults on a guard page; the canary bytes and
 * the whole of MR "ro" (no remote write/atomic right) must be unchanged
 * after every input.  Every input starts from a fresh device and memory,
 * so runs are deterministic (the timers never fire: the ACK timeout is
 * seconds long).
 */
#ifndef RDMAKIT_FUZZ_SOFT_FIXTURE_H
#define RDMAKIT_FUZZ_SOFT_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "soft.h"

#define FIX_PAGE 4096u
#define FIX_BASE 0x5a0000000000ull	/* where the 6 pages are mapped */
#define FIX_FULL_VA (FIX_BASE + FIX_PAGE)
#define FIX_FULL_LEN (2 * FIX_PAGE)
#define FIX_RO_LEN 2048u
#define FIX_RO_VA (FIX_BASE + 5 * FIX_PAGE - FIX_RO_LEN)
#define FIX_CANARY 0xA5
#define FIX_FULL_KEY 0x5A1000u		/* MR full's key, pinned (random by default) */
#define FIX_RO_KEY 0xA71000u		/* MR ro's */

#define FIX_RESP_PSN 0x000010u		/* first PSN the responder expects */
#define FIX_REQ_PSN 0xFFFFF0u		/* first PSN the requester sends: wraps */
#define FIX_PEER_QPN_RESP 0x000300u
#define FIX_PEER_QPN_REQ 0x000301u
#define FIX_PEER_QPN_UC 0x000302u
#define FIX_PEER_QPN_UD 0x000303u
#define FIX_RECV_WRS 4			/* of 1024 bytes each, at the start of MR full */

/* Frame flags of the soft target's input (see fuzz_soft.c). */
enum {
	FIX_F_ECN = 3,			/* ECN bits the packet arrives with */
	FIX_F_TO_REQ = 1 << 2,		/* deliver to the requester QP (else responder) */
	FIX_F_RAW_QPN = 1 << 3,		/* keep the BTH destination QP as written */
	FIX_F_RAW_ICRC = 1 << 4,	/* keep the ICRC as written (else made valid) */
	FIX_F_PROGRESS = 1 << 5,	/* run the engine after this frame */
	FIX_F_TO_UC = 1 << 6,		/* deliver to the UC QP */
	FIX_F_TO_UD = 1 << 7,		/* deliver to the UD QP (before TO_UC and TO_REQ) */
};

struct fix {
	struct soft_dev *dev;
	void *cq;
	struct soft_qp *resp, *req, *uc, *ud;
	struct xport_mr full, ro;
	uint8_t *pages;			/* the 6 pages */
	uint32_t req_first_psn[8];	/* first PSN of each posted WR */
	int nreq;
	unsigned completions, failed;	/* work completions polled, and failed ones */
};

/* false when the memory or device could not be set up. */
bool fix_open(struct fix *f);
/* Queues one frame (BTH .. ICRC) from the peer; false when the queue is full. */
bool fix_deliver(struct fix *f, const uint8_t *buf, size_t len, unsigned flags);
/*
 * Runs one input of the soft target: frames, each  flags u8, length u16
 * (big-endian), then that many bytes (a short last frame takes what is
 * left), at most 256; the engine runs after FIX_F_PROGRESS frames and at
 * the end.
 */
void fix_run_input(struct fix *f, const uint8_t *data, size_t size);
/* Runs the engine once: receives what is queued, transmits, polls the CQ. */
void fix_progress(struct fix *f);
/* Aborts when a byte outside the writable region changed. */
void fix_check(const struct fix *f);
void fix_close(struct fix *f);

#endif
