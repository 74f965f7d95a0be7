/* Unit tests for api/api_intent_backup.c: backup jobs and their reports
 * round-trip, and every malformed field is refused naming it (never
 * quoting the key). */
#include "api/api_intent_backup.h"

#include <check.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define KEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define JOB "{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"name\":\"projects/p/locations/l/backupVaults/v/backups/b\"," \
	    "\"vault\":{\"key\":\"" KEY "\",\"store\":{\"directory\":{\"path\":\".backups/aaaaaaaaaaaaaaaa\"}}}," \
	    "\"volume\":\"projects/p/locations/l/volumes/v1\""

/* Decode text; expect rc and, for a refusal, a message holding needle and
 * never the key. */
static void job(const char *t, int rc, const char *needle)
{
	json_error_t err;
	json_t *in = json_loads(t, 0, &err);
	struct api_intent_backup b;
	aq_msg msg = { .text = "" };

	ck_assert_msg(in != NULL, "bad test JSON %s", t);
	ck_assert_msg(api_intent_backup_decode(in, &b, &msg) == rc, "%s: %s", t, msg.text);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "\"%s\" not in \"%s\"", needle, msg.text);
	ck_assert(strstr(msg.text, "00112233") == NULL);
	json_decref(in);
}

START_TEST(test_roundtrip)
{
	struct api_intent_backup b = { .op = API_INTENT_BKP_BACKUP, .has_snap = true }, c;
	aq_msg msg = { .text = "" };
	json_t *e;

	snprintf(b.id, sizeof(b.id), "0123456789abcdef");
	snprintf(b.name, sizeof(b.name), "projects/p/locations/l/backupVaults/v/backups/b");
	snprintf(b.key_hex, sizeof(b.key_hex), KEY);
	snprintf(b.store_path, sizeof(b.store_path), ".backups/aaaaaaaaaaaaaaaa");
	snprintf(b.volume, sizeof(b.volume), "projects/p/locations/l/volumes/v1");
	snprintf(b.snap.id, sizeof(b.snap.id), "s1");
	snprintf(b.snap.uid, sizeof(b.snap.uid), "fedcba9876543210");
	snprintf(b.prev_id, sizeof(b.prev_id), "1111111111111111");
	e = api_intent_backup_encode(&b);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(api_intent_backup_decode(e, &c, &msg), AQ_OK);
	ck_assert_int_eq(memcmp(&b, &c, sizeof(b)), 0);
	json_decref(e);
	/* a delete carries no source */
	memset(&b.volume, 0, sizeof(b.volume));
	b.op = API_INTENT_BKP_DELETE;
	b.has_snap = false;
	memset(&b.snap, 0, sizeof(b.snap));
	memset(b.prev_id, 0, sizeof(b.prev_id));
	e = api_intent_backup_encode(&b);
	ck_assert_ptr_null(json_object_get(e, "volume"));
	ck_assert_int_eq(api_intent_backup_decode(e, &c, &msg), AQ_OK);
	ck_assert_int_eq(memcmp(&b, &c, sizeof(b)), 0);
	json_decref(e);
}
END_TEST

