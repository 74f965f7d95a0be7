/* Unit tests for api/api_snapshot.c: the snapshotPolicy checks (each
 * refusal names the field), restoreParameters, the slot arithmetic of the
 * four schedule kinds (the newest slot at or before a time, defaults
 * applied) and the scheduled snapshot IDs. */
#include "api/api_resource.h"

#include <check.h>
#include <string.h>

#include "tests/lib/aqt.h"

/* Check policy JSON p; expect rc and, for a refusal, a message containing needle. */
static void policy(const char *p, int rc, const char *needle)
{
	json_error_t err;
	json_t *vol = json_pack("{s:o}", "snapshotPolicy", json_loads(p, 0, &err));
	aq_msg msg = { .text = "" };

	ck_assert_ptr_nonnull(vol);
	ck_assert_int_eq(api_snapshot_policy_check(vol, &msg), rc);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "\"%s\" not in \"%s\"", needle, msg.text);
	json_decref(vol);
}

START_TEST(test_policy)
{
	policy("{\"enabled\":true,\"hourlySchedule\":{\"snapshotsToKeep\":3,\"minute\":5}}", AQ_OK, NULL);
	policy("{\"enabled\":true,\"dailySchedule\":{\"snapshotsToKeep\":2,\"minute\":0,\"hour\":23},"
	       "\"weeklySchedule\":{\"snapshotsToKeep\":1,\"day\":\"Monday,Friday\",\"hour\":1},"
	       "\"monthlySchedule\":{\"snapshotsToKeep\":1,\"daysOfMonth\":\"1,15,31\"}}", AQ_OK, NULL);
	policy("{\"hourlySchedule\":{\"minute\":5}}", AQ_EINVAL, "hourlySchedule.snapshotsToKeep is required");
	policy("{\"hourlySchedule\":{\"snapshotsToKeep\":3.5}}", AQ_EINVAL, "hourlySchedule.snapshotsToKeep");
	policy("{\"hourlySchedule\":{\"snapshotsToKeep\":256}}", AQ_EINVAL, "0..255");
	policy("{\"hourlySchedule\":{\"snapshotsToKeep\":3,\"minute\":60}}", AQ_EINVAL, "hourlySchedule.minute");
	policy("{\"dailySchedule\":{\"snapshotsToKeep\":3,\"hour\":24}}", AQ_EINVAL, "dailySchedule.hour");
	policy("{\"hourlySchedule\":{\"snapshotsToKeep\":3,\"hour\":2}}", AQ_EINVAL, "hourlySchedule.hour");
	policy("{\"dailySchedule\":{\"snapshotsToKeep\":3,\"day\":\"Monday\"}}", AQ_EINVAL, "dailySchedule.day");
	policy("{\"weeklySchedule\":{\"snapshotsToKeep\":3,\"daysOfMonth\":\"1\"}}", AQ_EINVAL, "weeklySchedule.daysOfMonth");
	policy("{\"weeklySchedule\":{\"snapshotsToKeep\":3,\"day\":\"Mon\"}}", AQ_EINVAL, "weeklySchedule.day must be");
	policy("{\"weeklySchedule\":{\"snapshotsToKeep\":3,\"day\":\"Monday,\"}}", AQ_EINVAL, "weeklySchedule.day must be");
	policy("{\"monthlySchedule\":{\"snapshotsToKeep\":3,\"daysOfMonth\":\"32\"}}", AQ_EINVAL, "monthlySchedule.daysOfMonth");
	policy("{\"monthlySchedule\":{\"snapshotsToKeep\":3,\"daysOfMonth\":\"1x\"}}", AQ_EINVAL, "monthlySchedule.daysOfMonth");
	policy("{\"hourlySchedule\":{\"snapshotsToKeep\":200},\"dailySchedule\":{\"snapshotsToKeep\":56}}", AQ_EINVAL,
	       "at most 255");
}
END_TEST

static int restore(const char *src)
{
	json_t *vol = json_pack("{s:{s:s}}", "restoreParameters", "sourceSnapshot", src);
	int rc = api_snapshot_restore_check(vol, NULL);

	json_decref(vol);
	return rc;
}

