// SPDX-License-Identifier: MIT
/*
 * A session with perftest on the other end: its TCP exchange in the order
 * each test binary runs it (../shared/reference/perftest-oob.md §3-§11),
 * in either role.  perftest checks almost nothing and exits on what it
 * does check, so this side checks what it can (versions, GID families,
 * the negotiated parameters of 6.28+) and names the option to change.
 */
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pt_int.h"

#define MAX_CYCLE (2u << 20)		/* a page size we accept from a peer */
#define MAX_CACHE_LINE 4096u
#define NEG_TAIL_WAIT_MS 300		/* 312 bytes in: are 8 more coming (320)? */
#define DRAIN_MS 2000			/* §11: swallow 6.06's "done" before closing */

static bool is_lat(const struct perf_session *s)
{
	return s->o.latency;
}

bool pt_is_passive_bw(const struct perf_session *s)
{
	return !is_lat(s) && s->o.op != PERF_SEND && !s->o.bidirectional;
}

/* §7's verb for this test. */
static int32_t pt_verb(const struct perf_opts *o)
{
	switch (o->op) {
	case PERF_WRITE: return PT_VERB_WRITE;
	case PERF_READ: return PT_VERB_READ;
	case PERF_SEND: return PT_VERB_SEND;
	case PERF_ATOMIC: break;
	}
	return PT_VERB_ATOMIC;
}

/* perftest's connection_type: RC 0, UC 1, UD 2 (its enum ctx_connection_type). */
static int32_t pt_connection(enum xport_qp_type t)
{
	return t == XPORT_QPT_UD ? 2 : t == XPORT_QPT_UC ? 1 : 0;
}

/* The test's own parameters as perftest would fill the struct (§7). */
static void negotiate_mine(const struct perf_session *s, struct pt_negotiate *n)
{
	const struct perf_opts *o = &s->o;

	memset(n, 0, sizeof(*n));
	n->test_method = o->sweep ? PT_RUN_ALL : PT_RUN_REGULAR;
	n->verb = pt_verb(o);
	n->tst = o->latency ? PT_TST_LAT : PT_TST_BW;
	n->atomic_type = o->op == PERF_ATOMIC && !o->atomic_cas ? PT_FETCH_AND_ADD : PT_CMP_AND_SWAP;
	n->test_type = o->iters ? 0 : 1;
	n->report_fmt = o->report_gbits ? 0 : 1;	/* GBS or MBS, perftest's default */
	n->size = o->sweep ? PERF_MAX_SIZE : o->op == PERF_ATOMIC ? 8 : o->size;
	n->iters = o->iters ? s->pt->iters_per_qp : 0;
	n->num_of_qps = (int32_t)o->qps;
	n->duration = o->iters ? 5 : (int32_t)ceil(o->duration);
	n->max_qp_rd_atom = (int32_t)(o->outs ? o->outs : 16);
	n->connection_type = pt_connection(o->conn);
}

/* The option a negotiated field stands for, in the words of both tools. */
static const char *negotiate_option(const char *field)
{
	static const struct { const char *field, *option; } map[] = {
		{ "test_method", "-a (or --run_infinitely)" }, { "connection_type", "-c" },
		{ "verb", "the test (ib_write/read/send/atomic vs --op)" },
		{ "tst", "the test (bw vs lat)" }, { "atomicType", "-A/--atomic_type" },
		{ "test_type", "-n vs -D" }, { "report_fmt", "--report_gbits" },
		{ "size", "-s/-a" }, { "iters", "-n" }, { "num_of_qps", "-q" },
		{ "duration", "-D" }, { "use_rdma_cm", "-R" },
		{ "use_write_with_imm", "--write_with_imm" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].field, field))
			return map[i].option;
	return field;
}

static int sync_impl(struct perf_session *s, bool drive, char *err)
{
	struct pt_state *pt = s->pt;
	char in[PT_KEY_LEN_GID];
	struct pt_key k;

	if (s->role == PERF_CLIENT && oob_send_raw(&s->oob, pt->key0, pt->key_len, err) < 0)
		goto fail;
	if ((drive && pt_wait_peer(s, false, err) < 0) ||
	    oob_recv_raw(&s->oob, in, pt->key_len, err) < 0 ||
	    pt_key_parse(in, pt->key_len, pt->gid_format, &k, err) < 0)
		goto fail;
	if (s->role == PERF_SERVER && oob_send_raw(&s->oob, pt->key0, pt->key_len, err) < 0)
		goto fail;
	return 0;
fail:
	pt->broken = true;
	return -1;
}

