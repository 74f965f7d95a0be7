/* Unit tests for api/api_pool.c and api/api_volume.c: the cross-field rules
 * beyond field types, the defaults, and the computed output figures. Each
 * document goes through api_schema_check() first, as the server does. */
#include "api/api_resource.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define VOL_BASE "\"storagePool\": \"p\", \"capacityGib\": \"1500\""

/* Normalise text against table (creating) and return the document. */
static json_t *normalised(const struct api_field *table, const char *text)
{
	json_error_t jerr;
	aq_msg msg = { .text = { 0 } };
	json_t *in = json_loads(text, 0, &jerr), *out = NULL;
	int rc;

	ck_assert_msg(in != NULL, "bad test JSON %s: %s", text, jerr.text);
	rc = api_schema_check(table, in, true, "body", &out, &msg);
	ck_assert_msg(rc == AQ_OK, "%s: schema rc %d (%s)", text, rc, msg.text);
	json_decref(in);
	return out;
}

/* api_volume_check on a body made of VOL_BASE plus extra; the document is
 * returned through doc when wanted. */
static int vol_check(const char *extra, json_t **doc, aq_msg *msg)
{
	char text[2048];
	json_t *d;
	int rc;

	snprintf(text, sizeof(text), "{" VOL_BASE ", %s}", extra);
	d = normalised(api_volume_fields, text);
	rc = api_volume_check(&api_math_defaults, d, msg);
	if (doc)
		*doc = d;
	else
		json_decref(d);
	return rc;
}

static void vol_ok(const char *extra)
{
	aq_msg msg = { .text = { 0 } };
	int rc = vol_check(extra, NULL, &msg);

	ck_assert_msg(rc == AQ_OK, "%s: rc %d (%s)", extra, rc, msg.text);
}

static void vol_refused(const char *extra, const char *needle)
{
	aq_msg msg = { .text = { 0 } };
	int rc = vol_check(extra, NULL, &msg);

	ck_assert_msg(rc == AQ_EINVAL, "%s: rc %d, want AQ_EINVAL", extra, rc);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "%s: message \"%s\" lacks \"%s\"",
			      extra, msg.text, needle);
}

#define NFS3 "\"protocols\": [\"NFSV3\"]"
#define SHARE "\"shareName\": \"s1\""

START_TEST(test_vol_protocols)
{
	vol_ok(SHARE ", \"protocols\": [\"NFSV3\"]");
	vol_ok(SHARE ", \"protocols\": [\"NFSV4\"]");
	vol_ok(SHARE ", \"protocols\": [\"SMB\"]");
	vol_ok(SHARE ", \"protocols\": [\"NFSV3\", \"NFSV4\"]");
	vol_ok(SHARE ", \"protocols\": [\"NFSV4\", \"NFSV3\"]");
	vol_ok(SHARE ", \"protocols\": [\"SMB\", \"NFSV3\"]");
	vol_ok(SHARE ", \"protocols\": [\"NFSV4\", \"SMB\"]");
	vol_refused(SHARE ", \"protocols\": []", "protocols must be one of");
	vol_refused(SHARE ", \"protocols\": [\"NFSV3\", \"NFSV4\", \"SMB\"]", "protocols must be");
	vol_refused(SHARE ", \"protocols\": [\"ISCSI\"]", "ISCSI is not supported");
	vol_refused(SHARE ", \"protocols\": [\"NFSV3\", \"ISCSI\"]", "ISCSI");
	vol_refused(SHARE ", \"protocols\": [\"NFSV3\", \"NFSV3\"]", "lists NFSV3 twice");
	vol_refused(SHARE ", \"protocols\": [\"SMB\", \"SMB\"]", "twice");
}
END_TEST

START_TEST(test_vol_share_name)
{
	char name64[65], extra[256];
	aq_msg msg = { .text = { 0 } };

	memset(name64, 'a', 64);
	name64[64] = '\0';
	snprintf(extra, sizeof(extra), NFS3 ", \"shareName\": \"%.63s\"", name64);
	vol_ok(extra);
	/* 64: the field table's limit (api_intent.h) refuses it first */
	{
		json_t *in = json_pack("{s:s,s:s,s:s,s:[s]}", "storagePool", "p", "capacityGib", "1500", "shareName",
				       name64, "protocols", "NFSV3"), *out = NULL;

		ck_assert_int_eq(api_schema_check(api_volume_fields, in, true, "body", &out, &msg), AQ_EINVAL);
		ck_assert_msg(strstr(msg.text, "shareName is longer than 63"), "%s", msg.text);
		json_decref(in);
	}
	vol_ok(NFS3 ", \"shareName\": \"a\"");
	vol_ok(NFS3 ", \"shareName\": \"Ab_9-z\"");
	vol_ok(NFS3 ", \"shareName\": \"-lead\"");
	vol_refused(NFS3 ", \"shareName\": \"\"", "1-63");
	vol_refused(NFS3 ", \"shareName\": \"a b\"", "only letters, digits");
	vol_refused(NFS3 ", \"shareName\": \"a.b\"", "only letters");
	vol_refused(NFS3 ", \"shareName\": \"a/b\"", "only letters");
	vol_refused(NFS3 ", \"shareName\": \"caf\xc3\xa9\"", "only letters");
	/* missing shareName: the check refuses too (not only the schema) */
	{
		json_t *d = json_pack("{s:[s]}", "protocols", "NFSV3");

		ck_assert_int_eq(api_volume_check(&api_math_defaults, d, &msg), AQ_EINVAL);
		json_decref(d);
	}
}
END_TEST

