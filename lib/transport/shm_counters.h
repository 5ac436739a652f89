/* SPDX-License-Identifier: MIT */
/*
 * The soft engine's published counters: one shared-memory segment per
 * engine, /dev/shm/rdmakit-PID-PORT, that `rdmakit top` (or any reader)
 * maps read-only.  Layout version 3:
 *
 *   struct shm_counters {
 *     magic "RKSH" (0x48534B52 little-endian), version 3,
 *     pid, nqps (used slots), seq (a seqlock: odd while writing),
 *     updated_ns (CLOCK_REALTIME), local address and UDP port, engine name,
 *     dev: struct xport_counters (the engine's totals),
 *     qps[SHM_MAX_QPS]: per QP: qpn, peer QPN, peer address and port,
 *       DCQCN rate (Gb/s; 0 when not pacing), struct xport_counters
 *   }
 *
 * Readers copy the segment, and retry while seq is odd or changed during
 * the copy (a seqlock with atomic data copies, as Boehm describes it: see
 * shm_counters.c).  Every field is host order; the segment is for this host only.
 */
#ifndef RDMAKIT_SHM_COUNTERS_H
#define RDMAKIT_SHM_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define SHM_COUNTERS_MAGIC 0x48534B52u	/* "RKSH" */
#define SHM_COUNTERS_VERSION 5	/* 2: cnps_handled; 3: rcvbuf_drops; 4: wrong_peer_drops;
				 * 5: no_recv_drops, qkey_drops, uc_msgs_cut, tx_drops */
#define SHM_MAX_QPS 1024
#define SHM_PREFIX "rdmakit-"

struct shm_qp {
	uint32_t qpn;
	uint32_t peer_qpn;
	uint8_t peer_ip[16];		/* IPv4-mapped or IPv6 */
	uint16_t peer_port;
	uint16_t used;
	uint32_t pad;
	double rate_gbps;		/* DCQCN current rate; 0: not pacing */
	struct xport_counters c;
};

struct shm_counters {
	uint32_t magic;
	uint32_t version;
	uint32_t pid;
	uint32_t nqps;
	uint64_t seq;
	uint64_t updated_ns;
	uint8_t local_ip[16];
	uint16_t local_port;
	char engine[14];
	struct xport_counters dev;
	struct shm_qp qps[SHM_MAX_QPS];
};

struct shm_publisher;

/* Creates the segment (NULL if shared memory is unavailable: not fatal). */
struct shm_publisher *shm_publish_open(const uint8_t local_ip[16], uint16_t port);
/* The writer's copy to fill (fields keep their values between rounds);
 * end publishes it under the seqlock (shm_counters.c says how). */
struct shm_counters *shm_publish_begin(struct shm_publisher *p);
void shm_publish_end(struct shm_publisher *p);
/* One attempt at a consistent copy of a mapped segment: false if a write
 * overlapped it (try again). */
bool shm_read_consistent(const struct shm_counters *a, struct shm_counters *out);
void shm_publish_close(struct shm_publisher *p);
/* The shared segment itself, read-only (for tests of the reader path). */
const struct shm_counters *shm_publisher_area(const struct shm_publisher *p);

/*
 * Reads every live engine's segment from dir (normally "/dev/shm").
 * Segments of processes that no longer exist are skipped.  Returns how
 * many were copied into out (at most cap).
 */
size_t shm_read_all(const char *dir, struct shm_counters *out, size_t cap);

#endif
