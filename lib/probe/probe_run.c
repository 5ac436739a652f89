// SPDX-License-Identifier: MIT
/*
 * The probe's side: connect to `probe --serve`, then for each test a fresh
 * remote QP, the test's packets and the record of what came back.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "probe_int.h"

/* This side's QP numbers: any 24-bit value but 0 and 1 (QP0/QP1). */
#define PROBE_QPN_BASE 0x00D000

static void fail(struct probe_result *r, const char *fmt, const char *detail)
{
	r->verdict = PROBE_FAIL;
	/* The detail may be longer than the line: cut it, say where. */
	if (snprintf(r->observed, sizeof(r->observed), fmt, detail) >= (int)sizeof(r->observed))
		memcpy(r->observed + sizeof(r->observed) - 4, "...", 4);
}

/* A request and its answer; NULL (and the result fails) on any error. */
static json_t *ask(struct probe_ctx *c, json_t *req)
{
	char err[XPORT_ERR_LEN];
	json_t *j;

	if (ctl_send(&c->c, OOB_PARAMS, req, err) < 0 || !(j = ctl_recv(&c->c, OOB_RESULT, err))) {
		/* An ERROR from the remote ("peer: ...") refuses this request
		 * and the channel goes on; anything else ends the channel. */
		c->control_lost = strncmp(err, "peer: ", 6) != 0;
		fail(c->r, "the remote: %s", err);
		return NULL;
	}
	return j;
}

int probe_setup(struct probe_ctx *c, struct probe_setup *s)
{
	char err[XPORT_ERR_LEN];
	json_t *j;

	memset(&s->peer, 0, sizeof(s->peer));
	s->peer.qpn = c->qpn;
	s->peer.psn = c->psn;
	s->peer.gid[10] = s->peer.gid[11] = 0xFF;
	memcpy(&s->peer.gid[12], &c->link.local.sin_addr, 4);
	s->peer.udp_port = ntohs(c->link.local.sin_port);
	s->peer.mtu = s->mtu;
	s->peer.max_rd_atomic = 16;
	if (!(j = ask(c, probe_msg_setup(s))))
		return -1;
	if (probe_msg_setup_reply_parse(j, &c->rqp, &c->mr, err) < 0) {
		json_decref(j);
		c->control_lost = true;
		fail(c->r, "%s", err);
		return -1;
	}
	json_decref(j);
	if (!(c->rqp.gid[10] == 0xFF && c->rqp.gid[11] == 0xFF)) {
		fail(c->r, "%s", "the remote's GID is not an IPv4-mapped address: probes run over "
		     "IPv4 only");
		return -1;
	}
	c->remote.sin_family = AF_INET;
	memcpy(&c->remote.sin_addr, &c->rqp.gid[12], 4);
	c->remote.sin_port = htons(c->rqp.udp_port ? c->rqp.udp_port : ROCEV2_UDP_PORT);
	c->mtu = c->rqp.mtu < s->mtu ? c->rqp.mtu : s->mtu;
	return 0;
}

struct probe_setup probe_setup_defaults(int access, unsigned recvs)
{
	return (struct probe_setup){
		.mr_bytes = 4096, .fill = 0xA5, .access = access, .recvs = recvs,
		.recv_bytes = 1024, .mtu = 1024, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.min_rnr_timer = 12, .first_psn = -1,
	};
}

int probe_setup_default(struct probe_ctx *c, int access, unsigned recvs)
{
	struct probe_setup s = probe_setup_defaults(access, recvs);

	return probe_setup(c, &s);
}

int probe_quiet_limit_ms(const struct probe_ctx *c)
{
	int ms = c->peer.timeout_s > 0 ? c->peer.timeout_s * 1000 - 1000 : 10000;

	return ms < 1000 ? 1000 : ms > 10000 ? 10000 : ms;
}

int probe_fetch_state(struct probe_ctx *c)
{
	struct probe_trace *t = &c->r->trace;
	char err[XPORT_ERR_LEN];
	json_t *j;

	t->end_ns = probe_link_now_ns();
	j = ask(c, probe_msg_state_req());

	if (!j)
		return -1;
	if (probe_msg_state_parse(j, &t->remote, err) < 0) {
		json_decref(j);
		c->control_lost = true;
		fail(c->r, "%s", err);
		return -1;
	}
	json_decref(j);
	t->remote_known = true;
	return 0;
}

