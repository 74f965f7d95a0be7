/* api_pool: the StoragePool resource (google.cloud.netapp.v1.StoragePool). */
#include "api/api_resource.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Proto enums list their values in proto order from X_UNSPECIFIED (= 0), so
 * that api_schema maps their numbers (proto3 JSON) by index. */
static const char *const pool_levels[] = { "SERVICE_LEVEL_UNSPECIFIED", "PREMIUM", "EXTREME", "STANDARD", "FLEX", NULL };
static const char *const pool_qos[] = { "QOS_TYPE_UNSPECIFIED", "AUTO", "MANUAL", NULL };
static const char *const pool_states[] = { "READY", "CREATING", "DELETING", "UPDATING",
					   "RESTORING", "DISABLED", "ERROR", NULL };
static const char *const pool_types[] = { "STORAGE_POOL_TYPE_UNSPECIFIED", "FILE", "UNIFIED", NULL };
static const char *const pool_modes[] = { "MODE_UNSPECIFIED", "DEFAULT", "ONTAP", NULL };
static const char *const pool_scale[] = { "SCALE_TYPE_UNSPECIFIED", "SCALE_TYPE_DEFAULT", "SCALE_TYPE_SCALEOUT", NULL };
static const char *const pool_enc[] = { "ENCRYPTION_TYPE_UNSPECIFIED", "SERVICE_MANAGED", "CLOUD_KMS", NULL };

