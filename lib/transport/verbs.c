// SPDX-License-Identifier: MIT
/*
 * Engine "verbs": libibverbs on an RDMA device (an RNIC, or Linux
 * Soft-RoCE).  Device, port and GID selection follow perftest: the first
 * device unless -d names one, port 1, and a RoCE v2 GID holding an IPv4
 * address unless -x names one.  A failed QP transition is explained in
 * one sentence naming the likely cause and the fix.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devinfo.h"
#include "verbs_int.h"

static bool verbs_available(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list)
		ibv_free_device_list(list);
	return n > 0;
}

/* The GID index perftest would pick, from sysfs (index 0 if unreadable). */
static int pick_gid(const char *dev, int port)
{
	struct devinfo_gid *gids = NULL;
	size_t n = 0;
	int idx = 0;

	if (devinfo_sysfs_gids("/sys", dev, port, &gids, &n) == 0 && n)
		idx = devinfo_pick_gid(gids, n);
	free(gids);
	return idx;
}

static struct ibv_device *find_device(struct ibv_device **list, int n, const char *name,
				      char *err)
{
	if (n == 0) {
		snprintf(err, XPORT_ERR_LEN, "no RDMA devices found; load the driver or use "
			 "--engine soft");
		return NULL;
	}
	if (!name)
		return list[0];
	for (int i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			return list[i];
	snprintf(err, XPORT_ERR_LEN, "no RDMA device '%s'; 'rdmakit devices' lists them", name);
	return NULL;
}

static bool gid_is_zero(const union ibv_gid *g)
{
	for (int i = 0; i < 16; i++)
		if (g->raw[i])
			return false;
	return true;
}

static void *verbs_open(const struct xport_dev_attr *a, char *err)
{
	struct verbs_dev *d = calloc(1, sizeof(*d));
	struct ibv_device **list;
	struct ibv_device *dev;
	int n = 0;

	if (!d) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	list = ibv_get_device_list(&n);
	dev = find_device(list, list ? n : 0, a->ib_dev, err);
	if (!dev)
		goto fail;
	snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(dev));
	d->ctx = ibv_open_device(dev);
	if (!d->ctx) {
		snprintf(err, XPORT_ERR_LEN, "cannot open RDMA device %s: %s (permissions on "
			 "/dev/infiniband?)", d->name, strerror(errno));
		goto fail;
	}
	d->port = (uint8_t)(a->ib_port > 0 ? a->ib_port : 1);
	if (ibv_query_port(d->ctx, d->port, &d->port_attr) ||
	    ibv_query_device(d->ctx, &d->dev_attr)) {
		snprintf(err, XPORT_ERR_LEN, "%s has no port %u", d->name, d->port);
		goto fail;
	}
	if (d->port_attr.state != IBV_PORT_ACTIVE) {
		snprintf(err, XPORT_ERR_LEN, "port %u of %s is not ACTIVE (%s): check the cable "
			 "and the link ('rdma link show')", d->port, d->name,
			 ibv_port_state_str(d->port_attr.state));
		goto fail;
	}
	d->gid_index = a->gid_index >= 0 ? a->gid_index : pick_gid(d->name, d->port);
	if (ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid) || gid_is_zero(&d->gid)) {
		snprintf(err, XPORT_ERR_LEN, "%s port %u has no GID at index %d: 'rdmakit devices' "
			 "lists the GIDs (-x picks one)", d->name, d->port, d->gid_index);
		goto fail;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		snprintf(err, XPORT_ERR_LEN, "cannot allocate a protection domain on %s", d->name);
		goto fail;
	}
	ibv_free_device_list(list);
	return d;
fail:
	if (d->ctx)
		ibv_close_device(d->ctx);
	if (list)
		ibv_free_device_list(list);
	free(d);
	return NULL;
}

static void verbs_close(void *dev)
{
	struct verbs_dev *d = dev;

	if (!d)
		return;
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	free(d);
}

static int access_flags(int a)
{
	int f = 0;

	/* Remote write and atomics need local write on the MR too. */
	if (a & (XPORT_ACCESS_LOCAL_WRITE | XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_ATOMIC))
		f |= IBV_ACCESS_LOCAL_WRITE;
	if (a & XPORT_ACCESS_REMOTE_WRITE)
		f |= IBV_ACCESS_REMOTE_WRITE;
	if (a & XPORT_ACCESS_REMOTE_READ)
		f |= IBV_ACCESS_REMOTE_READ;
	if (a & XPORT_ACCESS_REMOTE_ATOMIC)
		f |= IBV_ACCESS_REMOTE_ATOMIC;
	return f;
}

