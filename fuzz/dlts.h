/* SPDX-License-Identifier: MIT */
/*
 * The link types the decode target picks from: its first input byte,
 * modulo the count, is an index here.  Every type cap_decode() supports,
 * plus one it does not (IEEE 802.11), numbered as pcap/dlt.h does.
 */
#ifndef RDMAKIT_FUZZ_DLTS_H
#define RDMAKIT_FUZZ_DLTS_H

static const int fuzz_dlts[] = { 1, 0, 12, 14, 108, 113, 197, 228, 229, 247, 276, 105 };
#define FUZZ_NDLTS ((int)(sizeof(fuzz_dlts) / sizeof(fuzz_dlts[0])))

#endif
