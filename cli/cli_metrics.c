/* cli_metrics: the default table of the metrics commands (see cli_metrics.h). */
#include "cli/cli_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli_format.h"

#define MIB 1048576.0

static const char columns[] =
	"time.date('%H:%M:%S'):TIME,readMibps:READ_MIB/S,writeMibps:WRITE_MIB/S,"
	"limitMibps:LIMIT_MIB/S,p99Ms:P99_MS,used:USED";

/* A number the API sends as an int64 string (or a number). */
static double num(const json_t *v)
{
	if (json_is_string(v))
		return strtod(json_string_value(v), NULL);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static json_t *fixed2(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", v);
	return json_string(buf);
}

/* 1536 -> "1.50 KiB"; bytes below 1 KiB as "N B". */
static json_t *binary_units(double bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	char buf[32];
	int u = -1;

	while (bytes >= 1024 && u < (int)(sizeof(units) / sizeof(units[0])) - 1) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, sizeof(buf), "%.0f B", bytes);
	else
		snprintf(buf, sizeof(buf), "%.2f %s", bytes, units[u]);
	return json_string(buf);
}

void cli_metrics_print(FILE *out, FILE *err, const json_t *resp)
{
	const json_t *points = json_object_get(resp, "points"), *p;
	double step = num(json_object_get(resp, "stepSeconds"));
	json_t *rows = json_array();
	struct cli_fmt fmt;
	aq_msg msg = { .text = "" };
	size_t i;

	if (step <= 0)
		step = 10;
	json_array_foreach(points, i, p) {
		const json_t *p99 = json_object_get(p, "latencyP99Ms");
		json_t *row = json_object();
		json_object_set(row, "time", json_object_get(p, "time"));
		json_object_set_new(row, "readMibps", fixed2(num(json_object_get(p, "readBytes")) / step / MIB));
		json_object_set_new(row, "writeMibps", fixed2(num(json_object_get(p, "writeBytes")) / step / MIB));
		json_object_set_new(row, "limitMibps", fixed2(num(json_object_get(p, "throughputLimitMibps"))));
		json_object_set_new(row, "p99Ms", json_is_number(p99) ? fixed2(json_number_value(p99)) : json_string("-"));
		json_object_set_new(row, "used", binary_units(num(json_object_get(p, "usedBytes"))));
		json_array_append_new(rows, row);
	}
	if (json_array_size(rows) == 0)
		fprintf(err, "No points in the last %lld s.\n",
			(long long)num(json_object_get(resp, "windowSeconds")));
	else if (cli_fmt_parse(&fmt, NULL, CLI_FMT_TABLE, columns, &msg) == AQ_OK)
		cli_fmt_print(out, &fmt, rows, true);
	json_decref(rows);
}
