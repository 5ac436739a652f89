// SPDX-License-Identifier: MIT
/*
 * What this host can test with: verbs devices (libibverbs, plus sysfs for
 * what verbs does not say: GID types and netdevs) and the addresses the
 * soft engine can bind.  See devinfo.h.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "devinfo.h"

static const char *root_of(const char *sysfs_root)
{
	return sysfs_root && *sysfs_root ? sysfs_root : DEVINFO_SYSFS_ROOT;
}

bool devinfo_read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	bool ok;

	buf[0] = '\0';
	if (!f)
		return false;
	ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (!ok) {
		buf[0] = '\0';
		return false;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

/* --- pure helpers ----------------------------------------------------------- */

void devinfo_gid_format(const uint8_t raw[16], char out[DEVINFO_GID_STRLEN])
{
	snprintf(out, DEVINFO_GID_STRLEN,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8],
		 raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
}

bool devinfo_gid_is_ipv4(const uint8_t raw[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(raw, prefix, sizeof(prefix)) == 0;
}

static bool gid_is_zero(const uint8_t raw[16])
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

static bool is_roce_v2(const struct devinfo_gid *g)
{
	return strcmp(g->type, "RoCE v2") == 0;
}

int devinfo_pick_gid(const struct devinfo_gid *gids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_roce_v2(&gids[i]) && devinfo_gid_is_ipv4(gids[i].raw))
			return gids[i].index;
	for (size_t i = 0; i < n; i++)
		if (is_roce_v2(&gids[i]))
			return gids[i].index;
	return 0;
}

unsigned devinfo_mtu_bytes(int ibv_mtu)
{
	return ibv_mtu >= 1 && ibv_mtu <= 5 ? 256u << (ibv_mtu - 1) : 0;
}

double devinfo_rate_gbps(unsigned active_speed, unsigned active_width)
{
	double lane;
	unsigned lanes;

	switch (active_speed) {
	case 1: lane = 2.5; break;	/* SDR */
	case 2: lane = 5; break;	/* DDR */
	case 4: lane = 10; break;	/* QDR */
	case 8: lane = 10; break;	/* FDR10 */
	case 16: lane = 14; break;	/* FDR */
	case 32: lane = 25; break;	/* EDR */
	case 64: lane = 50; break;	/* HDR */
	case 128: lane = 100; break;	/* NDR */
	case 256: lane = 200; break;	/* XDR */
	default: return 0;
	}
	switch (active_width) {
	case 1: lanes = 1; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: return 0;
	}
	return lane * lanes;
}

unsigned devinfo_roce_mtu(unsigned if_mtu, int family)
{
	unsigned overhead = (family == AF_INET6 ? 40 : 20) + 8 + 12 + 16 + 4;

	for (unsigned mtu = 4096; mtu >= 256; mtu /= 2)
		if (if_mtu >= overhead && mtu <= if_mtu - overhead)
			return mtu;
	return 0;
}

const char *devinfo_port_state_str(enum devinfo_port_state s)
{
	switch (s) {
	case DEVINFO_PORT_FREE: return "free";
	case DEVINFO_PORT_IN_USE: return "in use";
	case DEVINFO_PORT_UNAVAILABLE: return "unavailable";
	}
	return "unavailable";
}

/* --- sysfs ------------------------------------------------------------------ */

void devinfo_gid_attrs(const char *sysfs_root, const char *dev, int port,
		       struct devinfo_gid *g)
{
	char path[PATH_MAX];
	const char *root = root_of(sysfs_root);

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/types/%d", root,
		 dev, port, g->index);
	if (!devinfo_read_line(path, g->type, sizeof(g->type)))
		g->type[0] = '\0';
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", root,
		 dev, port, g->index);
	if (!devinfo_read_line(path, g->netdev, sizeof(g->netdev)))
		g->netdev[0] = '\0';
}

static int gid_cmp(const void *a, const void *b)
{
	const struct devinfo_gid *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

int devinfo_sysfs_gids(const char *sysfs_root, const char *dev, int port,
		       struct devinfo_gid **out, size_t *n)
{
	char dir[PATH_MAX], path[PATH_MAX + 264], text[64];
	struct devinfo_gid *gids = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	*out = NULL;
	*n = 0;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d/gids", root_of(sysfs_root),
		 dev, port);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		struct devinfo_gid g = { 0 };
		char *end;
		long idx;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		idx = strtol(e->d_name, &end, 10);
		if (*end || idx < 0 || idx > INT_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!devinfo_read_line(path, text, sizeof(text)) ||
		    inet_pton(AF_INET6, text, g.raw) != 1 || gid_is_zero(g.raw))
			continue;
		g.index = (int)idx;
		devinfo_gid_format(g.raw, g.gid);
		devinfo_gid_attrs(sysfs_root, dev, port, &g);
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct devinfo_gid *p = realloc(gids, ncap * sizeof(*p));

			if (!p) {
				free(gids);
				closedir(d);
				return -1;
			}
			gids = p;
			cap = ncap;
		}
		gids[count++] = g;
	}
	closedir(d);
	if (count)
		qsort(gids, count, sizeof(*gids), gid_cmp);
	*out = gids;
	*n = count;
	return 0;
}

