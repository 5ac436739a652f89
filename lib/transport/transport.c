// SPDX-License-Identifier: MIT
/*
 * Engine selection and the thin dispatch from the public API to an
 * engine's ops.  `auto` takes the first engine that can run here, in the
 * order of the table: verbs (an RDMA device exists), then soft.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine.h"

/* auto takes the first that can run here: an RDMA device, else soft. */
static const struct xport_engine_ops *const engines[] = {
	&verbs_engine_ops,
	&soft_engine_ops,
};

struct xport_dev {
	const struct xport_engine_ops *ops;
	void *impl;
};

struct xport_cq {
	struct xport_dev *dev;
	void *impl;
};

struct xport_qp {
	struct xport_dev *dev;
	void *impl;
};

static const struct xport_engine_ops *find_engine(const char *name, char *err)
{
	size_t n = sizeof(engines) / sizeof(engines[0]);

	if (!name || strcmp(name, "auto") == 0) {
		for (size_t i = 0; i < n; i++)
			if (engines[i]->available())
				return engines[i];
		snprintf(err, XPORT_ERR_LEN, "no engine can run here");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(engines[i]->name, name))
			continue;
		if (!engines[i]->available()) {
			snprintf(err, XPORT_ERR_LEN, "no RDMA devices found; load the driver or use "
				 "--engine soft");
			return NULL;
		}
		return engines[i];
	}
	snprintf(err, XPORT_ERR_LEN, "unknown engine '%s': expected auto, soft or verbs",
			 name);
	return NULL;
}

bool xport_engine_available(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (strcmp(engines[i]->name, name) == 0)
			return engines[i]->available();
	return false;
}

