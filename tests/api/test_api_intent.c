/* Unit tests for api/api_intent.c: the intent entries aquiferd sends and
 * agents decode. Every limit of api_intent.h is tried at its boundary and
 * one past it, on both sides (the API conversion and the agent's decoder);
 * an entry survives encode + decode unchanged. */
#include "api/api_intent.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "tests/lib/aqt.h"

#define FSID "0123456789abcdef"

/* n distinct addresses "255.255.1ab.1cd/32" (18 bytes each), comma-separated,
 * with pad spaces spread before the items. Caller frees. */
static char *clients(int n, int pad)
{
	size_t cap = (size_t)n * 20 + (size_t)pad + 1, off = 0;
	char *s = calloc(1, cap);

	ck_assert_ptr_nonnull(s);
	for (int i = 0; i < n; i++) {
		int sp = pad / n + (i < pad % n);

		off += (size_t)snprintf(s + off, cap - off, "%s%*s255.255.%d.%d/32", i ? "," : "", sp, "", 100 + i / 100,
					100 + i % 100);
	}
	return s;
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

START_TEST(test_clients_parse)
{
	static const char *const good[] = { "10.0.0.0/8", "10.0.0.0/0", "10.0.0.0/32", "192.168.1.5",
					    " 10.0.0.1 , 10.0.0.2 ", "255.255.255.255/32" };
	static const char *const bad[] = { "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/8x", "10.0.0.0/", "/8",
					   "1.2.3", "1.2.3.4.5", "256.1.1.1", "", ",", "1.2.3.4,,5.6.7.8",
					   ",1.2.3.4", "host.example", "::1" };
	struct api_intent_net nets[API_INTENT_MAX_CLIENTS];
	aq_msg msg = { .text = { 0 } };
	size_t n = 0;
	char *s;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(api_intent_clients_parse(good[i], "c", nets, &n, &msg) == AQ_OK, "%s: %s", good[i], msg.text);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(api_intent_clients_parse(bad[i], "c", NULL, NULL, &msg) == AQ_EINVAL, "%s accepted", bad[i]);
	ck_assert_int_eq(api_intent_clients_parse("10.0.0.0/33", "c", NULL, NULL, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "c: \"10.0.0.0/33\""), "%s", msg.text);
	/* the nets: masked addresses */
	ck_assert_int_eq(api_intent_clients_parse("10.1.2.3/8, 192.168.1.5, 0.0.0.0/0", "c", nets, &n, &msg), AQ_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(nets[0].addr, 0x0a000000u);
	ck_assert_uint_eq(nets[0].mask, 0xff000000u);
	ck_assert_uint_eq(nets[1].addr, 0xc0a80105u);
	ck_assert_uint_eq(nets[1].mask, 0xffffffffu);
	ck_assert_uint_eq(nets[2].mask, 0);
	/* one item fits 47 bytes with its spaces, not 48 */
	ck_assert_int_eq(api_intent_clients_parse("1.2.3.4/8                                      ", "c", NULL, NULL, &msg), AQ_OK);
	ck_assert_int_eq(api_intent_clients_parse("1.2.3.4/8                                       ", "c", NULL, NULL, &msg),
			 AQ_EINVAL);
	/* entries: the limit passes, one more does not */
	s = clients(API_INTENT_MAX_CLIENTS, 0);
	ck_assert_int_eq(api_intent_clients_parse(s, "c", nets, &n, &msg), AQ_OK);
	ck_assert_uint_eq(n, API_INTENT_MAX_CLIENTS);
	free(s);
	s = clients(API_INTENT_MAX_CLIENTS + 1, 0);
	ck_assert_int_eq(api_intent_clients_parse(s, "c", nets, &n, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "more than 32 addresses"), "%s", msg.text);
	free(s);
	/* bytes: the most entries padded to exactly the limit, then one byte more */
	s = clients(API_INTENT_MAX_CLIENTS, API_INTENT_CLIENTS_LEN - (API_INTENT_MAX_CLIENTS * 19 - 1));
	ck_assert_uint_eq(strlen(s), API_INTENT_CLIENTS_LEN);
	ck_assert_int_eq(api_intent_clients_parse(s, "c", NULL, NULL, &msg), AQ_OK);
	free(s);
	s = clients(API_INTENT_MAX_CLIENTS, API_INTENT_CLIENTS_LEN - (API_INTENT_MAX_CLIENTS * 19 - 1) + 1);
	ck_assert_int_eq(api_intent_clients_parse(s, "c", NULL, NULL, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "at most 640"), "%s", msg.text);
	free(s);
}
END_TEST

START_TEST(test_share_check)
{
	aq_msg msg = { .text = { 0 } };
	char *s = repeat('a', API_INTENT_SHARE_LEN);

	ck_assert_int_eq(api_intent_share_check(s, &msg), AQ_OK);
	free(s);
	s = repeat('a', API_INTENT_SHARE_LEN + 1);
	ck_assert_int_eq(api_intent_share_check(s, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "1-63"), "%s", msg.text);
	free(s);
	ck_assert_int_eq(api_intent_share_check("", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_intent_share_check("a/b", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_intent_share_check("Ab_9-z", &msg), AQ_OK);
}
END_TEST

/* A normalised API volume with nrules rules of nclients addresses each. */
static json_t *api_vol(int nrules, int nclients)
{
	json_t *rules = json_array(), *vol;
	char *c = clients(nclients, 0);

	for (int i = 0; i < nrules; i++)
		json_array_append_new(rules, json_pack("{s:s,s:s}", "allowedClients", c, "accessType",
						       i % 2 ? "READ_ONLY" : "READ_WRITE"));
	free(c);
	vol = json_pack("{s:s,s:s,s:s,s:s,s:f,s:{s:o}}", "name", "projects/p/locations/l/volumes/v", "shareName", "v",
			"storagePool", "pool", "capacityGib", "100", "throughputMibps", 6.25, "exportPolicy", "rules",
			rules);
	ck_assert_ptr_nonnull(vol);
	return vol;
}

START_TEST(test_rule_from_api)
{
	struct api_intent_rule r;
	aq_msg msg = { .text = { 0 } };
	json_t *in;

	/* defaults: READ_WRITE, no squash, 65534, every protocol */
	in = json_pack("{s:s}", "allowedClients", "10.0.0.0/8");
	ck_assert_int_eq(api_intent_rule_from_api(in, 0, &r, &msg), AQ_OK);
	ck_assert_str_eq(r.clients, "10.0.0.0/8");
	ck_assert_int_eq(r.access, API_INTENT_READ_WRITE);
	ck_assert_int_eq(r.squash, API_INTENT_NO_ROOT_SQUASH);
	ck_assert_uint_eq(r.anon_uid, API_INTENT_ANON_UID);
	ck_assert(r.nfsv3 && r.nfsv4);
	json_decref(in);
	/* hasRootAccess "false" means ROOT_SQUASH; nfsv3 false is carried */
	in = json_pack("{s:s,s:s,s:b,s:s}", "allowedClients", "1.2.3.4", "hasRootAccess", "false", "nfsv3", 0,
		       "accessType", "READ_ONLY");
	ck_assert_int_eq(api_intent_rule_from_api(in, 0, &r, &msg), AQ_OK);
	ck_assert_int_eq(r.squash, API_INTENT_ROOT_SQUASH);
	ck_assert_int_eq(r.access, API_INTENT_READ_ONLY);
	ck_assert(!r.nfsv3 && r.nfsv4);
	json_decref(in);
	/* squashMode wins over hasRootAccess; anonUid is needed with it */
	in = json_pack("{s:s,s:s,s:s,s:s}", "allowedClients", "1.2.3.4", "hasRootAccess", "true", "squashMode",
		       "ALL_SQUASH", "anonUid", "77");
	ck_assert_int_eq(api_intent_rule_from_api(in, 3, &r, &msg), AQ_OK);
	ck_assert_int_eq(r.squash, API_INTENT_ALL_SQUASH);
	ck_assert_uint_eq(r.anon_uid, 77);
	json_object_del(in, "anonUid");
	ck_assert_int_eq(api_intent_rule_from_api(in, 3, &r, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "rules[3].anonUid is required"), "%s", msg.text);
	json_decref(in);
	in = json_pack("{s:s}", "accessType", "READ_WRITE");
	ck_assert_int_eq(api_intent_rule_from_api(in, 2, &r, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "rules[2].allowedClients is required"), "%s", msg.text);
	json_decref(in);
}
END_TEST

START_TEST(test_volume_from_api_limits)
{
	struct api_intent_volume *v = malloc(sizeof(*v));
	aq_msg msg = { .text = { 0 } };
	json_t *vol;

	/* rules: the limit, each at its client limit, passes; one more rule does not */
	vol = api_vol(API_INTENT_MAX_RULES, API_INTENT_MAX_CLIENTS);
	ck_assert_msg(api_intent_volume_from_api(vol, NULL, &api_math_defaults, FSID, "volumes/" FSID, v, &msg) == AQ_OK,
		      "%s", msg.text);
	ck_assert_uint_eq(v->nrules, API_INTENT_MAX_RULES);
	ck_assert_uint_eq(v->capacity_bytes, 100ull << 30);
	ck_assert_str_eq(v->unix_permissions, API_INTENT_UNIX_PERMS);
	ck_assert(v->qos.mibps == 6.25);
	ck_assert_int_eq(v->tiering.action, API_INTENT_TIER_OFF);
	json_decref(vol);
	vol = api_vol(API_INTENT_MAX_RULES + 1, 1);
	ck_assert_int_eq(api_intent_volume_from_api(vol, NULL, &api_math_defaults, FSID, "d", v, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "at most 20"), "%s", msg.text);
	json_decref(vol);
	vol = api_vol(1, API_INTENT_MAX_CLIENTS + 1);
	ck_assert_int_eq(api_intent_volume_from_api(vol, NULL, &api_math_defaults, FSID, "d", v, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "exportPolicy.rules[0].allowedClients lists more than 32"), "%s", msg.text);
	json_decref(vol);
	/* the API refuses the same volume, with the same message */
	vol = api_vol(1, API_INTENT_MAX_CLIENTS + 1);
	json_object_set_new(vol, "protocols", json_pack("[s]", "NFSV3"));
	ck_assert_int_eq(api_volume_check(&api_math_defaults, vol, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "lists more than 32"), "%s", msg.text);
	json_decref(vol);
	free(v);
}
END_TEST

START_TEST(test_volume_from_api_qos_tiering)
{
	struct api_intent_volume *v = malloc(sizeof(*v));
	aq_msg msg = { .text = { 0 } };
	json_t *vol = api_vol(1, 1);
	json_t *flex = json_pack("{s:s,s:s,s:s}", "name", "projects/p/locations/l/storagePools/f", "serviceLevel",
				 "FLEX", "capacityGib", "2048");
	json_t *prem = json_pack("{s:s,s:s,s:s}", "name", "projects/p/locations/l/storagePools/p", "serviceLevel",
				 "PREMIUM", "capacityGib", "2048");

	json_object_set_new(vol, "tieringPolicy", json_pack("{s:s}", "tierAction", "ENABLED"));
	json_object_set_new(vol, "unixPermissions", json_string("0755"));
	ck_assert_int_eq(api_intent_volume_from_api(vol, flex, &api_math_defaults, FSID, "d", v, &msg), AQ_OK);
	ck_assert_str_eq(v->qos.shared_pool, "projects/p/locations/l/storagePools/f");
	ck_assert(v->qos.shared_mibps == 32); /* 16 MiB/s per TiB of pool */
	ck_assert_int_gt(v->qos.shared_iops, 0);
	ck_assert_int_eq(v->tiering.action, API_INTENT_TIER_ENABLED);
	ck_assert_int_eq(v->tiering.cooling_days, api_math_defaults.tiering_default_days);
	ck_assert_int_eq(v->tiering.retrieval, API_INTENT_RET_DEFAULT);
	ck_assert_str_eq(v->unix_permissions, "0755");
	ck_assert_int_eq(api_intent_volume_from_api(vol, prem, &api_math_defaults, FSID, "d", v, &msg), AQ_OK);
	ck_assert_str_eq(v->qos.shared_pool, "");
	json_decref(vol);
	json_decref(flex);
	json_decref(prem);
	free(v);
}
END_TEST

/* A volume at every limit, encoded. */
static json_t *full_entry(struct api_intent_volume *v)
{
	aq_msg msg = { .text = { 0 } };
	json_t *vol = api_vol(API_INTENT_MAX_RULES, API_INTENT_MAX_CLIENTS), *flex, *e;
	char *share = repeat('s', API_INTENT_SHARE_LEN);

	json_object_set_new(vol, "shareName", json_string(share));
	json_object_set_new(vol, "tieringPolicy", json_pack("{s:s,s:i,s:b,s:s}", "tierAction", "PAUSED",
							    "coolingThresholdDays", 7, "hotTierBypassModeEnabled", 1,
							    "retrievalPolicy", "NEVER"));
	json_object_set_new(json_array_get(json_object_get(json_object_get(vol, "exportPolicy"), "rules"), 1),
			    "nfsv3", json_false());
	json_object_set_new(vol, "readAhead", json_pack("{s:s,s:i}", "mode", "CROSS_FILE_SEQUENTIAL", "depthFiles",
							API_READ_AHEAD_MAX_DEPTH));
	flex = json_pack("{s:s,s:s,s:s}", "name", "pools/f", "serviceLevel", "FLEX", "capacityGib", "1024");
	ck_assert_int_eq(api_intent_volume_from_api(vol, flex, &api_math_defaults, FSID, "volumes/" FSID, v, &msg), AQ_OK);
	e = api_intent_volume_encode(v);
	ck_assert_ptr_nonnull(e);
	json_decref(vol);
	json_decref(flex);
	free(share);
	return e;
}

START_TEST(test_round_trip)
{
	struct api_intent_volume *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct api_intent_delete d = { .name = "projects/p/locations/l/volumes/gone", .fsid = FSID, .dir = "volumes/" FSID },
				 d2;
	aq_msg msg = { .text = { 0 } };
	json_t *e = full_entry(a), *de;

	ck_assert_msg(api_intent_volume_decode(e, b, &msg) == AQ_OK, "%s", msg.text);
	ck_assert(memcmp(a, b, sizeof(*a)) == 0);
	ck_assert(!b->rules[1].nfsv3 && b->rules[1].nfsv4 && b->rules[0].nfsv3);
	ck_assert_int_eq(b->rules[1].access, API_INTENT_READ_ONLY);
	ck_assert_int_eq(b->tiering.retrieval, API_INTENT_RET_NEVER);
	ck_assert(b->tiering.bypass);
	ck_assert_int_eq(b->read_ahead.mode, API_INTENT_RA_CROSS_FILE);
	ck_assert_int_eq(b->read_ahead.depth_files, API_READ_AHEAD_MAX_DEPTH);
	json_decref(e);
	de = api_intent_delete_encode(&d);
	ck_assert_int_eq(api_intent_delete_decode(de, &d2, &msg), AQ_OK);
	ck_assert(memcmp(&d, &d2, sizeof(d)) == 0);
	json_object_set_new(de, "fsid", json_string("xyz"));
	ck_assert_int_eq(api_intent_delete_decode(de, &d2, &msg), AQ_EINVAL);
	json_object_set_new(de, "fsid", json_string(FSID));
	json_object_set_new(de, "dir", json_string("volumes/../x"));
	ck_assert_int_eq(api_intent_delete_decode(de, &d2, &msg), AQ_EINVAL);
	json_decref(de);
	free(a);
	free(b);
}
END_TEST

/* decode(entry with key set to value) is refused naming needle (or passes
 * when needle is NULL). key may be "exportRules[0].x" or "qos.x" or "tieringPolicy.x". */
static void decode_with(const char *key, json_t *value, const char *needle)
{
	struct api_intent_volume *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	aq_msg msg = { .text = { 0 } };
	json_t *e = full_entry(a), *obj = e;
	const char *k = key;
	int rc;

	if (strncmp(key, "exportRules[0].", 15) == 0) {
		obj = json_array_get(json_object_get(e, "exportRules"), 0);
		k = key + 15;
	} else if (strncmp(key, "qos.", 4) == 0) {
		obj = json_object_get(e, "qos");
		k = key + 4;
	} else if (strncmp(key, "tieringPolicy.", 14) == 0) {
		obj = json_object_get(e, "tieringPolicy");
		k = key + 14;
	} else if (strncmp(key, "readAhead.", 10) == 0) {
		obj = json_object_get(e, "readAhead");
		k = key + 10;
	}
	if (value)
		json_object_set_new(obj, k, value);
	else
		json_object_del(obj, k);
	rc = api_intent_volume_decode(e, b, &msg);
	if (needle) {
		ck_assert_msg(rc == AQ_EINVAL, "%s: accepted", key);
		ck_assert_msg(strstr(msg.text, needle), "%s: \"%s\" lacks \"%s\"", key, msg.text, needle);
	} else {
		ck_assert_msg(rc == AQ_OK, "%s: %s", key, msg.text);
	}
	json_decref(e);
	free(a);
	free(b);
}

START_TEST(test_decode_limits)
{
	char *s;
	json_t *rules;

	/* rules: 20 pass (full_entry), 21 do not */
	{
		struct api_intent_volume *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
		aq_msg msg = { .text = { 0 } };
		json_t *e = full_entry(a);

		rules = json_object_get(e, "exportRules");
		json_array_append(rules, json_array_get(rules, 0));
		ck_assert_int_eq(api_intent_volume_decode(e, b, &msg), AQ_EINVAL);
		ck_assert_msg(strstr(msg.text, "21 export rules; at most 20"), "%s", msg.text);
		json_array_remove(rules, 20);
		ck_assert_int_eq(api_intent_volume_decode(e, b, &msg), AQ_OK);
		json_decref(e);
		free(a);
		free(b);
	}
	/* allowedClients: entries and bytes */
	decode_with("exportRules[0].allowedClients", json_string(s = clients(API_INTENT_MAX_CLIENTS + 1, 0)),
		    "exportRules[0].allowedClients lists more than 32");
	free(s);
	s = clients(API_INTENT_MAX_CLIENTS, API_INTENT_CLIENTS_LEN - (API_INTENT_MAX_CLIENTS * 19 - 1));
	decode_with("exportRules[0].allowedClients", json_string(s), NULL);
	free(s);
	s = clients(API_INTENT_MAX_CLIENTS, API_INTENT_CLIENTS_LEN - (API_INTENT_MAX_CLIENTS * 19 - 1) + 1);
	decode_with("exportRules[0].allowedClients", json_string(s), "at most 640 are allowed");
	free(s);
	decode_with("exportRules[0].allowedClients", json_string("10.0.0.0/33"), "not an IPv4");
	decode_with("exportRules[0].allowedClients", NULL, "allowedClients is required");
	decode_with("exportRules[0].accessType", json_string("ALL"), "accessType");
	decode_with("exportRules[0].squashMode", json_string("SOME"), "squashMode");
	decode_with("exportRules[0].anonUid", json_integer(4294967295LL), NULL);
	decode_with("exportRules[0].anonUid", json_integer(4294967296LL), "anonUid");
	decode_with("exportRules[0].anonUid", json_integer(-1), "anonUid");
	decode_with("exportRules[0].nfsv3", json_string("no"), "nfsv3");
	decode_with("exportRules[0].nfsv3", NULL, NULL); /* an older aquiferd: every protocol */
	/* names and paths */
	decode_with("shareName", json_string(s = repeat('s', API_INTENT_SHARE_LEN + 1)), "shareName must be 1-63");
	free(s);
	decode_with("shareName", json_string("a/b"), "shareName");
	decode_with("name", json_string(s = repeat('n', API_INTENT_NAME_LEN)), NULL);
	free(s);
	decode_with("name", json_string(s = repeat('n', API_INTENT_NAME_LEN + 1)), "no name");
	free(s);
	decode_with("name", NULL, "no name");
	decode_with("dir", json_string(s = repeat('d', API_INTENT_DIR_LEN)), NULL);
	free(s);
	decode_with("dir", json_string(s = repeat('d', API_INTENT_DIR_LEN + 1)), "dir must be");
	free(s);
	decode_with("dir", json_string("volumes/../../etc"), "dir must be");
	decode_with("fsid", json_string("0123456789abcde"), "fsid must be 16 hex digits");
	decode_with("fsid", json_string("0123456789abcdeg"), "fsid");
	decode_with("fsid", json_string("0123456789ABCDEF"), NULL);
	decode_with("capacityBytes", json_integer(-1), "capacityBytes");
	decode_with("capacityBytes", json_string("100"), "capacityBytes");
	decode_with("unixPermissions", json_string("8888"), "unixPermissions");
	decode_with("unixPermissions", json_string("01777"), "unixPermissions");
	decode_with("unixPermissions", NULL, NULL);
	decode_with("exportRules", json_string("x"), "exportRules must be an array");
	/* QoS and tiering */
	decode_with("qos.mibps", json_real(API_INTENT_MAX_MIBPS), NULL);
	decode_with("qos.mibps", json_real(API_INTENT_MAX_MIBPS * 1.5), "bad qos");
	decode_with("qos.iops", json_integer(-1), "bad qos");
	decode_with("qos.sharedPool", json_string(s = repeat('p', API_INTENT_POOL_LEN)), NULL);
	free(s);
	decode_with("qos.sharedPool", json_string(s = repeat('p', API_INTENT_POOL_LEN + 1)), "bad qos");
	free(s);
	decode_with("qos", NULL, NULL);
	decode_with("tieringPolicy.coolingThresholdDays", json_integer(100000), NULL);
	decode_with("tieringPolicy.coolingThresholdDays", json_integer(100001), "bad tieringPolicy");
	decode_with("tieringPolicy.tierAction", json_string("ON"), "bad tieringPolicy");
	decode_with("tieringPolicy.retrievalPolicy", json_string("LATER"), "bad tieringPolicy");
	decode_with("tieringPolicy", NULL, NULL);
}
END_TEST


/* The snapshot fields survive a round trip; each bad input is refused with a
 * message naming the field. */
START_TEST(test_snapset)
{
	struct api_intent_snapset *a = calloc(1, sizeof(*a)), *b = malloc(sizeof(*b));
	struct api_intent_snap_state st = { .snap = { "hourly-1", "00000000000000aa" }, .ready = true,
					    .detail = "ok", .create_unix = 1700000000, .used_bytes = 4096 }, st2;
	aq_msg msg = { .text = { 0 } };
	json_t *e = json_pack("{s:s}", "name", "projects/p/locations/l/volumes/v"), *x;

	a->directory = true;
	a->nsnaps = API_INTENT_MAX_SNAPSHOTS;
	for (size_t i = 0; i < a->nsnaps; i++) {
		snprintf(a->snaps[i].id, sizeof(a->snaps[i].id), "s%zu", i);
		snprintf(a->snaps[i].uid, sizeof(a->snaps[i].uid), "%016zx", i + 1);
	}
	a->ndeletes = 1;
	snprintf(a->deletes[0].id, sizeof(a->deletes[0].id), "old");
	snprintf(a->deletes[0].uid, sizeof(a->deletes[0].uid), "ffffffffffffffff");
	a->revert_seq = 7;
	a->revert = a->snaps[3];
	a->clone = true;
	snprintf(a->clone_dir, sizeof(a->clone_dir), "volumes/0123456789abcdef");
	a->clone_snap = a->snaps[0];
	ck_assert_int_eq(api_intent_snapset_encode(a, e), AQ_OK);
	ck_assert_msg(api_intent_snapset_decode(e, b, &msg) == AQ_OK, "%s", msg.text);
	ck_assert(memcmp(a, b, sizeof(*a)) == 0);

	/* 256 snapshots are one too many */
	x = json_deep_copy(e);
	json_array_append_new(json_object_get(x, "snapshots"), json_pack("{s:s,s:s}", "id", "one-more", "uid",
									 "0000000000000fff"));
	ck_assert_int_eq(api_intent_snapset_decode(x, b, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "at most 255"));
	json_decref(x);
	/* ids that could leave the folder, bad uids, a twin, wanted and deleted */
	const char *bad[][2] = { { "../x", "0000000000000001" }, { ".snap", "0000000000000001" },
				 { "ok", "xyz" }, { "s1", "0000000000000099" } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		x = json_deep_copy(e);
		json_array_set_new(json_object_get(x, "snapshots"), 0, json_pack("{s:s,s:s}", "id", bad[i][0], "uid", bad[i][1]));
		ck_assert_msg(api_intent_snapset_decode(x, b, &msg) == AQ_EINVAL, "accepted %s", bad[i][0]);
		ck_assert_ptr_nonnull(strstr(msg.text, "snapshots"));
		json_decref(x);
	}
	x = json_deep_copy(e);
	json_array_set_new(json_object_get(x, "snapshotDeletes"), 0, json_pack("{s:s,s:s}", "id", "s2", "uid",
									       "0000000000000003"));
	ck_assert_int_eq(api_intent_snapset_decode(x, b, &msg), AQ_EINVAL);
	json_object_set_new(x, "snapshotDeletes", json_array());
	json_object_set_new(json_object_get(x, "revert"), "seq", json_integer(0));
	ck_assert_int_eq(api_intent_snapset_decode(x, b, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "revert.seq"));
	json_object_del(x, "revert");
	json_object_set_new(json_object_get(x, "cloneSource"), "dir", json_string("volumes/../other"));
	ck_assert_int_eq(api_intent_snapset_decode(x, b, &msg), AQ_EINVAL);
	json_decref(x);
	/* absent = none */
	x = json_pack("{s:s}", "name", "v");
	ck_assert_int_eq(api_intent_snapset_decode(x, b, &msg), AQ_OK);
	ck_assert(!b->directory && !b->nsnaps && !b->ndeletes && !b->revert_seq && !b->clone);
	json_decref(x);

	x = api_intent_snap_state_encode(&st);
	ck_assert_int_eq(api_intent_snap_state_decode(x, &st2, &msg), AQ_OK);
	/* field by field: st's padding is not initialised */
	ck_assert_str_eq(st2.snap.id, st.snap.id);
	ck_assert_str_eq(st2.snap.uid, st.snap.uid);
	ck_assert_str_eq(st2.detail, st.detail);
	ck_assert(st2.ready && st2.create_unix == st.create_unix && st2.used_bytes == st.used_bytes);
	json_object_set_new(x, "state", json_string("CREATING"));
	ck_assert_int_eq(api_intent_snap_state_decode(x, &st2, &msg), AQ_EINVAL);
	json_decref(x);
	json_decref(e);
	free(a);
	free(b);
}
END_TEST

/* protocols, smbSettings and securityStyle travel as sets; SMB users keep
 * only the NT hash, and every field is checked. */
START_TEST(test_smb_fields)
{
	struct api_intent_volume *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct api_intent_smb_user u = { .project = "p1", .name = "Alice.B", .nt_hash = "8846f7eaee8fb117ad06bdd830b7586c",
					 .uid = 1000, .gid = 100 }, u2;
	aq_msg msg = { .text = { 0 } };
	json_t *e = full_entry(a), *x;

	ck_assert_int_eq(a->protocols, API_INTENT_NFSV3); /* full_entry's volume has no protocols: NFSV3 */
	ck_assert_int_eq(a->security, API_INTENT_SEC_UNIX);
	json_object_set_new(e, "protocols", json_pack("[s,s]", "SMB", "NFSV3"));
	json_object_set_new(e, "smbSettings", json_pack("[s,s]", "ENCRYPT_DATA", "ACCESS_BASED_ENUMERATION"));
	json_object_set_new(e, "securityStyle", json_string("NTFS"));
	ck_assert_msg(api_intent_volume_decode(e, b, &msg) == AQ_OK, "%s", msg.text);
	ck_assert_int_eq(b->protocols, API_INTENT_NFSV3 | API_INTENT_SMB);
	ck_assert_int_eq(b->smb_settings, API_INTENT_SMB_ENCRYPT_DATA | API_INTENT_SMB_ACCESS_BASED_ENUMERATION);
	ck_assert_int_eq(b->security, API_INTENT_SEC_NTFS);
	x = api_intent_volume_encode(b);
	ck_assert_int_eq(api_intent_volume_decode(x, a, &msg), AQ_OK);
	ck_assert(memcmp(a, b, sizeof(*a)) == 0);
	json_decref(x);
	json_object_set_new(e, "protocols", json_pack("[s]", "ISCSI"));
	ck_assert_int_eq(api_intent_volume_decode(e, b, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "protocols"));
	json_object_set_new(e, "protocols", json_array());
	ck_assert_int_eq(api_intent_volume_decode(e, b, &msg), AQ_EINVAL);
	json_object_set_new(e, "protocols", json_pack("[s]", "SMB"));
	json_object_set_new(e, "smbSettings", json_pack("[s]", "TURBO"));
	ck_assert_int_eq(api_intent_volume_decode(e, b, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "smbSettings"));
	json_object_set_new(e, "smbSettings", json_array());
	json_object_set_new(e, "securityStyle", json_string("MIXED"));
	ck_assert_int_eq(api_intent_volume_decode(e, b, &msg), AQ_EINVAL);
	json_decref(e);

	x = api_intent_smb_user_encode(&u);
	ck_assert_int_eq(api_intent_smb_user_decode(x, &u2, &msg), AQ_OK);
	/* field by field: u's padding is not initialised */
	ck_assert_str_eq(u2.project, u.project);
	ck_assert_str_eq(u2.name, u.name);
	ck_assert_str_eq(u2.nt_hash, u.nt_hash);
	ck_assert(u2.uid == u.uid && u2.gid == u.gid);
	json_object_set_new(x, "ntHash", json_string("8846f7eaee8fb117ad06bdd830b7586")); /* 31 digits */
	ck_assert_int_eq(api_intent_smb_user_decode(x, &u2, &msg), AQ_EINVAL);
	json_object_set_new(x, "ntHash", json_string("g846f7eaee8fb117ad06bdd830b7586c"));
	ck_assert_int_eq(api_intent_smb_user_decode(x, &u2, &msg), AQ_EINVAL);
	json_object_set_new(x, "ntHash", json_string(u.nt_hash));
	json_object_del(x, "uid");
	ck_assert_int_eq(api_intent_smb_user_decode(x, &u2, &msg), AQ_EINVAL);
	json_object_set_new(x, "uid", json_integer(1000));
	json_object_set_new(x, "project", json_string("../p"));
	ck_assert_int_eq(api_intent_smb_user_decode(x, &u2, &msg), AQ_EINVAL);
	json_decref(x);
	ck_assert_int_eq(api_intent_smb_user_name_check("bob", "n", &msg), AQ_OK);
	ck_assert_int_eq(api_intent_smb_user_name_check("DOMAIN\\bob", "n", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_intent_smb_user_name_check("-bob", "n", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_intent_smb_user_name_check("", "n", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_intent_smb_user_name_check("b23456789012345678901234567890123456789012345678901234567890123x",
							"n", &msg), AQ_OK); /* 64 */
	ck_assert_int_eq(api_intent_smb_user_name_check("b234567890123456789012345678901234567890123456789012345678901234x",
							"n", &msg), AQ_EINVAL); /* 65 */
	free(a);
	free(b);
}
END_TEST
/* readAhead (issue 23): the API check fills the default depth, refuses each
 * bad value naming the field; the agent's decoder holds the same limits; an
 * entry without it (an older control plane) is NONE. */
static void ra_check(const char *mode, int depth, const char *needle)
{
	aq_msg msg = { .text = { 0 } };
	json_t *ra = mode ? json_pack("{s:s}", "mode", mode) : json_object();
	int rc;

	if (depth >= 0)
		json_object_set_new(ra, "depthFiles", json_integer(depth));
	rc = api_intent_read_ahead_check(ra, &msg);
	if (needle) {
		ck_assert_msg(rc == AQ_EINVAL, "%s/%d accepted", mode ? mode : "-", depth);
		ck_assert_msg(strstr(msg.text, needle), "\"%s\" lacks \"%s\"", msg.text, needle);
	} else {
		ck_assert_msg(rc == AQ_OK, "%s", msg.text);
	}
	json_decref(ra);
}

START_TEST(test_read_ahead)
{
	struct api_intent_volume *v = malloc(sizeof(*v));
	aq_msg msg = { .text = { 0 } };
	json_t *ra = json_pack("{s:s}", "mode", "CROSS_FILE_SEQUENTIAL"), *vol = api_vol(1, 1), *e;

	ck_assert_int_eq(api_intent_read_ahead_check(ra, &msg), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(ra, "depthFiles")), API_READ_AHEAD_DEPTH);
	ck_assert_int_eq(api_intent_read_ahead_check(NULL, &msg), AQ_OK);
	ra_check("CROSS_FILE_SEQUENTIAL", 1, NULL);
	ra_check("CROSS_FILE_SEQUENTIAL", API_READ_AHEAD_MAX_DEPTH, NULL);
	ra_check("CROSS_FILE_SEQUENTIAL", 0, "readAhead.depthFiles must be a whole number 1..16");
	ra_check("CROSS_FILE_SEQUENTIAL", API_READ_AHEAD_MAX_DEPTH + 1, "readAhead.depthFiles must be");
	ra_check("AGGRESSIVE", -1, NULL);
	ra_check("NONE", -1, NULL);
	ra_check("AGGRESSIVE", 4, "readAhead.depthFiles applies to mode CROSS_FILE_SEQUENTIAL only");
	ra_check("SIDEWAYS", -1, "readAhead.mode must be");
	ra_check(NULL, 4, "readAhead.mode is required");
	/* API -> intent: AGGRESSIVE carries no depth; absent is NONE */
	ck_assert_int_eq(api_intent_volume_from_api(vol, NULL, &api_math_defaults, FSID, "d", v, &msg), AQ_OK);
	ck_assert_int_eq(v->read_ahead.mode, API_INTENT_RA_NONE);
	e = api_intent_volume_encode(v);
	ck_assert_ptr_null(json_object_get(e, "readAhead"));
	json_decref(e);
	json_object_set_new(vol, "readAhead", json_pack("{s:s}", "mode", "AGGRESSIVE"));
	ck_assert_int_eq(api_intent_volume_from_api(vol, NULL, &api_math_defaults, FSID, "d", v, &msg), AQ_OK);
	ck_assert_int_eq(v->read_ahead.mode, API_INTENT_RA_AGGRESSIVE);
	ck_assert_int_eq(v->read_ahead.depth_files, 0);
	e = api_intent_volume_encode(v);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "readAhead"), "mode")), "AGGRESSIVE");
	json_decref(e);
	/* the agent's decoder */
	decode_with("readAhead.depthFiles", json_integer(0), "readAhead.depthFiles");
	decode_with("readAhead.depthFiles", json_integer(API_READ_AHEAD_MAX_DEPTH + 1), "readAhead.depthFiles");
	decode_with("readAhead.depthFiles", json_string("4"), "readAhead.depthFiles");
	decode_with("readAhead.mode", json_string("cross_file_sequential"), "readAhead.mode");
	decode_with("readAhead.mode", NULL, "readAhead.mode is required");
	decode_with("readAhead", json_string("ON"), "readAhead.mode");
	decode_with("readAhead", NULL, NULL);
	decode_with("readAhead.depthFiles", json_integer(1), NULL);
	json_decref(ra);
	json_decref(vol);
	free(v);
}
END_TEST

/* The timeout of a push or status report grows with the volumes it names
 * (issue 22: a fixed 5 s timed out a node's 10,000-volume intent and
 * reports), from the contract's base, bounded by its cap. */
START_TEST(test_agent_call_ms)
{
	ck_assert_int_eq(api_agent_call_ms(0), API_AGENT_CALL_MS);
	ck_assert_int_eq(api_agent_call_ms(1000), API_AGENT_CALL_MS + 1000 * API_AGENT_CALL_PER_VOLUME_US / 1000);
	ck_assert_int_gt(api_agent_call_ms(11000), api_agent_call_ms(1000));
	ck_assert_int_ge(api_agent_call_ms(11000), 20000); /* an 11,000-volume node: seconds, not 5 */
	ck_assert_int_eq(api_agent_call_ms(1000000), API_AGENT_CALL_MAX_MS);
	ck_assert_int_eq(api_agent_call_ms((size_t)-1), API_AGENT_CALL_MAX_MS); /* no overflow */
}
END_TEST

static Suite *intent_suite(void)
{
	Suite *s = suite_create("api_intent");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_clients_parse);
	tcase_add_test(tc, test_share_check);
	tcase_add_test(tc, test_rule_from_api);
	tcase_add_test(tc, test_volume_from_api_limits);
	tcase_add_test(tc, test_volume_from_api_qos_tiering);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_decode_limits);
	tcase_add_test(tc, test_snapset);
	tcase_add_test(tc, test_smb_fields);
	tcase_add_test(tc, test_read_ahead);
	tcase_add_test(tc, test_agent_call_ms);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(intent_suite());
}