void devinfo_port_netdev(const char *sysfs_root, const char *dev, int port,
			 const struct devinfo_gid *gids, size_t n, char *out, size_t cap)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < n; i++) {
		if (gids[i].netdev[0]) {
			copy_str(out, cap, gids[i].netdev);
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/ndevs/0",
		 root_of(sysfs_root), dev, port);
	if (!devinfo_read_line(path, out, cap))
		out[0] = '\0';
}

/* "4: ACTIVE" -> "ACTIVE" */
static void after_colon(char *s)
{
	char *c = strchr(s, ':');

	if (c) {
		c++;
		while (*c == ' ')
			c++;
		memmove(s, c, strlen(c) + 1);
	}
}

void devinfo_port_sysfs(const char *sysfs_root, const char *dev, int port,
			struct devinfo_port *out)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], rate[64];

	memset(out, 0, sizeof(*out));
	out->port = port;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d", root_of(sysfs_root), dev,
		 port);
	snprintf(path, sizeof(path), "%s/state", dir);
	if (devinfo_read_line(path, out->state, sizeof(out->state)))
		after_colon(out->state);
	snprintf(path, sizeof(path), "%s/phys_state", dir);
	if (devinfo_read_line(path, out->phys_state, sizeof(out->phys_state)))
		after_colon(out->phys_state);
	snprintf(path, sizeof(path), "%s/link_layer", dir);
	devinfo_read_line(path, out->link_layer, sizeof(out->link_layer));
	snprintf(path, sizeof(path), "%s/rate", dir);
	if (devinfo_read_line(path, rate, sizeof(rate)))
		out->rate_gbps = strtod(rate, NULL);
	devinfo_port_netdev(sysfs_root, dev, port, NULL, 0, out->netdev, sizeof(out->netdev));
}