START_TEST(test_job_refusals)
{
	job(JOB "}", AQ_OK, NULL);
	job(JOB ",\"prevId\":\"1111111111111111\",\"snapshot\":{\"id\":\"s1\",\"uid\":\"fedcba9876543210\"}}", AQ_OK, NULL);
	job("[]", AQ_EINVAL, "id must be 16 hex digits");
	job("{\"op\":\"backup\",\"id\":\"0123456789ABCDEF\"}", AQ_EINVAL, "id must be 16 hex digits");
	job("{\"op\":\"copy\",\"id\":\"0123456789abcdef\"}", AQ_EINVAL, "op must be backup, delete, restore or restoreFiles");
	job("{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"vault\":{}}", AQ_EINVAL, "name");
	job("{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"00112233\"}}", AQ_EINVAL,
	    "vault.key must be 64 hex digits");
	job("{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"directory\":{\"path\":\"/etc\"}}}}", AQ_EINVAL, "vault.store.directory.path");
	job("{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"directory\":{\"path\":\".backups/../../etc/xx\"}}}}", AQ_EINVAL, "vault.store.directory.path");
	job("{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"s3\":{}}}}", AQ_EINVAL, "vault.store.directory.path");
	job("{\"op\":\"backup\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"directory\":{\"path\":\".backups/aaaaaaaaaaaaaaaa\"}}}}", AQ_EINVAL, "volume");
	job(JOB ",\"snapshot\":{\"id\":\"Bad_Id\",\"uid\":\"fedcba9876543210\"}}", AQ_EINVAL, "snapshot.id");
	job(JOB ",\"snapshot\":{\"id\":\"s1\",\"uid\":\"xyz\"}}", AQ_EINVAL, "snapshot.uid");
	job(JOB ",\"prevId\":\"12\"}", AQ_EINVAL, "prevId must be 16 hex digits");
	job(JOB ",\"prevId\":\"0123456789abcdef\"}", AQ_EINVAL, "prevId must name another backup");
	job("{\"op\":\"delete\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"directory\":{\"path\":\".backups/aaaaaaaaaaaaaaaa\"}}},\"volume\":\"v\"}", AQ_EINVAL,
	    "a delete takes no volume");
	/* a restore (a volume's restoreSource): as a delete, no source */
	job("{\"op\":\"restore\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"directory\":{\"path\":\".backups/aaaaaaaaaaaaaaaa\"}}}}", AQ_OK, NULL);
	job("{\"op\":\"restore\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\","
	    "\"store\":{\"directory\":{\"path\":\".backups/aaaaaaaaaaaaaaaa\"}}},\"prevId\":\"1111111111111111\"}",
	    AQ_EINVAL, "a restore takes no volume");
}
END_TEST

static void report(const char *t, int rc, const char *needle)
{
	json_error_t err;
	json_t *in = json_loads(t, 0, &err);
	struct api_intent_backup_state st;
	aq_msg msg = { .text = "" };

	ck_assert_msg(in != NULL, "bad test JSON %s", t);
	ck_assert_msg(api_intent_backup_state_decode(in, &st, &msg) == rc, "%s: %s", t, msg.text);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "\"%s\" not in \"%s\"", needle, msg.text);
	json_decref(in);
}

/* restoreFiles: round trip, and its paths checked (never leaving the volume). */
#define FILES "{\"op\":\"restoreFiles\",\"id\":\"0123456789abcdef\",\"name\":\"n\",\"vault\":{\"key\":\"" KEY "\"," \
	      "\"store\":{\"directory\":{\"path\":\".backups/aaaaaaaaaaaaaaaa\"}}},\"backupId\":\"fedcba9876543210\"," \
	      "\"volume\":\"projects/p/locations/l/volumes/v1\""
