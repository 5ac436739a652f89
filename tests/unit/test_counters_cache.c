// SPDX-License-Identifier: MIT
/*
 * lib/stats/counters_cache.c: the open counter files kept between samples
 * follow the files they read (rewritten in place, replaced, removed,
 * devices coming and going), survive churn without leaking descriptors,
 * and work across file systems; on scratch trees built here.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "counters_fx.h"
#include "unit.h"

static void scratch_tree_with(struct unit *u, struct ctr_cache *cache)
{
	char root[] = "/tmp/rdmakit-counters-XXXXXX", path[PATH_MAX], cmd[PATH_MAX + 16];
	struct ctr_opts o = { .cache = cache };
	struct ctr_snapshot a, b, c;
	const struct ctr_port *p;
	char err[256];

	if (!mkdtemp(root)) {
		CHECK(u, false);
		return;
	}
	o.sysfs_root = root;
	o.proc_root = root;
	o.history = true;
	snprintf(path, sizeof(path), "%s/class/infiniband/dev_a/ports/1/hw_counters", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	CHECK_EQ(u, system(cmd), 0);
	snprintf(path, sizeof(path), "%s/class/infiniband/dev_a/ports/1/hw_counters/rcvd_pkts", root);
	put_file(path, "5\n");
	snprintf(path, sizeof(path), "%s/class/infiniband/dev_a/ports/1/hw_counters/lifespan", root);
	put_file(path, "10\n");
	CHECK_EQ(u, ctr_sample(&o, &a, err, sizeof(err)), 0);
	CHECK(u, !a.have_netstat);
	ctr_rates(&a, NULL);
	/* The file is replaced, another counter and another device appear. */
	snprintf(path, sizeof(path), "%s/class/infiniband/dev_a/ports/1/hw_counters/rcvd_pkts", root);
	put_file(path, "9\n");
	snprintf(path, sizeof(path), "%s/class/infiniband/dev_a/ports/1/hw_counters/sent_pkts", root);
	put_file(path, "1\n");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/class/infiniband/dev_b/ports/1/counters'", root);
	CHECK_EQ(u, system(cmd), 0);
	snprintf(path, sizeof(path), "%s/class/infiniband/dev_b/ports/1/counters/port_rcv_data", root);
	put_file(path, "N/A (no PMA)\n");
	CHECK_EQ(u, ctr_sample(&o, &b, err, sizeof(err)), 0);
	b.mono_ns = a.mono_ns + 500000000ULL;
	ctr_rates(&b, &a);
	p = port(&b, "dev_a", 1);
	CHECK_EQ(u, value(p, CTR_SRC_HW_PORT, "rcvd_pkts"), 9);
	CHECK(u, p && near(ctr_find(&p->set, CTR_SRC_HW_PORT, "rcvd_pkts")->rate, 8));
	CHECK(u, p && (ctr_find(&p->set, CTR_SRC_HW_PORT, "sent_pkts")->flags & CTR_F_NEW));
	CHECK(u, p && p->set.n == 2);
	p = port(&b, "dev_b", 1);
	CHECK(u, p && p->is_new && p->set.n == 0);
	CHECK_EQ(u, b.ngone, 0);
	/* History follows the counter from sample to sample. */
	p = port(&b, "dev_a", 1);
	{
		const struct ctr_counter *k = ctr_find(&p->set, CTR_SRC_HW_PORT, "rcvd_pkts");
		float h[4];

		CHECK(u, k && k->hist && ctr_hist_get(k->hist, h, 4) == 2);
		CHECK(u, isnan(h[0]) && near(h[1], 8));
	}
	/* dev_a disappears; its counter restarting in dev_b... */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/class/infiniband/dev_a'", root);
	CHECK_EQ(u, system(cmd), 0);
	CHECK_EQ(u, ctr_sample(&o, &c, err, sizeof(err)), 0);
	c.mono_ns = b.mono_ns + 500000000ULL;
	ctr_rates(&c, &b);
	CHECK_EQ(u, c.nports, 1);
	CHECK(u, c.ngone == 1 && !strcmp(c.gone[0], "dev_a/1"));
	CHECK(u, !c.ports[0].is_new);
	ctr_snapshot_free(&a);
	ctr_snapshot_free(&b);
	ctr_snapshot_free(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_EQ(u, system(cmd), 0);
}

static void scratch_tree(struct unit *u)
{
	scratch_tree_with(u, NULL);
}

/* The same changes through the open-file cache: nothing stale. */
static void scratch_tree_cached(struct unit *u)
{
	struct ctr_cache *cache = ctr_cache_new();

	CHECK(u, cache != NULL);
	scratch_tree_with(u, cache);
	/* dev_a's files were closed when it went; dev_b's one file is open. */
	CHECK_EQ(u, ctr_cache_open_files(cache), 1);
	ctr_cache_free(cache);
}

