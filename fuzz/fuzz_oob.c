// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the control channel's receiving side.  The input is what
 * the peer sends, written into one end of a socket pair (then shut), and
 * read by the oob code on the other end through one of the exchanges the
 * commands run:
 *
 *   first byte % 5 == 0: a server's session: hello, QP info, barrier, bye
 *                  == 1: a client's session (it sends first, same steps)
 *                  == 2: messages of any type until the stream ends
 *                  == 3: every control-message parser of lib/perf/ctl.c (QP
 *                        list, memory, run, end of run, verdict, -b figures)
 *                        on the rest as JSON, directly; and perftest's
 *                        (lib/perf/pt_wire.c: version, MTU, both key
 *                        formats, the negotiation struct) on its bytes;
 *                        and incast's (lib/perf/incast_plan.c: a joiner's
 *                        test and its adoption, a node's result folded
 *                        into a UD run's); and rdmakit probe's
 *                        (lib/probe/probe_msg.c), a server's requests
 *                        held to its limits
 *                  == 4: a PARAMS payload through the server's parser
 *                        (oob_params.c); the next byte: its PERF_SET_* bits
 *
 * Nothing waits: the peer's end is shut after the input, so a short
 * stream ends in EOF, never in a timeout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oob.h"
#include "ctl.h"
#include "incast_int.h"
#include "oob_params.h"
#include "probe_msg.h"
#include "pt_wire.h"

#define QP_CAP 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void session(struct oob *o, bool is_server, char *err)
{
	struct xport_qp_info mine = { .qpn = 0x100, .psn = 0x10, .udp_port = 4791, .mtu = 1024,
				      .max_rd_atomic = 16 };
	struct xport_qp_info theirs[QP_CAP];
	unsigned n;
	json_t *m;
	int rc;

	if (oob_hello(o, is_server, err) < 0)
		return;
	/* The QP lists, the client's first (as lib/perf/session.c swaps them). */
	if (!is_server && ctl_send(o, OOB_PARAMS, ctl_qps_json(&mine, 1), err) < 0)
		return;
	m = ctl_recv(o, OOB_PARAMS, err);
	rc = m ? ctl_qps_parse(m, theirs, QP_CAP, &n, err) : -1;
	json_decref(m);
	if (rc < 0 || (is_server && ctl_send(o, OOB_PARAMS, ctl_qps_json(&mine, 1), err) < 0) ||
	    oob_barrier(o, 1, err) < 0)
		return;
	oob_bye(o, err);
}

static void oracle(bool ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "oracle: %s\n", what);
	abort();
}

/* A joiner's test and what a coordinator adopts of it stay in the command
 * line's ranges; a node's result folds into a UD SEND run whose losses add
 * up, whatever the counts claim. */
static void incast_parsers(json_t *m, char *err)
{
	struct incast_opts theirs = { 0 }, run = { .p = { .op = PERF_WRITE, .size = 65536,
		.duration = 5, .qps = 1, .tx_depth = 128, .rx_depth = 512 } };
	struct incast_result r;
	json_t *seen = json_object();

	if (incast_test_from_json(&theirs, m, err) == 0 &&
	    incast_adopt(&run, &theirs, "fuzz-peer", true, err) == 0) {
		oracle(run.p.qps >= 1 && run.p.qps <= PERF_MAX_QPS, "qps out of range");
		oracle(run.p.size >= 1 && run.p.tx_depth >= 1 && run.p.rx_depth >= 1,
			      "size or depth 0");
		oracle(run.p.conn != XPORT_QPT_UD || run.p.op == PERF_SEND, "UD not SEND");
	}
	memset(&r, 0, sizeof(r));
	hist_init(&r.latency);
	r.flows = calloc(2, sizeof(*r.flows));
	if (r.flows) {
		r.nflows = 2;
		r.flows[0].id = 1;
		r.flows[1].id = 2;
		r.test.conn = XPORT_QPT_UD;
		r.test.op = PERF_SEND;
		r.test.interval = 0.1;
		incast_fold(&r, m, seen, err);
		incast_finish_result(&r);
		for (unsigned i = 0; i < r.nflows; i++)
			oracle(!r.flows[i].loss.received_known ||
				      r.flows[i].loss.lost_msgs <= r.flows[i].loss.sent_msgs,
				      "a flow lost more than it sent");
		oracle(!r.loss.received_known || r.loss.lost_msgs <= r.loss.sent_msgs,
			      "the run lost more than it sent");
	}
	incast_result_free(&r);
	json_decref(seen);
}

