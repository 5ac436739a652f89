// SPDX-License-Identifier: MIT
/* The soft engine's shared-memory counters: published, read back, stale skipped. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm_counters.h"
#include "unit.h"

static struct shm_counters seen[64];

static bool find_pid(size_t n, uint32_t pid, uint16_t port, size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (seen[i].pid == pid && seen[i].local_port == port) {
			*at = i;
			return true;
		}
	return false;
}

/* Ends a writer's update (seq back to even) 5 ms from now. */
static void *finish_update_later(void *arg)
{
	struct shm_counters *m = arg;

	nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	__atomic_add_fetch(&m->seq, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_publish_read(struct unit *u)
{
	uint8_t ip[16] = { [10] = 0xFF, [11] = 0xFF, 127, 0, 0, 1 };
	struct shm_publisher *p = shm_publish_open(ip, 54321);
	struct shm_counters *a;
	size_t n, at;

	CHECK(u, p != NULL);
	if (!p)
		return;
	/* The reader believes only a live process named rdmakit. */
	prctl(PR_SET_NAME, "rdmakit");
	a = shm_publish_begin(p);
	a->dev.tx_packets = 1234;
	a->nqps = 1;
	a->qps[0].used = 1;
	a->qps[0].qpn = 0x101;
	a->qps[0].c.retransmits = 7;
	a->qps[0].rate_gbps = 12.5;
	shm_publish_end(p);
	n = shm_read_all(NULL, seen, 64);
	CHECK(u, find_pid(n, (uint32_t)getpid(), 54321, &at));
	if (find_pid(n, (uint32_t)getpid(), 54321, &at)) {
		CHECK_EQ(u, seen[at].dev.tx_packets, 1234);
		CHECK_EQ(u, seen[at].qps[0].qpn, 0x101);
		CHECK_EQ(u, seen[at].qps[0].c.retransmits, 7);
		CHECK(u, seen[at].qps[0].rate_gbps == 12.5);
		CHECK(u, memcmp(seen[at].local_ip, ip, 16) == 0);
		CHECK_EQ(u, seen[at].seq % 2, 0);
	}
	/* A writer in the middle of an update (seq odd) is never read half-done. */
	{
		char name[64];
		int fd;
		struct shm_counters *m;

		snprintf(name, sizeof(name), "/rdmakit-%d-54321", (int)getpid());
		fd = shm_open(name, O_RDWR, 0);
		m = fd >= 0 ? mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) :
			      MAP_FAILED;
		if (fd >= 0)
			close(fd);
		CHECK(u, m != MAP_FAILED);
		if (m != MAP_FAILED) {
			__atomic_add_fetch(&m->seq, 1, __ATOMIC_RELEASE);
			n = shm_read_all(NULL, seen, 64);
			CHECK(u, !find_pid(n, (uint32_t)getpid(), 54321, &at));
			__atomic_add_fetch(&m->seq, 1, __ATOMIC_RELEASE);
			n = shm_read_all(NULL, seen, 64);
			CHECK(u, find_pid(n, (uint32_t)getpid(), 54321, &at));
			/* A writer descheduled mid-update for 5 ms: waited out. */
			{
				pthread_t t;

				__atomic_add_fetch(&m->seq, 1, __ATOMIC_RELEASE);
				CHECK_EQ(u, pthread_create(&t, NULL, finish_update_later, m), 0);
				n = shm_read_all(NULL, seen, 64);
				CHECK(u, find_pid(n, (uint32_t)getpid(), 54321, &at));
				pthread_join(t, NULL);
			}
			munmap(m, sizeof(*m));
		}
	}
	/* A pid reused by another program (a writer killed with SIGKILL left
	 * its segment, and its pid went to something else): skipped. */
	prctl(PR_SET_NAME, "not-rdmakit");
	n = shm_read_all(NULL, seen, 64);
	CHECK(u, !find_pid(n, (uint32_t)getpid(), 54321, &at));
	prctl(PR_SET_NAME, "rdmakit");
	shm_publish_close(p);
	n = shm_read_all(NULL, seen, 64);
	CHECK(u, !find_pid(n, (uint32_t)getpid(), 54321, &at));
}

/* The segment of a process that died is skipped. */
static void test_stale(struct unit *u)
{
	const char *name = "/rdmakit-999999-1";
	struct shm_counters *a;
	size_t n, at;
	int fd = shm_open(name, O_CREAT | O_RDWR | O_TRUNC, 0644);

	CHECK(u, fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(u, ftruncate(fd, sizeof(*a)), 0);
	a = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	a->magic = SHM_COUNTERS_MAGIC;
	a->version = SHM_COUNTERS_VERSION;
	a->pid = 999999;	/* above pid_max's default: no such process */
	a->local_port = 1;
	munmap(a, sizeof(*a));
	n = shm_read_all(NULL, seen, 64);
	CHECK(u, !find_pid(n, 999999, 1, &at));
	/* ... and removed: the garbage of killed processes does not pile up. */
	{
		struct stat st;

		CHECK(u, stat("/dev/shm/rdmakit-999999-1", &st) < 0);
	}
	shm_unlink(name);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_publish_read);
	RUN(&u, test_stale);
	return unit_done(&u);
}
