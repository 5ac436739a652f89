/* SPDX-License-Identifier: MIT */
/*
 * perftest's out-of-band TCP exchange, message by message: every encoder
 * and parser of it in this one place (the sequence lives in pt_session.c).
 * The facts are in ../shared/reference/perftest-oob.md; the section
 * numbers below point there.
 *
 * The exchange has no framing: fixed-size messages, strict ping-pong, the
 * TCP client writing first.  Integers and doubles are big-endian; the key
 * messages are lowercase ASCII hex.  Nothing here does I/O, prints or
 * exits; parsers return -1 with one line in err (XPORT_ERR_LEN bytes).
 */
#ifndef RDMAKIT_PT_WIRE_H
#define RDMAKIT_PT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_VERSION_LEN 16		/* §4: NUL-padded version text */
#define PT_VERSION_MIN 5.70		/* §4: older peers are refused by perftest */
#define PT_VERSION_NEGOTIATES 6.28	/* §7: both sides at least this: parameter struct */
#define PT_SYSDATA_LEN 4		/* §5: cycle buffer, cache line: BE int32 each */
#define PT_MTU_LEN 2			/* §6: the MTU enum as one digit and a NUL */
#define PT_KEY_LEN_GID 108		/* §8: KEY_PRINT_FMT_GID with its NUL */
#define PT_KEY_LEN 59			/* §8: KEY_PRINT_FMT (no GID; InfiniBand) */
#define PT_REPORT_FIELDS 5		/* §10: size, iters, peak, average, message rate */
#define PT_NEGOTIATE_LEN 312		/* §7: without the mlx5dv mask */
#define PT_NEGOTIATE_LEN_DV 320		/* §7: with it (the usual build) */
#define PT_DEFAULT_PORT 18515
#define PT_DONE "done"			/* §11: 6.06's trailing 5 bytes, never read */

/* §7's enums, as perftest numbers them. */
enum pt_verb { PT_VERB_SEND = 0, PT_VERB_SEND_IMM, PT_VERB_WRITE, PT_VERB_WRITE_IMM,
	       PT_VERB_READ, PT_VERB_ATOMIC };
enum pt_tst { PT_TST_LAT = 0, PT_TST_BW = 1 };
enum pt_method { PT_RUN_REGULAR = 0, PT_RUN_ALL = 1, PT_RUN_INFINITELY = 2 };
enum pt_atomic { PT_CMP_AND_SWAP = 0, PT_FETCH_AND_ADD = 1 };

/* One QP's key message (§8): what the peer needs to reach it. */
struct pt_key {
	uint16_t lid, out_reads;
	uint32_t qpn, psn;		/* 24 bits each */
	uint32_t rkey;
	uint64_t vaddr;			/* where the peer's operations land */
	uint8_t gid[16];		/* network order, as union ibv_gid */
	uint32_t srqn;			/* 0 for RC */
};

/* The bandwidth report (§10), one 8-byte round trip per field. */
struct pt_report {
	uint64_t size, iters;
	double bw_peak, bw_avg, msg_rate;	/* bw: MiB/s (2^20) or Gb/s; rate: Mpps */
};

/* The first 80 bytes of perftest_parameters_negotiate (§7): 17 scalars
 * a 6.28+ peer demands to be equal. */
struct pt_negotiate {
	int32_t test_method, connection_type, verb, tst, atomic_type, test_type, report_fmt;
	uint64_t size, iters;
	int32_t aes_xts, num_of_qps, duration, use_rdma_cm, use_write_with_imm;
	int32_t no_enhanced_reorder, sig_offload, data_validation;
	/* From the device attributes that follow (raw host order there). */
	int32_t max_qp_rd_atom;
	uint32_t vendor_id;
};

/*
 * The 16-byte version message: *version its value as perftest's atof()
 * reads it, text the printable version ("6.06").  -1 when it is not a
 * NUL-terminated number.
 */
int pt_version_parse(const uint8_t b[PT_VERSION_LEN], double *version, char text[PT_VERSION_LEN],
		     char *err);
/* text NUL-padded to 16 bytes: 0, or -1 when it is not a version perftest accepts. */
int pt_version_build(const char *text, uint8_t out[PT_VERSION_LEN], char *err);

void pt_put_be32(uint8_t *p, uint32_t v);
uint32_t pt_get_be32(const uint8_t *p);
void pt_put_be64(uint8_t *p, uint64_t v);
uint64_t pt_get_be64(const uint8_t *p);

/* §6: bytes <-> IBV_MTU_* (256 = 1 ... 4096 = 5); 0 when not an MTU. */
unsigned pt_mtu_enum(uint32_t bytes);
uint32_t pt_mtu_bytes(unsigned e);
void pt_mtu_build(uint32_t bytes, uint8_t out[PT_MTU_LEN]);
/* The peer's MTU in bytes, or 0 when it is not a valid enum (then perftest keeps its own). */
uint32_t pt_mtu_parse(const uint8_t b[PT_MTU_LEN]);

/*
 * §8: a key message of exactly PT_KEY_LEN_GID (gid) or PT_KEY_LEN bytes,
 * NUL included; returns that length.
 */
size_t pt_key_build(const struct pt_key *k, bool gid, char *out);
int pt_key_parse(const char *b, size_t len, bool gid, struct pt_key *k, char *err);
/* Whether a GID is IPv4-mapped (::ffff:a.b.c.d), as perftest's family check asks. */
bool pt_gid_v4mapped(const uint8_t gid[16]);

/* §10: field i (0..4) of a report as its 8 bytes, and back. */
void pt_report_field(const struct pt_report *r, unsigned i, uint8_t out[8]);
void pt_report_set(struct pt_report *r, unsigned i, const uint8_t in[8]);

/*
 * §7: the struct of len (312 or 320) bytes: the scalars, then a device
 * attribute block in which only max_qp_rd_atom and vendor_id are filled
 * (host order, as perftest sends it), then (320) an mlx5dv mask of 0.
 */
void pt_negotiate_build(const struct pt_negotiate *n, size_t len, uint8_t *out);
void pt_negotiate_parse(const uint8_t *b, struct pt_negotiate *n);
/* The first field that differs, as perftest's compare() names it, or NULL. */
const char *pt_negotiate_mismatch(const struct pt_negotiate *a, const struct pt_negotiate *b,
				  char *why, size_t cap);

#endif
