// SPDX-License-Identifier: MIT
/*
 * lib/transport/devinfo.c: the GID index --engine verbs picks (perftest's
 * rule) on a sysfs fixture tree shaped like mlx5 RoCE and mlx4 InfiniBand
 * ports (tests/fixtures/devices/sys), the RoCE MTU the soft engine uses on
 * an interface, rates, MTU codes, GID text, and the UDP port probe.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devinfo.h"
#include "unit.h"

static char fixture[PATH_MAX];

/* tests/fixtures/devices/sys from the repository root: $RDMAKIT_ROOT, the
 * current directory, or three levels above this binary (build/tests/X). */
static bool find_fixture(void)
{
	return unit_repo_path("tests/fixtures/devices/sys", fixture, sizeof(fixture));
}

static struct devinfo_gid gid(int index, const char *addr6, const char *type)
{
	struct devinfo_gid g = { .index = index };

	inet_pton(AF_INET6, addr6, g.raw);
	devinfo_gid_format(g.raw, g.gid);
	snprintf(g.type, sizeof(g.type), "%s", type);
	return g;
}

/* mlx5-like RoCE port: link-local, fd00::2 and 198.18.0.2, each as RoCE v1
 * then v2, then two empty (zero) entries. */
static void test_sysfs_mlx5_roce_port(struct unit *u)
{
	struct devinfo_gid *g;
	size_t n;
	char nd[IF_NAMESIZE];

	CHECK_EQ(u, devinfo_sysfs_gids(fixture, "mlx5_0", 1, &g, &n), 0);
	CHECK_EQ(u, n, 6);	/* the two zero GIDs are skipped */
	if (n == 6) {
		for (size_t i = 0; i < n; i++) {
			CHECK_EQ(u, g[i].index, i);
			CHECK_STR(u, g[i].type, i % 2 ? "RoCE v2" : "IB/RoCE v1");
			CHECK_STR(u, g[i].netdev, "eth2");
		}
		CHECK_STR(u, g[0].gid, "fe80:0000:0000:0000:0e42:a1ff:feb2:1c3e");
		CHECK_STR(u, g[3].gid, "fd00:0000:0000:0000:0000:0000:0000:0002");
		CHECK_STR(u, g[5].gid, "0000:0000:0000:0000:0000:ffff:c612:0002");
		CHECK(u, !devinfo_gid_is_ipv4(g[3].raw));
		CHECK(u, devinfo_gid_is_ipv4(g[4].raw));
		CHECK(u, devinfo_gid_is_ipv4(g[5].raw));
	}
	/* RoCE v2 with an IPv4-mapped address wins over the earlier v2 GIDs. */
	CHECK_EQ(u, devinfo_pick_gid(g, n), 5);
	devinfo_port_netdev(fixture, "mlx5_0", 1, g, n, nd, sizeof(nd));
	CHECK_STR(u, nd, "eth2");
	free(g);
}

/* RoCE without IPv4 addresses: the first RoCE v2 GID (link-local). */
static void test_sysfs_roce_without_ipv4(struct unit *u)
{
	struct devinfo_gid *g;
	size_t n;

	CHECK_EQ(u, devinfo_sysfs_gids(fixture, "mlx5_1", 1, &g, &n), 0);
	CHECK_EQ(u, n, 4);
	CHECK_EQ(u, devinfo_pick_gid(g, n), 1);
	free(g);
}

/* InfiniBand: one GID, no netdev: index 0. */
static void test_sysfs_infiniband_port(struct unit *u)
{
	struct devinfo_gid *g;
	size_t n;
	char nd[IF_NAMESIZE] = "x";

	CHECK_EQ(u, devinfo_sysfs_gids(fixture, "mlx4_0", 1, &g, &n), 0);
	CHECK_EQ(u, n, 1);
	if (n == 1) {
		CHECK_STR(u, g[0].gid, "fe80:0000:0000:0000:0002:c903:0010:abcd");
		CHECK_STR(u, g[0].type, "IB/RoCE v1");
		CHECK_STR(u, g[0].netdev, "");
	}
	CHECK_EQ(u, devinfo_pick_gid(g, n), 0);
	devinfo_port_netdev(fixture, "mlx4_0", 1, g, n, nd, sizeof(nd));
	CHECK_STR(u, nd, "");
	free(g);
}