const struct api_field api_pool_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "serviceLevel", API_T_ENUM, API_F_REQUIRED | API_F_IMMUTABLE, pool_levels, NULL, 0 },
	{ "capacityGib", API_T_INT64, API_F_REQUIRED, NULL, NULL, 0 },
	{ "volumeCapacityGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "volumeCount", API_T_INT32, API_F_OUTPUT, NULL, NULL, 0 },
	{ "state", API_T_ENUM, API_F_OUTPUT, pool_states, NULL, 0 },
	{ "stateDetails", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "network", API_T_STRING, API_F_REQUIRED | API_F_IMMUTABLE, NULL, NULL, 512 },
	{ "activeDirectory", API_T_STRING, 0, NULL, NULL, 512 },
	{ "kmsConfig", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, 512 },
	{ "ldapEnabled", API_T_BOOL, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ "psaRange", API_T_STRING, 0, NULL, NULL, 128 },
	{ "encryptionType", API_T_ENUM, API_F_OUTPUT, pool_enc, NULL, 0 },
	{ "globalAccessAllowed", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "allowAutoTiering", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "replicaZone", API_T_STRING, 0, NULL, NULL, 128 },
	{ "zone", API_T_STRING, 0, NULL, NULL, 128 },
	{ "satisfiesPzs", API_T_BOOL, API_F_OUTPUT, NULL, NULL, 0 },
	{ "satisfiesPzi", API_T_BOOL, API_F_OUTPUT, NULL, NULL, 0 },
	{ "customPerformanceEnabled", API_T_BOOL, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ "totalThroughputMibps", API_T_INT64, 0, NULL, NULL, 0 },
	{ "totalIops", API_T_INT64, 0, NULL, NULL, 0 },
	{ "hotTierSizeGib", API_T_INT64, 0, NULL, NULL, 0 },
	{ "enableHotTierAutoResize", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "qosType", API_T_ENUM, 0, pool_qos, NULL, 0 },
	{ "availableThroughputMibps", API_T_DOUBLE, API_F_OUTPUT, NULL, NULL, 0 },
	{ "coldTierSizeUsedGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "hotTierSizeUsedGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "type", API_T_ENUM, API_F_IMMUTABLE, pool_types, NULL, 0 },
	{ "mode", API_T_ENUM, API_F_IMMUTABLE, pool_modes, NULL, 0 },
	{ "scaleType", API_T_ENUM, API_F_IMMUTABLE, pool_scale, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

void api_pool_math_from(const json_t *pool, struct api_pool_math *out)
{
	const char *qos = api_json_str(pool, "qosType", "AUTO");

	memset(out, 0, sizeof(*out));
	out->level = api_level_parse(api_json_str(pool, "serviceLevel", ""));
	out->capacity_gib = api_json_int64(pool, "capacityGib", 0);
	out->qos = strcmp(qos, "MANUAL") == 0 ? API_QOS_MANUAL : API_QOS_AUTO;
	out->custom_performance = api_json_bool(pool, "customPerformanceEnabled", false);
	out->total_mibps = out->custom_performance ? api_json_double(pool, "totalThroughputMibps", 0) : 0;
	out->total_iops = out->custom_performance ? api_json_int64(pool, "totalIops", 0) : 0;
	out->allow_tiering = api_json_bool(pool, "allowAutoTiering", false);
}

int api_pool_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	struct api_pool_math m;
	bool flex = strcmp(api_json_str(doc, "serviceLevel", ""), "FLEX") == 0;
	bool custom = api_json_bool(doc, "customPerformanceEnabled", false);

	if (api_json_str(doc, "kmsConfig", NULL))
		return aq_fail(msg, AQ_EINVAL, "kmsConfig is not supported: Aquifer pools use service-managed encryption");
	if (api_json_bool(doc, "ldapEnabled", false))
		return aq_fail(msg, AQ_EINVAL, "ldapEnabled is not supported by this deployment");
	if (strcmp(api_json_str(doc, "mode", "DEFAULT"), "DEFAULT") != 0)
		return aq_fail(msg, AQ_EINVAL, "mode ONTAP is not supported; use DEFAULT");
	if (strcmp(api_json_str(doc, "type", "FILE"), "FILE") != 0)
		return aq_fail(msg, AQ_EINVAL, "type UNIFIED is not supported; use FILE");
	if (!custom && (json_object_get(doc, "totalThroughputMibps") || json_object_get(doc, "totalIops")))
		return aq_fail(msg, AQ_EINVAL, "totalThroughputMibps and totalIops need customPerformanceEnabled (FLEX pools only)");
	/* false is the "off" the provider sends for every pool (send_empty_value) */
	if (!flex && (json_object_get(doc, "hotTierSizeGib") || api_json_bool(doc, "enableHotTierAutoResize", false)))
		return aq_fail(msg, AQ_EINVAL, "hotTierSizeGib and enableHotTierAutoResize true apply to FLEX pools only (leave them out, or enableHotTierAutoResize false)");
	if (!json_object_get(doc, "qosType"))
		json_object_set_new(doc, "qosType", json_string("AUTO"));
	api_pool_math_from(doc, &m);
	return api_math_check_pool(p, &m, msg);
}

/* GCNV's VPC network name: projects/{project}/global/networks/{network}
 * (the project may be a Shared VPC host, so any project ID is fine). */
static int pool_network_check(const char *net, aq_msg *msg)
{
	const char *p = net, *slash;
	char id[64];
	size_t n;

	if (strncmp(p, "projects/", 9) != 0)
		goto bad;
	p += 9;
	if (!(slash = strchr(p, '/')) || (n = (size_t)(slash - p)) == 0 || n >= sizeof(id))
		goto bad;
	memcpy(id, p, n);
	id[n] = '\0';
	if (api_id_check(id, "network project", NULL) != AQ_OK || strncmp(slash, "/global/networks/", 17) != 0)
		goto bad;
	p = slash + 17;
	if (api_id_check(p, "network", NULL) != AQ_OK)
		goto bad;
	return AQ_OK;
bad:
	return aq_fail_field(msg, AQ_EINVAL, "storagePool.network",
			     "network \"%.128s\" is not a VPC network name; give projects/PROJECT/global/networks/NETWORK (e.g. projects/my-project/global/networks/default)",
			     net);
}

int api_pool_check_supported(const json_t *given, const char *location, aq_msg *msg)
{
	const char *zone = api_json_str(given, "zone", "");
	const char *net = api_json_str(given, "network", NULL);
	int rc;

	if (net && (rc = pool_network_check(net, msg)) != AQ_OK)
		return rc;

	if (*api_json_str(given, "activeDirectory", ""))
		return aq_fail(msg, AQ_EINVAL, "activeDirectory: SMB and Active Directory are not supported yet; leave activeDirectory out");
	if (*api_json_str(given, "replicaZone", ""))
		return aq_fail(msg, AQ_EINVAL, "replicaZone: pools replicated to a second zone are not supported; leave replicaZone out");
	if (*zone && strcmp(zone, location) != 0)
		return aq_fail(msg, AQ_EINVAL, "zone: \"%.128s\" is not this pool's location; every node of location %s shares one shelf, so zone can only be \"%s\" (or left out)",
			       zone, location, location);
	return AQ_OK;
}

void api_pool_fill_output(const struct api_math_params *p, json_t *doc, int64_t volume_count,
			  int64_t volume_capacity_gib, double allocated_mibps)
{
	struct api_pool_math m;
	double budget, avail;

	api_pool_math_from(doc, &m);
	budget = api_math_pool_mibps(p, &m);
	avail = budget - allocated_mibps;
	if (avail < 0)
		avail = 0;
	json_object_set_new(doc, "volumeCount", json_integer(volume_count));
	api_json_set_int64(doc, "volumeCapacityGib", volume_capacity_gib);
	api_json_set_int64(doc, "totalThroughputMibps", (int64_t)llround(budget));
	if (m.level == API_LEVEL_FLEX)
		api_json_set_int64(doc, "totalIops", api_math_pool_iops(p, &m));
	json_object_set_new(doc, "availableThroughputMibps", json_real(avail));
	if (!json_object_get(doc, "encryptionType"))
		json_object_set_new(doc, "encryptionType", json_string("SERVICE_MANAGED"));
	if (!json_object_get(doc, "type"))
		json_object_set_new(doc, "type", json_string("FILE"));
}
