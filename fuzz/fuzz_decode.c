// SPDX-License-Identifier: MIT
/*
 * Fuzz target: one capture record through the whole decoding pipeline
 * (pipeline.h).  Input: one byte choosing the link type (dlts.h, by its
 * value modulo their number) and, with its top bit, capture's --no-icrc;
 * then the record as libpcap would hand it over.  The record is copied to a buffer
 * of exactly its size, so any read past caplen is caught by ASan.
 */
#include <stdlib.h>
#include <string.h>

#include "dlts.h"
#include "pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pipeline fp;
	uint8_t *rec;
	int dlt;

	if (size < 1)
		return 0;
	dlt = fuzz_dlts[data[0] % FUZZ_NDLTS];
	rec = malloc(size - 1 ? size - 1 : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + 1, size - 1);
	pipeline_init(&fp);
	fp.no_icrc = data[0] & 0x80;
	pipeline_record(&fp, dlt, rec, size - 1, size - 1, 1767225600000000000ull);
	pipeline_finish(&fp);
	free(rec);
	return 0;
}