static struct probe_event *record(struct probe_ctx *c)
{
	struct probe_trace *t = &c->r->trace;

	if (t->n == PROBE_MAX_EVENTS) {
		t->truncated = true;
		return NULL;
	}
	memset(&t->ev[t->n], 0, sizeof(t->ev[0]));
	t->ev[t->n].frame = t->n + 1;
	return &t->ev[t->n++];
}

/* Builds and sends q; records it (and writes it to -w) when keep. */
static unsigned send_req(struct probe_ctx *c, const struct probe_req *q, bool keep)
{
	uint8_t frame[WIRE_IPV4_LEN + WIRE_UDP_LEN + 64 + 4096 + 8], payload[4096 + 64];
	struct wire_pkt p = { .encap = WIRE_ENCAP_ROCEV2 };
	const struct wire_opcode_info *op = wire_opcode_info(q->opcode);
	struct probe_event *e;
	uint64_t sent_ns;
	size_t len;

	if (q->len > sizeof(payload) || !op) {
		fail(c->r, "%s", "a request too large for the probe");
		return 0;
	}
	memset(payload, q->byte, q->len);
	/* The IP and UDP headers as the kernel will write them: the ICRC
	 * covers their unmasked fields, the IPv4 ID (0 under DF) among them. */
	p.ip4.frag = 0x4000;
	p.ip4.ecn = q->ce ? WIRE_CE : WIRE_ECT0;
	memcpy(p.ip4.src, &c->link.local.sin_addr, 4);
	memcpy(p.ip4.dst, &c->remote.sin_addr, 4);
	p.udp.sport = ntohs(c->link.local.sin_port);
	p.udp.dport = ntohs(c->remote.sin_port);
	p.bth.opcode = q->opcode;
	p.bth.pkey = WIRE_DEFAULT_PKEY;
	p.bth.dqpn = c->rqp.qpn;
	p.bth.ackreq = q->ackreq;
	p.bth.psn = q->psn & WIRE_PSN_MASK;
	p.reth = (struct wire_reth){ q->va, q->rkey, q->dmalen };
	p.aeth = (struct wire_aeth){ q->syndrome, q->msn };
	p.atomiceth = (struct wire_atomiceth){ q->va, q->rkey, q->swap_add, q->compare };
	p.atomicacketh.orig = q->orig;
	len = wire_build(frame, sizeof(frame), &p, payload, q->len);
	if (!len) {
		fail(c->r, "%s", "the probe could not build its request");
		return 0;
	}
	if (q->corrupt_icrc)
		frame[p.icrc_off] ^= 0x5A;
	/* Taken before the send: on loopback the answer can be timestamped
	 * before sendto() returns. */
	sent_ns = probe_link_now_ns();
	if (probe_link_send(&c->link, frame + p.bth_off, len - p.bth_off, &c->remote,
			    q->ce ? WIRE_CE : WIRE_ECT0) < 0) {
		fail(c->r, "sending to the remote: %s", strerror(errno));
		return 0;
	}
	if (!keep)
		return 1;
	if (!(e = record(c))) {
		fail(c->r, "%s", "more packets than a test's record holds: the remote flooded it");
		return 0;
	}
	probe_pcap_write(c->pcap, sent_ns, frame, len);
	*e = (struct probe_event){
		.frame = e->frame, .t_ns = sent_ns, .opcode = q->opcode,
		.dqpn = c->rqp.qpn, .psn = p.bth.psn, .ackreq = q->ackreq,
		.payload_len = q->len, .tos = q->ce ? WIRE_CE : WIRE_ECT0,
		.icrc_corrupt = q->corrupt_icrc,
		.has_aeth = (op->ext & WIRE_X_AETH) != 0, .syndrome = q->syndrome, .msn = q->msn,
	};
	if (op->ext & WIRE_X_RETH) {
		e->va = q->va;
		e->dmalen = q->dmalen;
	}
	if (op->ext & WIRE_X_ATOMICACKETH)
		e->orig = q->orig;
	return e->frame;
}

unsigned probe_send(struct probe_ctx *c, const struct probe_req *q)
{
	return send_req(c, q, true);
}

bool probe_send_quiet(struct probe_ctx *c, const struct probe_req *q)
{
	return send_req(c, q, false) != 0;
}

