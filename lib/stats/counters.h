/* SPDX-License-Identifier: MIT */
/*
 * Counter sources for `rdmakit top` (and incast's before/after deltas):
 * one sample of every counter this host exposes, and rates between two.
 *
 *   RDMA ports  SYSFS/class/infiniband/DEV/ports/N/counters/NAME     (IB PMA)
 *               SYSFS/class/infiniband/DEV/ports/N/hw_counters/NAME  (driver)
 *               SYSFS/class/infiniband/DEV/hw_counters/NAME          (driver, per device)
 *               with the port's state, phys_state, rate, link_layer and netdev;
 *   netdevs     ETHTOOL_GSTRINGS/ETHTOOL_GSTATS on the port's netdev (and on
 *               interfaces asked for by name, with SYSFS/class/net/IF/statistics);
 *               its DCB IEEE PFC (RTM_GETDCB: per-priority PFC requests and
 *               indications) and pause statistics (ethtool netlink PAUSE_GET),
 *               see counters_nl.h;
 *   host ECN    PROC/net/netstat IpExt InNoECTPkts InECT1Pkts InECT0Pkts InCEPkts;
 *   soft engine the shared-memory segments of running engines (struct ctr_engine).
 *
 * Every directory is enumerated at every sample and every file read anew
 * (re-opened, or kept open with ctr_opts.cache and re-opened when its
 * directory entry changes): names differ by driver and kernel version (some
 * contain spaces), counters appear when features are enabled, and devices
 * come and go.  Names are
 * kept verbatim (trailing blanks trimmed).  `lifespan` (a setting) and
 * values that are not decimal numbers ("N/A (no PMA)") are skipped.
 *
 * Nothing here prints: cmd/top.c renders snapshots.
 */
#ifndef RDMAKIT_COUNTERS_H
#define RDMAKIT_COUNTERS_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define CTR_SYSFS_ROOT "/sys"
#define CTR_PROC_ROOT "/proc"
#define CTR_PFC_PRIOS 8
/* Rate samples kept per counter for sparklines (a minute at 0.5 s). */
#define CTR_HIST_LEN 120

enum ctr_src {
	CTR_SRC_PMA,		/* ports/N/counters/: IB PMA PortCounters(Ext) */
	CTR_SRC_HW_PORT,	/* ports/N/hw_counters/ */
	CTR_SRC_NLDEV,		/* RDMA netlink port statistics (in place of HW_PORT) */
	CTR_SRC_NLDEV_OPT,	/* ... the optional ones among them */
	CTR_SRC_NLDEV_QP,	/* RDMA netlink QP counters: "ID/NAME" */
	CTR_SRC_HW_DEV,		/* DEV/hw_counters/, shared by the device's ports */
	CTR_SRC_NETDEV,		/* class/net/IF/statistics/ (interface rows) */
	CTR_SRC_ETHTOOL,	/* ethtool -S of the netdev */
	CTR_SRC_NETSTAT,	/* PROC/net/netstat */
	CTR_SRC_ENGINE,		/* a soft engine's shared-memory counters */
	CTR_SRC_DCB,		/* DCB netlink IEEE PFC: requests[N], indications[N] */
	CTR_SRC_PAUSE,		/* ethtool netlink pause stats: tx/rx_pause_frames */
	CTR_SRC_COUNT
};

