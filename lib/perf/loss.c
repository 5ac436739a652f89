// SPDX-License-Identifier: MIT
/*
 * UC and UD resend nothing, so a run's figures say what arrived of what
 * was sent (bw's one pair of ends, incast's every flow alike).
 */
#include "perf.h"

void perf_loss_count(struct perf_loss *l, uint64_t sent_msgs, uint64_t received_msgs,
		     uint64_t received_bytes)
{
	l->received_known = true;
	l->sent_msgs = sent_msgs;
	l->received_msgs = received_msgs;
	l->received_bytes = received_bytes;
	/* A duplicate a peer made up cannot make the loss negative. */
	l->lost_msgs = sent_msgs > received_msgs ? sent_msgs - received_msgs : 0;
	l->loss_percent = sent_msgs ? 100.0 * (double)l->lost_msgs / (double)sent_msgs : 0;
}
