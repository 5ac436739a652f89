/* SPDX-License-Identifier: MIT */
/*
 * What this host can test with, for `rdmakit devices` and for the engines'
 * own defaults:
 *
 *   verbs: RDMA devices through libibverbs, their ports (state, link layer,
 *          active MTU and rate) and every non-zero GID with its type and
 *          netdev (from sysfs gid_attrs), and the GID index `--engine verbs`
 *          picks (devinfo_pick_gid: perftest's rule);
 *   soft:  the addresses of every UP interface the userspace RoCEv2 engine
 *          can bind, the RoCE path MTU it would use there, and whether UDP
 *          port 4791 on that address is free.
 *
 * Nothing here prints.  The sysfs parts take a root directory ("/sys" on a
 * real host, NULL meaning the same) so tests run them on fixture trees;
 * every path read is SYSFS_ROOT/class/infiniband/DEV/ports/N/... or
 * SYSFS_ROOT/class/net/IF/mtu.
 */
#ifndef RDMAKIT_DEVINFO_H
#define RDMAKIT_DEVINFO_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DEVINFO_SYSFS_ROOT "/sys"
#define DEVINFO_ERR_LEN 256
#define DEVINFO_ROCE_PORT 4791

/* "fe80:0000:0000:0000:0e42:a1ff:feb2:1c3e": sysfs's and show_gids' form. */
#define DEVINFO_GID_STRLEN 40

struct devinfo_gid {
	int index;
	uint8_t raw[16];
	char gid[DEVINFO_GID_STRLEN];
	char type[16];		/* "IB/RoCE v1", "RoCE v2"; "" when unknown */
	char netdev[IF_NAMESIZE]; /* "" when none (InfiniBand ports) */
};

/*
 * An RDMA port: the one model of it, filled from verbs (devinfo_verbs:
 * devices, the verbs engine) or from sysfs alone (devinfo_port_sysfs: top
 * every sample, without opening the device).
 */
struct devinfo_port {
	int port;			/* 1-based */
	char state[16];			/* "ACTIVE", "DOWN", "INIT", "ARMED", ... */
	char phys_state[24];		/* "LinkUp" (sysfs "5: LinkUp"); "" unknown */
	char link_layer[16];		/* verbs: "IB" or "Ethernet"; sysfs: "InfiniBand" or
					 * "Ethernet"; "" unknown */
	unsigned mtu_bytes;		/* active MTU: 256..4096; 0 unknown */
	double rate_gbps;		/* active speed x width; 0 unknown */
	char netdev[IF_NAMESIZE];	/* the port's netdev, "" when none */
	struct devinfo_gid *gids;	/* non-zero GIDs, by index */
	size_t ngids;
	int default_gid_index;		/* devinfo_pick_gid(gids, ngids) */
	char error[DEVINFO_ERR_LEN];	/* "" unless the port could not be queried */
};

struct devinfo_dev {
	char name[64];			/* "mlx5_0", "rxe0" */
	char node_guid[20];		/* "0c42:a103:00b2:1c3e" */
	char transport[16];		/* "InfiniBand", "iWARP", "usNIC", ... */
	struct devinfo_port *ports;
	size_t nports;
	char error[DEVINFO_ERR_LEN];	/* "" unless it could not be opened */
};

struct devinfo_list {
	struct devinfo_dev *devs;
	size_t ndevs;
	/* Entries in SYSFS_ROOT/class/infiniband: kernel RDMA devices.  More
	 * than libibverbs found means a provider library is missing. */
	size_t kernel_devs;
};

/*
 * Lists the verbs devices (only `only_dev` when not NULL).  A host without
 * kernel RDMA support has none: that is success with ndevs == 0.  Returns
 * 0, or -1 with `err` filled when memory ran out.  A device or port that
 * cannot be queried is listed with its `error` set.
 */
int devinfo_verbs(const char *sysfs_root, const char *only_dev, struct devinfo_list *out,
		  char *err);
void devinfo_list_free(struct devinfo_list *l);

/*
 * The GID index `--engine verbs` uses when none is given (as perftest
 * picks it): the first RoCE v2 GID holding an IPv4-mapped address, else
 * the first RoCE v2 GID, else index 0.  `gids` holds the non-zero entries.
 */
