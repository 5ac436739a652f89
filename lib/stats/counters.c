// SPDX-License-Identifier: MIT
/*
 * Counter readers: sysfs RDMA port and device counters, netdev statistics
 * and /proc/net/netstat ECN, gathered into one snapshot.  See counters.h;
 * rates and meanings are in counters_rates.c, ethtool in counters_ethtool.c.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "counters_nl.h"
#include "shm_counters.h"
#include "devinfo.h"

#define SMALL_FILE 4096

static const char *or_default(const char *s, const char *def)
{
	return s && *s ? s : def;
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	return ctr_read_small(AT_FDCWD, path, buf, cap);
}

/* snprintf without truncation warnings: paths are bounded by PATH_MAX anyway,
 * and a truncated one names no file. */
static int __attribute__((format(printf, 3, 4))) pathf(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n;
}


/* Keeps the first problem met in a sample (a device without ports, ...). */
static void __attribute__((format(printf, 2, 3))) warn(struct ctr_snapshot *s, const char *fmt, ...)
{
	va_list ap;

	if (s->warning[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->warning, sizeof(s->warning), fmt, ap);
	va_end(ap);
}

bool ctr_parse_value(const char *text, uint64_t *out)
{
	const char *p = text;
	unsigned long long v;
	char *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno)
		return false;
	while (*end && isspace((unsigned char)*end))
		end++;
	if (*end)
		return false;
	*out = v;
	return true;
}

/* --- sets ------------------------------------------------------------------ */

/* Widths of the IB PMA PortCounters fields (drivers/infiniband/core/sysfs.c). */
static const struct {
	const char *name;
	uint8_t width;
	bool ext;	/* 64-bit in PortCountersExtended */
} pma_widths[] = {
	{ "symbol_error", 16, false },
	{ "link_error_recovery", 8, false },
	{ "link_downed", 8, false },
	{ "port_rcv_errors", 16, false },
	{ "port_rcv_remote_physical_errors", 16, false },
	{ "port_rcv_switch_relay_errors", 16, false },
	{ "port_xmit_discards", 16, false },
	{ "port_xmit_constraint_errors", 8, false },
	{ "port_rcv_constraint_errors", 8, false },
	{ "local_link_integrity_errors", 4, false },
	{ "excessive_buffer_overrun_errors", 4, false },
	{ "VL15_dropped", 16, false },
	{ "port_xmit_data", 32, true },
	{ "port_rcv_data", 32, true },
	{ "port_xmit_packets", 32, true },
	{ "port_rcv_packets", 32, true },
	{ "port_xmit_wait", 32, false },
};

struct ctr_counter *ctr_set_add(struct ctr_set *s, enum ctr_src src, const char *name,
				uint64_t value)
{
	struct ctr_counter *c;
	size_t len = strlen(name);

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 32;
		struct ctr_counter *p = realloc(s->c, ncap * sizeof(*p));

		if (!p)
			return NULL;
		s->c = p;
		s->cap = ncap;
	}
	/* Some drivers pad ethtool names with blanks ("..._events "). */
	while (len && isspace((unsigned char)name[len - 1]))
		len--;
	c = &s->c[s->n];
	memset(c, 0, sizeof(*c));
	c->name = strndup(name, len);
	if (!c->name)
		return NULL;
	s->n++;
	c->value = value;
	c->rate = 0.0 / 0.0;
	c->src = (uint8_t)src;
	c->width = 64;
	c->scale = 1;
	c->meaning = (uint8_t)ctr_meaning_of(src, c->name);
	if (src == CTR_SRC_PMA) {
		if (!strcmp(c->name, "port_xmit_data") || !strcmp(c->name, "port_rcv_data"))
			c->scale = 4;	/* "octets divided by 4": 4-byte words */
		for (size_t i = 0; i < sizeof(pma_widths) / sizeof(pma_widths[0]); i++)
			if (!strcmp(c->name, pma_widths[i].name))
				c->width = pma_widths[i].width;
	}
	return c;
}

static int counter_cmp(const void *a, const void *b)
{
	const struct ctr_counter *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return strcmp(x->name, y->name);
}

