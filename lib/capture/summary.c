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

/* "src > dst qp 0x..", a UC flow marked so, a UD flow by its source QP. */
static void flow_name(const struct flow *f, char *out, size_t cap)
{
	char src[64], dst[64];

	flow_addr_str(&f->key, false, src, sizeof(src));
	flow_addr_str(&f->key, true, dst, sizeof(dst));
	if (flow_src_qp_unknown(&f->key))
		snprintf(out, cap, "%s UD src qp ? (cut before the DETH)", src);
	else if (f->key.service == WIRE_TR_UD)
		snprintf(out, cap, "%s UD src qp 0x%06x", src, f->key.dqpn);
	else
		snprintf(out, cap, "%s > %s %sqp 0x%06x", src, dst,
			 f->key.service == WIRE_TR_UC ? "UC " : "", f->key.dqpn);
}

static const char *service_name(const struct flow_key *k)
{
	return k->service == WIRE_TR_UD ? "UD" : k->service == WIRE_TR_UC ? "UC" : "RC";
}

static double goodput_gbps(const struct flow *f)
{
	double s = seconds(f->first_ns, f->last_ns);

	return s > 0 ? (double)f->payload_bytes * 8 / s / 1e9 : 0.0;
}

/* What the path did to a flow of any transport: CE marks, corruption. */
static void path_problems(const struct flow *f, const char *name, json_t *problems)
{
	char msg[512];

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

/* UC and UD resend nothing and answer nothing: a gap is loss, a PSN seen
 * twice a duplicate on the way, and no ACK is missing. */
static void unreliable_problems(const struct flow *f, const char *name, json_t *problems)
{
	char msg[512];

	if (flow_src_qp_unknown(&f->key)) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " UD packets cut by the snap length "
			 "before their source QP: a PSN missing from this address's UD flows may "
			 "be one of them (capture with a larger -s)", name, f->packets);
		json_array_append_new(problems, json_string(msg));
	}
	if (f->psn_gaps) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " PSNs missing: packets lost before "
			 "the capture point (%s resends nothing)", name, f->psn_gaps,
			 service_name(&f->key));
		json_array_append_new(problems, json_string(msg));
	}
	if (f->retransmits) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " packets seen twice: duplicated on "
			 "the way (%s resends nothing)", name, f->retransmits, service_name(&f->key));
		json_array_append_new(problems, json_string(msg));
	}
	if (f->out_of_order) {
		snprintf(msg, sizeof(msg), "flow %s: %" PRIu64 " packets arrived out of order%s", name,
			 f->out_of_order, f->key.service == WIRE_TR_UC ?
			 " (a UC receiver drops the message each one belongs to)" : "");
		json_array_append_new(problems, json_string(msg));
	}
	if (f->restarts) {
		snprintf(msg, sizeof(msg), "flow %s: its PSN jumped %" PRIu64 " time%s by more than "
			 "%d: new QPs reused the number (counted apart, not as loss)", name,
			 f->restarts, f->restarts == 1 ? "" : "s", FLOW_RESTART_JUMP);
		json_array_append_new(problems, json_string(msg));
	}
}

/* Appends the findings for one flow to the problems array. */
static void flow_problems(const struct flow *f, json_t *problems)
{
	char name[200], msg[512];
	const struct flow *peer = f->peer;

	flow_name(f, name, sizeof(name));
	if (flow_unreliable(&f->key)) {
		unreliable_problems(f, name, problems);
		path_problems(f, name, problems);
		return;
	}
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
	path_problems(f, name, problems);
}

/* ACK delay of a flow in microseconds: JSON count and percentiles, text the
 * p50 and p99 columns. */
static void ack_delay(struct printer *pr, const struct hist *h)
{
	print_open_object(pr, "ack_delay_us");
	print_uint(pr, PRINT_JSON, "count", NULL, hist_count(h));
	if (hist_count(h)) {
		print_float(pr, PRINT_JSON, "min", NULL, (double)hist_min(h) / 1e3);
		print_float(pr, PRINT_ANY, "p50", " %10.3f", (double)hist_percentile(h, 50) / 1e3);
		print_float(pr, PRINT_ANY, "p99", " %10.3f", (double)hist_percentile(h, 99) / 1e3);
		print_float(pr, PRINT_JSON, "p99_9", NULL, (double)hist_percentile(h, 99.9) / 1e3);
		print_float(pr, PRINT_JSON, "max", NULL, (double)hist_max(h) / 1e3);
	} else {
		print_fp(pr, " %10s %10s", "-", "-");
	}
	print_close(pr);
}

static void opcodes(struct printer *pr, const struct flow *f)
{
	print_open_object(pr, "opcodes");
	for (int op = 0; op < 256; op++) {
		const char *name = wire_opcode_name((uint8_t)op);
		char unknown[32];

		if (!f->opcodes[op])
			continue;
		if (!name) {
			snprintf(unknown, sizeof(unknown), "0x%02x", op);
			name = unknown;
		}
		print_uint(pr, PRINT_JSON, name, NULL, f->opcodes[op]);
	}
	print_close(pr);
}

