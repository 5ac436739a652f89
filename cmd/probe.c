// SPDX-License-Identifier: MIT
/*
 * rdmakit probe: test a remote RoCE stack's transport behaviour against
 * the IBTA specification.  The remote runs `rdmakit probe --serve`; this
 * side sends, packet by packet, what each test is about and judges the
 * answers.  lib/probe does the work; this file parses and renders.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "probe.h"
#include "report.h"
#include "wire.h"

enum {
	OPT_SERVE = OPT_LONG_ONLY + 1,
	OPT_TEST,
	OPT_LIST,
	OPT_ACCEPT,
	OPT_ENGINE,
	OPT_BIND,
	OPT_UDP_PORT,
	OPT_AUTH_KEY,
	OPT_TIMEOUT,
	OPT_PERSISTENT,
};

static const struct opt_spec probe_opts[] = {
	{ "serve", OPT_SERVE, NULL, "be the remote end: set up the QPs a probe asks for" },
	{ "test", OPT_TEST, "NAME[,NAME...]", "run only these tests (default: every one)" },
	{ "list", OPT_LIST, NULL, "list the tests, their IBTA references and what they expect" },
	{ "accept", OPT_ACCEPT, "FILE", "known deviations, a test name a line: they do not make "
					"the exit status 1" },
	{ "write", 'w', "FILE", "write the exchange, both ways, to a pcap file whose frame numbers "
				"the verdicts name" },
	{ "port", 'p', "PORT", "control (TCP) port (default 18515)" },
	{ "timeout", OPT_TIMEOUT, "SECONDS", "wait this long for the remote (default 10)" },
	{ "auth-key", OPT_AUTH_KEY, "FILE", "authenticate the control channel with this secret "
					    "(default $RDMAKIT_AUTH_KEY_FILE)" },
	{ "engine", OPT_ENGINE, "ENGINE", "--serve: auto, soft or verbs (default auto)" },
	{ "bind", OPT_BIND, "ADDR", "--serve, soft engine: local address (default: the one the "
				    "control connection uses)" },
	{ "udp-port", OPT_UDP_PORT, "PORT", "--serve, soft engine: UDP port (default 4791, or a free one)" },
	{ "ib-dev", 'd', "DEV", "--serve, verbs engine: RDMA device (chooses --engine verbs)" },
	{ "ib-port", 'i', "PORT", "--serve, verbs engine: device port (default 1)" },
	{ "gid-index", 'x', "INDEX", "--serve, verbs engine: GID index (default: pick RoCE v2)" },
	{ "persistent", OPT_PERSISTENT, NULL, "--serve: keep serving probes one after another" },
	OPTS_END,
};

static const struct cmd_usage probe_usage = {
	.cmd = "probe",
	.synopsis = "[--test NAME,...] [--accept FILE] [OPTIONS] HOST   (the probe)\n"
		    "--serve [OPTIONS]                                  (the remote it tests)\n"
		    "--list",
	.description = "Test a remote RoCE stack's RC transport against the IBTA specification: this\n"
		       "side becomes a scripted RoCEv2 peer that sends, packet by packet, what each\n"
		       "test is about (an invalid rkey, a PSN ahead, a duplicate, a bad ICRC ...)\n"
		       "and judges the answers.  The remote runs 'rdmakit probe --serve' on any\n"
		       "engine; this side needs UDP port 4791 free on its address (a verbs remote\n"
		       "sends nowhere else).  Verdicts: pass, informational, deviation, not\n"
		       "implemented, fail.",
	.opts = probe_opts,
};

struct probe_cli {
	struct probe_opts o;
	struct probe_serve_opts s;
	bool serve, list, persistent;
	const char *tests, *accept_file, *key_file;
	struct oob_key key;
	uint64_t timeout_s;
};

#define PROBE_CLI_DEFAULTS {                                                     \
	.o = { .port = OOB_DEFAULT_PORT, .timeout_s = 10, .stop = &cmd_stop },     \
	.s = { .dev = { .engine = "auto", .ib_port = 1, .gid_index = -1 },        \
	       .port = OOB_DEFAULT_PORT },                                        \
	.timeout_s = 10,                                                          \
}

static int probe_opt(void *ctx, int key, const char *arg)
{
	struct probe_cli *p = ctx;
	uint64_t v;
	int rc;

	switch (key) {
	case OPT_SERVE: p->serve = true; return 0;
	case OPT_LIST: p->list = true; return 0;
	case OPT_PERSISTENT: p->persistent = true; return 0;
	case OPT_TEST: p->tests = arg; return 0;
	case OPT_ACCEPT: p->accept_file = arg; return 0;
	case 'w': p->o.write_file = arg; return 0;
	case OPT_AUTH_KEY: p->key_file = arg; return 0;
	case OPT_ENGINE: {
		static const char *const engines[] = { "auto", "soft", "verbs", NULL };
		int i;

		/* i is set only when the word is one of them. */
		if ((rc = parse_choice("probe", "--engine", arg, engines, &i)) == 0)
			p->s.dev.engine = engines[i];
		return rc;
	}
	case OPT_BIND: p->s.dev.bind = arg; return 0;
	case 'd':
		p->s.dev.ib_dev = arg;
		p->s.dev.engine = "verbs";
		return 0;
	case 'p':
		rc = parse_u64("probe", "-p/--port", arg, 1, 65535, false, &v);
		p->o.port = p->s.port = (uint16_t)v;
		return rc;
	case OPT_UDP_PORT:
		rc = parse_u64("probe", "--udp-port", arg, 1, 65535, false, &v);
		p->s.dev.udp_port = (uint16_t)v;
		return rc;
	case 'i':
		rc = parse_u64("probe", "-i/--ib-port", arg, 1, 255, false, &v);
		p->s.dev.ib_port = (int)v;
		return rc;
	case 'x':
		rc = parse_u64("probe", "-x/--gid-index", arg, 0, 65535, false, &v);
		p->s.dev.gid_index = (int)v;
		p->s.dev.engine = "verbs";
		return rc;
	case OPT_TIMEOUT:
		return parse_u64("probe", "--timeout", arg, 1, 3600, false, &p->timeout_s);
	}
	return EXIT_USAGE;
}