void ctr_set_sort(struct ctr_set *s)
{
	if (s->n > 1)
		qsort(s->c, s->n, sizeof(*s->c), counter_cmp);
}

void ctr_set_free(struct ctr_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->c[i].name);
		free(s->c[i].hist);
	}
	free(s->c);
	memset(s, 0, sizeof(*s));
}

/*
 * A PMA directory with the PortCountersExtended fields (unicast_*) counts
 * data and packets in 64 bits; so does one whose value already passed 2^32.
 */
static void pma_fix_widths(struct ctr_set *s, size_t first)
{
	bool ext = false;

	for (size_t i = first; i < s->n; i++)
		if (!strncmp(s->c[i].name, "unicast_", 8) || !strncmp(s->c[i].name, "multicast_", 10))
			ext = true;
	for (size_t i = first; i < s->n; i++) {
		struct ctr_counter *c = &s->c[i];

		for (size_t k = 0; k < sizeof(pma_widths) / sizeof(pma_widths[0]); k++) {
			if (strcmp(c->name, pma_widths[k].name))
				continue;
			if (pma_widths[k].ext && (ext || c->value > UINT32_MAX))
				c->width = 64;
			else if (c->width < 64 && c->value > (UINT64_C(1) << c->width) - 1)
				c->width = 64;	/* wider than the spec says: not ours to clip */
		}
	}
}

