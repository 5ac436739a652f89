// SPDX-License-Identifier: MIT
/*
 * PFC counters (DCB netlink) and pause counters (ethtool netlink) of a
 * netdev.  Neither has a sysfs file, and ethtool -S names them differently
 * in every driver; these two requests are what `dcb pfc show` and
 * `ethtool -I -a` send, so they read the same numbers on any driver that
 * implements ieee_getpfc / get_pause_stats.
 *
 * The replies are parsed here with a small attribute walker instead of
 * libmnl: every header is copied out with memcpy (a datagram need not be
 * aligned), every length is checked against what encloses it (nlmsg_len
 * against the datagram, nla_len against the message or the nest), and
 * the NLA_F_NESTED / NLA_F_NET_BYTEORDER bits are masked off the type.
 * The kernel writes u64 statistics with nla_put_u64_64bit: on machines
 * without efficient unaligned access a zero-length *_PAD attribute comes
 * first so the value is 8-aligned; elsewhere it may sit at a 4-aligned
 * address.  Either way the value is copied out, never dereferenced.
 */
#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "counters_nl.h"

/* A reply bigger than this is refused (EPROTO) rather than half read: the
 * ethtool family description, the biggest answer asked for, is ~2 KiB. */
#define NL_RECV_BUF (32 * 1024)
#define NL_TIMEOUT_MS 1000

/* ---- the walker ---------------------------------------------------------- */

struct nl_attr {
	uint16_t type;		/* NLA_F_NESTED / NLA_F_NET_BYTEORDER masked off */
	const uint8_t *data;
	size_t len;		/* payload bytes, header excluded */
};

/*
 * The next attribute in buf[*off, len): 1 with *a set and *off moved past
 * it (and its padding); 0 at the end; -1 when the attribute is malformed
 * (shorter than its header, or longer than what is left).
 */
static int attr_next(const uint8_t *buf, size_t len, size_t *off, struct nl_attr *a)
{
	struct nlattr h;
	size_t left, step;

	if (*off >= len)
		return 0;
	left = len - *off;
	if (left < NLA_HDRLEN)
		return -1;
	memcpy(&h, buf + *off, sizeof(h));
	if (h.nla_len < NLA_HDRLEN || h.nla_len > left)
		return -1;
	a->type = h.nla_type & NLA_TYPE_MASK;
	a->data = buf + *off + NLA_HDRLEN;
	a->len = h.nla_len - NLA_HDRLEN;
	step = NLA_ALIGN((size_t)h.nla_len);
	*off = step >= left ? len : *off + step;
	return 1;
}

static int get_u8(const struct nl_attr *a, bool *v)
{
	if (a->len < sizeof(uint8_t))
		return -1;
	*v = a->data[0] != 0;
	return 0;
}

static int get_u16(const struct nl_attr *a, uint16_t *v)
{
	if (a->len < sizeof(*v))
		return -1;
	memcpy(v, a->data, sizeof(*v));
	return 0;
}

static int get_u64(const struct nl_attr *a, uint64_t *v)
{
	if (a->len < sizeof(*v))
		return -1;
	memcpy(v, a->data, sizeof(*v));
	return 0;
}

struct nl_answer {
	uint16_t type;		/* nlmsg_type */
	const uint8_t *payload;	/* after the nlmsghdr */
	size_t len;
};

/*
 * The message of one datagram that answers `seq` (the first, when several
 * do): 1 with *ans set; 0 when no message answers it (all were for other
 * requests); -1 with errno: the kernel's error (NLMSG_ERROR), or EPROTO
 * when the framing of any message of the datagram is broken (shorter than
 * a header, longer than what is left, stray bytes at the end) or the
 * answer is of a kind never sent to a plain request (an ACK, DONE,
 * OVERRUN) or is malformed itself.
 */
