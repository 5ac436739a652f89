/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 / RoCEv1 / InfiniBand wire codec.
 *
 * Pure functions: no I/O, no allocation, no printing.  Decoding never reads
 * outside [buf, buf + caplen); every header read is bounds-checked first.
 * Multi-byte fields are kept in host order in the structs below; addresses
 * and GIDs stay as byte arrays in network order.
 *
 * Layout facts (IBTA vol. 1 ch. 9 and Annex A16/A17):
 *   RoCEv2: [Eth [802.1Q..]] IPv4|IPv6, UDP (dst 4791), BTH, ext hdrs, payload, pad, ICRC
 *   RoCEv1: Eth [802.1Q..] Ethertype 0x8915, GRH, BTH, ..., ICRC
 *   IB:     LRH [GRH], BTH, ..., ICRC, VCRC
 * The ICRC's position comes from the IP/UDP (or GRH, or LRH PktLen) length
 * fields, never from the end of the captured frame.
 */
#ifndef RDMAKIT_WIRE_H
#define RDMAKIT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCEV2_UDP_PORT 4791
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86DD
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88A8
#define ETHERTYPE_ROCEV1 0x8915
#define WIRE_DEFAULT_PKEY 0xFFFF

/* Header sizes in bytes. */
enum {
	WIRE_ETH_LEN = 14,
	WIRE_VLAN_LEN = 4,
	WIRE_IPV4_LEN = 20,	/* without options */
	WIRE_IPV6_LEN = 40,
	WIRE_UDP_LEN = 8,
	WIRE_LRH_LEN = 8,
	WIRE_GRH_LEN = 40,
	WIRE_BTH_LEN = 12,
	WIRE_RDETH_LEN = 4,
	WIRE_DETH_LEN = 8,
	WIRE_XRCETH_LEN = 4,
	WIRE_FETH_LEN = 4,
	WIRE_RETH_LEN = 16,
	WIRE_ATOMICETH_LEN = 28,
	WIRE_AETH_LEN = 4,
	WIRE_ATOMICACKETH_LEN = 8,
	WIRE_IMMDT_LEN = 4,
	WIRE_IETH_LEN = 4,
	WIRE_CNP_RSVD_LEN = 16,
	WIRE_ICRC_LEN = 4,
	WIRE_VCRC_LEN = 2,
};

/* ECN codepoints (low two bits of the IPv4 ToS / IPv6 traffic class). */
enum wire_ecn { WIRE_NOT_ECT = 0, WIRE_ECT1 = 1, WIRE_ECT0 = 2, WIRE_CE = 3 };

/* Transport service: the top three bits of the BTH opcode. */
enum wire_transport {
	WIRE_TR_RC = 0,
	WIRE_TR_UC = 1,
	WIRE_TR_RD = 2,
	WIRE_TR_UD = 3,
	WIRE_TR_CNP = 4,
	WIRE_TR_XRC = 5,
};

/* Extended transport headers, as bits; they always appear in this order. */
enum wire_ext {
	WIRE_X_RDETH = 1u << 0,
	WIRE_X_DETH = 1u << 1,
	WIRE_X_XRCETH = 1u << 2,
	WIRE_X_FETH = 1u << 3,
	WIRE_X_RETH = 1u << 4,
	WIRE_X_ATOMICETH = 1u << 5,
	WIRE_X_AETH = 1u << 6,
	WIRE_X_ATOMICACKETH = 1u << 7,
	WIRE_X_IMMDT = 1u << 8,
	WIRE_X_IETH = 1u << 9,
	WIRE_X_CNP_RSVD = 1u << 10,
	WIRE_X_COUNT = 11,
};

