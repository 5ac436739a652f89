// SPDX-License-Identifier: MIT
/* The soft-engine fixture of the soft fuzz target; see soft_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine.h"
#include "icrc.h"
#include "sim_link.h"
#include "soft_fixture.h"

#define FIX_QUEUE 256

/* The engine on side 0 of the tests' in-memory wire; the fuzzer plays side
 * 1, writing its frames into q[0].  What the engine sends to q[1] is
 * dropped.  Static: it lives across inputs. */
static struct sim_wire the_wire;
static struct soft_addr engine_addr, peer_addr;

/* The 6 pages, mapped once at FIX_BASE; refilled for every input. */
static uint8_t *map_pages(void)
{
	static uint8_t *pages;

	if (pages)
		return pages;
	pages = mmap((void *)(uintptr_t)FIX_BASE, 6 * FIX_PAGE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (pages == MAP_FAILED || pages != (uint8_t *)(uintptr_t)FIX_BASE) {
		fprintf(stderr, "soft fixture: cannot map 6 pages at 0x%llx\n",
			(unsigned long long)FIX_BASE);
		abort();
	}
	if (mprotect(pages + FIX_PAGE, 2 * FIX_PAGE, PROT_READ | PROT_WRITE) ||
	    mprotect(pages + 4 * FIX_PAGE, FIX_PAGE, PROT_READ | PROT_WRITE))
		abort();
	return pages;
}

static uint8_t fill_byte(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static void fill_memory(uint8_t *pages)
{
	uint8_t *full = pages + FIX_PAGE, *p4 = pages + 4 * FIX_PAGE;

	for (size_t i = 0; i < FIX_FULL_LEN; i++)
		full[i] = fill_byte(i);
	memset(p4, FIX_CANARY, FIX_PAGE - FIX_RO_LEN);
	for (size_t i = 0; i < FIX_RO_LEN; i++)
		p4[FIX_PAGE - FIX_RO_LEN + i] = fill_byte(i);
}

void fix_check(const struct fix *f)
{
	const uint8_t *p4 = f->pages + 4 * FIX_PAGE;

	for (size_t i = 0; i < FIX_PAGE - FIX_RO_LEN; i++)
		if (p4[i] != FIX_CANARY) {
			fprintf(stderr, "soft fixture: canary byte %zu before MR ro changed\n", i);
			abort();
		}
	for (size_t i = 0; i < FIX_RO_LEN; i++)
		if (p4[FIX_PAGE - FIX_RO_LEN + i] != fill_byte(i)) {
			fprintf(stderr, "soft fixture: byte %zu of MR ro (no remote write or atomic "
				"right) changed\n", i);
			abort();
		}
}

/* The engine picks random keys; the seeds were written with these, so the
 * fixture pins them (the index bits stay the engine's). */
static void pin_key(struct fix *f, struct xport_mr *mr, uint32_t key)
{
	struct soft_mr *m = soft_mr_lookup(f->dev, mr->lkey);

	key = (key & ~SOFT_INDEX_MASK) | (mr->lkey & SOFT_INDEX_MASK);
	if (m)
		m->pub.lkey = m->pub.rkey = key;
	mr->lkey = mr->rkey = key;
}

static void *qp_open(struct fix *f, enum xport_qp_type type, uint32_t peer_qpn, uint32_t peer_psn,
		     char *err)
{
	struct xport_qp_attr a = { .max_send_wr = 16, .max_recv_wr = 16, .mtu = 1024,
				   .timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
				   .min_rnr_timer = 1, .max_rd_atomic = 4, .type = type };
	struct xport_qp_info peer = { .qpn = peer_qpn, .psn = peer_psn, .udp_port = ROCEV2_UDP_PORT,
				      .mtu = 1024, .max_rd_atomic = 4 };
	struct soft_qp *qp = soft_engine_ops.create_qp(f->dev, f->cq, f->cq, &a, err);

	if (!qp)
		return NULL;
	memcpy(peer.gid, peer_addr.ip, 16);
	qp->next_psn = qp->una = FIX_REQ_PSN;
	if (soft_engine_ops.connect(qp, &peer, err) < 0)
		return NULL;
	return qp;
}

static bool post_recv(struct soft_qp *qp, uint64_t id, uint64_t va, uint32_t len,
		      const struct xport_mr *mr, char *err)
{
	struct xport_recv_wr wr = { .wr_id = id, .sge = { .addr = va, .length = len,
							  .lkey = mr->lkey } };

	return soft_engine_ops.post_recv(qp, &wr, err) == 0;
}

static bool post_recvs(struct fix *f, char *err)
{
	const uint64_t page2 = FIX_FULL_VA + FIX_PAGE;

	for (int i = 0; i < FIX_RECV_WRS; i++)
		if (!post_recv(f->resp, 100 + (uint64_t)i, FIX_FULL_VA + 1024u * (unsigned)i, 1024,
			       &f->full, err))
			return false;
	/* UC: two in page 2; UD: GRH + 1 KiB, then what is left of MR full. */
	return post_recv(f->uc, 200, page2, 1024, &f->full, err) &&
	       post_recv(f->uc, 201, page2 + 1024, 1024, &f->full, err) &&
	       post_recv(f->ud, 300, page2 + 2048, XPORT_GRH_LEN + 1024, &f->full, err) &&
	       post_recv(f->ud, 301, page2 + 2048 + XPORT_GRH_LEN + 1024,
			 FIX_PAGE - 2048 - XPORT_GRH_LEN - 1024, &f->full, err);
}

/* The requester's work: local buffers in the second page of MR full. */
static bool post_sends(struct fix *f, char *err)
{
	const uint64_t src = FIX_FULL_VA + FIX_PAGE;
	const struct xport_send_wr wrs[] = {
		{ .wr_id = 1, .opcode = XPORT_WR_SEND, .signaled = true,
		  .sge = { src, 2500, f->full.lkey } },
		{ .wr_id = 2, .opcode = XPORT_WR_RDMA_WRITE_WITH_IMM, .signaled = true, .imm = 7,
		  .sge = { src, 1500, f->full.lkey }, .remote_addr = 0x10000, .rkey = 0x1234 },
		/* READ into the last bytes of MR full: a longer response hits the guard page. */
		{ .wr_id = 3, .opcode = XPORT_WR_RDMA_READ, .signaled = true,
		  .sge = { FIX_FULL_VA + FIX_FULL_LEN - 1500, 1500, f->full.lkey },
		  .remote_addr = 0x20000, .rkey = 0x1234 },
		{ .wr_id = 4, .opcode = XPORT_WR_ATOMIC_CMP_AND_SWP, .signaled = true,
		  .sge = { src + 2560, 8, f->full.lkey }, .remote_addr = 0x30000, .rkey = 0x1234,
		  .compare_add = 5, .swap = 6 },
		{ .wr_id = 5, .opcode = XPORT_WR_ATOMIC_FETCH_AND_ADD, .signaled = true,
		  .sge = { src + 2568, 8, f->full.lkey }, .remote_addr = 0x30008, .rkey = 0x1234,
		  .compare_add = 1 },
		{ .wr_id = 6, .opcode = XPORT_WR_SEND_WITH_IMM, .signaled = false, .imm = 9,
		  .sge = { src, 0, f->full.lkey } },
	};

	f->nreq = 0;
	for (size_t i = 0; i < sizeof(wrs) / sizeof(wrs[0]); i++) {
		if (soft_engine_ops.post_send(f->req, &wrs[i], NULL, err) < 0)
			return false;
		f->nreq++;
	}
	return true;
}

bool fix_open(struct fix *f)
{
	char err[XPORT_ERR_LEN];

	memset(f, 0, sizeof(*f));
	f->pages = map_pages();
	fill_memory(f->pages);
	if (!the_wire.cap && !sim_wire_init(&the_wire, FIX_QUEUE, 1))
		return false;
	the_wire.len[0] = the_wire.len[1] = 0;
	sim_addr(&engine_addr, 1, ROCEV2_UDP_PORT);	/* side 0's, as sim_link gives it */
	sim_addr(&peer_addr, 2, ROCEV2_UDP_PORT);
	f->dev = soft_dev_open(sim_link(&the_wire, 0), err);
	if (!f->dev)
		return false;
	/* No shared-memory counters: nothing outside the process per input. */
	shm_publish_close(f->dev->shm);
	f->dev->shm = NULL;
	f->cq = soft_engine_ops.create_cq(f->dev, 64, err);
	f->full = (struct xport_mr){ .addr = (void *)(uintptr_t)FIX_FULL_VA, .length = FIX_FULL_LEN,
				     .access = XPORT_ACCESS_LOCAL_WRITE | XPORT_ACCESS_REMOTE_WRITE |
					       XPORT_ACCESS_REMOTE_READ | XPORT_ACCESS_REMOTE_ATOMIC };
	f->ro = (struct xport_mr){ .addr = (void *)(uintptr_t)FIX_RO_VA, .length = FIX_RO_LEN,
				   .access = XPORT_ACCESS_LOCAL_WRITE | XPORT_ACCESS_REMOTE_READ };
	if (!f->cq || soft_engine_ops.reg_mr(f->dev, &f->full, err) < 0 ||
	    soft_engine_ops.reg_mr(f->dev, &f->ro, err) < 0)
		goto fail;
	pin_key(f, &f->full, FIX_FULL_KEY);
	pin_key(f, &f->ro, FIX_RO_KEY);
	f->resp = qp_open(f, XPORT_QPT_RC, FIX_PEER_QPN_RESP, FIX_RESP_PSN, err);
	f->req = f->resp ? qp_open(f, XPORT_QPT_RC, FIX_PEER_QPN_REQ, FIX_RESP_PSN, err) : NULL;
	f->uc = f->req ? qp_open(f, XPORT_QPT_UC, FIX_PEER_QPN_UC, FIX_RESP_PSN, err) : NULL;
	f->ud = f->uc ? qp_open(f, XPORT_QPT_UD, FIX_PEER_QPN_UD, FIX_RESP_PSN, err) : NULL;
	if (!f->ud || !post_recvs(f, err) || !post_sends(f, err))
		goto fail;
	fix_progress(f);	/* the requester transmits its work */
	for (int i = 0; i < f->nreq; i++)
		f->req_first_psn[i] = f->req->sq[i].first_psn;
	return true;
fail:
	fprintf(stderr, "soft fixture: %s\n", err);
	fix_close(f);
	return false;
}

bool fix_deliver(struct fix *f, const uint8_t *buf, size_t len, unsigned flags)
{
	struct soft_pkt *pk;

	if (!(pk = sim_inject_slot(&the_wire, 0)))
		return false;
	if (len > SOFT_PKT_MAX)
		len = SOFT_PKT_MAX;
	memcpy(pk->buf, buf, len);
	pk->len = len;
	pk->src = peer_addr;
	pk->dst = engine_addr;
	pk->ecn = flags & FIX_F_ECN;
	if (!(flags & FIX_F_RAW_QPN) && len >= WIRE_BTH_LEN)
		wire_put24(pk->buf + 5, (flags & FIX_F_TO_UD ? f->ud : flags & FIX_F_TO_UC ? f->uc :
					 flags & FIX_F_TO_REQ ? f->req : f->resp)->qpn);
	if (!(flags & FIX_F_RAW_ICRC) && len >= WIRE_BTH_LEN + WIRE_ICRC_LEN)
		icrc_store(pk->buf + len - WIRE_ICRC_LEN, soft_pkt_icrc(pk, 0));
	return true;
}

void fix_progress(struct fix *f)
{
	struct xport_wc wc[16];

	int n;

	while ((n = soft_engine_ops.poll_cq(f->cq, wc, 16)) > 0)
		for (int i = 0; i < n; i++) {
			f->completions++;
			f->failed += wc[i].status != XPORT_WC_SUCCESS;
		}
	the_wire.len[1] = 0;	/* the engine's packets go nowhere */
	fix_check(f);
}

void fix_run_input(struct fix *f, const uint8_t *data, size_t size)
{
	size_t off = 0;

	for (int n = 0; n < FIX_QUEUE && size - off >= 3; n++) {
		unsigned flags = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		off += 3;
		if (len > size - off)
			len = size - off;
		fix_deliver(f, data + off, len, flags);
		off += len;
		if (flags & FIX_F_PROGRESS)
			fix_progress(f);
	}
	fix_progress(f);
}

void fix_close(struct fix *f)
{
	if (f->ud)
		soft_engine_ops.destroy_qp(f->ud);
	if (f->uc)
		soft_engine_ops.destroy_qp(f->uc);
	if (f->req)
		soft_engine_ops.destroy_qp(f->req);
	if (f->resp)
		soft_engine_ops.destroy_qp(f->resp);
	if (f->cq)
		soft_engine_ops.destroy_cq(f->cq);
	soft_dev_close(f->dev);
	the_wire.len[0] = the_wire.len[1] = 0;
	memset(f, 0, sizeof(*f));
}
