/* ab_qos: a fixed, clock-free workload on the QoS admission path (vol_qos),
 * for bench/ab.sh, which counts its instructions with callgrind in two builds.
 *
 * It drives qos_submit / qos_poll with a fake clock, so the work does not
 * depend on the machine's load: N requests of 64 KiB on one volume limited
 * to 64 MiB/s (four flows, round-robin), each submitted, parked when the
 * bucket is empty and released by qos_poll at the time it says; plus N
 * requests on an unlimited volume (admitted at once) and N metadata requests
 * on a volume limited in ops/s. Prints the counts and the fake time the
 * limited volume took (N x 64 KiB at 64 MiB/s: the rate is exact).
 * Built by bench/ab.sh against each tree's own vol_qos.h and library.
 *
 *   ab_qos [N]   (default 100000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "vol_qos.h"

#define AB_BYTES 65536u
#define AB_FLOWS 4u

static uint64_t ab_now;
static uint64_t ab_released;

static uint64_t ab_clock(void)
{
	return ab_now;
}

static void ab_release(void *arg, struct qos_item *it)
{
	(void)arg;
	(void)it;
	ab_released++;
}

/* Submit n requests of kind/bytes on v; advance the fake clock to release each parked one. */
static uint64_t ab_run(struct qos_sched *s, struct qos_vol *v, enum qos_kind kind, uint64_t bytes,
		       uint64_t n, struct qos_item *item)
{
	uint64_t parked = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (qos_submit(v, i % AB_FLOWS, kind, bytes, item, ab_now) == QOS_ADMIT)
			continue;
		parked++;
		uint64_t want = ab_released + 1;
		while (ab_released < want) {
			uint64_t next = qos_poll(s, ab_now, ab_release, NULL);
			if (ab_released < want && next != UINT64_MAX && next > ab_now)
				ab_now = next;
		}
	}
	return parked;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	struct qos_sched *s = NULL;
	struct qos_vol *lim = NULL, *open = NULL, *meta = NULL;
	struct qos_item item = { 0 };
	int rc = 1;

	if (n == 0 || qos_sched_new(ab_clock, &s) != 0 || qos_vol_new(s, &lim) != 0 ||
	    qos_vol_new(s, &open) != 0 || qos_vol_new(s, &meta) != 0)
		goto out;
	struct qos_limits l = { .bytes_per_s = 64ull << 20 };
	struct qos_limits m = { .ops_per_s = 10000 };
	if (qos_vol_set(lim, &l, ab_now) != 0 || qos_vol_set(meta, &m, ab_now) != 0)
		goto out;
	uint64_t t0 = ab_now;
	uint64_t p_lim = ab_run(s, lim, QOS_READ, AB_BYTES, n, &item);
	uint64_t t_lim = ab_now - t0;
	uint64_t p_open = ab_run(s, open, QOS_WRITE, AB_BYTES, n, &item);
	uint64_t p_meta = ab_run(s, meta, QOS_META, QOS_META_BYTES, n, &item);
	printf("requests %llu per volume; parked limited %llu unlimited %llu meta %llu; "
	       "limited took %.3f s (expected %.3f s)\n",
	       (unsigned long long)n, (unsigned long long)p_lim, (unsigned long long)p_open,
	       (unsigned long long)p_meta, (double)t_lim / 1e9, (double)n * AB_BYTES / (64 << 20));
	rc = 0;
out:
	qos_vol_unref(lim);
	qos_vol_unref(open);
	qos_vol_unref(meta);
	qos_sched_free(s);
	return rc;
}
