/* srv_clock: the two clocks aquiferd reads. Monotonic nanoseconds time
 * what runs (request latency, reconciler passes, uptime); wall-clock
 * milliseconds since the epoch are what documents and the liveness of
 * nodes record (a report's time, lastSeenMs, a push's "at"). */
#ifndef AQ_SRV_CLOCK_H
#define AQ_SRV_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t srv_clock_ns(void);
/* CLOCK_REALTIME in milliseconds since the epoch. */
int64_t srv_clock_ms(void);

#endif
