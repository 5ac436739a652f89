/* SPDX-License-Identifier: MIT */
/*
 * CRC engines behind the RoCEv2/InfiniBand ICRC and the InfiniBand VCRC.
 *
 * crc32_eth() is the IEEE 802.3 CRC-32 (reflected, poly 0x04C11DB7, init
 * and xorout 0xFFFFFFFF), bit-for-bit the same as zlib's crc32(), including
 * how it chains: crc32_eth(crc32_eth(0, a, n), b, m) is the CRC of a||b,
 * and 0 is the starting value.  ISA-L computes it, with the fastest
 * carry-less-multiply routine this CPU has.  (Not named crc32_ieee: ISA-L
 * exports a function of that name for the non-reflected CRC.)
 *
 * Pure functions: no allocation, no I/O, any buffer alignment, and safe to
 * call from any thread.  len == 0 returns crc unchanged; buf may then be
 * NULL.
 */
#ifndef RDMAKIT_CRC32_H
#define RDMAKIT_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_eth(uint32_t crc, const void *buf, size_t len);

/* "isa-l 2.30.0": the library that computes crc32_eth(), as built. */
const char *crc32_impl_name(void);

/*
 * InfiniBand VCRC: CRC-16, poly 0x100B, reflected input and output, init
 * 0xFFFF, xorout 0xFFFF.  Returns the final value (after xorout).
 */
uint16_t crc16_ib_vcrc(const void *buf, size_t len);

#endif