/* Well-known opcodes used by the engine and tests (RC unless noted). */
enum wire_opcode {
	OP_RC_SEND_FIRST = 0x00,
	OP_RC_SEND_MIDDLE = 0x01,
	OP_RC_SEND_LAST = 0x02,
	OP_RC_SEND_LAST_IMM = 0x03,
	OP_RC_SEND_ONLY = 0x04,
	OP_RC_SEND_ONLY_IMM = 0x05,
	OP_RC_WRITE_FIRST = 0x06,
	OP_RC_WRITE_MIDDLE = 0x07,
	OP_RC_WRITE_LAST = 0x08,
	OP_RC_WRITE_LAST_IMM = 0x09,
	OP_RC_WRITE_ONLY = 0x0A,
	OP_RC_WRITE_ONLY_IMM = 0x0B,
	OP_RC_READ_REQUEST = 0x0C,
	OP_RC_READ_RESPONSE_FIRST = 0x0D,
	OP_RC_READ_RESPONSE_MIDDLE = 0x0E,
	OP_RC_READ_RESPONSE_LAST = 0x0F,
	OP_RC_READ_RESPONSE_ONLY = 0x10,
	OP_RC_ACK = 0x11,
	OP_RC_ATOMIC_ACK = 0x12,
	OP_RC_CMP_SWAP = 0x13,
	OP_RC_FETCH_ADD = 0x14,
	OP_RC_SEND_LAST_INV = 0x16,
	OP_RC_SEND_ONLY_INV = 0x17,
	OP_RC_FLUSH = 0x1C,
	OP_RC_ATOMIC_WRITE = 0x1D,
	OP_UD_SEND_ONLY = 0x64,
	OP_UD_SEND_ONLY_IMM = 0x65,
	OP_CNP = 0x81,
};

struct wire_opcode_info {
	uint8_t opcode;
	uint8_t transport;	/* enum wire_transport */
	uint16_t ext;		/* enum wire_ext bits, in wire order */
	bool payload;		/* carries a data payload */
	const char *name;	/* IBTA/Wireshark spelling: "RC Send First" */
};

/* NULL for an opcode the IBTA does not define. */
const struct wire_opcode_info *wire_opcode_info(uint8_t opcode);
/* Name of an opcode, "Unknown (0xNN)" style is left to callers: NULL if undefined. */
const char *wire_opcode_name(uint8_t opcode);
/* Name of an extended header bit ("RETH"). */
const char *wire_ext_name(enum wire_ext bit);
/* Size of all extended headers in a mask. */
size_t wire_ext_len(uint16_t ext);
const char *wire_transport_name(enum wire_transport t);

struct wire_eth {
	uint8_t dst[6];
	uint8_t src[6];
	uint16_t ethertype;	/* the one after any VLAN tags */
};

struct wire_vlan {
	uint16_t tpid;		/* 0x8100 or 0x88A8 */
	uint8_t pcp;
	bool dei;
	uint16_t vid;
};

struct wire_ipv4 {
	uint8_t ihl;		/* header length in bytes */
	uint8_t dscp;
	uint8_t ecn;
	uint16_t total_len;
	uint16_t id;
	uint16_t frag;		/* flags and fragment offset */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint8_t src[4];
	uint8_t dst[4];
};

struct wire_ipv6 {
	uint8_t dscp;
	uint8_t ecn;
	uint32_t flow_label;
	uint16_t payload_len;
	uint8_t next_header;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
};

struct wire_udp {
	uint16_t sport;
	uint16_t dport;
	uint16_t len;
	uint16_t csum;
};

struct wire_lrh {
	uint8_t vl;
	uint8_t lver;
	uint8_t sl;
	uint8_t lnh;		/* 0 raw, 1 IPv6, 2 IBA local (BTH), 3 IBA global (GRH) */
	uint16_t dlid;
	uint16_t pkt_len;	/* in 4-byte words, LRH through ICRC */
	uint16_t slid;
};

struct wire_grh {
	uint8_t ipver;
	uint8_t tclass;
	uint32_t flow_label;
	uint16_t paylen;	/* bytes after the GRH through the ICRC */
	uint8_t nxthdr;		/* 0x1B: IBA transport */
	uint8_t hoplmt;
	uint8_t sgid[16];
	uint8_t dgid[16];
};

struct wire_bth {
	uint8_t opcode;
	bool se;		/* solicited event */
	bool mig;		/* MigReq */
	uint8_t padcnt;
	uint8_t tver;
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint8_t resv6;		/* the six reserved bits of byte 4 */
	uint32_t dqpn;		/* 24 bits */
	bool ackreq;
	uint8_t resv7;
	uint32_t psn;		/* 24 bits */
};

struct wire_rdeth { uint32_t eecnxt; };
struct wire_deth { uint32_t qkey; uint32_t srcqp; };
struct wire_xrceth { uint32_t xrcsrq; };
struct wire_feth { uint8_t sel; uint8_t placement; };	/* FLUSH selectivity and placement type */
struct wire_reth { uint64_t va; uint32_t rkey; uint32_t dmalen; };
struct wire_atomiceth { uint64_t va; uint32_t rkey; uint64_t swap_add; uint64_t compare; };
struct wire_aeth { uint8_t syndrome; uint32_t msn; };
struct wire_atomicacketh { uint64_t orig; };