/* --- --list ------------------------------------------------------------------ */

static int list_tests(const struct global_opts *g)
{
	static const struct report_col cols[] = {
		{ "Test", "name", REPORT_STR, 0 },
		{ "Group", "group", REPORT_STR, 0 },
		{ "Reference", "reference", REPORT_STR, 0 },
		{ "Expected", "expected", REPORT_STR, 0 },
	};
	struct report r;
	size_t n;
	const struct probe_test *t = probe_tests(&n);

	report_init(&r, "probe", RDMAKIT_VERSION, g->json, g->pretty, stdout, stderr);
	report_table_fit(&r, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < n; i++)
		report_table_row(&r, (const struct report_value[]){
			RV_STR(t[i].name), RV_STR(t[i].group), RV_STR(t[i].reference),
			RV_STR(t[i].expected) });
	report_table_end(&r);
	report_finish(&r);
	return EXIT_OK;
}

/* --- the probe --------------------------------------------------------------- */

/* --test a,b,c: the tests named, in the order given. */
static int pick_tests(const char *list, const struct probe_test ***out, size_t *n)
{
	char *copy = strdup(list), *save = NULL;
	size_t cap = 1;

	for (const char *s = list; *s; s++)
		cap += *s == ',';
	*out = calloc(cap, sizeof(**out));
	*n = 0;
	if (!copy || !*out) {
		free(copy);
		return runtime_error("probe", "out of memory");
	}
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const struct probe_test *t = probe_test_find(name);

		if (!t) {
			int rc = usage_error("probe", "--test: no test named '%s' ('rdmakit probe "
					     "--list' shows them)", name);
			free(copy);
			return rc;
		}
		(*out)[(*n)++] = t;
	}
	free(copy);
	if (!*n)
		return usage_error("probe", "--test needs at least one test name ('rdmakit probe "
				   "--list' shows them)");
	return 0;
}

/* The frames a verdict rests on: "3,4" in text, objects in JSON. */
static void evidence(struct printer *pr, const struct probe_result *res)
{
	const struct probe_trace *t = &res->trace;
	uint64_t t0 = t->n ? t->ev[0].t_ns : 0;

	print_open_array(pr, "evidence");
	for (unsigned i = 0; i < res->n_evidence; i++) {
		const struct probe_event *e = &t->ev[res->evidence[i] - 1];
		const char *op = wire_opcode_name(e->opcode);
		char syn[64];

		print_open_object(pr, NULL);
		print_uint(pr, PRINT_JSON, "frame", NULL, res->frame_base + e->frame);
		print_string(pr, PRINT_JSON, "direction", NULL, e->rx ? "received" : "sent");
		print_float(pr, PRINT_JSON, "time_us", NULL, (double)(e->t_ns - t0) / 1e3);
		print_string(pr, PRINT_JSON, "opcode", NULL, op ? op : "unknown");
		print_uint(pr, PRINT_JSON, "psn", NULL, e->psn);
		if (e->has_aeth) {
			wire_aeth_describe(syn, sizeof(syn), e->syndrome);
			print_string(pr, PRINT_JSON, "aeth", NULL, syn);
			print_uint(pr, PRINT_JSON, "msn", NULL, e->msn);
		}
		if (e->icrc_corrupt)
			print_bool(pr, PRINT_JSON, "icrc_corrupt", NULL, true, NULL, NULL);
		print_close(pr);
	}
	print_close(pr);
}

