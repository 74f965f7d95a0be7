/* cli_units: unit parsing for sizes, throughput and durations (see cli_units.h). */
#include "cli/cli_units.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct unit {
	const char *suffix;     /* compared case-insensitively; "" = bare number */
	double mult;            /* to the target unit */
};

static const struct unit size_units[] = {
	{ "", 1 }, { "G", 1 }, { "GB", 1 }, { "GiB", 1 },
	{ "T", 1024 }, { "TB", 1024 }, { "TiB", 1024 },
	{ "P", 1048576 }, { "PB", 1048576 }, { "PiB", 1048576 },
	{ NULL, 0 }
};

static const struct unit rate_units[] = {
	{ "", 1 }, { "M", 1 }, { "MiB", 1 }, { "MiB/s", 1 }, { "MiBps", 1 }, { "MB/s", 1 },
	{ "MBps", 1 }, { "Mibps", 1 },
	{ "G", 1024 }, { "GiB", 1024 }, { "GiB/s", 1024 }, { "GiBps", 1024 }, { "GB/s", 1024 },
	{ "GBps", 1024 },
	{ NULL, 0 }
};

static const struct unit time_units[] = {
	{ "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
	{ NULL, 0 }
};

/* Largest value we hand out: exact in a double and in an int64. */
#define UNIT_MAX 9007199254740992.0 /* 2^53 */

/* Split s into a decimal number (digits, at most one '.', digits on both
 * sides of it if present) and a suffix looked up in units. */
static int parse_scaled(const char *s, const struct unit *units, bool allow_frac,
			const char *what, double *out, aq_msg *msg)
{
	const char *p = s, *suffix;
	size_t ndig = 0, nfrac = 0;
	double v;
	char *end = NULL;
	int i;

	if (s == NULL || *s == '\0')
		return aq_fail(msg, AQ_EINVAL, "empty %s", what);
	while (*p >= '0' && *p <= '9') {
		p++;
		ndig++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			nfrac++;
		}
		if (nfrac == 0 || !allow_frac)
			return aq_fail(msg, AQ_EINVAL, "invalid %s '%s'", what, s);
	}
	if (ndig == 0)
		return aq_fail(msg, AQ_EINVAL, "invalid %s '%s': expected a number", what, s);
	if (ndig > 18)
		return aq_fail(msg, AQ_EINVAL, "%s '%s' is too large", what, s);
	suffix = p;
	for (i = 0; units[i].suffix; i++)
		if (strcasecmp(units[i].suffix, suffix) == 0)
			break;
	if (units[i].suffix == NULL)
		return aq_fail(msg, AQ_EINVAL, "invalid %s '%s': unknown unit '%s'", what, s, suffix);
	v = strtod(s, &end);
	if (end != suffix || !isfinite(v))
		return aq_fail(msg, AQ_EINVAL, "invalid %s '%s'", what, s);
	v *= units[i].mult;
	if (v <= 0)
		return aq_fail(msg, AQ_EINVAL, "%s '%s' must be greater than zero", what, s);
	if (v > UNIT_MAX)
		return aq_fail(msg, AQ_EINVAL, "%s '%s' is too large", what, s);
	*out = v;
	return AQ_OK;
}

int cli_parse_gib(const char *s, int64_t *gib, aq_msg *msg)
{
	double v;
	int rc;

	if ((rc = parse_scaled(s, size_units, true, "size", &v, msg)) != AQ_OK)
		return rc;
	if (v != floor(v))
		return aq_fail(msg, AQ_EINVAL, "size '%s' is not a whole number of GiB", s);
	*gib = (int64_t)v;
	return AQ_OK;
}

int cli_parse_mibps(const char *s, double *mibps, aq_msg *msg)
{
	return parse_scaled(s, rate_units, true, "throughput", mibps, msg);
}

int cli_parse_seconds(const char *s, int64_t *secs, aq_msg *msg)
{
	double v;
	int rc;

	if ((rc = parse_scaled(s, time_units, false, "duration", &v, msg)) != AQ_OK)
		return rc;
	*secs = (int64_t)v;
	return AQ_OK;
}

int cli_parse_int64(const char *s, int64_t *v, aq_msg *msg)
{
	const char *p;
	int64_t n = 0;

	if (s == NULL || *s == '\0')
		return aq_fail(msg, AQ_EINVAL, "empty number");
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return aq_fail(msg, AQ_EINVAL, "invalid number '%s'", s);
		if (n > (INT64_MAX - (*p - '0')) / 10)
			return aq_fail(msg, AQ_EINVAL, "number '%s' is too large", s);
		n = n * 10 + (*p - '0');
	}
	*v = n;
	return AQ_OK;
}