/* What a counter means, whatever its driver calls it (ctr_meaning_of). */
enum ctr_meaning {
	CTR_M_NONE,
	CTR_M_RX_BYTES,
	CTR_M_TX_BYTES,
	CTR_M_RX_PACKETS,
	CTR_M_TX_PACKETS,
	CTR_M_ECN_MARKED,	/* CE-marked RoCE packets received (notification point) */
	CTR_M_CNP_SENT,		/* CNPs sent (notification point) */
	CTR_M_CNP_HANDLED,	/* CNPs acted on (reaction point) */
	CTR_M_CNP_IGNORED,
	CTR_M_OUT_OF_SEQUENCE,	/* out-of-sequence packets received */
	CTR_M_SEQ_ERR,		/* NAK sequence errors: go-back-N retransmissions */
	CTR_M_TIMEOUT,		/* local ACK timeouts */
	CTR_M_RNR,		/* receiver-not-ready NAKs */
	CTR_M_DUP_REQ,		/* duplicate requests received */
	CTR_M_OUT_OF_BUFFER,	/* packets dropped for lack of a receive WQE */
	CTR_M_COUNT
};

/* ctr_counter.flags, set by ctr_rates(). */
#define CTR_F_NEW 0x1		/* no earlier sample: rate unknown (NAN) */
#define CTR_F_RESET 0x2		/* went backwards (reset, device re-created): rate 0 */
#define CTR_F_SATURATED 0x4	/* an IB PMA counter stuck at 2^width-1: rate unknown */

struct ctr_hist {
	float v[CTR_HIST_LEN];	/* rates, oldest first from `head` */
	uint16_t head, len;
};

struct ctr_counter {
	char *name;		/* verbatim; owned */
	uint64_t value;		/* as read: PMA data counters in 4-byte words */
	double rate;		/* change of `value` per second; NAN when unknown */
	uint8_t src;		/* enum ctr_src */
	uint8_t meaning;	/* enum ctr_meaning */
	uint8_t width;		/* 64, or the PMA width at which it stops counting */
	uint8_t flags;		/* CTR_F_* */
	uint8_t scale;		/* value x scale = units: 4 for port_{xmit,rcv}_data */
	struct ctr_hist *hist;	/* rates of the last samples (with history on) */
};

struct ctr_set {
	struct ctr_counter *c;	/* sorted by (src, name) after ctr_sample() */
	size_t n, cap;
};

/* QP counters a port holds at most (more are left out, and counted). */
#define CTR_MAX_QP_COUNTERS 1024
/* QP numbers kept per QP counter (the rest are only counted). */
#define CTR_QPC_QPNS 8

/* One QP counter of a port (`rdma statistic qp show`): its values are the
 * port's CTR_SRC_NLDEV_QP counters named "ID/NAME". */
struct ctr_qp_counter {
	uint32_t id;
	uint32_t mode;			/* enum rdma_nl_counter_mode: 1 auto, 2 manual */
	uint32_t nqps;			/* QPs bound to it */
	uint32_t qpn[CTR_QPC_QPNS];	/* the first of them */
};

/* "auto", "manual" or "none": a QP counter's mode as rdma statistic words it. */
const char *ctr_qp_counter_mode(uint32_t mode);

struct ctr_port {
	char device[64];	/* "mlx5_0"; "" for an interface row */
	int port;		/* from 1; 0 for an interface row */
	char netdev[IF_NAMESIZE]; /* "" when none */
	char state[16];		/* "ACTIVE" (from "4: ACTIVE"); interfaces: "UP" */
	char phys_state[24];	/* "LinkUp"; "" unknown */
	char link_layer[16];	/* "Ethernet", "InfiniBand"; "" unknown */
	double rate_gbps;	/* 0 unknown */
	bool is_new;		/* not in the previous sample */
	struct ctr_set set;
	char ethtool_error[96];	/* why the netdev's ethtool stats are missing */
	/* The netdev's DCB PFC settings (the counters are CTR_SRC_DCB). */
	bool dcb_known;
	uint8_t pfc_cap, pfc_en;	/* pfc_en bit p: PFC on for priority p */
	char dcb_error[96];		/* why DCB is missing ("not supported") */
	/* Its link-level pause settings (the counters are CTR_SRC_PAUSE). */
	bool pause_known, pause_autoneg, pause_rx, pause_tx;
	char pause_error[96];
	/*
	 * The driver's port counters come from the RDMA netlink when it
	 * answers (CTR_SRC_NLDEV, fresh at every read, optional counters
	 * included), else from sysfs hw_counters (CTR_SRC_HW_PORT): never
	 * both, so nothing is counted twice.
	 */
	bool nldev_known;
	char nldev_error[128];		/* why not ("" when not asked) */
	struct ctr_qp_counter *qpc;	/* its QP counters (owned) */
	size_t nqpc;
	size_t qpc_left_out;		/* beyond CTR_MAX_QP_COUNTERS */
	char qpc_error[128];		/* why the QP counters are missing */
};