int devinfo_pick_gid(const struct devinfo_gid *gids, size_t n);

/* Fills g->type and g->netdev from sysfs gid_attrs for g->index. */
void devinfo_gid_attrs(const char *sysfs_root, const char *dev, int port,
		       struct devinfo_gid *g);
/*
 * Reads a port's GID table from sysfs alone (ports/N/gids/IDX with its
 * gid_attrs), skipping all-zero entries; in index order.  Returns 0, or -1
 * when the port has no readable gids directory.  Free *out with free().
 */
int devinfo_sysfs_gids(const char *sysfs_root, const char *dev, int port,
		       struct devinfo_gid **out, size_t *n);
/*
 * A port as sysfs describes it, without opening the device: state,
 * phys_state, link layer, rate (from "100 Gb/sec (4X EDR)") and netdev;
 * no MTU or GIDs.  Missing files leave fields empty or 0.
 */
void devinfo_port_sysfs(const char *sysfs_root, const char *dev, int port,
			struct devinfo_port *out);
/* The first line of a small file without its newline; false if unreadable
 * (buf is then ""). */
bool devinfo_read_line(const char *path, char *buf, size_t cap);

/* A port's netdev: the first GID's netdev in sysfs, else "". */
void devinfo_port_netdev(const char *sysfs_root, const char *dev, int port,
			 const struct devinfo_gid *gids, size_t n, char *out, size_t cap);

void devinfo_gid_format(const uint8_t raw[16], char out[DEVINFO_GID_STRLEN]);
/* ::ffff:a.b.c.d */
bool devinfo_gid_is_ipv4(const uint8_t raw[16]);
/* enum ibv_mtu (1..5) in bytes; 0 for anything else. */
unsigned devinfo_mtu_bytes(int ibv_mtu);
/* ibv_port_attr active_speed and active_width as Gb/s (the kernel's
 * per-lane rates: SDR 2.5, DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25,
 * HDR 50, NDR 100, XDR 200); 0 when either is unknown. */
double devinfo_rate_gbps(unsigned active_speed, unsigned active_width);

/* --- soft engine ---------------------------------------------------------- */

enum devinfo_port_state {
	DEVINFO_PORT_FREE,
	DEVINFO_PORT_IN_USE,		/* EADDRINUSE: a soft engine or a kernel RoCE stack */
	DEVINFO_PORT_UNAVAILABLE,	/* the bind failed otherwise (e.g. tentative IPv6) */
};

struct devinfo_addr {
	char ifname[IF_NAMESIZE];
	int family;			/* AF_INET or AF_INET6 */
	char address[64];		/* "127.0.0.1", "fd00::2", "fe80::1%eth0" */
	struct sockaddr_storage sa;	/* port 0 */
	bool loopback;
	unsigned if_mtu;		/* 0 when unknown */
	unsigned roce_mtu;		/* devinfo_roce_mtu(if_mtu, family) */
	enum devinfo_port_state port_4791;
	int port_errno;			/* the bind's errno when not free */
};

/*
 * The addresses of every UP interface, IPv4 and IPv6, by interface index
 * (IPv4 before IPv6 within an interface).  IPv6 link-local addresses are
 * left out, except on an interface that has no other address.  Each is
 * probed for UDP port 4791.  Returns 0 (maybe with *n == 0) or -1 with
 * `err` filled.  Free *out with free().
 */
int devinfo_soft(const char *sysfs_root, struct devinfo_addr **out, size_t *n, char *err);

/*
 * The RoCE path MTU the soft engine uses on an interface: the largest of
 * 256, 512, 1024, 2048, 4096 whose packet fits in if_mtu with the IP (20
 * or 40), UDP (8), BTH (12), RETH (16) and ICRC (4) headers; 0 when not
 * even 256 fits.
 */
unsigned devinfo_roce_mtu(unsigned if_mtu, int family);
/* Tries to bind a UDP socket to `sa` with `port`, and closes it at once. */
enum devinfo_port_state devinfo_udp_port_state(const struct sockaddr *sa, uint16_t port,
					       int *err_no);
const char *devinfo_port_state_str(enum devinfo_port_state s);

#endif
