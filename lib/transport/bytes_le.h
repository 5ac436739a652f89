/* SPDX-License-Identifier: MIT */
/*
 * The one little-endian reader.  Everything on the wire is big-endian
 * (wire.h's wire_get*) except the ICRC, which travels least significant
 * byte first.
 * A leaf header, usable below wire.h.
 */
#ifndef RDMAKIT_BYTES_LE_H
#define RDMAKIT_BYTES_LE_H

#include <stdint.h>

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