static int verbs_reg_mr(void *dev, struct xport_mr *mr, char *err)
{
	struct verbs_dev *d = dev;
	struct ibv_mr *m = ibv_reg_mr(d->pd, mr->addr, mr->length, access_flags(mr->access));

	if (!m) {
		snprintf(err, XPORT_ERR_LEN, "cannot register %zu bytes on %s: %s (raise "
			 "'ulimit -l')", mr->length, d->name, strerror(errno));
		return -1;
	}
	mr->lkey = m->lkey;
	mr->rkey = m->rkey;
	mr->impl = m;
	return 0;
}

static void verbs_dereg_mr(void *dev, struct xport_mr *mr)
{
	(void)dev;
	if (mr->impl)
		ibv_dereg_mr(mr->impl);
	mr->impl = NULL;
}

static void *verbs_create_cq(void *dev, int depth, char *err)
{
	struct verbs_dev *d = dev;
	struct verbs_cq *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	c->dev = d;
	c->cq = ibv_create_cq(d->ctx, depth, NULL, NULL, 0);
	if (!c->cq) {
		snprintf(err, XPORT_ERR_LEN, "cannot create a CQ of %d entries on %s: %s", depth,
			 d->name, strerror(errno));
		free(c);
		return NULL;
	}
	return c;
}

static void verbs_destroy_cq(void *cq)
{
	struct verbs_cq *c = cq;

	if (!c)
		return;
	ibv_destroy_cq(c->cq);
	free(c);
}

static void verbs_qp_free(struct verbs_qp *q)
{
	free(q->list);
	free(q->list_sge);
	free(q);
}

static void *verbs_create_qp(void *dev, void *scq, void *rcq, const struct xport_qp_attr *a,
			     char *err)
{
	struct verbs_dev *d = dev;
	struct verbs_qp *q = calloc(1, sizeof(*q));
	struct ibv_qp_init_attr init = {
		.send_cq = ((struct verbs_cq *)scq)->cq,
		.recv_cq = ((struct verbs_cq *)rcq)->cq,
		.cap = { .max_send_wr = a->max_send_wr ? a->max_send_wr : 128,
			 .max_recv_wr = a->max_recv_wr ? a->max_recv_wr : 128,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = a->max_inline_data },
		.qp_type = a->type == XPORT_QPT_UD ? IBV_QPT_UD :
			   a->type == XPORT_QPT_UC ? IBV_QPT_UC : IBV_QPT_RC,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = d->port,
		.qp_access_flags = a->type == XPORT_QPT_UC ? IBV_ACCESS_REMOTE_WRITE :
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = a->qkey ? a->qkey : XPORT_DEFAULT_QKEY,
	};
	/* UD has a Q_Key where the connected services have access flags. */
	int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			(a->type == XPORT_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	static const char *const names[] = { "an RC", "a UC", "a UD" };

	if (!q) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	q->dev = d;
	q->attr = *a;
	q->list_cap = init.cap.max_send_wr;
	q->list = calloc(q->list_cap, sizeof(*q->list));
	q->list_sge = calloc(q->list_cap, sizeof(*q->list_sge));
	if (!q->list || !q->list_sge) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		verbs_qp_free(q);
		return NULL;
	}
	q->qp = ibv_create_qp(d->pd, &init);
	if (!q->qp && a->max_inline_data) {
		snprintf(err, XPORT_ERR_LEN, "%s refuses an inline size of %u bytes (%s): lower "
			 "-I/--inline_size", d->name, a->max_inline_data, strerror(errno));
		verbs_qp_free(q);
		return NULL;
	}
	if (!q->qp) {
		snprintf(err, XPORT_ERR_LEN, "cannot create %s QP on %s: %s (%s)", names[a->type],
			 d->name, strerror(errno), a->type == XPORT_QPT_UC ?
			 "not every RDMA device has UC: irdma and bnxt_re have none; use -c RC or UD" :
			 "queue depths above the device's limits?");
		verbs_qp_free(q);
		return NULL;
	}
	if (ibv_modify_qp(q->qp, &attr, init_mask)) {
		snprintf(err, XPORT_ERR_LEN, "cannot move the QP to INIT on %s port %u: %s",
			 d->name, d->port, strerror(errno));
		ibv_destroy_qp(q->qp);
		verbs_qp_free(q);
		return NULL;
	}
	/* The first PSN is ours to choose: unpredictable, so that an off-path
	 * host cannot aim packets into the window. */
	if (xport_random(&q->psn, sizeof(q->psn), err) < 0) {
		ibv_destroy_qp(q->qp);
		verbs_qp_free(q);
		return NULL;
	}
	q->psn &= 0xFFFFFF;
	if (a->fixed_psn)
		q->psn = a->first_psn & 0xFFFFFF;
	return q;
}

