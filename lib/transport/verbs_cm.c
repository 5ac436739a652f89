// SPDX-License-Identifier: MIT
/*
 * --rdma-cm for the verbs engine: QPs connected by the RDMA connection
 * manager (librdmacm: address and route resolution, then CM REQ/REP/RTU
 * on the wire) instead of by QP numbers and PSNs swapped on the control
 * channel.  The QPs stay ours ("user-managed" in librdmacm's terms): the
 * CM supplies the attributes of each transition (rdma_init_qp_attr) and
 * the user's -m/-u/--retry-cnt/--rnr-retry/-o still apply on top.
 *
 * Each connect request carries a tag in its private data (a magic, the
 * session's token from the control channel, the QP's index), so a
 * listener never pairs a stranger's request with one of its QPs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs_int.h"

#define CM_TAG_MAGIC 0x52444b43u	/* "RDKC" */

struct cm_tag {
	uint32_t magic, token, index;	/* network order */
};

struct verbs_cm_listener {
	struct verbs_dev *dev;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	uint32_t next_index;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The next CM event on ch within the deadline (the caller acks it). */
static int next_event(struct rdma_event_channel *ch, int64_t deadline,
		      struct rdma_cm_event **ev, const char *waiting_for, char *err)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int64_t left = deadline - now_ms();
	int rc;