static void test_sysfs_missing(struct unit *u)
{
	struct devinfo_gid *g = (void *)1;
	size_t n = 7;

	CHECK_EQ(u, devinfo_sysfs_gids(fixture, "mlx5_0", 2, &g, &n), -1);
	CHECK(u, g == NULL);
	CHECK_EQ(u, n, 0);
	CHECK_EQ(u, devinfo_sysfs_gids(fixture, "nosuch", 1, &g, &n), -1);
}

/* The attributes of one GID, read alone (what the verbs path does). */
static void test_gid_attrs(struct unit *u)
{
	struct devinfo_gid g = { .index = 3 };

	devinfo_gid_attrs(fixture, "mlx5_1", 1, &g);
	CHECK_STR(u, g.type, "RoCE v2");
	CHECK_STR(u, g.netdev, "eth3");
	g = (struct devinfo_gid){ .index = 4 };	/* an empty entry */
	devinfo_gid_attrs(fixture, "mlx5_1", 1, &g);
	CHECK_STR(u, g.type, "");
	CHECK_STR(u, g.netdev, "");
}

/* The fixture's three kernel devices are counted; libibverbs finds what
 * this host has (none on a kernel without RDMA), never an error. */
static void test_verbs_with_fixture_root(struct unit *u)
{
	struct devinfo_list l;
	char err[DEVINFO_ERR_LEN] = "";

	CHECK_EQ(u, devinfo_verbs(fixture, NULL, &l, err), 0);
	CHECK_EQ(u, l.kernel_devs, 3);
	devinfo_list_free(&l);
	CHECK_EQ(u, devinfo_verbs(fixture, "no-such-device-here", &l, err), 0);
	CHECK_EQ(u, l.ndevs, 0);
	devinfo_list_free(&l);
}

static void test_pick_gid_rules(struct unit *u)
{
	struct devinfo_gid g[4];

	CHECK_EQ(u, devinfo_pick_gid(NULL, 0), 0);
	/* Only RoCE v1: index 0. */
	g[0] = gid(0, "fe80::1", "IB/RoCE v1");
	g[1] = gid(1, "::ffff:198.18.0.1", "IB/RoCE v1");
	CHECK_EQ(u, devinfo_pick_gid(g, 2), 0);
	/* Unknown types (no sysfs): index 0. */
	g[0] = gid(2, "::ffff:198.18.0.1", "");
	CHECK_EQ(u, devinfo_pick_gid(g, 1), 0);
	/* The first v2 IPv4 of several; indexes need not start at 0. */
	g[0] = gid(3, "fd00::1", "RoCE v2");
	g[1] = gid(7, "::ffff:198.18.0.1", "RoCE v2");
	g[2] = gid(9, "::ffff:198.18.0.2", "RoCE v2");
	CHECK_EQ(u, devinfo_pick_gid(g, 3), 7);
	/* A v1 IPv4 GID does not beat a v2 IPv6 one. */
	g[0] = gid(4, "::ffff:198.18.0.1", "IB/RoCE v1");
	g[1] = gid(5, "fd00::1", "RoCE v2");
	CHECK_EQ(u, devinfo_pick_gid(g, 2), 5);
}

