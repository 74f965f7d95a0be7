/* srv_bvault: backup vaults (stored kind "bvault", under
 * projects/P/locations/L, routes projects/P/locations/L/backupVaults;
 * issue 21). Each vault gets at create a random 32-byte key (the
 * agent/bkp vault key) and a random uid, kept in a secret document apart
 * from the vault's (kind "bvsecret", name "bvsecrets/<vault name>", parent
 * "bvsecrets/<store location>"), which no route, list, filter or operation
 * reaches: no answer ever carries the key. The store location is the
 * vault's own for IN_REGION, backupRegion (an existing other location) for
 * CROSS_REGION.
 *
 * The vault's store: the embedded default, a directory store at
 * <shelf>/.backups/<uid> on the store location's shelf (beside
 * <shelf>/volumes and <shelf>/.snapshots, outside every export; every
 * agent of that location reaches it). The secret keeps it as
 * {"directory": {"path": ".backups/<uid>"}}, relative to the shelf. A
 * per-location S3 store is not configurable yet.
 *
 * Mutations answer done operations, as pools do (a vault is a promise of
 * the store; nothing is written there until a backup runs). A vault that
 * holds backups (kind "backup" under the vault) is not deleted
 * (FAILED_PRECONDITION). */
#ifndef AQ_SRV_BVAULT_H
#define AQ_SRV_BVAULT_H

#include <jansson.h>

struct db;
struct srv_req;

#define SRV_BVAULT_KEY_LEN 32

/* The secret of vault_name (new reference in *out): {"vault", "key" (64
 * hex), "uid", "location" (the store's), "store"}. AQ_ENOENT when the
 * vault has none. For the intent only. */
int srv_bvault_secret(struct db *db, const char *vault_name, json_t **out);

int srv_h_bvault_create(struct srv_req *req, json_t **resp);
int srv_h_bvault_get(struct srv_req *req, json_t **resp);
int srv_h_bvault_list(struct srv_req *req, json_t **resp);
int srv_h_bvault_patch(struct srv_req *req, json_t **resp);
int srv_h_bvault_delete(struct srv_req *req, json_t **resp);

#endif
