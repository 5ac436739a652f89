// SPDX-License-Identifier: MIT
/*
 * PFC counters (DCB netlink) and pause counters (ethtool netlink) of a
 * netdev.  Neither has a sysfs file, and ethtool -S names them differently
 * in every driver; these two requests are what `dcb pfc show` and
 * `ethtool -I -a` send, so they read the same numbers on any driver that
 * implements ieee_getpfc / get_pause_stats.
 *
 * Requests are built and replies walked with libmnl through nl.h, which
 * checks every length against what encloses it and calls anything left
 * over malformed.  The kernel writes u64 statistics with
 * nla_put_u64_64bit: on machines without efficient unaligned access a
 * zero-length *_PAD attribute comes first so the value is 8-aligned;
 * elsewhere it may sit at a 4-aligned address.  Either way the value is
 * copied out (mnl_attr_get_u64 and nl_get_u64 do), never dereferenced.
 */
#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "counters_nl.h"
#include "nl.h"

/* ---- DCB ----------------------------------------------------------------- */

struct dcb_walk {
	struct ieee_pfc pfc;
	bool found;
};

static int dcb_ieee_cb(const struct nlattr *a, void *data)
{
	struct dcb_walk *w = data;

	if (nl_type(a) != DCB_ATTR_IEEE_PFC)
		return MNL_CB_OK;
	/* The kernel puts sizeof(struct ieee_pfc); a newer one may append
	 * fields, a shorter one is not ours. */
	if (mnl_attr_get_payload_len(a) < sizeof(w->pfc))
		return nl_cb_proto();
	memcpy(&w->pfc, mnl_attr_get_payload(a), sizeof(w->pfc));
	w->found = true;
	return MNL_CB_OK;
}

static int dcb_top_cb(const struct nlattr *a, void *data)
{
	if (nl_type(a) != DCB_ATTR_IEEE)
		return MNL_CB_OK;
	return nl_nest_attrs(a, dcb_ieee_cb, data) < 0 ? nl_cb_proto() : MNL_CB_OK;
}

/*
 * 1: no answer to seq in this datagram; 0: parsed; -1 with errno.  A reply
 * that is well formed but has no DCB_ATTR_IEEE_PFC (the driver has DCB ops
 * but no ieee_getpfc, or it failed) sets *no_pfc and is EPROTO.
 */
static int parse_dcb(const void *buf, size_t len, uint32_t seq, struct ctr_dcb_pfc *out,
		     bool *no_pfc)
{
	const struct nlmsghdr *nlh;
	struct dcbmsg dm;
	struct dcb_walk w = { .found = false };
	int r;

	*no_pfc = false;
	r = nl_find_answer(buf, len, seq, &nlh);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	if (nlh->nlmsg_type != RTM_GETDCB || mnl_nlmsg_get_payload_len(nlh) < sizeof(dm))
		goto proto;
	memcpy(&dm, mnl_nlmsg_get_payload(nlh), sizeof(dm));
	if (dm.cmd != DCB_CMD_IEEE_GET || nl_msg_attrs(nlh, sizeof(dm), dcb_top_cb, &w) < 0)
		goto proto;
	if (!w.found) {
		*no_pfc = true;
		goto proto;
	}
	memset(out, 0, sizeof(*out));
	out->pfc_cap = w.pfc.pfc_cap;
	out->pfc_en = w.pfc.pfc_en;
	for (int i = 0; i < CTR_NL_PRIOS && i < IEEE_8021QAZ_MAX_TCS; i++) {
		out->requests[i] = w.pfc.requests[i];
		out->indications[i] = w.pfc.indications[i];
	}
	return 0;
proto:
	errno = EPROTO;
	return -1;
}

static int dcb_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx);

int ctr_parse_dcb_reply(const void *buf, size_t len, uint32_t seq, struct ctr_dcb_pfc *out)
{
	struct ctr_dcb_pfc tmp;
	bool no_pfc;
	void *ctx[2] = { &tmp, &no_pfc };

	if (nl_parse_given(buf, len, seq, ctx, dcb_talk_cb, false) < 0)
		return -1;
	*out = tmp;
	return 0;
}

/* ---- ethtool pause ------------------------------------------------------- */

struct pause_walk {
	struct ctr_pause *out;
	bool have_an, have_rx, have_tx;
};

static int get_bool(const struct nlattr *a, bool *v, bool *have)
{
	uint8_t u;

	if (nl_get_u8(a, &u) < 0)
		return nl_cb_proto();
	*v = u != 0;
	*have = true;
	return MNL_CB_OK;
}

