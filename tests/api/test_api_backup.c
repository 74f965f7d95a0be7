/* Unit tests for api/api_backup.c: backup vault, policy and backup bodies
 * through the field table and the pure checks (defaults written, each
 * refusal names the field), a backup's retention end per kind and the
 * early-delete refusal naming the end time. */
#include "api/api_resource.h"

#include <check.h>
#include <string.h>

#include "tests/lib/aqt.h"

typedef int (*check_fn)(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* Body b through table then fn; expect rc and, for a refusal, a message
 * containing needle. Returns the normalised document on success (caller
 * frees), else NULL. */
static json_t *run(const struct api_field *table, check_fn fn, const char *b, int rc, const char *needle)
{
	json_error_t err;
	json_t *in = json_loads(b, 0, &err), *doc = NULL;
	aq_msg msg = { .text = "" };
	int got;

	ck_assert_msg(in != NULL, "bad test JSON %s", b);
	got = api_schema_check(table, in, true, "x", &doc, &msg);
	if (got == AQ_OK)
		got = fn(NULL, doc, &msg);
	json_decref(in);
	ck_assert_msg(got == rc, "%s: rc %d, want %d (%s)", b, got, rc, msg.text);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "\"%s\" not in \"%s\"", needle, msg.text);
	if (got != AQ_OK) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static void vault(const char *b, int rc, const char *needle)
{
	json_decref(run(api_backup_vault_fields, api_backup_vault_check, b, rc, needle));
}

static void policy(const char *b, int rc, const char *needle)
{
	json_decref(run(api_backup_policy_fields, api_backup_policy_check, b, rc, needle));
}

START_TEST(test_vault)
{
	json_t *d = run(api_backup_vault_fields, api_backup_vault_check, "{}", AQ_OK, NULL);

	ck_assert_str_eq(api_json_str(d, "backupVaultType", ""), "IN_REGION");
	json_decref(d);
	d = run(api_backup_vault_fields, api_backup_vault_check, "{\"backupVaultType\":\"BACKUP_VAULT_TYPE_UNSPECIFIED\"}",
		AQ_OK, NULL);
	ck_assert_str_eq(api_json_str(d, "backupVaultType", ""), "IN_REGION");
	json_decref(d);
	vault("{\"backupVaultType\":\"CROSS_REGION\",\"backupRegion\":\"west\",\"description\":\"d\","
	      "\"labels\":{\"k\":\"v\"}}", AQ_OK, NULL);
	vault("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":7,\"manualBackupImmutable\":true}}",
	      AQ_OK, NULL);
	vault("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":0}}", AQ_OK, NULL);
	/* refusals name the field */
	vault("{\"backupVaultType\":\"CROSS_REGION\"}", AQ_EINVAL, "backupRegion is required");
	vault("{\"backupVaultType\":\"CROSS_REGION\",\"backupRegion\":\"West_1\"}", AQ_EINVAL, "backupRegion");
	vault("{\"backupRegion\":\"west\"}", AQ_EINVAL, "backupRegion is only for a CROSS_REGION vault");
	vault("{\"backupVaultType\":\"NEARBY\"}", AQ_EINVAL, "backupVaultType");
	vault("{\"kmsConfig\":\"projects/p/locations/l/kmsConfigs/k\"}", AQ_EINVAL, "kmsConfig");
	vault("{\"backupRetentionPolicy\":{}}", AQ_EINVAL, "backupMinimumEnforcedRetentionDays");
	vault("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":-1,\"manualBackupImmutable\":true}}",
	      AQ_EINVAL, "backupRetentionPolicy.backupMinimumEnforcedRetentionDays");
	vault("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":36501,\"dailyBackupImmutable\":true}}",
	      AQ_EINVAL, "backupRetentionPolicy.backupMinimumEnforcedRetentionDays");
	vault("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":7}}", AQ_EINVAL,
	      "at least one of dailyBackupImmutable");
	vault("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":7,\"yearlyBackupImmutable\":true}}",
	      AQ_EINVAL, "yearlyBackupImmutable");
	vault("{\"key\":\"00\"}", AQ_EINVAL, "key");
}
END_TEST

START_TEST(test_policy)
{
	json_t *d = run(api_backup_policy_fields, api_backup_policy_check,
			"{\"dailyBackupLimit\":2,\"weeklyBackupLimit\":1,\"monthlyBackupLimit\":1}", AQ_OK, NULL);

	ck_assert(api_json_bool(d, "enabled", false)); /* GCNV's default */
	json_decref(d);
	d = run(api_backup_policy_fields, api_backup_policy_check, "{\"dailyBackupLimit\":2,\"enabled\":false}", AQ_OK,
		NULL);
	ck_assert(!api_json_bool(d, "enabled", true));
	json_decref(d);
	policy("{\"weeklyBackupLimit\":2}", AQ_OK, NULL);
	policy("{\"dailyBackupLimit\":1019,\"weeklyBackupLimit\":1019,\"monthlyBackupLimit\":1019}", AQ_OK, NULL);
	policy("{\"dailyBackupLimit\":1}", AQ_EINVAL, "dailyBackupLimit must be at least 2");
	policy("{\"dailyBackupLimit\":-2}", AQ_EINVAL, "dailyBackupLimit must be 0-1019");
	policy("{\"weeklyBackupLimit\":1020}", AQ_EINVAL, "weeklyBackupLimit must be 0-1019");
	policy("{\"monthlyBackupLimit\":1}", AQ_EINVAL, "must be at least 2");
	policy("{}", AQ_EINVAL, "dailyBackupLimit + weeklyBackupLimit + monthlyBackupLimit");
	policy("{\"dailyBackupLimit\":\"two\"}", AQ_EINVAL, "dailyBackupLimit");
	policy("{\"hourlyBackupLimit\":2}", AQ_EINVAL, "hourlyBackupLimit");
}
END_TEST