/* One packet from the remote into the record; true when it answers psn. */
static bool take(struct probe_ctx *c, const uint8_t *buf, size_t len, uint64_t t_ns, uint8_t tos,
		 const struct sockaddr_in *from, int64_t psn)
{
	uint16_t sport = ntohs(from->sin_port);
	struct wire_pkt p;
	struct probe_event *e;

	if (wire_decode_bth(&p, buf, len) != WIRE_OK || p.bth.dqpn != c->qpn || !(e = record(c)))
		return false;
	e->rx = true;
	e->t_ns = t_ns;
	e->opcode = p.bth.opcode;
	e->dqpn = p.bth.dqpn;
	e->psn = p.bth.psn;
	e->ackreq = p.bth.ackreq;
	e->has_aeth = p.ext & WIRE_X_AETH;
	e->syndrome = p.aeth.syndrome;
	e->msn = p.aeth.msn;
	e->payload_len = (uint32_t)p.payload_len;
	e->orig = p.atomicacketh.orig;
	for (size_t k = 0; k < 8 && k < p.payload_len; k++)
		e->data = e->data << 8 | buf[p.payload_off + k];
	if (p.ext & WIRE_X_RETH) {
		e->va = p.reth.va;
		e->dmalen = p.reth.dmalen;
	}
	if (p.ext & WIRE_X_ATOMICETH) {
		e->va = p.atomiceth.va;
		e->swap_add = p.atomiceth.swap_add;
	}
	e->tos = tos;
	e->sport = sport;
	e->icrc_ok = icrc_solve_udp_rocev2(&c->basis, buf, len, (const uint8_t *)&c->remote.sin_addr,
					   (const uint8_t *)&c->link.local.sin_addr, sport,
					   ntohs(c->link.local.sin_port), &e->ip_id, &e->df);
	probe_pcap_write_rx(c->pcap, e, from, &c->link.local, buf, len);
	return e->has_aeth && psn >= 0 && e->psn == (uint32_t)psn;
}

void probe_collect(struct probe_ctx *c, int64_t psn, int wait_ms, int settle_ms)
{
	uint64_t end = probe_deadline_ms((uint64_t)wait_ms);
	uint8_t buf[4096 + 256];
	int left;

	while ((left = probe_ms_left(end)) > 0 && !(c->o->stop && *c->o->stop)) {
		struct sockaddr_in from;
		uint64_t t_ns;
		size_t len;
		uint8_t tos;
		int rc = probe_link_recv(&c->link, buf, sizeof(buf), &len, &from, &t_ns, &tos,
					 (uint64_t)left * 1000);

		if (rc <= 0)
			continue;
		if (from.sin_addr.s_addr != c->remote.sin_addr.s_addr)
			continue;
		if (take(c, buf, len, t_ns, tos, &from, psn)) {
			uint64_t settle = probe_deadline_ms((uint64_t)settle_ms);

			if (settle < end)
				end = settle;
			psn = -1;
		}
	}
}

void probe_check_alive(struct probe_ctx *c, uint32_t psn, int wait_ms)
{
	struct probe_trace *t = &c->r->trace;
	const struct probe_req q = { .opcode = OP_RC_WRITE_ONLY, .psn = psn, .ackreq = true,
				     .va = c->mr.va, .rkey = c->mr.rkey };
	unsigned frame;

	if (probe_find_answer(t, psn, 0) >= 0 || !(frame = probe_send(c, &q)))
		return;
	probe_collect(c, psn, wait_ms, 0);
	t->liveness_frame = frame;
	/* Any answer shows the QP alive, a NAK for another PSN too. */
	for (unsigned i = frame; i < t->n && !t->alive; i++)
		t->alive = t->ev[i].rx;
}

int probe_next_quiet(struct probe_ctx *c, struct probe_raw *raw, struct wire_pkt *p,
		     uint64_t wait_us)
{
	uint64_t end = probe_mono_us() + wait_us, now;

	do {
		int rc = probe_link_recv(&c->link, raw->buf, sizeof(raw->buf), &raw->len,
					 &raw->from, &raw->t_ns, &raw->tos, wait_us);

		if (rc < 0)
			return -1;
		if (rc > 0 && raw->from.sin_addr.s_addr == c->remote.sin_addr.s_addr &&
		    wire_decode_bth(p, raw->buf, raw->len) == WIRE_OK && p->bth.dqpn == c->qpn)
			return 1;
		now = probe_mono_us();
		wait_us = now < end ? end - now : 0;
	} while (wait_us && !(c->o->stop && *c->o->stop));
	return 0;
}