START_TEST(test_restore)
{
	json_t *vol = json_pack("{s:{s:s}}", "restoreParameters", "sourceBackup", "projects/p/locations/l/backupVaults/b/backups/x");
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(restore("projects/p/locations/east/volumes/v1/snapshots/s1"), AQ_OK);
	ck_assert_int_eq(restore("projects/p/locations/east/volumes/v1/snapshots/"), AQ_EINVAL);
	ck_assert_int_eq(restore("projects/p/locations/east/volumes/v1/snapshots/s1/x"), AQ_EINVAL);
	ck_assert_int_eq(restore("s1"), AQ_EINVAL);
	ck_assert_int_eq(restore("projects/p/locations/east/volumes/v_1/snapshots/s1"), AQ_EINVAL);
	/* a backup's full name passes (the server checks that it exists) */
	ck_assert_int_eq(api_snapshot_restore_check(vol, &msg), AQ_OK);
	json_decref(vol);
	vol = json_pack("{s:{s:s}}", "restoreParameters", "sourceBackup", "projects/p/locations/l/backupVaults/b/x");
	ck_assert_int_eq(api_snapshot_restore_check(vol, &msg), AQ_EINVAL);
	ck_assert(strstr(msg.text, "restoreParameters.sourceBackup") != NULL);
	json_decref(vol);
	vol = json_pack("{s:{s:s,s:s}}", "restoreParameters", "sourceBackup", "projects/p/locations/l/backupVaults/b/backups/x",
			"sourceSnapshot", "projects/p/locations/east/volumes/v1/snapshots/s1");
	ck_assert_int_eq(api_snapshot_restore_check(vol, &msg), AQ_EINVAL);
	ck_assert(strstr(msg.text, "not both") != NULL);
	json_decref(vol);
}
END_TEST

/* 2026-12-01 (a Tuesday) 00:00:00 UTC */
#define T0 1796083200LL

static int64_t slot(const char *kind, const char *sched, int64_t t)
{
	char field[32], text[300];
	json_t *vol;
	struct api_snap_sched s;
	int64_t r;
	int k;

	snprintf(field, sizeof(field), "%sSchedule", kind);
	snprintf(text, sizeof(text), "{\"snapshotPolicy\":{\"enabled\":true,\"%s\":%s}}", field, sched);
	vol = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(vol);
	for (k = 0; k < api_snapshot_kind_count(); k++)
		if (api_snapshot_kind(k, &s, vol) == AQ_OK)
			break;
	ck_assert_int_lt(k, api_snapshot_kind_count());
	ck_assert_str_eq(s.kind, kind);
	r = api_snapshot_slot(&s, t);
	json_decref(vol);
	return r;
}

START_TEST(test_slot)
{
	struct api_snap_sched s;
	json_t *off = json_pack("{s:{s:b,s:{s:i}}}", "snapshotPolicy", "enabled", 0, "hourlySchedule", "snapshotsToKeep", 3);

	/* hourly at :05: 10:04 -> 09:05, 10:05 -> 10:05 */
	ck_assert_int_eq(slot("hourly", "{\"snapshotsToKeep\":3,\"minute\":5}", T0 + 10 * 3600 + 4 * 60),
			 T0 + 9 * 3600 + 5 * 60);
	ck_assert_int_eq(slot("hourly", "{\"snapshotsToKeep\":3,\"minute\":5}", T0 + 10 * 3600 + 5 * 60),
			 T0 + 10 * 3600 + 5 * 60);
	/* daily at 23:30: on Dec 1st 12:00 the newest is Nov 30th 23:30 */
	ck_assert_int_eq(slot("daily", "{\"snapshotsToKeep\":1,\"hour\":23,\"minute\":30}", T0 + 12 * 3600),
			 T0 - 1800);
	/* weekly by default Sunday 00:00: the Tuesday's newest is two days back */
	ck_assert_int_eq(slot("weekly", "{\"snapshotsToKeep\":1}", T0 + 3600), T0 - 2 * 86400);
	ck_assert_int_eq(slot("weekly", "{\"snapshotsToKeep\":1,\"day\":\"Tuesday\",\"hour\":1}", T0 + 3600), T0 + 3600);
	/* monthly by default the 1st at 00:00; the 15th's newest is last month's */
	ck_assert_int_eq(slot("monthly", "{\"snapshotsToKeep\":1}", T0 + 5), T0);
	ck_assert_int_eq(slot("monthly", "{\"snapshotsToKeep\":1,\"daysOfMonth\":\"15\"}", T0 + 5), T0 - 16 * 86400);
	/* a policy that is off has no schedule */
	ck_assert_int_eq(api_snapshot_kind(0, &s, off), AQ_ENOENT);
	json_decref(off);
}
END_TEST

START_TEST(test_sched_id)
{
	char id[64];

	api_snapshot_sched_id("hourly", T0 + 17 * 3600 + 5 * 60, id, sizeof(id));
	ck_assert_str_eq(id, "hourly-20261201-1705");
	ck_assert_int_eq(api_id_check(id, "snapshotId", NULL), AQ_OK);
}
END_TEST

static Suite *snapshot_suite(void)
{
	Suite *s = suite_create("api_snapshot");
	TCase *tc = tcase_create("api_snapshot");

	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_restore);
	tcase_add_test(tc, test_slot);
	tcase_add_test(tc, test_sched_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(snapshot_suite());
}
