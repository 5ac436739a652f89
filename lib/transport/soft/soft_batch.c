// SPDX-License-Identifier: MIT
/*
 * How a batch of packets leaves in one send call: the packets of one QP
 * (one socket), as messages of one packet or UDP GSO runs.  Kept apart
 * from the UDP link so that the tests' in-process link batches the same
 * way and can count calls and runs per packet.
 *
 * A GSO run's segments must all be gso_size bytes but the last, which may
 * be shorter.  A multi-packet WRITE's FIRST packet carries a RETH (16
 * bytes) that MIDDLE and LAST do not, so a run can take FIRST and one
 * shorter packet after it, and a new run starts at the next FIRST: WRITE
 * messages of 2..3 packets cost a run each, where one-packet messages and
 * SENDs (FIRST and MIDDLE the same size) share runs of up to 64 segments.
 * Whatever the runs, one send call carries them all.
 */
#include <string.h>

#include "soft.h"

/* How many packets from i on go out as one GSO run. */
static int gso_run(const struct soft_pkt *pkts, int i, int n)
{
	size_t seg = pkts[i].len, total = 0;
	int j = i;

	while (j < n && j - i < SOFT_GSO_MAX_SEGS && pkts[j].qp_slot == pkts[i].qp_slot &&
	       pkts[j].ecn == pkts[i].ecn &&
	       memcmp(&pkts[j].dst, &pkts[i].dst, sizeof(pkts[j].dst)) == 0 &&
	       total + pkts[j].len <= SOFT_GSO_MAX_BYTES) {
		/* Only the last segment may be shorter than gso_size. */
		if (pkts[j].len > seg || (j > i && pkts[j - 1].len != seg))
			break;
		total += pkts[j].len;
		j++;
	}
	return j > i ? j - i : 1;
}

int soft_plan_send(const struct soft_pkt *pkts, int n, bool gso, struct soft_send_msg *msgs,
		   int *taken)
{
	int slot = n ? pkts[0].qp_slot : -1, i = 0, nmsg = 0;

	while (i < n && pkts[i].qp_slot == slot) {
		int run = gso ? gso_run(pkts, i, n) : 1;

		msgs[nmsg++] = (struct soft_send_msg){ i, run };
		i += run;
	}
	*taken = i;
	return nmsg;
}
