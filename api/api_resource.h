/* api_resource: the field tables of every resource we serve and the checks
 * that go beyond field types (cross-field rules, the math). Tables live one
 * file per resource: api_project.c, api_location.c, api_pool.c,
 * api_volume.c. All functions are pure. */
#ifndef AQ_API_RESOURCE_H
#define AQ_API_RESOURCE_H

#include <jansson.h>

#include "api/api_math.h"
#include "api/api_schema.h"

extern const struct api_field api_project_fields[];
extern const struct api_field api_location_fields[];
extern const struct api_field api_pool_fields[];
extern const struct api_field api_volume_fields[];

/* Read the math facts out of a normalised pool / volume document. */
void api_pool_math_from(const json_t *pool, struct api_pool_math *out);
void api_vol_math_from(const json_t *vol, struct api_vol_math *out);

/* Pool rules that do not need other resources: unsupported features refused,
 * defaults filled in (qosType AUTO, customPerformance IOPS derived), then
 * api_math_check_pool(). doc is modified (defaults). */
int api_pool_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* Fill the pool's computed output fields: totalThroughputMibps (budget),
 * totalIops (FLEX), availableThroughputMibps (budget minus manual_sum for
 * MANUAL pools, budget minus auto-derived volume limits... see .c),
 * volumeCount and volumeCapacityGib. */
void api_pool_fill_output(const struct api_math_params *p, json_t *doc, int64_t volume_count,
			  int64_t volume_capacity_gib, double allocated_mibps);

/* Volume rules that need only the volume itself: protocols combination,
 * export rules (CIDRs, squash/anonUid), unixPermissions, shareName, tiering
 * days; defaults filled in (tieringPolicy.coolingThresholdDays 31, ...). */
int api_volume_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* Fill the volume's computed fields from its pool: serviceLevel, network,
 * throughputMibps for AUTO and FLEX pools (the limit the math gives). */
void api_volume_fill_output(const struct api_math_params *p, const json_t *pool, json_t *vol);

/* A parsed IPv4 CIDR list ("10.0.0.0/8,192.168.1.5"); AQ_EINVAL on bad syntax. */
int api_cidr_list_check(const char *list, const char *where, aq_msg *msg);

#endif
