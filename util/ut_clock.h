/* ut_clock: the one clock of Aquifer.
 *
 * Monotonic time (CLOCK_MONOTONIC) measures durations and schedules: it never
 * jumps when the wall clock is set. Real time (CLOCK_REALTIME) is what is
 * stored, shown or compared across machines: timestamps, "createTime", expiry.
 *
 * Contract:
 * - ut_clock_mono_ns/_ms: time since an arbitrary start (boot), never going
 *   back. ut_clock_real_ns/_ms: since the Unix epoch, UTC; may go back when
 *   the wall clock is set.
 * - ut_clock_deadline: the absolute CLOCK_REALTIME instant ms from now, for
 *   pthread_cond_timedwait on a default condition variable.
 * - ut_clock_format: real_ns as RFC 3339 in UTC with `digits` (0..9, more is
 *   taken as 9) fractional digits, "2026-12-01T12:00:00.123Z" for 3. Returns
 *   AQ_OK, or AQ_ETOOBIG when cap is too small (out is then "", if cap > 0).
 *   UT_CLOCK_TEXT_MAX holds any of them.
 * - ut_clock_now_text: the real time now with nanoseconds, the way a stored
 *   resource's createTime / updateTime reads ("...T12:00:00.123456789Z").
 * All are thread-safe and keep no state.
 */
#ifndef AQ_UT_CLOCK_H
#define AQ_UT_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define UT_CLOCK_TEXT_MAX 40

uint64_t ut_clock_mono_ns(void);
uint64_t ut_clock_mono_ms(void);
int64_t ut_clock_real_ns(void);
int64_t ut_clock_real_ms(void);

void ut_clock_deadline(struct timespec *ts, uint64_t ms);

int ut_clock_format(int64_t real_ns, unsigned digits, char *out, size_t cap);
int ut_clock_now_text(char *out, size_t cap);

#endif