/* What a decoded frame contained. */
enum wire_layer {
	WIRE_L_ETH = 1u << 0,
	WIRE_L_VLAN = 1u << 1,
	WIRE_L_IPV4 = 1u << 2,
	WIRE_L_IPV6 = 1u << 3,
	WIRE_L_UDP = 1u << 4,
	WIRE_L_LRH = 1u << 5,
	WIRE_L_GRH = 1u << 6,
	WIRE_L_BTH = 1u << 7,
};

enum wire_encap {
	WIRE_ENCAP_NONE = 0,
	WIRE_ENCAP_ROCEV2,
	WIRE_ENCAP_ROCEV1,
	WIRE_ENCAP_IB,
};

/* Where a frame starts. */
enum wire_link {
	WIRE_LINK_ETH,		/* Ethernet II */
	WIRE_LINK_IP,		/* raw IPv4 or IPv6, by the version nibble */
	WIRE_LINK_IB,		/* native InfiniBand: LRH first */
	WIRE_LINK_GRH,		/* RoCEv1 without its Ethernet header: GRH first */
	WIRE_LINK_BTH,		/* a UDP payload: BTH first, ICRC last */
};

enum wire_status {
	WIRE_OK = 0,
	WIRE_NOT_RDMA,		/* well-formed, but not RoCE/IB transport */
	WIRE_TRUNCATED,		/* a header is cut short by the capture */
	WIRE_MALFORMED,		/* length fields disagree or are impossible */
};

const char *wire_status_str(enum wire_status s);

#define WIRE_MAX_VLAN 2

struct wire_pkt {
	uint32_t layers;	/* enum wire_layer bits */
	enum wire_encap encap;
	struct wire_eth eth;
	struct wire_vlan vlan[WIRE_MAX_VLAN];
	uint8_t nvlan;
	struct wire_ipv4 ip4;
	struct wire_ipv6 ip6;
	struct wire_udp udp;
	struct wire_lrh lrh;
	struct wire_grh grh;
	struct wire_bth bth;	/* from here on: what wire_decode_bth() writes */
	const struct wire_opcode_info *op;	/* NULL: opcode undefined */
	uint16_t ext;				/* extended headers present */
	struct wire_rdeth rdeth;
	struct wire_deth deth;
	struct wire_xrceth xrceth;
	struct wire_feth feth;
	struct wire_reth reth;
	struct wire_atomiceth atomiceth;
	struct wire_aeth aeth;
	struct wire_atomicacketh atomicacketh;
	uint32_t immdt;		/* host order of the 4 wire bytes */
	uint32_t ieth;		/* rkey to invalidate */

	/* Offsets from the start of the frame. */
	size_t icrc_start;	/* first byte the ICRC covers (IP hdr, GRH or LRH) */
	size_t bth_off;
	size_t payload_off;
	size_t payload_len;	/* excluding pad and ICRC */
	size_t icrc_off;	/* where the ICRC is, from length fields */
	size_t frame_len;	/* end of the packet per length fields */
	bool cut;		/* the capture ended before frame_len */
	uint32_t icrc;		/* stored ICRC, when !cut */
	uint16_t vcrc;		/* stored VCRC (IB only), when !cut */
};

/*
 * Decode one frame.  `roce_port` is the UDP port that marks RoCEv2
 * (normally 4791): the destination port is tried first, then the source.
 * On WIRE_OK the BTH and everything its opcode calls for were decoded;
 * payload/ICRC may still lie beyond the captured bytes (p->cut).
 */
enum wire_status wire_decode(struct wire_pkt *p, const uint8_t *buf,
			     size_t caplen, enum wire_link link,
			     uint16_t roce_port);

/* Decode from the BTH of a UDP payload of `len` bytes (ICRC last).  Writes
 * `layers`, `encap` and the fields from `bth` on; the frame layers before
 * the BTH (eth .. grh) are not in `buf` and are left untouched. */
enum wire_status wire_decode_bth(struct wire_pkt *p, const uint8_t *buf,
				 size_t len);

