// SPDX-License-Identifier: MIT
/*
 * A port's statistics from the RDMA netlink, as `rdma statistic show link
 * DEV/PORT` and `rdma statistic qp show link DEV/PORT` read them (the
 * layouts are those of drivers/infiniband/core/nldev.c):
 *
 *   RDMA_NLDEV_CMD_GET, dump           DEV_INDEX, DEV_NAME per device
 *   RDMA_NLDEV_CMD_STAT_GET            DEV_INDEX, DEV_NAME, PORT_INDEX,
 *     (DEV_INDEX, PORT_INDEX)          STAT_HWCOUNTERS { HWCOUNTER_ENTRY {
 *                                        ENTRY_NAME, ENTRY_VALUE u64 } ... }
 *                                      (disabled optional counters left out)
 *   RDMA_NLDEV_CMD_STAT_GET_STATUS     the same table with ENTRY_NAME,
 *                                      HWCOUNTER_INDEX and, for optional
 *                                      counters, HWCOUNTER_DYNAMIC u8
 *   RDMA_NLDEV_CMD_STAT_GET, dump      per device: DEV_INDEX, DEV_NAME,
 *     (STAT_RES = RES_QP)              STAT_COUNTER { STAT_COUNTER_ENTRY {
 *                                        PORT_INDEX, STAT_COUNTER_ID,
 *                                        STAT_MODE, RES_QP { RES_QP_ENTRY {
 *                                        RES_LQPN } ... }, STAT_HWCOUNTERS }
 *                                      ... }
 *
 * RDMA netlink messages have no family header: attributes follow the
 * nlmsghdr.  Values are put with nla_put_u64_64bit (a zero-length PAD,
 * type 0, may come first).  An index names a device only until it goes:
 * every answer's DEV_NAME is checked against the device asked about.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters_nl.h"
#include "nl.h"

/* Names the kernel gives counters are short ("rp_cnp_ignored", irdma's
 * "Nak Sequence Error"); a longer one is not a counter name. */
#define NAME_CAP 128
/* Counters in one port's table, devices in a list: more is not a reply. */
#define MAX_STATS 4096
#define MAX_DEVS 4096

static bool is_type(const struct nlmsghdr *nlh, unsigned op)
{
	return nlh->nlmsg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
}

/* ---- one hw counter entry ------------------------------------------------ */

struct hw_entry {
	char name[NAME_CAP];
	uint64_t value;
	bool have_name, have_value, dynamic;
};

static int hw_entry_cb(const struct nlattr *a, void *data)
{
	struct hw_entry *e = data;
	uint8_t u8;

	switch (nl_type(a)) {
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
		if (nl_get_str(a, e->name, sizeof(e->name)) < 0)
			return nl_cb_proto();
		e->have_name = true;
		break;
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE:
		if (nl_get_u64(a, &e->value) < 0)
			return nl_cb_proto();
		e->have_value = true;
		break;
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC:
		if (nl_get_u8(a, &u8) < 0)
			return nl_cb_proto();
		e->dynamic = true;
		break;
	default:
		break;	/* PAD, HWCOUNTER_INDEX, newer attributes */
	}
	return MNL_CB_OK;
}

/* What to do with each entry of a STAT_HWCOUNTERS table. */
struct hw_table {
	int (*entry)(struct hw_table *t, const struct hw_entry *e);
	bool need_value;	/* STAT_GET tables carry values; the status one not */
	size_t n;
	struct ctr_set *set;
	const char *prefix;	/* "ID/" for a QP counter's table */
	enum ctr_src src;
};

