/* api_intent: a node's intent entries, from the API documents to JSON and
 * back, with the limits of api_intent.h (see there for the contract). */
#include "api/api_intent.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/api_intent_backup.h"
#include "api/api_resource.h"

static const char *const intent_access[] = { "READ_NONE", "READ_ONLY", "READ_WRITE", NULL };
static const char *const intent_squash[] = { "NO_ROOT_SQUASH", "ROOT_SQUASH", "ALL_SQUASH", NULL };
static const char *const intent_tier[] = { "", "ENABLED", "PAUSED", NULL };
static const char *const intent_retrieval[] = { "DEFAULT", "ON_READ", "NEVER", NULL };
/* Bit i of the sets is name i. */
static const char *const intent_protos[] = { "NFSV3", "NFSV4", "SMB", NULL };
static const char *const intent_smb[] = { "ENCRYPT_DATA", "BROWSABLE", "CHANGE_NOTIFY", "NON_BROWSABLE", "OPLOCKS",
					  "SHOW_SNAPSHOT", "SHOW_PREVIOUS_VERSIONS", "ACCESS_BASED_ENUMERATION",
					  "CONTINUOUSLY_AVAILABLE", NULL };
static const char *const intent_security[] = { "UNIX", "NTFS", NULL };
/* enum api_intent_ra_mode's names (the API's readAhead.mode) */
static const char *const intent_ra_modes[] = { "NONE", "AGGRESSIVE", "CROSS_FILE_SEQUENTIAL", NULL };

#define INTENT_MAX_DAYS 100000 /* a sanity bound: the API's range is configuration */

static int name_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* A field, with an explicit JSON null counting as absent. */
static const json_t *field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

/* A list of names as a set of bits (bit i: names[i]); absent gives dflt.
 * AQ_EINVAL on anything but an array of known names. */
static int names_to_bits(const json_t *a, const char *const *names, unsigned dflt, unsigned *out)
{
	const json_t *v;
	size_t i;
	int k;

	*out = a ? 0 : dflt;
	if (a && !json_is_array(a))
		return AQ_EINVAL;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || (k = name_index(names, json_string_value(v))) < 0)
			return AQ_EINVAL;
		*out |= 1u << k;
	}
	return AQ_OK;
}

static json_t *bits_to_names(unsigned bits, const char *const *names)
{
	json_t *a = json_array();

	for (int i = 0; a && names[i]; i++)
		if (bits & 1u << i)
			json_array_append_new(a, json_string(names[i]));
	return a;
}