int xport_open(const struct xport_dev_attr *a, struct xport_dev **out, char *err)
{
	const struct xport_engine_ops *ops = find_engine(a->engine, err);
	struct xport_dev *d;

	if (!ops)
		return -1;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	d->ops = ops;
	d->impl = ops->open(a, err);
	if (!d->impl) {
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

void xport_close(struct xport_dev *d)
{
	if (!d)
		return;
	d->ops->close(d->impl);
	free(d);
}

const char *xport_engine_name(const struct xport_dev *d)
{
	return d->ops->name;
}

struct xport_mr *xport_reg_mr(struct xport_dev *d, void *addr, size_t len, int access,
			      char *err)
{
	struct xport_mr *mr = calloc(1, sizeof(*mr));

	if (!mr) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	mr->addr = addr;
	mr->length = len;
	mr->access = access;
	if (d->ops->reg_mr(d->impl, mr, err) < 0) {
		free(mr);
		return NULL;
	}
	return mr;
}

void xport_dereg_mr(struct xport_dev *d, struct xport_mr *mr)
{
	if (!mr)
		return;
	d->ops->dereg_mr(d->impl, mr);
	free(mr);
}

struct xport_cq *xport_create_cq(struct xport_dev *d, int depth, char *err)
{
	struct xport_cq *cq = calloc(1, sizeof(*cq));

	if (!cq) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	cq->dev = d;
	cq->impl = d->ops->create_cq(d->impl, depth, err);
	if (!cq->impl) {
		free(cq);
		return NULL;
	}
	return cq;
}

void xport_destroy_cq(struct xport_dev *d, struct xport_cq *cq)
{
	if (!cq)
		return;
	d->ops->destroy_cq(cq->impl);
	free(cq);
}

struct xport_qp *xport_create_qp(struct xport_dev *d, struct xport_cq *send_cq,
				 struct xport_cq *recv_cq, const struct xport_qp_attr *a,
				 char *err)
{
	struct xport_qp *qp = calloc(1, sizeof(*qp));

	if (!qp) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	qp->dev = d;
	qp->impl = d->ops->create_qp(d->impl, send_cq->impl, recv_cq->impl, a, err);
	if (!qp->impl) {
		free(qp);
		return NULL;
	}
	return qp;
}

void xport_destroy_qp(struct xport_dev *d, struct xport_qp *qp)
{
	if (!qp)
		return;
	d->ops->destroy_qp(qp->impl);
	free(qp);
}

void xport_qp_info(struct xport_qp *qp, struct xport_qp_info *info)
{
	qp->dev->ops->qp_info(qp->impl, info);
}

int xport_connect(struct xport_qp *qp, const struct xport_qp_info *peer, char *err)
{
	return qp->dev->ops->connect(qp->impl, peer, err);
}

struct xport_cm {
	struct xport_dev *dev;
	void *impl;
};

static bool has_cm(const struct xport_dev *d, char *err)
{
	if (d->ops->cm_listen)
		return true;
	snprintf(err, XPORT_ERR_LEN, "--rdma-cm needs the verbs engine (an RDMA device): the %s "
		 "engine connects its QPs over the control channel; drop -R/--rdma-cm",
		 d->ops->name);
	return false;
}

int xport_cm_listen(struct xport_dev *d, const char *addr, uint16_t port, struct xport_cm **out,
		    char *err)
{
	struct xport_cm *l;

	if (!has_cm(d, err))
		return -1;
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	l->dev = d;
	l->impl = d->ops->cm_listen(d->impl, addr, port, err);
	if (!l->impl) {
		free(l);
		return -1;
	}
	*out = l;
	return 0;
}

int xport_cm_accept(struct xport_cm *l, struct xport_qp *qp, uint32_t token, int timeout_ms,
		    char *err)
{
	return l->dev->ops->cm_accept(l->impl, qp->impl, token, timeout_ms, err);
}

int xport_cm_connect(struct xport_qp *qp, const char *addr, const char *src, uint16_t port,
		     uint32_t token, uint32_t index, int timeout_ms, char *err)
{
	if (!has_cm(qp->dev, err))
		return -1;
	return qp->dev->ops->cm_connect(qp->impl, addr, src, port, token, index, timeout_ms, err);
}

void xport_cm_close(struct xport_cm *l)
{
	if (!l)
		return;
	l->dev->ops->cm_close(l->impl);
	free(l);
}

int xport_post_send_list(struct xport_qp *qp, const struct xport_send_wr *wr, unsigned *posted,
			 char *err)
{
	unsigned n = 0;
	int rc = qp->dev->ops->post_send(qp->impl, wr, &n, err);

	if (posted)
		*posted = n;
	return rc;
}

int xport_post_send(struct xport_qp *qp, const struct xport_send_wr *wr, char *err)
{
	struct xport_send_wr one = *wr;

	one.next = NULL;
	return xport_post_send_list(qp, &one, NULL, err);
}

int xport_post_recv(struct xport_qp *qp, const struct xport_recv_wr *wr, char *err)
{
	return qp->dev->ops->post_recv(qp->impl, wr, err);
}

int xport_poll_cq(struct xport_cq *cq, struct xport_wc *wc, int n)
{
	return cq->dev->ops->poll_cq(cq->impl, wc, n);
}

bool xport_self_driven(const struct xport_dev *d)
{
	return d->ops->self_driven;
}

void xport_wait(struct xport_dev *d, int timeout_us)
{
	/* An engine without a wakeup source (verbs: the NIC completes work
	 * without us) is polled as perftest polls it: no sleep. */
	if (timeout_us > 0 && d->ops->wait)
		d->ops->wait(d->impl, timeout_us);
}

bool xport_host_port(const struct xport_dev *d, char *name, size_t cap, int *port)
{
	return d->ops->host_port && d->ops->host_port(d->impl, name, cap, port);
}

bool xport_has_atomics(const struct xport_dev *d)
{
	return !d->ops->has_atomics || d->ops->has_atomics(d->impl);
}

void xport_dev_counters(struct xport_dev *d, struct xport_counters *c)
{
	d->ops->dev_counters(d->impl, c);
}

void xport_qp_counters(struct xport_qp *qp, struct xport_counters *c)
{
	qp->dev->ops->qp_counters(qp->impl, c);
}

/* The names reports and `rdmakit top` use for struct xport_counters. */
static const struct {
	const char *name;
	size_t off;
} counter_fields[] = {
#define F(x) { #x, offsetof(struct xport_counters, x) }
	F(tx_packets), F(tx_bytes), F(rx_packets), F(rx_bytes), F(retransmits), F(timeouts),
	F(rnr_naks_rx), F(rnr_naks_tx), F(naks_rx), F(naks_tx), F(seq_naks_rx), F(seq_naks_tx),
	F(duplicates), F(out_of_sequence), F(icrc_errors), F(drops), F(rcvbuf_drops),
	F(wrong_peer_drops), F(cnps_tx), F(cnps_rx), F(cnps_handled), F(ce_rx),
	F(no_recv_drops), F(qkey_drops), F(uc_msgs_cut), F(tx_drops),
#undef F
};

size_t xport_counter_count(void)
{
	return sizeof(counter_fields) / sizeof(counter_fields[0]);
}

const char *xport_counter_name(size_t i)
{
	return counter_fields[i].name;
}

uint64_t xport_counter_value(const struct xport_counters *c, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)c + counter_fields[i].off, sizeof(v));
	return v;
}

