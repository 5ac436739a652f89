/* SPDX-License-Identifier: MIT */
/*
 * CRC engines behind the RoCEv2/InfiniBand ICRC and the InfiniBand VCRC.
 *
 * crc32_ieee() is the IEEE 802.3 CRC-32 (reflected, poly 0x04C11DB7, init
 * and xorout 0xFFFFFFFF), bit-for-bit the same as zlib's crc32(), including
 * how it chains: crc32_ieee(crc32_ieee(0, a, n), b, m) is the CRC of a||b,
 * and 0 is the starting value.  It dispatches at run time to a PCLMULQDQ
 * folding implementation when the CPU has it, else to a slicing-by-8 table.
 *
 * Pure functions: no allocation, no I/O, any buffer alignment, and safe to
 * call from any thread (the dispatch decision is an atomically published
 * function pointer).  len == 0 returns crc unchanged; buf may then be NULL.
 */
#ifndef RDMAKIT_CRC32_H
#define RDMAKIT_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len);

/* The portable table-driven implementation; always available. */
uint32_t crc32_ieee_portable(uint32_t crc, const void *buf, size_t len);

/*
 * Carry-less-multiply folding implementation.  Only valid when
 * crc32_have_clmul() is true; on non-x86 builds it is the portable code.
 */
uint32_t crc32_ieee_clmul(uint32_t crc, const void *buf, size_t len);

/* Run-time CPUID check for PCLMULQDQ and SSE4.1. */
int crc32_have_clmul(void);

/* "pclmulqdq" or "portable": what crc32_ieee() dispatches to. */
const char *crc32_impl_name(void);

/*
 * InfiniBand VCRC: CRC-16, poly 0x100B, reflected input and output, init
 * 0xFFFF, xorout 0xFFFF.  Returns the final value (after xorout).
 */
uint16_t crc16_ib_vcrc(const void *buf, size_t len);

#endif