static int find_answer(const void *buf, size_t len, uint32_t seq, struct nl_answer *ans)
{
	const uint8_t *p = buf;
	struct nl_answer first = { 0 };
	struct nlmsgerr e = { 0 };
	bool found = false, is_error = false;
	size_t off = 0;

	if (!buf && len)
		goto proto;
	while (off < len) {
		struct nlmsghdr h;
		size_t left = len - off, step;

		if (left < NLMSG_HDRLEN)
			goto proto;
		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > left)
			goto proto;
		step = NLMSG_ALIGN((size_t)h.nlmsg_len);
		if (!found && h.nlmsg_seq == seq && h.nlmsg_type != NLMSG_NOOP) {
			first.type = h.nlmsg_type;
			first.payload = p + off + NLMSG_HDRLEN;
			first.len = h.nlmsg_len - NLMSG_HDRLEN;
			found = true;
			if (h.nlmsg_type == NLMSG_ERROR) {
				if (first.len < sizeof(e))
					goto proto;
				memcpy(&e, first.payload, sizeof(e));
				is_error = true;
			} else if (h.nlmsg_type < NLMSG_MIN_TYPE) {
				goto proto;	/* DONE, OVERRUN */
			}
		}
		off = step >= left ? len : off + step;
	}
	if (!found)
		return 0;
	if (is_error) {
		/* 0 is an ACK, which a request without NLM_F_ACK never gets in
		 * place of its reply; an error is -1 .. -4095. */
		if (e.error >= 0 || e.error < -4095)
			goto proto;
		errno = -e.error;
		return -1;
	}
	*ans = first;
	return 1;
proto:
	errno = EPROTO;
	return -1;
}

/* ---- the parsers --------------------------------------------------------- */

/*
 * 1: no answer to seq in this datagram; 0: parsed; -1 with errno.  A reply
 * that is well formed but has no DCB_ATTR_IEEE_PFC (the driver has DCB ops
 * but no ieee_getpfc, or it failed) sets *no_pfc and is EPROTO.
 */
static int parse_dcb(const void *buf, size_t len, uint32_t seq, struct ctr_dcb_pfc *out,
		     bool *no_pfc)
{
	struct nl_answer ans;
	struct dcbmsg dm;
	struct ieee_pfc pfc;
	struct nl_attr a, b;
	size_t off;
	bool found = false;
	int r;

	*no_pfc = false;
	r = find_answer(buf, len, seq, &ans);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	if (ans.type != RTM_GETDCB || ans.len < sizeof(dm))
		goto proto;
	memcpy(&dm, ans.payload, sizeof(dm));
	if (dm.cmd != DCB_CMD_IEEE_GET)
		goto proto;
	off = NLMSG_ALIGN(sizeof(dm));
	while ((r = attr_next(ans.payload, ans.len, &off, &a)) > 0) {
		size_t in = 0;

		if (a.type != DCB_ATTR_IEEE)
			continue;
		while ((r = attr_next(a.data, a.len, &in, &b)) > 0) {
			if (b.type != DCB_ATTR_IEEE_PFC)
				continue;
			/* The kernel puts sizeof(struct ieee_pfc); a newer one
			 * may append fields, a shorter one is not ours. */
			if (b.len < sizeof(pfc))
				goto proto;
			memcpy(&pfc, b.data, sizeof(pfc));
			found = true;
		}
		if (r < 0)
			goto proto;
	}
	if (r < 0)
		goto proto;
	if (!found) {
		*no_pfc = true;
		goto proto;
	}
	memset(out, 0, sizeof(*out));
	out->pfc_cap = pfc.pfc_cap;
	out->pfc_en = pfc.pfc_en;
	for (int i = 0; i < CTR_NL_PRIOS && i < IEEE_8021QAZ_MAX_TCS; i++) {
		out->requests[i] = pfc.requests[i];
		out->indications[i] = pfc.indications[i];
	}
	return 0;
proto:
	errno = EPROTO;
	return -1;
}

