/* srv_bpolicy: backup policies (stored kind "bpolicy", under
 * projects/P/locations/L, routes projects/P/locations/L/backupPolicies;
 * issue 21): how many daily, weekly and monthly scheduled backups a volume
 * keeps. assignedVolumeCount is computed on every answer: the volumes of
 * the location whose backupConfig names the policy (srv_bconfig.h); a
 * policy volumes name cannot be deleted (FAILED_PRECONDITION). Mutations
 * answer done operations. */
#ifndef AQ_SRV_BPOLICY_H
#define AQ_SRV_BPOLICY_H

#include <jansson.h>

struct srv_req;

int srv_h_bpolicy_create(struct srv_req *req, json_t **resp);
int srv_h_bpolicy_get(struct srv_req *req, json_t **resp);
int srv_h_bpolicy_list(struct srv_req *req, json_t **resp);
int srv_h_bpolicy_patch(struct srv_req *req, json_t **resp);
int srv_h_bpolicy_delete(struct srv_req *req, json_t **resp);

#endif
