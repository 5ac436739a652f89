// SPDX-License-Identifier: MIT
/*
 * lib/stats/prom.c on snapshots built here: label values escaped as the
 * exposition formats require, family names and types in 0.0.4 and
 * OpenMetrics, content negotiation, the per-QP cap of soft engines, and a
 * failed scrape still answering with the scrape's own metrics.  promtool,
 * the Python client's parser and a real Prometheus check the whole output
 * in tests/export.bats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "transport.h"
#include "unit.h"

static char *render(enum prom_format f, const struct ctr_snapshot *s, bool ok)
{
	struct prom_scrape sc = { .duration_s = 0.0125, .errors = 3, .ok = ok };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	prom_write(out, f, s, &sc);
	fclose(out);
	return buf;
}

static size_t count(const char *text, const char *sub)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, sub)); p++)
		n++;
	return n;
}

static void negotiation(struct unit *u)
{
	CHECK(u, prom_negotiate(NULL) == PROM_TEXT_004);
	CHECK(u, prom_negotiate("text/plain;version=0.0.4;q=0.5,*/*;q=0.1") == PROM_TEXT_004);
	CHECK(u, prom_negotiate("application/openmetrics-text;version=1.0.0,text/plain;q=0.5") ==
		 PROM_OPENMETRICS_100);
	CHECK(u, prom_negotiate("Application/OpenMetrics-Text") == PROM_OPENMETRICS_100);
}

/* A port whose names need escaping, and its raw counters. */
static void escaping_and_types(struct unit *u)
{
	struct ctr_snapshot s = { 0 };
	struct ctr_port p = { .port = 1, .rate_gbps = 100 };
	char *t, *om;

	snprintf(p.device, sizeof(p.device), "dev\"q\\b");
	snprintf(p.netdev, sizeof(p.netdev), "eth0");
	snprintf(p.state, sizeof(p.state), "ACTIVE");
	ctr_set_add(&p.set, CTR_SRC_HW_PORT, "name with space", 7);
	ctr_set_add(&p.set, CTR_SRC_HW_PORT, "line\nbreak", 8);
	/* Some drivers repeat an ethtool name; a name not in UTF-8. */
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "rx_queue_drops", 1);
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "rx_queue_drops", 2);
	ctr_set_add(&p.set, CTR_SRC_ETHTOOL, "caf\xe9", 3);
	ctr_set_sort(&p.set);
	s.ports = &p;
	s.nports = 1;
	t = render(PROM_TEXT_004, &s, true);
	CHECK_HAS(u, t, "rdma_port_up{device=\"dev\\\"q\\\\b\",port=\"1\",netdev=\"eth0\"} 1\n");
	CHECK_HAS(u, t, "counter=\"name with space\"} 7\n");
	CHECK_HAS(u, t, "counter=\"line\\nbreak\"} 8\n");
	CHECK_EQ(u, count(t, "counter=\"rx_queue_drops\""), 1);
	CHECK_HAS(u, t, "counter=\"caf?\"} 3\n");
	CHECK_HAS(u, t, "rdma_port_speed_bytes{device=\"dev\\\"q\\\\b\",port=\"1\",netdev=\"eth0\"} 12500000000\n");
	CHECK_HAS(u, t, "# TYPE rdma_port_info gauge\n");
	CHECK_HAS(u, t, "# TYPE rdma_port_stat untyped\n");
	CHECK_HAS(u, t, "# TYPE rdmakit_scrape_errors_total counter\nrdmakit_scrape_errors_total 3\n");
	CHECK(u, !strstr(t, "# EOF"));
	om = render(PROM_OPENMETRICS_100, &s, true);
	CHECK_HAS(u, om, "# TYPE rdma_port info\nrdma_port_info{");
	CHECK_HAS(u, om, "# TYPE rdma_port_stat unknown\n");
	CHECK_HAS(u, om, "# TYPE rdmakit_scrape_errors counter\nrdmakit_scrape_errors_total 3\n");
	CHECK(u, strlen(om) > 6 && !strcmp(om + strlen(om) - 6, "# EOF\n"));
	/* Every family once, whatever the format. */
	CHECK_EQ(u, count(t, "# TYPE rdma_port_up "), 1);
	CHECK_EQ(u, count(om, "# TYPE rdma_port_up "), 1);
	free(t);
	free(om);
	ctr_set_free(&p.set);
}

/* An engine with more QPs than the cap: the first PROM_MAX_QPS are exported
 * and the rest counted. */
static void qp_cap(struct unit *u)
{
	struct ctr_snapshot s = { 0 };
	struct ctr_engine e = { .pid = 4242 };
	const int nqps = PROM_MAX_QPS + 6;
	char name[96], want[128];
	char *t;

	snprintf(e.name, sizeof(e.name), "soft 198.18.0.1:4791");
	for (size_t c = 0; c < xport_counter_count(); c++)
		ctr_set_add(&e.set, CTR_SRC_ENGINE, xport_counter_name(c), 100 + c);
	for (int q = 0; q < nqps; q++)
		for (size_t c = 0; c < xport_counter_count(); c++) {
			snprintf(name, sizeof(name), "qp 0x%06x/%s", 0x100 + q, xport_counter_name(c));
			ctr_set_add(&e.set, CTR_SRC_ENGINE, name, (uint64_t)q);
		}
	ctr_set_sort(&e.set);
	s.engines = &e;
	s.nengines = 1;
	t = render(PROM_TEXT_004, &s, true);
	CHECK_HAS(u, t, "rdma_soft_engine_info{address=\"198.18.0.1:4791\",pid=\"4242\"} 1\n");
	snprintf(want, sizeof(want), "rdma_soft_engine_%s_total{address=\"198.18.0.1:4791\"} 100\n",
		 xport_counter_name(0));
	CHECK_HAS(u, t, want);
	snprintf(want, sizeof(want), "rdma_soft_qp_%s_total{", xport_counter_name(0));
	CHECK_EQ(u, count(t, want), PROM_MAX_QPS);
	CHECK_HAS(u, t, "rdma_soft_qp_");
	CHECK_HAS(u, t, "qpn=\"0x000100\"");
	CHECK_HAS(u, t, "qpn=\"0x00013f\"");		/* the 64th */
	CHECK(u, !strstr(t, "qpn=\"0x000140\""));	/* the 65th */
	CHECK_HAS(u, t, "rdma_soft_engine_qps_not_exported{address=\"198.18.0.1:4791\"} 6\n");
	/* The pid is a label of the info metric only. */
	CHECK_EQ(u, count(t, "pid="), 1);
	free(t);
	ctr_set_free(&e.set);
}

/* A scrape whose sample failed: no port families, the scrape's own say so. */
static void failed_scrape(struct unit *u)
{
	char *t = render(PROM_TEXT_004, NULL, false);

	CHECK(u, !strstr(t, "rdma_port"));
	CHECK_HAS(u, t, "rdmakit_scrape_success 0\n");
	CHECK_HAS(u, t, "rdmakit_scrape_errors_total 3\n");
	CHECK_HAS(u, t, "rdmakit_scrape_duration_seconds 0.0125\n");
	free(t);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, negotiation);
	RUN(&u, escaping_and_types);
	RUN(&u, qp_cap);
	RUN(&u, failed_scrape);
	return unit_done(&u);
}
