// SPDX-License-Identifier: MIT
/*
 * -w FILE: the probe's exchange as a capture, one frame for each packet a
 * test recorded, in the order recorded, so that frame N of the file is
 * the frame a verdict names as N.  Raw IPv4 frames (LINKTYPE_IPV4) with
 * nanosecond times.  A UDP socket does not see the IP header of what it
 * receives, so the remote's are rebuilt: ToS from IP_RECVTOS, the IPv4 ID
 * and DF bit as solved from the ICRC, TTL 64 (unknown here).
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"
#include "source.h"

#define LINKTYPE_IPV4 228

/* capture -w's file sink, on a pcap handle of our own link type. */
struct probe_pcap {
	pcap_t *dead;
	struct sink sink;
};

int probe_pcap_open(struct probe_pcap **out, const char *path, char *err)
{
	struct probe_pcap *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return snprintf(err, XPORT_ERR_LEN, "out of memory"), -1;
	w->dead = pcap_open_dead_with_tstamp_precision(LINKTYPE_IPV4, 65535,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (!w->dead) {
		free(w);
		return snprintf(err, XPORT_ERR_LEN, "libpcap could not make a handle for -w"), -1;
	}
	if (sink_open(&w->sink, w->dead, path, 0, 0, false, err) < 0) {
		pcap_close(w->dead);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void probe_pcap_write(struct probe_pcap *w, uint64_t t_ns, const uint8_t *frame, size_t len)
{
	struct pcap_pkthdr h = {
		.ts = { .tv_sec = (time_t)(t_ns / 1000000000u),
			.tv_usec = (suseconds_t)(t_ns % 1000000000u) },	/* ns: a nano handle */
		.caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len,
	};
	char err[SOURCE_ERR_LEN];

	/* No rotation and no per-packet flush: this cannot fail here; a write
	 * error shows at close, in the stream's error flag. */
	if (w)
		sink_write(&w->sink, &h, frame, err);
}

void probe_pcap_write_rx(struct probe_pcap *w, const struct probe_event *e,
			 const struct sockaddr_in *from, const struct sockaddr_in *to,
			 const uint8_t *payload, size_t len)
{
	uint8_t frame[WIRE_IPV4_LEN + WIRE_UDP_LEN + 4096 + 256];
	struct wire_ipv4 ip = {
		.dscp = e->tos >> 2, .ecn = e->tos & 3, .id = e->icrc_ok ? e->ip_id : 0,
		.frag = !e->icrc_ok || e->df ? 0x4000 : 0, .ttl = 64,
	};
	size_t total = WIRE_IPV4_LEN + WIRE_UDP_LEN + len;

	if (!w || total > sizeof(frame))
		return;
	memcpy(ip.src, &from->sin_addr, 4);
	memcpy(ip.dst, &to->sin_addr, 4);
	wire_put_ipv4(frame, &ip, (uint16_t)total);
	wire_put16(frame + WIRE_IPV4_LEN, ntohs(from->sin_port));
	wire_put16(frame + WIRE_IPV4_LEN + 2, ntohs(to->sin_port));
	wire_put16(frame + WIRE_IPV4_LEN + 4, (uint16_t)(WIRE_UDP_LEN + len));
	wire_put16(frame + WIRE_IPV4_LEN + 6, 0);	/* no UDP checksum: allowed on IPv4 */
	memcpy(frame + WIRE_IPV4_LEN + WIRE_UDP_LEN, payload, len);
	probe_pcap_write(w, e->t_ns, frame, total);
}

int probe_pcap_close(struct probe_pcap *w, char *err)
{
	int rc = 0;

	if (!w)
		return 0;
	if (pcap_dump_flush(w->sink.d) < 0 || ferror(pcap_dump_file(w->sink.d))) {
		snprintf(err, XPORT_ERR_LEN, "writing '%.300s': %s", w->sink.path, strerror(errno));
		rc = -1;
	}
	sink_close(&w->sink);
	pcap_close(w->dead);
	free(w);
	return rc;
}
