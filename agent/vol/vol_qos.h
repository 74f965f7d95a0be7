/* vol_qos: per-volume QoS of the data path (token buckets, parked requests).
 *
 * Every volume with a limit has a bytes/s bucket and, where set, an ops/s
 * bucket; a volume of a FLEX pool also draws from its pool's shared buckets
 * on this node. A request costs its payload (READ: the count asked for,
 * WRITE: the data sent; the caller caps both at what one request can move)
 * in bytes plus one op, and a READ that moves less gets the rest back
 * (qos_refund); a metadata request costs
 * QOS_META_BYTES and one op. Buckets hold at most QOS_BURST_NS worth of
 * their rate (100 ms; at least one op) and may go into debt by one request,
 * so a request larger than the bucket still passes and the long-run rate is
 * exact.
 *
 * Waiting never blocks the caller: qos_submit() either admits the request at
 * once (QOS_ADMIT) or parks it (QOS_PARKED) on the volume, in a FIFO per
 * client (flow). qos_poll() -- run by the scheduler's timer thread, or by a
 * test with a fake clock -- refills the buckets and releases parked requests
 * when their volume (and pool) has tokens again: flows of a volume are served
 * round-robin one request at a time, and volumes sharing a pool round-robin
 * too, so one greedy client cannot starve another and a volume at its limit
 * never holds a thread that another volume needs. Released requests go to
 * the release callback (e.g. back onto the NFS worker queue) and are never
 * dropped.
 *
 * Limits change in place (qos_vol_set): rates, bucket sizes and the pool
 * link of a volume that keeps its identity change without touching parked
 * requests. All functions are thread-safe; times are CLOCK_MONOTONIC
 * nanoseconds (or whatever clock the caller passes consistently).
 */
#ifndef AQ_AGENT_VOL_QOS_H
#define AQ_AGENT_VOL_QOS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/ut_fifo.h"

#define QOS_BURST_NS 100000000ull /* bucket size: 100 ms of the rate */
#define QOS_META_BYTES 4096u      /* bytes charged for a metadata request */
#define QOS_POOL_NAME_MAX 256

enum qos_verdict { QOS_ADMIT = 0, QOS_PARKED = 1 };
enum qos_kind { QOS_READ = 0, QOS_WRITE = 1, QOS_META = 2 };

struct qos_sched;
struct qos_vol;
struct qos_flow;

/* A parked request: embedded by the caller in its own request structure,
 * owned by the scheduler between QOS_PARKED and the release callback. */
struct qos_item {
	struct ut_fifo_node node;  /* parked in its flow, then released */
	struct qos_vol *vol;       /* counted reference while parked */
	uint64_t bytes;
	uint64_t enq_ns;
	/* Who gets it back (vol_admit's callers set it: each front end of one
	 * store gets its own parked requests back; qos_sched itself uses the
	 * callback given to qos_sched_start). */
	void (*release)(void *arg, struct qos_item *it);
	void *release_arg;
};

/* Limits of one volume. 0 = unlimited. */
struct qos_limits {
	uint64_t bytes_per_s;
	uint64_t ops_per_s;
	char pool[QOS_POOL_NAME_MAX];  /* "" = no shared pool budget */
	uint64_t pool_bytes_per_s;
	uint64_t pool_ops_per_s;
};

/* Counters of one volume (since it appeared). */
struct qos_stats {
	uint64_t limit_bytes_per_s, limit_ops_per_s;
	uint64_t pool_bytes_per_s, pool_ops_per_s;
	uint64_t admitted_bytes, admitted_ops;
	uint64_t refunded_bytes;       /* of admitted_bytes, given back (qos_refund) */
	uint64_t delayed;              /* requests that were parked */
	uint64_t throttled_ns;         /* total time requests spent parked */
	uint64_t queued;               /* parked now */
	uint64_t delivered_bytes_per_s; /* charged (admitted - refunded), over the last full second */
};

typedef uint64_t (*qos_clock_fn)(void);
/* Called without any scheduler lock held, once per released item. */
typedef void (*qos_release_fn)(void *arg, struct qos_item *it);

/* clock: NULL = CLOCK_MONOTONIC. */
int qos_sched_new(qos_clock_fn clock, struct qos_sched **out);
/* Stops the timer thread if running (releasing every parked item first). */
void qos_sched_free(struct qos_sched *s);
/* Start the timer thread that releases parked items through cb. 0 or -errno. */
int qos_sched_start(struct qos_sched *s, qos_release_fn cb, void *arg);
/* Stop the timer thread; every item still parked is released through cb
 * at once (unthrottled) so its owner can finish it. */
void qos_sched_stop(struct qos_sched *s);
uint64_t qos_now(const struct qos_sched *s);

/* A volume's QoS state, refcounted; starts unlimited. */
int qos_vol_new(struct qos_sched *s, struct qos_vol **out);
void qos_vol_unref(struct qos_vol *v);
/* Apply limits now (in place: parked requests stay, rates change). */
int qos_vol_set(struct qos_vol *v, const struct qos_limits *l, uint64_t now);
void qos_vol_stats(struct qos_vol *v, uint64_t now, struct qos_stats *out);

/* Charge a request of flow (client/connection key) on v. QOS_ADMIT: go on;
 * QOS_PARKED: it is released later through the callback (or qos_poll). */
enum qos_verdict qos_submit(struct qos_vol *v, uint64_t flow, enum qos_kind kind, uint64_t bytes,
			    struct qos_item *it, uint64_t now);
/* Charge bytes (and one op) to v only if a request would be admitted at
 * once (nobody waits, the buckets have tokens): true, charged; false,
 * nothing charged and nothing parked. For work that should use only the
 * tokens clients leave (read-ahead's prefetch): it never makes a client
 * wait behind it. */
bool qos_take(struct qos_vol *v, uint64_t bytes, uint64_t now);
/* Give back bytes a request was charged but did not move (a READ that came
 * back short) or that another request paid for (a READ served by
 * read-ahead, charged when it prefetched): the buckets (the volume's and its
 * pool's) get them back, up to their size. The admitted counters keep what
 * was charged (they are monotonic); refunded_bytes counts what came back,
 * so admitted - refunded is what the volume was charged. */
void qos_refund(struct qos_vol *v, uint64_t bytes, uint64_t now);
/* Charge bytes (and one op) to v now, never parking: the buckets may go
 * into debt, which the volume's next requests wait out. For work a request
 * of another volume does on v (the source side of a server-side copy). */
void qos_debit(struct qos_vol *v, uint64_t bytes, uint64_t now);
/* Release what is due at now through cb; returns the next time something is
 * due (UINT64_MAX when nothing is parked). For the timer thread and tests. */
uint64_t qos_poll(struct qos_sched *s, uint64_t now, qos_release_fn cb, void *arg);

#endif