START_TEST(test_files)
{
	json_error_t err;
	json_t *in = json_loads(FILES ",\"paths\":[\"/a\",\"/d/b c\"],\"dest\":\"/\"}", 0, &err), *e;
	struct api_intent_backup b, c;
	aq_msg msg = { .text = "" };
	char many[1200] = "";

	ck_assert_int_eq(api_intent_backup_decode(in, &b, &msg), AQ_OK);
	ck_assert_int_eq(b.op, API_INTENT_BKP_RESTORE_FILES);
	ck_assert_uint_eq(b.npaths, 2);
	ck_assert_str_eq(b.paths[1], "/d/b c");
	ck_assert_str_eq(b.backup_id, "fedcba9876543210");
	e = api_intent_backup_encode(&b);
	ck_assert_int_eq(api_intent_backup_decode(e, &c, &msg), AQ_OK);
	ck_assert(memcmp(&b, &c, sizeof(b)) == 0);
	json_decref(e);
	json_decref(in);
	job(FILES ",\"paths\":[\"/../etc/passwd\"],\"dest\":\"/\"}", AQ_EINVAL, "paths[]");
	job(FILES ",\"paths\":[\"a\"],\"dest\":\"/\"}", AQ_EINVAL, "absolute");
	job(FILES ",\"paths\":[\"/\"],\"dest\":\"/\"}", AQ_EINVAL, "root");
	job(FILES ",\"paths\":[\"/a//b\"],\"dest\":\"/\"}", AQ_EINVAL, "component");
	job(FILES ",\"paths\":[\"/a/\"],\"dest\":\"/\"}", AQ_EINVAL, "ends with");
	job(FILES ",\"paths\":[],\"dest\":\"/\"}", AQ_EINVAL, "paths must be");
	job(FILES ",\"paths\":[\"/a\"],\"dest\":\"/x/..\"}", AQ_EINVAL, "dest");
	job(FILES ",\"paths\":[\"/a\"]}", AQ_EINVAL, "dest");
	job(FILES ",\"paths\":[\"/a\"],\"dest\":\"/\",\"backupId\":\"zz\"}", AQ_EINVAL, NULL);
	/* 17 paths: one past the cap */
	strcat(many, FILES ",\"dest\":\"/\",\"paths\":[\"/p\"");
	for (int i = 0; i < API_INTENT_BKP_FILES_MAX; i++)
		strcat(many, ",\"/p\"");
	strcat(many, "]}");
	job(many, AQ_EINVAL, "paths must be 1-16");
	ck_assert_int_eq(api_backup_path_check("/a/.hidden/..x", false, "p", NULL), AQ_OK);
	ck_assert_int_eq(api_backup_path_check("/a/./b", false, "p", NULL), AQ_EINVAL);
	ck_assert_int_eq(api_backup_path_check("/", true, "p", NULL), AQ_OK);
}
END_TEST

START_TEST(test_report)
{
	struct api_intent_backup_state st = { .state = API_INTENT_BKP_READY, .bytes_done = 10, .bytes_total = 10,
					      .logical_bytes = 1 << 20, .uploaded_bytes = 4096 }, got;
	aq_msg msg = { .text = "" };
	json_t *e;

	snprintf(st.id, sizeof(st.id), "0123456789abcdef");
	snprintf(st.detail, sizeof(st.detail), "done");
	e = api_intent_backup_state_encode(&st);
	ck_assert_int_eq(api_intent_backup_state_decode(e, &got, &msg), AQ_OK);
	ck_assert_int_eq(memcmp(&st, &got, sizeof(st)), 0);
	json_decref(e);
	report("{\"id\":\"0123456789abcdef\",\"state\":\"UPLOADING\",\"bytesDone\":1,\"bytesTotal\":2}", AQ_OK, NULL);
	report("{\"id\":\"0123456789abcdef\",\"state\":\"DONE\"}", AQ_EINVAL, "state must be");
	report("{\"id\":\"0123456789abcdef\"}", AQ_EINVAL, "state is required");
	report("{\"id\":\"0123\",\"state\":\"READY\"}", AQ_EINVAL, "id must be 16 hex digits");
	report("{\"id\":\"0123456789abcdef\",\"state\":\"READY\",\"bytesDone\":-1}", AQ_EINVAL, "non-negative");
	report("{\"id\":\"0123456789abcdef\",\"state\":\"READY\",\"bytesDone\":3,\"bytesTotal\":2}", AQ_EINVAL,
	       "bytesDone passes bytesTotal");
	report("{\"id\":\"0123456789abcdef\",\"state\":\"ERROR\",\"stateDetails\":5}", AQ_EINVAL, "stateDetails");
}
END_TEST

static Suite *intent_backup_suite(void)
{
	Suite *s = suite_create("api_intent_backup");
	TCase *tc = tcase_create("api_intent_backup");

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_job_refusals);
	tcase_add_test(tc, test_report);
	tcase_add_test(tc, test_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(intent_backup_suite());
}