static void test_roce_mtu(struct unit *u)
{
	/* IPv4: 60 bytes of IP+UDP+BTH+RETH+ICRC; IPv6: 80. */
	CHECK_EQ(u, devinfo_roce_mtu(1500, AF_INET), 1024);
	CHECK_EQ(u, devinfo_roce_mtu(1500, AF_INET6), 1024);
	CHECK_EQ(u, devinfo_roce_mtu(9000, AF_INET), 4096);
	CHECK_EQ(u, devinfo_roce_mtu(9000, AF_INET6), 4096);
	CHECK_EQ(u, devinfo_roce_mtu(65536, AF_INET), 4096);
	CHECK_EQ(u, devinfo_roce_mtu(65536, AF_INET6), 4096);
	CHECK_EQ(u, devinfo_roce_mtu(576, AF_INET), 512);	/* 516 */
	CHECK_EQ(u, devinfo_roce_mtu(576, AF_INET6), 256);	/* 496 */
	CHECK_EQ(u, devinfo_roce_mtu(1280, AF_INET), 1024);
	CHECK_EQ(u, devinfo_roce_mtu(1280, AF_INET6), 1024);
	/* The boundaries. */
	CHECK_EQ(u, devinfo_roce_mtu(4096 + 60, AF_INET), 4096);
	CHECK_EQ(u, devinfo_roce_mtu(4096 + 59, AF_INET), 2048);
	CHECK_EQ(u, devinfo_roce_mtu(4096 + 80, AF_INET6), 4096);
	CHECK_EQ(u, devinfo_roce_mtu(4096 + 79, AF_INET6), 2048);
	CHECK_EQ(u, devinfo_roce_mtu(1024 + 60, AF_INET), 1024);
	CHECK_EQ(u, devinfo_roce_mtu(1024 + 59, AF_INET), 512);
	CHECK_EQ(u, devinfo_roce_mtu(256 + 60, AF_INET), 256);
	CHECK_EQ(u, devinfo_roce_mtu(256 + 59, AF_INET), 0);
	CHECK_EQ(u, devinfo_roce_mtu(256 + 79, AF_INET6), 0);
	CHECK_EQ(u, devinfo_roce_mtu(0, AF_INET), 0);
	CHECK_EQ(u, devinfo_roce_mtu(40, AF_INET6), 0);
}

static void test_rates_and_mtu_codes(struct unit *u)
{
	CHECK(u, devinfo_rate_gbps(32, 2) == 100);	/* 4X EDR */
	CHECK(u, devinfo_rate_gbps(16, 2) == 56);	/* 4X FDR */
	CHECK(u, devinfo_rate_gbps(8, 2) == 40);	/* 4X FDR10 */
	CHECK(u, devinfo_rate_gbps(64, 2) == 200);	/* 4X HDR */
	CHECK(u, devinfo_rate_gbps(128, 2) == 400);	/* 4X NDR */
	CHECK(u, devinfo_rate_gbps(64, 16) == 100);	/* 2X HDR */
	CHECK(u, devinfo_rate_gbps(1, 1) == 2.5);	/* 1X SDR */
	CHECK(u, devinfo_rate_gbps(4, 8) == 120);	/* 12X QDR */
	CHECK(u, devinfo_rate_gbps(0, 2) == 0);
	CHECK(u, devinfo_rate_gbps(32, 3) == 0);
	CHECK_EQ(u, devinfo_mtu_bytes(1), 256);
	CHECK_EQ(u, devinfo_mtu_bytes(3), 1024);
	CHECK_EQ(u, devinfo_mtu_bytes(5), 4096);
	CHECK_EQ(u, devinfo_mtu_bytes(0), 0);
	CHECK_EQ(u, devinfo_mtu_bytes(6), 0);
}

static void test_gid_text(struct unit *u)
{
	struct devinfo_gid g = gid(0, "::ffff:192.0.2.2", "RoCE v2");

	CHECK_STR(u, g.gid, "0000:0000:0000:0000:0000:ffff:c000:0202");
	CHECK(u, devinfo_gid_is_ipv4(g.raw));
	g = gid(0, "::1", "RoCE v2");
	CHECK(u, !devinfo_gid_is_ipv4(g.raw));
}

