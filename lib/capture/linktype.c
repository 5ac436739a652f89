// SPDX-License-Identifier: MIT
/* Link-layer framing per pcap link type; see linktype.h. */
#include <string.h>

#include "erf.h"
#include "linktype.h"

/* Values from pcap/dlt.h, spelled out so this file stays pure. */
enum {
	DLT_NULL_ = 0,
	DLT_EN10MB_ = 1,
	DLT_RAW_ = 12,		/* OpenBSD/Linux DLT_RAW */
	DLT_RAW_ALT_ = 14,	/* DLT_RAW on some BSDs */
	DLT_LOOP_ = 108,
	DLT_LINUX_SLL_ = 113,
	DLT_ERF_ = 197,
	DLT_IPV4_ = 228,
	DLT_IPV6_ = 229,
	DLT_INFINIBAND_ = 247,
	DLT_LINUX_SLL2_ = 276,
};

#define SLL_LEN 16
#define SLL2_LEN 20
#define NULL_LEN 4

static const struct {
	int dlt;
	const char *name;
} dlts[] = {
	{ DLT_NULL_, "BSD loopback" },
	{ DLT_EN10MB_, "Ethernet" },
	{ DLT_RAW_, "raw IP" },
	{ DLT_RAW_ALT_, "raw IP" },
	{ DLT_LOOP_, "OpenBSD loopback" },
	{ DLT_LINUX_SLL_, "Linux cooked (SLL)" },
	{ DLT_ERF_, "ERF" },
	{ DLT_IPV4_, "raw IPv4" },
	{ DLT_IPV6_, "raw IPv6" },
	{ DLT_INFINIBAND_, "InfiniBand" },
	{ DLT_LINUX_SLL2_, "Linux cooked v2 (SLL2)" },
};

bool cap_dlt_supported(int dlt)
{
	return cap_dlt_name(dlt) != NULL;
}

const char *cap_dlt_name(int dlt)
{
	for (size_t i = 0; i < sizeof(dlts) / sizeof(dlts[0]); i++)
		if (dlts[i].dlt == dlt)
			return dlts[i].name;
	return NULL;
}

/* What follows an Ethertype-style protocol field. */
static bool link_for_ethertype(uint16_t type, enum wire_link *link)
{
	switch (type) {
	case ETHERTYPE_IPV4:
	case ETHERTYPE_IPV6:
		*link = WIRE_LINK_IP;
		return true;
	case ETHERTYPE_ROCEV1:
		*link = WIRE_LINK_GRH;
		return true;
	}
	return false;
}

/* BSD loopback: a 4-byte address family, in the capturing host's order. */
static bool link_for_af(const uint8_t *h, enum wire_link *link)
{
	uint32_t le = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
	uint32_t be = wire_get32(h);

	/* AF_INET is 2 everywhere; AF_INET6 is 10, 24, 28 or 30 by OS. */
	for (int i = 0; i < 2; i++) {
		uint32_t af = i ? be : le;

		if (af == 2 || af == 10 || af == 24 || af == 28 || af == 30) {
			*link = WIRE_LINK_IP;
			return true;
		}
	}
	return false;
}

void cap_decode(int dlt, const uint8_t *rec, size_t caplen, uint16_t roce_port,
		struct cap_decoded *out)
{
	enum wire_link link = WIRE_LINK_ETH;
	size_t off = 0, len = caplen;
	struct erf_inner erf;

	memset(out, 0, sizeof(*out));
	out->status = WIRE_TRUNCATED;
	switch (dlt) {
	case DLT_EN10MB_:
		break;
	case DLT_RAW_:
	case DLT_RAW_ALT_:
	case DLT_IPV4_:
	case DLT_IPV6_:
		link = WIRE_LINK_IP;
		break;
	case DLT_INFINIBAND_:
		link = WIRE_LINK_IB;
		break;
	case DLT_LINUX_SLL_:
		if (caplen < SLL_LEN)
			return;
		if (!link_for_ethertype(wire_get16(rec + 14), &link))
			goto not_rdma;
		off = SLL_LEN;
		break;
	case DLT_LINUX_SLL2_:
		if (caplen < SLL2_LEN)
			return;
		if (!link_for_ethertype(wire_get16(rec), &link))
			goto not_rdma;
		off = SLL2_LEN;
		break;
	case DLT_NULL_:
	case DLT_LOOP_:
		if (caplen < NULL_LEN)
			return;
		if (!link_for_af(rec, &link))
			goto not_rdma;
		off = NULL_LEN;
		break;
	case DLT_ERF_:
		if (erf_unwrap(rec, caplen, &erf)) {
			out->status = WIRE_MALFORMED;
			return;
		}
		off = erf.off;
		link = erf.link;
		break;
	default:
		goto not_rdma;
	}
	len = caplen - off;
	out->link_ok = true;
	out->frame_off = off;
	out->status = wire_decode(&out->pkt, rec + off, len, link, roce_port);
	return;
not_rdma:
	out->link_ok = true;
	out->status = WIRE_NOT_RDMA;
}
