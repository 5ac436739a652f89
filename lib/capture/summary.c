// SPDX-License-Identifier: MIT
/*
 * The capture diagnosis: per-flow totals and what looks wrong, in plain
 * words ("... 37 retransmissions after 3 NAK(PSN sequence error)").
 */
#include <inttypes.h>
#include <string.h>

#include "render.h"

static const char *const nak_keys[FLOW_NAK_CODES] = {
	"psn_seq_err", "invalid_req", "remote_access_err", "remote_op_err", "invalid_rd_req",
};

static double seconds(uint64_t first, uint64_t last)
{
	return last > first ? (double)(last - first) / 1e9 : 0.0;
}

static uint64_t nak_total(const struct flow *f)
{
	uint64_t n = f->naks_other;

	for (int i = 0; i < FLOW_NAK_CODES; i++)
		n += f->naks[i];
	return n;
}

static void flow_name(const struct flow *f, char *out, size_t cap)
{
	char src[64], dst[64];

	flow_addr_str(&f->key, false, src, sizeof(src));
	flow_addr_str(&f->key, true, dst, sizeof(dst));
	snprintf(out, cap, "%s > %s qp 0x%06x", src, dst, f->key.dqpn);
}

static double goodput_gbps(const struct flow *f)
{
	double s = seconds(f->first_ns, f->last_ns);

	return s > 0 ? (double)f->payload_bytes * 8 / s / 1e9 : 0.0;
}

/* Appends the findings for one flow to the problems array. */
static void flow_problems(const struct flow *f, json_t *problems)
{
	char name[200], msg[512];
	const struct flow *peer = f->peer;

	flow_name(f, name, sizeof(name));
	if (f->retransmits) {
		uint64_t seq = peer ? peer->naks[WIRE_NAK_PSN_SEQ_ERR] : 0;
		uint64_t rnr = peer ? peer->rnr_naks : 0;

		if (seq && rnr)
			snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " retransmissions after %" PRIu64
				 " NAK(PSN sequence error) and %" PRIu64 " RNR NAKs", name,
				 f->retransmits, seq, rnr);
		else if (rnr)
			snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " retransmissions after %" PRIu64
				 " RNR NAKs (the receiver had no RECV posted)", name, f->retransmits,
				 rnr);
		else if (seq)
			snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " retransmissions after %" PRIu64
				 " NAK(PSN sequence error)", name, f->retransmits, seq);
		else
			snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " retransmissions (no NAK seen: "
				 "ACK timeouts, or loss of the NAK)", name, f->retransmits);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->psn_gaps) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " PSNs missing (lost before the capture "
			 "point)", name, f->psn_gaps);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->restarts) {
		snprintf(msg, sizeof(msg), "flow %s: its PSN jumped %" PRIu64 " time%s by more than "
			 "%d: new connections reused the QP number (counted apart, not as loss)",
			 name, f->restarts, f->restarts == 1 ? "" : "s", FLOW_RESTART_JUMP);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->out_of_order) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " packets arrived out of order", name,
			 f->out_of_order);
		json_array_append_new(problems, json_string(msg));
	}
	for (int i = 0; i < FLOW_NAK_CODES; i++) {
		if (!f->naks[i])
			continue;
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " NAK(%s)%s", name, f->naks[i],
			 wire_nak_name((uint8_t)i),
			 i == WIRE_NAK_REMOTE_ACCESS_ERR ? ": wrong rkey, bounds or access rights" :
			 i == WIRE_NAK_INVALID_REQ ? ": the responder rejected the request" : "");
		json_array_append_new(problems, json_string(msg));
	}
	if (f->rnr_naks) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " RNR NAKs: the receiver had no RECV "
			 "posted", name, f->rnr_naks);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->cnps) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " CNPs: congestion notified to this QP",
			 name, f->cnps);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->ce_marked) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " packets CE-marked by the network",
			 name, f->ce_marked);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->icrc_bad) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " ICRC failures: corrupted on the way, "
			 "or not a RoCE sender", name, f->icrc_bad);
		json_array_append_new(problems, json_string(msg));
	}
}

static json_t *delay_json(const struct hist *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "count", json_integer((json_int_t)hist_count(h)));
	if (!hist_count(h))
		return o;
	json_object_set_new(o, "min", json_real((double)hist_min(h) / 1e3));
	json_object_set_new(o, "p50", json_real((double)hist_percentile(h, 50) / 1e3));
	json_object_set_new(o, "p99", json_real((double)hist_percentile(h, 99) / 1e3));
	json_object_set_new(o, "p99_9", json_real((double)hist_percentile(h, 99.9) / 1e3));
	json_object_set_new(o, "max", json_real((double)hist_max(h) / 1e3));
	return o;
}

