// SPDX-License-Identifier: MIT
/*
 * soft-replay INPUT...: runs soft-target inputs through the fixture like
 * fuzz_soft does and prints, per input, what the engine did with them:
 *
 *   NAME completions N failed N resp_rx N resp_naks N req_rx N req_done N
 *
 * tests/fuzz.bats uses it to check that the seeds reach both QPs (a
 * fixture whose PSNs, keys or addresses drifted would complete nothing).
 */
#include <stdio.h>
#include <string.h>

#include "soft_fixture.h"

static size_t read_input(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static uint8_t data[1 << 20];

	for (int a = 1; a < argc; a++) {
		size_t size = read_input(argv[a], data, sizeof(data));
		const char *name = strrchr(argv[a], '/');
		struct fix f;

		if (!fix_open(&f))
			return 1;
		f.completions = f.failed = 0;
		fix_run_input(&f, data, size);
		printf("%s completions %u failed %u resp_rx %llu resp_naks %llu req_rx %llu "
		       "req_done %u\n", name ? name + 1 : argv[a], f.completions, f.failed,
		       (unsigned long long)f.resp->ctr.rx_packets,
		       (unsigned long long)f.resp->ctr.naks_tx,
		       (unsigned long long)f.req->ctr.rx_packets, (unsigned)f.req->sq_head);
		fix_close(&f);
	}
	return 0;
}