static void backup(const char *b, int rc, const char *needle)
{
	json_decref(run(api_backup_fields, api_backup_check, b, rc, needle));
}

START_TEST(test_backup_body)
{
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\"}", AQ_OK, NULL);
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\","
	       "\"sourceSnapshot\":\"projects/p/locations/l/volumes/v1/snapshots/s1\",\"description\":\"d\"}", AQ_OK, NULL);
	backup("{}", AQ_EINVAL, "sourceVolume is required");
	backup("{\"sourceVolume\":\"v1\"}", AQ_EINVAL, "sourceVolume must be a volume's full name");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/V1\"}", AQ_EINVAL, "sourceVolume");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1/x\"}", AQ_EINVAL, "sourceVolume");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\","
	       "\"sourceSnapshot\":\"projects/p/locations/l/volumes/v2/snapshots/s1\"}", AQ_EINVAL,
	       "sourceSnapshot must be a snapshot of sourceVolume");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\",\"sourceSnapshot\":\"s1\"}", AQ_EINVAL,
	       "sourceSnapshot");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\","
	       "\"sourceSnapshot\":\"projects/p/locations/l/volumes/v1/snapshots/Bad\"}", AQ_EINVAL, "sourceSnapshot");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\","
	       "\"sourceSnapshot\":\"projects/p/locations/l/volumes/v1/backupsxx/s1\"}", AQ_EINVAL, "sourceSnapshot");
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\",\"backupType\":\"MANUAL\",\"state\":\"READY\"}",
	       AQ_OK, NULL); /* output fields are ignored */
	backup("{\"sourceVolume\":\"projects/p/locations/l/volumes/v1\",\"size\":1}", AQ_EINVAL, "size");
}
END_TEST

START_TEST(test_retention)
{
	json_error_t err;
	json_t *v = json_loads("{\"backupRetentionPolicy\":{\"backupMinimumEnforcedRetentionDays\":7,"
			       "\"manualBackupImmutable\":true,\"dailyBackupImmutable\":false}}", 0, &err);
	aq_msg msg = { .text = "" };
	int64_t end = -1;

	ck_assert_int_eq(api_backup_retention_end(v, "manual", 1000, &end), AQ_OK);
	ck_assert_int_eq(end, 1000 + 7 * 86400);
	ck_assert_int_eq(api_backup_retention_end(v, "daily", 1000, &end), AQ_ENOENT);
	ck_assert_int_eq(end, 0);
	ck_assert_int_eq(api_backup_retention_end(v, "weekly", 1000, &end), AQ_ENOENT);
	ck_assert_int_eq(api_backup_retention_end(v, "yearly", 1000, &end), AQ_EINVAL);
	json_decref(v);
	v = json_object(); /* no policy: nothing retained */
	ck_assert_int_eq(api_backup_retention_end(v, "manual", 1000, &end), AQ_ENOENT);
	json_decref(v);

	/* 2026-12-06T00:00:00Z = 1796515200 */
	ck_assert_int_eq(api_backup_delete_check("b1", 1796515200, 1796515199, &msg), AQ_EPRECOND);
	ck_assert_msg(strstr(msg.text, "2026-12-06T00:00:00Z") && strstr(msg.text, "b1"), "%s", msg.text);
	ck_assert_int_eq(api_backup_delete_check("b1", 1796515200, 1796515200, &msg), AQ_OK);
	ck_assert_int_eq(api_backup_delete_check("b1", 0, 5, &msg), AQ_OK);
}
END_TEST

/* Scheduled backups' IDs: the kind, the volume, the slot's date; a long
 * volume ID cut and hashed, within the ID rules and distinct per volume. */
START_TEST(test_sched_id)
{
	char id[80], id2[80];
	const char *v63 = "a23456789012345678901234567890123456789012345678901234567890123";

	api_backup_sched_id("daily", "vol1", 1796515200, id, sizeof(id)); /* 2026-12-06T00:00:00Z */
	ck_assert_str_eq(id, "daily-vol1-20261206-0000");
	api_backup_sched_id("monthly", "v", 1796515200 + 3600 + 120, id, sizeof(id));
	ck_assert_str_eq(id, "monthly-v-20261206-0102");
	api_backup_sched_id("monthly", v63, 1796515200, id, sizeof(id));
	ck_assert_int_eq(api_id_check(id, "id", NULL), AQ_OK);
	ck_assert_msg(strncmp(id, "monthly-a2345678901234567890123-", 32) == 0, "%s", id);
	api_backup_sched_id("monthly", "a234567890123456789012345678901234567890", 1796515200, id2, sizeof(id2));
	ck_assert_int_eq(api_id_check(id2, "id", NULL), AQ_OK);
	ck_assert_str_ne(id, id2); /* same 23-character prefix, another hash */
	api_backup_sched_id("daily", "a2345678901234567890123456789012", 1796515200, id, sizeof(id)); /* 32: kept whole */
	ck_assert_str_eq(id, "daily-a2345678901234567890123456789012-20261206-0000");
}
END_TEST

static Suite *backup_suite(void)
{
	Suite *s = suite_create("api_backup");
	TCase *tc = tcase_create("api_backup");

	tcase_add_test(tc, test_vault);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_backup_body);
	tcase_add_test(tc, test_retention);
	tcase_add_test(tc, test_sched_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(backup_suite());
}