int ctr_parse_dcb_reply(const void *buf, size_t len, uint32_t seq, struct ctr_dcb_pfc *out)
{
	struct ctr_dcb_pfc tmp;
	bool no_pfc;
	int r = parse_dcb(buf, len, seq, &tmp, &no_pfc);

	if (r > 0)
		errno = EPROTO;
	if (r != 0)
		return -1;
	*out = tmp;
	return 0;
}

/* The generic netlink header of an answer, checked: its attributes start
 * GENL_HDRLEN into the payload. */
static int genl_cmd(const struct nl_answer *ans, uint8_t cmd)
{
	struct genlmsghdr g;

	if (ans->type < NLMSG_MIN_TYPE || ans->len < GENL_HDRLEN)
		return -1;
	memcpy(&g, ans->payload, sizeof(g));
	return g.cmd == cmd ? 0 : -1;
}

/* 1: no answer to seq in this datagram; 0: parsed; -1 with errno. */
static int parse_pause(const void *buf, size_t len, uint32_t seq, struct ctr_pause *out)
{
	struct nl_answer ans;
	struct nl_attr a, s;
	size_t off = GENL_HDRLEN;
	bool have_an = false, have_rx = false, have_tx = false;
	int r;

	r = find_answer(buf, len, seq, &ans);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	if (genl_cmd(&ans, ETHTOOL_MSG_PAUSE_GET_REPLY) < 0)
		goto proto;
	memset(out, 0, sizeof(*out));
	while ((r = attr_next(ans.payload, ans.len, &off, &a)) > 0) {
		size_t in = 0;

		switch (a.type) {
		case ETHTOOL_A_PAUSE_AUTONEG:
			if (get_u8(&a, &out->autoneg) < 0)
				goto proto;
			have_an = true;
			break;
		case ETHTOOL_A_PAUSE_RX:
			if (get_u8(&a, &out->rx) < 0)
				goto proto;
			have_rx = true;
			break;
		case ETHTOOL_A_PAUSE_TX:
			if (get_u8(&a, &out->tx) < 0)
				goto proto;
			have_tx = true;
			break;
		case ETHTOOL_A_PAUSE_STATS:
			while ((r = attr_next(a.data, a.len, &in, &s)) > 0) {
				if (s.type == ETHTOOL_A_PAUSE_STAT_TX_FRAMES) {
					if (get_u64(&s, &out->tx_pause_frames) < 0)
						goto proto;
					out->have_tx_frames = true;
				} else if (s.type == ETHTOOL_A_PAUSE_STAT_RX_FRAMES) {
					if (get_u64(&s, &out->rx_pause_frames) < 0)
						goto proto;
					out->have_rx_frames = true;
				}
				/* ETHTOOL_A_PAUSE_STAT_PAD and newer stats: skipped */
			}
			if (r < 0)
				goto proto;
			break;
		default:
			break;	/* the header nest, ETHTOOL_A_PAUSE_STATS_SRC, ... */
		}
	}
	/* pause_fill_reply() always puts the three settings. */
	if (r < 0 || !have_an || !have_rx || !have_tx)
		goto proto;
	return 0;
proto:
	errno = EPROTO;
	return -1;
}

int ctr_parse_pause_reply(const void *buf, size_t len, uint32_t seq, struct ctr_pause *out)
{
	struct ctr_pause tmp;
	int r = parse_pause(buf, len, seq, &tmp);

	if (r > 0)
		errno = EPROTO;
	if (r != 0)
		return -1;
	*out = tmp;
	return 0;
}

