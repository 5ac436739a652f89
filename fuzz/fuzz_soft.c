// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the soft engine's inbound packet handler (dispatch, the
 * responder and the requester) against live QPs with registered memory
 * between guard pages (soft_fixture.h).
 *
 * Input: frames, each  flags u8, length u16 (big-endian), then that many
 * bytes of UDP payload (BTH .. ICRC); a short last frame takes what is
 * left.  Unless the flags say otherwise (FIX_F_*), the destination QP is
 * set to the chosen QP and the ICRC is made valid, so mutations reach the
 * transport logic instead of dying at the ICRC check.  The engine runs
 * after frames flagged FIX_F_PROGRESS and at the end; after every run the
 * canaries and the read-only region are checked.
 */
#include "soft_fixture.h"

#define MAX_FRAMES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fix f;
	size_t off = 0;

	if (!fix_open(&f))
		return 0;
	for (int n = 0; n < MAX_FRAMES && size - off >= 3; n++) {
		unsigned flags = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		off += 3;
		if (len > size - off)
			len = size - off;
		fix_deliver(&f, data + off, len, flags);
		off += len;
		if (flags & FIX_F_PROGRESS)
			fix_progress(&f);
	}
	fix_progress(&f);
	fix_close(&f);
	return 0;
}
