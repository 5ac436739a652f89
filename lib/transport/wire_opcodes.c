// SPDX-License-Identifier: MIT
/*
 * The one opcode table: every BTH opcode the IBTA defines (RC, UC, RD, UD,
 * XRC) plus the RoCEv2 CNP, with the extended headers that follow the BTH
 * and whether a payload does.  Names follow the IBTA/Wireshark spelling.
 */
#include "wire.h"

#define X(bits) ((uint16_t)(bits))
#define RDETH WIRE_X_RDETH
#define DETH WIRE_X_DETH
#define XRCETH WIRE_X_XRCETH
#define FETH WIRE_X_FETH
#define RETH WIRE_X_RETH
#define ATOMICETH WIRE_X_ATOMICETH
#define AETH WIRE_X_AETH
#define ATOMICACKETH WIRE_X_ATOMICACKETH
#define IMMDT WIRE_X_IMMDT
#define IETH WIRE_X_IETH

#define OP(base, tr, prefix, n, ext, pl, name) \
	[(base) + (n)] = { (base) + (n), (tr), X(ext), (pl), prefix name }

/* Reliable and unreliable connected: identical layouts for what UC has. */
#define RC(n, ext, pl, name) OP(0x00, WIRE_TR_RC, "RC ", n, ext, pl, name)
#define UC(n, ext, pl, name) OP(0x20, WIRE_TR_UC, "UC ", n, ext, pl, name)
/* Reliable datagram: requests carry RDETH+DETH, responses RDETH. */
#define RD(n, ext, pl, name) OP(0x40, WIRE_TR_RD, "RD ", n, RDETH | (ext), pl, name)
/* XRC: requests carry XRCETH right after the BTH, responses do not. */
#define XRC(n, ext, pl, name) OP(0xA0, WIRE_TR_XRC, "XRC ", n, ext, pl, name)

static const struct wire_opcode_info opcode_table[256] = {
	RC(0x00, 0, true, "Send First"),
	RC(0x01, 0, true, "Send Middle"),
	RC(0x02, 0, true, "Send Last"),
	RC(0x03, IMMDT, true, "Send Last Immediate"),
	RC(0x04, 0, true, "Send Only"),
	RC(0x05, IMMDT, true, "Send Only Immediate"),
	RC(0x06, RETH, true, "RDMA Write First"),
	RC(0x07, 0, true, "RDMA Write Middle"),
	RC(0x08, 0, true, "RDMA Write Last"),
	RC(0x09, IMMDT, true, "RDMA Write Last Immediate"),
	RC(0x0A, RETH, true, "RDMA Write Only"),
	RC(0x0B, RETH | IMMDT, true, "RDMA Write Only Immediate"),
	RC(0x0C, RETH, false, "RDMA Read Request"),
	RC(0x0D, AETH, true, "RDMA Read Response First"),
	RC(0x0E, 0, true, "RDMA Read Response Middle"),
	RC(0x0F, AETH, true, "RDMA Read Response Last"),
	RC(0x10, AETH, true, "RDMA Read Response Only"),
	RC(0x11, AETH, false, "Acknowledge"),
	RC(0x12, AETH | ATOMICACKETH, false, "Atomic Acknowledge"),
	RC(0x13, ATOMICETH, false, "Compare Swap"),
	RC(0x14, ATOMICETH, false, "Fetch Add"),
	RC(0x16, IETH, true, "Send Last Invalidate"),
	RC(0x17, IETH, true, "Send Only Invalidate"),
	RC(0x1C, FETH | RETH, false, "Flush"),
	RC(0x1D, RETH, true, "Atomic Write"),

	UC(0x00, 0, true, "Send First"),
	UC(0x01, 0, true, "Send Middle"),
	UC(0x02, 0, true, "Send Last"),
	UC(0x03, IMMDT, true, "Send Last Immediate"),
	UC(0x04, 0, true, "Send Only"),
	UC(0x05, IMMDT, true, "Send Only Immediate"),
	UC(0x06, RETH, true, "RDMA Write First"),
	UC(0x07, 0, true, "RDMA Write Middle"),
	UC(0x08, 0, true, "RDMA Write Last"),
	UC(0x09, IMMDT, true, "RDMA Write Last Immediate"),
	UC(0x0A, RETH, true, "RDMA Write Only"),
	UC(0x0B, RETH | IMMDT, true, "RDMA Write Only Immediate"),

	RD(0x00, DETH, true, "Send First"),
	RD(0x01, DETH, true, "Send Middle"),
	RD(0x02, DETH, true, "Send Last"),
	RD(0x03, DETH | IMMDT, true, "Send Last Immediate"),
	RD(0x04, DETH, true, "Send Only"),
	RD(0x05, DETH | IMMDT, true, "Send Only Immediate"),
	RD(0x06, DETH | RETH, true, "RDMA Write First"),
	RD(0x07, DETH, true, "RDMA Write Middle"),
	RD(0x08, DETH, true, "RDMA Write Last"),
	RD(0x09, DETH | IMMDT, true, "RDMA Write Last Immediate"),
	RD(0x0A, DETH | RETH, true, "RDMA Write Only"),
	RD(0x0B, DETH | RETH | IMMDT, true, "RDMA Write Only Immediate"),
	RD(0x0C, DETH | RETH, false, "RDMA Read Request"),
	RD(0x0D, AETH, true, "RDMA Read Response First"),
	RD(0x0E, 0, true, "RDMA Read Response Middle"),
	RD(0x0F, AETH, true, "RDMA Read Response Last"),
	RD(0x10, AETH, true, "RDMA Read Response Only"),
	RD(0x11, AETH, false, "Acknowledge"),
	RD(0x12, AETH | ATOMICACKETH, false, "Atomic Acknowledge"),
	RD(0x13, DETH | ATOMICETH, false, "Compare Swap"),
	RD(0x14, DETH | ATOMICETH, false, "Fetch Add"),
	RD(0x15, DETH, false, "RESYNC"),

	OP(0x60, WIRE_TR_UD, "UD ", 0x04, DETH, true, "Send Only"),
	OP(0x60, WIRE_TR_UD, "UD ", 0x05, DETH | IMMDT, true, "Send Only Immediate"),

	/* RoCEv2 Congestion Notification Packet (Annex A17.9.3). */
	[OP_CNP] = { OP_CNP, WIRE_TR_CNP, X(WIRE_X_CNP_RSVD), false, "CNP" },

	XRC(0x00, XRCETH, true, "Send First"),
	XRC(0x01, XRCETH, true, "Send Middle"),
	XRC(0x02, XRCETH, true, "Send Last"),
	XRC(0x03, XRCETH | IMMDT, true, "Send Last Immediate"),
	XRC(0x04, XRCETH, true, "Send Only"),
	XRC(0x05, XRCETH | IMMDT, true, "Send Only Immediate"),
	XRC(0x06, XRCETH | RETH, true, "RDMA Write First"),
	XRC(0x07, XRCETH, true, "RDMA Write Middle"),
	XRC(0x08, XRCETH, true, "RDMA Write Last"),
	XRC(0x09, XRCETH | IMMDT, true, "RDMA Write Last Immediate"),
	XRC(0x0A, XRCETH | RETH, true, "RDMA Write Only"),
	XRC(0x0B, XRCETH | RETH | IMMDT, true, "RDMA Write Only Immediate"),
	XRC(0x0C, XRCETH | RETH, false, "RDMA Read Request"),
	XRC(0x0D, AETH, true, "RDMA Read Response First"),
	XRC(0x0E, 0, true, "RDMA Read Response Middle"),
	XRC(0x0F, AETH, true, "RDMA Read Response Last"),
	XRC(0x10, AETH, true, "RDMA Read Response Only"),
	XRC(0x11, AETH, false, "Acknowledge"),
	XRC(0x12, AETH | ATOMICACKETH, false, "Atomic Acknowledge"),
	XRC(0x13, XRCETH | ATOMICETH, false, "Compare Swap"),
	XRC(0x14, XRCETH | ATOMICETH, false, "Fetch Add"),
	XRC(0x16, XRCETH | IETH, true, "Send Last Invalidate"),
	XRC(0x17, XRCETH | IETH, true, "Send Only Invalidate"),
	XRC(0x1C, XRCETH | FETH | RETH, false, "Flush"),
	XRC(0x1D, XRCETH | RETH, true, "Atomic Write"),
};