START_TEST(test_vol_unix_permissions)
{
	vol_ok(SHARE ", " NFS3 ", \"unixPermissions\": \"777\"");
	vol_ok(SHARE ", " NFS3 ", \"unixPermissions\": \"0777\"");
	vol_ok(SHARE ", " NFS3 ", \"unixPermissions\": \"000\"");
	vol_ok(SHARE ", " NFS3 ", \"unixPermissions\": \"1770\"");
	vol_refused(SHARE ", " NFS3 ", \"unixPermissions\": \"12\"", "3 or 4 octal digits");
	vol_refused(SHARE ", " NFS3 ", \"unixPermissions\": \"8888\"", "octal");
	vol_refused(SHARE ", " NFS3 ", \"unixPermissions\": \"778\"", "octal");
	vol_refused(SHARE ", " NFS3 ", \"unixPermissions\": \"\"", "octal");
	vol_refused(SHARE ", " NFS3 ", \"unixPermissions\": \"rwx\"", "octal");
}
END_TEST

#define RULE(x) SHARE ", " NFS3 ", \"exportPolicy\": {\"rules\": [{" x "}]}"

START_TEST(test_vol_export_rules)
{
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/32\""));
	vol_ok(RULE("\"allowedClients\": \"0.0.0.0/0\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8,192.168.1.5\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8, 192.168.1.5\""));
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/33\""), "is not an IPv4 address or CIDR");
	vol_refused(RULE("\"allowedClients\": \"1.2.3\""), "rules[0].allowedClients");
	vol_refused(RULE("\"allowedClients\": \"\""), "is empty");
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/\""), "not an IPv4");
	vol_refused(RULE("\"allowedClients\": \"256.0.0.1\""), "not an IPv4");
	vol_refused(RULE("\"allowedClients\": \"::1\""), "not an IPv4");
	vol_refused(RULE("\"accessType\": \"READ_WRITE\""), "allowedClients is required");
	/* the second rule is named in the message */
	vol_refused(SHARE ", " NFS3 ", \"exportPolicy\": {\"rules\": [{\"allowedClients\": \"1.2.3.4\"},"
		    " {\"allowedClients\": \"x\"}]}",
		    "rules[1]");

	/* squash modes and anonUid */
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"squashMode\": \"NO_ROOT_SQUASH\""));
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"squashMode\": \"ROOT_SQUASH\""),
		    "anonUid is required with squashMode ROOT_SQUASH");
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"squashMode\": \"ALL_SQUASH\""),
		    "anonUid is required");
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"squashMode\": \"ROOT_SQUASH\","
		    " \"anonUid\": \"65534\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"anonUid\": \"0\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"anonUid\": \"4294967295\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"anonUid\": 4294967295"));
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"anonUid\": \"4294967296\""),
		    "0..4294967295");
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"anonUid\": \"-1\""), "0..4294967295");

	/* hasRootAccess is a string "true" / "false" */
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"hasRootAccess\": \"true\""));
	vol_ok(RULE("\"allowedClients\": \"10.0.0.0/8\", \"hasRootAccess\": \"false\""));
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"hasRootAccess\": \"yes\""),
		    "\"true\" or \"false\"");
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"hasRootAccess\": \"TRUE\""),
		    "hasRootAccess");
	vol_refused(RULE("\"allowedClients\": \"10.0.0.0/8\", \"hasRootAccess\": \"\""),
		    "hasRootAccess");
}
END_TEST

