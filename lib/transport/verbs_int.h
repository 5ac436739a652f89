/* SPDX-License-Identifier: MIT */
/* The verbs engine's objects, shared by verbs.c (data path) and
 * verbs_cm.c (connections through the RDMA connection manager). */
#ifndef RDMAKIT_VERBS_INT_H
#define RDMAKIT_VERBS_INT_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "engine.h"

struct verbs_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port_attr;
	struct ibv_device_attr dev_attr;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	char name[64];
};

struct verbs_cq {
	struct verbs_dev *dev;
	struct ibv_cq *cq;
};

struct verbs_qp {
	struct verbs_dev *dev;
	struct ibv_qp *qp;
	struct xport_qp_attr attr;
	uint32_t psn;
	/* UD: where its sends go (the peer given to connect). */
	struct ibv_ah *ah;
	uint32_t remote_qpn;
	/* A posted list in verbs' form: one entry per send-queue slot. */
	struct ibv_send_wr *list;
	struct ibv_sge *list_sge;
	uint32_t list_cap;
	/* --rdma-cm: the connection this QP was connected through (kept for
	 * the QP's life: destroying it disconnects), with its event channel. */
	struct rdma_cm_id *cm_id;
	struct rdma_event_channel *cm_channel;
};

uint32_t verbs_port_mtu(const struct verbs_qp *q);
enum ibv_mtu verbs_mtu_enum(uint32_t bytes);

void *verbs_cm_listen(void *dev, const char *addr, uint16_t port, char *err);
int verbs_cm_accept(void *listener, void *qp, uint32_t token, int timeout_ms, char *err);
int verbs_cm_connect(void *qp, const char *addr, const char *src, uint16_t port,
		     uint32_t token, uint32_t index, int timeout_ms, char *err);
void verbs_cm_close(void *listener);
/* Tears down a QP's connection (DREQ to the peer) before the QP goes. */
void verbs_cm_release(struct verbs_qp *q);

#endif
