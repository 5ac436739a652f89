/* SPDX-License-Identifier: MIT */
/* What an engine implements: one const ops table, as rdma-core providers do. */
#ifndef RDMAKIT_ENGINE_H
#define RDMAKIT_ENGINE_H

#include "transport.h"

struct xport_engine_ops {
	const char *name;
	/* The device makes progress on its own (an RNIC, the kernel's rxe):
	 * a target of RDMA WRITE/READ/atomics need not poll at all. */
	bool self_driven;
	/* Whether this engine can run here (e.g. an RDMA device exists). */
	bool (*available)(void);
	void *(*open)(const struct xport_dev_attr *a, char *err);
	void (*close)(void *dev);
	int (*reg_mr)(void *dev, struct xport_mr *mr, char *err);
	void (*dereg_mr)(void *dev, struct xport_mr *mr);
	void *(*create_cq)(void *dev, int depth, char *err);
	void (*destroy_cq)(void *cq);
	void *(*create_qp)(void *dev, void *scq, void *rcq, const struct xport_qp_attr *a,
			   char *err);
	void (*destroy_qp)(void *qp);
	void (*qp_info)(void *qp, struct xport_qp_info *info);
	int (*connect)(void *qp, const struct xport_qp_info *peer, char *err);
	/* wr and the list after it; *posted: how many were taken. */
	int (*post_send)(void *qp, const struct xport_send_wr *wr, unsigned *posted, char *err);
	int (*post_recv)(void *qp, const struct xport_recv_wr *wr, char *err);
	int (*poll_cq)(void *cq, struct xport_wc *wc, int n);
	/* Optional: sleeps until there may be progress to make (see xport_wait). */
	void (*wait)(void *dev, int timeout_us);
	/* Optional: QPs connected by the RDMA connection manager (--rdma-cm)
	 * instead of by xport_connect; see transport.h. */
	void *(*cm_listen)(void *dev, const char *addr, uint16_t port, char *err);
	int (*cm_accept)(void *listener, void *qp, uint32_t token, int timeout_ms, char *err);
	int (*cm_connect)(void *qp, const char *addr, const char *src, uint16_t port,
			  uint32_t token, uint32_t index, int timeout_ms, char *err);
	void (*cm_close)(void *listener);
	void (*dev_counters)(void *dev, struct xport_counters *c);
	/* Optional: the host RDMA port the device runs on (verbs). */
	bool (*host_port)(void *dev, char *name, size_t cap, int *port);
	void (*qp_counters)(void *qp, struct xport_counters *c);
	/* Optional: false when the device has no RC atomics (verbs:
	 * atomic_cap IBV_ATOMIC_NONE); absent means it has them. */
	bool (*has_atomics)(void *dev);
};

extern const struct xport_engine_ops soft_engine_ops;
extern const struct xport_engine_ops verbs_engine_ops;

/* Random bits for what a peer must not guess (QPNs, rkeys, first PSNs),
 * from getrandom(2); -1 with an explanation in err when there are none. */
int xport_random(void *buf, size_t len, char *err);

#endif