int ctr_read_dir(struct ctr_cache *cache, const char *dir, enum ctr_src src,
		 struct ctr_set *set)
{
	char buf[SMALL_FILE];
	size_t first = set->n;
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	if (fstat(dirfd(d), &st) < 0)
		st.st_dev = 0;
	while ((e = readdir(d))) {
		uint64_t v;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
			continue;
		if (e->d_type == DT_DIR || e->d_type == DT_LNK)
			continue;
		/* Unreadable (EINVAL, EOPNOTSUPP from the driver) or not a number
		 * ("N/A (no PMA)"): absent, as node_exporter treats it.  Opened
		 * relative to the directory: no path walk per counter. */
		if (ctr_cache_read(cache, dirfd(d), dir, e->d_name, st.st_dev, e->d_ino, buf,
				   sizeof(buf)) < 0 ||
		    !ctr_parse_value(buf, &v))
			continue;
		if (!ctr_set_add(set, src, e->d_name, v)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (src == CTR_SRC_PMA)
		pma_fix_widths(set, first);
	return 0;
}

/* --- RDMA devices ------------------------------------------------------------ */

bool ctr_opts_default_ethtool(const char *sysfs_root)
{
	char real[PATH_MAX];

	if (!sysfs_root || !*sysfs_root)
		return true;
	return realpath(sysfs_root, real) && !strcmp(real, CTR_SYSFS_ROOT);
}

/* Whether the filter wants DEV (any port: port 0) or DEV/PORT. */
static bool wanted(const struct ctr_opts *o, const char *dev, int port)
{
	if (!o->ndevices)
		return true;
	for (size_t i = 0; i < o->ndevices; i++) {
		const char *f = o->devices[i];
		const char *slash = strchr(f, '/');
		size_t len = slash ? (size_t)(slash - f) : strlen(f);

		if (strlen(dev) != len || strncmp(f, dev, len))
			continue;
		if (!slash || port == 0 || atoi(slash + 1) == port)
			return true;
	}
	return false;
}

static struct ctr_port *add_port(struct ctr_snapshot *s)
{
	struct ctr_port *p;

	if (s->nports == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 8;

		p = realloc(s->ports, ncap * sizeof(*p));
		if (!p)
			return NULL;
		s->ports = p;
		s->cap = ncap;
	}
	p = &s->ports[s->nports++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* The port's attributes: device discovery's model of it (devinfo.h). */
static void port_attrs(const char *root, struct ctr_port *p)
{
	struct devinfo_port a;

	devinfo_port_sysfs(root, p->device, p->port, &a);
	snprintf(p->state, sizeof(p->state), "%s", a.state);
	snprintf(p->phys_state, sizeof(p->phys_state), "%s", a.phys_state);
	snprintf(p->link_layer, sizeof(p->link_layer), "%s", a.link_layer);
	p->rate_gbps = a.rate_gbps;
	snprintf(p->netdev, sizeof(p->netdev), "%s", a.netdev);
}

int ctr_set_copy(struct ctr_set *dst, const struct ctr_set *src)
{
	for (size_t i = 0; i < src->n; i++) {
		struct ctr_counter *c = ctr_set_add(dst, (enum ctr_src)src->c[i].src, src->c[i].name,
						    src->c[i].value);

		if (!c)
			return -1;
		c->width = src->c[i].width;
	}
	return 0;
}

static int port_ethtool(struct ctr_port *p)
{
	char err[96];

	if (ctr_read_ethtool(p->netdev, &p->set, err, sizeof(err)) < 0) {
		if (errno == ENOMEM)
			return -1;
		snprintf(p->ethtool_error, sizeof(p->ethtool_error), "%s", err);
	}
	return 0;
}

/*
 * A recorded netlink reply, DIR/IF.KIND, parsed as the kernel's would be:
 * the datagram's first sequence number is the one it answers.
 */
static int replay(const char *dir, const char *ifname, const char *kind, const char *what,
		  void *out, int (*parse)(const void *, size_t, uint32_t, void *), char *err,
		  size_t errlen)
{
	char path[PATH_MAX];
	uint8_t buf[16384];
	uint32_t seq = 0;
	ssize_t n;

	pathf(path, sizeof(path), "%s/%s.%s", dir, ifname, kind);
	n = read_small(path, (char *)buf, sizeof(buf));
	if (n < 0) {
		snprintf(err, errlen, "%s: %s: no recorded reply %s.%s (%s)", ifname, what, ifname,
			 kind, strerror(errno));
		return -1;
	}
	if (n >= 12)
		memcpy(&seq, buf + 8, sizeof(seq));	/* nlmsghdr.nlmsg_seq */
	if (parse(buf, (size_t)n, seq, out) < 0) {
		snprintf(err, errlen, "%s: %s: %s", ifname, what, strerror(errno));
		return -1;
	}
	return 0;
}

static int parse_dcb(const void *b, size_t n, uint32_t seq, void *out)
{
	return ctr_parse_dcb_reply(b, n, seq, out);
}

static int parse_pause(const void *b, size_t n, uint32_t seq, void *out)
{
	return ctr_parse_pause_reply(b, n, seq, out);
}

/*
 * The netdev's DCB PFC and pause statistics.  "Not supported" (veth, a
 * driver without DCB ops) is the common answer and no error: it lands in
 * dcb_error / pause_error for the detail view, as does any other failure
 * of the question (the kernel itself may answer ENOMEM).  -1 only when
 * adding a counter ran out of memory.
 */
static int port_netlink(const struct ctr_opts *o, struct ctr_port *p)
{
	struct ctr_dcb_pfc dcb;
	struct ctr_pause pause;
	char name[32];
	int rc;

	rc = o->netlink_replay
		? replay(o->netlink_replay, p->netdev, "dcb", "DCB", &dcb, parse_dcb, p->dcb_error,
			 sizeof(p->dcb_error))
		: o->nl ? ctr_nl_dcb_pfc(o->nl, p->netdev, &dcb, p->dcb_error, sizeof(p->dcb_error))
		: ctr_read_dcb_pfc(p->netdev, &dcb, p->dcb_error, sizeof(p->dcb_error));
	if (rc == 0) {
		p->dcb_error[0] = '\0';
		p->dcb_known = true;
		p->pfc_cap = dcb.pfc_cap;
		p->pfc_en = dcb.pfc_en;
		for (int i = 0; i < CTR_NL_PRIOS; i++) {
			snprintf(name, sizeof(name), "requests[%d]", i);
			if (!ctr_set_add(&p->set, CTR_SRC_DCB, name, dcb.requests[i]))
				return -1;
			snprintf(name, sizeof(name), "indications[%d]", i);
			if (!ctr_set_add(&p->set, CTR_SRC_DCB, name, dcb.indications[i]))
				return -1;
		}
	}
	rc = o->netlink_replay
		? replay(o->netlink_replay, p->netdev, "pause", "pause statistics", &pause,
			 parse_pause, p->pause_error, sizeof(p->pause_error))
		: o->nl ? ctr_nl_pause(o->nl, p->netdev, &pause, p->pause_error, sizeof(p->pause_error))
		: ctr_read_pause(p->netdev, &pause, p->pause_error, sizeof(p->pause_error));
	if (rc == 0) {
		p->pause_error[0] = '\0';
		p->pause_known = true;
		p->pause_autoneg = pause.autoneg;
		p->pause_rx = pause.rx;
		p->pause_tx = pause.tx;
		if (pause.have_tx_frames &&
		    !ctr_set_add(&p->set, CTR_SRC_PAUSE, "tx_pause_frames", pause.tx_pause_frames))
			return -1;
		if (pause.have_rx_frames &&
		    !ctr_set_add(&p->set, CTR_SRC_PAUSE, "rx_pause_frames", pause.rx_pause_frames))
			return -1;
	}
	return 0;
}

/*
 * The port's statistics from the RDMA netlink, which then win over sysfs
 * hw_counters (counters.h says why); asked of the kernel only when the
 * sysfs root is this host's, or read from recorded answers.  A port the
 * netlink does not answer for keeps the reason and reads sysfs.  -1 only
 * when memory ran out.
 */
static int port_rdma_netlink(const struct ctr_opts *o, struct ctr_port *p)
{
	int rc;

	if (o->netlink_replay)
		rc = ctr_replay_rdma_port(o->netlink_replay, p);
	else if (o->port_ethtool && o->nl)
		rc = ctr_nl_rdma_port(o->nl, p);
	else
		return 0;
	return rc < 0 && errno == ENOMEM ? -1 : 0;
}

static int read_device(const struct ctr_opts *o, const char *root, const char *dev,
		       struct ctr_snapshot *s)
{
	char ddir[PATH_MAX], pdir[PATH_MAX + 64], sub[PATH_MAX + 128];
	struct ctr_set devset = { 0 };
	struct dirent *e;
	DIR *d;
	int rc = 0;

	pathf(ddir, sizeof(ddir), "%s/class/infiniband/%s", root, dev);
	pathf(sub, sizeof(sub), "%s/hw_counters", ddir);
	if (ctr_read_dir(o->cache, sub, CTR_SRC_HW_DEV, &devset) < 0)
		return -1;
	pathf(pdir, sizeof(pdir), "%s/ports", ddir);
	d = opendir(pdir);
	if (!d) {
		warn(s, "%s: no ports directory (%s)", dev, strerror(errno));
		ctr_set_free(&devset);
		return 0;
	}
	s->rdma_devices++;
	while (rc == 0 && (e = readdir(d))) {
		char *end;
		long n = strtol(e->d_name, &end, 10);
		struct ctr_port *p;

		if (!isdigit((unsigned char)e->d_name[0]) || *end || n < 1 || n > 255 ||
		    !wanted(o, dev, (int)n))
			continue;
		p = add_port(s);
		if (!p) {
			rc = -1;
			break;
		}
		pathf(p->device, sizeof(p->device), "%s", dev);
		p->port = (int)n;
		pathf(sub, sizeof(sub), "%s/%ld", pdir, n);
		port_attrs(root, p);
		pathf(sub, sizeof(sub), "%s/%ld/counters", pdir, n);
		rc = ctr_read_dir(o->cache, sub, CTR_SRC_PMA, &p->set);
		if (!rc)
			rc = port_rdma_netlink(o, p);
		pathf(sub, sizeof(sub), "%s/%ld/hw_counters", pdir, n);
		if (!rc && !p->nldev_known)
			rc = ctr_read_dir(o->cache, sub, CTR_SRC_HW_PORT, &p->set);
		if (!rc)
			rc = ctr_set_copy(&p->set, &devset);
		if (!rc && o->port_ethtool && !o->no_ethtool_stats && p->netdev[0])
			rc = port_ethtool(p);
		if (!rc && (o->port_ethtool || o->netlink_replay) && p->netdev[0])
			rc = port_netlink(o, p);
		ctr_set_sort(&p->set);
	}
	closedir(d);
	ctr_set_free(&devset);
	return rc;
}

static int read_rdma(const struct ctr_opts *o, const char *root, struct ctr_snapshot *s)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	pathf(dir, sizeof(dir), "%s/class/infiniband", root);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			warn(s, "%s: %s", dir, strerror(errno));
		return 0;
	}
	s->ib_class = true;
	while (rc == 0 && (e = readdir(d)))
		if (e->d_name[0] != '.' && wanted(o, e->d_name, 0))
			rc = read_device(o, root, e->d_name, s);
	closedir(d);
	return rc;
}

/* --- interfaces asked for by name ------------------------------------------ */

static int read_iface(const struct ctr_opts *o, const char *root, const char *ifname,
		      struct ctr_snapshot *s)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], speed[32];
	struct ctr_port *p;
	struct stat st;