/* One flow: a row of the text table, an object of the JSON "flows". */
static void flow(struct printer *pr, const struct flow *f)
{
	char addr[64], name[200];

	flow_name(f, name, sizeof(name));
	print_open_object(pr, NULL);
	flow_addr_str(&f->key, false, addr, sizeof(addr));
	print_string(pr, PRINT_JSON, "src", NULL, addr);
	if (f->key.service != WIRE_TR_UD) {	/* UD: a sender's QP, to anyone */
		flow_addr_str(&f->key, true, addr, sizeof(addr));
		print_string(pr, PRINT_JSON, "dst", NULL, addr);
	}
	print_string(pr, PRINT_JSON, "transport", NULL, service_name(&f->key));
	if (flow_src_qp_unknown(&f->key)) {
		print_null(pr, PRINT_JSON, "src_qp", NULL, NULL);	/* cut before the DETH */
		print_null(pr, PRINT_JSON, "qkey", NULL, NULL);
	} else if (f->key.service == WIRE_TR_UD) {
		print_uint(pr, PRINT_JSON, "src_qp", NULL, f->key.dqpn);
		print_uint(pr, PRINT_JSON, "qkey", NULL, f->qkey);
	} else {
		print_uint(pr, PRINT_JSON, "dest_qp", NULL, f->key.dqpn);
	}
	print_string(pr, PRINT_FP, NULL, "%-52s", name);
	print_uint(pr, PRINT_ANY, "packets", " %9llu", f->packets);
	print_uint(pr, PRINT_ANY, "bytes", " %12llu", f->bytes);
	print_uint(pr, PRINT_JSON, "payload_bytes", NULL, f->payload_bytes);
	print_float(pr, PRINT_JSON, "duration_s", NULL, seconds(f->first_ns, f->last_ns));
	print_float(pr, PRINT_ANY, "goodput_gbps", " %9.3f", goodput_gbps(f));
	opcodes(pr, f);
	print_uint(pr, PRINT_ANY, "retransmits", " %6llu", f->retransmits);
	print_uint(pr, PRINT_ANY, "psn_gaps", " %6llu", f->psn_gaps);
	print_uint(pr, PRINT_JSON, "psn_restarts", NULL, f->restarts);
	print_uint(pr, PRINT_JSON, "out_of_order", NULL, f->out_of_order);
	print_open_object(pr, "naks");
	for (int i = 0; i < FLOW_NAK_CODES; i++)
		print_uint(pr, PRINT_JSON, nak_keys[i], NULL, f->naks[i]);
	print_uint(pr, PRINT_JSON, "other", NULL, f->naks_other);
	print_close(pr);
	print_uint(pr, PRINT_FP, NULL, " %5llu", nak_total(f));
	print_uint(pr, PRINT_ANY, "rnr_naks", " %5llu", f->rnr_naks);
	print_uint(pr, PRINT_ANY, "dup_acks", " %6llu", f->dup_acks);
	print_uint(pr, PRINT_ANY, "cnps", " %5llu", f->cnps);
	print_uint(pr, PRINT_ANY, "ce_marked", " %6llu", f->ce_marked);
	print_uint(pr, PRINT_ANY, "icrc_bad", " %6llu", f->icrc_bad);
	print_uint(pr, PRINT_JSON, "gso_segments", NULL, f->gso_aggregates);
	ack_delay(pr, &f->ack_delay);
	print_fp(pr, "\n");
	print_close(pr);
}

void render_summary(struct printer *pr, const struct flow_table *t)
{
	double duration = seconds(t->first_ns, t->last_ns);
	json_t *problems = json_array();
	size_t i;
	json_t *v;

	print_uint(pr, PRINT_ANY, "packets", "\n%llu RDMA packets", t->packets);
	print_uint(pr, PRINT_ANY, "bytes", ", %llu bytes", t->bytes);
	print_float(pr, PRINT_FP, NULL, " in %.6f s", duration);
	print_uint(pr, PRINT_FP, NULL, "; %llu flows", t->n);
	print_uint(pr, PRINT_ANY, "non_rdma", "; %llu other", t->non_rdma);
	print_uint(pr, PRINT_ANY, "malformed", ", %llu malformed", t->malformed);
	print_uint(pr, PRINT_ANY, "icrc_bad", "; ICRC %llu bad", t->icrc_bad);
	print_uint(pr, PRINT_ANY, "icrc_unchecked", ", %llu unchecked\n", t->icrc_unchecked);
	print_uint(pr, PRINT_JSON, "untracked_packets", NULL, t->untracked_packets);
	if (t->untracked_packets)
		print_fp(pr, "%" PRIu64 " packets in flows beyond the first %zu: counted, not "
			 "diagnosed (raise --max-flows)\n", t->untracked_packets, t->n);
	print_float(pr, PRINT_JSON, "duration_s", NULL, duration);
	if (t->n)
		print_fp(pr, "%-52s %9s %12s %9s %6s %6s %5s %5s %6s %5s %6s %6s %10s %10s\n",
			 "flow", "packets", "bytes", "Gb/s", "retx", "gaps", "NAK", "RNR", "dupACK",
			 "CNP", "CE", "ICRC!", "ack p50us", "ack p99us");
	print_open_array(pr, "flows");
	for (i = 0; i < t->n; i++) {
		flow(pr, t->order[i]);
		flow_problems(t->order[i], problems);
	}
	print_close(pr);
	if (json_array_size(problems))
		print_fp(pr, "Problems:\n");
	else if (t->n)
		print_fp(pr, "No retransmissions, NAKs, CNPs, CE marks or ICRC failures seen.\n");
	print_open_array(pr, "problems");
	json_array_foreach(problems, i, v)
		print_string(pr, PRINT_ANY, NULL, "  %s\n", json_string_value(v));
	print_close(pr);
	json_decref(problems);
}