/* What probe --serve takes from a probe stays within the limits that bound
 * its memory; what a probe takes from a server fits its record. */
static void probe_parsers(json_t *m, char *err)
{
	struct probe_peer_info peer;
	struct probe_remote_state state;
	struct xport_qp_info qp;
	struct probe_mr_info mr;
	enum probe_req_kind kind;
	struct probe_setup s;
	struct probe_post w;

	probe_msg_hello_parse(m, err);
	probe_msg_serve_parse(m, &peer, err);
	if (probe_msg_req_parse(m, &kind, &s, &w, err) == 0) {
		if (kind == PROBE_REQ_SETUP)
			oracle(s.mr_bytes <= PROBE_MAX_MR_BYTES && s.recvs <= PROBE_MAX_RECVS &&
				      s.recv_bytes <= PROBE_MAX_RECV_BYTES &&
				      s.first_psn >= -1 && s.first_psn <= 0xFFFFFF,
			       "probe setup over limits");
		if (kind == PROBE_REQ_POST)
			oracle(w.count >= 1 && w.count <= PROBE_MAX_POSTS &&
				      w.len <= PROBE_MAX_MR_BYTES &&
				      (w.op != PROBE_POST_FETCH_ADD || w.len == 8),
			       "probe post over limits");
	}
	probe_msg_setup_reply_parse(m, &qp, &mr, err);
	if (probe_msg_state_parse(m, &state, err) == 0)
		oracle(state.n_wc <= PROBE_MAX_WC, "probe state over PROBE_MAX_WC");
}

static void messages(struct oob *o, char *err)
{
	static uint8_t buf[OOB_MAX_PAYLOAD + 1];
	enum oob_type type;
	size_t len;

	/* A small buffer now and then: the "more than we accept" path. */
	for (size_t cap = 64; oob_recv_msg(o, &type, buf, cap, &len, err) == 0;
	     cap = cap == 64 ? sizeof(buf) : 64)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[XPORT_ERR_LEN];
	struct oob o = { .timeout_ms = 1000 };
	int sv[2];

	if (size < 1)
		return 0;
	if (data[0] % 5 == 4) {
		char *text = malloc(size);

		if (text && size >= 2) {	/* a NUL-terminated copy, as oob_recv gives */
			memcpy(text, data + 2, size - 2);
			text[size - 2] = '\0';
			fuzz_adopt_params(text, data[1] & 0x1F);
		}
		free(text);
		return 0;
	}
	if (data[0] % 5 == 3) {
		struct xport_qp_info info[QP_CAP];
		json_t *m = json_loadb((const char *)data + 1, size - 1, 0, NULL);
		struct perf_bw_result fig;
		struct ctl_verdict v;
		struct ctl_sent sent;
		struct ctl_mem mem;
		uint64_t run;
		unsigned n;
		bool stop;

		/* perftest's fixed-size messages, from the same bytes. */
		if (size - 1 >= PT_NEGOTIATE_LEN_DV) {
			struct pt_negotiate neg;
			struct pt_key k;
			char text[PT_VERSION_LEN];
			double v;

			pt_version_parse(data + 1, &v, text, err);
			pt_mtu_parse(data + 1);
			pt_key_parse((const char *)data + 1, PT_KEY_LEN_GID, true, &k, err);
			pt_key_parse((const char *)data + 1, PT_KEY_LEN, false, &k, err);
			pt_negotiate_parse(data + 1, &neg);
		}
		if (m) {
			ctl_qps_parse(m, info, QP_CAP, &n, err);
			ctl_mem_parse(m, &mem, err);
			ctl_run_parse(m, &run, err);
			ctl_done_parse(m, &stop, err);
			ctl_verdict_parse(m, &v, err);
			ctl_sent_parse(m, &sent, err);
			ctl_figures_parse(m, &fig, err);
			incast_parsers(m, err);
			probe_parsers(m, err);
		}
		json_decref(m);
		return 0;
	}
	if (size - 1 > OOB_MAX_PAYLOAD + 2 * OOB_HDR_LEN + 1024 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	/* The pair's buffers hold the whole input: the write never blocks. */
	if (write(sv[1], data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[1], SHUT_WR);
	o.fd = sv[0];
	strcpy(o.peer, "fuzz-peer:18515");
	if (data[0] % 5 == 2)
		messages(&o, err);
	else
		session(&o, data[0] % 5 == 0, err);
	oob_close(&o);
	close(sv[1]);
	return 0;
}