static int hw_table_cb(const struct nlattr *a, void *data)
{
	struct hw_table *t = data;
	struct hw_entry e = { .have_name = false };

	if (nl_type(a) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
		return MNL_CB_OK;
	if (++t->n > MAX_STATS || nl_nest_attrs(a, hw_entry_cb, &e) < 0 || !e.have_name ||
	    (t->need_value && !e.have_value))
		return nl_cb_proto();
	return t->entry(t, &e) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

/* Adds an entry's value to the table's set. */
static int add_value(struct hw_table *t, const struct hw_entry *e)
{
	char name[NAME_CAP + 16];

	snprintf(name, sizeof(name), "%s%s", t->prefix, e->name);
	if (!ctr_set_add(t->set, t->src, name, e->value)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Marks the set's NLDEV counter of an optional entry as optional. */
static int mark_optional(struct hw_table *t, const struct hw_entry *e)
{
	if (!e->dynamic)
		return 0;
	for (size_t i = 0; i < t->set->n; i++) {
		struct ctr_counter *c = &t->set->c[i];

		if (c->src == CTR_SRC_NLDEV && !strcmp(c->name, e->name))
			c->src = CTR_SRC_NLDEV_OPT;
	}
	return 0;
}

/* ---- the port's answers --------------------------------------------------- */

struct port_msg {
	const char *dev;
	uint32_t port;
	struct hw_table table;
	bool have_name, have_port, have_table, stale;
};

static int port_msg_cb(const struct nlattr *a, void *data)
{
	struct port_msg *m = data;
	char name[64];
	uint32_t u;

	switch (nl_type(a)) {
	case RDMA_NLDEV_ATTR_DEV_NAME:
		if (nl_get_str(a, name, sizeof(name)) < 0)
			return nl_cb_proto();
		m->have_name = true;
		m->stale = strcmp(name, m->dev) != 0;
		break;
	case RDMA_NLDEV_ATTR_PORT_INDEX:
		if (nl_get_u32(a, &u) < 0 || u != m->port)
			return nl_cb_proto();
		m->have_port = true;
		break;
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
		if (m->have_table || nl_nest_attrs(a, hw_table_cb, &m->table) < 0)
			return errno == ENOMEM ? MNL_CB_ERROR : nl_cb_proto();
		m->have_table = true;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/* 1: no answer to seq here; 0: parsed; -1 with errno. */
static int parse_port_msg(const void *buf, size_t len, uint32_t seq, unsigned op,
			  struct port_msg *m)
{
	const struct nlmsghdr *nlh;
	int r = nl_find_answer(buf, len, seq, &nlh);

	if (r <= 0)
		return r < 0 ? -1 : 1;
	if (!is_type(nlh, op) || nl_msg_attrs(nlh, 0, port_msg_cb, m) < 0) {
		if (errno != ENOMEM)
			errno = EPROTO;
		return -1;
	}
	if (m->stale) {
		errno = ESTALE;
		return -1;
	}
	/* The kernel always puts the handle, the port and the table (empty
	 * when every counter is a disabled optional one). */
	if (!m->have_name || !m->have_port || !m->have_table) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static int stat_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return parse_port_msg(buf, len, seq, RDMA_NLDEV_CMD_STAT_GET, ctx);
}

static int status_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return parse_port_msg(buf, len, seq, RDMA_NLDEV_CMD_STAT_GET_STATUS, ctx);
}

static void stat_msg_init(struct port_msg *m, const char *dev, uint32_t port, struct ctr_set *set)
{
	*m = (struct port_msg){
		.dev = dev, .port = port,
		.table = { .entry = add_value, .need_value = true, .set = set, .prefix = "",
			   .src = CTR_SRC_NLDEV },
	};
}

static void status_msg_init(struct port_msg *m, const char *dev, uint32_t port,
			    struct ctr_set *set)
{
	*m = (struct port_msg){
		.dev = dev, .port = port,
		.table = { .entry = mark_optional, .set = set },
	};
}

int ctr_parse_nldev_stat_reply(const void *buf, size_t len, uint32_t seq, const char *dev,
			       uint32_t port, struct ctr_set *set)
{
	struct port_msg m;

	stat_msg_init(&m, dev, port, set);
	return nl_parse_given(buf, len, seq, &m, stat_talk_cb, false);
}

int ctr_parse_nldev_status_reply(const void *buf, size_t len, uint32_t seq, const char *dev,
				 uint32_t port, struct ctr_set *set)
{
	struct port_msg m;

	status_msg_init(&m, dev, port, set);
	return nl_parse_given(buf, len, seq, &m, status_talk_cb, false);
}

/* ---- the device list ------------------------------------------------------ */

struct dev_list {
	struct ctr_rdma_dev **devs;
	size_t *n;
};

struct dev_msg {
	struct ctr_rdma_dev d;
	bool have_index, have_name;
};

static int dev_attr_cb(const struct nlattr *a, void *data)
{
	struct dev_msg *m = data;

	if (nl_type(a) == RDMA_NLDEV_ATTR_DEV_INDEX) {
		if (nl_get_u32(a, &m->d.index) < 0)
			return nl_cb_proto();
		m->have_index = true;
	} else if (nl_type(a) == RDMA_NLDEV_ATTR_DEV_NAME) {
		if (nl_get_str(a, m->d.name, sizeof(m->d.name)) < 0)
			return nl_cb_proto();
		m->have_name = true;
	}
	return MNL_CB_OK;
}

static int dev_each(const struct nlmsghdr *nlh, void *ctx)
{
	struct dev_list *l = ctx;
	struct dev_msg m = { .have_index = false };
	struct ctr_rdma_dev *grown;

	if (!is_type(nlh, RDMA_NLDEV_CMD_GET) || nl_msg_attrs(nlh, 0, dev_attr_cb, &m) < 0 ||
	    !m.have_index || !m.have_name || *l->n >= MAX_DEVS) {
		errno = EPROTO;
		return -1;
	}
	grown = realloc(*l->devs, (*l->n + 1) * sizeof(**l->devs));
	if (!grown) {
		errno = ENOMEM;
		return -1;
	}
	*l->devs = grown;
	grown[(*l->n)++] = m.d;
	return 0;
}

static int devs_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return nl_dump_walk(buf, len, seq, dev_each, ctx);
}

int ctr_parse_nldev_dev_dump(const void *buf, size_t len, uint32_t seq, struct ctr_rdma_dev **devs,
			     size_t *ndevs)
{
	struct dev_list l = { devs, ndevs };

	return nl_parse_given(buf, len, seq, &l, devs_talk_cb, true);
}

/* ---- QP counters ---------------------------------------------------------- */

struct qp_dump {
	const char *dev;
	uint32_t port;
	struct ctr_set *set;
	struct ctr_qp_counter **qpc;
	size_t *nqpc;
	size_t left_out;
};

/* One STAT_COUNTER_ENTRY, read in two passes: its id, port, mode and QPs
 * first (the table's names carry the id), then its table. */
struct qp_entry {
	struct qp_dump *d;
	struct ctr_qp_counter c;
	bool have_id, have_port, other_port;
	char prefix[16];
};

static int lqpn_cb(const struct nlattr *a, void *data)
{
	struct ctr_qp_counter *c = data;
	uint32_t qpn;

	if (nl_type(a) != RDMA_NLDEV_ATTR_RES_LQPN)
		return MNL_CB_OK;
	if (nl_get_u32(a, &qpn) < 0)
		return nl_cb_proto();
	if (c->nqps < CTR_QPC_QPNS)
		c->qpn[c->nqps] = qpn;
	c->nqps++;
	return MNL_CB_OK;
}

static int qp_list_cb(const struct nlattr *a, void *data)
{
	if (nl_type(a) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
		return MNL_CB_OK;
	return nl_nest_attrs(a, lqpn_cb, data) < 0 ? nl_cb_proto() : MNL_CB_OK;
}

static int qp_entry_meta_cb(const struct nlattr *a, void *data)
{
	struct qp_entry *q = data;
	uint32_t u;

	switch (nl_type(a)) {
	case RDMA_NLDEV_ATTR_STAT_COUNTER_ID:
		if (nl_get_u32(a, &q->c.id) < 0)
			return nl_cb_proto();
		q->have_id = true;
		break;
	case RDMA_NLDEV_ATTR_PORT_INDEX:
		if (nl_get_u32(a, &u) < 0)
			return nl_cb_proto();
		q->have_port = true;
		q->other_port = u != q->d->port;
		break;
	case RDMA_NLDEV_ATTR_STAT_MODE:
		if (nl_get_u32(a, &q->c.mode) < 0)
			return nl_cb_proto();
		break;
	case RDMA_NLDEV_ATTR_RES_QP:
		if (nl_nest_attrs(a, qp_list_cb, &q->c) < 0)
			return nl_cb_proto();
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int qp_entry_table_cb(const struct nlattr *a, void *data)
{
	struct qp_entry *q = data;
	struct hw_table t = { .entry = add_value, .need_value = true, .set = q->d->set,
			      .prefix = q->prefix, .src = CTR_SRC_NLDEV_QP };

	if (nl_type(a) != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS)
		return MNL_CB_OK;
	if (nl_nest_attrs(a, hw_table_cb, &t) < 0)
		return errno == ENOMEM ? MNL_CB_ERROR : nl_cb_proto();
	return MNL_CB_OK;
}

static int qp_counter_cb(const struct nlattr *a, void *data)
{
	struct qp_dump *d = data;
	struct qp_entry q = { .d = d };
	struct ctr_qp_counter *grown;

	if (nl_type(a) != RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY)
		return MNL_CB_OK;
	if (nl_nest_attrs(a, qp_entry_meta_cb, &q) < 0 || !q.have_id || !q.have_port)
		return nl_cb_proto();
	if (q.other_port)
		return MNL_CB_OK;	/* the kernel filters by port; an old one may not */
	if (*d->nqpc >= CTR_MAX_QP_COUNTERS) {
		d->left_out++;
		return MNL_CB_OK;
	}
	snprintf(q.prefix, sizeof(q.prefix), "%u/", q.c.id);
	if (nl_nest_attrs(a, qp_entry_table_cb, &q) < 0)
		return MNL_CB_ERROR;
	grown = realloc(*d->qpc, (*d->nqpc + 1) * sizeof(**d->qpc));
	if (!grown) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	*d->qpc = grown;
	grown[(*d->nqpc)++] = q.c;
	return MNL_CB_OK;
}

static int qp_msg_cb(const struct nlattr *a, void *data)
{
	struct qp_dump *d = data;
	char name[64];

	switch (nl_type(a)) {
	case RDMA_NLDEV_ATTR_DEV_NAME:
		if (nl_get_str(a, name, sizeof(name)) < 0)
			return nl_cb_proto();
		if (strcmp(name, d->dev)) {
			errno = ESTALE;
			return MNL_CB_ERROR;
		}
		break;
	case RDMA_NLDEV_ATTR_STAT_COUNTER:
		if (nl_nest_attrs(a, qp_counter_cb, d) < 0)
			return MNL_CB_ERROR;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int qp_each(const struct nlmsghdr *nlh, void *ctx)
{
	if (!is_type(nlh, RDMA_NLDEV_CMD_STAT_GET)) {
		errno = EPROTO;
		return -1;
	}
	errno = 0;
	if (nl_msg_attrs(nlh, 0, qp_msg_cb, ctx) < 0) {
		if (errno != ENOMEM && errno != ESTALE)
			errno = EPROTO;
		return -1;
	}
	return 0;
}

static int qp_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return nl_dump_walk(buf, len, seq, qp_each, ctx);
}

int ctr_parse_nldev_qp_dump(const void *buf, size_t len, uint32_t seq, const char *dev,
			    uint32_t port, struct ctr_set *set, struct ctr_qp_counter **qpc,
			    size_t *nqpc, size_t *left_out)
{
	struct qp_dump d = { .dev = dev, .port = port, .set = set, .qpc = qpc, .nqpc = nqpc };
	int r = nl_parse_given(buf, len, seq, &d, qp_talk_cb, true), e = errno;

	if (left_out)
		*left_out += d.left_out;
	errno = e;
	return r;
}

/* ---- asking the kernel ---------------------------------------------------- */

/* An RDMA netlink request: op, flags, and the device and port when given. */
static struct nlmsghdr *rdma_request(void *buf, unsigned op, uint16_t flags, const uint32_t *index,
				     uint32_t port)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	if (index)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, *index);
	if (port)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	return nlh;
}

void ctr_nl_rdma_forget(struct ctr_nl *nl)
{
	if (nl)
		nl->rdma_devs_fresh = false;
}

/* Lists the devices afresh: 0, or -1 with errno. */
static int list_devices(struct ctr_nl *nl)
{
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct ctr_rdma_dev *devs = NULL;
	size_t n = 0;
	struct dev_list l = { &devs, &n };

	if (nl_conn_talk(&nl->rdma, rdma_request(req.b, RDMA_NLDEV_CMD_GET, NLM_F_DUMP, NULL, 0),
			 devs_talk_cb, &l) < 0) {
		int e = errno;

		free(devs);
		errno = e;
		return -1;
	}
	free(nl->rdma_devs);
	nl->rdma_devs = devs;
	nl->nrdma_devs = n;
	nl->rdma_devs_fresh = true;
	return 0;
}

/* The device's index: 0, or -1 with errno (ENODEV when not listed). */
static int device_index(struct ctr_nl *nl, const char *dev, bool refresh, uint32_t *index)
{
	if ((refresh || !nl->rdma_devs_fresh) && list_devices(nl) < 0)
		return -1;
	for (size_t i = 0; i < nl->nrdma_devs; i++)
		if (!strcmp(nl->rdma_devs[i].name, dev)) {
			*index = nl->rdma_devs[i].index;
			return 0;
		}
	errno = ENODEV;
	return -1;
}

/* The port's STAT_GET into set, retried once with a fresh device list
 * when the index has gone to another device: 0, or -1 with errno. */
static int port_stats(struct ctr_nl *nl, const char *dev, uint32_t port, struct ctr_set *set,
		      uint32_t *index)
{
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct port_msg m;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (device_index(nl, dev, attempt > 0, index) < 0)
			return -1;
		stat_msg_init(&m, dev, port, set);
		if (nl_conn_talk(&nl->rdma, rdma_request(req.b, RDMA_NLDEV_CMD_STAT_GET, 0, index,
							 port), stat_talk_cb, &m) == 0)
			return 0;
		if (errno != ESTALE)
			return -1;
		ctr_set_free(set);
	}
	errno = ESTALE;
	return -1;
}

/* Which of the counters are optional; a kernel before STAT_GET_STATUS
 * (6.0) refuses the command, and then none is marked. */
static void port_optional(struct ctr_nl *nl, const char *dev, uint32_t index, uint32_t port,
			  struct ctr_set *set)
{
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct port_msg m;

	status_msg_init(&m, dev, port, set);
	(void)nl_conn_talk(&nl->rdma, rdma_request(req.b, RDMA_NLDEV_CMD_STAT_GET_STATUS, 0, &index,
						   port), status_talk_cb, &m);
}

static int port_qp_counters(struct ctr_nl *nl, uint32_t index, uint32_t port, struct qp_dump *d)
{
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct nlmsghdr *nlh = rdma_request(req.b, RDMA_NLDEV_CMD_STAT_GET, NLM_F_DUMP, &index,
					    port);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP);
	return nl_conn_talk(&nl->rdma, nlh, qp_talk_cb, d);
}

/* Moves every counter of `from` into `to` (names copied): 0 or -1. */
static int move_set(struct ctr_set *to, struct ctr_set *from)
{
	int rc = ctr_set_copy(to, from);

	ctr_set_free(from);
	if (rc)
		errno = ENOMEM;
	return rc;
}

/*
 * What one port's questions gave, kept apart until all are in: the port's
 * statistics (a failure there fails the port) and its QP counters (whose
 * failure only leaves them out, with the reason).
 */
struct port_answer {
	struct ctr_set stats, qps;
	struct ctr_qp_counter *qpc;
	size_t nqpc, left_out;
	bool qps_ok;
	int qps_errno;
};

static void qp_dump_init(struct qp_dump *d, struct ctr_port *p, struct port_answer *a)
{
	*d = (struct qp_dump){ .dev = p->device, .port = (uint32_t)p->port, .set = &a->qps,
			       .qpc = &a->qpc, .nqpc = &a->nqpc };
}

static void answer_free(struct port_answer *a)
{
	ctr_set_free(&a->stats);
	ctr_set_free(&a->qps);
	free(a->qpc);
	memset(a, 0, sizeof(*a));
}

/* Hands a port its answer: 0, or -1 when memory ran out (ENOMEM). */
static int answer_to_port(struct port_answer *a, struct ctr_port *p, const char *who)
{
	if (!a->qps_ok) {
		ctr_nl_fail(p->qpc_error, sizeof(p->qpc_error), who, "QP counters", a->qps_errno);
		ctr_set_free(&a->qps);
		free(a->qpc);
		a->qpc = NULL;
		a->nqpc = a->left_out = 0;
	}
	if (move_set(&p->set, &a->stats) < 0 || move_set(&p->set, &a->qps) < 0) {
		answer_free(a);
		return ctr_nl_fail(p->nldev_error, sizeof(p->nldev_error), who,
				   "RDMA netlink statistics", ENOMEM);
	}
	free(p->qpc);
	p->qpc = a->qpc;
	p->nqpc = a->nqpc;
	p->qpc_left_out = a->left_out;
	a->qpc = NULL;
	p->nldev_known = true;
	p->nldev_error[0] = '\0';
	return 0;
}

static void port_who(const struct ctr_port *p, char *who, size_t cap)
{
	snprintf(who, cap, "%s/%d", p->device, p->port);
}

int ctr_nl_rdma_port(struct ctr_nl *nl, struct ctr_port *p)
{
	struct port_answer a = { 0 };
	struct qp_dump d;
	char who[96];
	uint32_t index;

	port_who(p, who, sizeof(who));
	if (p->port < 1 || p->port > 255)
		return ctr_nl_fail(p->nldev_error, sizeof(p->nldev_error), who,
				   "RDMA netlink statistics", EINVAL);
	if (port_stats(nl, p->device, (uint32_t)p->port, &a.stats, &index) < 0) {
		int e = errno;

		answer_free(&a);
		return ctr_nl_fail(p->nldev_error, sizeof(p->nldev_error), who,
				   "RDMA netlink statistics", e);
	}
	port_optional(nl, p->device, index, (uint32_t)p->port, &a.stats);
	qp_dump_init(&d, p, &a);
	a.qps_ok = port_qp_counters(nl, index, (uint32_t)p->port, &d) == 0;
	a.qps_errno = errno;
	a.left_out = d.left_out;
	return answer_to_port(&a, p, who);
}

/* ---- recorded answers ------------------------------------------------------ */

/* DIR/DEV.PORT.KIND into a malloc'd buffer: its length, or -1 with errno. */
static ssize_t read_recorded(const char *dir, const struct ctr_port *p, const char *kind,
			     uint8_t **buf)
{
	enum { CAP = 4 * NL_RECV_BUF };
	char path[4096];
	ssize_t n;

	*buf = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.%d.%s", dir, p->device, p->port, kind) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*buf = malloc(CAP + 1);
	if (!*buf) {
		errno = ENOMEM;
		return -1;
	}
	n = ctr_read_small(AT_FDCWD, path, (char *)*buf, CAP + 1);
	if (n < 0 || n >= CAP) {
		if (n >= CAP)
			errno = EFBIG;
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return n;
}

/* The sequence number a recorded reply answers: its first message's. */
static uint32_t recorded_seq(const uint8_t *buf, size_t n)
{
	uint32_t seq = 0;

	if (n >= offsetof(struct nlmsghdr, nlmsg_pid))
		memcpy(&seq, buf + offsetof(struct nlmsghdr, nlmsg_seq), sizeof(seq));
	return seq;
}

int ctr_replay_rdma_port(const char *dir, struct ctr_port *p)
{
	struct port_answer a = { 0 };
	struct qp_dump d;
	struct port_msg m;
	char who[96];
	uint8_t *buf;
	ssize_t n;

	port_who(p, who, sizeof(who));
	n = read_recorded(dir, p, "nldev", &buf);
	if (n < 0)
		return -1;	/* nothing recorded: sysfs it is */
	stat_msg_init(&m, p->device, (uint32_t)p->port, &a.stats);
	if (nl_parse_given(buf, (size_t)n, recorded_seq(buf, (size_t)n), &m, stat_talk_cb, false) < 0) {
		int e = errno;

		free(buf);
		answer_free(&a);
		return ctr_nl_fail(p->nldev_error, sizeof(p->nldev_error), who,
				   "RDMA netlink statistics", e);
	}
	free(buf);
	n = read_recorded(dir, p, "nldev-status", &buf);
	if (n >= 0) {
		status_msg_init(&m, p->device, (uint32_t)p->port, &a.stats);
		(void)nl_parse_given(buf, (size_t)n, recorded_seq(buf, (size_t)n), &m, status_talk_cb,
			       false);
		free(buf);
	}
	qp_dump_init(&d, p, &a);
	n = read_recorded(dir, p, "nldev-qp", &buf);
	a.qps_errno = errno;
	if (n >= 0) {
		int r = nl_parse_given(buf, (size_t)n, recorded_seq(buf, (size_t)n), &d, qp_talk_cb,
				 true);

		a.qps_errno = r > 0 ? EPROTO : errno;	/* a dump must end */
		a.qps_ok = r == 0;
		a.left_out = d.left_out;
		free(buf);
	}
	return answer_to_port(&a, p, who);
}