void probe_keep(struct probe_ctx *c, const struct probe_raw *raw)
{
	take(c, raw->buf, raw->len, raw->t_ns, raw->tos, &raw->from, -1);
}

unsigned probe_answer(struct probe_ctx *c, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	const struct probe_req q = { .opcode = OP_RC_ACK, .psn = psn, .syndrome = syndrome,
				     .msn = msn };

	return probe_send(c, &q);
}

int probe_next(struct probe_ctx *c, int timeout_ms)
{
	uint64_t end = probe_deadline_ms((uint64_t)timeout_ms);
	uint8_t buf[4096 + 256];
	int left;

	while ((left = probe_ms_left(end)) > 0 && !(c->o->stop && *c->o->stop)) {
		struct probe_trace *t = &c->r->trace;
		struct sockaddr_in from;
		unsigned before = t->n;
		uint64_t t_ns;
		size_t len;
		uint8_t tos;

		if (probe_link_recv(&c->link, buf, sizeof(buf), &len, &from, &t_ns, &tos,
				    (uint64_t)left * 1000) <= 0 ||
		    from.sin_addr.s_addr != c->remote.sin_addr.s_addr)
			continue;
		take(c, buf, len, t_ns, tos, &from, -1);
		if (t->n > before)
			return (int)before;
		if (t->truncated)
			return -1;
	}
	return -1;
}

int probe_post(struct probe_ctx *c, const struct probe_post *w)
{
	json_t *j = ask(c, probe_msg_post(w));

	json_decref(j);
	return j ? 0 : -1;
}

static int teardown(struct probe_ctx *c)
{
	json_t *j = ask(c, probe_msg_teardown());

	json_decref(j);
	return j ? 0 : -1;
}

/* Opens the control channel and the endpoint: 0, or -1 with err. */
static int open_probe(struct probe_ctx *c, struct probe_report *out, char *err)
{
	char local[48];
	json_t *j;
	int rc;

	if (oob_connect_from(c->o->host, c->o->port, c->o->bind_source, c->o->timeout_s * 1000,
			     &c->c, err) < 0)
		return -1;
	c->c.stop = c->o->stop;
	c->c.key = c->o->auth_key;
	if (oob_hello(&c->c, false, err) < 0)
		return -1;
	snprintf(c->peer.version, sizeof(c->peer.version), "%s", c->c.peer_version);
	if (ctl_send(&c->c, OOB_PARAMS, probe_msg_hello(), err) < 0)
		return -1;
	if (!(j = ctl_recv(&c->c, OOB_PARAMS, err))) {
		char said[XPORT_ERR_LEN];

		/* An rdmakit that is no probe server refuses the opening. */
		if (!strncmp(err, "peer: ", 6)) {
			snprintf(said, sizeof(said), "%s", err + 6);
			snprintf(err, XPORT_ERR_LEN, "%s:%u is rdmakit but not 'rdmakit probe --serve' "
				 "(it said: %.300s): start 'rdmakit probe --serve' there", c->o->host,
				 c->o->port, said);
		}
		return -1;
	}
	rc = probe_msg_serve_parse(j, &c->peer, err);
	json_decref(j);
	if (rc < 0)
		return -1;
	oob_socket_addr(c->c.fd, true, local, sizeof(local));
	if (probe_link_open(&c->link, local, err) < 0)
		return -1;
	/* A verbs remote sends RoCEv2 to port 4791 and nowhere else. */
	if (!strcmp(c->peer.engine, "verbs") && ntohs(c->link.local.sin_port) != ROCEV2_UDP_PORT) {
		snprintf(err, XPORT_ERR_LEN, "UDP port 4791 on %s is taken (rxe, or an rdmakit soft-"
			 "engine server): free it, since the verbs remote sends only there", local);
		return -1;
	}
	out->peer = c->peer;
	snprintf(out->local, sizeof(out->local), "%s:%u", local, ntohs(c->link.local.sin_port));
	return 0;
}

int probe_run(const struct probe_opts *o, const struct probe_test *const *tests, size_t n,
	      struct probe_report *out, char *err)
{
	struct probe_ctx c = { .o = o, .c = { .fd = -1 }, .link = { .fd = -1 } };
	size_t all;
	const struct probe_test *every = probe_tests(&all);

	unsigned frames = 0;