int pt_sync(struct perf_session *s, char *err)
{
	return sync_impl(s, false, err);
}

int pt_sync_driving(struct perf_session *s, char *err)
{
	return sync_impl(s, true, err);
}

/* K(N): one key message each way per QP, the client first (§8). */
static int swap_keys(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;

	for (unsigned i = 0; i < s->o.qps; i++) {
		char out[PT_KEY_LEN_GID], in[PT_KEY_LEN_GID];

		pt_key_build(&pt->mine[i], pt->gid_format, out);
		if ((s->role == PERF_CLIENT && oob_send_raw(&s->oob, out, pt->key_len, err) < 0) ||
		    oob_recv_raw(&s->oob, in, pt->key_len, err) < 0 ||
		    pt_key_parse(in, pt->key_len, pt->gid_format, &pt->theirs[i], err) < 0 ||
		    (s->role == PERF_SERVER && oob_send_raw(&s->oob, out, pt->key_len, err) < 0)) {
			pt->broken = true;
			return -1;
		}
	}
	return 0;
}

/* One 4-byte value each way (§5), big-endian. */
static int swap_u32(struct perf_session *s, uint32_t mine, uint32_t *theirs, char *err)
{
	uint8_t out[4], in[4];

	pt_put_be32(out, mine);
	if ((s->role == PERF_CLIENT && oob_send_raw(&s->oob, out, 4, err) < 0) ||
	    oob_recv_raw(&s->oob, in, 4, err) < 0 ||
	    (s->role == PERF_SERVER && oob_send_raw(&s->oob, out, 4, err) < 0))
		return -1;
	*theirs = pt_get_be32(in);
	return 0;
}

/* §5: page size and cache line; both sides adopt the larger. */
static int sys_data(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;
	long page = sysconf(_SC_PAGESIZE), line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	uint32_t cycle = page > 0 ? (uint32_t)page : 4096, cl = line > 0 ? (uint32_t)line : 64;
	uint32_t rc, rl;

	if (swap_u32(s, cycle, &rc, err) < 0 || swap_u32(s, cl, &rl, err) < 0)
		return -1;
	if (rc > MAX_CYCLE || rl > MAX_CACHE_LINE) {
		snprintf(err, XPORT_ERR_LEN, "the perftest peer at %s sent a page size of %" PRIu32
			 " and a cache line of %" PRIu32 " bytes; this side accepts at most %u and "
			 "%u", s->oob.peer, rc, rl, MAX_CYCLE, MAX_CACHE_LINE);
		return -1;
	}
	pt->cycle = rc > cycle ? rc : cycle;
	pt->cache_line = rl > cl ? rl : cl;
	return 0;
}

/* §6: both sides end at the smaller MTU. */
static int swap_mtu(struct perf_session *s, char *err)
{
	struct xport_qp_info info;
	uint8_t out[PT_MTU_LEN], in[PT_MTU_LEN];
	uint32_t theirs;

	xport_qp_info(s->a.qp[0], &info);
	pt_mtu_build(info.mtu, out);
	if ((s->role == PERF_CLIENT && oob_send_raw(&s->oob, out, sizeof(out), err) < 0) ||
	    oob_recv_raw(&s->oob, in, sizeof(in), err) < 0 ||
	    (s->role == PERF_SERVER && oob_send_raw(&s->oob, out, sizeof(out), err) < 0))
		return -1;
	theirs = pt_mtu_parse(in);
	s->eff_mtu = theirs && theirs < info.mtu ? theirs : info.mtu;
	return 0;
}

/* The buffers: every QP's slot holds a full message and perftest's cycle
 * buffer, which its clients step through for small messages (§13). */
static int open_end(struct perf_session *s, char *err)
{
	uint64_t need = s->o.sweep ? PERF_MAX_SIZE : s->o.size;

	s->max_size = need > s->pt->cycle ? need : s->pt->cycle;
	return perf_end_open(s, &s->a, err);
}