static void results(struct report *r, const struct probe_report *rep)
{
	static const struct report_col cols[] = {
		{ "Test", "test", REPORT_STR, 0 },
		{ "Verdict", "verdict", REPORT_STR, 0 },
		{ "Frames", NULL, REPORT_STR, 0 },
		{ "Observed", "observed", REPORT_STR, 0 },
	};

	report_table_fit(r, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; i < rep->n; i++) {
		const struct probe_result *res = &rep->results[i];
		char frames[64] = "", verdict[48];
		struct printer *pr;
		size_t len = 0;

		for (unsigned k = 0; k < res->n_evidence && len < sizeof(frames) - 8; k++)
			len += (size_t)snprintf(frames + len, sizeof(frames) - len, "%s%u",
						k ? "," : "", res->frame_base + res->evidence[k]);
		snprintf(verdict, sizeof(verdict), "%s%s", probe_verdict_name(res->verdict),
			 res->accepted ? " (accepted)" : "");
		report_table_row(r, (const struct report_value[]){
			RV_STR(res->test->name),
			{ .s = probe_verdict_name(res->verdict), .text = verdict },
			{ .s = frames, .none = !*frames }, RV_STR(res->observed) });
		pr = report_row_more(r);
		print_string(pr, PRINT_JSON, "group", NULL, res->test->group);
		print_string(pr, PRINT_JSON, "reference", NULL, res->test->reference);
		print_string(pr, PRINT_JSON, "expected", NULL, res->test->expected);
		print_bool(pr, PRINT_JSON, "accepted", NULL, res->accepted, NULL, NULL);
		evidence(pr, res);
		report_row_done(r);
	}
	report_table_end(r);
}

static int run_probe(struct probe_cli *p, const char *host, const struct global_opts *g)
{
	const struct probe_test **tests = NULL;
	struct probe_accept accept = { 0 };
	struct probe_report rep;
	char err[XPORT_ERR_LEN];
	unsigned deviations = 0, failed = 0;
	size_t n = 0;
	struct report r;
	int rc;

	if (p->tests && (rc = pick_tests(p->tests, &tests, &n)) != 0) {
		free(tests);
		return rc;
	}
	if (p->accept_file && probe_accept_load(p->accept_file, &accept, err) < 0) {
		free(tests);
		return usage_error("probe", "%s", err);
	}
	p->o.host = host;
	report_init(&r, "probe", RDMAKIT_VERSION, g->json, g->pretty, stdout, stderr);
	report_start_time(&r);
	if (probe_run(&p->o, tests, n, &rep, err) < 0) {
		report_error(&r, "%s", err);
		report_finish(&r);
		free(tests);
		probe_accept_free(&accept);
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < rep.n; i++) {
		struct probe_result *res = &rep.results[i];

		res->accepted = res->verdict == PROBE_DEVIATION &&
				probe_accept_has(&accept, res->test->name);
		deviations += res->verdict == PROBE_DEVIATION && !res->accepted;
		failed += res->verdict == PROBE_FAIL;
	}
	report_param(&r, "Remote", "host", REPORT_STR, RV_STR(host));
	report_param(&r, "Remote engine", "remote_engine", REPORT_STR, RV_STR(rep.peer.engine));
	report_param(&r, "Remote device", "remote_device", REPORT_STR, RV_STR(rep.peer.device));
	report_param(&r, "Remote rdmakit", "remote_version", REPORT_STR, RV_STR(rep.peer.version));
	report_param(&r, "Local RoCEv2", "local", REPORT_STR, RV_STR(rep.local));
	results(&r, &rep);
	{
		struct printer *pr = &r.pr;

		print_open_object(pr, "summary");
		for (int v = 0; v < PROBE_VERDICTS; v++) {
			static const char *const keys[PROBE_VERDICTS] = {
				"pass", "informational", "deviation", "not_implemented", "fail",
				"skipped",
			};

			print_uint(pr, PRINT_JSON, keys[v], NULL, rep.count[v]);
		}
		print_uint(pr, PRINT_JSON, "deviation_unaccepted", NULL, deviations);
		print_close(pr);
		if (!g->json)
			printf("\n%u pass, %u informational, %u deviation (%u not accepted), %u not "
			       "implemented, %u fail, %u skipped\n", rep.count[PROBE_PASS],
			       rep.count[PROBE_INFO], rep.count[PROBE_DEVIATION], deviations,
			       rep.count[PROBE_NOT_IMPL], rep.count[PROBE_FAIL],
			       rep.count[PROBE_SKIPPED]);
	}
	/* The results stand; a capture that could not be written is an error. */
	if (rep.write_error[0])
		report_error(&r, "%s", rep.write_error);
	report_finish(&r);
	probe_report_free(&rep);
	probe_accept_free(&accept);
	free(tests);
	if (rep.write_error[0])
		return EXIT_RUNTIME;
	return deviations || failed ? EXIT_CHECK_FAILED : EXIT_OK;
}

