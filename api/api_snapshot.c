/* api_snapshot: the Snapshot resource (google.cloud.netapp.v1.Snapshot) and
 * the snapshot fields of a volume that need more than their types: the
 * snapshotPolicy schedules (what GCNV documents for each kind, and no field
 * of another kind) and restoreParameters (a clone from a snapshot; backups
 * do not exist yet). All pure. */
#include "api/api_resource.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_intent.h"

static const char *const snap_states[] = { "STATE_UNSPECIFIED", "READY", "CREATING", "DELETING", "UPDATING",
					   "DISABLED", "ERROR", NULL };

const struct api_field api_snapshot_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "state", API_T_ENUM, API_F_OUTPUT, snap_states, NULL, 0 },
	{ "stateDetails", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ "usedBytes", API_T_DOUBLE, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

int api_snapshot_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	(void)p;
	(void)doc;
	(void)msg;
	return AQ_OK; /* the field table says everything a snapshot may hold */
}

/* The four schedule kinds and the fields each takes (GCNV's HourlySchedule,
 * DailySchedule, WeeklySchedule, MonthlySchedule). */
static const struct {
	const char *field, *kind;
	bool hour, day, days_of_month;
} snap_kinds[] = {
	{ "hourlySchedule", "hourly", false, false, false },
	{ "dailySchedule", "daily", true, false, false },
	{ "weeklySchedule", "weekly", true, true, false },
	{ "monthlySchedule", "monthly", true, false, true },
};

static const char *const snap_days[] = { "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
					 "Saturday", NULL };

/* A whole number within lo..hi, or AQ_EINVAL naming where. */
static int snap_whole(const json_t *s, const char *field, const char *where, double lo, double hi, aq_msg *msg)
{
	json_t *v = json_object_get(s, field);
	double d = json_number_value(v);

	if (v && (d != floor(d) || d < lo || d > hi))
		return aq_fail(msg, AQ_EINVAL, "snapshotPolicy.%s.%s must be a whole number within %g..%g, got %g", where,
			       field, lo, hi, d);
	return AQ_OK;
}

/* A comma-separated list: day names (days) or 1..31 (days of the month). */
static int snap_list(const char *list, bool names, const char *where, aq_msg *msg)
{
	const char *s = list;

	if (!*s)
		goto bad;
	while (*s) {
		size_t n = strcspn(s, ","), k;
		bool ok = false;

		if (names) {
			for (k = 0; snap_days[k] && !ok; k++)
				ok = strlen(snap_days[k]) == n && strncmp(snap_days[k], s, n) == 0;
		} else {
			char *end;
			long d = strtol(s, &end, 10);

			ok = n > 0 && n <= 2 && end == s + n && d >= 1 && d <= 31;
		}
		if (!ok)
			goto bad;
		s += n;
		if (*s == ',' && !*++s)
			goto bad;
	}
	return AQ_OK;
bad:
	return aq_fail(msg, AQ_EINVAL, names ? "snapshotPolicy.%s.day must be comma-separated day names (Sunday..Saturday), got \"%.64s\""
					     : "snapshotPolicy.%s.daysOfMonth must be comma-separated days 1..31, got \"%.64s\"",
		       where, list);
}

int api_snapshot_policy_check(const json_t *vol, aq_msg *msg)
{
	json_t *pol = json_object_get(vol, "snapshotPolicy");
	double keep_sum = 0;
	int rc;

	for (size_t i = 0; pol && i < sizeof(snap_kinds) / sizeof(snap_kinds[0]); i++) {
		json_t *s = json_object_get(pol, snap_kinds[i].field);
		const char *w = snap_kinds[i].field;

		if (!s)
			continue;
		if (!json_object_get(s, "snapshotsToKeep"))
			return aq_fail(msg, AQ_EINVAL, "snapshotPolicy.%s.snapshotsToKeep is required", w);
		if ((rc = snap_whole(s, "snapshotsToKeep", w, 0, API_INTENT_MAX_SNAPSHOTS, msg)) != AQ_OK ||
		    (rc = snap_whole(s, "minute", w, 0, 59, msg)) != AQ_OK || (rc = snap_whole(s, "hour", w, 0, 23, msg)) != AQ_OK)
			return rc;
		if (json_object_get(s, "hour") && !snap_kinds[i].hour)
			return aq_fail(msg, AQ_EINVAL, "snapshotPolicy.%s.hour is not a field of an hourly schedule", w);
		if (json_object_get(s, "day") && !snap_kinds[i].day)
			return aq_fail(msg, AQ_EINVAL, "snapshotPolicy.%s.day is a field of weeklySchedule only", w);
		if (json_object_get(s, "daysOfMonth") && !snap_kinds[i].days_of_month)
			return aq_fail(msg, AQ_EINVAL, "snapshotPolicy.%s.daysOfMonth is a field of monthlySchedule only", w);
		if (json_object_get(s, "day") && (rc = snap_list(api_json_str(s, "day", ""), true, w, msg)) != AQ_OK)
			return rc;
		if (json_object_get(s, "daysOfMonth") &&
		    (rc = snap_list(api_json_str(s, "daysOfMonth", ""), false, w, msg)) != AQ_OK)
			return rc;
		keep_sum += api_json_double(s, "snapshotsToKeep", 0);
	}
	if (keep_sum > API_INTENT_MAX_SNAPSHOTS)
		return aq_fail(msg, AQ_EINVAL, "snapshotPolicy keeps %g snapshots in all; a volume holds at most %d",
			       keep_sum, API_INTENT_MAX_SNAPSHOTS);
	return AQ_OK;
}