/* 1: no answer to seq in this datagram; 0: parsed; -1 with errno. */
static int parse_family(const void *buf, size_t len, uint32_t seq, uint16_t *family_id)
{
	struct nl_answer ans;
	struct nl_attr a;
	size_t off = GENL_HDRLEN;
	uint16_t id = 0;
	bool have_id = false;
	int r;

	r = find_answer(buf, len, seq, &ans);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	if (ans.type != GENL_ID_CTRL || genl_cmd(&ans, CTRL_CMD_NEWFAMILY) < 0)
		goto proto;
	while ((r = attr_next(ans.payload, ans.len, &off, &a)) > 0) {
		if (a.type == CTRL_ATTR_FAMILY_ID) {
			if (get_u16(&a, &id) < 0)
				goto proto;
			have_id = true;
		} else if (a.type == CTRL_ATTR_FAMILY_NAME) {
			/* An answer about another family is not ours. */
			if (a.len != sizeof(ETHTOOL_GENL_NAME) ||
			    memcmp(a.data, ETHTOOL_GENL_NAME, sizeof(ETHTOOL_GENL_NAME)) != 0)
				goto proto;
		}
	}
	if (r < 0 || !have_id || id < NLMSG_MIN_TYPE)
		goto proto;
	*family_id = id;
	return 0;
proto:
	errno = EPROTO;
	return -1;
}

int ctr_parse_genl_family_reply(const void *buf, size_t len, uint32_t seq, uint16_t *family_id)
{
	uint16_t id;
	int r = parse_family(buf, len, seq, &id);

	if (r > 0)
		errno = EPROTO;
	if (r != 0)
		return -1;
	*family_id = id;
	return 0;
}

/* ---- requests ------------------------------------------------------------ */

/* A request under construction; nlmsg_len is kept up to date. */
struct nl_req {
	union {
		struct nlmsghdr h;
		uint8_t b[256];
	} u;
};

static void req_init(struct nl_req *r, uint16_t type, uint32_t seq, const void *hdr,
		     size_t hdrlen)
{
	memset(r, 0, sizeof(*r));
	r->u.h.nlmsg_type = type;
	r->u.h.nlmsg_flags = NLM_F_REQUEST;
	r->u.h.nlmsg_seq = seq;
	memcpy(r->u.b + NLMSG_HDRLEN, hdr, hdrlen);
	r->u.h.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + NLMSG_ALIGN(hdrlen));
}

/* Appends an attribute; its offset, or 0 when it does not fit. */
static size_t req_put(struct nl_req *r, uint16_t type, const void *data, size_t len)
{
	size_t off = r->u.h.nlmsg_len;
	struct nlattr a = { .nla_type = type };

	if (len > sizeof(r->u.b) || NLA_ALIGN(NLA_HDRLEN + len) > sizeof(r->u.b) - off)
		return 0;
	a.nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(r->u.b + off, &a, sizeof(a));
	if (len)
		memcpy(r->u.b + off + NLA_HDRLEN, data, len);
	r->u.h.nlmsg_len = (uint32_t)(off + NLA_ALIGN(NLA_HDRLEN + len));
	return off;
}

/* Closes a nest opened by req_put(r, type | NLA_F_NESTED, NULL, 0). */
static void req_nest_end(struct nl_req *r, size_t at)
{
	uint16_t len = (uint16_t)(r->u.h.nlmsg_len - at);

	memcpy(r->u.b + at + offsetof(struct nlattr, nla_len), &len, sizeof(len));
}

/* ---- talking to the kernel ----------------------------------------------- */

/* A netlink socket, opened on first use and kept; fd -1 when closed. */
struct nl_conn {
	int fd;
	int proto;
	uint8_t *buf;
	uint32_t seq;	/* of the last request on this socket */
};

/*
 * What top keeps from sample to sample: its two sockets, the ethtool
 * family's id and what the kernel said about ETHTOOL_FLAG_STATS.
 */
struct ctr_nl {
	struct nl_conn rtnl, genl;
	uint16_t ethtool_family;	/* 0: not asked yet */
	bool no_ethtool_family;		/* asked: the kernel has none (ENOENT) */
	int stats_flag;			/* 1 taken, 0 refused, -1 not known yet */
};

static int stats_flag_expected(void);

/* The sequence number tells the answer to this request from a late one to
 * an earlier request on the same socket. */
static uint32_t next_seq(struct nl_conn *c)
{
	return ++c->seq;
}

