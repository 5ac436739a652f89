// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the soft engine's inbound packet handler (dispatch, the
 * responder and the requester) against live QPs with registered memory
 * between guard pages (soft_fixture.h).
 *
 * Input: frames of UDP payload (BTH .. ICRC), each with flags and a length
 * (fix_run_input() in soft_fixture.h).  Unless the flags say otherwise
 * (FIX_F_*), the destination QP is set to the chosen QP and the ICRC is
 * made valid, so mutations reach the transport logic instead of dying at
 * the ICRC check.  The engine runs after frames flagged FIX_F_PROGRESS and
 * at the end; after every run the canaries and the read-only region are
 * checked.
 */
#include "soft_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fix f;

	if (!fix_open(&f))
		return 0;
	fix_run_input(&f, data, size);
	fix_close(&f);
	return 0;
}
