// SPDX-License-Identifier: MIT
/* Publishing and reading the soft engine's counters; see shm_counters.h. */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm_counters.h"

struct shm_publisher {
	struct shm_counters *area;	/* shared: written only under the seqlock */
	struct shm_counters staging;	/* the writer's own copy, filled at leisure */
	char name[64];
};

/*
 * The seqlock as Boehm describes it ("Can seqlocks get along with
 * programming language memory models?", MSPC 2012), in the variant without
 * standalone fences (his section 4): the protected data is copied with
 * atomic word accesses, so a reader racing a writer reads stale or mixed
 * words, never undefined behaviour, and the orderings do the fences' work:
 *
 * Writer: seq = s + 1 (relaxed); each data word stored with release, so the
 * odd store happens before any reader that sees a new word; seq = s + 2
 * (release), after every data word.
 * Reader: s1 = seq (acquire), so the data loads come after it; each data
 * word loaded with acquire, so the final s2 = seq (relaxed) comes after
 * them.  If a copy holds any word of a write that started after s1, the
 * odd store is visible to s2, so s2 != s1: the copy is refused.
 *
 * On x86 release stores and acquire loads are plain moves: this costs the
 * same as memcpy, and ThreadSanitizer (which does not model fences) can
 * check it (tests/unit/tsan_shm.c).
 */
typedef uint64_t __attribute__((may_alias)) shm_word;

_Static_assert(sizeof(struct shm_counters) % sizeof(shm_word) == 0 &&
		       offsetof(struct shm_counters, seq) % sizeof(shm_word) == 0,
	       "struct shm_counters must be whole 8-byte words, seq one of them");

#define SHM_WORDS (sizeof(struct shm_counters) / sizeof(shm_word))
#define SEQ_WORD (offsetof(struct shm_counters, seq) / sizeof(shm_word))

static void copy_to_shared(struct shm_counters *dst, const struct shm_counters *src)
{
	shm_word *d = (shm_word *)dst;
	const shm_word *s = (const shm_word *)src;

	for (size_t i = 0; i < SHM_WORDS; i++)
		if (i != SEQ_WORD)
			__atomic_store_n(&d[i], s[i], __ATOMIC_RELEASE);
}

static void copy_from_shared(struct shm_counters *dst, const struct shm_counters *src)
{
	shm_word *d = (shm_word *)dst;
	const shm_word *s = (const shm_word *)src;

	for (size_t i = 0; i < SHM_WORDS; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_ACQUIRE);
}

struct shm_publisher *shm_publish_open(const uint8_t local_ip[16], uint16_t port)
{
	struct shm_publisher *p = calloc(1, sizeof(*p));
	int fd;

	if (!p)
		return NULL;
	snprintf(p->name, sizeof(p->name), "/" SHM_PREFIX "%d-%u", (int)getpid(), port);
	fd = shm_open(p->name, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, sizeof(struct shm_counters)) < 0) {
		close(fd);
		shm_unlink(p->name);
		goto fail;
	}
	p->area = mmap(NULL, sizeof(struct shm_counters), PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	close(fd);
	if (p->area == MAP_FAILED) {
		shm_unlink(p->name);
		goto fail;
	}
	p->staging.magic = SHM_COUNTERS_MAGIC;
	p->staging.version = SHM_COUNTERS_VERSION;
	p->staging.pid = (uint32_t)getpid();
	memcpy(p->staging.local_ip, local_ip, 16);
	p->staging.local_port = port;
	snprintf(p->staging.engine, sizeof(p->staging.engine), "soft");
	shm_publish_end(p);
	return p;
fail:
	free(p);
	return NULL;
}

struct shm_counters *shm_publish_begin(struct shm_publisher *p)
{
	return &p->staging;
}

void shm_publish_end(struct shm_publisher *p)
{
	/* The only writer: its own earlier store is the value to build on. */
	uint64_t seq = __atomic_load_n(&p->area->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&p->area->seq, seq + 1, __ATOMIC_RELAXED);	/* odd: writing */
	copy_to_shared(p->area, &p->staging);
	__atomic_store_n(&p->area->seq, seq + 2, __ATOMIC_RELEASE);
}

const struct shm_counters *shm_publisher_area(const struct shm_publisher *p)
{
	return p->area;
}

void shm_publish_close(struct shm_publisher *p)
{
	if (!p)
		return;
	munmap(p->area, sizeof(struct shm_counters));
	shm_unlink(p->name);
	free(p);
}

/*
 * Whether the segment's writer still runs.  A process killed with SIGKILL
 * leaves its segment behind, and its pid is in time reused by some other
 * program: so the pid must be alive *and* be an rdmakit.  A segment whose
 * pid is gone is garbage, removed here (best effort: it may not be ours to
 * remove).
 */
static bool writer_alive(const char *path, uint32_t pid)
{
	char comm_path[64], comm[32] = "";
	FILE *f;

	if (kill((pid_t)pid, 0) < 0 && errno != EPERM) {
		if (errno == ESRCH)
			unlink(path);
		return false;
	}
	snprintf(comm_path, sizeof(comm_path), "/proc/%u/comm", pid);
	f = fopen(comm_path, "r");
	if (!f)
		return true;	/* no procfs to ask: trust the pid */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, "rdmakit") == 0;
}

bool shm_read_consistent(const struct shm_counters *a, struct shm_counters *out)
{
	uint64_t s1 = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE), s2;

	if (s1 & 1)
		return false;
	copy_from_shared(out, a);
	s2 = __atomic_load_n(&a->seq, __ATOMIC_RELAXED);
	out->seq = s1;
	return s2 == s1;
}

/* Copies one segment consistently; false if it is not ours or stale. */
static bool read_one(const char *path, struct shm_counters *out)
{
	struct shm_counters *a;
	bool ok = false;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size != sizeof(*a)) {
		close(fd);
		return false;
	}
	a = mmap(NULL, sizeof(*a), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (a == MAP_FAILED)
		return false;
	/* A writer descheduled mid-update holds the sequence odd for a whole
	 * time slice on a busy host: spin a little, then wait it out (up to
	 * about 20 ms), or a live engine would drop out of top's sample. */
	for (int tries = 0; tries < 200 && !ok; tries++) {
		if (tries >= 10)
			nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
		ok = shm_read_consistent(a, out);
	}
	munmap(a, sizeof(*a));
	return ok && out->magic == SHM_COUNTERS_MAGIC && out->version == SHM_COUNTERS_VERSION &&
	       writer_alive(path, out->pid);
}

size_t shm_read_all(const char *dir, struct shm_counters *out, size_t cap)
{
	DIR *d = opendir(dir ? dir : "/dev/shm");
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while (n < cap && (e = readdir(d))) {
		char path[512];

		if (strncmp(e->d_name, SHM_PREFIX, strlen(SHM_PREFIX)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir ? dir : "/dev/shm", e->d_name);
		if (read_one(path, &out[n]))
			n++;
	}
	closedir(d);
	return n;
}