int api_snapshot_restore_check(const json_t *vol, aq_msg *msg)
{
	json_t *rp = json_object_get(vol, "restoreParameters");
	const char *src = api_json_str(rp, "sourceSnapshot", NULL);
	char proj[64], loc[64], v[64], s[64];
	int n = 0;

	if (!rp)
		return AQ_OK;
	if (json_object_get(rp, "sourceBackup")) {
		const char *b = api_json_str(rp, "sourceBackup", "");
		char vault[64], bk[64];

		if (src)
			return aq_fail(msg, AQ_EINVAL, "restoreParameters takes sourceSnapshot or sourceBackup, not both");
		if (sscanf(b, "projects/%63[^/]/locations/%63[^/]/backupVaults/%63[^/]/backups/%63[^/]%n", proj, loc, vault,
			   bk, &n) != 4 || (size_t)n != strlen(b) || api_id_check(vault, "backupVault", NULL) != AQ_OK ||
		    api_id_check(bk, "backup", NULL) != AQ_OK)
			return aq_fail(msg, AQ_EINVAL, "restoreParameters.sourceBackup must be a backup's full name, "
				       "projects/P/locations/L/backupVaults/V/backups/B; got \"%.200s\"", b);
		return AQ_OK;
	}
	if (!src)
		return aq_fail(msg, AQ_EINVAL, "restoreParameters needs sourceSnapshot (projects/P/locations/L/volumes/V/snapshots/S) or sourceBackup");
	if (sscanf(src, "projects/%63[^/]/locations/%63[^/]/volumes/%63[^/]/snapshots/%63[^/]%n", proj, loc, v, s, &n) != 4 ||
	    (size_t)n != strlen(src) || api_id_check(v, "volume", NULL) != AQ_OK || api_id_check(s, "snapshot", NULL) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "restoreParameters.sourceSnapshot must be a snapshot's full name, projects/P/locations/L/volumes/V/snapshots/S; got \"%.200s\"",
			       src);
	return AQ_OK;
}

int api_snapshot_kind_count(void)
{
	return (int)(sizeof(snap_kinds) / sizeof(snap_kinds[0]));
}

int api_snapshot_kind(int i, struct api_snap_sched *out, const json_t *vol)
{
	json_t *pol = json_object_get(vol, "snapshotPolicy"), *s;
	const char *day;

	memset(out, 0, sizeof(*out));
	out->kind = snap_kinds[i].kind;
	if (!api_json_bool(pol, "enabled", false) || !(s = json_object_get(pol, snap_kinds[i].field)))
		return AQ_ENOENT;
	out->keep = (int)api_json_double(s, "snapshotsToKeep", 0);
	out->minute = (int)api_json_double(s, "minute", 0);
	out->hour = (int)api_json_double(s, "hour", 0);
	/* GCNV's defaults: Sunday, the 1st */
	day = api_json_str(s, "day", "Sunday");
	for (int k = 0; snap_days[k]; k++)
		if (strstr(day, snap_days[k]))
			out->weekdays |= 1u << k;
	for (const char *d = api_json_str(s, "daysOfMonth", "1"); *d; d += strcspn(d, ",") + (d[strcspn(d, ",")] ? 1 : 0)) {
		long m = strtol(d, NULL, 10);

		if (m >= 1 && m <= 31)
			out->monthdays |= 1u << m;
	}
	return AQ_OK;
}

int64_t api_snapshot_slot(const struct api_snap_sched *s, int64_t t)
{
	int64_t day = t - ((t % 86400) + 86400) % 86400, hm = (int64_t)s->hour * 3600 + (int64_t)s->minute * 60;

	if (strcmp(s->kind, "hourly") == 0) {
		int64_t b = t - ((t % 3600) + 3600) % 3600 + (int64_t)s->minute * 60;

		return b > t ? b - 3600 : b;
	}
	/* daily, weekly, monthly: the newest matching day whose time has come
	 * (a year back covers every daysOfMonth set) */
	for (int d = 0; d <= 366; d++) {
		int64_t ds = day - (int64_t)d * 86400;
		time_t tt = (time_t)ds;
		struct tm tm;

		if (ds + hm > t)
			continue;
		gmtime_r(&tt, &tm);
		if (strcmp(s->kind, "daily") == 0 || (strcmp(s->kind, "weekly") == 0 && (s->weekdays & (1u << tm.tm_wday))) ||
		    (strcmp(s->kind, "monthly") == 0 && (s->monthdays & (1u << tm.tm_mday))))
			return ds + hm;
	}
	return INT64_MIN;
}

void api_snapshot_sched_id(const char *kind, int64_t slot, char *out, size_t cap)
{
	time_t tt = (time_t)slot;
	struct tm tm;

	gmtime_r(&tt, &tm);
	snprintf(out, cap, "%s-%04d%02d%02d-%02d%02d", kind, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min);
}