/* A server adopts what a 6.28+ client negotiated (§16.2). */
static int adopt_negotiated(struct perf_session *s, const struct pt_negotiate *n, char *err)
{
	struct perf_opts *o = &s->o, t = s->o;
	bool lat = n->tst == PT_TST_LAT;

	if (n->connection_type < 0 || n->connection_type > 2 || n->use_rdma_cm ||
	    n->use_write_with_imm || n->data_validation || n->aes_xts || n->sig_offload ||
	    n->test_method == PT_RUN_INFINITELY) {
		snprintf(err, XPORT_ERR_LEN, "the perftest client at %s asked for what this server "
			 "does not run (-c %d, -R, --write_with_imm, --data_validation, AES-XTS, "
			 "signature offload or --run_infinitely): run it with RC, UC or UD over the "
			 "TCP exchange", s->oob.peer, n->connection_type);
		return -1;
	}
	t.conn = n->connection_type == 2 ? XPORT_QPT_UD : n->connection_type == 1 ?
		 XPORT_QPT_UC : XPORT_QPT_RC;
	if (lat != o->latency || (n->tst != PT_TST_LAT && n->tst != PT_TST_BW)) {
		snprintf(err, XPORT_ERR_LEN, "the perftest client at %s runs a %s test; this is "
			 "rdmakit %s: start rdmakit %s instead", s->oob.peer, lat ? "latency" :
			 "bandwidth", o->latency ? "lat" : "bw", lat ? "lat" : "bw");
		return -1;
	}
	switch (n->verb) {
	case PT_VERB_WRITE: t.op = PERF_WRITE; break;
	case PT_VERB_READ: t.op = PERF_READ; break;
	case PT_VERB_SEND: t.op = PERF_SEND; break;
	case PT_VERB_ATOMIC: t.op = PERF_ATOMIC; break;
	default:
		snprintf(err, XPORT_ERR_LEN, "the perftest client at %s runs verb %d (SEND or WRITE "
			 "with immediate), which this server does not run", s->oob.peer, n->verb);
		return -1;
	}
	t.atomic_cas = t.op == PERF_ATOMIC && n->atomic_type == PT_CMP_AND_SWAP;
	t.sweep = n->test_method == PT_RUN_ALL;
	t.size = t.sweep ? o->size : n->size;
	t.qps = (unsigned)n->num_of_qps;
	if (n->num_of_qps < 1 || n->num_of_qps > PERF_MAX_QPS || n->size < 1 ||
	    n->size > PERF_MAX_SIZE || (n->test_type == 0 && (n->iters < PERF_MIN_ITERS ||
							      n->iters > PERF_MAX_ITERS / t.qps))) {
		snprintf(err, XPORT_ERR_LEN, "the perftest client at %s asked for %d QPs, %" PRIu64
			 "-byte messages and %" PRIu64 " iterations: this server runs 1..%d QPs, "
			 "1..%u bytes and %d.. iterations", s->oob.peer, n->num_of_qps, n->size,
			 n->iters, PERF_MAX_QPS, PERF_MAX_SIZE, PERF_MIN_ITERS);
		return -1;
	}
	s->pt->iters_per_qp = n->test_type == 0 ? n->iters : 0;
	t.iters = n->test_type == 0 ? n->iters * (lat ? 1 : t.qps) : 0;
	t.duration = n->test_type == 0 ? o->duration : (double)n->duration;
	/* What this server was told itself must agree (as with rdmakit clients). */
	if (((o->explicit_set & PERF_SET_OP) && (o->op != t.op || o->atomic_cas != t.atomic_cas)) ||
	    ((o->explicit_set & PERF_SET_SIZE) && !t.sweep && o->size != t.size) ||
	    ((o->explicit_set & PERF_SET_QPS) && o->qps != t.qps) ||
	    ((o->explicit_set & PERF_SET_ITERS) && o->iters != t.iters) ||
	    ((o->explicit_set & PERF_SET_DURATION) && t.iters)) {
		snprintf(err, XPORT_ERR_LEN, "the perftest client at %s negotiated --op %s, -s %" PRIu64
			 ", -q %u and %s, which differ from this server's own options: give them on "
			 "the client only, or the same on both", s->oob.peer, perf_op_name(t.op),
			 t.size, t.qps, t.iters ? "-n" : "-D");
		return -1;
	}
	{
		uint64_t limit = o->max_memory ? o->max_memory : perf_default_max_memory();
		uint64_t sz = t.sweep ? PERF_MAX_SIZE : t.size;
		uint64_t need = 2 * ((sz > s->pt->cycle ? sz : s->pt->cycle) + 64) * t.qps;

		if (need > limit) {
			snprintf(err, XPORT_ERR_LEN, "the perftest client's test needs %" PRIu64 " MiB "
				 "of buffers, more than this server's --max-memory of %" PRIu64 " MiB: "
				 "use fewer QPs or smaller messages, or raise --max-memory",
				 (need + (1 << 20) - 1) >> 20, limit >> 20);
			return -1;
		}
	}
	if (t.op == PERF_ATOMIC)
		t.size = 8;
	*o = t;
	return 0;
}