static int pause_stats_cb(const struct nlattr *a, void *data)
{
	struct ctr_pause *out = data;

	switch (nl_type(a)) {
	case ETHTOOL_A_PAUSE_STAT_TX_FRAMES:
		if (nl_get_u64(a, &out->tx_pause_frames) < 0)
			return nl_cb_proto();
		out->have_tx_frames = true;
		break;
	case ETHTOOL_A_PAUSE_STAT_RX_FRAMES:
		if (nl_get_u64(a, &out->rx_pause_frames) < 0)
			return nl_cb_proto();
		out->have_rx_frames = true;
		break;
	default:
		break;	/* ETHTOOL_A_PAUSE_STAT_PAD and newer stats */
	}
	return MNL_CB_OK;
}

static int pause_cb(const struct nlattr *a, void *data)
{
	struct pause_walk *w = data;

	switch (nl_type(a)) {
	case ETHTOOL_A_PAUSE_AUTONEG:
		return get_bool(a, &w->out->autoneg, &w->have_an);
	case ETHTOOL_A_PAUSE_RX:
		return get_bool(a, &w->out->rx, &w->have_rx);
	case ETHTOOL_A_PAUSE_TX:
		return get_bool(a, &w->out->tx, &w->have_tx);
	case ETHTOOL_A_PAUSE_STATS:
		return nl_nest_attrs(a, pause_stats_cb, w->out) < 0 ? nl_cb_proto() : MNL_CB_OK;
	default:
		return MNL_CB_OK;	/* the header nest, ETHTOOL_A_PAUSE_STATS_SRC, ... */
	}
}

/* The generic netlink header of an answer, checked. */
static bool genl_cmd_is(const struct nlmsghdr *nlh, uint8_t cmd)
{
	struct genlmsghdr g;

	if (nlh->nlmsg_type < NLMSG_MIN_TYPE || mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		return false;
	memcpy(&g, mnl_nlmsg_get_payload(nlh), sizeof(g));
	return g.cmd == cmd;
}

/* 1: no answer to seq in this datagram; 0: parsed; -1 with errno. */
static int parse_pause(const void *buf, size_t len, uint32_t seq, struct ctr_pause *out)
{
	const struct nlmsghdr *nlh;
	struct pause_walk w = { .out = out };
	int r;

	r = nl_find_answer(buf, len, seq, &nlh);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	memset(out, 0, sizeof(*out));
	/* pause_fill_reply() always puts the three settings. */
	if (!genl_cmd_is(nlh, ETHTOOL_MSG_PAUSE_GET_REPLY) ||
	    nl_msg_attrs(nlh, GENL_HDRLEN, pause_cb, &w) < 0 || !w.have_an || !w.have_rx ||
	    !w.have_tx) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static int pause_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx);

int ctr_parse_pause_reply(const void *buf, size_t len, uint32_t seq, struct ctr_pause *out)
{
	struct ctr_pause tmp;

	if (nl_parse_given(buf, len, seq, &tmp, pause_talk_cb, false) < 0)
		return -1;
	*out = tmp;
	return 0;
}

/* ---- generic netlink family ---------------------------------------------- */

struct family_walk {
	uint16_t id;
	bool have_id;
};

static int family_cb(const struct nlattr *a, void *data)
{
	struct family_walk *w = data;

	if (nl_type(a) == CTRL_ATTR_FAMILY_ID) {
		if (nl_get_u16(a, &w->id) < 0)
			return nl_cb_proto();
		w->have_id = true;
	} else if (nl_type(a) == CTRL_ATTR_FAMILY_NAME) {
		/* An answer about another family is not ours. */
		if (mnl_attr_get_payload_len(a) != sizeof(ETHTOOL_GENL_NAME) ||
		    memcmp(mnl_attr_get_payload(a), ETHTOOL_GENL_NAME, sizeof(ETHTOOL_GENL_NAME)))
			return nl_cb_proto();
	}
	return MNL_CB_OK;
}

/* 1: no answer to seq in this datagram; 0: parsed; -1 with errno. */
static int parse_family(const void *buf, size_t len, uint32_t seq, uint16_t *family_id)
{
	const struct nlmsghdr *nlh;
	struct family_walk w = { 0 };
	int r;

	r = nl_find_answer(buf, len, seq, &nlh);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	if (nlh->nlmsg_type != GENL_ID_CTRL || !genl_cmd_is(nlh, CTRL_CMD_NEWFAMILY) ||
	    nl_msg_attrs(nlh, GENL_HDRLEN, family_cb, &w) < 0 || !w.have_id ||
	    w.id < NLMSG_MIN_TYPE) {
		errno = EPROTO;
		return -1;
	}
	*family_id = w.id;
	return 0;
}

static int family_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx);