/* "volume NAME: " + the formatted text. */
static int vol_fail(aq_msg *msg, const char *vname, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int vol_fail(aq_msg *msg, const char *vname, const char *fmt, ...)
{
	char text[sizeof(msg->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return aq_fail(msg, AQ_EINVAL, "volume %.200s: %s", *vname ? vname : "(unnamed)", text);
}

int api_intent_share_check(const char *share, aq_msg *msg)
{
	if (!*share || strlen(share) > API_INTENT_SHARE_LEN)
		return aq_fail(msg, AQ_EINVAL, "shareName must be 1-%d characters", API_INTENT_SHARE_LEN);
	for (const char *c = share; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_'))
			return aq_fail(msg, AQ_EINVAL, "shareName \"%.64s\" may contain only letters, digits, '-' and '_'", share);
	return AQ_OK;
}

static bool perms_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 3 && n <= 4 && strspn(s, "01234567") == n;
}

int api_intent_rule_from_api(const json_t *r, size_t i, struct api_intent_rule *out, aq_msg *msg)
{
	char where[64];
	const char *clients = api_json_str(r, "allowedClients", NULL);
	const char *squash = api_json_str(r, "squashMode", NULL);
	const char *root = api_json_str(r, "hasRootAccess", NULL);
	const char *access = api_json_str(r, "accessType", "READ_WRITE");
	int64_t anon = api_json_int64(r, "anonUid", API_INTENT_ANON_UID);
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(where, sizeof(where), "exportPolicy.rules[%zu].allowedClients", i);
	if (!clients)
		return aq_fail(msg, AQ_EINVAL, "%s is required", where);
	if ((rc = api_intent_clients_parse(clients, where, NULL, NULL, msg)) != AQ_OK)
		return rc;
	if (root && strcmp(root, "true") != 0 && strcmp(root, "false") != 0)
		return aq_fail(msg, AQ_EINVAL, "exportPolicy.rules[%zu].hasRootAccess must be \"true\" or \"false\"", i);
	if (field(r, "anonUid") && (anon < 0 || anon > 4294967295LL))
		return aq_fail(msg, AQ_EINVAL, "exportPolicy.rules[%zu].anonUid must be within 0..4294967295", i);
	if (squash && strcmp(squash, "NO_ROOT_SQUASH") != 0 && !field(r, "anonUid"))
		return aq_fail(msg, AQ_EINVAL, "exportPolicy.rules[%zu].anonUid is required with squashMode %s", i, squash);
	if (!squash)
		squash = root && strcmp(root, "false") == 0 ? "ROOT_SQUASH" : "NO_ROOT_SQUASH";
	if (name_index(intent_access, access) < 0 || name_index(intent_squash, squash) < 0)
		return aq_fail(msg, AQ_EINVAL, "exportPolicy.rules[%zu]: unknown accessType or squashMode", i);
	snprintf(out->clients, sizeof(out->clients), "%s", clients);
	out->access = (enum api_intent_access)name_index(intent_access, access);
	out->squash = (enum api_intent_squash)name_index(intent_squash, squash);
	out->anon_uid = (uint32_t)anon;
	out->nfsv3 = api_json_bool(r, "nfsv3", true);
	out->nfsv4 = api_json_bool(r, "nfsv4", true);
	return AQ_OK;
}

/* The readAhead rules of api_intent.h; out (may be NULL) gets the result. */
static int read_ahead_from(const json_t *ra, struct api_intent_read_ahead *out, aq_msg *msg)
{
	const json_t *d = field(ra, "depthFiles");
	int mode;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!ra)
		return AQ_OK;
	if (!json_is_object(ra) || !json_is_string(field(ra, "mode")))
		return aq_fail(msg, AQ_EINVAL, "readAhead.mode is required (NONE, AGGRESSIVE or CROSS_FILE_SEQUENTIAL)");
	if ((mode = name_index(intent_ra_modes, json_string_value(field(ra, "mode")))) < 0)
		return aq_fail(msg, AQ_EINVAL, "readAhead.mode must be NONE, AGGRESSIVE or CROSS_FILE_SEQUENTIAL");
	if (d && mode != API_INTENT_RA_CROSS_FILE)
		return aq_fail(msg, AQ_EINVAL, "readAhead.depthFiles applies to mode CROSS_FILE_SEQUENTIAL only; leave it out with mode %s",
			       intent_ra_modes[mode]);
	if (d && (!json_is_integer(d) || json_integer_value(d) < 1 || json_integer_value(d) > API_READ_AHEAD_MAX_DEPTH))
		return aq_fail(msg, AQ_EINVAL, "readAhead.depthFiles must be a whole number 1..%d", API_READ_AHEAD_MAX_DEPTH);
	if (out) {
		out->mode = (enum api_intent_ra_mode)mode;
		if (mode == API_INTENT_RA_CROSS_FILE)
			out->depth_files = d ? (int)json_integer_value(d) : API_READ_AHEAD_DEPTH;
	}
	return AQ_OK;
}

int api_intent_read_ahead_check(json_t *ra, aq_msg *msg)
{
	struct api_intent_read_ahead r;
	int rc;

	if ((rc = read_ahead_from(ra, &r, msg)) != AQ_OK)
		return rc;
	/* the default is stored, so the volume reads back what its node does */
	if (r.mode == API_INTENT_RA_CROSS_FILE && !field(ra, "depthFiles"))
		json_object_set_new(ra, "depthFiles", json_integer(r.depth_files));
	return AQ_OK;
}

int api_intent_volume_from_api(const json_t *vol, const json_t *pool, const struct api_math_params *p,
			       const char *fsid, const char *dir, struct api_intent_volume *out, aq_msg *msg)
{
	const json_t *rules = json_object_get(json_object_get(vol, "exportPolicy"), "rules"), *r;
	const json_t *tp = field(vol, "tieringPolicy");
	const char *perms = api_json_str(vol, "unixPermissions", API_INTENT_UNIX_PERMS);
	int64_t gib = api_json_int64(vol, "capacityGib", 0);
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = api_intent_share_check(api_json_str(vol, "shareName", ""), msg)) != AQ_OK)
		return rc;
	if (json_array_size(rules) > API_INTENT_MAX_RULES)
		return aq_fail(msg, AQ_EINVAL, "exportPolicy.rules has %zu rules; at most %d are allowed",
			       json_array_size(rules), API_INTENT_MAX_RULES);
	if (!perms_ok(perms))
		return aq_fail(msg, AQ_EINVAL, "unixPermissions must be 3 or 4 octal digits, e.g. \"0770\"");
	if (gib < 0 || gib > (int64_t)(UINT64_MAX >> 31))
		return aq_fail(msg, AQ_EINVAL, "capacityGib is out of range");
	json_array_foreach(rules, i, r)
		if ((rc = api_intent_rule_from_api(r, i, &out->rules[out->nrules++], msg)) != AQ_OK)
			return rc;
	snprintf(out->name, sizeof(out->name), "%s", api_json_str(vol, "name", ""));
	snprintf(out->fsid, sizeof(out->fsid), "%s", fsid);
	snprintf(out->share, sizeof(out->share), "%s", api_json_str(vol, "shareName", ""));
	snprintf(out->dir, sizeof(out->dir), "%s", dir);
	snprintf(out->unix_permissions, sizeof(out->unix_permissions), "%s", perms);
	out->capacity_bytes = (uint64_t)gib << 30;
	if (names_to_bits(field(vol, "protocols"), intent_protos, API_INTENT_NFSV3, &out->protocols) != AQ_OK ||
	    !out->protocols)
		return aq_fail(msg, AQ_EINVAL, "protocols must list NFSV3, NFSV4 or SMB");
	if (names_to_bits(field(vol, "smbSettings"), intent_smb, 0, &out->smb_settings) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "smbSettings lists an unknown setting");
	if ((rc = name_index(intent_security, api_json_str(vol, "securityStyle", "UNIX"))) < 0)
		return aq_fail(msg, AQ_EINVAL, "securityStyle must be UNIX or NTFS");
	out->security = (enum api_intent_security)rc;
	out->qos.mibps = api_json_double(vol, "throughputMibps", 0);
	if (pool) {
		struct api_pool_math pm;

		api_pool_math_from(pool, &pm);
		if (pm.level == API_LEVEL_FLEX) {
			snprintf(out->qos.shared_pool, sizeof(out->qos.shared_pool), "%s", api_json_str(pool, "name", ""));
			out->qos.shared_mibps = api_math_pool_mibps(p, &pm);
			out->qos.shared_iops = api_math_pool_iops(p, &pm);
		}
	}
	if (tp) {
		int act = name_index(intent_tier, api_json_str(tp, "tierAction", "PAUSED"));
		int ret = name_index(intent_retrieval, api_json_str(tp, "retrievalPolicy", "DEFAULT"));

		if (act <= 0 || ret < 0)
			return aq_fail(msg, AQ_EINVAL, "tieringPolicy: unknown tierAction or retrievalPolicy");
		out->tiering.action = (enum api_intent_tier)act;
		out->tiering.cooling_days = (int)api_json_int64(tp, "coolingThresholdDays", p->tiering_default_days);
		out->tiering.bypass = api_json_bool(tp, "hotTierBypassModeEnabled", false);
		out->tiering.retrieval = (enum api_intent_retrieval)ret;
	}
	return read_ahead_from(field(vol, "readAhead"), &out->read_ahead, msg);
}