/* --- --serve ----------------------------------------------------------------- */

static void served(void *ctx, const char *peer, const char *outcome)
{
	const struct global_opts *g = ctx;

	if (g->json) {
		report_emit(stdout, json_pack("{s:s, s:s}", "peer", peer, "outcome", outcome));
		return;
	}
	printf("probe from %s: %s\n", peer, outcome);
	fflush(stdout);
}

static int run_serve(struct probe_cli *p, const struct global_opts *g)
{
	char err[XPORT_ERR_LEN];

	p->s.timeout_s = (int)p->timeout_s;
	p->s.persistent = p->persistent;
	p->s.stop = &cmd_stop;
	p->s.on_client = served;
	p->s.ctx = (void *)g;
	if (!g->json) {
		printf("probe --serve: waiting for probes on TCP port %u%s\n", p->s.port,
		       p->s.auth_key ? "" : " (no --auth-key: anyone who can reach it can probe)");
		fflush(stdout);
	}
	if (probe_serve(&p->s, err) < 0)
		return runtime_error("probe", "%s", err);
	return EXIT_OK;
}

/* What cmd_probe checks before it starts work, given the operands left:
 * 0, or EXIT_USAGE after saying why. */
static int probe_checks(const struct probe_cli *p, int operands)
{
	if (p->list)
		return usage_error("probe", "--list takes no HOST and no --serve");
	if (p->serve && operands)
		return usage_error("probe", "--serve takes no HOST: the probe connects to it");
	if (!p->serve && operands != 1)
		return usage_error("probe", "give the HOST that runs 'rdmakit probe --serve' (or "
				   "--serve, or --list)");
	if (p->o.write_file && !strcmp(p->o.write_file, "-"))
		return usage_error("probe", "-w -: the report goes to standard output; give -w a "
				   "file name");
	if (p->serve && (p->tests || p->accept_file || p->o.write_file))
		return usage_error("probe", "--test, --accept and -w belong to the probe, not --serve");
	if (!p->serve && (p->persistent || p->s.dev.ib_dev || p->s.dev.bind || p->s.dev.udp_port ||
			  p->s.dev.gid_index >= 0 || strcmp(p->s.dev.engine, "auto")))
		return usage_error("probe", "--engine, --bind, --udp-port, -d, -x and --persistent "
				   "set up the remote: give them to 'rdmakit probe --serve'");
	return 0;
}

int cmd_probe(int argc, char **argv, const struct global_opts *gin)
{
	struct probe_cli p = PROBE_CLI_DEFAULTS;
	struct global_opts g = *gin;
	char err[XPORT_ERR_LEN];
	const char *key_path;
	int first, rc;

	rc = opts_parse(&probe_usage, argc, argv, &g, probe_opt, &p, &first);
	if (rc < 0)
		return EXIT_OK;
	if (rc)
		return rc;
	if (p.list && argc == first && !p.serve)
		return list_tests(&g);
	if ((rc = probe_checks(&p, argc - first)) != 0)
		return rc;
	key_path = p.key_file ? p.key_file : getenv("RDMAKIT_AUTH_KEY_FILE");
	if (key_path && *key_path) {
		if (oob_key_load(key_path, &p.key, err) < 0)
			return usage_error("probe", "%s", err);
		p.o.auth_key = p.s.auth_key = &p.key;
	}
	p.o.timeout_s = (int)p.timeout_s;
	cmd_catch_stop(false);
	return p.serve ? run_serve(&p, &g) : run_probe(&p, argv[first], &g);
}