static void conn_close(struct nl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Opens the socket unless it is open: 0, or -1 with errno. */
static int conn_ready(struct nl_conn *c)
{
	struct timeval tv = { .tv_sec = NL_TIMEOUT_MS / 1000,
			      .tv_usec = (NL_TIMEOUT_MS % 1000) * 1000 };
	int e;

	if (c->fd >= 0)
		return 0;
	if (!c->buf && !(c->buf = malloc(NL_RECV_BUF))) {
		errno = ENOMEM;
		return -1;
	}
	c->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, c->proto);
	if (c->fd < 0)
		return -1;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		e = errno;
		conn_close(c);
		errno = e;
		return -1;
	}
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef int (*parse_fn)(const void *buf, size_t len, uint32_t seq, void *ctx);

/*
 * Sends the request and parses datagrams from the kernel until one answers
 * it: 0, or -1 with errno (the kernel's error, EPROTO, ETIMEDOUT after a
 * second without an answer).  A socket that failed (not the kernel saying
 * no) is closed, to be opened afresh by the next request: a late answer
 * must not sit in it.
 */
static int conn_talk(struct nl_conn *c, struct nl_req *r, parse_fn parse, void *ctx)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int64_t deadline;
	ssize_t n;
	int e;

	if (conn_ready(c) < 0)
		return -1;
	r->u.h.nlmsg_seq = next_seq(c);
	deadline = mono_ms() + NL_TIMEOUT_MS;
	do
		n = sendto(c->fd, r->u.b, r->u.h.nlmsg_len, 0, (struct sockaddr *)&kernel,
			   sizeof(kernel));
	while (n < 0 && errno == EINTR);
	if (n < 0 || (size_t)n != r->u.h.nlmsg_len) {
		e = n < 0 ? errno : EIO;
		goto broken;
	}
	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = c->buf, .iov_len = NL_RECV_BUF };
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int64_t left = deadline - mono_ms();
		int rc;

		/* The whole question has a second, however many datagrams. */
		if (left <= 0 || (rc = poll(&pfd, 1, (int)left)) == 0) {
			e = ETIMEDOUT;
			goto broken;
		}
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto broken;
		}
		n = recvmsg(c->fd, &mh, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
			goto broken;
		}
		if (mh.msg_namelen < sizeof(from) || from.nl_pid != 0)
			continue;	/* not from the kernel */
		if (mh.msg_flags & MSG_TRUNC) {
			e = EPROTO;
			goto broken;
		}
		rc = parse(c->buf, (size_t)n, r->u.h.nlmsg_seq, ctx);
		if (rc <= 0)
			return rc;
	}
broken:
	conn_close(c);
	errno = e;
	return -1;
}

struct ctr_nl *ctr_nl_open(void)
{
	struct ctr_nl *nl = calloc(1, sizeof(*nl));

	if (!nl)
		return NULL;
	nl->rtnl = (struct nl_conn){ .fd = -1, .proto = NETLINK_ROUTE, .seq = (uint32_t)time(NULL) };
	nl->genl = (struct nl_conn){ .fd = -1, .proto = NETLINK_GENERIC, .seq = (uint32_t)time(NULL) };
	nl->stats_flag = stats_flag_expected();
	return nl;
}

void ctr_nl_close(struct ctr_nl *nl)
{
	if (!nl)
		return;
	conn_close(&nl->rtnl);
	conn_close(&nl->genl);
	free(nl->rtnl.buf);
	free(nl->genl.buf);
	free(nl);
}

static int fail(char *err, size_t errlen, const char *ifname, const char *what, int e)
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
		snprintf(err, errlen, "%s: %s: %s%s", ifname, what, why, hint);
	errno = e;
	return -1;
}

/* ---- DCB ----------------------------------------------------------------- */

static int dcb_parse_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	void **p = ctx;

	return parse_dcb(buf, len, seq, p[0], p[1]);
}