START_TEST(test_vol_tiering_and_defaults)
{
	aq_msg msg = { .text = { 0 } };
	json_t *d = NULL, *tp;

#define TIER(x) SHARE ", " NFS3 ", \"tieringPolicy\": {" x "}"
	vol_refused(TIER("\"coolingThresholdDays\": 1"), NULL);
	vol_ok(TIER("\"coolingThresholdDays\": 2"));
	vol_ok(TIER("\"coolingThresholdDays\": 183"));
	vol_refused(TIER("\"coolingThresholdDays\": 184"), NULL);
	vol_refused(TIER("\"coolingThresholdDays\": 0"), NULL);
	vol_refused(TIER("\"coolingThresholdDays\": -2"), NULL);

	ck_assert_int_eq(vol_check(TIER("\"tierAction\": \"ENABLED\""), &d, &msg), AQ_OK);
	tp = json_object_get(d, "tieringPolicy");
	ck_assert_str_eq(api_json_str(tp, "tierAction", ""), "ENABLED");
	ck_assert_int_eq(api_json_int64(tp, "coolingThresholdDays", 0), 31);
	ck_assert_str_eq(api_json_str(tp, "retrievalPolicy", ""), "DEFAULT");
	json_decref(d);

	ck_assert_int_eq(vol_check(TIER(""), &d, &msg), AQ_OK);
	tp = json_object_get(d, "tieringPolicy");
	ck_assert_str_eq(api_json_str(tp, "tierAction", ""), "PAUSED");
	json_decref(d);

	/* defaults for a plain volume; no tieringPolicy invented */
	ck_assert_int_eq(vol_check(SHARE ", " NFS3, &d, &msg), AQ_OK);
	ck_assert_str_eq(api_json_str(d, "securityStyle", ""), "UNIX");
	/* no .snapshot directory exists: the default says so */
	ck_assert(json_is_false(json_object_get(d, "snapshotDirectory")));
	ck_assert_ptr_null(json_object_get(d, "tieringPolicy"));
	json_decref(d);
	/* given values are kept */
	ck_assert_int_eq(vol_check(SHARE ", \"protocols\": [\"SMB\"], \"securityStyle\": \"NTFS\","
				   " \"snapshotDirectory\": false",
				   &d, &msg),
			 AQ_OK);
	ck_assert_str_eq(api_json_str(d, "securityStyle", ""), "NTFS");
	ck_assert(!api_json_bool(d, "snapshotDirectory", true));
	json_decref(d);

	/* NTFS is SMB only: NFS would not enforce its ACLs (issue 18) */
	vol_refused(SHARE ", " NFS3 ", \"securityStyle\": \"NTFS\"", "securityStyle: NTFS with protocols NFSV3");
	vol_refused(SHARE ", \"protocols\": [\"SMB\", \"NFSV4\"], \"securityStyle\": \"NTFS\"",
		    "securityStyle: NTFS with protocols NFSV4");
	vol_refused(SHARE ", " NFS3 ", \"kerberosEnabled\": true", "kerberosEnabled");
	vol_ok(SHARE ", " NFS3 ", \"kerberosEnabled\": false");
	vol_refused(SHARE ", " NFS3 ", \"restoreParameters\": {\"sourceSnapshot\": \"x\"}",
		    "restoreParameters");
	/* issue 20: a clone from a snapshot (its existence is the server's check) */
	vol_ok(SHARE ", " NFS3 ", \"restoreParameters\": {\"sourceSnapshot\": \"projects/p/locations/l/volumes/v/snapshots/s\"}");
	vol_refused(SHARE ", " NFS3 ", \"restoreParameters\": {\"sourceBackup\": \"b\"}", "restoreParameters.sourceBackup");
	vol_refused(SHARE ", " NFS3 ", \"snapshotPolicy\": {\"hourlySchedule\": {\"minute\": 1}}",
		    "snapshotPolicy.hourlySchedule.snapshotsToKeep is required");
}
END_TEST

/* api_volume_check_supported on a normalised body: what a feature Aquifer
 * does not have sets is refused naming the field; its "off" value passes. */
static int vol_supported(const char *extra, aq_msg *msg)
{
	char text[2048];
	json_t *d;
	int rc;

	snprintf(text, sizeof(text), "{" VOL_BASE ", " SHARE ", %s%s}", extra, strstr(extra, "protocols") ? "" : ", " NFS3);
	d = normalised(api_volume_fields, text);
	rc = api_volume_check_supported(d, msg);
	json_decref(d);
	return rc;
}

