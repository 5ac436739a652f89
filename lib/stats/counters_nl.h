/* SPDX-License-Identifier: MIT */
/*
 * Counters asked of the kernel over netlink (libmnl, through nl.h):
 *
 *   PFC    rtnetlink RTM_GETDCB, DCB_CMD_IEEE_GET: DCB_ATTR_IEEE nests
 *          DCB_ATTR_IEEE_PFC, a struct ieee_pfc (`dcb pfc show dev IF`);
 *   pause  generic netlink family "ethtool", ETHTOOL_MSG_PAUSE_GET with
 *          ETHTOOL_FLAG_STATS (`ethtool -I -a IF`);
 *   RDMA   the RDMA netlink's statistics (`rdma statistic`): a port's
 *          counters (RDMA_NLDEV_CMD_STAT_GET), which of them are optional
 *          (RDMA_NLDEV_CMD_STAT_GET_STATUS), and its QP counters (the
 *          STAT_GET dump with RDMA_NLDEV_ATTR_STAT_RES = RES_QP).
 *
 * PFC and pause have no sysfs file and ethtool -S names differ by driver.
 * The RDMA netlink's port counters are the driver's hw_counters read
 * afresh (sysfs keeps a value up to its `lifespan`), with the optional
 * counters a driver offers (mlx5's cc_rx_ce_pkts, ...), which sysfs does
 * not show.  Both sources report a port's value as the port's own count
 * plus what QP-bound counters hold (nldev.c and sysfs.c add
 * rdma_counter_get_hwstat_value): a QP counter is a part of the port's
 * value, never to be added to it.
 *
 * Sockets are opened per call or kept in a struct ctr_nl; every question
 * has a second to be answered, so a sample never hangs.  The reply
 * parsers are exported on their own (for the unit tests and fuzzing):
 * they take received datagrams and never read outside them, whatever
 * their bytes.  Nothing here prints.
 */
#ifndef RDMAKIT_COUNTERS_NL_H
#define RDMAKIT_COUNTERS_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"

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

/* ---- RDMA netlink statistics --------------------------------------------- */

/*
 * A port's RDMA netlink statistics (p->device, p->port) added to p->set:
 * its counters as CTR_SRC_NLDEV (the optional ones CTR_SRC_NLDEV_OPT), its
 * QP counters as CTR_SRC_NLDEV_QP named "ID/NAME" after the counter's id,
 * with what each holds in p->qpc (at most CTR_MAX_QP_COUNTERS, the rest
 * counted in p->qpc_left_out).  0 with p->nldev_known set; or -1 with
 * errno and p->nldev_error a one-line reason naming DEV/PORT:
 * EPROTONOSUPPORT when the kernel has no RDMA netlink, ENODEV when it
 * lists no such device, EINVAL when the device keeps no statistics or has
 * no such port, EPROTO, ETIMEDOUT, ENOMEM; the set is then as it was.
 * QP counters that cannot be read leave the port's answer standing, with
 * the reason in p->qpc_error.
 */
int ctr_nl_rdma_port(struct ctr_nl *nl, struct ctr_port *p);
/*
 * The same from recorded answers (ctr_opts.netlink_replay): DIR/DEV.PORT.nldev,
 * and when present .nldev-status and .nldev-qp.  -1 with p->nldev_error
 * empty when nothing is recorded for the port.
 */
int ctr_replay_rdma_port(const char *dir, struct ctr_port *p);
/* Forgets the RDMA device list (top calls it at every sample): devices
 * come and go, and an index may be reused for another device. */
void ctr_nl_rdma_forget(struct ctr_nl *nl);

/* An RDMA device as RDMA_NLDEV_CMD_GET lists it. */
struct ctr_rdma_dev {
	char name[64];
	uint32_t index;
};

/*
 * The parsers alone (datagrams as received; seq as for the ones above):
 *   dev_dump   one datagram of the RDMA_NLDEV_CMD_GET dump, its devices
 *              appended to *devs (realloc'd; at most 4096): 1 when the
 *              dump goes on, 0 at its end, -1 with errno;
 *   stat       the STAT_GET answer for DEV/PORT (its DEV_NAME and
 *              PORT_INDEX must say so: ESTALE when another device has the
 *              index now): its counters added to `set` as CTR_SRC_NLDEV;
 *   status     the STAT_GET_STATUS answer: every counter of `set` it calls
 *              optional (RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC present)
 *              becomes CTR_SRC_NLDEV_OPT;
 *   qp_dump    one datagram of the QP counter dump of DEV/PORT: counters
 *              added to `set` (CTR_SRC_NLDEV_QP, "ID/NAME") and to *qpc
 *              (those past CTR_MAX_QP_COUNTERS counted in *left_out, which
 *              may be NULL); 1 when the dump goes on, 0 at its end, -1.
 * On -1, what was added to `set` and *qpc before the error stays (the
 * callers parse into sets of their own).
 */
int ctr_parse_nldev_dev_dump(const void *buf, size_t len, uint32_t seq, struct ctr_rdma_dev **devs,
			     size_t *ndevs);
int ctr_parse_nldev_stat_reply(const void *buf, size_t len, uint32_t seq, const char *dev,
			       uint32_t port, struct ctr_set *set);
int ctr_parse_nldev_status_reply(const void *buf, size_t len, uint32_t seq, const char *dev,
				 uint32_t port, struct ctr_set *set);
int ctr_parse_nldev_qp_dump(const void *buf, size_t len, uint32_t seq, const char *dev,
			    uint32_t port, struct ctr_set *set, struct ctr_qp_counter **qpc,
			    size_t *nqpc, size_t *left_out);

#endif