json_t *api_intent_volume_encode(const struct api_intent_volume *v)
{
	json_t *rules = json_array(), *e, *qos;

	for (size_t i = 0; i < v->nrules; i++) {
		const struct api_intent_rule *r = &v->rules[i];

		json_array_append_new(rules, json_pack("{s:s,s:s,s:s,s:I,s:b,s:b}", "allowedClients", r->clients,
						       "accessType", intent_access[r->access], "squashMode",
						       intent_squash[r->squash], "anonUid", (json_int_t)r->anon_uid,
						       "nfsv3", r->nfsv3, "nfsv4", r->nfsv4));
	}
	qos = json_pack("{s:f,s:I}", "mibps", v->qos.mibps, "iops", (json_int_t)v->qos.iops);
	if (qos && v->qos.shared_pool[0]) {
		json_object_set_new(qos, "sharedPool", json_string(v->qos.shared_pool));
		json_object_set_new(qos, "sharedMibps", json_real(v->qos.shared_mibps));
		json_object_set_new(qos, "sharedIops", json_integer(v->qos.shared_iops));
	}
	/* throughputMibps repeats qos.mibps for agents older than "qos" */
	e = json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:s,s:o,s:o}", "name", v->name, "fsid", v->fsid, "shareName",
		      v->share, "dir", v->dir, "capacityBytes", (json_int_t)v->capacity_bytes, "throughputMibps",
		      v->qos.mibps, "unixPermissions", v->unix_permissions, "exportRules", rules, "qos", qos);
	if (e && (json_object_set_new(e, "protocols", bits_to_names(v->protocols, intent_protos)) ||
		  json_object_set_new(e, "smbSettings", bits_to_names(v->smb_settings, intent_smb)) ||
		  json_object_set_new(e, "securityStyle", json_string(intent_security[v->security])))) {
		json_decref(e);
		return NULL;
	}
	if (e && v->tiering.action != API_INTENT_TIER_OFF)
		json_object_set_new(e, "tieringPolicy",
				    json_pack("{s:s,s:i,s:b,s:s}", "tierAction", intent_tier[v->tiering.action],
					      "coolingThresholdDays", v->tiering.cooling_days,
					      "hotTierBypassModeEnabled", v->tiering.bypass, "retrievalPolicy",
					      intent_retrieval[v->tiering.retrieval]));
	if (e && v->read_ahead.mode != API_INTENT_RA_NONE) {
		json_t *ra = json_pack("{s:s}", "mode", intent_ra_modes[v->read_ahead.mode]);

		if (ra && v->read_ahead.mode == API_INTENT_RA_CROSS_FILE)
			json_object_set_new(ra, "depthFiles", json_integer(v->read_ahead.depth_files));
		if (!ra || json_object_set_new(e, "readAhead", ra)) {
			json_decref(e);
			return NULL;
		}
	}
	return e;
}

