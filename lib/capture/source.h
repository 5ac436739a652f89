/* SPDX-License-Identifier: MIT */
/*
 * Capture sources and sinks through libpcap: a live interface or a file
 * (pcap or pcapng) in, nanosecond timestamps where available, and a
 * `-w` writer with tcpdump's -C/-W rotation.  Errors come back as text
 * in `err` (one line naming the problem and the fix); nothing prints.
 */
#ifndef RDMAKIT_SOURCE_H
#define RDMAKIT_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include <pcap/pcap.h>

#define SOURCE_ERR_LEN 512

struct source_opts {
	const char *iface;	/* live capture */
	const char *file;	/* or read a file ("-" for stdin) */
	int snaplen;		/* 0: the largest */
	int buffer_kib;		/* 0: libpcap's default */
	bool immediate;		/* deliver packets as they arrive */
	const char *filter;	/* BPF expression, or NULL */
};

struct source {
	pcap_t *pc;
	bool live;
	bool nano;		/* timestamps are in ns */
	bool filter_per_record;	/* offline: apply `prog` per record */
	struct bpf_program prog;
	bool have_prog;
	int dlt;
};

int source_open(struct source *s, const struct source_opts *o, char *err);
void source_close(struct source *s);
/* Keep this record? (Offline filtering keeps frame numbers as in tshark.) */
bool source_match(const struct source *s, const struct pcap_pkthdr *h, const uint8_t *data);
/* Live: waits up to timeout_ms for packets (a signal ends the wait early). */
void source_wait(const struct source *s, int timeout_ms);
/* Live: what the kernel's filter took and what it dropped for want of
 * room (pcap_stats: ps_recv, ps_drop, ps_ifdrop); -1 when not known. */
int source_stats(const struct source *s, uint64_t *received, uint64_t *dropped,
		 uint64_t *if_dropped);
/* Timestamp of a record in ns since the epoch. */
uint64_t source_ts_ns(const struct source *s, const struct pcap_pkthdr *h);

struct sink {
	pcap_t *pc;		/* the source, for pcap_dump_open */
	pcap_dumper_t *d;
	const char *base;
	uint64_t rotate_bytes;	/* -C: 0 = never */
	unsigned ring;		/* -W: 0 = unlimited */
	unsigned index;		/* current file number */
	bool flush_each;	/* -U */
	char path[4096];
};

int sink_open(struct sink *k, pcap_t *pc, const char *file, uint64_t rotate_bytes,
	      unsigned ring, bool flush_each, char *err);
int sink_write(struct sink *k, const struct pcap_pkthdr *h, const uint8_t *data, char *err);
void sink_close(struct sink *k);

/* Whether a network interface is the netdev of an RDMA device, and which
 * (RoCE traffic of an RNIC is offloaded and never crosses the netdev). */
bool source_iface_rdma_dev(const char *iface, char *dev, size_t cap);

#endif