static json_t *flow_json(const struct flow *f)
{
	json_t *o = json_object(), *ops = json_object(), *naks = json_object();
	char addr[64];

	flow_addr_str(&f->key, false, addr, sizeof(addr));
	json_object_set_new(o, "src", json_string(addr));
	flow_addr_str(&f->key, true, addr, sizeof(addr));
	json_object_set_new(o, "dst", json_string(addr));
	json_object_set_new(o, "dest_qp", json_integer(f->key.dqpn));
	json_object_set_new(o, "packets", json_integer((json_int_t)f->packets));
	json_object_set_new(o, "bytes", json_integer((json_int_t)f->bytes));
	json_object_set_new(o, "payload_bytes", json_integer((json_int_t)f->payload_bytes));
	json_object_set_new(o, "duration_s", json_real(seconds(f->first_ns, f->last_ns)));
	json_object_set_new(o, "goodput_gbps", json_real(goodput_gbps(f)));
	for (int op = 0; op < 256; op++) {
		const char *name = wire_opcode_name((uint8_t)op);
		char unknown[32];

		if (!f->opcodes[op])
			continue;
		if (!name) {
			snprintf(unknown, sizeof(unknown), "0x%02x", op);
			name = unknown;
		}
		json_object_set_new(ops, name, json_integer((json_int_t)f->opcodes[op]));
	}
	json_object_set_new(o, "opcodes", ops);
	json_object_set_new(o, "retransmits", json_integer((json_int_t)f->retransmits));
	json_object_set_new(o, "psn_gaps", json_integer((json_int_t)f->psn_gaps));
	json_object_set_new(o, "psn_restarts", json_integer((json_int_t)f->restarts));
	json_object_set_new(o, "out_of_order", json_integer((json_int_t)f->out_of_order));
	for (int i = 0; i < FLOW_NAK_CODES; i++)
		json_object_set_new(naks, nak_keys[i], json_integer((json_int_t)f->naks[i]));
	json_object_set_new(naks, "other", json_integer((json_int_t)f->naks_other));
	json_object_set_new(o, "naks", naks);
	json_object_set_new(o, "rnr_naks", json_integer((json_int_t)f->rnr_naks));
	json_object_set_new(o, "dup_acks", json_integer((json_int_t)f->dup_acks));
	json_object_set_new(o, "cnps", json_integer((json_int_t)f->cnps));
	json_object_set_new(o, "ce_marked", json_integer((json_int_t)f->ce_marked));
	json_object_set_new(o, "icrc_bad", json_integer((json_int_t)f->icrc_bad));
	json_object_set_new(o, "gso_segments", json_integer((json_int_t)f->gso_aggregates));
	json_object_set_new(o, "ack_delay_us", delay_json(&f->ack_delay));
	return o;
}

json_t *render_summary_json(const struct flow_table *t)
{
	json_t *o = json_object(), *flows = json_array(), *problems = json_array();

	json_object_set_new(o, "packets", json_integer((json_int_t)t->packets));
	json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
	json_object_set_new(o, "non_rdma", json_integer((json_int_t)t->non_rdma));
	json_object_set_new(o, "malformed", json_integer((json_int_t)t->malformed));
	json_object_set_new(o, "icrc_bad", json_integer((json_int_t)t->icrc_bad));
	json_object_set_new(o, "icrc_unchecked", json_integer((json_int_t)t->icrc_unchecked));
	json_object_set_new(o, "untracked_packets", json_integer((json_int_t)t->untracked_packets));
	json_object_set_new(o, "duration_s", json_real(seconds(t->first_ns, t->last_ns)));
	for (size_t i = 0; i < t->n; i++) {
		json_array_append_new(flows, flow_json(t->order[i]));
		flow_problems(t->order[i], problems);
	}
	json_object_set_new(o, "flows", flows);
	json_object_set_new(o, "problems", problems);
	return o;
}

void render_summary_text(FILE *out, const struct flow_table *t)
{
	json_t *problems = json_array();
	size_t i;
	json_t *v;

	fprintf(out, "\n%" PRIu64 " RDMA packets, %" PRIu64 " bytes in %.6f s; %zu flows; "
		"%" PRIu64 " other, %" PRIu64 " malformed; ICRC %" PRIu64 " bad, %" PRIu64
		" unchecked\n", t->packets, t->bytes, seconds(t->first_ns, t->last_ns), t->n,
		t->non_rdma, t->malformed, t->icrc_bad, t->icrc_unchecked);
	if (t->untracked_packets)
		fprintf(out, "%" PRIu64 " packets in flows beyond the first %zu: counted, not "
			"diagnosed (raise --max-flows)\n", t->untracked_packets, t->n);
	if (t->n)
		fprintf(out, "%-52s %9s %12s %9s %6s %6s %5s %5s %6s %5s %6s %6s %10s %10s\n",
			"flow", "packets", "bytes", "Gb/s", "retx", "gaps", "NAK", "RNR", "dupACK",
			"CNP", "CE", "ICRC!", "ack p50us", "ack p99us");
	for (i = 0; i < t->n; i++) {
		const struct flow *f = t->order[i];
		const struct hist *h = &f->ack_delay;
		char name[200], p50[24] = "-", p99[24] = "-";

		flow_name(f, name, sizeof(name));
		if (hist_count(h)) {
			snprintf(p50, sizeof(p50), "%.3f", (double)hist_percentile(h, 50) / 1e3);
			snprintf(p99, sizeof(p99), "%.3f", (double)hist_percentile(h, 99) / 1e3);
		}
		fprintf(out, "%-52s %9" PRIu64 " %12" PRIu64 " %9.3f %6" PRIu64 " %6" PRIu64 " %5"
			PRIu64 " %5" PRIu64 " %6" PRIu64 " %5" PRIu64 " %6" PRIu64 " %6" PRIu64
			" %10s %10s\n", name, f->packets, f->bytes, goodput_gbps(f), f->retransmits,
			f->psn_gaps, nak_total(f), f->rnr_naks, f->dup_acks, f->cnps, f->ce_marked,
			f->icrc_bad, p50, p99);
		flow_problems(f, problems);
	}
	if (json_array_size(problems)) {
		fprintf(out, "Problems:\n");
		json_array_foreach(problems, i, v)
			fprintf(out, "  %s\n", json_string_value(v));
	} else if (t->n) {
		fprintf(out, "No retransmissions, NAKs, CNPs, CE marks or ICRC failures seen.\n");
	}
	json_decref(problems);
}
