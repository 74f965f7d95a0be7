/* cli_metrics: the readable table `aquifer volumes metrics` (and storage-pools
 * and nodes metrics) print when no --format is given.
 *
 * The API answers {name, windowSeconds, stepSeconds, points: [{time,
 * readBytes, writeBytes, latencyP99Ms, throughputLimitMibps, usedBytes, ...}]}
 * with byte counts per step; the table shows one row a point:
 *   TIME (local, HH:MM:SS)  READ_MIB/S  WRITE_MIB/S  LIMIT_MIB/S  P99_MS  USED
 * rates to two decimals, P99_MS "-" for a step without operations, USED in
 * binary units (1.50 GiB). --format prints the answer itself (json, yaml,
 * value(points[0].readBytes), ...).
 */
#ifndef AQ_CLI_METRICS_H
#define AQ_CLI_METRICS_H

#include <jansson.h>
#include <stdio.h>

/* Print the metrics answer resp as the table to out; a note on err when it
 * has no point. */
void cli_metrics_print(FILE *out, FILE *err, const json_t *resp);

#endif
