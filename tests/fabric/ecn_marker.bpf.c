// SPDX-License-Identifier: MIT
/*
 * ECN marker for the test fabric's leaf-to-host downlinks (tc clsact egress).
 *
 * This kernel has no red/fq_codel, so queue-depth marking in the style of
 * DCTCP's RED (mark CE when the instantaneous queue exceeds K) is done here
 * on a virtual queue: every packet adds its length, the queue drains at the
 * link rate, and it never goes below zero.  The program runs before the
 * interface's tbf qdisc (clsact egress comes first) and models it: a tbf
 * with bucket B sends at once while the virtual queue holds at most B
 * bytes, so its real backlog is the virtual queue less B, and it
 * tail-drops what would take that backlog past its limit (such a packet
 * does not count in the virtual queue either).
 *
 * ECT(0)/ECT(1) IPv4 packets that find a modelled backlog above K bytes are
 * set to CE (a GSO skb marks all its segments) and the header checksum is
 * fixed.  Not-ECT packets pass untouched (the tbf queues or drops them).
 * IPv6 is not marked: the fabric is IPv4 only.
 *
 * Compiled per fabric with the link's numbers as -D definitions:
 *   VQ_RATE_BPS     drain rate, bytes per second (the link rate / 8)
 *   VQ_BURST        the tbf's bucket B, bytes
 *   VQ_THRESHOLD    K, bytes
 *   VQ_LIMIT        the tbf's queue limit, bytes
 * Counters (struct marker_counters, map "counters") are read with bpftool.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef VQ_RATE_BPS
#error "compile with -DVQ_RATE_BPS=<link rate in bytes per second>"
#endif
#ifndef VQ_BURST
#error "compile with -DVQ_BURST=<the tbf's burst in bytes>"
#endif
#ifndef VQ_THRESHOLD
#error "compile with -DVQ_THRESHOLD=<marking threshold K in bytes>"
#endif
#ifndef VQ_LIMIT
#error "compile with -DVQ_LIMIT=<the tbf's queue limit in bytes>"
#endif

#define NSEC_PER_SEC 1000000000ULL
#define ECN_MASK 0x3
#define ECN_NOT_ECT 0x0
#define ECN_ECT1 0x1
#define ECN_ECT0 0x2
#define ECN_CE 0x3

struct virtual_queue {
	struct bpf_spin_lock lock;
	__u64 backlog; /* bytes, the tbf's bucket deficit included */
	__u64 last_ns; /* when backlog was last drained */
};

/* Read by fabric.sh stats as five u64 in this order. */
struct marker_counters {
	__u64 packets;    /* segments seen (a GSO skb counts all of its) */
	__u64 ect;        /* ECT(0)/ECT(1) IPv4 segments */
	__u64 marked;     /* segments this program set to CE */
	__u64 over_limit; /* segments that found the virtual queue full */
	__u64 max_backlog; /* the longest modelled tbf backlog a packet found */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct virtual_queue);
} queue SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct marker_counters);
} counters SEC(".maps");

/* Drains the virtual queue to now and returns the backlog the packet finds
 * in the tbf (the virtual queue less the bucket); adds len unless the tbf
 * has no room for it, which sets *full. */
static __always_inline __u64 enqueue(struct virtual_queue *q, __u64 len, __u64 now, int *full)
{
	__u64 ahead;

	bpf_spin_lock(&q->lock);
	__u64 elapsed = now > q->last_ns ? now - q->last_ns : 0;
	if (elapsed >= NSEC_PER_SEC) {
		q->backlog = 0;
	} else {
		__u64 drained = elapsed * VQ_RATE_BPS / NSEC_PER_SEC;
		q->backlog = drained >= q->backlog ? 0 : q->backlog - drained;
	}
	q->last_ns = now;
	ahead = q->backlog > VQ_BURST ? q->backlog - VQ_BURST : 0;
	*full = ahead + len > VQ_LIMIT;
	if (!*full)
		q->backlog += len;
	bpf_spin_unlock(&q->lock);
	return ahead;
}

static __always_inline int set_ce(struct __sk_buff *skb, __u8 tos)
{
	const __u32 ip_off = sizeof(struct ethhdr);
	__u8 new_tos = tos | ECN_CE;
	/* tos is the low byte of the header's first 16-bit word. */
	__be16 old_word, new_word;
	__u8 first;

	if (bpf_skb_load_bytes(skb, ip_off, &first, 1) < 0)
		return -1;
	old_word = bpf_htons(((__u16)first << 8) | tos);
	new_word = bpf_htons(((__u16)first << 8) | new_tos);
	if (bpf_l3_csum_replace(skb, ip_off + offsetof(struct iphdr, check),
				old_word, new_word, sizeof(new_word)) < 0)
		return -1;
	return bpf_skb_store_bytes(skb, ip_off + offsetof(struct iphdr, tos), &new_tos,
				   sizeof(new_tos), 0);
}

SEC("tc")
int ecn_marker(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct virtual_queue *q = bpf_map_lookup_elem(&queue, &zero);
	struct marker_counters *c = bpf_map_lookup_elem(&counters, &zero);
	__u64 segs = skb->gso_segs ? skb->gso_segs : 1;
	__u8 tos = 0, ecn = ECN_NOT_ECT;
	__u64 ahead;
	int full;

	if (!q || !c)
		return TC_ACT_OK;
	__sync_fetch_and_add(&c->packets, segs);
	if (skb->protocol == bpf_htons(ETH_P_IP) &&
	    bpf_skb_load_bytes(skb, sizeof(struct ethhdr) + offsetof(struct iphdr, tos),
			       &tos, 1) == 0)
		ecn = tos & ECN_MASK;
	if (ecn == ECN_ECT1 || ecn == ECN_ECT0)
		__sync_fetch_and_add(&c->ect, segs);
	ahead = enqueue(q, skb->len, bpf_ktime_get_ns(), &full);
	if (full)
		__sync_fetch_and_add(&c->over_limit, segs);
	if (ahead > c->max_backlog)
		c->max_backlog = ahead; /* a racy maximum is good enough for a report */
	/* A packet over the limit is marked too: the virtual queue and the
	 * tbf's real one drift apart (the tbf drains in bursts), so the tbf
	 * may keep this packet and drop another. */
	if ((ecn == ECN_ECT1 || ecn == ECN_ECT0) && ahead > VQ_THRESHOLD && set_ce(skb, tos) == 0)
		__sync_fetch_and_add(&c->marked, segs);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