/*
 * Soft-engine processes, from the shared-memory segments they publish
 * (lib/transport/shm_counters.h): the engine's totals under their own
 * names ("tx_packets", "retransmits", "cnps_rx", ...) and each QP's under
 * "qp 0x101/retransmits".
 */
/* Soft engines a snapshot holds at most. */
#define CTR_MAX_ENGINES 16

struct ctr_engine {
	int pid;
	char name[64];		/* "soft 127.0.0.1:4791" */
	struct ctr_set set;
};

struct ctr_snapshot {
	uint64_t mono_ns;	/* CLOCK_MONOTONIC at the sample */
	struct timespec wall;	/* CLOCK_REALTIME at the sample */
	double interval_s;	/* since the previous sample (ctr_rates); 0 first */
	struct ctr_port *ports;	/* by (device, port); interface rows last */
	size_t nports, cap;
	size_t rdma_devices;	/* device directories read (after the filter) */
	bool ib_class;		/* SYSFS/class/infiniband exists */
	bool have_netstat;	/* PROC/net/netstat had the IpExt ECN counters */
	struct ctr_set netstat;
	struct ctr_engine *engines;
	size_t nengines;
	char **gone;		/* "dev/port" of ports gone since the previous sample */
	size_t ngone;
	bool history;		/* keep rate history (ctr_rates moves it forward) */
	char warning[256];	/* the first non-fatal problem, "" when none */
};

struct ctr_opts {
	const char *sysfs_root;	/* NULL: /sys */
	const char *proc_root;	/* NULL: /proc */
	const char *shm_dir;	/* soft-engine segments; NULL: /dev/shm */
	/* Only these RDMA devices ("DEV" or "DEV/PORT"); none: all. */
	const char *const *devices;
	size_t ndevices;
	/* Network interfaces shown as rows of their own (ethtool, statistics). */
	const char *const *ifaces;
	size_t nifaces;
	/*
	 * Read the ethtool stats of the RDMA ports' netdevs.  The ioctl asks
	 * the running kernel, so it only makes sense when sysfs_root is this
	 * host's /sys; ctr_opts_default_ethtool() says so.
	 */
	bool port_ethtool;
	/* ... but leave out their ethtool -S (DCB, pause and the RDMA netlink
	 * are still asked): bw's deltas, which a driver's per-queue statistics
	 * would drown. */
	bool no_ethtool_stats;
	/*
	 * Netlink replies from files instead of the kernel: DIR/IF.dcb and
	 * DIR/IF.pause hold one reply datagram each, as the kernel sends it;
	 * DIR/DEV.PORT.nldev the STAT_GET answer, DIR/DEV.PORT.nldev-status
	 * the STAT_GET_STATUS one, DIR/DEV.PORT.nldev-qp the QP counter dump
	 * (its datagrams one after the other), each optional.  For tests with fixture trees (RDMAKIT_NETLINK_REPLAY
	 * in cmd/top.c); it makes the port netdevs of any sysfs root queried.
	 */
	const char *netlink_replay;
	bool history;
	/* Counter files kept open between samples (ctr_cache_new); NULL: each
	 * file is opened, read and closed at every sample. */
	struct ctr_cache *cache;
	/* Netlink sockets kept between samples (ctr_nl_open in counters_nl.h);
	 * NULL: each DCB or pause question opens its own. */
	struct ctr_nl *nl;
};