static void verbs_destroy_qp(void *qp)
{
	struct verbs_qp *q = qp;

	if (!q)
		return;
	verbs_cm_release(q);
	ibv_destroy_qp(q->qp);
	if (q->ah)
		ibv_destroy_ah(q->ah);
	verbs_qp_free(q);
}

uint32_t verbs_port_mtu(const struct verbs_qp *q)
{
	uint32_t mtu = devinfo_mtu_bytes(q->dev->port_attr.active_mtu);

	if (q->attr.mtu && q->attr.mtu < mtu)
		mtu = q->attr.mtu;
	return mtu ? mtu : 1024;
}

static void verbs_qp_info(void *qp, struct xport_qp_info *info)
{
	struct verbs_qp *q = qp;
	uint8_t rd = q->attr.max_rd_atomic ? q->attr.max_rd_atomic : 16;

	memset(info, 0, sizeof(*info));
	info->qpn = q->qp->qp_num;
	info->psn = q->psn;
	memcpy(info->gid, q->dev->gid.raw, 16);
	info->lid = q->dev->port_attr.lid;
	info->udp_port = 4791;
	info->mtu = verbs_port_mtu(q);
	if (rd > q->dev->dev_attr.max_qp_rd_atom)
		rd = (uint8_t)q->dev->dev_attr.max_qp_rd_atom;
	info->max_rd_atomic = rd;
}