	pathf(dir, sizeof(dir), "%s/class/net/%s", root, ifname);
	if (stat(dir, &st) < 0) {
		warn(s, "interface %s: %s", ifname, strerror(errno));
		return 0;
	}
	p = add_port(s);
	if (!p)
		return -1;
	snprintf(p->netdev, sizeof(p->netdev), "%s", ifname);
	pathf(path, sizeof(path), "%s/operstate", dir);
	if (devinfo_read_line(path, p->state, sizeof(p->state)))
		for (char *c = p->state; *c; c++)
			*c = (char)toupper((unsigned char)*c);
	/* Mb/s; -1 or unreadable (EINVAL) when unknown, as on veth. */
	pathf(path, sizeof(path), "%s/speed", dir);
	if (devinfo_read_line(path, speed, sizeof(speed)) && atol(speed) > 0)
		p->rate_gbps = atol(speed) / 1000.0;
	pathf(path, sizeof(path), "%s/statistics", dir);
	if (ctr_read_dir(o->cache, path, CTR_SRC_NETDEV, &p->set) < 0 || port_ethtool(p) < 0 ||
	    port_netlink(o, p) < 0)
		return -1;
	ctr_set_sort(&p->set);
	return 0;
}

/* --- the snapshot ------------------------------------------------------------ */

