// SPDX-License-Identifier: MIT
/*
 * perftest's -W/--report-counters LIST: the named files under the RDMA
 * port's sysfs directory ("counters/port_xmit_data,hw_counters/
 * rnr_nak_retry_err"), read before and after a run; their deltas, raw,
 * as perftest reports them.  Only for an engine on a host RDMA port
 * (verbs); the soft engine keeps its own counters (JSON "counters").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_int.h"

/* "dir/name", lowercase letters, digits and '_' only: a file right under
 * the port's directory, nothing that walks out of it. */
static bool name_ok(const char *n, size_t len)
{
	size_t slash = 0, at = 0;

	if (!len || len >= sizeof(((struct perf_listed *)0)->c[0].name))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = n[i];

		if (c == '/') {
			slash++;
			at = i;
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
			return false;
		}
	}
	return slash == 1 && at > 0 && at + 1 < len;
}

int perf_listed_check(const char *list, char *err)
{
	unsigned n = 0;

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (!name_ok(p, len)) {
			snprintf(err, XPORT_ERR_LEN, "invalid counter '%.*s' in -W/--report-counters: give "
				 "DIR/NAME as under /sys/class/infiniband/DEV/ports/PORT/ (for example "
				 "counters/port_xmit_data,hw_counters/rnr_nak_retry_err)", (int)len, p);
			return -1;
		}
		if (++n > PERF_MAX_LISTED) {
			snprintf(err, XPORT_ERR_LEN, "-W/--report-counters: at most %d counters",
				 PERF_MAX_LISTED);
			return -1;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

/* Reads every listed counter into l (names and values). */
static int read_all(struct perf_session *s, struct perf_listed *l, char *err)
{
	char dev[64], path[256], buf[32];
	int port;

	if (!xport_host_port(s->dev, dev, sizeof(dev), &port)) {
		snprintf(err, XPORT_ERR_LEN, "-W/--report-counters reads an RDMA port's counters "
			 "(--engine verbs); the soft engine's own are in the JSON \"counters\"");
		return -1;
	}
	l->n = 0;
	for (const char *p = s->o.report_counters; *p;) {
		size_t len = strcspn(p, ",");
		ssize_t got;
		int fd;

		snprintf(l->c[l->n].name, sizeof(l->c[0].name), "%.*s", (int)len, p);
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/%s", dev, port,
			 l->c[l->n].name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (got <= 0) {
			snprintf(err, XPORT_ERR_LEN, "-W/--report-counters: %s has no counter %s (%s); "
				 "see ls /sys/class/infiniband/%s/ports/%d/", dev, l->c[l->n].name,
				 got < 0 ? strerror(errno) : "empty", dev, port);
			return -1;
		}
		buf[got] = '\0';
		l->c[l->n++].value = strtoull(buf, NULL, 10);
		p += len + (p[len] == ',');
	}
	return 0;
}

int perf_listed_before(struct perf_session *s, struct perf_listed *before, char *err)
{
	return s->o.report_counters ? read_all(s, before, err) : 0;
}

int perf_listed_after(struct perf_session *s, const struct perf_listed *before,
		      struct perf_listed *out, char *err)
{
	if (!s->o.report_counters)
		return 0;
	if (read_all(s, out, err) < 0)
		return -1;
	for (unsigned i = 0; i < out->n; i++)
		out->c[i].value -= before->c[i].value;
	return 0;
}