const struct wire_opcode_info *wire_opcode_info(uint8_t opcode)
{
	const struct wire_opcode_info *info = &opcode_table[opcode];

	return info->name ? info : NULL;
}

const char *wire_opcode_name(uint8_t opcode)
{
	return opcode_table[opcode].name;
}

static const struct {
	const char *name;
	uint8_t len;
} ext_headers[WIRE_X_COUNT] = {
	{ "RDETH", WIRE_RDETH_LEN },
	{ "DETH", WIRE_DETH_LEN },
	{ "XRCETH", WIRE_XRCETH_LEN },
	{ "FETH", WIRE_FETH_LEN },
	{ "RETH", WIRE_RETH_LEN },
	{ "AtomicETH", WIRE_ATOMICETH_LEN },
	{ "AETH", WIRE_AETH_LEN },
	{ "AtomicAckETH", WIRE_ATOMICACKETH_LEN },
	{ "ImmDt", WIRE_IMMDT_LEN },
	{ "IETH", WIRE_IETH_LEN },
	{ "CNP reserved", WIRE_CNP_RSVD_LEN },
};

const char *wire_ext_name(enum wire_ext bit)
{
	for (int i = 0; i < WIRE_X_COUNT; i++)
		if ((unsigned)bit == 1u << i)
			return ext_headers[i].name;
	return NULL;
}

size_t wire_ext_len(uint16_t ext)
{
	size_t len = 0;
	unsigned left = ext & ((1u << WIRE_X_COUNT) - 1);

	/* Only the bits that are set: every packet the engine sends and
	 * receives asks this a few times, most with one or two bits. */
	for (; left; left &= left - 1)
		len += ext_headers[__builtin_ctz(left)].len;
	return len;
}

const char *wire_transport_name(enum wire_transport t)
{
	static const char *const names[] = {
		[WIRE_TR_RC] = "RC", [WIRE_TR_UC] = "UC", [WIRE_TR_RD] = "RD",
		[WIRE_TR_UD] = "UD", [WIRE_TR_CNP] = "CNP", [WIRE_TR_XRC] = "XRC",
	};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) && names[t] ?
		names[t] : "reserved";
}
