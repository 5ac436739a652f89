// SPDX-License-Identifier: MIT
/*
 * The host's ECN counters: PROC/net/netstat, whose "IpExt:" header line
 * names the columns of the value line after it.  Found by name, never by
 * position (net/ipv4/proc.c has added columns over the years).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"

static const char *const ecn_names[] = { "InNoECTPkts", "InECT1Pkts", "InECT0Pkts", "InCEPkts" };

/* Reads all of a /proc file (they are not seekable for their size). */
static char *read_all(const char *path)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		free(buf);
		errno = fd < 0 ? e : ENOMEM;
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *p = cap < (1 << 22) ? realloc(buf, cap * 2) : NULL;

			if (!p) {
				free(buf);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			buf = p;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* The value under `name` in a header line and its value line (same prefix). */
static bool table_lookup(const char *head, const char *vals, const char *name, uint64_t *out)
{
	size_t nlen = strlen(name);
	const char *h = head, *v = vals;

	/* Skip the "IpExt:" words of both lines, then walk them in step. */
	h += strcspn(h, " \n");
	v += strcspn(v, " \n");
	for (;;) {
		size_t hl, vl;

		h += strspn(h, " ");
		v += strspn(v, " ");
		hl = strcspn(h, " \n");
		vl = strcspn(v, " \n");
		if (!hl || !vl)
			return false;
		if (hl == nlen && !strncmp(h, name, nlen)) {
			char num[32];

			if (vl >= sizeof(num))
				return false;
			memcpy(num, v, vl);
			num[vl] = '\0';
			return ctr_parse_value(num, out);
		}
		h += hl;
		v += vl;
	}
}

int ctr_read_netstat(const char *proc_root, struct ctr_set *set)
{
	char path[PATH_MAX];
	char *text, *line;
	int found = 0;

	snprintf(path, sizeof(path), "%s/net/netstat", proc_root && *proc_root ? proc_root : CTR_PROC_ROOT);
	text = read_all(path);
	if (!text)
		return -1;
	/* Lines come in pairs: "IpExt: Name ..." then "IpExt: value ...". */
	for (line = text; line && *line;) {
		char *next = strchr(line, '\n');
		char *vals = next ? next + 1 : NULL;

		if (!vals || !*vals)
			break;
		if (!strncmp(line, "IpExt:", 6) && !strncmp(vals, "IpExt:", 6)) {
			for (size_t i = 0; i < 4; i++) {
				uint64_t v;

				if (!table_lookup(line, vals, ecn_names[i], &v))
					continue;
				if (!ctr_set_add(set, CTR_SRC_NETSTAT, ecn_names[i], v)) {
					free(text);
					errno = ENOMEM;
					return -1;
				}
				found++;
			}
		}
		next = strchr(vals, '\n');
		line = next ? next + 1 : NULL;
	}
	free(text);
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}