static void test_udp_port_probe(struct unit *u)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd, e = -1;
	uint16_t port;
	char flag[8] = "0";
	FILE *f;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(u, fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(u, bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(u, getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	CHECK_EQ(u, devinfo_udp_port_state((struct sockaddr *)&sa, port, &e), DEVINFO_PORT_IN_USE);
	CHECK_EQ(u, e, EADDRINUSE);
	close(fd);
	CHECK_EQ(u, devinfo_udp_port_state((struct sockaddr *)&sa, port, &e), DEVINFO_PORT_FREE);
	CHECK_EQ(u, e, 0);
	CHECK_STR(u, devinfo_port_state_str(DEVINFO_PORT_FREE), "free");
	CHECK_STR(u, devinfo_port_state_str(DEVINFO_PORT_IN_USE), "in use");
	/* An address this host does not have (unless non-local binds are on). */
	f = fopen("/proc/sys/net/ipv4/ip_nonlocal_bind", "r");
	if (f) {
		if (!fgets(flag, sizeof(flag), f))
			flag[0] = '0';
		fclose(f);
	}
	if (flag[0] == '0') {
		inet_pton(AF_INET, "203.0.113.77", &sa.sin_addr);
		CHECK_EQ(u, devinfo_udp_port_state((struct sockaddr *)&sa, 4791, &e),
			 DEVINFO_PORT_UNAVAILABLE);
		CHECK_EQ(u, e, EADDRNOTAVAIL);
	}
}

/* The host's own addresses: loopback is there, each RoCE MTU follows from
 * its interface MTU, and link-local IPv6 only where nothing else is. */
static void test_soft_addresses_here(struct unit *u)
{
	struct devinfo_addr *a;
	char err[DEVINFO_ERR_LEN] = "";
	bool lo4 = false;
	size_t n;

	CHECK_EQ(u, devinfo_soft(NULL, &a, &n, err), 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(u, a[i].family == AF_INET || a[i].family == AF_INET6);
		CHECK_EQ(u, a[i].roce_mtu, devinfo_roce_mtu(a[i].if_mtu, a[i].family));
		if (a[i].family == AF_INET && strcmp(a[i].address, "127.0.0.1") == 0) {
			lo4 = true;
			CHECK(u, a[i].loopback);
			CHECK_STR(u, a[i].ifname, "lo");
		}
		if (strncmp(a[i].address, "fe80:", 5) == 0) {
			CHECK(u, strchr(a[i].address, '%') != NULL);
			for (size_t j = 0; j < n; j++)
				CHECK(u, strcmp(a[j].ifname, a[i].ifname) != 0 ||
					 strncmp(a[j].address, "fe80:", 5) == 0);
		}
		/* Grouped by interface, IPv4 first. */
		if (i && strcmp(a[i].ifname, a[i - 1].ifname) == 0)
			CHECK(u, !(a[i].family == AF_INET && a[i - 1].family == AF_INET6));
	}
	CHECK(u, lo4);
	free(a);
}

int main(void)
{
	struct unit u = { 0 };

	if (find_fixture()) {
		RUN(&u, test_sysfs_mlx5_roce_port);
		RUN(&u, test_sysfs_roce_without_ipv4);
		RUN(&u, test_sysfs_infiniband_port);
		RUN(&u, test_sysfs_missing);
		RUN(&u, test_gid_attrs);
		RUN(&u, test_verbs_with_fixture_root);
	} else {
		printf("not ok 1 - fixture tests/fixtures/devices/sys not found (run from the "
		       "repository root or set RDMAKIT_ROOT)\n");
		u.number++;
		u.failed++;
	}
	RUN(&u, test_pick_gid_rules);
	RUN(&u, test_roce_mtu);
	RUN(&u, test_rates_and_mtu_codes);
	RUN(&u, test_gid_text);
	RUN(&u, test_udp_port_probe);
	RUN(&u, test_soft_addresses_here);
	return unit_done(&u);
}
