/* SPDX-License-Identifier: MIT */
/*
 * The netlink plumbing under counters_nl.c and counters_rdmanl.c, on
 * libmnl (what iproute2's dcb, ethtool and rdma tools use): a socket kept
 * from question to question with a deadline on every question, and strict
 * walks over replies.
 *
 * libmnl's own loops (mnl_cb_run, mnl_attr_parse) stop quietly at the
 * first malformed message or attribute; the walks here use its primitives
 * (mnl_nlmsg_ok/next, mnl_attr_ok/next, mnl_attr_validate) but call a
 * reply malformed (EPROTO) when anything is left over that is not a whole
 * message or attribute, so that a broken reply is never half read as a
 * good one.  libmnl reads headers in place: a buffer handed to these walks
 * is 4-byte aligned (nl_aligned makes it so).  Internal to lib/stats.
 */
#ifndef RDMAKIT_NL_H
#define RDMAKIT_NL_H

#include <libmnl/libmnl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters_nl.h"

/* A reply bigger than this is refused (EPROTO) rather than half read: the
 * ethtool family description is ~2 KiB, a dump datagram of the RDMA
 * netlink up to a page or two. */
#define NL_RECV_BUF (32 * 1024)
#define NL_TIMEOUT_MS 1000
/* Requests are small: a header, a family header and a few attributes. */
#define NL_REQ_BUF 512

/*
 * The message of a datagram that answers `seq` (the first, when several
 * do): 1 with *ans pointing at it; 0 when none does; -1 with errno: the
 * kernel's error (NLMSG_ERROR), or EPROTO when the framing of any message
 * is broken or the answer is an ACK, DONE or OVERRUN.
 */
int nl_find_answer(const void *buf, size_t len, uint32_t seq, const struct nlmsghdr **ans);

/*
 * The messages of one dump datagram that answer `seq`, each handed to
 * `each` (which returns 0, or -1 with errno to stop): 1 when the dump goes
 * on in the next datagram, 0 at its NLMSG_DONE, -1 with errno (the
 * kernel's error, EPROTO for broken framing, NLM_F_DUMP_INTR as EAGAIN).
 */
int nl_dump_walk(const void *buf, size_t len, uint32_t seq,
		 int (*each)(const struct nlmsghdr *nlh, void *ctx), void *ctx);

/*
 * Every attribute in payload[0, len), each handed to cb (libmnl's
 * callback: MNL_CB_OK to go on, MNL_CB_ERROR with errno to stop): 0, or
 * -1 with errno (EPROTO when what is left is not a whole attribute).
 */
int nl_attrs(const void *payload, size_t len, mnl_attr_cb_t cb, void *data);
/* The same over the attributes of a message after its family header of
 * `hdrlen` bytes (EPROTO when the message is shorter), and over a nest. */
int nl_msg_attrs(const struct nlmsghdr *nlh, size_t hdrlen, mnl_attr_cb_t cb, void *data);
int nl_nest_attrs(const struct nlattr *nest, mnl_attr_cb_t cb, void *data);

/* A u8/u16/u32/u64 attribute of exactly that size: 0, or -1 (EPROTO). */
int nl_get_u8(const struct nlattr *a, uint8_t *v);
int nl_get_u16(const struct nlattr *a, uint16_t *v);
int nl_get_u32(const struct nlattr *a, uint32_t *v);
int nl_get_u64(const struct nlattr *a, uint64_t *v);
/* A NUL-terminated string attribute copied into out (cap bytes): 0, or -1
 * (EPROTO: empty, not terminated, or longer than cap - 1). */
int nl_get_str(const struct nlattr *a, char *out, size_t cap);
/* The attribute's type, NLA_F_NESTED / NLA_F_NET_BYTEORDER masked off. */
static inline uint16_t nl_type(const struct nlattr *a)
{
	return mnl_attr_get_type(a);
}

/* For an attribute callback that refuses what it sees: errno EPROTO. */
int nl_cb_proto(void);

/*
 * buf as a 4-byte aligned pointer: buf itself when it is, else a copy in
 * *copy (malloc'd; the caller frees it).  NULL with errno ENOMEM, or EPROTO
 * for a NULL buf with a length.
 */
const void *nl_aligned(const void *buf, size_t len, void **copy);

/* ---- a socket ----------------------------------------------------------- */

/* One netlink socket, opened on first use and kept; sock NULL when closed. */
struct nl_conn {
	struct mnl_socket *sock;
	int bus;		/* NETLINK_ROUTE, NETLINK_GENERIC, NETLINK_RDMA */
	uint8_t *buf;		/* NL_RECV_BUF, 4-byte aligned (malloc) */
	uint32_t seq;		/* of the last request */
};

void nl_conn_init(struct nl_conn *c, int bus);
void nl_conn_close(struct nl_conn *c);

/*
 * Parses one received datagram for request `seq`: 1 when the answer is not
 * complete yet (not in it, or a dump going on), 0 when done, -1 with errno.
 */
typedef int (*nl_parse_fn)(const void *buf, size_t len, uint32_t seq, void *ctx);

/*
 * Sends the request built in `req` (its nlmsg_seq is set here) and parses
 * datagrams from the kernel until `parse` says done: 0, or -1 with errno
 * (the kernel's error, EPROTO, ETIMEDOUT when the whole question took more
 * than NL_TIMEOUT_MS).  A socket that failed (not the kernel saying no) is
 * closed, to be opened afresh by the next request: a late answer must not
 * sit in it.
 */
int nl_conn_talk(struct nl_conn *c, struct nlmsghdr *req, nl_parse_fn parse, void *ctx);

/*
 * A parser of that kind run on a datagram handed in by a caller (the
 * exported ctr_parse_* entry points): aligned first; "no answer here" is
 * EPROTO unless `dump` (a dump going on returns 1).
 */
int nl_parse_given(const void *buf, size_t len, uint32_t seq, void *ctx, nl_parse_fn parse,
		   bool dump);

/* "WHO: WHAT: why (hint)" into err for errno e; returns -1 with errno e. */
int ctr_nl_fail(char *err, size_t errlen, const char *who, const char *what, int e);

/* ---- what the counter readers keep (struct ctr_nl of counters_nl.h) ----- */

struct ctr_nl {
	struct nl_conn rtnl, genl, rdma;
	uint16_t ethtool_family;	/* 0: not asked yet */
	bool no_ethtool_family;		/* asked: the kernel has none (ENOENT) */
	int stats_flag;			/* ETHTOOL_FLAG_STATS: 1 taken, 0 refused, -1 not known */
	struct ctr_rdma_dev *rdma_devs;	/* the last RDMA device list */
	size_t nrdma_devs;
	bool rdma_devs_fresh;		/* listed since the last ctr_nl_rdma_forget() */
};

#endif