int ctr_parse_genl_family_reply(const void *buf, size_t len, uint32_t seq, uint16_t *family_id)
{
	uint16_t tmp;

	if (nl_parse_given(buf, len, seq, &tmp, family_talk_cb, false) < 0)
		return -1;
	*family_id = tmp;
	return 0;
}

/* ---- the kept context ---------------------------------------------------- */

static int stats_flag_expected(void);

struct ctr_nl *ctr_nl_open(void)
{
	struct ctr_nl *nl = calloc(1, sizeof(*nl));

	if (!nl)
		return NULL;
	nl_conn_init(&nl->rtnl, NETLINK_ROUTE);
	nl_conn_init(&nl->genl, NETLINK_GENERIC);
	nl_conn_init(&nl->rdma, NETLINK_RDMA);
	nl->stats_flag = stats_flag_expected();
	return nl;
}

void ctr_nl_close(struct ctr_nl *nl)
{
	if (!nl)
		return;
	nl_conn_close(&nl->rtnl);
	nl_conn_close(&nl->genl);
	nl_conn_close(&nl->rdma);
	free(nl->rdma_devs);
	free(nl);
}

int ctr_nl_fail(char *err, size_t errlen, const char *who, const char *what, int e)
{
	const char *why = strerror(e);
	const char *hint = "";

	switch (e) {
	case EPERM:
	case EACCES:
		hint = " (run as root: needs CAP_NET_ADMIN)";
		break;
	case EPROTO:
		why = "malformed netlink reply";
		break;
	case ETIMEDOUT:
		why = "no netlink reply within a second";
		break;
	}
	if (err && errlen)
		snprintf(err, errlen, "%s: %s: %s%s", who, what, why, hint);
	errno = e;
	return -1;
}

/* An interface name fit for a request: 0, or -1 with err set. */
static int check_ifname(const char *ifname, const char *what, char *err, size_t errlen)
{
	size_t nlen = strlen(ifname);

	if (nlen >= IFNAMSIZ)
		return ctr_nl_fail(err, errlen, ifname, what, ENAMETOOLONG);
	if (nlen == 0)
		return ctr_nl_fail(err, errlen, ifname, what, ENODEV);
	return 0;
}

static int dcb_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	void **p = ctx;

	return parse_dcb(buf, len, seq, p[0], p[1]);
}

int ctr_nl_dcb_pfc(struct ctr_nl *nl, const char *ifname, struct ctr_dcb_pfc *out, char *err,
		   size_t errlen)
{
	static const char what[] = "DCB";
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct nlmsghdr *nlh;
	struct dcbmsg *dm;
	struct ctr_dcb_pfc tmp;
	bool no_pfc = false;
	void *ctx[2] = { &tmp, &no_pfc };

	if (check_ifname(ifname, what, err, errlen) < 0)
		return -1;
	nlh = mnl_nlmsg_put_header(req.b);
	nlh->nlmsg_type = RTM_GETDCB;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));
	dm->dcb_family = AF_UNSPEC;
	dm->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, ifname);
	if (nl_conn_talk(&nl->rtnl, nlh, dcb_talk_cb, ctx) < 0) {
		if (no_pfc && errno == EPROTO) {
			if (err && errlen)
				snprintf(err, errlen, "%s: %s: the driver reports no IEEE PFC",
					 ifname, what);
			errno = EOPNOTSUPP;
			return -1;
		}
		return ctr_nl_fail(err, errlen, ifname, what, errno);
	}
	*out = tmp;
	return 0;
}

/* One question through a context of its own (the ctr_read_* calls). */
static int one_shot(const char *ifname, const char *what, void *out, char *err, size_t errlen,
		    int (*ask)(struct ctr_nl *, const char *, void *, char *, size_t))
{
	struct ctr_nl *nl = ctr_nl_open();
	int rc, e;

	if (!nl)
		return ctr_nl_fail(err, errlen, ifname, what, ENOMEM);
	rc = ask(nl, ifname, out, err, errlen);
	e = errno;
	ctr_nl_close(nl);
	errno = e;
	return rc;
}