void xport_counters_delta(struct xport_counters *out, const struct xport_counters *now,
			  const struct xport_counters *then)
{
	for (size_t i = 0; i < xport_counter_count(); i++) {
		uint64_t v = xport_counter_value(now, i) - xport_counter_value(then, i);

		memcpy((char *)out + counter_fields[i].off, &v, sizeof(v));
	}
}

const char *xport_wc_status_str(enum xport_wc_status s)
{
	switch (s) {
	case XPORT_WC_SUCCESS: return "success";
	case XPORT_WC_LOC_LEN_ERR: return "local length error";
	case XPORT_WC_LOC_QP_OP_ERR: return "local QP operation error";
	case XPORT_WC_LOC_PROT_ERR: return "local protection error";
	case XPORT_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
	case XPORT_WC_BAD_RESP_ERR: return "bad response error";
	case XPORT_WC_LOC_ACCESS_ERR: return "local access error";
	case XPORT_WC_REM_INV_REQ_ERR: return "remote invalid request error";
	case XPORT_WC_REM_ACCESS_ERR: return "remote access error";
	case XPORT_WC_REM_OP_ERR: return "remote operation error";
	case XPORT_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
	case XPORT_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
	case XPORT_WC_FATAL_ERR: return "fatal error";
	case XPORT_WC_GENERAL_ERR: return "general error";
	}
	return "unknown status";
}

const char *xport_wc_status_hint(enum xport_wc_status s)
{
	switch (s) {
	case XPORT_WC_RETRY_EXC_ERR:
		return "the peer stopped answering: it is gone or unreachable, the GID/subnet or "
		       "MTU differs between the sides, or the path drops packets without PFC";
	case XPORT_WC_RNR_RETRY_EXC_ERR:
		return "the receiver had no RECV posted for too long: post receives earlier or "
		       "raise --rnr-retry";
	case XPORT_WC_REM_ACCESS_ERR:
		return "the peer refused the rkey, address range or access rights: check the "
		       "rkey and address exchanged and the MR's remote access flags";
	case XPORT_WC_REM_INV_REQ_ERR:
		return "the peer rejected the request: a message longer than its RECV buffer, an "
		       "unaligned atomic, or more outstanding READs/atomics than it allows";
	case XPORT_WC_REM_OP_ERR:
		return "the peer could not carry out the operation (its QP is in error)";
	case XPORT_WC_LOC_LEN_ERR:
		return "a message did not fit the posted buffer: post a larger RECV";
	case XPORT_WC_LOC_PROT_ERR:
		return "a local buffer is outside its registered memory region or has the wrong lkey";
	case XPORT_WC_WR_FLUSH_ERR:
		return "the QP went to the error state after an earlier failure; look at the "
		       "first error";
	default:
		return "";
	}
}

int xport_random(void *buf, size_t len, char *err)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, XPORT_ERR_LEN, "no random numbers for QP numbers, keys and PSNs "
				 "(getrandom: %s)", n < 0 ? strerror(errno) : "no bytes");
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
