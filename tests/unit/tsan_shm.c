// SPDX-License-Identifier: MIT
/*
 * The shared-memory counters' seqlock under ThreadSanitizer: a writer
 * thread publishes rounds in which every counter holds the round number, a
 * reader thread takes copies through the same mapping's reader path, and
 * every copy it accepts must hold one round throughout (no torn read).
 * Built with -fsanitize=thread (Makefile: build/tests/test_shm_tsan), so a
 * data race in the protocol (a plain access where an atomic is needed) is
 * reported and fails the run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_counters.h"
#include "unit.h"

#define ROUNDS 300

struct shared {
	struct shm_publisher *p;
	const struct shm_counters *area;	/* the writer's segment, as a reader maps it */
	volatile int done;
	unsigned long accepted, torn;
};

static void *writer(void *arg)
{
	struct shared *sh = arg;

	for (uint64_t r = 1; r <= ROUNDS; r++) {
		struct shm_counters *a = shm_publish_begin(sh->p);

		a->updated_ns = r;
		a->dev.tx_packets = r;
		a->dev.rx_bytes = r;
		a->nqps = 2;
		a->qps[0].c.retransmits = r;
		a->qps[1].c.cnps_tx = r;
		shm_publish_end(sh->p);
		usleep(200);	/* room for the reader to finish a copy now and then */
	}
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader(void *arg)
{
	struct shared *sh = arg;
	static struct shm_counters copy;

	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		uint64_t r;

		if (!shm_read_consistent(sh->area, &copy))
			continue;
		r = copy.updated_ns;
		if (copy.dev.tx_packets != r || copy.dev.rx_bytes != r ||
		    copy.qps[0].c.retransmits != r || copy.qps[1].c.cnps_tx != r)
			sh->torn++;
		sh->accepted++;
	}
	return NULL;
}

static void test_seqlock_stress(struct unit *u)
{
	uint8_t ip[16] = { [10] = 0xFF, [11] = 0xFF, 127, 0, 0, 1 };
	struct shared sh = { .p = shm_publish_open(ip, 54999) };
	pthread_t w, r;

	if (!sh.p) {
		unit_skip_running(u, "no shared memory (/dev/shm) to publish into");
		return;
	}
	sh.area = shm_publisher_area(sh.p);
	CHECK_EQ(u, pthread_create(&r, NULL, reader, &sh), 0);
	CHECK_EQ(u, pthread_create(&w, NULL, writer, &sh), 0);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	printf("#   %lu consistent copies over %d rounds, %lu torn\n", sh.accepted, ROUNDS, sh.torn);
	CHECK_EQ(u, sh.torn, 0);
	CHECK(u, sh.accepted > 0);	/* the check ran */
	shm_publish_close(sh.p);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_seqlock_stress);
	return unit_done(&u);
}