/* Typed getters for decoding: absent (or null) gives the default, a value of
 * another type is an error naming the key. */
static int get_str(const json_t *o, const char *key, const char *dflt, const char **out)
{
	const json_t *v = field(o, key);

	if (v && !json_is_string(v))
		return AQ_EINVAL;
	*out = v ? json_string_value(v) : dflt;
	return AQ_OK;
}

static int get_bool(const json_t *o, const char *key, bool dflt, bool *out)
{
	const json_t *v = field(o, key);

	if (v && !json_is_boolean(v))
		return AQ_EINVAL;
	*out = v ? json_is_true(v) : dflt;
	return AQ_OK;
}

static int get_int(const json_t *o, const char *key, int64_t dflt, int64_t min, int64_t max, int64_t *out)
{
	const json_t *v = field(o, key);

	if (v && !json_is_integer(v))
		return AQ_EINVAL;
	*out = v ? (int64_t)json_integer_value(v) : dflt;
	return *out < min || *out > max ? AQ_EINVAL : AQ_OK;
}

static int get_num(const json_t *o, const char *key, double *out)
{
	const json_t *v = field(o, key);

	if (v && !json_is_number(v))
		return AQ_EINVAL;
	*out = v ? json_number_value(v) : 0;
	return *out < 0 || *out > API_INTENT_MAX_MIBPS ? AQ_EINVAL : AQ_OK;
}

/* Copy a required (need) or optional string of at most cap-1 bytes. */
static int get_text(const json_t *o, const char *key, bool need, char *dst, size_t cap)
{
	const char *s;

	if (get_str(o, key, "", &s) != AQ_OK || strlen(s) >= cap || (need && !*s))
		return AQ_EINVAL;
	memcpy(dst, s, strlen(s) + 1);
	return AQ_OK;
}

static bool fsid_ok(const char *s)
{
	return strlen(s) == 16 && strspn(s, "0123456789abcdefABCDEF") == 16;
}

static int decode_rule(const json_t *r, size_t i, const char *vname, struct api_intent_rule *out, aq_msg *msg)
{
	aq_msg why = { .text = "" };
	char where[64];
	const char *access, *squash;
	int64_t anon;
	int rc, ai, si;

	memset(out, 0, sizeof(*out));
	snprintf(where, sizeof(where), "exportRules[%zu].allowedClients", i);
	if (!json_is_object(r) || get_text(r, "allowedClients", true, out->clients, sizeof(out->clients)) != AQ_OK) {
		if (json_is_string(json_object_get(r, "allowedClients")))
			return vol_fail(msg, vname, "%s is %zu bytes long; at most %d are allowed", where,
					strlen(json_string_value(json_object_get(r, "allowedClients"))), API_INTENT_CLIENTS_LEN);
		return vol_fail(msg, vname, "%s is required", where);
	}
	if ((rc = api_intent_clients_parse(out->clients, where, NULL, NULL, &why)) != AQ_OK)
		return vol_fail(msg, vname, "%s", why.text);
	if (get_str(r, "accessType", "READ_WRITE", &access) != AQ_OK || (ai = name_index(intent_access, access)) < 0)
		return vol_fail(msg, vname, "exportRules[%zu].accessType is not READ_ONLY, READ_WRITE or READ_NONE", i);
	if (get_str(r, "squashMode", "NO_ROOT_SQUASH", &squash) != AQ_OK || (si = name_index(intent_squash, squash)) < 0)
		return vol_fail(msg, vname, "exportRules[%zu].squashMode is not NO_ROOT_SQUASH, ROOT_SQUASH or ALL_SQUASH", i);
	if (get_int(r, "anonUid", API_INTENT_ANON_UID, 0, 4294967295LL, &anon) != AQ_OK)
		return vol_fail(msg, vname, "exportRules[%zu].anonUid must be within 0..4294967295", i);
	if (get_bool(r, "nfsv3", true, &out->nfsv3) != AQ_OK || get_bool(r, "nfsv4", true, &out->nfsv4) != AQ_OK)
		return vol_fail(msg, vname, "exportRules[%zu]: nfsv3 and nfsv4 must be booleans", i);
	out->access = (enum api_intent_access)ai;
	out->squash = (enum api_intent_squash)si;
	out->anon_uid = (uint32_t)anon;
	return AQ_OK;
}

