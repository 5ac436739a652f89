// SPDX-License-Identifier: MIT
/* ERF record unwrapping; bounds-checked against the captured length. */
#include "erf.h"

#define ERF_HDR_LEN 16
#define ERF_EXT_LEN 8
#define ERF_EXT_MORE 0x80
#define ERF_ETH_PAD 2

int erf_unwrap(const uint8_t *rec, size_t caplen, struct erf_inner *in)
{
	size_t off = ERF_HDR_LEN;
	uint8_t type;
	bool more;

	if (caplen < ERF_HDR_LEN)
		return -1;
	type = rec[8];
	more = type & ERF_EXT_MORE;
	while (more) {
		if (caplen < off + ERF_EXT_LEN)
			return -1;
		more = rec[off] & ERF_EXT_MORE;
		off += ERF_EXT_LEN;
	}
	in->type = type & 0x7F;
	in->wire_len = wire_get16(rec + 14);
	switch (in->type) {
	case ERF_TYPE_INFINIBAND:
	case ERF_TYPE_INFINIBAND_LINK:
		in->link = WIRE_LINK_IB;
		break;
	case ERF_TYPE_IPV4:
	case ERF_TYPE_IPV6:
		in->link = WIRE_LINK_IP;
		break;
	case ERF_TYPE_ETH:
	case ERF_TYPE_COLOR_ETH:
	case ERF_TYPE_DSM_COLOR_ETH:
	case ERF_TYPE_COLOR_HASH_ETH:
		in->link = WIRE_LINK_ETH;
		off += ERF_ETH_PAD;
		break;
	default:
		return -1;
	}
	if (caplen < off)
		return -1;
	in->off = off;
	in->len = caplen - off;
	return 0;
}
