// SPDX-License-Identifier: MIT
/* Publishing and reading the soft engine's counters; see shm_counters.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_counters.h"

struct shm_publisher {
	struct shm_counters *area;
	char name[64];
};

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
	p->area->magic = SHM_COUNTERS_MAGIC;
	p->area->version = SHM_COUNTERS_VERSION;
	p->area->pid = (uint32_t)getpid();
	memcpy(p->area->local_ip, local_ip, 16);
	p->area->local_port = port;
	snprintf(p->area->engine, sizeof(p->area->engine), "soft");
	return p;
fail:
	free(p);
	return NULL;
}

struct shm_counters *shm_publish_begin(struct shm_publisher *p)
{
	__atomic_add_fetch(&p->area->seq, 1, __ATOMIC_RELEASE);	/* odd: writing */
	return p->area;
}

void shm_publish_end(struct shm_publisher *p)
{
	__atomic_add_fetch(&p->area->seq, 1, __ATOMIC_RELEASE);
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
	for (int tries = 0; tries < 100 && !ok; tries++) {
		uint64_t s1 = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE);

		if (s1 & 1)
			continue;
		memcpy(out, a, sizeof(*out));
		ok = __atomic_load_n(&a->seq, __ATOMIC_ACQUIRE) == s1;
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