START_TEST(test_vol_supported)
{
	static const struct {
		const char *extra, *needle; /* needle NULL: accepted */
	} cases[] = {
		{ "\"protocols\": [\"NFSV3\"]", NULL },
		{ "\"protocols\": [\"NFSV4\"]", NULL }, /* issue 19: agent/nfs4/ serves NFSv4.1 */
		/* the served sets (api_volume.c's table, API_SERVES_SMB) */
		{ "\"protocols\": [\"SMB\"]", NULL },
		{ "\"protocols\": [\"NFSV3\", \"SMB\"]", NULL },
		{ "\"protocols\": [\"SMB\", \"NFSV3\"]", NULL },
		{ "\"protocols\": [\"SMB\", \"NFSV4\"]", NULL },
		{ "\"protocols\": [\"NFSV3\", \"NFSV4\"]", NULL },
		{ "\"protocols\": [\"NFSV4\", \"NFSV3\"]", NULL },
		{ "\"smbSettings\": [\"BROWSABLE\"]", "smbSettings: BROWSABLE is not served yet" },
		{ "\"smbSettings\": [\"ENCRYPT_DATA\"]", NULL },   /* the share refuses unencrypted requests */
		{ "\"smbSettings\": [\"NON_BROWSABLE\"]", NULL }, /* the node lists no shares */
		{ "\"smbSettings\": [\"CHANGE_NOTIFY\"]", NULL }, /* SMB2 CHANGE_NOTIFY is served */
		{ "\"smbSettings\": [\"OPLOCKS\"]", NULL },       /* Level II oplocks and R leases */
		{ "\"smbSettings\": []", NULL },
		{ "\"protocols\": [\"SMB\"], \"securityStyle\": \"NTFS\"", NULL }, /* issue 18 */
		{ "\"securityStyle\": \"UNIX\"", NULL },
		{ "\"snapshotPolicy\": {\"enabled\": true}", NULL }, /* issue 20: a scheduler runs it */
		{ "\"snapshotPolicy\": {\"enabled\": false, \"dailySchedule\": {\"snapshotsToKeep\": 3}}", NULL },
		{ "\"snapReserve\": 10", "snapReserve: no space is reserved for snapshots" },
		{ "\"snapReserve\": 0", NULL },
		{ "\"snapshotDirectory\": true", NULL },
		{ "\"snapshotDirectory\": false", NULL },
		{ "\"multipleEndpoints\": true", "multipleEndpoints" },
		{ "\"multipleEndpoints\": false", NULL },
		/* issue 21 step 3: the names are checked against the db (srv_bconfig) */
		{ "\"backupConfig\": {\"backupVault\": \"v\"}", NULL },
		{ "\"backupConfig\": {\"backupPolicies\": [\"p\"]}", NULL },
		/* scheduled backups are served; true without a policy: srv_bconfig */
		{ "\"backupConfig\": {\"scheduledBackupEnabled\": true}", NULL },
		{ "\"backupConfig\": {\"scheduledBackupEnabled\": false}", NULL },
		{ "\"restrictedActions\": [\"DELETE\"]", NULL },
		{ "\"exportPolicy\": {\"rules\": [{\"allowedClients\": \"10.0.0.0/8\", \"nfsv3\": false, \"nfsv4\": true}]}", NULL },
		{ "\"exportPolicy\": {\"rules\": [{\"allowedClients\": \"1.2.3.4\"}, {\"allowedClients\": \"10.0.0.0/8\", \"kerberos5pReadWrite\": true}]}",
		  "exportPolicy.rules[1].kerberos5pReadWrite" },
		{ "\"exportPolicy\": {\"rules\": [{\"allowedClients\": \"10.0.0.0/8\", \"kerberos5ReadOnly\": true}]}",
		  "rules[0].kerberos5ReadOnly" },
		{ "\"exportPolicy\": {\"rules\": [{\"allowedClients\": \"10.0.0.0/8\", \"kerberos5ReadOnly\": false}]}", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		aq_msg msg = { .text = { 0 } };
		int rc = vol_supported(cases[i].extra, &msg);

		if (!cases[i].needle) {
			ck_assert_msg(rc == AQ_OK, "%s: rc %d (%s)", cases[i].extra, rc, msg.text);
			continue;
		}
		ck_assert_msg(rc == AQ_EINVAL, "%s: rc %d, want AQ_EINVAL", cases[i].extra, rc);
		ck_assert_msg(strstr(msg.text, cases[i].needle), "%s: \"%s\" lacks \"%s\"", cases[i].extra, msg.text,
			      cases[i].needle);
	}
}
END_TEST

START_TEST(test_pool_supported)
{
	static const struct {
		const char *body, *needle;
	} cases[] = {
		{ "{}", NULL },
		{ "{\"zone\": \"east\"}", NULL },
		{ "{\"zone\": \"\"}", NULL },
		{ "{\"zone\": \"east-b\"}", "zone: \"east-b\" is not this pool's location" },
		{ "{\"replicaZone\": \"east\"}", "replicaZone" },
		{ "{\"activeDirectory\": \"projects/p/locations/east/activeDirectories/ad\"}", "activeDirectory" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		aq_msg msg = { .text = { 0 } };
		json_t *d = json_loads(cases[i].body, 0, NULL);
		int rc = api_pool_check_supported(d, "east", &msg);

		json_decref(d);
		if (!cases[i].needle) {
			ck_assert_msg(rc == AQ_OK, "%s: rc %d (%s)", cases[i].body, rc, msg.text);
			continue;
		}
		ck_assert_msg(rc == AQ_EINVAL && strstr(msg.text, cases[i].needle), "%s: rc %d \"%s\"", cases[i].body, rc,
			      msg.text);
	}
}
END_TEST

/* api_pool_check on a normalised body. */
static int pool_check(const char *text, json_t **doc, aq_msg *msg)
{
	json_t *d = normalised(api_pool_fields, text);
	int rc = api_pool_check(&api_math_defaults, d, msg);

	if (doc)
		*doc = d;
	else
		json_decref(d);
	return rc;
}

static void pool_ok(const char *text)
{
	aq_msg msg = { .text = { 0 } };
	int rc = pool_check(text, NULL, &msg);

	ck_assert_msg(rc == AQ_OK, "%s: rc %d (%s)", text, rc, msg.text);
}

static void pool_refused(const char *text, const char *needle)
{
	aq_msg msg = { .text = { 0 } };
	int rc = pool_check(text, NULL, &msg);

	ck_assert_msg(rc == AQ_EINVAL, "%s: rc %d, want AQ_EINVAL", text, rc);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "%s: message \"%s\" lacks \"%s\"",
			      text, msg.text, needle);
}

#define PREM "\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"PREMIUM\", \"capacityGib\": \"2048\""
#define FLEX "\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"FLEX\", \"capacityGib\": \"1024\""


/* api_cold_store_check and api_cold_store_same over location documents. */
static int cold_check(const char *store, json_t **doc)
{
	char text[2048];
	aq_msg msg = { .text = { 0 } };
	json_t *d;
	int rc;

	snprintf(text, sizeof(text), "{\"coldStore\": %s}", store);
	d = normalised(api_location_fields, text);
	rc = api_cold_store_check(json_object_get(d, "coldStore"), &msg);
	if (rc != AQ_OK)
		ck_assert_msg(strstr(msg.text, "coldStore") != NULL, "message names the field: %s", msg.text);
	if (doc)
		*doc = d;
	else
		json_decref(d);
	return rc;
}

#define S3(ep, bucket) "{\"s3\": {\"endpoint\": \"" ep "\", \"bucket\": \"" bucket "\", \"accessKeyId\": \"AK\", \"secretAccessKey\": \"SK\"}}"

START_TEST(test_cold_store)
{
	static const char *const good[] = {
		S3("http://127.0.0.1:9000", "cold"), S3("https://s3.example.com", "my.bucket-1"),
		S3("http://minio:9000/prefix", "abc"), "{\"directory\": {\"path\": \"/srv/cold\"}}",
		"{\"directory\": {\"path\": \"/srv/..cold/x..\"}}",
	};
	static const char *const bad[] = {
		"{}", "{\"directory\": {}}", "{\"directory\": {\"path\": \"rel/x\"}}",
		"{\"directory\": {\"path\": \"/a/../b\"}}", "{\"directory\": {\"path\": \"/a/..\"}}",
		S3("ftp://h", "abc"), S3("http://", "abc"), S3("http://:80", "abc"), S3("http://h:0", "abc"),
		S3("http://h:65536", "abc"), S3("http://h:8x", "abc"), S3("http://u@h", "abc"), S3("http://h/a?b", "abc"),
		S3("http://h", "ab"), S3("http://h", "Abc"), S3("http://h", "-abc"), S3("http://h", "abc-"),
		S3("http://h", "a..b"), S3("http://h", "192.168.1.1"), S3("http://h", "a_b"),
		"{\"s3\": {\"endpoint\": \"http://h\", \"bucket\": \"abc\", \"accessKeyId\": \"AK\"}}",
		"{\"s3\": {\"endpoint\": \"http://h\", \"bucket\": \"abc\", \"secretAccessKey\": \"SK\"}}",
		"{\"s3\": {\"endpoint\": \"http://h\", \"bucket\": \"abc\", \"accessKeyId\": \"A K\", \"secretAccessKey\": \"SK\"}}",
		"{\"s3\": {\"endpoint\": \"http://h\", \"bucket\": \"abc\", \"region\": \"eu/1\", \"accessKeyId\": \"AK\", \"secretAccessKey\": \"SK\"}}",
		"{\"directory\": {\"path\": \"/x\"}, \"s3\": {\"endpoint\": \"http://h\", \"bucket\": \"abc\", \"accessKeyId\": \"AK\", \"secretAccessKey\": \"SK\"}}",
	};
	json_t *a = NULL, *b = NULL, *c = NULL;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(cold_check(good[i], NULL) == AQ_OK, "accepted: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(cold_check(bad[i], NULL) == AQ_EINVAL, "refused: %s", bad[i]);
	/* region default; identity ignores credentials and region */
	ck_assert_int_eq(cold_check(S3("http://h:1", "abc"), &a), AQ_OK);
	ck_assert_str_eq(api_json_str(json_object_get(json_object_get(a, "coldStore"), "s3"), "region", ""), "us-east-1");
	ck_assert_int_eq(cold_check("{\"s3\": {\"endpoint\": \"http://h:1\", \"bucket\": \"abc\", \"region\": \"eu\", \"accessKeyId\": \"K2\", \"secretAccessKey\": \"S2\"}}", &b), AQ_OK);
	ck_assert_int_eq(cold_check(S3("http://h:1", "abd"), &c), AQ_OK);
	ck_assert(api_cold_store_same(json_object_get(a, "coldStore"), json_object_get(b, "coldStore")));
	ck_assert(!api_cold_store_same_key(json_object_get(a, "coldStore"), json_object_get(b, "coldStore")));
	ck_assert(api_cold_store_same_key(json_object_get(a, "coldStore"), json_object_get(a, "coldStore")));
	ck_assert(!api_cold_store_same(json_object_get(a, "coldStore"), json_object_get(c, "coldStore")));
	ck_assert(!api_cold_store_same(json_object_get(a, "coldStore"), NULL));
	ck_assert(api_cold_store_same(NULL, NULL));
	json_decref(a);
	json_decref(b);
	json_decref(c);
}
END_TEST

START_TEST(test_pool_check)
{
	aq_msg msg = { .text = { 0 } };
	json_t *d = NULL;

	pool_ok("{" PREM "}");
	pool_refused("{" PREM ", \"kmsConfig\": \"k\"}", "kmsConfig is not supported");
	pool_refused("{" PREM ", \"ldapEnabled\": true}", "ldapEnabled");
	pool_ok("{" PREM ", \"ldapEnabled\": false}");
	pool_refused("{" PREM ", \"mode\": \"ONTAP\"}", "mode ONTAP");
	pool_ok("{" PREM ", \"mode\": \"DEFAULT\"}");
	pool_refused("{" PREM ", \"type\": \"UNIFIED\"}", "type UNIFIED");
	pool_ok("{" PREM ", \"type\": \"FILE\"}");
	pool_refused("{" PREM ", \"totalThroughputMibps\": \"128\"}", "need customPerformanceEnabled");
	pool_refused("{" PREM ", \"totalIops\": \"1000\"}", "need customPerformanceEnabled");
	pool_refused("{" FLEX ", \"totalThroughputMibps\": \"128\"}", "customPerformanceEnabled");
	pool_refused("{" FLEX ", \"customPerformanceEnabled\": false, \"totalIops\": \"2048\"}",
		     "customPerformanceEnabled");
	pool_ok("{" FLEX ", \"customPerformanceEnabled\": true, \"totalThroughputMibps\": \"64\"}");
	pool_ok("{" FLEX ", \"customPerformanceEnabled\": true, \"totalThroughputMibps\": \"5120\"}");
	pool_refused("{" FLEX ", \"customPerformanceEnabled\": true, \"totalThroughputMibps\": \"63\"}",
		     NULL);
	pool_refused("{" FLEX ", \"customPerformanceEnabled\": true,"
		     " \"totalThroughputMibps\": \"5121\"}",
		     NULL);
	pool_refused("{" PREM ", \"customPerformanceEnabled\": true, \"totalThroughputMibps\": \"128\"}",
		     NULL);
	pool_refused("{" PREM ", \"hotTierSizeGib\": \"1024\"}", "FLEX pools only");
	/* false is the "off" the Terraform provider sends for every pool */
	pool_ok("{" PREM ", \"enableHotTierAutoResize\": false}");
	pool_refused("{" PREM ", \"enableHotTierAutoResize\": true}", "FLEX pools only");
	pool_ok("{" FLEX ", \"hotTierSizeGib\": \"512\", \"enableHotTierAutoResize\": true}");
	/* capacity bounds pass through api_math_check_pool */
	pool_refused("{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"PREMIUM\", \"capacityGib\": \"2047\"}", NULL);
	pool_ok("{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"STANDARD\", \"capacityGib\": \"204800\"}");
	pool_refused("{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"STANDARD\", \"capacityGib\": \"204801\"}", NULL);
	pool_refused("{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"FLEX\", \"capacityGib\": \"1023\"}", NULL);
	pool_refused("{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"FLEX\", \"capacityGib\": \"1024\", \"qosType\": \"MANUAL\"}",
		     NULL);
	pool_refused("{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"STANDARD\", \"capacityGib\": \"2048\","
		     " \"allowAutoTiering\": true}",
		     NULL);

	/* defaults */
	ck_assert_int_eq(pool_check("{" PREM "}", &d, &msg), AQ_OK);
	ck_assert_str_eq(api_json_str(d, "qosType", ""), "AUTO");
	/* network is required (a resource name): kept as given, never defaulted */
	ck_assert_str_eq(api_json_str(d, "network", ""), "projects/vpc-host/global/networks/default");
	json_decref(d);
	ck_assert_int_eq(pool_check("{" PREM ", \"qosType\": \"MANUAL\", \"network\": \"n1\"}", &d,
				    &msg),
			 AQ_OK);
	ck_assert_str_eq(api_json_str(d, "qosType", ""), "MANUAL");
	ck_assert_str_eq(api_json_str(d, "network", ""), "n1");
	json_decref(d);
}
END_TEST

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

START_TEST(test_pool_fill_output)
{
	json_t *d;

	/* Premium 40 TiB AUTO: budget 2560, nothing allocated */
	d = normalised(api_pool_fields, "{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"PREMIUM\", \"capacityGib\": \"40960\"}");
	api_pool_fill_output(&api_math_defaults, d, 0, 0, 0);
	ck_assert_str_eq(api_json_str(d, "totalThroughputMibps", ""), "2560");
	ck_assert(near(api_json_double(d, "availableThroughputMibps", -1), 2560));
	ck_assert_int_eq(json_integer_value(json_object_get(d, "volumeCount")), 0);
	ck_assert_str_eq(api_json_str(d, "volumeCapacityGib", ""), "0");
	ck_assert_str_eq(api_json_str(d, "encryptionType", ""), "SERVICE_MANAGED");
	ck_assert_str_eq(api_json_str(d, "type", ""), "FILE");
	ck_assert_ptr_null(json_object_get(d, "totalIops"));
	json_decref(d);

	/* MANUAL: available = budget - allocated, floored at 0 */
	d = normalised(api_pool_fields, "{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"PREMIUM\", \"capacityGib\": \"40960\","
					" \"qosType\": \"MANUAL\"}");
	api_pool_fill_output(&api_math_defaults, d, 3, 3000, 2000.5);
	ck_assert(near(api_json_double(d, "availableThroughputMibps", -1), 559.5));
	ck_assert_int_eq(json_integer_value(json_object_get(d, "volumeCount")), 3);
	ck_assert_str_eq(api_json_str(d, "volumeCapacityGib", ""), "3000");
	api_pool_fill_output(&api_math_defaults, d, 3, 3000, 2560);
	ck_assert(near(api_json_double(d, "availableThroughputMibps", -1), 0));
	api_pool_fill_output(&api_math_defaults, d, 3, 3000, 9999);
	ck_assert(near(api_json_double(d, "availableThroughputMibps", -1), 0));
	json_decref(d);

	/* FLEX default: 1 TiB -> 16 MiB/s, 1024 IOPS */
	d = normalised(api_pool_fields, "{" FLEX "}");
	api_pool_fill_output(&api_math_defaults, d, 0, 0, 0);
	ck_assert_str_eq(api_json_str(d, "totalThroughputMibps", ""), "16");
	ck_assert_str_eq(api_json_str(d, "totalIops", ""), "1024");
	json_decref(d);
	/* FLEX custom 128 MiB/s -> 2048 IOPS derived */
	d = normalised(api_pool_fields, "{" FLEX ", \"customPerformanceEnabled\": true,"
					" \"totalThroughputMibps\": \"128\"}");
	api_pool_fill_output(&api_math_defaults, d, 0, 0, 0);
	ck_assert_str_eq(api_json_str(d, "totalThroughputMibps", ""), "128");
	ck_assert_str_eq(api_json_str(d, "totalIops", ""), "2048");
	json_decref(d);
}
END_TEST

START_TEST(test_volume_fill_output)
{
	json_t *pool, *vol;

	/* Premium AUTO pool, 1500 GiB volume -> 93.75 MiB/s */
	pool = normalised(api_pool_fields, "{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"PREMIUM\", \"capacityGib\": \"2048\","
					   " \"network\": \"net1\"}");
	vol = normalised(api_volume_fields, "{" VOL_BASE ", " SHARE ", " NFS3 "}");
	api_volume_fill_output(&api_math_defaults, pool, vol);
	ck_assert(near(api_json_double(vol, "throughputMibps", -1), 93.75));
	ck_assert_str_eq(api_json_str(vol, "serviceLevel", ""), "PREMIUM");
	ck_assert_str_eq(api_json_str(vol, "network", ""), "net1");
	ck_assert_str_eq(api_json_str(vol, "encryptionType", ""), "SERVICE_MANAGED");
	json_decref(vol);
	json_decref(pool);

	/* Extreme 4 TiB -> 512; 100 TiB -> 4608 (the cap) */
	pool = normalised(api_pool_fields, "{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"EXTREME\", \"capacityGib\": \"204800\"}");
	vol = normalised(api_volume_fields, "{\"storagePool\": \"p\", \"capacityGib\": \"4096\", " SHARE
					    ", " NFS3 "}");
	api_volume_fill_output(&api_math_defaults, pool, vol);
	ck_assert(near(api_json_double(vol, "throughputMibps", -1), 512));
	json_decref(vol);
	vol = normalised(api_volume_fields, "{\"storagePool\": \"p\", \"capacityGib\": \"102400\", " SHARE
					    ", " NFS3 "}");
	api_volume_fill_output(&api_math_defaults, pool, vol);
	ck_assert(near(api_json_double(vol, "throughputMibps", -1), 4608));
	json_decref(vol);
	json_decref(pool);

	/* MANUAL pool: the volume's own throughputMibps is kept as set */
	pool = normalised(api_pool_fields, "{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"PREMIUM\", \"capacityGib\": \"40960\","
					   " \"qosType\": \"MANUAL\"}");
	vol = normalised(api_volume_fields, "{" VOL_BASE ", " SHARE ", " NFS3
					    ", \"throughputMibps\": 250.5}");
	api_volume_fill_output(&api_math_defaults, pool, vol);
	ck_assert(near(api_json_double(vol, "throughputMibps", -1), 250.5));
	json_decref(vol);
	json_decref(pool);

	/* FLEX: volumes show the pool budget */
	pool = normalised(api_pool_fields, "{\"network\": \"projects/vpc-host/global/networks/default\", \"serviceLevel\": \"FLEX\", \"capacityGib\": \"10240\"}");
	vol = normalised(api_volume_fields, "{\"storagePool\": \"p\", \"capacityGib\": \"1\", " SHARE
					    ", " NFS3 "}");
	api_volume_fill_output(&api_math_defaults, pool, vol);
	ck_assert(near(api_json_double(vol, "throughputMibps", -1), 160));
	ck_assert_str_eq(api_json_str(vol, "serviceLevel", ""), "FLEX");
	json_decref(vol);
	json_decref(pool);
}
END_TEST

/* SmbUser: uid/gid 0-4294967294, the password not empty and without NUL,
 * and no message quotes it. */
START_TEST(test_smb_user_check)
{
	static const struct {
		const char *body, *needle; /* needle NULL: accepted */
	} cases[] = {
		{ "{\"password\": \"s3cr3t\", \"uid\": \"0\", \"gid\": \"4294967294\"}", NULL },
		{ "{\"password\": \"s3cr3t\", \"uid\": \"-1\", \"gid\": \"1\"}", "uid must be 0-4294967294" },
		{ "{\"password\": \"s3cr3t\", \"uid\": \"1\", \"gid\": \"4294967295\"}", "gid must be" },
		{ "{\"password\": \"\", \"uid\": \"1\", \"gid\": \"1\"}", "password must not be empty" },
		{ "{\"password\": \"s3\\u0000cr3t\", \"uid\": \"1\", \"gid\": \"1\"}", "NUL" },
		{ "{\"uid\": \"7\"}", NULL },            /* a patch: what it names */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		aq_msg msg = { .text = { 0 } };
		json_t *d = json_loads(cases[i].body, JSON_ALLOW_NUL, NULL);
		int rc;

		ck_assert_ptr_nonnull(d);
		rc = api_smb_user_check(NULL, d, &msg);
		json_decref(d);
		if (!cases[i].needle) {
			ck_assert_msg(rc == AQ_OK, "%s: rc %d (%s)", cases[i].body, rc, msg.text);
			continue;
		}
		ck_assert_msg(rc == AQ_EINVAL && strstr(msg.text, cases[i].needle), "%s: %d \"%s\"", cases[i].body, rc,
			      msg.text);
		ck_assert(!strstr(msg.text, "s3"));
	}
}
END_TEST

static Suite *resource_suite(void)
{
	Suite *s = suite_create("api_resource");
	TCase *tc = tcase_create("resource");

	tcase_add_test(tc, test_vol_protocols);
	tcase_add_test(tc, test_vol_share_name);
	tcase_add_test(tc, test_vol_unix_permissions);
	tcase_add_test(tc, test_vol_export_rules);
	tcase_add_test(tc, test_vol_tiering_and_defaults);
	tcase_add_test(tc, test_vol_supported);
	tcase_add_test(tc, test_pool_supported);
	tcase_add_test(tc, test_cold_store);
	tcase_add_test(tc, test_pool_check);
	tcase_add_test(tc, test_pool_fill_output);
	tcase_add_test(tc, test_volume_fill_output);
	tcase_add_test(tc, test_smb_user_check);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(resource_suite());
}