static int decode_qos(const json_t *q, const char *vname, struct api_intent_qos *out, aq_msg *msg)
{
	if (q && (!json_is_object(q) || get_num(q, "mibps", &out->mibps) != AQ_OK ||
		  get_int(q, "iops", 0, 0, INT64_MAX, &out->iops) != AQ_OK ||
		  get_text(q, "sharedPool", false, out->shared_pool, sizeof(out->shared_pool)) != AQ_OK ||
		  get_num(q, "sharedMibps", &out->shared_mibps) != AQ_OK ||
		  get_int(q, "sharedIops", 0, 0, INT64_MAX, &out->shared_iops) != AQ_OK))
		return vol_fail(msg, vname, "bad qos (figures 0..%g, sharedPool at most %d bytes)", API_INTENT_MAX_MIBPS,
				API_INTENT_POOL_LEN);
	if (!out->shared_pool[0]) /* a shared budget needs the pool that shares it */
		out->shared_mibps = 0, out->shared_iops = 0;
	return AQ_OK;
}

static int decode_tiering(const json_t *tp, const char *vname, struct api_intent_tiering *out, aq_msg *msg)
{
	const char *act, *ret;
	int64_t days;
	int ai, ri;

	if (!tp)
		return AQ_OK;
	if (!json_is_object(tp) || get_str(tp, "tierAction", "PAUSED", &act) != AQ_OK ||
	    (ai = name_index(intent_tier, act)) <= 0 || get_str(tp, "retrievalPolicy", "DEFAULT", &ret) != AQ_OK ||
	    (ri = name_index(intent_retrieval, ret)) < 0 ||
	    get_int(tp, "coolingThresholdDays", api_math_defaults.tiering_default_days, 0, INTENT_MAX_DAYS, &days) != AQ_OK ||
	    get_bool(tp, "hotTierBypassModeEnabled", false, &out->bypass) != AQ_OK)
		return vol_fail(msg, vname, "bad tieringPolicy (tierAction ENABLED|PAUSED, retrievalPolicy DEFAULT|ON_READ|NEVER, coolingThresholdDays 0..%d)",
				INTENT_MAX_DAYS);
	out->action = (enum api_intent_tier)ai;
	out->retrieval = (enum api_intent_retrieval)ri;
	out->cooling_days = (int)days;
	return AQ_OK;
}