static int port_cmp(const void *a, const void *b)
{
	const struct ctr_port *x = a, *y = b;
	bool xi = !x->device[0], yi = !y->device[0];
	int c;

	if (xi != yi)
		return xi ? 1 : -1;
	c = strcmp(x->device, y->device);
	if (c)
		return c;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return strcmp(x->netdev, y->netdev);
}

int ctr_port_order(const struct ctr_port *a, const struct ctr_port *b)
{
	return port_cmp(a, b);
}


static int add_engine_counters(struct ctr_set *set, const char *prefix,
			       const struct xport_counters *c)
{
	char name[96];

	for (size_t i = 0; i < xport_counter_count(); i++) {
		snprintf(name, sizeof(name), "%s%s", prefix, xport_counter_name(i));
		if (!ctr_set_add(set, CTR_SRC_ENGINE, name, xport_counter_value(c, i)))
			return -1;
	}
	return 0;
}

/* Every live soft engine's published counters, as one entry each. */
static int read_engines(const struct ctr_opts *o, struct ctr_snapshot *s)
{
	struct shm_counters *seg = malloc(CTR_MAX_ENGINES * sizeof(*seg));
	size_t n;

	if (!seg)
		return -1;
	n = shm_read_all(o->shm_dir, seg, CTR_MAX_ENGINES);
	s->engines = n ? calloc(n, sizeof(*s->engines)) : NULL;
	if (n && !s->engines) {
		free(seg);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct ctr_engine *e = &s->engines[s->nengines++];
		char addr[INET6_ADDRSTRLEN] = "?";
		static const uint8_t v4[12] = { [10] = 0xFF, [11] = 0xFF };

		if (memcmp(seg[i].local_ip, v4, 12) == 0)
			inet_ntop(AF_INET, seg[i].local_ip + 12, addr, sizeof(addr));
		else
			inet_ntop(AF_INET6, seg[i].local_ip, addr, sizeof(addr));
		e->pid = (int)seg[i].pid;
		snprintf(e->name, sizeof(e->name), "%.8s %s:%u", seg[i].engine, addr,
			 seg[i].local_port);
		if (add_engine_counters(&e->set, "", &seg[i].dev) < 0)
			goto oom;
		for (uint32_t q = 0; q < seg[i].nqps && q < SHM_MAX_QPS; q++) {
			char prefix[32];

			if (!seg[i].qps[q].used)
				continue;
			snprintf(prefix, sizeof(prefix), "qp 0x%06x/", seg[i].qps[q].qpn);
			if (add_engine_counters(&e->set, prefix, &seg[i].qps[q].c) < 0)
				goto oom;
		}
		ctr_set_sort(&e->set);
	}
	free(seg);
	return 0;
oom:
	free(seg);
	return -1;
}