int ctr_nl_dcb_pfc(struct ctr_nl *nl, const char *ifname, struct ctr_dcb_pfc *out, char *err,
		   size_t errlen)
{
	static const char what[] = "DCB";
	struct dcbmsg dm = { .dcb_family = AF_UNSPEC, .cmd = DCB_CMD_IEEE_GET };
	struct ctr_dcb_pfc tmp;
	struct nl_req r;
	bool no_pfc = false;
	void *ctx[2] = { &tmp, &no_pfc };
	size_t nlen = strlen(ifname);

	if (nlen >= IFNAMSIZ)
		return fail(err, errlen, ifname, what, ENAMETOOLONG);
	if (nlen == 0)
		return fail(err, errlen, ifname, what, ENODEV);
	req_init(&r, RTM_GETDCB, 0, &dm, sizeof(dm));
	if (!req_put(&r, DCB_ATTR_IFNAME, ifname, nlen + 1))
		return fail(err, errlen, ifname, what, ENAMETOOLONG);
	if (conn_talk(&nl->rtnl, &r, dcb_parse_cb, ctx) < 0) {
		if (no_pfc && errno == EPROTO) {
			if (err && errlen)
				snprintf(err, errlen, "%s: %s: the driver reports no IEEE PFC",
					 ifname, what);
			errno = EOPNOTSUPP;
			return -1;
		}
		return fail(err, errlen, ifname, what, errno);
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
		return fail(err, errlen, ifname, what, ENOMEM);
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

/* ---- ethtool pause ------------------------------------------------------- */

static int family_parse_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return parse_family(buf, len, seq, ctx);
}

static int pause_parse_cb(const void *buf, size_t len, uint32_t seq, void *ctx)
{
	return parse_pause(buf, len, seq, ctx);
}

/* ETHTOOL_MSG_PAUSE_GET for ifname with header flags `flags`. */
static int pause_get(struct nl_conn *c, uint16_t family, const char *ifname, uint32_t flags,
		     struct ctr_pause *out)
{
	struct genlmsghdr g = { .cmd = ETHTOOL_MSG_PAUSE_GET, .version = ETHTOOL_GENL_VERSION };
	struct nl_req r;
	size_t nest;

	req_init(&r, family, 0, &g, sizeof(g));
	/* Strictly validated: a nest must carry NLA_F_NESTED. */
	nest = req_put(&r, ETHTOOL_A_PAUSE_HEADER | NLA_F_NESTED, NULL, 0);
	if (!nest || !req_put(&r, ETHTOOL_A_HEADER_DEV_NAME, ifname, strlen(ifname) + 1) ||
	    (flags && !req_put(&r, ETHTOOL_A_HEADER_FLAGS, &flags, sizeof(flags)))) {
		errno = ENAMETOOLONG;
		return -1;
	}
	req_nest_end(&r, nest);
	return conn_talk(c, &r, pause_parse_cb, out);
}

/* The ethtool family's id, asked once: 0, or -1 with errno. */
static int ethtool_family(struct ctr_nl *nl)
{
	struct genlmsghdr g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 };
	struct nl_req r;
	uint16_t family = 0;

	if (nl->ethtool_family)
		return 0;
	if (nl->no_ethtool_family) {
		errno = ENOENT;
		return -1;
	}
	req_init(&r, GENL_ID_CTRL, 0, &g, sizeof(g));
	if (!req_put(&r, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME, sizeof(ETHTOOL_GENL_NAME))) {
		errno = EINVAL;
		return -1;
	}
	if (conn_talk(&nl->genl, &r, family_parse_cb, &family) < 0) {
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
	size_t nlen = strlen(ifname);
	int rc;

	if (nlen >= IFNAMSIZ)
		return fail(err, errlen, ifname, what, ENAMETOOLONG);
	if (nlen == 0)
		return fail(err, errlen, ifname, what, ENODEV);
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
		return fail(err, errlen, ifname, what, errno);
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
		return fail(err, errlen, ifname, what, errno);
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