int api_intent_volume_decode(const json_t *in, struct api_intent_volume *out, aq_msg *msg)
{
	aq_msg why = { .text = "" };
	const json_t *rules = field(in, "exportRules"), *r;
	const char *vname, *sec;
	int64_t cap;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(in))
		return aq_fail(msg, AQ_EINVAL, "a volume of the intent is not an object");
	if (get_text(in, "name", true, out->name, sizeof(out->name)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "a volume of the intent has no name (or one over %d bytes)", API_INTENT_NAME_LEN);
	vname = out->name;
	if (get_text(in, "fsid", true, out->fsid, sizeof(out->fsid)) != AQ_OK || !fsid_ok(out->fsid))
		return vol_fail(msg, vname, "fsid must be 16 hex digits");
	if (get_text(in, "shareName", true, out->share, sizeof(out->share)) != AQ_OK ||
	    api_intent_share_check(out->share, msg) != AQ_OK)
		return vol_fail(msg, vname, "shareName must be 1-%d of letters, digits, '-' and '_'", API_INTENT_SHARE_LEN);
	if (get_text(in, "dir", true, out->dir, sizeof(out->dir)) != AQ_OK || strstr(out->dir, ".."))
		return vol_fail(msg, vname, "dir must be 1-%d bytes without \"..\"", API_INTENT_DIR_LEN);
	if (get_int(in, "capacityBytes", 0, 0, INT64_MAX, &cap) != AQ_OK)
		return vol_fail(msg, vname, "capacityBytes must be a non-negative integer");
	out->capacity_bytes = (uint64_t)cap;
	if (get_text(in, "unixPermissions", false, out->unix_permissions, sizeof(out->unix_permissions)) != AQ_OK ||
	    (out->unix_permissions[0] && !perms_ok(out->unix_permissions)))
		return vol_fail(msg, vname, "unixPermissions must be 3 or 4 octal digits");
	if (!out->unix_permissions[0])
		snprintf(out->unix_permissions, sizeof(out->unix_permissions), "%s", API_INTENT_UNIX_PERMS);
	if (rules && !json_is_array(rules))
		return vol_fail(msg, vname, "exportRules must be an array");
	if (json_array_size(rules) > API_INTENT_MAX_RULES)
		return vol_fail(msg, vname, "%zu export rules; at most %d are allowed", json_array_size(rules),
				API_INTENT_MAX_RULES);
	json_array_foreach(rules, i, r)
		if ((rc = decode_rule(r, i, vname, &out->rules[out->nrules++], msg)) != AQ_OK)
			return rc;
	if ((rc = decode_qos(field(in, "qos"), vname, &out->qos, msg)) != AQ_OK)
		return rc;
	if (names_to_bits(field(in, "protocols"), intent_protos, API_INTENT_NFSV3, &out->protocols) != AQ_OK ||
	    !out->protocols)
		return vol_fail(msg, vname, "protocols must be a non-empty list of NFSV3, NFSV4 and SMB");
	if (names_to_bits(field(in, "smbSettings"), intent_smb, 0, &out->smb_settings) != AQ_OK)
		return vol_fail(msg, vname, "smbSettings must be a list of GCNV's SMB settings");
	if (get_str(in, "securityStyle", "UNIX", &sec) != AQ_OK || (rc = name_index(intent_security, sec)) < 0)
		return vol_fail(msg, vname, "securityStyle must be UNIX or NTFS");
	out->security = (enum api_intent_security)rc;
	if ((rc = decode_tiering(field(in, "tieringPolicy"), vname, &out->tiering, msg)) != AQ_OK)
		return rc;
	if ((rc = read_ahead_from(field(in, "readAhead"), &out->read_ahead, &why)) != AQ_OK)
		return vol_fail(msg, vname, "%s", why.text); /* msg may be NULL */
	return AQ_OK;
}

json_t *api_intent_delete_encode(const struct api_intent_delete *d)
{
	return json_pack("{s:s,s:s,s:s}", "name", d->name, "fsid", d->fsid, "dir", d->dir);
}

int api_intent_delete_decode(const json_t *in, struct api_intent_delete *out, aq_msg *msg)
{
	memset(out, 0, sizeof(*out));
	if (!json_is_object(in) || get_text(in, "name", false, out->name, sizeof(out->name)) != AQ_OK ||
	    get_text(in, "fsid", true, out->fsid, sizeof(out->fsid)) != AQ_OK || !fsid_ok(out->fsid) ||
	    get_text(in, "dir", true, out->dir, sizeof(out->dir)) != AQ_OK || strstr(out->dir, ".."))
		return aq_fail(msg, AQ_EINVAL, "a delete of the intent needs name, fsid (16 hex digits) and dir (1-%d bytes)",
			       API_INTENT_DIR_LEN);
	return AQ_OK;
}

/* ---------- snapshots ---------- */

static json_t *snap_encode(const struct api_intent_snap *sn)
{
	return json_pack("{s:s,s:s}", "id", sn->id, "uid", sn->uid);
}

/* {"id", "uid"} of a snapshot; where names it in messages. */
static int snap_decode(const json_t *in, const char *vname, const char *where, struct api_intent_snap *out,
		       aq_msg *msg)
{
	aq_msg why = { .text = "" };

	memset(out, 0, sizeof(*out));
	if (!json_is_object(in) || get_text(in, "id", true, out->id, sizeof(out->id)) != AQ_OK ||
	    api_id_check(out->id, "id", &why) != AQ_OK)
		return vol_fail(msg, vname, "%s.id must follow the id rule%s%s", where, why.text[0] ? ": " : "", why.text);
	if (get_text(in, "uid", true, out->uid, sizeof(out->uid)) != AQ_OK || !fsid_ok(out->uid))
		return vol_fail(msg, vname, "%s.uid must be 16 hex digits", where);
	return AQ_OK;
}

