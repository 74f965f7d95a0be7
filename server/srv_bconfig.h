/* srv_bconfig: a volume's backupConfig (issue 21 step 3). backupPolicies
 * (at most one, as GCNV allows) and backupVault are full names of existing
 * resources of the volume's project and location; a policy needs a vault.
 * backupChainBytes is stored in the volume: refreshed when a backup of its
 * chain in its backupVault becomes READY or is deleted, and set when the
 * volume is written
 * (srv_backup_volume_chain in srv_backup.h). The volumes naming a
 * policy or a vault are counted for assignedVolumeCount and for the
 * refusal to delete a policy or a vault still in use. */
#ifndef AQ_SRV_BCONFIG_H
#define AQ_SRV_BCONFIG_H

#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;

/* vol's backupConfig is well formed and names existing resources of
 * parent (projects/P/locations/L); INVALID_ARGUMENT naming the field. */
int srv_bconfig_check(struct db *db, const char *parent, const json_t *vol, aq_msg *msg);

/* How many volumes of parent name target (a backupPolicy or backupVault
 * full name) in their backupConfig. */
int srv_bconfig_users(struct db *db, const char *parent, const char *target, int64_t *n, aq_msg *msg);


#endif