/*
 * §7: the parameter struct, when both sides announce 6.28 or later.  The
 * client sends its own; a server measures the client's (312 or 320
 * bytes), adopts it, and sends back its first 80 bytes unchanged (so
 * every comparison passes) with this side's device limits.
 */
static int negotiate(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;
	struct pt_negotiate mine, theirs;
	uint8_t out[PT_NEGOTIATE_LEN_DV], in[PT_NEGOTIATE_LEN_DV];
	char why[160];

	pt->negotiated = true;
	if (s->role == PERF_CLIENT) {
		pt->neg_len = s->o.perftest_struct ? s->o.perftest_struct : PT_NEGOTIATE_LEN_DV;
		negotiate_mine(s, &mine);
		pt_negotiate_build(&mine, pt->neg_len, out);
		if (oob_send_raw(&s->oob, out, pt->neg_len, err) < 0 ||
		    oob_recv_raw(&s->oob, in, pt->neg_len, err) < 0)
			return -1;
		pt_negotiate_parse(in, &theirs);
		if (pt_negotiate_mismatch(&mine, &theirs, why, sizeof(why))) {
			snprintf(err, XPORT_ERR_LEN, "the perftest server at %s runs another test "
				 "(%s): give %s the same on both sides", s->oob.peer, why,
				 negotiate_option(pt_negotiate_mismatch(&mine, &theirs, why,
									sizeof(why))));
			return -1;
		}
	} else {
		int more;

		if (oob_recv_raw(&s->oob, in, PT_NEGOTIATE_LEN, err) < 0)
			return -1;
		more = oob_recv_raw_within(&s->oob, in + PT_NEGOTIATE_LEN,
					   PT_NEGOTIATE_LEN_DV - PT_NEGOTIATE_LEN, NEG_TAIL_WAIT_MS, err);
		if (more < 0)
			return -1;
		pt->neg_len = more ? PT_NEGOTIATE_LEN_DV : PT_NEGOTIATE_LEN;
		pt_negotiate_parse(in, &theirs);
		if (adopt_negotiated(s, &theirs, err) < 0)
			return -1;
		negotiate_mine(s, &mine);
		pt_negotiate_build(&mine, pt->neg_len, out);
		memcpy(out, in, 80);
		if (oob_send_raw(&s->oob, out, pt->neg_len, err) < 0)
			return -1;
	}
	/* perftest lowers its outstanding READs to the peer's device limit. */
	if (theirs.max_qp_rd_atom > 0 && (unsigned)theirs.max_qp_rd_atom < s->o.outs)
		s->o.outs = (unsigned)theirs.max_qp_rd_atom;
	return 0;
}