/* AETH syndrome. */
enum wire_aeth_kind { WIRE_AETH_ACK, WIRE_AETH_RNR_NAK, WIRE_AETH_RESERVED, WIRE_AETH_NAK };
enum wire_nak_code {
	WIRE_NAK_PSN_SEQ_ERR = 0,
	WIRE_NAK_INVALID_REQ = 1,
	WIRE_NAK_REMOTE_ACCESS_ERR = 2,
	WIRE_NAK_REMOTE_OP_ERR = 3,
	WIRE_NAK_INVALID_RD_REQ = 4,
};
#define WIRE_AETH_CREDITS_INVALID 31

static inline enum wire_aeth_kind wire_aeth_kind(uint8_t syndrome)
{
	return (enum wire_aeth_kind)((syndrome >> 5) & 3);
}
static inline uint8_t wire_aeth_value(uint8_t syndrome) { return syndrome & 0x1F; }
static inline uint8_t wire_aeth_make(enum wire_aeth_kind k, uint8_t value)
{
	return (uint8_t)(((unsigned)k << 5) | (value & 0x1F));
}
/* Credits an ACK's credit code stands for; -1 for code 31 (invalid / no flow control). */
int wire_aeth_credits(uint8_t code);
/* RNR NAK timer code -> microseconds (code 0 is 655.36 ms). */
uint32_t wire_rnr_timer_us(uint8_t code);
/* Smallest timer code whose delay is >= us (for building RNR NAKs). */
uint8_t wire_rnr_timer_code(uint32_t us);
/* "PSN sequence error", ... ; NULL for a reserved code. */
const char *wire_nak_name(uint8_t code);
/* Short text for a syndrome, e.g. "ACK credits 31", "RNR NAK 0.64 ms", "NAK remote access error". */
size_t wire_aeth_describe(char *out, size_t cap, uint8_t syndrome);

/* PSN arithmetic on the 24-bit circle. */
#define WIRE_PSN_MASK 0xFFFFFFu
static inline uint32_t wire_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & WIRE_PSN_MASK;
}
/* Signed distance a - b, in (-2^23, 2^23]. */
static inline int32_t wire_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & WIRE_PSN_MASK;
	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

/*
 * Encoding.  wire_put_transport() writes BTH and the extended headers the
 * opcode calls for, from p; it returns the bytes written, or 0 when the
 * opcode is undefined or `cap` is too small.
 */
size_t wire_put_transport(uint8_t *buf, size_t cap, const struct wire_pkt *p);
/* The WIRE_BTH_LEN bytes of a BTH alone. */
void wire_put_bth(uint8_t *buf, const struct wire_bth *b);

/*
 * Build a whole frame as p->encap and p->layers describe it:
 *   ROCEV2: [ETH [VLAN..]] IPv4|IPv6 (by p->layers) UDP(dport p->udp.dport)
 *   ROCEV1: ETH [VLAN..] GRH
 *   IB:     LRH [GRH when lrh.lnh == 3]
 * then BTH (padcnt computed from len), extended headers, payload, pad,
 * ICRC (and VCRC for IB).  Length fields, the IPv4 header checksum and the
 * CRCs are computed; UDP checksum is 0 as Soft-RoCE and RNICs send it.
 * Updates p's length, pad and offset fields as wire_decode would set them.
 * Returns the frame length, or 0 when it does not fit in cap.
 */
size_t wire_build(uint8_t *buf, size_t cap, struct wire_pkt *p,
		  const uint8_t *payload, size_t len);

/* The IP header of a RoCEv2 packet (UDP inside), at h: IPv4 with its
 * checksum for a total length, or IPv6 for a payload length (a zero TTL
 * or hop limit becomes 64).  UD receives carry one in their GRH area. */
void wire_put_ipv4(uint8_t *h, const struct wire_ipv4 *ip, uint16_t total);
void wire_put_ipv6(uint8_t *h, const struct wire_ipv6 *ip, uint16_t paylen);

/* Internet checksum of an IPv4 header (the csum field included as is). */
uint16_t wire_ipv4_csum(const uint8_t *hdr, size_t len);

/* Big-endian helpers shared with the capture decoder and the engine. */
static inline uint16_t wire_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t wire_get24(const uint8_t *p) { return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]; }
static inline uint32_t wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t wire_get64(const uint8_t *p)
{
	return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4);
}
static inline void wire_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wire_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v;
}
static inline void wire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void wire_put64(uint8_t *p, uint64_t v)
{
	wire_put32(p, (uint32_t)(v >> 32));
	wire_put32(p + 4, (uint32_t)v);
}

#endif