	do {
		rc = poll(&p, 1, left > 0 ? (int)left : 0);
	} while (rc < 0 && errno == EINTR && (left = deadline - now_ms()) > 0);
	if (rc <= 0) {
		snprintf(err, XPORT_ERR_LEN, "no answer from the RDMA connection manager while %s "
			 "(--timeout): the peer is gone, or its side is not using --rdma-cm",
			 waiting_for);
		return -1;
	}
	if (rdma_get_cm_event(ch, ev)) {
		snprintf(err, XPORT_ERR_LEN, "cannot read an RDMA CM event: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* One sentence for a CM event that is not the one awaited. */
static void unexpected(const struct rdma_cm_event *ev, const char *waiting_for, char *err)
{
	const char *why;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		why = "no RDMA device has a route to that address (is it reached through an RDMA "
		      "netdev? 'rdmakit devices' lists them)";
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		why = "the route could not be resolved (no neighbour entry or GID for it)";
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		why = "the peer's connection manager never answered (is its server running with "
		      "--rdma-cm, and is UDP 4791 open between the hosts?)";
		break;
	case RDMA_CM_EVENT_REJECTED:
		why = "the peer rejected the connection (no server listening on that port with "
		      "--rdma-cm, or it belongs to another session)";
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		why = "the connection failed while being established";
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		why = "the RDMA device was removed";
		break;
	default:
		why = "the connection manager reported something else";
		break;
	}
	snprintf(err, XPORT_ERR_LEN, "%s (%s, status %d): %s", waiting_for,
		 rdma_event_str(ev->event), ev->status, why);
}

/* Waits for `want`; anything else ends the wait with an explanation. */
static int await(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int64_t deadline,
		 const char *waiting_for, char *err)
{
	struct rdma_cm_event *ev;

	if (next_event(ch, deadline, &ev, waiting_for, err) < 0)
		return -1;
	if (ev->event != want) {
		unexpected(ev, waiting_for, err);
		rdma_ack_cm_event(ev);
		return -1;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* The CM id must sit on our device and port: the QP lives there. */
static int check_device(const struct verbs_dev *d, const struct rdma_cm_id *id, const char *what,
			char *err)
{
	const char *name = id->verbs ? ibv_get_device_name(id->verbs->device) : "no device";

	if (id->verbs && strcmp(name, d->name) == 0 && id->port_num == d->port)
		return 0;
	snprintf(err, XPORT_ERR_LEN, "%s goes through RDMA device %s port %u, but this side uses "
		 "%s port %u: pass -d %s (and -i %u)", what, name, id->port_num, d->name, d->port,
		 name, id->port_num);
	return -1;
}

static uint8_t cap_u8(unsigned want, int limit)
{
	unsigned v = want < (unsigned)limit ? want : (unsigned)limit;

	return (uint8_t)(v > 255 ? 255 : v);
}

/* INIT -> RTR -> RTS with the CM's attributes, then the user's settings. */
static int transition(struct verbs_qp *q, struct rdma_cm_id *id, char *err)
{
	struct verbs_dev *d = q->dev;
	struct ibv_qp_attr attr;
	int mask;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(id, &attr, &mask)) {
		snprintf(err, XPORT_ERR_LEN, "the RDMA CM gave no RTR attributes: %s", strerror(errno));
		return -1;
	}
	if (q->attr.mtu && verbs_mtu_enum(q->attr.mtu) < attr.path_mtu)
		attr.path_mtu = verbs_mtu_enum(q->attr.mtu);
	if (attr.max_dest_rd_atomic > d->dev_attr.max_qp_rd_atom)
		attr.max_dest_rd_atomic = (uint8_t)d->dev_attr.max_qp_rd_atom;
	if (ibv_modify_qp(q->qp, &attr, mask)) {
		snprintf(err, XPORT_ERR_LEN, "cannot move the QP to RTR with the RDMA CM's path on %s: "
			 "%s", d->name, strerror(errno));
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(id, &attr, &mask)) {
		snprintf(err, XPORT_ERR_LEN, "the RDMA CM gave no RTS attributes: %s", strerror(errno));
		return -1;
	}
	attr.timeout = q->attr.timeout ? q->attr.timeout : 14;
	attr.retry_cnt = q->attr.retry_cnt;
	attr.rnr_retry = q->attr.rnr_retry;
	mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
	if (ibv_modify_qp(q->qp, &attr, mask)) {
		snprintf(err, XPORT_ERR_LEN, "cannot move the QP to RTS on %s: %s", d->name,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* An event channel and a CM id on it (the caller frees both, when set). */
static int cm_open(struct rdma_event_channel **ch, struct rdma_cm_id **id, char *err)
{
	*ch = rdma_create_event_channel();
	if (*ch && rdma_create_id(*ch, id, NULL, RDMA_PS_TCP) == 0)
		return 0;
	snprintf(err, XPORT_ERR_LEN, "cannot use the RDMA connection manager: %s (is the "
		 "rdma_ucm module loaded? /dev/infiniband/rdma_cm)", strerror(errno));
	return -1;
}

static struct addrinfo *numeric_addr(const char *addr, uint16_t port)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char service[8];

	snprintf(service, sizeof(service), "%u", port);
	return getaddrinfo(addr, service, &hints, &ai) == 0 ? ai : NULL;
}

void *verbs_cm_listen(void *dev, const char *addr, uint16_t port, char *err)
{
	struct verbs_cm_listener *l = calloc(1, sizeof(*l));
	struct addrinfo *ai = numeric_addr(addr, port);

	if (!l || !ai) {
		snprintf(err, XPORT_ERR_LEN, l ? "cannot listen for RDMA CM connections on '%s': "
			 "not a numeric address" : "out of memory", addr);
		goto fail;
	}
	l->dev = dev;
	if (cm_open(&l->ch, &l->id, err) < 0)
		goto fail;
	if (rdma_bind_addr(l->id, ai->ai_addr)) {
		snprintf(err, XPORT_ERR_LEN, errno == EADDRINUSE ?
			 "RDMA CM port %u on %s is taken (another --rdma-cm server?): pick another -p" :
			 "cannot bind RDMA CM port %u to %s: %s (--rdma-cm needs the control connection "
			 "to use an address of an RDMA netdev)", port, addr, strerror(errno));
		goto fail;
	}
	if (check_device(l->dev, l->id, "the control connection's address", err) < 0)
		goto fail;
	if (rdma_listen(l->id, 16)) {
		snprintf(err, XPORT_ERR_LEN, "cannot listen for RDMA CM connections on %s port %u: %s",
			 addr, port, strerror(errno));
		goto fail;
	}
	freeaddrinfo(ai);
	return l;
fail:
	if (ai)
		freeaddrinfo(ai);
	verbs_cm_close(l);
	return NULL;
}

void verbs_cm_close(void *listener)
{
	struct verbs_cm_listener *l = listener;

	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ch)
		rdma_destroy_event_channel(l->ch);
	free(l);
}

/* Whether a connect request is this session's request for QP `index`. */
static bool tag_matches(const struct rdma_cm_event *ev, uint32_t token, uint32_t index)
{
	struct cm_tag tag;

	if (!ev->param.conn.private_data || ev->param.conn.private_data_len < sizeof(tag))
		return false;
	memcpy(&tag, ev->param.conn.private_data, sizeof(tag));
	return ntohl(tag.magic) == CM_TAG_MAGIC && ntohl(tag.token) == token &&
	       ntohl(tag.index) == index;
}

/* Adopts an accepted id: its own channel, owned by the QP. */
static int own_id(struct verbs_qp *q, struct rdma_cm_id *id, char *err)
{
	q->cm_channel = rdma_create_event_channel();
	if (!q->cm_channel || rdma_migrate_id(id, q->cm_channel)) {
		snprintf(err, XPORT_ERR_LEN, "cannot take over an RDMA CM connection: %s",
			 strerror(errno));
		return -1;
	}
	q->cm_id = id;
	return 0;
}

int verbs_cm_accept(void *listener, void *qp, uint32_t token, int timeout_ms, char *err)
{
	struct verbs_cm_listener *l = listener;
	struct verbs_qp *q = qp;
	struct verbs_dev *d = q->dev;
	int64_t deadline = now_ms() + timeout_ms;
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	uint8_t their_depth, their_resources;

	for (;;) {
		if (next_event(l->ch, deadline, &ev, "waiting for the client's CM connect request",
			       err) < 0)
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    tag_matches(ev, token, l->next_index))
			break;
		/* A stranger's request (or a stale one): refuse it, keep waiting. */
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			rdma_reject(ev->id, NULL, 0);
		rdma_ack_cm_event(ev);
	}
	id = ev->id;
	their_depth = ev->param.conn.initiator_depth;
	their_resources = ev->param.conn.responder_resources;
	rdma_ack_cm_event(ev);
	if (check_device(d, id, "the client's connection", err) < 0) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	if (own_id(q, id, err) < 0) {
		rdma_reject(id, NULL, 0);
		if (!q->cm_id)
			rdma_destroy_id(id);
		return -1;
	}
	if (transition(q, id, err) < 0) {
		rdma_reject(id, NULL, 0);
		return -1;
	}
	param.qp_num = q->qp->qp_num;
	param.responder_resources = cap_u8(their_depth, d->dev_attr.max_qp_rd_atom);
	param.initiator_depth = cap_u8(their_resources, d->dev_attr.max_qp_init_rd_atom);
	param.rnr_retry_count = q->attr.rnr_retry;
	if (rdma_accept(id, &param)) {
		snprintf(err, XPORT_ERR_LEN, "cannot accept the client's RDMA CM connection: %s",
			 strerror(errno));
		return -1;
	}
	if (await(q->cm_channel, RDMA_CM_EVENT_ESTABLISHED, deadline,
		  "waiting for the client to complete the CM connection", err) < 0)
		return -1;
	l->next_index++;
	return 0;
}

int verbs_cm_connect(void *qp, const char *addr, const char *src, uint16_t port,
		     uint32_t token, uint32_t index, int timeout_ms, char *err)
{
	struct verbs_qp *q = qp;
	struct verbs_dev *d = q->dev;
	int64_t deadline = now_ms() + timeout_ms;
	struct addrinfo *dst = numeric_addr(addr, port), *from = src ? numeric_addr(src, 0) : NULL;
	struct cm_tag tag = { htonl(CM_TAG_MAGIC), htonl(token), htonl(index) };
	struct rdma_conn_param param = {
		.private_data = &tag, .private_data_len = sizeof(tag), .qp_num = q->qp->qp_num,
		.retry_count = q->attr.retry_cnt, .rnr_retry_count = q->attr.rnr_retry,
		.responder_resources = cap_u8(q->attr.max_rd_atomic ? q->attr.max_rd_atomic : 16,
					      d->dev_attr.max_qp_rd_atom),
		.initiator_depth = cap_u8(16, d->dev_attr.max_qp_init_rd_atom),
	};
	int rc = -1;

	if (!dst) {
		snprintf(err, XPORT_ERR_LEN, "cannot connect through the RDMA CM to '%s': not a "
			 "numeric address", addr);
		goto out;
	}
	if (cm_open(&q->cm_channel, &q->cm_id, err) < 0)
		goto out;
	if (rdma_resolve_addr(q->cm_id, from ? from->ai_addr : NULL, dst->ai_addr, timeout_ms)) {
		snprintf(err, XPORT_ERR_LEN, "cannot resolve an RDMA address for %s: %s", addr,
			 strerror(errno));
		goto out;
	}
	if (await(q->cm_channel, RDMA_CM_EVENT_ADDR_RESOLVED, deadline,
		  "resolving the server's address", err) < 0 ||
	    check_device(d, q->cm_id, "the route to the server", err) < 0)
		goto out;
	if (rdma_resolve_route(q->cm_id, timeout_ms)) {
		snprintf(err, XPORT_ERR_LEN, "cannot resolve an RDMA route to %s: %s", addr,
			 strerror(errno));
		goto out;
	}
	if (await(q->cm_channel, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline,
		  "resolving the route to the server", err) < 0)
		goto out;
	if (rdma_connect(q->cm_id, &param)) {
		snprintf(err, XPORT_ERR_LEN, "cannot send the CM connect request to %s: %s", addr,
			 strerror(errno));
		goto out;
	}
	if (await(q->cm_channel, RDMA_CM_EVENT_CONNECT_RESPONSE, deadline,
		  "connecting to the server through the RDMA CM", err) < 0 ||
	    transition(q, q->cm_id, err) < 0)
		goto out;
	if (rdma_establish(q->cm_id)) {
		snprintf(err, XPORT_ERR_LEN, "cannot complete the RDMA CM connection to %s: %s", addr,
			 strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (dst)
		freeaddrinfo(dst);
	if (from)
		freeaddrinfo(from);
	return rc;
}

void verbs_cm_release(struct verbs_qp *q)
{
	if (q->cm_id) {
		rdma_disconnect(q->cm_id);
		rdma_destroy_id(q->cm_id);
		q->cm_id = NULL;
	}
	if (q->cm_channel)
		rdma_destroy_event_channel(q->cm_channel);
	q->cm_channel = NULL;
}