/* This side's keys: where each QP's peer lands (the second half of its slot). */
static void fill_keys(struct perf_session *s)
{
	struct pt_state *pt = s->pt;
	bool rd = s->o.op == PERF_READ || s->o.op == PERF_ATOMIC;

	for (unsigned i = 0; i < s->o.qps; i++) {
		struct xport_qp_info info;
		struct pt_key *k = &pt->mine[i];

		xport_qp_info(s->a.qp[i], &info);
		memset(k, 0, sizeof(*k));
		k->lid = info.lid;
		/* What this side accepts as a responder; 1 for WRITE and SEND, as perftest. */
		k->out_reads = (uint16_t)(rd ? (s->o.outs ? s->o.outs : 16) : 1);
		k->qpn = info.qpn;
		k->psn = info.psn & 0xffffff;
		k->rkey = s->a.mr->rkey;
		k->vaddr = (uint64_t)(uintptr_t)s->a.buf + i * s->a.slot + s->a.half;
		memcpy(k->gid, info.gid, 16);
		if (i == 0)
			pt->gid_format = !(info.lid && s->o.gid_index < 0);
	}
	pt->key_len = pt->gid_format ? PT_KEY_LEN_GID : PT_KEY_LEN;
	pt_key_build(&pt->mine[0], pt->gid_format, pt->key0);
	/* Before the peer has a key: its atomics may land the moment it does. */
	pt->word_sum0 = pt_word_sum(s);
}

static int connect_all(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;

	if (pt_gid_v4mapped(pt->mine[0].gid) != pt_gid_v4mapped(pt->theirs[0].gid)) {
		snprintf(err, XPORT_ERR_LEN, "the perftest peer at %s uses an %s GID and this side "
			 "an %s one: give both sides GIDs of one family (perftest: -x INDEX or "
			 "--ipv6; rdmakit: -x or --bind)", s->oob.peer,
			 pt_gid_v4mapped(pt->theirs[0].gid) ? "IPv4" : "IPv6",
			 pt_gid_v4mapped(pt->mine[0].gid) ? "IPv4" : "IPv6");
		return -1;
	}
	for (unsigned i = 0; i < s->o.qps; i++) {
		const struct pt_key *k = &pt->theirs[i];
		unsigned outs = s->o.outs ? s->o.outs : 16;
		struct xport_qp_info peer = {
			.qpn = k->qpn, .psn = k->psn, .lid = k->lid, .mtu = s->eff_mtu,
			/* §12: our initiator depth is the peer's out_reads, within our own. */
			.max_rd_atomic = (uint8_t)(k->out_reads < outs ? (k->out_reads ? k->out_reads : 1) :
						   outs),
		};

		memcpy(peer.gid, k->gid, 16);
		if (xport_connect(s->a.qp[i], &peer, err) < 0)
			return -1;
	}
	return 0;
}

/* Where this side's operations land: the peer's QP 0 address, the stride
 * between its QPs' (perftest: one region, §13) and its one rkey. */
static int remote_layout(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;
	uint64_t stride = s->o.qps > 1 ? pt->theirs[1].vaddr - pt->theirs[0].vaddr : 0;

	for (unsigned i = 1; i < s->o.qps; i++)
		if (pt->theirs[i].rkey != pt->theirs[0].rkey ||
		    pt->theirs[i].vaddr != pt->theirs[0].vaddr + i * stride) {
			snprintf(err, XPORT_ERR_LEN, "the perftest peer at %s gives each QP a memory "
				 "region of its own (--mr_per_qp): run it without", s->oob.peer);
			return -1;
		}
	s->a.remote_va = pt->theirs[0].vaddr;
	s->a.remote_rkey = pt->theirs[0].rkey;
	s->a.peer_slot = (size_t)stride;
	return 0;
}

/* §9: keys, connection and the syncs before the first run, per test. */
static int connect_sequence(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;
	bool lat = is_lat(s), send = s->o.op == PERF_SEND;

	fill_keys(s);
	if ((lat && !send && pt_sync(s, err) < 0) || swap_keys(s, err) < 0 ||
	    connect_all(s, err) < 0 || (send && pt_sync(s, err) < 0) || swap_keys(s, err) < 0 ||
	    (!send && pt_sync(s, err) < 0) || remote_layout(s, err) < 0) {
		pt->broken = true;
		return -1;
	}
	pt->t_start_ns = perf_now_ns();
	/* What the close owes (§9): the client's report in passive bw
	 * tests, and the final sync in all but write latency. */
	pt->report_due = pt_is_passive_bw(s) && s->role == PERF_CLIENT;
	pt->close_sync_due = !(lat && s->o.op == PERF_WRITE);
	return 0;
}