static int ask_dcb(struct ctr_nl *nl, const char *ifname, void *out, char *err, size_t errlen)
{
	return ctr_nl_dcb_pfc(nl, ifname, out, err, errlen);
}

int ctr_read_dcb_pfc(const char *ifname, struct ctr_dcb_pfc *out, char *err, size_t errlen)
{
	return one_shot(ifname, "DCB", out, err, errlen, ask_dcb);
}

static int family_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return parse_family(buf, len, seq, ctx);
}

static int pause_talk_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return parse_pause(buf, len, seq, ctx);
}

/* A generic netlink request header for `family`, command `cmd`. */
static struct nlmsghdr *genl_request(void *buf, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

/* ETHTOOL_MSG_PAUSE_GET for ifname with header flags `flags`. */
static int pause_get(struct nl_conn *c, uint16_t family, const char *ifname, uint32_t flags,
		     struct ctr_pause *out)
{
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct nlmsghdr *nlh = genl_request(req.b, family, ETHTOOL_MSG_PAUSE_GET,
					    ETHTOOL_GENL_VERSION);
	/* Strictly validated: a nest must carry NLA_F_NESTED, which
	 * mnl_attr_nest_start sets. */
	struct nlattr *nest = mnl_attr_nest_start(nlh, ETHTOOL_A_PAUSE_HEADER);

	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname);
	if (flags)
		mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, flags);
	mnl_attr_nest_end(nlh, nest);
	return nl_conn_talk(c, nlh, pause_talk_cb, out);
}

/* The ethtool family's id, asked once: 0, or -1 with errno. */
static int ethtool_family(struct ctr_nl *nl)
{
	union { struct nlmsghdr h; uint8_t b[NL_REQ_BUF]; } req;
	struct nlmsghdr *nlh;
	uint16_t family = 0;

	if (nl->ethtool_family)
		return 0;
	if (nl->no_ethtool_family) {
		errno = ENOENT;
		return -1;
	}
	nlh = genl_request(req.b, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	if (nl_conn_talk(&nl->genl, nlh, family_talk_cb, &family) < 0) {
		nl->no_ethtool_family = errno == ENOENT;
		return -1;
	}
	nl->ethtool_family = family;
	return 0;
}

/*
 * Whether this kernel takes ETHTOOL_FLAG_STATS, as far as its version
 * tells: 5.10 added it; 5.7 to 5.9 have PAUSE_GET and refuse the flag with
 * EOPNOTSUPP, as a driver without pause parameters does.  -1: not known
 * (a backport may have it), learnt from the first answer.
 */
static int stats_flag_expected(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return -1;
	return major > 5 || (major == 5 && minor >= 10) ? 1 : -1;
}

int ctr_nl_pause(struct ctr_nl *nl, const char *ifname, struct ctr_pause *out, char *err,
		 size_t errlen)
{
	static const char what[] = "pause statistics";
	struct ctr_pause tmp;
	int rc;

	if (check_ifname(ifname, what, err, errlen) < 0)
		return -1;
	if (ethtool_family(nl) < 0) {
		if (errno == ENOENT) {
			if (err && errlen)
				snprintf(err, errlen,
					 "%s: %s: ethtool netlink is not available "
					 "(kernel older than 5.6 or without CONFIG_ETHTOOL_NETLINK)",
					 ifname, what);
			errno = EOPNOTSUPP;
			return -1;
		}
		return ctr_nl_fail(err, errlen, ifname, what, errno);
	}
	rc = pause_get(&nl->genl, nl->ethtool_family, ifname,
		       nl->stats_flag ? ETHTOOL_FLAG_STATS : 0, &tmp);
	if (rc == 0 && nl->stats_flag < 0)
		nl->stats_flag = 1;
	/* Refused: the flag, or the driver?  Asking without the flag tells. */
	if (rc < 0 && errno == EOPNOTSUPP && nl->stats_flag < 0) {
		rc = pause_get(&nl->genl, nl->ethtool_family, ifname, 0, &tmp);
		if (rc == 0)
			nl->stats_flag = 0;
	}
	if (rc < 0)
		return ctr_nl_fail(err, errlen, ifname, what, errno);
	*out = tmp;
	return 0;
}

static int ask_pause(struct ctr_nl *nl, const char *ifname, void *out, char *err, size_t errlen)
{
	return ctr_nl_pause(nl, ifname, out, err, errlen);
}

int ctr_read_pause(const char *ifname, struct ctr_pause *out, char *err, size_t errlen)
{
	return one_shot(ifname, "pause statistics", out, err, errlen, ask_pause);
}