int api_intent_snapset_encode(const struct api_intent_snapset *set, json_t *e)
{
	json_t *snaps = json_array(), *dels = json_array(), *o;
	int rc = AQ_ENOMEM;
	size_t i;

	if (!snaps || !dels)
		goto out;
	for (i = 0; i < set->nsnaps; i++)
		if (json_array_append_new(snaps, snap_encode(&set->snaps[i])))
			goto out;
	for (i = 0; i < set->ndeletes; i++)
		if (json_array_append_new(dels, snap_encode(&set->deletes[i])))
			goto out;
	if (json_object_set_new(e, "snapshotDirectory", json_boolean(set->directory)) ||
	    json_object_set(e, "snapshots", snaps) || json_object_set(e, "snapshotDeletes", dels))
		goto out;
	if (set->revert_seq) {
		o = snap_encode(&set->revert);
		if (!o || json_object_set_new(o, "seq", json_integer((json_int_t)set->revert_seq)) ||
		    json_object_set_new(e, "revert", o))
			goto out;
	}
	if (set->clone) {
		o = snap_encode(&set->clone_snap);
		if (!o || json_object_set_new(o, "dir", json_string(set->clone_dir)) ||
		    json_object_set_new(e, "cloneSource", o))
			goto out;
	}
	rc = AQ_OK;
out:
	json_decref(snaps);
	json_decref(dels);
	return rc;
}

/* A list of snapshots: an array of at most API_INTENT_MAX_SNAPSHOTS, no id
 * twice. */
static int snaplist_decode(const json_t *a, const char *vname, const char *key, struct api_intent_snap *out,
			   size_t *n, aq_msg *msg)
{
	char where[64];
	const json_t *v;
	size_t i, j;
	int rc;

	*n = 0;
	if (!a)
		return AQ_OK;
	if (!json_is_array(a))
		return vol_fail(msg, vname, "%s must be an array", key);
	if (json_array_size(a) > API_INTENT_MAX_SNAPSHOTS)
		return vol_fail(msg, vname, "%s has %zu snapshots; at most %d are allowed", key, json_array_size(a),
				API_INTENT_MAX_SNAPSHOTS);
	json_array_foreach(a, i, v) {
		snprintf(where, sizeof(where), "%s[%zu]", key, i);
		if ((rc = snap_decode(v, vname, where, &out[i], msg)) != AQ_OK)
			return rc;
		for (j = 0; j < i; j++)
			if (strcmp(out[j].id, out[i].id) == 0)
				return vol_fail(msg, vname, "%s names snapshot %s twice", key, out[i].id);
		*n = i + 1;
	}
	return AQ_OK;
}

int api_intent_snapset_decode(const json_t *e, struct api_intent_snapset *out, aq_msg *msg)
{
	const char *vname = json_string_value(json_object_get(e, "name"));
	const json_t *rv = field(e, "revert"), *cs = field(e, "cloneSource"), *rs = field(e, "restoreSource");
	int64_t seq;
	size_t i, j;
	int rc;

	memset(out, 0, sizeof(*out));
	vname = vname ? vname : "";
	if (get_bool(e, "snapshotDirectory", false, &out->directory) != AQ_OK)
		return vol_fail(msg, vname, "snapshotDirectory must be a boolean");
	if ((rc = snaplist_decode(field(e, "snapshots"), vname, "snapshots", out->snaps, &out->nsnaps, msg)) ||
	    (rc = snaplist_decode(field(e, "snapshotDeletes"), vname, "snapshotDeletes", out->deletes, &out->ndeletes,
				  msg)))
		return rc;
	for (i = 0; i < out->nsnaps; i++)
		for (j = 0; j < out->ndeletes; j++)
			if (strcmp(out->snaps[i].uid, out->deletes[j].uid) == 0)
				return vol_fail(msg, vname, "snapshot %s is both in snapshots and snapshotDeletes",
						out->snaps[i].id);
	if (rv) {
		if ((rc = snap_decode(rv, vname, "revert", &out->revert, msg)) != AQ_OK)
			return rc;
		if (get_int(rv, "seq", 0, 1, INT64_MAX, &seq) != AQ_OK)
			return vol_fail(msg, vname, "revert.seq must be a positive integer");
		out->revert_seq = (uint64_t)seq;
	}
	if (cs) {
		if ((rc = snap_decode(cs, vname, "cloneSource", &out->clone_snap, msg)) != AQ_OK)
			return rc;
		if (get_text(cs, "dir", true, out->clone_dir, sizeof(out->clone_dir)) != AQ_OK ||
		    strstr(out->clone_dir, ".."))
			return vol_fail(msg, vname, "cloneSource.dir must be 1-%d bytes without \"..\"", API_INTENT_DIR_LEN);
		out->clone = true;
	}
	if (rs) {
		struct api_intent_backup b;
		aq_msg why = { .text = "" };

		if (api_intent_backup_decode(rs, &b, &why) != AQ_OK || b.op != API_INTENT_BKP_RESTORE)
			return vol_fail(msg, vname, "restoreSource must be a restore job: %s",
					why.text[0] ? why.text : "op is not restore");
		if (out->clone)
			return vol_fail(msg, vname, "a volume starts from cloneSource or restoreSource, not both");
		out->restore = true;
		snprintf(out->restore_id, sizeof(out->restore_id), "%s", b.id);
		snprintf(out->restore_name, sizeof(out->restore_name), "%s", b.name);
		snprintf(out->restore_key, sizeof(out->restore_key), "%s", b.key_hex);
		snprintf(out->restore_store, sizeof(out->restore_store), "%s", b.store_path);
	}
	return AQ_OK;
}