/*
 * The open-file cache of counters_cache.c.  Each sample still enumerates
 * every directory; a file whose directory entry names another inode than
 * the one kept open (replaced, device re-created), or whose read fails, is
 * opened afresh; files not seen in a sample are closed after it.
 */
struct ctr_cache;
struct ctr_cache *ctr_cache_new(void);
void ctr_cache_free(struct ctr_cache *c);
/* NAME in directory DIR (open as dirfd, on device `dev`) whose entry has
 * inode `ino`, read from offset 0 into buf (NUL-terminated); the byte
 * count, or -1. */
ssize_t ctr_cache_read(struct ctr_cache *c, int dirfd, const char *dir, const char *name,
		       dev_t dev, ino_t ino, char *buf, size_t cap);
/* A small file (a sysfs attribute) NAME, relative to dirfd (AT_FDCWD: a
 * path), opened, read into buf (NUL-terminated) and closed: the byte count,
 * or -1.  What ctr_cache_read does without a cache. */
ssize_t ctr_read_small(int dirfd, const char *name, char *buf, size_t cap);
/* Ends a sample: closes the files it did not read. */
void ctr_cache_sweep(struct ctr_cache *c);
/* Files held open now; files opened to be kept since ctr_cache_new. */
size_t ctr_cache_open_files(const struct ctr_cache *c);
uint64_t ctr_cache_opens(const struct ctr_cache *c);

/* Whether port netdevs' ethtool stats belong with this sysfs root. */
bool ctr_opts_default_ethtool(const char *sysfs_root);

/*
 * Reads one sample.  Returns 0 (problems with single files or devices are
 * skipped; the first lands in s->warning), or -1 with `err` set when memory
 * ran out or SYSFS_ROOT itself is not a readable directory.
 */
int ctr_sample(const struct ctr_opts *o, struct ctr_snapshot *s, char *err, size_t errlen);
void ctr_snapshot_free(struct ctr_snapshot *s);

/*
 * Rates of `cur` against `prev` (NULL: the first sample; every rate
 * unknown).  Per counter: delta / interval when it grew; when it went
 * backwards (reset, device re-created) rate 0 and CTR_F_RESET — never a
 * negative or wrapped rate; a PMA counter at 2^width-1 has stopped
 * counting: rate NAN and CTR_F_SATURATED; a counter or port new since
 * prev: rate NAN and CTR_F_NEW.  Fills cur->gone and cur->interval_s, and
 * moves rate history from prev to cur when cur->history is set.
 */
void ctr_rates(struct ctr_snapshot *cur, struct ctr_snapshot *prev);

/* The rate rule alone: per second, or NAN with *flags saying why. */
double ctr_rate(uint64_t prev, uint64_t cur, double interval_s, unsigned width,
		uint8_t *flags);

/*
 * Each counter of an RDMA port (dev/port, or every port when dev is NULL)
 * that grew from `before` to `after`, handed to fn with its growth; the
 * counters of a port or source new in `after` are left out, and so are QP
 * counters (each is a part of its port's value, which is handed on).
 */
typedef void (*ctr_delta_fn)(const struct ctr_port *p, const struct ctr_counter *c,
			     uint64_t delta, void *ctx);
void ctr_port_deltas(const struct ctr_snapshot *before, const struct ctr_snapshot *after,
		     const char *dev, int port, ctr_delta_fn fn, void *ctx);

/* The counter of a port by source and name, or NULL. */
const struct ctr_counter *ctr_find(const struct ctr_set *s, enum ctr_src src, const char *name);

/*
 * The sum of a port's counters with meaning m, in units (x scale), and its
 * rate (NAN when any part is unknown), and the CTR_F_* flags of its parts
 * (flags may be NULL).  Traffic meanings prefer the IB PMA counters when a
 * port has both.  False when no counter has that meaning.
 */