static size_t count_kernel_devs(const char *sysfs_root)
{
	char dir[PATH_MAX];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/infiniband", root_of(sysfs_root));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* --- verbs ------------------------------------------------------------------ */

static const char *transport_name(enum ibv_transport_type t)
{
	switch (t) {
	case IBV_TRANSPORT_IB: return "InfiniBand";
	case IBV_TRANSPORT_IWARP: return "iWARP";
	case IBV_TRANSPORT_USNIC: return "usNIC";
	case IBV_TRANSPORT_USNIC_UDP: return "usNIC UDP";
	case IBV_TRANSPORT_UNSPECIFIED: return "unspecified";
	default: return "unknown";
	}
}

static void port_state_name(enum ibv_port_state s, char *out, size_t cap)
{
	const char *name = ibv_port_state_str(s);

	if (name && strncmp(name, "PORT_", 5) == 0)
		name += 5;
	copy_str(out, cap, name ? name : "unknown");
}

static int query_port(const char *sysfs_root, struct ibv_context *ctx, const char *dev,
		      struct devinfo_port *p)
{
	struct ibv_port_attr pa;
	size_t cap = 0;
	int rc;

	memset(&pa, 0, sizeof(pa));
	rc = ibv_query_port(ctx, (uint8_t)p->port, &pa);
	if (rc) {
		snprintf(p->error, sizeof(p->error), "cannot query port %d: %s", p->port,
			 strerror(rc > 0 ? rc : errno));
		return 0;
	}
	{	/* verbs has no words for the physical state: sysfs does */
		struct devinfo_port sys;

		devinfo_port_sysfs(sysfs_root, dev, p->port, &sys);
		memcpy(p->phys_state, sys.phys_state, sizeof(p->phys_state));
	}
	port_state_name(pa.state, p->state, sizeof(p->state));
	copy_str(p->link_layer, sizeof(p->link_layer),
		 pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB");
	p->mtu_bytes = devinfo_mtu_bytes(pa.active_mtu);
	p->rate_gbps = devinfo_rate_gbps(pa.active_speed, pa.active_width);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid gid;
		struct devinfo_gid *g;

		if (ibv_query_gid(ctx, (uint8_t)p->port, i, &gid) || gid_is_zero(gid.raw))
			continue;
		if (p->ngids == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct devinfo_gid *np = realloc(p->gids, ncap * sizeof(*np));

			if (!np)
				return -1;
			p->gids = np;
			cap = ncap;
		}
		g = &p->gids[p->ngids++];
		memset(g, 0, sizeof(*g));
		g->index = i;
		memcpy(g->raw, gid.raw, 16);
		devinfo_gid_format(g->raw, g->gid);
		devinfo_gid_attrs(sysfs_root, dev, p->port, g);
	}
	devinfo_port_netdev(sysfs_root, dev, p->port, p->gids, p->ngids, p->netdev,
			    sizeof(p->netdev));
	p->default_gid_index = devinfo_pick_gid(p->gids, p->ngids);
	return 0;
}

static int query_dev(const char *sysfs_root, struct ibv_device *d, struct devinfo_dev *out)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	uint64_t guid;
	int rc;

	copy_str(out->name, sizeof(out->name), ibv_get_device_name(d));
	copy_str(out->transport, sizeof(out->transport), transport_name(d->transport_type));
	guid = be64toh(ibv_get_device_guid(d));
	snprintf(out->node_guid, sizeof(out->node_guid), "%04x:%04x:%04x:%04x",
		 (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
		 (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	ctx = ibv_open_device(d);
	if (!ctx) {
		snprintf(out->error, sizeof(out->error), "cannot open %s: %s (is /dev/infiniband "
			 "readable by this user?)", out->name, strerror(errno));
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	rc = ibv_query_device(ctx, &attr);
	if (rc) {
		snprintf(out->error, sizeof(out->error), "cannot query %s: %s", out->name,
			 strerror(rc > 0 ? rc : errno));
		ibv_close_device(ctx);
		return 0;
	}
	out->ports = calloc(attr.phys_port_cnt ? attr.phys_port_cnt : 1, sizeof(*out->ports));
	if (!out->ports) {
		ibv_close_device(ctx);
		return -1;
	}
	for (int p = 1; p <= attr.phys_port_cnt; p++) {
		struct devinfo_port *port = &out->ports[out->nports++];

		port->port = p;
		if (query_port(sysfs_root, ctx, out->name, port) < 0) {
			ibv_close_device(ctx);
			return -1;
		}
	}
	ibv_close_device(ctx);
	return 0;
}

int devinfo_verbs(const char *sysfs_root, const char *only_dev, struct devinfo_list *out,
		  char *err)
{
	struct ibv_device **list;
	int n = 0;

	memset(out, 0, sizeof(*out));
	out->kernel_devs = count_kernel_devs(sysfs_root);
	/* NULL (ENOSYS) without kernel RDMA support: simply no devices. */
	list = ibv_get_device_list(&n);
	if (!list || n <= 0) {
		if (list)
			ibv_free_device_list(list);
		return 0;
	}
	out->devs = calloc((size_t)n, sizeof(*out->devs));
	if (!out->devs)
		goto oom;
	for (int i = 0; i < n; i++) {
		if (only_dev && strcmp(ibv_get_device_name(list[i]), only_dev) != 0)
			continue;
		if (query_dev(sysfs_root, list[i], &out->devs[out->ndevs++]) < 0)
			goto oom;
	}
	ibv_free_device_list(list);
	return 0;
oom:
	ibv_free_device_list(list);
	devinfo_list_free(out);
	snprintf(err, DEVINFO_ERR_LEN, "out of memory listing RDMA devices");
	return -1;
}

void devinfo_list_free(struct devinfo_list *l)
{
	for (size_t i = 0; l->devs && i < l->ndevs; i++) {
		for (size_t p = 0; p < l->devs[i].nports; p++)
			free(l->devs[i].ports[p].gids);
		free(l->devs[i].ports);
	}
	free(l->devs);
	memset(l, 0, sizeof(*l));
}

/* --- soft engine ------------------------------------------------------------ */

enum devinfo_port_state devinfo_udp_port_state(const struct sockaddr *sa, uint16_t port,
					       int *err_no)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e = 0;

	memset(&ss, 0, sizeof(ss));
	if (sa->sa_family == AF_INET) {
		len = sizeof(struct sockaddr_in);
		memcpy(&ss, sa, len);
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	} else {
		len = sizeof(struct sockaddr_in6);
		memcpy(&ss, sa, len);
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	}
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0)
		e = errno;
	if (fd >= 0)
		close(fd);
	if (err_no)
		*err_no = e;
	if (!e)
		return DEVINFO_PORT_FREE;
	return e == EADDRINUSE ? DEVINFO_PORT_IN_USE : DEVINFO_PORT_UNAVAILABLE;
}

static unsigned if_mtu(const char *sysfs_root, int sock, const char *ifname)
{
	char path[PATH_MAX], text[32];
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	copy_str(ifr.ifr_name, sizeof(ifr.ifr_name), ifname);
	if (sock >= 0 && ioctl(sock, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		return (unsigned)ifr.ifr_mtu;
	snprintf(path, sizeof(path), "%s/class/net/%s/mtu", root_of(sysfs_root), ifname);
	if (devinfo_read_line(path, text, sizeof(text)))
		return (unsigned)strtoul(text, NULL, 10);
	return 0;
}

static bool is_link_local6(const struct devinfo_addr *a)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a->sa;

	return a->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr);
}

/* Sorting key: the interface index (the order of 'ip link'), then IPv4
 * before IPv6, then the order getifaddrs gave. */
struct soft_cand {
	struct devinfo_addr a;
	size_t if_rank, seq;
};

static int cand_cmp(const void *x, const void *y)
{
	const struct soft_cand *a = x, *b = y;

	if (a->if_rank != b->if_rank)
		return a->if_rank < b->if_rank ? -1 : 1;
	if (a->a.family != b->a.family)
		return a->a.family == AF_INET ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

int devinfo_soft(const char *sysfs_root, struct devinfo_addr **out, size_t *n, char *err)
{
	struct ifaddrs *ifa_list, *ifa;
	struct soft_cand *c = NULL;
	struct devinfo_addr *res = NULL;
	size_t count = 0, cap = 0, k = 0;
	int sock;

	*out = NULL;
	*n = 0;
	if (getifaddrs(&ifa_list) < 0) {
		snprintf(err, DEVINFO_ERR_LEN, "cannot list network interfaces: %s",
			 strerror(errno));
		return -1;
	}
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
		struct soft_cand *p;
		struct devinfo_addr *a;
		char text[INET6_ADDRSTRLEN];
		const void *bin;

		if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
			continue;
		if (ifa->ifa_addr->sa_family != AF_INET && ifa->ifa_addr->sa_family != AF_INET6)
			continue;
		if (count == cap) {
			size_t ncap = cap ? cap * 2 : 16;

			p = realloc(c, ncap * sizeof(*p));
			if (!p)
				goto oom;
			c = p;
			cap = ncap;
		}
		p = &c[count];
		memset(p, 0, sizeof(*p));
		a = &p->a;
		p->seq = count;
		p->if_rank = if_nametoindex(ifa->ifa_name);
		if (!p->if_rank)
			p->if_rank = SIZE_MAX;
		copy_str(a->ifname, sizeof(a->ifname), ifa->ifa_name);
		a->family = ifa->ifa_addr->sa_family;
		if (a->family == AF_INET) {
			memcpy(&a->sa, ifa->ifa_addr, sizeof(struct sockaddr_in));
			bin = &((struct sockaddr_in *)&a->sa)->sin_addr;
		} else {
			memcpy(&a->sa, ifa->ifa_addr, sizeof(struct sockaddr_in6));
			bin = &((struct sockaddr_in6 *)&a->sa)->sin6_addr;
		}
		if (!inet_ntop(a->family, bin, text, sizeof(text)))
			continue;
		if (is_link_local6(a))
			snprintf(a->address, sizeof(a->address), "%s%%%s", text, a->ifname);
		else
			copy_str(a->address, sizeof(a->address), text);
		a->loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
		a->if_mtu = if_mtu(sysfs_root, sock, a->ifname);
		a->roce_mtu = devinfo_roce_mtu(a->if_mtu, a->family);
		count++;
	}
	if (sock >= 0)
		close(sock);
	sock = -1;
	freeifaddrs(ifa_list);
	ifa_list = NULL;
	if (count)
		qsort(c, count, sizeof(*c), cand_cmp);
	res = calloc(count ? count : 1, sizeof(*res));
	if (!res)
		goto oom;
	for (size_t i = 0; i < count; i++) {
		bool other = false;

		/* A link-local IPv6 address only where the interface has nothing else. */
		if (is_link_local6(&c[i].a)) {
			for (size_t j = 0; j < count && !other; j++)
				other = c[j].if_rank == c[i].if_rank && !is_link_local6(&c[j].a);
			if (other)
				continue;
		}
		res[k] = c[i].a;
		res[k].port_4791 = devinfo_udp_port_state((struct sockaddr *)&res[k].sa,
							  DEVINFO_ROCE_PORT, &res[k].port_errno);
		k++;
	}
	free(c);
	*out = res;
	*n = k;
	return 0;
oom:
	if (ifa_list)
		freeifaddrs(ifa_list);
	if (sock >= 0)
		close(sock);
	free(c);
	snprintf(err, DEVINFO_ERR_LEN, "out of memory listing addresses");
	return -1;
}
