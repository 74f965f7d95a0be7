/* cli_units: the sizes, throughputs and durations users type on the command
 * line, turned into the units the API speaks (GiB, MiB/s, seconds).
 *
 * Units are binary and case-insensitive; a bare number takes the default unit.
 *   sizes       -> GiB:   "2048", "500GiB", "2TiB", "1.5TiB", "1PiB" (also G, GB, T, TB, P, PB)
 *   throughput  -> MiB/s: "128", "128MiB/s", "1GiB/s", "1.5GiB/s" (also MiBps, MB/s, GiBps, ...)
 *   durations   -> s:     "3600", "90s", "30m", "2h", "7d"
 * Results must be positive; a size must come out a whole number of GiB.
 * Each returns AQ_OK, or AQ_EINVAL with a message in msg (may be NULL) and
 * leaves the output untouched.
 */
#ifndef AQ_CLI_UNITS_H
#define AQ_CLI_UNITS_H

#include <stdint.h>

#include "api/api_error.h"

int cli_parse_gib(const char *s, int64_t *gib, aq_msg *msg);
int cli_parse_mibps(const char *s, double *mibps, aq_msg *msg);
int cli_parse_seconds(const char *s, int64_t *secs, aq_msg *msg);
/* A plain non-negative decimal integer ("65534"), no unit, no sign. */
int cli_parse_int64(const char *s, int64_t *v, aq_msg *msg);

#endif