bool ctr_port_meaning(const struct ctr_port *p, enum ctr_meaning m, uint64_t *value,
		      double *rate, uint8_t *flags);

/* The meaning of a counter name from a source (CTR_M_NONE when unknown). */
enum ctr_meaning ctr_meaning_of(enum ctr_src src, const char *name);
/* "ecn_marked", ...: the JSON key of a meaning. */
const char *ctr_meaning_key(enum ctr_meaning m);
/* Error-like: a nonzero value or rate is worth highlighting. */
bool ctr_meaning_is_error(enum ctr_meaning m);
bool ctr_name_is_error(const char *name);

/* One row of the semantic map, for documentation and tests. */
struct ctr_map_row {
	const char *driver;	/* "mlx5", "rxe", "bnxt_re", "irdma", "ib" (PMA) */
	enum ctr_src src;	/* CTR_SRC_PMA or CTR_SRC_HW_PORT (HW_DEV matches too) */
	const char *name;
	enum ctr_meaning meaning;
};
const struct ctr_map_row *ctr_map(size_t *n);

/*
 * Per-priority PFC pause frames in an ethtool name (mlx5 rx_prio3_pause,
 * bnxt_en rx_pfc_ena_frames_pri3, ice rx_priority_3_xoff.nic, i40e
 * port.rx_priority_3_xoff_rx): the priority 0..7 and the direction, or -1.
 */
int ctr_pfc_prio(const char *name, bool *tx);

struct ctr_pfc {
	const char *source;		/* "ethtool" (per-priority names) or "dcb" */
	uint8_t rx_known, tx_known;	/* bit p: priority p has that counter */
	uint64_t rx[CTR_PFC_PRIOS], tx[CTR_PFC_PRIOS];
	double rx_rate[CTR_PFC_PRIOS], tx_rate[CTR_PFC_PRIOS];
};
/* A port's pause counters per priority: from ethtool -S names when the
 * driver has them, else DCB's indications (rx) and requests (tx); false
 * when neither is known. */
bool ctr_port_pfc(const struct ctr_port *p, struct ctr_pfc *out);

/* --- the readers, also used alone (tests, incast) ------------------------- */

/* A counter file's value: false for "N/A (no PMA)" and other non-numbers. */
bool ctr_parse_value(const char *text, uint64_t *out);
/* Adds every counter file of `dir` (skipping `lifespan`), through `cache`
 * when not NULL. -1: out of memory. */
int ctr_read_dir(struct ctr_cache *cache, const char *dir, enum ctr_src src,
		 struct ctr_set *set);
/* IpExt ECN counters of PROC/net/netstat; -1 with errno when unreadable. */
int ctr_read_netstat(const char *proc_root, struct ctr_set *set);
/* ethtool -S of IFACE in the caller's network namespace: 0 (no stats is
 * not an error), or -1 with `err` set (errno ENOMEM: out of memory). */
int ctr_read_ethtool(const char *ifname, struct ctr_set *set, char *err, size_t errlen);

/* The order of ports in a snapshot: RDMA (device, port), then interfaces. */
int ctr_port_order(const struct ctr_port *a, const struct ctr_port *b);

/* Adds one counter (name copied); NULL when out of memory. */
struct ctr_counter *ctr_set_add(struct ctr_set *s, enum ctr_src src, const char *name,
				uint64_t value);
void ctr_set_sort(struct ctr_set *s);
/* Appends every counter of src to dst (names copied): 0, or -1 when out of
 * memory (what was appended stays). */
int ctr_set_copy(struct ctr_set *dst, const struct ctr_set *src);
void ctr_set_free(struct ctr_set *s);

/* The most recent `n` rates of a counter's history, oldest first. */
size_t ctr_hist_get(const struct ctr_hist *h, float *out, size_t n);

const char *ctr_src_name(enum ctr_src src);

#endif