	memset(out, 0, sizeof(*out));
	/* The file first: a bad -w path costs no connection. */
	if ((o->write_file && probe_pcap_open(&c.pcap, o->write_file, err) < 0) ||
	    open_probe(&c, out, err) < 0) {
		char ignored[XPORT_ERR_LEN];

		oob_close(&c.c);
		probe_link_close(&c.link);
		/* Nothing was captured: no empty file left behind. */
		if (c.pcap) {
			probe_pcap_close(c.pcap, ignored);
			unlink(o->write_file);
		}
		return -1;
	}
	out->n = n ? n : all;
	out->results = calloc(out->n, sizeof(*out->results));
	if (!out->results) {
		char ignored[XPORT_ERR_LEN];

		snprintf(err, XPORT_ERR_LEN, "out of memory");
		oob_close(&c.c);
		probe_link_close(&c.link);
		probe_pcap_close(c.pcap, ignored);
		return -1;
	}
	for (size_t i = 0; i < out->n; i++) {
		struct probe_result *r = &out->results[i];

		r->test = n ? tests[i] : &every[i];
		r->frame_base = frames;
		c.r = r;
		if (o->stop && *o->stop) {
			fail(r, "%s", "interrupted");
		} else if (c.control_lost) {
			fail(r, "%s", "not run: the control channel to the remote was lost");
		} else if ((r->test->needs & PROBE_NEEDS_ATOMICS) && !c.peer.atomics) {
			r->verdict = PROBE_SKIPPED;
			snprintf(r->observed, sizeof(r->observed), "the remote's %s device has no "
				 "RC atomics (atomic_cap none)", c.peer.engine);
		} else {
			/* A fresh QP number and a PSN of the test's own for each test, so
			 * that nothing left over from the last one is mistaken for this one's. */
			c.qpn = PROBE_QPN_BASE + (uint32_t)i;
			c.psn = (0x1000 * (uint32_t)(i + 1)) & WIRE_PSN_MASK;
			if (r->test->run(&c, r) == 0) {
				if (!c.control_lost)
					teardown(&c);
			} else if (r->verdict != PROBE_FAIL) {
				/* No verdict reached: never the zero value, pass. */
				char why[PROBE_TEXT_LEN];

				snprintf(why, sizeof(why), "%s", r->observed[0] ? r->observed
						: "the test could not run to a verdict");
				fail(r, "%s", why);
			}
		}
		out->count[r->verdict]++;
		frames += r->trace.n;
	}
	if (!c.control_lost)
		oob_bye(&c.c, err);
	oob_close(&c.c);
	probe_link_close(&c.link);
	/* The results stand; the caller reports the file's failure after them. */
	probe_pcap_close(c.pcap, out->write_error);
	return 0;
}

void probe_report_free(struct probe_report *r)
{
	free(r->results);
	r->results = NULL;
}

/* --- --accept ---------------------------------------------------------------- */

int probe_accept_load(const char *path, struct probe_accept *a, char *err)
{
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned lineno = 0;

	memset(a, 0, sizeof(*a));
	if (!f)
		return snprintf(err, XPORT_ERR_LEN, "--accept %s: %s", path, strerror(errno)), -1;
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *end, **grown;

		lineno++;
		if ((end = strchr(s, '#')))
			*end = '\0';
		while (isspace((unsigned char)*s))
			s++;
		for (end = s + strlen(s); end > s && isspace((unsigned char)end[-1]);)
			*--end = '\0';
		if (!*s)
			continue;
		if (!probe_test_find(s)) {
			snprintf(err, XPORT_ERR_LEN, "--accept %s, line %u: no test named '%.64s' "
				 "(rdmakit probe --list shows them)", path, lineno, s);
			fclose(f);
			probe_accept_free(a);
			return -1;
		}
		grown = realloc(a->names, (a->n + 1) * sizeof(*a->names));
		if (!grown || !(grown[a->n] = strdup(s))) {
			a->names = grown ? grown : a->names;
			fclose(f);
			probe_accept_free(a);
			return snprintf(err, XPORT_ERR_LEN, "out of memory"), -1;
		}
		a->names = grown;
		a->n++;
	}
	fclose(f);
	return 0;
}

bool probe_accept_has(const struct probe_accept *a, const char *name)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (!strcmp(a->names[i], name))
			return true;
	return false;
}

void probe_accept_free(struct probe_accept *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->names[i]);
	free(a->names);
	memset(a, 0, sizeof(*a));
}