/* What perftest cannot do with us, refused before anything is sent. */
static int check_opts(struct perf_session *s, char *err)
{
	const struct perf_opts *o = &s->o;
	const char *what = o->verify ? "--verify (perftest fills its buffers with rand() and "
				       "checks nothing; write latency and atomics are checked "
				       "anyway)" :
			   o->bidirectional && !o->iters ? "-D with -b (perftest sends no report "
							    "then: not yet)" :
			   o->rdma_cm ? "-R/--rdma-cm (perftest's CM exchange is not supported)" :
			   NULL;

	if (!what)
		return 0;
	snprintf(err, XPORT_ERR_LEN, "the peer at %s is perftest %s: drop %s", s->oob.peer,
		 s->pt->peer_version, what);
	return -1;
}

static int peer_version(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;

	if (pt_version_parse(s->oob.pt_version, &pt->peer_v, pt->peer_version, err) < 0)
		return -1;
	if (pt->peer_v < PT_VERSION_MIN) {
		snprintf(err, XPORT_ERR_LEN, "the perftest peer at %s announces version %s; perftest "
			 "older than 5.70 has another exchange: upgrade it", s->oob.peer,
			 pt->peer_version);
		return -1;
	}
	return 0;
}

static struct pt_state *pt_new(struct perf_session *s, char *err)
{
	s->pt = calloc(1, sizeof(*s->pt));
	if (!s->pt)
		snprintf(err, XPORT_ERR_LEN, "out of memory");
	return s->pt;
}

/* perftest counts -n per QP (bw); rdmakit's runs count them in all. */
static void per_qp_iters(struct perf_session *s)
{
	s->pt->iters_per_qp = s->o.iters;
	if (!s->o.latency)
		s->o.iters *= s->o.qps;
}

static int open_common(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;
	char local[64];

	oob_socket_addr(s->oob.fd, true, local, sizeof(local));
	if (sys_data(s, err) < 0 || perf_open_dev(s, s->o.bind ? s->o.bind : local, err) < 0 ||
	    open_end(s, err) < 0 || swap_mtu(s, err) < 0)
		return -1;
	/* perftest runs a UD -s over the MTU at the MTU (what both then negotiate). */
	if (s->o.conn == XPORT_QPT_UD && !s->o.sweep && s->o.size > s->eff_mtu)
		s->o.size = s->eff_mtu;
	if (pt->peer_v >= PT_VERSION_NEGOTIATES && pt->my_v >= PT_VERSION_NEGOTIATES) {
		struct perf_opts before = s->o;

		if (negotiate(s, err) < 0)
			return -1;
		/* A server that adopted another test lays out its buffers anew. */
		if (before.qps != s->o.qps || before.size != s->o.size || before.sweep != s->o.sweep ||
		    before.conn != s->o.conn) {
			perf_end_close(s, &s->a);
			if (open_end(s, err) < 0)
				return -1;
		}
	}
	return connect_sequence(s, err);
}

int pt_open_client(struct perf_session *s, char *err)
{
	struct pt_state *pt = pt_new(s, err);
	const char *mine = s->o.perftest_version ? s->o.perftest_version : OOB_OPENING_PERFTEST;

	if (!pt || peer_version(s, err) < 0 || check_opts(s, err) < 0)
		return -1;
	snprintf(pt->my_version, sizeof(pt->my_version), "%s", mine);
	pt->my_v = strtod(mine, NULL);
	per_qp_iters(s);
	if (pt->peer_v < PT_VERSION_NEGOTIATES)
		pt->advisory = "perftest servers before 6.28 size their buffers and count messages "
			       "from their own options: start it with the same -s/-a, -n/-D and -q "
			       "(and -A for atomics)";
	return open_common(s, err);
}

int pt_open_server(struct perf_session *s, char *err)
{
	struct pt_state *pt = pt_new(s, err);
	uint8_t out[PT_VERSION_LEN];

	if (!pt || peer_version(s, err) < 0 || check_opts(s, err) < 0)
		return -1;
	/* Echo the client's version unless told what to announce (§16.2). */
	snprintf(pt->my_version, sizeof(pt->my_version), "%s",
		 s->o.perftest_version ? s->o.perftest_version : pt->peer_version);
	pt->my_v = strtod(pt->my_version, NULL);
	if (pt_version_build(pt->my_version, out, err) < 0 ||
	    oob_send_raw(&s->oob, out, sizeof(out), err) < 0)
		return -1;
	per_qp_iters(s);
	return open_common(s, err);
}

