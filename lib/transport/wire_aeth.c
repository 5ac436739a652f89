// SPDX-License-Identifier: MIT
/* AETH syndrome tables: ACK credit codes, RNR NAK timers, NAK codes (IBTA 9.7.5.2). */
#include <stdio.h>

#include "wire.h"

/* IBTA Table 45: the credit count an ACK's 5-bit code stands for. */
static const uint16_t credit_table[31] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
	384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768,
};

/* IBTA Table 46: RNR NAK timer field -> minimum delay in microseconds. */
static const uint32_t rnr_timer_table[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

int wire_aeth_credits(uint8_t code)
{
	code &= 0x1F;
	return code == WIRE_AETH_CREDITS_INVALID ? -1 : credit_table[code];
}

uint32_t wire_rnr_timer_us(uint8_t code)
{
	return rnr_timer_table[code & 0x1F];
}

uint8_t wire_rnr_timer_code(uint32_t us)
{
	/* Codes 1..31 increase monotonically; code 0 is the longest. */
	for (uint8_t code = 1; code < 32; code++)
		if (rnr_timer_table[code] >= us)
			return code;
	return 0;
}

const char *wire_nak_name(uint8_t code)
{
	static const char *const names[] = {
		[WIRE_NAK_PSN_SEQ_ERR] = "PSN sequence error",
		[WIRE_NAK_INVALID_REQ] = "invalid request",
		[WIRE_NAK_REMOTE_ACCESS_ERR] = "remote access error",
		[WIRE_NAK_REMOTE_OP_ERR] = "remote operational error",
		[WIRE_NAK_INVALID_RD_REQ] = "invalid RD request",
	};

	return code < sizeof(names) / sizeof(names[0]) ? names[code] : NULL;
}

size_t wire_aeth_describe(char *out, size_t cap, uint8_t syndrome)
{
	uint8_t v = wire_aeth_value(syndrome);
	const char *nak;
	int n;

	switch (wire_aeth_kind(syndrome)) {
	case WIRE_AETH_ACK:
		if (v == WIRE_AETH_CREDITS_INVALID)
			n = snprintf(out, cap, "ACK credits invalid");
		else
			n = snprintf(out, cap, "ACK credits %d", wire_aeth_credits(v));
		break;
	case WIRE_AETH_RNR_NAK:
		n = snprintf(out, cap, "RNR NAK %u.%02u ms", wire_rnr_timer_us(v) / 1000,
			     wire_rnr_timer_us(v) % 1000 / 10);
		break;
	case WIRE_AETH_NAK:
		nak = wire_nak_name(v);
		n = nak ? snprintf(out, cap, "NAK %s", nak)
			: snprintf(out, cap, "NAK reserved code %u", v);
		break;
	default:
		n = snprintf(out, cap, "reserved syndrome 0x%02x", syndrome);
		break;
	}
	return n < 0 ? 0 : (size_t)n;
}
