/* SPDX-License-Identifier: MIT */
/*
 * PFC and link-level pause statistics for `rdmakit top`, asked of the
 * kernel over netlink, because neither has a sysfs file and ethtool -S
 * names differ by driver:
 *
 *   PFC    rtnetlink RTM_GETDCB, DCB_CMD_IEEE_GET: DCB_ATTR_IEEE nests
 *          DCB_ATTR_IEEE_PFC, a struct ieee_pfc (`dcb pfc show dev IF`);
 *   pause  generic netlink family "ethtool", ETHTOOL_MSG_PAUSE_GET with
 *          ETHTOOL_FLAG_STATS (`ethtool -I -a IF`).
 *
 * Raw netlink sockets (one per call, or kept in a struct ctr_nl), with a
 * 1 s receive timeout so that a sample never hangs.  The reply parsers are exported on their own (for the
 * unit tests and fuzzing): they take one received datagram and never read
 * outside it, whatever its bytes.  Nothing here prints.
 */
#ifndef RDMAKIT_COUNTERS_NL_H
#define RDMAKIT_COUNTERS_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTR_NL_PRIOS 8

/* DCB IEEE PFC of a netdev, as `dcb pfc show dev IF` reads it (RTM_GETDCB,
 * DCB_CMD_IEEE_GET, DCB_ATTR_IEEE_PFC = struct ieee_pfc). */
struct ctr_dcb_pfc {
	uint8_t pfc_cap;	/* traffic classes that can be PFC-enabled */
	uint8_t pfc_en;		/* bit p: PFC enabled on priority p */
	uint64_t requests[CTR_NL_PRIOS];	/* PFC frames sent, per priority (tx) */
	uint64_t indications[CTR_NL_PRIOS];	/* PFC frames received, per priority (rx) */
};

/* Link-level pause statistics from ethtool netlink (ETHTOOL_MSG_PAUSE_GET
 * with ETHTOOL_FLAG_STATS), as `ethtool -I -a IF` prints them. */
struct ctr_pause {
	bool autoneg, rx, tx;		/* pause settings (ETHTOOL_A_PAUSE_AUTONEG/RX/TX) */
	bool have_tx_frames, have_rx_frames;	/* the driver reported the statistic */
	uint64_t tx_pause_frames, rx_pause_frames;
};

/*
 * Returns 0 and fills *out; or -1 with errno set and `err` a one-line
 * reason naming the interface, e.g. "veth0: DCB: Operation not supported"
 * (errno EOPNOTSUPP when the driver has no DCB ops, or no IEEE PFC, or no
 * pause parameters; ENODEV when no such interface; ENOMEM; ETIMEDOUT when
 * the kernel did not answer within a second; EPROTO for a malformed reply).
 * *out is left untouched on failure.
 */
int ctr_read_dcb_pfc(const char *ifname, struct ctr_dcb_pfc *out, char *err, size_t errlen);
int ctr_read_pause(const char *ifname, struct ctr_pause *out, char *err, size_t errlen);

/*
 * The same through sockets kept open from call to call (what top does at
 * every sample): ctr_nl_open() allocates (sockets open on first use; NULL
 * when out of memory), ctr_nl_close() closes and frees.  The ethtool
 * family's id is asked once, and whether the kernel takes
 * ETHTOOL_FLAG_STATS is known from its version or learnt once.
 */
struct ctr_nl;
struct ctr_nl *ctr_nl_open(void);
void ctr_nl_close(struct ctr_nl *nl);
int ctr_nl_dcb_pfc(struct ctr_nl *nl, const char *ifname, struct ctr_dcb_pfc *out, char *err,
		   size_t errlen);
int ctr_nl_pause(struct ctr_nl *nl, const char *ifname, struct ctr_pause *out, char *err,
		 size_t errlen);

/*
 * The parsers alone, for tests and fuzzing: one whole netlink reply
 * datagram (possibly several nlmsghdr), as received.  Messages whose
 * nlmsg_seq is not `seq` are skipped (their framing is still checked).
 * 0 = parsed; -1 with errno: the kernel's error from NLMSG_ERROR
 * (errno = -error), EPROTO for malformed/truncated messages, a datagram
 * with no answer to `seq`, or a missing DCB_ATTR_IEEE_PFC / wrong type.
 * Never read past len, whatever the bytes.
 */
int ctr_parse_dcb_reply(const void *buf, size_t len, uint32_t seq, struct ctr_dcb_pfc *out);
int ctr_parse_pause_reply(const void *buf, size_t len, uint32_t seq, struct ctr_pause *out);
/* Generic netlink: the family id of "ethtool" from a CTRL_CMD_GETFAMILY
 * reply; -1 with errno (ENOENT from the kernel: no such family). */
int ctr_parse_genl_family_reply(const void *buf, size_t len, uint32_t seq, uint16_t *family_id);

#endif
