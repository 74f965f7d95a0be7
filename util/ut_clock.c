/* ut_clock: monotonic and real time, deadlines and RFC 3339 text (see
 * ut_clock.h). */
#include "util/ut_clock.h"

#include <stdio.h>

#include "api/api_error.h"

#define NS_PER_S 1000000000LL

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

uint64_t ut_clock_mono_ns(void)
{
	return (uint64_t)clock_ns(CLOCK_MONOTONIC);
}

uint64_t ut_clock_mono_ms(void)
{
	return ut_clock_mono_ns() / 1000000u;
}

int64_t ut_clock_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int64_t ut_clock_real_ms(void)
{
	return ut_clock_real_ns() / 1000000;
}

void ut_clock_deadline(struct timespec *ts, uint64_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)(ms / 1000u);
	ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
	if (ts->tv_nsec >= NS_PER_S) {
		ts->tv_sec++;
		ts->tv_nsec -= NS_PER_S;
	}
}

int ut_clock_format(int64_t real_ns, unsigned digits, char *out, size_t cap)
{
	int64_t secs = real_ns / NS_PER_S, frac = real_ns % NS_PER_S;
	time_t t;
	struct tm tm;
	char base[32];
	int n;

	if (frac < 0) { /* before 1970: floor, so the fraction stays positive */
		frac += NS_PER_S;
		secs--;
	}
	t = (time_t)secs;
	if (digits > 9)
		digits = 9;
	if (!gmtime_r(&t, &tm) || strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		goto bad;
	for (unsigned i = digits; i < 9; i++)
		frac /= 10;
	n = digits ? snprintf(out, cap, "%s.%0*lldZ", base, (int)digits, (long long)frac)
		   : snprintf(out, cap, "%sZ", base);
	if (n >= 0 && (size_t)n < cap)
		return AQ_OK;
bad:
	if (cap)
		out[0] = '\0';
	return AQ_ETOOBIG;
}

int ut_clock_now_text(char *out, size_t cap)
{
	return ut_clock_format(ut_clock_real_ns(), 9, out, cap);
}
