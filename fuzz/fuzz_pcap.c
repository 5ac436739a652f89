// SPDX-License-Identifier: MIT
/*
 * Fuzz target: a whole capture file (pcap or pcapng, any link type)
 * through capture's reading path: source_open() on the file as `-r` opens
 * it (libpcap parses the file format), then every record, with a BPF
 * filter applied per record as capture does offline, into the decoding
 * pipeline.  The input lives in a memfd so no file is left behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "linktype.h"
#include "pipeline.h"
#include "source.h"

#define MAX_RECORDS 4096	/* bounds the time one input may take */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(const char *path, const char *filter)
{
	struct source_opts o = { .file = path, .filter = filter };
	char err[SOURCE_ERR_LEN];
	struct fuzz_pipeline fp;
	struct pcap_pkthdr *h;
	const u_char *rec;
	struct source s;
	int n = 0;

	if (source_open(&s, &o, err) < 0)
		return;
	if (!cap_dlt_supported(s.dlt)) {
		source_close(&s);
		return;
	}
	pipeline_init(&fp);
	while (n++ < MAX_RECORDS && pcap_next_ex(s.pc, &h, &rec) == 1) {
		if (source_match(&s, h, rec))
			pipeline_record(&fp, s.dlt, rec, h->caplen, h->len, source_ts_ns(&s, h));
	}
	pipeline_finish(&fp);
	source_close(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];

	if (fd < 0)
		fd = memfd_create("fuzz-pcap", 0);
	if (fd < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* A quarter of the inputs also run the offline filter path. */
	read_all(path, size % 4 == 1 ? "udp port 4791" : NULL);
	return 0;
}