enum ibv_mtu verbs_mtu_enum(uint32_t bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

/*
 * UC: RTR with the path and the peer's QPN and PSN, RTS with ours; no
 * timers, retries or READ credits.  UD: RTR and RTS carry no peer at all;
 * its sends go through an address handle built from the same path.
 */
static int connect_unreliable(struct verbs_qp *q, struct ibv_qp_attr *rtr,
			      struct ibv_qp_attr *rts, char *err)
{
	struct verbs_dev *d = q->dev;
	bool ud = q->attr.type == XPORT_QPT_UD;
	int rtr_mask = ud ? IBV_QP_STATE : IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (ibv_modify_qp(q->qp, rtr, rtr_mask)) {
		snprintf(err, XPORT_ERR_LEN, "cannot move the %s QP to RTR on %s: %s (the GIDs must "
			 "be of the same type, -x picks ours)", ud ? "UD" : "UC", d->name,
			 strerror(errno));
		return -1;
	}
	if (ibv_modify_qp(q->qp, rts, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		snprintf(err, XPORT_ERR_LEN, "cannot move the %s QP to RTS on %s: %s", ud ? "UD" : "UC",
			 d->name, strerror(errno));
		return -1;
	}
	if (!ud)
		return 0;
	q->remote_qpn = rtr->dest_qp_num;
	if (q->ah)	/* connected again: the new destination replaces the old */
		ibv_destroy_ah(q->ah);
	q->ah = ibv_create_ah(d->pd, &rtr->ah_attr);
	if (!q->ah) {
		snprintf(err, XPORT_ERR_LEN, "cannot create an address handle on %s toward the "
			 "peer: %s (the GIDs must be of the same type, -x picks ours)", d->name,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static int verbs_connect(void *qp, const struct xport_qp_info *peer, char *err)
{
	struct verbs_qp *q = qp;
	struct verbs_dev *d = q->dev;
	uint32_t mtu = verbs_port_mtu(q) < peer->mtu ? verbs_port_mtu(q) : peer->mtu;
	bool roce = d->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
	uint8_t rd = peer->max_rd_atomic ? peer->max_rd_atomic : 1;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = verbs_mtu_enum(mtu), .dest_qp_num = peer->qpn,
		.rq_psn = peer->psn, .max_dest_rd_atomic = q->attr.max_rd_atomic ?
							   q->attr.max_rd_atomic : 16,
		.min_rnr_timer = q->attr.min_rnr_timer ? q->attr.min_rnr_timer : 12,
		.ah_attr = { .dlid = peer->lid, .sl = q->attr.sl, .port_num = d->port },
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS, .timeout = q->attr.no_ack_timer ? 0 : q->attr.timeout ? q->attr.timeout : 14,
		.retry_cnt = q->attr.retry_cnt, .rnr_retry = q->attr.rnr_retry, .sq_psn = q->psn,
	};
	char gid[DEVINFO_GID_STRLEN];

	if (peer->udp_port && peer->udp_port != 4791) {
		snprintf(err, XPORT_ERR_LEN, "the peer's soft engine listens on UDP port %u, but a "
			 "RoCE device only sends to 4791: give the soft engine an address of its own "
			 "(--bind) so it can own 4791", peer->udp_port);
		return -1;
	}
	if (rtr.max_dest_rd_atomic > d->dev_attr.max_qp_rd_atom)
		rtr.max_dest_rd_atomic = (uint8_t)d->dev_attr.max_qp_rd_atom;
	if (rd > d->dev_attr.max_qp_init_rd_atom)
		rd = (uint8_t)d->dev_attr.max_qp_init_rd_atom;
	rts.max_rd_atomic = rd;
	/* RoCE has no LIDs: every packet carries a GRH to the peer's GID. */
	if (roce || (d->port_attr.flags & IBV_QPF_GRH_REQUIRED) || !peer->lid) {
		rtr.ah_attr.is_global = 1;
		memcpy(rtr.ah_attr.grh.dgid.raw, peer->gid, 16);
		rtr.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
		rtr.ah_attr.grh.hop_limit = 64;
		rtr.ah_attr.grh.traffic_class = q->attr.tos;
		rtr.ah_attr.grh.flow_label = q->attr.flow_label;
	}
	if (q->attr.type != XPORT_QPT_RC)
		return connect_unreliable(q, &rtr, &rts, err);
	if (ibv_modify_qp(q->qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER)) {
		devinfo_gid_format(peer->gid, gid);
		snprintf(err, XPORT_ERR_LEN, "cannot move the QP to RTR (%s) toward GID %s from GID "
			 "index %d of %s: the GIDs must be of the same type (RoCE v2 on both sides, "
			 "-x picks ours) and reachable from our port's netdev", strerror(errno), gid,
			 d->gid_index, d->name);
		return -1;
	}
	if (ibv_modify_qp(q->qp, &rts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
		snprintf(err, XPORT_ERR_LEN, "cannot move the QP to RTS on %s: %s", d->name,
			 strerror(errno));
		return -1;
	}
	return 0;
}

static enum ibv_wr_opcode wr_opcode(enum xport_wr_opcode op)
{
	switch (op) {
	case XPORT_WR_SEND_WITH_IMM: return IBV_WR_SEND_WITH_IMM;
	case XPORT_WR_RDMA_WRITE: return IBV_WR_RDMA_WRITE;
	case XPORT_WR_RDMA_WRITE_WITH_IMM: return IBV_WR_RDMA_WRITE_WITH_IMM;
	case XPORT_WR_RDMA_READ: return IBV_WR_RDMA_READ;
	case XPORT_WR_ATOMIC_CMP_AND_SWP: return IBV_WR_ATOMIC_CMP_AND_SWP;
	case XPORT_WR_ATOMIC_FETCH_AND_ADD: return IBV_WR_ATOMIC_FETCH_AND_ADD;
	default: return IBV_WR_SEND;
	}
}

static void to_ibv_wr(const struct verbs_qp *q, const struct xport_send_wr *w,
		      struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	*sge = (struct ibv_sge){ w->sge.addr, w->sge.length, w->sge.lkey };
	*wr = (struct ibv_send_wr){
		.wr_id = w->wr_id, .sg_list = sge, .num_sge = w->sge.length ? 1 : 0,
		.opcode = wr_opcode(w->opcode), .send_flags = (w->signaled ? IBV_SEND_SIGNALED : 0) |
			      (w->inline_data ? IBV_SEND_INLINE : 0),
		.imm_data = htonl(w->imm),
	};
	if (w->opcode == XPORT_WR_ATOMIC_CMP_AND_SWP || w->opcode == XPORT_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = w->remote_addr;
		wr->wr.atomic.rkey = w->rkey;
		wr->wr.atomic.compare_add = w->compare_add;
		wr->wr.atomic.swap = w->swap;
	} else if (q->attr.type == XPORT_QPT_UD) {
		wr->wr.ud.ah = q->ah;
		wr->wr.ud.remote_qpn = q->remote_qpn;
		wr->wr.ud.remote_qkey = q->attr.qkey ? q->attr.qkey : XPORT_DEFAULT_QKEY;
	} else {
		wr->wr.rdma.remote_addr = w->remote_addr;
		wr->wr.rdma.rkey = w->rkey;
	}
}

/* The list goes to the device in one ibv_post_send (one doorbell). */
static int verbs_post_send(void *qp, const struct xport_send_wr *w, unsigned *posted, char *err)
{
	struct verbs_qp *q = qp;
	struct ibv_send_wr *bad = NULL;
	uint32_t n = 0;
	int rc;

	for (const struct xport_send_wr *x = w; x; x = x->next, n++) {
		if (n == q->list_cap) {
			snprintf(err, XPORT_ERR_LEN, "a list of more work requests than the send "
				 "queue holds (%u)", q->list_cap);
			if (posted)
				*posted = 0;
			return -1;
		}
		to_ibv_wr(q, x, &q->list[n], &q->list_sge[n]);
		q->list[n].next = x->next ? &q->list[n + 1] : NULL;
	}
	rc = n ? ibv_post_send(q->qp, q->list, &bad) : 0;
	if (posted)
		*posted = rc && bad ? (unsigned)(bad - q->list) : rc ? 0 : n;
	if (rc) {
		snprintf(err, XPORT_ERR_LEN, "cannot post a send work request: %s", strerror(rc));
		return -1;
	}
	return 0;
}

static int verbs_post_recv(void *qp, const struct xport_recv_wr *w, char *err)
{
	struct verbs_qp *q = qp;
	struct ibv_sge sge = { w->sge.addr, w->sge.length, w->sge.lkey };
	struct ibv_recv_wr wr = { .wr_id = w->wr_id, .sg_list = &sge,
				  .num_sge = w->sge.length ? 1 : 0 }, *bad;
	int rc = ibv_post_recv(q->qp, &wr, &bad);

	if (rc) {
		snprintf(err, XPORT_ERR_LEN, "cannot post a receive work request: %s", strerror(rc));
		return -1;
	}
	return 0;
}

static enum xport_wc_opcode wc_opcode(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_RDMA_WRITE: return XPORT_WC_RDMA_WRITE;
	case IBV_WC_RDMA_READ: return XPORT_WC_RDMA_READ;
	case IBV_WC_COMP_SWAP: return XPORT_WC_COMP_SWAP;
	case IBV_WC_FETCH_ADD: return XPORT_WC_FETCH_ADD;
	case IBV_WC_RECV: return XPORT_WC_RECV;
	case IBV_WC_RECV_RDMA_WITH_IMM: return XPORT_WC_RECV_RDMA_WITH_IMM;
	default: return XPORT_WC_SEND;
	}
}

static int verbs_poll_cq(void *cq, struct xport_wc *out, int n)
{
	struct verbs_cq *c = cq;
	struct ibv_wc wc[32];
	int got = ibv_poll_cq(c->cq, n < 32 ? n : 32, wc);

	for (int i = 0; i < got; i++) {
		/* xport statuses are ibv_wc_status values by design. */
		out[i] = (struct xport_wc){
			.wr_id = wc[i].wr_id, .status = (enum xport_wc_status)wc[i].status,
			.opcode = wc_opcode(wc[i].opcode), .byte_len = wc[i].byte_len,
			.imm = ntohl(wc[i].imm_data), .has_imm = wc[i].wc_flags & IBV_WC_WITH_IMM,
			.qp_num = wc[i].qp_num, .grh = wc[i].wc_flags & IBV_WC_GRH,
			.src_qp = wc[i].src_qp,
		};
	}
	return got;
}

static void verbs_counters(void *x, struct xport_counters *c)
{
	(void)x;
	/* The device keeps its own (rdmakit top reads them from sysfs). */
	memset(c, 0, sizeof(*c));
}

static bool verbs_host_port(void *x, char *name, size_t cap, int *port)
{
	struct verbs_dev *d = x;

	snprintf(name, cap, "%s", ibv_get_device_name(d->ctx->device));
	*port = d->port;
	return true;
}

static bool verbs_has_atomics(void *x)
{
	const struct verbs_dev *d = x;

	return d->dev_attr.atomic_cap != IBV_ATOMIC_NONE;
}

const struct xport_engine_ops verbs_engine_ops = {
	.name = "verbs",
	.self_driven = true,
	.available = verbs_available,
	.open = verbs_open,
	.close = verbs_close,
	.reg_mr = verbs_reg_mr,
	.dereg_mr = verbs_dereg_mr,
	.create_cq = verbs_create_cq,
	.destroy_cq = verbs_destroy_cq,
	.create_qp = verbs_create_qp,
	.destroy_qp = verbs_destroy_qp,
	.qp_info = verbs_qp_info,
	.connect = verbs_connect,
	.post_send = verbs_post_send,
	.post_recv = verbs_post_recv,
	.poll_cq = verbs_poll_cq,
	.cm_listen = verbs_cm_listen,
	.cm_accept = verbs_cm_accept,
	.cm_connect = verbs_cm_connect,
	.cm_close = verbs_cm_close,
	.dev_counters = verbs_counters,
	.qp_counters = verbs_counters,
	.host_port = verbs_host_port,
	.has_atomics = verbs_has_atomics,
};
