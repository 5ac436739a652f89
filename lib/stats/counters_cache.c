// SPDX-License-Identifier: MIT
/*
 * Open counter files kept between samples, so that a sample of N counters
 * costs N pread()s, not N open/read/close triples: on a 16-port host with
 * 100 counters a port, the system calls were most of top's CPU time.
 *
 * A file is still "re-opened at every sample" in the sense that matters:
 * every sample enumerates the directory afresh, and an entry whose inode
 * number (or file system) differs from the one the open file had (the file was replaced, the
 * device re-created) is opened anew; so is one whose read fails (a removed
 * sysfs attribute answers ENODEV).  A sysfs attribute read from offset 0
 * runs the driver's show() again, so the value is always current.  Files
 * not read in a sample are closed at its end (ctr_cache_sweep).
 *
 * The table is keyed by "DIR/NAME"; it never holds more descriptors than
 * RLIMIT_NOFILE allows minus a reserve, and beyond that reads uncached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "counters.h"

/* Descriptors left for everything else (sockets, the terminal, shm). */
#define FD_RESERVE 64

struct cache_entry {
	char *key;		/* "DIR/NAME"; NULL: free slot */
	uint64_t hash;		/* key_hash() of the key */
	dev_t dev;		/* of the directory, with the entry's inode */
	ino_t ino;		/* of the directory entry when opened */
	int fd;
	unsigned gen;		/* the sample that last read it (ctr_cache.gen) */
};

struct ctr_cache {
	struct cache_entry *slot;	/* open addressing, power-of-two size */
	size_t nslots, used;
	size_t max_fds;
	unsigned gen;		/* the current sample; ctr_cache_sweep moves it on */
	uint64_t opens;		/* files opened to be kept, ever */
};

static uint64_t key_hash(const char *dir, const char *name)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (const char *p = dir; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ '/') * 1099511628211ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static bool key_equal(const char *key, const char *dir, const char *name)
{
	size_t dl = strlen(dir);

	return !strncmp(key, dir, dl) && key[dl] == '/' && !strcmp(key + dl + 1, name);
}

struct ctr_cache *ctr_cache_new(void)
{
	struct ctr_cache *c = calloc(1, sizeof(*c));
	struct rlimit rl;

	if (!c)
		return NULL;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		c->max_fds = rl.rlim_cur > FD_RESERVE ? (size_t)(rl.rlim_cur - FD_RESERVE) : 0;
	else
		c->max_fds = 1 << 16;
	return c;
}

static void entry_close(struct cache_entry *e)
{
	if (e->fd >= 0)
		close(e->fd);
	free(e->key);
	e->key = NULL;
}

void ctr_cache_free(struct ctr_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slot[i].key)
			entry_close(&c->slot[i]);
	free(c->slot);
	free(c);
}

static struct cache_entry *find_slot(struct cache_entry *slot, size_t nslots, uint64_t h,
				     const char *dir, const char *name)
{
	size_t i = (size_t)h & (nslots - 1);

	while (slot[i].key && (slot[i].hash != h || !key_equal(slot[i].key, dir, name)))
		i = (i + 1) & (nslots - 1);
	return &slot[i];
}

/* Rehashes every entry into a table of `nslots` (growing). */
static int grow(struct ctr_cache *c, size_t nslots)
{
	struct cache_entry *n = calloc(nslots, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < c->nslots; i++) {
		struct cache_entry *e = &c->slot[i], *d;

		if (!e->key)
			continue;
		/* Keys are unique: the first free slot of the probe is its place. */
		d = &n[(size_t)e->hash & (nslots - 1)];
		while (d->key)
			d = d == &n[nslots - 1] ? n : d + 1;
		*d = *e;
	}
	free(c->slot);
	c->slot = n;
	c->nslots = nslots;
	return 0;
}

/*
 * Empties slot i of a linear-probing table without tombstones: later
 * entries of the same probe run move back into the hole (Knuth's
 * algorithm R), so lookups never stop early at it.
 */
static void remove_at(struct ctr_cache *c, size_t i)
{
	size_t mask = c->nslots - 1, j = i;

	entry_close(&c->slot[i]);
	c->used--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!c->slot[j].key)
			break;
		home = (size_t)c->slot[j].hash & mask;
		/* Stays when its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		c->slot[i] = c->slot[j];
		c->slot[j].key = NULL;
		i = j;
	}
}

void ctr_cache_sweep(struct ctr_cache *c)
{
	if (!c)
		return;
	/* remove_at moves entries into the slot being looked at (checked again
	 * by the while), into later slots (checked later), or, where the probe
	 * run wraps, from slots checked already into slots checked already. */
	for (size_t i = 0; i < c->nslots; i++)
		while (c->slot[i].key && c->slot[i].gen != c->gen)
			remove_at(c, i);
	c->gen++;
}

static ssize_t pread_all(int fd, char *buf, size_t cap)
{
	ssize_t n;

	do
		n = pread(fd, buf, cap - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

ssize_t ctr_read_small(int dirfd, const char *name, char *buf, size_t cap)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread_all(fd, buf, cap);
	close(fd);
	return n;
}

ssize_t ctr_cache_read(struct ctr_cache *c, int dirfd, const char *dir, const char *name,
		       dev_t dev, ino_t ino, char *buf, size_t cap)
{
	struct cache_entry *e;
	uint64_t h;
	ssize_t n;
	int fd;

	if (!c)
		return ctr_read_small(dirfd, name, buf, cap);
	/* Keep the load under 1/2: grow before looking up. */
	if ((c->used + 1) * 2 > c->nslots &&
	    grow(c, c->nslots ? c->nslots * 2 : 256) < 0)
		return ctr_read_small(dirfd, name, buf, cap);
	h = key_hash(dir, name);
	e = find_slot(c->slot, c->nslots, h, dir, name);
	/* Inode numbers are per file system: the path may now lead to another
	 * one (a symlinked root switched between two trees). */
	if (e->key && e->ino == ino && e->dev == dev && e->fd >= 0) {
		n = pread_all(e->fd, buf, cap);
		if (n >= 0) {
			e->gen = c->gen;
			return n;
		}
	}
	if (e->key) {
		/* Replaced, or its read failed: open the name afresh. */
		close(e->fd);
		e->fd = -1;
	} else if (c->used >= c->max_fds) {
		return ctr_read_small(dirfd, name, buf, cap);
	}
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	c->opens++;
	if (fd < 0) {
		if (e->key)
			e->gen = c->gen - 1;	/* dropped at the sweep */
		return -1;
	}
	n = pread_all(fd, buf, cap);
	if (n < 0) {
		close(fd);
		return -1;
	}
	if (!e->key) {
		size_t dl = strlen(dir), nl = strlen(name);

		e->key = malloc(dl + nl + 2);
		if (!e->key) {
			close(fd);
			return n;	/* the value is good; just not kept */
		}
		memcpy(e->key, dir, dl);
		e->key[dl] = '/';
		memcpy(e->key + dl + 1, name, nl + 1);
		e->hash = h;
		c->used++;
	}
	e->fd = fd;
	e->dev = dev;
	e->ino = ino;
	e->gen = c->gen;
	return n;
}

size_t ctr_cache_open_files(const struct ctr_cache *c)
{
	size_t n = 0;

	for (size_t i = 0; c && i < c->nslots; i++)
		n += c->slot[i].key && c->slot[i].fd >= 0;
	return n;
}

uint64_t ctr_cache_opens(const struct ctr_cache *c)
{
	return c ? c->opens : 0;
}