static void write_in_place(const char *path, const char *text)
{
	FILE *f = fopen(path, "r+");

	if (!f)
		return;
	fputs(text, f);	/* same inode, as a sysfs attribute's value changes */
	fclose(f);
}

/*
 * A scratch sysfs tree in ROOT (a mkdtemp template) with an empty
 * d0/ports/1/hw_counters (its path in dir), read through a new cache.
 */
static bool d0_tree(struct unit *u, char *root, struct ctr_opts *o, char *dir, size_t dirlen)
{
	char cmd[PATH_MAX + 16];

	if (!mkdtemp(root)) {
		CHECK(u, false);
		return false;
	}
	o->sysfs_root = root;
	o->proc_root = root;
	o->cache = ctr_cache_new();
	snprintf(dir, dirlen, "%s/class/infiniband/d0/ports/1/hw_counters", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	CHECK_EQ(u, system(cmd), 0);
	return o->cache != NULL;
}

static uint64_t sample_value(struct unit *u, struct ctr_opts *o, const char *dev,
			     const char *name)
{
	struct ctr_snapshot s;
	const struct ctr_port *p;
	uint64_t v = UINT64_MAX;
	char err[256];

	CHECK_EQ(u, ctr_sample(o, &s, err, sizeof(err)), 0);
	p = port(&s, dev, 1);
	if (p && ctr_find(&p->set, CTR_SRC_HW_PORT, name))
		v = ctr_find(&p->set, CTR_SRC_HW_PORT, name)->value;
	ctr_snapshot_free(&s);
	return v;
}

/*
 * Kept-open files: a value rewritten in place, a file renamed over, a
 * device removed and re-created under the same names, a counter removed;
 * and a descriptor limit below the number of counters (the rest read
 * uncached, every value still right).
 */
static void cache_follows_files(struct unit *u)
{
	char root[] = "/tmp/rdmakit-cache-XXXXXX", dir[PATH_MAX], path[PATH_MAX + 64],
	     cmd[2 * PATH_MAX + 64];
	struct ctr_opts o = { 0 };
	struct rlimit old, low;
	bool limited;

	if (!d0_tree(u, root, &o, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/a", dir);
	put_file(path, "100\n");
	snprintf(path, sizeof(path), "%s/b", dir);
	put_file(path, "200\n");
	CHECK_EQ(u, sample_value(u, &o, "d0", "a"), 100);
	CHECK_EQ(u, ctr_cache_open_files(o.cache), 2);
	snprintf(path, sizeof(path), "%s/a", dir);
	write_in_place(path, "101\n");
	CHECK_EQ(u, sample_value(u, &o, "d0", "a"), 101);
	put_file(path, "102\n");
	CHECK_EQ(u, sample_value(u, &o, "d0", "a"), 102);
	CHECK_EQ(u, ctr_cache_open_files(o.cache), 2);
	/* The device goes and comes back: the old descriptors hold old inodes. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/class/infiniband/d0' && mkdir -p '%s'", root, dir);
	CHECK_EQ(u, system(cmd), 0);
	snprintf(path, sizeof(path), "%s/a", dir);
	put_file(path, "7\n");
	CHECK_EQ(u, sample_value(u, &o, "d0", "a"), 7);
	CHECK_EQ(u, sample_value(u, &o, "d0", "b"), UINT64_MAX);
	CHECK_EQ(u, ctr_cache_open_files(o.cache), 1);
	/* More counters than descriptors allowed. */
	limited = getrlimit(RLIMIT_NOFILE, &old) == 0;
	low = old;
	low.rlim_cur = 64 + 8 < old.rlim_max ? 64 + 8 : old.rlim_max;
	if (limited && setrlimit(RLIMIT_NOFILE, &low) == 0) {
		struct ctr_cache *small = ctr_cache_new();
		struct ctr_opts so = o;

		so.cache = small;
		for (int i = 0; i < 40; i++) {
			char text[32];

			snprintf(path, sizeof(path), "%s/c%02d", dir, i);
			snprintf(text, sizeof(text), "%d\n", 1000 + i);
			put_file(path, text);
		}
		for (int round = 0; round < 2; round++) {
			bool all = true;

			for (int i = 0; i < 40; i += 13) {
				char name[8];

				snprintf(name, sizeof(name), "c%02d", i);
				all &= sample_value(u, &so, "d0", name) == (uint64_t)(1000 + i);
			}
			CHECK(u, all);
			CHECK(u, ctr_cache_open_files(small) <= 8);
		}
		ctr_cache_free(small);
		setrlimit(RLIMIT_NOFILE, &old);
	}
	ctr_cache_free(o.cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_EQ(u, system(cmd), 0);
}

/*
 * Hundreds of files coming and going over many samples: the table grows,
 * sweeps remove entries from the middle of probe runs, and every value
 * read is the file's current one.
 */
static void cache_churn(struct unit *u)
{
	enum { FILES = 600, ROUNDS = 12 };
	char root[] = "/tmp/rdmakit-churn-XXXXXX", dir[PATH_MAX], path[PATH_MAX + 64],
	     cmd[PATH_MAX + 16];
	static int val[FILES];	/* -1: absent */
	struct ctr_opts o = { 0 };
	unsigned seed = 12345;
	bool all_right = true, counts_right = true, opens_right = true;

	if (!d0_tree(u, root, &o, dir, sizeof(dir)))
		return;
	for (int i = 0; i < FILES; i++)
		val[i] = -1;
	for (int round = 0; round < ROUNDS; round++) {
		struct ctr_snapshot s;
		const struct ctr_port *p;
		size_t present = 0, replaced = 0;
		uint64_t opens = ctr_cache_opens(o.cache);
		char err[256];

		for (int i = 0; i < FILES; i++) {
			unsigned r = (seed = seed * 1103515245u + 12345u) >> 16;
			char text[32];

			snprintf(path, sizeof(path), "%s/ctr_%d", dir, i);
			if (r % 4 == 0 && val[i] >= 0) {
				unlink(path);
				val[i] = -1;
			} else if (r % 4 == 1) {
				val[i] = (int)(r % 100000);
				snprintf(text, sizeof(text), "%d\n", val[i]);
				put_file(path, text);
				replaced++;
			}
			present += val[i] >= 0;
		}
		CHECK_EQ(u, ctr_sample(&o, &s, err, sizeof(err)), 0);
		p = port(&s, "d0", 1);
		for (int i = 0; p && i < FILES; i++) {
			char name[32];
			const struct ctr_counter *k;

			snprintf(name, sizeof(name), "ctr_%d", i);
			k = ctr_find(&p->set, CTR_SRC_HW_PORT, name);
			if (val[i] < 0 ? k != NULL : !k || k->value != (uint64_t)val[i])
				all_right = false;
		}
		if (!p || p->set.n != present || ctr_cache_open_files(o.cache) != present)
			counts_right = false;
		/* Only new and replaced files are opened: a lookup that misses a
		 * kept file (a broken probe run) would open it again. */
		if (ctr_cache_opens(o.cache) - opens != replaced)
			opens_right = false;
		ctr_snapshot_free(&s);
	}
	CHECK(u, all_right);
	CHECK(u, counts_right);
	CHECK(u, opens_right);
	ctr_cache_free(o.cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_EQ(u, system(cmd), 0);
}

/*
 * A root reached through a symlink switched between two file systems built
 * alike: the same inode numbers, other files.  Needs root (tmpfs mounts).
 */
static bool cache_across_file_systems(struct unit *u)
{
	char base[] = "/tmp/rdmakit-fs-XXXXXX", cmd[4 * PATH_MAX], root[PATH_MAX + 8],
	     newlink[PATH_MAX + 16];
	struct ctr_opts o = { 0 };
	bool mounted;

	if (geteuid() != 0 || !mkdtemp(base))
		return false;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir a b && mount -t tmpfs none a 2>/dev/null && "
		 "mount -t tmpfs none b 2>/dev/null", base);
	mounted = system(cmd) == 0;
	if (mounted) {
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && for t in a:100 b:200; do d=${t%%:*}/class/infiniband/d0/ports/1/"
			 "hw_counters; mkdir -p $d && echo ${t#*:} >$d/x; done && ln -s a root", base);
		CHECK_EQ(u, system(cmd), 0);
		snprintf(root, sizeof(root), "%s/root", base);
		o.sysfs_root = root;
		o.proc_root = root;
		o.cache = ctr_cache_new();
		CHECK_EQ(u, sample_value(u, &o, "d0", "x"), 100);
		snprintf(newlink, sizeof(newlink), "%s/root.new", base);
		CHECK_EQ(u, symlink("b", newlink), 0);
		CHECK_EQ(u, rename(newlink, root), 0);
		CHECK_EQ(u, sample_value(u, &o, "d0", "x"), 200);
		ctr_cache_free(o.cache);
	}
	snprintf(cmd, sizeof(cmd), "cd '%s' && { umount a; umount b; } 2>/dev/null; cd / && rm -rf '%s'",
		 base, base);
	if (system(cmd) != 0)
		CHECK(u, false);
	return mounted;
}

static void cache_file_systems(struct unit *u)
{
	if (!cache_across_file_systems(u))
		unit_skip_running(u, geteuid() ? "needs root (tmpfs mounts)" :
				  "could not mount tmpfs here");
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, scratch_tree);
	RUN(&u, scratch_tree_cached);
	RUN(&u, cache_follows_files);
	RUN(&u, cache_churn);
	RUN(&u, cache_file_systems);
	return unit_done(&u);
}