int pt_reports(struct perf_session *s, char *err)
{
	struct pt_state *pt = s->pt;

	for (unsigned i = 0; i < PT_REPORT_FIELDS; i++) {
		uint8_t out[8], in[8];

		pt_report_field(&pt->report, i, out);
		if ((s->role == PERF_CLIENT && oob_send_raw(&s->oob, out, 8, err) < 0) ||
		    oob_recv_raw(&s->oob, in, 8, err) < 0 ||
		    (s->role == PERF_SERVER && oob_send_raw(&s->oob, out, 8, err) < 0)) {
			pt->broken = true;
			return -1;
		}
		pt_report_set(&pt->peer_report, i, in);
	}
	return 0;
}

/* Soft engine: nothing moves unless polled, so poll it and the socket. */
static void pump(struct perf_session *s)
{
	struct xport_wc wc[32];
	int n = xport_poll_cq(s->a.cq, wc, 32);

	char e[XPORT_ERR_LEN];

	for (int i = 0; i < n; i++)
		if (wc[i].status == XPORT_WC_SUCCESS && wc[i].opcode == XPORT_WC_RECV)
			pt_post_recv(s, (unsigned)wc[i].wr_id, e);
}

int pt_wait_peer(struct perf_session *s, bool passive, char *err)
{
	bool sleep_ok = passive && xport_self_driven(s->dev);

	for (unsigned spins = 0;; spins++) {
		if (sleep_ok || spins % 256 == 0) {
			struct pollfd p = { .fd = s->oob.fd, .events = POLLIN };

			if (poll(&p, 1, sleep_ok ? 100 : 0) > 0)
				return 0;
			if (s->o.stop && *s->o.stop) {
				snprintf(err, XPORT_ERR_LEN, "interrupted");
				s->pt->broken = true;
				return -1;
			}
		}
		if (!sleep_ok)
			pump(s);
	}
}

int pt_wc_error(struct perf_session *s, const struct xport_wc *wc, char *err)
{
	s->pt->broken = true;
	if (wc->status == XPORT_WC_REM_ACCESS_ERR || wc->status == XPORT_WC_REM_INV_REQ_ERR) {
		snprintf(err, XPORT_ERR_LEN, "a work request failed: %s: the perftest peer's buffer "
			 "is smaller than this test's messages, or it runs another test; start it "
			 "with the same -s/-a, -q and test (ib_%s_%s)",
			 xport_wc_status_str(wc->status), perf_op_name(s->o.op),
			 s->o.latency ? "lat" : "bw");
		return -1;
	}
	if (wc->status == XPORT_WC_RETRY_EXC_ERR || wc->status == XPORT_WC_RNR_RETRY_EXC_ERR) {
		snprintf(err, XPORT_ERR_LEN, "a work request failed: %s: the perftest peer stopped "
			 "answering; it counts messages from its own options, so start it with the "
			 "same -n/-D, -q and -s/-a (or it died: see its output)",
			 xport_wc_status_str(wc->status));
		return -1;
	}
	return perf_wc_error(wc, err);
}

void pt_close(struct perf_session *s)
{
	struct pt_state *pt = s->pt;
	char err[XPORT_ERR_LEN];
	uint64_t until;

	if (s->oob.fd < 0)
		return;
	if (!pt->broken && pt->report_due && (pt_sync(s, err) < 0 || pt_reports(s, err) < 0))
		pt->broken = true;
	if (!pt->broken && pt->close_sync_due)
		pt_sync(s, err);
	/* §11: write nothing more; read to EOF (6.06 sends "done") so our
	 * close is not a reset under the peer. */
	shutdown(s->oob.fd, SHUT_WR);
	until = perf_now_ns() + (uint64_t)DRAIN_MS * 1000000;
	for (;;) {
		struct pollfd p = { .fd = s->oob.fd, .events = POLLIN };
		char junk[64];
		uint64_t now = perf_now_ns();

		if (now >= until || poll(&p, 1, (int)((until - now) / 1000000) + 1) <= 0 ||
		    recv(s->oob.fd, junk, sizeof(junk), 0) <= 0)
			break;
	}
	oob_close(&s->oob);
}