json_t *api_intent_snap_state_encode(const struct api_intent_snap_state *st)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "id", st->snap.id, "uid", st->snap.uid, "state",
			 st->ready ? "READY" : "ERROR", "stateDetails", st->detail, "createUnix",
			 (json_int_t)st->create_unix, "usedBytes", (json_int_t)st->used_bytes);
}

int api_intent_snap_state_decode(const json_t *in, struct api_intent_snap_state *out, aq_msg *msg)
{
	const char *state;
	int64_t t, used;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = snap_decode(in, "", "snapshot", &out->snap, msg)) != AQ_OK)
		return rc;
	if (get_str(in, "state", "", &state) != AQ_OK || (strcmp(state, "READY") && strcmp(state, "ERROR")))
		return aq_fail(msg, AQ_EINVAL, "snapshot %s: state must be READY or ERROR", out->snap.id);
	if (get_text(in, "stateDetails", false, out->detail, sizeof(out->detail)) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "snapshot %s: stateDetails must be a string of at most %d bytes",
			       out->snap.id, API_INTENT_SNAP_DETAIL_LEN);
	if (get_int(in, "createUnix", 0, 0, INT64_MAX, &t) != AQ_OK ||
	    get_int(in, "usedBytes", 0, 0, INT64_MAX, &used) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "snapshot %s: createUnix and usedBytes must be non-negative integers",
			       out->snap.id);
	out->ready = strcmp(state, "READY") == 0;
	out->create_unix = t;
	out->used_bytes = (uint64_t)used;
	return AQ_OK;
}

/* ---------- SMB users ---------- */

int api_intent_smb_user_name_check(const char *name, const char *what, aq_msg *msg)
{
	size_t n = strnlen(name, API_INTENT_SMB_USER_LEN + 1);

	if (n == 0 || n > API_INTENT_SMB_USER_LEN || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
							     "0123456789.-_") != n || strchr(".-_", name[0]))
		return aq_fail(msg, AQ_EINVAL, "%s must be 1-%d letters, digits, '.', '-' or '_', starting with a letter or digit",
			       what, API_INTENT_SMB_USER_LEN);
	return AQ_OK;
}

json_t *api_intent_smb_user_encode(const struct api_intent_smb_user *u)
{
	return json_pack("{s:s,s:s,s:s,s:I,s:I}", "project", u->project, "name", u->name, "ntHash", u->nt_hash, "uid",
			 (json_int_t)u->uid, "gid", (json_int_t)u->gid);
}

int api_intent_smb_user_decode(const json_t *in, struct api_intent_smb_user *out, aq_msg *msg)
{
	int64_t uid, gid;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(in) || get_text(in, "project", true, out->project, sizeof(out->project)) != AQ_OK ||
	    api_id_check(out->project, "smbUsers[].project", msg) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "an SMB user of the intent needs a project (an id)");
	if (get_text(in, "name", true, out->name, sizeof(out->name)) != AQ_OK ||
	    api_intent_smb_user_name_check(out->name, "smbUsers[].name", msg) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "an SMB user of project %s has no valid name (1-%d letters, digits, '.', '-', '_')",
			       out->project, API_INTENT_SMB_USER_LEN);
	if (get_text(in, "ntHash", true, out->nt_hash, sizeof(out->nt_hash)) != AQ_OK || strlen(out->nt_hash) != 32 ||
	    strspn(out->nt_hash, "0123456789abcdefABCDEF") != 32)
		return aq_fail(msg, AQ_EINVAL, "SMB user %s: ntHash must be 32 hex digits", out->name);
	if (get_int(in, "uid", -1, 0, 4294967295LL, &uid) != AQ_OK || get_int(in, "gid", -1, 0, 4294967295LL, &gid) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "SMB user %s: uid and gid are required, within 0..4294967295", out->name);
	out->uid = (uint32_t)uid;
	out->gid = (uint32_t)gid;
	return AQ_OK;
}