static int sample(const struct ctr_opts *o, struct ctr_snapshot *s, char *err, size_t errlen);

/*
 * One sample; netlink questions go through o->nl, or through sockets of
 * the sample's own when the caller keeps none (incast, bw).
 */
int ctr_sample(const struct ctr_opts *o, struct ctr_snapshot *s, char *err, size_t errlen)
{
	struct ctr_opts own;
	int rc;

	if (o->nl || !o->port_ethtool) {
		ctr_nl_rdma_forget(o->nl);
		return sample(o, s, err, errlen);
	}
	own = *o;
	own.nl = ctr_nl_open();
	rc = sample(&own, s, err, errlen);
	ctr_nl_close(own.nl);
	return rc;
}

static int sample(const struct ctr_opts *o, struct ctr_snapshot *s, char *err, size_t errlen)
{
	const char *root = or_default(o->sysfs_root, CTR_SYSFS_ROOT);
	struct timespec ts;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->history = o->history;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->mono_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &s->wall);
	if (stat(root, &st) < 0) {
		snprintf(err, errlen, "sysfs root %s: %s", root, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "sysfs root %s: not a directory", root);
		return -1;
	}
	if (read_rdma(o, root, s) < 0)
		goto oom;
	for (size_t i = 0; i < o->nifaces; i++)
		if (read_iface(o, root, o->ifaces[i], s) < 0)
			goto oom;
	if (s->nports > 1)
		qsort(s->ports, s->nports, sizeof(*s->ports), port_cmp);
	if (ctr_read_netstat(o->proc_root, &s->netstat) == 0) {
		s->have_netstat = true;
		ctr_set_sort(&s->netstat);
	} else if (errno == ENOMEM) {
		goto oom;
	}
	if (read_engines(o, s) < 0)
		goto oom;
	ctr_cache_sweep(o->cache);
	return 0;
oom:
	snprintf(err, errlen, "out of memory reading counters");
	ctr_snapshot_free(s);
	return -1;
}

void ctr_snapshot_free(struct ctr_snapshot *s)
{
	for (size_t i = 0; i < s->nports; i++) {
		ctr_set_free(&s->ports[i].set);
		free(s->ports[i].qpc);
	}
	free(s->ports);
	for (size_t i = 0; i < s->nengines; i++)
		ctr_set_free(&s->engines[i].set);
	free(s->engines);
	ctr_set_free(&s->netstat);
	for (size_t i = 0; i < s->ngone; i++)
		free(s->gone[i]);
	free(s->gone);
	memset(s, 0, sizeof(*s));
}

const char *ctr_src_name(enum ctr_src src)
{
	switch (src) {
	case CTR_SRC_PMA: return "counters";
	case CTR_SRC_HW_PORT: return "hw_counters";
	case CTR_SRC_HW_DEV: return "device hw_counters";
	case CTR_SRC_NETDEV: return "statistics";
	case CTR_SRC_ETHTOOL: return "ethtool";
	case CTR_SRC_NETSTAT: return "netstat";
	case CTR_SRC_ENGINE: return "soft engine";
	case CTR_SRC_DCB: return "dcb";
	case CTR_SRC_PAUSE: return "pause stats";
	case CTR_SRC_NLDEV: return "netlink";
	case CTR_SRC_NLDEV_OPT: return "netlink optional";
	case CTR_SRC_NLDEV_QP: return "netlink qp";
	case CTR_SRC_COUNT: break;
	}
	return "?";
}
