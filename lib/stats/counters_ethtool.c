// SPDX-License-Identifier: MIT
/*
 * `ethtool -S IFACE` through the SIOCETHTOOL ioctl: the number of stats
 * (ETHTOOL_GSSET_INFO), their names (ETHTOOL_GSTRINGS, ETH_SS_STATS) and
 * values (ETHTOOL_GSTATS).  Asked afresh at every sample: drivers add and
 * remove stats at run time (mlx5 shows rx_prioN_pause only for priorities
 * with PFC enabled).
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "counters.h"

static int ethtool_ioctl(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* How many ETH_SS_STATS strings IFACE has; -1 with errno. */
static int stats_count(int fd, const char *ifname)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} sset = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS } };
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };

	if (ethtool_ioctl(fd, ifname, &sset) == 0)
		return sset.hdr.sset_mask ? (int)sset.len : 0;
	if (errno != EOPNOTSUPP)
		return -1;
	/* Older drivers: the count from the driver info. */
	if (ethtool_ioctl(fd, ifname, &drv) < 0)
		return -1;
	return (int)drv.n_stats;
}

static int fail(char *err, size_t errlen, const char *ifname, const char *what, int e)
{
	snprintf(err, errlen, "%s: %s: %s", ifname, what, strerror(e));
	errno = e;
	return -1;
}

int ctr_read_ethtool(const char *ifname, struct ctr_set *set, char *err, size_t errlen)
{
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *vals = NULL;
	int fd, n, rc = 0;

	if (strlen(ifname) >= IFNAMSIZ)
		return fail(err, errlen, ifname, "ethtool statistics", ENAMETOOLONG);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, errlen, ifname, "socket for ethtool", errno);
	n = stats_count(fd, ifname);
	if (n < 0) {
		rc = fail(err, errlen, ifname, "ethtool statistics", errno);
		goto out;
	}
	if (n == 0 || n > 1 << 16)
		goto out;	/* no stats (lo, dummy): nothing to add */
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	vals = calloc(1, sizeof(*vals) + (size_t)n * sizeof(uint64_t));
	if (!names || !vals) {
		rc = fail(err, errlen, ifname, "ethtool statistics", ENOMEM);
		goto out;
	}
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = (uint32_t)n;
	vals->cmd = ETHTOOL_GSTATS;
	vals->n_stats = (uint32_t)n;
	if (ethtool_ioctl(fd, ifname, names) < 0 || ethtool_ioctl(fd, ifname, vals) < 0) {
		rc = fail(err, errlen, ifname, "ethtool statistics", errno);
		goto out;
	}
	/* The driver may have changed its list in between: use the shorter. */
	if (names->len < (uint32_t)n)
		n = (int)names->len;
	if (vals->n_stats < (uint32_t)n)
		n = (int)vals->n_stats;
	for (int i = 0; i < n; i++) {
		char name[ETH_GSTRING_LEN + 1];

		memcpy(name, names->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		if (!name[0])
			continue;
		if (!ctr_set_add(set, CTR_SRC_ETHTOOL, name, vals->data[i])) {
			rc = fail(err, errlen, ifname, "ethtool statistics", ENOMEM);
			break;
		}
	}
out:
	free(names);
	free(vals);
	close(fd);
	return rc;
}
