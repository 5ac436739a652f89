/* SPDX-License-Identifier: MIT */
/*
 * Endace ERF records (LINKTYPE_ERF), as ibdump and DAG cards write native
 * InfiniBand: a 16-byte header, optional 8-byte extension headers, then
 * the packet (Ethernet types add 2 bytes of padding first).
 */
#ifndef RDMAKIT_ERF_H
#define RDMAKIT_ERF_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

enum {
	ERF_TYPE_ETH = 2,
	ERF_TYPE_COLOR_ETH = 10,
	ERF_TYPE_DSM_COLOR_ETH = 16,
	ERF_TYPE_INFINIBAND = 21,
	ERF_TYPE_IPV4 = 22,
	ERF_TYPE_IPV6 = 23,
	ERF_TYPE_INFINIBAND_LINK = 25,
	ERF_TYPE_COLOR_HASH_ETH = 48,
};

struct erf_inner {
	size_t off;		/* where the packet starts in the record */
	size_t len;		/* captured bytes of the packet */
	size_t wire_len;	/* its length on the wire, from the ERF wlen */
	enum wire_link link;
	uint8_t type;		/* ERF record type, extension bit cleared */
};

/* 0 and *in filled; -1 for a short, malformed or unsupported record. */
int erf_unwrap(const uint8_t *rec, size_t caplen, struct erf_inner *in);

#endif
